"""Commands for sample sets: ``mcref compare A B`` (two sets, one law or two?) and
``mcref diversity A B ...`` (the Vendi score of each set at a common size)."""

from __future__ import annotations


def parser_compare(sub) -> None:
    """``mcref compare A B``: the two-sample verdict of :func:`mcref.samples.two_sample`."""

    def cmd_compare(args) -> int:
        from ..report._render import atomic_path
        from ..samples import read_samples, two_sample
        from ._common import seed_of

        npy = [p.lower().endswith(".npy") for p in (args.A, args.B)]
        X, names = read_samples(args.A, columns=None if npy[0] else args.columns, delimiter=args.delimiter)
        cols_b = None if npy[1] else (args.columns if args.columns is not None or npy[0] else names)
        Y, _ = read_samples(args.B, columns=cols_b, delimiter=args.delimiter)
        stats = None if args.stat is None else [s.strip() for s in args.stat.split(",") if s.strip()]
        options = {k: v for k, v in dict(stats=stats, alpha=args.alpha, n_perm=args.perm, n_boot=args.boot,
                                          kernel=args.kernel, k=args.k).items() if v is not None}
        if args.length_scale is not None:
            try:
                options["length_scale"] = float(args.length_scale)
            except ValueError:
                options["length_scale"] = args.length_scale
        seed = seed_of(args)
        tab = two_sample(X, Y, seed=seed, sequential=not args.fixed, **options)
        text = tab.to_json() if args.json else tab.to_csv() if args.csv else f"{tab}\nseed: {seed} (--seed {seed} repeats this run)"
        print(text, end="" if args.csv else "\n")
        if args.out:
            out = (tab.to_json() + "\n" if args.out.lower().endswith(".json") else tab.to_csv()
                   if args.out.lower().endswith(".csv") else str(tab) + "\n")
            with atomic_path(args.out, what="--out") as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(out)
            if not (args.json or args.csv):
                print(f"wrote {args.out}")
        return 0

    sp = sub.add_parser(
        "compare", help="two sample sets: one law or two? (MMD, energy, FD, PRDC, C2ST)",
        description="Compare two sample sets (rows = samples): each statistic against its values on permutations "
                    "of the pooled sample (its value under one law at these sizes), its exact p-value, a bootstrap "
                    "interval, a finding in words, and one joint verdict (mcref.samples.two_sample).")
    sp.add_argument("A", help="the reference set X (the data): .csv, .tsv, .parquet, .feather, .npz or an (n, d) .npy")
    sp.add_argument("B", help="the set Y judged against it (the model's samples), the same formats")
    sp.add_argument("--columns", metavar="A,B,...",
                    help="the columns of the tables that form the sets (default: every column of A; an .npy array is "
                         "taken whole)")
    sp.add_argument("--delimiter", help="field delimiter of text files (default: by extension)")
    sp.add_argument("--stat", metavar="S,...",
                    help="statistics, comma-separated, among MMD, energy, FD, precision, recall, density, coverage, "
                         "C2ST (default: all but C2ST)")
    sp.add_argument("--perm", type=int, metavar="N", help="permutation budget (default 999)")
    sp.add_argument("--fixed", action="store_true", help="run all the permutations (no sequential stopping)")
    sp.add_argument("--boot", type=int, metavar="N", help="bootstrap resamples of the intervals (default 200; 0: none)")
    sp.add_argument("--alpha", type=float, metavar="A", help="level of the verdict (default 0.05)")
    sp.add_argument("--kernel", choices=("gaussian", "laplace", "imq"), help="the MMD's kernel (default gaussian)")
    sp.add_argument("--length-scale", metavar="L",
                    help="the MMD kernel's length: a number, or median (default), sbibm, alibi")
    sp.add_argument("--k", type=int, metavar="K", help="neighbours of precision/recall/density/coverage (default 5)")
    sp.add_argument("--seed", type=int, help="random seed (default: drawn, and printed so that the run can be "
                                             "repeated)")
    out = sp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV")
    sp.add_argument("--out", metavar="FILE", help="also write the table to FILE (.json, .csv, else text)")
    sp.set_defaults(func=cmd_compare)


def parser_diversity(sub) -> None:
    """``mcref diversity A B ...``: the Vendi scores of :func:`mcref.samples.diversity`."""

    def cmd_diversity(args) -> int:
        from pathlib import Path

        from ..report._render import atomic_path
        from ..samples import diversity, read_samples
        from ._common import seed_of

        def read(path, names):
            npy = path.lower().endswith(".npy")
            return read_samples(path, columns=None if npy else (args.columns or names), delimiter=args.delimiter)

        sets, names = {}, None
        for path in args.sets:
            X, cols = read(path, names)
            names = names or (None if path.lower().endswith(".npy") else cols)
            key = Path(path).stem
            while key in sets or key == "reference":
                key += "'"
            sets[key] = X
        ref = None if args.reference is None else read(args.reference, names)[0]
        options = {k: v for k, v in dict(n=args.n, q=args.q, kernel=args.kernel, length_scale=args.length_scale,
                                          n_perm=args.perm, n_sub=args.subsamples).items() if v is not None}
        seed = seed_of(args)
        tab = diversity(sets, reference=ref, seed=seed, **options)
        text = tab.to_json() if args.json else f"{tab}\nseed: {seed} (--seed {seed} repeats this run)"
        print(text)
        if args.out:
            with atomic_path(args.out, what="--out") as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(tab.to_json() + "\n" if args.out.lower().endswith(".json") else str(tab) + "\n")
            if not args.json:
                print(f"wrote {args.out}")
        return 0

    sp = sub.add_parser(
        "diversity", help="the diversity (Vendi score) of sample sets at a common size",
        description="The Vendi score of each sample set (rows = samples) at one common number of rows (the smallest "
                    "set's), with a jackknife interval, and the differences between sets and to a reference with "
                    "permutation p-values (mcref.samples.diversity). Each set is named by its file's stem.")
    sp.add_argument("sets", nargs="+", metavar="SET",
                    help="the sets: .csv, .tsv, .parquet, .feather, .npz or an (n, d) .npy")
    sp.add_argument("--reference", metavar="FILE", help="the ground truth's samples, compared with every set")
    sp.add_argument("--columns", metavar="A,B,...",
                    help="the columns of the tables that form the sets (default: every column of the first table)")
    sp.add_argument("--delimiter", help="field delimiter of text files (default: by extension)")
    sp.add_argument("--n", type=int, metavar="N", help="the common number of rows (default: the smallest set's)")
    sp.add_argument("--q", type=float, metavar="Q", help="the order of the Vendi score (default 1; inf allowed)")
    sp.add_argument("--kernel", choices=("gaussian", "linear"), help="the similarity (default gaussian)")
    sp.add_argument("--length-scale", type=float, metavar="L",
                    help="the Gaussian kernel's length (default: the median distance in the reference, else in the "
                         "pooled sets)")
    sp.add_argument("--perm", type=int, metavar="N", help="permutations of each difference's test (default 99)")
    sp.add_argument("--subsamples", type=int, metavar="N", help="subsamples of a larger set (default 5)")
    sp.add_argument("--seed", type=int, help="random seed (default: drawn, and printed so that the run can be "
                                             "repeated)")
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp.add_argument("--out", metavar="FILE", help="also write the table to FILE (.json, else text)")
    sp.set_defaults(func=cmd_diversity)
