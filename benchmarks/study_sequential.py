"""Issue 33: do the sequential Monte Carlo tests (validate's default) give the verdicts of the
fixed-N_MC tests? A bank of datasets, each validated twice with the same seed: the default
(sequential tests capped at ``default_n_mc(M)``) and ``n_mc=default_n_mc(M)`` (the fixed test).

The bank: calibrated sets, scale errors (E = s·u·ε, s from U(1.05, 1.5)), consistency errors
(the reported u' = u^0.7 rescaled to the same mean square) and t(4) errors (unit variance), each
with u² ~ IG(4, 4) and ε ~ N(0, 1) (t(4)/√2 for the t(4) sets), at M = 500, 2000, 10⁴ and 10⁵.
Only the permutation D is simulated in both runs (``dists=("permutation",)``): the comparison
D (normal, t6, empirical) decide nothing under the conditional rule. B = 200 bootstrap
replicates: no verdict of the conditional rule reads a BCa interval.

Prints and writes ``benchmarks/study_sequential_results.md``: the agreement of every row's
verdict and of the joint verdict, each disagreement with its p-values, the repeats the
sequential tests used against the cap, and the time of both.

Run: ``python benchmarks/study_sequential.py [--sets 1000] [--n-jobs 2]`` (about an hour on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

import mcref

KINDS = ("calibrated", "scale", "consistency", "t4")
#: datasets per M, in the proportions of the default --sets 1000
SHARES = {500: 0.6, 2000: 0.25, 10_000: 0.12, 100_000: 0.03}


def make_set(kind: str, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(E, u, parameter) of one dataset of the bank."""
    u = np.sqrt(1.0 / rng.gamma(4.0, 1.0 / 4.0, m))
    eps = rng.standard_t(4, m) / np.sqrt(2.0) if kind == "t4" else rng.standard_normal(m)
    s = rng.uniform(1.05, 1.5) if kind == "scale" else 1.0
    E = s * u * eps
    if kind == "consistency":
        v = u ** 0.7
        return E, v * np.sqrt(np.mean(u * u) / np.mean(v * v)), 0.7
    return E, u, s


def one(i: int, kind: str, m: int, seed: int) -> list[dict]:
    """Both validations of bank set ``i``: a record per row and one for the joint verdict."""
    rng = np.random.default_rng([seed, i])
    E, u, par = make_set(kind, m, rng)
    kw = dict(n_boot=200, dists=("permutation",), seed=np.random.SeedSequence([seed, i, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        seq = mcref.validate(E, u, **kw)
        t1 = time.perf_counter()
        kw["seed"] = np.random.SeedSequence([seed, i, 1])  # the same seed, unspawned
        fix = mcref.validate(E, u, n_mc=mcref.default_n_mc(m), **kw)
        t2 = time.perf_counter()
    out = []
    for r in seq.rows:
        f = fix[r.name]
        out.append(dict(set=i, kind=kind, M=m, row=r.name, seq=r.verdict, fixed=f.verdict, p_seq=r.p_test,
                        p_fixed=f.p_test, n=r.n_test, cap=fix.n_mc, t_seq=t1 - t0, t_fixed=t2 - t1, par=par))
    out.append(dict(set=i, kind=kind, M=m, row="joint", seq=seq.joint.verdict, fixed=fix.joint.verdict,
                    p_seq=seq.joint.p, p_fixed=fix.joint.p, n=seq.rounds.n_perm, cap=fix.n_mc, t_seq=t1 - t0,
                    t_fixed=t2 - t1, par=par))
    return out


def _g(p) -> str:
    return "-" if p is None else f"{p:.4g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--out", default=str(Path(__file__).with_name("study_sequential_results.md")))
    ap.add_argument("--log", default=str(Path(__file__).with_name("study_sequential_sets.jsonl")),
                    help="one JSON record per row and set, appended as the sets finish")
    ap.add_argument("--report-only", action="store_true", help="write the results of the sets done so far")
    a = ap.parse_args()
    jobs, i = [], 0
    for m, share in SHARES.items():
        for j in range(round(a.sets * share)):
            jobs.append((i, KINDS[j % len(KINDS)], m))
            i += 1
    # a set's records are appended to --log as it finishes (resumable: done sets are skipped, and
    # --report-only writes the results of the sets done so far); sets in a mixed order of M
    log = Path(a.log)
    done = {json.loads(x)["set"] for x in log.read_text().splitlines()} if log.exists() else set()
    order = np.random.default_rng(a.seed).permutation(len(jobs))
    todo = [jobs[j] for j in order if jobs[j][0] not in done]
    t0 = time.perf_counter()
    if not a.report_only and todo:
        with log.open("a") as fh:
            for part in Parallel(n_jobs=a.n_jobs, return_as="generator_unordered")(
                    delayed(one)(i, k, m, a.seed) for i, k, m in todo):
                fh.write("".join(json.dumps(r) + "\n" for r in part))
                fh.flush()
    wall = time.perf_counter() - t0
    recs = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    n_sets = len({r["set"] for r in recs})
    rows = [r for r in recs if r["row"] != "joint"]
    joint = [r for r in recs if r["row"] == "joint"]
    tested = [r for r in rows if r["seq"] in ("valid", "invalid")]
    agree = sum(r["seq"] == r["fixed"] for r in tested)
    jagree = sum(r["seq"] == r["fixed"] for r in joint)
    lines = [
        "# Sequential Monte Carlo tests against the fixed N_MC (issue 33)", "",
        f"`python benchmarks/study_sequential.py --sets {a.sets}`: {n_sets} datasets done of {len(jobs)} ("
        + ", ".join(f"{sum(1 for r in recs if r['M'] == m and r['row'] == 'joint')} at M = {m}" for m in SHARES)
        + f"; kinds {', '.join(KINDS)} in turn; seed {a.seed}; this run's wall {wall / 60:.1f} min on {a.n_jobs} "
        "workers).", "",
        "| what | sets or rows | agree | agreement |", "|---|---|---|---|",
        f"| row verdicts (valid/invalid) | {len(tested)} | {agree} | {100 * agree / len(tested):.2f} % |",
        f"| joint verdict | {len(joint)} | {jagree} | {100 * jagree / len(joint):.2f} % |", "",
        "Repeats the sequential tests used (median, mean; the cap is default_n_mc(M)) and time of both runs "
        "(median seconds per set):", "",
        "| M | cap | rows: median n | rows: mean n | permutation D run (mean) | t sequential | t fixed | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in SHARES:
        rm = [r for r in tested if r["M"] == m and r["n"] is not None]
        jm = [r for r in joint if r["M"] == m]
        if not jm:
            continue
        ts, tf = statistics.median(r["t_seq"] for r in jm), statistics.median(r["t_fixed"] for r in jm)
        lines.append(f"| {m} | {jm[0]['cap']} | {statistics.median(r['n'] for r in rm):.0f} | "
                     f"{statistics.mean(r['n'] for r in rm):.0f} | {statistics.mean(r['n'] for r in jm):.0f} | "
                     f"{ts:.2f} | {tf:.2f} | {tf / ts:.1f}× |")
    lines += ["", "Per kind (rows and joint verdicts invalid, sequential / fixed):", "",
              "| kind | rows invalid seq | rows invalid fixed | joint invalid seq | joint invalid fixed |",
              "|---|---|---|---|---|"]
    for k in KINDS:
        rk = [r for r in tested if r["kind"] == k]
        jk = [r for r in joint if r["kind"] == k]
        lines.append(f"| {k} | {sum(r['seq'] == 'invalid' for r in rk)}/{len(rk)} | "
                     f"{sum(r['fixed'] == 'invalid' for r in rk)}/{len(rk)} | "
                     f"{sum(r['seq'] == 'invalid' for r in jk)}/{len(jk)} | "
                     f"{sum(r['fixed'] == 'invalid' for r in jk)}/{len(jk)} |")
    dis = [r for r in tested + joint if r["seq"] != r["fixed"]]
    lines += ["", f"Disagreements ({len(dis)}): each with the p of both tests and the repeats of the sequential one.",
              ""]
    if dis:
        lines += ["| set | kind | M | row | sequential | fixed | p seq | p fixed | n |", "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['set']} | {r['kind']} | {r['M']} | {r['row']} | {r['seq']} | {r['fixed']} | "
                  f"{_g(r['p_seq'])} | {_g(r['p_fixed'])} | {r['n']} |" for r in dis]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(a.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
