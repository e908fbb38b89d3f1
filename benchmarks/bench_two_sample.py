"""The MMD permutation test: mcref's pair tiles side by side with what users run, and the floor.

At n = m = ``--n`` (default 2000), d = 10, with B = 999 permutations of the pooled sample and a
Gaussian kernel of fixed length ℓ (the pooled median), one run times

  mcref         ``mcref.samples.two_sample(X, Y, stats=["MMD"], n_perm=999, sequential=False,
                n_boot=0)``: every permutation's MMD² from one pass over the pairs per 256
                permutations (:mod:`mcref.kernels.pairs`), no (n + m)² array;
  numpy-loop    the kernel matrix K computed once (NumPy), then for each permutation the
                U-statistic from K indexed by the permuted sets (``K[np.ix_(I, I)]`` ...): what
                users write;
  hyppo         ``hyppo.ksample.MMD().test(X, Y, reps=B, auto=False, workers=1)``, its
                permutation route (hyppo 0.5.2);
  floor-gemm    one BLAS product K @ W of the precomputed K with the 999 permutations' ±1/n
                weight vectors (the flops of the quadratic forms, BLAS on all its threads);
  floor-exp     NumPy ``exp`` over the (n + m)² squared distances (the kernel values alone).

The baselines that cost a pass per permutation (numpy-loop, hyppo) run ``--baseline-reps``
permutations (default 99): numpy-loop's time is scaled linearly to 999 (the same cost per
permutation), hyppo's is extrapolated from runs of R and 2R permutations (its fixed cost counted
once); the others run all 999. Medians of ``--repeats`` runs (default 3). Then the
exact test at n = m = ``--n-large`` (default 10⁴) with 999 permutations, in a fresh process,
with its resident memory before the test and its peak during it (Linux: VmHWM reset after the
imports and the kernels' compilation, whose LLVM passes alone can take several hundred MiB on a
cold cache), and the process's peak (``ru_maxrss``).

Run: ``python benchmarks/bench_two_sample.py [--quick] [--n 2000] [--n-large 10000]
[--repeats 3] [--baseline-reps 99] [--threads T]``. ``--quick``: n = 1000, n_large = 4000,
1 repeat, 19 baseline permutations.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np


def _median_time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _data(n: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(0.1, 1.0, size=(n, d))


def _large(n: int, d: int) -> None:
    """The child process of the large run: prints its time and peak RSS as JSON."""
    import resource

    from mcref.samples import median_heuristic, two_sample
    X, Y = _data(n, d)
    ell = median_heuristic(X, Y)
    two_sample(X[:200], Y[:200], stats=["MMD"], n_perm=19, sequential=False, n_boot=0, length_scale=ell, seed=0)
    before = _vm("VmRSS")
    try:  # Linux: reset the high-water mark after the imports and the compilation (LLVM's own peak)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    t0 = time.perf_counter()
    tab = two_sample(X, Y, stats=["MMD"], n_perm=999, sequential=False, n_boot=0, length_scale=ell, seed=0)
    wall = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"wall": wall, "peak_rss_mib": rss, "hwm_mib": _vm("VmHWM"), "before_mib": before,
                      "p": tab["MMD"].p}))


def _vm(field: str) -> float:
    """A /proc/self/status field in MiB (NaN where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return float(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--n-large", type=int, default=None)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--baseline-reps", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--child-large", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.threads:
        import numba
        numba.set_num_threads(a.threads)
    if a.child_large:
        _large(a.child_large, a.d)
        return
    n = a.n or (1000 if a.quick else 2000)
    n_large = a.n_large if a.n_large is not None else (4000 if a.quick else 10_000)
    repeats = a.repeats or (1 if a.quick else 3)
    breps = a.baseline_reps or (19 if a.quick else 99)
    B = 999

    from scipy.spatial.distance import cdist

    from mcref.samples import median_heuristic, two_sample
    X, Y = _data(n, a.d)
    Z = np.concatenate([X, Y])
    N = 2 * n
    ell = median_heuristic(X, Y)
    g = 1.0 / (2.0 * ell * ell)
    two_sample(X[:100], Y[:100], stats=["MMD"], n_perm=19, sequential=False, n_boot=0, length_scale=ell, seed=0)

    print(f"MMD permutation test, n = m = {n}, d = {a.d}, B = {B}, Gaussian kernel, ℓ = {ell:.4g}; "
          f"median of {repeats} run(s); numpy-loop and hyppo from {breps} permutations", flush=True)
    res = {}

    def show(k):
        print(f"  {k:<11} {res[k]:9.3f} s   ratio to mcref {res[k] / res['mcref']:7.2f}", flush=True)

    res["mcref"] = _median_time(lambda: two_sample(X, Y, stats=["MMD"], n_perm=B, sequential=False, n_boot=0,
                                                   length_scale=ell, seed=1), repeats)
    show("mcref")
    D2 = cdist(Z, Z, "sqeuclidean")
    res["floor-exp"] = _median_time(lambda: np.exp(-g * D2), repeats)
    show("floor-exp")
    K = np.exp(-g * D2)
    del D2
    rng = np.random.default_rng(2)
    perms = [rng.permutation(N) for _ in range(max(B, breps))]
    W = np.empty((N, B))
    for b in range(B):
        W[perms[b][:n], b] = 1.0 / n
        W[perms[b][n:], b] = -1.0 / n
    res["floor-gemm"] = _median_time(lambda: K @ W, repeats)
    show("floor-gemm")
    del W

    def numpy_loop():
        for b in range(breps):
            i, j = perms[b][:n], perms[b][n:]
            kxx, kyy, kxy = K[np.ix_(i, i)], K[np.ix_(j, j)], K[np.ix_(i, j)]
            (kxx.sum() - n) / (n * (n - 1)) + (kyy.sum() - n) / (n * (n - 1)) - 2 * kxy.mean()

    res["numpy-loop"] = _median_time(numpy_loop, repeats) * B / breps
    show("numpy-loop")
    del K
    try:
        from hyppo.ksample import MMD
        t1 = _median_time(lambda: MMD().test(X, Y, reps=breps, auto=False, workers=1), repeats)
        t2 = _median_time(lambda: MMD().test(X, Y, reps=2 * breps, auto=False, workers=1), repeats)
        res["hyppo"] = t1 + (t2 - t1) / breps * (B - breps)  # its fixed cost (the observed statistic) once
    except ImportError:
        res["hyppo"] = float("nan")
    show("hyppo")
    m = res["mcref"]
    print(f"  mcref / floor-gemm = {m / res['floor-gemm']:.2f}; numpy-loop / mcref = {res['numpy-loop'] / m:.1f}; "
          f"hyppo / mcref = {res['hyppo'] / m:.1f}", flush=True)
    if n_large:  # (the hyppo warnings of few replications are expected: its p is not used)
        out = subprocess.run([sys.executable, __file__, "--child-large", str(n_large), "--d", str(a.d)]
                             + (["--threads", str(a.threads)] if a.threads else []),
                             capture_output=True, text=True, check=True)
        doc = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"exact test at n = m = {n_large}, d = {a.d}, B = {B}: {doc['wall']:.2f} s; resident memory: "
              f"{doc['before_mib']:.0f} MiB before the test (imports, compiled kernels), peak during it "
              f"{doc['hwm_mib']:.0f} MiB (VmHWM after a reset), the process's peak {doc['peak_rss_mib']:.0f} MiB "
              f"(with a compilation on a cold cache)")


if __name__ == "__main__":
    main()
