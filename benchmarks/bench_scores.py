"""Proper scoring rules of :mod:`mcref.scores` side by side with properscoring, scoringrules
and plain NumPy (docs/methods.md, "Proper scoring rules").

Timed in one run, per call, on the same inputs (checked equal to 1e-10 first):

  crps_normal      n = 10⁶ cases: mcref, properscoring ``crps_gaussian``, scoringrules
                   ``crps_normal`` (numba and numpy backends), NumPy (``scipy.special.ndtr``);
  crps_ensemble    10⁴ cases × m = 100 members and 2000 cases × m = 1000, standard and fair: mcref,
                   properscoring ``crps_ensemble`` (standard; its numba gufunc), scoringrules
                   ``crps_ensemble`` (``"nrg"``/``"fair"``, numba backend; also its default
                   ``"qd"`` for the standard one; its ``"nrg"`` and ``"fair"`` are O(m²) double
                   sums), NumPy (``np.sort`` + the same weighted sum);
  interval_score   n = 10⁶ cases: mcref, scoringrules (numba), NumPy;
  nll_gaussian     n = 10⁵ cases, d = 3, full covariances: mcref, NumPy
                   (``np.linalg.cholesky`` + ``np.linalg.solve``, batched).

Every function runs once first (numba compilation), then the candidates of a row are timed
in turn in every repeat (``interleaved_medians``) and the medians are printed with their
ratios to mcref. The mcref kernels use numba threads; the comparison is run with
``--threads 1`` (default: one core each, like the serial gufuncs of the other packages)
and can be repeated with more threads.

Run: ``python benchmarks/bench_scores.py [--repeats 9] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
from pathlib import Path

import numba
import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved_medians, machine  # noqa: E402

from mcref import scores  # noqa: E402

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


# --------------------------------------------------------------------------- plain NumPy references


def np_crps_normal(y, mu, sigma):
    w = (y - mu) / sigma
    return sigma * (w * (2.0 * special.ndtr(w) - 1.0) + 2.0 * np.exp(-0.5 * w * w) / math.sqrt(2 * math.pi)
                    - _INV_SQRT_PI)


def np_crps_ensemble(y, x, fair=False):
    m = x.shape[1]
    d = np.sort(x - y[:, None], axis=1)
    s1 = np.abs(d).sum(axis=1)
    s2 = np.einsum("ij,j->i", d, 2.0 * np.arange(m) - m + 1.0)  # no BLAS: one core
    return s1 / m - s2 / (m * (m - 1) if fair else m * m)


def np_interval_score(y, lo, hi, alpha):
    return (hi - lo) + 2.0 / alpha * (np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0))


def np_nll_gaussian(y, mean, cov):
    d = y.shape[1]
    L = np.linalg.cholesky(cov)
    w = np.linalg.solve(L, (y - mean)[..., None])[..., 0]
    logdet = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
    return 0.5 * (d * math.log(2 * math.pi) + logdet + (w * w).sum(axis=1))


# --------------------------------------------------------------------------- the rows


def _row(title, fns, repeats, check):
    ref = None
    for name, fn in fns.items():  # warm up (numba compilation) and check the values
        v = np.asarray(fn(), dtype=float)
        if ref is None:
            ref = v
        elif check:
            np.testing.assert_allclose(v, ref, rtol=1e-10, atol=1e-12, err_msg=f"{title}: {name}")
    t = interleaved_medians(fns, repeats)
    base = t["mcref"]
    print(f"\n{title}")
    print(f"  {'':28s} {'median':>10s} {'ratio to mcref':>16s}")
    for name, s in t.items():
        print(f"  {name:28s} {s * 1e3:8.2f} ms {s / base:14.1f}x")
    return t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1, help="numba threads of the mcref kernels (default 1)")
    args = ap.parse_args(argv)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))

    import properscoring as ps
    import scoringrules as sr

    print(f"{platform.platform()}; {machine()}")
    print(f"properscoring {getattr(ps, '__version__', '0.1')}, scoringrules {sr.__version__}; "
          f"mcref kernels on {numba.get_num_threads()} thread(s); medians of {args.repeats} interleaved repeats")
    rng = np.random.default_rng(0)
    reps = args.repeats

    n = 1_000_000
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, n)
    y = mu + sigma * rng.standard_normal(n)
    _row(f"crps_normal, n = {n:,}", {
        "mcref": lambda: scores.crps_normal(y, mu, sigma),
        "properscoring": lambda: ps.crps_gaussian(y, mu, sigma),
        "scoringrules (numba)": lambda: sr.crps_normal(y, mu, sigma, backend="numba"),
        "scoringrules (numpy)": lambda: sr.crps_normal(y, mu, sigma, backend="numpy"),
        "NumPy": lambda: np_crps_normal(y, mu, sigma),
    }, reps, True)

    for nc, m in ((10_000, 100), (2_000, 1000)):
        ye = rng.standard_normal(nc)
        x = rng.standard_normal((nc, m))
        r = max(3, reps // (3 if m >= 1000 else 1))
        _row(f"crps_ensemble standard, n = {nc:,} cases, m = {m}", {
            "mcref": lambda: scores.crps_ensemble(ye, x),
            "properscoring": lambda: ps.crps_ensemble(ye, x),
            "scoringrules nrg (numba)": lambda: sr.crps_ensemble(ye, x, estimator="nrg", backend="numba"),
            "scoringrules qd (numba)": lambda: sr.crps_ensemble(ye, x, estimator="qd", backend="numba"),
            "NumPy (sort)": lambda: np_crps_ensemble(ye, x),
        }, r, True)
        _row(f"crps_ensemble fair, n = {nc:,} cases, m = {m}", {
            "mcref": lambda: scores.crps_ensemble(ye, x, estimator="fair"),
            "scoringrules fair (numba)": lambda: sr.crps_ensemble(ye, x, estimator="fair", backend="numba"),
            "NumPy (sort)": lambda: np_crps_ensemble(ye, x, fair=True),
        }, r, True)

    lo, hi = scores.normal_interval(mu, sigma, 0.1)
    _row(f"interval_score, n = {n:,}", {
        "mcref": lambda: scores.interval_score(y, lo, hi, 0.1),
        "scoringrules (numba)": lambda: sr.interval_score(y, lo, hi, 0.1, backend="numba"),
        "NumPy": lambda: np_interval_score(y, lo, hi, 0.1),
    }, reps, True)

    nn, d = 100_000, 3
    a = rng.standard_normal((nn, d, d))
    cov = a @ np.swapaxes(a, 1, 2) + 0.5 * np.eye(d)
    mean = rng.standard_normal((nn, d))
    yy = mean + rng.standard_normal((nn, d))
    _row(f"nll_gaussian, n = {nn:,}, d = {d}, full covariances", {
        "mcref": lambda: scores.nll_gaussian(yy, mean, cov),
        "NumPy (batched cholesky/solve)": lambda: np_nll_gaussian(yy, mean, cov),
    }, reps, True)


if __name__ == "__main__":
    main()
