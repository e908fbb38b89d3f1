"""Command-line interface: ``mcref stats``, ``mcref validate``, ``mcref demo``, ``mcref datasets``.

The CLI calls only the public API. Bad input prints one clear line on stderr and
exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Sequence


from . import datasets
from .bootstrap import bootstrap_many
from .stats import STATISTICS

DEMO_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")


def _load(args) -> datasets.Dataset:
    if (args.file is None) == (args.dataset is None):
        raise ValueError("give either a FILE or --dataset NAME (one of: " + ", ".join(datasets.names()) + ")")
    if args.dataset is not None:
        return datasets.load(args.dataset)
    return datasets.from_file(args.file, E=args.E, u=args.u, pred=args.pred, ref=args.ref,
                              u_is_variance=args.u_is_variance)


def _stats_list(s: str | None, default: Sequence[str]) -> list[str]:
    if not s:
        return list(default)
    return [x.strip() for x in s.split(",") if x.strip()]


def _fmt(x: float) -> str:
    return f"{x:.5g}" if math.isfinite(x) else str(x)


def _stats_table(ds: datasets.Dataset, stats: list[str], n_bins: int, n_boot: int, seed, method: str) -> list[dict]:
    res = bootstrap_many(stats, ds.E, ds.u, n_boot=n_boot, n_bins=n_bins, seed=seed, method=method)
    return [{"dataset": ds.name, "stat": r.name, "estimate": r.estimate, "bias": r.bias, "se": r.se, "low": r.low,
             "high": r.high, "method": r.method, "n_boot": r.n_boot} for r in res.values()]


def _print_stats(rows: list[dict]) -> None:
    head = ["dataset", "stat", "estimate", "bias", "se", "95% CI", "method"]
    body = [[r["dataset"], r["stat"], _fmt(r["estimate"]), _fmt(r["bias"]), _fmt(r["se"]),
             f"[{_fmt(r['low'])}, {_fmt(r['high'])}]", r["method"]] for r in rows]
    w = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{x}}}" for x in w)
    print(fmt.format(*head))
    for b in body:
        print(fmt.format(*b))


def cmd_stats(args) -> int:
    ds = _load(args)
    rows = _stats_table(ds, _stats_list(args.stat, DEMO_STATS), args.bins, args.boot, args.seed, args.method)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        _print_stats(rows)
    return 0


def cmd_validate(args) -> int:
    from .validate import validate

    ds = _load(args)
    dists = [d.strip() for d in args.dists.split(",")] if args.dists else ["normal", "t6"]
    tab = validate(ds.E, ds.u, stats=_stats_list(args.stat, DEMO_STATS), dists=dists, n_bins=args.bins,
                   n_boot=args.boot, n_mc=args.mc, seed=args.seed, name=ds.name)
    if args.json:
        print(tab.to_json())
    elif args.csv:
        print(tab.to_csv(), end="")
    else:
        print(tab)
    return 0


def cmd_demo(args) -> int:
    t0 = time.perf_counter()
    if args.validate:
        from .validate import validate

        for name in datasets.names():
            ds = datasets.load(name)
            print(validate(ds.E, ds.u, n_boot=args.boot, n_mc=args.mc, seed=args.seed, name=name))
            print()
    else:
        rows = []
        for name in datasets.names():
            ds = datasets.load(name)
            rows += _stats_table(ds, list(DEMO_STATS), 20, args.boot, args.seed, "bca")
        _print_stats(rows)
    print(f"\n{len(datasets.names())} data sets in {time.perf_counter() - t0:.1f} s "
          f"(B={args.boot}{', N_MC=' + str(args.mc) if args.validate else ''})")
    return 0


def cmd_datasets(args) -> int:
    for name in datasets.names():
        ds = datasets.load(name)
        print(f"{name:26s} M={ds.M:6d}  x={'yes' if ds.x is not None else 'no'}")
    return 0


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
        sp.add_argument("--stat", help="comma-separated statistics (" + ",".join(STATISTICS) + ")")
        sp.add_argument("--bins", type=int, default=20, help="equal-count bins (default 20)")
        sp.add_argument("--boot", type=int, default=5000, help="bootstrap replicates (default 5000)")
        sp.add_argument("--seed", type=int, default=None, help="random seed")
        sp.add_argument("--json", action="store_true", help="print JSON")

    sp = sub.add_parser("stats", help="statistics with bootstrap confidence intervals")
    data_args(sp)
    sp.add_argument("--method", default="bca", choices=["bca", "percentile", "basic"])
    sp.set_defaults(func=cmd_stats)

    sp = sub.add_parser("validate", help="full validation table (references, zeta-scores, verdicts)")
    data_args(sp)
    sp.add_argument("--mc", type=int, default=10_000, help="Monte Carlo repeats (default 10000)")
    sp.add_argument("--dists", help="comma-separated generative distributions (default normal,t6)")
    sp.add_argument("--csv", action="store_true", help="print CSV")
    sp.set_defaults(func=cmd_validate)

    sp = sub.add_parser("demo", help="run on the nine built-in literature data sets")
    sp.add_argument("--boot", type=int, default=5000)
    sp.add_argument("--mc", type=int, default=10_000)
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--stats-only", dest="validate", action="store_false",
                    help="only the statistics with BCa intervals (no simulated references)")
    sp.set_defaults(func=cmd_demo, validate=True)

    sp = sub.add_parser("datasets", help="list the built-in data sets")
    sp.set_defaults(func=cmd_datasets)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"mcref: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
