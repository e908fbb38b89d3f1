"""Distribution fits of a dataset, :func:`mcref.distfit` vs what a careful scipy user would
write for the same job in plain scipy/NumPy, side by side.

  * mcref: ``mcref.distfit(E, u, n_boot=0)`` (point fits only) and ``mcref.distfit(E, u)``
    (default, 100 pair-bootstrap replicates run in parallel over numba threads), after one
    warm-up call (compilation, or loading numba's on-disk cache);
  * baseline (sequential, vectorised NumPy/scipy):
      - three minimum-KS fits, u²/s ~ IG(ν, ν) [CDF ``gammaincc(ν, ν·s/x)``] and E², Z² = (E/u)²
        as s·F(1, ν) [CDF ``fdtr(1, ν, x/s)``]: objective the exact two-sided KS statistic
        of ``scipy.stats.kstest`` computed by the vectorised formula on the sorted sample,
        max_i max(i/n − F_i, F_i − (i−1)/n); start at the best point of a grid of 24 ν in
        geomspace(0.3, 500), each with the scale matching the sample median
        (s = median(x)/median(Y_ν)); ``scipy.optimize.minimize(method="Nelder-Mead")`` over
        (ln ν, ln s), ν clipped to [0.2, 1000] (xatol 1e-7, fatol 1e-12: the tolerance of
        mcref's point fits);
      - ``scipy.stats.t.fit(Z)`` (maximum likelihood, no standard errors);
      - the pair bootstrap: the same three KS fits (grid start, xatol 1e-3 as mcref's
        bootstrap searches) and mean/sd of Z on each resample (``numpy`` Generator), in turn.
    The baseline bootstrap is slow: it is timed on ``--baseline-boot`` replicates and
    extrapolated linearly to 100 (the output says so).

Before timing, the point estimates are checked: the KS distances of mcref's and the
baseline's fits are printed with their (ν, s); mcref's minimised KS must not exceed the
baseline's by more than 1e-6 (``BUG`` is printed otherwise), and mcref's reported KS is
recomputed with the baseline's formula at mcref's (ν, s). The Student-t fits are printed
with their log-likelihoods.

Each repeat times every contender once, in turn, so that load on the machine hits all of
them alike; medians over the repeats and baseline time / mcref time are printed.

Run: ``python benchmarks/bench_distfit.py [--repeats 5] [--baseline-boot 5] [--dataset QM9_E]``
or ``python benchmarks/bench_distfit.py --all`` (every built-in dataset, point fits only).
Target: distfit(QM9_E) (default call, 100 bootstrap replicates) < 1 s after warm-up.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize, special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved_medians, machine  # noqa: E402

import mcref  # noqa: E402

TARGET_S = 1.0
N_BOOT = 100
NU_LO, NU_HI = 0.2, 1000.0
GRID_NU = np.geomspace(0.3, 500.0, 24)
KS_VARS = ("u2", "E2", "Z2")
FAMILY = {"u2": "ig", "E2": "f1", "Z2": "f1"}


# ---- baseline: plain scipy / NumPy -------------------------------------------------------
def cdf_ig(nu, y):
    """P(Y ≤ y), Y ~ IG(ν, ν) (shape ν, scale ν)."""
    return special.gammaincc(nu, nu / y)


def cdf_f1(nu, y):
    """P(Y ≤ y), Y ~ F(1, ν)."""
    return special.fdtr(1.0, nu, y)


CDF = {"ig": cdf_ig, "f1": cdf_f1}
GRID_LOG_MED = {"ig": np.log(GRID_NU / special.gammainccinv(GRID_NU, 0.5)),
                "f1": np.log(special.fdtri(1.0, GRID_NU, 0.5))}


def ks_sorted(xs, cdf, nu, s):
    """Two-sided KS statistic of the sorted sample ``xs`` against P(s·Y_ν ≤ x) (the formula
    of ``scipy.stats.kstest``; exact with ties too)."""
    n = xs.size
    f = cdf(nu, xs / s)
    i = np.arange(1, n + 1) / n
    return max(float(np.max(i - f)), float(np.max(f - (i - 1.0 / n))))


def ks_fit_scipy(x, family, xatol=1e-7, fatol=1e-12):
    """Minimum-KS fit of x = s·Y_ν: grid start + Nelder–Mead over (ln ν, ln s).
    Returns (ν, s, KS)."""
    cdf = CDF[family]
    xs = np.sort(x)
    n = xs.size
    i_hi = np.arange(1, n + 1) / n
    i_lo = np.arange(n) / n
    lo, hi = np.log(NU_LO), np.log(NU_HI)

    def objective(th):
        f = cdf(np.exp(np.clip(th[0], lo, hi)), xs * np.exp(-th[1]))
        return max(np.max(i_hi - f), np.max(f - i_lo))

    lmed = np.log(np.median(xs))
    starts = [np.array([np.log(nu), lmed - lm]) for nu, lm in zip(GRID_NU, GRID_LOG_MED[family])]
    th0 = min(starts, key=objective)
    res = optimize.minimize(objective, th0, method="Nelder-Mead",
                            options={"xatol": xatol, "fatol": fatol, "maxiter": 2000})
    nu = float(np.exp(np.clip(res.x[0], lo, hi)))
    return nu, float(np.exp(res.x[1])), float(res.fun)


def baseline_point(E, u):
    Z = E / u
    fits = {v: ks_fit_scipy(x, FAMILY[v]) for v, x in zip(KS_VARS, (u * u, E * E, Z * Z))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits["t"] = stats.t.fit(Z)  # (df, loc, scale)
    fits["mean_Z"], fits["sd_Z"] = float(Z.mean()), float(Z.std(ddof=1))
    return fits


def baseline_boot(E, u, n_boot, seed):
    """Pair bootstrap of the three KS fits and of mean/sd of Z; (n_boot, 8) array."""
    rng = np.random.default_rng(seed)
    Z = E / u
    X = np.vstack([u * u, E * E, Z * Z])
    n = E.size
    out = np.empty((n_boot, 8))
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        for k, v in enumerate(KS_VARS):
            nu, s, _ = ks_fit_scipy(X[k, idx], FAMILY[v], xatol=1e-3, fatol=1e-8)
            out[b, 2 * k], out[b, 2 * k + 1] = nu, s
        zb = Z[idx]
        out[b, 6], out[b, 7] = zb.mean(), zb.std(ddof=1)
    return out


# ---- timing -------------------------------------------------------------------------------


def check_estimates(name, E, u, fit, base) -> int:
    """Print the point estimates side by side; return the number of KS violations."""
    Z = E / u
    data = {"u2": u * u, "E2": E * E, "Z2": Z * Z}
    bad = 0
    print(f"  {name}: point estimates, mcref vs baseline")
    print(f"    {'var':4s} {'mcref nu':>10s} {'mcref s':>11s} {'mcref KS':>10s}   "
          f"{'base nu':>10s} {'base s':>11s} {'base KS':>10s}   {'KS m-b':>10s}  check")
    for v in KS_VARS:
        nu_m, s_m, d_m = getattr(fit, "nu_" + v), getattr(fit, "sigma_" + v), fit.ks[v]
        nu_b, s_b, d_b = base[v]
        # mcref's reported KS recomputed with the baseline's formula at mcref's (ν, s)
        d_m_sp = ks_sorted(np.sort(data[v]), CDF[FAMILY[v]], nu_m, s_m)
        ok = d_m <= d_b + 1e-6
        bad += not ok
        same = abs(d_m_sp - d_m) <= 1e-12
        print(f"    {v:4s} {nu_m:10.5g} {s_m:11.5g} {d_m:10.6f}   {nu_b:10.5g} {s_b:11.5g} {d_b:10.6f}   "
              f"{d_m - d_b:+10.2e}  {'ok' if ok else 'BUG: mcref KS > baseline KS + 1e-6'}"
              f"{'' if same else f' (scipy formula at mcref fit: {d_m_sp:.8f})'}")
    df, loc, scale = base["t"]
    ll_b = float(np.sum(stats.t.logpdf(Z, df, loc, scale)))
    print(f"    t    mcref (nu, loc, scale) = ({fit.t_nu:.5g}, {fit.t_loc:.5g}, {fit.t_scale:.5g}) "
          f"loglik {fit.t_loglik:.4f}")
    print(f"         t.fit (nu, loc, scale) = ({df:.5g}, {loc:.5g}, {scale:.5g}) loglik {ll_b:.4f}"
          f"  (mcref - scipy: {fit.t_loglik - ll_b:+.2e})")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline-boot", type=int, default=5,
                    help="bootstrap replicates timed for the baseline (extrapolated to 100)")
    ap.add_argument("--dataset", default="QM9_E")
    ap.add_argument("--all", action="store_true", help="every built-in dataset, point fits only")
    args = ap.parse_args()
    if args.repeats < 1 or args.baseline_boot < 1:
        ap.error("--repeats and --baseline-boot must be >= 1")
    names = mcref.datasets.names() if args.all else [args.dataset]

    print(f"# mcref.distfit vs plain scipy/NumPy; median of {args.repeats} interleaved repeats; {machine()}")
    ds0 = mcref.datasets.load("QM9_E")
    t0 = time.perf_counter()
    mcref.distfit(ds0.E, ds0.u, seed=0)  # warm-up: compile or load numba's cache
    print(f"# warm-up call of mcref.distfit(QM9_E) (compilation / cache load): {time.perf_counter() - t0:.2f} s")

    bad = 0
    rows = []
    t_target = None
    for name in names:
        ds = mcref.datasets.load(name)
        E, u = ds.E, ds.u
        fit = mcref.distfit(E, u, n_boot=0)
        base = baseline_point(E, u)
        bad += check_estimates(f"{name} (M = {E.size})", E, u, fit, base)
        med = interleaved_medians({"mcref": lambda: mcref.distfit(E, u, n_boot=0),
                                   "base": lambda: baseline_point(E, u)}, args.repeats)
        rows.append((name, E.size, "point fits", med["mcref"], med["base"], ""))
        print(f"    point fits: mcref {med['mcref']:.4f} s, baseline {med['base']:.3f} s, "
              f"ratio {med['base'] / med['mcref']:.1f}x", flush=True)
        if not args.all:
            nb = args.baseline_boot
            med = interleaved_medians({"mcref": lambda: mcref.distfit(E, u, seed=1),
                                       "base_pt": lambda: baseline_point(E, u),
                                       "base_boot": lambda: baseline_boot(E, u, nb, 1)}, args.repeats)
            t_base = med["base_pt"] + med["base_boot"] * N_BOOT / nb
            rows.append((name, E.size, f"n_boot={N_BOOT}", med["mcref"], t_base,
                         f"baseline bootstrap timed on {nb} replicates ({med['base_boot']:.2f} s), x{N_BOOT / nb:g}"))
            print(f"    full call (n_boot={N_BOOT}): mcref {med['mcref']:.3f} s, baseline {t_base:.1f} s "
                  f"(extrapolated from {nb} replicates), ratio {t_base / med['mcref']:.0f}x", flush=True)
            if name == "QM9_E":
                t_target = med["mcref"]

    print()
    print(f"{'dataset':24s} {'M':>6s} {'call':>12s} {'mcref s':>9s} {'base s':>9s} {'ratio':>8s}  note")
    for name, m, call, tm, tb, note in rows:
        print(f"{name:24s} {m:6d} {call:>12s} {tm:9.4f} {tb:9.3f} {tb / tm:7.1f}x  {note}")
    if t_target is None:  # --all or another dataset: time the target call, mcref only
        med = interleaved_medians({"mcref": lambda: mcref.distfit(ds0.E, ds0.u, seed=1)}, args.repeats)
        t_target = med["mcref"]
    print(f"KS check: {'all mcref KS <= baseline KS + 1e-6' if bad == 0 else f'{bad} BUG(s), see above'}")
    print(f"target: distfit(QM9_E) < {TARGET_S:g} s after warm-up: median {t_target:.3f} s "
          f"{'PASS' if t_target < TARGET_S else 'MISS'}")


if __name__ == "__main__":
    main()
