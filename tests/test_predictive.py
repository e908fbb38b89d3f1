"""mcref.predictive: ensembles, quantiles, intervals and estimators checked against closed forms
(calibrated Gaussian predictive distributions: coverage within binomial noise, uniform ranks,
the expected interval score and CRPS), miscalibrated ones refused, bad input named."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from scipy import stats as st

import mcref
from mcref import predictive


def gaussian_cases(seed: int, M: int, *, spread: float = 1.0):
    """Predictive N(mu, sd²) per case; y drawn from N(mu, (spread·sd)²) (spread 1: calibrated)."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=M)
    sd = rng.uniform(0.5, 2.0, M)
    y = mu + spread * sd * rng.normal(size=M)
    x = rng.uniform(0, 1, M)
    return rng, mu, sd, y, x


def within_binomial_noise(row, k_se: float = 4.0) -> bool:
    se = np.sqrt(row.expected * (1 - row.expected) / row.n)
    return abs(row.observed - row.expected) <= k_se * se


def test_calibrated_ensemble_covers_and_ranks_uniformly():
    rng, mu, sd, y, x = gaussian_cases(1, 4000)
    draws = mu[:, None] + sd[:, None] * rng.normal(size=(4000, 50))
    res = mcref.from_samples(y, draws, x=x, verdict=False, seed=2, n_swaps=0)
    assert np.array_equal(res.dataset.E, y - draws.mean(axis=1))
    assert np.allclose(res.dataset.u, np.sqrt(((draws - draws.mean(1, keepdims=True)) ** 2).sum(1) / 49))
    assert [r.expected for r in res.coverage] == list(predictive.DEFAULT_LEVELS)
    assert all(within_binomial_noise(r) for r in res.coverage)
    assert res.uniformity.chi2_pvalue > 1e-3 and res.ks_pvalue > 1e-3
    assert res.coverage_verdict == "valid" and res.pit_verdict == "valid"
    assert res.combined is None  # n_swaps=0: no combined verdict (tests/test_ensemble_null.py checks it)
    # fair ensemble CRPS is unbiased for the CRPS of the distribution the draws come from
    exact = mcref.scores.crps_normal(y, mu, sd)
    ens = mcref.scores.crps_ensemble(y, draws, estimator="fair")
    se = np.std(ens - exact, ddof=1) / np.sqrt(y.size)
    assert abs(res.crps - exact.mean()) < 5 * se
    assert {(loc.level, loc.along) for loc in res.local} == {(p, a) for p in predictive.DEFAULT_LEVELS
                                                            for a in ("width", "x")}


def test_too_narrow_ensemble_is_refused():
    rng, mu, sd, y, x = gaussian_cases(3, 4000, spread=1.4)
    draws = mu[:, None] + sd[:, None] * rng.normal(size=(4000, 50))
    res = mcref.from_samples(y, draws, verdict=False, seed=4, n_swaps=99)
    assert res.coverage_verdict == "invalid" and res.pit_verdict == "invalid" and res.verdict == "invalid"
    assert res.combined.verdict == "invalid" and res.combined.p == pytest.approx(0.01)
    assert all(r.observed < r.expected for r in res.coverage)


def test_small_ensemble_summary_follows_the_t_closed_form():
    """Z = E/u for m Gaussian draws: E[Z²] = (1 + 1/m)(m − 1)/(m − 3)."""
    m, M = 10, 40_000
    rng, mu, sd, y, _ = gaussian_cases(5, M)
    draws = mu[:, None] + sd[:, None] * rng.normal(size=(M, m))
    res = mcref.from_samples(y, draws, verdict=False, seed=6, n_swaps=0)
    z2 = res.dataset.Z ** 2
    expected = (1 + 1 / m) * (m - 1) / (m - 3)
    assert abs(z2.mean() - expected) < 5 * z2.std(ddof=1) / np.sqrt(M)
    assert any("E[Z²]" in n for n in res.notes)
    assert res.pit_verdict == "valid"  # the rank test is exact at any m


def test_validate_verdict_is_included_and_seeded():
    import warnings

    rng, mu, sd, y, _ = gaussian_cases(7, 1500)
    draws = mu[:, None] + sd[:, None] * rng.normal(size=(1500, 400))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.FewReplicatesWarning)
        a = mcref.from_samples(y, draws, seed=8, stats=["ZMS", "CC"], n_boot=200, n_mc=200, n_swaps=49)
        b = mcref.from_samples(y, draws, seed=8, stats=["ZMS", "CC"], n_boot=200, n_mc=200, n_swaps=49)
    assert a.validation is not None and [r.name for r in a.validation.rows] == ["ZMS", "CC"]
    assert a.validation.to_json() == b.validation.to_json()
    assert np.array_equal(a.pit, b.pit)
    assert "validate (E, u): ZMS" in str(a)
    # validate's statistics are the combined verdict's statistics of (E, u)
    assert [t.name for t in a.combined.tests if t.kind == "validate"] == ["ZMS", "CC"]
    assert a.combined.record() == b.combined.record() and "combined verdict" in str(a)


def test_quantiles_closed_form_and_a_shifted_model():
    rng, mu, sd, y, x = gaussian_cases(9, 5000)
    tau = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    q = mu[:, None] + sd[:, None] * special.ndtri(tau)[None, :]
    res = mcref.from_quantiles(y, q, tau, x=x)
    kinds = [r.kind for r in res.coverage]
    assert kinds == ["quantile"] * 5 + ["central"] * 2
    assert [r.expected for r in res.coverage[5:]] == pytest.approx([0.5, 0.9])
    assert all(within_binomial_noise(r) for r in res.coverage)
    # interval score of the central 1 − α interval of N(mu, sd²): E[S] = 4·sd·φ(z)/α, z = Φ⁻¹(1 − α/2)
    for r in res.coverage[5:]:
        a = 1 - r.expected
        z = special.ndtri(1 - a / 2)
        lo, hi = mu - z * sd, mu + z * sd
        s = mcref.scores.interval_score(y, lo, hi, a)
        assert abs(r.interval_score - np.mean(4 * sd * st.norm.pdf(z) / a)) < 5 * s.std(ddof=1) / np.sqrt(y.size)
    shifted = mcref.from_quantiles(y, q + 0.3 * sd[:, None], tau)
    assert shifted.coverage_verdict == "invalid"
    p_shift = st.norm.cdf(0.3)  # P(y <= median + 0.3 sd) for a calibrated Gaussian
    assert abs(shifted.coverage[2].observed - p_shift) < 4 * np.sqrt(p_shift * (1 - p_shift) / y.size)


def test_intervals_local_coverage_along_x_sees_a_feature_dependent_miss():
    rng, mu, sd, y, x = gaussian_cases(10, 6000)
    z = special.ndtri(0.95)
    good = mcref.from_intervals(y, mu - z * sd, mu + z * sd, 0.9, x=x)
    assert good.coverage_verdict == "valid"
    assert within_binomial_noise(good.coverage[0])
    # intervals too narrow where x > 0.5, too wide elsewhere: overall coverage about right
    f = np.where(x > 0.5, 0.6, 1.6)
    bad = mcref.from_intervals(y, mu - z * sd * f, mu + z * sd * f, 0.9, x=x)
    along = {loc.along: loc for loc in bad.local}
    g_along = {loc.along: loc for loc in good.local}
    assert along["x"].n_off >= along["x"].n_bins - 2 and g_along["x"].n_off <= 2
    assert np.allclose(bad.dataset.E, y - mu) and np.allclose(bad.dataset.u, f * sd)


def test_estimators_with_return_std_and_pred_dist():
    from sklearn.linear_model import ARDRegression, BayesianRidge, LinearRegression

    rng = np.random.default_rng(11)
    X = rng.normal(size=(4000, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=4000)
    for est in (BayesianRidge(), ARDRegression()):
        est.fit(X[:2000], y[:2000])
        res = mcref.from_estimator(est, X[2000:], y[2000:], verdict=False)
        mean, std = est.predict(X[2000:], return_std=True)
        assert np.array_equal(res.dataset.E, y[2000:] - mean) and np.array_equal(res.dataset.u, std)
        assert np.allclose(res.pit, st.norm.cdf((y[2000:] - mean) / std))
        assert all(within_binomial_noise(r) for r in res.coverage) and res.pit_verdict == "valid"
        assert res.crps == pytest.approx(mcref.scores.crps_normal(y[2000:], mean, std).mean())

    class Dist:  # NGBoost's Normal: .params and .loc/.scale
        def __init__(self, loc, scale):
            self.loc, self.scale = loc, scale

    class NGBoostLike:
        def pred_dist(self, X):
            return Dist(X @ np.array([1.0, -2.0, 0.5]), np.full(len(X), 0.5))

    res = mcref.from_estimator(NGBoostLike(), X, y, verdict=False)
    assert res.coverage_verdict == "invalid" and np.all(res.dataset.u == 0.5)  # sd 1 predicted as 0.5
    with pytest.raises(ValueError, match=r"LinearRegression has no predict\(X, return_std=True\)"):
        mcref.from_estimator(LinearRegression().fit(X, y), X, y)


@pytest.mark.parametrize("call, message", [
    (lambda y, d: mcref.from_samples(y, np.where(np.arange(d.size).reshape(d.shape) == 7, np.nan, d)),
     r"`samples` must contain only finite values: 1 NaN .* first at row 1, column 2"),
    (lambda y, d: mcref.from_samples(y, d[:, :1]), r"at least 2 draws per case"),
    (lambda y, d: mcref.from_samples(y[:-1], d), r"`samples` must have shape \(99, m\)"),
    (lambda y, d: mcref.from_samples(y, np.ones_like(d)), r"all equal \(u = 0\)"),
    (lambda y, d: mcref.from_samples(y, d, levels=[0.5, 1.0]), r"`levels` must lie in \(0, 1\).*1\.0"),
    (lambda y, d: mcref.from_quantiles(y, d[:, :3], [0.1, 0.5, 0.9]), r"`quantiles` must be non-decreasing.*first at row"),
    (lambda y, d: mcref.from_quantiles(y, np.sort(d[:, :2]), [0.0, 0.5]), r"`levels` must lie in \(0, 1\)"),
    (lambda y, d: mcref.from_quantiles(y, np.sort(d[:, :2]), [0.9, 0.1]), r"strictly increasing"),
    (lambda y, d: mcref.from_quantiles(y, np.sort(d[:, :2]), [0.1, 0.5, 0.9]), r"must have shape \(100, 3\)"),
    (lambda y, d: mcref.from_intervals(y, d[:, 1], d[:, 0] - 10, 0.9), r"`lo` must not exceed `hi`.*first at row 0"),
    (lambda y, d: mcref.from_intervals(y, d[:, 0] - 9, d[:, 0] + 9, 1.5), r"`level` must lie in \(0, 1\)"),
])
def test_bad_input_is_named(call, message):
    rng = np.random.default_rng(0)
    y = rng.normal(size=100)
    d = rng.normal(size=(100, 5))
    with pytest.raises(ValueError, match=message):
        call(y, d)


def test_headline_of_gaussian_forms_is_bonferroni_over_its_parts():
    """Without a swap null the headline combines coverage, PIT (and validate) by Bonferroni: its
    p is k·min of the parts' own p, recomputed here from scipy on the same data."""
    from sklearn.linear_model import BayesianRidge

    rng = np.random.default_rng(21)
    X = rng.normal(size=(1200, 2))
    y = X @ np.array([1.0, -1.0]) + 1.3 * rng.normal(size=1200)  # noise 1.3 vs the model's ~1.3
    est = BayesianRidge().fit(X[:600], y[:600])
    res = mcref.from_estimator(est, X[600:], y[600:], verdict=False)
    mean, std = est.predict(X[600:], return_std=True)
    z = (y[600:] - mean) / std
    pit = st.norm.cdf(z)
    cov = [st.binomtest(int(np.count_nonzero(np.abs(pit - 0.5) <= p / 2)), pit.size, p).pvalue
           for p in (r.expected for r in res.coverage)]
    p_cov = min(1.0, len(cov) * min(cov))
    p_pit = min(1.0, 2 * min(res.uniformity.chi2_pvalue, st.kstest(pit, "uniform").pvalue))
    assert res.part_pvalues == pytest.approx({"coverage": p_cov, "PIT": p_pit}, rel=1e-9)
    assert res.p == pytest.approx(min(1.0, 2 * min(p_cov, p_pit)), rel=1e-9)
    assert res.verdict == ("invalid" if res.p <= 0.05 else "valid")
    assert "Bonferroni over 2 parts" in str(res) and res.record()["p"] == res.p


@pytest.mark.slow  # about 60 s: the local-coverage diagnostics of 300 sets
def test_headline_of_gaussian_forms_keeps_its_size():
    """300 calibrated Gaussian sets (M = 300): the headline's rejection rate stays within α plus
    2.5 binomial standard errors (any-part-at-α would allow up to about 2α)."""
    n, hits = 300, 0
    for s in range(n):
        rng, mu, sd, y, _ = gaussian_cases(1000 + s, 300)

        class Gauss:
            def predict(self, X, return_std=False):
                return (mu, sd) if return_std else mu

        hits += mcref.from_estimator(Gauss(), np.zeros((300, 1)), y, verdict=False).verdict == "invalid"
    se = np.sqrt(0.05 * 0.95 / n)
    assert hits / n <= 0.05 + 2.5 * se
