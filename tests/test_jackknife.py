"""mcref.resampling._jackknife: the binned statistics' shared pass and CC's pass in steps over blocks on threads
change when and where the jackknives run, never a value: every row is bit for bit the jackknife of
the statistic alone, which tests/test_bootstrap.py checks against the naive leave-one-out
recomputation; CC's is checked here against it for any split into blocks and threads."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import mcref.resampling._bootstrap as BS
import mcref.resampling._jackknife as J
from mcref import stats as S

BINNED = ["ENCE", "ZMSE", "UCE"]
ALL = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]


def _prep(m=1500, seed=2, n_bins=15, tied=False):
    rng = np.random.default_rng(seed)
    u = rng.lognormal(0.0, 0.5, m)
    if tied:
        u = np.round(u, 1)
    return S.prepare(u * rng.normal(size=m), u, n_bins)


MEAN = ["ZMS", "RCE", "VarZ", "NLL"]


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("names, rows_of", [(BINNED, J.binned_jackknives), (MEAN, J.mean_jackknives)],
                         ids=["binned", "mean"])
def test_jackknives_of_a_kind_share_a_pass_bit_for_bit(tied, names, rows_of):
    prep = _prep(tied=tied)
    rows = rows_of([S.info(n) for n in names], prep)
    assert rows.shape == (len(names), prep.M)
    for k, n in enumerate(names):
        np.testing.assert_array_equal(rows[k], rows_of([S.info(n)], prep)[0])
        np.testing.assert_array_equal(rows[k], BS.jackknife(S.info(n), prep))  # the public path


def test_jackknives_over_blocks_equal_the_naive_values_and_keep_their_bits_on_threads():
    """Above one block of totals (JACK_MEAN_BLOCK points): the totals added by blocks, the bins'
    sums between starts, on 1 and 2 threads give the same bits, and left-out points at the blocks'
    and bins' edges equal the statistic recomputed without them."""
    import naive

    m = 2 * J.JACK_MEAN_BLOCK + 700
    prep = _prep(m=m, seed=7, n_bins=20)
    infos = [S.info(n) for n in MEAN + ["ENCE", "ZMSE"]]
    n0 = numba.get_num_threads()
    try:
        got = {}
        for t in (1, 2):
            numba.set_num_threads(t)
            got[t] = np.vstack([J.mean_jackknives(infos[:4], prep), J.binned_jackknives(infos[4:], prep)])
    finally:
        numba.set_num_threads(n0)
    np.testing.assert_array_equal(got[1], got[2])
    starts = J.bin_starts(m - 1, 20)
    edges = {0, 1, m - 1, m - 2, J.JACK_MEAN_BLOCK - 1, J.JACK_MEAN_BLOCK, 2 * J.JACK_MEAN_BLOCK}
    edges |= {int(a) + d for a in starts[1:4] for d in (-1, 0, 1)}
    E, u = prep.E, prep.u  # u-sorted: position p is point p
    for p in sorted(e for e in edges if 0 <= e < m):
        for k, inf in enumerate(infos):
            want = naive.statistic(inf.name, np.delete(E, p), np.delete(u, p), 20)
            np.testing.assert_allclose(got[1][k, p], want, rtol=1e-11, atol=1e-13, err_msg=f"{inf.name} p={p}")


def test_mean_and_binned_jackknives_share_a_pass_bit_for_bit():
    prep = _prep(m=3000, tied=True)
    mean, binned = [S.info(n) for n in MEAN], [S.info(n) for n in BINNED]
    rows = J.point_jackknives(mean, binned, prep)
    assert rows.shape == (7, prep.M)
    np.testing.assert_array_equal(rows[:4], J.mean_jackknives(mean, prep))
    np.testing.assert_array_equal(rows[4:], J.binned_jackknives(binned, prep))


def test_jackknives_hand_over_the_values_of_each_statistic_alone():
    prep = _prep(tied=True)
    infos = [S.info(n) for n in ALL]
    jk = J.Jackknives(infos, prep)
    got = {i.name: jk.take(i) for i in infos}
    for n in ALL:
        np.testing.assert_array_equal(got[n], BS.jackknife(S.info(n), prep))
    assert not jk._ready  # each handed over once, then released


@pytest.mark.parametrize("order", [ALL, ALL[::-1], ["ENCE", "CC", "ZMS", "ZMSE", "RCE"]])
def test_jackknives_run_cc_once_whatever_the_order(order, monkeypatch):
    """CC's pass runs before the shared rows' (whose block stays alive until the last row is
    released) when it has not run yet, and never twice; each value is the statistic's own."""
    prep = _prep(tied=True)
    calls = []
    real = J._cc_jackknife
    monkeypatch.setattr(J, "_cc_jackknife", lambda p, out: calls.append(1) or real(p, out))
    jk = J.Jackknives([S.info(n) for n in ALL], prep)
    got = {n: jk.take(S.info(n)) for n in order}
    assert len(calls) == 1 and not jk._ready
    for n in ALL:
        np.testing.assert_array_equal(got[n], BS.jackknife(S.info(n), prep))


def test_bootstrap_many_keeps_the_order_and_the_bits_of_one_thread():
    """The intervals (and so the BCa acceleration from the jackknives) on two threads, CC's pass
    beside the others, are those on one thread, and the result lists the statistics as asked."""
    rng = np.random.default_rng(5)
    u = rng.lognormal(0.0, 0.5, 2000)
    E = u * rng.standard_t(6, 2000)
    names = ["CC", "ZMSE", "ZMS", "ENCE", "RCE"]
    two = BS.bootstrap_many(names, E, u, n_boot=300, seed=3)
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = BS.bootstrap_many(names, E, u, n_boot=300, seed=3)
    finally:
        numba.set_num_threads(n0)
    assert list(two) == names == list(one)
    for n in names:
        assert (two[n].low, two[n].high, two[n].acceleration, two[n].z0) == \
            (one[n].low, one[n].high, one[n].acceleration, one[n].z0), n


@numba.njit
def _mean_abs_z(E, u):
    return np.mean(np.abs(E / u))


@pytest.fixture
def maz():
    S.register_statistic("MAZj", _mean_abs_z, reference=float(np.sqrt(2 / np.pi)), screens=("Z2",))
    yield "MAZj"
    S.unregister_statistic("MAZj")


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.BiasedIntervalWarning")  # ZMSE of 600 points, 10 bins
@pytest.mark.parametrize("binning", ["equal", "adaptive"])
def test_cc_beside_the_quadratic_jackknives_changes_nothing(maz, binning):
    """CC's thread beside the O(M²) jackknives (adaptive bins, a user's statistic, in batches) and
    beside the shared binned pass: each statistic's BCa acceleration (a function of its jackknife
    alone) and its whole interval are the ones bootstrapped alone on one thread (with adaptive
    bins too: the binned statistics re-cut the kernel's own resamples, _boot_rebinned)."""
    rng = np.random.default_rng(8)
    u = rng.lognormal(0.0, 0.4, 600)
    E = u * rng.normal(size=600)
    names = ["ENCE", "CC", maz, "ZMSE", "ZMS"]
    kw = dict(n_boot=200, seed=4, binning=binning, n_bins=10)
    together = BS.bootstrap_many(names, E, u, **kw)
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        alone = {n: BS.bootstrap_many([n], E, u, **kw)[n] for n in names}
    finally:
        numba.set_num_threads(n0)
    for n in names:
        assert together[n].acceleration == alone[n].acceleration, n
        assert (together[n].low, together[n].high) == (alone[n].low, alone[n].high), n
        assert np.array_equal(together[n].distribution, alone[n].distribution), n


def _cc_set(m, ties, seed):
    rng = np.random.default_rng([seed, len(ties)])
    u = rng.lognormal(0.0, 0.5, m)
    E = u * rng.standard_normal(m)
    if ties in ("u", "both"):
        u = np.round(u, 1) + 0.1
    if ties in ("E", "both"):
        E = np.round(E, 1)
    if ties == "heavy":  # a few distinct values: runs larger than blocks
        u = rng.integers(1, 4, m).astype(float)
        E = rng.integers(-3, 4, m).astype(float)
    return S.prepare(E, u, None)


@pytest.mark.parametrize("ties", ["none", "u", "E", "both", "heavy"])
def test_cc_jackknife_equals_the_direct_update_for_any_blocks_and_threads(ties):
    """CC's jackknife in steps over blocks (:func:`mcref.resampling._jackknife.cc_jackknife`: the walks started
    from the blocks above, the joint counts by buckets laid out block by block) against the direct
    O(M²) rank update (tests/naive.py), bit for bit (below M ≈ 3·10⁵ every sum is of quarter-integers,
    exact): one block, a few, blocks of one point each (m = 37, 64 blocks), on 1 to 3 threads; with
    ties in u, in |E|, in both and runs larger than a block. A walk started from the wrong running
    sums, a count that misses a block above or a layout flag carried across blocks fails it."""
    from scipy.stats import rankdata

    import naive

    for seed, m in enumerate((3, 37, 500, 1500)):
        prep = _cc_set(m, ties, seed)
        ae = np.abs(prep.E)
        with np.errstate(invalid="ignore", divide="ignore"):  # m = 3 with heavy ties: 0/0, as the kernel
            want = naive.jack_cc_direct(prep.u, ae, rankdata(prep.u), rankdata(ae))
        for n_blocks in (1, 3, 7, 64):
            for n_threads in (1, 2, 3):
                out = np.empty(m)
                J.cc_jackknife(prep.ugs, prep.eord, prep.egs, out, n_blocks=n_blocks, n_threads=n_threads)
                np.testing.assert_array_equal(out, want, err_msg=f"{ties} m={m} blocks={n_blocks} T={n_threads}")


def test_cc_jackknife_bits_do_not_depend_on_the_threads_where_sums_round():
    """At M = 4·10⁵ Σx², Σy² and Σxy pass 2⁵¹ and round: they are summed block by block in block
    order, and the blocks are a function of M, so 1, 2 and 3 threads give the same bits. The values
    are the leave-one-out Spearman ρ (scipy on the M − 1 points, for a few j) to 1e-12."""
    from scipy.stats import spearmanr

    m = 400_000
    prep = _cc_set(m, "u", 9)
    assert J.cc_blocks(m) == 192
    outs = []
    for n_threads in (1, 2, 3):
        out = np.empty(m)
        J.cc_jackknife(prep.ugs, prep.eord, prep.egs, out, n_threads=n_threads)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])
    ae = np.abs(prep.E)
    for j in (0, 12_345, m // 2, m - 1):
        keep = np.arange(m) != j
        assert outs[0][j] == pytest.approx(spearmanr(prep.u[keep], ae[keep]).statistic, rel=1e-12, abs=1e-14)


def test_run_blocks_cut_whole_runs_of_about_equal_points():
    gs = np.array([0, 1, 2, 6, 7, 8, 9, 10])  # runs of 1, 1, 4, 1, 1, 1, 1 points
    cuts = J.run_blocks(gs, 5)
    assert cuts[0] == 0 and cuts[-1] == 7 and np.all(np.diff(cuts) > 0)
    assert cuts.tolist() == [0, 2, 3, 5, 7]  # targets 0, 2, 4, 6, 8: each block starts at the first run there
    assert J.run_blocks(gs, 1).tolist() == [0, 7]
    assert J.run_blocks(np.array([0, 5]), 4).tolist() == [0, 1]  # one run: one block


def test_cc_jackknife_holds_40_bytes_a_point_and_its_tables():
    """The peak of the arrays CC's pass allocates (NumPy's, traced; the kernels' own scratch is a few
    KB a task), its output included, is CC_JACK_BYTES_PER_POINT a point plus the joint counts' tables
    (4 bytes per block and bucket): what validate's memory at 10⁷ rests on."""
    import tracemalloc

    m = 300_000
    prep = _cc_set(m, "none", 3)
    warm = np.empty(m)
    J.cc_jackknife(prep.ugs, prep.eord, prep.egs, warm)  # compiled before tracing
    n_buckets = int(np.ceil(np.sqrt(prep.egs.size))) + 1
    tracemalloc.start()
    try:
        out = np.empty(m)
        J.cc_jackknife(prep.ugs, prep.eord, prep.egs, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out, warm)
    assert peak <= J.CC_JACK_BYTES_PER_POINT * m + 8 * J.cc_blocks(m) * n_buckets + 2**16, peak / m
