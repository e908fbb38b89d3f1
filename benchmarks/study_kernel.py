"""Size and power of the SKCE tests (:func:`mcref.skce_test`; docs/methods.md, "Kernel
calibration error (SKCE)"), with binomial 95 % intervals (Clopper–Pearson).

Sets of (E, u), u ~ U(0.5, 2), read as Gaussian predictions N(0, u²) of the error E:

- **size**: E = u·ε, ε ~ N(0, 1), at M = 500 and 2000, and at M = 10⁴ for the O(M·B) and
  O(M·J) tests (``block2``, ``blocksqrt``, ``cme``; the others with ``--full``);
- **t(6) errors**: ε = t(6)·√(4/6) (variance 1) read under **t(6) predictions** (``t6_tpred``:
  the predictive law u·t(6)·√(4/6) given as 64 members at its quantiles (k − ½)/64, the samples
  form of :func:`mcref.skce_test`; calibrated up to that discretization) and under normal
  predictions N(0, u²) (``t6``: a power row, the moment statistics are blind to it);
- **power where the moment statistics are blind** (Z = E/u has mean 0 and variance 1):
  ``laplace`` (ε Laplace of variance 1), ``t3_large_u`` (ε normal for u below the median, t(3)/√3
  above), ``bimodal`` (ε = ±0.8 + 0.6·N(0, 1));
- **the ICLR 2021 synthetic study** (Widmann, Lindsten & Zachariah, Table 1 setting):
  predictions N(c, 0.1²), c ~ U(0, 1); targets drawn from the prediction (calibrated: the
  test error is the rejection rate) or from N(0.1, 0.1²) (uncalibrated: the test error is
  1 − the rejection rate); n = 64, 256, 1024. Published test errors at n = 1024, calibrated:
  0.06 (block B = 2), 0.02 (B = √n), 0.056 (asymptotic SKCE), 0.068 (CME); uncalibrated 0.0
  from n = 64 on.

The tests: ``consistency`` (defaults: sequential stop at the 10th exceedance), ``block2``
(asymptotic block, B = 2), ``blocksqrt`` (B = ⌊√M⌋), ``unbiased`` (asymptotic, wild bootstrap,
``--n-boot`` replicates), ``cme`` (the χ² test of the calibration mean embedding at 5 test
locations drawn from the data); α = 0.05, default length scales. Every set has its own seed spawned
from the cell's (``--seed`` and the cell's name); a cell is a pure function of its parameters
and seed, so ``--designs``/``--tests`` select cells without changing them. Costly cells (the
consistency test at M = 2000) run only with ``--full``.

Run: ``python benchmarks/study_kernel.py [--sets 100] [--n-boot 199] [--full] [--seed 0]
[--designs normal,laplace,...] [--sizes 500,...] [--tests consistency,block2,...,cme]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

import mcref

ALPHA = 0.05


def errors(kind: str, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = u.size
    if kind == "normal":
        eps = rng.standard_normal(n)
    elif kind == "laplace":
        eps = rng.laplace(size=n) / math.sqrt(2.0)
    elif kind == "t3_large_u":
        eps = rng.standard_normal(n)
        big = u > np.median(u)
        eps[big] = rng.standard_t(3, big.sum()) / math.sqrt(3.0)
    elif kind in ("t6", "t6_tpred"):
        eps = rng.standard_t(6, n) * math.sqrt(4.0 / 6.0)
    elif kind == "bimodal":
        eps = rng.choice([-0.8, 0.8], n) + 0.6 * rng.standard_normal(n)
    else:
        raise ValueError(kind)
    return u * eps


#: the t(6) predictive law of unit variance as 64 members at its quantiles (the samples form)
T6_MEMBERS = stats.t.ppf((np.arange(64) + 0.5) / 64, 6) * math.sqrt(4.0 / 6.0)


def run_test(test: str, y, loc, scale, seed: int, n_boot: int, samples=None) -> float:
    m = y.size
    kw = dict(samples=samples) if samples is not None else dict(loc=loc, scale=scale)
    if test == "consistency":
        return mcref.skce_test(y, method="consistency", seed=seed, **kw).pvalue
    if test == "block2":
        return mcref.skce_test(y, method="asymptotic_block", block_size=2, **kw).pvalue
    if test == "blocksqrt":
        return mcref.skce_test(y, method="asymptotic_block", block_size=int(math.isqrt(m)), **kw).pvalue
    if test == "cme":
        return mcref.skce_test(y, method="cme", seed=seed, **kw).pvalue
    return mcref.skce_test(y, method="asymptotic_unbiased", n_boot=n_boot, seed=seed, **kw).pvalue


def cell(design: str, m: int, test: str, seed_seq: np.random.SeedSequence, n_sets: int, n_boot: int) -> int:
    """Rejections at α over ``n_sets`` sets of one design."""
    rej = 0
    for child in seed_seq.spawn(n_sets):
        rng = np.random.default_rng(child)
        seed = int(child.generate_state(1)[0])
        if design.startswith("iclr"):
            c = rng.uniform(0.0, 1.0, m)
            centre = c if design == "iclr_calibrated" else 0.1
            y = centre + 0.1 * rng.standard_normal(m)
            p = run_test(test, y, c, np.full(m, 0.1), seed, n_boot)
        else:
            u = rng.uniform(0.5, 2.0, m)
            members = u[:, None] * T6_MEMBERS[None, :] if design == "t6_tpred" else None
            p = run_test(test, errors(design, u, rng), np.zeros(m), u, seed, n_boot, members)
        rej += p <= ALPHA
    return rej


def ci(k: int, n: int) -> str:
    lo, hi = stats.binomtest(k, n).proportion_ci(0.95)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=199)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full", action="store_true",
                    help="also the consistency test at M = 2000 and the O(M²) tests at M = 10⁴")
    ap.add_argument("--designs", default="normal,laplace,t3_large_u,bimodal,t6,t6_tpred,iclr_calibrated,"
                                         "iclr_uncalibrated", help="comma-separated designs to run")
    ap.add_argument("--sizes", default="", help="comma-separated M to keep (default: every M of the grid)")
    ap.add_argument("--tests", default="consistency,block2,blocksqrt,unbiased,cme", help="comma-separated tests")
    args = ap.parse_args(argv)
    designs, tests = args.designs.split(","), tuple(args.tests.split(","))
    grid = []
    for design in ("normal", "laplace", "t3_large_u", "bimodal", "t6", "t6_tpred"):
        for m in (500, 2000, 10_000) if design == "normal" else (500, 2000):
            for test in tests:
                if test == "consistency" and m >= 2000 and not args.full:
                    continue
                if m == 10_000 and test == "unbiased" and not args.full:
                    continue
                grid.append((design, m, test))
    for design in ("iclr_calibrated", "iclr_uncalibrated"):
        for m in (64, 256, 1024):
            for test in tests:
                grid.append((design, m, test))
    grid = [g for g in grid if g[0] in designs]
    if args.sizes:
        grid = [g for g in grid if g[1] in {int(x) for x in args.sizes.split(",")}]
    print(f"SKCE tests, {args.sets} sets per cell, alpha = {ALPHA}, wild bootstrap n_boot = {args.n_boot}, "
          f"seed {args.seed}; rejection rate [95 % interval]")
    print(f"{'design':18s} {'M':>5s} {'test':12s} {'rejection rate':26s} {'s/set':>7s}")
    for design, m, test in grid:
        # one seed per cell, from its name: a cell's sets do not depend on which cells run
        ss = np.random.SeedSequence(args.seed, spawn_key=tuple(f"{design}/{m}/{test}".encode()))
        t0 = time.perf_counter()
        k = cell(design, m, test, ss, args.sets, args.n_boot)
        dt = (time.perf_counter() - t0) / args.sets
        note = ""
        if design == "iclr_calibrated" and m == 1024:
            note = {"block2": "  paper 0.06", "blocksqrt": "  paper 0.02",
                    "unbiased": "  paper 0.056 (asymptotic)", "cme": "  paper 0.068"}.get(test, "")
        if design == "iclr_uncalibrated":
            note = "  (test error = 1 - rate; paper 0.0)"
        print(f"{design:18s} {m:5d} {test:12s} {ci(k, args.sets):26s} {dt:7.3f}{note}", flush=True)


if __name__ == "__main__":
    main()
