"""Issue 26: the rank kernel ``spearman_bucketed`` split into named inlined steps, timed side by
side with the kernel before the split (read from git history, commit 8ebc6fb's parent) in one
process, interleaved, medians of 61 calls; results checked bit-identical.

Run from a git checkout: ``python benchmarks/bench_rank_split.py``. Measured 2026-11-25 on the
2-core machine, five runs (the ratio new/old per run; the spread between runs is the machine's):
M = 10⁶ without ties 0.86, 0.91, 0.95, 0.98, 1.09 (median 0.95); with ties 0.97, 1.00, 1.02,
1.02, 1.02 (1.00); M = 5·10⁵ 1.00, 1.04, 1.07, 1.10, 1.22 (1.07): no loss at 10⁶, a possible
few per cent at 5·10⁵, inside the run-to-run spread.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

import mcref.kernels.fastrank as NEW

BEFORE = "8ebc6fb~1"


def old_module():
    root = Path(__file__).resolve().parents[1]
    src = subprocess.run(["git", "-C", str(root), "show", f"{BEFORE}:mcref/kernels/fastrank.py"],
                         capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "fastrank_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("mcref.kernels.fastrank_before", path)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "mcref.kernels"  # its relative imports (_config) resolve in today's package
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    OLD = old_module()
    print(f"{'M':>9} {'ties':>5} {'identical':>9} {'old ns/elem':>12} {'new ns/elem':>12} {'new/old':>8}")
    for m, tie in [(1_000_000, False), (1_000_000, True), (500_000, False)]:
        rng = np.random.default_rng(0)
        a = np.abs(rng.standard_normal(m))
        a = np.round(a, 2) if tie else a
        u = rng.uniform(size=m)
        xu = rankdata(u) - 0.5 * (m + 1)
        sxx = float(xu @ xu)
        s_old, s_new = OLD.make_rank_scratch(m), NEW.make_rank_scratch(m)
        same = OLD.spearman_bucketed(a, xu, sxx, s_old) == NEW.spearman_bucketed(a, xu, sxx, s_new)
        t = {"old": [], "new": []}
        for _ in range(61):
            for k, f, s in (("old", OLD.spearman_bucketed, s_old), ("new", NEW.spearman_bucketed, s_new)):
                t0 = time.perf_counter()
                f(a, xu, sxx, s)
                t[k].append(time.perf_counter() - t0)
        o, n = np.median(t["old"]) / m * 1e9, np.median(t["new"]) / m * 1e9
        print(f"{m:>9} {str(tie):>5} {str(same):>9} {o:>12.2f} {n:>12.2f} {n / o:>8.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
