"""mcref.bootstrap against naive references (docs/methods.md, "Bootstrap").

1. replicates: every replicate equals the naive statistic on the resample that
   ``resample_indices`` returns;
2. jackknife: the fast kernels equal the naive leave-one-out recomputation;
3. BCa / percentile / basic: a plain-NumPy interval fed the same replicates gives the
   same limits, bias, se;
4. agreement with ``scipy.stats.bootstrap`` within Monte Carlo error;
5. coverage of the BCa interval on calibrated data;
6. determinism (seed, thread count);
7. degenerate distributions and bad inputs.
"""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from scipy import stats as sps

import naive
from mcref.core._warnings import DegenerateBootstrapWarning

# import the submodules themselves: ``mcref.bootstrap`` the attribute is the function
BS = importlib.import_module("mcref.resampling._bootstrap")
S = importlib.import_module("mcref.stats")

ALL = naive.ALL
#: bins per case of conftest.CASES, each with M/N >= min_count = 30
N_BINS = {"cal300": 10, "cal457_lognormal": 15, "tied_u": 12, "tied_E": 11, "tied_both": 13}
CASE_NAMES = list(N_BINS)


def close(a, b, rtol=1e-12, atol=1e-13):
    # atol: statistics near 0 (MZ, RCE, CC, their limits) carry absolute rounding ~M·eps
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@functools.lru_cache(maxsize=None)
def _case(case_name):
    from conftest import make_case  # noqa: PLC0415  (conftest lives next to this file)

    E, u = make_case(case_name)
    E.flags.writeable = False
    u.flags.writeable = False
    return E, u


@functools.lru_cache(maxsize=None)
def _naive_jack(case_name, name):
    E, u = _case(case_name)
    return naive.jackknife(name, E, u, N_BINS[case_name])


# --------------------------------------------------------------------------- 1. replicates


def test_resample_indices_shape_and_order():
    E, u = _case("tied_u")
    idx = BS.resample_indices(u, 130, seed=5)
    assert idx.shape == (130, u.size) and idx.dtype == np.int64
    assert idx.min() >= 0 and idx.max() < u.size
    order = np.argsort(u, kind="stable")
    rank = np.empty(u.size, dtype=np.int64)
    rank[order] = np.arange(u.size)
    # each row walks the data in the stable u order (ties in u by input order)
    assert np.all(np.diff(rank[idx], axis=1) >= 0)
    # replicate b depends only on (seed, b): a longer run extends a shorter one
    np.testing.assert_array_equal(BS.resample_indices(u, 70, seed=5), idx[:70])
    # rows are genuine resamples: not all equal to the data, about 63 % distinct points
    n_distinct = np.array([np.unique(r).size for r in idx]) / u.size
    assert abs(n_distinct.mean() - (1 - np.exp(-1))) < 0.02


def test_tied_copies_at_a_cut_are_shuffled_as_in_R():
    # R: u* = u[i*]; order(u*) keeps tied copies in draw order, i.e. uniformly random.
    E, u = _case("tied_u")
    nb = N_BINS["tied_u"]
    plain = BS.resample_indices(u, 200, seed=5)
    shuf = BS.resample_indices(u, 200, seed=5, n_bins=nb)
    assert not np.array_equal(plain, shuf)
    for r in (0, 64, 128):  # first resample of each chunk: drawn before any shuffle
        assert np.array_equal(np.sort(plain[r]), np.sort(shuf[r]))  # same multiset
    for b in shuf:
        assert np.all(np.diff(u[b]) >= 0)  # still sorted by u
    order = np.argsort(u, kind="stable")
    rank = np.empty(u.size, dtype=np.int64)
    rank[order] = np.arange(u.size)
    # somewhere inside a run of ties the input order is broken
    assert any(np.any(np.diff(rank[b]) < 0) for b in shuf)


@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_replicates_equal_naive_statistic_on_resample(case_name):
    E, u = _case(case_name)
    nb = N_BINS[case_name]
    n_boot = 130  # three chunks of 64, the last one partial
    res = BS.bootstrap_many(ALL, E, u, n_boot=n_boot, n_bins=nb, seed=123, method="percentile")
    idx = BS.resample_indices(u, n_boot, seed=123, n_bins=nb)
    for name in ALL:
        dist = res[name].distribution
        assert dist.shape == (n_boot,)
        want = [naive.statistic(name, E[r], u[r], nb) for r in idx]
        close(dist, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_replicates_without_cc_equal_naive_statistic_on_resample(case_name):
    """Without CC (and, in the cases untied in u, without tie splits) the kernel keeps one leaf's
    counts instead of all M: the mean statistics alone, and with the binned ones, still equal the
    naive statistic on the same resamples (M = 300–457: two leaves; bin cuts inside leaves)."""
    E, u = _case(case_name)
    nb = N_BINS[case_name]
    idx = BS.resample_indices(u, 70, seed=321, n_bins=nb)
    no_cc = [n for n in ALL if n != "CC"]
    binned = {"ENCE", "ZMSE", "UCE"} & set(no_cc)
    for names in ([n for n in no_cc if n not in binned], no_cc):
        res = BS.bootstrap_many(names, E, u, n_boot=70, n_bins=nb, seed=321, method="percentile")
        for name in names:
            want = [naive.statistic(name, E[r], u[r], nb) for r in idx]
            close(res[name].distribution, want, rtol=1e-12, atol=1e-13)


def test_replicates_are_the_same_bits_alone_and_beside_cc():
    """Without CC or tie splits the kernel keeps one block of 16 leaves' counts and sums it leaf by
    leaf; beside CC it keeps all M counts. Same resamples, same sums: the replicates of the mean and
    binned statistics are bit for bit those of the call with CC, at an M of several blocks (10 007:
    two blocks of 4096, one of 1815 with a partial leaf) with bin cuts inside leaves."""
    rng = np.random.default_rng(17)
    u = rng.lognormal(0.0, 0.4, 10_007)  # untied: no tie splits
    E = u * rng.standard_normal(u.size)
    names = ["ZMS", "RCE", "VarZ", "NLL", "ENCE", "ZMSE"]
    with_cc = BS.bootstrap_many(names + ["CC"], E, u, n_boot=40, n_bins=13, seed=5, method="percentile")
    for group in (["ZMS"], ["RCE", "VarZ", "NLL"], ["ENCE", "ZMSE"], names):
        alone = BS.bootstrap_many(group, E, u, n_boot=40, n_bins=13, seed=5, method="percentile")
        for name in group:
            np.testing.assert_array_equal(alone[name].distribution, with_cc[name].distribution)


@pytest.mark.parametrize("case", ["untied", "tied", "adaptive"])
def test_cc_in_a_call_of_its_own_gives_the_same_bits(monkeypatch, case):
    """From ``CC_APART_M`` points the row bootstrap draws CC's replicates in a kernel call of its
    own (``boot_runs``): every statistic's replicates are bit for bit those of one call, tie splits
    included, and beside adaptive bins (their statistics re-cut per resample, the others from the
    kernel calls); each call fills half of the bar, which ends at B."""
    rng = np.random.default_rng(31)
    u = rng.lognormal(0.0, 0.4, 3001)
    if case == "tied":
        u = np.round(u, 1)
    E = u * rng.standard_normal(u.size)
    names = ["ZMS", "CC", "ENCE", "ZMSE"]
    opts = dict(n_boot=60, n_bins=10, seed=8, method="percentile", binning="adaptive" if case == "adaptive" else "equal")
    monkeypatch.setattr(BS, "CC_APART_M", 10**9)
    one = BS.bootstrap_many(names, E, u, **opts)
    monkeypatch.setattr(BS, "CC_APART_M", 1)
    assert [r.tolist() for r in BS.boot_runs(np.array([S.info(n).code for n in names]), u.size)] == [[0, 2, 3], [1]]
    seen = []
    real = BS._by_tasks

    def spy(call, n_boot, m, phase, run=(0, 1)):
        seen.append(run)
        real(call, n_boot, m, phase, run)

    monkeypatch.setattr(BS, "_by_tasks", spy)
    apart = BS.bootstrap_many(names, E, u, **opts)
    assert seen == [(0, 2), (1, 2)]
    for name in names:
        np.testing.assert_array_equal(apart[name].distribution, one[name].distribution)
    marks = []

    class Bar:
        def chunks(self, size):
            return lambda done: marks.append(done * size)

    for i in range(2):
        real(lambda r0, r1: None, 60, 10**6, Bar(), (i, 2))
    assert marks == sorted(marks) and marks[-1] == 60 and 30 in marks

@pytest.mark.parametrize("tied", [False, True])
def test_cc_replicates_block_u_pass_are_the_whole_pass_bits(tied):
    """Where u has no ties (and no tie split needs all M counts) the kernel takes CC's u pass block
    by block as it draws the counts (``rank_u_run``), keeping no whole count array; its replicates are
    bit for bit those of the whole pass (``rank_corr``, via ``eval_weighted``) on the same counts, at
    an M of several blocks of 4096 points and of two rank blocks. Tied u: the whole pass both ways."""
    from mcref.kernels import stats as K

    rng = np.random.default_rng(29)
    m = 70_001
    u = rng.lognormal(0.0, 0.4, m)
    if tied:
        u = np.round(u, 2)
    E = u * rng.standard_normal(m)
    n_boot = 6
    res = BS.bootstrap_many(["CC"], E, u, n_boot=n_boot, seed=9, method="percentile")
    idx = BS.resample_indices(u, n_boot, seed=9)
    prep = S.prepare(E, u, None)
    pos = np.empty(m, dtype=np.int64)
    pos[prep.order] = np.arange(m)  # input row -> u-sorted position
    codes = np.array([K.CC], dtype=np.int64)
    for b in range(n_boot):
        w = np.bincount(pos[idx[b]], minlength=m).astype(K.COUNT)
        out = np.empty(1)
        K.eval_weighted(codes, w, *prep.kernel_args(), np.empty(K.N_RAW), np.empty(K.N_SUMS), np.empty((prep.n_bins, 4)),
                        np.zeros((prep.n_bins + 1, 2)), K.rank_scratch(m), out)
        assert out[0] == res["CC"].distribution[b]
        if not tied:  # and Spearman's ρ of the resampled rows, to rounding
            assert out[0] == pytest.approx(sps.spearmanr(np.abs(E[idx[b]]), u[idx[b]])[0], abs=1e-12)


@pytest.mark.parametrize("tied_u, tied_e", [(False, False), (True, False), (False, True), (True, True)])
def test_cc_counts_of_a_byte_and_more(tied_u, tied_e):
    """CC's rank buffer keeps a count in one byte and the counts of 255 or more whole in a plane of
    their own (``rank_scratch``): ρ with counts of 254 to 70 000 among ordinary ones is scipy's
    spearmanr of the expanded multiset, by the whole pass and by the bootstrap's u pass block by
    block, on a buffer filled with garbage; the next pass with small counts on the same buffer is
    again spearmanr's (the flag of the large counts cleared)."""
    from mcref.kernels import stats as K

    rng = np.random.default_rng(41)
    m = 70_001  # three rank blocks
    u = rng.lognormal(0.0, 0.4, m)
    E = u * rng.standard_normal(m)
    if tied_u:
        u = np.round(u, 2)
    if tied_e:
        E = np.round(E, 2)
    prep = S.prepare(E, u, None, ranks=True)
    slot, eslot = prep.slots()
    ae = np.abs(prep.E)

    def want(w):
        return sps.spearmanr(np.repeat(prep.u, w), np.repeat(ae, w)).statistic

    buf = K.rank_scratch(m)
    buf[:-1] = 0xDEADBEEF  # what an earlier pass or np.empty may leave (the flag, last, starts clear)
    for big in ([254, 255, 256, 300, 511, 70_000], []):
        w = rng.poisson(1.0, m).astype(K.COUNT)
        at = rng.choice(m, len(big), replace=False)
        w[at] = big
        assert K.rank_corr(w, prep.ugs, slot, eslot, prep.egs, buf) == pytest.approx(want(w), abs=1e-12)
        if not tied_u:  # the bootstrap's u pass, block by block (boot_kernel), then the |E| pass
            qb, cb, wide, sat = K.rank_planes(buf, m)
            p, tu = np.int64(0), 0.0
            for lo in range(0, m, 4096):
                p, tu = K.rank_u_run(w[lo:lo + 4096], slot[lo:lo + 4096], qb, cb, wide, sat, p, tu)
            assert K.rank_e_pass(p, tu, eslot, prep.egs, buf) == pytest.approx(want(w), abs=1e-12)


def test_replicates_qm9(qm9):
    E, u = qm9
    idx = BS.resample_indices(u, 4, seed=9, n_bins=20)
    res = BS.bootstrap_many(ALL, E, u, n_boot=4, n_bins=20, seed=9, method="percentile")
    for name in ALL:
        want = [naive.statistic(name, E[r], u[r], 20) for r in idx]
        close(res[name].distribution, want, rtol=1e-11, atol=1e-13)


# --------------------------------------------------------------------------- 2. jackknife


@pytest.mark.parametrize("case_name", CASE_NAMES)
@pytest.mark.parametrize("name", ALL)
def test_jackknife_matches_naive(case_name, name):
    E, u = _case(case_name)
    nb = N_BINS[case_name]
    prep = S.prepare(E, u, nb)
    jack = BS.jackknife(S.info(name), prep)
    assert jack.shape == (u.size,)
    # mcref's jackknife is in u-sorted order: position p leaves out input point order[p]
    close(jack, _naive_jack(case_name, name)[prep.order], rtol=1e-10, atol=1e-12)


def test_jackknife_mean_type_without_bins():
    E, u = _case("cal300")
    prep = S.prepare(E, u, None)
    for name in naive.MEAN + ("CC",):
        close(BS.jackknife(S.info(name), prep), _naive_jack("cal300", name)[prep.order], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["ZMS", "VarZ", "CC", "ENCE", "ZMSE", "UCE"])
def test_jackknife_qm9_sampled(qm9, name):
    """QM9_E (135 distinct u): the full naive jackknife is too slow, check 25 left-out points."""
    E, u = qm9
    prep = S.prepare(E, u, 20)
    jack = BS.jackknife(S.info(name), prep)
    pos = np.random.default_rng(0).choice(u.size, 25, replace=False)
    for p in pos:
        i = prep.order[p]
        want = naive.statistic(name, np.delete(E, i), np.delete(u, i), 20)
        close(jack[p], want, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- 3. intervals


@pytest.mark.filterwarnings("ignore::mcref.BiasedIntervalWarning")  # some cases are strongly biased; the warning is tested in test_validate
@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_bca_matches_plain_numpy(case_name):
    E, u = _case(case_name)
    nb = N_BINS[case_name]
    res = BS.bootstrap_many(ALL, E, u, n_boot=999, n_bins=nb, seed=2024)
    for name in ALL:
        r = res[name]
        assert r.method == "bca" and r.n_boot == 999 and r.confidence_level == 0.95
        close(r.estimate, naive.statistic(name, E, u, nb))
        want = naive.bca(r.estimate, r.distribution, _naive_jack(case_name, name))
        for key in ("low", "high", "bias", "se", "z0"):
            close(getattr(r, key), want[key], rtol=1e-12, atol=1e-13)
        close(r.acceleration, want["a"], rtol=1e-9, atol=1e-13)
        assert r.confidence_interval == (r.low, r.high)
        assert r.low <= r.high


@pytest.mark.parametrize("method", ["percentile", "basic"])
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_percentile_and_basic_match_plain_numpy(method, level):
    E, u = _case("tied_both")
    nb = N_BINS["tied_both"]
    res = BS.bootstrap_many(ALL, E, u, n_boot=500, n_bins=nb, seed=77, method=method, confidence_level=level)
    bca = BS.bootstrap_many(ALL, E, u, n_boot=500, n_bins=nb, seed=77, confidence_level=level)
    ref = getattr(naive, method)
    for name in ALL:
        r = res[name]
        assert r.method == method
        assert np.isnan(r.z0) and np.isnan(r.acceleration)
        # the method does not change the replicates
        np.testing.assert_array_equal(r.distribution, bca[name].distribution)
        want = ref(r.estimate, r.distribution, level)
        for key in ("low", "high", "bias", "se"):
            close(getattr(r, key), want[key], rtol=1e-12, atol=1e-13)


def test_confidence_level_changes_bca_levels():
    E, u = _case("cal300")
    r = BS.bootstrap("ZMS", E, u, n_boot=999, seed=1, confidence_level=0.9)
    want = naive.bca(r.estimate, r.distribution, _naive_jack("cal300", "ZMS"), 0.9)
    close([r.low, r.high], [want["low"], want["high"]])
    r95 = BS.bootstrap("ZMS", E, u, n_boot=999, seed=1)
    assert r95.low < r.low < r.high < r95.high


def test_bca_levels_hand_made():
    # 3 of 6 values strictly below theta_hat -> z0 = 0; symmetric jackknife -> a = 0
    dist = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0])
    a1, a2, z0, a = BS.bca_levels(0.0, dist, np.array([-1.0, 0.0, 1.0]), 0.05)
    assert z0 == 0.0 and a == 0.0
    close([a1, a2], [0.025, 0.975], rtol=1e-14, atol=0)
    # skewed jackknife, d = mean - jack = (1, 1, -2): a = (1 + 1 - 8)/(6·6^{3/2})
    dist = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    a1, a2, z0, a = BS.bca_levels(3.0, dist, np.array([0.0, 0.0, 3.0]), 0.1)
    a_want = -6.0 / (6.0 * 6.0**1.5)
    z0_want = sps.norm.ppf(0.3)  # 3 of 10 strictly below 3.0
    close(z0, z0_want, rtol=1e-14, atol=0)
    close(a, a_want, rtol=1e-14, atol=0)
    lev = [sps.norm.cdf(z0_want + (z0_want + zz) / (1 - a_want * (z0_want + zz))) for zz in sps.norm.ppf([0.05, 0.95])]
    close([a1, a2], lev, rtol=1e-13, atol=0)
    # constant jackknife: acceleration undefined -> NaN (the caller falls back)
    a1, a2, z0, a = BS.bca_levels(3.0, dist, np.full(5, 2.0), 0.05)
    assert np.isnan(a) and np.isnan(a1) and np.isnan(a2)
    # all replicates above theta_hat -> z0 = -inf, NaN levels
    with np.errstate(invalid="ignore"):
        a1, a2, z0, _ = BS.bca_levels(-1.0, dist, np.array([0.0, 0.0, 3.0]))
    assert z0 == -np.inf and np.isnan(a1) and np.isnan(a2)


# --------------------------------------------------------------------------- 4. vs scipy


def test_bca_zms_agrees_with_scipy_bootstrap():
    """ZMS BCa limits of mcref and scipy.stats.bootstrap agree within Monte Carlo error.

    Tolerance. A limit is a quantile at level p (≈ 0.025 / 0.975) of B = 5000
    replicates; for a near-normal bootstrap distribution of sd ``se`` its Monte Carlo sd
    is se·√(p(1−p)/B)/φ(z_p) = se·0.00221/0.0584 ≈ 0.038·se. The BCa level also moves
    with ẑ0 = Φ⁻¹(fraction below θ̂), whose sd is √(1/4B)/φ(0) ≈ 0.018; the limit moves
    by ≈ 2·δz0·se, i.e. 0.035·se. Per implementation ≈ √(0.038² + 0.035²) ≈ 0.052·se,
    for the difference of two independent runs ≈ 0.073·se. We allow 5σ ≈ 0.37·se, plus
    the definitional differences (mcref adds θ̂ to the distribution: levels shift by
    O(1/B), limits by ≈ se/(B·φ(z_p)) ≈ 0.003·se; scipy's z0 counts ties as ½), so
    0.4·se in all. A gross error (a wrong sign of a or z0, percentile instead of BCa)
    moves the limits by ≳ 0.1–0.5·se here only when the skewness is large, so the test
    also checks the deterministic parts exactly: θ̂ and the acceleration.
    """
    rng = np.random.default_rng(31)
    m = 500
    u = rng.lognormal(0.0, 0.5, m)
    E = u * rng.standard_t(6, size=m) * np.sqrt(4 / 6)  # skewed ZMS distribution
    B = 5000
    r = BS.bootstrap("ZMS", E, u, n_boot=B, seed=3)

    def zms(E, u, axis=-1):
        return np.mean((E / u) ** 2, axis=axis)

    sp = sps.bootstrap((E, u), zms, paired=True, vectorized=True, method="BCa", n_resamples=B,
                       confidence_level=0.95, random_state=np.random.default_rng(4))
    tol = 0.4 * r.se
    assert abs(r.low - sp.confidence_interval.low) < tol
    assert abs(r.high - sp.confidence_interval.high) < tol
    assert abs(r.se - sp.standard_error) < 0.1 * r.se  # sd of B draws: rel. MC error ≈ 1/√(2B) = 1 %
    close(r.estimate, zms(E, u))
    # scipy's acceleration uses the same jackknife formula: compare it exactly
    jack = naive.jackknife("ZMS", E, u)
    d = jack.mean() - jack
    close(r.acceleration, np.sum(d**3) / (6 * np.sum(d**2) ** 1.5), rtol=1e-9, atol=0)


# --------------------------------------------------------------------------- 5. coverage


def _coverage(n_rep, m, n_boot, seed, name="ZMS", true=1.0):
    import numba

    ss = np.random.SeedSequence(seed)
    inside = 0
    n0 = numba.get_num_threads()
    # one numba thread: results do not depend on it (tested below) and on a loaded
    # 2-core machine the small prange kernels run 2-5x faster without thread hand-offs
    numba.set_num_threads(1)
    try:
        for k, child in enumerate(ss.spawn(n_rep)):
            rng = np.random.default_rng(child)
            u = rng.uniform(0.5, 2.0, m) if k % 2 == 0 else rng.lognormal(0.0, 0.5, m)
            E = u * rng.normal(size=m)
            r = BS.bootstrap(name, E, u, n_boot=n_boot, seed=int(rng.integers(2**63)))
            inside += r.low <= true <= r.high
    finally:
        numba.set_num_threads(n0)
    return inside


def test_bca_zms_coverage():
    """400 calibrated data sets (M = 500, u uniform or lognormal): the 95 % BCa interval of
    ZMS covers the true value 1 at a rate compatible with 0.95 (≈ 1 ms per interval)."""
    n = 400
    count = _coverage(n, 500, 1000, seed=20240601)
    assert sps.binomtest(count, n, 0.95).pvalue > 0.01, count


@pytest.mark.slow
def test_bca_zms_coverage_large():
    n = 4000
    count = _coverage(n, 500, 2000, seed=777)
    assert sps.binomtest(count, n, 0.95).pvalue > 0.01, count


# --------------------------------------------------------------------------- 6. determinism


def _run_all(E, u, seed, n_boot=200):
    return BS.bootstrap_many(ALL, E, u, n_boot=n_boot, n_bins=10, seed=seed)


def _assert_identical(a, b):
    for name in ALL:
        np.testing.assert_array_equal(a[name].distribution, b[name].distribution)
        for key in ("estimate", "low", "high", "bias", "se"):
            assert getattr(a[name], key) == getattr(b[name], key), (name, key)


def test_same_seed_bit_identical_different_seed_differs():
    E, u = _case("cal300")
    a, b = _run_all(E, u, 42), _run_all(E, u, 42)
    _assert_identical(a, b)
    c = _run_all(E, u, 43)
    for name in ALL:
        assert not np.array_equal(a[name].distribution, c[name].distribution)
    np.testing.assert_array_equal(BS.resample_indices(u, 50, 42), BS.resample_indices(u, 50, 42))
    assert not np.array_equal(BS.resample_indices(u, 50, 42), BS.resample_indices(u, 50, 43))


def test_seed_sequence_and_generator_seeds():
    E, u = _case("cal300")
    r1 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=np.random.SeedSequence(8))
    r2 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=np.random.SeedSequence(8))
    np.testing.assert_array_equal(r1.distribution, r2.distribution)
    # the integer seed 8 and SeedSequence(8) are the same seed
    np.testing.assert_array_equal(BS.bootstrap("ZMS", E, u, n_boot=100, seed=8).distribution, r1.distribution)
    g1 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=np.random.default_rng(5))
    g2 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(g1.distribution, g2.distribution)


def test_same_seed_sequence_object_reused():
    E, u = _case("cal300")
    ss = np.random.SeedSequence(8)
    r1 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=ss)
    r2 = BS.bootstrap("ZMS", E, u, n_boot=100, seed=ss)
    np.testing.assert_array_equal(r1.distribution, r2.distribution)


def test_results_do_not_depend_on_thread_count_in_process():
    import numba

    E, u = _case("tied_both")
    n0 = numba.get_num_threads()
    ref = BS.bootstrap_many(ALL, E, u, n_boot=300, n_bins=10, seed=11)
    prep = S.prepare(E, u, 10)
    jref = {n: BS.jackknife(S.info(n), prep) for n in ALL}
    try:
        numba.set_num_threads(1)
        one = BS.bootstrap_many(ALL, E, u, n_boot=300, n_bins=10, seed=11)
        j1 = {n: BS.jackknife(S.info(n), prep) for n in ALL}
    finally:
        numba.set_num_threads(n0)
    _assert_identical(ref, one)
    for n in ALL:
        np.testing.assert_array_equal(jref[n], j1[n])


_SUBPROCESS = textwrap.dedent(
    """
    import sys
    import numpy as np
    import numba
    from mcref.resampling._bootstrap import bootstrap_many, resample_indices
    out = sys.argv[1]
    assert numba.get_num_threads() == 1, numba.get_num_threads()
    d = np.load(out + "/in.npz")
    names = [str(n) for n in d["names"]]
    res = bootstrap_many(names, d["E"], d["u"], n_boot=300, n_bins=10, seed=11)
    np.save(out + "/dist.npy", np.array([res[n].distribution for n in names]))
    np.save(out + "/iv.npy", np.array([[res[n].low, res[n].high, res[n].bias, res[n].se] for n in names]))
    np.save(out + "/idx.npy", resample_indices(d["u"], 70, seed=11))
    """
)


def test_results_do_not_depend_on_thread_count_subprocess(tmp_path):
    """NUMBA_NUM_THREADS=1 in a fresh process gives the in-process (multi-thread) result bit for bit."""
    import numba

    E, u = _case("tied_both")
    np.savez(tmp_path / "in.npz", E=E, u=u, names=np.array(ALL))
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _SUBPROCESS, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = BS.bootstrap_many(ALL, E, u, n_boot=300, n_bins=10, seed=11)
    assert numba.get_num_threads() >= 1
    np.testing.assert_array_equal(np.load(tmp_path / "dist.npy"), np.array([res[n].distribution for n in ALL]))
    np.testing.assert_array_equal(np.load(tmp_path / "iv.npy"),
                                  np.array([[res[n].low, res[n].high, res[n].bias, res[n].se] for n in ALL]))
    np.testing.assert_array_equal(np.load(tmp_path / "idx.npy"), BS.resample_indices(u, 70, seed=11))


def test_results_do_not_depend_on_task_size_or_thread_count(monkeypatch):
    """Every replicate starts from its own streams, so the replicates per task of the resampling
    kernels (``MIN_TASKS``: B // MIN_TASKS replicates per task; 1 = one task for all B, 10⁹ = one
    replicate per task; ``mcref.parallel.TASK_WORK`` 1: no floor on a task's size, 10¹²: one task) and the thread count change no
    bit: i.i.d. rows with ties split at the cuts, groups (the units kernel) and the resamples of
    ``resample_indices`` (tasks of ``mcref.parallel.over_tasks``)."""
    import numba

    import mcref.parallel as P


    E, u = _case("tied_both")
    g = np.arange(E.size) // 5

    def run():
        a = BS.bootstrap_many(ALL, E, u, n_boot=301, n_bins=10, seed=11, method="percentile")
        b = BS.bootstrap_many(["ZMS", "CC", "ENCE"], E, u, n_boot=203, n_bins=10, seed=12, groups=g,
                              method="percentile")
        return ([r.distribution for r in a.values()] + [r.distribution for r in b.values()]
                + [BS.resample_indices(u, 70, seed=11, n_bins=10)])

    n0 = numba.get_num_threads()
    outs = []
    try:
        for tasks, work, threads in ((10**9, 1, 1), (10**9, 1, 2), (7, 1, 2), (7, 1, 1), (1, 1, 2), (40, 1, 2),
                                     (256, 10**12, 2)):  # work 10**12: every phase one task
            monkeypatch.setattr(BS, "MIN_TASKS", tasks)
            monkeypatch.setattr(P, "TASK_WORK", work)
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            outs.append(run())
    finally:
        numba.set_num_threads(n0)
    for o in outs[1:]:
        for x, y in zip(outs[0], o):
            np.testing.assert_array_equal(x, y)


# --------------------------------------------------------------------------- 7. degenerate, bad input


def test_all_replicates_equal_falls_back_to_percentile():
    u = np.random.default_rng(0).uniform(0.5, 2.0, 200)
    E = u.copy()  # Z = 1 everywhere: every ZMS replicate is exactly 1
    with pytest.warns(DegenerateBootstrapWarning, match=r"BCa interval of ZMS undefined.*percentile"):
        r = BS.bootstrap("ZMS", E, u, n_boot=200, seed=1)
    assert r.method == "percentile"
    assert np.all(r.distribution == 1.0)
    assert r.low == r.high == r.estimate == 1.0
    assert np.isfinite([r.low, r.high, r.bias, r.se]).all()
    assert r.bias == 0.0 and r.se == 0.0
    assert r.z0 == -np.inf  # no replicate strictly below θ̂


def test_degenerate_only_warns_for_bca():
    u = np.random.default_rng(0).uniform(0.5, 2.0, 200)
    E = -u
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = BS.bootstrap("ZMS", E, u, n_boot=100, seed=1, method="percentile")
        b = BS.bootstrap("MZ", E, u, n_boot=100, seed=1, method="basic")
    assert (r.low, r.high, r.method) == (1.0, 1.0, "percentile")
    assert (b.low, b.high, b.method) == (-1.0, -1.0, "basic")


def test_constant_jackknife_falls_back():
    """Constant Z: VarZ is exactly 0 on the data, every resample and every jackknife sample
    (acceleration 0/0 undefined)."""
    u = np.concatenate([np.full(50, 1.0), [2.0]])
    E = u * 0.5
    with pytest.warns(DegenerateBootstrapWarning, match=r"BCa interval of VarZ undefined"):
        r = BS.bootstrap("VarZ", E, u, n_boot=100, seed=2)
    assert r.method == "percentile" and (r.low, r.high) == (0.0, 0.0)
    assert np.isnan(r.acceleration)


def test_infinite_z0_with_varying_replicates_falls_back():
    """θ̂ below every replicate although the replicates vary: UCE = 0 exactly on data whose
    every bin has MSE_b = MV_b (u constant within each bin of 100 points, 1 to 4 across
    them; E = u·(2, 0, 0, 0, …)), while UCE ≥ 0 on every resample. z0 = Φ⁻¹(0) = −inf, the
    jackknife is not constant."""
    m = 400
    u = np.repeat([1.0, 2.0, 3.0, 4.0], m // 4)
    E = u * np.tile([2.0, 0.0, 0.0, 0.0], m // 4)
    assert S.statistic("UCE", E, u, n_bins=4) == 0.0
    with pytest.warns(DegenerateBootstrapWarning, match=r"BCa interval of UCE undefined"):
        with np.errstate(invalid="ignore"):  # -inf/inf inside the BCa level formula
            r = BS.bootstrap("UCE", E, u, n_boot=300, n_bins=4, seed=5)
    assert r.z0 == -np.inf and np.isfinite(r.acceleration)
    assert r.method == "percentile"
    assert np.all(r.distribution >= 0.0) and np.ptp(r.distribution) > 0
    want = naive.percentile(0.0, r.distribution)
    assert (r.low, r.high) == (want["low"], want["high"])


def _no_silent_nan(name, E, u, **kw):
    """docs/methods.md, "Bootstrap": degenerate cases warn and never give a silent NaN. A clear ValueError is
    acceptable; otherwise the limits, bias and se must not be NaN."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = BS.bootstrap(name, E, u, **kw)
        except ValueError:
            return
    assert not np.isnan([r.low, r.high, r.bias, r.se]).any(), r
    assert any(issubclass(w.category, DegenerateBootstrapWarning) and "left out" in str(w.message) for w in caught)


def test_infinite_replicates_do_not_give_silent_nan():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 300)
    E = u * rng.normal(size=300)
    E[np.argsort(u)[:28]] = 0.0  # the first bin (30 points) has 2 non-zero errors
    assert np.isfinite(S.statistic("ZMSE", E, u, n_bins=10))
    _no_silent_nan("ZMSE", E, u, n_boot=2000, n_bins=10, seed=1)


def test_nan_replicates_do_not_give_silent_nan():
    rng = np.random.default_rng(0)
    u = np.r_[np.ones(299), 2.0]  # ~37 % of the resamples miss the one point with u = 2
    E = rng.normal(size=300)
    assert np.isfinite(S.statistic("CC", E, u))
    _no_silent_nan("CC", E, u, n_boot=2000, seed=1)


@pytest.mark.parametrize("kw,match", [
    (dict(n_boot=0), r"`n_boot` must be an integer >= 1, got 0"),
    (dict(n_boot=10.0), r"`n_boot` must be an integer, got 10.0"),
    (dict(method="studentized"), r"`method` must be one of 'bca', 'percentile', 'basic'; got 'studentized'"),
    (dict(confidence_level=1.0), r"`confidence_level` must be in \(0, 1\), got 1.0"),
    (dict(confidence_level=0.0), r"`confidence_level` must be in \(0, 1\), got 0.0"),
    (dict(confidence_level=95), r"`confidence_level` must be in \(0, 1\), got 95"),
    (dict(confidence_level="high"), r"`confidence_level` must be a number in \(0, 1\)"),
    (dict(seed=-1), r"`seed` must be None, a non-negative integer"),
    (dict(seed=1.5), r"`seed` must be None, a non-negative integer"),
    (dict(n_bins=0), r"`n_bins` must be an integer >= 1, got 0"),
])
def test_bad_arguments(kw, match):
    E, u = _case("cal300")
    args = dict(n_boot=10, seed=1)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        BS.bootstrap("ZMS", E, u, **args)


def test_bad_data():
    E, u = _case("cal300")
    bad = E.copy()
    bad[4] = np.nan
    with pytest.raises(ValueError, match=r"`E` must contain only finite values \(1 NaN"):
        BS.bootstrap("ZMS", bad, u, n_boot=10)
    badu = u.copy()
    badu[2] = -0.1
    with pytest.raises(ValueError, match=r"`u` must be > 0"):
        BS.bootstrap("ZMS", E, badu, n_boot=10)
    with pytest.raises(ValueError, match=r"same length"):
        BS.bootstrap("ZMS", E[:-1], u, n_boot=10)
    with pytest.raises(ValueError, match=r"at least 3 points, got 2"):
        BS.bootstrap("ZMS", E[:2], u[:2], n_boot=10)
    with pytest.raises(ValueError, match=r"unknown statistic 'ZMX'"):
        BS.bootstrap("ZMX", E, u, n_boot=10)
    with pytest.raises(ValueError, match=r"`names` must list at least one statistic"):
        BS.bootstrap_many([], E, u, n_boot=10)
    with pytest.raises(ValueError, match=r"`n_bins`=20 leaves fewer than `min_count`=30 points per bin for M=300"):
        BS.bootstrap("ENCE", E, u, n_boot=10)
    with pytest.raises(ValueError, match=r"`n_boot` must be an integer >= 1"):
        BS.resample_indices(u, 0)


def test_shrink_in_bootstrap():
    from mcref.core._warnings import ShrunkBinsWarning

    E, u = _case("cal300")
    with pytest.warns(ShrunkBinsWarning, match=r"from 20 to 10"):
        r = BS.bootstrap("ENCE", E, u, n_boot=100, seed=1, shrink=True)
    close(r.estimate, naive.ence(E, u, 10))
    idx = BS.resample_indices(u, 100, seed=1)
    close(r.distribution, [naive.ence(E[i], u[i], 10) for i in idx])


def test_single_replicate_and_string_names():
    E, u = _case("cal300")
    r = BS.bootstrap_many("ZMS", E, u, n_boot=1, seed=3, method="percentile")
    assert list(r) == ["ZMS"] and r["ZMS"].distribution.shape == (1,)
    idx = BS.resample_indices(u, 1, seed=3)
    close(r["ZMS"].distribution[0], naive.zms(E[idx[0]], u[idx[0]]))
    # case-insensitive name; the result is keyed by the registry name
    assert BS.bootstrap("zms", E, u, n_boot=5, seed=3, method="percentile").name == "ZMS"


# --------------------------------------------------------------------------- 8. resampling generator


def _gof(observed, probs, n):
    """χ² goodness of fit with cells of expected count < 5 pooled into the last one."""
    exp = probs * n
    keep = exp >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(exp[keep], exp[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return sps.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("n,a,d", [(1, 1, 2), (37, 1, 3), (1000, 256, 744), (5000, 512, 1000), (300, 7, 7),
                                   (50, 0, 9)])
def test_binomial_rational_is_binomial(n, a, d):
    """Bin(n, a/d) from random bits (:func:`binomial_rational`) against the exact pmf."""
    from mcref.kernels.rng import binomial_rational, chunk_states, load_state

    from numba import njit

    @njit
    def draws(s, n, a, d, k):
        st = load_state(s)
        out = np.empty(k, dtype=np.int64)
        for i in range(k):
            out[i], st = binomial_rational(st, n, a, d)
        return out

    x = draws(chunk_states(np.random.SeedSequence(5), 1)[0], n, a, d, 20_000)
    if a in (0, d):
        assert np.all(x == (n if a == d else 0))
        return
    obs = np.bincount(x, minlength=n + 1)
    assert _gof(obs, sps.binom.pmf(np.arange(n + 1), n, a / d), x.size) > 1e-3


@pytest.mark.parametrize("n,p", [(2048, 0.5), (13_885, 0.4931), (5000, 0.7), (3000, 0.99), (100, 0.35),
                                 (1_000_000, 0.5), (40_000, 0.03)])
def test_binomial_btpe_is_binomial(n, p):
    """Bin(n, p) by BTPE (:func:`binomial_btpe`, every branch: the triangle, parallelograms,
    tails, the recursion near the mode and the squeeze/Stirling test far from it at n = 10⁶)
    against the exact pmf (χ²), and its mean and variance within 5 standard errors."""
    from numba import njit

    from mcref.kernels.rng import binomial_btpe, chunk_states, load_state

    @njit
    def draws(s, n, p, k):
        st = load_state(s)
        out = np.empty(k, dtype=np.int64)
        for i in range(k):
            out[i], st = binomial_btpe(st, n, p)
        return out

    k = 40_000
    x = draws(chunk_states(np.random.SeedSequence(n), 1)[0], n, p, k)
    assert x.min() >= 0 and x.max() <= n
    mu, var = n * p, n * p * (1 - p)
    assert abs(x.mean() - mu) < 5 * np.sqrt(var / k)
    mu4 = var * (1 + 3 * (n - 2) * p * (1 - p))  # the binomial's 4th central moment
    assert abs(x.var() - var) < 5 * np.sqrt((mu4 - var ** 2) / k)
    lo, hi = int(x.min()), int(x.max())
    obs = np.bincount(x - lo, minlength=hi - lo + 1)
    probs = sps.binom.pmf(np.arange(lo, hi + 1), n, p)
    probs[0] += sps.binom.cdf(lo - 1, n, p)  # the tails beyond the sample's range pooled at its ends
    probs[-1] += sps.binom.sf(hi, n, p)
    assert _gof(obs, probs, x.size) > 1e-3


def test_splits_take_btpe_only_for_many_draws():
    """:func:`split_binomial` draws from BTPE at BTPE_MIN draws or more (both parts then have a
    mean above 30), and from the random bits below (same stream as :func:`binomial_rational`)."""
    from numba import njit

    from mcref.kernels.rng import BTPE_MIN, binomial_btpe, binomial_rational, chunk_states, load_state, split_binomial

    @njit
    def both(s, k, a, d):
        st = load_state(s)
        x, st1 = split_binomial(st, k, a, d)
        y, st2 = binomial_btpe(st, k, a / d)
        z, st3 = binomial_rational(st, k, a, d)
        return x, y, z, st1 == st2, st1 == st3

    s = chunk_states(np.random.SeedSequence(0), 1)[0]
    x, y, z, same_btpe, same_bits = both(s, BTPE_MIN, 256, 512)
    assert x == y and same_btpe and not same_bits
    x, y, z, same_btpe, same_bits = both(s, BTPE_MIN - 1, 256, 512)
    assert x == z and same_bits and not same_btpe
    x, y, z, same_btpe, same_bits = both(s, 10 * BTPE_MIN, 1, 1000)  # a mean of 20 draws: the bits
    assert x == z and same_bits


@pytest.mark.parametrize("m", [1, 2, 63, 64, 65, 300, 1000, 4096, 2 * 4096 + 17, 3 * 4096 + 1597])
def test_multinomial_counts_are_bootstrap_counts(m):
    """The counts drawn leaf by leaf are those of M i.i.d. uniform draws: they sum to M, each
    count is Binomial(M, 1/M), two counts have covariance −1/M, and no cell (leaf or
    remainder) is favoured. M = 8209 and 13 885: the upper splits (≥ BTPE_MIN draws) by BTPE, full
    leaves of 4096, then the rest in powers of two (1024, 512) and a last leaf of fewer than 64."""
    from mcref.kernels.rng import STACK_ROWS, chunk_states, multinomial_counts

    reps = 4000 if m <= 300 else 1500 if m <= 1000 else 800
    s = chunk_states(np.random.SeedSequence(m), 1)[0]
    w = np.empty(m, dtype=np.int64)
    stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
    W = np.empty((reps, m), dtype=np.int64)
    for r in range(reps):
        multinomial_counts(s, m, m, w, stack)
        W[r] = w
    assert np.all(W.sum(axis=1) == m)
    if m == 1:
        return
    obs = np.bincount(W.ravel(), minlength=m + 1)[:m + 1]
    assert _gof(obs, sps.binom.pmf(np.arange(m + 1), m, 1 / m), W.size) > 1e-3
    # per-cell totals over the replicates: each ~ Bin(reps·M, 1/M), independent of position
    tot = W.sum(axis=0)
    assert sps.chisquare(tot).pvalue > 1e-3
    # neighbours across a leaf boundary and far apart: covariance −1/M (multinomial)
    for i, j in [(0, 1), (m // 2, m - 1), (min(4095, m - 2), min(4096, m - 1)), (min(12543, m - 2), min(12544, m - 1))]:
        if i != j:
            c = np.cov(W[:, i], W[:, j])[0, 1]
            assert abs(c + 1 / m) < 5 * np.sqrt((1 + 1 / m) / reps), (i, j, c)


def _leaf_counts():
    """``leaf_counts`` on a state array, the state held as a tuple in registers as the kernels hold it."""
    from numba import njit

    from mcref.kernels.rng import leaf_counts, load_state, store_state

    @njit
    def counts(s, k, seg):
        store_state(s, leaf_counts(load_state(s), k, seg))

    return counts


@pytest.mark.parametrize("bits,k", [(12, k) for k in (0, 1, 4, 5, 6, 4095, 4096, 9001)]
                         + [(b, k) for b in (11, 10, 9, 8, 7, 6)
                            for k in (0, 1, 64 // b - 1, 64 // b, 64 // b + 1, 300)])
def test_leaf_counts_are_the_words_fields(bits, k):
    """A leaf of 2**bits cells takes its k draws as the bits-bit fields of successive xoshiro
    words, ⌊64/bits⌋ a word (five 12-bit fields for a full leaf of 4096; 5, 6, 7, 8, 9, 10 for
    11 … 6 bits, the powers of two of the rest of fewer than 4096 points); low field first, the
    last word's first k mod (fields a word). Counted here in Python from ``next_u64``; the state
    after the leaf is the one after those words. Holds the unrolled loops of ``leaf_counts`` to
    the stream the methods page documents."""
    from mcref.kernels.rng import LEAF_BITS, MIN_FIELD_BITS, chunk_states, next_u64

    assert (LEAF_BITS, MIN_FIELD_BITS) == (12, 6)
    fields, cells = 64 // bits, 1 << bits
    s = chunk_states(np.random.SeedSequence([bits, k]), 1)[0]
    seg = np.full(cells, -1, dtype=np.int64)
    ref_state = s.copy()
    _leaf_counts()(s, np.int64(k), seg)
    ref = np.zeros(cells, dtype=np.int64)
    for j in range(0, k, fields):
        word = int(next_u64(ref_state))
        for t in range(min(fields, k - j)):
            ref[(word >> (bits * t)) & (cells - 1)] += 1
    assert np.array_equal(seg, ref)
    assert np.array_equal(s, ref_state)


def _leaves(m):
    """The leaves ``(lo, hi)`` that ``multinomial_split`` cuts M cells into, in order."""
    from numba import njit

    from mcref.kernels.rng import STACK_ROWS, chunk_states, load_state, multinomial_split, multinomial_start

    @njit
    def leaves(s, m, out):
        stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
        st = load_state(s)
        sp = multinomial_start(stack, m, m)
        n = 0
        while sp > 0:
            lo, hi, _k, sp, st = multinomial_split(st, stack, sp)
            out[n, 0] = lo
            out[n, 1] = hi
            n += 1
        return n

    out = np.empty((m // 64 + 64, 2), dtype=np.int64)
    n = leaves(chunk_states(np.random.SeedSequence(m), 1)[0], np.int64(m), out)
    return [tuple(r) for r in out[:n].tolist()]


@pytest.mark.parametrize("m", [1, 63, 64, 65, 1000, 1597, 4095, 4096, 4097, 3 * 4096 + 1597, 10 * 4096 + 64])
def test_leaves_are_full_then_the_rest_in_powers_of_two(m):
    """The tree's leaves, left to right, tile [0, M): first the full leaves of 4096, then the rest
    of fewer than 4096 as its powers of two from 64 up, largest first (the binary digits of the
    rest), then one last leaf of the rest mod 64 (docs/methods.md, "Bootstrap")."""
    full, rest = divmod(m, 4096)
    sizes = [4096] * full + [1 << b for b in range(11, 5, -1) if rest >> b & 1] + ([rest % 64] if rest % 64 else [])
    got = _leaves(m)
    assert [hi - lo for lo, hi in got] == sizes
    assert got[0][0] == 0 and got[-1][1] == m and all(a[1] == b[0] for a, b in zip(got, got[1:]))


@pytest.mark.parametrize("k", [0, 1, 7, 300])
def test_short_leaf_counts_are_lemire_draws(k):
    """The last leaf, of fewer than 64 cells (here 61, QM9_E's), takes its k draws as Lemire's
    bounded draws of :func:`bounded_draws` (two 32-bit halves a word, with rejection), from the
    same state."""
    from mcref.kernels.rng import bounded_draws, chunk_states

    s = chunk_states(np.random.SeedSequence(k + 17), 1)[0]
    ref_state = s.copy()
    short = np.full(61, -1, dtype=np.int64)
    _leaf_counts()(s, np.int64(k), short)
    ref = np.zeros(61, dtype=np.int64)
    bounded_draws(ref_state, 61, k, ref, True)
    assert np.array_equal(short, ref) and short.sum() == k
    assert np.array_equal(s, ref_state)


@pytest.mark.parametrize("ties", ["none", "u", "both"])
def test_cc_jackknife_fast_equals_the_direct_update_and_spearmanr(ties):
    """The O(M log M) leave-one-out Spearman equals the direct O(M²) rank update bit for bit
    (every sum is of quarter-integers, exact in float64) and scipy's spearmanr on M − 1 points."""
    from scipy.stats import rankdata, spearmanr

    from mcref.resampling._jackknife import cc_jackknife
    from mcref.core._prepared import prepare

    rng = np.random.default_rng({"none": 1, "u": 2, "both": 3}[ties])
    m = 400
    u = rng.lognormal(size=m) if ties == "none" else rng.choice(rng.uniform(0.2, 3, 9), m)
    E = u * rng.normal(size=m)
    if ties == "both":
        E = np.round(E, 1)
    prep = prepare(E, u, None)  # the kernel reads the u-sorted positions, the order and runs of |E|
    u, ae = prep.u, np.abs(prep.E)
    ru, re = rankdata(u), rankdata(ae)
    out = np.empty(m)
    cc_jackknife(prep.ugs, prep.eord, prep.egs, out)
    np.testing.assert_array_equal(out, naive.jack_cc_direct(u, ae, ru, re))
    for j in rng.choice(m, 8, replace=False):
        assert out[j] == pytest.approx(spearmanr(np.delete(u, j), np.delete(ae, j)).statistic, rel=1e-12, abs=1e-14)


@pytest.mark.filterwarnings("ignore::mcref.BiasedIntervalWarning")  # ZMSE at M = 1500 may be biased: not checked here
def test_resamples_of_a_statistic_do_not_depend_on_its_company():
    """Issue 31: with tied u, the tie splits of a binned statistic were drawn from the stream of
    the multiplicities, so ZMS's interval changed when ENCE shared the call, and with n_bins.
    The splits now have their own stream: ZMS, RCE and CC get the same replicates, bit for bit,
    alone, beside binned statistics and whatever the bins; and the binned statistics still get
    split ties (their replicates differ with n_bins)."""
    import mcref
    from conftest import tied_u

    E, u = tied_u(1500, 11, n_distinct=6)
    alone = {s: mcref.bootstrap(s, E, u, n_boot=300, seed=4) for s in ("ZMS", "RCE", "CC")}
    company = mcref.bootstrap_many(["ENCE", "ZMS", "ZMSE", "RCE", "CC"], E, u, n_boot=300, seed=4)
    other_bins = mcref.bootstrap_many(["ZMS", "RCE", "CC", "ENCE"], E, u, n_boot=300, seed=4, n_bins=10)
    for s, r in alone.items():
        for other in (company[s], other_bins[s]):
            np.testing.assert_array_equal(other.distribution, r.distribution)
            assert (other.low, other.high) == (r.low, r.high)
    assert not np.array_equal(company["ENCE"].distribution, other_bins["ENCE"].distribution)
    # resample_indices draws the kernel's resamples, with the same multiplicities whatever n_bins
    from mcref.resampling._bootstrap import resample_indices

    i20 = resample_indices(u, 64, seed=4, n_bins=20)
    i_none = resample_indices(u, 64, seed=4)
    np.testing.assert_array_equal(np.sort(i20, axis=1), np.sort(i_none, axis=1))


def test_bca_z0_counts_a_replicate_equal_to_the_estimate_as_a_tie():
    """Found by the scale invariant (tests/test_invariants.py): with four distinct u, MV's bootstrap
    distribution has an atom at θ̂; which replicates of that atom the rounding of their sums put a
    hair below θ̂ changed with the data's units, and with it z0 and the BCa limits (0.56 % at
    c = 71.75). A replicate within 1e-12 (relative) of θ̂ now counts as equal: the interval of
    (cE, cu) is c² times that of (E, u) to rounding, for any c."""
    import mcref

    rng = np.random.default_rng(119)
    u = rng.choice(np.array([0.35979589, 0.90302629, 1.81763696, 2.03127426]), 120)
    E = u * rng.normal(size=120)
    base = mcref.bootstrap("MV", E, u, n_boot=400, seed=7)
    for c in (71.75, 0.013, 3.3):
        other = mcref.bootstrap("MV", c * E, c * u, n_boot=400, seed=7)
        np.testing.assert_allclose([other.low, other.high, other.z0], [c * c * base.low, c * c * base.high, base.z0],
                                   rtol=1e-12)
    # the rule is on exact values: a distribution with an exact atom at θ̂ gives the same z0 as the
    # same distribution with that atom moved by rounding noise
    from mcref.resampling._bootstrap import bca_levels

    dist = np.array([1.0, 2.0, 2.0, 2.0, 3.0, 2.0])
    noisy = dist.copy()
    noisy[1] = np.nextafter(2.0, 0.0)
    jack = np.array([1.9, 2.0, 2.1, 2.05])
    assert bca_levels(2.0, noisy, jack)[2] == bca_levels(2.0, dist, jack)[2] == sps.norm.ppf(1 / 6)
