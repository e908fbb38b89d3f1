"""Issue 38, part 5: ZMS and RCE intervals with few or unequal clusters.

Coverage of the 95 % intervals of ZMS and RCE with ``groups=`` (clusters) and ``order=``
(serial dependence) on calibrated sets, for the cluster-bootstrap BCa interval that mcref
used before and for the small-G candidates of docs/methods.md ("Dependent test sets"). Both
statistics are ratios of unit totals: ZMS = Σ_g a_g / Σ_g b_g with a_g = Σ_{i∈g} z_i², b_g = n_g,
and RCE = 1 − √R with R = Σ_g e_g / Σ_g v_g, e_g = Σ E_i², v_g = Σ u_i². The truth under
calibration (E = u·z, E[z² | u] = 1) is ZMS = 1 and R = 1, i.e. RCE = 0 (closed form: the
parameter 1 − √(E[ΣE² | u]/Σu²); the *mean* of the estimate differs from it by a Jensen bias
of order 1/G, which is not the parameter).

Cells (calibrated; z = √ρ·η_g + √(1 − ρ)·ε_i with η, ε standard normal, ρ = 0.5 the
intra-group correlation of z; unit variance, so E[z²] = 1):

* ``g10x150``: 10 clusters of 150, u row-level lognormal(0, 0.3);
* ``unequal``: 20 clusters of sizes uniform in 1-300, u = u_g·exp(0.1·N) with u_g lognormal(0, 0.5)
  per cluster (u varies between clusters);
* ``ar09``: M = 1800 along ``order=``, z AR(1) with φ = 0.9 (unit variance), ln u a slow AR(1)
  (coefficient 0.99, sd 0.3); the units are mcref's non-overlapping blocks of the automatic ℓ;
* ``g30x50``, ``g40x40``, ``g40x12``, ``g60x25`` and ``g5x300``: 30 clusters of 50, 40 of 40, 40 of
  12, 60 of 25, 5 of 300, as ``g10x150``;
* ``g20x100r3`` and ``g100x20r3``: 20 clusters of 100 and 100 of 20 at ρ = 0.3.

Methods (the units' totals a_g, b_g; θ̂ = Σa/Σb, Ψ_g = a_g − θ̂·b_g, G units):

* ``bca``: mcref's cluster (or block) bootstrap BCa (mcref before this change), n_boot = 1000;
* ``bca_t``: the same replicates, z0 and acceleration, with t(G − 1) quantiles in place of the
  normal ones in the BCa levels; ``bca_x``: with √(G/(G − 1))·t(G − 1) (Hesterberg's expansion);
  ``bca_xbm``: with √(G/(G − 1))·t(ν), ν of Bell & McCaffrey (what mcref ships, ``"bca-t"``);
  ``pct_x``: the percentile interval at the levels Φ(±√(G/(G − 1))·t_{G−1});
* ``cr1_t``: θ̂ ± t_{G−1}·se, se² = G/(G − 1)·ΣΨ_g²/(Σb)² (CR1);
* ``cr1_log``: the same on the log scale: exp(ln θ̂ ± t_{G−1}·se/θ̂);
* ``bm`` / ``bm_log``: CR2 (Ψ_g/√(1 − h_g), h_g = b_g/Σb) with the Bell & McCaffrey (2002)
  degrees of freedom, linear / log scale;
* ``wild``: the wild cluster restricted bootstrap-t (Cameron, Gelbach & Miller 2008), inverted:
  the θ₀ whose symmetric p-value exceeds 0.05, Rademacher weights (Webb's six points for G < 12),
  999 weight draws;
* ``boot_t`` / ``boot_t_log``: the pairs cluster bootstrap-t (equal-tailed percentile-t) with the
  CR1 se of every resample, 1000 resamples, linear / log scale.

Run: ``python benchmarks/study_paths_clusters.py [--sets 200] [--cells g10x150,...]``; every
set appends one line to ``study_paths_clusters.jsonl`` beside this file, so a killed run
resumes, and ``--summary`` prints the coverage table (binomial 95 % intervals, Clopper-Pearson);
``--flags bca_xbm`` adds the coverage of the sets that candidate few-units rules leave unflagged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats as st

import mcref

CELLS = ("g10x150", "unequal", "ar09", "g30x50", "g5x300", "g20x100r3", "g100x20r3", "g40x40", "g40x12", "g60x25")
RHO = 0.5
#: the intra-group correlation of z per cell (RHO where not listed)
CELL_RHO = {"g20x100r3": 0.3, "g100x20r3": 0.3}
N_BOOT = 1000
STATS = ("ZMS", "RCE")


def make_set(cell: str, i: int):
    """(E, u, labels, kind) of set ``i`` of ``cell`` (module docstring); seeds from SeedSequence per (cell, set)."""
    rng = np.random.default_rng(np.random.SeedSequence([38, 5, CELLS.index(cell), i]))
    if cell == "ar09":
        m, phi = 1800, 0.9
        e = rng.normal(size=m)
        z = np.empty(m)
        z[0] = e[0]
        for t in range(1, m):
            z[t] = phi * z[t - 1] + np.sqrt(1 - phi * phi) * e[t]
        lu = np.empty(m)
        f = rng.normal(size=m)
        lu[0] = f[0]
        for t in range(1, m):
            lu[t] = 0.99 * lu[t - 1] + np.sqrt(1 - 0.99 ** 2) * f[t]
        u = np.exp(0.3 * lu)
        return u * z, u, np.arange(m, dtype=float), "order"
    if cell == "unequal":
        sizes = rng.integers(1, 301, 20)
    else:
        g, n = {"g10x150": (10, 150), "g30x50": (30, 50), "g5x300": (5, 300), "g20x100r3": (20, 100),
                "g100x20r3": (100, 20), "g40x40": (40, 40), "g40x12": (40, 12), "g60x25": (60, 25)}[cell]
        sizes = np.full(g, n)
    gid = np.repeat(np.arange(sizes.size), sizes)
    m = gid.size
    rho = CELL_RHO.get(cell, RHO)
    z = np.sqrt(rho) * rng.normal(size=sizes.size)[gid] + np.sqrt(1 - rho) * rng.normal(size=m)
    if cell == "unequal":
        u = rng.lognormal(0.0, 0.5, sizes.size)[gid] * np.exp(0.1 * rng.normal(size=m))
    else:
        u = rng.lognormal(0.0, 0.3, m)
    return u * z, u, gid, "groups"


def unit_ids(E, u, labels, kind):
    """The units mcref resamples: the groups, or its non-overlapping blocks along the order."""
    if kind == "groups":
        return np.unique(labels, return_inverse=True)[1]
    ell = mcref.dependence(E, u, order=labels).block_length
    return (np.argsort(np.argsort(labels, kind="stable"), kind="stable") // ell).astype(np.int64)


def totals(E, u, gid):
    """(a, b) per unit of ZMS and of R = ΣE²/Σu²."""
    z2 = (E / u) ** 2
    n = np.bincount(gid).astype(float)
    return {"ZMS": (np.bincount(gid, z2), n), "RCE": (np.bincount(gid, E * E), np.bincount(gid, u * u))}


def cr_parts(a, b):
    th = a.sum() / b.sum()
    psi = a - th * b
    G = a.size
    se1 = np.sqrt(G / (G - 1) * np.sum(psi ** 2)) / b.sum()
    h = b / b.sum()
    se2 = np.sqrt(np.sum(psi ** 2 / (1 - h))) / b.sum()
    c2 = 1 / (1 - h)
    # Bell-McCaffrey: W = D(c)(diag(h) - h h')D(c), df = tr(W)^2 / tr(W^2)
    W = np.sqrt(c2)[:, None] * (np.diag(h) - np.outer(h, h)) * np.sqrt(c2)[None, :]
    df = np.trace(W) ** 2 / np.sum(W * W)
    return th, se1, se2, df


def to_stat(name, lo, hi):
    """An interval of θ (ZMS, or R for RCE) as the statistic's interval (RCE = 1 − √R is decreasing in R)."""
    if name == "ZMS":
        return lo, hi
    return 1 - np.sqrt(max(hi, 0.0)), 1 - np.sqrt(max(lo, 0.0))


WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


def wild_interval(a, b, w, level=0.95):
    """Inversion of the wild cluster restricted bootstrap-t (symmetric p) over θ₀."""
    th, se1, _, _ = cr_parts(a, b)
    G, B = a.size, b.sum()

    def p(t0):
        r = a - t0 * b
        num = w @ r / B  # θ* − θ₀
        psi = w * r[None, :] - np.outer(num, b)
        v = G / (G - 1) * np.sum(psi ** 2, axis=1) / B ** 2
        ts = np.abs(num) / np.sqrt(np.maximum(v, 1e-300))
        t = abs(th - t0) / se1
        return np.mean(ts >= t)

    out = []
    for sgn in (-1, 1):
        lo, hi = 0.0, 1.0  # in se units from θ̂
        while p(th + sgn * hi * se1) > 1 - level and hi < 1e3:
            lo, hi = hi, 2 * hi
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if p(th + sgn * mid * se1) > 1 - level:
                lo = mid
            else:
                hi = mid
        out.append(th + sgn * 0.5 * (lo + hi) * se1)
    return out[0], out[1]


def boot_t(a, b, rng, level=0.95, log=False):
    G = a.size
    c = rng.multinomial(G, np.full(G, 1.0 / G), size=N_BOOT).astype(float)
    th, se1, _, _ = cr_parts(a, b)
    ths = (c @ a) / (c @ b)
    psi = a[None, :] - ths[:, None] * b[None, :]
    ses = np.sqrt(G / (G - 1) * np.sum(c * psi ** 2, axis=1)) / (c @ b)
    with np.errstate(divide="ignore", invalid="ignore"):
        if log:
            ts = (np.log(ths) - np.log(th)) / (ses / ths)
            s0 = se1 / th
        else:
            ts = (ths - th) / ses
            s0 = se1
    ts = np.where(np.isfinite(ts), ts, np.where(ths > th, np.inf, -np.inf))
    ts = np.where(np.isnan(ts), 0.0, ts)
    qlo, qhi = np.quantile(ts, [(1 - level) / 2, (1 + level) / 2])
    if log:
        return th * np.exp(-qhi * s0), th * np.exp(-qlo * s0)
    return th - qhi * s0, th - qlo * s0


def _bca(dist, z0, acc, crit):
    """BCa limits with the critical values ``crit`` in place of the normal ones (percentile when z0 or a
    is undefined)."""
    if np.isfinite(z0) and np.isfinite(acc):
        q = z0 + crit
        lev = st.norm.cdf(z0 + q / (1 - acc * q))
    else:
        lev = st.norm.cdf(crit)
    return tuple(np.quantile(dist, lev))


def one(cell: str, i: int) -> dict:
    E, u, labels, kind = make_set(cell, i)
    gid = unit_ids(E, u, labels, kind)
    G = int(gid.max()) + 1
    ss = np.random.SeedSequence([38, 5, 1000 + CELLS.index(cell), i])
    s_boot, s_wild, s_bt = ss.spawn(3)
    rec = {"cell": cell, "set": i, "G": G, "M": int(E.size)}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = mcref.bootstrap_many(list(STATS), E, u, n_boot=N_BOOT, seed=s_boot, **{kind: labels})
    rec["seconds_bca"] = _r(time.perf_counter() - t0)
    tq = st.t.ppf(0.975, G - 1)
    wr = np.random.default_rng(s_wild)
    w = (WEBB[wr.integers(0, 6, (999, G))] if G < 12 else wr.choice([-1.0, 1.0], (999, G)))
    bt = np.random.default_rng(s_bt)
    tt = totals(E, u, gid)
    for name in STATS:
        r = res[name]
        truth = 1.0 if name == "ZMS" else 0.0
        z0, acc = r.z0, r.acceleration
        dist = np.append(r.distribution, r.estimate)
        # mcref before this change: the BCa levels with the normal critical values (the same arithmetic)
        ivs = {"bca": _bca(dist, z0, acc, st.norm.ppf([0.025, 0.975]))}
        a, b = tt[name]
        th, se1, se2, df = cr_parts(a, b)
        xq = np.sqrt(G / (G - 1)) * tq
        xb = np.sqrt(G / (G - 1)) * st.t.ppf(0.975, df)
        for k, c in (("bca_t", tq), ("bca_x", xq), ("bca_xbm", xb)):
            ivs[k] = _bca(dist, z0, acc, np.array([-c, c]))
        ivs["pct_x"] = tuple(np.quantile(dist, st.norm.cdf([-xq, xq])))
        tb = st.t.ppf(0.975, df)
        ivs["cr1_t"] = to_stat(name, th - tq * se1, th + tq * se1)
        ivs["cr1_log"] = to_stat(name, th * np.exp(-tq * se1 / th), th * np.exp(tq * se1 / th))
        ivs["bm"] = to_stat(name, th - tb * se2, th + tb * se2)
        ivs["bm_log"] = to_stat(name, th * np.exp(-tb * se2 / th), th * np.exp(tb * se2 / th))
        ivs["wild"] = to_stat(name, *wild_interval(a, b, w))
        ivs["boot_t"] = to_stat(name, *boot_t(a, b, bt))
        for k, (lo, hi) in ivs.items():  # the limits to 6 digits in the log; coverage from the exact ones
            rec[f"{name}:{k}"] = [_r(lo), _r(hi), bool(lo <= truth <= hi)]
        rec[f"{name}:bm_df"] = _r(df)
    rec["seconds"] = _r(time.perf_counter() - t0)
    return rec


def _r(x: float) -> float:
    return float(f"{x:.6g}")


def clopper(k: int, n: int) -> tuple[float, float]:
    lo = st.beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
    hi = st.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def summary(recs: list[dict]) -> None:
    cells: dict[str, list[dict]] = {}
    for r in recs:
        cells.setdefault(r["cell"], []).append(r)
    methods = [k.split(":")[1] for k in recs[0] if k.startswith("ZMS:") and k != "ZMS:bm_df"] if recs else []
    for name in STATS:
        print(f"\n{name}: coverage % [95 % CI] (mean length)")
        print(f"{'method':11} " + " ".join(f"{c + ' (' + str(len(cells[c])) + ')':>30}" for c in CELLS if c in cells))
        for mth in methods:
            parts = []
            for c in CELLS:
                if c not in cells:
                    continue
                rs = cells[c]
                n = len(rs)
                k = sum(r[f"{name}:{mth}"][2] for r in rs)
                lo, hi = clopper(k, n)
                ln = np.mean([r[f"{name}:{mth}"][1] - r[f"{name}:{mth}"][0] for r in rs])
                parts.append(f"{100 * k / n:5.1f} [{100 * lo:4.1f},{100 * hi:5.1f}] ({ln:.3f})")
            print(f"{mth:11} " + " ".join(f"{p:>30}" for p in parts))
    for c in CELLS:
        if c in cells:
            rs = cells[c]
            print(f"{c}: G median {np.median([r['G'] for r in rs]):.0f}, BM df ZMS median "
                  f"{np.median([r['ZMS:bm_df'] for r in rs]):.1f}, RCE {np.median([r['RCE:bm_df'] for r in rs]):.1f}; "
                  f"{np.median([r['seconds'] for r in rs]):.2f} s/set")


def skewness(x: np.ndarray) -> float:
    """The adjusted Fisher-Pearson skewness G1 = g1·√(n(n − 1))/(n − 2), g1 = m3/m2^(3/2)."""
    n = x.size
    e = x - x.mean()
    m2, m3 = np.mean(e * e), np.mean(e ** 3)
    return float(m3 / m2 ** 1.5 * np.sqrt(n * (n - 1)) / (n - 2)) if n > 2 and m2 > 0 else float("nan")


def design(cell: str, i: int) -> dict:
    """The set's G, Bell-McCaffrey df and skewness of the unit influence sums Ψ_g, per statistic."""
    E, u, labels, kind = make_set(cell, i)
    gid = unit_ids(E, u, labels, kind)
    out = {"G": int(gid.max()) + 1}
    for name, (a, b) in totals(E, u, gid).items():
        th, _, _, df = cr_parts(a, b)
        out[name] = (df, skewness(a - th * b))
    return out


def flags(recs: list[dict], method: str) -> None:
    """Coverage of ``method`` among the sets that each candidate rule leaves unflagged."""
    # shipped: ν + 1 < FEW_UNITS = 35 (mcref.core._dependence); Cochran's rule G < 25·γ̂² on the skewness of Ψ_g (rejected:
    # the sets whose sample skewness is small are those that missed the tail, and they cover least)
    rules = {"shipped nu+1<35": lambda G, df, g: round(df + 1, 6) < 35, "nu+1<30": lambda G, df, g: round(df + 1, 6) < 30, "G<10": lambda G, df, g: G < 10,
             "cochran": lambda G, df, g: G < 25 * g * g}
    cells: dict[str, list[dict]] = {}
    for r in recs:
        cells.setdefault(r["cell"], []).append(r)
    des = {(r["cell"], r["set"]): design(r["cell"], r["set"]) for r in recs}
    for name in STATS:
        print(f"\n{name}, {method}: coverage % of the unflagged sets [95 % CI] (flagged %)")
        for rule, fn in rules.items():
            parts = []
            for c in CELLS:
                if c not in cells:
                    continue
                rs = cells[c]
                fl = [fn(des[(c, r["set"])]["G"], *des[(c, r["set"])][name]) for r in rs]
                keep = [r for r, f in zip(rs, fl) if not f]
                k, n = sum(r[f"{name}:{method}"][2] for r in keep), len(keep)
                cov = f"{100 * k / n:5.1f} [{100 * clopper(k, n)[0]:4.1f}]" if n else "   -         "
                parts.append(f"{c[:9]:>9} {cov} ({100 * np.mean(fl):3.0f})")
            print(f"{rule:20} " + " ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--log", default=str(Path(__file__).with_name("study_paths_clusters.jsonl")))
    ap.add_argument("--summary", action="store_true", help="only print the cells of the log")
    ap.add_argument("--flags", default="", help="a method: its coverage under the candidate few-clusters rules")
    a = ap.parse_args()
    log = Path(a.log)
    recs = [json.loads(s) for s in log.read_text().splitlines()] if log.exists() else []
    if not a.summary:
        done = {(r["cell"], r["set"]) for r in recs}
        for i in range(a.sets):  # round-robin over cells: a partial run covers every cell
            for cell in a.cells.split(","):
                if (cell, i) in done:
                    continue
                rec = one(cell, i)
                with log.open("a") as f:
                    f.write(json.dumps(rec, separators=(",", ":")) + "\n")
                recs.append(rec)
                print(cell, i, f"{rec['seconds']:.2f}s", file=sys.stderr, flush=True)
    summary(recs)
    if a.flags:
        flags(recs, a.flags)


if __name__ == "__main__":
    main()
