"""Input features x for the adaptivity rows of :func:`mcref.validate` (docs/methods.md,
"Adaptivity"): reading them (one array, an (M, k) array, a dict or a DataFrame), checking
them, and cutting their bins.

Adaptivity is calibration conditional on the input features (P. Pernot, "Validation of
uncertainty quantification metrics: a primer based on the consistency and adaptivity
concepts", arXiv:2303.07170): the binned statistics (ENCE, ZMSE, UCE) are computed over
bins of a feature x instead of bins of u.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .core._checks import check_int
from .binning import Binning, make_bins, pooled_level_bins, whole_runs

__all__ = ["Feature", "FeatureBins", "as_features", "feature_bins", "MAX_LEVELS"]

#: a numeric feature with at most this many distinct values is categorical (one bin per level)
MAX_LEVELS = 20


@dataclass(frozen=True)
class Feature:
    """One checked feature: its name, values (float codes for a categorical one) and kind."""

    name: str
    values: np.ndarray
    categorical: bool
    levels: tuple = ()


def _one(name: str, v: Any, m: int) -> Feature:
    arr = np.asarray(v)
    if arr.ndim != 1:
        raise ValueError(f"feature {name!r} of `x` must be one-dimensional, got shape {arr.shape}")
    if arr.size != m:
        raise ValueError(f"feature {name!r} of `x` has {arr.size} values, but `E` and `u` have {m}")
    kind = arr.dtype.kind
    if kind in "OUSb" or str(getattr(v, "dtype", "")) == "category":
        if kind == "O" and any(val is None or (isinstance(val, float) and np.isnan(val)) for val in arr):
            raise ValueError(f"feature {name!r} of `x` has missing values (None/NaN)")
        levels, codes = np.unique(arr.astype(str) if kind == "O" else arr, return_inverse=True)
        if levels.size < 2:
            raise ValueError(f"feature {name!r} of `x` is constant (one level): it has no bins to compare")
        return Feature(name, codes.astype(np.float64), True, tuple(levels.tolist()))
    if kind not in "iuf":
        raise ValueError(f"feature {name!r} of `x` must be numbers or categories (strings), got dtype {arr.dtype}")
    x = arr.astype(np.float64)
    bad = ~np.isfinite(x)
    if bad.any():
        raise ValueError(f"feature {name!r} of `x` has {int(bad.sum())} non-finite values (NaN or inf), "
                         f"the first at index {int(np.flatnonzero(bad)[0])}")
    levels = np.unique(x)
    if levels.size < 2:
        raise ValueError(f"feature {name!r} of `x` is constant: it has no bins to compare")
    if levels.size <= MAX_LEVELS:
        return Feature(name, x, True, tuple(levels.tolist()))
    return Feature(name, x, False)


def as_features(x: Any, m: int) -> list[Feature]:
    """The features of ``x`` for a dataset of ``m`` points, checked.

    ``x`` is one feature (an array of m values, named ``"x"``, or a pandas Series, named by
    its name), several (an (m, k) array, named ``x0``, ``x1``, …; a dict or a pandas
    DataFrame of named columns) or None (no feature). Strings, booleans, pandas categories
    and numbers with at most :data:`MAX_LEVELS` distinct values are categorical.
    """
    if x is None:
        return []
    if hasattr(x, "columns") and hasattr(x, "__getitem__"):  # a DataFrame
        items = [(str(c), x[c].to_numpy()) for c in x.columns]
    elif isinstance(x, dict):
        items = [(str(k), v) for k, v in x.items()]
    elif hasattr(x, "to_numpy") and hasattr(x, "name"):  # a Series
        items = [(str(x.name) if x.name is not None else "x", x.to_numpy())]
    else:
        arr = np.asarray(x)
        if arr.ndim == 1:
            items = [("x", arr)]
        elif arr.ndim == 2 and arr.shape[0] == m:
            items = [(f"x{j}", arr[:, j]) for j in range(arr.shape[1])]
        else:
            raise ValueError(f"`x` must be an array of {m} values, an ({m}, k) array, a dict or a DataFrame "
                             f"of features, got shape {arr.shape}")
    if not items:
        raise ValueError("`x` holds no feature")
    names = [n for n, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"`x` names a feature twice: {', '.join(dup)}")
    return [_one(n, v, m) for n, v in items]


@dataclass(frozen=True)
class FeatureBins:
    """The bins of one feature (:func:`feature_bins`) and how they were cut.

    Attributes
    ----------
    binning : Binning
        Each bin's points (``binning.labels()``: every point's bin, input order).
    how : str
        One line for the table's notes: the rule, the bin count, and what was merged (the
        pooled levels of a categorical feature, by name) or moved (cuts moved to the end of
        a run of tied values).
    """

    binning: Binning
    how: str

    @property
    def n_bins(self) -> int:
        return self.binning.n_bins

    def labels(self) -> np.ndarray:
        return self.binning.labels()


def _level_name(f: Feature, code: float) -> str:
    return str(f.levels[int(code)]) if f.levels and isinstance(f.levels[0], str) else f"{code:g}"


def feature_bins(f: Feature, n_bins: int, *, min_count: int = 30, binning: str = "equal",
                 log: bool | None = None, first_seen=None) -> FeatureBins:
    """The bins of feature ``f`` (docs/methods.md, "Adaptivity").

    * A categorical feature gets one bin per level, its levels below ``min_count`` points
      pooled into one bin (:func:`mcref.binning.pooled_level_bins`: a rule on the counts
      alone, so strings, integers and a pandas category give the same bins); bins are
      numbered by their first point along ``first_seen`` (row indices; validate passes the
      rows in ascending u, so the labels' spelling changes nothing, not even the rounding).
    * A numeric feature gets ``n_bins`` bins of the rule ``binning`` (:func:`mcref.binning.make_bins`;
      equal counts by default, shrunk so that a bin keeps ``min_count`` points; adaptive bins
      on a log grid only for a positive feature, else on a linear one), then no run of tied
      values is cut (:func:`mcref.binning.whole_runs`): which tied rows fall in which bin
      would otherwise depend on the row order.
    """
    min_count = check_int(min_count, "min_count", minimum=1)
    m = f.values.size
    if f.categorical:
        b, pooled = pooled_level_bins(f.values, min_count=min_count, first_seen=first_seen)
        how = f"categorical ({len(f.levels)} levels), {b.n_bins} bins of its levels (min_count={min_count})"
        if pooled.size:
            how += (f"; levels pooled into one bin (each below min_count, or the smallest added to reach it): "
                    f"{', '.join(repr(_level_name(f, c)) for c in pooled)}")
    else:
        if m < 2 * min_count:
            raise ValueError(f"feature {f.name!r} of `x`: M={m} points cannot fill two bins of `min_count`="
                             f"{min_count} points")
        log = log is not False and bool(np.all(f.values > 0))  # a log grid only where it exists
        b = make_bins(f.values, n_bins, binning=binning, min_count=min_count, shrink=True, log=log)
        starts = whole_runs(f.values[b.order], b.starts, min_count=min_count)
        how = f"{starts.size - 1} {'equal-count' if binning == 'equal' else 'adaptive'} bins"
        if not np.array_equal(starts, b.starts):
            how += " (cuts moved to the ends of runs of tied values)"
            b = Binning(order=b.order, starts=starts, n_bins=starts.size - 1)
    if b.n_bins < 2:
        raise ValueError(f"feature {f.name!r} of `x` leaves a single bin (M={m}, `min_count`={min_count}): "
                         "nothing to compare")
    return FeatureBins(b, how)
