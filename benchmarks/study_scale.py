"""Size and power of candidate scale tests for ZMS and RCE (issue 27; docs/methods.md, "Scale test").

Every set is E = s·u·ε with ε of unit variance (normal, t(6), t(4), t(3), Laplace, uniform,
skewed = centred unit-variance gamma(2)), u from IG(4, 4) (u² ~ inverse gamma(4, 4)) or the u
of a built-in set (drawn without replacement, with replacement when M exceeds the set), and
s = 1 (size) or 0.8, 0.9, 1.1, 1.25 (power). All candidates are computed on the SAME sets:
the scale statistics are functions of Z = s·ε alone (the same ε for every s and u source:
common random numbers), and every candidate below is scale-equivariant, so one bootstrap (and
one t fit) per ε serves every s.

ZMS candidates (two-sided, H0: E[Z²] = 1; x = Z², m = mean x):

* ``tfit``   today's rule: Monte Carlo test of m under the unit-variance t(ν̂), ν̂ the ML fit
             (mcref's fit_t) — the reference law of m is read from a grid of ν (n_ref draws each);
* ``tkurt``  the same with ν from the Crow–Siddiqui kurtosis of Z (scale-free, plain quantiles);
* ``tstud``  the studentized T = (m − 1)/√(var x/M) under t(ν̂) (parametric bootstrap-t);
* ``wald``   T against N(0, 1); ``score``: T with the null variance mean((x − 1)²);
* ``bt_eq``  studentized bootstrap-t, equal-tailed: T* = (m* − m)/√(var* x/M), B resamples;
* ``bt_sym`` the same, symmetric: |T*| ≥ |T|;
* ``bca``    BCa interval of m (ζ_BS's test), as a p-value (the level at which 1 is on its edge);
* ``emp``    Monte Carlo under the empirical D rescaled to unit variance (m*/m against m);
* ``combo``  (chosen, mcref.verdict._scale_test) max(bt_eq, tstud): rejects when both reject;
* ``today``  the rule before: tfit, with the β_GM screen of Z² (every other column: the scale
             test's screen, β_GM(Z²) > 0.8 and tail ratio > TAIL_RATIO_LIMIT).

``tfit``/``tstud``/``tkurt`` read a shared reference of n_ref draws per grid ν (nearest grid
point in ln(ν − 2), 70 points): an approximation of the package's per-set simulation.

RCE candidates (H0: E[E²] = E[u²], R = ΣE²/Σu², RCE = 1 − √R; pair bootstrap of (E², u²)):
``r_bca`` (ζ_BS), ``r_wald`` (delta method), ``r_score`` (Σ(E² − u²)/√Σ(E² − u²)²),
``r_bt_eq``, ``r_bt_sym`` (bootstrap-t with the delta-method se).

The row's verdict is ``invalid`` when p ≤ α and the shape screen does not flag it (Z² for
ZMS; u² or E² for RCE; ``raw`` columns ignore the screen). The joint verdict is the Šidák
combination 1 − (1 − min(p_cons, p_scale))² of the consistency part with the scale part
(p_scale: the ZMS candidate, absent when the screen flags Z²). Under E = s·u·ε, Z is i.i.d.
and independent of u for every s, so the exact permutation p_cons is uniform given the
multiset of Z: it is drawn as U(0, 1) here (full ``validate`` calls check this on a subset,
``--validate``).

Usage::

    PYTHONPATH=. python benchmarks/study_scale.py --sets 200 --n-jobs 2
    PYTHONPATH=. python benchmarks/study_scale.py --report      # tables from the stored CSV
"""

from __future__ import annotations

import argparse
import gzip
import io
import math
import os
import sys
import time

import numpy as np
from scipy import stats as sst

from mcref.verdict._scale_test import ALPHA_SIDAK, bootstrap_sums

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
EPS = ("normal", "t6", "t4", "t3", "laplace", "uniform", "skewed")
USRC = ("IG44", "QM9_E", "logP_10k_a_LS-GCN", "Perovskite_RF")
MS = (500, 2000, 10000)
SCALES = (1.0, 0.8, 0.9, 1.1, 1.25)
ZCANDS = ("tfit", "tkurt", "tstud", "wald", "score", "bt_eq", "bt_sym", "bca", "emp")
RCANDS = ("r_bca", "r_wald", "r_score", "r_bt_eq", "r_bt_sym")
ALPHA = 0.05
NU_GRID = 2.0 + np.exp(np.linspace(math.log(0.1), math.log(300.0), 70))


def draw_eps(kind: str, m: int, rng: np.random.Generator) -> np.ndarray:
    """m draws of a unit-variance ε."""
    if kind == "normal":
        return rng.standard_normal(m)
    if kind.startswith("t"):
        nu = float(kind[1:])
        return rng.standard_t(nu, m) * math.sqrt((nu - 2.0) / nu)
    if kind == "laplace":
        return rng.laplace(0.0, 1.0 / math.sqrt(2.0), m)
    if kind == "uniform":
        return rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), m)
    if kind == "skewed":
        return (rng.gamma(2.0, 1.0, m) - 2.0) / math.sqrt(2.0)
    raise ValueError(kind)


_U_CACHE: dict[str, np.ndarray] = {}


def draw_u(src: str, m: int, rng: np.random.Generator) -> np.ndarray:
    if src == "IG44":
        return np.sqrt(1.0 / rng.gamma(4.0, 1.0 / 4.0, m))
    if src not in _U_CACHE:
        from mcref import datasets

        _U_CACHE[src] = datasets.load(src).u
    pool = _U_CACHE[src]
    return rng.choice(pool, m, replace=m > pool.size)


# ---------------------------------------------------------------- t(ν) references (tfit, tkurt, tstud)
def t_reference(m: int, n_ref: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """Sorted null draws of m = ⟨Z²⟩ and of the studentized T under unit-variance t(ν), one row
    per ν of NU_GRID, plus a last row for the normal D: arrays (len(NU_GRID) + 1, n_ref)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // m)
    n2 = rng.standard_normal((n_ref, m)) ** 2
    ms = np.empty((NU_GRID.size + 1, n_ref))
    ts = np.empty_like(ms)
    for g, nu in enumerate(list(NU_GRID) + [math.inf]):
        for a in range(0, n_ref, chunk):
            b = min(n_ref, a + chunk)
            x = n2[a:b] if math.isinf(nu) else n2[a:b] * ((nu - 2.0) / rng.chisquare(nu, (b - a, m)))
            mm = x.mean(axis=1)
            ms[g, a:b] = mm
            ts[g, a:b] = (mm - 1.0) / np.sqrt(np.maximum((x * x).mean(axis=1) - mm * mm, 1e-300) / m)
    return np.sort(ms, axis=1), np.sort(ts, axis=1)


def grid_index(nu: float) -> int:
    if not nu > 2.0:
        return -2  # flagged by the caller
    if nu > 1e4:
        return NU_GRID.size  # normal
    return int(np.argmin(np.abs(np.log(NU_GRID - 2.0) - math.log(nu - 2.0))))


def mc_p(ref_sorted: np.ndarray, x) -> np.ndarray:
    """Two-sided Monte Carlo p-value(s) of x against sorted reference draws."""
    n = ref_sorted.size
    x = np.asarray(x, dtype=float)
    ge = n - np.searchsorted(ref_sorted, x, side="left")
    le = np.searchsorted(ref_sorted, x, side="right")
    return np.minimum(1.0, 2.0 * np.minimum(1.0 + ge, 1.0 + le) / (n + 1.0))


def boot_p(tstar: np.ndarray, t) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed and symmetric bootstrap-t p-values of the observed T (array over s)."""
    srt = np.sort(tstar)
    a = np.sort(np.abs(tstar))
    n = srt.size
    t = np.asarray(t, dtype=float)
    ge = n - np.searchsorted(srt, t, side="left")
    le = np.searchsorted(srt, t, side="right")
    p_eq = np.minimum(1.0, 2.0 * np.minimum(1.0 + ge, 1.0 + le) / (n + 1.0))
    p_sym = (1.0 + n - np.searchsorted(a, np.abs(t), side="left")) / (n + 1.0)
    return p_eq, p_sym


def bca_p(thstar: np.ndarray, theta: float, null_over_scale, accel: float) -> np.ndarray:
    """p-value of the BCa test of θ = null (the level at which the null sits on the edge of the
    BCa interval): q = F*(null), w = y/(1 + a·y) − z0 with y = Φ⁻¹(q) − z0, p = 2·min(Φ(w), 1 − Φ(w)).
    ``null_over_scale``: the null value divided by the scale factor of θ (array over s)."""
    b = thstar.size
    srt = np.sort(thstar)
    z0 = sst.norm.ppf(np.clip(np.searchsorted(srt, theta, side="left") / b, 0.5 / b, 1 - 0.5 / b))
    q = np.clip(np.searchsorted(srt, np.asarray(null_over_scale), side="left") / b, 0.5 / b, 1 - 0.5 / b)
    y = sst.norm.ppf(q) - z0
    w = y / (1.0 + accel * y) - z0
    return np.minimum(1.0, 2.0 * np.minimum(sst.norm.cdf(w), sst.norm.sf(w)))


def kurt_cs_nu(z: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> float:
    """ν of the t whose Crow–Siddiqui kurtosis equals that of z (plain quantiles)."""
    q = np.quantile(z, [0.025, 0.25, 0.75, 0.975])
    k = (q[3] - q[0]) / (q[2] - q[1])
    ks, nus = table
    if k <= ks[-1]:
        return math.inf
    if k >= ks[0]:
        return float(nus[0])
    return float(np.interp(k, ks[::-1], nus[::-1]))


def kurt_table():
    nus = np.concatenate([[2.05], NU_GRID[NU_GRID > 2.05], [1e6]])
    k = 2 * sst.t.ppf(0.975, nus) / (2 * sst.t.ppf(0.75, nus))
    return k, nus


def tail_ratio(z):
    from mcref.verdict._scale_test import tail_ratio as tr

    return tr(z)


# ---------------------------------------------------------------- one (ε, M, set) unit
def unit(eps: str, m: int, k: int, ss_eps, ss_u, refs, n_boot: int) -> list[dict]:
    from mcref._distfit import fit_t
    from mcref.shape import skewness_gm

    rng = np.random.default_rng(ss_eps)
    ss_bz, ss_cons = ss_eps.spawn(2)
    cons_ss = ss_cons.spawn(len(USRC))
    z0 = draw_eps(eps, m, rng)
    x = z0 * z0
    s2 = np.asarray(SCALES) ** 2
    mean_x = x.mean()
    var_x = (x * x).mean() - mean_x ** 2
    # bootstrap of ⟨Z²⟩ with its studentization (the kernel of mcref.verdict._scale_test)
    S = bootstrap_sums(np.column_stack([x, x * x]), n_boot, ss_bz)
    mst = S[:, 0] / m
    vst = np.maximum(S[:, 1] / m - mst ** 2, 1e-300)
    tstar = (mst - mean_x) / np.sqrt(vst / m)
    zc = {}
    mobs = s2 * mean_x
    T = (mobs - 1.0) / (s2 * math.sqrt(var_x / m))
    zc["wald"] = 2 * sst.norm.sf(np.abs(T))
    T0 = (mobs - 1.0) / np.sqrt(((s2[:, None] * x[None, :] - 1.0) ** 2).mean(axis=1) / m)
    zc["score"] = 2 * sst.norm.sf(np.abs(T0))
    zc["bt_eq"], zc["bt_sym"] = boot_p(tstar, T)
    d = x - mean_x
    accel = float((d ** 3).sum() / (6.0 * (d ** 2).sum() ** 1.5))
    zc["bca"] = bca_p(mst, mean_x, 1.0 / s2, accel)
    ratio = np.sort(mst / mean_x)
    zc["emp"] = mc_p(ratio, mobs)
    nu_fit = fit_t(z0).nu
    g = grid_index(nu_fit)
    ms_ref, ts_ref = refs["ms"], refs["ts"]
    zc["tfit"] = mc_p(ms_ref[g], mobs) if g >= 0 else np.full(s2.size, np.nan)
    zc["tstud"] = boot_p(ts_ref[g], T)[0] if g >= 0 else np.full(s2.size, np.nan)
    nu_k = kurt_cs_nu(z0, refs["ktab"])
    zc["tkurt"] = mc_p(ms_ref[grid_index(nu_k)], mobs)
    beta_z2 = skewness_gm(x)
    flag_z = beta_z2 > 0.8
    r_tail = tail_ratio(z0)
    out = []
    for src, ssu in zip(USRC, ss_u):
        ru = np.random.default_rng(ssu)
        u = draw_u(src, m, ru)
        v = u * u
        v = v / v.mean()
        e = v * x
        R0 = e.sum() / v.sum()
        Sr = bootstrap_sums(np.column_stack([e, v, e * e, v * v, e * v]), n_boot, ssu.spawn(1)[0])
        Rst = Sr[:, 0] / Sr[:, 1]
        se_st = np.sqrt(np.maximum(Sr[:, 2] - 2 * Rst * Sr[:, 4] + Rst ** 2 * Sr[:, 3], 1e-300)) / Sr[:, 1]
        se0 = math.sqrt(max(((e - R0 * v) ** 2).sum(), 1e-300)) / v.sum()
        rstar = (Rst - R0) / se_st
        Robs = s2 * R0
        TR = (Robs - 1.0) / (s2 * se0)
        rc = {"r_wald": 2 * sst.norm.sf(np.abs(TR))}
        dd = s2[:, None] * e[None, :] - v[None, :]
        rc["r_score"] = 2 * sst.norm.sf(np.abs(dd.sum(axis=1) / np.sqrt((dd ** 2).sum(axis=1))))
        rc["r_bt_eq"], rc["r_bt_sym"] = boot_p(rstar, TR)
        infl = e - R0 * v
        acc_r = float((infl ** 3).sum() / (6.0 * (infl ** 2).sum() ** 1.5))
        rc["r_bca"] = bca_p(Rst, R0, 1.0 / s2, acc_r)
        flag_r = bool(skewness_gm(v) > 0.6 or skewness_gm(e) > 0.8)
        p_cons = np.random.default_rng(cons_ss[USRC.index(src)]).uniform(size=s2.size)
        for j, s in enumerate(SCALES):
            rec = {"eps": eps, "u": src, "M": m, "set": k, "s": s, "nu_fit": round(nu_fit, 4),
                   "nu_kurt": round(nu_k, 4), "flag_Z2": int(flag_z), "beta_Z2": round(beta_z2, 5),
                   "r_tail": round(r_tail, 5), "flag_RCE": int(flag_r),
                   "p_cons": round(float(p_cons[j]), 6)}
            rec.update({c: round(float(zc[c][j]), 6) for c in ZCANDS})
            rec.update({c: round(float(rc[c][j]), 6) for c in RCANDS})
            out.append(rec)
    return out


def run(args) -> None:
    from joblib import Parallel, delayed

    def ss(*key):  # the seed of one unit addressed by its indices, whatever the subset run
        return np.random.SeedSequence(args.seed, spawn_key=key)

    eps_list = args.eps.split(",")
    ms = [int(m) for m in args.M.split(",")]
    jobs = []
    refs_by_m = {}
    for m in ms:
        t0 = time.perf_counter()
        msr, tsr = t_reference(m, args.n_ref, ss(0, MS.index(m)))
        refs_by_m[m] = {"ms": msr, "ts": tsr, "ktab": kurt_table()}
        print(f"t references M={m}: {time.perf_counter() - t0:.1f} s", flush=True)
    for eps in eps_list:
        for m in ms:
            for k in range(args.sets):  # u: the same sets for every ε (common random numbers)
                jobs.append((eps, m, k, ss(1, EPS.index(eps), MS.index(m), k),
                             [ss(2, MS.index(m), k, j) for j in range(len(USRC))]))
    t0 = time.perf_counter()
    res = Parallel(n_jobs=args.n_jobs, batch_size=8)(
        delayed(unit)(eps, m, k, sse, ssu, refs_by_m[m], args.B) for eps, m, k, sse, ssu in jobs)
    print(f"{len(jobs)} units in {time.perf_counter() - t0:.0f} s", flush=True)
    rows = [r for rr in res for r in rr]
    cols = list(rows[0])
    os.makedirs(RESULTS, exist_ok=True)
    with gzip.open(args.out, "wt") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in cols) + "\n")
    print(f"wrote {args.out}")


# ---------------------------------------------------------------- tables
def load(path):
    import pandas as pd

    return pd.read_csv(path)


def sidak2(p):
    return 1.0 - (1.0 - p) ** 2


def verdicts(df, cand: str):
    """Row `invalid` (p ≤ α and not flagged), raw rejection and joint rejection for a ZMS candidate.
    ``today`` is the rule before (tfit with the β_GM screen of Z²); every other candidate gets the
    new screen (β_GM of Z² > 0.8 and tail ratio > TAIL_RATIO_LIMIT, mcref.verdict._scale_test)."""
    from mcref.verdict._scale_test import TAIL_RATIO_LIMIT

    if cand == "today":
        p = df["tfit"].to_numpy()
        fl = df["flag_Z2"].to_numpy().astype(bool)
    else:
        p = np.maximum(df["bt_eq"], df["tstud"]).to_numpy() if cand == "combo" else df[cand].to_numpy()
        fl = df["flag_Z2"].to_numpy().astype(bool) & (df["r_tail"].to_numpy() > TAIL_RATIO_LIMIT)
    pc = df["p_cons"].to_numpy()
    has = ~fl & ~np.isnan(p)
    pj = np.where(has, sidak2(np.minimum(pc, np.nan_to_num(p, nan=1.0))), pc)
    return (has & (p <= ALPHA)), (p <= ALPHA), (pj <= ALPHA)


def report(args) -> None:
    import pandas as pd

    from mcref.verdict._scale_test import TAIL_RATIO_LIMIT

    df = load(args.out)
    n = df.groupby(["eps", "u", "M", "s"]).size().min()
    print(f"{len(df)} records, ≥ {n} sets per cell; α = {ALPHA}; binomial sd at 5 %: {math.sqrt(.05 * .95 / n):.3f}")
    zd = df[df.u == USRC[0]]  # ZMS does not depend on u (the same Z for every u source)
    for what in ("row", "joint", "raw"):
        print(f"\nZMS candidates, {what} rejection rate (row: invalid = p ≤ α and Z² not flagged; joint: Šidák with "
              "an exact p_cons; raw: p ≤ α ignoring the screen)")
        recs = []
        for (eps, m, s), g in zd.groupby(["eps", "M", "s"]):
            rec = {"eps": eps, "M": m, "s": s, "flag": g.flag_Z2.mean(),
                   "flag_new": (g.flag_Z2.astype(bool) & (g.r_tail > TAIL_RATIO_LIMIT)).mean()}
            for c in ("today", "combo") + ZCANDS:
                row, raw, joint = verdicts(g, c)
                rec[c] = {"row": row, "raw": raw, "joint": joint}[what].mean()
            recs.append(rec)
        t = pd.DataFrame(recs)
        for s in SCALES:
            print(f"-- s = {s}")
            print(t[t.s == s].drop(columns="s").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("\nRCE candidates, row rejection rate (invalid = p ≤ α and u², E² not flagged) / raw")
    for what in ("row", "raw"):
        recs = []
        for (eps, src, m, s), g in df.groupby(["eps", "u", "M", "s"]):
            rec = {"eps": eps, "u": src, "M": m, "s": s, "flag": g.flag_RCE.mean()}
            for c in RCANDS:
                p = g[c].to_numpy()
                rec[c] = ((p <= ALPHA) & ((g.flag_RCE.to_numpy() == 0) | (what == "raw"))).mean()
            recs.append(rec)
        t = pd.DataFrame(recs)
        for s in SCALES:
            print(f"-- {what}, s = {s}")
            print(t[t.s == s].drop(columns="s").to_string(index=False, float_format=lambda v: f"{v:.3f}"))


VALIDATE_CELLS = (("normal", 2000), ("t4", 2000), ("laplace", 2000), ("skewed", 500), ("t4", 500), ("t3", 2000))


def validate_unit(eps: str, m: int, k: int, seed: int, n_mc: int) -> dict:
    """One full ``validate`` call (default statistics and rule) on a calibrated set, u² ~ IG(4, 4)."""
    import warnings

    import mcref

    ss = np.random.SeedSequence(seed, spawn_key=(3, EPS.index(eps), MS.index(m), k))
    a, b = ss.spawn(2)
    rng = np.random.default_rng(a)
    u = draw_u("IG44", m, rng)
    E = u * draw_eps(eps, m, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = mcref.validate(E, u, n_boot=200, n_mc=n_mc, seed=b)
    out = {"eps": eps, "M": m, "set": k, "joint": int(tab.joint.verdict == "invalid")}
    for r in tab.rows:
        out[r.name] = r.verdict
    return out


def run_validate(args) -> None:
    """Size of every row and of the joint verdict with full ``validate`` calls (``--validate``)."""
    import pandas as pd
    from joblib import Parallel, delayed

    t0 = time.perf_counter()
    res = Parallel(n_jobs=args.n_jobs, batch_size=4)(
        delayed(validate_unit)(e, m, k, args.seed, args.validate_n_mc)
        for e, m in VALIDATE_CELLS for k in range(args.sets))
    df = pd.DataFrame(res)
    path = os.path.join(RESULTS, "study_scale_validate.csv")
    df.to_csv(path, index=False)
    print(f"{len(df)} validate calls in {time.perf_counter() - t0:.0f} s; wrote {path}")
    report_validate(path)


def report_validate(path) -> None:
    import pandas as pd

    df = pd.read_csv(path)
    recs = []
    for (e, m), g in df.groupby(["eps", "M"], sort=False):
        rec = {"eps": e, "M": m, "sets": len(g), "joint invalid": g.joint.mean()}
        for s in ("ZMS", "RCE", "CC", "ENCE", "ZMSE"):
            rec[f"{s} invalid"] = (g[s] == "invalid").mean()
            rec[f"{s} unrel."] = (g[s] == "unreliable").mean()
        recs.append(rec)
    print("\nFull validate calls (default statistics, conditional rule, N_MC = B of the scale tests):")
    print(pd.DataFrame(recs).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def summary(path, out) -> None:
    """Per-cell rejection rates (the small, committed record of a run): ZMS candidates (row and
    joint, u-independent: the IG(4, 4) rows), RCE candidates (row) per u source."""
    import pandas as pd

    df = load(path)
    recs = []
    for (eps, src, m, s), g in df.groupby(["eps", "u", "M", "s"]):
        rec = {"eps": eps, "u": src, "M": m, "s": s, "sets": len(g)}
        if src == USRC[0]:
            for c in ("today", "combo") + ZCANDS:
                row, _, joint = verdicts(g, c)
                rec[f"zms_{c}"], rec[f"joint_{c}"] = row.mean(), joint.mean()
        for c in RCANDS:
            rec[c] = ((g[c].to_numpy() <= ALPHA) & (g.flag_RCE.to_numpy() == 0)).mean()
        recs.append(rec)
    pd.DataFrame(recs).to_csv(out, index=False, float_format="%.4g")
    print(f"wrote {out}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--B", type=int, default=500, help="bootstrap resamples per set")
    ap.add_argument("--n-ref", type=int, default=1000, help="draws per ν of the t(ν) references")
    ap.add_argument("--eps", default=",".join(EPS))
    ap.add_argument("--M", default=",".join(map(str, MS)))
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(RESULTS, "study_scale.csv.gz"))
    ap.add_argument("--report", action="store_true", help="print the tables of a stored run")
    ap.add_argument("--validate", action="store_true", help="full validate calls on calibrated sets (joint size)")
    ap.add_argument("--validate-n-mc", type=int, default=500)
    args = ap.parse_args(argv)
    if args.validate:
        run_validate(args)
        return
    if not args.report:
        run(args)
    report(args)
    summary(args.out, os.path.join(HERE, "study_scale_summary.csv"))


if __name__ == "__main__":
    main()
