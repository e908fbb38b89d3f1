"""Dependent test sets (issue 32): size, power and coverage of ``mcref.validate`` with the labels
``groups=`` / ``order=``, beside the independent-rows rule on the same data.

Every set is validated twice with the same seed: with its labels (``groups`` or ``order``) and
without (the independent-rows rule). Per row (ZMS, RCE, CC, ENCE, ZMSE) and for the joint
verdict the fraction judged ``invalid`` is recorded, and the coverage of E[Z²] = 1 by the ZMS
BCa interval (cluster or block bootstrap with labels, pairs bootstrap without).

Designs (M = 2000; calibrated unless a miscalibration is named):

* ``indep``: independent rows, u² ~ IG(4, 4), labelled with 100 groups of 20 consecutive rows
  (the cost of labels where there is no dependence);
* ``cluster``: G groups, cluster σ_g with σ_g² ~ IG(4, 4), u_i = σ_g·exp(0.1·N(0, 1)) (10 %
  jitter within the group), ε_i = √ρ·η_g + √(1 − ρ)·e_i (normal), E = u·ε; ``size=20``: 100
  groups of 20; ``size=unequal``: sizes drawn uniformly in 2–60 (the last one cut to fill
  M = 2000); ``u_by_size``: σ_g also depends on the group's size, σ_g ∝ (n_g/30)^(-1/2)
  (larger groups more precise: the groups differ in u in a way tied to their structure);
* ``cluster100``: 20 groups of 100 (few clusters), as ``cluster``;
* ``ar``: ε_t AR(1) with φ, unit variance, along t = 0 … M − 1 (``order``), ln u_t a slow
  AR(1) (coefficient 0.995, sd 0.4) around ln 1: u varies slowly along the order;
* power: ``scale``: E = 1.25·u·ε (u too small by 1.25); ``consistency``: the reported
  u' = c·u^0.7, c such that ⟨u'²⟩ = ⟨u²⟩ (the papers' consistency error), ε as in ``cluster``
  with groups of 20 at ρ = 0.3 (and ρ = 0, independent rows, to price the labels).

Settings: B = 1000 (BCa intervals), N_MC = 500 (permutation test, scale tests), the
conditional rule, α = 0.05, ``dists=("permutation",)`` (the rule adds the empirical D; the
normal and t(6) references do not enter its verdicts). Cells of 20 sets (``--sets 200`` makes
10 cells per design; the ρ = 0.6 clusters of 20 get twice that, a replication on fresh seeds), resumable in the SQLite store ``study_dependence.sqlite`` (the runner of
``mcref.studies``). Run: ``python benchmarks/study_dependence.py [--sets 200] [--n-jobs 2]``; it
writes ``benchmarks/study_dependence_results.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import warnings

import numpy as np

import mcref
from mcref.studies._runner import StudySpec, run_study

HERE = os.path.dirname(os.path.abspath(__file__))
M, B, N_MC, PER_CELL = 2000, 1000, 500, 20
STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")

#: (part, design, ρ or φ, miscalibration): the cells of the study
DESIGNS = (
    ("size", "indep", 0.0, ""),
    ("size", "cluster20", 0.3, ""),
    ("size", "cluster20", 0.6, ""),
    ("size", "ar", 0.5, ""),
    ("size", "ar", 0.8, ""),
    ("size", "unequal", 0.3, ""),
    ("size", "unequal", 0.6, ""),
    ("size", "unequal_u_by_size", 0.3, ""),
    ("size", "cluster100", 0.3, ""),
    ("power", "cluster20", 0.3, "scale"),
    ("power", "cluster20", 0.3, "consistency"),
    ("power", "cluster20", 0.0, "scale"),
    ("power", "cluster20", 0.0, "consistency"),
)


#: designs with more sets than ``--sets`` (a replication on fresh seeds: further chunks of the cell)
EXTRA_SETS = {("size", "cluster20", 0.6, ""): 2}


def _sizes(rng, design: str) -> np.ndarray:
    if design in ("cluster20", "indep"):
        return np.full(M // 20, 20)
    if design == "cluster100":
        return np.full(M // 100, 100)
    out, tot = [], 0
    while tot < M:
        n = int(rng.integers(2, 61))
        n = min(n, M - tot)
        if n < 2:  # a last row alone joins the previous group
            out[-1] += n
        else:
            out.append(n)
        tot += n
    return np.array(out)


def make_set(design: str, rho: float, error: str, rng) -> tuple[np.ndarray, np.ndarray, dict]:
    """One set: (E, u, labels) with labels ``{"groups": …}`` or ``{"order": …}``."""
    if design == "ar":
        phi = rho
        e = rng.normal(size=M)
        eps = np.empty(M)
        eps[0] = e[0]
        for t in range(1, M):
            eps[t] = phi * eps[t - 1] + math.sqrt(1 - phi * phi) * e[t]
        a = rng.normal(size=M)
        lu = np.empty(M)
        lu[0] = a[0]
        for t in range(1, M):
            lu[t] = 0.995 * lu[t - 1] + math.sqrt(1 - 0.995 ** 2) * a[t]
        u = np.exp(0.4 * lu)
        return u * eps, u, {"order": np.arange(M)}
    sizes = _sizes(rng, design)
    g = np.repeat(np.arange(sizes.size), sizes)
    sigma = np.sqrt(1.0 / rng.gamma(4.0, 0.25, sizes.size))
    if design == "unequal_u_by_size":
        sigma = sigma * (sizes / 30.0) ** -0.5
    u = sigma[g] * np.exp(0.1 * rng.normal(size=M))
    if design == "indep":
        u = np.sqrt(1.0 / rng.gamma(4.0, 0.25, M))
    eps = math.sqrt(rho) * rng.normal(size=sizes.size)[g] + math.sqrt(1 - rho) * rng.normal(size=M)
    E = u * eps
    if error == "scale":
        E = 1.25 * E
    elif error == "consistency":
        up = u ** 0.7
        u = up * math.sqrt(np.mean(u * u) / np.mean(up * up))
    return E, u, {"groups": g}


def _outcome(tab, prefix: str) -> dict:
    out = {}
    for r in tab.rows:
        out[f"{prefix}_{r.name}"] = float(r.verdict == "invalid")
        out[f"{prefix}_{r.name}_unrel"] = float(r.verdict == "unreliable")
    out[f"{prefix}_joint"] = float(tab.joint is not None and tab.joint.verdict == "invalid")
    j = tab.joint
    for part, v in (("p_joint", j.p), ("p_cons", j.p_consistency), ("p_scale", j.p_scale)):
        out[f"{prefix}_{part}"] = float("nan") if v is None else float(v)
    z = tab["ZMS"]
    out[f"{prefix}_cover"] = float(z.low <= 1.0 <= z.high)
    return out


def cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """``key["sets"]`` sets of one design, each validated with and without its labels."""
    rows = []
    for child in ss.spawn(int(key["sets"])):
        s_data, s_val = child.spawn(2)
        E, u, labels = make_set(key["design"], key["rho"], key["error"], np.random.default_rng(s_data))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcref.MCRefWarning)
            opts = dict(stats=STATS, n_boot=params["B"], n_mc=params["n_mc"], dists=("permutation",),
                        seed=s_val, progress=False)
            lab = mcref.validate(E, u, **labels, **opts)
            iid = mcref.validate(E, u, **opts)
        d = lab.dependence
        rows.append({**_outcome(lab, "lab"), **_outcome(iid, "iid"), "deff": d.design_effect,
                     "icc_z": d.icc_z, "icc_z2": d.icc_z2, "block": d.block_length,
                     "warned": float(d.independent_rows_wrong)})
    return rows


def spec(n_sets: int, only=None) -> StudySpec:
    keys = [{"part": p, "design": d, "rho": r, "error": e, "chunk": c, "sets": PER_CELL}
            for p, d, r, e in DESIGNS for c in range(-(-n_sets // PER_CELL) * EXTRA_SETS.get((p, d, r, e), 1))
            if only is None or d in only]
    return StudySpec(name="dependence", params={"M": M, "B": B, "n_mc": N_MC, "stats": list(STATS)}, keys=keys,
                     cell=cell)


def _pct(x) -> str:
    return f"{100 * float(np.mean(x)):.1f}"


def summary(table, n_sets: int) -> str:
    """The markdown tables of the study, from the stored table only."""
    lines = ["# Dependent test sets: size, power and coverage (issue 32)", "",
             f"`benchmarks/study_dependence.py`, M = {M}, B = {B}, N_MC = {N_MC}, α = 0.05, conditional rule; "
             f"{n_sets} sets per cell (binomial sd 1.5 % at 5 %, 3 % at 50 %). Each set is validated with its "
             "labels (`lab`) and without (`iid`, the independent-rows rule), same seed.", ""]
    head = "| design | ρ or φ | sets | " + " | ".join(f"{s} lab / iid" for s in STATS) + \
        " | joint lab / iid | ZMS coverage lab / iid | design effect | warned |"
    for part, title in (("size", "Size (% invalid on calibrated sets)"), ("power", "Power (% invalid)")):
        lines += [f"## {title}", "", head, "|" + "---|" * (head.count("|") - 1)]
        for (d, r, e), t in table[table.part == part].groupby(["design", "rho", "error"], sort=False):
            cells = [f"{_pct(t[f'lab_{s}'])} / {_pct(t[f'iid_{s}'])}" for s in STATS]
            lines.append(f"| {d}{' ' + e if e else ''} | {r:g} | {len(t)} | " + " | ".join(cells) +
                         f" | **{_pct(t.lab_joint)}** / {_pct(t.iid_joint)} | {_pct(t.lab_cover)} / "
                         f"{_pct(t.iid_cover)} | {t.deff.median():.2f} | {_pct(t.warned)} |")
        lines.append("")
    rep = table[(table.part == "size") & (table.design == "cluster20") & (table.rho == 0.6)]
    if rep.chunk.max() >= 10:
        first, second = rep[rep.chunk < 10], rep[rep.chunk >= 10]
        lines += ["## Replication (clusters of 20, ρ = 0.6)", "",
                  "| sets | " + " | ".join(f"{s} lab" for s in STATS) + " | joint lab | ZMS coverage lab |",
                  "|" + "---|" * (len(STATS) + 3)]
        for name, t in (("first 200", first), ("next 200 (fresh seeds)", second), ("all", rep)):
            lines.append(f"| {name} ({len(t)}) | " + " | ".join(_pct(t[f"lab_{s}"]) for s in STATS) +
                         f" | {_pct(t.lab_joint)} | {_pct(t.lab_cover)} |")
        lines.append("")
    if "lab_p_cons" in table:
        part = table[table.part == "size"].dropna(subset=["lab_p_cons"])
        lines += ["## The two parts of the labelled joint verdict (cells run with them recorded)", "",
                  "% of sets with p ≤ 0.0253 (each part's Šidák level; 2.53 % expected) and p ≤ 0.05.", "",
                  "| design | ρ or φ | sets | consistency ≤ 0.0253 | scale ≤ 0.0253 | consistency ≤ 0.05 | "
                  "scale ≤ 0.05 |", "|---|---|---|---|---|---|---|"]
        for (d, r), t in part.groupby(["design", "rho"], sort=False):
            lines.append(f"| {d} | {r:g} | {len(t)} | {_pct(t.lab_p_cons <= 0.0253)} | {_pct(t.lab_p_scale <= 0.0253)} "
                         f"| {_pct(t.lab_p_cons <= 0.05)} | {_pct(t.lab_p_scale <= 0.05)} |")
        lines.append("")
    lines += ["ZMS coverage: the fraction of sets whose ZMS BCa 95 % interval holds E[Z²] = 1 (power cells: "
              "the scale cells' E[Z²] is 1.5625, so their 'coverage' is a miss rate). Design effect: median "
              "of the estimated d of ⟨Z²⟩; warned: % of sets whose table says the independent-rows rule would "
              "have been wrong (d > 1.42).", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--store", default=os.path.join(HERE, "study_dependence.sqlite"))
    ap.add_argument("--out", default=os.path.join(HERE, "study_dependence_results.md"))
    ap.add_argument("--only", help="comma-separated designs to run (default: all)")
    args = ap.parse_args(argv)
    only = args.only.split(",") if args.only else None
    res = run_study(spec(args.sets, only), seed=2032, n_jobs=args.n_jobs, store=args.store, progress=False)
    text = summary(res.table, args.sets)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
