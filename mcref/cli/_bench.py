"""``mcref bench``: validate many datasets (the benchmark summary, CSV, HTML report).

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

from .. import datasets
from ..verdict._validate import RULES
from ._common import (add_dask_options, add_progress_flag, AUTO_MC, BINS_HELP, DEMO_STATS, precompile_if_cold,
                      stats_list)

__all__ = ["cmd_bench", "parser_bench"]


def cmd_bench(args) -> int:
    """Validate many data sets at once (:func:`mcref.benchmark`): files, globs, directories, built-in sets."""
    import warnings

    from ..workflows._benchmark import benchmark
    from ..core._warnings import FewReplicatesWarning

    sources = list(args.paths)
    for d in args.dataset or []:
        sources += [x.strip() for x in d.split(",") if x.strip()]
    if not sources:
        raise ValueError("give one or more PATHs (CSV files, globs, directories) or --dataset NAME "
                         "(or --dataset all; built-in: " + ", ".join(datasets.names()) + ")")
    opts = {"n_boot": args.boot, "n_mc": args.mc, "n_bins": args.bins, "min_count": args.min_count,
            "shrink": args.shrink, "rule": args.rule}
    if args.dists:
        opts["dists"] = [d.strip() for d in args.dists.split(",") if d.strip()]
    precompile_if_cold(args.n_jobs, args.backend)
    with warnings.catch_warnings():  # the summary says "indicative only"
        warnings.simplefilter("ignore", FewReplicatesWarning)
        res = benchmark(sources, stats=stats_list(args.stat, DEMO_STATS), store=args.store, E=args.E, u=args.u,
                        pred=args.pred, ref=args.ref, u_is_variance=args.u_is_variance, n_jobs=args.n_jobs,
                        backend=args.backend, scheduler=args.scheduler, connect_timeout=args.connect_timeout,
                        seed=args.seed,
                        progress=args.progress is not False, x=args.x_column, by=args.by, pairs=args.pairs,
                        adaptivity=args.x_column is not None, groups=args.groups, **opts)
    print(res)
    if args.csv:
        res.to_csv(args.csv)
        print(f"wrote {args.csv}")
    if args.html:
        import matplotlib

        matplotlib.use("Agg")
        print(f"wrote {res.to_html(args.html, diagnostics=not args.no_diagnostics)}")
    return 0


def parser_bench(sub) -> None:
    """The ``mcref bench`` subcommand."""
    sp = sub.add_parser(
        "bench", help="validate many data sets at once (parallel, resumable, HTML report)",
        epilog="Many models in one file: mcref bench preds.parquet --by model --pred pred --ref y --u sigma; "
        "mcref bench preds.csv --pairs 'A=pred_A:sigma_A,B=pred_B:sigma_B' --ref y.",
        description="Validate every data set given (CSV files, globs, directories of *.csv, built-in sets) with "
        "the same settings, in parallel; one summary table of verdicts. With --store, finished data sets are kept: "
        "re-run the same command to resume, or with more data sets to compute only the new ones.")
    sp.add_argument("paths", nargs="*", metavar="PATH",
                    help="CSV, Parquet or Feather file, glob ('runs/*.csv') or directory")
    sp.add_argument("--dataset", action="append", metavar="NAME",
                    help="built-in data set(s), comma-separated or repeated; 'all': the nine")
    sp.add_argument("--stat", "--stats", dest="stat",
                    help="comma-separated statistics (default " + ",".join(DEMO_STATS) + ")")
    sp.add_argument("--store", help="SQLite results file: finished data sets are kept, a rerun resumes")
    sp.add_argument("--html", metavar="DIR", help="write a static report (index.html and figures) to DIR")
    sp.add_argument("--no-diagnostics", action="store_true", help="--html without the per-data-set figures")
    sp.add_argument("--csv", metavar="FILE", help="write the table (one row per data set and statistic) to FILE")
    sp.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    sp.add_argument("--backend", default="loky", choices=["loky", "threading", "sequential", "dask"],
                    help="where data sets run (default loky processes; dask: a Dask cluster)")
    add_dask_options(sp)
    sp.add_argument("--seed", type=int, default=None,
                    help="benchmark seed (default: the store's, else drawn from the OS and printed)")
    sp.add_argument("--boot", type=int, default=None,
                    help="bootstrap replicates (default: 5000 up to M = 200000 points, fewer above: mcref.default_n_boot)")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats " + AUTO_MC)
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation)")
    sp.add_argument("--bins", type=int, default=None, help=BINS_HELP + ", per data set as mcref validate")
    sp.add_argument("--min-count", type=int, default=30, help="fewest points per bin (default 30)")
    sp.add_argument("--shrink", action="store_true", help="fewer bins instead of failing when M/bins < --min-count")
    sp.add_argument("--rule", default=RULES[0], choices=list(RULES),
                    help=f"verdict rule (default {RULES[0]}; mc: the Monte Carlo test under the empirical D)")
    sp.add_argument("--E", help="error column of the files (default: E or error)")
    sp.add_argument("--u", help="uncertainty column of the files (default: u, uE or uncertainty)")
    sp.add_argument("--pred", help="prediction column (E = ref - pred)")
    sp.add_argument("--ref", help="reference-value column (E = ref - pred)")
    sp.add_argument("--u-is-variance", action="store_true", help="the u column holds variances")
    many = sp.add_mutually_exclusive_group()
    many.add_argument("--by", metavar="COLUMN",
                      help="many models in one long table: each file is split by the values of COLUMN (e.g. "
                           "--by model), each group a data set named by its value, read with --E/--u or "
                           "--pred/--ref; a group's row is the row of that group run alone")
    many.add_argument("--pairs", metavar="SPEC",
                      help="many models in one wide table: one data set per column pair, "
                           "'A=pred_A:sigma_A,B=pred_B:sigma_B' (NAME= optional); with --ref the first column of "
                           "a pair holds predictions (E = ref - pred), else errors")
    sp.add_argument("--x-column", metavar="NAME",
                    help="feature column of the files (numbers, or text: categorical, as mcref validate reads it): "
                         "with it, every data set is validated with its adaptivity "
                         "rows ENCE|NAME, ZMSE|NAME (built-in sets: their x, rows ENCE|x)")
    sp.add_argument("--groups", metavar="COLUMN",
                    help="group column of the files (dependent rows: conformers of a molecule, frames of a "
                         "trajectory): intervals and tests resample and permute whole groups")
    add_progress_flag(sp)
    sp.set_defaults(func=cmd_bench)
