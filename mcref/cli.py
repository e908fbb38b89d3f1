"""Command-line interface: ``mcref stats``, ``mcref validate``, ``mcref fit``, ``mcref decimate``,
``mcref report``, ``mcref demo``, ``mcref bench``, ``mcref study``, ``mcref datasets``.

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
    w = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{x}}}" for x in w)
    print(fmt.format(*head))
    for b in body:
        print(fmt.format(*b).rstrip())
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
        print(json.dumps(rows, indent=2))
    elif args.csv:
        import csv
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({k: (f"{v:.10g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
        print(buf.getvalue(), end="")
    else:
        print(f"{ds.name}: M={ds.M}, B={args.boot}, seed={seed}")
        _print_stats(rows)
    return 0


def cmd_validate(args) -> int:
    from ._validate import validate

    ds = _load(args)
    from ._validate import VALIDATE_DISTS

    if args.dists is not None and not args.dists.strip(", "):
        raise ValueError("--dists is empty: give comma-separated distributions (e.g. normal,t6,empirical) or "
                         "leave it out for the default")
    dists = [d.strip() for d in args.dists.split(",") if d.strip()] if args.dists else list(VALIDATE_DISTS)
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
    from .distfit import distfit

    ds = _load(args)
    seed = _seed(args)
    fit = distfit(ds.E, ds.u, n_boot=args.boot, seed=seed)
    if args.json:
        row = fit.as_dict()
        row = {"dataset": ds.name, "seed": seed, **row, "se_method": fit.se_method, "ci": fit.ci,
               "at_bound": fit.at_bound}
        print(json.dumps(row, indent=2, default=float))
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
        print(json.dumps({"dataset": ds.name, "seed": seed, "leaves": res.leaves, "first_exit": res.first_exit,
                          "interval": res.interval, "points": res.to_frame().to_dict(orient="records")},
                         indent=2, default=float))
    else:
        import pandas as pd

        wide = res.to_frame().pivot(index=["fraction", "n_removed"], columns="stat", values="delta")
        with pd.option_context("display.max_rows", 400, "display.width", 160):
            print(f"{ds.name} (seed={seed}): delta theta = theta(f) - theta(0)\n{wide.to_string()}\n")
        print(res)
    return 0


def cmd_report(args) -> int:
    """The diagnostics figure (and, with --html, a page with it and the validation table)."""
    import os

    import matplotlib

    matplotlib.use("Agg")
    from .plots import plot_report

    ds = _load(args)
    seed = _seed(args)
    x = None if args.no_x else ds.x
    out = args.out
    if args.html:  # everything is written to a temporary directory, moved into place at the end
        import tempfile

        final = os.path.abspath(args.html)
        parent = os.path.dirname(final)
        if not os.path.isdir(parent):
            raise ValueError(f"--html: the directory {parent!r} that should hold {args.html!r} does not exist")
        if os.path.exists(final) and not os.path.isdir(final):
            raise ValueError(f"--html: {args.html!r} exists and is not a directory")
        work = tempfile.mkdtemp(prefix=".mcref-report-", dir=parent)
        out = os.path.join(work, "report.png")
    else:
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            raise ValueError(f"--out: the directory {parent!r} does not exist (create it, or choose another path)")
    try:
        fig = plot_report(ds.E, ds.u, x, name=ds.name, seed=seed, path=out)
        if args.html:
            _report_page(args, ds, seed, work)
            _move_into_place(work, final)
    except BaseException:
        if args.html:
            import shutil

            shutil.rmtree(work, ignore_errors=True)
        raise
    if args.html:
        print(f"wrote {os.path.join(args.html, 'report.png')}\nwrote {os.path.join(args.html, 'index.html')}")
    else:
        print(f"wrote {out}")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return 0


def _move_into_place(work: str, final: str) -> None:
    """Replace the files of ``final`` by those of the finished ``work`` directory."""
    import os
    import shutil

    os.makedirs(final, exist_ok=True)
    for name in os.listdir(work):
        os.replace(os.path.join(work, name), os.path.join(final, name))
    shutil.rmtree(work, ignore_errors=True)


def _report_page(args, ds, seed, work: str) -> None:
    """index.html of ``mcref report --html``: the validation table and the diagnostics figure."""
    import html
    import os
    import warnings

    from ._warnings import FewReplicatesWarning, TieOrderWarning
    from ._validate import validate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        warnings.simplefilter("ignore", TieOrderWarning)
        tab = validate(ds.E, ds.u, n_boot=args.boot, n_mc=args.mc, seed=seed, name=ds.name,
                       min_count=args.min_count, shrink=args.shrink)
    with open(os.path.join(work, "index.html"), "w", encoding="utf-8") as f:
        f.write(f"<!doctype html><html><head><meta charset='utf-8'><title>mcref report: {html.escape(ds.name)}"
                "</title><style>body{font-family:sans-serif;margin:2em}pre{font-size:12px;overflow-x:auto}"
                "img{max-width:100%}</style></head><body>"
                f"<h1>mcref report: {html.escape(ds.name)}</h1><p>M = {ds.M}, seed = {seed}</p>"
                "<h2>Validation</h2><pre>" + html.escape(tab.explained()) + "</pre>"
                "<h2>Diagnostics</h2><img src='report.png' alt='diagnostics'></body></html>")


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
          f"(B={args.boot}{', N_MC=' + str(args.mc) if args.validate else ''})")
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
    sp.add_argument("--mc", type=int, default=10_000, help="Monte Carlo repeats (default 10000)")
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation)")
    sp.add_argument("--bins", type=int, default=20, help="equal-count bins (default 20)")
    sp.add_argument("--min-count", type=int, default=30, help="fewest points per bin (default 30)")
    sp.add_argument("--shrink", action="store_true", help="fewer bins instead of failing when M/bins < --min-count")
    sp.add_argument("--rule", default="conditional", choices=["conditional", "mc", "paper"],
                    help="verdict rule (default conditional; mc: the Monte Carlo test under the empirical D)")
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


def _options(args, spec: Sequence[tuple[str, str, Any]]) -> dict:
    """Study keywords from the command line: ``(cli name, keyword, kind)``; ``kind`` list[...]
    parses a comma-separated list, a callable converts, None takes the value as given."""
    kw = dict(SMALL[args.study]) if getattr(args, "small", False) else {}
    for cli_name, keyword, kind in spec:
        v = getattr(args, cli_name, None)
        if v is None:
            continue
        kw[keyword] = _list(v, kind[0]) if isinstance(kind, list) else v
    return kw


def _run_options(args) -> dict:
    return dict(seed=args.seed, n_jobs=args.n_jobs, backend=args.backend, scheduler=args.scheduler,
                store=args.store, progress=not args.no_progress)


def _print_study(args, res, extra: Sequence[tuple[str, Any]] = ()) -> int:
    """The study's table (and summaries) as text, JSON, and/or CSV."""
    if args.csv:
        res.table.to_csv(args.csv, index=False)
    if args.json:
        print(json.dumps({"study": res.name, "seed": res.seed, "params": res.params,
                          "table": res.table.to_dict(orient="records"),
                          **{title: df.reset_index().to_dict(orient="records") for title, df in extra}}, indent=2))
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

    kw = _options(args, [("models", "models", [str]), ("M", "M", [int]), ("N", "N", [int]), ("k", "k", [_num]),
                         ("n_mc", "n_mc", None)])
    res = studies.scaling(**kw, **_run_options(args))
    return _print_study(args, res, [("fits: theta_ref = a + b*sqrt(N/M)", res.fits.set_index(["model", "stat"]))])


def cmd_study_sensitivity(args) -> int:
    from . import studies

    kw = _options(args, [("datasets", "datasets", [str]), ("nu", "nu", [_num]), ("stat", "stats", [str]),
                         ("n_mc", "n_mc", None), ("bins", "n_bins", None)])
    res = studies.sensitivity(**kw, **_run_options(args))
    return _print_study(args, res, [("D-sensitivity: largest |theta_ref(t(nu)) - theta_ref(normal)| / "
                                     "sqrt(se_t^2 + se_normal^2) (sensitive: > 2)",
                                     res.sensitive.set_index(["dataset", "stat"]))])


def cmd_study_reliability(args) -> int:
    from . import studies

    kw = _options(args, [("nu", "nu", [_num]), ("stat", "stats", [str]), ("M", "M", None),
                         ("n_rep", "n_rep", None), ("boot", "n_boot", None), ("n_mc", "n_mc", None)])
    res = studies.reliability(model=args.model, **kw, **_run_options(args))
    return _print_study(args, res)


def cmd_study_verdicts(args) -> int:
    from . import studies

    kw = _options(args, [("u", "u", [str]), ("M", "M", [int]), ("scenario", "scenario", [str]), ("D", "D", [str]),
                         ("stat", "stats", [str]), ("test_dists", "test_dists", [str]), ("n_rep", "n_rep", None),
                         ("boot", "n_boot", None), ("n_mc", "n_mc", None), ("n_mc_empirical", "n_mc_empirical", None),
                         ("bins", "n_bins", None)])
    res = studies.verdicts(**kw, **_run_options(args))
    return _print_study(args, res, [("rejection rate of the default verdict (not valid), per statistic",
                                     res.rates())])


def cmd_study_extrapolation(args) -> int:
    from . import studies

    ds = _load(args)
    kw = _options(args, [("boot", "n_boot", None)])
    res = studies.extrapolation(ds.E, ds.u, step=args.step, n_max=args.n_max, min_count=args.min_count,
                                se=args.se, seed=args.seed, name=ds.name, **kw)
    if args.json:
        print(json.dumps({"dataset": res.name, "M": res.M, "a": res.a, "b": res.b, "se_a": res.se_a,
                          "se_a_boot": res.se_a_boot, "se": res.se, "se_b": res.se_b,
                          "consistent": res.consistent, "consistent_paper": res.consistent_paper,
                          "points": res.to_frame().to_dict(orient="list")}, indent=2, default=int))
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcref", description="Calibration statistics of ML uncertainties: "
                                "bootstrap CIs, simulated references, zeta-scores.")
    sub = p.add_subparsers(dest="command", required=True)

    def data_args(sp):
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

    sp = sub.add_parser("stats", help="statistics with bootstrap confidence intervals")
    data_args(sp)
    sp.add_argument("--method", default="bca", choices=["bca", "percentile", "basic"])
    sp.set_defaults(func=cmd_stats)

    sp = sub.add_parser("validate", help="full validation table (references, zeta-scores, verdicts)")
    data_args(sp)
    sp.add_argument("--mc", type=int, default=10_000, help="Monte Carlo repeats (default 10000)")
    sp.add_argument("--dists", help="comma-separated generative distributions (default "
                    "normal,t6,empirical,permutation; the default rule adds empirical and permutation when missing)")
    sp.add_argument("--explain", action="store_true", help="print every column and a legend of them")
    sp.add_argument("--wide", action="store_true",
                    help="every column: references, p-values and zeta-scores under each D, D-sensitivity")
    sp.add_argument("--rule", default="conditional", choices=["conditional", "mc", "paper"],
                    help="verdict of simulated-reference statistics and the joint verdict: conditional (default: "
                         "permutation test of consistency, Sidak-combined with the scale test in the joint verdict), "
                         "mc (Monte Carlo test under the empirical D, the default before) or the published "
                         "zeta_Sim rule; the published verdict is always printed")
    sp.add_argument("--combine", default="minp", choices=["minp", "fisher", "cauchy"],
                    help="how the joint verdict combines the statistics' Monte Carlo p-values (default minp)")
    sp.set_defaults(func=cmd_validate)

    sp = sub.add_parser("fit", help="distribution fits of u^2, E^2, Z^2 (IG, F, KS) and Z (Student-t, ML)")
    data_args(sp)
    sp.set_defaults(func=cmd_fit, boot=100)
    for a in sp._actions:
        if a.dest == "boot":
            a.help = "bootstrap replicates for the uncertainties (default 100; 0: none)"
        if a.dest in ("stat", "bins"):
            a.help = argparse.SUPPRESS

    sp = sub.add_parser("decimate", help="remove the largest u step by step; does a statistic leave its CI?")
    data_args(sp)
    sp.add_argument("--max-fraction", type=float, default=0.1, help="largest fraction removed (default 0.1)")
    sp.add_argument("--steps", type=int, default=21, help="number of fractions from 0 (default 21)")
    sp.set_defaults(func=cmd_decimate)

    sp = sub.add_parser("report", help="diagnostics figure (consistency along u, adaptivity along x)",
                        description="One figure with the conditional-calibration diagnostics: E vs u, calibration "
                        "curve, reliability diagram, <Z^2> and coverage per bin of u and of x, confidence curve.")
    data_args(sp)
    sp.add_argument("--out", default="report.png", help="figure file (default report.png; .png, .pdf, .svg)")
    sp.add_argument("--html", metavar="DIR", help="write DIR/report.png and DIR/index.html with the validation table")
    sp.add_argument("--mc", type=int, default=10_000, help="Monte Carlo repeats of the table (--html; default 10000)")
    sp.add_argument("--no-x", action="store_true", help="ignore the data set's x (no adaptivity panels)")
    sp.set_defaults(func=cmd_report)

    sp = sub.add_parser("demo", help="run on the nine built-in literature data sets",
                        description="Validate the nine built-in data sets of P. Pernot's papers (statistics, "
                        "BCa intervals, simulated references, verdicts).")
    sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
    sp.add_argument("--mc", type=int, default=10_000, help="Monte Carlo repeats of the references (default 10000)")
    sp.add_argument("--seed", type=int, default=0, help="random seed (default 0: the demo is reproducible)")
    sp.add_argument("--stats-only", dest="validate", action="store_false",
                    help="only the statistics with BCa intervals (no simulated references)")
    sp.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    add_progress_flag(sp)
    sp.set_defaults(func=cmd_demo, validate=True)

    _bench_parser(sub)

    sp = sub.add_parser("study", help="simulation studies of the papers (parallel, resumable)",
                        description="Run a built-in simulation study. Finished cells go to --store as they "
                        "finish: re-run the same command to resume an interrupted study.")
    ssub = sp.add_subparsers(dest="study", required=True)

    def study_args(q, func):
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

    q = ssub.add_parser("scaling", help="ENCE/ZMSE reference values vs M and N, fit a + b*sqrt(N/M)")
    study_args(q, cmd_study_scaling)
    q.add_argument("--models", help="comma-separated models (default NIG,T6IG)")
    q.add_argument("--M", help="dataset sizes (default 2000,4000,8000,12000,16000)")
    q.add_argument("--N", help="bin counts (default 10,20,30,40,50)")
    q.add_argument("--k", help="inverse-gamma shapes of u^2 (default 3,4,5,6,12,24)")
    q.add_argument("--n-mc", type=int, help="repeats per cell (default 5000)")

    q = ssub.add_parser("sensitivity", help="reference values under t(nu) vs normal D for data sets' u")
    study_args(q, cmd_study_sensitivity)
    q.add_argument("--datasets", help="built-in data sets (default QM9_E,logP_10k_a_LS-GCN)")
    q.add_argument("--nu", help="degrees of freedom of t (default 3,4,5,7,10,15,20)")
    q.add_argument("--stat", help="statistics (default ZMS,CC,ENCE,ZMSE)")
    q.add_argument("--bins", type=int, help="bins (default 50)")
    q.add_argument("--n-mc", type=int, help="Monte Carlo repeats (default 10000)")

    q = ssub.add_parser("reliability", help="validation probability of ZMS/RCE tests on NIG/TIG data")
    study_args(q, cmd_study_reliability)
    q.add_argument("--model", default="NIG", choices=["NIG", "TIG"], help="synthetic model (default NIG)")
    q.add_argument("--nu", help="grid of nu (default: the paper's)")
    q.add_argument("--stat", help="statistics (default ZMS,RCE)")
    q.add_argument("--M", type=int, help="dataset size (default 5000)")
    q.add_argument("--n-rep", type=int, help="data sets per cell (default 1000)")
    q.add_argument("--boot", type=int, help="bootstrap replicates (default 5000, as the paper)")
    q.add_argument("--n-mc", type=int, help="Monte Carlo repeats for simulated references (default 1000)")

    q = ssub.add_parser("verdicts", help="size and power of every score and verdict of validate")
    study_args(q, cmd_study_verdicts)
    q.add_argument("--u", help="sources of u: IG(nu) and/or built-in data sets (default IG(6))")
    q.add_argument("--M", help="dataset sizes (default 500,2000,5000,20000)")
    q.add_argument("--scenario", help="calibrated, scale=S, gamma=G, break=B (default calibrated)")
    q.add_argument("--D", help="true generative distributions of the errors (default normal)")
    q.add_argument("--stat", help="statistics (default ZMS,RCE,CC,ENCE,ZMSE,UCE)")
    q.add_argument("--test-dists", help="D of the simulated references (default normal,t6)")
    q.add_argument("--n-rep", type=int, help="data sets per cell (default 400)")
    q.add_argument("--boot", type=int, help="bootstrap replicates (default 1000)")
    q.add_argument("--n-mc", type=int, help="Monte Carlo repeats (default 2000)")
    q.add_argument("--n-mc-empirical", type=int, help="repeats of the empirical-D test per data set (default 0)")
    q.add_argument("--bins", type=int, help="bins (default 20)")

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
    q.add_argument("--boot", type=int, help="bootstrap resamples (default 500)")
    q.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_study_extrapolation)

    sp = sub.add_parser("datasets", help="list the built-in data sets")
    sp.set_defaults(func=cmd_datasets)
    return p


#: API argument → CLI option, for error messages raised by the library
_CLI_NAMES = {
    "n_boot": "--boot", "n_mc": "--mc", "n_bins": "--bins", "min_count": "--min-count", "shrink": "--shrink",
    "shrink=True": "--shrink", "seed": "--seed", "dist": "--dists", "dists": "--dists", "stats": "--stat",
    "name": "--dataset", "E": "--E", "E=": "--E COLUMN", "u": "--u", "u=": "--u COLUMN", "pred": "--pred",
    "ref": "--ref", "pred=": "--pred COLUMN", "ref=": "--ref COLUMN", "x": "x", "x=": "x",
    "max_fraction": "--max-fraction", "steps": "--steps", "rule": "--rule", "path": "FILE",
    "delimiter": "--delimiter", "sources": "PATH",
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
