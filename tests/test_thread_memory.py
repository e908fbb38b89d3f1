"""mcref.parallel.thread_memory bounds the threads of a phase by their scratch: as many threads as
their M-sized buffers fit (MCREF_THREAD_MEMORY, or half the available memory), at least one; any
thread count gives the same bits, so the bound changes the memory and the time, never a result."""

from __future__ import annotations

import numpy as np
import pytest

import mcref
import mcref.parallel as P


@pytest.mark.parametrize("text, expected", [("1.5G", 1.5 * 2**30), ("800M", 800 * 2**20), ("2e9", 2e9),
                                            ("100", 100.0), ("64k", 64 * 2**10), ("2GiB", 2 * 2**30),
                                            (" 3 T ", 3 * 2**40)])
def test_thread_memory_reads_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("MCREF_THREAD_MEMORY", text)
    assert P.thread_memory() == expected


@pytest.mark.parametrize("text", ["abc", "-1G", "0", "1.5X", "G"])
def test_thread_memory_refuses_what_is_not_a_size(monkeypatch, text):
    monkeypatch.setenv("MCREF_THREAD_MEMORY", text)
    with pytest.raises(ValueError, match=r"MCREF_THREAD_MEMORY=.*expected a positive number of bytes, optionally "
                                         r"with a K, M, G or T suffix"):
        P.thread_memory()


def test_thread_memory_defaults_to_half_the_available_memory(monkeypatch):
    monkeypatch.delenv("MCREF_THREAD_MEMORY", raising=False)
    monkeypatch.setattr(P, "_available_bytes", lambda: 8e9)
    assert P.thread_memory() == 4e9
    assert P.memory_threads(64, 3e8) == 13  # 4e9 // 3e8
    monkeypatch.setattr(P, "_available_bytes", lambda: None)  # unreadable: no bound
    assert P.thread_memory() is None and P.memory_threads(64, 3e8) == 64


def test_memory_threads_bounds(monkeypatch):
    monkeypatch.setenv("MCREF_THREAD_MEMORY", "1000")
    assert P.memory_threads(8, 300) == 3
    assert P.memory_threads(2, 300) == 2  # never more than asked
    assert P.memory_threads(8, 5000) == 1  # at least one, whatever the scratch
    assert P.memory_threads(8, 0) == 8  # no scratch: no bound


def _threads_of(profile, phase):
    return {d["threads"] for d in profile if d["phase"] == phase}


def test_a_bounded_validate_runs_on_fewer_threads_with_the_same_bits(monkeypatch):
    """With room for one thread's scratch, the bootstrap and the references run on one thread
    (the task profile records it), and the table is bit for bit the unbounded one on two threads."""
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two numba threads")
    rng = np.random.default_rng(3)
    u = rng.lognormal(0.0, 0.5, 3000)
    E = u * rng.normal(size=3000)
    kw = dict(n_boot=1000, seed=11, progress=False)
    numba.set_num_threads(2)
    monkeypatch.setenv("MCREF_THREAD_MEMORY", "1T")
    with P.task_profile() as wide:
        free = mcref.validate(E, u, **kw)
    # per thread at M = 3000: the references hold about 2.5·10⁵ bytes, the bootstrap 7.5·10⁴ (25 bytes a point)
    monkeypatch.setenv("MCREF_THREAD_MEMORY", "140000")
    with P.task_profile() as narrow:
        bound = mcref.validate(E, u, **kw)
    assert _threads_of(wide, "bootstrap") == {2} and 2 in _threads_of(wide, "references")
    refs = [d for d in narrow if d["phase"] == "references"]
    # the comparison D and the first round (CC among them) on one thread; a later round without CC
    # (decided) holds no rank buffers and may keep two (test_the_references_hold_ranks_scratch_only_for_cc)
    assert _threads_of(narrow, "bootstrap") == {1} and refs[0]["threads"] == 1 and refs[1]["threads"] == 1
    assert free.to_json() == bound.to_json()


def test_the_references_hold_ranks_scratch_only_for_cc(monkeypatch):
    """Without CC the references hold no rank buffers (nor a = |u·ε|): under a bound between the two
    sizes, a run without CC keeps two threads and one with CC gets one; the values are those of an
    unbounded run."""
    import numba

    from mcref.reference import simulate

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs two numba threads")
    numba.set_num_threads(2)
    u = np.random.default_rng(4).lognormal(0.0, 0.5, 3000)
    # per thread at M = 3000: 8·(3 rows)·M ≈ 7.6·10⁴ bytes without CC, ≈ 2.5·10⁵ with it
    monkeypatch.setenv("MCREF_THREAD_MEMORY", "200000")
    for names, threads in ((["ZMS", "ENCE"], {2}), (["ZMS", "CC", "ENCE"], {1})):
        with P.task_profile() as prof:
            bound = simulate(names, u, dists=["normal", "t6"], n_mc=64, seed=2)
        assert _threads_of(prof, "references") == threads, names
        monkeypatch.setenv("MCREF_THREAD_MEMORY", "1T")
        free = simulate(names, u, dists=["normal", "t6"], n_mc=64, seed=2)
        monkeypatch.setenv("MCREF_THREAD_MEMORY", "200000")
        for a, b in zip(bound.samples, free.samples):
            np.testing.assert_array_equal(a, b)
