"""What the commands share: reading the data (FILE or --dataset), the bin count, the statistics
and D lists, the seed, the data and progress options.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import argparse
import math
from typing import Sequence

from .. import datasets
from ..resampling._bootstrap import bootstrap_many
from ..report._render import EXCLUDES_NOTE, text_table
from ..stats import STATISTICS

__all__ = ["DEMO_STATS", "DEMO_DISTS", "features_of", "load_data", "bins_of", "stats_list", "fmt", "stats_table", "print_stats", "seed_of",
           "dists_of", "boot_of", "add_dask_options", "add_progress_flag", "data_args", "AUTO_MC", "BINS_HELP", "OUTPUTS", "check_outputs"]


DEMO_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")
#: ``mcref demo``'s D: the one the default rule decides by. It prints verdicts and estimates only, and
#: these are bit for bit those of validate's four default D (tests/test_benchmark.py); the normal, t(6) and
#: empirical D fill the comparison columns of ``mcref validate --wide`` and the reports
DEMO_DISTS = ("permutation",)


#: every option that names an output file or folder, in any command: (attribute, option, a folder?).
#: ``--json``/``--csv`` without a value (validate, stats, ...) print to stdout and are not paths.
OUTPUTS = (("out", "--out", False), ("csv", "--csv", False), ("json", "--json", False), ("html", "--html", True),
           ("store", "--store", False))


def precompile_if_cold(n_jobs: int = -1, backend: str = "loky", dependent: bool = False, m: int = 0) -> None:
    """On a cold numba cache, compile validate's kernel groups side by side in worker processes
    first (:func:`mcref.precompile`; local backends only; ``dependent``: with those of --groups and
    --order; ``m``: the rows of the set, whose size picks the references' path), and say so on stderr."""
    import sys

    from .. import warmup
    from ..kernels.fastrank import BUCKET_MIN_M

    large = m >= BUCKET_MIN_M
    if backend in ("dask", "threading") or not warmup.needed(n_jobs, dependent=dependent, large=large):
        return
    print("mcref: first run on this install: compiling the kernels in parallel processes (once; later runs "
          "load them from numba's cache)", file=sys.stderr, flush=True)
    seconds = warmup.precompile(n_jobs, dependent=dependent, large=large)
    if seconds is not None:
        print(f"mcref: compiled in {seconds:.0f} s", file=sys.stderr, flush=True)


def check_outputs(args) -> None:
    """Refuse, before any work, an output a command could not write: every path option of
    :data:`OUTPUTS` (the folder that will hold it exists and takes a new file; it is not a
    folder, or for --html not a file nor a folder other than an earlier report). One check for
    every command, run by :func:`mcref.cli.main` before the command itself."""
    from ..report._html import check_report_target
    from ..report._render import check_writable

    for attr, option, folder in OUTPUTS:
        path = getattr(args, attr, None)
        if isinstance(path, str):
            check_writable(path, option, directory=folder)
            if folder:
                check_report_target(path, option)


def load_data(args) -> datasets.Dataset:
    if (args.file is None) == (args.dataset is None):
        raise ValueError("give either a FILE or --dataset NAME (one of: " + ", ".join(datasets.names()) + ")")
    if args.dataset is not None:
        return datasets.load(args.dataset)
    return datasets.from_file(args.file, E=args.E, u=args.u, pred=args.pred, ref=args.ref,
                              u_is_variance=args.u_is_variance, delimiter=getattr(args, "delimiter", None))


def bins_of(args, ds: datasets.Dataset) -> int:
    """--bins, or the default for this dataset (20, fewer for small data: binning.default_n_bins)."""
    if args.bins is not None:
        return args.bins
    from ..binning import default_n_bins

    return default_n_bins(ds.M, args.min_count)


def stats_list(s: str | None, default: Sequence[str]) -> list[str]:
    if not s:
        return list(default)
    return [x.strip() for x in s.split(",") if x.strip()]


def fmt(x: float) -> str:
    return f"{x:.5g}" if math.isfinite(x) else str(x)


def stats_table(ds: datasets.Dataset, stats: list[str], n_bins: int, n_boot: int, seed, method: str,
                 min_count: int = 30, shrink: bool = False, binning: str = "equal", log: bool = True) -> list[dict]:
    import warnings

    from ..core._warnings import BiasedIntervalWarning

    with warnings.catch_warnings():  # marked in the table instead ("!")
        warnings.simplefilter("ignore", BiasedIntervalWarning)
        res = bootstrap_many(stats, ds.E, ds.u, n_boot=n_boot, n_bins=n_bins, seed=seed, method=method,
                             min_count=min_count, shrink=shrink, binning=binning, log=log)
    return [{"dataset": ds.name, "stat": r.name, "estimate": r.estimate, "bias": r.bias, "se": r.se, "low": r.low,
             "high": r.high, "method": r.method, "n_boot": r.n_boot,
             "excludes_estimate": not r.low <= r.estimate <= r.high} for r in res.values()]


def print_stats(rows: list[dict]) -> None:
    head = ["dataset", "stat", "estimate", "bias", "se", "95% CI", "method"]
    body = [[r["dataset"], r["stat"], fmt(r["estimate"]), fmt(r["bias"]), fmt(r["se"]),
             f"[{fmt(r['low'])}, {fmt(r['high'])}]" + ("!" if r["excludes_estimate"] else ""), r["method"]]
            for r in rows]
    print("\n".join(text_table(head, body)))
    if any(r["excludes_estimate"] for r in rows):
        print(EXCLUDES_NOTE.replace("BCa interval", "interval"))  # any --method


def seed_of(args) -> int:
    """The run's seed: --seed, or one drawn from the OS (printed with the results)."""
    if getattr(args, "seed", None) is None:
        from ..core._checks import fresh_seed

        args.seed = fresh_seed()
    return args.seed


def boot_of(args, default: int = 5000) -> int:
    """--boot, or ``default`` when not given (validate reads None as its own default_n_boot(M))."""
    return default if args.boot is None else args.boot


def dists_of(args) -> list[str]:
    """--dists as a list (default: validate's), refused when given empty."""
    from ..verdict._validate import VALIDATE_DISTS

    if args.dists is not None and not args.dists.strip(", "):
        raise ValueError("--dists is empty: give comma-separated distributions (e.g. normal,t6,empirical) or "
                         "leave it out for the default")
    return [d.strip() for d in args.dists.split(",") if d.strip()] if args.dists else list(VALIDATE_DISTS)


def add_dask_options(sp: argparse.ArgumentParser) -> None:
    """``--scheduler`` and ``--connect-timeout``, the Dask options of ``bench`` and ``study``."""
    from ..studies._runner import DASK_CONNECT_TIMEOUT

    sp.add_argument("--scheduler", help="Dask scheduler address (tcp://HOST:PORT) for --backend dask")
    sp.add_argument("--connect-timeout", type=float, default=DASK_CONNECT_TIMEOUT, metavar="SECONDS",
                    help=f"seconds to wait for the --scheduler to answer (default {DASK_CONNECT_TIMEOUT:g})")


def add_progress_flag(sp: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` on a data command; :func:`main` makes it the default
    ``progress=`` of every library call the command makes (mcref.core._progress)."""
    sp.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bars on stderr (default: only on a terminal, for work longer than a few "
                         "seconds; --progress also into a pipe or a log)")


def data_args(sp: argparse.ArgumentParser) -> None:
    """The data-file and statistics options shared by the data commands."""
    sp.add_argument("file", nargs="?", help="CSV or NPZ file with errors and uncertainties")
    sp.add_argument("--dataset", help="built-in data set (see `mcref datasets`)")
    sp.add_argument("--E", help="error column (default: E or error)")
    sp.add_argument("--u", help="uncertainty column (default: u, uE or uncertainty)")
    sp.add_argument("--pred", help="prediction column (E = ref - pred)")
    sp.add_argument("--ref", help="reference-value column (E = ref - pred)")
    sp.add_argument("--u-is-variance", action="store_true", help="the u column holds variances")
    sp.add_argument("--delimiter", help="field delimiter of a text file (default: guessed; tab for .tsv)")
    sp.add_argument("--stat", "--stats", dest="stat",
                    help="comma-separated statistics (" + ",".join(STATISTICS) + "; validate also SKCE: the kernel "
                         "calibration error of N(0, u^2), a row beside the joint verdict)")
    sp.add_argument("--bins", type=int, default=None, help=BINS_HELP)
    sp.add_argument("--boot", type=int, default=None,
                    help="bootstrap replicates (default 5000; validate: 5000 up to M = 200000 points, fewer above, at "
                         "least 1000: mcref.default_n_boot)")
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


#: help of the --bins options that run validate (its default bins depend on M)
BINS_HELP = ("equal-count bins (default 20, fewer when M/20 < --min-count so that every bin keeps --min-count "
             "points; an explicit --bins is kept or refused)")
#: help of the --mc options that run validate (its default N_MC depends on M)
AUTO_MC = "(default: 10000 up to M = 20000 points, fewer above, at least 2000: mcref.default_n_mc)"


def features_of(args, ds: datasets.Dataset) -> dict | None:
    """The features of --x-column NAMES: columns of the file, read by the one rule of feature
    columns (:func:`mcref.datasets.read_features`: numbers when every cell parses, else labels,
    a categorical feature; as ``mcref bench --x-column`` and ``from_file(x=...)`` read them), or
    the built-in set's covariate x."""
    if args.x_column is None:
        return None
    names = [n.strip() for n in args.x_column.split(",") if n.strip()]
    if not names:
        raise ValueError("--x-column: give one or more column names, comma-separated")
    if args.file is None:
        if names != ["x"] or ds.x is None:
            raise ValueError(f"--x-column: the built-in data set {ds.name!r} has "
                             + ("one covariate, named x" if ds.x is not None else "no covariate"))
        return {"x": ds.x}
    try:
        return datasets.read_features(args.file, names, delimiter=getattr(args, "delimiter", None))
    except ValueError as exc:
        raise ValueError(f"--x-column: {str(exc).replace('`x`', 'x')}") from None


def dependence_args(sp: argparse.ArgumentParser) -> None:
    """The options of dependent rows (``validate(groups=..., order=...)``)."""
    sp.add_argument("--groups", metavar="COLUMN",
                    help="group column of FILE (dependent rows: conformers of a molecule, frames of a trajectory, "
                         "repeated measures): intervals, scale tests and permutation tests resample and permute "
                         "whole groups")
    sp.add_argument("--order", metavar="COLUMN",
                    help="time or sequence column of FILE (serial dependence): block bootstrap and block "
                         "permutation along it")
    sp.add_argument("--block-length", type=int, default=None,
                    help="rows per block along --order (default: automatic, Politis & White 2004)")
    sp.add_argument("--block-method", default="circular", choices=["circular", "moving", "stationary"],
                    help="block bootstrap along --order (default circular)")


def dependence_of(args, ds: datasets.Dataset) -> dict:
    """validate's ``groups``/``order`` keywords from --groups/--order COLUMN of the file."""
    out: dict = {}
    if args.groups is None and args.order is None:
        if args.block_length is not None:
            raise ValueError("--block-length goes with --order")
        return out
    if args.file is None:
        raise ValueError("--groups/--order name a column of FILE; the built-in data sets have none")
    cols = datasets.read_columns(args.file, delimiter=getattr(args, "delimiter", None))
    for opt, name in (("groups", args.groups), ("order", args.order)):
        if name is None:
            continue
        if name not in cols:
            raise ValueError(f"--{opt}: no column {name!r} in {args.file}; columns: {', '.join(cols)}")
        out[opt] = cols[name]
    if args.order is not None:
        import numpy as np

        v = np.asarray(out["order"])
        if v.dtype.kind == "O":
            try:
                out["order"] = v.astype(np.float64)
            except ValueError:
                raise ValueError(f"--order: the column {args.order!r} must hold numbers (a time or a sequence "
                                 "index)") from None
        out.update(block_length=args.block_length, block_method=args.block_method)
    elif args.block_length is not None:
        raise ValueError("--block-length goes with --order")
    return out
