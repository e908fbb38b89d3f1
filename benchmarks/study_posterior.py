"""Issue 62: size and power of :func:`mcref.posterior.from_posterior`, beside sbi's choices.

Sets of :func:`mcref.synthetic.gaussian_linear_posterior` (N simulations, S draws, d parameters),
each checked by ``from_posterior`` (its prior draws given, so that the sharpness rows read);
per set we record whether each part rejects at α = 0.05, whether the one verdict does, and what
sbi would conclude on the same ranks:

* ``sbi_sbc``: sbi's ``check_sbc``, one KS test per parameter (``scipy.stats.kstest`` of the
  normalized ranks against U(0, 1)) with Bonferroni: min_j p_j < α/d;
* ``sbi_tarp_f``: the KS test of TARP's f against U(0, 1) (what the issue measured beside sbi's
  ``check_tarp``, whose two-sample KS between the ECP curve and the α grid is not a test of size α).

Scenarios: ``calibrated`` (the size; every cell of d = 2, 5, 10, S = 100, 1000, N = 200, 2000),
and, for the power (d = 5, S = 100, N = 200 by default): ``narrow`` (scale 0.8), ``wide`` (1.25),
``biased`` (0.3 posterior sd in parameter 0), ``corr`` (ρ = 0.6 between parameters 0 and 1 where
it is 0: the marginals are right), ``prior`` (the prior returned as the posterior: calibrated; the
sharpness rows must say uninformative). Where the power is ≥ 90 %, the finding in words should
be right in ≥ 90 % of the sets: overconfident / underconfident / biased high in parameter 0.

Resumable: every cell (scenario, d, S, N, block of sets) is a cell of the study runner
(:func:`mcref.studies.run_study`) committed to ``--store`` as it finishes; rerun the same
command to resume, or with a larger ``--sets`` to extend. Binomial 95 % intervals are
Clopper-Pearson.

Run: ``python benchmarks/study_posterior.py [--sets 20] [--swaps 199] [--store FILE] [--full]``
(quick defaults: 20 sets per cell, N = 2000 and S = 1000 cells of the size grid only with
``--full``; the issue wants 1000 sets per cell: ``--sets 1000 --full``, hours on 2 cores).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy import stats as st

from mcref.posterior import from_posterior
from mcref.studies import StudySpec, run_study
from mcref.synthetic import gaussian_linear_posterior

ALPHA = 0.05
SCENARIOS = {"calibrated": {}, "narrow": {"scale": 0.8}, "wide": {"scale": 1.25}, "biased": {"shift": 0.3},
             "corr": {"corr": 0.6}, "prior": {"prior_as_posterior": True}}
#: the finding that is right for each scenario (parameter 0 for the bias), None: no direction
RIGHT = {"narrow": "overconfident", "wide": "underconfident", "biased": "biased high"}
#: the overall direction (``check.direction``, with the parameter's index) that is right for each scenario
RIGHT_OVERALL = {"narrow": "overconfident", "wide": "underconfident", "biased": "biased high 0",
                 "corr": "wrong dependence"}
BLOCK = 10  # sets per cell of the store


#: the parts of the verdict, by kind and statistic (per-parameter ones counted over the d parameters)
PARTS = ("param KS", "param chi2", "projections KS (max)", "projections chi2 (max)", "TARP KS", "depth KS")


def _parts(check) -> dict[str, int | None]:
    """Per part of :data:`PARTS`: how many of its tests reject at α (per parameter: of d), None if absent."""
    out: dict[str, int | None] = {p: None for p in PARTS}
    for part in check.joint:
        if part.kind == "parameter":
            key = "param KS" if part.name.endswith(" KS") else "param chi2"
            out[key] = (out[key] or 0) + int(part.p <= ALPHA)
        elif part.name in out:
            out[part.name] = int(part.p <= ALPHA)
    return out


def _finding0(check) -> str:
    return str(check.parameters[0].direction)


def _direction(check) -> str:
    """The check's overall direction, with its parameter's index when it names one (``"biased high 0"``)."""
    if check.direction_parameter is None:
        return str(check.direction)
    return f"{check.direction} {check.names.index(check.direction_parameter)}"


def _uninformative(check) -> bool:
    return any("uninformative" in f for f in check.findings)


def cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """``BLOCK`` sets of one (scenario, d, S, N); one row per set."""
    rows = []
    kw = SCENARIOS[key["scenario"]]
    for j, ss in enumerate(seed_seq.spawn(BLOCK)):
        set_seed, check_seed = ss.spawn(2)
        truth, draws, ex = gaussian_linear_posterior(key["N"], key["S"], d=key["d"], seed=set_seed, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check = from_posterior(truth, draws, prior_draws=ex["prior_draws"], n_swaps=params["swaps"],
                                   seed=check_seed, directional=bool(params.get("directional", True)))
        ks = [st.kstest(check.ranks[:, k], "uniform").pvalue for k in range(key["d"])]
        row = {"set": key["block"] * BLOCK + j, "verdict": int(check.verdict == "invalid"), "p": float(check.pvalue),
               "sbi_sbc": int(min(ks) < ALPHA / key["d"]),
               "sbi_tarp_f": int(st.kstest(np.asarray(check.tarp.f), "uniform").pvalue < ALPHA),
               "finding0": _finding0(check), "direction": _direction(check),
               "uninformative": _uninformative(check)}
        row.update(_parts(check))
        rows.append(row)
    return rows


def grid(full: bool, n_sets: int, d_power: int = 5, scenarios=None) -> list[dict]:
    blocks = range(max(1, -(-n_sets // BLOCK)))
    keys = []
    for d in (2, 5, 10) if scenarios is None else (d_power,) if "calibrated" in scenarios else ():
        for S in (100, 1000):
            for N in (200, 2000):
                if full or (S == 100 and N == 200):
                    keys += [{"scenario": "calibrated", "d": d, "S": S, "N": N, "block": b} for b in blocks]
    for sc in SCENARIOS:
        if sc != "calibrated" and (scenarios is None or sc in scenarios):
            keys += [{"scenario": sc, "d": d_power, "S": 100, "N": 200, "block": b} for b in blocks]
    return keys


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else st.beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else st.beta.ppf(0.975, k + 1, n - k)
    return float(lo), float(hi)


def _rate(col, per: int = 1) -> str:
    """Rejections in % with the Clopper-Pearson interval; ``per`` tests per set (the d parameters)."""
    v = np.asarray(col, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return "-"
    k, n = int(v.sum()), v.size * per
    lo, hi = clopper_pearson(k, n)
    return f"{100 * k / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def summary(table) -> None:
    print(f"rejection rates in % at α = {ALPHA} [Clopper-Pearson 95 %]; n sets per row; the param columns "
          "per parameter test (n·d tests)\n")
    head = ["scenario", "d", "S", "N", "n", "verdict", "sbi_sbc", "sbi_tarp_f", *PARTS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (sc, d, S, N), g in table.groupby(["scenario", "d", "S", "N"], sort=False):
        cells = [sc, str(d), str(S), str(N), str(len(g)), _rate(g["verdict"]), _rate(g["sbi_sbc"]),
                 _rate(g["sbi_tarp_f"]), *[_rate(g[p], d if p.startswith("param") else 1) for p in PARTS]]
        print("| " + " | ".join(cells) + " |")
    print("\noverall direction (check.direction), parameter 0's finding and the sharpness reading, power scenarios"
          " (right: of all sets; | of the sets the verdict rejects):")
    for (sc, d), g in table[table.scenario != "calibrated"].groupby(["scenario", "d"], sort=False):
        rej = g[g["verdict"] == 1]
        words = g["direction"].value_counts().to_dict() if "direction" in g else {}
        right = RIGHT_OVERALL.get(sc)
        ok = (f"; right ({right}): {_rate(g['direction'] == right)} | {_rate(rej['direction'] == right)}"
              if right and "direction" in g else "")
        print(f"  {sc} d={d}: direction {words}{ok}")
        right0 = RIGHT.get(sc)
        ok0 = (f"; right ({right0}): {_rate(g['finding0'] == right0)} | {_rate(rej['finding0'] == right0)}"
               if right0 else "")
        print(f"    parameter 0: {g['finding0'].value_counts().to_dict()}{ok0}; 'uninformative' said in "
              f"{_rate(g['uninformative'])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=20, help="sets per cell (rounded up to blocks of 10)")
    ap.add_argument("--swaps", type=int, default=199, help="swapped sets of each check's verdict")
    ap.add_argument("--store", default="study_posterior.sqlite", help="the study's store (resumable)")
    ap.add_argument("--full", action="store_true", help="every cell of the size grid (N = 2000, S = 1000 too)")
    ap.add_argument("--seed", type=int, default=62)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--d-power", type=int, default=5, help="d of the power scenarios")
    ap.add_argument("--scenarios", default=None, help="comma-separated scenarios to run (default: all)")
    ap.add_argument("--no-directional", action="store_true",
                    help="from_posterior(directional=False): the verdict without the per-parameter skew and spread")
    a = ap.parse_args()
    scen = None if a.scenarios is None else a.scenarios.split(",")
    params = {"swaps": a.swaps, "block": BLOCK, "rows": 3}
    if a.no_directional:
        params["directional"] = False
    spec = StudySpec("posterior_size_power", params,
                     grid(a.full, a.sets, a.d_power, scen), cell)
    info = run_study(spec, seed=a.seed, store=a.store, n_jobs=a.n_jobs, progress=True)
    print(f"{info.n_cells} cells ({info.n_loaded} from {a.store}), {info.seconds:.0f} s\n")
    summary(info.table)


if __name__ == "__main__":
    main()
