"""SQLite results store of a study: one row per finished cell, resumable after a crash.

A study (see :func:`mcref.studies.run_study` and ``docs/methods.md``, section
"Studies") is a list of independent *cells*. The store keeps the rows of every
finished cell, one SQLite transaction per cell, together with what identifies the
study: its name, its parameters, its seed and the mcref version that wrote it. A
later call with the same study reads the finished cells back and computes only the
missing ones; a call with different parameters is refused instead of mixing results.

File layout (``format_version`` 1)::

    mcref_meta(key TEXT PRIMARY KEY, value TEXT)
        format='mcref-study-store', format_version='1', study, params (canonical
        JSON), seed, mcref_version, created (ISO 8601, UTC)
    cells(key TEXT PRIMARY KEY, rows TEXT NOT NULL, seconds REAL, finished TEXT,
          mcref_version TEXT)
        key: canonical JSON of the cell key; rows: JSON list of the cell's rows,
        columns in the order the cell returned them

Being plain SQLite, a store can be read with any SQLite client, e.g.
``SELECT key, rows FROM cells``.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import sqlite3
import warnings
from datetime import datetime, timezone
from typing import Any, Mapping

import numpy as np

from .core._checks import fresh_seed

__all__ = ["StudyStore", "StoreMismatchError", "StoreFormatError", "canonical_json", "to_plain"]

FORMAT = "mcref-study-store"
FORMAT_VERSION = "1"
_SQLITE_HEADER = b"SQLite format 3\x00"


class StoreMismatchError(ValueError):
    """The store holds another study: its name, parameters, seed or mcref version
    differ from those of the call."""


class StoreFormatError(ValueError):
    """The file is not an mcref study store (not SQLite, a foreign SQLite file, or
    corrupt). The file is left untouched."""


def to_plain(obj: Any) -> Any:
    """Return ``obj`` with NumPy scalars and 0-d arrays turned into Python scalars,
    tuples into lists and mappings into dicts (recursively).

    Examples
    --------
    >>> to_plain({"a": np.float64(0.5), "b": (np.int64(1), True)})
    {'a': 0.5, 'b': [1, True]}
    """
    if isinstance(obj, np.ndarray) and obj.ndim == 0:
        obj = obj[()]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Mapping):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of ``obj``: sorted keys, no spaces, NaN/Infinity allowed.

    Floats are written with ``repr`` and so read back exactly.

    Raises
    ------
    TypeError
        If ``obj`` holds a value that JSON cannot represent.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": (0.1, np.int32(2))})
    '{"a":[0.1,2],"b":1}'
    """
    return json.dumps(to_plain(obj), sort_keys=True, separators=(",", ":"), allow_nan=True)


def _fmt(value: Any) -> str:
    return "<absent>" if value is _ABSENT else json.dumps(value, allow_nan=True)


_ABSENT = object()


class StudyStore:
    """Results store of one study in an SQLite file (a context manager).

    Open it with :meth:`StudyStore.open`; :func:`mcref.studies.run_study` does so for
    its ``store=`` argument.

    Attributes
    ----------
    path : str
        The file.
    study : str
        Study name.
    params : dict
        Study parameters (plain JSON values).
    seed : int
        The study's seed: the one given, or the stored one when ``seed=None`` was
        given, or a fresh one drawn from the OS for a new store opened with ``seed=None``.
    version : str
        mcref version of this call.
    stored_version : str
        mcref version that created the store.
    created : bool
        True if this call created the store.

    Notes
    -----
    The file runs in WAL mode with ``synchronous=NORMAL``; each :meth:`commit` is one
    transaction, so a crashed or killed process loses at most the cell it was computing.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "toy.sqlite")
    >>> with StudyStore.open(path, study="toy", params={"n": 3}, seed=1, version="0") as st:
    ...     st.commit({"i": 0}, [{"x": 0.5}], seconds=0.01)
    ...     sorted(st.done_keys()), st.load({"i": 0})
    (['{"i":0}'], [{'x': 0.5}])
    """

    def __init__(self, con: sqlite3.Connection, path: str, study: str, params: dict, seed: int,
                 version: str, stored_version: str, created: bool):
        self._con: sqlite3.Connection | None = con
        self.path = path
        self.study = study
        self.params = params
        self.seed = seed
        self.version = version
        self.stored_version = stored_version
        self.created = created

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike, *, study: str, params: Mapping, seed: int | None,
             version: str) -> "StudyStore":
        """Open (or create) the store of a study.

        Parameters
        ----------
        path : str or os.PathLike
            SQLite file. Created (with its parent folders) if absent or empty.
        study : str
            Study name.
        params : Mapping
            JSON-able study parameters.
        seed : int or None
            The study's seed; ``None`` adopts the stored seed, or draws a fresh one
            from the OS for a new store.
        version : str
            mcref version of the caller.

        Returns
        -------
        StudyStore

        Raises
        ------
        StoreFormatError
            If ``path`` exists and is not an SQLite file, is a foreign SQLite file or is
            corrupt. The file is not modified.
        StoreMismatchError
            If the store holds another study name, other parameters or another seed.
        ValueError
            If ``path`` is a directory or ``params`` is not JSON-able.
        """
        path = os.fspath(path)
        try:
            params_json = canonical_json(params)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"study parameters are not JSON-serialisable ({exc})") from None
        params_plain = json.loads(params_json)
        if os.path.isdir(path):
            raise ValueError(f"store path {path!r} is a directory; give a file path such as 'study.sqlite'")
        exists = os.path.exists(path) and os.path.getsize(path) > 0
        if exists:
            meta = cls._inspect(path)
        else:
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            meta = None

        if meta is not None:
            cls._check_same_study(path, meta, study, params_plain, seed)
            resolved_seed = int(meta["seed"])
            stored_version = meta.get("mcref_version", "?")
        else:
            resolved_seed = fresh_seed() if seed is None else int(seed)
            stored_version = version

        con = sqlite3.connect(path, timeout=30.0)
        try:
            # WAL + synchronous=NORMAL: a committed transaction is in the WAL file as soon
            # as COMMIT returns, so it survives a crash or SIGKILL of the process; only a
            # power loss or OS crash may drop the last few transactions (never corrupts).
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            if meta is None:
                now = datetime.now(timezone.utc).isoformat(timespec="seconds")
                with con:
                    con.execute("CREATE TABLE IF NOT EXISTS mcref_meta(key TEXT PRIMARY KEY, value TEXT)")
                    con.execute(
                        "CREATE TABLE IF NOT EXISTS cells(key TEXT PRIMARY KEY, rows TEXT NOT NULL, "
                        "seconds REAL, finished TEXT, mcref_version TEXT)"
                    )
                    con.executemany(
                        "INSERT INTO mcref_meta(key, value) VALUES (?, ?)",
                        [("format", FORMAT), ("format_version", FORMAT_VERSION), ("study", study),
                         ("params", params_json), ("seed", str(resolved_seed)),
                         ("mcref_version", version), ("created", now)],
                    )
        except BaseException:
            con.close()
            raise
        return cls(con, path, study, params_plain, resolved_seed, version, stored_version,
                   created=meta is None)

    @staticmethod
    def _inspect(path: str) -> dict[str, str]:
        """Read the metadata of an existing file without modifying it."""
        with open(path, "rb") as f:
            header = f.read(len(_SQLITE_HEADER))
        if header != _SQLITE_HEADER:
            raise StoreFormatError(
                f"{path!r} is not an mcref study store (not an SQLite file); refusing to "
                "overwrite it: choose another store= path"
            )
        uri = "file:" + _uri_path(path) + "?mode=ro"
        try:
            con = sqlite3.connect(uri, uri=True, timeout=30.0)
        except sqlite3.Error as exc:
            raise StoreFormatError(f"{path!r} cannot be opened as an SQLite file ({exc})") from None
        try:
            # integrity first: a damaged page can make an mcref store look foreign
            check = [r[0] for r in con.execute("PRAGMA quick_check")]
            if check != ["ok"]:
                raise StoreFormatError(
                    f"{path!r} is a corrupt SQLite file ({'; '.join(map(str, check[:3]))}); refusing to "
                    "modify it: move it away or choose another store= path"
                )
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "mcref_meta" not in tables or "cells" not in tables:
                raise StoreFormatError(
                    f"{path!r} is a foreign SQLite file, not an mcref study store; refusing to "
                    "modify it: choose another store= path"
                )
            meta = dict(con.execute("SELECT key, value FROM mcref_meta").fetchall())
            if meta.get("format") != FORMAT:
                raise StoreFormatError(
                    f"{path!r} is a foreign SQLite file, not an mcref study store; refusing to "
                    "modify it: choose another store= path"
                )
        except sqlite3.DatabaseError as exc:
            raise StoreFormatError(
                f"{path!r} is a corrupt or unreadable SQLite file ({exc}); refusing to modify it: "
                "move it away or choose another store= path"
            ) from None
        finally:
            con.close()
        if meta.get("format_version") != FORMAT_VERSION:
            raise StoreFormatError(
                f"{path!r} has store format version {meta.get('format_version')!r}; this mcref "
                f"reads version {FORMAT_VERSION!r}: choose another store= path"
            )
        for field in ("study", "params", "seed"):
            if field not in meta:
                raise StoreFormatError(f"{path!r} is a corrupt mcref study store (no {field!r} entry)")
        return meta

    @staticmethod
    def _check_same_study(path: str, meta: Mapping[str, str], study: str, params: dict,
                          seed: int | None) -> None:
        stored_params = json.loads(meta["params"])
        stored_study = meta["study"]
        if stored_study != study:
            raise StoreMismatchError(
                f"store {path!r} holds study {stored_study!r}, this call asks study {study!r}; "
                "use another store= path"
            )
        have, want = [], []
        if canonical_json(stored_params) != canonical_json(params):
            if isinstance(stored_params, dict) and isinstance(params, dict):
                for k in sorted(set(stored_params) | set(params)):
                    a, b = stored_params.get(k, _ABSENT), params.get(k, _ABSENT)
                    if a is _ABSENT or b is _ABSENT or canonical_json(a) != canonical_json(b):
                        have.append(f"{k}={_fmt(a)}")
                        want.append(f"{k}={_fmt(b)}")
            else:  # pragma: no cover - params are mappings in practice
                have.append(f"params={meta['params']}")
                want.append(f"params={canonical_json(params)}")
        if seed is not None and int(meta["seed"]) != int(seed):
            have.append(f"seed={meta['seed']}")
            want.append(f"seed={int(seed)}")
        if have:
            hint = " (or seed=None to adopt the stored seed)" if any(h.startswith("seed=") for h in have) else ""
            raise StoreMismatchError(
                f"store {path!r} holds study {study!r} with {', '.join(have)}, this call asks "
                f"{', '.join(want)}; use another store= path or the stored parameters{hint}"
            )

    # ------------------------------------------------------------------ use
    @property
    def _db(self) -> sqlite3.Connection:
        if self._con is None:
            raise ValueError(f"store {self.path!r} is closed")
        return self._con

    def check_version(self, n_remaining: int) -> None:
        """Refuse to mix results of two mcref versions.

        Parameters
        ----------
        n_remaining : int
            Number of cells of the study that the store does not hold yet.

        Raises
        ------
        StoreMismatchError
            If the store was written by another mcref version and cells remain.

        Warns
        -----
        UserWarning
            If the store was written by another mcref version and every cell is done
            (reading back is allowed).
        """
        if self.stored_version == self.version:
            return
        if n_remaining > 0:
            raise StoreMismatchError(
                f"store {self.path!r} was written by mcref {self.stored_version}, this is mcref "
                f"{self.version}, and {n_remaining} cells remain: refusing to mix results of two "
                "versions; use another store= path or the stored version"
            )
        warnings.warn(
            f"store {self.path!r} was written by mcref {self.stored_version}, this is mcref "
            f"{self.version}; its finished results are read back unchanged",
            UserWarning, stacklevel=3,
        )

    def done_keys(self) -> set[str]:
        """Canonical JSON of the keys of every finished cell."""
        return {r[0] for r in self._db.execute("SELECT key FROM cells")}

    def commit(self, key: Mapping, rows: list[dict], seconds: float) -> None:
        """Store the rows of one finished cell, in one transaction.

        Parameters
        ----------
        key : Mapping
            The cell key.
        rows : list of dict
            The cell's rows (JSON scalars; NaN and infinities allowed).
        seconds : float
            Time the cell took.

        Raises
        ------
        StoreMismatchError
            If the store was written by another mcref version.
        """
        if self.stored_version != self.version:
            self.check_version(1)
        text = json.dumps(to_plain(list(rows)), separators=(",", ":"), allow_nan=True)
        finished = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        secs = float(seconds) if isinstance(seconds, numbers.Real) and math.isfinite(seconds) else None
        with self._db:  # one transaction: committed on success, rolled back on any error
            self._db.execute(
                "INSERT OR REPLACE INTO cells(key, rows, seconds, finished, mcref_version) "
                "VALUES (?, ?, ?, ?, ?)",
                (canonical_json(key), text, secs, finished, self.version),
            )

    def load(self, key: Mapping) -> list[dict]:
        """Rows of a finished cell.

        Raises
        ------
        KeyError
            If the cell is not in the store.
        """
        row = self._db.execute("SELECT rows FROM cells WHERE key = ?", (canonical_json(key),)).fetchone()
        if row is None:
            raise KeyError(f"cell {canonical_json(key)} is not in store {self.path!r}")
        return json.loads(row[0])

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> "StudyStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._con is None else "open"
        return f"StudyStore({self.path!r}, study={self.study!r}, seed={self.seed}, {state})"


def _uri_path(path: str) -> str:
    """Absolute path quoted for an SQLite ``file:`` URI."""
    from urllib.parse import quote

    return quote(os.path.abspath(path).replace(os.sep, "/"))
