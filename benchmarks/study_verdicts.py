"""Size and power of mcref's validation rules (issue "Verdicts that hold"): the full study.

Runs ``mcref.studies.verdicts`` in four parts and prints the tables docs/guide/verdicts.md and
``notebooks/verdicts.ipynb`` quote, plus the wall time (target: <= 20 min on 2 cores):

A. size of every score and of both verdict rules, every statistic, BCa everywhere:
   u² ~ IG(3, 3), M in {500, 2000, 5000}, true D normal and t(6), test D (normal, t6),
   the empirical D included (300 repeats per dataset);
B. size of the default rule over u shapes and sizes: IG(ν/2, ν/2) with ν in {3, 6, 20},
   M in {500, 2000, 5000} (and 20000 in part B20, fewer repeats), and the nine built-in
   datasets' own u; true D normal;
C. power: u² ~ IG(3, 3), M in {500, 2000, 5000}, E = s·u·ε (s = 0.8, 0.9, 1.1, 1.25),
   reported u ∝ u^γ (γ = 0.5, 1.5), upper half of u scaled by 1.25; the empirical D too;
D. the App. C extrapolation test on calibrated data: rejection rate with the published
   OLS standard error and with the bootstrap one.

Results are kept in ``benchmarks/results/verdicts_*.sqlite`` (re-running reads them back;
``--fresh`` recomputes). Run: ``python benchmarks/study_verdicts.py [--quick] [--fresh]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, show  # noqa: E402

import mcref  # noqa: E402
from mcref import studies  # noqa: E402
from mcref.studies.verdicts import SCENARIOS  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
STATS = ["ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE"]


def settings(quick: bool) -> dict:
    if quick:
        return dict(
            A=dict(u=("IG(6)",), M=(500, 2000), D=("normal", "t6"), n_rep=60, n_boot=300, n_mc=500,
                   n_mc_empirical=100),
            B=dict(u=("IG(3)", "IG(20)", "Diffusion_RF"), M=(500, 2000), n_rep=60, n_boot=300,
                   bca_stats=("ZMS", "RCE"), n_mc=500, n_mc_empirical=100),
            B20=dict(u=("IG(6)",), M=(5000,), n_rep=30, n_boot=200, bca_stats=("ZMS", "RCE"), n_mc=200,
                     n_mc_empirical=50),
            C=dict(u=("IG(6)",), M=(500, 2000), scenario=SCENARIOS[1:], n_rep=40,
                   n_boot=300, bca_stats=("ZMS", "RCE"), n_mc=500, n_mc_empirical=100),
            D=dict(M=(5000,), n_sets=20, n_boot=100),
        )
    return dict(
        A=dict(u=("IG(6)",), M=(500, 2000, 5000), D=("normal", "t6"), n_rep=400, n_boot=1000, n_mc=2000,
               n_mc_empirical=300),
        B=dict(u=("IG(3)", "IG(6)", "IG(20)", *mcref.datasets.names()), M=(500, 2000, 5000), n_rep=400,
               n_boot=1000, bca_stats=("ZMS", "RCE"), n_mc=2000, n_mc_empirical=200),
        B20=dict(u=("IG(3)", "IG(6)", "IG(20)"), M=(20000,), n_rep=200, n_boot=1000, bca_stats=("ZMS", "RCE"),
                 n_mc=1000, n_mc_empirical=100),
        C=dict(u=("IG(6)",), M=(500, 2000, 5000), scenario=SCENARIOS[1:], n_rep=200,
               n_boot=1000, bca_stats=("ZMS", "RCE"), n_mc=2000, n_mc_empirical=300),
        D=dict(M=(5000, 20000), n_sets=100, n_boot=200),
    )


def extrapolation_size(M: int, n_sets: int, n_boot: int, seed: int = 0) -> dict:
    """Rejection rate of the App. C test on calibrated datasets (u lognormal, D normal)."""
    rej_ols = rej_boot = 0
    for i, child in enumerate(np.random.SeedSequence([seed, M]).spawn(n_sets)):
        g = np.random.default_rng(child)
        u = g.lognormal(size=M)
        E = u * g.normal(size=M)
        r = studies.extrapolation(E, u, n_boot=n_boot, seed=i)
        rej_ols += not r.consistent_paper
        rej_boot += not r.consistent
    return {"M": M, "sets": n_sets, "reject_ols": rej_ols / n_sets, "reject_bootstrap": rej_boot / n_sets}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small settings (a minute)")
    ap.add_argument("--fresh", action="store_true", help="recompute (delete the stores first)")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}")
    RESULTS.mkdir(exist_ok=True)
    S = settings(args.quick)
    tag = "_quick" if args.quick else ""
    t0 = time.perf_counter()
    res = {}
    for part in ("A", "B", "B20", "C"):
        store = RESULTS / f"verdicts_{part}{tag}.sqlite"
        if args.fresh and store.exists():
            store.unlink()
        t = time.perf_counter()
        res[part] = studies.verdicts(**S[part], stats=STATS, n_jobs=2, threads_per_cell=1, progress=False,
                                     store=store, seed=2024)
        print(f"part {part}: {res[part].n_computed} cells computed, {res[part].n_loaded} read back, "
              f"{time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    ext = [extrapolation_size(M, S["D"]["n_sets"], S["D"]["n_boot"]) for M in S["D"]["M"]]
    pd.DataFrame(ext).to_csv(RESULTS / f"verdicts_D{tag}.csv", index=False)
    print(f"part D: {time.perf_counter() - t:.0f} s")
    total = time.perf_counter() - t0

    A = res["A"].table
    for D in sorted(set(A["D"])):
        a = A[A["D"] == D]
        show(f"A. size (calibrated data, u^2 ~ IG(3,3), true D = {D}): rejection rate per score",
             a.pivot_table(index=["score", "dist", "M"], columns="stat", values="reject", sort=False)[STATS])
    for part in ("B", "B20"):
        B = res[part]
        show(f"{part}. size of the default verdict (not valid: ZMS/RCE by zeta_BS and the shape screen, the others "
             "by the Monte Carlo test under the empirical D), true D normal", B.rates("verdict", "mc"))
        show(f"{part}. ... of which declared invalid", B.rates("invalid", "mc"))
        show(f"{part}. the published rule (not valid)", B.rates("verdict", "paper"))
    C = res["C"].table
    show("C. power (rejection rate of the default verdict, not valid)",
         C[(C.score == "verdict") & (C.dist == "mc")].pivot_table(index=["scenario", "M"], columns="stat",
                                                                  values="reject", sort=False)[STATS])
    for d in ("normal", "empirical"):
        show(f"C. power of the Monte Carlo test under D = {d}",
             C[(C.score == "p") & (C.dist == d)].pivot_table(index=["scenario", "M"], columns="stat",
                                                             values="reject", sort=False)[STATS])
    show("D. App. C extrapolation test on calibrated data (rejection rate)", pd.DataFrame(ext))
    print(f"\ntotal wall time: {total / 60:.1f} min (computed now; stores read back cost nothing)")


if __name__ == "__main__":
    main()
