"""Datasets: the nine packaged benchmark sets of the 2024 papers and user files
(docs/methods.md, "Data and notation").

A dataset is a set of errors ``E``, standard uncertainties ``u > 0`` and an optional
conditioning variable ``x`` (an input feature or the prediction), used for adaptivity.

* :func:`names` lists the packaged sets in the papers' order (set #1 to #9),
* :func:`load` returns one of them,
* :func:`from_file` reads a user CSV or NPZ file with validation,
* :func:`read_columns` gives every column of such a file as it is (to write them back).

The packaged sets come from GitHub ``ppernot/2024_SimRef`` (commit ``f73a3b0``); see
``mcref/data/README.md`` for attribution and ``mcref/data/_build.py`` for the derivations.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import warnings
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import as_float_array, check_E_u

__all__ = ["Dataset", "names", "load", "from_file", "read_columns"]

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

# Default column names for from_file (compared case-insensitively).
_DEFAULT_E = ("E", "error")
_DEFAULT_U = ("u", "uE", "uncertainty")
_DEFAULT_X = ("x",)
# Text cells read as NaN (then refused by the finiteness check, with a count).
_NAN_TOKENS = frozenset({"", "na", "nan", "-nan", "+nan", "null", "none"})
_TEXT_EXTENSIONS = {".csv": None, ".txt": None, ".tsv": "\t"}


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """Errors, uncertainties and an optional conditioning variable of one dataset.

    The constructor validates its inputs (finite ``E`` and ``u``, ``u > 0``, same length,
    at least two points; finite ``x`` of the same length) and stores read-only float64
    copies, so a ``Dataset`` cannot be changed after creation.

    Attributes
    ----------
    name : str
        Name of the dataset.
    E : ndarray of float64, shape (M,)
        Errors (reference minus prediction for the packaged sets).
    u : ndarray of float64, shape (M,)
        Standard uncertainties, all > 0.
    x : ndarray of float64, shape (M,) or None
        Conditioning variable (input feature or prediction), or None.
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

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"`name` must be a string, got {self.name!r}")
        if not isinstance(self.source, str):
            raise ValueError(f"`source` must be a string, got {self.source!r}")
        E, u = check_E_u(self.E, self.u, min_size=1)  # each function asks for the points it needs
        x = None
        if self.x is not None:
            x = as_float_array(self.x, "x")
            if x.shape != E.shape:
                raise ValueError(
                    f"`x` must have the same length as `E`, got {x.size} and {E.size}"
                )
        for field, arr in (("E", E), ("u", u), ("x", x)):
            if arr is not None:
                arr = np.array(arr, dtype=np.float64, copy=True)  # never freeze the caller's array
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
    """Read a dataset from a CSV file (with a header line) or a NumPy ``.npz`` file.

    Parameters
    ----------
    path : str or path-like
        File to read. ``.csv``, ``.txt`` and ``.tsv`` files are read as delimited text with
        a header line; ``.npz`` files as named 1-D arrays (the column names are the keys).
    E : str, optional
        Name of the column holding the errors. Default: the column named ``E`` or
        ``error`` (case-insensitive), unless ``ref`` and ``pred`` are given.
    u : str, optional
        Name of the column holding the uncertainties. Default: the column named ``u``,
        ``uE`` or ``uncertainty`` (case-insensitive).
    x : str, optional
        Name of the column holding the conditioning variable. Default: the column named
        ``x`` (case-insensitive) if there is one, else no ``x``; a default ``x`` column that
        is empty or not numeric is skipped with a warning (one named by ``x=`` must be valid).
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
    bit-identical to the decimal text of the file. The cells ``NA``, ``NaN``, ``null``
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
    for arg, value in (("E", E), ("u", u), ("x", x), ("pred", pred), ("ref", ref), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"`{arg}` must be a string (a column name) or None, got {value!r}")
    if not isinstance(u_is_variance, (bool, np.bool_)):
        raise ValueError(f"`u_is_variance` must be True or False, got {u_is_variance!r}")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise ValueError(f"`delimiter` must be a single character or None, got {delimiter!r}")
    if E is not None and (ref is not None or pred is not None):
        raise ValueError("give either `E` or both `ref` and `pred` (E = ref - pred), not both")
    if (ref is None) != (pred is None):
        raise ValueError("`ref` and `pred` must be given together (E = ref - pred)")

    p, table, source = _open_table(path, delimiter)
    where = p.name
    if ref is not None and pred is not None:
        r = _numeric_column(table, ref, "ref", where)
        q = _numeric_column(table, pred, "pred", where)
        err = r - q
    else:
        col_E = _resolve(table, E, "E", _DEFAULT_E, where, required=True)
        err = _numeric_column(table, col_E, "E", where)
    col_u = _resolve(table, u, "u", _DEFAULT_U, where, required=True)
    unc = _numeric_column(table, col_u, "u", where)
    col_x = _resolve(table, x, "x", _DEFAULT_X, where, required=False)
    cond = None
    if col_x is not None:
        try:
            cond = _numeric_column(table, col_x, "x", where)
        except ValueError:
            if x is not None:  # asked for: its problems are errors
                raise
            # a default-named x column that is empty or not numeric: E and u are still usable
            warnings.warn(f"{where}: the {table.kind} {col_x!r} (conditioning variable x) is empty or not "
                          "numeric; loaded without x", stacklevel=2)

    try:
        err, unc = check_E_u(err, unc, min_size=1)
    except ValueError as exc:
        what = f"column {col_u!r} (variance)" if u_is_variance else f"column {col_u!r}"
        raise ValueError(f"{where}: {exc} [`u` is {what}]") from None
    if u_is_variance:
        unc = np.sqrt(unc)
    try:
        return Dataset(name if name is not None else p.stem, err, unc, cond, source)
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
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise ValueError(f"`delimiter` must be a single character or None, got {delimiter!r}")
    table = _open_table(path, delimiter)[1]
    if table.arrays is not None:
        return {k: v for k, v in table.arrays.items() if v.ndim == 1}
    assert table.rows is not None
    out = {}
    for j, name in enumerate(table.names):
        col = np.empty(len(table.rows), dtype=object)
        col[:] = [row[j].strip() for row in table.rows]
        out[name] = col
    return out


def _open_table(path, delimiter: str | None) -> tuple[Path, _Table, str]:
    """The checked path, its table (text with the extension's default delimiter, or npz)
    and its source (an npz file's ``source`` entry, else the path)."""
    try:
        p = Path(path)
    except TypeError:
        raise ValueError(f"`path` must be a string or a path, got {path!r}") from None
    if p.is_dir():
        raise ValueError(f"`path`: {str(p)!r} is a directory; give a data file (.csv, .tsv, .txt or .npz)")
    if not p.is_file():
        raise ValueError(f"`path`: file not found: {str(p)!r}")
    ext = p.suffix.lower()
    if ext == ".npz":
        return (p, *_read_npz(p))
    if ext in _TEXT_EXTENSIONS:
        return p, _read_text(p, _TEXT_EXTENSIONS[ext] if delimiter is None else delimiter), str(p)
    raise ValueError(f"`path` must end in .csv, .txt, .tsv or .npz, got {p.name!r} (unsupported extension)")


@dataclass(frozen=True)
class _Table:
    """Raw content of a user file: text cells (``rows``) or named arrays (``arrays``)."""

    kind: str  # "column" (text file) or "key" (npz)
    names: list[str]
    rows: list[list[str]] | None = None
    arrays: dict[str, np.ndarray] | None = None


def _read_text(path: Path, delimiter: str | None) -> _Table:
    """Read a delimited text file with a header line (blank lines and lines starting with
    ``#`` are skipped)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: cannot read as UTF-8 text ({exc})") from None
    # comment lines ('#' first) are dropped, as numpy.loadtxt and pandas (comment='#') do
    text = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    first = next((ln for ln in text.splitlines() if ln.strip()), None)
    if first is None:
        raise ValueError(f"{path.name}: the file is empty (a header line is required)")
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(first, delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    try:
        rows = [
            r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter,
                                  skipinitialspace=True)
            if any(c.strip() for c in r)
        ]
    except csv.Error as exc:
        raise ValueError(f"{path.name}: malformed delimited text ({exc})") from None
    header = [h.strip() for h in rows[0]]
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise ValueError(
                f"{path.name}, line {i + 2}: {len(row)} fields but the header has "
                f"{len(header)} (delimiter {delimiter!r}; pass `delimiter` if it is wrong)"
            )
    return _Table("column", header, rows=rows[1:])


def _read_npz(path: Path) -> tuple[_Table, str]:
    """Open an ``.npz`` file; return its arrays and its ``source`` string (else the path)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path.name}: cannot read as a .npz file ({exc})") from None
    source = str(path)
    src = arrays.get("source")
    if src is not None and src.ndim == 0 and src.dtype.kind == "U":
        source = str(arrays.pop("source"))
    return _Table("key", list(arrays), arrays=arrays), source


def _resolve(
    table: _Table,
    given: str | None,
    arg: str,
    defaults: tuple[str, ...],
    where: str,
    *,
    required: bool,
) -> str | None:
    """Column name for argument ``arg``: the given one, or the unique default match."""
    if given is not None:
        return given  # checked by _numeric_column
    wanted = {d.lower() for d in defaults}
    found = [c for c in table.names if c.lower() in wanted]
    if len(found) > 1:
        raise ValueError(
            f"{where}: several {table.kind}s could hold `{arg}` ({', '.join(map(repr, found))}); "
            f"pass `{arg}=` to choose"
        )
    if found:
        return found[0]
    if not required:
        return None
    hint = " or `ref` and `pred`" if arg == "E" else ""
    raise ValueError(
        f"{where}: missing {table.kind} for `{arg}`: looked for "
        f"{' / '.join(map(repr, defaults))} (case-insensitive); available {table.kind}s: "
        f"{', '.join(map(repr, table.names))}. Pass `{arg}=`{hint}"
    )


def _numeric_column(table: _Table, col: str, arg: str, where: str) -> np.ndarray:
    """Column ``col`` (argument ``arg``) as a finite 1-D float64 array, or ValueError."""
    matches = [c for c in table.names if c == col] or [
        c for c in table.names if c.lower() == col.lower()
    ]
    if not matches:
        raise ValueError(
            f"{where}: `{arg}` names {table.kind} {col!r}, which is missing; available "
            f"{table.kind}s: {', '.join(map(repr, table.names))}"
        )
    if len(matches) > 1:
        raise ValueError(f"{where}: `{arg}` = {col!r} matches several {table.kind}s {matches}")
    label = f"{table.kind} {matches[0]!r} (`{arg}`)"
    values: Any
    if table.arrays is not None:
        values = table.arrays[matches[0]]
        if values.dtype.kind not in "biuf":
            raise ValueError(
                f"{where}: {label} must hold numbers (non-numeric array of dtype {values.dtype})"
            )
    else:
        assert table.rows is not None
        j = table.names.index(matches[0])
        values = np.empty(len(table.rows), dtype=np.float64)
        for i, row in enumerate(table.rows):
            cell = row[j].strip()
            try:
                values[i] = float(cell)
            except ValueError:
                if cell.lower() not in _NAN_TOKENS:
                    raise ValueError(
                        f"{where}: {label} holds a non-numeric value {cell!r} at data row {i}"
                    ) from None
                values[i] = np.nan
    try:
        return as_float_array(values, arg)
    except ValueError as exc:
        raise ValueError(f"{where}: {label}: {exc}") from None
