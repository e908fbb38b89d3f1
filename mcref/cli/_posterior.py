"""The command ``mcref posterior truth draws``: the check of :func:`mcref.posterior.from_posterior`.

The truth (one row per case) and the draws (one row per case and draw) are long tables (CSV,
Parquet, Feather, NPZ) or ``.npy`` arrays, read by :func:`mcref.posterior.read_posterior`;
the check is printed as text or ``--json``, its figure written with ``--out``.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

__all__ = ["cmd_posterior", "parser_posterior"]


def cmd_posterior(args) -> int:
    """Read the two files, run the check, print it (and write its figure with --out)."""
    import os

    from ..posterior import from_posterior, read_posterior
    from ._common import seed_of

    params = None if args.params is None else [p.strip() for p in args.params.split(",") if p.strip()]
    if params is not None and not params:
        raise ValueError("--params is empty: give comma-separated parameter columns (e.g. mu,sigma) or leave it out "
                         "for every column but --case and --draw")
    draw = None if args.draw == "" else args.draw
    truth, draws, names = read_posterior(args.truth, args.draws, case=args.case, draw=draw, params=params,
                                         delimiter=args.delimiter)
    options = {} if args.swaps is None else {"n_swaps": args.swaps}
    if args.alpha is not None:
        options["alpha"] = args.alpha
    seed = seed_of(args)
    check = from_posterior(truth, draws, names=names, seed=seed, **options)
    if args.json:
        print(check.to_json())
    else:
        print(check)
        print(f"seed: {seed} (--seed {seed} repeats this run)")
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..plots import plot_posterior
        from ..report._render import atomic_path

        with atomic_path(args.out, what="--out") as tmp:
            axes = plot_posterior(check)
            fig = axes[0].figure
            fig.savefig(tmp, format=os.path.splitext(args.out)[1].lstrip(".") or "png", dpi=110)
        plt.close(fig)
        print(f"wrote {args.out}")
    return 0


def parser_posterior(sub) -> None:
    """``mcref posterior TRUTH DRAWS``: SBC per parameter and jointly, TARP, one exact verdict."""
    sp = sub.add_parser(
        "posterior", help="posterior draws of vector parameters: SBC, TARP, one exact verdict",
        description="Check posterior draws against the true parameters of N simulations (simulation-based "
                    "calibration): per-parameter ranks, joint checks (TARP, projections, depth), sharpness, and "
                    "one verdict of exact size by the swap null (mcref.posterior.from_posterior).")
    sp.add_argument("truth", help="the true parameters: a table with one row per case (the --case column and one "
                                  "column per parameter; .csv, .tsv, .parquet, .feather, .npz) or an (N, d) .npy")
    sp.add_argument("draws", help="the posterior draws: a long table with one row per (case, draw) and the same "
                                  "parameter columns, or an (N, S, d) .npy")
    sp.add_argument("--params", metavar="A,B,...",
                    help="the parameter columns, comma-separated (default: every column of DRAWS but --case and "
                         "--draw)")
    sp.add_argument("--case", default="case", metavar="COLUMN", help="the case column of both tables (default: case)")
    sp.add_argument("--draw", default="draw", metavar="COLUMN",
                    help="the column numbering each case's draws (default: draw; --draw '' takes the rows in file "
                         "order)")
    sp.add_argument("--delimiter", help="field delimiter of text files (default: by extension)")
    sp.add_argument("--swaps", metavar="N", type=int,
                    help="swapped sets of the combined verdict (the truth swapped with a random one of its S + 1 "
                         "vectors: the exact null of a correct posterior; default 999, at least 19)")
    sp.add_argument("--alpha", type=float, metavar="A", help="level of the verdict (default 0.05)")
    sp.add_argument("--seed", type=int, help="random seed (default: drawn, and printed so that the run can be "
                                             "repeated)")
    sp.add_argument("--json", action="store_true", help="print the check as JSON")
    sp.add_argument("--out", metavar="FILE.png",
                    help="write the figure (ECDF − t per parameter with its band, TARP's ECP − α) to FILE (needs "
                         "the plot extra)")
    sp.set_defaults(func=cmd_posterior)
