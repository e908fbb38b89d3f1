"""Size and power of the joint verdict of ``mcref.validate`` (issue 17): the study behind the
docs/guide/verdicts.md, "Joint verdict", and docs/methods.md "Joint verdict".

Runs ``mcref.studies.verdicts`` on the five default statistics (ZMS, RCE, CC, ENCE, ZMSE)
in three parts (and the heavy-tail parts H below) and prints, per cell, the rejection rate of

* ``any invalid``: at least one of the five default per-statistic verdicts is ``invalid``
  (ZMS/RCE by ζ_BS, the others by the Monte Carlo test under the empirical D) — the table
  read as a model verdict;
* ``any p (emp)``: at least one per-statistic Monte Carlo p ≤ 0.05 under the empirical D;
* the joint verdict under the empirical D (``rule="mc"``, validate's default before the
  conditional rule: the statistics the shape screen leaves) for each combination (``minp``, ``fisher``, ``cauchy``), the same over all
  five statistics (``:all``), and under the true D (exact) where it was simulated;
* the best single statistic (largest rejection rate of the per-statistic default verdict).

A. size: calibrated data, u² ~ IG(3, 3) and IG(4, 4) (sources ``"IG(6)"``, ``"IG(8)"``) with
   M = 500 and 2000, and the u of the built-in set Diffusion_RF (M = 2040); true D normal
   and t(6);
B. power: u² ~ IG(3, 3), M = 500 and 2000, true D normal: E = 0.9·u·ε, E = 1.1·u·ε,
   reported u ∝ u^0.5 (same mean square), upper half of u too small by 1.25; the
   permutation test beside the empirical D;
C. heavy tails: u² ~ IG(4, 4) (source ``"IG(8)"``), M = 2000, true D a unit-variance t(3):
   calibrated data and the miscalibrations of B, with the permutation test (Z shuffled
   across u) beside the empirical D.

H. heavy tails, issue 17 (parts ``H``, ``HU``, ``HP``, ``HPT``; ``--parts H,HU,HP,HPT``): the
   conditional rule (validate's default: permutation test for the consistency statistics,
   ZMS under the Student t fitted to Z, their Šidák combination as the joint verdict) beside
   the Monte Carlo rule under the empirical D and the alternatives (``switch``, the Šidák
   combination with the scale part under the empirical D): size with u² ~ IG(4, 4), M = 500,
   2000, 5000 and true D normal, t(6), t(4), t(3) (H), and with the nine built-in sets' u
   and t(4), t(3) (HU); power on normal data, u² ~ IG(3, 3), M = 500 and 2000 (HP), and
   under t(4), t(3), u² ~ IG(4, 4), M = 2000 (HPT); 500 resamples, permutations and t draws
   per dataset. ``markdown`` prints the tables of docs/methods.md.

Settings: 200 datasets per cell, N_MC = 1000 (per cell for the test D, per dataset for the
empirical D and the permutations), B = 300 (BCa of ZMS and RCE only), α = 0.05, seed 2026.
Results are kept in ``benchmarks/results/joint_*.sqlite`` (re-running reads them back;
``--fresh`` recomputes). Run: ``python benchmarks/study_joint.py [--quick] [--fresh]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, show  # noqa: E402

from mcref import datasets, studies  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")
COMBS = ("minp", "fisher", "cauchy")
POWER = ("scale=0.9", "scale=1.1", "gamma=0.5", "break=1.25")


def settings(quick: bool) -> dict:
    common = dict(stats=STATS, n_rep=200, n_boot=300, bca_stats=("ZMS", "RCE"), n_mc=1000, n_mc_empirical=1000)
    if quick:
        common.update(n_rep=40, n_mc=300, n_mc_empirical=300, n_boot=200)
    # the heavy-tail parts: 500 resamples and 500 permutations per dataset, a small per-cell reference
    heavy = dict(common, test_dists=("normal",), n_mc=100 if quick else 200,
                 n_mc_empirical=300 if quick else 500, n_perm=300 if quick else 500)
    return dict(
        A=dict(common, u=("IG(6)", "IG(8)", "Diffusion_RF"), M=(500, 2000), D=("normal", "t6"),
               test_dists=("normal", "t6")),
        B=dict(common, u=("IG(6)",), M=(500, 2000), scenario=POWER, test_dists=("normal",),
               n_perm=common["n_mc_empirical"]),
        C=dict(common, u=("IG(8)",), M=(2000,), D=("t3",), scenario=("calibrated", *POWER), test_dists=("t3",),
               n_perm=common["n_mc_empirical"]),
        # H: heavy tails, the candidate default rules (size: every D; power: normal D, and t(4), t(3) at M = 2000)
        H=dict(heavy, u=("IG(8)",), M=(500, 2000, 5000), D=("normal", "t6", "t4", "t3")),
        HU=dict(heavy, u=tuple(datasets.names()), D=("t4", "t3")),
        HP=dict(heavy, u=("IG(6)",), M=(500, 2000), scenario=POWER),
        HPT=dict(heavy, u=("IG(8)",), M=(2000,), D=("t4", "t3"), scenario=POWER),
    )


def _cells(res):
    """(cell key, its rows, rate(stat, score, dist)) for every (u, M, scenario, D) cell of the study table."""
    for key, g in res.table.groupby(["u", "M_eff", "scenario", "D"], sort=False):
        def rate(stat, score, dist, g=g):
            r = g[(g.stat == stat) & (g.score == score) & (g.dist == dist)]["reject"]
            return float(r.iloc[0]) if len(r) else float("nan")

        yield key, g, rate


def summary(res) -> pd.DataFrame:
    """One row per cell: the rejection rates of the family-wise readings and the joint verdict."""
    rows = []
    for key, g, rate in _cells(res):
        row = dict(zip(["u", "M", "scenario", "D"], key))
        row["any invalid"] = rate("any", "invalid", "mc")
        row["any p (emp)"] = rate("any", "p", "empirical")
        for c in COMBS:
            row[f"{c} (emp)"] = rate(c, "joint", "empirical")
        for c in COMBS:
            row[f"{c}:all (emp)"] = rate(f"{c}:all", "joint", "empirical")
        for c in COMBS:
            row[f"{c} (true D)"] = rate(c, "joint", key[3])
        if "permutation" in set(g.dist):
            for c in COMBS:
                row[f"{c} (perm)"] = rate(c, "joint", "permutation")
            row["minp:all (perm)"] = rate("minp:all", "joint", "permutation")
        single = {s: rate(s, "invalid", "mc") for s in STATS}
        best = max(single, key=single.get)
        row["best single"] = f"{best} {single[best]:.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def candidates(res) -> pd.DataFrame:
    """One row per cell: the rejection rates of rule="mc" (the default before) and of the heavy-tail
    candidates
    (``mcref.studies.verdicts``: ``_candidate_rules``)."""
    rows = []
    for key, g, rate in _cells(res):
        row = dict(zip(["u", "M", "scenario", "D"], key))
        row["Z2 flag"] = rate("ZMS", "verdict", "mc") - rate("ZMS", "invalid", "mc")
        row["joint emp"] = rate("minp", "joint", "empirical")
        for d in ("conditional", "perm-cons", "sidak-emp", "sidak-rce", "switch"):
            row[f"joint {d}"] = rate("minp", "joint", d)
        for d in ("mc", "conditional", "switch"):
            row[f"any {d}"] = rate("any", "invalid", d)
        row["ZMS BS/t-fit"] = f"{rate('ZMS', 'invalid', 'mc'):.3f}/{rate('ZMS', 'invalid', 'conditional'):.3f}"
        row["RCE"] = rate("RCE", "invalid", "mc")
        for s in ("CC", "ENCE", "ZMSE"):
            row[f"{s} emp/cond/sw"] = "/".join(f"{rate(s, 'invalid', d):.3f}" for d in ("mc", "conditional", "switch"))
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(res) -> str:
    """The heavy-tail cells as the markdown table of docs/methods.md ("Heavy tails: the
    conditional rule"): rejection rates in % (size) or as fractions (power)."""
    t = res.table
    out = ["| u, M, D, scenario | Z² flagged | joint: mc / **conditional** / Šidák with emp. scale / switch | "
           "ZMS: ζ_BS / **t-fit** | CC: mc / **cond.** | ENCE: mc / **cond.** / switch | "
           "ZMSE: mc / **cond.** / switch |", "|---|---|---|---|---|---|---|"]
    for key, g in t.groupby(["u", "M_eff", "D", "scenario"], sort=False):
        def rate(stat, score, dist):
            r = g[(g.stat == stat) & (g.score == score) & (g.dist == dist)]["reject"]
            return float(r.iloc[0]) if len(r) else float("nan")

        size = key[3] == "calibrated"

        def f(*xs):
            return " / ".join(f"{100 * x:.1f}" if size else f"{x:.3f}" for x in xs)

        cell = f"{key[0]}, {key[1]}, {key[2]}" + ("" if size else f", {key[3]}")
        out.append(
            f"| {cell} | {f(rate('ZMS', 'verdict', 'mc') - rate('ZMS', 'invalid', 'mc'))} | "
            f"{f(*(rate('minp', 'joint', d) for d in ('empirical', 'conditional', 'sidak-emp', 'switch')))} | "
            f"{f(rate('ZMS', 'invalid', 'mc'), rate('ZMS', 'invalid', 'conditional'))} | "
            f"{f(rate('CC', 'invalid', 'mc'), rate('CC', 'invalid', 'conditional'))} | "
            f"{f(*(rate('ENCE', 'invalid', d) for d in ('mc', 'conditional', 'switch')))} | "
            f"{f(*(rate('ZMSE', 'invalid', d) for d in ('mc', 'conditional', 'switch')))} |")
    return "\n".join(out)


def per_stat(res, score: str, dist: str) -> pd.DataFrame:
    t = res.table
    t = t[(t.score == score) & (t.dist == dist) & t.stat.isin(STATS)]
    return t.pivot_table(index=["u", "M_eff", "scenario", "D"], columns="stat", values="reject", sort=False)[
        [s for s in STATS if s in set(t.stat)]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small settings (a minute or two)")
    ap.add_argument("--fresh", action="store_true", help="recompute (delete the stores first)")
    ap.add_argument("--parts", default="ABC", help="parts to run (default ABC; the heavy-tail parts: H,HU,HP,HPT)")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    RESULTS.mkdir(exist_ok=True)
    S = settings(args.quick)
    tag = "_quick" if args.quick else ""
    t0 = time.perf_counter()
    parts = (args.parts.replace(",", " ").split() if ("," in args.parts or " " in args.parts or args.parts in S)
             else list(args.parts))
    for part in parts:
        store = RESULTS / f"joint_{part}{tag}.sqlite"
        if args.fresh and store.exists():
            store.unlink()
        t = time.perf_counter()
        res = studies.verdicts(**S[part], n_jobs=2, threads_per_cell=1, progress=False, store=store, seed=2026)
        print(f"\npart {part}: {res.n_computed} cells computed, {res.n_loaded} read back, "
              f"{time.perf_counter() - t:.0f} s")
        if part.startswith("H"):
            show(f"{part}. rule='mc' (emp, the default before) and the heavy-tail candidates (conditional: the "
                 "default now): rejection rates (alpha = 0.05)",
                 candidates(res))
            print(f"\n{part}. as markdown (docs/methods.md)\n{markdown(res)}")
            continue
        show(f"{part}. rejection rates (alpha = 0.05)", summary(res))
        show(f"{part}. per-statistic default verdict, declared invalid", per_stat(res, "invalid", "mc"))
        show(f"{part}. per-statistic Monte Carlo test under the empirical D, p <= 0.05", per_stat(res, "p", "empirical"))
        if "n_perm" in S[part]:
            show(f"{part}. per-statistic permutation test, p <= 0.05", per_stat(res, "p", "permutation"))
    print(f"\ntotal wall time: {(time.perf_counter() - t0) / 60:.1f} min (stores read back cost nothing)")


if __name__ == "__main__":
    main()
