"""The worst case of ``validate`` at large M (issue 41): a set built so that a p-value sits near α.

u ~ lognormal(0, 0.5), E = s·u·N(0, 1) with s² = 1 + 1.96·√(2/M): the data's ZMS sits about
1.96 standard errors above 1, so the scale test's p is near α = 0.05 and its sequential rounds run
towards their cap (the typical set decides in its first round). Prints the seconds of the call,
the peak resident memory of the process (VmHWM, Linux; E and u included), each row's p and the
repeats its test used.

Run: ``python benchmarks/bench_worst_case.py [--m 1e7] [--seed 0]`` (M = 10⁷: minutes and ~2 GB).
The issue's target: 10⁷ rows in ≤ 5 min, ≤ 2 GB, on the 2-core machine.

Measured 2026-11-27 on the quiet 2-core VM (load average 0.3–2), one run each. T of ZMS is about
N(1.96, 1) on these sets, so a seed decides how far the rounds go:

- ``--seed 0``: 345.5 s, peak 1857 MiB; ZMS p = 0.0020 after 1024 bootstrap-t replicates, RCE's
  screen 2000, the permutation rows 64 each;
- ``--seed 1``: 186.1 s, peak 1858 MiB; every row decided in its first round (64).

After a row the shape screen flags stops its test at the first round (RCE is flagged on these
sets: β(E²) > 0.8; its verdict is ``unreliable`` whatever its p), same machine, quiet, one run:

- ``--seed 0``: **242.3 s**, peak 1856 MiB; again 262.1 s, 1982 MiB; ZMS p = 0.0020 after 1024
  replicates, RCE 64.
- ``--m 1e6 --seed 2`` (ZMS near α and CC's permutation test at its cap, 2000): 50.6 → 44.7 s.

On the 16-core lent machine (numba 0.68.0, 16 threads; same code, one run each): ``--seed 0``
**53.7 s**, but peak **6498 MiB** — each thread's task holds its own M-sized scratch (the
bootstrap's counts and CC's rank buffer, ~0.3 GB at 10⁷), so memory grows with the threads;
``--m 1e6 --seed 2`` 10.6 s, 983 MiB.

After the references and the bootstrap run on as many threads as their scratch fits
(``mcref.parallel.thread_memory``), same machine kind (16 cores, 128 GB; numba 0.68.0), one run
each: ``--seed 0`` 61.8 s, 6269 MiB unbounded (half of 125 GB available bounds nothing);
``MCREF_THREAD_MEMORY=1G --seed 0`` **172.5 s, 1858 MiB** (two threads for those two phases,
sixteen for the others), every p and verdict the same.

2026-11-28, after CC's jackknife pass got its joint counts by cache-sized buckets (6.3 → 3.4 s at
10⁷ on one thread) and a peak of 44 bytes a point (48), same 2-core VM, one run each, ``--seed
0``: 229.5 s, peak 2003 MiB (with an intermediate 52-byte version); **234.0 s, peak 1952 MiB**
(the final one). Same p and verdicts (ZMS p = 0.0020 after 1024 replicates).

2026-11-28 04:30 UTC, after CC's jackknife ran in steps on all threads (40 bytes a point) and
``map_chunks`` kept its threads, same VM, one run each, ``--seed 0``: first 237.8 s, peak
**2366 MiB** — a parked worker still held the last call it ran, so its closure's arrays (CC's
400 MB) outlived the phase; once it drops the call, **245.4 s, peak 1860 MiB**. Same p and
verdicts.

2026-11-28 12:15 UTC, on the VM's new CPU (AMD EPYC family 26, AVX-512), after ``serial_blas``,
one run, ``--seed 0``: **96.8 s, peak 1861 MiB**; ZMS p = 0.00195 after 1024 replicates, RCE
unreliable (shape screen), CC, ENCE and ZMSE valid after 64, joint invalid (p = 0.0039): the same
p and verdicts as above.

2026-11-28 14:50 UTC, same machine, after the resampling's upper splits drew by BTPE (a new
resampling stream) and the t fit's passes and the scale tests' short rounds became ``prange``
regions, one run, ``--seed 0``: **95.9 s, peak 1863 MiB**; ZMS p = 0.0039 after 1024 replicates
(the new stream's draw; 0.00195 before), RCE unreliable, CC, ENCE and ZMSE valid after 64, joint
invalid (p = 0.0078): the same verdicts.

2026-11-28 17:35 UTC, same machine (load average 1.0 → 1.7), after the counts' full leaves became
4096 points (another resampling stream) and the sorts by u and |E| NumPy's fast argsort, one run,
``--seed 0``: **79.6 s, peak 1863 MiB**; ZMS p = 0.0039 after 1024 replicates, RCE unreliable, CC,
ENCE and ZMSE valid after 64, joint invalid (p = 0.0078): the same verdicts.

A permutation row at the cap costs 2000 repeats of the permutation D: at 10⁷ about 0.22 s each
(docs/guide/performance.md), so a set whose CC sits at α would still take over 5 min.

2026-11-28 evening, after the bootstrap's scratch was kept per thread (freed when its run returns),
CC's replicates were drawn in a call of their own at M ≥ 5·10⁵ and the tie spread moved only the
straddling runs, same VM, one run, ``--seed 0``: **72.9 s, peak 1865 MiB** (79.6 s, 1863 MiB at
c23b9dd the same day); every verdict the same, ZMS p = 0.0039 after 1024 replicates.

2026-11-29 00:20 UTC, after CC's rank buffer took 5 bytes a point (CC's bootstrap kernel 1.40×
faster at 10⁷ on one thread), same VM (load average 1.1 → 1.6), one run, ``--seed 0``: **64.1 s,
peak 1867 MiB** (74.4 s, 1866 MiB the evening before); ZMS p = 0.0039 after 1024 replicates, RCE
unreliable, CC, ENCE and ZMSE valid after 64, joint invalid (p = 0.0078): the same verdicts.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

import mcref  # noqa: E402


def peak_mib() -> float:
    """VmHWM of this process in MiB (NaN where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return math.nan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=float, default=1e7)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    m = int(a.m)
    print(f"{machine()}; M = {m}; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    warnings.simplefilter("ignore")
    rng0 = np.random.default_rng(1)
    u0 = rng0.lognormal(0.0, 0.5, 2000)
    mcref.validate(u0 * rng0.standard_normal(2000), u0, seed=0, n_boot=200, n_mc=200, progress=False)  # compile
    rng = np.random.default_rng([m, a.seed])
    u = rng.lognormal(0.0, 0.5, m)
    E = math.sqrt(1.0 + 1.96 * math.sqrt(2.0 / m)) * u * rng.standard_normal(m)
    t0 = time.perf_counter()
    tab = mcref.validate(E, u, seed=a.seed, progress=False)
    seconds = time.perf_counter() - t0
    print(f"validate: {seconds:.1f} s, peak {peak_mib():.0f} MiB (the process, E and u included); "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    for r in tab.rows:
        print(f"  {r.name:6s} {r.verdict:10s} p = {r.p_test:.4g}  test {r.test}  repeats {r.n_test}")
    print(f"  joint: {tab.joint.verdict} (p = {tab.joint.p:.4g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
