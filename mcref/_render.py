"""One home for how results are written out: JSON, CSV, plain-text tables, files written
atomically (docs/architecture.md). The result classes (``ValidationTable``, …) and the
command line render through these helpers, so every output follows the same conventions:

- JSON is valid JSON: NaN is ``null``, ±∞ are the strings ``"inf"`` / ``"-inf"``, NumPy
  scalars and arrays become numbers and lists;
- CSV: one header row, floats with 10 significant digits, ``None`` as an empty cell;
- a file is written under a temporary name in its directory and moved into place when it is
  complete (an interrupted run leaves the old file or none, never half a file), with the
  ordinary permissions of a new file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import tempfile
from typing import Any, Iterator, Mapping, Sequence

__all__ = ["plain", "json_text", "csv_text", "text_table", "atomic_path", "n_mc_text"]


def plain(x: Any) -> Any:
    """``x`` with only JSON types: NaN -> None, ±inf -> "inf"/"-inf", NumPy scalars and arrays
    -> Python numbers and lists, tuples -> lists, mappings -> dicts (recursively)."""
    if isinstance(x, Mapping):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):  # NumPy scalar or array
        return plain(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def json_text(doc: Any) -> str:
    """``doc`` as indented, valid JSON (:func:`plain`)."""
    return json.dumps(plain(doc), indent=2, allow_nan=False)


def csv_text(records: Sequence[Mapping[str, Any]]) -> str:
    """Records (dicts with the same keys) as CSV text: a header, floats with 10 significant
    digits, None as an empty cell."""
    if not records:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(records[0]))
    w.writeheader()
    for r in records:
        w.writerow({k: ("" if v is None else (f"{v:.10g}" if isinstance(v, float) else v)) for k, v in r.items()})
    return buf.getvalue()


def text_table(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, as lines (trailing blanks stripped)."""
    w = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{x}}}" for x in w)
    return [fmt.format(*head).rstrip()] + [fmt.format(*b).rstrip() for b in body]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, what: str = "the output file") -> Iterator[str]:
    """A temporary path next to ``path`` to write to; on success it replaces ``path`` (with the
    mode of an ordinary new file), on any error it is removed. A missing directory is a clear
    ``ValueError`` before any work is done by the caller's ``with`` body."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"{what}: the directory {parent!r} does not exist (create it, or choose another path)")
    fd, tmp = tempfile.mkstemp(prefix=".mcref-", suffix=os.path.splitext(path)[1], dir=parent)
    os.close(fd)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for the temporary name only
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def n_mc_text(n_mc: int | None) -> str:
    """How an ``n_mc`` option reads in a summary: the number, or ``default_n_mc(M)`` for None
    (each dataset's own default)."""
    return "default_n_mc(M)" if n_mc is None else str(n_mc)
