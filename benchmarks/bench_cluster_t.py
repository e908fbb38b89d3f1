"""The clustered scale tests' t(ν̂) references, before/after their move onto the t ziggurat (issue 41):
seconds of the scale-test phase of ``mcref.validate(E, u, groups=g)``, this checkout against another.

The data: M rows in G clusters of equal size, u lognormal(0, 0.5), E = u·z with random-intercept
errors z = √ρ·η_g + √(1 − ρ)·t_i, t_i unit-variance t(6) (so that ν̂ is finite and the references
draw t rows; ρ = 0.3). ``validate`` runs with a fixed ``n_mc`` (no sequential rounds: the same
number of scale-test replicates, B = n_mc, on both sides). Each run is a fresh process with
``PYTHONPATH`` set to its checkout (and its own ``NUMBA_CACHE_DIR``), which first calls validate on a small clustered set (numba
compilation or cache load), then times the full call and, inside it, ``scale_tests`` (wrapped on
``mcref.verdict._validate``: both clustered references, ZMS's ``t_cluster_sums`` and RCE's
``t_rce_cluster_sums``, with their cluster bootstrap-t). The two checkouts run in turn, repeat
after repeat; medians are printed.

Run: ``python benchmarks/bench_cluster_t.py --before /path/to/main [--m 100000 --g 1000 --n-mc 1000
--repeats 3]``.

Measured (issue 41, ``--before /work/main``, defaults; the 2 shared CPUs at load average 3–4)::

    before scale-test phase    8.91 s   validate   42.92 s   (runs: 9.42, 6.62, 8.91 / 42.9, 31.9, 49.3)
    after  scale-test phase    2.86 s   validate   27.51 s   (runs: 2.89, 2.86, 2.24 / 27.5, 26.3, 36.3)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import mcref
import mcref.verdict._validate as V

m, g, n_mc = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
warnings.simplefilter("ignore")


def data(m, g, seed):
    rng = np.random.default_rng(seed)
    gid = np.repeat(np.arange(g), -(-m // g))[:m]
    u = rng.lognormal(0.0, 0.5, m)
    t = rng.standard_t(6.0, m) * np.sqrt(4.0 / 6.0)
    z = np.sqrt(0.3) * rng.standard_normal(g)[gid] + np.sqrt(0.7) * t
    return u * z, u, gid


E, u, gid = data(3000, 60, 1)
V.validate(E, u, groups=gid, n_mc=200, n_boot=200, seed=0, progress=False)  # compile or load the cache
acc = [0.0]
inner = V.scale_tests


def timed(*a, **k):
    t0 = time.perf_counter()
    try:
        return inner(*a, **k)
    finally:
        acc[0] += time.perf_counter() - t0


V.scale_tests = timed
E, u, gid = data(m, g, 2)
t0 = time.perf_counter()
res = V.validate(E, u, groups=gid, n_mc=n_mc, seed=1, progress=False)
total = time.perf_counter() - t0
print(json.dumps({"scale_s": acc[0], "total_s": total, "file": mcref.__file__}))
"""


def run(root: Path, side: str, m: int, g: int, n_mc: int) -> dict:
    # each side's numba cache in its own temporary folder: nothing is written into the checkouts
    cache = Path(tempfile.gettempdir()) / "mcref_bench_cluster_t" / side
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", CHILD, str(m), str(g), str(n_mc)], env=env, cwd=root,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="checkout with the normal-gamma references")
    ap.add_argument("--m", type=int, default=100_000)
    ap.add_argument("--g", type=int, default=1000)
    ap.add_argument("--n-mc", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sides = {"before": args.before.resolve(), "after": ROOT}
    res: dict[str, list[dict]] = {k: [] for k in sides}
    for _ in range(args.repeats):
        for k, root in sides.items():
            r = run(root, k, args.m, args.g, args.n_mc)
            assert str(root) in r["file"], (root, r["file"])
            res[k].append(r)
            print(f"  {k:6s} scale {r['scale_s']:7.2f} s   validate {r['total_s']:7.2f} s", flush=True)
    print(f"# M = {args.m}, G = {args.g}, n_mc = {args.n_mc}; medians of {args.repeats}; {os.cpu_count()} CPUs")
    for k in sides:
        sc = statistics.median(r["scale_s"] for r in res[k])
        tot = statistics.median(r["total_s"] for r in res[k])
        print(f"{k:6s} scale-test phase {sc:7.2f} s   validate {tot:7.2f} s   ({sides[k]})")


if __name__ == "__main__":
    main()
