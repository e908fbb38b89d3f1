"""Adaptivity rows of ``mcref.validate`` (issue 24): verdict rates per target on the primer's
cases, size on calibrated data, power on a consistent but not adaptive case.

Parts (``--parts cases,size,power``):

* ``cases``: the primer's synthetic cases A–F (``mcref.synthetic.case``, M = 5000, x given),
  ``--seeds`` sets each; per target the fraction of sets judged invalid: **calibration**
  (the ZMS row), **consistency** (any row binned on u, or CC), **binned u** (ENCE or ZMSE on
  bins of u), **adaptivity** (any row binned on x); the same per target by its part of the
  joint verdict (``scale part``: p_scale, ``consistency part``: p_consistency, ``adaptivity
  part``: p_adaptivity, each one exact test of its rows); and the joint verdict;
* ``size``: calibrated sets E = u·ε, u² ~ IG(4, 4), x independent of u (``indep``) or u a
  function of x (``determines``: u = 0.1 + x², x ~ N(0, 1)) or u constant (``constant u``,
  the primer's case F), M = 500, 2000, 10 000, ε normal
  and a unit-variance t(3); the rejection rate of each x row, of the u rows and of the
  joint verdict (5 % expected; binomial sd 1.5 % at 200 sets);
* ``power``: consistent but not adaptive: x ~ U(−1, 1) independent of u, E = u·ε·s(x) with
  s² = 1.5 for x > 0 and 0.5 for x < 0 (E[Z² | u] = 1 at every u, E[Z² | x] ≠ 1), M = 500,
  2000, 5000.

Settings: B = 200 (the intervals do not enter the x rows' or the joint verdict), N_MC = 499,
α = 0.05, seeds from ``numpy.random.SeedSequence(2026)`` spawned per set, joblib over sets.
Run: ``python benchmarks/study_adaptivity.py [--parts cases,size,power] [--seeds 50]
[--sets 200] [--n-jobs 2]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from joblib import Parallel, delayed

import mcref
from mcref import synthetic

B, N_MC = 200, 499


def _rates(tab) -> dict[str, bool]:
    rows = {r.name: r for r in tab.rows}
    inv = {n: r.verdict == "invalid" for n, r in rows.items()}
    return {
        "calibration": inv.get("ZMS", False),
        "consistency": any(v for n, v in inv.items() if "|" not in n and n in ("CC", "ENCE", "ZMSE", "UCE")),
        "binned u": any(v for n, v in inv.items() if n in ("ENCE", "ZMSE", "UCE")),
        "adaptivity": any(v for n, v in inv.items() if "|" in n),
        "joint": tab.joint is not None and tab.joint.verdict == "invalid",
        # each target by its part of the joint verdict (one exact test per target)
        "scale part": tab.joint is not None and (tab.joint.p_scale or 1.0) <= 0.05,
        "consistency part": tab.joint is not None and (tab.joint.p_consistency or 1.0) <= 0.05,
        "adaptivity part": tab.joint is not None and (tab.joint.p_adaptivity or 1.0) <= 0.05,
        **{f"row {n}": v for n, v in inv.items() if "|" in n},
        "u rows not testable": any(r.verdict == "not testable" for r in rows.values()),
    }


def _validate(E, u, x, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        return mcref.validate(E, u, x=x, n_boot=B, n_mc=N_MC, seed=seed, progress=False)


def _case_one(case, ss):
    ds = synthetic.case(case, M=5000, seed=ss)
    return _rates(_validate(ds.E, ds.u, ds.x, ss.spawn(1)[0]))


def _size_one(kind, M, dist, ss):
    rng = np.random.default_rng(ss)
    if kind == "indep":
        u = np.sqrt(1 / rng.gamma(4, 1 / 4, M))
        x = rng.normal(size=M)
    elif kind == "constant u":  # the primer's case F: one sigma, x independent
        u = np.full(M, 0.5)
        x = rng.normal(size=M)
    else:
        x = rng.normal(size=M)
        u = 0.1 + x**2
    eps = rng.normal(size=M) if dist == "normal" else rng.standard_t(3, M) / np.sqrt(3.0)
    return _rates(_validate(u * eps, u, x, ss.spawn(1)[0]))


def _power_one(M, ss):
    rng = np.random.default_rng(ss)
    u = np.sqrt(1 / rng.gamma(4, 1 / 4, M))
    x = rng.uniform(-1, 1, M)
    s = np.sqrt(np.where(x > 0, 1.5, 0.5))
    return _rates(_validate(u * rng.normal(size=M) * s, u, x, ss.spawn(1)[0]))


def _table(title, cells, keys):
    print(f"\n{title}")
    print("| cell | n | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for cell, res in cells.items():
        vals = [np.mean([r.get(k, False) for r in res]) for k in keys]
        print(f"| {cell} | {len(res)} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="cases,size,power")
    ap.add_argument("--seeds", type=int, default=50, help="sets per primer case")
    ap.add_argument("--sets", type=int, default=200, help="sets per size/power cell")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--sizes", default="500,2000,10000")
    a = ap.parse_args(argv)
    parts = a.parts.split(",")
    run = Parallel(n_jobs=a.n_jobs)
    t0 = time.perf_counter()
    if "cases" in parts:
        cells = {}
        for k, case in enumerate("ABCDEF"):
            sss = np.random.SeedSequence(2026, spawn_key=(1, k)).spawn(a.seeds)
            cells[f"case {case}"] = run(delayed(_case_one)(case, ss) for ss in sss)
        _table("Primer cases, M = 5000: fraction of sets judged invalid per target", cells,
               ["calibration", "consistency", "binned u", "adaptivity", "scale part", "consistency part",
                "adaptivity part", "joint", "u rows not testable"])
    if "size" in parts:
        cells = {}
        for i, kind in enumerate(("indep", "determines", "constant u")):
            for j, M in enumerate(int(m) for m in a.sizes.split(",")):
                for k, dist in enumerate(("normal", "t3")):
                    sss = np.random.SeedSequence(2026, spawn_key=(2, i, j, k)).spawn(a.sets)
                    cells[f"x {kind}, M={M}, {dist}"] = run(delayed(_size_one)(kind, M, dist, ss) for ss in sss)
        _table("Size on calibrated data (5 % expected per row and part)", cells,
               ["row ENCE|x", "row ZMSE|x", "adaptivity", "adaptivity part", "consistency part", "joint"])
    if "power" in parts:
        cells = {}
        for j, M in enumerate((500, 2000, 5000)):
            sss = np.random.SeedSequence(2026, spawn_key=(3, j)).spawn(a.sets)
            cells[f"consistent, not adaptive, M={M}"] = run(delayed(_power_one)(M, ss) for ss in sss)
        _table("Power: consistent but not adaptive", cells,
               ["row ENCE|x", "row ZMSE|x", "adaptivity part", "consistency part", "joint"])
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
