"""In-kernel variates (:mod:`mcref.kernels.variates`) vs NumPy's Generator, side by side:
ns per variate for filling a buffer of 131 072 float64 values, one core.

  * NumPy: ``Generator.standard_normal(out=buf)``, ``Generator.standard_gamma(a, out=buf)``
    (PCG64, ziggurat normals, Marsaglia–Tsang gamma);
  * mcref: ``fill_normal(s, buf)``, ``fill_gamma(s, a, buf)`` on one xoshiro256** chunk
    state, after a warm-up call (compilation or cache load);
  * mcref, in a user kernel: an ``@njit`` loop calling ``next_normal(s)`` /
    ``next_gamma(s, a)`` once per value (the functions are inlined into the loop).

Each repeat times every contender once, in turn, so that load on the machine hits all of
them alike; the median over the repeats is printed with NumPy's time / mcref's time.

Run: ``python benchmarks/bench_variates.py [--repeats 15] [--n 131072]``.
Target: ratio >= 2.5 for the normal and for Gamma(a), a in {3, 4, 6, 12, 24}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved_medians, machine  # noqa: E402

from mcref.kernels._config import NJIT  # noqa: E402
from mcref.kernels.rng import chunk_states  # noqa: E402
from mcref.kernels.variates import fill_gamma, fill_normal, next_gamma, next_normal  # noqa: E402

SHAPES = (3.0, 4.0, 6.0, 12.0, 24.0)


@njit(**NJIT)
def loop_normal(s, out):
    for k in range(out.shape[0]):
        out[k] = next_normal(s)


@njit(**NJIT)
def loop_gamma(s, a, out):
    for k in range(out.shape[0]):
        out[k] = next_gamma(s, a)




def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--n", type=int, default=131072)
    args = ap.parse_args()
    if args.repeats < 7:
        ap.error("--repeats must be >= 7")
    n = args.n
    buf = np.empty(n)
    rng = np.random.default_rng(12345)
    s = chunk_states(np.random.SeedSequence(12345), 1)[0]
    # warm-up: compile (or load from the cache) every kernel once
    fill_normal(s, buf)
    loop_normal(s, buf)
    fill_gamma(s, 4.0, buf)
    loop_gamma(s, 4.0, buf)

    print(f"# {n} float64 values per call; median of {args.repeats} interleaved repeats; {machine()}")
    print(f"{'variate':14s} {'numpy ns':>9s} {'fill ns':>8s} {'ratio':>6s} {'next ns':>8s} {'ratio':>6s}")
    cases = [("N(0,1)", lambda: rng.standard_normal(out=buf), lambda: fill_normal(s, buf),
              lambda: loop_normal(s, buf))]
    for a in SHAPES:
        cases.append((f"Gamma({a:g})",
                      lambda a=a: rng.standard_gamma(a, out=buf),
                      lambda a=a: fill_gamma(s, a, buf),
                      lambda a=a: loop_gamma(s, a, buf)))
    for name, f_np, f_fill, f_next in cases:
        med = interleaved_medians({"np": f_np, "fill": f_fill, "next": f_next}, args.repeats)
        ns = {k: 1e9 * v / n for k, v in med.items()}
        print(f"{name:14s} {ns['np']:9.2f} {ns['fill']:8.2f} {ns['np'] / ns['fill']:5.2f}x "
              f"{ns['next']:8.2f} {ns['np'] / ns['next']:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
