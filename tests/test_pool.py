"""mcref.parallel.map_chunks keeps its worker threads between calls (docs/methods.md,
"Parallelism"): the same threads serve the next call; a call from a worker, or while another
thread's call holds them, starts threads of its own; errors, a forked child and a stop leave the
pool usable, and every chunk runs exactly once."""

from __future__ import annotations

import multiprocessing as mp
import threading

import pytest

import mcref.parallel as P


def _record(n_chunks: int, n_threads: int) -> tuple[list, dict]:
    seen: dict[int, set] = {}
    lock = threading.Lock()
    out = [None] * n_chunks

    def fn(c, t):
        with lock:
            seen.setdefault(t, set()).add(threading.current_thread())  # the objects: idents are reused
        out[c] = c * c

    P.map_chunks(fn, n_chunks, n_threads)
    return out, seen


def test_the_next_call_gets_the_same_threads():
    out1, seen1 = _record(40, 3)
    out2, seen2 = _record(40, 3)
    assert out1 == out2 == [c * c for c in range(40)]
    assert all(len(v) == 1 for v in seen1.values()) and seen1 == seen2  # thread t is worker t, kept
    assert threading.current_thread() not in set().union(*seen1.values())  # the caller only waits


def test_a_call_from_a_worker_starts_threads_of_its_own():
    inner_out: dict[int, list] = {}

    def outer(c, t):
        inner_out[c], _ = _record(10, 2)  # the pool is busy with this call: fresh threads, no deadlock

    P.map_chunks(outer, 4, 2)
    assert all(v == [k * k for k in range(10)] for v in inner_out.values()) and len(inner_out) == 4


def test_calls_from_two_threads_at_once_both_finish():
    results = []
    start = threading.Barrier(2)

    def caller():
        start.wait()
        for _ in range(20):
            results.append(_record(30, 2)[0])

    threads = [threading.Thread(target=caller) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not any(th.is_alive() for th in threads)
    assert len(results) == 40 and all(r == [c * c for c in range(30)] for r in results)


def test_an_error_is_raised_and_the_pool_serves_the_next_call():
    def fn(c, t):
        if c == 5:
            raise ValueError("chunk 5")

    with pytest.raises(ValueError, match="chunk 5"):
        P.map_chunks(fn, 20, 2)
    out, _ = _record(20, 2)
    assert out == [c * c for c in range(20)]


def _child(q):
    q.put(_record(12, 2)[0])


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs fork")
def test_a_forked_child_makes_its_own_pool():
    _record(8, 2)  # the parent's workers exist; the child has none of them
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0 and got == [c * c for c in range(12)]


def test_a_parked_worker_keeps_nothing_of_the_call():
    """The arrays a call's chunks use are freed when the call returns: a parked worker holding the
    call (and so its closure) kept 400 MB of CC's jackknife alive at M = 10⁷ (a 2366 MiB peak)."""
    import gc
    import weakref

    import numpy as np

    big = np.zeros(1000)
    ref = weakref.ref(big)

    def fn(c, t, big=big):
        big[c] = c

    P.map_chunks(fn, 8, 2)
    del big, fn
    gc.collect()
    assert ref() is None


def test_per_thread_makes_one_value_per_thread_and_keeps_it():
    """per_thread: each thread gets its own value, made on its first call there and the same object
    on every later call (the bootstrap's scratch, kept from task to task)."""
    made = []
    lock = threading.Lock()

    def make():
        with lock:
            made.append(threading.current_thread())
        return [threading.current_thread()]

    get = P.per_thread(make)
    seen = {}

    def fn(c, t):
        v = get()
        assert v[0] is threading.current_thread()
        seen.setdefault(threading.current_thread(), set()).add(id(v))

    P.map_chunks(fn, 40, 2)
    P.map_chunks(fn, 40, 2)  # the pool's same threads: nothing made again
    assert len(seen) == 2 and all(len(ids) == 1 for ids in seen.values())
    assert sorted(map(id, made)) == sorted(map(id, seen))  # one make() per thread
    assert get() is get() and get()[0] is threading.current_thread()


def test_per_thread_values_are_freed_with_the_getter():
    """The threads' values die with the getter (the bootstrap's scratch is freed when its run
    returns, before the next phase allocates), though the pool's threads live on."""
    import gc
    import weakref

    import numpy as np

    refs = []
    lock = threading.Lock()

    def make():
        a = np.empty(10)
        with lock:
            refs.append(weakref.ref(a))
        return a

    get = P.per_thread(make)
    P.map_chunks(lambda c, t: get(), 8, 2)
    assert len(refs) == 2 and all(r() is not None for r in refs)
    del get
    gc.collect()
    assert all(r() is None for r in refs)
