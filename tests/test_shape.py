"""Tests of mcref.shape: Harrell-Davis quantiles, robust skewness/kurtosis, shape screen."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import betainc
from scipy.stats.mstats import hdquantiles

from mcref.shape import (
    ShapeScreen,
    hd_quantile,
    kurtosis_cs,
    shape_screen,
    skewness_gm,
)

CS_PROBS = [0.025, 0.25, 0.75, 0.975]
LN2 = np.log(2.0)
# Exp(1): mean 1, median ln2, E|X - ln2| = (ln2 - 1/2) + 1/2 = ln2  =>  beta_GM below.
BETA_EXP = (1.0 - LN2) / LN2
# Normal: exact Crow-Siddiqui ratio minus the rounded 2.91 used by the estimator.
KAPPA_NORMAL = (
    (stats.norm.ppf(0.975) - stats.norm.ppf(0.025))
    / (stats.norm.ppf(0.75) - stats.norm.ppf(0.25))
    - 2.91
)


def _mc_sd(stat, sampler, *, n, reps=200, seed=123):
    """Monte Carlo standard deviation of ``stat`` over ``reps`` samples of size ``n``."""
    rng = np.random.default_rng(seed)
    return float(np.std([stat(sampler(rng, n)) for _ in range(reps)], ddof=1))


def _se(stat, sampler, n_big, n_small=1000):
    """Standard error at ``n_big`` from a small simulation, scaled by sqrt(n_small/n_big)
    (both statistics are smooth functionals of quantiles/means: root-n consistent)."""
    return _mc_sd(stat, sampler, n=n_small) * np.sqrt(n_small / n_big)


# ---------------------------------------------------------------------------------
# Harrell-Davis quantiles
# ---------------------------------------------------------------------------------


def test_reference_constants():
    # Exp(1): check E|X - ln2| = ln2 by quadrature, independently of the derivation.
    mad = integrate.quad(lambda x: abs(x - LN2) * np.exp(-x), 0, LN2)[0] + integrate.quad(
        lambda x: abs(x - LN2) * np.exp(-x), LN2, np.inf
    )[0]
    assert mad == pytest.approx(LN2, rel=1e-10)
    assert BETA_EXP == pytest.approx(0.4426950408889634, rel=1e-14)
    assert KAPPA_NORMAL == pytest.approx(2 * 1.959963984540054 / (2 * 0.6744897501960817) - 2.91)
    assert -0.0045 < KAPPA_NORMAL < -0.004


@pytest.mark.parametrize("n", [2, 3, 5, 6, 17, 100, 1001, 20000, 100_000])
@pytest.mark.parametrize("ties", [False, True])
def test_hd_quantile_matches_scipy(n, ties):
    rng = np.random.default_rng(n + 1000 * ties)
    x = rng.lognormal(sigma=1.0, size=n) * 10
    if ties:
        x = np.round(x)  # many exact ties
    probs = np.array([0.001, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 0.999])
    ref = np.asarray(hdquantiles(x, prob=probs))
    got = hd_quantile(x, probs)
    assert isinstance(got, np.ndarray) and got.shape == probs.shape
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * np.abs(x).max())
    for p, r in zip(probs, ref):
        v = hd_quantile(x, p)
        assert isinstance(v, float)
        assert v == pytest.approx(r, rel=1e-12, abs=1e-12 * np.abs(x).max())


def test_hd_quantile_window_matches_full_grid():
    # The beta CDF is evaluated only where it is not within 1e-30 of 0 or 1: compare
    # with the plain full-grid formula, extreme levels included.
    rng = np.random.default_rng(5)
    n = 100_000
    xs = np.sort(rng.standard_cauchy(size=n))  # huge tails: truncation would show
    v = np.arange(n + 1) / n
    probs = np.array([1e-4, 0.01, 0.5, 0.99, 1 - 1e-4])
    full = [np.diff(betainc(p * (n + 1), (1 - p) * (n + 1), v)) @ xs for p in probs]
    np.testing.assert_allclose(hd_quantile(xs, probs), full, rtol=1e-12, atol=0)


def test_hd_quantile_falls_back_to_full_grid(monkeypatch):
    # A wrong tail window (bad inverse) must be detected and the full grid used.
    import mcref.core._hd as shape  # the HD weights' home

    monkeypatch.setattr(shape, "betaincinv", lambda a, b, y: 0.49)
    monkeypatch.setattr(shape, "betainccinv", lambda a, b, y: np.nan)
    shape._hd_weights.cache_clear()  # weights made before the patch would skip it
    try:
        x = np.random.default_rng(6).normal(size=3000)
        probs = [0.025, 0.5, 0.975]
        np.testing.assert_allclose(hd_quantile(x, probs), np.asarray(hdquantiles(x, prob=probs)),
                                   rtol=1e-12, atol=1e-12)
    finally:
        shape._hd_weights.cache_clear()  # nor may the patched ones outlive it


def test_hd_weights_are_kept_read_only_and_equal_to_fresh_ones():
    import mcref.core._hd as H

    probs = np.array([0.05, 0.5, 0.95])
    first = H.hd_weights(20_001, probs)
    again = H.hd_weights(20_001, probs.copy())
    assert all(a[1] is b[1] for a, b in zip(first, again))  # kept, not made again
    assert not first[0][1].flags.writeable
    H._hd_weights.cache_clear()
    fresh = H.hd_weights(20_001, probs)
    for (i0, w), (j0, v) in zip(first, fresh):
        assert i0 == j0
        np.testing.assert_array_equal(w, v)
        assert abs(w.sum() - 1.0) < 1e-12


def test_hd_quantile_matches_definition_loop():
    rng = np.random.default_rng(7)
    x = rng.normal(size=37)
    xs = np.sort(x)
    n = x.size
    for q in (0.05, 0.3, 0.5, 0.8):
        a, b = q * (n + 1), (1 - q) * (n + 1)
        w = [betainc(a, b, i / n) - betainc(a, b, (i - 1) / n) for i in range(1, n + 1)]
        assert hd_quantile(x, q) == pytest.approx(sum(wi * xi for wi, xi in zip(w, xs)), abs=1e-13)


def test_hd_quantile_shape_order_and_symmetry():
    rng = np.random.default_rng(8)
    x = rng.standard_t(4, size=501)
    q = np.array([[0.1, 0.2, 0.3], [0.7, 0.8, 0.9]])
    got = hd_quantile(x, q)
    assert got.shape == (2, 3)
    # input order irrelevant; monotone in q; HD(q; x) = -HD(1-q; -x)
    np.testing.assert_allclose(hd_quantile(rng.permutation(x), q), got, rtol=0, atol=1e-14)
    assert np.all(np.diff(got.ravel()) > 0)
    np.testing.assert_allclose(hd_quantile(-x, 1 - q), -got, rtol=0, atol=1e-13)
    # affine equivariance
    np.testing.assert_allclose(hd_quantile(3 * x + 2, q), 3 * got + 2, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------
# Groeneveld-Meeden skewness
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("quantiles", ["hd", "plain"])
def test_skewness_gm_exactly_zero_on_symmetric_sample(quantiles):
    y = np.random.default_rng(9).exponential(size=2000)
    x = np.concatenate([y, -y])  # exactly symmetric about 0
    assert abs(skewness_gm(x, quantiles=quantiles)) < 1e-12
    # location/scale invariance and sign flip
    z = np.random.default_rng(10).gamma(2.0, size=3000)
    b = skewness_gm(z, quantiles=quantiles)
    assert skewness_gm(5 * z - 3, quantiles=quantiles) == pytest.approx(b, rel=1e-10)
    assert skewness_gm(-z, quantiles=quantiles) == pytest.approx(-b, rel=1e-10)


@pytest.mark.parametrize("quantiles, n", [("hd", 20_000), ("plain", 200_000)])
def test_skewness_gm_normal_large_sample_near_zero(quantiles, n):
    stat = lambda x: skewness_gm(x, quantiles=quantiles)  # noqa: E731
    sampler = lambda rng, m: rng.normal(size=m)  # noqa: E731
    se = _se(stat, sampler, n)
    b = stat(np.random.default_rng(11).normal(size=n))
    assert abs(b) < 4 * se


@pytest.mark.parametrize("quantiles, n", [("hd", 20_000), ("plain", 1_000_000)])
def test_skewness_gm_exponential_population_value(quantiles, n):
    stat = lambda x: skewness_gm(x, quantiles=quantiles)  # noqa: E731
    sampler = lambda rng, m: rng.exponential(size=m)  # noqa: E731
    se = _se(stat, sampler, n)
    b = stat(np.random.default_rng(12).exponential(size=n))
    assert abs(b - BETA_EXP) < 4 * se
    # and the test discriminates: 4 SE is far below the distance to e.g. 0.4 or 0.5
    assert 4 * se < 0.04


@pytest.mark.parametrize("quantiles", ["hd", "plain"])
def test_skewness_gm_exponential_quantile_grid(quantiles):
    # Deterministic "ideal" sample x_i = F^{-1}((i - 1/2)/n): the estimator converges
    # to the population value with an O(1/n) discretisation error.
    n = 100_000
    p = (np.arange(n) + 0.5) / n
    x = -np.log1p(-p)
    assert skewness_gm(x, quantiles=quantiles) == pytest.approx(BETA_EXP, abs=20 / n)


def test_skewness_gm_chi2_1_population_value():
    # beta_GM of Z^2 for normal Z (chi2 with 1 dof), by quadrature: the reference value
    # of a calibrated normal dataset, below the 0.8 ZMS threshold.
    med = stats.chi2.median(1)
    mad = stats.chi2.expect(lambda x: abs(x - med), args=(1,))
    beta_ref = (1 - med) / mad
    assert 0.6 < beta_ref < 0.7
    n = 20_000
    stat = skewness_gm
    sampler = lambda rng, m: rng.normal(size=m) ** 2  # noqa: E731
    se = _se(stat, sampler, n)
    b = stat(np.random.default_rng(13).normal(size=n) ** 2)
    assert abs(b - beta_ref) < 4 * se


# ---------------------------------------------------------------------------------
# Crow-Siddiqui kurtosis
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("quantiles", ["hd", "plain"])
def test_kurtosis_cs_normal_quantile_grid(quantiles):
    n = 100_000
    x = stats.norm.ppf((np.arange(n) + 0.5) / n)
    k = kurtosis_cs(x, quantiles=quantiles)
    assert k == pytest.approx(KAPPA_NORMAL, abs=20 / n)
    assert k < -0.003  # the -2.91 is the rounded normal value: kappa_CS(normal) = -0.0042


@pytest.mark.parametrize("quantiles, n", [("hd", 20_000), ("plain", 1_000_000)])
def test_kurtosis_cs_normal_large_sample(quantiles, n):
    stat = lambda x: kurtosis_cs(x, quantiles=quantiles)  # noqa: E731
    sampler = lambda rng, m: rng.normal(size=m)  # noqa: E731
    se = _se(stat, sampler, n)
    k = stat(np.random.default_rng(14).normal(size=n))
    assert abs(k - KAPPA_NORMAL) < 4 * se


def test_kurtosis_cs_heavy_and_light_tails():
    n = 100_000
    p = (np.arange(n) + 0.5) / n
    for dist in (stats.t(3), stats.uniform()):
        ref = (dist.ppf(0.975) - dist.ppf(0.025)) / (dist.ppf(0.75) - dist.ppf(0.25)) - 2.91
        assert kurtosis_cs(dist.ppf(p), quantiles="plain") == pytest.approx(ref, abs=1e-3)
    assert kurtosis_cs(stats.t(3).ppf(p)) > 0.5 > -0.5 > kurtosis_cs(p)


# ---------------------------------------------------------------------------------
# Against an independent numpy implementation (plain quantiles)
# ---------------------------------------------------------------------------------


def _type7(xs, p):
    """R type-7 quantile of a sorted sample, written out."""
    h = (xs.size - 1) * p
    lo = int(np.floor(h))
    hi = min(lo + 1, xs.size - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def _median(xs):
    n = xs.size
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def _ref_shape(x):
    xs = np.sort(x)
    m = _median(xs)
    beta = (xs.sum() / xs.size - m) / (np.abs(xs - m).sum() / xs.size)
    q025, q25, q75, q975 = (_type7(xs, p) for p in CS_PROBS)
    return beta, (q975 - q025) / (q75 - q25) - 2.91


@pytest.mark.parametrize("n", [4, 5, 10, 333, 13885])
def test_plain_variant_matches_independent_implementation(n):
    rng = np.random.default_rng(n)
    u = rng.lognormal(sigma=0.7, size=n)
    E = u * rng.standard_t(5, size=n)
    for x in (u, E, rng.exponential(size=n)):
        beta, kappa = _ref_shape(x)
        assert skewness_gm(x, quantiles="plain") == pytest.approx(beta, rel=1e-12, abs=1e-12)
        assert kurtosis_cs(x, quantiles="PLAIN") == pytest.approx(kappa, rel=1e-12, abs=1e-12)
    s = shape_screen(E, u, quantiles="plain")
    for var, got_b, got_k in (
        (u**2, s.beta_u2, s.kappa_u2),
        (E**2, s.beta_E2, s.kappa_E2),
        ((E / u) ** 2, s.beta_Z2, s.kappa_Z2),
    ):
        beta, kappa = _ref_shape(var)
        assert got_b == pytest.approx(beta, rel=1e-12, abs=1e-12)
        assert got_k == pytest.approx(kappa, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n", [4, 50, 13885])
def test_hd_screen_matches_scipy_hdquantiles(n):
    rng = np.random.default_rng(100 + n)
    u = rng.gamma(2.0, size=n)
    E = u * rng.normal(size=n)
    s = shape_screen(E, u)
    assert s == shape_screen(E, u, quantiles="hd")
    for var, got_b, got_k in (
        (u**2, s.beta_u2, s.kappa_u2),
        (E**2, s.beta_E2, s.kappa_E2),
        ((E / u) ** 2, s.beta_Z2, s.kappa_Z2),
    ):
        med = float(hdquantiles(var, prob=[0.5])[0])
        q025, q25, q75, q975 = np.asarray(hdquantiles(var, prob=CS_PROBS))
        beta = (var.mean() - med) / np.abs(var - med).mean()
        kappa = (q975 - q025) / (q75 - q25) - 2.91
        assert got_b == pytest.approx(beta, rel=1e-11, abs=1e-12)
        assert got_k == pytest.approx(kappa, rel=1e-11, abs=1e-12)
        assert got_b == pytest.approx(skewness_gm(var), rel=1e-12, abs=1e-13)
        assert got_k == pytest.approx(kurtosis_cs(var), rel=1e-12, abs=1e-13)


# ---------------------------------------------------------------------------------
# Screen verdicts
# ---------------------------------------------------------------------------------

ALL_STATS = ["ZMS", "MZ", "VarZ", "ZMSE", "NLL", "RCE", "RCE2", "MSE", "MV", "ENCE", "UCE", "CC"]
Z_GROUP = {"ZMS", "MZ", "VarZ", "NLL"}
U_GROUP = {"RCE", "RCE2", "MSE", "MV"}  # screened on u2 and E2; CC and binned stats never


def _screen(bu, bE, bZ):
    return ShapeScreen(beta_u2=bu, beta_E2=bE, beta_Z2=bZ, kappa_u2=0.0, kappa_E2=0.0, kappa_Z2=0.0)


def test_well_behaved_dataset_passes():
    rng = np.random.default_rng(42)
    u = rng.uniform(1.0, 2.0, size=5000)
    E = u * rng.normal(size=5000)
    s = shape_screen(E, u)
    assert s.reliable_u2 and s.reliable_E2 and s.reliable_Z2
    assert s.beta_u2 < 0.3 and 0.55 < s.beta_Z2 < 0.72  # chi2_1 reference: 0.636
    assert not any(s.unreliable(name) for name in ALL_STATS)


def test_skewed_u2_fails_u2_screen():
    rng = np.random.default_rng(43)
    u = rng.lognormal(sigma=1.0, size=5000)  # u^2 lognormal(sigma=2): beta_GM ~ 0.9
    E = u * rng.normal(size=5000)
    s = shape_screen(E, u)
    assert s.beta_u2 > 0.8 and not s.reliable_u2
    assert s.reliable_Z2  # Z is still normal
    assert s.unreliable("RCE") and s.unreliable("mse")
    assert not s.unreliable("CC") and not s.unreliable("ENCE") and not s.unreliable("ZMS")


def test_heavy_tailed_Z_fails_Z2_and_E2_screens():
    rng = np.random.default_rng(44)
    u = rng.uniform(1.0, 2.0, size=20_000)
    E = u * rng.standard_t(2.5, size=20_000)
    s = shape_screen(E, u)
    assert s.reliable_u2
    assert s.beta_Z2 > 0.85 and not s.reliable_Z2
    assert not s.reliable_E2
    assert s.unreliable("ZMS") and s.unreliable("NLL")
    assert not s.unreliable("CC")


@pytest.mark.parametrize(
    "betas, failing",
    [
        ((0.1, 0.1, 0.1), set()),
        ((0.9, 0.1, 0.1), U_GROUP),
        ((0.1, 0.1, 0.9), Z_GROUP),
        ((0.1, 0.9, 0.1), U_GROUP),
        ((0.9, 0.9, 0.9), U_GROUP | Z_GROUP),
        ((0.6, 0.8, 0.8), set()),  # equal to the thresholds: still reliable
        ((0.6000001, 0.8, 0.8), U_GROUP),
    ],
)
def test_unreliable_mapping(betas, failing):
    s = _screen(*betas)
    for name in ALL_STATS:
        assert s.unreliable(name) is (name in failing), name
        assert s.unreliable(name.lower()) is (name in failing)


def test_custom_thresholds_and_frozen():
    s = _screen(0.5, 0.7, 0.7)
    assert s.reliable_u2 and s.reliable_E2 and s.reliable_Z2
    strict = dataclasses.replace(s, threshold_u2=0.4, threshold_Z2=0.65)
    assert not strict.reliable_u2 and strict.reliable_E2 and not strict.reliable_Z2
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.beta_u2 = 1.0  # type: ignore[misc]


# ---------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x, q, match",
    [
        ([1.0], 0.5, r"`x` must have at least 2 points, got 1"),
        ([], 0.5, r"`x` must not be empty"),
        ([1.0, np.nan, 2.0], 0.5, r"`x` must contain only finite values"),
        ([[1.0, 2.0], [3.0, 4.0]], 0.5, r"`x` must be one-dimensional"),
        ([1.0, 2.0, 3.0], 0.0, r"`q` must be in \(0, 1\)"),
        ([1.0, 2.0, 3.0], [0.5, 1.0], r"`q` must be in \(0, 1\)"),
        ([1.0, 2.0, 3.0], np.nan, r"`q` must be in \(0, 1\)"),
        ([1.0, 2.0, 3.0], "half", r"`q` must be a number in \(0, 1\)"),
        ([1.0, 2.0, 3.0], [], r"`q` must not be empty"),
    ],
)
def test_hd_quantile_errors(x, q, match):
    with pytest.raises(ValueError, match=match):
        hd_quantile(x, q)


@pytest.mark.parametrize("func", [skewness_gm, kurtosis_cs])
@pytest.mark.parametrize("quantiles", ["hd", "plain"])
def test_shape_stat_errors(func, quantiles):
    with pytest.raises(ValueError, match=r"`x` must have at least 4 points, got 3"):
        func([1.0, 2.0, 5.0], quantiles=quantiles)
    with pytest.raises(ValueError, match=r"`x` has a degenerate .* values are equal \(3\.0\)"):
        func(np.full(50, 3.0), quantiles=quantiles)
    with pytest.raises(ValueError, match=r"`x` must contain only finite values"):
        func([1.0, 2.0, np.inf, 4.0, 5.0], quantiles=quantiles)
    with pytest.raises(ValueError, match=r"`quantiles` must be one of 'hd', 'plain'; got 'median'"):
        func([1.0, 2.0, 3.0, 4.0], quantiles="median")


def test_kurtosis_plain_zero_iqr_is_degenerate():
    x = np.array([0.0] + [1.0] * 10 + [2.0])
    with pytest.raises(ValueError, match=r"`x` has a degenerate .* interquartile range is 0"):
        kurtosis_cs(x, quantiles="plain")
    assert np.isfinite(kurtosis_cs(x))  # HD quantiles: IQR > 0 for a non-constant sample
    assert np.isfinite(skewness_gm(x, quantiles="plain"))


def test_shape_screen_errors():
    rng = np.random.default_rng(1)
    u = rng.uniform(1, 2, size=20)
    E = rng.normal(size=20)
    with pytest.raises(ValueError, match=r"at least 4 points, got 3"):
        shape_screen(E[:3], u[:3])
    with pytest.raises(ValueError, match=r"`E` and `u` must have the same length"):
        shape_screen(E, u[:-1])
    with pytest.raises(ValueError, match=r"`u` must be > 0"):
        shape_screen(E, np.where(np.arange(20) == 5, 0.0, u))
    with pytest.raises(ValueError, match=r"`E` must contain only finite values"):
        shape_screen(np.where(np.arange(20) == 5, np.nan, E), u)
    with pytest.raises(ValueError, match=r"`quantiles` must be one of"):
        shape_screen(E, u, quantiles="type7")
    for q in ("hd", "plain"):
        homo = shape_screen(E, np.full(20, 0.5), quantiles=q)  # homoscedastic data is fine
        assert homo.beta_u2 == 0.0 and np.isnan(homo.kappa_u2) and homo.reliable_u2
        with pytest.raises(ValueError, match=r"`Z\*\*2` has a degenerate distribution"):
            shape_screen(np.zeros(20), u, quantiles=q)
        one_e = shape_screen(np.where(np.arange(20) % 2 == 0, 1.0, -1.0), u, quantiles=q)  # one |E|, as one u
        assert one_e.beta_E2 == 0.0 and np.isnan(one_e.kappa_E2) and one_e.reliable_E2


def test_unreliable_unknown_statistic():
    with pytest.raises(ValueError, match=r"unknown statistic 'PICP'; known statistics: ZMS, .*ENCE"):
        _screen(0.1, 0.1, 0.1).unreliable("PICP")
