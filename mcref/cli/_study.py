"""``mcref study <name>``: the studies of :mod:`mcref.studies` from the command line (grid
options, runner options, the summary).

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from ..report._render import json_text
from ._common import add_dask_options, load_data, seed_of

__all__ = ["cmd_study_scaling", "cmd_study_sensitivity", "cmd_study_reliability", "cmd_study_verdicts",
           "cmd_study_extrapolation", "parser_study"]


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

    from .. import studies

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
                connect_timeout=args.connect_timeout, store=args.store, progress=not args.no_progress)


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
    from .. import studies

    kw = _options(args)
    res = studies.scaling(**kw, **_run_options(args))
    return _print_study(args, res, [("fits: theta_ref = a + b*sqrt(N/M)", res.fits.set_index(["model", "stat"]))])


def cmd_study_sensitivity(args) -> int:
    from .. import studies

    kw = _options(args)
    res = studies.sensitivity(**kw, **_run_options(args))
    return _print_study(args, res, [("D-sensitivity: largest |theta_ref(t(nu)) - theta_ref(normal)| / "
                                     "sqrt(se_t^2 + se_normal^2) (sensitive: > 2)",
                                     res.sensitive.set_index(["dataset", "stat"]))])


def cmd_study_reliability(args) -> int:
    from .. import studies

    kw = _options(args)
    res = studies.reliability(model=args.model, **kw, **_run_options(args))
    return _print_study(args, res)


def cmd_study_verdicts(args) -> int:
    from .. import studies

    kw = _options(args)
    res = studies.verdicts(**kw, **_run_options(args))
    return _print_study(args, res, [("rejection rate of the default verdict (not valid), per statistic",
                                     res.rates())])


def cmd_study_extrapolation(args) -> int:
    from .. import studies

    ds = load_data(args)
    kw = _options(args)
    res = studies.extrapolation(ds.E, ds.u, step=args.step, n_max=args.n_max, min_count=args.min_count,
                                se=args.se, seed=seed_of(args), name=ds.name, **kw)
    if args.json:
        print(json_text({"dataset": res.name, "seed": res.seed, "M": res.M, "a": res.a, "b": res.b, "se_a": res.se_a,
                         "se_a_boot": res.se_a_boot, "se": res.se, "se_b": res.se_b,
                         "consistent": res.consistent, "consistent_paper": res.consistent_paper,
                         "points": res.to_frame().to_dict(orient="list")}))
    else:
        print(res.to_frame().to_string(index=False))
        print(res)
    return 0


def _study_args(q: argparse.ArgumentParser, func) -> None:
    """The runner's options, shared by the simulation studies."""
    q.add_argument("--small", action="store_true", help="fast small setting (seconds) instead of the paper's")
    q.add_argument("--seed", type=int, default=None,
                   help="study seed (default: the --store's when it holds the study, else drawn from the OS and "
                        "printed, so the run can be repeated)")
    q.add_argument("--n-jobs", type=int, default=-1, help="parallel workers (default -1: every core)")
    q.add_argument("--backend", default="loky", choices=["loky", "threading", "sequential", "dask"],
                   help="where cells run (default loky processes; dask: a Dask cluster)")
    add_dask_options(q)
    q.add_argument("--store", help="SQLite results file: finished cells are kept, a rerun resumes")
    q.add_argument("--no-progress", action="store_true", help="no progress bar")
    q.add_argument("--csv", help="also write the table to this CSV file")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=func)


def parser_study(sub) -> None:
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
    q.add_argument("--seed", type=int, default=None,
                   help="bootstrap seed (default: drawn from the OS and printed, so the run can be repeated)")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(func=cmd_study_extrapolation)
