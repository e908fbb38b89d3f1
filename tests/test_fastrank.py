"""Radix-rank kernels (mcref.kernels.fastrank, docs/methods.md, "Simulated references") against scipy's spearmanr and rankdata."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numba import njit
from scipy.stats import rankdata, spearmanr

from mcref.kernels import fastrank as FR
from mcref.kernels.fastrank import (BUCKET_MIN_M, average_ranks, make_rank_scratch, radix_bits, spearman_bucketed,
                                    spearman_fixed_u, spearman_radix)

TOL = 1e-12
SIZES = (2, 3, 4, 5, 7, 33, 100, 1000, 4097, 13885, 50000)


def fixed_u(u):
    """``(xu, sxx)`` as the Monte Carlo caller precomputes them."""
    xu = np.ascontiguousarray(rankdata(u) - 0.5 * (u.size + 1))
    return xu, float(np.sum(xu * xu))


def u_levels(m, rng, n_distinct=135):
    """u with (at most) ``n_distinct`` values, like QM9_E (13 885 points, 135 distinct u)."""
    return rng.choice(np.exp(rng.normal(-5.0, 0.8, n_distinct)), m)


def scipy_rho(a, u):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConstantInputWarning: the NaN is what is checked
        return float(spearmanr(a, u).statistic)


def check(a, u, scratch=None):
    """spearman_fixed_u equals spearmanr to TOL and average_ranks equals rankdata exactly."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    m = a.size
    scratch = make_rank_scratch(m) if scratch is None else scratch
    xu, sxx = fixed_u(u)
    ref = scipy_rho(a, u)
    got = spearman_fixed_u(a, xu, sxx, scratch)
    if np.isnan(ref):
        assert np.isnan(got)
    else:
        assert abs(got - ref) <= TOL, (got, ref)
    out = np.full(m, -1.0)
    average_ranks(a, out, scratch)
    np.testing.assert_array_equal(out, rankdata(a))
    return got


def draw_a(kind, u, rng):
    m = u.size
    if kind == "normal":
        return np.abs(u * rng.standard_normal(m))
    if kind == "t3":
        return np.abs(u * rng.standard_t(3, m) / np.sqrt(3.0))
    if kind == "span300":  # 1e-300 .. 1e300: the whole exponent range
        return 10.0 ** rng.uniform(-300.0, 300.0, m)
    if kind == "small_set":  # many exact ties
        return np.abs(rng.choice(rng.standard_normal(7), m))
    if kind == "resampled":  # empirical D: |u·ε| with ε resampled from a finite set
        return np.abs(u * rng.choice(rng.standard_normal(max(m // 3, 1)), m))
    if kind == "zeros":  # |E| = 0 exactly for a third of the points
        return np.where(rng.uniform(size=m) < 1 / 3, 0.0, np.abs(u * rng.standard_normal(m)))
    if kind == "rounded":  # |E| rounded: ties and zeros together
        return np.abs(np.round(u * rng.standard_normal(m) / np.median(u), 1))
    raise ValueError(kind)


KINDS = ("normal", "t3", "span300", "small_set", "resampled", "zeros", "rounded")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("m", SIZES)
def test_matches_scipy(kind, m):
    rng = np.random.default_rng([m, KINDS.index(kind)])
    u = u_levels(m, rng)
    check(draw_a(kind, u, rng), u)


@pytest.mark.parametrize("m", (2, 10, 500, 13885))
def test_continuous_u_and_two_level_u(m):
    rng = np.random.default_rng(m)
    for u in (rng.lognormal(size=m), u_levels(m, rng, n_distinct=2)):
        check(np.abs(u * rng.standard_normal(m)), u)


def test_qm9_u(qm9):
    """The real QM9_E u (135 distinct values) with normal and t(3) ε, ε resampled."""
    E, u = qm9
    rng = np.random.default_rng(9)
    scratch = make_rank_scratch(u.size)
    check(np.abs(E), u, scratch)
    for kind in ("normal", "t3", "resampled"):
        check(draw_a(kind, u, rng), u, scratch)


def test_scratch_reused_across_calls():
    """One scratch per chunk: no state leaks from one call into the next."""
    rng = np.random.default_rng(1)
    m = 3001
    u = u_levels(m, rng)
    scratch = make_rank_scratch(m)
    for kind in KINDS * 2:
        check(draw_a(kind, u, rng), u, scratch)


def test_constant_a_gives_nan():
    """All-equal a: syy = 0, the kernel returns NaN (the caller reports it); ranks are (M+1)/2."""
    rng = np.random.default_rng(2)
    for m in (1, 2, 17, 1000):
        u = u_levels(m, rng)
        xu, sxx = fixed_u(u)
        for value in (0.0, 2.5, 1e-300):
            a = np.full(m, value)
            assert np.isnan(spearman_fixed_u(a, xu, sxx, make_rank_scratch(m)))
            out = np.empty(m)
            average_ranks(a, out, make_rank_scratch(m))
            np.testing.assert_array_equal(out, np.full(m, 0.5 * (m + 1)))
    a = np.zeros(5)
    a[[1, 3]] = -0.0  # -0.0 == 0.0: still constant
    assert np.isnan(spearman_fixed_u(a, *fixed_u(np.arange(5.0)), make_rank_scratch(5)))


def test_empty_and_single():
    out = np.empty(0)
    average_ranks(np.empty(0), out, make_rank_scratch(0))
    out = np.empty(1)
    average_ranks(np.array([3.0]), out, make_rank_scratch(1))
    assert out[0] == 1.0
    assert np.isnan(spearman_fixed_u(np.array([3.0]), np.zeros(1), 0.0, make_rank_scratch(1)))


def test_nan_propagates():
    rng = np.random.default_rng(3)
    u = rng.lognormal(size=50)
    xu, sxx = fixed_u(u)
    for bad in (np.nan, -np.nan):
        a = np.abs(rng.standard_normal(50))
        a[17] = bad
        assert np.isnan(spearman_fixed_u(a, xu, sxx, make_rank_scratch(50)))
        out = np.zeros(50)
        average_ranks(a, out, make_rank_scratch(50))
        assert np.all(np.isnan(out))


def test_signed_values_infinities_and_signed_zeros():
    """average_ranks ranks any finite or infinite float64; -0.0 ties with +0.0 (as rankdata)."""
    rng = np.random.default_rng(4)
    m = 2000
    x = rng.standard_normal(m) * 10.0 ** rng.integers(-5, 5, m)
    x[rng.integers(0, m, 50)] = 0.0
    x[rng.integers(0, m, 50)] = -0.0
    x[rng.integers(0, m, 5)] = np.inf
    x[rng.integers(0, m, 5)] = -np.inf
    x[rng.integers(0, m, 20)] = 5e-324  # denormals
    x[rng.integers(0, m, 20)] = -5e-324
    check(x, u_levels(m, rng))
    check(np.abs(x), u_levels(m, rng))


@pytest.mark.parametrize("m", (300, 13885))
def test_crowded_key_levels(m):
    """Values closer than one key level of the whole array (a 1e300 outlier stretches the
    range): the long runs are re-sorted on their own range; runs still crowded after that
    fall back to heapsort. The result stays exact and the time bounded."""
    rng = np.random.default_rng(m)
    u = u_levels(m, rng)
    ulp = np.spacing(1.0)
    cases = [
        np.r_[1.0 + rng.uniform(0, 1e-9, m - 1), 1e300],                      # one crowded run
        np.r_[rng.choice([1.0, 1.0 + ulp], m - 1), 1e300],                     # two adjacent doubles
        np.r_[1.0 + ulp * rng.integers(0, 60, m - 2), 1.0 + 1e-6, 1e300],      # crowded inside the run
        np.r_[1.0 + ulp * rng.integers(0, 60, m - 2), 1.0 + 1e-6, 0.0][::-1],  # same, descending input
    ]
    for a in cases:
        rng.shuffle(a)
        check(a, u)


def test_heapsort_fallback_directly():
    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 3, 10, 257):
        v = rng.choice(rng.standard_normal(5), n)
        p = np.arange(n, dtype=np.uint64)
        v0 = v.copy()
        FR._heapsort2(v, p, n)
        np.testing.assert_array_equal(v, np.sort(v0))
        np.testing.assert_array_equal(v0[p.astype(np.int64)], v)


def test_radix_bits_and_scratch():
    assert radix_bits(13885) == 11
    assert radix_bits(2) == 8 and radix_bits(10**7) == 13
    w0, w1, gl, hist, gv, rec = make_rank_scratch(13885)
    assert w0.shape == w1.shape == (13886,) and w0.dtype == w1.dtype == np.uint64
    assert gl.shape == (13885,) and gl.dtype == np.uint64
    assert hist.shape == (2, 2048) and hist.dtype == np.uint64
    assert gv.shape == (13885,) and gv.dtype == np.float64
    assert rec.shape == (2 * 13885,) and rec.dtype == np.uint64
    with pytest.raises(ValueError, match="`m` must be"):
        make_rank_scratch(-1)
    with pytest.raises(ValueError, match="`m` must be"):
        make_rank_scratch(2**32)


@pytest.mark.parametrize("d", (8, 10, 13))
def test_any_table_size(d):
    """The digit width is read from the table shape: any D in 8..13 gives the same result."""
    rng = np.random.default_rng(d)
    m = 5000
    u = u_levels(m, rng)
    w0, w1, gl, _, gv, rec = make_rank_scratch(m)
    scratch = (w0, w1, gl, np.empty((2, 1 << d), np.uint64), gv, rec)
    for kind in ("normal", "span300", "small_set"):
        check(draw_a(kind, u, rng), u, scratch)


@njit
def _mc_like(a_rows, xu, sxx, scratch, out):
    for r in range(a_rows.shape[0]):
        out[r] = spearman_fixed_u(a_rows[r], xu, sxx, scratch)


def test_called_from_a_kernel():
    """As in the Monte Carlo chunk kernel: called from njit code with the scratch tuple."""
    rng = np.random.default_rng(6)
    m = 777
    u = u_levels(m, rng)
    xu, sxx = fixed_u(u)
    a_rows = np.abs(u * rng.standard_normal((5, m)))
    out = np.empty(5)
    _mc_like(a_rows, xu, sxx, make_rank_scratch(m), out)
    for r in range(5):
        assert abs(out[r] - scipy_rho(a_rows[r], u)) <= TOL


def bucket_scratch(m):
    """A scratch whose table allows :func:`spearman_bucketed` at any M (2**13 counters a row)."""
    sc = make_rank_scratch(m)
    return sc[:3] + (np.empty((2, 1 << 13), np.uint64),) + sc[4:]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("m", (2, 3, 5, 33, 1000, 13885, 50000))
def test_bucketed_matches_scipy_and_radix(kind, m):
    """The cache-bucket path (used from BUCKET_MIN_M points on) gives spearmanr's ρ and the
    radix path's value to rounding, on the same inputs at sizes where both are cheap."""
    rng = np.random.default_rng([m, KINDS.index(kind), 7])
    u = u_levels(m, rng)
    a = np.ascontiguousarray(draw_a(kind, u, rng))
    xu, sxx = fixed_u(u)
    sc = bucket_scratch(m)
    got = spearman_bucketed(a, xu, sxx, sc)
    ref = scipy_rho(a, u)
    if np.isnan(ref):
        assert np.isnan(got) and np.isnan(spearman_radix(a, xu, sxx, sc))
    else:
        assert abs(got - ref) <= TOL, (got, ref)
        assert abs(got - spearman_radix(a, xu, sxx, sc)) <= TOL


def test_bucketed_crowded_constant_nan_and_large_m():
    """Crowded keys (a 1e300 outlier: one bucket holds nearly everything, heapsort guard),
    constant input, NaN, and one M past BUCKET_MIN_M through spearman_fixed_u itself."""
    rng = np.random.default_rng(11)
    m = 3000
    u = u_levels(m, rng)
    xu, sxx = fixed_u(u)
    sc = bucket_scratch(m)
    ulp = np.spacing(1.0)
    for a in (np.r_[1.0 + rng.uniform(0, 1e-9, m - 1), 1e300],
              np.r_[1.0 + ulp * rng.integers(0, 60, m - 2), 1.0 + 1e-6, 0.0][::-1],
              np.r_[rng.choice([1.0, 1.0 + ulp], m - 1), 1e300]):
        a = np.ascontiguousarray(a)
        rng.shuffle(a)
        assert abs(spearman_bucketed(a, xu, sxx, sc) - scipy_rho(a, u)) <= TOL
    assert np.isnan(spearman_bucketed(np.full(m, 2.5), xu, sxx, sc))
    a = np.abs(rng.standard_normal(m))
    a[5] = np.nan
    assert np.isnan(spearman_bucketed(a, xu, sxx, sc))
    m = BUCKET_MIN_M + 17  # through spearman_fixed_u: the bucket path
    u = rng.lognormal(size=m)
    xu, sxx = fixed_u(u)
    sc = make_rank_scratch(m)
    for kind in ("normal", "rounded"):
        a = np.ascontiguousarray(draw_a(kind, u, rng))
        got = spearman_fixed_u(a, xu, sxx, sc)
        assert abs(got - scipy_rho(a, u)) <= TOL
        assert abs(got - spearman_radix(a, xu, sxx, sc)) <= TOL
