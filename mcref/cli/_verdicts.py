"""The verdict commands: ``mcref validate`` (the validation table) and ``mcref report`` (the
diagnostics figure, the HTML report).

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

from ..report._render import atomic_path
from ..verdict._validate import RULES
from ._common import (AUTO_MC, boot_of, data_args, DEMO_STATS, dependence_of, dists_of, features_of, load_data, seed_of,
                      stats_list)
from ._common import dependence_args, precompile_if_cold
from ._predictive import cmd_predictive, predictive_args

__all__ = ["cmd_validate", "cmd_report", "parser_validate", "parser_report"]


def cmd_validate(args) -> int:
    from ..verdict._validate import validate

    tolerance = tolerance_of(args.tolerance)
    if tolerance is not None and (args.samples is not None or args.quantiles is not None
                                  or args.intervals is not None):
        raise ValueError("--tolerance goes with the validation table of E and u, not with --samples, --quantiles "
                         "or --intervals")
    if args.samples is not None or args.quantiles is not None or args.intervals is not None:
        return cmd_predictive(args, dict(stats=stats_list(args.stat, DEMO_STATS), dists=dists_of(args),
                                         n_bins=args.bins, n_boot=boot_of(args), n_mc=args.mc, seed=seed_of(args),
                                         rule=args.rule, min_count=args.min_count, shrink=args.shrink,
                                         binning=args.binning, log=not args.linear_bins, combine=args.combine))
    if args.levels is not None:
        raise ValueError("--levels goes with --samples, --quantiles or --intervals")
    if args.swaps is not None:
        raise ValueError("--swaps goes with --samples (the members swapped with y)")
    ds = load_data(args)
    dists = dists_of(args) if args.dists is not None else None  # None: validate's default for this M
    x = features_of(args, ds)
    dep = dependence_of(args, ds)
    import warnings

    from ..core._warnings import FewReplicatesWarning, TieOrderWarning

    precompile_if_cold(dependent=bool(dep), m=ds.E.size)
    with warnings.catch_warnings():  # both are notes of the printed table
        warnings.simplefilter("ignore", FewReplicatesWarning)
        warnings.simplefilter("ignore", TieOrderWarning)
        tab = validate(ds.E, ds.u, x=x, stats=stats_list(args.stat, DEMO_STATS), dists=dists, n_bins=args.bins,
                       n_boot=args.boot, n_mc=args.mc, seed=seed_of(args), name=ds.name, rule=args.rule,
                       min_count=args.min_count, shrink=args.shrink, binning=args.binning,
                       log=not args.linear_bins, combine=args.combine, tolerance=tolerance, **dep)
    if args.json:
        print(tab.to_json())
    elif args.csv:
        print(tab.to_csv(), end="")
    else:
        print(tab.explained() if args.explain else tab.wide_table() if args.wide else tab)
    return 0


def tolerance_of(text: str | None):
    """``--tolerance``: a number δ (every statistic of the table with a margin), or margins one by
    one, ``ZMS=0.05,ENCE=0.1`` (validate's ``tolerance`` as a dict); checked by validate."""
    if text is None:
        return None
    if "=" not in text:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"--tolerance must be a number in (0, 1) or STAT=MARGIN,... (e.g. ZMS=0.05,ENCE=0.1), "
                             f"got {text!r}") from None
    out = {}
    for part in text.split(","):
        key, _, val = part.partition("=")
        try:
            out[key.strip()] = float(val)
        except ValueError:
            raise ValueError(f"--tolerance: {part!r} is not STAT=MARGIN with a number MARGIN (e.g. "
                             "ZMS=0.05,ENCE=0.1)") from None
    return out


def cmd_report(args) -> int:
    """The diagnostics figure (and, with --html, a page with it and the validation table)."""
    import os
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..report._html import write_dataset_report
    from ..verdict._validate import validate
    from ..core._warnings import FewReplicatesWarning, TieOrderWarning
    from ..report.plots import plot_report

    ds = load_data(args)
    seed = seed_of(args)
    x = None if args.no_x else ds.x
    if args.html:  # checked before any work (cli.main); _html writes the directory atomically
        dep = dependence_of(args, ds)
        precompile_if_cold(dependent=bool(dep), m=ds.E.size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewReplicatesWarning)
            warnings.simplefilter("ignore", TieOrderWarning)
            tab = validate(ds.E, ds.u, stats=stats_list(args.stat, DEMO_STATS), n_boot=args.boot, n_mc=args.mc,
                           seed=seed, name=ds.name, min_count=args.min_count, shrink=args.shrink, **dep)
        write_dataset_report(tab, ds.E, ds.u, x, args.html, seed=seed)
        print(f"{ds.name}: {tab.headline()}" if ds.name else tab.headline())  # the answer first
        print(f"wrote {os.path.join(args.html, 'report.png')}\nwrote {os.path.join(args.html, 'index.html')}\n"
              f"seed={seed} (--seed {seed} repeats it)")
        return 0
    out = args.out or "report.png"
    with atomic_path(out, what="--out") as tmp:
        fig = plot_report(ds.E, ds.u, x, name=ds.name, seed=seed)
        fig.savefig(tmp, format=os.path.splitext(out)[1].lstrip(".") or "png", dpi=90)
    plt.close(fig)
    print(f"wrote {out} (seed={seed}: --seed {seed} repeats it)")
    return 0


def parser_validate(sub) -> None:
    sp = sub.add_parser("validate", help="full validation table (references, zeta-scores, verdicts)",
                        epilog="Predictive forms: mcref validate preds.parquet --samples 's_*' --ref y (ensemble "
                        "members); mcref validate preds.csv --quantiles q05,q50,q95 --ref y (levels from the names, "
                        "or --levels 0.05,0.5,0.95); mcref validate preds.csv --intervals lo50:hi50,lo90:hi90 --ref y "
                        "(prediction intervals).")
    data_args(sp)
    sp.add_argument("--mc", type=int, default=None,
                    help="Monte Carlo repeats, a fixed test (default: sequential tests that stop when decided, at most "
                         "10000 up to M = 20000 points, fewer above, at least 2000: mcref.default_n_mc)")
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation up to M = 100000 points, permutation above; the default rule adds "
                    "permutation when missing; --dists permutation: the same verdicts without the comparison columns)")
    sp.add_argument("--explain", action="store_true", help="print every column and a legend of them")
    sp.add_argument("--wide", action="store_true",
                    help="every column: references, p-values and zeta-scores under each D, D-sensitivity")
    sp.add_argument("--rule", default=RULES[0], choices=list(RULES),
                    help="verdict of simulated-reference statistics and the joint verdict: conditional (default: "
                         "permutation test of consistency, Sidak-combined with the scale test in the joint verdict), "
                         "mc (Monte Carlo test under the empirical D, the default before) or the published "
                         "zeta_Sim rule; the published verdict is always printed")
    sp.add_argument("--combine", default="minp", choices=["minp", "fisher", "cauchy"],
                    help="how the joint verdict combines the statistics' Monte Carlo p-values (default minp)")
    sp.add_argument("--x-column", metavar="NAMES",
                    help="comma-separated feature columns of FILE (or the prediction column, for the predicted "
                         "value V): adaptivity rows ENCE|NAME, ZMSE|NAME over bins of each, tested by permutation "
                         "and part of the joint verdict; text columns are categorical (one bin per level)")
    sp.add_argument("--tolerance", metavar="DELTA",
                    help="equivalence margins (docs/methods.md, 'Equivalence margins'): a relative error DELTA of "
                         "the scale of u (ZMS in [(1-DELTA)^2, (1+DELTA)^2], RCE in [-DELTA, DELTA], ENCE <= DELTA, "
                         "ZMSE <= 2 ln(1+DELTA)), or STAT=MARGIN,...; column equiv: 'within' when the 1-2*alpha "
                         "BCa interval lies inside the margin (TOST)")
    dependence_args(sp)
    predictive_args(sp)
    sp.set_defaults(func=cmd_validate)


def parser_report(sub) -> None:
    sp = sub.add_parser("report", help="diagnostics figure (consistency along u, adaptivity along x)",
                        description="One figure with the conditional-calibration diagnostics: E vs u, calibration "
                        "curve, reliability diagram, <Z^2> and coverage per bin of u and of x, confidence curve.")
    data_args(sp)
    sp.add_argument("--out", help="figure file (default report.png; .png, .pdf, .svg)")
    sp.add_argument("--html", metavar="DIR", help="write DIR/report.png and DIR/index.html with the validation table")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of the table (--html) " + AUTO_MC)
    sp.add_argument("--no-x", action="store_true", help="ignore the data set's x (no adaptivity panels)")
    dependence_args(sp)
    sp.set_defaults(func=cmd_report)
