"""mcref._jackknife: the binned statistics' shared pass and CC's pass on its own thread change when
the jackknives run, never a value: every row is bit for bit the jackknife of the statistic alone,
which tests/test_bootstrap.py checks against the naive leave-one-out recomputation."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import mcref._bootstrap as BS
import mcref._jackknife as J
from mcref import stats as S

BINNED = ["ENCE", "ZMSE", "UCE"]
ALL = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]


def _prep(m=1500, seed=2, n_bins=15, tied=False):
    rng = np.random.default_rng(seed)
    u = rng.lognormal(0.0, 0.5, m)
    if tied:
        u = np.round(u, 1)
    return S.prepare(u * rng.normal(size=m), u, n_bins)


@pytest.mark.parametrize("tied", [False, True])
def test_binned_jackknives_share_a_pass_bit_for_bit(tied):
    prep = _prep(tied=tied)
    rows = J.binned_jackknives([S.info(n) for n in BINNED], prep)
    assert rows.shape == (3, prep.M)
    for k, n in enumerate(BINNED):
        np.testing.assert_array_equal(rows[k], J.binned_jackknives([S.info(n)], prep)[0])
        np.testing.assert_array_equal(rows[k], BS.jackknife(S.info(n), prep))  # the public path


def test_cc_runs_on_its_own_thread_last_with_the_same_values():
    if numba.get_num_threads() < 2:
        pytest.skip("needs two numba threads")
    prep = _prep(tied=True)
    infos = [S.info(n) for n in ALL]
    jk = J.Jackknives(infos, prep)
    assert jk._thread is not None and jk._thread.name == "mcref-jackknife-cc"
    assert [infos[k].name for k in jk.order()] == ["ZMS", "RCE", "ENCE", "ZMSE", "CC"]
    got = {infos[k].name: jk.take(infos[k]) for k in jk.order()}
    for n in ALL:
        np.testing.assert_array_equal(got[n], BS.jackknife(S.info(n), prep))
    assert not jk._ready  # each handed over once, then released


def test_no_thread_on_one_thread_alone_or_without_room(monkeypatch):
    prep = _prep()
    infos = [S.info(n) for n in ALL]
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = J.Jackknives(infos, prep)
    finally:
        numba.set_num_threads(n0)
    assert one._thread is None and [infos[k].name for k in one.order()] == ALL
    assert J.Jackknives([S.info("CC")], prep)._thread is None  # CC alone: nothing to run beside it
    monkeypatch.setenv("MCREF_THREAD_MEMORY", str(int(J.CC_JACK_BYTES_PER_POINT * prep.M)))  # room for one pass
    assert J.Jackknives(infos, prep)._thread is None


def test_an_error_in_the_cc_thread_is_raised_in_the_caller(monkeypatch):
    if numba.get_num_threads() < 2:
        pytest.skip("needs two numba threads")

    def boom(prep, out):
        raise FloatingPointError("in the CC pass")

    monkeypatch.setattr(J, "_cc_jackknife", boom)
    jk = J.Jackknives([S.info(n) for n in ALL], _prep())
    with pytest.raises(FloatingPointError, match="in the CC pass"):
        jk.take(S.info("CC"))


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


@pytest.mark.filterwarnings("ignore::mcref._warnings.BiasedIntervalWarning")  # ZMSE of 600 points, 10 bins
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


@pytest.mark.parametrize("ties", ["none", "u", "E", "both", "heavy"])
def test_joint_counts_equal_the_pair_counts(ties):
    """CC's jackknife term Σ_{i≠j} a_i b_i (:func:`mcref.kernels.jackknife_cc._joint_counts`, by buckets of
    |E| groups) against the four pair counts made by brute force over all pairs: exact (halves and
    quarters of integers), with ties in u, in |E|, in both and many (a few distinct values)."""
    from mcref._prepared import prepare_for
    from mcref.kernels import jackknife_cc as KS

    for seed, m in enumerate((1, 2, 37, 500, 1500)):
        rng = np.random.default_rng([seed, len(ties)])
        u = rng.lognormal(0.0, 0.5, m)
        E = u * rng.standard_normal(m)
        if ties in ("u", "both"):
            u = np.round(u, 1) + 0.1
        if ties in ("E", "both"):
            E = np.round(E, 1)
        if ties == "heavy":
            u = rng.integers(1, 4, m).astype(float)
            E = rng.integers(-3, 4, m).astype(float)
        if m < 3:
            continue
        prep = prepare_for([S.info("CC")], E, u, n_bins=1, min_count=1)
        sab = np.empty(m)
        KS._joint_counts(prep.ugs, prep.eord, prep.egs, sab, np.empty(m))
        us, a = prep.u, np.abs(prep.E)  # per position (u ascending)
        gt_u, eq_u = us[None, :] > us[:, None], us[None, :] == us[:, None]
        gt_a, eq_a = a[None, :] > a[:, None], a[None, :] == a[:, None]
        off = ~np.eye(m, dtype=bool)
        d1, d2 = (gt_u & gt_a).sum(1), (gt_u & eq_a).sum(1)
        d3, d4 = (eq_u & gt_a).sum(1), (eq_u & eq_a & off).sum(1)
        assert np.array_equal(sab, d1 + 0.5 * d2 + 0.5 * d3 + 0.25 * d4), (ties, m)
