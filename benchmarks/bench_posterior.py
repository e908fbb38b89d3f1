"""Issue 62: the speed of :func:`mcref.posterior.from_posterior`, side by side in one run.

1. TARP at N = 1000, S = 1000, d = 5: :func:`mcref.posterior.tarp_coverage` (TARP alone, the
   check's definitions) against the ``tarp`` package 0.1.1 (``get_tarp_coverage`` with the same
   ``references=``; it holds the S × N × d distance array). Medians of ``--repeats`` runs and the
   ratio (target ≥ 20×). mcref standardizes each parameter by its pooled sd before the distances
   (``TarpResult.scale``): tarp (``norm=False``) gets the same standardized draws, truths and
   references, and the share of cases whose f agree exactly is printed.
2. The whole check with 999 swaps at N = 10⁴, S = 1000, d = 10 (``--full``; 0.8 GB of draws,
   target ≤ 30 s on 2 cores, at most 2 GB beyond the draws: the peak RSS is printed, and the
   RSS before the check); the quick default runs N = 2000.
3. The same bits for 1 and 2 numba threads (the check's JSON compared).

Run: ``python benchmarks/bench_posterior.py [--full] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import resource
import time

import numba
import numpy as np

from mcref.posterior import from_posterior, tarp_coverage
from mcref.synthetic import gaussian_linear_posterior


def _rss_gb() -> float:
    """Peak RSS in GiB since the last :func:`_reset_peak` (VmHWM; ru_maxrss where /proc is absent)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def _reset_peak() -> None:
    """Reset the peak RSS to the current RSS (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def tarp_side_by_side(repeats: int) -> None:
    import tarp

    N, S, d = 1000, 1000, 5
    truth, draws, _ = gaussian_linear_posterior(N, S, d=d, seed=1)
    refs = np.random.default_rng(2).uniform(truth.min(0), truth.max(0), size=(N, d))
    sd = tarp_coverage(truth, draws, references=refs).scale  # the check's pooled sd
    samples = np.ascontiguousarray((draws / sd).transpose(1, 0, 2))  # tarp's layout (S, N, d), standardized
    z_truth, z_refs = truth / sd, refs / sd

    def ours():
        return tarp_coverage(truth, draws, references=refs)

    def ours_scaled():  # the caller's scale: no moments pass (tarp too gets standardized vectors)
        return tarp_coverage(truth, draws, references=refs, scale=sd)

    def theirs():
        return tarp.get_tarp_coverage(samples.copy(), z_truth.copy(), references=z_refs.copy(), norm=False,
                                      num_alpha_bins=100)

    ours(), ours_scaled()  # compile
    times = {"ours": [], "scaled": [], "theirs": []}
    for _ in range(repeats):  # alternating, so that the machine's load falls on all three alike
        for name, fn in (("ours", ours), ("scaled", ours_scaled), ("theirs", theirs)):
            t0 = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - t0)
            if name == "ours":
                tp = out
    t_ours, t_scaled, t_theirs = (float(np.median(times[k])) for k in ("ours", "scaled", "theirs"))
    ratios = np.array(times["theirs"]) / np.array(times["ours"])
    print(f"TARP N={N} S={S} d={d}, {repeats} repeats alternating, medians: mcref {t_ours * 1e3:.1f} ms "
          f"(tarp_coverage), {t_scaled * 1e3:.1f} ms (scale= given), tarp {t_theirs * 1e3:.1f} ms; ratio of "
          f"medians {t_theirs / t_ours:.1f}x ({t_theirs / t_scaled:.1f}x with scale=), median of the paired "
          f"ratios {np.median(ratios):.1f}x [min {ratios.min():.1f}, max {ratios.max():.1f}]")
    dist_d = np.sqrt(((samples - z_refs[None]) ** 2).sum(-1))  # tarp's own formula, its f
    dist_t = np.sqrt(((z_truth - z_refs) ** 2).sum(-1))
    f_theirs = (dist_d < dist_t).sum(0) / S
    same = float(np.mean(np.asarray(tp.f) == f_theirs))
    print(f"  f equal to tarp's on {100 * same:.1f} % of the cases")


def whole_check(N: int, S: int, d: int, swaps: int) -> None:
    truth, draws, ex = gaussian_linear_posterior(N, S, d=d, seed=3)
    del ex["logpdf"], ex["y"]
    for threads in (2, 1):
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        from_posterior(truth[:50], draws[:50], n_swaps=19, seed=0)  # compile
        _reset_peak()
        base = _rss_gb()
        if threads == 2:
            print(f"check N={N} S={S} d={d}, {swaps} swaps: draws {draws.nbytes / 2**30:.2f} GiB, RSS before the "
                  f"check {base:.2f} GiB")
        t0 = time.perf_counter()
        check = from_posterior(truth, draws, prior_draws=ex["prior_draws"], n_swaps=swaps, seed=0)
        dt = time.perf_counter() - t0
        if threads == 2:
            two = check.to_json()
        print(f"  {threads} thread(s): {dt:.1f} s, peak RSS {_rss_gb():.2f} GiB (+{_rss_gb() - base:.2f}); "
              f"verdict {check.verdict}, p = {check.pvalue:.3g}")
    print(f"  same bits for 1 and 2 threads: {check.to_json() == two}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the issue's size: N = 10^4, S = 1000, d = 10")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--tarp-only", action="store_true", help="TARP side by side only, not the whole check")
    ap.add_argument("--swaps", type=int, default=999)
    a = ap.parse_args()
    print(f"numba threads available: {numba.config.NUMBA_NUM_THREADS}")
    tarp_side_by_side(a.repeats)
    if not a.tarp_only:
        whole_check(10_000 if a.full else 2000, 1000, 10, a.swaps)


if __name__ == "__main__":
    main()
