"""The scaling study (appendix B of Pernot 2024, sensitivity paper): mcref side by side with NumPy.

1. **Per cell** — one (model, M, k) cell, ENCE and ZMSE for N = 10..50, timed for

   (a) a plain NumPy port of the paper's loop: per repeat draw u and E, then per N call
       ``ence(E, u, N)`` / ``zmse(E, u, N)`` functions that sort by u and bin (what a user
       translating the R code writes);
   (b) the best batched NumPy we could write: chunks of repeats, one sort per repeat for
       every N, per-bin sums by ``np.add.reduceat``;
   (c) mcref's cell (the same draws as (b), numba kernel for the bins).

   NumPy runs fewer repeats (timed, then scaled per repeat); ratios are per repeat.
2. **Full grid** — ``mcref.studies.scaling()`` at the paper's setting (both models,
   N_MC = 5000, 60 cells) with ``n_jobs=1`` and ``n_jobs=2`` (one thread per cell), and one
   process with two threads per cell: wall time, cells/s, speed-ups.
3. ``--reliability``: the full reliability study (NIG and TIG, paper setting) with n_jobs=2.

Targets (issue "Simulation studies", 2 cores): full grid <= 5 min, >= 10x NumPy per cell,
n_jobs 2/1 speed-up >= 1.7x; full reliability <= 15 min.

Run: ``python benchmarks/bench_studies.py [--quick] [--reliability]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_time  # noqa: E402

from mcref import studies  # noqa: E402
from mcref.binning import bin_starts  # noqa: E402
from mcref.studies.scaling import _scaling_cell  # noqa: E402

NS = (10, 20, 30, 40, 50)


def _ence(E, u, n):
    o = np.argsort(u, kind="stable")
    s = bin_starts(u.size, n)
    tot = 0.0
    for b in range(n):
        sel = o[s[b]:s[b + 1]]
        rmv = np.sqrt(np.mean(u[sel] ** 2))
        tot += abs(rmv - np.sqrt(np.mean(E[sel] ** 2))) / rmv
    return tot / n


def _zmse(E, u, n):
    o = np.argsort(u, kind="stable")
    s = bin_starts(u.size, n)
    z2 = (E / u) ** 2
    return float(np.mean([abs(np.log(np.mean(z2[o[s[b]:s[b + 1]]]))) for b in range(n)]))


def numpy_plain(M, k, n_rep, seed=0):
    g = np.random.default_rng(seed)
    out = np.empty((n_rep, len(NS), 2))
    for r in range(n_rep):
        u = np.sqrt(k / g.standard_gamma(k, M))
        E = u * g.standard_normal(M)
        for j, n in enumerate(NS):
            out[r, j] = _ence(E, u, n), _zmse(E, u, n)
    return out


def numpy_batched(M, k, n_rep, seed=0, chunk=16):
    g = np.random.default_rng(seed)
    starts = [bin_starts(M, n)[:-1] for n in NS]
    counts = [np.diff(bin_starts(M, n)) for n in NS]
    out = np.empty((n_rep, len(NS), 2))
    for r0 in range(0, n_rep, chunk):
        R = min(chunk, n_rep - r0)
        u2 = np.sort(k / g.standard_gamma(k, (R, M)), axis=1)
        eps2 = g.standard_normal((R, M)) ** 2
        e2 = u2 * eps2
        for j, (s, c) in enumerate(zip(starts, counts)):
            su2 = np.add.reduceat(u2, s, axis=1)
            se2 = np.add.reduceat(e2, s, axis=1)
            sz2 = np.add.reduceat(eps2, s, axis=1)
            out[r0:r0 + R, j, 0] = np.mean(np.abs(1 - np.sqrt(se2 / su2)), axis=1)
            out[r0:r0 + R, j, 1] = np.mean(np.abs(np.log(sz2 / c)), axis=1)
    return out


def per_cell(M, k, n_mcref, n_np, repeats):
    params = {"N": list(NS), "n_mc": n_mcref}
    key = {"model": "NIG", "M": M, "k": k}
    _scaling_cell(key, {"N": list(NS), "n_mc": 32}, np.random.SeedSequence(0), 1)  # compile
    t_mc, _ = median_time(lambda: _scaling_cell(key, params, np.random.SeedSequence(1), 1), repeats)
    t_pl, _ = median_time(lambda: numpy_plain(M, k, max(2, n_np // 10)), max(1, repeats // 2))
    t_bt, _ = median_time(lambda: numpy_batched(M, k, n_np), repeats)
    per = dict(mcref=t_mc / n_mcref, plain=t_pl / max(2, n_np // 10), batched=t_bt / n_np)
    print(f"  cell NIG M={M} k={k}, N={list(NS)}: per repeat  mcref {per['mcref'] * 1e3:.3f} ms | "
          f"NumPy batched {per['batched'] * 1e3:.3f} ms ({per['batched'] / per['mcref']:.1f}x) | "
          f"NumPy plain loop {per['plain'] * 1e3:.3f} ms ({per['plain'] / per['mcref']:.1f}x)")
    return per


RESULTS = Path(__file__).resolve().parent / "results"


def full_grid(n_jobs, threads, store=None, **kw):
    t0 = time.perf_counter()
    res = studies.scaling(n_jobs=n_jobs, threads_per_cell=threads, progress=False, store=store, **kw)
    dt = time.perf_counter() - t0
    n_cells = res.n_computed
    print(f"  scaling grid, n_jobs={n_jobs} x {threads} thread(s) per cell: {dt:.1f} s wall, {n_cells} cells, "
          f"{n_cells / dt:.2f} cells/s")
    return dt, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller grid (M <= 4000, N_MC = 1000)")
    ap.add_argument("--reliability", action="store_true", help="also time the full reliability study")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    print("1. per cell (median of repeats, one thread)")
    for M in ((2000,) if args.quick else (2000, 8000)):
        per_cell(M, 4, n_mcref=320 if args.quick else 640, n_np=64, repeats=3 if args.quick else 5)
    print("2. full scaling grid" + (" (quick)" if args.quick else " (paper setting: 2 models x 5 M x 6 k, N_MC=5000)"))
    kw = dict(M=(2000, 4000), n_mc=1000) if args.quick else {}
    studies.scaling(models=("NIG", "T6IG"), M=(600,), N=(10,), k=(3,), n_mc=32, n_jobs=2, progress=False)  # warm caches
    RESULTS.mkdir(exist_ok=True)
    store = None if args.quick else RESULTS / "scaling.sqlite"
    if store is not None and store.exists():
        store.unlink()  # time a fresh run; the store is then read by notebooks/scaling_laws.ipynb
    t2, res = full_grid(2, 1, store=store, **kw)
    t1, res1 = full_grid(1, 1, **kw)
    t12, _ = full_grid(1, 2, **kw)
    same = res.table.equals(res1.table)
    print(f"  speed-up n_jobs 2/1 (one thread per cell): {t1 / t2:.2f}x; one process with 2 threads: {t1 / t12:.2f}x; "
          f"tables bit-identical: {same}")
    print("  fits (OLS, as the paper):")
    print(res.fits.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if args.reliability:
        print("3. full reliability study (paper setting: M=5000, 1000 repeats, B=5000), n_jobs=2")
        total = 0.0
        for model in ("NIG", "TIG"):
            t0 = time.perf_counter()
            st = RESULTS / f"reliability_{model}.sqlite"
            if st.exists():
                st.unlink()
            r = studies.reliability(model=model, n_jobs=2, progress=False, store=st)
            dt = time.perf_counter() - t0
            total += dt
            print(f"  {model}: {dt / 60:.1f} min")
            print(r.table[["nu", "stat", "p_val", "low", "high"]].to_string(index=False))
        print(f"  total {total / 60:.1f} min")


if __name__ == "__main__":
    main()
