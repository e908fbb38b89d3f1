"""``mcref validate FILE --samples "s_*"``, ``--quantiles q05,q50,q95`` and ``--intervals
lo90:hi90``: predictive forms of a file to one :class:`mcref.PredictiveCheck`
(:func:`mcref.from_samples`, :func:`mcref.from_quantiles`, :func:`mcref.from_intervals`), the
target values in the ``--ref`` column; printed as text, ``--json`` or ``--csv``.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import fnmatch
import os
import re

import numpy as np

from .. import datasets

__all__ = ["cmd_predictive", "predictive_args", "quantile_level", "name_level"]


def predictive_args(sp) -> None:
    """The options of the predictive forms on ``mcref validate``."""
    form = sp.add_mutually_exclusive_group()
    form.add_argument("--samples", metavar="GLOBS",
                      help="the columns of FILE matching the glob(s) (comma-separated, e.g. 's_*') are draws of "
                           "each case's predictive distribution (ensemble members, MC dropout, posterior draws): "
                           "E from their mean, u from their sd, rank calibration, coverage and ensemble CRPS, and "
                           "the validation of (E, u) (mcref.from_samples); the target is the --ref column")
    form.add_argument("--quantiles", metavar="COLUMNS",
                      help="comma-separated columns of FILE holding predicted quantiles, in increasing level "
                           "(e.g. q05,q50,q95): coverage per level and per central interval, interval scores, "
                           "local coverage (mcref.from_quantiles); the target is the --ref column")
    form.add_argument("--intervals", metavar="PAIRS",
                      help="comma-separated LOWER:UPPER column pairs of FILE holding central prediction intervals "
                           "(e.g. lo50:hi50,lo90:hi90): coverage per level, interval scores, local coverage "
                           "(mcref.from_intervals); the target is the --ref column")
    sp.add_argument("--levels", metavar="LEVELS",
                    help="with --quantiles: the levels of its columns, comma-separated in (0, 1) (default: read "
                         "from the names, q05 -> 0.05, q50 -> 0.5, q975 -> 0.975); with --intervals: the level "
                         "of each pair (default: read from the names, lo90:hi90 -> 0.9); with --samples: the "
                         "central coverage levels checked (default 0.5,0.9,0.95)")
    sp.add_argument("--swaps", metavar="N", type=int,
                    help="with --samples: swapped sets of the combined verdict (y swapped with a random one of its "
                         "row's values: the exact null of a calibrated ensemble; default 999, 0 for none)")


def _level_of(digits: str) -> float:
    """``"05"`` → 0.05, ``"5"`` → 0.5, ``"975"`` → 0.975 (the digits after "0."), ``"0.9"`` → 0.9."""
    return float(digits) if "." in digits else float("0." + digits)


def quantile_level(name: str) -> float | None:
    """The level a quantile column's name gives: ``q05`` → 0.05, ``q5`` → 0.5, ``q975`` → 0.975,
    ``q_0.9``/``q0.9`` → 0.9 (a ``q`` or ``quantile`` prefix, then the digits after "0."); None
    when the name gives none."""
    m = re.fullmatch(r"(?:q|quantile)[_-]?(0?\.\d+|\d+)", name.strip(), flags=re.IGNORECASE)
    return None if m is None else _level_of(m.group(1))


def name_level(name: str) -> float | None:
    """The level the number at the end of an interval column's name gives: ``lo90`` → 0.9,
    ``upper_95`` → 0.95, ``hi_0.5`` → 0.5 (digits as :func:`quantile_level`); None without one."""
    m = re.search(r"(?<![\d.])(0?\.\d+|\d+)$", name.strip())
    return None if m is None else _level_of(m.group(1))


def _levels(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--levels: give comma-separated numbers in (0, 1), got {text!r}") from None


def _numbers(cols: dict, name: str, option: str) -> np.ndarray:
    try:
        v = np.asarray(cols[name], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{option}: column {name!r} holds a cell that is not a number") from None
    if not np.isfinite(v).all():
        i = int(np.argmax(~np.isfinite(v)))
        raise ValueError(f"{option}: column {name!r} has a missing or infinite value (row {i + 1})")
    return v


def _sample_columns(cols: dict, globs: str, path: str) -> list[str]:
    pats = [g.strip() for g in globs.split(",") if g.strip()]
    if not pats:
        raise ValueError("--samples: give a glob of column names, e.g. 's_*'")
    names = [c for c in cols if any(fnmatch.fnmatchcase(c, p) for p in pats)]
    if not names:
        raise ValueError(f"--samples: no column of {path} matches {globs!r}; columns: {', '.join(cols)}")
    if len(names) < 2:
        raise ValueError(f"--samples: {globs!r} matches one column ({names[0]!r}); an ensemble needs 2 or more")
    return names


def _present(cols: dict, names, option: str, path: str) -> None:
    """Every column of ``names`` is in the file, or a ValueError naming the option and listing the columns."""
    missing = [n for n in names if n not in cols]
    if missing:
        raise ValueError(f"{option}: no column {', '.join(map(repr, missing))} in {path}; columns: "
                         f"{', '.join(cols)}")


def _given_levels(levels: str | None, n: int, what: str) -> list[float] | None:
    """--levels, one per column or pair (``what``), or None when not given."""
    if levels is None:
        return None
    lv = _levels(levels)
    if len(lv) != n:
        raise ValueError(f"--levels: {len(lv)} levels for {n} {what}")
    return lv


def _quantile_columns(cols: dict, spec: str, levels: str | None, path: str) -> tuple[list[str], list[float]]:
    names = [c.strip() for c in spec.split(",") if c.strip()]
    if not names:
        raise ValueError("--quantiles: give comma-separated column names, e.g. q05,q50,q95")
    _present(cols, names, "--quantiles", path)
    given = _given_levels(levels, len(names), "--quantiles columns")
    if given is not None:
        return names, given
    lv = [quantile_level(n) for n in names]
    if None in lv:
        raise ValueError(f"--quantiles: the level of column {names[lv.index(None)]!r} cannot be read from its name "
                         "(q05 -> 0.05); give --levels")
    return names, [float(v) for v in lv]


def _interval_columns(cols: dict, spec: str, levels: str | None, path: str) -> tuple[list[tuple[str, str]], list[float]]:
    pairs = [p.strip() for p in spec.split(",") if p.strip()]
    if not pairs or any(p.count(":") != 1 for p in pairs):
        raise ValueError(f"--intervals: give comma-separated LOWER:UPPER column pairs, e.g. lo50:hi50,lo90:hi90; got "
                         f"{spec!r}")
    pairs = [tuple(c.strip() for c in p.split(":")) for p in pairs]
    _present(cols, [c for p in pairs for c in p], "--intervals", path)
    given = _given_levels(levels, len(pairs), "--intervals pairs")
    if given is not None:
        return pairs, given
    lv = []
    for lo, hi in pairs:
        a, b = name_level(lo), name_level(hi)
        if a is None or a != b:
            raise ValueError(f"--intervals: the level of the pair {lo}:{hi} cannot be read from its names (lo90:hi90 "
                             "-> 0.9); give --levels")
        lv.append(a)
    return pairs, lv


def cmd_predictive(args, validate_options: dict) -> int:
    """``mcref validate FILE --samples/--quantiles/--intervals``: print the :class:`mcref.PredictiveCheck`
    (text, ``--json`` or ``--csv``)."""
    from ..predictive import from_intervals, from_quantiles, from_samples

    option = ("--samples" if args.samples is not None else "--quantiles" if args.quantiles is not None
              else "--intervals")
    if args.file is None or args.dataset is not None:
        raise ValueError(f"{option} reads the columns of a FILE (CSV, Parquet, Feather, NPZ), not --dataset")
    for opt in ("E", "u", "pred"):
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} is not used with {option}: the predictions are its columns and the "
                             "target the --ref column")
    if args.ref is None:
        raise ValueError(f"{option}: give --ref COLUMN, the observed (target) values")
    cols = datasets.read_columns(args.file, delimiter=getattr(args, "delimiter", None))
    if args.ref not in cols:
        raise ValueError(f"--ref: no column {args.ref!r} in {args.file}; columns: {', '.join(cols)}")
    y = _numbers(cols, args.ref, "--ref")
    x = None
    if args.x_column is not None:
        xs = [n.strip() for n in args.x_column.split(",") if n.strip()]
        if len(xs) != 1 or xs[0] not in cols:
            raise ValueError(f"--x-column: with {option}, give one numeric column of {args.file}")
        x = _numbers(cols, xs[0], "--x-column")
    name = os.path.splitext(os.path.basename(str(args.file)))[0]
    if args.samples is not None:
        names = _sample_columns(cols, args.samples, args.file)
        samples = np.column_stack([_numbers(cols, n, "--samples") for n in names])
        extra = {} if args.levels is None else {"levels": _levels(args.levels)}
        if args.swaps is not None:
            extra["n_swaps"] = args.swaps
        if any(str(st).upper() == "SKCE" for st in validate_options.get("stats", ())):
            extra["skce"] = True  # --stats ...,SKCE: also the SKCE of y against the members themselves
        try:
            seed = validate_options.pop("seed")
            check = from_samples(y, samples, x=x, name=name, seed=seed, **extra, **validate_options)
        except ValueError as exc:
            raise ValueError(f"--samples {args.samples}: {exc}") from None
    elif args.swaps is not None:
        raise ValueError("--swaps goes with --samples (the members swapped with y)")
    elif args.quantiles is not None:
        names, levels = _quantile_columns(cols, args.quantiles, args.levels, args.file)
        q = np.column_stack([_numbers(cols, n, "--quantiles") for n in names])
        try:
            check = from_quantiles(y, q, levels, x=x, name=name)
        except ValueError as exc:
            raise ValueError(f"--quantiles {args.quantiles}: {exc}") from None
    else:
        pairs, levels = _interval_columns(cols, args.intervals, args.levels, args.file)
        lo = np.column_stack([_numbers(cols, a, "--intervals") for a, _ in pairs])
        hi = np.column_stack([_numbers(cols, b, "--intervals") for _, b in pairs])
        try:
            check = from_intervals(y, lo, hi, levels, x=x, name=name)
        except ValueError as exc:
            raise ValueError(f"--intervals {args.intervals}: {exc}") from None
    if args.json:
        print(check.to_json())
    elif args.csv:
        print(check.to_csv(), end="")
    else:
        print(check)
        if check.seed is not None:
            print(f"seed: {check.seed} (--seed {check.seed} repeats this run)")
    return 0
