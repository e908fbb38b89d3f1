"""Quantile calibration (QCE) and rank/PIT calibration (mcref.calibration): exact laws
(χ²_d of the NEES, uniform ranks), binomial tolerances, constructed inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as sps

from mcref.calibration import nees, qce, rank_calibration, uniformity


def _spd(rng, n, d):
    a = rng.standard_normal((n, d, d))
    return a @ np.swapaxes(a, 1, 2) + 0.5 * np.eye(d)


def _gauss(rng, mean, cov):
    L = np.linalg.cholesky(cov)
    return mean + np.einsum("nij,nj->ni", L, rng.standard_normal(mean.shape))


def test_nees_is_chi2_and_matches_numpy():
    rng = np.random.default_rng(0)
    n, d = 20_000, 3
    cov = _spd(rng, n, d)
    mean = rng.standard_normal((n, d))
    y = _gauss(rng, mean, cov)
    e, sg = nees(y, mean, cov)
    r = y - mean
    want = np.einsum("ni,ni->n", r, np.linalg.solve(cov, r[..., None])[..., 0])
    np.testing.assert_allclose(e, want, rtol=1e-9)
    np.testing.assert_allclose(sg, np.linalg.det(cov) ** (1 / (2 * d)), rtol=1e-9)
    assert sps.kstest(e, sps.chi2(d).cdf).pvalue > 1e-3


def test_mqce_near_zero_when_calibrated_and_exact_when_scaled():
    rng = np.random.default_rng(1)
    n, d = 40_000, 2
    cov = _spd(rng, n, d)
    mean = np.zeros((n, d))
    y = _gauss(rng, mean, cov)
    q = np.array([0.1, 0.5, 0.9])
    r = qce(y, mean, cov, quantiles=q)
    assert np.all(np.abs(r.coverage - q) < 4 * np.sqrt(q * (1 - q) / n))
    for s in (0.5, 2.0):  # predicted covariance s·cov: coverage = P(χ²_d ≤ s·χ²_d(τ))
        rs = qce(y, mean, s * cov, quantiles=q)
        want = sps.chi2.cdf(s * sps.chi2.ppf(q, d), d)
        assert np.all(np.abs(rs.coverage - want) < 4 * np.sqrt(want * (1 - want) / n))
        assert rs.value == pytest.approx(np.mean(np.abs(want - q)), abs=0.01)
        assert np.all(np.sign(rs.coverage - q) == np.sign(s - 1))  # overconfident: under-covers


def test_one_dimensional_qce_is_the_central_interval_coverage():
    rng = np.random.default_rng(2)
    u = rng.uniform(0.5, 2, 10_000)
    E = u * rng.standard_normal(u.size)
    r = qce(E, 0.0, u**2, quantiles=[0.5])
    assert r.coverage[0] == np.mean(np.abs(E / u) <= sps.norm.ppf(0.75))
    assert r.dim == 1 and np.array_equal(r.nees, (E / u) ** 2)


def test_cqce_bin_logic_on_constructed_input():
    """Two groups of σ_G (1 and 3) in 2 equal-width bins on [1, 3]: the first group covers
    τ = 0.5 in 30 of 40 cases, the second in 6 of 20; a third bin count below the threshold
    is dropped."""
    nees_small = np.r_[np.full(30, 0.1), np.full(10, 5.0)]  # 30/40 inside χ²_1(0.5) = 0.455
    nees_big = np.r_[np.full(6, 0.1), np.full(14, 5.0)]     # 6/20 inside
    u = np.r_[np.ones(40), 3 * np.ones(20)]
    E = np.sqrt(np.r_[nees_small, nees_big]) * u
    r = qce(E, 0.0, u**2, quantiles=[0.5], marginal=False, n_bins=2)
    assert r.bin_counts.tolist() == [40, 20]
    assert r.bin_coverage[0].tolist() == [0.75, 0.3]
    assert r.value == pytest.approx((40 * 0.25 + 20 * 0.2) / 60)
    r3 = qce(E, 0.0, u**2, quantiles=[0.5], marginal=False, n_bins=2, sample_threshold=21)
    assert r3.value == pytest.approx(0.25)  # only the bin of 40 is kept
    with pytest.raises(ValueError, match="no bin holds"):
        qce(E, 0.0, u**2, marginal=False, n_bins=2, sample_threshold=100)


def test_qce_input_validation():
    rng = np.random.default_rng(3)
    y = rng.standard_normal((10, 2))
    cov = np.tile(np.eye(2), (10, 1, 1))
    bad = cov.copy()
    bad[4] = [[1.0, 2.0], [2.0, 1.0]]  # indefinite
    with pytest.raises(ValueError, match="positive definite.*index 4"):
        qce(y, np.zeros((10, 2)), bad)
    asym = cov.copy()
    asym[7, 0, 1] = 0.5
    with pytest.raises(ValueError, match="symmetric; case 7"):
        qce(y, np.zeros((10, 2)), asym)
    with pytest.raises(ValueError, match="`cov` must have shape"):
        qce(y, np.zeros((10, 2)), np.ones((10, 3)))
    with pytest.raises(ValueError, match="finite"):
        qce(np.r_[np.nan, 1.0], 0.0, np.ones(2))
    with pytest.raises(ValueError, match="quantiles"):
        qce(y, np.zeros((10, 2)), cov, quantiles=[1.5])
    assert qce(y, np.zeros(2), np.eye(2)).dim == 2  # shared mean and covariance broadcast


def test_ranks_uniform_for_calibrated_samplers_including_ties():
    rng = np.random.default_rng(4)
    mu = rng.standard_normal(4000)
    y = mu + rng.standard_normal(mu.size)
    c = rank_calibration(y, mu[:, None] + rng.standard_normal((mu.size, 49)), seed=1)
    assert sps.kstest(c, "uniform").pvalue > 1e-3
    # discrete predictive distributions (many ties): the randomized rank is still uniform
    lam = rng.uniform(1, 4, 4000)
    yk = rng.poisson(lam).astype(float)
    ck = rank_calibration(yk, rng.poisson(lam[:, None], (4000, 30)).astype(float), seed=2)
    assert sps.kstest(ck, "uniform").pvalue > 1e-3


def test_calibrated_but_not_sharp():
    """μ ~ N(0, 1), Y ~ N(μ, 1): predicting N(0, 2) ignores μ but is calibrated; N(μ, 1) is
    calibrated and sharper; N(μ, 0.5²) is over-confident."""
    rng = np.random.default_rng(5)
    mu = rng.standard_normal(5000)
    y = mu + rng.standard_normal(mu.size)
    wide = rank_calibration(y, math.sqrt(2) * rng.standard_normal((mu.size, 99)), seed=1)
    sharp = rank_calibration(y, mu[:, None] + rng.standard_normal((mu.size, 99)), seed=1)
    narrow = rank_calibration(y, mu[:, None] + 0.5 * rng.standard_normal((mu.size, 99)), seed=1)
    assert uniformity(wide).inside and uniformity(sharp).inside
    assert not uniformity(narrow).inside


def test_shapes_of_over_and_under_dispersed_predictions():
    rng = np.random.default_rng(6)
    y = rng.standard_normal(5000)
    under = rank_calibration(y, 0.5 * rng.standard_normal((5000, 99)), seed=1)  # too narrow: ∪
    over = rank_calibration(y, 2.0 * rng.standard_normal((5000, 99)), seed=1)  # too wide: ∩
    biased = rank_calibration(y, 0.7 + rng.standard_normal((5000, 99)), seed=1)  # shifted: slope
    edges = lambda c: np.mean((c < 0.1) | (c > 0.9))  # noqa: E731
    assert edges(under) > 0.3 and edges(over) < 0.1
    assert np.mean(biased < 0.5) > 0.65  # the truth sits low among samples shifted up
    u = uniformity(under)
    assert not u.inside and u.chi2_pvalue < 1e-10 and u.counts[0] > u.counts[10]


def test_surprisal_mode_for_vector_outputs():
    rng = np.random.default_rng(7)
    n, d, S = 1500, 2, 60
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    Li = np.linalg.inv(np.linalg.cholesky(cov))
    mean = rng.standard_normal((n, d))
    y = mean + rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T
    samples = mean[:, None, :] + rng.standard_normal((n, S, d)) @ np.linalg.cholesky(cov).T

    def logpdf(x, i, scale=1.0):
        w = (x - mean[i]) @ Li.T / math.sqrt(scale)
        return -0.5 * np.sum(w * w, axis=-1)

    c = rank_calibration(y, samples, logpdf=logpdf, seed=1)
    assert sps.kstest(c, "uniform").pvalue > 1e-3
    wide = rank_calibration(y, mean[:, None, :] + 2 * (samples - mean[:, None, :]), seed=1,
                            logpdf=lambda x, i: logpdf(x, i, 4.0))
    assert np.mean(wide < 0.5) > 0.65  # the truth is more probable than samples from a too-wide predictive
    with pytest.raises(ValueError, match="surprisal mode needs"):
        rank_calibration(y, samples[:, :, 0], logpdf=logpdf)
    with pytest.raises(ValueError, match="`truth` must have shape"):
        rank_calibration(y, samples)


def test_simultaneous_band_covers_95_percent_of_calibrated_samples():
    """300 calibrated samples of n = 200 uniforms: the fraction inside the simultaneous band is
    0.95 within 4 binomial standard errors; the pointwise band is exceeded somewhere far more
    often."""
    rng = np.random.default_rng(8)
    res = [uniformity(rng.uniform(size=200), seed=1) for _ in range(300)]
    frac = np.mean([r.inside for r in res])
    assert abs(frac - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 300)
    pointwise_ok = np.mean([np.all(np.abs(r.deviation) <= r.pointwise) for r in res])
    assert pointwise_ok < 0.8
    r = res[0]
    assert np.allclose(r.pointwise, 1.959963984540054 * np.sqrt(r.grid * (1 - r.grid) / 200))
    assert r.h > 1.96


def test_uniformity_validation():
    with pytest.raises(ValueError, match="values in \\[0, 1\\]"):
        uniformity(np.array([0.5, 1.5]))


def test_calibration_plots_render(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mcref.plots import plot_qce, plot_rank_calibration

    rng = np.random.default_rng(9)
    y = rng.standard_normal(500)
    ax = plot_rank_calibration(rank_calibration(y, rng.standard_normal((500, 49)), seed=1))
    assert len(ax.figure.axes) == 2 and ax.has_data()
    ax.figure.savefig(tmp_path / "rank.png")
    ax2 = plot_qce(qce(y, 0.0, np.ones(500), marginal=False))
    assert ax2.has_data()
    plt.close("all")


def test_old_keyword_spellings_are_deprecated_aliases():
    """One spelling per concept (docs/api.rst, "Conventions"): bins -> n_bins, n_sim -> n_mc,
    level -> confidence_level; the old ones work for one release, with a warning."""
    from mcref.core._warnings import MCRefDeprecationWarning

    c = np.random.default_rng(3).uniform(size=300)
    new = uniformity(c, n_bins=10, n_mc=500, confidence_level=0.9, seed=2)
    with pytest.warns(MCRefDeprecationWarning, match=r"uniformity\(\): `\w+` is now spelled") as rec:
        old = uniformity(c, bins=10, n_sim=500, level=0.9, seed=2)
    said = sorted(str(w.message).split("`")[1] for w in rec)
    assert said == ["bins", "level", "n_sim"]
    assert (old.h, old.chi2_pvalue) == (new.h, new.chi2_pvalue)
    with pytest.raises(TypeError, match=r"got `bins` and `n_bins`: pass `n_bins` only"):
        uniformity(c, bins=10, n_bins=10)
    E = np.random.default_rng(4).normal(size=400)
    u = np.ones(400)
    with pytest.warns(MCRefDeprecationWarning, match=r"qce\(\): `bins` is now spelled `n_bins`"):
        assert qce(E, 0.0, u, marginal=False, bins=4).value == qce(E, 0.0, u, marginal=False, n_bins=4).value
