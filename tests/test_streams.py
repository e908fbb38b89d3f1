"""Per-repeat random streams (issue #41): the xoshiro256** jump against a GF(2) matrix power,
and :func:`mcref.kernels.rng.repeat_states` against jumping by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mcref.kernels.rng import chunk_states, jump, jump_by_table, jump_table, next_u64, repeat_states


def _bits(state) -> np.ndarray:
    return np.array([(int(w) >> b) & 1 for w in state for b in range(64)], dtype=np.float64)


def _words(bits) -> np.ndarray:
    return np.array([sum(int(bits[64 * i + b]) << b for b in range(64)) for i in range(4)], dtype=np.uint64)


def test_jump_is_two_to_the_128_steps():
    """The state update of xoshiro256** is linear over GF(2): its 256×256 matrix A, built column by
    column from the update of each unit state, squared 128 times gives A^(2¹²⁸); the jump must be it."""
    cols = []
    for k in range(256):
        s = _words(np.eye(256)[k])
        next_u64(s)
        cols.append(_bits(s))
    a = np.array(cols).T
    for _ in range(128):
        a = (a @ a) % 2.0  # exact: integer entries ≤ 256 in float64
    rng = np.random.default_rng(3)
    for _ in range(3):
        s = rng.integers(0, 2**63, size=4, dtype=np.uint64) | np.uint64(1)
        want = _words((a @ _bits(s)) % 2.0)
        got = s.copy()
        jump(got)
        np.testing.assert_array_equal(got, want)


def test_jump_by_table_is_the_jump():
    """The table jump (64 nibble lookups) gives the bits of the 256-step jump, on states with one
    byte set, with every bit set and on random states."""
    table = jump_table()
    rng = np.random.default_rng(11)
    states = [rng.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False) for _ in range(50)]
    states += [np.full(4, np.uint64(2**64 - 1)), np.array([0, 0, 0, 0xAB << 56], dtype=np.uint64)]
    for s in states:
        want = s.copy()
        jump(want)
        got = s.copy()
        jump_by_table(got, table)
        np.testing.assert_array_equal(got, want)
    assert jump_table() is table  # built once


def test_repeat_states_are_blocks_jumped_in_turn():
    blocks = chunk_states(np.random.SeedSequence(7), 3)
    out = repeat_states(blocks, 4, 0, 11)
    for r in range(11):
        s = blocks[r // 4].copy()
        for _ in range(r % 4):
            jump(s)
        np.testing.assert_array_equal(out[r], s)
    np.testing.assert_array_equal(repeat_states(blocks, 4, 3, 9), out[3:9])
    assert len({tuple(x) for x in out}) == 11


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # 300 replicates: a fast test
def test_validate_same_bits_for_any_thread_count_and_task_size(monkeypatch):
    """validate's table, bit for bit, on 1 and 2 numba threads and whatever the repeats per task
    of the references (TASK_WORK 1: one repeat per task, as at M ≥ 10⁵; 10⁹: a whole block of
    CHUNK per task) and of a user statistic's bootstrap: every repeat and replicate owns its streams."""
    import numba

    import mcref
    import mcref.parallel as P
    import mcref.reference as R

    rng = np.random.default_rng(5)
    u = rng.lognormal(0.0, 0.5, 1500)
    E = 1.1 * u * rng.standard_normal(1500)
    n0 = numba.get_num_threads()
    out = []
    try:
        for work, threads in ((1, 1), (1, 2), (10**9, 2), (10**9, 1)):
            monkeypatch.setattr(R, "TASK_WORK", work)
            monkeypatch.setattr(P, "TASK_WORK", work)  # the bootstrap's tasks (over_tasks)
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            t = mcref.validate(E, u, stats=["ZMS", "RCE", "CC", "ENCE", "ZMSE"], n_boot=300, n_mc=300, seed=4,
                               progress=False)
            out.append(t.to_json())
    finally:
        numba.set_num_threads(n0)
    assert all(o == out[0] for o in out[1:])


def test_permutation_rounds_equal_one_run():
    """The rounds' repeats (0, 64), (64, 128), … are those of one run, bit for bit, for any split
    (every repeat owns its streams: a split may cut a block of CHUNK anywhere)."""
    from mcref.core._prepared import prepare_for
    from mcref.generative import get_distribution
    from mcref.reference import simulate_prepared
    from mcref.stats import info

    rng = np.random.default_rng(8)
    u = rng.lognormal(0.0, 0.5, 800)
    E = u * rng.standard_normal(800)
    infos = [info(n) for n in ("ZMS", "CC", "ENCE")]
    prep = prepare_for(infos, E, u, n_bins=10)
    dists = [get_distribution(d, Z=prep.z) for d in ("permutation", "t6")]

    def run(a, b):
        return simulate_prepared(infos, prep, dists, n_mc=150, seed=np.random.SeedSequence(2), repeats=(a, b)).samples

    whole = run(0, 150)
    for cuts in ((0, 64, 128, 150), (0, 1, 33, 97, 150)):
        parts = [run(a, b) for a, b in zip(cuts[:-1], cuts[1:])]
        np.testing.assert_array_equal(np.concatenate(parts, axis=2), whole)


@pytest.mark.parametrize("kind", ["distinct", "ties", "all_equal", "signed_zeros", "tiny"])
def test_stable_order_is_numpys_stable_argsort(kind):
    """The order that ``prepare`` sorts by (u, then |E|) is NumPy's stable argsort, index for index,
    and its runs those of the sorted values, on distinct values, heavy ties, one value, ±0 (equal:
    input order) and sizes 0-2."""
    from mcref.core._prepared import stable_order, tie_starts

    rng = np.random.default_rng(len(kind))
    xs = {"distinct": [rng.lognormal(size=5000)],
          "ties": [rng.choice(rng.uniform(0.1, 2.0, 37), 20000), np.round(rng.normal(size=3000), 1)],
          "all_equal": [np.full(100, 0.3)],
          "signed_zeros": [np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0])],
          "tiny": [np.empty(0), np.array([1.0]), np.array([2.0, 2.0]), np.array([2.0, 1.0])]}[kind]
    for x in xs:
        order, starts = stable_order(x)
        want = np.argsort(x, kind="stable")
        np.testing.assert_array_equal(order, want)
        np.testing.assert_array_equal(starts, tie_starts(x[want]))


@pytest.mark.parametrize("kind", ["distinct", "ties", "both_tied", "signed_zeros", "tiny"])
def test_u_then_E_is_numpys_lexsort(kind):
    """The (u, E) order of the RCE scale test from prepare's u-sorted rows (E sorted inside the runs
    of tied u) is np.lexsort((E, u)) index for index: untied u, tied u, ties in both, ±0 in both
    (equal: input order), sizes 0-2."""
    from mcref.core._prepared import stable_order, u_then_E

    rng = np.random.default_rng(len(kind) + 7)
    cases = {"distinct": [(rng.normal(size=3000), rng.lognormal(size=3000))],
             "ties": [(rng.normal(size=5000), np.round(rng.lognormal(size=5000), 1))],
             "both_tied": [(np.round(rng.normal(size=4000), 1), rng.choice([0.5, 1.0, 2.0], 4000))],
             "signed_zeros": [(np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0]), np.array([1.0, 1.0, 1.0, 0.0, -0.0, 1.0]))],
             "tiny": [(np.empty(0), np.empty(0)), (np.array([1.0]), np.array([2.0])),
                      (np.array([2.0, 1.0]), np.array([3.0, 3.0]))]}[kind]
    for E, u in cases:
        order, ugs = stable_order(u)
        np.testing.assert_array_equal(order[u_then_E(E[order], ugs)], np.lexsort((E, u)))
