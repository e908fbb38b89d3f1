"""Issue 38, part 1: adaptivity rows (features ``x``) with ``groups=`` of unequal sizes.

The issue's reproducer: M = 1500 i.i.d. rows, u ~ lognormal(−1, 0.4), a feature x ~ N(0, 1),
an adaptivity error (the errors' sd 1.4·u for x > 0, 0.6·u for x ≤ 0, rescaled to keep ⟨σ²⟩ =
⟨u²⟩) or none (calibrated), and 80 arbitrary group labels (sizes about 11-34). Each set is
validated with ``x={"x": x}`` and, in the ``labels`` cells, ``groups=g``; the cells record the
verdict of every row and of the joint verdict, and print the share ``invalid`` with its
binomial 95 % interval (Clopper-Pearson).

``--route`` chooses the permutation of groups of unequal sizes, to compare candidates on the same
sets (docs/methods.md, "Dependent test sets"):

* ``shipped``: what mcref does (the u-level exchange composed with the permutation of whole
  Z-vectors among groups of equal size);
* ``levels``: the u-level exchange alone (mcref before issue 38: the x rows cannot vary);
* ``within``: the u-level exchange composed with a permutation of Z within each group (exact only
  when the rows of a group are exchangeable).

Finished cells are appended to a JSONL file (one line per set), so a killed run resumes.

Run: ``python benchmarks/study_paths_groups.py [--sets 60] [--n-mc 300] [--route shipped]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

import mcref
from mcref.verdict import _validate

ROUTES = ("shipped", "levels", "within")
KINDS = ("error", "calibrated")


def make_set(kind: str, i: int, m: int = 1500, n_groups: int = 80):
    """(E, u, x, g) of set ``i`` (the issue's reproducer for kind "error", set 0 = the issue's)."""
    rng = np.random.default_rng([777, i] if kind == "error" else [778, i])
    u = rng.lognormal(-1, .4, m)
    x = rng.normal(size=m)
    s = u * np.where(x > 0, 1.4, .6) if kind == "error" else u.copy()
    s *= np.sqrt(np.mean(u ** 2) / np.mean(s ** 2))
    E = s * rng.normal(size=m)
    g = rng.integers(0, n_groups, m)
    return E, u, x, g


def _route_units(route: str):
    """units_for with the permutation units of ``route`` (module docstring)."""
    base = _validate.units_for

    def units_for(*a, **k):
        un = base(*a, **k)
        if un is None or un.levels is None or route == "shipped":
            return un
        none = np.zeros(0, dtype=np.int64)
        if route == "levels":  # no Z moves: an empty unit structure
            return replace(un, members=none, ustart=none, cstart=none)
        pts = np.argsort(un.gid, kind="stable")  # each group's rows, one unit per row, one class per group
        return replace(un, members=pts.astype(np.int64), ustart=np.arange(pts.size + 1, dtype=np.int64),
                       cstart=np.concatenate(([0], np.cumsum(un.sizes))).astype(np.int64))

    return units_for


def one(kind: str, labels: bool, i: int, n_mc: int, sequential: bool) -> dict:
    E, u, x, g = make_set(kind, i)
    kw = dict(x={"x": x}, seed=np.random.SeedSequence([38, i]), progress=False)
    if not sequential:
        kw.update(n_mc=n_mc, n_boot=n_mc)
    if labels:
        kw["groups"] = g
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        tab = mcref.validate(E, u, **kw)
    rec = {r.name: r.verdict for r in tab.rows}
    rec.update({f"p:{r.name}": r.p_test for r in tab.rows})
    rec.update(joint=tab.joint.verdict, p_joint=tab.joint.p, seconds=time.perf_counter() - t0)
    return rec


def clopper(k: int, n: int) -> tuple[float, float]:
    from scipy.stats import beta

    lo = beta.ppf(0.025, k, n - k + 1) if k > 0 else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def summary(recs: list[dict]) -> None:
    cells: dict[tuple, list[dict]] = {}
    for r in recs:
        cells.setdefault((r["route"], r["kind"], r["labels"], r["settings"]), []).append(r)
    print(f"{'route':8} {'kind':10} {'labels':6} {'settings':10} {'sets':>4}  % invalid [95 % CI] per row")
    for key in sorted(cells):
        rs = cells[key]
        n = len(rs)
        rows = [k for k in rs[0] if k not in ("route", "kind", "labels", "settings", "set", "seconds", "p_joint")
                and not k.startswith("p:")]
        parts = []
        for row in rows:
            k = sum(r.get(row) == "invalid" for r in rs)
            nt = sum(r.get(row) == "not testable" for r in rs)
            lo, hi = clopper(k, n)
            parts.append(f"{row} {100 * k / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]" + (f" (not testable {nt})"
                                                                                      if nt else ""))
        print(f"{key[0]:8} {key[1]:10} {str(key[2]):6} {key[3]:10} {n:4d}  " + "; ".join(parts)
              + f"; {np.median([r['seconds'] for r in rs]):.1f} s/set")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=60)
    ap.add_argument("--n-mc", type=int, default=300, help="n_mc = n_boot of the fixed tests (0: the defaults, "
                    "sequential)")
    ap.add_argument("--route", choices=ROUTES, default="shipped")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--labels", default="1,0", help="1: with groups=, 0: without")
    ap.add_argument("--log", default=str(Path(__file__).with_name("study_paths_groups.jsonl")))
    ap.add_argument("--summary", action="store_true", help="only print the cells of the log")
    a = ap.parse_args()
    log = Path(a.log)
    recs = [json.loads(s) for s in log.read_text().splitlines()] if log.exists() else []
    if not a.summary:
        _validate.units_for = _route_units(a.route)
        settings = "default" if a.n_mc == 0 else f"nmc{a.n_mc}"
        done = {(r["route"], r["kind"], r["labels"], r["settings"], r["set"]) for r in recs}
        for kind in a.kinds.split(","):
            for lab in (bool(int(v)) for v in a.labels.split(",")):
                route = a.route if lab else "none"
                for i in range(a.sets):
                    key = (route, kind, lab, settings, i)
                    if key in done:
                        continue
                    rec = dict(route=route, kind=kind, labels=lab, settings=settings, set=i,
                               **one(kind, lab, i, a.n_mc, a.n_mc == 0))
                    with log.open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                    recs.append(rec)
                    done.add(key)
                    print(key, rec["joint"], file=sys.stderr, flush=True)
    summary(recs)


if __name__ == "__main__":
    main()
