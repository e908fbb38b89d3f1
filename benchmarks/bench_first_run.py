"""How long a new user waits: ``mcref demo`` timed in fresh processes, on a cold numba cache (a
new, empty ``NUMBA_CACHE_DIR``: every kernel the demo calls compiles first) and on a warm one
(the same directory again: the kernels load from disk). Prints every time and the medians.
The README's figures for the demo come from this script (issue 40).

Run: ``python benchmarks/bench_first_run.py [--cold N] [--warm N] [--tests] [-- DEMO OPTIONS]``
(default: 1 cold run, 3 warm runs of ``mcref demo --no-progress --seed 0``, with its own
defaults: B = 5000, sequential Monte Carlo tests). ``--tests`` times the test suite instead
(``python -m pytest -q -p no:cacheprovider``, cold then warm): many minutes.

Each run is ``python -m mcref ...`` in a new process with this checkout first on
``PYTHONPATH``, in a temporary working directory; a cold run gets its own empty cache
directory, the warm runs reuse the last cold run's. The machine's other load counts: run it
on a quiet machine and say which.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402


def timed(cmd: list[str], cache: str, cwd: str) -> float:
    """Wall seconds of ``cmd`` in a fresh process whose numba cache is ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("MCREF_NUMBA_CACHE", None)  # the default: the on-disk cache on
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-3000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cold", type=int, default=1, help="cold runs, each on a new empty cache (default 1)")
    ap.add_argument("--warm", type=int, default=3, help="warm runs on the last cold run's cache (default 3)")
    ap.add_argument("--tests", action="store_true", help="time the test suite instead of the demo")
    ap.add_argument("rest", nargs="*", help="options for mcref demo (after --)")
    a = ap.parse_args(argv)
    if a.cold < 1 or a.warm < 0:
        ap.error("--cold must be >= 1 and --warm >= 0")
    if a.tests:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests"), str(ROOT / "mcref")]
        what = "python -m pytest (the default run)"
    else:
        cmd = [sys.executable, "-m", "mcref", "demo", "--no-progress", "--seed", "0", *a.rest]
        what = "mcref " + " ".join(cmd[3:])
    print(f"{what}; {machine()}; load average {os.getloadavg()[0]:.2f} at the start")
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="mcref-first-run-") as tmp:
        for i in range(a.cold):
            cache = os.path.join(tmp, f"cache-{i}")
            os.makedirs(cache)
            cold.append(timed(cmd, cache, tmp))
            print(f"cold run {i + 1}: {cold[-1]:.1f} s", flush=True)
        for i in range(a.warm):
            warm.append(timed(cmd, cache, tmp))
            print(f"warm run {i + 1}: {warm[-1]:.1f} s", flush=True)
    print(f"median cold: {statistics.median(cold):.1f} s ({len(cold)} run(s))")
    if warm:
        print(f"median warm: {statistics.median(warm):.1f} s ({len(warm)} run(s))")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
