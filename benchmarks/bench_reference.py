"""Simulated references, N_MC = 10⁴, of ZMS + CC + ENCE + ZMSE together on QM9_E
(M = 13 885), normal D: mcref side by side with

(a) the best NumPy implementation we could write of the same work — batched over chunks
    of repeats, bins and u-ranks precomputed, ``np.argsort(axis=1)`` for the ranks of
    |E*|, one thread per core (NumPy releases the GIL);
(b) a naive one-set-at-a-time loop with ``scipy.stats.spearmanr`` (what users write
    today; timed on a subset of the repeats and scaled, see the output);
(c) the floor: drawing the same number of normal deviates with NumPy's Generator on all
    cores, and nothing else.

Prints medians and the three ratios. Targets (issue 3, 2 cores): >= 1.5x (a),
>= 15x (b), <= 2x the floor (c).

Run: ``python benchmarks/bench_reference.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time  # noqa: E402

import mcref  # noqa: E402
from mcref.binning import bin_starts  # noqa: E402

NAMES = ["ZMS", "CC", "ENCE", "ZMSE"]
N_BINS = 20
CHUNK = 64


def _chunks(n_mc):
    return [(c, min(CHUNK, n_mc - c)) for c in range(0, n_mc, CHUNK)]


def numpy_best(u, n_mc, seed, n_threads):
    """(a): batched NumPy, everything about u precomputed, argsort per row for ranks."""
    us = np.sort(u, kind="stable")
    m = us.size
    starts = bin_starts(m, N_BINS)
    n_b = np.diff(starts)
    u2 = us * us
    mv_b = np.add.reduceat(u2, starts[:-1]) / n_b
    ru = stats.rankdata(us) - 0.5 * (m + 1)
    sxx = ru @ ru
    syy = (m**3 - m) / 12.0  # no ties in |E*| (continuous D)
    pos = np.arange(1, m + 1) - 0.5 * (m + 1)
    out = np.empty((4, n_mc))
    children = np.random.SeedSequence(seed).spawn(len(_chunks(n_mc)))

    def work(i_c):
        i, (c0, n) = i_c
        eps = np.random.default_rng(children[i]).standard_normal((n, m))
        e2 = (us * eps) ** 2
        z2 = eps * eps
        out[0, c0:c0 + n] = z2.mean(axis=1)
        mse_b = np.add.reduceat(e2, starts[:-1], axis=1) / n_b
        out[2, c0:c0 + n] = np.mean(np.abs(np.sqrt(mv_b) - np.sqrt(mse_b)) / np.sqrt(mv_b), axis=1)
        zms_b = np.add.reduceat(z2, starts[:-1], axis=1) / n_b
        out[3, c0:c0 + n] = np.mean(np.abs(np.log(zms_b)), axis=1)
        order = np.argsort(e2, axis=1)  # |E*| order (e2 is monotone in |E*|)
        out[1, c0:c0 + n] = (ru[order] @ pos) / np.sqrt(sxx * syy)

    with ThreadPoolExecutor(n_threads) as ex:
        list(ex.map(work, enumerate(_chunks(n_mc))))
    return out


def naive_loop(u, n_rep, seed):
    """(b): one synthetic set at a time, statistics recomputed from scratch."""
    rng = np.random.default_rng(seed)
    out = np.empty((4, n_rep))
    for k in range(n_rep):
        E = u * rng.standard_normal(u.size)
        z = E / u
        out[0, k] = np.mean(z * z)
        out[1, k] = stats.spearmanr(np.abs(E), u).statistic
        order = np.argsort(u, kind="stable")
        Es, uss = E[order], u[order]
        st = bin_starts(u.size, N_BINS)
        ence = zmse = 0.0
        for b in range(N_BINS):
            e, v = Es[st[b]:st[b + 1]], uss[st[b]:st[b + 1]]
            rmv, rmse = np.sqrt(np.mean(v * v)), np.sqrt(np.mean(e * e))
            ence += abs(rmv - rmse) / rmv
            zmse += abs(np.log(np.mean((e / v) ** 2)))
        out[2, k], out[3, k] = ence / N_BINS, zmse / N_BINS
    return out


def floor(m, n_mc, seed, n_threads):
    """(c): the normal deviates alone, same chunks, all cores."""
    children = np.random.SeedSequence(seed).spawn(len(_chunks(n_mc)))
    bufs = [np.empty((CHUNK, m)) for _ in range(n_threads)]

    def work(t):
        for i in range(t, len(children), n_threads):
            n = _chunks(n_mc)[i][1]
            np.random.default_rng(children[i]).standard_normal(out=bufs[t][:n])

    with ThreadPoolExecutor(n_threads) as ex:
        list(ex.map(work, range(n_threads)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n_mc = 2000 if args.quick else 10_000
    reps = 1 if args.quick else args.repeats
    n_naive = 200 if args.quick else 1000
    n_threads = os.cpu_count() or 1
    u = mcref.datasets.load("QM9_E").u
    print(f"# references of {'+'.join(NAMES)}, QM9_E M={u.size}, N_MC={n_mc}, normal D; {machine()}")
    mcref.simulate(NAMES, u[:2000], n_mc=64, dists=["normal"])  # compile / load the cache

    # same statistics: the NumPy baseline and mcref agree on the means within MC error
    a = numpy_best(u, 2000, 7, n_threads)
    s = mcref.simulate(NAMES, u, dists=["normal"], n_mc=2000, seed=7).samples[0]
    for k, nm in enumerate(NAMES):
        se = np.hypot(a[k].std(), s[k].std()) / np.sqrt(2000)
        assert abs(a[k].mean() - s[k].mean()) < 5 * se, nm

    t_mc, _ = median_time(lambda: mcref.simulate(NAMES, u, dists=["normal"], n_mc=n_mc, seed=1), reps)
    t_np, _ = median_time(lambda: numpy_best(u, n_mc, 1, n_threads), reps)
    t_fl, _ = median_time(lambda: floor(u.size, n_mc, 1, n_threads), reps)
    t0 = time.perf_counter()
    naive_loop(u, n_naive, 1)
    t_nv = (time.perf_counter() - t0) * n_mc / n_naive
    print(f"mcref                         {t_mc:8.3f} s   (median of {reps})")
    print(f"(a) best NumPy, {n_threads} threads      {t_np:8.3f} s   ratio {t_np / t_mc:6.2f}x  (target >= 1.5x)")
    print(f"(b) naive loop + spearmanr    {t_nv:8.2f} s   ratio {t_nv / t_mc:6.1f}x  (target >= 15x; "
          f"{n_naive} repeats timed, scaled x{n_mc // n_naive})")
    print(f"(c) floor: normals only       {t_fl:8.3f} s   mcref / floor {t_mc / t_fl:5.2f}  (target <= 2)")


if __name__ == "__main__":
    main()
