"""Spearman ρ(|E*|, u) against a fixed u: the radix-rank kernel vs argsort
(docs/methods.md, "Simulated references").

Setting of the Monte Carlo reference of CC: M = 13 885 points, u with 135 distinct
values (the QM9_E set, or a synthetic stand-in when the data set is not packaged),
a fresh ``a = |u·N(0, 1)|`` per call. Timed, per call, one core:

  (i)   ``spearman_fixed_u``: the radix-rank kernel of :mod:`mcref.kernels.fastrank`;
  (ii)  NumPy: ``np.argsort(a)`` + average ranks of the tie runs + Σ, all in NumPy
        (also ``np.argsort(a)`` alone, the target's yardstick);
  (iii) numba: ``np.argsort(a)`` inside ``@njit`` + the same O(M) accumulation loop.

Each repeat cycles through ``N_ARRAYS`` different arrays (fresh data for every call, as
in the Monte Carlo loop); the median over the repeats is printed with the ratios.

Run: ``python benchmarks/bench_rank.py [--m 13885] [--repeats 9]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from numba import njit
from scipy.stats import rankdata, spearmanr

from mcref.kernels._config import NJIT
from mcref.kernels.fastrank import average_ranks, make_rank_scratch, spearman_fixed_u

N_ARRAYS = 32


def qm9_u(m: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """u of QM9_E (135 distinct values) when packaged and ``m`` = its size, else 135 lognormal levels."""
    try:
        from mcref import datasets

        u = np.asarray(datasets.load("QM9_E").u, dtype=float)
        if u.size == m:
            return u, "QM9_E"
    except Exception:  # noqa: BLE001 - any failure: synthetic stand-in
        pass
    levels = np.exp(rng.normal(-5.0, 0.8, 135))
    return rng.choice(levels, m), "synthetic (135 levels)"


def numpy_spearman_fixed_u(a, xu, sxx):
    """Reference (ii): ``np.argsort`` + average ranks of tie runs + Σ, all NumPy."""
    m = a.size
    order = np.argsort(a)
    sa = a[order]
    new = np.empty(m, dtype=bool)
    new[0] = True
    np.not_equal(sa[1:], sa[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    bounds = np.append(starts, m)
    run = np.cumsum(new) - 1
    rank_sorted = 0.5 * (bounds[run] + bounds[run + 1] + 1)  # average 1-based rank of each run
    # no np.dot: a threaded BLAS would not be one core (and stalls on a busy machine)
    num = np.sum(rank_sorted * xu[order]) - 0.5 * (m + 1) * xu.sum()
    t = np.diff(bounds).astype(np.float64)
    syy = (m**3 - m - np.sum(t**3 - t)) / 12.0
    return num / np.sqrt(sxx * syy)


@njit(**NJIT)
def numba_argsort_spearman(a, xu, sxx):
    """Reference (iii): numba's ``np.argsort`` + one accumulation pass with tie runs."""
    m = a.shape[0]
    order = np.argsort(a)
    s = 0.0
    ts = 0.0
    k = 0
    while k < m:
        k0 = k
        sx = xu[order[k]]
        while k + 1 < m and a[order[k + 1]] == a[order[k0]]:
            k += 1
            sx += xu[order[k]]
        s += (0.5 * (k0 + k) + 1.0) * sx
        c = k - k0 + 1.0
        ts += c * c * c - c
        k += 1
    mf = np.float64(m)
    xs = 0.0
    for i in range(m):
        xs += xu[i]
    syy = (mf * mf * mf - mf - ts) / 12.0
    return (s - 0.5 * (mf + 1.0) * xs) / np.sqrt(sxx * syy)


def per_call_us(fn, arrays, repeats: int, min_calls: int) -> np.ndarray:
    """Per-call time (µs) of ``fn(a)`` for each repeat, cycling through ``arrays``."""
    fn(arrays[0])  # compile / warm up
    n_cycles = max(1, -(-min_calls // len(arrays)))
    out = np.empty(repeats)
    for r in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n_cycles):
            for a in arrays:
                fn(a)
        out[r] = (time.perf_counter() - t0) / (n_cycles * len(arrays)) * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=13885)
    ap.add_argument("--repeats", type=int, default=9, help="timed repeats (median reported), >= 7")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    m = args.m
    u, u_src = qm9_u(m, rng)
    xu = np.ascontiguousarray(rankdata(u) - 0.5 * (m + 1))
    sxx = float(np.sum(xu * xu))
    arrays = [np.abs(u * rng.standard_normal(m)) for _ in range(N_ARRAYS)]
    scratch = make_rank_scratch(m)
    out = np.empty(m)

    # all three agree with scipy on every array before anything is timed
    for a in arrays[:4]:
        ref = spearmanr(a, u).statistic
        for name, val in (("kernel", spearman_fixed_u(a, xu, sxx, scratch)),
                          ("numpy", numpy_spearman_fixed_u(a, xu, sxx)),
                          ("numba argsort", numba_argsort_spearman(a, xu, sxx))):
            assert abs(val - ref) <= 1e-12, (name, val, ref)
        average_ranks(a, out, scratch)
        assert np.array_equal(out, rankdata(a))

    reps = max(7, args.repeats)
    rows = [
        ("(i)   spearman_fixed_u (radix ranks)", lambda a: spearman_fixed_u(a, xu, sxx, scratch), 2000),
        ("      average_ranks (radix ranks)", lambda a: average_ranks(a, out, scratch), 2000),
        ("(ii)  np.argsort alone", np.argsort, 1000),
        ("(ii)  np.argsort + NumPy ranks/sum", lambda a: numpy_spearman_fixed_u(a, xu, sxx), 500),
        ("      scipy.stats.rankdata", rankdata, 500),
        ("(iii) numba np.argsort + loop", lambda a: numba_argsort_spearman(a, xu, sxx), 100),
    ]
    print(f"M = {m}, u: {u_src}, {np.unique(u).size} distinct u; a = |u·N(0,1)|, "
          f"{N_ARRAYS} fresh arrays per cycle; median of {reps} repeats; one core")
    print(f"numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs\n")
    med = {}
    for label, fn, calls in rows:
        t = per_call_us(fn, arrays, reps, calls)
        med[label] = float(np.median(t))
        print(f"{label:40s} {med[label]:9.1f} µs/call   (min {t.min():7.1f}, max {t.max():7.1f})")
    k = med[rows[0][0]]
    print()
    print(f"np.argsort alone / kernel            : {med[rows[2][0]] / k:6.2f}x   (target >= 2)")
    print(f"np.argsort + NumPy ranks/sum / kernel: {med[rows[3][0]] / k:6.2f}x")
    print(f"numba np.argsort + loop / kernel     : {med[rows[5][0]] / k:6.2f}x")
    print(f"numba / NumPy argsort (design note ~7x): {med[rows[5][0]] / med[rows[2][0]]:6.2f}x")
    print(f"rankdata / average_ranks             : {med[rows[4][0]] / med[rows[1][0]]:6.2f}x")


if __name__ == "__main__":
    main()
