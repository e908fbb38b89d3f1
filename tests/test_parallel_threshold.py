"""mcref.parallel.over_tasks runs a call whose whole work is below MIN_THREADED_WORK in the calling
thread (starting threads costs more than they save), with the same ranges and so the same results."""

from __future__ import annotations

import threading

import pytest

import mcref.parallel as P


@pytest.fixture
def threshold(monkeypatch):
    monkeypatch.setattr(P, "MIN_THREADED_WORK", 250_000)  # the default (conftest sets 0 for every other test)


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
    idents, ranges = _run(79, 2560.0)  # the t fit's pass at M = 2·10^4: 2·10^5 element operations
    assert idents == {threading.current_thread().name}
    per = P.TASK_WORK // 2560
    assert ranges == [(i, min(79, i + per)) for i in range(0, 79, per)]  # the same ranges as on threads


def test_large_calls_use_the_threads(threshold):
    idents, ranges = _run(20_000, 1000.0)  # 2·10^7 element operations: 200 tasks, rounded to 256
    assert idents == {"mcref-chunks-0", "mcref-chunks-1"}
    per = P.task_items(20_000, 1000.0)
    assert ranges == [(i, min(20_000, i + per)) for i in range(0, 20_000, per)] and 192 < len(ranges) <= 256
    idents, _ = _run(391, 2560.0)  # the t fit's pass at M = 10^5 (10^6): on threads since 2026-11-28
    assert idents == {"mcref-chunks-0", "mcref-chunks-1"}


def test_a_small_dispatch_is_cut_into_one_run_per_thread(threshold):
    """Fewer than 64 tasks of TASK_WORK (the t fit's pass at M = 10^5: 391 blocks, 11 tasks) are cut
    into one contiguous run of items per thread, covering every item once; the profile records the
    items with the contiguous-blocks schedule, so the bound is what T threads would get from them."""
    with P.task_profile() as rec:
        idents, ranges = _run(391, 2560.0)
    assert idents == {"mcref-chunks-0", "mcref-chunks-1"}
    assert ranges == [(0, 196), (196, 391)]
    (d,) = rec
    assert d["schedule"] == "blocks" and len(d["sizes"]) == 391 and d["threads"] == 2
    assert P.speedup_bound([d], 64) == pytest.approx(391 / 7)  # runs of ceil(391/64) = 7 blocks
    assert P.speedup_bound([d], 16) == pytest.approx(391 / 25)
    # few large items keep their tasks (here a floor of 2 items a task: 25 tasks), not one range per
    # thread, which would hold the progress and Ctrl-C for the whole call
    with P.task_profile() as rec:
        ranges = []
        P.over_tasks(lambda a, b: ranges.append((a, b)), 50, 1e7, phase="test", n_threads=2, min_per=2)
    assert sorted(ranges) == [(i, i + 2) for i in range(0, 50, 2)] and rec[0]["schedule"] == "round-robin"
    # a phase's floor of items per run is kept, and counted by the bound
    with P.task_profile() as rec:
        P.over_tasks(lambda a, b: None, 391, 2560.0, phase="test", n_threads=2, min_per=300)
    assert P.speedup_bound(rec, 64) == pytest.approx(391 / 300)


def test_tasks_come_in_multiples_of_64_for_many_threads():
    """Between 64 and 512 tasks, over_tasks cuts them smaller so that their count is a multiple of 64
    (at most one short task): 64 threads then share them evenly (the t fit's passes at M = 10⁶ went
    from 101 tasks, a speedup bound of 50.5 at 64 threads, to 127; 400 equal tasks
    became 445, 64 threads' bound 57.1 → 63.6); fewer or more are left alone."""
    for n_items, work, want in [(3907, 2560.0, 127), (391, 2560.0, 11), (100_000, 25.0, 25), (10**6, 25.0, 256),
                                (20_000, 100.0, 20_000 // 1000), (40_000, 1000.0, 445),
                                (10**7, 5.0, 512)]:
        per = P.task_items(n_items, work)
        assert -(-n_items // per) == want, (n_items, work, per)
    assert P.task_items(3907, 2560.0, min_per=39) == 39  # never below a phase's own floor
    dispatch = {"sizes": [1.0] * 127, "schedule": "round-robin", "batch": None}
    assert P.speedup_bound([dispatch], 64) == pytest.approx(127 / 2)


def test_the_profile_counts_a_call_run_in_the_calling_thread_as_one_thread(threshold):
    """The parallel profile's speedup bound: a call below MIN_THREADED_WORK runs in the calling thread on
    every machine, so its tasks bound nothing above 1 (the t fit's passes at M = 10⁵, when the
    threshold was 2·10⁶, were counted as 11 tasks, a bound of 10 at 64 threads, though they never ran
    on threads)."""
    with P.task_profile() as rec:
        _run(79, 2560.0)  # 2·10^5 element operations: in the calling thread
        _run(8000, 1000.0)  # 8·10^6: on the threads
    small, large = rec
    assert small["serial"] and not large["serial"]
    assert P.speedup_bound([small], 64) == 1.0
    assert P.speedup_bound([large], 64) == pytest.approx(8000 / 126)  # 80 tasks, cut to 127 (63 items, 2 a thread)
    both = (sum(small["sizes"]) + sum(large["sizes"])) / (sum(small["sizes"]) + 2 * max(large["sizes"]))
    assert P.speedup_bound([small, large], 64) == pytest.approx(both)
