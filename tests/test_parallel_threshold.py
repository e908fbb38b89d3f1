"""mcref.parallel.over_tasks runs a call whose whole work is below MIN_THREADED_WORK in the calling
thread (starting threads costs more than they save), with the same ranges and so the same results."""

from __future__ import annotations

import threading

import pytest

import mcref.parallel as P


@pytest.fixture
def threshold(monkeypatch):
    monkeypatch.setattr(P, "MIN_THREADED_WORK", 2_000_000)  # the default (conftest sets 0 for every other test)


def _run(n_items: int, work: float) -> tuple[set, list]:
    idents, ranges = set(), []
    lock = threading.Lock()

    def fn(i0, i1):
        with lock:
            idents.add(threading.current_thread().name)  # names: idents are reused
            ranges.append((i0, i1))

    P.over_tasks(fn, n_items, work, phase="test", n_threads=2)
    return idents, sorted(ranges)


def test_small_calls_run_in_the_calling_thread(threshold):
    idents, ranges = _run(391, 2560.0)  # the t fit's pass at M = 10^5: 10^6 element operations
    assert idents == {threading.current_thread().name}
    per = P.TASK_WORK // 2560
    assert ranges == [(i, min(391, i + per)) for i in range(0, 391, per)]  # the same ranges as on threads


def test_large_calls_use_the_threads(threshold):
    idents, ranges = _run(400, 10_000.0)  # 4·10^6 element operations
    assert idents == {"mcref-chunks-0", "mcref-chunks-1"}
    per = P.TASK_WORK // 10_000
    assert ranges == [(i, min(400, i + per)) for i in range(0, 400, per)]
