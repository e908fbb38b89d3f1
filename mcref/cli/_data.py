"""The commands on one dataset's statistics: ``mcref stats``, ``mcref fit``, ``mcref decimate``,
``mcref demo`` and ``mcref datasets``.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import argparse
import time

from .. import datasets
from ..report._render import csv_text, json_text, n_mc_text
from ._common import (boot_of, add_progress_flag, AUTO_MC, bins_of, data_args, DEMO_DISTS, DEMO_STATS, load_data, print_stats, seed_of,
                      precompile_if_cold, stats_list, stats_table)

__all__ = ["cmd_stats", "cmd_fit", "cmd_decimate", "cmd_demo", "cmd_datasets", "parser_stats", "parser_fit",
           "parser_decimate", "parser_demo", "parser_datasets"]


def cmd_stats(args) -> int:
    ds = load_data(args)
    seed = seed_of(args)
    rows = stats_table(ds, stats_list(args.stat, DEMO_STATS), bins_of(args, ds), boot_of(args), seed, args.method,
                        args.min_count, args.shrink, args.binning, not args.linear_bins)
    for r in rows:
        r["seed"] = seed
    if args.json:
        print(json_text(rows))
    elif args.csv:
        print(csv_text(rows), end="")
    else:
        print(f"{ds.name}: M={ds.M}, B={boot_of(args)}, seed={seed}")
        print_stats(rows)
    return 0


def cmd_fit(args) -> int:
    from .._distfit import distfit

    ds = load_data(args)
    seed = seed_of(args)
    fit = distfit(ds.E, ds.u, n_boot=boot_of(args), seed=seed)
    if args.json:
        row = fit.as_dict()
        row = {"dataset": ds.name, "seed": seed, **row, "se_method": fit.se_method, "ci": fit.ci,
               "at_bound": fit.at_bound}
        print(json_text(row))
    elif args.csv:
        df = fit.to_frame(ds.name)
        df.insert(0, "seed", seed)
        print(df.to_csv(index_label="dataset"), end="")
    else:
        print(f"{ds.name} (seed={seed}): {fit}")
        if fit.t_nu <= 2:
            print(f"note: t_nu = {fit.t_nu:.3g} <= 2: no unit-variance t(nu) exists, so --dists t(fit) is refused "
                  "for this set; use empirical")
    return 0


def cmd_decimate(args) -> int:
    from ..workflows._decimation import decimation

    ds = load_data(args)
    seed = seed_of(args)
    res = decimation(ds.E, ds.u, stats_list(args.stat, ("ZMS", "RCE")), max_fraction=args.max_fraction,
                     steps=args.steps, n_boot=boot_of(args), n_bins=bins_of(args, ds), min_count=args.min_count, seed=seed)
    if args.csv:
        df = res.to_frame()
        df.insert(0, "seed", seed)
        df.insert(0, "dataset", ds.name)
        print(df.to_csv(index=False), end="")
        return 0
    if args.json:
        print(json_text({"dataset": ds.name, "seed": seed, "leaves": res.leaves, "first_exit": res.first_exit,
                         "interval": res.interval, "points": res.to_frame().to_dict(orient="records")}))
    else:
        import pandas as pd

        wide = res.to_frame().pivot(index=["fraction", "n_removed"], columns="stat", values="delta")
        with pd.option_context("display.max_rows", 400, "display.width", 160):
            print(f"{ds.name} (seed={seed}): delta theta = theta(f) - theta(0)\n{wide.to_string()}\n")
        print(res)
    return 0


def cmd_demo(args) -> int:
    t0 = time.perf_counter()
    seed = seed_of(args)
    if args.validate:  # a benchmark run of the nine built-in sets
        import warnings

        from ..workflows._benchmark import benchmark
        from ..core._warnings import FewReplicatesWarning

        precompile_if_cold(args.n_jobs)
        with warnings.catch_warnings():  # the summary says "indicative only"
            warnings.simplefilter("ignore", FewReplicatesWarning)
            # the permutation D alone: the verdicts printed are bit for bit those of the four default D
            # (the normal, t(6) and empirical D fill only the detailed table's comparison columns); the
            # sets are small, so they run on threads of this process: a worker process would spend ~2 s
            # importing and loading the cached kernels (the table is the same for any backend)
            res = benchmark("all", n_boot=boot_of(args), n_mc=args.mc, seed=seed, n_jobs=args.n_jobs,
                            backend="threading", progress=args.progress is not False, dists=DEMO_DISTS)
        print(res)
    else:
        rows = []
        for name in datasets.names():
            ds = datasets.load(name)
            rows += stats_table(ds, list(DEMO_STATS), 20, boot_of(args), seed, "bca")
        print_stats(rows)
    print(f"\n{len(datasets.names())} data sets in {time.perf_counter() - t0:.1f} s "
          f"(B={boot_of(args)}{', N_MC=' + n_mc_text(args.mc) if args.validate else ''}, seed={seed}: --seed {seed} "
          "repeats it)")
    if args.validate:
        print("(one data set in detail: mcref validate --dataset NAME; all of them as a report: "
              "mcref bench --dataset all --html DIR)")
    return 0


def cmd_datasets(args) -> int:
    for name in datasets.names():
        ds = datasets.load(name)
        print(f"{name:26s} M={ds.M:6d}  x={'yes' if ds.x is not None else 'no'}")
    return 0


def parser_stats(sub) -> None:
    sp = sub.add_parser("stats", help="statistics with bootstrap confidence intervals")
    data_args(sp)
    sp.add_argument("--method", default="bca", choices=["bca", "percentile", "basic"])
    sp.set_defaults(func=cmd_stats)


def parser_fit(sub) -> None:
    sp = sub.add_parser("fit", help="distribution fits of u^2, E^2, Z^2 (IG, F, KS) and Z (Student-t, ML)")
    data_args(sp)
    sp.set_defaults(func=cmd_fit, boot=100)
    for a in sp._actions:
        if a.dest == "boot":
            a.help = "bootstrap replicates for the uncertainties (default 100; 0: none)"
        if a.dest in ("stat", "bins"):
            a.help = argparse.SUPPRESS


def parser_decimate(sub) -> None:
    sp = sub.add_parser("decimate", help="remove the largest u step by step; does a statistic leave its CI?")
    data_args(sp)
    sp.add_argument("--max-fraction", type=float, default=0.1, help="largest fraction removed (default 0.1)")
    sp.add_argument("--steps", type=int, default=21, help="number of fractions from 0 (default 21)")
    sp.set_defaults(func=cmd_decimate)


def parser_demo(sub) -> None:
    sp = sub.add_parser("demo", help="run on the nine built-in literature data sets",
                        description="Validate the nine built-in data sets of P. Pernot's papers (statistics, "
                        "BCa intervals, the Monte Carlo tests that decide, verdicts). The verdicts are those of "
                        "mcref validate; its comparison columns (references simulated from normal, Student t(6) "
                        "and resampled errors, and the published rule that reads them) are left out: mcref "
                        "validate --dataset NAME --wide shows them.")
    sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of the references " + AUTO_MC)
    sp.add_argument("--seed", type=int, default=None,
                    help="random seed (default: drawn from the OS and printed, so the run can be repeated)")
    sp.add_argument("--stats-only", dest="validate", action="store_false",
                    help="only the statistics with BCa intervals (no simulated references)")
    sp.add_argument("--n-jobs", type=int, default=-1,
                    help="data sets at once, on threads of this process (default -1: every core)")
    add_progress_flag(sp)
    sp.set_defaults(func=cmd_demo, validate=True)


def parser_datasets(sub) -> None:
    sp = sub.add_parser("datasets", help="list the built-in data sets")
    sp.set_defaults(func=cmd_datasets)
