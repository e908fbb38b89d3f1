"""The RCE row of ``benchmarks/study_dependence.py`` with labels, recomputed on the study's own sets
(issue 32, open item: RCE's cluster bootstrap-t too liberal), before and after the t(ν̂) reference.

The sets and the validation seeds are the study's (:func:`mcref.studies._runner.cell_seed` of each
cell, the same spawns), and the RCE row's p-value is the one ``validate(E, u, groups=… or order=…)``
computes (``scale_tests``' stream for RCE, over the u-sorted data and the units of
:func:`mcref.core._dependence.units_for`): the row says ``invalid`` when p ≤ 0.05. Per cell, % of sets with
p ≤ 0.05 for

* ``boot``: the cluster bootstrap-t alone (the first pass; equal-tailed);
* ``t(nu)``: the same T against B draws of independent unit-variance t(ν̂) errors on the data's u,
  laid out in the same clusters (ν̂ fitted to Z) and studentized the same way;
* ``max``: the intersection max(p_boot, p_t), what ``validate`` now uses;
* ``sym``: the symmetric bootstrap-t, #{|T*| ≥ |T|};
* ``t(G-1)``: T·√((G−1)/G) against Student's t with G − 1 degrees of freedom;
* ``wcr``: the wild cluster bootstrap-t with the null imposed (e*_g = v_g + w_g(e_g − v_g)), Rademacher
  and Webb's six-point weights (Cameron, Gelbach & Miller 2008; Webb 2014);

and the row itself: ``screened``, % of sets whose shape screen calls RCE unreliable (u² or E²), and
``row before`` / ``row after``, % ``invalid`` (p ≤ 0.05 and not screened) with ``boot`` / ``max``.

Run: ``python benchmarks/study_dependence_rce.py [--sets 200]``; it writes
``benchmarks/study_dependence_rce_results.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
from scipy import stats as sst

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import study_dependence as sd  # noqa: E402

from mcref.core._dependence import units_for  # noqa: E402
from mcref.core._prepared import prepare  # noqa: E402
from mcref.verdict._scale_test import _rce_test  # noqa: E402
from mcref.core._checks import check_seed  # noqa: E402
from mcref.studies._runner import cell_seed  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
NAMES = ("boot", "t(nu)", "max", "sym", "t(G-1)", "wcr rad", "wcr webb")


def _pval(tstar, t):
    b = tstar.size
    return min(1.0, 2 * min((1 + np.sum(tstar >= t)) / (1 + b), (1 + np.sum(tstar <= t)) / (1 + b)))


def _wcr(eg, vg, w):
    e = vg[None, :] + w * (eg - vg)[None, :]
    r = e.sum(1) / vg.sum()
    se = np.sqrt(((e - r[:, None] * vg[None, :]) ** 2).sum(1)) / vg.sum()
    return (r - 1) / se


def one_set(E, u, labels, s_val, n_mc):
    prep = prepare(E, u, n_bins=2, ranks=False)
    units = units_for(prep.order, **labels, z2=prep.z2, us=prep.u)
    ss = check_seed(s_val)
    ss.spawn(3)
    ss_fit = ss.spawn(1)[0]
    _, ss_r = ss_fit.spawn(2)
    res = _rce_test(prep.E, prep.u, n_mc, ss_r, units.gid)
    t = res.t["RCE"]
    G = units.n_units
    v = prep.u ** 2
    sc = v.mean()
    eg, vg = np.bincount(units.gid, prep.E ** 2 / sc), np.bincount(units.gid, v / sc)
    rng = np.random.default_rng(ss_r.spawn(1)[0])
    out = {"boot": res.p_boot["RCE"], "t(nu)": res.p_t.get("RCE", math.nan), "max": res.p["RCE"],
           "sym": min(1.0, (1 + np.sum(np.abs(res.tstar[0]) >= abs(t))) / (1 + n_mc)),
           "t(G-1)": 2 * sst.t.sf(abs(t) * math.sqrt((G - 1) / G), G - 1),
           "wcr rad": _pval(_wcr(eg, vg, rng.choice([-1.0, 1.0], (n_mc, G))), t),
           "wcr webb": _pval(_wcr(eg, vg, rng.choice(WEBB, (n_mc, G))), t)}
    from mcref.shape import shape_screen_prepared

    # the row: invalid when p ≤ 0.05 and the shape screen does not call RCE unreliable (u² or E² screen)
    out["flag"] = float(shape_screen_prepared(prepare(E, u, n_bins=2)).unreliable("RCE"))
    return out, G


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=200)
    ap.add_argument("--only", help="comma-separated design:rho:error cells")
    ap.add_argument("--first", type=int, help="only the first FIRST sets of each cell (its first chunks)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first SKIP sets of each cell")
    ap.add_argument("--out", default=os.path.join(HERE, "study_dependence_rce_results.md"))
    args = ap.parse_args(argv)
    spec = sd.spec(args.sets)
    cells = {}
    for key in spec.keys:
        name = (key["part"], key["design"], key["rho"], key["error"])
        if args.only and f"{key['design']}:{key['rho']:g}:{key['error']}" not in args.only.split(","):
            continue
        if (args.first is None or key["chunk"] * key["sets"] < args.first) and key["chunk"] * key["sets"] >= args.skip:
            cells.setdefault(name, []).append(key)
    lines = ["# RCE with labels on the study's sets: the candidates (issue 32)", "",
             f"`benchmarks/study_dependence_rce.py`: the sets and seeds of `study_dependence.py` (M = {sd.M}, "
             f"B = N_MC = {sd.N_MC} for the scale tests); % of sets with p ≤ 0.05. `boot` was the RCE row "
             "before, `max` is it now.", "",
             "| part | design | ρ or φ | error | sets | G (median) | " + " | ".join(NAMES) +
             " | screened | row before | row after |",
             "|" + "---|" * (9 + len(NAMES))]
    for (part, design, rho, error), keys in cells.items():
        t0 = time.time()
        ps, gs = [], []
        for key in keys:
            for child in cell_seed(2032, spec.name, key).spawn(int(key["sets"])):
                s_data, s_val = child.spawn(2)
                E, u, labels = sd.make_set(design, rho, error, np.random.default_rng(s_data))
                p, G = one_set(E, u, labels, s_val, sd.N_MC)
                ps.append(p)
                gs.append(G)
        pct = {n: 100 * np.mean([p[n] <= 0.05 for p in ps]) for n in NAMES}
        rows = {n: 100 * np.mean([p[n] <= 0.05 and not p["flag"] for p in ps]) for n in ("boot", "max")}
        flag = 100 * np.mean([p["flag"] for p in ps])
        line = (f"| {part} | {design} | {rho:g} | {error or '–'} | {len(ps)} | {np.median(gs):.0f} | " +
                " | ".join(f"{pct[n]:.1f}" for n in NAMES) + f" | {flag:.1f} | {rows['boot']:.1f} | {rows['max']:.1f} |")
        print(line, f"({time.time() - t0:.0f} s)", flush=True)
        lines.append(line)
    lines.append("")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
