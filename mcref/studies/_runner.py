"""Generic runner of a study: a list of independent cells, run in parallel, stored, resumable.

A *study* (``docs/methods.md``, section "Studies") is a grid of *cells*. Each cell is
identified by its *key* (a flat dict of JSON scalars such as ``{"model": "NIG", "M":
2000}``) and computed by one module-level function that returns a list of flat rows.
:func:`run_study` runs the cells that are not done yet on a pool of workers (joblib
processes or threads, or a dask cluster), commits each cell's rows to an optional
SQLite store (:class:`mcref.store.StudyStore`) as soon as it arrives, and returns the
tidy table of every cell's rows.

Randomness: cell ``key`` of study ``name`` draws from ``cell_seed(seed, name, key)``
only, so the table is bit-identical for any number of workers, any backend, any order
of completion, and whether cells were computed now or read back from a store.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence, TypedDict

import numpy as np

from .. import _version
from ..core._checks import check_int, check_n_jobs, check_positive_number, check_study_seed, fresh_seed
from ..store import StudyStore, canonical_json, to_plain
from ..stats import install_user_statistics, user_statistics

__all__ = ["StudySpec", "RunInfo", "RunOptions", "RUN_OPTIONS", "run_study", "cell_seed"]

BACKENDS = ("loky", "threading", "sequential", "dask")
_SCALARS = (str, int, float, bool)


class RunOptions(TypedDict, total=False):
    """The runner's keywords, shared by every built-in study (``**run``); see :func:`run_study`.

    Same seed ⇒ bit-identical table for any ``n_jobs``, backend, order of completion or
    resume. An unknown keyword raises ``TypeError`` naming the runner's keywords.

    Attributes
    ----------
    seed : int or None
        Study seed. None (default): the store's seed when it holds the study already, else one
        drawn from the OS (the result's ``seed``, printed by the command line).
    n_jobs : int
        Local workers (default -1: every core).
    backend : str
        ``"loky"`` (default), ``"threading"``, ``"sequential"`` or ``"dask"``.
    scheduler : None, str or distributed.Client
        The Dask cluster for ``backend="dask"``.
    store : str or os.PathLike or None
        SQLite results store: resumable, extendable.
    progress : bool
        Progress bar on a terminal (default True).
    threads_per_cell : int or None
        Threads of each cell (default: cores // workers; 1 on Dask).
    connect_timeout : float
        Seconds to wait for the Dask scheduler of ``scheduler`` (default 5).
    """

    seed: int | None
    n_jobs: int
    backend: str
    scheduler: Any
    store: str | os.PathLike | None
    progress: bool
    threads_per_cell: int | None
    connect_timeout: float


#: the names of the runner's keywords, in the order of :func:`run_study`
RUN_OPTIONS: tuple[str, ...] = ("seed", "n_jobs", "backend", "scheduler", "store", "progress", "threads_per_cell",
                                "connect_timeout")
#: seconds to wait for a Dask scheduler given by its address before saying it does not answer
DASK_CONNECT_TIMEOUT = 5.0


def check_run_options(run: Mapping[str, Any], where: str) -> dict:
    """``run`` as a dict, or TypeError naming the unknown keyword and listing the runner's."""
    unknown = [k for k in run if k not in RUN_OPTIONS]
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}; besides its own "
                        f"parameters it takes the runner options {', '.join(RUN_OPTIONS)}")
    return dict(run)


@dataclass(frozen=True)
class StudySpec:
    """What a study computes.

    Attributes
    ----------
    name : str
        Study name, e.g. ``"scaling"``.
    params : Mapping[str, Any]
        JSON-able study-level parameters (grid lists, ``n_mc``, ...). With ``name`` and
        the seed, they identify the study in a store.
    keys : Sequence[Mapping[str, Any]]
        One dict per cell; values are JSON scalars (str, int, float, bool). The list
        order is the order of the cells in the table.
    cell : callable ``(key, params, seed_seq, n_threads) -> list[dict]``
        Computes one cell: ``key`` and ``params`` are dicts, ``seed_seq`` the cell's
        :class:`numpy.random.SeedSequence` (:func:`cell_seed`), ``n_threads`` the number
        of threads the cell may use. Returns flat dicts of JSON scalars (floats may be
        NaN or infinite). Must be a module-level function, so that worker processes can
        import it. With ``data``, it is called with the keyword ``data=`` as well.
    data : Mapping[str, Any], optional
        Per-cell inputs too large or not JSON-able for a key (arrays of a dataset),
        keyed by the canonical JSON of the cell key (:func:`mcref.store.canonical_json`).
        Each cell's entry travels with that cell's task only (to a worker process or a
        Dask worker, which need not share a file system) and is passed to ``cell`` as
        ``data=`` (None for a key without an entry). Data are not part of the study's
        identity in a store: put what identifies them (a name, a content hash) in the key.
    """

    name: str
    params: Mapping[str, Any]
    keys: Sequence[Mapping[str, Any]]
    cell: Callable[..., list[dict]]
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunInfo:
    """Outcome of :func:`run_study`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per returned row: key columns first (in key order), then the row
        columns; cells in ``spec.keys`` order, rows in the order the cell returned them.
    seed : int
        The study's seed.
    store : str or None
        Path of the results store, if any.
    n_cells : int
        Cells of the study.
    n_computed : int
        Cells computed by this call.
    n_loaded : int
        Cells read back from the store.
    seconds : float
        Wall time of this call.
    """

    table: Any
    seed: int
    store: str | None
    n_cells: int
    n_computed: int
    n_loaded: int
    seconds: float


def cell_seed(seed: int, study: str, key: Mapping) -> np.random.SeedSequence:
    """Random stream of one cell: depends only on the seed, the study name and the key.

    Parameters
    ----------
    seed : int
        Study seed (non-negative).
    study : str
        Study name.
    key : Mapping
        Cell key (JSON scalars).

    Returns
    -------
    numpy.random.SeedSequence
        ``SeedSequence(entropy=seed, spawn_key=words)`` where ``words`` are the 8
        big-endian uint32 words of the SHA-256 digest of the canonical JSON of
        ``[study, key]`` (sorted keys, no spaces).

    Notes
    -----
    The stream never depends on the cell's position in the grid, on the worker that
    runs it or on the order of completion; adding cells to a grid leaves the streams of
    the other cells unchanged. Key values are typed: ``{"M": 2000}`` and ``{"M": 2000.0}``
    are different cells.

    Examples
    --------
    >>> a = cell_seed(1, "toy", {"M": 2000, "model": "NIG"})
    >>> b = cell_seed(1, "toy", {"model": "NIG", "M": 2000})
    >>> a.spawn_key == b.spawn_key, len(a.spawn_key)
    (True, 8)
    >>> np.random.default_rng(a).random() == np.random.default_rng(b).random()
    True
    """
    digest = hashlib.sha256(canonical_json([study, to_plain(key)]).encode("utf-8")).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "big") for i in range(0, 32, 4))
    return np.random.SeedSequence(entropy=int(seed), spawn_key=words)


# ---------------------------------------------------------------------- validation
def _plain_fields(d: Mapping, where: str, noun: str, *, none_ok: bool) -> dict:
    """``d`` with string field names and JSON-scalar values (:func:`mcref.store.to_plain`),
    or a ValueError naming ``where`` and the field."""
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise ValueError(f"{where}: {noun} names must be strings, got {k!r}")
        v = to_plain(v)
        if not (isinstance(v, _SCALARS) or (none_ok and v is None)):
            kinds = "str, int, float, bool, None" if none_ok else "str, int, float, bool"
            raise ValueError(f"{where}: {noun} {k!r} must be a JSON scalar ({kinds}), got {v!r}")
        out[k] = v
    return out


def _check_key(key: Any, i: int) -> dict:
    if not isinstance(key, Mapping):
        raise ValueError(f"`spec.keys[{i}]` must be a dict of JSON scalars, got {type(key).__name__}")
    return _plain_fields(key, f"`spec.keys[{i}]`", "field", none_ok=False)


def _check_spec(spec: Any) -> tuple[str, dict, list[dict], list[str]]:
    if not isinstance(spec, StudySpec):
        raise ValueError(f"`spec` must be a StudySpec, got {type(spec).__name__}")
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"`spec.name` must be a non-empty string, got {spec.name!r}")
    if not isinstance(spec.params, Mapping):
        raise ValueError(f"`spec.params` must be a mapping, got {type(spec.params).__name__}")
    try:
        params = json.loads(canonical_json(spec.params))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`spec.params` must be JSON-serialisable ({exc})") from None
    if not callable(spec.cell):
        raise ValueError(f"`spec.cell` must be a function, got {spec.cell!r}")
    if isinstance(spec.keys, (str, bytes, Mapping)) or not isinstance(spec.keys, Sequence):
        raise ValueError(f"`spec.keys` must be a list of dicts, got {type(spec.keys).__name__}")
    keys = [_check_key(k, i) for i, k in enumerate(spec.keys)]
    ckeys = [canonical_json(k) for k in keys]
    if spec.data is not None:
        if not isinstance(spec.data, Mapping):
            raise ValueError(f"`spec.data` must be None or a mapping from canonical cell keys to inputs, "
                             f"got {type(spec.data).__name__}")
        unknown = set(spec.data) - set(ckeys)
        if unknown:
            raise ValueError(f"`spec.data` has entries for {len(unknown)} key(s) that are not cells of the "
                             f"study, e.g. {sorted(unknown)[0]} (keys are canonical_json(key))")
    seen: dict[str, int] = {}
    for i, c in enumerate(ckeys):
        if c in seen:
            raise ValueError(f"`spec.keys` has the cell key {c} twice (at {seen[c]} and {i})")
        seen[c] = i
    return spec.name, params, keys, ckeys


def _check_rows(rows: Any, key: Mapping) -> list[dict]:
    """Rows as plain dicts of JSON scalars, or ValueError naming the cell."""
    where = f"cell {canonical_json(key)}"
    if not isinstance(rows, (list, tuple)):
        raise ValueError(f"{where} must return a list of dicts, got {type(rows).__name__}")
    out = []
    for j, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"{where}: row {j} must be a dict, got {type(row).__name__}")
        plain = _plain_fields(row, f"{where}: row {j}", "column", none_ok=True)
        for k, v in plain.items():
            if k in key and canonical_json(key[k]) != canonical_json(v):
                raise ValueError(
                    f"{where}: row {j}, column {k!r} = {v!r} clashes with the key field of that name"
                )
        out.append(plain)
    return out


def _n_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


# ---------------------------------------------------------------------- workers
#: seconds between two checks of the parent process by a worker's watchdog
_WATCH_PERIOD = 0.5
_watched_parent: int | None = None
_watch_lock = threading.Lock()


def _parent_gone(parent_pid: int, direct: bool) -> bool:
    if direct:  # our parent died: the kernel re-parented us (to init or a subreaper)
        return os.getppid() != parent_pid
    try:  # pragma: no cover - loky workers are the runner's direct children on POSIX
        os.kill(parent_pid, 0)
    except ProcessLookupError:  # pragma: no cover
        return True
    except OSError:  # pragma: no cover - exists, not ours to signal
        return False
    return False  # pragma: no cover


def _watch_parent(parent_pid: int | None) -> None:
    """In a worker process of the runner's pool, exit when the runner process dies.

    A loky worker blocked in a cell (or idle, waiting for one) does not notice that the
    process that started it was killed (SIGKILL, out-of-memory killer, a closed
    terminal): it would run its cell to the end and then wait for new work for
    minutes. A daemon thread started with the worker's first cell checks every
    ``_WATCH_PERIOD`` seconds that the parent is alive and ends the worker with
    ``os._exit`` when it is not (nothing of the cell is lost that the store had: cells
    are committed by the parent). Nothing is started in the runner's own process
    (``sequential``/``threading`` backends) or where ``parent_pid`` is None (Dask
    workers, whose life the cluster manages).
    """
    global _watched_parent
    if parent_pid is None or parent_pid == os.getpid():
        return
    with _watch_lock:
        if _watched_parent == parent_pid:
            return
        _watched_parent = parent_pid
    direct = os.getppid() == parent_pid

    def watch() -> None:
        while not _parent_gone(parent_pid, direct):
            time.sleep(_WATCH_PERIOD)
        os._exit(70)  # EX_SOFTWARE: the runner is gone, its results have nowhere to go

    threading.Thread(target=watch, name="mcref-parent-watchdog", daemon=True).start()


def _execute(cell: Callable, key: dict, params: dict, seed_int: int, study_name: str,
             n_threads: int, has_data: bool = False, data: Any = None, registry: tuple = (),
             parent_pid: int | None = None) -> tuple[str, list[dict], float]:
    """Run one cell (in a worker): seed it, limit numba's threads, validate its rows.

    Returns ``(canonical key, rows, seconds)``. numba's thread count is set to
    ``n_threads`` (at most ``NUMBA_NUM_THREADS``) for the cell and restored after it.
    An exception from the cell gets a note (Python >= 3.11) naming the study and the
    cell; on older Pythons it is wrapped in a RuntimeError that says so. In a worker
    process of the local pool (``parent_pid`` given), a watchdog ends the worker when
    the runner process dies (:func:`_watch_parent`). ``registry``: the user statistics
    registered in the runner's process (:func:`mcref.stats.user_statistics`), installed in
    a worker process that lacks them.
    """
    import numba

    _watch_parent(parent_pid)
    install_user_statistics(registry)

    ckey = canonical_json(key)
    ss = cell_seed(seed_int, study_name, key)
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS)))
    t0 = time.perf_counter()
    try:
        if has_data:
            rows = cell(dict(key), dict(params), ss, int(n_threads), data=data)
        else:
            rows = cell(dict(key), dict(params), ss, int(n_threads))
    except Exception as exc:
        msg = f"mcref: study '{study_name}': cell {ckey} failed"
        if hasattr(exc, "add_note"):
            exc.add_note(msg)
            raise
        raise RuntimeError(f"{msg}: {type(exc).__name__}: {exc}") from exc  # pragma: no cover - py3.10
    finally:
        numba.set_num_threads(previous)
    seconds = time.perf_counter() - t0
    return ckey, _check_rows(rows, key), seconds


def _iter_sequential(tasks: list[tuple]) -> Iterator[tuple[str, list[dict], float]]:
    for t in tasks:
        yield _execute(*t)


def _iter_joblib(tasks: list[tuple], backend: str, n_jobs: int) -> Iterator[tuple[str, list[dict], float]]:
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered", batch_size=1)
    parent = os.getpid() if backend == "loky" else None  # worker processes watch this one
    gen = par(delayed(_execute)(*t, parent_pid=parent) for t in tasks)
    try:
        yield from gen
    finally:
        # an exception raised in our loop (outside joblib's generator): closing the
        # generator makes joblib abort the pool (loky kills its workers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gen.close()


def _dask_client(scheduler: Any, timeout: float = DASK_CONNECT_TIMEOUT) -> tuple[Any, bool]:
    """(client, owned): the dask client to use and whether this call must close it; a scheduler
    address that does not answer within ``timeout`` seconds is a ValueError naming it."""
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "backend='dask' needs dask.distributed: pip install mcref[dask] "
            "(or pip install 'dask[distributed]')"
        ) from None
    if scheduler is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            raise ValueError(
                "backend='dask' needs a running client or scheduler='tcp://HOST:PORT' "
                "(start one with distributed.Client(...) or pass its address)"
            ) from None
    if isinstance(scheduler, distributed.Client):
        return scheduler, False
    if isinstance(scheduler, str):
        try:
            return distributed.Client(scheduler, set_as_default=False, timeout=timeout), True
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"`scheduler`: no Dask scheduler answered at {scheduler!r} within {timeout:g} s "
                             f"({exc}); start one (dask scheduler) or check the address, or give more time with "
                             "`connect_timeout`") from None
    raise ValueError(
        f"`scheduler` must be None, an address such as 'tcp://HOST:PORT' or a distributed.Client, "
        f"got {type(scheduler).__name__}"
    )


def _iter_dask(tasks: list[tuple], client: Any) -> Iterator[tuple[str, list[dict], float]]:
    """One Dask task per cell on ``client``'s cluster; results as they complete.

    Nothing here relies on a *default* client: the client made from a scheduler address
    is not one, so ``as_completed`` gets the client's own event loop. A cell whose
    worker dies is rescheduled by the scheduler on another worker (up to its
    ``distributed.scheduler.allowed-failures`` retries; then ``KilledWorker`` is raised);
    each future is yielded once, so each cell is committed once. Per-cell data are
    scattered to the cluster first (one object per cell, not embedded in the task).
    """
    import distributed

    futures = []
    for t in tasks:
        if t[6]:  # has_data: ship the inputs as their own object, not inside the graph
            data = client.scatter([t[7]], hash=False)[0]
            t = (*t[:7], data)
        futures.append(client.submit(_execute, *t, pure=False))
    try:
        for _fut, result in distributed.as_completed(futures, with_results=True, loop=client.loop):
            yield result
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)


# ---------------------------------------------------------------------- runner
def _progress_bar(progress: bool, total: int, initial: int, name: str):
    try:
        tty = bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        tty = False
    if not (progress and tty):
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return None
    return tqdm(total=total, initial=initial, desc=f"study {name}", unit="cell", file=sys.stderr,
                dynamic_ncols=True)


def _table(keys: list[dict], rows_of: list[list[dict]]):
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        raise ImportError("run_study returns a pandas DataFrame: pip install mcref[frame]") from None
    key_cols: dict[str, None] = {}
    row_cols: dict[str, None] = {}
    records = []
    for key, rows in zip(keys, rows_of):
        key_cols.update(dict.fromkeys(key))
        for row in rows:
            row_cols.update(dict.fromkeys(c for c in row if c not in key))
            records.append({**key, **row})
    columns = list(key_cols) + [c for c in row_cols if c not in key_cols]
    return pd.DataFrame.from_records(records, columns=columns) if records else pd.DataFrame(columns=columns)


def _mcref_version() -> str:
    return str(_version.VERSION)


def run_study(spec: StudySpec, *, seed: int | None = None, n_jobs: int = -1, backend: str = "loky",
              scheduler: Any = None, store: str | os.PathLike | None = None, progress: bool = True,
              threads_per_cell: int | None = None, connect_timeout: float = DASK_CONNECT_TIMEOUT) -> RunInfo:
    """Run the cells of a study that are not done yet and return the table of all of them.

    Parameters
    ----------
    spec : StudySpec
        The study: name, parameters, cell keys and cell function.
    seed : int or None, default: None
        Study seed (non-negative). ``None``: adopt the seed of the store if it holds the
        study already, else draw one from the OS (recorded in the store and returned in
        :attr:`RunInfo.seed`): mcref's one rule for seeds, as :func:`mcref.validate`.
    n_jobs : int, default: -1
        Workers of the local backends: -1 = every core available to the process, else a
        positive integer; never more than the cells that remain. ``n_jobs=1`` runs the
        cells in this process, without a pool. Ignored by ``backend="dask"``.
    backend : {"loky", "threading", "sequential", "dask"}, default: "loky"
        ``"loky"``: joblib worker processes; ``"threading"``: joblib threads (cells must
        release the GIL to gain); ``"sequential"``: this process, one cell at a time;
        ``"dask"``: one ``dask.distributed`` task per cell.
    scheduler : None, str or distributed.Client, optional
        For ``backend="dask"``: a client, a scheduler address (``"tcp://HOST:PORT"``), or
        None to use the current client (:func:`distributed.get_client`).
    store : str or os.PathLike, optional
        SQLite results store (:class:`mcref.store.StudyStore`). Each finished cell is
        committed at once; a later call with the same study computes only the missing
        cells. Without a store nothing is kept.
    progress : bool, default: True
        Show a progress bar (tqdm, on stderr) when stderr is a terminal.
    threads_per_cell : int, optional
        Threads each cell may use (passed to the cell and to :func:`numba.set_num_threads`).
        Default: ``max(1, cores // workers)`` for local backends (no oversubscription),
        1 for dask.
    connect_timeout : float, default: 5
        Seconds to wait for the scheduler at a ``scheduler`` address; one that does not
        answer is a ValueError naming it (Dask's own default waits 30 s).

    Returns
    -------
    RunInfo
        The table and how it was obtained.

    Raises
    ------
    ValueError
        Invalid ``spec``, ``seed``, ``n_jobs``, ``backend``, ``scheduler`` or
        ``threads_per_cell``; a cell that returns rows that are not flat dicts of JSON
        scalars; ``backend="dask"`` without a client or scheduler.
    mcref.store.StoreMismatchError
        The store holds another study (name, parameters, seed) or, while cells remain,
        was written by another mcref version.
    mcref.store.StoreFormatError
        ``store`` is not an mcref study store; it is left untouched.
    ImportError
        ``backend="dask"`` without dask.distributed installed.
    KeyboardInterrupt
        On Ctrl-C: the pool is stopped, the finished cells stay in the store, and one
        line on stderr says how to resume.
    Exception
        The first exception raised by a cell, with a note naming the cell (Python
        >= 3.11; a RuntimeError naming it on 3.10). Cells committed before stay committed.

    Notes
    -----
    Cell ``key`` draws from :func:`cell_seed` ``(seed, spec.name, key)`` only, so the table
    is bit-identical for any backend, number of workers and order of completion, and
    whether the cells were computed now or read back. Results arrive unordered and are
    committed by this process as they arrive; the table is put in ``spec.keys`` order at
    the end. With ``backend="threading"`` an interrupt cannot stop cells that are
    running: they finish in the background. See ``docs/methods.md``, section "Studies".

    Examples
    --------
    >>> from mcref.studies._runner import _doc_cell
    >>> spec = StudySpec("toy", {"n": 4}, [{"i": 0}, {"i": 1}], _doc_cell)
    >>> info = run_study(spec, seed=1, backend="sequential", progress=False)
    >>> info.table.columns.tolist(), info.n_computed
    (['i', 'j', 'x'], 2)
    >>> info.table.equals(run_study(spec, seed=1, n_jobs=2, backend="threading", progress=False).table)
    True
    """
    t0 = time.perf_counter()
    name, keys, ckeys, seed, n_jobs, threads_per_cell = _run_study_iv(
        spec, seed, n_jobs, backend, scheduler, threads_per_cell)
    connect_timeout = check_positive_number(connect_timeout, "connect_timeout")
    client, owned = _dask_client(scheduler, connect_timeout) if backend == "dask" else (None, False)
    path = os.fspath(store) if store is not None else None
    st = None
    try:
        if path is not None:
            st = StudyStore.open(path, study=name, params=spec.params, seed=seed, version=_mcref_version())
        seed, rows_of, todo = _plan(st, seed, keys, ckeys)
        n_loaded = len(rows_of)
        if todo:
            n_workers, n_threads = _pool_size(backend, n_jobs, threads_per_cell, len(todo))
            has_data = spec.data is not None
            tasks = [(spec.cell, keys[i], dict(spec.params), seed, name, n_threads, has_data,
                      spec.data.get(ckeys[i]) if has_data else None, user_statistics()) for i in todo]
            results = (_iter_dask(tasks, client) if backend == "dask"
                       else _iter_sequential(tasks) if backend == "sequential" or n_workers == 1
                       else _iter_joblib(tasks, backend, n_workers))
            _collect(results, st, rows_of, name, len(ckeys), path,
                     _progress_bar(progress, len(ckeys), n_loaded, name))
    finally:
        if st is not None:
            st.close()
        if owned:
            client.close()

    table = _table(keys, [rows_of[c] for c in ckeys])
    return RunInfo(table=table, seed=int(seed), store=path, n_cells=len(ckeys),
                   n_computed=len(ckeys) - n_loaded, n_loaded=n_loaded,
                   seconds=time.perf_counter() - t0)


def _run_study_iv(spec, seed, n_jobs, backend, scheduler, threads_per_cell):
    """Input validation of :func:`run_study`: ``(name, keys, ckeys, seed, n_jobs, threads_per_cell)``."""
    name, _params, keys, ckeys = _check_spec(spec)  # _params: validated (JSON-able); cells get spec.params
    seed = check_study_seed(seed)
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"`backend` must be one of {', '.join(map(repr, BACKENDS))}; got {backend!r}")
    n_jobs = check_n_jobs(n_jobs)
    if threads_per_cell is not None:
        threads_per_cell = check_int(threads_per_cell, "threads_per_cell", minimum=1)
    if scheduler is not None and backend != "dask":
        raise ValueError(f"`scheduler` is used by backend='dask' only; this call asks backend={backend!r}")
    return name, keys, ckeys, seed, n_jobs, threads_per_cell


def _plan(st: StudyStore | None, seed: int | None, keys: list[dict], ckeys: list[str]):
    """``(seed, rows_of, todo)``: the study's seed, the rows of the cells already in the store,
    and the indices of the cells still to compute."""
    if st is None:
        return (fresh_seed() if seed is None else seed), {}, list(range(len(ckeys)))
    done = st.done_keys() & set(ckeys)
    todo = [i for i, c in enumerate(ckeys) if c not in done]
    st.check_version(len(todo))
    rows_of = {c: st.load(keys[i]) for i, c in enumerate(ckeys) if c in done}
    return st.seed, rows_of, todo


def _pool_size(backend: str, n_jobs: int, threads_per_cell: int | None, n_todo: int) -> tuple[int, int]:
    """``(workers, threads per cell)``: workers × threads ≤ cores on the local backends."""
    if backend == "dask":
        return 0, threads_per_cell or 1
    cores = _n_cores()
    n_workers = max(1, min(cores if n_jobs == -1 else n_jobs, n_todo))
    return n_workers, threads_per_cell or max(1, cores // n_workers)


def _collect(results: Iterator, st: StudyStore | None, rows_of: dict, name: str, n_cells: int,
             path: str | None, bar) -> None:
    """Commit each cell's rows as they arrive; on Ctrl-C or an error, stop the pool and say
    what is kept (and how to resume)."""
    n_stored = len(rows_of)
    try:
        for ckey, rows, secs in results:
            if st is not None:
                st.commit(json.loads(ckey), rows, secs)
                n_stored += 1
            rows_of[ckey] = rows
            if bar is not None:
                bar.update(1)
    except KeyboardInterrupt:
        _close_quietly(results)
        if bar is not None:
            bar.close()
            bar = None
        if st is not None:
            st.close()
            where = f"{n_stored}/{n_cells} cells stored in {path}; run the same call again to resume"
        else:
            where = (f"{len(rows_of)}/{n_cells} cells done; no store was given, so nothing is "
                     "kept (a store makes the study resumable: store=... in Python, --store FILE on the "
                     "command line)")
        print(f"mcref: study '{name}' interrupted: {where}", file=sys.stderr, flush=True)
        raise
    except Exception as exc:
        _close_quietly(results)
        if st is not None and hasattr(exc, "add_note"):
            exc.add_note(f"mcref: {n_stored}/{n_cells} cells of study '{name}' are stored in "
                         f"{path}; run the same call again to resume")
        raise
    finally:
        if bar is not None:
            bar.close()


def _close_quietly(results: Any) -> None:
    """Close a results generator (aborts its pool); ignore what closing raises."""
    close = getattr(results, "close", None)
    if close is None:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close()
    except Exception:  # pragma: no cover - best effort while an error propagates
        pass


def _doc_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """Toy cell of the examples: two rows of uniform draws."""
    rng = np.random.default_rng(seed_seq)
    x = rng.random(params["n"])
    return [{"j": 0, "x": float(x[:2].sum())}, {"j": 1, "x": float(x[2:].sum())}]
