"""One home for how results are written out: JSON, CSV, plain-text tables, files written
atomically (docs/architecture.md). The result classes (``ValidationTable``, …) and the
command line render through these helpers, so every output follows the same conventions:

- JSON is valid JSON: NaN is ``null``, ±∞ are the strings ``"inf"`` / ``"-inf"``, NumPy
  scalars and arrays become numbers and lists;
- CSV: one header row, floats with 10 significant digits, ``None`` as an empty cell;
- a file is written under a temporary name in its directory and moved into place when it is
  complete (an interrupted run leaves the old file or none, never half a file), with the
  ordinary permissions of a new file; :func:`check_writable` says before any work whether it
  can be;
- a Monte Carlo p-value is written by :func:`p_text`: three decimals, and ``< 0.0001`` (the
  bound, not the floor value 9.999e-05) at the smallest value its N_MC repeats can give.
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

__all__ = ["plain", "json_text", "csv_text", "text_table", "atomic_path", "check_writable", "n_mc_text", "n_boot_text", "p_text",
           "EXCLUDES_NOTE"]

#: the note under every table that marks a BCa interval excluding its own estimate with "!"
EXCLUDES_NOTE = "!: the BCa interval excludes its own estimate (strong finite-sample bias of the statistic)"


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


def check_writable(path: str | os.PathLike, what: str = "the output file", *, directory: bool = False) -> str:
    """The absolute path of an output ``path`` that can be written, or a ``ValueError`` naming
    ``what`` (the argument or option) and the reason, before any work is done.

    The folder that will hold ``path`` must exist and take a new file (checked by creating
    and removing a temporary one there, as :func:`atomic_path` will: permissions alone do
    not say it, e.g. for root or on ``/proc``); ``path`` itself must not be a folder
    (``directory=False``: a file is written) or an existing file (``directory=True``: a
    folder of files is written, as an HTML report).
    """
    full = os.path.abspath(os.fspath(path))
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        blocker = _file_on_the_way(parent)
        if blocker is not None:
            raise ValueError(f"{what}: {os.fspath(path)!r} goes through {blocker!r}, which is a file, not a directory "
                             "(choose another path)")
        raise ValueError(f"{what}: the directory {parent!r} does not exist (create it, or choose another path)")
    if directory and os.path.exists(full) and not os.path.isdir(full):
        raise ValueError(f"{what}: {os.fspath(path)!r} exists and is not a directory")
    if not directory and os.path.isdir(full):
        raise ValueError(f"{what}: {os.fspath(path)!r} is a directory; give a file name")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mcref-", dir=parent)
    except OSError as exc:
        raise ValueError(f"{what}: cannot create a file in {parent!r} ({_why_not(exc)}); choose another "
                         "path") from None
    os.close(fd)
    os.unlink(probe)
    return full


def _file_on_the_way(directory: str) -> str | None:
    """The first part of the absolute path ``directory`` that exists and is not a directory (a
    file where a directory should be), or None."""
    part = directory
    while part and not os.path.exists(part):
        up = os.path.dirname(part)
        if up == part:
            return None
        part = up
    return part if part and os.path.exists(part) and not os.path.isdir(part) else None


def _why_not(exc: OSError) -> str:
    """Why a new file cannot be created in an existing directory, in words that hold: the system's
    "No such file or directory" there means a file system that takes no new files (/proc, /sys)."""
    import errno

    if exc.errno == errno.ENOENT:
        return "the directory exists but takes no new files: a virtual file system such as /proc or /sys"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    return exc.strerror or str(exc)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, what: str = "the output file") -> Iterator[str]:
    """A temporary path next to ``path`` to write to; on success it replaces ``path`` (with the
    mode of an ordinary new file), on any error it is removed. A path that cannot be written
    (:func:`check_writable`) is a clear ``ValueError`` before any work is done by the caller's
    ``with`` body."""
    path = os.fspath(path)
    parent = os.path.dirname(check_writable(path, what))
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


def n_boot_text(n_boot: int | None) -> str:
    """How an ``n_boot`` option reads in a summary: the number, or ``default_n_boot(M)`` for None."""
    return "default_n_boot(M)" if n_boot is None else str(n_boot)


def _bound_above(p: float) -> tuple[float, int]:
    """The smallest number of one significant digit above ``p`` > 0, and its decimal exponent."""
    e = math.floor(math.log10(p))
    d = math.floor(p / 10.0 ** e + 1e-9) + 1
    if d == 10:
        d, e = 1, e + 1
    return d * 10.0 ** e, e


def p_text(p: float | None, n_mc: int | None = None) -> str:
    """How a Monte Carlo p-value is written, in every table, line and report of mcref.

    ``-`` for None or NaN; three decimals from 0.001 on; below, one significant digit, and at
    the Monte Carlo floor of ``n_mc`` repeats (p·(N_MC + 1) ≤ 2: the smallest p a one-sided
    test, 1/(N_MC + 1), or a two-sided one, 2/(N_MC + 1), can give) ``< b`` with b that value
    rounded up to one significant digit: the data's statistic is beyond every simulated one,
    and the p-value is only known to be below b.

    Examples
    --------
    >>> p_text(0.2345), p_text(1 / 10_001, 10_000), p_text(2 / 10_001, 10_000), p_text(5 / 10_001, 10_000)
    ('0.234', '< 0.0001', '< 0.0002', '0.0005')
    >>> p_text(1 / 501, 500), p_text(None), p_text(float("nan"))
    ('< 0.002', '-', '-')
    """
    if p is None or p != p:
        return "-"
    p = float(p)
    if n_mc is not None and p > 0 and p * (n_mc + 1) <= 2.0 * (1 + 1e-9):
        b, e = _bound_above(p)
        return f"< {b:.{max(0, -e)}f}"
    if p >= 0.001 or p <= 0:
        return f"{p:.3f}"
    e = math.floor(math.log10(p))
    return f"{p:.{-e}f}"
