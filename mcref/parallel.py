"""Threads over chunks of independent work, stoppable with Ctrl-C (docs/methods.md, "Parallelism").

Monte Carlo loops in mcref are cut into chunks of a fixed number of repeats; each chunk
owns its random stream, so the result does not depend on which thread runs it. The
chunk work is NumPy (which releases the GIL while it draws and sorts) and nogil numba
kernels, so plain Python threads run chunks truly in parallel.

:func:`map_chunks` runs the chunks on a thread pool and keeps the main thread free: it
waits in short slices, so a ``KeyboardInterrupt`` is raised in the caller within one
slice; the workers then stop taking chunks and are joined (each finishes at most the
chunk in hand) before the interrupt propagates. No orphan threads are left running.
"""

from __future__ import annotations

import threading
from typing import Callable

__all__ = ["map_chunks"]

#: seconds between checks of the main thread while it waits for the workers
_POLL = 0.05


def map_chunks(fn: Callable[[int, int], None], n_chunks: int, n_threads: int = 1) -> None:
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

    Raises
    ------
    KeyboardInterrupt
        Promptly (within about 50 ms plus the chunk in hand) on Ctrl-C; the workers
        are stopped and joined first.
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
        return
    stop = threading.Event()
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for c in range(t, n_chunks, n_threads):
                if stop.is_set():
                    return
                fn(c, t)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=worker, args=(t,), daemon=True, name=f"mcref-chunks-{t}")
               for t in range(n_threads)]
    for th in threads:
        th.start()
    try:
        for th in threads:
            while th.is_alive():
                th.join(_POLL)
    except BaseException:
        stop.set()
        for th in threads:
            th.join()
        raise
    if errors:
        raise errors[0]
