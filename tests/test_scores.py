"""Proper scoring rules (mcref.scores): against properscoring and scoringrules, against
independent closed forms and brute force (tests/naive.py, scipy), and statistical properties
with tolerances derived from their standard errors."""

from __future__ import annotations

import math

import naive
import numba
import numpy as np
import pytest
import scipy.stats as sps

import mcref
from mcref.calibration import nees
from mcref.generative import get_distribution
from mcref.scores import (CoverageTable, coverage_table, crps_ensemble, crps_normal, interval_score, mpiw,
                          nll_gaussian, nll_normal, normal_interval, picp)

RTOL = 1e-12


def _gauss_cases(seed: int, n: int = 2000):
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 3.0, n)
    sigma = rng.lognormal(0.0, 1.0, n)
    y = mu + sigma * rng.standard_normal(n) * rng.choice([0.2, 1.0, 5.0], n)  # central and far cases
    return y, mu, sigma


def _ensemble(seed: int, n: int = 300, m: int = 41):
    rng = np.random.default_rng(seed)
    y = rng.normal(0.0, 2.0, n)
    x = rng.normal(rng.normal(0.0, 1.0, (n, 1)), rng.uniform(0.2, 3.0, (n, 1)), (n, m))
    return y, x


# --------------------------------------------------------------------------- against other packages


def test_crps_normal_matches_properscoring():
    ps = pytest.importorskip("properscoring")
    y, mu, sigma = _gauss_cases(0)
    np.testing.assert_allclose(crps_normal(y, mu, sigma), ps.crps_gaussian(y, mu, sigma), rtol=RTOL, atol=0)


def test_crps_normal_matches_scoringrules():
    sr = pytest.importorskip("scoringrules")
    y, mu, sigma = _gauss_cases(1)
    want = sr.crps_normal(y, mu, sigma, backend="numpy")
    np.testing.assert_allclose(crps_normal(y, mu, sigma), want, rtol=RTOL, atol=0)


def test_crps_ensemble_matches_properscoring():
    ps = pytest.importorskip("properscoring")
    y, x = _ensemble(2)
    np.testing.assert_allclose(crps_ensemble(y, x), ps.crps_ensemble(y, x), rtol=RTOL, atol=0)


@pytest.mark.parametrize("estimator, sr_name", [("standard", "nrg"), ("fair", "fair")])
def test_crps_ensemble_matches_scoringrules(estimator, sr_name):
    sr = pytest.importorskip("scoringrules")
    y, x = _ensemble(3)
    want = sr.crps_ensemble(y, x, estimator=sr_name, backend="numpy")
    np.testing.assert_allclose(crps_ensemble(y, x, estimator=estimator), want, rtol=RTOL, atol=0)


def test_interval_score_matches_scoringrules():
    sr = pytest.importorskip("scoringrules")
    y, mu, sigma = _gauss_cases(4)
    alpha = np.array([0.5, 0.32, 0.1, 0.05])
    lo, hi = normal_interval(mu, sigma, alpha)  # (n, 4)
    want = sr.interval_score(y, lo, hi, alpha, backend="numpy")
    got = interval_score(y, lo, hi, alpha)
    assert got.shape == (y.size, 4)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    np.testing.assert_allclose(interval_score(y, lo[:, 2], hi[:, 2], 0.1),
                               sr.interval_score(y, lo[:, 2], hi[:, 2], 0.1, backend="numpy"), rtol=RTOL, atol=0)


def test_nll_normal_matches_scoringrules():
    sr = pytest.importorskip("scoringrules")
    y, mu, sigma = _gauss_cases(5)
    np.testing.assert_allclose(nll_normal(y, mu, sigma), sr.logs_normal(y, mu, sigma, backend="numpy"),
                               rtol=RTOL, atol=0)


# --------------------------------------------------------------------------- closed forms, brute force


@pytest.mark.parametrize("y, mu, sigma", [(0.0, 0.0, 1.0), (1.3, -0.4, 0.7), (-6.0, 1.0, 2.5), (25.0, 0.0, 3.0),
                                          (1e-3, 0.0, 1e-2)])
def test_crps_normal_is_the_integral_of_the_squared_cdf_difference(y, mu, sigma):
    want = naive.crps_integral(y, mu, sigma)
    assert crps_normal(y, mu, sigma) == pytest.approx(want, rel=1e-10, abs=0)


def test_crps_normal_of_calibration_data_is_shift_invariant_and_broadcasts():
    rng = np.random.default_rng(6)
    u = rng.uniform(0.5, 2.0, 500)
    y_ref = rng.normal(0, 10, 500)
    y_hat = y_ref - u * rng.standard_normal(500)
    E = y_ref - y_hat
    np.testing.assert_allclose(crps_normal(E, 0.0, u), crps_normal(y_ref, y_hat, u), rtol=1e-9)
    assert isinstance(crps_normal(0.0, 0.0, 1.0), float)
    assert crps_normal(0.0, 0.0, 1.0) == pytest.approx((math.sqrt(2) - 1) / math.sqrt(math.pi), rel=1e-15)
    grid = crps_normal(np.zeros((3, 1)), 0.0, np.array([0.5, 1.0, 2.0, 4.0]))
    assert grid.shape == (3, 4)
    np.testing.assert_allclose(grid[0], np.array([0.5, 1.0, 2.0, 4.0]) * grid[0, 1], rtol=1e-15)  # σ·CRPS(N(0, 1), 0)


@pytest.mark.parametrize("estimator", ["standard", "fair"])
def test_crps_ensemble_equals_the_double_sum(estimator):
    fair = estimator == "fair"
    y, x = _ensemble(7, n=200, m=23)
    want = [naive.crps_ensemble_pairs(y[i], x[i], fair) for i in range(y.size)]
    np.testing.assert_allclose(crps_ensemble(y, x, estimator=estimator), want, rtol=1e-12, atol=0)
    # ties (an integer-valued ensemble, y on a member), two members, and a large offset
    rng = np.random.default_rng(8)
    xt = rng.integers(-3, 4, (50, 12)).astype(float)
    yt = xt[:, 0].copy()
    want = [naive.crps_ensemble_pairs(yt[i], xt[i], fair) for i in range(50)]
    np.testing.assert_allclose(crps_ensemble(yt, xt, estimator=estimator), want, rtol=1e-12, atol=1e-15)
    x2 = rng.normal(size=(20, 2))
    want = [naive.crps_ensemble_pairs(0.3, x2[i], fair) for i in range(20)]  # fair: 0 when y is between
    np.testing.assert_allclose(crps_ensemble(0.3, x2, estimator=estimator), want, rtol=1e-12, atol=1e-15)
    off = 1e6 + x[:5]
    want = [naive.crps_ensemble_pairs(1e6 + y[i], off[i], fair) for i in range(5)]
    np.testing.assert_allclose(crps_ensemble(1e6 + y[:5], off, estimator=estimator), want, rtol=1e-8)


def test_crps_ensemble_axis_shapes_and_single_member():
    y, x = _ensemble(9, n=60, m=15)
    ref = crps_ensemble(y, x)
    np.testing.assert_array_equal(crps_ensemble(y, x.T, axis=0), ref)
    cube = x.reshape(6, 10, 15)
    assert crps_ensemble(y.reshape(6, 10), cube).shape == (6, 10)
    np.testing.assert_array_equal(crps_ensemble(y.reshape(6, 10), cube).ravel(), ref)
    assert isinstance(crps_ensemble(y[0], x[0]), float) and crps_ensemble(y[0], x[0]) == ref[0]
    # one member: the CRPS of a point forecast is the absolute error
    np.testing.assert_allclose(crps_ensemble(y, x[:, :1]), np.abs(x[:, 0] - y), rtol=1e-15)


def test_crps_ensemble_does_not_depend_on_the_number_of_threads():
    y, x = _ensemble(10, n=3000, m=50)
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = crps_ensemble(y, x, estimator="fair")
    finally:
        numba.set_num_threads(n0)
    np.testing.assert_array_equal(crps_ensemble(y, x, estimator="fair"), one)


def test_interval_score_brute_force_and_normal_interval():
    rng = np.random.default_rng(11)
    y = rng.normal(size=300)
    lo = rng.normal(-1, 0.5, 300)
    hi = lo + rng.exponential(1.0, 300)
    alpha = rng.uniform(0.01, 0.99, 300)
    want = [naive.interval_score(y[i], lo[i], hi[i], alpha[i]) for i in range(300)]
    np.testing.assert_allclose(interval_score(y, lo, hi, alpha), want, rtol=1e-15)
    assert interval_score(0.0, 0.0, 0.0, 0.5) == 0.0  # a degenerate interval containing y
    mu, sigma = rng.normal(size=300), rng.uniform(0.1, 2, 300)
    for a in (0.5, 0.1, 1e-6):
        l1, h1 = normal_interval(mu, sigma, a)
        l2, h2 = mu - sps.norm.isf(a / 2) * sigma, mu + sps.norm.isf(a / 2) * sigma
        np.testing.assert_allclose(l1, l2, rtol=1e-12)
        np.testing.assert_allclose(h1, h2, rtol=1e-12)
    lo4, hi4 = normal_interval(mu, sigma, [0.5, 0.1])
    assert lo4.shape == (300, 2)
    np.testing.assert_array_equal(hi4[:, 1], normal_interval(mu, sigma, 0.1)[1])


def test_picp_and_mpiw_per_level():
    y = np.array([0.0, 1.5, -3.0, 0.2])
    assert picp(y, -1.0, 1.0) == 0.5
    lo = np.array([[-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0], [-1.0, -2.0]])
    np.testing.assert_array_equal(picp(y, lo, -lo), [0.5, 0.75])
    np.testing.assert_array_equal(mpiw(lo, -lo), [2.0, 4.0])
    assert picp([1.0], 1.0, 2.0) == 1.0  # closed interval
    assert mpiw([0.0, 1.0], [1.0, 4.0]) == 2.0


def test_nll_gaussian_matches_scipy_multivariate_normal():
    rng = np.random.default_rng(12)
    n, d = 200, 3
    a = rng.standard_normal((n, d, d))
    cov = a @ np.swapaxes(a, 1, 2) + 0.3 * np.eye(d)
    mean = rng.standard_normal((n, d))
    y = mean + rng.standard_normal((n, d)) * 2
    want = [-sps.multivariate_normal(mean[i], cov[i]).logpdf(y[i]) for i in range(n)]
    got = nll_gaussian(y, mean, cov)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the Mahalanobis term is the NEES (same Cholesky kernel): NLL = ½[d ln 2π + 2d ln σ_G + ε]
    e, sg = nees(y, mean, cov)
    np.testing.assert_allclose(got, 0.5 * (d * math.log(2 * math.pi) + 2 * d * np.log(sg) + e), rtol=1e-12)
    # shared covariance, diagonal variances
    c0 = cov[0]
    np.testing.assert_allclose(nll_gaussian(y, mean, c0), -sps.multivariate_normal(np.zeros(d), c0).logpdf(y - mean),
                               rtol=1e-12)
    var = rng.uniform(0.5, 2, (n, d))
    want = -sps.norm.logpdf(y, mean, np.sqrt(var)).sum(axis=1)
    np.testing.assert_allclose(nll_gaussian(y, mean, var), want, rtol=1e-12)


def test_univariate_nll_from_errors_and_uncertainties():
    rng = np.random.default_rng(13)
    u = rng.uniform(0.5, 2.0, 1000)
    E = u * rng.standard_normal(1000)
    want = -sps.norm.logpdf(E, 0.0, u)
    np.testing.assert_allclose(nll_normal(E, 0.0, u), want, rtol=1e-13)
    np.testing.assert_allclose(nll_gaussian(E, 0.0, u**2), want, rtol=1e-12)
    assert isinstance(nll_normal(0.0, 0.0, 1.0), float)
    assert nll_normal(E, 0.0, u).mean() == pytest.approx(mcref.statistic("NLL", E, u), rel=1e-12)


# --------------------------------------------------------------------------- statistical properties


@pytest.mark.parametrize("estimator", ["standard", "fair"])
def test_ensemble_crps_of_a_large_normal_sample_approaches_the_closed_form(estimator):
    rng = np.random.default_rng(14)
    n, m = 400, 2000
    y = rng.standard_normal(n)
    x = rng.standard_normal((n, m))
    diff = crps_ensemble(y, x, estimator=estimator) - crps_normal(y, 0.0, 1.0)
    se = diff.std(ddof=1) / math.sqrt(n)
    # E[fair] = CRPS exactly (Ferro 2014); E[standard] = CRPS + E|X − X'|/(2m) = CRPS + 1/(m√π)
    bias = 0.0 if estimator == "fair" else 1.0 / (m * math.sqrt(math.pi))
    assert abs(diff.mean() - bias) < 4 * se


def test_expected_crps_is_minimised_at_the_true_sigma():
    rng = np.random.default_rng(15)
    n = 100_000
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.standard_normal(n)
    base = crps_normal(E, 0.0, u)
    for s in (0.8, 1.25):
        d = crps_normal(E, 0.0, s * u) - base  # paired: the same draws
        se = d.std(ddof=1) / math.sqrt(n)
        assert d.mean() > 4 * se, (s, d.mean(), se)
        # and it matches E[CRPS(N(0, s²u²), u·ε)] − E[CRPS(N(0, u²), u·ε)] = ⟨u⟩·g(s)
        g = math.sqrt(2 / math.pi) * (math.sqrt(1 + s * s) - math.sqrt(2)) - (s - 1) / math.sqrt(math.pi)
        assert abs(d.mean() - g * u.mean()) < 4 * se


@pytest.mark.parametrize("dist", ["normal", "t6", "uniform"])
def test_coverage_table_covers_at_the_nominal_levels(dist):
    n = 100_000
    rng = np.random.default_rng(16)
    u = rng.uniform(0.5, 2.0, n)
    E = u * get_distribution(dist).sample(n, seed=17)
    t = coverage_table(E, u, dist=dist)
    assert isinstance(t, CoverageTable) and t.n == n and t.dist in (dist, "t(6)")
    p = np.asarray((0.5, 0.68, 0.9, 0.95))
    np.testing.assert_array_equal(t.levels, p)
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(t.picp - p) < 4 * se), (t.picp, p)
    assert np.all((t.low <= t.picp) & (t.picp <= t.high))
    np.testing.assert_allclose(t.mpiw, 2 * t.q * u.mean(), rtol=1e-12)
    lo, hi = -np.outer(u, t.q), np.outer(u, t.q)
    np.testing.assert_allclose(t.interval_score, interval_score(E, lo, hi, 1 - p).mean(axis=0), rtol=1e-12)
    if dist == "normal":
        np.testing.assert_allclose(t.q, sps.norm.ppf((1 + p) / 2), rtol=1e-14)
    assert t.to_frame().shape == (4, 7)


def test_coverage_table_with_a_fitted_t():
    n = 100_000
    rng = np.random.default_rng(19)
    u = rng.uniform(0.5, 2.0, n)
    E = u * get_distribution("t6").sample(n, seed=20)
    t = coverage_table(E, u, dist="t(fit)")  # ν fitted to E/u (mcref.distfit)
    assert t.dist.startswith("t(fit")
    np.testing.assert_allclose(t.q, coverage_table(E, u, dist="t6").q, rtol=0.02)


def test_coverage_table_of_overconfident_uncertainties_undercovers():
    rng = np.random.default_rng(18)
    u = rng.uniform(0.5, 2.0, 50_000)
    E = u * rng.standard_normal(u.size)
    good, bad = coverage_table(E, u, levels=[0.9]), coverage_table(E, 0.5 * u, levels=[0.9])
    assert bad.picp[0] < bad.high[0] < 0.9 and bad.interval_score[0] > good.interval_score[0]
    assert sps.norm.cdf(0.5 * 1.6448536269514722) * 2 - 1 == pytest.approx(bad.picp[0], abs=0.01)


def test_scores_namespace_is_exported():
    assert mcref.scores.crps_normal is crps_normal
    assert "scores" in mcref.__all__


# --------------------------------------------------------------------------- input validation

Y3 = np.array([0.1, -0.2, 0.3])
X3 = np.arange(12.0).reshape(3, 4)
A = np.eye(2)


@pytest.mark.parametrize("call, match", [
    (lambda: crps_normal([1.0, np.nan], 0.0, 1.0),
     r"`y` must contain only finite values \(1 NaN and 0 infinite values, first at index 1\)"),
    (lambda: crps_normal(0.0, [[0.0, np.inf]], 1.0),
     r"`mu` must contain only finite values \(0 NaN and 1 infinite values, first at index \(0, 1\)\)"),
    (lambda: crps_normal(0.0, 0.0, [1.0, 0.0, -1.0]),
     r"`sigma` must be > 0 \(2 non-positive values, first at index 1\)"),
    (lambda: crps_normal(np.nan, 0.0, 1.0), r"`y` must be a finite number, got nan"),
    (lambda: crps_normal(Y3, [1.0, 2.0], 1.0),
     r"`y`, `mu` and `sigma` must broadcast to one shape, got shapes \(3,\), \(2,\), \(\)"),
    (lambda: crps_normal("a", 0.0, 1.0), r"`y` must be an array of real numbers"),
    (lambda: crps_normal([], 0.0, 1.0), r"`y` must not be empty"),
    (lambda: crps_ensemble(Y3, np.where(X3 > 5, np.nan, X3)),
     r"`samples` must contain only finite values \(6 NaN and 0 infinite values, first at index \(1, 2\)\)"),
    (lambda: crps_ensemble([0.0, np.inf, 0.0], X3), r"`y` must contain only finite values"),
    (lambda: crps_ensemble(Y3, X3[:, :1], estimator="fair"),
     r"`samples` must hold at least 2 members per case for estimator='fair', got 1"),
    (lambda: crps_ensemble(Y3, X3, estimator="nrg"), r"`estimator` must be one of 'standard', 'fair'; got 'nrg'"),
    (lambda: crps_ensemble(0.0, 1.0), r"`samples` must have an ensemble axis, got a scalar"),
    (lambda: crps_ensemble(Y3, X3, axis=2), r"`axis` must be an integer in \[-2, 1\] for `samples` of shape \(3, 4\)"),
    (lambda: crps_ensemble(Y3, X3, axis=0),
     r"`y` must have the shape of `samples` without its ensemble axis, \(4,\), got \(3,\)"),
    (lambda: crps_ensemble(Y3, np.empty((3, 0))), r"`samples` must not be empty"),
    (lambda: interval_score(Y3, -1.0, 1.0, 1.5), r"`alpha` must be in \(0, 1\), got 1.5"),
    (lambda: interval_score(Y3, -np.ones((3, 2)), np.ones((3, 2)), [0.1, 0.0]),
     r"`alpha` must be in \(0, 1\) \(1 values outside, first at index 1\)"),
    (lambda: interval_score(Y3, [0.0, 2.0, 0.0], 1.0, 0.1),
     r"`lower` must be <= `upper` \(1 intervals with lower > upper, first at index 1\)"),
    (lambda: interval_score(Y3, -np.ones(2), 1.0, 0.1),
     r"`y`, `lower`, `upper` and `alpha` must broadcast to one shape"),
    (lambda: interval_score(Y3, -1.0, [1.0, np.nan, 1.0], 0.1), r"`upper` must contain only finite values"),
    (lambda: normal_interval(0.0, 1.0, [[0.1]]),
     r"`alpha` must be a number or a 1-D array of levels, got shape \(1, 1\)"),
    (lambda: normal_interval([0.0, 1.0], [1.0, 1.0, 1.0], 0.1), r"`mu` and `sigma` must broadcast to one shape"),
    (lambda: normal_interval(0.0, -1.0, 0.1), r"`sigma` must be > 0, got -1.0"),
    (lambda: interval_score(0.0, 1.0, 0.5, 0.1), r"`lower` must be <= `upper`, got lower = 1.0 > upper = 0.5"),
    (lambda: interval_score(0.0, -1.0, 1.0, np.inf), r"`alpha` must be a finite number, got inf"),
    (lambda: picp(X3, -1.0, 1.0), r"`y` must be one-dimensional \(the cases\), got shape \(3, 4\)"),
    (lambda: picp(Y3, -np.ones(4), np.ones(4)),
     r"`lower` and `upper` must have the same shape \(n,\) or \(n, K\) with n = len\(y\) = 3, got \(4,\) and \(4,\)"),
    (lambda: picp(Y3, -np.ones(3), np.ones(3) * -2), r"`lower` must be <= `upper` \(3 intervals"),
    (lambda: mpiw(np.zeros(3), np.ones(4)),
     r"`lower` and `upper` must have the same shape \(n,\) or \(n, K\), got \(3,\) and \(4,\)"),
    (lambda: coverage_table(Y3, np.ones(3), levels=[0.5, 1.0]),
     r"`levels` must be a number or a 1-D sequence of levels in \(0, 1\)"),
    (lambda: coverage_table(Y3, [1.0, 0.0, 1.0]), r"`u` must be > 0"),
    (lambda: coverage_table(Y3, np.ones(3), dist="empirical"), r"`dist`: quantiles are available for normal"),
    (lambda: nll_gaussian(np.zeros((2, 2)), 0.0, np.stack([A, -A])),
     r"`cov` must be positive definite: 1 case\(s\) are not \(first at index 1\)"),
    (lambda: nll_gaussian(np.zeros((1, 2)), 0.0, np.array([[[1.0, 0.5], [0.0, 1.0]]])),
     r"`cov` must be symmetric; case 0 is not"),
    (lambda: nll_gaussian(np.zeros((2, 2)), 0.0, np.ones((3, 3))), r"`cov` must have shape \(n, d, d\)"),
    (lambda: nll_gaussian([0.0, np.nan], 0.0, 1.0),
     r"`y` must be finite \(1 case\(s\) with NaN/inf, first at index 1\)"),
    (lambda: nll_gaussian([0.0, 1.0], 0.0, np.nan), r"`cov` must be a finite number, got nan"),
    (lambda: nll_normal(0.0, 0.0, 0.0), r"`sigma` must be > 0, got 0.0"),
])
def test_input_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()
