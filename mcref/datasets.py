"""Datasets: the nine packaged benchmark sets of the 2024 papers and user files
(docs/methods.md, "Data and notation").

A dataset is a set of errors ``E``, standard uncertainties ``u > 0`` and an optional
conditioning variable ``x`` (an input feature or the prediction), used for adaptivity.

* :func:`names` lists the packaged sets in the papers' order (set #1 to #9),
* :func:`load` returns one of them,
* :func:`from_file` reads a user file (CSV, NPZ, Parquet, Feather) with validation,
* :func:`from_frame` takes the columns of a pandas DataFrame,
* :func:`from_groups` and :func:`from_pairs` split one table of many models into datasets
  (long format: a group column; wide format: one column pair per model),
* :func:`read_columns` gives every column of such a file as it is (to write them back).

The packaged sets come from GitHub ``ppernot/2024_SimRef`` (commit ``f73a3b0``); see
``mcref/data/README.md`` for attribution and ``mcref/data/_build.py`` for the derivations.
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping

import numpy as np

from .core._input import (DEFAULT_E, DEFAULT_U, DEFAULT_X, NeedsTextReader, Table, feature_column, frame_table,
                      numeric_column, open_table, prefetch, resolve, text_column)
from .core._checks import as_feature_array, check_E_u

__all__ = ["Dataset", "names", "load", "from_file", "from_frame", "from_groups", "from_pairs", "parse_pairs",
           "read_columns", "read_features"]

_NAMES: tuple[str, ...] = (
    "Diffusion_RF",
    "Perovskite_RF",
    "Diffusion_LR",
    "Perovskite_LR",
    "Diffusion_GPR_Bayesian",
    "Perovskite_GPR_Bayesian",
    "QM9_E",
    "logP_10k_a_LS-GCN",
    "logP_150k_LS-GCN",
)



@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """Errors, uncertainties and an optional conditioning variable of one dataset.

    The constructor validates its inputs (finite ``E`` and ``u``, ``u > 0``, same length,
    at least two points; ``x`` of the same length: finite numbers, or labels) and stores
    read-only copies, so a ``Dataset`` cannot be changed after creation.

    Attributes
    ----------
    name : str
        Name of the dataset.
    E : ndarray of float64, shape (M,)
        Errors (reference minus prediction for the packaged sets).
    u : ndarray of float64, shape (M,)
        Standard uncertainties, all > 0.
    x : ndarray of float64 or of str, shape (M,), or None
        Conditioning variable (input feature or prediction): numbers, or labels (a
        categorical feature, e.g. a text column: :func:`mcref.validate` gives it one bin
        per level); or None.
    source : str
        Where the data come from and how ``E``, ``u`` and ``x`` were derived.
    Z : ndarray of float64, shape (M,)
        Standardized errors ``E / u`` (property).
    M : int
        Number of points (property).

    Examples
    --------
    >>> ds = Dataset("toy", [0.1, -0.2, 0.3], [0.1, 0.2, 0.3])
    >>> ds
    Dataset(name='toy', M=3)
    >>> ds.Z.tolist()
    [1.0, -1.0, 1.0]
    """

    name: str
    E: np.ndarray
    u: np.ndarray
    x: np.ndarray | None = None
    source: str = ""

    #: read by ``_checks.dataset_args``: a function's ``E`` may be a Dataset
    __mcref_dataset__ = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"`name` must be a string, got {self.name!r}")
        if not isinstance(self.source, str):
            raise ValueError(f"`source` must be a string, got {self.source!r}")
        E, u = check_E_u(self.E, self.u, min_size=1)  # each function asks for the points it needs
        x = None
        if self.x is not None:
            x = as_feature_array(self.x, "x")  # numbers, or the labels of a categorical feature
            if x.shape != E.shape:
                raise ValueError(
                    f"`x` must have the same length as `E`, got {x.size} and {E.size}"
                )
        for field, arr in (("E", E), ("u", u), ("x", x)):
            if arr is not None:
                arr = np.array(arr, dtype=arr.dtype if field == "x" else np.float64, copy=True)  # never the caller's
                arr.flags.writeable = False
            object.__setattr__(self, field, arr)

    @property
    def Z(self) -> np.ndarray:
        """Standardized errors ``E / u``."""
        return self.E / self.u

    @property
    def M(self) -> int:
        """Number of points."""
        return int(self.E.size)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, M={self.M})"


def names() -> list[str]:
    """Names of the packaged benchmark sets, in the papers' order (set #1 to #9).

    Returns
    -------
    list of str
        ``Diffusion_RF``, ``Perovskite_RF``, ``Diffusion_LR``, ``Perovskite_LR``,
        ``Diffusion_GPR_Bayesian``, ``Perovskite_GPR_Bayesian`` (Palmer et al. 2022),
        ``QM9_E`` (Busk et al. 2022), ``logP_10k_a_LS-GCN`` and ``logP_150k_LS-GCN``
        (Rasmussen et al. 2023).

    See Also
    --------
    load : load one of these sets.

    Examples
    --------
    >>> names()[6]
    'QM9_E'
    >>> len(names())
    9
    """
    return list(_NAMES)


def load(name: str) -> Dataset:
    """Load a packaged benchmark set.

    Parameters
    ----------
    name : str
        One of :func:`names` (case-insensitive).

    Returns
    -------
    Dataset
        The set, with ``E``, ``u``, ``x`` in the order of the original file (the order of
        tied ``u`` values matters for binned statistics) and its provenance in ``source``.

    Raises
    ------
    ValueError
        If ``name`` is not one of :func:`names`.

    See Also
    --------
    names : the available sets.
    from_file : read your own data.

    Notes
    -----
    The sets are those of the 2024 papers of P. Pernot, from GitHub ``ppernot/2024_SimRef``
    (commit ``f73a3b0``, license CeCILL v2.1); original data from Palmer et al. 2022
    (sets 1-6), Busk et al. 2022 (set 7) and Rasmussen et al. 2023 (sets 8-9). Rows with
    ``u <= 1e-6 sd(E)`` are removed, as in the papers: 2 rows of ``Perovskite_RF`` and 18
    of ``Perovskite_GPR_Bayesian``. ``x`` is the input feature ``X`` (sets 1-6) or the
    prediction (sets 7-9). For the logP sets ``E = logP - y_pred``, the opposite sign of
    the ``error`` column of the original files.

    Examples
    --------
    >>> ds = load("QM9_E"); ds.M
    13885
    >>> load("qm9_e").name
    'QM9_E'
    """
    if not isinstance(name, str):
        raise ValueError(f"`name` must be a string, one of {', '.join(_NAMES)}; got {name!r}")
    lookup = {n.lower(): n for n in _NAMES}
    canonical = lookup.get(name.lower())
    if canonical is None:
        raise ValueError(
            f"`name` must be one of {', '.join(_NAMES)} (case-insensitive); got {name!r}"
        )
    return _load_packaged(canonical)


@functools.lru_cache(maxsize=None)
def _load_packaged(name: str) -> Dataset:
    """Read ``mcref/data/<name>.npz`` (cached: a Dataset is immutable)."""
    resource = resources.files("mcref") / "data" / f"{name}.npz"
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        x = npz["x"] if "x" in npz.files else None
        return Dataset(name, npz["E"], npz["u"], x, str(npz["source"]))


def from_file(
    path: str | os.PathLike[str],
    *,
    E: str | None = None,
    u: str | None = None,
    x: str | None = None,
    pred: str | None = None,
    ref: str | None = None,
    u_is_variance: bool = False,
    delimiter: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Read a dataset from a CSV file (with a header line), a NumPy ``.npz``, a Parquet or a
    Feather file.

    Parameters
    ----------
    path : str or path-like
        File to read. ``.csv``, ``.txt`` and ``.tsv`` files are read as delimited text with
        a header line; ``.npz`` files as named 1-D arrays (the column names are the keys);
        ``.parquet``/``.pq`` and ``.feather``/``.arrow`` files through pyarrow
        (``pip install "mcref[parquet]"``).
    E : str, optional
        Name of the column holding the errors. Default: the column named ``E`` or
        ``error`` (case-insensitive), unless ``ref`` and ``pred`` are given.
    u : str, optional
        Name of the column holding the uncertainties. Default: the column named ``u``,
        ``uE`` or ``uncertainty`` (case-insensitive).
    x : str, optional
        Name of the column holding the conditioning variable, read by the one rule of feature
        columns: numbers when every cell parses as a number, else labels (a categorical
        feature, one bin per level in :func:`mcref.validate`), as ``mcref validate
        --x-column`` and ``mcref bench --x-column`` read it. Default: the column named ``x``
        (case-insensitive) if there is one and it holds numbers, else no ``x``; a default
        ``x`` column that is empty or not numeric is skipped with a warning (name it with
        ``x=`` to read its labels).
    pred, ref : str, optional
        Names of the columns holding the predictions and the reference values; give both
        (and not ``E``) to get ``E = ref - pred``.
    u_is_variance : bool, default: False
        The ``u`` column holds variances: ``u = sqrt(column)``.
    delimiter : str, optional
        Field delimiter of a text file. Default: tab for ``.tsv``, else guessed from the
        header line among ``,``, ``;``, tab and ``|`` (``,`` if none is found).
    name : str, optional
        Name of the dataset. Default: the file name without its extension.

    Returns
    -------
    Dataset
        ``source`` is the ``source`` entry of an ``.npz`` file if it has one, else the path.

    Raises
    ------
    ValueError
        If the file does not exist or has an unsupported extension, a column is missing
        (the message lists the available ones) or ambiguous, a value is not a number,
        a column holds NaN or infinite values (count and first index given), ``u`` is
        not > 0, or the arguments conflict.

    See Also
    --------
    load : the packaged benchmark sets.

    Notes
    -----
    Numbers are parsed with Python's ``float`` (correctly rounded), so the values are
    bit-identical to the decimal text of the file; a text file of 1 MiB or more is read by
    ``pyarrow.csv`` when pyarrow is installed (also correctly rounded: the same bits; only
    the requested columns are converted; a file with a comment line, or a requested column
    with a missing or non-numeric cell, is read the slow way, whose messages name the row).
    Parquet and Feather columns are taken as stored (float64 bits; integers converted). The cells ``NA``, ``NaN``, ``null``
    and empty cells are read as NaN and refused by the finiteness check. Row order is
    kept. Beware of the sign convention: a column named ``error`` may hold
    ``pred - ref`` (the logP files of Rasmussen et al. 2023 do); use ``ref`` and
    ``pred`` to be explicit. Only the requested columns need to be numeric.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = p.write_text("y,yhat,sigma2\\n1.0,0.5,0.25\\n2.0,2.5,1.0\\n")
    >>> ds = from_file(p, ref="y", pred="yhat", u="sigma2", u_is_variance=True)
    >>> ds, ds.E.tolist(), ds.u.tolist()
    (Dataset(name='mine', M=2), [0.5, -0.5], [0.5, 1.0])
    """
    _check_column_args(E=E, u=u, x=x, pred=pred, ref=ref, name=name, u_is_variance=u_is_variance)
    delimiter = _check_delimiter(delimiter)
    cols = dict(E=E, u=u, x=x, pred=pred, ref=ref, u_is_variance=u_is_variance)
    try:
        p, table, source = open_table(path, delimiter)
        return _dataset_from_table(table, p.name, name if name is not None else p.stem, source, **cols)
    except NeedsTextReader:  # the fast reader met a cell it does not read as the text reader does
        p, table, source = open_table(path, delimiter, fast=False)
        return _dataset_from_table(table, p.name, name if name is not None else p.stem, source, **cols)


def from_frame(
    df: Any,
    *,
    E: str | None = None,
    u: str | None = None,
    x: str | None = None,
    pred: str | None = None,
    ref: str | None = None,
    u_is_variance: bool = False,
    name: str | None = None,
) -> Dataset:
    """A dataset from the columns of a pandas DataFrame, or of a mapping of column name to 1-D array.

    The column options and their defaults are those of :func:`from_file`: ``E`` (default: the
    column ``E`` or ``error``) or ``ref`` and ``pred`` (``E = ref - pred``, the convention of
    the packaged sets), ``u`` (default: ``u``, ``uE`` or ``uncertainty``), ``x`` (default:
    ``x`` if there is one), ``u_is_variance``.

    Parameters
    ----------
    df : pandas.DataFrame or mapping of str to array_like
        The table; its row order is kept (the index is not used). A mapping (a ``dict`` of
        columns) is accepted on purpose, as ``pandas.DataFrame(df)`` would read it but
        without needing pandas: the same columns give the same bits, every column must be
        1-D and of one length (else a ValueError naming ``df``), and the dataset's
        ``source`` says ``"mapping"``.
    E, u, x, pred, ref : str, optional
        Column names, as :func:`from_file`.
    u_is_variance : bool, default: False
        The ``u`` column holds variances: ``u = sqrt(column)``.
    name : str, optional
        Name of the dataset. Default: ``df.attrs["name"]`` if set, else ``"frame"``.

    Returns
    -------
    Dataset
        The values of the columns as float64 (no parsing: a column written to a CSV file by
        pandas and read back by :func:`from_file` gives the same bits).

    Raises
    ------
    ValueError
        A missing column (the message lists the available ones), a non-numeric column, a
        missing value (``NaN``, ``None``, ``pd.NA``: count and first row given), ``u`` not > 0,
        conflicting arguments.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 3.0], "yhat": [0.5, 2.5, 3.0], "sigma": [0.5, 0.5, 1.0]})
    >>> ds = from_frame(df, ref="y", pred="yhat", u="sigma", name="mine")
    >>> ds, ds.E.tolist()
    (Dataset(name='mine', M=3), [0.5, -0.5, 0.0])
    >>> from_frame({"E": [0.5, -0.5], "u": [0.5, 1.0]}).source  # a dict of columns
    'mapping'
    """
    _check_column_args(E=E, u=u, x=x, pred=pred, ref=ref, name=name, u_is_variance=u_is_variance)
    table = frame_table(df)
    if name is None:
        attrs = getattr(df, "attrs", None)
        name = str(attrs["name"]) if isinstance(attrs, dict) and "name" in attrs else "frame"
    source = "mapping" if isinstance(df, Mapping) else "DataFrame"
    return _dataset_from_table(table, "frame", name, source, E=E, u=u, x=x, pred=pred, ref=ref,
                               u_is_variance=u_is_variance)


def _open_any(data: Any, delimiter: str | None, text_columns=()) -> tuple[Table, str, str, str | None]:
    """(table, where, source, file stem or None) of a path or a frame."""
    if isinstance(data, (str, os.PathLike)):
        p, table, source = open_table(data, delimiter, text_columns=text_columns)
        return table, p.name, source, p.stem
    return frame_table(data), "frame", "DataFrame", None


def from_groups(
    data: Any,
    by: str,
    *,
    E: str | None = None,
    u: str | None = None,
    x: str | None = None,
    pred: str | None = None,
    ref: str | None = None,
    u_is_variance: bool = False,
    delimiter: str | None = None,
) -> list[Dataset]:
    """The datasets of a long table: one per value of the column ``by`` (e.g. ``"model"``).

    Parameters
    ----------
    data : str, path-like, pandas.DataFrame or mapping of str to array_like
        A file (as :func:`from_file`) or a frame (as :func:`from_frame`).
    by : str
        The column whose values name the groups.
    E, u, x, pred, ref, u_is_variance, delimiter
        As :func:`from_file`, the same columns for every group.

    Returns
    -------
    list of Dataset
        One per group, in the order of the groups' first rows; each named by its group value
        (as text), with its rows in table order: the dataset :func:`from_frame` gives for
        the group's rows alone (``df[df[by] == value]``) named by its value.

    Raises
    ------
    ValueError
        ``by`` missing from the table (the available columns listed), a row without a group
        value, or a group's data refused (the message names the group).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"model": ["a", "b", "a", "b"], "E": [0.1, -0.2, 0.3, 0.0],
    ...                    "u": [0.1, 0.2, 0.3, 0.4]})
    >>> [(d.name, d.E.tolist()) for d in from_groups(df, "model")]
    [('a', [0.1, 0.3]), ('b', [-0.2, 0.0])]
    """
    if not isinstance(by, str) or not by:
        raise ValueError(f"`by` must be a column name (a non-empty string), got {by!r}")
    _check_column_args(E=E, u=u, x=x, pred=pred, ref=ref, name=None, u_is_variance=u_is_variance)
    cols = dict(E=E, u=u, x=x, pred=pred, ref=ref, u_is_variance=u_is_variance)
    delimiter = _check_delimiter(delimiter)
    try:
        return _groups(_open_any(data, delimiter, (by,)), by, cols)
    except NeedsTextReader:
        p, table, source = open_table(data, delimiter, fast=False)
        return _groups((table, p.name, source, p.stem), by, cols)


def _groups(opened, by: str, cols: dict) -> list[Dataset]:
    table, where, source, _stem = opened
    prefetch(table, [(by, ())] + _asked(**cols))  # a large text file: the labels and numbers in one pass
    labels = text_column(table, by, "by", where)
    names, first = np.unique(labels.astype(str), return_index=True)
    out = []
    for k in np.argsort(first, kind="stable"):
        rows = np.flatnonzero(labels == names[k])
        name = str(names[k])
        out.append(_dataset_from_table(table.subset(rows), f"{where}, group {name!r} (by={by!r})", name,
                                       f"{source}, {by} = {name}", **cols))
    return out


def from_pairs(
    data: Any,
    pairs: Any,
    *,
    x: str | None = None,
    ref: str | None = None,
    u_is_variance: bool = False,
    delimiter: str | None = None,
) -> list[Dataset]:
    """The datasets of a wide table: one per (errors or predictions, uncertainties) column pair.

    Parameters
    ----------
    data : str, path-like, pandas.DataFrame or mapping of str to array_like
        A file (as :func:`from_file`) or a frame (as :func:`from_frame`).
    pairs : str or sequence of tuples
        ``"pred_A:sigma_A,pred_B:sigma_B"`` (an item may start with ``name=``:
        ``"A=pred_A:sigma_A"``), or a list of ``(col, u_col)`` or ``(name, col, u_col)``.
        Without ``ref`` the first column of a pair holds the errors E; with ``ref`` it holds
        predictions and ``E = ref - pred``. Default name: the first column's.
    x, ref : str, optional
        Columns shared by every pair: the conditioning variable and the reference values.
    u_is_variance : bool, default: False
        The uncertainty columns hold variances.
    delimiter : str, optional
        As :func:`from_file`.

    Returns
    -------
    list of Dataset
        One per pair, in the order given.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"y": [1.0, 2.0], "p_A": [0.5, 2.5], "s_A": [0.5, 0.5],
    ...                    "p_B": [1.0, 1.0], "s_B": [1.0, 2.0]})
    >>> [(d.name, d.E.tolist()) for d in from_pairs(df, "A=p_A:s_A,B=p_B:s_B", ref="y")]
    [('A', [0.5, -0.5]), ('B', [0.0, 1.0])]
    """
    specs = parse_pairs(pairs)
    _check_column_args(E=None, u=None, x=x, pred=None, ref=None, name=None, u_is_variance=u_is_variance)
    if ref is not None and not isinstance(ref, str):
        raise ValueError(f"`ref` must be a string (a column name) or None, got {ref!r}")
    delimiter = _check_delimiter(delimiter)

    def build(opened):
        table, where, source, _stem = opened
        out = []
        for name, col, ucol in specs:
            e_args = {"E": col} if ref is None else {"pred": col, "ref": ref}
            out.append(_dataset_from_table(table, f"{where}, pair {name!r}", name, f"{source}, {col}:{ucol}",
                                           u=ucol, x=x, u_is_variance=u_is_variance,
                                           **{"E": None, "pred": None, "ref": None, **e_args}))
        return out

    try:
        return build(_open_any(data, delimiter))
    except NeedsTextReader:
        p, table, source = open_table(data, delimiter, fast=False)
        return build((table, p.name, source, p.stem))


def parse_pairs(pairs: Any) -> list[tuple[str, str, str]]:
    """``pairs`` of :func:`from_pairs` as ``[(name, column, u column)]``, or ValueError.

    Examples
    --------
    >>> parse_pairs("A=p_A:s_A, p_B:s_B")
    [('A', 'p_A', 's_A'), ('p_B', 'p_B', 's_B')]
    """
    rule = ("`pairs` must be 'col:u_col,...' (an item may start with 'name='), or a list of (col, u_col) or "
            "(name, col, u_col)")
    if isinstance(pairs, str):
        items = []
        for item in (t.strip() for t in pairs.split(",")):
            if not item:
                continue
            name, _, rest = item.rpartition("=")
            cols = rest.split(":")
            if len(cols) != 2 or not all(c.strip() for c in cols):
                raise ValueError(f"{rule}; got the item {item!r}")
            items.append(((name.strip() or cols[0].strip()), cols[0].strip(), cols[1].strip()))
    elif isinstance(pairs, (list, tuple)):
        items = []
        for item in pairs:
            if not isinstance(item, (list, tuple)) or len(item) not in (2, 3) or not all(
                    isinstance(c, str) and c for c in item):
                raise ValueError(f"{rule}; got the item {item!r}")
            items.append(tuple(item) if len(item) == 3 else (item[0], item[0], item[1]))
    else:
        raise ValueError(f"{rule}; got {type(pairs).__name__}")
    if not items:
        raise ValueError(f"{rule}; got no pair")
    names = [n for n, _, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"`pairs`: two pairs are named {dup[0]!r}; name them ('A=col:u_col')")
    return items


def _check_column_args(*, E, u, x, pred, ref, name, u_is_variance) -> None:
    for arg, value in (("E", E), ("u", u), ("x", x), ("pred", pred), ("ref", ref), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"`{arg}` must be a string (a column name) or None, got {value!r}")
    if not isinstance(u_is_variance, (bool, np.bool_)):
        raise ValueError(f"`u_is_variance` must be True or False, got {u_is_variance!r}")
    if E is not None and (ref is not None or pred is not None):
        raise ValueError("give either `E` or both `ref` and `pred` (E = ref - pred), not both")
    if (ref is None) != (pred is None):
        raise ValueError("`ref` and `pred` must be given together (E = ref - pred)")


def _check_delimiter(delimiter: Any) -> str | None:
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise ValueError(f"`delimiter` must be a single character or None, got {delimiter!r}")
    return delimiter


def _asked(*, E, u, x, pred, ref, **_) -> list[tuple[str | None, tuple[str, ...]]]:
    """The columns :func:`_dataset_from_table` will ask for: (name given, default names)."""
    first = [(ref, ()), (pred, ())] if ref is not None and pred is not None else [(E, DEFAULT_E)]
    return first + [(u, DEFAULT_U), (x, DEFAULT_X)]


def _dataset_from_table(table: Table, where: str, name: str, source: str, *, E, u, x, pred, ref,
                        u_is_variance) -> Dataset:
    """The dataset of a table's columns (arguments checked by :func:`_check_column_args`)."""
    prefetch(table, _asked(E=E, u=u, x=x, pred=pred, ref=ref))  # a large text file: its columns in one pass
    if ref is not None and pred is not None:
        r = numeric_column(table, ref, "ref", where)
        q = numeric_column(table, pred, "pred", where)
        err = r - q
    else:
        col_E = resolve(table, E, "E", DEFAULT_E, where, required=True)
        err = numeric_column(table, col_E, "E", where)
    col_u = resolve(table, u, "u", DEFAULT_U, where, required=True)
    unc = numeric_column(table, col_u, "u", where)
    col_x = resolve(table, x, "x", DEFAULT_X, where, required=False)
    cond = None
    if col_x is not None and x is not None:  # asked for: numbers or labels, its problems are errors
        cond = feature_column(table, col_x, "x", where)
    elif col_x is not None:
        try:
            cond = numeric_column(table, col_x, "x", where)
        except ValueError:
            # a default-named x column that is empty or not numeric: E and u are still usable
            warnings.warn(f"{where}: the {table.kind} {col_x!r} (conditioning variable x) is empty or not "
                          f"numeric; loaded without x (x={col_x!r} reads its labels as a categorical feature)",
                          stacklevel=3)

    try:
        err, unc = check_E_u(err, unc, min_size=1)
    except ValueError as exc:
        what = f"column {col_u!r} (variance)" if u_is_variance else f"column {col_u!r}"
        raise ValueError(f"{where}: {exc} [`u` is {what}]") from None
    if u_is_variance:
        unc = np.sqrt(unc)
    try:
        return Dataset(name, err, unc, cond, source)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def read_columns(path: str | os.PathLike[str], *, delimiter: str | None = None) -> dict[str, np.ndarray]:
    """Every column of a user file, unconverted, in file order: the rows :func:`from_file`
    reads, for writing them back beside new columns (``mcref recalibrate --out``).

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.txt``, ``.tsv`` or ``.npz`` file, as for :func:`from_file`.
    delimiter : str, optional
        Field delimiter of a text file (default: as :func:`from_file`).

    Returns
    -------
    dict of str to ndarray
        Column name → values: the text of the cells (object arrays of ``str``, verbatim but
        for surrounding spaces) for a text file; the 1-D arrays of an ``.npz`` file (its
        other entries, e.g. a scalar ``source``, are left out). Row ``i`` is row ``i`` of
        the :class:`Dataset` that :func:`from_file` returns for the same file.

    Raises
    ------
    ValueError
        As :func:`from_file` for a missing file, an unsupported extension or a malformed
        text file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = p.write_text("id,E,u\\na,0.5,1.0\\nb,-0.25,0.5\\n")
    >>> {k: v.tolist() for k, v in read_columns(p).items()}
    {'id': ['a', 'b'], 'E': ['0.5', '-0.25'], 'u': ['1.0', '0.5']}
    """
    table = open_table(path, _check_delimiter(delimiter), fast=False)[1]
    if table.arrays is not None:
        return {k: v for k, v in table.arrays.items() if v.ndim == 1}
    assert table.rows is not None
    out = {}
    for j, name in enumerate(table.names):
        col = np.empty(len(table.rows), dtype=object)
        col[:] = [row[j].strip() for row in table.rows]
        out[name] = col
    return out


def read_features(path: str | os.PathLike[str], names, *, delimiter: str | None = None) -> dict[str, np.ndarray]:
    """Feature columns of a user file, read as :func:`from_file` reads ``x``: numbers when
    every cell parses as a number, else labels (a categorical feature).

    Parameters
    ----------
    path : str or path-like
        A file :func:`from_file` reads.
    names : str or sequence of str
        Column names (exact, else case-insensitive).
    delimiter : str, optional
        Field delimiter of a text file (default: as :func:`from_file`).

    Returns
    -------
    dict of str to ndarray
        Name as given → float64 values or ``str`` labels, in row order (row ``i`` is row
        ``i`` of the :class:`Dataset` of the same file).

    Raises
    ------
    ValueError
        A missing column (the available ones listed), a missing or infinite number, a
        missing label.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = p.write_text("E,u,grp,t\\n0.5,1.0,a,1\\n-0.25,0.5,b,2.5\\n")
    >>> {k: v.tolist() for k, v in read_features(p, ["grp", "t"]).items()}
    {'grp': ['a', 'b'], 't': [1.0, 2.5]}
    """
    names = [names] if isinstance(names, str) else list(names)
    delimiter = _check_delimiter(delimiter)

    def read(fast: bool) -> dict[str, np.ndarray]:
        p, table, _ = open_table(path, delimiter, fast=fast)
        lower = {c.lower() for c in table.names}
        missing = [n for n in names if n not in table.names and n.lower() not in lower]
        if missing:
            raise ValueError(f"{p.name}: no column {', '.join(map(repr, missing))}; available columns: "
                             f"{', '.join(map(repr, table.names))}")
        return {n: as_feature_array(feature_column(table, n, "x", p.name), n) for n in names}

    try:
        return read(True)
    except NeedsTextReader:  # a text column of a fast-read file: the text reader's rules and messages
        return read(False)
