"""Probabilistic reference of the confidence curve, mcref vs plain NumPy, side by side.

The reference of ``mcref.diagnostics.confidence_curve`` is the mean (and 2.5–97.5 % band)
of the confidence curve of ``n_draws`` synthetic sets E* = u·ε, ε ~ N(0, 1): for each draw,
order by decreasing u and take the RMSE of the errors left after removing the first
⌊k·M/100⌋ points, k = 0 … 99.

  * mcref: ``confidence_curve(E, u, n_mc=500)`` (everything: the data's curve, the oracle,
    500 reference curves in nogil numba kernels on a thread pool, HD band, DFPR);
  * NumPy: the same 500 reference curves, vectorised — one (n_draws, M) array of normal
    deviates, squared, reversed cumulative sums, divided by the suffix lengths, sampled at the
    100 cuts; the band by ``np.quantile``. The loop version of ErrViewLib's ``Sconf`` (one
    mean over the remaining points per k and draw) is timed too, on 20 draws, and
    extrapolated.

Each repeat times every contender once, in turn; medians and NumPy time / mcref time are
printed. Run: ``python benchmarks/bench_diagnostics.py [--dataset QM9_E] [--repeats 7]``.
Target (issue): the 500-draw reference on QM9_E, ratio printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

import mcref  # noqa: E402
from mcref.diagnostics import confidence_curve  # noqa: E402


def numpy_reference(u, n_draws, rng):
    m = u.size
    u_desc = np.sort(u)[::-1]
    cuts = np.floor(np.arange(100) * m / 100 + 1e-9).astype(int)
    e2 = (u_desc * rng.standard_normal((n_draws, m))) ** 2
    suffix = np.cumsum(e2[:, ::-1], axis=1)[:, ::-1]  # sum over i >= j
    curves = np.sqrt(suffix[:, cuts] / (m - cuts))
    ref = curves.mean(axis=0)
    band = np.quantile(curves, [0.025, 0.975], axis=0)
    return ref, band


def loop_reference(u, n_draws, rng):
    m = u.size
    u_desc = np.sort(u)[::-1]
    out = np.empty((n_draws, 100))
    for d in range(n_draws):
        e = u_desc * rng.standard_normal(m)
        for k in range(100):
            out[d, k] = np.sqrt(np.mean(e[int(np.floor(k * m / 100 + 1e-9)):] ** 2))
    return out.mean(axis=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="QM9_E")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--draws", type=int, default=500)
    args = ap.parse_args()
    ds = mcref.datasets.load(args.dataset)
    print(f"# confidence-curve reference, {args.draws} draws, {ds.name} (M = {ds.M}); median of {args.repeats}; "
          f"{machine()}")
    t0 = time.perf_counter()
    cc = confidence_curve(ds.E, ds.u, n_mc=args.draws, seed=0)
    print(f"# warm-up call (compilation / cache load): {time.perf_counter() - t0:.2f} s")
    rng = np.random.default_rng(0)
    ref_np, _ = numpy_reference(ds.u, args.draws, rng)
    rel = np.max(np.abs(ref_np - cc.reference) / cc.reference)
    print(f"# check: largest relative difference of the two reference curves {rel:.2e} "
          f"(independent draws; Monte Carlo noise of order 1/sqrt({args.draws}) of the band)")
    times = {"mcref": [], "numpy": [], "loop": []}
    for r in range(args.repeats):
        t = time.perf_counter()
        confidence_curve(ds.E, ds.u, n_mc=args.draws, seed=r)
        times["mcref"].append(time.perf_counter() - t)
        t = time.perf_counter()
        numpy_reference(ds.u, args.draws, rng)
        times["numpy"].append(time.perf_counter() - t)
        t = time.perf_counter()
        loop_reference(ds.u, 20, rng)
        times["loop"].append((time.perf_counter() - t) * args.draws / 20)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{'contender':<34} {'median s':>9} {'ratio':>7}")
    print(f"{'mcref confidence_curve (all)':<34} {med['mcref']:>9.4f} {'1.0x':>7}")
    print(f"{'NumPy vectorised reference only':<34} {med['numpy']:>9.4f} {med['numpy'] / med['mcref']:>6.1f}x")
    print(f"{'NumPy loop (Sconf), extrapolated':<34} {med['loop']:>9.4f} {med['loop'] / med['mcref']:>6.1f}x")


if __name__ == "__main__":
    main()
