"""Cost of ``mcref.validate(E, u)`` with its defaults against M, beside the NumPy floor.

Times, at each M, medians of repeats interleaved across the rows (``_common.interleaved_medians``):

* ``validate``: ``mcref.validate(E, u)`` with the defaults (ZMS, RCE, CC, ENCE, ZMSE;
  B = 5000 bootstrap replicates with BCa intervals; N_MC = ``mcref.default_n_mc(M)``
  references (10 000 up to M = 20 000, 2000 from M = 100 000 on) under normal, t(6), the
  empirical and the permutation D, plus the conditional rule's scale test under the fitted t;
  shape screen, tie spread, joint verdict);
* ``stats``: what ``mcref stats`` runs, ``bootstrap_many`` of the same 5 statistics, B = 5000, BCa;
* ``references``: ``simulate`` of the 5 statistics under validate's 4 D, the same N_MC;
* the floor: one NumPy thread drawing ``standard_normal(M)``, in ns per element, and what
  drawing the references' N_MC·4·M normals would cost on all threads at that rate
  ("floor-equivalent" seconds).

Prints N_MC, seconds, ns per element·replicate·thread (validate: per element of the B + 4·N_MC
replicates; stats: of the B replicates (all 5 statistics); the references: of the 4·N_MC
repeats) and the ratios to the floor. The
ratios are what transfers to another machine; the seconds are this machine's.

Run: ``python benchmarks/bench_validate.py [--ms 1e3,1e4,1e5] [--repeats 3] [--n-mc N]`` (default:
validate's own ``default_n_mc(M)``; ``--n-mc 10000`` for the papers' setting at every M)
(the repeats drop to 1 from M = 10⁵ on unless ``--repeats-large`` says otherwise).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved_medians, machine  # noqa: E402

import mcref  # noqa: E402
from mcref._bootstrap import bootstrap_many  # noqa: E402
from mcref._validate import DEFAULT_STATS, VALIDATE_DISTS  # noqa: E402

N_BOOT = 5000


def floor_ns(m: int, target_s: float = 0.3) -> float:
    """ns per element of one-thread ``Generator.standard_normal(m)`` (median of 5 runs of ≈ target_s)."""
    gen = np.random.default_rng(0)
    reps = max(1, int(target_s / (m * 15e-9)))
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            gen.standard_normal(m)
        ts.append((time.perf_counter() - t0) / reps)
    return statistics.median(ts) / m * 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", default="1e3,1e4,1e5")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--repeats-large", type=int, default=1, help="repeats from M = 1e5 on")
    ap.add_argument("--n-mc", type=int, default=None, help="default: mcref.default_n_mc(M), as validate")
    args = ap.parse_args()
    import numba

    threads = numba.get_num_threads()
    warnings.simplefilter("ignore")
    ms = [int(float(x)) for x in args.ms.split(",")]
    n_d = len(VALIDATE_DISTS)
    rng0 = np.random.default_rng(0)
    u0 = rng0.lognormal(0.0, 0.5, 2000)
    mcref.validate(u0 * rng0.standard_normal(2000), u0, n_boot=200, n_mc=200, seed=0, progress=False)  # compile
    print(f"# mcref from {Path(mcref.__file__).parent}; {machine()}; B = {N_BOOT}, N_MC = {args.n_mc or 'default_n_mc(M)'}, "
          f"{n_d} D, {len(DEFAULT_STATS)} statistics")
    head = (f"{'M':>8s} {'N_MC':>6s} {'validate s':>11s} {'stats s':>8s} {'refs s':>8s} {'floor-eq s':>10s} "
            f"{'floor ns':>9s} {'val ns':>7s} {'stats ns':>8s} {'refs ns':>8s} {'val/floor':>9s} {'refs/floor':>10s}")
    print(head)
    for m in ms:
        rng = np.random.default_rng(m)
        u = rng.lognormal(0.0, 0.5, m)
        E = u * rng.standard_normal(m)
        reps = args.repeats if m < 100_000 else args.repeats_large
        n_mc = args.n_mc or mcref.default_n_mc(m)
        calls = {
            "validate": lambda: mcref.validate(E, u, n_mc=args.n_mc, seed=1, progress=False),  # None: default
            "stats": lambda: bootstrap_many(list(DEFAULT_STATS), E, u, n_boot=N_BOOT, seed=1),
            # validate's D, "permutation" resolved as validate does (the data's Z shuffled across u)
            "references": lambda: mcref.simulate(list(DEFAULT_STATS), u, n_mc=n_mc, seed=1, progress=False,
                                                 dists=list(VALIDATE_DISTS), E=E),
        }
        med = interleaved_medians(calls, reps)
        fl = floor_ns(m)
        work_ref = float(m) * n_d * n_mc
        work_val = float(m) * (N_BOOT + n_d * n_mc)
        floor_eq = fl * 1e-9 * work_ref / threads
        ns_val = med["validate"] * threads / work_val * 1e9
        ns_ref = med["references"] * threads / work_ref * 1e9
        ns_stats = med["stats"] * threads / (float(m) * N_BOOT) * 1e9
        print(f"{m:8.0e} {n_mc:6d} {med['validate']:11.3g} {med['stats']:8.3g} {med['references']:8.3g} {floor_eq:10.3g} "
              f"{fl:9.3g} {ns_val:7.3g} {ns_stats:8.3g} {ns_ref:8.3g} {ns_val / fl:9.3g} {ns_ref / fl:10.3g}", flush=True)
    print(f"# medians of {args.repeats} interleaved repeats ({args.repeats_large} from M = 1e5 on); "
          f"ns per element·replicate·thread ({threads} threads); floor-eq = the references' N_MC·{n_d}·M "
          "normals at the floor rate on all threads")


if __name__ == "__main__":
    main()
