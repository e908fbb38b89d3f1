"""In-kernel variates (:mod:`mcref.kernels.variates`) vs NumPy's Generator, side by side:
ns per variate for filling a buffer of 131 072 float64 values, one core.

  * NumPy: ``Generator.standard_normal(out=buf)``, ``Generator.standard_gamma(a, out=buf)``
    (PCG64, ziggurat normals, Marsaglia–Tsang gamma);
  * mcref: ``fill_normal(s, buf)``, ``fill_gamma(s, a, buf)`` on one xoshiro256** chunk
    state, after a warm-up call (compilation or cache load);
  * mcref, in a user kernel: an ``@njit`` loop calling ``next_normal(s)`` /
    ``next_gamma(s, a)`` once per value (the functions are inlined into the loop).

Second table, unit-variance Student t(ν) drawn one value at a time in a kernel, as the cluster
t(ν̂) references of :mod:`mcref.kernels.units` draw them: the normal–gamma formula they used
before (``next_normal(s)·√((ν − 2)/(2·next_gamma(s, ν/2)))``) against the t ziggurat's per-draw
``t_fast`` (the sampler of ``fill_t``, whose time is the last column), and NumPy's
``standard_t(ν)`` for scale.

Each repeat times every contender once, in turn, so that load on the machine hits all of
them alike; the median over the repeats is printed with NumPy's time / mcref's time.

Run: ``python benchmarks/bench_variates.py [--repeats 15] [--n 131072]``.
Target: ratio >= 2.5 for the normal and for Gamma(a), a in {3, 4, 6, 12, 24}; t_fast at
least 3x faster than the normal–gamma formula.

Measured (issue 41, ``--repeats 9``, the 2 shared CPUs at load average 3; ns per value)::

    t(nu), unit var   numpy ns N*gamma ns t_fast ns  ratio fill_t ns
    t(3)                 42.83      18.69      3.55  5.27x      3.73
    t(5)                 49.24      24.02      4.58  5.24x      4.70
    t(10)                46.86      25.66      4.47  5.74x      4.02
    t(30)                45.01      21.16      3.43  6.18x      3.73
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
from mcref.kernels.rng import chunk_states, load_state, store_state  # noqa: E402
from mcref.kernels.variates import (fill_gamma, fill_normal, fill_t, next_gamma, next_normal, t_fast,  # noqa: E402
                                    t_ziggurat)

SHAPES = (3.0, 4.0, 6.0, 12.0, 24.0)
T_NUS = (3.0, 5.0, 10.0, 30.0)


@njit(**NJIT)
def loop_normal(s, out):
    for k in range(out.shape[0]):
        out[k] = next_normal(s)


@njit(**NJIT)
def loop_gamma(s, a, out):
    for k in range(out.shape[0]):
        out[k] = next_gamma(s, a)


@njit(**NJIT)
def loop_t_gamma(s, nu, out):
    """The cluster references' per-value t before: N(0, 1)·√((ν − 2)/(2·Gamma(ν/2)))."""
    for k in range(out.shape[0]):
        out[k] = next_normal(s) * np.sqrt((nu - 2.0) / (2.0 * next_gamma(s, 0.5 * nu)))


@njit(**NJIT)
def loop_t_fast(s, W, K, FL, FD, r, nu, out):
    """The per-value t now: the t ziggurat's ``t_fast`` on the state tuple, scaled to unit variance."""
    c = np.sqrt((nu - 2.0) / nu)
    st = load_state(s)
    for k in range(out.shape[0]):
        x, st = t_fast(st, W, K, FL, FD, r, nu)
        out[k] = x * c
    store_state(s, st)


def t_table(s, rng, buf, repeats: int) -> None:
    n = buf.size
    print(f"{'t(nu), unit var':16s} {'numpy ns':>9s} {'N*gamma ns':>10s} {'t_fast ns':>9s} {'ratio':>6s} "
          f"{'fill_t ns':>9s}")
    for nu in T_NUS:
        tab = t_ziggurat(nu)
        loop_t_gamma(s, nu, buf)
        loop_t_fast(s, *tab, buf)
        fill_t(s, *tab, buf)
        med = interleaved_medians({"np": lambda: rng.standard_t(nu, size=n), "old": lambda: loop_t_gamma(s, nu, buf),
                                   "new": lambda: loop_t_fast(s, *tab, buf), "fill": lambda: fill_t(s, *tab, buf)},
                                  repeats)
        ns = {k: 1e9 * v / n for k, v in med.items()}
        print(f"{f't({nu:g})':16s} {ns['np']:9.2f} {ns['old']:10.2f} {ns['new']:9.2f} {ns['old'] / ns['new']:5.2f}x "
              f"{ns['fill']:9.2f}", flush=True)


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
    print()
    t_table(s, rng, buf, args.repeats)


if __name__ == "__main__":
    main()
