"""How long a new user waits: ``mcref demo`` timed in fresh processes, on a cold numba cache (a
new, empty ``NUMBA_CACHE_DIR``: every kernel the demo calls compiles first) and on a warm one
(the same directory again: the kernels load from disk). Prints every time and the medians.
The README's figures for the demo come from this script (issue 40).

Run: ``python benchmarks/bench_first_run.py [--cold N] [--warm N] [--what W ...] [-- DEMO OPTIONS]``
(default: 1 cold run, 3 warm runs of each of ``--what demo validate groups``):

- ``demo``: ``mcref demo --no-progress --seed 0``, with its own defaults (B = 5000,
  sequential Monte Carlo tests, the nine built-in sets on every core);
- ``validate``: a first ``mcref.validate(E, u)`` on 2000 synthetic rows (B = N_MC = 1000);
- ``groups``: the same with ``groups=`` (250 groups of 6 and 11 rows: the unit bootstrap, the
  unit permutations with their exchange of u-levels and the clustered scale tests compile
  besides; until 2026-11-28 200 groups of 10 rows, which do not exchange u-levels);
- ``precompiled``: ``mcref.precompile()`` (the kernel groups compiled side by side in worker
  processes on a cold cache, :mod:`mcref.warmup`), then the same first ``validate``;
  ``groups-precompiled``: ``mcref.precompile(dependent=True)`` (the groups of dependent rows
  too), then the first ``validate`` with ``groups=``;
- ``cli``: ``mcref validate --dataset Diffusion_RF --seed 0`` (the command line precompiles on a
  cold cache); ``cli-plain`` and ``demo-plain``: the same and ``mcref demo`` with
  ``MCREF_PRECOMPILE=0`` (compiled in the one process, as before), for before/after side by side;
- ``tests``: the test suite (``python -m pytest -q -p no:cacheprovider``): many minutes.

Measured 2026-11-27 on the quiet 2-core VM (load average 0.7–1.2), ``--what demo demo-plain cli
cli-plain precompiled validate --warm 1``, one run each::

    | what | cold (median s) | warm (median s) |
    |---|---|---|
    | mcref demo --no-progress --seed 0 | 53.7 | 19.7 |
    | MCREF_PRECOMPILE=0 mcref demo --no-progress --seed 0 | 81.5 | 21.1 |
    | mcref validate --dataset Diffusion_RF --seed 0 | 38.9 | 4.1 |
    | MCREF_PRECOMPILE=0 mcref validate --dataset Diffusion_RF --seed 0 | 64.1 | 3.9 |
    | mcref.precompile(), then a first validate(E, u), M = 2000 | 36.9 | 3.5 |
    | first validate(E, u), M = 2000 | 58.9 | 2.3 |

(precompile: 32.7 s for the two groups side by side; the validate after it compiled 0
signatures.)

After ``mcref demo`` simulates the permutation D alone (the verdicts it prints are bit for bit those
of the four default D) on threads of its process, same VM (load average 1.35–1.48), ``--what
demo-plain demo --warm 1``, one run each::

    | what | cold (median s) | warm (median s) |
    |---|---|---|
    | MCREF_PRECOMPILE=0 mcref demo --no-progress --seed 0 | 71.7 | 7.5 |
    | mcref demo --no-progress --seed 0 | 45.5 | 7.5 |

(of the cold 45.5 s, 35 s is the precompile; after it the demo compiles 0 signatures). On the
16-core lent machine (numba 0.68.0; a new ``NUMBA_CACHE_DIR``, ``mcref demo --seed 1
--no-progress`` timed by the shell, one run cold, two warm): cold 34.3 s, warm 5.5 and 5.7 s.

With the groups of dependent rows compiled in the workers too (``mcref.precompile(dependent=True)``,
which ``mcref validate --groups/--order`` and ``report --html`` now call), 2026-11-28 on the same VM
(load average 1.1–1.4), ``--what groups groups-precompiled --warm 1``, one run each::

    | what | cold (median s) | warm (median s) |
    |---|---|---|
    | first validate(E, u, groups=...), M = 2000 | 72.9 | 2.9 |
    | mcref.precompile(dependent=True), then a first validate(E, u, groups=...), M = 2000 | 47.5 | 3.3 |

(precompile 42.9 s, the validate after it compiled 0 signatures.) Before, ``mcref.precompile()``
then the same first validate took 54.8 s: 33.2 s for the two groups, then 19.9 s compiling the
unit bootstrap and jackknife, the u-level exchange and the clustered scale tests in the one
process (47.0 s with ``dependent=True`` in the same script; ``boot_units_kernel`` 7.9 s,
``mc_levels_kernel`` 5.4 s, ``jack_units_kernel`` 3.2 s, the two clustered t sums 2.5 s).

2026-11-28, after the kernels were cut into four groups (two families on two workers, as before),
same VM (load average 1.0–1.7), ``--what demo --warm 2``: cold **43.3 s**, warm 9.5 and 9.1 s;
a second cold run by hand (its own ``NUMBA_CACHE_DIR``) 46.5 s, warm 8.0–8.6 s; warm with the
in-tree cache 7.0–7.5 s (6.4–6.5 s of it inside the process: the rest is the start of Python,
numba and the cache index).

2026-11-28 04:00 UTC, after CC's jackknife became nine kernels over blocks (its group compiles in
9.8–10.5 s alone, 11.5 s before) and ``map_chunks`` kept its threads, same VM (load average 1.3),
``--what demo --warm 2``: cold **43.6 s**, warm 7.4 and 6.5 s (median 7.0 s).

2026-11-28 08:30–09:15 UTC, after every option set got ``no_cfunc_wrapper=True`` and six thin
layers were inlined at numba IR level (docs/methods.md, "Numba options and caching"), this script
of the previous commit and of this one run one after the other, same VM (load average 1.0–1.8),
one cold and one warm run each::

    | what | before cold / warm (s) | after cold / warm (s) |
    |---|---|---|
    | mcref demo --no-progress --seed 0 (two pairs) | 46.6 / 7.3, 44.2 / 8.0 | 42.7 / 6.9, 45.8 / 6.7 |
    | first validate(E, u), M = 2000 | 67.6 / 3.6 | 54.7 / 3.0 |
    | first validate(E, u, groups=...), M = 2000 | 71.8 / 3.6 | 71.0 / 3.5 |

The demo waits for the slower of its two compile workers, so its cold time moved within the
noise; a first ``validate`` in one process compiled 19 % less.

2026-11-28 12:45 UTC, on the 2-core VM's new CPU (AMD EPYC family 26, AVX-512; about 2.5× faster
compiles than the AVX2 machine above), load average 1.0–1.5, ``--what demo validate groups
--cold 2 --warm 2``, twice (four cold runs, each on its own empty cache)::

    | what | cold (s) | warm (s) |
    |---|---|---|
    | mcref demo --no-progress --seed 0 | 16.1, 16.0, 14.8 (median 15.4; 14.3 earlier that hour) | 3.1–3.4 |
    | first validate(E, u), M = 2000 | 24.4, 23.3 (24.7 in the first pair) | 1.3–1.4 |
    | first validate(E, u, groups=...), M = 2000 | 24.2, 23.5 (24.8) | 1.2–1.4 |

Issue 41's targets, cold demo ≤ 25 s and warm ≤ 10 s, hold on this machine; they did not on the
one before (34–37 s cold).

Each cold run also prints what compiled (numba's compile events, in that process: not the
demo's worker processes): how many functions and signatures, and the top-level kernels by
compile time, so that a kernel that compiles twice or one the call does not need shows.

Each run is ``python -m mcref ...`` in a new process with this checkout first on
``PYTHONPATH``, in a temporary working directory; a cold run gets its own empty cache
directory, the warm runs reuse the last cold run's. The machine's other load counts: run it
on a quiet machine and say which.
"""

from __future__ import annotations

import argparse
import math
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


#: a first validate in a fresh process; argv[1]: "groups" or not; prints its compile events
VALIDATE = r"""
import sys, time, threading, warnings
from numba.core import event
events, depth = [], threading.local()
class Compiles(event.Listener):
    def on_start(self, e):
        d = getattr(depth, "v", 0); depth.v = d + 1; e.data["_t"] = (time.perf_counter(), d)
    def on_end(self, e):
        depth.v -= 1; t0, d = e.data["_t"]; f = getattr(e.data["dispatcher"], "py_func", None)
        events.append((time.perf_counter() - t0, d, getattr(f, "__qualname__", "?"), str(e.data["args"])))
event.register("numba:compile", Compiles())
import numpy as np
import mcref
rng = np.random.default_rng(0)
u = rng.lognormal(-1.0, 0.4, 2000)
E = u * rng.normal(size=2000)
# groups of unequal sizes (150 of 6 rows, 100 of 11): the permutation by units exchanges their u-levels
groups = rng.permutation(np.repeat(np.arange(250), np.r_[np.full(150, 6), np.full(100, 11)]))
kw = {"groups": groups} if sys.argv[1].startswith("groups") else {}
if sys.argv[1].endswith("precompiled"):
    print(f"precompile: {mcref.precompile(dependent=bool(kw))} s", file=sys.stderr)
warnings.simplefilter("ignore")
mcref.validate(E, u, seed=1, n_boot=1000, n_mc=1000, **kw)
top = sorted((e for e in events if e[1] == 0), reverse=True)
names = {e[2] for e in events}
print(f"compiled: {len(events)} signatures of {len(names)} functions; top-level kernels "
      f"{sum(e[0] for e in top):.1f} s:", file=sys.stderr)
twice = {n for n in names if sum(e[2] == n for e in events) > 1}
for t, _, n, _ in top[:8]:
    print(f"  {t:6.1f} s  {n}", file=sys.stderr)
if twice:
    print("  compiled for several signatures: " + ", ".join(sorted(twice)), file=sys.stderr)
"""


#: the floor of issue 63's goal: NumPy drawing 10⁹ standard normals (in blocks of 10⁷) in a fresh process
FLOOR = r"""
import time, numpy as np
t0 = time.perf_counter()
rng = np.random.default_rng(0)
for _ in range(100):
    rng.standard_normal(10_000_000)
print(f"{time.perf_counter() - t0:.2f}")
"""

#: where a cold first run's seconds go, in one fresh process on a cold cache: the imports, then each
#: kernel group of validate compiled alone, one after the other (groups share callees: a later group
#: compiles less than it would alone)
BREAKDOWN = r"""
import time
t0 = time.perf_counter()
import numpy, scipy.stats, numba, pandas, joblib
t1 = time.perf_counter()
import mcref
from mcref import warmup
t2 = time.perf_counter()
print(f"imports of numpy, scipy, numba, pandas, joblib\t{t1 - t0:.2f}")
print(f"import mcref\t{t2 - t1:.2f}")
for g in warmup.GROUPS:
    print(f"compile group {g!r} (after the groups above, one process)\t{warmup.compile_group(g):.2f}")
"""

#: the kernel groups compiled side by side as the demo does on a cold cache (mcref.precompile's wall)
PRECOMPILE = r"""
import time
t0 = time.perf_counter()
import mcref
t1 = time.perf_counter()
s = mcref.precompile()
print(f"{t1 - t0:.2f}\t{s if s is not None else float('nan'):.2f}")
"""


def in_fresh_process(script: str, cache: str, cwd: str) -> str:
    """stdout of ``python -c script`` in a fresh process on the numba cache ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("MCREF_NUMBA_CACHE", None)
    env.pop("MCREF_PRECOMPILE", None)
    r = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"a timing script exited {r.returncode}:\n{r.stderr[-3000:]}")
    return r.stdout


def floor_seconds(tmp: str, runs: int = 3) -> float:
    """The median wall of :data:`FLOOR` (10⁹ normals by NumPy) over ``runs`` fresh processes."""
    return statistics.median(float(in_fresh_process(FLOOR, os.path.join(tmp, "floor-cache"), tmp))
                             for _ in range(runs))


def breakdown(tmp: str, cold_demo: float | None, warm_demo: float | None) -> None:
    """Print where a cold ``mcref demo`` spends its seconds: imports, the kernel groups compiled
    alone (one process) and side by side (``mcref.precompile``, as the demo does), and the demo's
    own work (its warm run)."""
    os.makedirs(os.path.join(tmp, "bd-serial"), exist_ok=True)
    os.makedirs(os.path.join(tmp, "bd-side"), exist_ok=True)
    rows = [line.split("\t") for line in in_fresh_process(BREAKDOWN, os.path.join(tmp, "bd-serial"), tmp).splitlines()
            if "\t" in line]
    imp, side = in_fresh_process(PRECOMPILE, os.path.join(tmp, "bd-side"), tmp).strip().split("\t")
    print("\nwhere a cold first run's seconds go (fresh processes, each on its own empty cache)\n"
          "| part | s |\n|---|---|")
    for name, s in rows:
        print(f"| {name} | {float(s):.1f} |")
    print(f"| python start and import mcref, cold cache (the precompile process) | {float(imp):.1f} |")
    print(f"| the groups side by side (mcref.precompile, as mcref demo on a cold cache) | {float(side):.1f} |")
    if warm_demo is not None:
        print(f"| the demo's own work and start (its warm run) | {warm_demo:.1f} |")
    if cold_demo is not None and warm_demo is not None:
        print(f"| rest: cold demo − warm demo − side by side | {cold_demo - warm_demo - float(side):.1f} |")


def timed(cmd: list[str], cache: str, cwd: str, show: bool = False, plain: bool = False) -> float:
    """Wall seconds of ``cmd`` in a fresh process whose numba cache is ``cache`` (``show``: print
    what the process wrote to stderr; ``plain``: with ``MCREF_PRECOMPILE=0``)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("MCREF_NUMBA_CACHE", None)  # the default: the on-disk cache on
    env.pop("MCREF_PRECOMPILE", None)
    if plain:
        env["MCREF_PRECOMPILE"] = "0"
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-3000:]}")
    if show and r.stderr.strip():
        print(r.stderr.rstrip())
    return seconds


def command(what: str, rest: list[str]) -> list[str]:
    """The command line of one case of ``--what``."""
    if what == "tests":
        return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests"), str(ROOT / "mcref")]
    if what in ("demo", "demo-plain"):
        return [sys.executable, "-m", "mcref", "demo", "--no-progress", "--seed", "0", *rest]
    if what in ("cli", "cli-plain"):
        return [sys.executable, "-m", "mcref", "validate", "--dataset", "Diffusion_RF", "--seed", "0"]
    return [sys.executable, "-c", VALIDATE, what]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cold", type=int, default=1, help="cold runs, each on a new empty cache (default 1)")
    ap.add_argument("--warm", type=int, default=3, help="warm runs on the last cold run's cache (default 3)")
    ap.add_argument("--what", nargs="+", default=["demo", "validate", "groups"],
                    choices=["demo", "demo-plain", "validate", "groups", "precompiled", "groups-precompiled", "cli",
                             "cli-plain", "tests"],
                    help="what to time (default: demo validate groups)")
    ap.add_argument("--tests", action="store_true", help="time the test suite only (as --what tests)")
    ap.add_argument("--no-floor", dest="floor", action="store_false",
                    help="do not time the floor (NumPy drawing 10^9 normals, median of 3 fresh processes)")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print where a cold demo's seconds go (imports, each kernel group, the pool)")
    ap.add_argument("rest", nargs="*", help="options for mcref demo (after --)")
    a = ap.parse_args(argv)
    if a.cold < 1 or a.warm < 0:
        ap.error("--cold must be >= 1 and --warm >= 0")
    whats = ["tests"] if a.tests else a.what
    print(f"{machine()}; load average {os.getloadavg()[0]:.2f} at the start")
    summary = []
    with tempfile.TemporaryDirectory(prefix="mcref-first-run-") as tmp:
        for what in whats:
            cmd = command(what, a.rest)
            label = {"demo": "mcref " + " ".join(cmd[3:]),
                     "demo-plain": "MCREF_PRECOMPILE=0 mcref " + " ".join(cmd[3:]),
                     "validate": "first validate(E, u), M = 2000",
                     "groups": "first validate(E, u, groups=...), M = 2000",
                     "precompiled": "mcref.precompile(), then a first validate(E, u), M = 2000",
                     "groups-precompiled": "mcref.precompile(dependent=True), then a first validate(E, u, "
                                           "groups=...), M = 2000",
                     "cli": "mcref " + " ".join(cmd[3:]), "cli-plain": "MCREF_PRECOMPILE=0 mcref " + " ".join(cmd[3:]),
                     "tests": "python -m pytest (the default run)"}[what]
            print(f"\n{label}")
            cold, warm = [], []
            for i in range(a.cold):
                cache = os.path.join(tmp, f"cache-{what}-{i}")
                os.makedirs(cache)
                cold.append(timed(cmd, cache, tmp, show=what in ("validate", "groups", "precompiled", "groups-precompiled"),
                                  plain=what.endswith("-plain")))
                print(f"cold run {i + 1}: {cold[-1]:.1f} s", flush=True)
            for i in range(a.warm):
                warm.append(timed(cmd, cache, tmp, plain=what.endswith("-plain")))
                print(f"warm run {i + 1}: {warm[-1]:.1f} s", flush=True)
            summary.append((label, statistics.median(cold), statistics.median(warm) if warm else math.nan))
        floor = floor_seconds(tmp) if a.floor else math.nan
        if a.breakdown:
            demo = next(((c, w) for (lab, c, w), what in zip(summary, whats) if what == "demo"), (None, None))
            breakdown(tmp, *demo)
    if a.floor:
        print(f"\nfloor: NumPy draws 10^9 standard normals in {floor:.1f} s (median of 3 fresh processes)")
    print("\n| what | cold (median s) | warm (median s) | cold / floor | warm / floor |\n|---|---|---|---|---|")
    for label, c, w in summary:
        print(f"| {label} | {c:.1f} | {w:.1f} | {c / floor:.2f} | {w / floor:.2f} |")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
