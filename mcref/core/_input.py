"""The tables behind :mod:`mcref.datasets`: user files (delimited text, ``.npz``, Parquet,
Feather) and in-memory frames, read into one :class:`Table`, and the checked columns taken
from it.

Delimited text is read in one of two ways that give the same bits:

* the text reader (:func:`read_text`): Python's :mod:`csv` and ``float`` (correctly rounded),
  with mcref's rules for comments, blank rows, ``NA`` cells and messages naming the row;
* the fast reader (:func:`read_text_fast`, files of :data:`FAST_CSV_BYTES` or more when
  pyarrow is installed): ``pyarrow.csv`` (correctly rounded parsing), one column at a time
  when it is first asked for (:class:`CsvColumns`: the columns never asked for are never
  converted). A file with a comment line or a byte that is not UTF-8 goes to the text reader
  at once; a column that pyarrow cannot read exactly as the text reader would (missing
  cells, text, a line with the wrong field count) raises :class:`NeedsTextReader` when asked
  for, and the caller reads the file again with the text reader, whose rules and messages apply.
"""

from __future__ import annotations

import csv
import io
import mmap
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ._checks import as_float_array

__all__ = ["Table", "NeedsTextReader", "CsvColumns", "open_table", "frame_table", "resolve", "numeric_column", "text_column",
           "feature_column", "prefetch", "require_pyarrow", "DEFAULT_E", "DEFAULT_U", "DEFAULT_X", "FAST_CSV_BYTES"]

# Default column names for from_file (compared case-insensitively).
DEFAULT_E = ("E", "error")
DEFAULT_U = ("u", "uE", "uncertainty")
DEFAULT_X = ("x",)
# Text cells read as NaN (then refused by the finiteness check, with a count).
NAN_TOKENS = frozenset({"", "na", "nan", "-nan", "+nan", "null", "none"})
TEXT_EXTENSIONS = {".csv": None, ".txt": None, ".tsv": "\t"}
ARROW_EXTENSIONS = {".parquet": "parquet", ".pq": "parquet", ".feather": "feather", ".arrow": "feather",
                    ".ipc": "feather"}
#: text files of this size or more go through the fast reader when pyarrow is installed
FAST_CSV_BYTES = 1 << 20
_SUPPORTED = ".csv, .tsv, .txt, .npz, .parquet, .pq, .feather or .arrow"


class NeedsTextReader(Exception):
    """A column the fast reader could not read exactly as the text reader does (not a
    ValueError: callers catch it to read the file again with the text reader)."""


@dataclass(frozen=True)
class Table:
    """Raw content of a user file or frame: text cells (``rows``) or named arrays (``arrays``).

    ``dirty``: columns of a fast-read text file to be read by the text reader instead."""

    kind: str  # "column" (text file, frame, Parquet/Feather) or "key" (npz)
    names: list[str]
    rows: list[list[str]] | None = None
    arrays: dict[str, np.ndarray] | None = None
    dirty: frozenset = field(default_factory=frozenset)

    @property
    def n_rows(self) -> int:
        if self.rows is not None:
            return len(self.rows)
        assert self.arrays is not None
        if not isinstance(self.arrays, dict):  # columns read on demand (ArrowColumns, CsvColumns, RowsOf)
            return self.arrays.n_rows
        return len(next(iter(self.arrays.values()))) if self.arrays else 0

    def subset(self, index: np.ndarray) -> Table:
        """The rows ``index`` (in that order) of the table (of a table whose columns are read
        on demand, each column's rows taken when it is asked for)."""
        if self.rows is not None:
            return replace(self, rows=[self.rows[i] for i in index])
        assert self.arrays is not None
        if isinstance(self.arrays, dict):
            return replace(self, arrays={k: (v[index] if v.ndim == 1 else v) for k, v in self.arrays.items()})
        return replace(self, arrays=RowsOf(self.arrays, index))


class RowsOf(Mapping):
    """The rows ``index`` of each column of a mapping whose columns are read on demand
    (:class:`ArrowColumns`, :class:`CsvColumns`), taken when a column is first asked for."""

    def __init__(self, columns: Mapping, index: np.ndarray):
        self.columns, self.index = columns, np.asarray(index)
        self._cache: dict[str, np.ndarray] = {}

    def __iter__(self):
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __contains__(self, name) -> bool:
        return name in self.columns

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._cache:
            v = self.columns[name]
            self._cache[name] = v[self.index] if v.ndim == 1 else v
        return self._cache[name]

    @property
    def n_rows(self) -> int:
        return len(self.index)

    def prefetch(self, names: Sequence[str]) -> None:
        prefetch = getattr(self.columns, "prefetch", None)
        if prefetch is not None:
            prefetch(names)


def require_pyarrow(what: str):
    """``pyarrow``, or ImportError saying which extra installs it."""
    try:
        import pyarrow
    except ImportError:
        raise ImportError(f"{what} needs pyarrow: pip install \"mcref[parquet]\" (or pip install pyarrow)") from None
    return pyarrow


def open_table(path: Any, delimiter: str | None, *, fast: bool = True,
               text_columns: Sequence[str] = ()) -> tuple[Path, Table, str]:
    """The checked path, its table and its source (an npz file's ``source`` entry, else the
    path). ``fast``: a large text file through the fast reader (pyarrow), if installed;
    ``text_columns``: columns that the fast reader keeps as text (group labels)."""
    try:
        p = Path(path)
    except TypeError:
        raise ValueError(f"`path` must be a string or a path, got {path!r}") from None
    if p.is_dir():
        raise ValueError(f"`path`: {str(p)!r} is a directory; give a data file ({_SUPPORTED})")
    if not p.is_file():
        raise ValueError(f"`path`: file not found: {str(p)!r}")
    ext = p.suffix.lower()
    if ext == ".npz":
        return (p, *read_npz(p))
    if ext in ARROW_EXTENSIONS:
        return p, read_arrow(p, ARROW_EXTENSIONS[ext]), str(p)
    if ext in TEXT_EXTENSIONS:
        delim = TEXT_EXTENSIONS[ext] if delimiter is None else delimiter
        table = read_text_fast(p, delim, text_columns) if fast else None
        return p, table if table is not None else read_text(p, delim), str(p)
    raise ValueError(f"`path` must end in {_SUPPORTED}, got {p.name!r} (unsupported extension)")


def _sniff(first: str) -> str:
    try:
        return csv.Sniffer().sniff(first, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def read_text(path: Path, delimiter: str | None) -> Table:
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
        delimiter = _sniff(first)
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
    return Table("column", header, rows=rows[1:])


def read_text_fast(path: Path, delimiter: str | None, text_columns: Sequence[str] = ()) -> Table | None:
    """A large delimited text file through ``pyarrow.csv``, its columns parsed when first asked
    for (:class:`CsvColumns`); None (use :func:`read_text`) for a small file, without pyarrow,
    with a comment character, a byte that is not UTF-8 or a line pyarrow refuses. A header
    whose names repeat is read whole (:func:`read_text_whole`: the last of a name wins)."""
    opened = _open_fast(path, delimiter)
    if opened is None:
        return None
    delimiter, raw = opened
    names = [n.strip() for n in raw]
    if len(set(names)) != len(names):
        return read_text_whole(path, delimiter, text_columns)
    return Table("column", names, arrays=CsvColumns(path, delimiter, raw, text_columns))


def _open_fast(path: Path, delimiter: str | None) -> tuple[str, list[str]] | None:
    """(delimiter, pyarrow's column names: the header cells verbatim) of a text file that the
    fast reader may read, else None: the text reader's cases (see :func:`read_text_fast`)."""
    if path.stat().st_size < FAST_CSV_BYTES:
        return None
    try:
        import pyarrow as pa
        from pyarrow import csv as pacsv
    except ImportError:
        return None
    if not _plain_utf8(path):
        return None
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            first = next((ln for ln in fh if ln.strip()), None)
        if first is None:
            return None
        delimiter = _sniff(first) if delimiter is None else delimiter
        # the names as pyarrow reads the header (cells verbatim); the first block's rows checked
        with pacsv.open_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter)) as reader:
            raw = [str(n) for n in reader.schema.names]
    except (pa.ArrowException, UnicodeDecodeError, csv.Error, OSError):
        return None
    return delimiter, raw


def _plain_utf8(path: Path, chunk: int = 1 << 22) -> bool:
    """The file has no ``#`` (comment lines: the text reader's rule) and is valid UTF-8 (the
    text reader refuses any other byte, also in a column the fast reader never parses).
    Scanned through a map chunk by chunk, each chunk's pages let go once scanned (else the
    whole file would count in the resident memory); only a chunk with a byte past ASCII is
    decoded. ``chunk``: a multiple of the page size."""
    import codecs

    size = path.stat().st_size
    if size == 0:
        return False
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        for start in range(0, size, chunk):
            end = min(start + chunk, size)
            if mm.find(b"#", start, end) >= 0:
                return False
            view = np.frombuffer(mm, np.uint8, count=end - start, offset=start)
            plain = int(view.max()) < 0x80
            del view  # (the map cannot close while a view of it is alive)
            if not plain or decoder.getstate()[0]:  # (a character may straddle two chunks)
                try:
                    decoder.decode(mm[start:end])
                except UnicodeDecodeError:
                    return False
            if hasattr(mmap, "MADV_DONTNEED"):
                mm.madvise(mmap.MADV_DONTNEED, start, end - start)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


def read_text_whole(path: Path, delimiter: str | None, text_columns: Sequence[str] = ()) -> Table | None:
    """Every column of a large delimited text file through ``pyarrow.csv.read_csv`` at once
    (the fast reader before :class:`CsvColumns`; now for a header whose names repeat); None
    as :func:`read_text_fast`."""
    opened = _open_fast(path, delimiter)
    if opened is None:
        return None
    delimiter, raw = opened
    import pyarrow as pa
    from pyarrow import csv as pacsv

    wanted = {c.lower() for c in text_columns}
    types = {r: pa.string() for r in raw if r.strip().lower() in wanted}
    try:
        table = pacsv.read_csv(
            path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False))
    except (pa.ArrowException, UnicodeDecodeError, OSError):
        return None
    names = [n.strip() for n in table.column_names]
    arrays: dict[str, np.ndarray] = {}
    dirty = set()
    for name, col in zip(names, table.columns):
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            arrays[name] = np.array([s.strip() for s in col.to_pylist()], dtype=object)
            if name.lower() not in wanted:
                dirty.add(name)  # text where a number may be asked for: the text reader's messages
        elif (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)) and col.null_count == 0:
            arrays[name] = np.asarray(col.to_numpy(), dtype=np.float64)
        else:  # missing cells, booleans, dates: the text reader decides
            arrays[name] = np.zeros(len(col))
            dirty.add(name)
    return Table("column", names, arrays=arrays, dirty=frozenset(dirty))


class CsvColumns(Mapping):
    """The columns of a large delimited text file, each parsed when first asked for (then
    kept), as :class:`ArrowColumns` reads a Parquet file: a file of 10⁶ rows and 20 columns
    converts its E and u columns, not all 20.

    A column is read by :func:`pyarrow.csv.open_csv` with ``include_columns`` (the other
    columns are split into fields, to check each line's field count, but never converted),
    as float64 (pyarrow's parsing is correctly rounded: the bits of Python's ``float``),
    batch by batch into one float64 array, so the read's peak is the array plus one batch.
    Keys are the header cells stripped; a label column (``text_columns``) is read as text.
    A column that the text reader would read otherwise (a missing, non-numeric or refused
    cell, a line with too few fields) raises :class:`NeedsTextReader` when asked for;
    :meth:`prefetch` parses several columns in one pass over the file."""

    BLOCK_BYTES = 1 << 20  # text per batch (pyarrow's default; larger blocks were slower here)

    def __init__(self, path: Path, delimiter: str, raw: Sequence[str], text_columns: Sequence[str] = ()):
        self.path, self.delimiter = path, delimiter
        self._raw = {r.strip(): r for r in raw}
        self._names = list(self._raw)
        self._text = {c.lower() for c in text_columns}
        self._cache: dict[str, np.ndarray] = {}
        self._rows: int | None = None

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name) -> bool:
        return name in self._raw

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._cache:
            if name not in self._raw:
                raise KeyError(name)
            got = self._read([name])
            if name not in got:
                raise NeedsTextReader(name)
            self._cache.update(got)
        return self._cache[name]

    @property
    def n_rows(self) -> int:
        if self._rows is None:
            self._rows = len(self[self._names[0]])
        return self._rows

    def prefetch(self, names: Sequence[str]) -> None:
        """Parse the columns ``names`` (those not read yet) in one pass; a column that cannot
        be read so is left for :meth:`__getitem__` to report."""
        todo = [n for n in dict.fromkeys(names) if n in self._raw and n not in self._cache]
        if len(todo) > 1:
            self._cache.update(self._read(todo))

    def _read(self, names: list[str]) -> dict[str, np.ndarray]:
        """The columns ``names`` that pyarrow reads as the text reader would: float64 arrays
        (labels: stripped text); one that it cannot is left out (and none on a refused line)."""
        import pyarrow as pa
        from pyarrow import csv as pacsv

        labels = [n for n in names if n.lower() in self._text]
        types = {self._raw[n]: (pa.string() if n in labels else pa.float64()) for n in names}
        numeric = [n for n in names if n not in labels]
        cap = self._rows if self._rows is not None else self._guess_rows()
        out = {n: np.empty(cap) for n in numeric}
        texts: dict[str, list] = {n: [] for n in labels}
        i = 0
        try:
            with pacsv.open_csv(self.path, read_options=pacsv.ReadOptions(block_size=self.BLOCK_BYTES),
                                parse_options=pacsv.ParseOptions(delimiter=self.delimiter),
                                convert_options=pacsv.ConvertOptions(
                                    include_columns=[self._raw[n] for n in names], column_types=types,
                                    strings_can_be_null=False)) as reader:
                for batch in reader:
                    k = batch.num_rows
                    if i + k > cap:  # the guess was short: grow in place (realloc), no second copy
                        cap = max(i + k, int(cap * 1.25) + 1)
                        for arr in out.values():
                            arr.resize(cap, refcheck=False)
                    for n in names:
                        col = batch.column(self._raw[n])
                        if n in texts:
                            texts[n].extend(col.to_pylist())
                        elif n in out:
                            if col.null_count:  # a missing cell: the text reader's rules
                                del out[n]
                            else:
                                out[n][i:i + k] = col.to_numpy()
                    i += k
        except (pa.ArrowException, UnicodeDecodeError, OSError):
            return {}  # a cell not a number, a refused line: the text reader says which
        self._rows = i
        got: dict[str, np.ndarray] = {}
        for n, arr in out.items():
            arr.resize(i, refcheck=False)
            got[n] = arr
        for n, cells in texts.items():
            got[n] = np.array([s.strip() for s in cells], dtype=object)
        return got

    def _guess_rows(self) -> int:
        """Rows of the file estimated from the length of its first lines (+10 %)."""
        size = self.path.stat().st_size
        with open(self.path, "rb") as fh:
            head = fh.read(1 << 16)
        lines = max(head.count(b"\n"), 1)
        return int(size / (len(head) / lines) * 1.1) + 16


def read_npz(path: Path) -> tuple[Table, str]:
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
    return Table("key", list(arrays), arrays=arrays), source


class ArrowColumns(Mapping):
    """The columns of a Parquet file, each read when first asked for (then kept): a data set
    of 10⁷ rows reads its E and u columns (160 MB), not every column of the file.

    A numeric column without missing values is read batch by batch
    (:meth:`pyarrow.parquet.ParquetFile.iter_batches`) into one float64 array, so the read's
    peak is the array plus one batch; any other column as :func:`_arrow_values` reads it from
    the whole column (the same values as reading the whole file)."""

    BATCH_ROWS = 1 << 20

    def __init__(self, path: Path, kind: str, schema, n_rows: int):
        self.path, self.kind, self.schema, self.n_rows = path, kind, schema, int(n_rows)
        self._names = [str(n) for n in schema.names]
        self._cache: dict[str, np.ndarray] = {}

    def __iter__(self):
        return iter(dict.fromkeys(self._names))

    def __len__(self) -> int:
        return len(set(self._names))

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._cache:
            if name not in self._names:
                raise KeyError(name)
            try:
                self._cache[name] = self._read(name)
            except Exception as exc:  # pyarrow raises its own types (ArrowInvalid, OSError, ...)
                raise ValueError(f"{self.path.name}: cannot read as a {self.kind} file ({exc})") from None
        return self._cache[name]

    def __contains__(self, name) -> bool:
        return name in self._names

    def _read(self, name: str) -> np.ndarray:
        import pyarrow as pa
        from pyarrow import parquet as pq

        typ = self.schema.field(name).type
        if pa.types.is_floating(typ) or pa.types.is_integer(typ):
            out = np.empty(self.n_rows)
            i = 0
            with pq.ParquetFile(self.path) as pf:
                for batch in pf.iter_batches(batch_size=self.BATCH_ROWS, columns=[name]):
                    col = batch.column(0)
                    if col.null_count:  # missing values: NaN, as _arrow_values reads them
                        break
                    out[i:i + len(col)] = col.to_numpy()
                    i += len(col)
                else:
                    if i == self.n_rows:
                        return out
            del out
        return _arrow_values(pq.read_table(self.path, columns=[name]).column(0))


def read_arrow(path: Path, kind: str) -> Table:
    """A Parquet or Feather (Arrow IPC) file through pyarrow: every column as a 1-D array.
    A Parquet file's columns are read when first asked for (:class:`ArrowColumns`), unless
    its column names repeat (then, as a Feather file, read at once: the last of a name wins)."""
    require_pyarrow(f"reading {path.name} ({kind})")
    schema = None
    if kind == "parquet":
        from pyarrow import parquet as pq

        try:
            meta = pq.read_metadata(path)
            schema, n = meta.schema.to_arrow_schema(), meta.num_rows
        except Exception:  # the eager read below says why the file cannot be read
            schema = None
    if schema is not None and len(set(schema.names)) == len(schema.names):
        names = [str(n) for n in schema.names]
        return Table("column", names, arrays=ArrowColumns(path, kind, schema, n))
    try:
        if kind == "parquet":
            from pyarrow import parquet as pq

            table = pq.read_table(path)
        else:
            from pyarrow import feather

            table = feather.read_table(path)
    except Exception as exc:  # pyarrow raises its own types (ArrowInvalid, OSError, ...)
        raise ValueError(f"{path.name}: cannot read as a {kind} file ({exc})") from None
    arrays = {}
    for name, col in zip(table.column_names, table.columns):
        arrays[str(name)] = _arrow_values(col)
    return Table("column", [str(n) for n in table.column_names], arrays=arrays)


def _arrow_values(col) -> np.ndarray:
    """An Arrow column as numpy: numbers as float64 (missing: NaN), anything else as objects."""
    import pyarrow as pa

    if pa.types.is_floating(col.type) or pa.types.is_integer(col.type):
        return np.asarray(col.to_numpy(), dtype=np.float64) if col.null_count == 0 else np.array(
            [np.nan if v is None else v for v in col.to_pylist()], dtype=np.float64)
    return np.array(col.to_pylist(), dtype=object)


def frame_table(df: Any) -> Table:
    """A pandas DataFrame (or a mapping of column name to 1-D array) as a :class:`Table`."""
    if isinstance(df, Mapping):
        items = [(str(k), np.asarray(v)) for k, v in df.items()]
    elif hasattr(df, "columns") and hasattr(df, "iloc"):
        items = [(str(c), _frame_values(df.iloc[:, j])) for j, c in enumerate(df.columns)]
    else:
        raise ValueError(f"`df` must be a pandas DataFrame or a mapping of column name to array, "
                         f"got {type(df).__name__}")
    names = [n for n, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"`df` has several columns named {dup[0]!r}; rename them")
    bad = [n for n, v in items if v.ndim != 1]
    if bad:
        raise ValueError(f"`df`: column {bad[0]!r} is not one-dimensional")
    lengths = {len(v) for _, v in items}
    if len(lengths) > 1:
        raise ValueError(f"`df`: the columns have different lengths {sorted(lengths)}")
    return Table("column", names, arrays=dict(items))


def _frame_values(s) -> np.ndarray:
    """A pandas Series as numpy: numeric (nullable included) as float64 with NaN for missing."""
    kind = getattr(s.dtype, "kind", "O")
    if kind in "biuf":
        try:
            return s.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            pass
    return s.to_numpy()


def match_column(table: Table, col: str, arg: str, where: str) -> str:
    """The table's name for column ``col`` (exact, else case-insensitive), or ValueError."""
    matches = [c for c in table.names if c == col] or [c for c in table.names if c.lower() == col.lower()]
    if not matches:
        raise ValueError(
            f"{where}: `{arg}` names {table.kind} {col!r}, which is missing; available "
            f"{table.kind}s: {', '.join(map(repr, table.names))}"
        )
    if len(matches) > 1:
        raise ValueError(f"{where}: `{arg}` = {col!r} matches several {table.kind}s {matches}")
    return matches[0]


def resolve(table: Table, given: str | None, arg: str, defaults: tuple[str, ...], where: str, *,
            required: bool) -> str | None:
    """Column name for argument ``arg``: the given one, or the unique default match."""
    if given is not None:
        return given  # checked by numeric_column
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


def prefetch(table: Table, asked: Sequence[tuple[str | None, tuple[str, ...]]]) -> None:
    """Read in one pass the columns that will be asked for, each given as (the name given or
    None, the default names), when the table's columns are read on demand (a large text file:
    :meth:`CsvColumns.prefetch`). Checks nothing: a name that does not resolve to exactly one
    column is skipped, and :func:`resolve`, :func:`numeric_column` ... say why when asked."""
    load = getattr(table.arrays, "prefetch", None)
    if load is None:
        return
    names = []
    for given, defaults in asked:
        if given is not None:
            found = [c for c in table.names if c == given] or [c for c in table.names if c.lower() == given.lower()]
        else:
            wanted = {d.lower() for d in defaults}
            found = [c for c in table.names if c.lower() in wanted]
        if len(found) == 1:
            names.append(found[0])
    load(names)


def numeric_column(table: Table, col: str, arg: str, where: str) -> np.ndarray:
    """Column ``col`` (argument ``arg``) as a finite 1-D float64 array, or ValueError
    (:class:`NeedsTextReader` for a dirty column of a fast-read text file)."""
    name = match_column(table, col, arg, where)
    if name in table.dirty:
        raise NeedsTextReader(name)
    label = f"{table.kind} {name!r} (`{arg}`)"
    values: Any
    if table.arrays is not None:
        values = table.arrays[name]
        if values.dtype.kind not in "biuf":
            raise ValueError(
                f"{where}: {label} must hold numbers (non-numeric array of dtype {values.dtype})"
            )
    else:
        assert table.rows is not None
        j = table.names.index(name)
        values = np.empty(len(table.rows), dtype=np.float64)
        for i, row in enumerate(table.rows):
            cell = row[j].strip()
            try:
                values[i] = float(cell)
            except ValueError:
                if cell.lower() not in NAN_TOKENS:
                    raise ValueError(
                        f"{where}: {label} holds a non-numeric value {cell!r} at data row {i}"
                    ) from None
                values[i] = np.nan
    try:
        return as_float_array(values, arg)
    except ValueError as exc:
        raise ValueError(f"{where}: {label}: {exc}") from None


def text_column(table: Table, col: str, arg: str, where: str) -> np.ndarray:
    """Column ``col`` as labels (object array of str: a text cell stripped, a number as
    ``str``), or ValueError naming the first missing one."""
    name = match_column(table, col, arg, where)
    if table.arrays is not None:
        raw = table.arrays[name]
        if raw.ndim != 1:
            raise ValueError(f"{where}: {table.kind} {name!r} (`{arg}`) must be one-dimensional")
        missing = np.array([v is None or (isinstance(v, float) and v != v) or str(v).strip() == ""
                            for v in raw.tolist()], dtype=bool)
        labels = np.array([str(v).strip() for v in raw.tolist()], dtype=object)
    else:
        assert table.rows is not None
        j = table.names.index(name)
        labels = np.array([row[j].strip() for row in table.rows], dtype=object)
        missing = np.array([s == "" for s in labels], dtype=bool)
    if missing.any():
        raise ValueError(f"{where}: {table.kind} {name!r} (`{arg}`) has {int(missing.sum())} missing value(s), "
                         f"first at data row {int(np.argmax(missing))}; every row needs a label")
    return labels


def _is_number(cell: str) -> bool:
    """A text cell that the numeric reading takes: a float, or a missing-value token."""
    cell = cell.strip()
    if cell.lower() in NAN_TOKENS:
        return True
    try:
        float(cell)
    except ValueError:
        return False
    return True


def feature_column(table: Table, col: str, arg: str, where: str) -> np.ndarray:
    """Column ``col`` as a feature, the one reading rule of feature columns (``x`` of every
    door: :func:`mcref.datasets.from_file`, ``mcref validate --x-column``, ``mcref bench
    --x-column``): numbers (:func:`numeric_column`: finite float64) when every cell parses
    as a number, else labels (:func:`text_column`: a categorical feature)."""
    name = match_column(table, col, arg, where)
    if name in table.dirty:
        raise NeedsTextReader(name)
    if table.arrays is not None:
        numeric = table.arrays[name].dtype.kind in "biuf"
    else:
        assert table.rows is not None
        j = table.names.index(name)
        numeric = all(_is_number(row[j]) for row in table.rows)
    return numeric_column(table, col, arg, where) if numeric else text_column(table, col, arg, where)
