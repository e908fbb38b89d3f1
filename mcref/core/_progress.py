"""Progress bars of long calls (docs/methods.md, "Parallelism", "Progress").

One place decides whether a call shows progress, from its ``progress=`` argument:

* ``None`` (auto): tqdm bars on stderr when stderr is a terminal, the call runs in the main
  thread of the main process, no other tqdm bar is open (a study's bar, or the caller's
  own loop), and the expected duration exceeds :data:`AUTO_SECONDS`. The duration is
  estimated before any work from the work sizes (replicates × points, …) times the
  per-element costs of :data:`COST_NS`, measured on a 2-core VM.
* ``True``: bars always, also into a pipe or a log file; there they are drawn in ASCII and
  refreshed at most every :data:`PIPE_INTERVAL` seconds, so a log gets a few lines per phase.
* ``False``: no bar.

A public function opens a :func:`session`; the public functions it calls (``validate`` →
``bootstrap_many`` → jackknife) join the open session, which has already decided. A
command-line option can set the default of every call below it with :func:`default`.

Each named phase ("bootstrap", "jackknife ENCE" (adaptive bins), "references normal, t(6), empirical",
"distfit bootstrap") is one bar, opened by :meth:`Session.phase` and closed (left on screen,
with a newline) when the phase ends or is interrupted. Updates are made by the loops of
:mod:`mcref.parallel` in the calling thread, between batches or chunks: the computation
and its results do not depend on whether a bar is shown.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

from ._checks import check_progress

__all__ = ["session", "default", "end_line", "estimate_seconds", "Session", "Phase", "AUTO_SECONDS", "COST_NS"]

#: auto mode shows bars for calls expected to run longer than this (seconds)
AUTO_SECONDS = 2.0
#: minimum seconds between refreshes of a bar that is not on a terminal
PIPE_INTERVAL = 10.0
#: nanoseconds per element of work, by kind (see :func:`estimate_seconds` for what an element
#: is). Measured at M = 50 000 (5 000 for the adaptive kinds) on the project's 2-core VM
#: (NUMBA_NUM_THREADS=2) while it was shared (load ~9), divided by 3 for a quiet machine; only
#: the order of magnitude matters against AUTO_SECONDS.
COST_NS = {
    "bootstrap": 7.5,  # one replicate × one point, equal-count bins, the five default statistics
    "bootstrap adaptive": 50.0,  # the same with bins re-cut per resample (NumPy sort)
    "jackknife adaptive": 3.3,  # one left-out point × one point, bins re-cut
    "references": 16.0,  # one repeat × one point × one generative distribution
    "distfit bootstrap": 320.0,  # one replicate × one point (three KS fits)
}

_CURRENT: ContextVar["Session | None"] = ContextVar("mcref_progress_session", default=None)
_DEFAULT: ContextVar["bool | None"] = ContextVar("mcref_progress_default", default=None)


def estimate_seconds(**work: float) -> float:
    """Expected seconds of ``work``: ``kind=elements`` pairs, the keys of :data:`COST_NS`
    with spaces written as underscores (``bootstrap=n_boot * M``, ``jackknife_adaptive=M * M``,
    ``references=n_mc * M * n_dists``)."""
    return sum(COST_NS[k.replace("_", " ")] * float(v) for k, v in work.items()) * 1e-9


class _Stderr:
    """``sys.stderr`` (looked up at every write) for the bars, remembering whether the last
    write left a line open: a bar interrupted while it was drawn has no newline yet, and a
    following message (``mcref: interrupted``) must start on a line of its own."""

    line_open = False

    def write(self, text: str) -> int:
        if text:  # set first: an interrupt raised just after the write must see the open line
            _Stderr.line_open = not text.endswith("\n")
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def __getattr__(self, name: str):
        return getattr(sys.stderr, name)


_STDERR = _Stderr()


def end_line() -> None:
    """End the line a bar left open (after an interrupt in the middle of drawing it)."""
    if _Stderr.line_open:
        _STDERR.write("\n")
        _STDERR.flush()


def _stderr_is_terminal() -> bool:
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def _terminal_columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 0


def _other_bar_open() -> bool:
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return False
    return len(getattr(tqdm, "_instances", ())) > 0


def _auto(seconds: float) -> bool:
    return (seconds > AUTO_SECONDS and _stderr_is_terminal()
            and threading.current_thread() is threading.main_thread()
            and multiprocessing.current_process().name == "MainProcess"
            and not _other_bar_open())


def _bar_class():
    """tqdm without its monitor thread (our loops update the bars often enough; a thread
    started by a bar is one more place where Ctrl-C could land)."""
    global _BAR
    if _BAR is None:
        from tqdm import tqdm

        class _Bar(tqdm):
            monitor_interval = 0

        _BAR = _Bar
    return _BAR


_BAR = None


#: Ctrl-C seen by the CLI's handler (:func:`sigint_handler`), until the command ends
_SIGINT = [False]


def sigint_handler(signum, frame) -> None:
    """The CLI's SIGINT handler: Python's (raise KeyboardInterrupt), and a note of it, so that a
    KeyboardInterrupt that Python swallows (raised inside a ``__del__``, e.g. llvmlite's while
    numba compiles a kernel: "Exception ignored in ...") is raised again at the next progress
    update (:meth:`Phase.update_to`) instead of being lost."""
    _SIGINT[0] = True
    raise KeyboardInterrupt


class Phase:
    """One named phase: a tqdm bar on stderr, or nothing (``bar is None``).

    ``update_to(n)`` moves the bar to ``n`` of ``total`` units; :meth:`chunks` gives the
    callback of :mod:`mcref.parallel` for chunks of a fixed number of units.
    """

    def __init__(self, name: str, total: int, unit: str, show: bool):
        self.name = name
        self.total = int(total)
        self.bar = None
        if show:
            tty = _stderr_is_terminal()
            sized = tty and _terminal_columns() > 0  # a new pseudo-terminal reports 0 columns
            self.bar = _bar_class()(total=self.total, desc=name, unit=unit, file=_STDERR, leave=True,
                                    dynamic_ncols=sized, ncols=None if sized else 100, ascii=not tty,
                                    mininterval=0.1 if tty else PIPE_INTERVAL,
                                    maxinterval=PIPE_INTERVAL if not tty else 10.0, smoothing=0.1)

    def update_to(self, n: int) -> None:
        if _SIGINT[0]:  # a Ctrl-C that was swallowed where it landed (sigint_handler)
            raise KeyboardInterrupt
        if self.bar is not None:
            n = min(int(n), self.total)
            if n > self.bar.n:
                self.bar.update(n - self.bar.n)

    def chunks(self, size: int) -> Callable[[int], None] | None:
        """Callback ``done_chunks -> None`` for a loop over chunks of ``size`` units (None
        when no bar is shown, so the loops skip the call)."""
        if self.bar is None:
            return None
        return lambda done: self.update_to(done * size)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Session:
    """The progress decision of one public call and of the calls it makes."""

    def __init__(self, show: bool):
        self.show = bool(show)

    @contextmanager
    def phase(self, name: str, total: int, unit: str = "it") -> Iterator[Phase]:
        """A bar named ``name`` for ``total`` units, closed when the block ends (also on
        Ctrl-C, so that a following message starts on a line of its own)."""
        ph = None
        try:
            ph = Phase(name, total, unit, self.show)
            yield ph
        finally:
            if ph is not None:
                ph.close()
            end_line()


@contextmanager
def session(progress, *, seconds: float = 0.0) -> Iterator[Session]:
    """Open the progress session of a public call, or join the one already open.

    Parameters
    ----------
    progress : None, bool
        The call's ``progress=`` argument (see the module docstring); ignored when a session
        is already open (the outer call decided).
    seconds : float
        Expected duration (:func:`estimate_seconds`), used by auto mode.
    """
    outer = _CURRENT.get()
    if outer is not None:
        yield outer
        return
    setting = check_progress(progress)
    if setting is None:
        setting = _DEFAULT.get()
    s = Session(_auto(seconds) if setting is None else setting)
    token = _CURRENT.set(s)
    try:
        yield s
    finally:
        _CURRENT.reset(token)


@contextmanager
def default(progress) -> Iterator[None]:
    """Make ``progress`` the setting of every call inside the block whose own ``progress``
    is None (the command line's ``--progress/--no-progress``; None keeps auto)."""
    token = _DEFAULT.set(check_progress(progress))
    try:
        yield
    finally:
        _DEFAULT.reset(token)
