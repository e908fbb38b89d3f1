"""Command-line interface: ``mcref stats``, ``mcref validate``, ``mcref fit``, ``mcref decimate``,
``mcref recalibrate``, ``mcref report``, ``mcref demo``, ``mcref bench``, ``mcref study``, ``mcref datasets``.

The CLI calls only the public API. Bad input prints one clear line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any, Sequence


from . import datasets
from ._bootstrap import bootstrap_many
from ._render import atomic_path, csv_text, json_text, n_mc_text, text_table
from ._recalibrate import METHODS as _RECAL_METHODS
from ._validate import RULES
from .stats import STATISTICS

DEMO_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")


def _load(args) -> datasets.Dataset:
    if (args.file is None) == (args.dataset is None):
        raise ValueError("give either a FILE or --dataset NAME (one of: " + ", ".join(datasets.names()) + ")")
    if args.dataset is not None:
        return datasets.load(args.dataset)
    return datasets.from_file(args.file, E=args.E, u=args.u, pred=args.pred, ref=args.ref,
                              u_is_variance=args.u_is_variance, delimiter=getattr(args, "delimiter", None))


def _bins(args, ds: datasets.Dataset) -> int:
    """--bins, or the default for this dataset (20, fewer for small data: binning.default_n_bins)."""
    if args.bins is not None:
        return args.bins
    from .binning import default_n_bins

    return default_n_bins(ds.M, args.min_count)


def _stats_list(s: str | None, default: Sequence[str]) -> list[str]:
    if not s:
        return list(default)
    return [x.strip() for x in s.split(",") if x.strip()]


def _fmt(x: float) -> str:
    return f"{x:.5g}" if math.isfinite(x) else str(x)


def _stats_table(ds: datasets.Dataset, stats: list[str], n_bins: int, n_boot: int, seed, method: str,
                 min_count: int = 30, shrink: bool = False, binning: str = "equal", log: bool = True) -> list[dict]:
    import warnings

    from ._warnings import BiasedIntervalWarning

    with warnings.catch_warnings():  # marked in the table instead ("!")
        warnings.simplefilter("ignore", BiasedIntervalWarning)
        res = bootstrap_many(stats, ds.E, ds.u, n_boot=n_boot, n_bins=n_bins, seed=seed, method=method,
                             min_count=min_count, shrink=shrink, binning=binning, log=log)
    return [{"dataset": ds.name, "stat": r.name, "estimate": r.estimate, "bias": r.bias, "se": r.se, "low": r.low,
             "high": r.high, "method": r.method, "n_boot": r.n_boot,
             "excludes_estimate": not r.low <= r.estimate <= r.high} for r in res.values()]


def _print_stats(rows: list[dict]) -> None:
    head = ["dataset", "stat", "estimate", "bias", "se", "95% CI", "method"]
    body = [[r["dataset"], r["stat"], _fmt(r["estimate"]), _fmt(r["bias"]), _fmt(r["se"]),
             f"[{_fmt(r['low'])}, {_fmt(r['high'])}]" + ("!" if r["excludes_estimate"] else ""), r["method"]]
            for r in rows]
    print("\n".join(text_table(head, body)))
    if any(r["excludes_estimate"] for r in rows):
        print("!: the interval excludes its own estimate (strong finite-sample bias of the statistic)")


def _seed(args) -> int:
    """The run's seed: --seed, or one drawn from the OS (printed with the results)."""
    if getattr(args, "seed", None) is None:
        from ._validation import fresh_seed

        args.seed = fresh_seed()
    return args.seed


def cmd_stats(args) -> int:
    ds = _load(args)
    seed = _seed(args)
    rows = _stats_table(ds, _stats_list(args.stat, DEMO_STATS), _bins(args, ds), args.boot, seed, args.method,
                        args.min_count, args.shrink, args.binning, not args.linear_bins)
    for r in rows:
        r["seed"] = seed
    if args.json:
        print(json_text(rows))
    elif args.csv:
        print(csv_text(rows), end="")
    else:
        print(f"{ds.name}: M={ds.M}, B={args.boot}, seed={seed}")
        _print_stats(rows)
    return 0


def _dists(args) -> list[str]:
    """--dists as a list (default: validate's), refused when given empty."""
    from ._validate import VALIDATE_DISTS

    if args.dists is not None and not args.dists.strip(", "):
        raise ValueError("--dists is empty: give comma-separated distributions (e.g. normal,t6,empirical) or "
                         "leave it out for the default")
    return [d.strip() for d in args.dists.split(",") if d.strip()] if args.dists else list(VALIDATE_DISTS)


def cmd_validate(args) -> int:
    from ._validate import validate

    ds = _load(args)
    dists = _dists(args)
    import warnings

    from ._warnings import FewReplicatesWarning, TieOrderWarning

    with warnings.catch_warnings():  # both are notes of the printed table
        warnings.simplefilter("ignore", FewReplicatesWarning)
        warnings.simplefilter("ignore", TieOrderWarning)
        tab = validate(ds.E, ds.u, stats=_stats_list(args.stat, DEMO_STATS), dists=dists, n_bins=args.bins,
                       n_boot=args.boot, n_mc=args.mc, seed=_seed(args), name=ds.name, rule=args.rule,
                       min_count=args.min_count, shrink=args.shrink, binning=args.binning,
                       log=not args.linear_bins, combine=args.combine)
    if args.json:
        print(tab.to_json())
    elif args.csv:
        print(tab.to_csv(), end="")
    else:
        print(tab.explained() if args.explain else tab.wide_table() if args.wide else tab)
    return 0


def cmd_fit(args) -> int:
    from ._distfit import distfit

    ds = _load(args)
    seed = _seed(args)
    fit = distfit(ds.E, ds.u, n_boot=args.boot, seed=seed)
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
    from ._decimation import decimation

    ds = _load(args)
    seed = _seed(args)
    res = decimation(ds.E, ds.u, _stats_list(args.stat, ("ZMS", "RCE")), max_fraction=args.max_fraction,
                     steps=args.steps, n_boot=args.boot, n_bins=_bins(args, ds), min_count=args.min_count, seed=seed)
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


def cmd_recalibrate(args) -> int:
    """Fit a recalibration map (:func:`mcref.recalibrate`); with --cv K, validate it on held-out
    data (:func:`mcref.recalibrate_cv`); with --out, write the data with a ``u_recalibrated`` column."""
    import os

    from ._recalibrate import X_METHODS, recalibrate, recalibrate_cv

    if args.x_column is not None and args.method not in X_METHODS:
        raise ValueError(f"--x-column is used only by --method {' or '.join(X_METHODS)}, not {args.method!r}")
    if args.bins is not None and args.method != "bvs":
        raise ValueError(f"--bins is used only by --method bvs, not {args.method!r}")
    if args.degree is not None and args.method != "poly":
        raise ValueError(f"--degree is used only by --method poly, not {args.method!r}")
    out = None
    if args.out is not None:  # checked before any work
        out = os.path.abspath(args.out)
        if os.path.isdir(out):
            raise ValueError(f"--out: {args.out!r} is a directory; give a file name (e.g. recalibrated.csv)")
        if not os.path.isdir(os.path.dirname(out)):
            raise ValueError(f"--out: the directory {os.path.dirname(out)!r} does not exist (create it, or "
                             "choose another path)")
    if args.dataset is not None and args.file is None and args.x_column not in (None, "x"):
        raise ValueError(f"--x-column: a built-in data set has one covariate, named x; got {args.x_column!r}")
    if args.file is not None and args.dataset is None and args.x_column is not None:
        try:
            ds = datasets.from_file(args.file, E=args.E, u=args.u, x=args.x_column, pred=args.pred, ref=args.ref,
                                    u_is_variance=args.u_is_variance, delimiter=args.delimiter)
        except ValueError as exc:
            raise ValueError(str(exc).replace("`x`", "--x-column")) from None
    else:
        ds = _load(args)
    x = None
    if args.x_column is not None:
        if ds.x is None:
            raise ValueError(f"--x-column: the built-in data set {ds.name!r} has no covariate x")
        x = ds.x
    opts = {"x": x}
    if args.degree is not None:
        opts["degree"] = args.degree
    if args.bins is not None:
        opts["n_bins"] = args.bins
    rec = recalibrate(ds.E, ds.u, args.method, **opts)
    cv = None
    if args.cv is not None:
        import warnings

        from ._warnings import FewReplicatesWarning, TieOrderWarning

        dists = _dists(args)
        with warnings.catch_warnings():  # notes of the printed tables, as in `mcref validate`
            warnings.simplefilter("ignore", FewReplicatesWarning)
            warnings.simplefilter("ignore", TieOrderWarning)
            cv = recalibrate_cv(ds.E, ds.u, args.method, n_splits=args.cv, n_boot=args.boot, n_mc=args.mc,
                                seed=_seed(args), stats=_stats_list(args.stat, DEMO_STATS), dists=dists,
                                rule=args.rule, combine=args.combine, min_count=args.min_count,
                                shrink=args.shrink, binning=args.binning, log=not args.linear_bins, name=ds.name,
                                **opts)
    if out is not None:
        _write_recalibrated(args, ds, rec.apply(ds.u, x), None if cv is None else cv.u_cv, out)
    if args.json:
        row = {"dataset": ds.name, "M": ds.M, "method": rec.method, "on_x": rec.on_x, "params": rec.params,
               "se": rec.se}
        if cv is not None:
            row.update(seed=args.seed, n_splits=cv.n_splits, fold_params=cv.factors, fold_se=cv.fold_se,
                       before=json.loads(cv.before.to_json()), after=json.loads(cv.after.to_json()))
        print(json_text(row))
    elif args.csv:
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["dataset", "method", "param", "value", "se"])
        w.writerows([ds.name, rec.method, k, repr(v), repr(rec.se.get(k, float("nan")))] for k, v in rec.params.items())
    else:
        print(f"{ds.name}: M={ds.M}")
        print(rec)
        if cv is not None:
            print(f"\nseed={args.seed}, B={args.boot}, N_MC={cv.after.n_mc}")
            print(cv)
    if out is not None:
        print(f"wrote {args.out}", file=sys.stderr if (args.json or args.csv) else sys.stdout)
    return 0


def _write_recalibrated(args, ds: datasets.Dataset, u_new, u_cv, out: str) -> None:
    """The input's columns (a file's, verbatim; a built-in set's E, u, x) and ``u_recalibrated``
    (and ``u_recalibrated_cv``) as CSV, written to a temporary file then moved into place."""
    import csv

    import numpy as np

    if args.dataset is not None:
        cols = {"E": ds.E, "u": ds.u, **({"x": ds.x} if ds.x is not None else {})}
    else:
        cols = datasets.read_columns(args.file, delimiter=args.delimiter)
        cols = {k: v for k, v in cols.items() if v.shape == (ds.M,)}
    cols["u_recalibrated"] = u_new
    if u_cv is not None:
        cols["u_recalibrated_cv"] = u_cv

    def cell(v) -> str:  # floats as their shortest exact decimal: reading back gives the same double
        return repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)

    with atomic_path(out, what="--out") as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        for i in range(ds.M):
            w.writerow([cell(c[i]) for c in cols.values()])


def cmd_report(args) -> int:
    """The diagnostics figure (and, with --html, a page with it and the validation table)."""
    import os
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._html import write_dataset_report
    from ._validate import validate
    from ._warnings import FewReplicatesWarning, TieOrderWarning
    from .plots import plot_report

    ds = _load(args)
    seed = _seed(args)
    x = None if args.no_x else ds.x
    if args.html:  # _html writes the directory atomically: an interrupted run leaves none
        final = os.path.abspath(args.html)
        if not os.path.isdir(os.path.dirname(final)):
            raise ValueError(f"--html: the directory {os.path.dirname(final)!r} that should hold {args.html!r} "
                             "does not exist")
        if os.path.exists(final) and not os.path.isdir(final):
            raise ValueError(f"--html: {args.html!r} exists and is not a directory")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewReplicatesWarning)
            warnings.simplefilter("ignore", TieOrderWarning)
            tab = validate(ds.E, ds.u, n_boot=args.boot, n_mc=args.mc, seed=seed, name=ds.name,
                           min_count=args.min_count, shrink=args.shrink)
        write_dataset_report(tab, ds.E, ds.u, x, args.html, seed=seed)
        print(f"wrote {os.path.join(args.html, 'report.png')}\nwrote {os.path.join(args.html, 'index.html')}")
        return 0
    with atomic_path(args.out, what="--out") as tmp:
        fig = plot_report(ds.E, ds.u, x, name=ds.name, seed=seed)
        fig.savefig(tmp, format=os.path.splitext(args.out)[1].lstrip(".") or "png", dpi=90)
    plt.close(fig)
    print(f"wrote {args.out}")
    return 0


def cmd_demo(args) -> int:
    t0 = time.perf_counter()
    if args.validate:  # a benchmark run of the nine built-in sets
        import warnings

        from ._benchmark import benchmark
        from ._warnings import FewReplicatesWarning

        with warnings.catch_warnings():  # the summary says "indicative only"
            warnings.simplefilter("ignore", FewReplicatesWarning)
            res = benchmark("all", n_boot=args.boot, n_mc=args.mc, seed=args.seed, n_jobs=args.n_jobs,
                            progress=args.progress is not False)
        print(res)
    else:
        rows = []
        for name in datasets.names():
            ds = datasets.load(name)
            rows += _stats_table(ds, list(DEMO_STATS), 20, args.boot, args.seed, "bca")
        _print_stats(rows)
    print(f"\n{len(datasets.names())} data sets in {time.perf_counter() - t0:.1f} s "
          f"(B={args.boot}{', N_MC=' + n_mc_text(args.mc) if args.validate else ''})")
    if args.validate:
        print("(one data set in detail: mcref validate --dataset NAME; all of them as a report: "
              "mcref bench --dataset all --html DIR)")
    return 0


def cmd_bench(args) -> int:
    """Validate many data sets at once (:func:`mcref.benchmark`): files, globs, directories, built-in sets."""
    import warnings

    from ._benchmark import benchmark
    from ._warnings import FewReplicatesWarning

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
    with warnings.catch_warnings():  # the summary says "indicative only"
        warnings.simplefilter("ignore", FewReplicatesWarning)
        res = benchmark(sources, stats=_stats_list(args.stat, DEMO_STATS), store=args.store, E=args.E, u=args.u,
                        pred=args.pred, ref=args.ref, u_is_variance=args.u_is_variance, n_jobs=args.n_jobs,
                        backend=args.backend, scheduler=args.scheduler, seed=args.seed,
                        progress=args.progress is not False, **opts)
    print(res)
    if args.csv:
        res.to_csv(args.csv)
        print(f"wrote {args.csv}")
    if args.html:
        import matplotlib

        matplotlib.use("Agg")
        print(f"wrote {res.to_html(args.html, diagnostics=not args.no_diagnostics)}")
    return 0


def _bench_parser(sub) -> None:
    """The ``mcref bench`` subcommand."""
    sp = sub.add_parser(
        "bench", help="validate many data sets at once (parallel, resumable, HTML report)",
        description="Validate every data set given (CSV files, globs, directories of *.csv, built-in sets) with "
        "the same settings, in parallel; one summary table of verdicts. With --store, finished data sets are kept: "
        "re-run the same command to resume, or with more data sets to compute only the new ones.")
    sp.add_argument("paths", nargs="*", metavar="PATH", help="CSV file, glob ('runs/*.csv') or directory")
    sp.add_argument("--dataset", action="append", metavar="NAME",
                    help="built-in data set(s), comma-separated or repeated; 'all': the nine")
    sp.add_argument("--stat", help="comma-separated statistics (default " + ",".join(DEMO_STATS) + ")")
    sp.add_argument("--store", help="SQLite results file: finished data sets are kept, a rerun resumes")
    sp.add_argument("--html", metavar="DIR", help="write a static report (index.html and figures) to DIR")
    sp.add_argument("--no-diagnostics", action="store_true", help="--html without the per-data-set figures")
    sp.add_argument("--csv", metavar="FILE", help="write the table (one row per data set and statistic) to FILE")
    sp.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    sp.add_argument("--backend", default="loky", choices=["loky", "threading", "sequential", "dask"],
                    help="where data sets run (default loky processes; dask: a Dask cluster)")
    sp.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:PORT) for --backend dask")
    sp.add_argument("--seed", type=int, default=None,
                    help="benchmark seed (default: the store's, else drawn from the OS and printed)")
    sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats " + _AUTO_MC)
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation)")
    sp.add_argument("--bins", type=int, default=20, help="equal-count bins (default 20)")
    sp.add_argument("--min-count", type=int, default=30, help="fewest points per bin (default 30)")
    sp.add_argument("--shrink", action="store_true", help="fewer bins instead of failing when M/bins < --min-count")
    sp.add_argument("--rule", default=RULES[0], choices=list(RULES),
                    help=f"verdict rule (default {RULES[0]}; mc: the Monte Carlo test under the empirical D)")
    sp.add_argument("--E", help="error column of the files (default: E or error)")
    sp.add_argument("--u", help="uncertainty column of the files (default: u, uE or uncertainty)")
    sp.add_argument("--pred", help="prediction column (E = ref - pred)")
    sp.add_argument("--ref", help="reference-value column (E = ref - pred)")
    sp.add_argument("--u-is-variance", action="store_true", help="the u column holds variances")
    add_progress_flag(sp)
    sp.set_defaults(func=cmd_bench)


def cmd_datasets(args) -> int:
    for name in datasets.names():
        ds = datasets.load(name)
        print(f"{name:26s} M={ds.M:6d}  x={'yes' if ds.x is not None else 'no'}")
    return 0


def _list(text: str | None, kind=str):
    if text is None:
        return None
    try:
        return tuple(kind(x.strip()) for x in text.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"expected a comma-separated list of numbers, got {text!r}") from None


def _num(x: str):
    v = float(x)
    return int(v) if v == int(v) else v


#: the fast settings (``--small``) of the built-in studies: seconds, for trying a study out
SMALL = {
    "scaling": dict(M=(1000, 2000), N=(10, 20), k=(4, 12), n_mc=200),
    "sensitivity": dict(nu=(4, 10), n_mc=500, n_bins=20),
    "reliability": dict(nu=(4, 10), M=1000, n_rep=50, n_boot=300),
    "verdicts": dict(M=(500,), stats=("ZMS", "CC", "ENCE"), n_rep=40, n_boot=200, n_mc=200),
    "extrapolation": dict(n_boot=100),
}


#: Each study's own options, one definition for its parser and for the keywords it passes:
#: (flag, the study's keyword, element type of a comma-separated list or None for one int, what
#: it is). The defaults shown by --help are read from the study function's signature.
STUDY_OPTIONS: dict[str, list[tuple[str, str, Any, str]]] = {
    "scaling": [("--models", "models", str, "comma-separated models"), ("--M", "M", int, "dataset sizes"),
                ("--N", "N", int, "bin counts"), ("--k", "k", _num, "inverse-gamma shapes of u^2"),
                ("--n-mc", "n_mc", None, "repeats per cell")],
    "sensitivity": [("--datasets", "datasets", str, "built-in data sets"),
                    ("--nu", "nu", _num, "degrees of freedom of t"), ("--stat", "stats", str, "statistics"),
                    ("--bins", "n_bins", None, "bins"), ("--n-mc", "n_mc", None, "Monte Carlo repeats")],
    "reliability": [("--nu", "nu", _num, "grid of nu"), ("--stat", "stats", str, "statistics"),
                    ("--M", "M", None, "dataset size"), ("--n-rep", "n_rep", None, "data sets per cell"),
                    ("--boot", "n_boot", None, "bootstrap replicates"),
                    ("--n-mc", "n_mc", None, "Monte Carlo repeats for simulated references")],
    "verdicts": [("--u", "u", str, "sources of u: IG(nu) and/or built-in data sets"),
                 ("--M", "M", int, "dataset sizes"),
                 ("--scenario", "scenario", str, "calibrated, scale=S, gamma=G, break=B"),
                 ("--D", "D", str, "true generative distributions of the errors"),
                 ("--stat", "stats", str, "statistics"),
                 ("--test-dists", "test_dists", str, "D of the simulated references"),
                 ("--n-rep", "n_rep", None, "data sets per cell"), ("--boot", "n_boot", None, "bootstrap replicates"),
                 ("--n-mc", "n_mc", None, "Monte Carlo repeats"),
                 ("--n-mc-empirical", "n_mc_empirical", None, "repeats of the empirical-D test per data set"),
                 ("--bins", "n_bins", None, "bins")],
    "extrapolation": [("--boot", "n_boot", None, "bootstrap resamples")],
}


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _study_default(study: str, keyword: str) -> str:
    """The default of a study keyword as --help shows it (from the study's signature)."""
    import inspect

    from . import studies

    d = inspect.signature(getattr(studies, study)).parameters[keyword].default
    if d is None:
        return "the paper's grid"
    return ",".join(map(str, d)) if isinstance(d, (tuple, list)) else str(d)


def _add_study_options(q: argparse.ArgumentParser, study: str) -> None:
    for flag, keyword, kind, what in STUDY_OPTIONS[study]:
        q.add_argument(flag, type=int if kind is None else None,
                       help=f"{what} (default {_study_default(study, keyword)})")


def _options(args) -> dict:
    """The study's keywords from the command line (:data:`STUDY_OPTIONS`), over ``--small``'s."""
    kw = dict(SMALL[args.study]) if getattr(args, "small", False) else {}
    for flag, keyword, kind, _ in STUDY_OPTIONS[args.study]:
        v = getattr(args, _dest(flag), None)
        if v is not None:
            kw[keyword] = v if kind is None else _list(v, kind)
    return kw


def _run_options(args) -> dict:
    return dict(seed=args.seed, n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                store=args.store, progress=not args.no_progress)


def _print_study(args, res, extra: Sequence[tuple[str, Any]] = ()) -> int:
    """The study's table (and summaries) as text, JSON, and/or CSV."""
    if args.csv:
        res.table.to_csv(args.csv, index=False)
    if args.json:
        print(json_text({"study": res.name, "seed": res.seed, "params": res.params,
                         "table": res.table.to_dict(orient="records"),
                         **{title: df.reset_index().to_dict(orient="records") for title, df in extra}}))
        return 0
    import pandas as pd

    with pd.option_context("display.max_rows", 400, "display.width", 160):
        print(res.table.to_string(index=False))
        for title, df in extra:
            print(f"\n{title}\n{df.to_string()}")
    print(f"\n{res}")
    return 0


def cmd_study_scaling(args) -> int:
    from . import studies

    kw = _options(args)
    res = studies.scaling(**kw, **_run_options(args))
    return _print_study(args, res, [("fits: theta_ref = a + b*sqrt(N/M)", res.fits.set_index(["model", "stat"]))])


def cmd_study_sensitivity(args) -> int:
    from . import studies

    kw = _options(args)
    res = studies.sensitivity(**kw, **_run_options(args))
    return _print_study(args, res, [("D-sensitivity: largest |theta_ref(t(nu)) - theta_ref(normal)| / "
                                     "sqrt(se_t^2 + se_normal^2) (sensitive: > 2)",
                                     res.sensitive.set_index(["dataset", "stat"]))])


def cmd_study_reliability(args) -> int:
    from . import studies

    kw = _options(args)
    res = studies.reliability(model=args.model, **kw, **_run_options(args))
    return _print_study(args, res)


def cmd_study_verdicts(args) -> int:
    from . import studies

    kw = _options(args)
    res = studies.verdicts(**kw, **_run_options(args))
    return _print_study(args, res, [("rejection rate of the default verdict (not valid), per statistic",
                                     res.rates())])


def cmd_study_extrapolation(args) -> int:
    from . import studies

    ds = _load(args)
    kw = _options(args)
    res = studies.extrapolation(ds.E, ds.u, step=args.step, n_max=args.n_max, min_count=args.min_count,
                                se=args.se, seed=args.seed, name=ds.name, **kw)
    if args.json:
        print(json_text({"dataset": res.name, "M": res.M, "a": res.a, "b": res.b, "se_a": res.se_a,
                         "se_a_boot": res.se_a_boot, "se": res.se, "se_b": res.se_b,
                         "consistent": res.consistent, "consistent_paper": res.consistent_paper,
                         "points": res.to_frame().to_dict(orient="list")}))
    else:
        print(res.to_frame().to_string(index=False))
        print(res)
    return 0


def add_progress_flag(sp: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` on a data command; :func:`main` makes it the default
    ``progress=`` of every library call the command makes (mcref._progress)."""
    sp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only on a terminal, for work longer than a few "
                         "seconds; --progress also into a pipe or a log)")


def _data_args(sp: argparse.ArgumentParser) -> None:
    """The data-file and statistics options shared by the data commands."""
    sp.add_argument("file", nargs="?", help="CSV or NPZ file with errors and uncertainties")
    sp.add_argument("--dataset", help="built-in data set (see `mcref datasets`)")
    sp.add_argument("--E", help="error column (default: E or error)")
    sp.add_argument("--u", help="uncertainty column (default: u, uE or uncertainty)")
    sp.add_argument("--pred", help="prediction column (E = ref - pred)")
    sp.add_argument("--ref", help="reference-value column (E = ref - pred)")
    sp.add_argument("--u-is-variance", action="store_true", help="the u column holds variances")
    sp.add_argument("--delimiter", help="field delimiter of a text file (default: guessed; tab for .tsv)")
    sp.add_argument("--stat", help="comma-separated statistics (" + ",".join(STATISTICS) + ")")
    sp.add_argument("--bins", type=int, default=None,
                    help="equal-count bins (default 20, fewer when M/20 < --min-count so that every bin keeps --min-count points; an explicit --bins is kept or refused)")
    sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
    sp.add_argument("--min-count", type=int, default=30,
                    help="fewest points per bin (default 30); with fewer, an error unless --shrink")
    sp.add_argument("--shrink", action="store_true",
                    help="reduce the number of bins instead of failing when M/bins < --min-count")
    sp.add_argument("--binning", default="equal", choices=["equal", "adaptive"],
                    help="bins of u for ENCE, ZMSE, UCE: equal counts (default) or adaptive (equal-width "
                         "cells of ln u, merged below --min-count and split when too large)")
    sp.add_argument("--linear-bins", action="store_true", help="adaptive bins on u instead of ln u")
    sp.add_argument("--seed", type=int, default=None,
                    help="random seed (default: drawn from the OS and printed, so the run can be repeated)")
    out = sp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")
    add_progress_flag(sp)



#: help of the --mc options that run validate (its default N_MC depends on M)
_AUTO_MC = "(default: 10000 up to M = 20000 points, fewer above, at least 2000: mcref.default_n_mc)"


def _parser_stats(sub) -> None:
    sp = sub.add_parser("stats", help="statistics with bootstrap confidence intervals")
    _data_args(sp)
    sp.add_argument("--method", default="bca", choices=["bca", "percentile", "basic"])
    sp.set_defaults(func=cmd_stats)


def _parser_validate(sub) -> None:
    sp = sub.add_parser("validate", help="full validation table (references, zeta-scores, verdicts)")
    _data_args(sp)
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats " + _AUTO_MC)
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation; the default rule adds empirical and permutation when missing)")
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
    sp.set_defaults(func=cmd_validate)


def _parser_fit(sub) -> None:
    sp = sub.add_parser("fit", help="distribution fits of u^2, E^2, Z^2 (IG, F, KS) and Z (Student-t, ML)")
    _data_args(sp)
    sp.set_defaults(func=cmd_fit, boot=100)
    for a in sp._actions:
        if a.dest == "boot":
            a.help = "bootstrap replicates for the uncertainties (default 100; 0: none)"
        if a.dest in ("stat", "bins"):
            a.help = argparse.SUPPRESS


def _parser_decimate(sub) -> None:
    sp = sub.add_parser("decimate", help="remove the largest u step by step; does a statistic leave its CI?")
    _data_args(sp)
    sp.add_argument("--max-fraction", type=float, default=0.1, help="largest fraction removed (default 0.1)")
    sp.add_argument("--steps", type=int, default=21, help="number of fractions from 0 (default 21)")
    sp.set_defaults(func=cmd_decimate)


def _parser_recalibrate(sub) -> None:
    sp = sub.add_parser(
        "recalibrate", help="fit a recalibration map u -> u' (and validate it on held-out data with --cv K)",
        description="Fit a recalibration of the uncertainties (zms: u' = s*u with s^2 = <Z^2>; rce: s^2 = MSE/MV; "
        "bvs: one factor per equal-count bin of u or of --x-column; poly: u'^2 = a + b*u^2; isotonic: isotonic "
        "regression of E^2 on u^2) and print its parameters with standard errors. --cv K validates the method on "
        "held-out data: each fold's u' comes from the map fitted on the other K-1 folds, and the validation "
        "tables before and after are printed side by side. --out writes the input's columns plus u_recalibrated.")
    _data_args(sp)
    sp.add_argument("--method", required=True, choices=list(_RECAL_METHODS), help="recalibration method")
    sp.add_argument("--x-column", metavar="NAME",
                    help="--method bvs: bin on this covariate column instead of u (a built-in set: x)")
    sp.add_argument("--degree", type=int, default=None, choices=[1, 2],
                    help="--method poly: u'^2 = a + b*u^2 (1, default) or + c*u^4 (2)")
    sp.add_argument("--out", metavar="FILE",
                    help="write the input's columns plus u_recalibrated (standard uncertainties of the map fitted "
                         "on all the data; with --cv also u_recalibrated_cv, the held-out values) as CSV")
    sp.add_argument("--cv", type=int, metavar="K", help="validate on held-out data by K-fold cross-fitting")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of --cv's validation " + _AUTO_MC)
    sp.add_argument("--dists", help="--cv: generative distributions of the validation (default normal,t6,empirical)")
    sp.add_argument("--rule", default=RULES[0], choices=list(RULES),
                    help=f"--cv: verdict rule (default {RULES[0]}, as mcref validate)")
    sp.add_argument("--combine", default="minp", choices=["minp", "fisher", "cauchy"],
                    help="--cv: how the joint verdict combines the Monte Carlo p-values (default minp)")
    sp.set_defaults(func=cmd_recalibrate)
    for a in sp._actions:
        if a.dest == "bins":
            a.help = "--method bvs: equal-count bins (default 20; each keeps at least 30 points)"
        elif a.dest == "stat":
            a.help = "--cv: comma-separated statistics of the validation (default " + ",".join(DEMO_STATS) + ")"
        elif a.dest == "boot":
            a.help = "--cv: bootstrap replicates of the validation (default 5000)"
        elif a.dest == "seed":
            a.help = "--cv: seed of the folds and the validation (default: drawn from the OS and printed)"
        elif a.dest == "csv":
            a.help = "print the parameters as CSV"


def _parser_report(sub) -> None:
    sp = sub.add_parser("report", help="diagnostics figure (consistency along u, adaptivity along x)",
                        description="One figure with the conditional-calibration diagnostics: E vs u, calibration "
                        "curve, reliability diagram, <Z^2> and coverage per bin of u and of x, confidence curve.")
    _data_args(sp)
    sp.add_argument("--out", default="report.png", help="figure file (default report.png; .png, .pdf, .svg)")
    sp.add_argument("--html", metavar="DIR", help="write DIR/report.png and DIR/index.html with the validation table")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of the table (--html) " + _AUTO_MC)
    sp.add_argument("--no-x", action="store_true", help="ignore the data set's x (no adaptivity panels)")
    sp.set_defaults(func=cmd_report)


def _parser_demo(sub) -> None:
    sp = sub.add_parser("demo", help="run on the nine built-in literature data sets",
                        description="Validate the nine built-in data sets of P. Pernot's papers (statistics, "
                        "BCa intervals, simulated references, verdicts).")
    sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of the references " + _AUTO_MC)
    sp.add_argument("--seed", type=int, default=0, help="random seed (default 0: the demo is reproducible)")
    sp.add_argument("--stats-only", dest="validate", action="store_false",
                    help="only the statistics with BCa intervals (no simulated references)")
    sp.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    add_progress_flag(sp)
    sp.set_defaults(func=cmd_demo, validate=True)


def _study_args(q: argparse.ArgumentParser, func) -> None:
    """The runner's options, shared by the simulation studies."""
    q.add_argument("--small", action="store_true", help="fast small setting (seconds) instead of the paper's")
    q.add_argument("--seed", type=int, default=0, help="study seed (default 0)")
    q.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    q.add_argument("--backend", default="loky", choices=["loky", "threading", "sequential", "dask"],
                   help="where cells run (default loky processes; dask: a Dask cluster)")
    q.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:PORT) for --backend dask")
    q.add_argument("--store", help="SQLite results file: finished cells are kept, a rerun resumes")
    q.add_argument("--no-progress", action="store_true", help="no progress bar")
    q.add_argument("--csv", help="also write the table to this CSV file")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=func)


def _parser_study(sub) -> None:
    sp = sub.add_parser("study", help="simulation studies of the papers (parallel, resumable)",
                        description="Run a built-in simulation study. Finished cells go to --store as they "
                        "finish: re-run the same command to resume an interrupted study.")
    ssub = sp.add_subparsers(dest="study", required=True)

    q = ssub.add_parser("scaling", help="ENCE/ZMSE reference values vs M and N, fit a + b*sqrt(N/M)")
    _study_args(q, cmd_study_scaling)
    _add_study_options(q, "scaling")

    q = ssub.add_parser("sensitivity", help="reference values under t(nu) vs normal D for data sets' u")
    _study_args(q, cmd_study_sensitivity)
    _add_study_options(q, "sensitivity")

    q = ssub.add_parser("reliability", help="validation probability of ZMS/RCE tests on NIG/TIG data")
    _study_args(q, cmd_study_reliability)
    q.add_argument("--model", default="NIG", choices=["NIG", "TIG"], help="synthetic model (default NIG)")
    _add_study_options(q, "reliability")

    q = ssub.add_parser("verdicts", help="size and power of every score and verdict of validate")
    _study_args(q, cmd_study_verdicts)
    _add_study_options(q, "verdicts")

    q = ssub.add_parser("extrapolation", help="ZMSE extrapolated to zero bin size (consistency test)")
    q.add_argument("file", nargs="?", help="CSV or NPZ file with errors and uncertainties")
    q.add_argument("--dataset", help="built-in data set")
    for col in ("E", "u", "pred", "ref"):
        q.add_argument(f"--{col}", help=f"{col} column")
    q.add_argument("--u-is-variance", action="store_true", help="the u column holds variances")
    q.add_argument("--small", action="store_true", help="fast setting: 100 bootstrap resamples")
    q.add_argument("--step", type=int, default=10, help="bin-count step (default 10)")
    q.add_argument("--n-max", type=int, default=150, help="largest bin count (default 150)")
    q.add_argument("--min-count", type=int, default=20, help="keep bin counts with M/N above this (default 20)")
    q.add_argument("--se", default="bootstrap", choices=["bootstrap", "ols"],
                   help="standard error of the intercept for the verdict (default bootstrap; ols: as published)")
    _add_study_options(q, "extrapolation")
    q.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_study_extrapolation)


def _parser_datasets(sub) -> None:
    sp = sub.add_parser("datasets", help="list the built-in data sets")
    sp.set_defaults(func=cmd_datasets)


def build_parser() -> argparse.ArgumentParser:
    """The command line: one parser function per subcommand (``_parser_<command>``)."""
    p = argparse.ArgumentParser(prog="mcref", description="Calibration statistics of ML uncertainties: "
                                "bootstrap CIs, simulated references, zeta-scores.")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_parser_stats, _parser_validate, _parser_fit, _parser_decimate, _parser_recalibrate, _parser_report,
                _parser_demo, _bench_parser, _parser_study, _parser_datasets):
        add(sub)
    return p


#: API argument → CLI option, for error messages raised by the library
_CLI_NAMES = {
    "n_boot": "--boot", "n_mc": "--mc", "n_bins": "--bins", "min_count": "--min-count", "shrink": "--shrink",
    "shrink=True": "--shrink", "seed": "--seed", "dist": "--dists", "dists": "--dists", "stats": "--stat",
    "name": "--dataset", "E": "--E", "E=": "--E COLUMN", "u": "--u", "u=": "--u COLUMN", "pred": "--pred",
    "ref": "--ref", "pred=": "--pred COLUMN", "ref=": "--ref COLUMN", "x": "x", "x=": "x",
    "max_fraction": "--max-fraction", "steps": "--steps", "rule": "--rule", "path": "FILE",
    "delimiter": "--delimiter", "sources": "PATH", "n_splits": "--cv", "degree": "--degree", "method": "--method",
}


def cli_words(message: str) -> str:
    """Reword a library error for the command line: `n_boot` → --boot, "Pass `E=`" → "pass --E COLUMN", …"""
    import re

    def sub(m):
        return _CLI_NAMES.get(m.group(1), m.group(0))

    out = re.sub(r"`([A-Za-z_]+=?(?:True)?)`", sub, message)
    for api, cli in (("pass shrink=True", "pass --shrink"), ("shrink=True", "--shrink"), ("Pass --", "pass --"),
                     ("--seed must be None, a non-negative integer, a numpy SeedSequence or a Generator",
                      "--seed must be a non-negative integer"),
                     ("--seed must be None or a non-negative integer", "--seed must be a non-negative integer"),
                     ("pass store=... to make", "give --store FILE to make"),
                     ("se='ols'", "--se ols")):
        out = out.replace(api, cli)
    return out


_shown: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None):  # noqa: ARG001
    """Warnings on the command line: one line each, in CLI words, no source line, each text
    once per command (the same warning can come from several layers: bins, bootstrap,
    references)."""
    text = cli_words(str(message))
    if text in _shown:
        return
    _shown.add(text)
    print(f"mcref: warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import warnings

    from . import _progress
    from ._warnings import MCRefWarning

    _shown.clear()
    try:
        # warning settings restored on return: main() may run inside a program or a test;
        # the command's --progress/--no-progress is the default of every library call below it
        with warnings.catch_warnings(), _progress.default(getattr(args, "progress", None)):
            warnings.simplefilter("default")
            warnings.simplefilter("always", MCRefWarning)  # said once each by _show_warning
            warnings.showwarning = _show_warning
            return args.func(args)
    except ValueError as exc:
        print(f"mcref: error: {cli_words(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `mcref validate ... | head`: the reader is gone, stop quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: send it nowhere
        return 0
    except KeyboardInterrupt:
        _progress.end_line()  # a bar interrupted while it was drawn
        # a study, bench or demo run: the runner has said what was kept and how to resume
        if args.command not in ("study", "bench") and not (args.command == "demo" and args.validate):
            print("mcref: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
