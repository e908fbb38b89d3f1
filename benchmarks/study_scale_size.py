"""Size of the scale test of ZMS (bootstrap-t, t(ν̂) reference, and their intersection) on
calibrated sets: the rate of p ≤ 0.05 over ``--sets`` sets of M unit-variance errors.

Used to check that a change of the scale test's random streams (issue 33: the bootstrap-t drawn
leaf by leaf, the t(ν̂) reference from the t ziggurat, 8 replicates per stream) leaves its size
where it was: run it on two checkouts with the same arguments and compare, e.g.::

    git worktree add /tmp/old 01ca2bd
    PYTHONPATH=/tmp/old python benchmarks/study_scale_size.py --eps t4 --m 500 --sets 600
    python benchmarks/study_scale_size.py --eps t4 --m 500 --sets 600

The sets are the same in both (``default_rng([7, i])``), the test's seeds too; only the streams
differ. Measured (2026-11-27, old / new, B = 999; binomial sd of a 5 % rate on 600 sets: 0.9
points): t(4), M = 500, 600 sets: boot 7.2 / 7.2 %, t 8.2 / 8.2 %, test 5.2 / 5.2 %;
t(4), M = 2000, 400 sets: 7.0 / 6.8, 6.5 / 6.0, 4.8 / 4.5 %; t(6), M = 500, 600 sets:
6.0 / 5.2, 6.0 / 6.7, 4.7 / 4.3 %.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from mcref.verdict._scale_test import scale_test

EPS = {"normal": lambda rng, m: rng.standard_normal(m),
       "t4": lambda rng, m: rng.standard_t(4, m) / np.sqrt(2.0),
       "t6": lambda rng, m: rng.standard_t(6, m) / np.sqrt(1.5)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eps", choices=sorted(EPS), default="t4")
    ap.add_argument("--m", type=int, default=500)
    ap.add_argument("--sets", type=int, default=600)
    ap.add_argument("--n-boot", type=int, default=999)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    rej = np.zeros(3)
    for i in range(a.sets):
        z = EPS[a.eps](np.random.default_rng([7, i]), a.m)
        r = scale_test(z, n_boot=a.n_boot, seed=np.random.SeedSequence([11, i]))
        rej += [r.p_boot["ZMS"] <= 0.05, r.p_t["ZMS"] <= 0.05, r.p["ZMS"] <= 0.05]
    se = 100 * np.sqrt(0.05 * 0.95 / a.sets)
    print(f"{a.eps}, M = {a.m}, {a.sets} sets, B = {a.n_boot}: rejection at 0.05 (%, sd {se:.1f}): "
          f"bootstrap-t {100 * rej[0] / a.sets:.1f}, t(nu) {100 * rej[1] / a.sets:.1f}, "
          f"test (max) {100 * rej[2] / a.sets:.1f}")


if __name__ == "__main__":
    main()
