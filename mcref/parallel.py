"""Threads over chunks of independent work, stoppable with Ctrl-C (docs/methods.md, "Parallelism").

Monte Carlo loops in mcref are cut into chunks of a fixed number of repeats; each chunk
owns its random stream, so the result does not depend on which thread runs it. The
chunk work is NumPy (which releases the GIL while it draws and sorts) and nogil numba
kernels, so plain Python threads run chunks truly in parallel.

:func:`map_chunks` runs the chunks on a thread pool and keeps the main thread free: it
waits in short slices, so a ``KeyboardInterrupt`` is raised in the caller within one
slice; the workers then stop taking chunks and are waited for (each finishes at most the
chunk in hand) before the interrupt propagates. No chunk keeps running after it returns.
The pool's threads are kept between calls, parked (:class:`_Pool`): waking them costs a
fraction of starting new ones, which phases of many short passes pay on every pass.

:func:`over_tasks` cuts a phase's items (replicates, points, samples) into tasks of a serial
kernel and runs them with :func:`map_chunks`: the long phases of ``validate`` have no numba
``prange`` kernel (a ``prange`` kernel costs seconds of numba's parfor passes to compile, and a
region cannot be interrupted). Short, repeated passes (the t fit's, a scale test's short round)
are one ``prange`` region each instead (:func:`run_region`, where :func:`prange_safe`): numba's
threads start a region in µs, where waking mcref's costs about 70 µs.
:func:`batch_ranges` serves the kernels that loop over many items in one call (the O(M²)
jackknives): Python cannot raise ``KeyboardInterrupt`` while a compiled kernel runs, so such
a kernel is called once per batch, each batch about 0.1 s of work; the interrupt is raised
when the batch in hand returns.

Both take an optional ``progress`` callback, called in the calling thread with the number of
chunks done so far (after each batch; every ~50 ms while threads run): the progress bars of
:mod:`mcref.core._progress` are drawn from these loops, and drawing them changes nothing in the
work. A long chunk may call :func:`checkpoint` between its steps, so that a stopped
:func:`map_chunks` does not wait for the whole chunk.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

T_ = TypeVar("T_")

__all__ = ["map_chunks", "over_tasks", "task_items", "batch_ranges", "checkpoint", "task_profile", "record_tasks",
           "speedup_bound", "thread_memory", "memory_threads", "serial_blas", "prange_safe", "run_region", "parallel_kernel",
           "per_thread"]


#: seconds between checks of the main thread while it waits for the workers
_POLL = 0.05
#: work (≈ element operations, ~1–5 ns each) per call of a prange kernel between interrupt checks
BATCH_WORK = 5e7
#: work of one task of :func:`over_tasks` (≈ element operations): ~0.1–0.5 ms, enough to pay for the
#: Python call of a serial kernel, small enough that M ≥ 10⁵ makes an item (a replicate) a task
TASK_WORK = 100_000
#: below this total work (element operations, ≈ 0.2–0.5 ms) :func:`over_tasks` runs its ranges in the
#: calling thread: starting threads costs more than they save. Measured on the 2-core VM
#: (2026-11-28): a :func:`map_chunks` call of two empty tasks on two parked threads costs 57 µs; the t
#: fit breaks even at about 4·10⁴ values (4·10⁵ of this work; at 10⁵ values 27.3 ms on one thread,
#: 17.8 on two), CC's jackknife steps and the scale tests' kernels lower. It was 2·10⁶ until then: the
#: t fit's passes at M = 10⁵ took 2–2.5× longer on two threads than on one, which was OpenBLAS's
#: threads spinning beside them (:func:`serial_blas`), not the cost of the threads
MIN_THREADED_WORK = 250_000


#: the environment variable that bounds the threads' scratch of one phase (:func:`thread_memory`)
THREAD_MEMORY_ENV = "MCREF_THREAD_MEMORY"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _available_bytes() -> float | None:
    """The memory the system could give now: ``MemAvailable`` of /proc/meminfo (Linux), else the
    free physical pages; None when neither can be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES")) * float(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def thread_memory() -> float | None:
    """Bytes that the threads' scratch of one phase may take together (docs/methods.md, "Parallelism").

    ``MCREF_THREAD_MEMORY`` sets it: a number of bytes with an optional K, M, G or T suffix
    (powers of 1024; ``"1.5G"``, ``"800M"``, ``"2e9"``). Unset: half the memory available when
    the phase starts (``MemAvailable``, Linux), so that a many-core machine does not run out of
    memory on a large set; None (no bound) where that cannot be read. Each phase that holds
    M-sized scratch per thread (the references' draws and rank buffers, the bootstrap's counts)
    runs on at most ``thread_memory() // its bytes per thread`` threads, at least one
    (:func:`memory_threads`). The results do not depend on it: any thread count gives the same bits.

    Examples
    --------
    >>> import os
    >>> os.environ["MCREF_THREAD_MEMORY"] = "1.5G"
    >>> thread_memory() == 1.5 * 2**30
    True
    >>> del os.environ["MCREF_THREAD_MEMORY"]
    """
    text = os.environ.get(THREAD_MEMORY_ENV, "").strip()
    if not text:
        avail = _available_bytes()
        return None if avail is None else 0.5 * avail
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGTkmgt]?)(?:i?[Bb])?", text)
    if m is None or float(m.group(1)) <= 0:
        raise ValueError(f"{THREAD_MEMORY_ENV}={text!r}: expected a positive number of bytes, optionally "
                         "with a K, M, G or T suffix (powers of 1024), e.g. 1.5G, 800M or 2e9")
    return float(m.group(1)) * _UNITS[m.group(2).upper()]


def memory_threads(n_threads: int, bytes_per_thread: float) -> int:
    """At most ``n_threads`` threads whose scratch, ``bytes_per_thread`` each, fits
    :func:`thread_memory` together; at least one.

    Examples
    --------
    >>> import os
    >>> os.environ["MCREF_THREAD_MEMORY"] = "1G"
    >>> memory_threads(16, 300 * 2**20)  # 300 MiB each: three fit in 1 GiB
    3
    >>> memory_threads(16, 0)  # no scratch: no bound
    16
    >>> del os.environ["MCREF_THREAD_MEMORY"]
    """
    n_threads = max(1, int(n_threads))
    if bytes_per_thread <= 0 or n_threads == 1:
        return n_threads
    budget = thread_memory()
    if budget is None:
        return n_threads
    return max(1, min(n_threads, int(budget // float(bytes_per_thread))))


_blas_lock = threading.Lock()
_blas_depth = 0
_blas_limiter = None  # threadpoolctl's limiter of the outermost serial_blas block, which restores on exit
_blas_controller = None  # threadpoolctl.ThreadpoolController, made once (≈ 6 ms: it scans the loaded libraries)


@contextmanager
def serial_blas() -> Iterator[None]:
    """Run the BLAS libraries (NumPy's and SciPy's OpenBLAS, MKL, …) on one thread inside the block,
    then restore their thread counts (docs/methods.md, "Parallelism").

    mcref's threads run numba kernels, not BLAS; but a BLAS call made between two threaded passes
    (L-BFGS-B's steps between the t fit's likelihood passes) wakes OpenBLAS's own threads, which then
    spin, waiting for more work, on the cores that mcref's threads need. On the 2-core VM that made
    the t fit at M = 10⁶ take as long on 2 threads as on 1 (1 → 2 = 1.02; 1.82 with BLAS on one
    thread). The small BLAS calls of such loops gain nothing from BLAS's threads. Nested blocks
    (also from several threads) set the limit once and restore it when the outermost one ends.
    threadpoolctl lets one Python thread at a time drive OpenBLAS's shared pool (the first to set
    it, while it lives): a block opened first in another thread changes nothing, as does a block
    without threadpoolctl. The t fit's results never depend on it (its BLAS calls are on three
    values); the long BLAS loops that rely on it for fixed bits (Politis & White's lagged dots, the
    CME test's Σ̂, the polynomial recalibration) then follow BLAS's own threads: the sums that
    must not depend on them at all use :func:`mcref.core._dot.fixed_dot`.

    Examples
    --------
    >>> import numpy as np
    >>> with serial_blas():
    ...     x = np.ones(3) @ np.ones(3)
    >>> float(x)
    3.0
    """
    global _blas_depth, _blas_limiter, _blas_controller
    with _blas_lock:
        _blas_depth += 1
        if _blas_depth == 1:
            try:
                if _blas_controller is None:
                    from threadpoolctl import ThreadpoolController

                    _blas_controller = ThreadpoolController()
                _blas_limiter = _blas_controller.limit(limits=1, user_api="blas")
            except Exception:  # noqa: BLE001 - no threadpoolctl, or a library it cannot drive: leave BLAS as it is
                _blas_limiter = None
    try:
        yield
    finally:
        with _blas_lock:
            _blas_depth -= 1
            if _blas_depth == 0 and _blas_limiter is not None:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


#: the task record of :func:`task_profile` (None: not recording, the default; recording costs nothing then)
_profile: list | None = None


@contextmanager
def task_profile() -> Iterator[list]:
    """Record the parallel dispatches made inside the ``with`` block (docs/methods.md, "Parallelism").

    Yields a list that fills with one dict per dispatch (a :func:`map_chunks` call, or one call of
    a ``prange`` kernel): ``phase`` (its name), ``sizes`` (the work of each task, element
    operations), ``threads`` (the threads it ran on) and ``schedule`` (how tasks meet threads:
    ``"round-robin"``, :func:`map_chunks`; ``"blocks"``, numba's static ``prange``). The benchmark's
    parallel profile (``benchmarks/bench_validate.py --profile``) reads it with
    :func:`speedup_bound`. Outside the block nothing is recorded."""
    global _profile
    old, _profile = _profile, []
    try:
        yield _profile
    finally:
        _profile = old


def record_tasks(phase: str, sizes, threads: int, schedule: str = "round-robin", *, batch: int | None = None,
                 span: tuple[int, int] | None = None, serial: bool = False, min_per: int = 1) -> None:
    """Add one dispatch to the :func:`task_profile` record, if one is open (else return at once).
    ``batch``: the tasks run as :func:`batch_ranges` cuts them, ranges of max(T, ``batch``) tasks
    (:func:`batch_size`), one parallel region each; ``span``: the repeats (r0, r1) it ran, for the
    rounds of a sequential test; ``serial``: its tasks run in the calling thread on any machine
    (:func:`over_tasks` below :data:`MIN_THREADED_WORK`); ``min_per``: with ``"blocks"``, the fewest
    items a thread's run holds (:func:`over_tasks`' per-thread cut)."""
    if _profile is not None:
        _profile.append({"phase": phase, "sizes": [float(x) for x in sizes], "threads": int(threads),
                         "schedule": schedule, "batch": batch, "span": span, "serial": bool(serial),
                         "min_per": int(min_per)})


def _makespan(sizes: list[float], T: int, schedule: str, min_per: int = 1) -> float:
    """The largest work any one of ``T`` threads gets from ``sizes`` under ``schedule``."""
    n = len(sizes)
    if n == 0:
        return 0.0
    if schedule == "round-robin":  # thread t takes tasks t, t + T, …
        return max(sum(sizes[t::T]) for t in range(min(T, n)))
    per = max(-(-n // T), min_per)  # "blocks": contiguous runs of ceil(n/T) iterations per thread
    return max(sum(sizes[i:i + per]) for i in range(0, n, per))


def speedup_bound(dispatches: list[dict], T: int) -> float:
    """The speedup on ``T`` threads that the tasks of ``dispatches`` allow:
    :math:`S(T) = \\sum_j W_j / \\sum_j \\max_t W_{j,t}`, W_j the work of dispatch j and W_{j,t} the work
    its schedule hands thread t (dispatches, and the ranges of a batched dispatch, run one after
    the other). For n equal tasks in one
    dispatch this is n / ⌈n/T⌉ ≤ T; it counts the tasks only (memory bandwidth, the Python
    between tasks and the serial steps of a phase lower the measured speedup). A dispatch recorded
    ``serial`` (too small for threads on any machine: :func:`over_tasks`) counts as one thread.

    Examples
    --------
    >>> d = {"sizes": [1.0] * 128, "schedule": "round-robin", "batch": None}
    >>> speedup_bound([d], 64), speedup_bound([{**d, "serial": True}], 64)
    (64.0, 1.0)
    """
    total = sum(sum(d["sizes"]) for d in dispatches)
    span = 0.0
    for d in dispatches:
        if d.get("serial"):
            span += sum(d["sizes"])
            continue
        per = len(d["sizes"]) if d.get("batch") is None else max(T, d["batch"])  # batch_ranges' ranges at T
        span += sum(_makespan(d["sizes"][i:i + per], T, d["schedule"], d.get("min_per", 1))
                    for i in range(0, len(d["sizes"]), per))
    return total / span if span > 0 else 1.0


#: per-thread state of the map_chunks worker running on this thread (its run's stop event)
_local = threading.local()


class _Stopped(BaseException):
    """Raised by :func:`checkpoint` in a worker whose run is stopping; ends the worker quietly
    (a BaseException, like KeyboardInterrupt, so that ``except Exception`` does not catch it)."""


@contextmanager
def _sigint_deferred():
    """Hold SIGINT (POSIX, main thread) while threads are started: a KeyboardInterrupt raised
    inside ``Thread.start`` can break its internal lock (``RuntimeError: release unlocked
    lock``) and leave a thread half-started. The held signal is delivered on exit."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def checkpoint() -> None:
    """Return at once, unless called in a :func:`map_chunks` worker whose run is being stopped
    (Ctrl-C in the caller, or an error in another worker): then end the chunk in hand early.

    A chunk made of several long steps calls it between them; the partial chunk's output is
    never used, since the run raises.
    """
    stop = getattr(_local, "stop", None)
    if stop is not None and stop.is_set():
        raise _Stopped


def batch_size(work_per_chunk: float) -> int:
    """Chunks per range of :func:`batch_ranges` before its floor (the thread count): about
    ``BATCH_WORK / work_per_chunk``, at least 1."""
    return max(1, int(BATCH_WORK / max(float(work_per_chunk), 1.0)))


def batch_ranges(n_chunks: int, work_per_chunk: float, *, min_per_batch: int | None = None,
                 progress: Callable[[int], None] | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive ``(first, stop)`` ranges covering ``range(n_chunks)``.

    Each range holds about ``BATCH_WORK / work_per_chunk`` chunks (~0.1 s), and at least
    ``min_per_batch`` (default: numba's thread count, so that every thread has work; with
    chunks that costly, one each keeps a batch, and the wait for Ctrl-C, short).
    A kernel called once per range returns to Python between ranges, where a pending
    Ctrl-C is raised; its results are the same as one call over all chunks when every
    chunk owns its random stream and output slots.

    Parameters
    ----------
    n_chunks : int
        Number of chunks (>= 0).
    work_per_chunk : float
        Work of one chunk, in element operations (compared with ``BATCH_WORK``).
    min_per_batch : int, optional
        Fewest chunks per range (default: numba's thread count).
    progress : callable ``(done: int) -> None``, optional
        Called after the caller's work on each range (when the loop asks for the next one),
        with the number of chunks done so far.

    Yields
    ------
    (first, stop) : tuple of int

    Examples
    --------
    >>> list(batch_ranges(10, 2e7, min_per_batch=1))
    [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10)]
    """
    import numba

    floor = numba.get_num_threads() if min_per_batch is None else int(min_per_batch)
    per = max(1, floor, batch_size(work_per_chunk))
    for c in range(0, n_chunks, per):
        stop = min(c + per, n_chunks)
        yield c, stop
        if progress is not None:
            progress(stop)


def per_thread(make: Callable[[], T_]) -> Callable[[], T_]:
    """A getter of the calling thread's own ``make()``, made on its first call in that thread and
    returned again after: the scratch of a phase's tasks (:func:`over_tasks` hands a task no thread
    index), kept from one task to the next and freed with the getter.

    A task that allocates tens of MB and frees them has its pages faulted in again by the next one
    wherever the allocator hands the memory back to the system (glibc's heaps above their trim
    threshold): the bootstrap at M = 10⁶ with tied u faulted 1.3 million pages at B = 1000, a
    quarter of its time, and 3000 with its scratch kept (2026-11-28).

    Examples
    --------
    >>> get = per_thread(lambda: [0])
    >>> get() is get()
    True
    """
    local = threading.local()

    def get() -> T_:
        value = getattr(local, "value", None)
        if value is None:
            value = local.value = make()
        return value

    return get


def map_chunks(fn: Callable[[int, int], None], n_chunks: int, n_threads: int = 1, *,
               progress: Callable[[int], None] | None = None) -> None:
    """Call ``fn(chunk, thread)`` for every ``chunk`` in ``range(n_chunks)`` on ``n_threads`` threads.

    Thread ``t`` takes chunks ``t, t + T, t + 2T, …`` (a fixed assignment: per-thread
    scratch buffers can be indexed by ``thread``). ``fn`` must write its results to
    places owned by its chunk; then the outcome does not depend on ``n_threads``.

    Parameters
    ----------
    fn : callable ``(chunk: int, thread: int) -> None``
    n_chunks : int
        Number of chunks (>= 0).
    n_threads : int, default: 1
        Worker threads; 1 runs every chunk in the calling thread.
    progress : callable ``(done: int) -> None``, optional
        Called in the calling thread with the number of chunks done so far: after each
        chunk (one thread), or whenever it changed, every ~50 ms (threads).

    Raises
    ------
    KeyboardInterrupt
        Promptly (within about 50 ms plus the chunk in hand, or its step up to the next
        :func:`checkpoint`) on Ctrl-C; the workers are stopped and waited for first.
    Exception
        The first exception raised by ``fn`` (the other workers stop after their chunk).

    Examples
    --------
    >>> out = [0] * 10
    >>> def work(c, t):
    ...     out[c] = c * c
    >>> map_chunks(work, 10, n_threads=2)
    >>> out[9]
    81
    """
    n_threads = max(1, min(int(n_threads), n_chunks))
    if n_chunks <= 0:
        return
    if n_threads == 1:
        for c in range(n_chunks):
            fn(c, 0)
            if progress is not None:
                progress(c + 1)
        return
    job = _Job(fn, n_chunks, n_threads)
    pool = _the_pool()
    if pool is not None and pool.busy.acquire(blocking=False):  # the pool's threads, woken
        try:
            pool.run(job)
            _wait(job, progress, lambda: job.finished.wait(_POLL), job.finished.wait)
        finally:
            pool.busy.release()
    else:  # called from a pool worker, or while another thread uses the pool: threads of its own
        threads = [threading.Thread(target=job.run, args=(t,), daemon=True, name=f"mcref-chunks-{t}")
                   for t in range(n_threads)]
        with _sigint_deferred():  # every thread is started before a Ctrl-C can be raised
            for th in threads:
                th.start()
        _wait(job, progress, lambda: job.finished.wait(_POLL), lambda: [th.join() for th in threads])
    if job.errors:
        raise job.errors[0]


class _Job:
    """One :func:`map_chunks` call on T threads: thread t runs chunks t, t + T, … (:meth:`run`)."""

    def __init__(self, fn: Callable[[int, int], None], n_chunks: int, n_threads: int):
        self.fn, self.n_chunks, self.T = fn, n_chunks, n_threads
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.done = [0] * n_threads  # chunks finished, one slot per thread (written by that thread only)
        self._left = n_threads
        self._lock = threading.Lock()
        self.finished = threading.Event()  # set when every thread has returned

    def run(self, t: int) -> None:
        _local.stop = self.stop
        try:
            for c in range(t, self.n_chunks, self.T):
                if self.stop.is_set():
                    return
                self.fn(c, t)
                self.done[t] += 1
        except _Stopped:
            return
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self.errors.append(exc)
            self.stop.set()
        finally:
            _local.stop = None
            with self._lock:
                self._left -= 1
                if self._left == 0:
                    self.finished.set()


def _wait(job: _Job, progress, wait_slice, wait_all) -> None:
    """Wait for ``job`` in slices of :data:`_POLL` (a Ctrl-C is raised between them), reporting the
    chunks done; on any exception stop the workers, wait until each has returned, and re-raise."""
    reported = 0
    try:
        while not wait_slice():
            if progress is not None and sum(job.done) != reported:
                reported = sum(job.done)
                progress(reported)
        if progress is not None and not job.errors and sum(job.done) != reported:
            progress(sum(job.done))
    except BaseException:
        job.stop.set()
        wait_all()
        raise


class _Pool:
    """Worker threads kept between :func:`map_chunks` calls: a call on two parked threads costs 175 µs
    on the 2-core VM where starting two cost 340 µs (eight: 389 µs against 1.3 ms), so that the
    short passes of a phase (the t fit's ~40–100 likelihood passes, the steps of CC's jackknife)
    pay for their threads. Thread t of a call is worker t, which runs its chunks and parks again;
    one call at a time (``busy``); a call made meanwhile, from a worker or from another thread,
    starts threads of its own. Each worker is a daemon parked on its own event."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self._go: list[threading.Event] = []
        self._job: list[_Job | None] = []

    def run(self, job: _Job) -> None:
        """Hand ``job`` to workers 0 … T − 1 (started here when fewer exist) and wake them."""
        with _sigint_deferred():  # a started worker is parked before a Ctrl-C can be raised
            while len(self._go) < job.T:
                k = len(self._go)
                self._go.append(threading.Event())
                self._job.append(None)
                threading.Thread(target=self._work, args=(k,), daemon=True, name=f"mcref-chunks-{k}").start()
        for t in range(job.T):
            self._job[t] = job
            self._go[t].set()

    def _work(self, k: int) -> None:
        _local.worker = True
        while True:
            self._go[k].wait()
            self._go[k].clear()
            job, self._job[k] = self._job[k], None
            if job is not None:
                job.run(k)
            job = None  # parked without the call's closure: its arrays are freed when the call returns


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _the_pool() -> _Pool | None:
    """The process's worker pool (made on first use); None in a pool worker (a nested call)."""
    global _pool
    if getattr(_local, "worker", False):
        return None
    with _pool_lock:
        if _pool is None:
            _pool = _Pool()
        return _pool


def _forget_pool() -> None:  # a forked child has none of its parent's threads
    global _pool, _forked
    _pool = None
    _forked = True


#: the most work (element operations, as :data:`TASK_WORK`) that :func:`run_region` hands to one
#: ``prange`` region: about 0.1 s of one thread, so that a Ctrl-C (raised when the region returns)
#: stays prompt; more work goes to :func:`over_tasks`, whose dispatch cost it then dwarfs
REGION_WORK = 1e8


def run_region(region: Callable[[], None], n_items: int, work_per_item: float, *, phase: str,
               span: tuple[int, int] | None = None) -> bool:
    """Run ``region()``, one call of a ``prange`` kernel over ``n_items`` independent items, and
    return True, when numba's threads may run it here (:func:`prange_safe`) and its work is at most
    :data:`REGION_WORK`; else return False at once (the caller runs the items with
    :func:`over_tasks`, the same bits). A region starts its threads in a few µs where a dispatch to
    mcref's threads costs about 70 µs on a 2-core VM (their wake-ups through futexes and the GIL):
    the short, repeated passes of a phase (the t fit's likelihood, a scale test's first round) scale
    with the threads. Recorded in the parallel profile as its items on numba's contiguous blocks.

    Examples
    --------
    >>> out = []
    >>> run_region(lambda: out.append(1), 4, 1e9, phase="doc")  # too much work for one region
    False
    """
    if n_items <= 0 or n_items * float(work_per_item) > REGION_WORK or not prange_safe():
        return False
    import numba

    record_tasks(phase, [float(work_per_item)] * n_items, numba.get_num_threads(), "blocks", span=span)
    region()
    return True


_twins: dict = {}


def parallel_kernel(kernel):
    """``kernel`` (a numba ``prange`` kernel) where :func:`prange_safe`, else its serial twin: the same
    Python function compiled without ``parallel`` (each ``prange`` runs as ``range``, in this process
    only: not cached, whose index the two would share). Every ``prange`` kernel of mcref writes each
    iteration's results to their own slots, so the twin gives the same bits (tested). Called where a
    forked child (of a parent that used GNU OpenMP: numba would terminate the child) or a
    ``workqueue`` layer (which aborts when two threads launch regions) may run it.

    Examples
    --------
    >>> from mcref.kernels.scores import crps_normal_kernel
    >>> parallel_kernel(crps_normal_kernel) is crps_normal_kernel or _forked or _layer != "omp"
    True
    """
    if prange_safe():
        return kernel
    twin = _twins.get(kernel)
    if twin is None:
        from numba import njit

        opts = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "cache", "nopython")}
        twin = _twins[kernel] = njit(**opts)(kernel.py_func)
    return twin


#: set in a forked child (:func:`prange_safe`)
_forked = False
#: numba's threading layer, once :func:`prange_safe` has asked
_layer: str | None = None


def prange_safe() -> bool:
    """Whether mcref may run a numba ``prange`` kernel in this process (:func:`run_region`,
    :func:`parallel_kernel`): numba's
    threading layer is thread-safe (``tbb`` or ``omp``: two Python threads may each launch a
    parallel region, e.g. two validates on a Dask worker's threads; ``workqueue`` aborts the
    process then), and with ``omp`` this is not a forked child (GNU OpenMP is not fork-safe:
    numba terminates a child that launches a region after its parent used OpenMP). Where it
    is False the same kernels run as tasks on mcref's threads (:func:`over_tasks`) or as serial
    twins (:func:`parallel_kernel`), with the same bits. Asks numba once (starting its threading layer, as a first ``prange`` call would).

    Examples
    --------
    >>> isinstance(prange_safe(), bool)
    True
    """
    global _layer
    if _layer is None:
        import numba

        try:
            _layer = numba.threading_layer()
        except ValueError:  # not started yet: numba's public get_num_threads launches the threads
            numba.get_num_threads()
            _layer = numba.threading_layer()
    return _layer == "tbb" or (_layer == "omp" and not _forked)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


#: the thread counts that :func:`task_items` deals evenly to: tasks in multiples of this many
TASK_ROUND = 64


def task_items(n_items: int, work_per_item: float, min_per: int = 1) -> int:
    """Items per task of :func:`over_tasks`: ``max(min_per, TASK_WORK // work_per_item)``, each
    task's Python call paid for; then, when that makes between :data:`TASK_ROUND` and
    8·:data:`TASK_ROUND` tasks, fewer items per task, so that the tasks come in a multiple of
    :data:`TASK_ROUND` (at most twice as many), which 16, 32 or 64 threads share evenly: 101 equal
    tasks give 64 threads a speedup of at most 101/2 = 50.5, 128 of them 64 (the t fit's passes at
    M = 10⁶); 400 give 57.1, 448 of them 64 (the mean jackknife at M = 10⁵, until 2026-11-28 cut
    only below 4·:data:`TASK_ROUND`). Never below ``min_per``.

    Examples
    --------
    >>> task_items(3907, 2560.0)  # 39 items a task would make 101 tasks: 31 make 127
    31
    >>> task_items(391, 2560.0)  # 11 tasks: left as they are
    39
    """
    per = max(1, int(min_per), int(TASK_WORK // max(float(work_per_item), 1.0)))
    n_tasks = -(-n_items // per)
    if TASK_ROUND < n_tasks < 8 * TASK_ROUND and n_tasks % TASK_ROUND:
        target = -(-n_tasks // TASK_ROUND) * TASK_ROUND
        per = max(1, int(min_per), -(-n_items // target))
    return per


def over_tasks(fn: Callable[[int, int], None], n_items: int, work_per_item: float, *, phase: str,
               n_threads: int | None = None, progress: Callable[[int], None] | None = None,
               span: tuple[int, int] | None = None, min_per: int = 1, bytes_per_thread: float = 0.0) -> None:
    """Call ``fn(i0, i1)`` over consecutive ranges covering ``range(n_items)``, on threads.

    The serial, GIL-free kernels of a phase (a bootstrap's replicates, a jackknife's points, a
    scale test's samples) run this way instead of as numba ``prange`` kernels: a ``prange``
    kernel costs seconds more to compile (numba's parfor passes: 7 s for the bootstrap's), and
    tasks cut here are counted in the parallel profile (:func:`record_tasks`). A range holds
    ``max(min_per, TASK_WORK // work_per_item)`` items (``work_per_item``: element operations), so
    that its Python call is paid for (``min_per``: a phase's own floor, e.g. B // 256 replicates); :func:`map_chunks` runs the ranges round-robin on
    ``n_threads`` threads (default: numba's thread count), stoppable with Ctrl-C between
    ranges; a call whose whole work is below :data:`MIN_THREADED_WORK` runs them in the calling
    thread (the same ranges, so the same results), and a call of fewer than :data:`TASK_ROUND` such
    ranges and less work than :data:`TASK_ROUND` · :data:`TASK_WORK` (a few ms) is cut instead into
    one contiguous range per thread (at least ``min_per`` items each): a
    pass of the t fit at M = 10⁵ was 11 tasks, which 64 threads could speed up 10×, now as many
    ranges as threads (the profile records its items, ``"blocks"``). ``fn`` must write only the outputs of its items: then the result does not depend on
    the threads. ``progress`` is called with the items done so far; ``span`` is recorded with
    the tasks (:func:`record_tasks`). ``bytes_per_thread``: the scratch a thread holds while it runs
    a task; the threads are as many as fit :func:`thread_memory` (:func:`memory_threads`).

    Examples
    --------
    >>> out = [0] * 10
    >>> def square(i0, i1):
    ...     for i in range(i0, i1):
    ...         out[i] = i * i
    >>> over_tasks(square, 10, 50_000.0, phase="squares", n_threads=2)  # 2 items per task
    >>> out[9]
    81
    """
    if n_items <= 0:
        return
    per = task_items(n_items, work_per_item, min_per)
    n_tasks = -(-n_items // per)
    if n_threads is None:
        import numba

        n_threads = numba.get_num_threads()
    serial = n_items * float(work_per_item) < MIN_THREADED_WORK
    # a small dispatch (less work than TASK_ROUND tasks of TASK_WORK, in fewer tasks) is cut into one
    # contiguous range per thread instead: the items are independent, so any cut gives the same results.
    # Not a dispatch of few large items (a floor of several replicates a task at M = 10⁷): each thread's
    # one range would hold its progress and Ctrl-C for seconds
    split = (not serial and n_tasks < TASK_ROUND and n_items > n_tasks
             and n_items * float(work_per_item) < TASK_ROUND * TASK_WORK)
    T = max(1, min(int(n_threads), n_items if split else n_tasks))
    if serial:  # too little to pay for starting threads
        T = 1
    T = memory_threads(T, bytes_per_thread)
    if split:
        per = max(1, int(min_per), -(-n_items // T))
        n_tasks = -(-n_items // per)
        T = min(T, n_tasks)
    if _profile is not None:  # the sizes are built only while a profile is recorded
        if split:  # what T threads would get: its items, in T contiguous runs
            record_tasks(phase, [float(work_per_item)] * n_items, T, "blocks", span=span, min_per=min_per)
        else:
            record_tasks(phase, [float(min(per, n_items - c * per)) * work_per_item for c in range(n_tasks)], T,
                         span=span, serial=serial)
    map_chunks(lambda c, t: fn(c * per, min(n_items, (c + 1) * per)), n_tasks, T,
               progress=None if progress is None else (lambda done: progress(min(n_items, done * per))))
