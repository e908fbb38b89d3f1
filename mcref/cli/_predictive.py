"""``mcref validate FILE --samples "s_*"`` and ``--quantiles q05,q50,q95``: predictive forms
of a file to one :class:`mcref.PredictiveCheck` (:func:`mcref.from_samples`,
:func:`mcref.from_quantiles`), the target values in the ``--ref`` column.

Part of :mod:`mcref.cli`; the CLI calls only the public API.
"""

from __future__ import annotations

import fnmatch
import os
import re

import numpy as np

from .. import datasets

__all__ = ["cmd_predictive", "predictive_args", "quantile_level"]


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
    sp.add_argument("--levels", metavar="LEVELS",
                    help="with --quantiles: the levels of its columns, comma-separated in (0, 1) (default: read "
                         "from the names, q05 -> 0.05, q50 -> 0.5, q975 -> 0.975); with --samples: the central "
                         "coverage levels checked (default 0.5,0.9,0.95)")


def quantile_level(name: str) -> float | None:
    """The level a quantile column's name gives: ``q05`` → 0.05, ``q5`` → 0.5, ``q975`` → 0.975,
    ``q_0.9``/``q0.9`` → 0.9 (a ``q`` or ``quantile`` prefix, then the digits after "0."); None
    when the name gives none."""
    m = re.fullmatch(r"(?:q|quantile)[_-]?(0?\.\d+|\d+)", name.strip(), flags=re.IGNORECASE)
    if m is None:
        return None
    digits = m.group(1)
    return float(digits) if "." in digits else float("0." + digits)


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


def _quantile_columns(cols: dict, spec: str, levels: str | None, path: str) -> tuple[list[str], list[float]]:
    names = [c.strip() for c in spec.split(",") if c.strip()]
    if not names:
        raise ValueError("--quantiles: give comma-separated column names, e.g. q05,q50,q95")
    missing = [n for n in names if n not in cols]
    if missing:
        raise ValueError(f"--quantiles: no column {', '.join(map(repr, missing))} in {path}; columns: "
                         f"{', '.join(cols)}")
    if levels is not None:
        lv = _levels(levels)
        if len(lv) != len(names):
            raise ValueError(f"--levels: {len(lv)} levels for {len(names)} --quantiles columns")
        return names, lv
    lv = [quantile_level(n) for n in names]
    if None in lv:
        raise ValueError(f"--quantiles: the level of column {names[lv.index(None)]!r} cannot be read from its name "
                         "(q05 -> 0.05); give --levels")
    return names, [float(v) for v in lv]


def cmd_predictive(args, validate_options: dict) -> int:
    """``mcref validate FILE --samples/--quantiles``: print the :class:`mcref.PredictiveCheck`."""
    from ..predictive import from_quantiles, from_samples

    option = "--samples" if args.samples is not None else "--quantiles"
    if args.file is None or args.dataset is not None:
        raise ValueError(f"{option} reads the columns of a FILE (CSV, Parquet, Feather, NPZ), not --dataset")
    for opt in ("E", "u", "pred"):
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} is not used with {option}: the predictions are its columns and the "
                             "target the --ref column")
    if args.ref is None:
        raise ValueError(f"{option}: give --ref COLUMN, the observed (target) values")
    if args.json or args.csv:
        raise ValueError(f"--json/--csv: not available with {option}; the check prints as text")
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
        try:
            seed = validate_options.pop("seed")
            check = from_samples(y, samples, x=x, name=name, seed=seed, **extra, **validate_options)
        except ValueError as exc:
            raise ValueError(f"--samples {args.samples}: {exc}") from None
    else:
        names, levels = _quantile_columns(cols, args.quantiles, args.levels, args.file)
        q = np.column_stack([_numbers(cols, n, "--quantiles") for n in names])
        try:
            check = from_quantiles(y, q, levels, x=x, name=name)
        except ValueError as exc:
            raise ValueError(f"--quantiles {args.quantiles}: {exc}") from None
    print(check)
    if args.samples is not None:
        print(f"seed: {seed} (--seed {seed} repeats this run)")
    return 0
