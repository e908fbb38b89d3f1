"""Mutation run of issue 31 with mutmut 2.5.1's mutation engine (benchmarks/mutation_run.sh).

``mutmut run`` mutates every line of a file and runs the mutants one by one in the
worktree; this driver uses the same engine (``mutmut.Context`` / ``list_mutations`` /
``mutate``, the same mutation types less string, fstring, decorator and annassign) but

* restricts the mutants to given line ranges (the binned statistics of kernels/stats.py),
* runs a seeded random sample of them (``--sample``), and
* mutates a private copy of the tree (``--tree``), never the worktree, so runs of
  several modules can go side by side and ``git status`` stays clean.

Each mutant: write the mutated file, run the runner in the copy (timeout → killed), put
the original back. One JSON line per mutant goes to ``--out``. ``--ids`` re-runs given
mutant ids (the "after" run of the survivors).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from types import SimpleNamespace

import mutmut
from mutmut import ALL, Context, list_mutations, mutate

SKIP_TYPES = {"string", "fstring", "decorator", "annassign"}


def enumerate_mutants(path: str, ranges):
    cfg = SimpleNamespace(mutation_types_to_apply=set(mutmut.mutations_by_type) - SKIP_TYPES,
                          covered_lines_by_filename=None, coverage_data=None)
    ctx = Context(filename=path, config=cfg, mutation_id=ALL)
    ids = list_mutations(ctx)
    if ranges:
        ids = [i for i in ids if any(a <= i.line_number + 1 <= b for a, b in ranges)]
    return ids, cfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", required=True, help="private copy of the repository")
    ap.add_argument("--file", required=True, help="path inside the tree, e.g. mcref/verdict/_joint.py")
    ap.add_argument("--lines", default="", help="line ranges a-b,c-d (1-based, inclusive)")
    ap.add_argument("--runner", required=True)
    ap.add_argument("--sample", type=int, default=0, help="0: all mutants")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--ids", default="", help="comma-separated mutant indices to run")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--list", action="store_true", help="only print the mutants")
    a = ap.parse_args()
    ranges = [tuple(map(int, r.split("-"))) for r in a.lines.split(",") if r]
    os.chdir(a.tree)
    ids, cfg = enumerate_mutants(a.file, ranges)
    idx = list(range(len(ids)))
    if a.ids:
        idx = [int(x) for x in a.ids.split(",")]
    else:  # a seeded random order: any prefix of the run is a simple random sample
        random.Random(a.seed).shuffle(idx)
        if a.sample:
            idx = idx[:a.sample]
    with open(a.file) as f:
        original = f.read()
    print(f"{a.file}: {len(ids)} mutants, running {len(idx)}", flush=True)
    for k in idx:
        mid = ids[k]
        ctx = Context(source=original, filename=a.file, config=cfg, mutation_id=mid)
        mutated, n = mutate(ctx)
        assert n == 1
        new_line = mutated.split("\n")[mid.line_number]
        if a.list:
            print(k, mid.line_number + 1, mid.line.strip(), "-->", new_line.strip())
            continue
        t0 = time.time()
        try:
            with open(a.file, "w") as f:
                f.write(mutated)
            try:
                r = subprocess.run(a.runner, shell=True, capture_output=True, text=True, timeout=a.timeout)
                status = "killed" if r.returncode != 0 else "survived"
                tail = (r.stdout + r.stderr).strip().splitlines()[-1:] if r.returncode else []
            except subprocess.TimeoutExpired:
                status, tail = "timeout", []
        finally:
            with open(a.file, "w") as f:
                f.write(original)
        rec = dict(file=a.file, id=k, line=mid.line_number + 1, orig=mid.line.strip(), mutant=new_line.strip(),
                   status=status, seconds=round(time.time() - t0, 1), tail=tail)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(k, status, rec["seconds"], mid.line_number + 1, new_line.strip()[:100], flush=True)


if __name__ == "__main__":
    sys.exit(main())
