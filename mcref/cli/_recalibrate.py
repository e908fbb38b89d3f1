"""``mcref recalibrate``: fit a recalibration of u, validate before and after, write the
recalibrated data.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import json
import sys

from .. import datasets
from ..report._render import atomic_path, json_text
from ..workflows._recalibrate import METHODS as RECAL_METHODS
from ..verdict._validate import RULES
from ._common import boot_of, AUTO_MC, data_args, DEMO_STATS, dists_of, load_data, seed_of, stats_list

__all__ = ["cmd_recalibrate", "parser_recalibrate"]


def cmd_recalibrate(args) -> int:
    """Fit a recalibration map (:func:`mcref.recalibrate`); with --cv K, validate it on held-out
    data (:func:`mcref.recalibrate_cv`); with --out, write the data with a ``u_recalibrated`` column."""
    import os

    from ..workflows._recalibrate import X_METHODS, recalibrate, recalibrate_cv

    if args.x_column is not None and args.method not in X_METHODS:
        raise ValueError(f"--x-column is used only by --method {' or '.join(X_METHODS)}, not {args.method!r}")
    if args.bins is not None and args.method != "bvs":
        raise ValueError(f"--bins is used only by --method bvs, not {args.method!r}")
    if args.degree is not None and args.method != "poly":
        raise ValueError(f"--degree is used only by --method poly, not {args.method!r}")
    out = None if args.out is None else os.path.abspath(args.out)  # checked before any work (cli.main)
    if args.dataset is not None and args.file is None and args.x_column not in (None, "x"):
        raise ValueError(f"--x-column: a built-in data set has one covariate, named x; got {args.x_column!r}")
    if args.file is not None and args.dataset is None and args.x_column is not None:
        try:
            ds = datasets.from_file(args.file, E=args.E, u=args.u, x=args.x_column, pred=args.pred, ref=args.ref,
                                    u_is_variance=args.u_is_variance, delimiter=args.delimiter)
        except ValueError as exc:
            raise ValueError(str(exc).replace("`x`", "--x-column")) from None
    else:
        ds = load_data(args)
    x = None
    if args.x_column is not None:
        if ds.x is None:
            raise ValueError(f"--x-column: the built-in data set {ds.name!r} has no covariate x")
        if ds.x.dtype.kind != "f":
            raise ValueError(f"--x-column: column {args.x_column!r} holds text (a categorical feature); --method bvs "
                             "bins a numeric covariate (mcref validate --x-column takes categories)")
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

        from ..core._warnings import FewReplicatesWarning, TieOrderWarning

        dists = dists_of(args)
        with warnings.catch_warnings():  # notes of the printed tables, as in `mcref validate`
            warnings.simplefilter("ignore", FewReplicatesWarning)
            warnings.simplefilter("ignore", TieOrderWarning)
            cv = recalibrate_cv(ds.E, ds.u, args.method, n_splits=args.cv, n_boot=boot_of(args), n_mc=args.mc,
                                seed=seed_of(args), stats=stats_list(args.stat, DEMO_STATS), dists=dists,
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
            print(f"\nseed={args.seed}, B={boot_of(args)}, N_MC={cv.after.n_mc}")
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


def parser_recalibrate(sub) -> None:
    sp = sub.add_parser(
        "recalibrate", help="fit a recalibration map u -> u' (and validate it on held-out data with --cv K)",
        description="Fit a recalibration of the uncertainties (zms: u' = s*u with s^2 = <Z^2>; rce: s^2 = MSE/MV; "
        "bvs: one factor per equal-count bin of u or of --x-column; poly: u'^2 = a + b*u^2; isotonic: isotonic "
        "regression of E^2 on u^2) and print its parameters with standard errors. --cv K validates the method on "
        "held-out data: each fold's u' comes from the map fitted on the other K-1 folds, and the validation "
        "tables before and after are printed side by side. --out writes the input's columns plus u_recalibrated.")
    data_args(sp)
    sp.add_argument("--method", required=True, choices=list(RECAL_METHODS), help="recalibration method")
    sp.add_argument("--x-column", metavar="NAME",
                    help="--method bvs: bin on this covariate column instead of u (a built-in set: x)")
    sp.add_argument("--degree", type=int, default=None, choices=[1, 2],
                    help="--method poly: u'^2 = a + b*u^2 (1, default) or + c*u^4 (2)")
    sp.add_argument("--out", metavar="FILE",
                    help="write the input's columns plus u_recalibrated (standard uncertainties of the map fitted "
                         "on all the data; with --cv also u_recalibrated_cv, the held-out values) as CSV")
    sp.add_argument("--cv", type=int, metavar="K", help="validate on held-out data by K-fold cross-fitting")
    sp.add_argument("--mc", type=int, default=None, help="Monte Carlo repeats of --cv's validation " + AUTO_MC)
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
