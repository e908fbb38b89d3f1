"""mcref.recalibrate against the reference libraries, where they compute the same thing
(docs/methods.md, "Recalibration", "Against netcal and uncertainty-toolbox").

* netcal's ``regression.VarianceScaling`` is σ-scaling fitted by Gaussian NLL, whose minimum
  is in closed form: s² = ⟨z²⟩, our ``"zms"``. Same thing: agreement to rounding.
* uncertainty-toolbox has no closed-form σ-scaling: its ``optimize_recalibration_ratio``
  minimises a calibration-curve error (coverage of central Gaussian intervals), a different
  criterion. What it does provide is the Gaussian NLL (``metrics_scoring_rule.nll_gaussian``):
  our ``"zms"`` factor is the minimiser of that NLL over u' = s·u, checked with a scalar
  optimiser. Its coverage-based ratio is compared where the two criteria agree (normal
  errors: both estimate 1/s) and where they must differ (heavy tails of unit variance: the
  variance is right, the Gaussian quantiles are not).
* Both libraries' "isotonic" recalibration is Kuleshov et al.'s (2018) quantile
  recalibration: an isotonic map of the predicted CDF levels, not of the variance, so it has
  no counterpart here. Both build it on ``sklearn.isotonic.IsotonicRegression``; that
  regression of E² on u² (ties pooled, linear interpolation, clipped beyond the ends) is our
  ``"isotonic"``: agreement to rounding.

netcal needs torch, so none of these packages is a test dependency: each test skips when its
package is missing (measured agreement: docs/methods.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import mcref


def _heavy(M=20_000, seed=0, s=1.4, ties=False):
    """u² ~ IG(2, 2) (heavy-tailed u), E = u_true·t(4)/√2 (unit variance), u reported as s·u_true."""
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(2.0, 1.0 / 2.0, M))
    if ties:
        u = np.round(u, 1) + 0.05  # many tied u: the isotonic fits pool them first
    E = u * rng.standard_t(4, M) / np.sqrt(2.0)
    return E, s * u


def _normal(M=20_000, seed=1, s=1.4):
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(4.0, 1.0 / 4.0, M))
    return u * rng.normal(size=M), s * u


def _cases():
    yield "heavy", *_heavy()
    yield "normal", *_normal()
    for name in ("Diffusion_RF", "QM9_E", "logP_150k_LS-GCN"):
        ds = mcref.datasets.load(name)
        yield name, ds.E, ds.u


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_zms_is_netcal_variance_scaling(case):
    pytest.importorskip("torch")
    from netcal.regression import VarianceScaling

    _, E, u = case
    rec = mcref.recalibrate(E, u, "zms")
    vs = VarianceScaling().fit((np.zeros_like(u), u), E)
    assert float(vs._weight[0, 0]) == pytest.approx(rec.params["s"], rel=1e-13)
    np.testing.assert_allclose(vs.transform((np.zeros_like(u), u))[:, 0], rec.apply(u), rtol=1e-13, atol=0)


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_zms_minimises_the_uncertainty_toolbox_gaussian_nll(case):
    uct = pytest.importorskip("uncertainty_toolbox")
    from scipy.optimize import minimize_scalar

    _, E, u = case
    s = mcref.recalibrate(E, u, "zms").params["s"]
    zero = np.zeros_like(u)

    def nll(log_s):
        return uct.metrics_scoring_rule.nll_gaussian(zero, np.exp(log_s) * u, E)

    opt = minimize_scalar(nll, bracket=(-2.0, 2.0), tol=1e-12)
    # the NLL is flat at its minimum: the optimiser finds it to ~1e-9 (measured <= 9e-10)
    assert np.exp(opt.x) == pytest.approx(s, rel=1e-8)
    assert nll(np.log(s)) <= opt.fun + 1e-12


def test_uncertainty_toolbox_coverage_ratio_is_another_criterion():
    uct = pytest.importorskip("uncertainty_toolbox")

    # normal errors: the coverage-based ratio and the ZMS factor both estimate 1/s = 1/1.4
    E, u = _normal(M=20_000, s=1.4)
    rec = mcref.recalibrate(E, u, "zms")
    r = uct.recalibration.optimize_recalibration_ratio(np.zeros_like(u), u, E, criterion="ma_cal")
    # both within a few se of 1/s (the ratio's sampling sd is of the order of the factor's se)
    assert abs(rec.params["s"] - 1 / 1.4) < 4 * rec.se["s"]
    assert abs(r - 1 / 1.4) < 8 * rec.se["s"]
    # t(4)/√2 errors, unit variance: the ZMS factor still finds 1/s; matching Gaussian interval
    # coverages needs a smaller ratio (the t's central quantiles are narrower than N(0, 1)'s)
    E, u = _heavy(M=20_000, s=1.4)
    rec = mcref.recalibrate(E, u, "zms")
    r = uct.recalibration.optimize_recalibration_ratio(np.zeros_like(u), u, E, criterion="ma_cal")
    assert abs(rec.params["s"] - 1 / 1.4) < 4 * rec.se["s"]
    assert r < 1 / 1.4 - 10 * rec.se["s"]


@pytest.mark.parametrize("ties", [False, True])
def test_isotonic_is_sklearn_isotonic_regression_of_E2_on_u2(ties):
    pytest.importorskip("sklearn")
    from sklearn.isotonic import IsotonicRegression

    E, u = _heavy(M=5000, ties=ties)
    rec = mcref.recalibrate(E, u, "isotonic")
    iso = IsotonicRegression(increasing=True, out_of_bounds="clip").fit(u * u, E * E)
    rng = np.random.default_rng(5)
    u_new = np.concatenate([u, rng.uniform(0.5 * u.min(), 2 * u.max(), 2000)])  # inside and beyond the ends
    ref = iso.predict(u_new * u_new)
    assert ref.min() > rec.floor  # the floor does not bind: the same map
    np.testing.assert_allclose(rec.variance(u_new), ref, rtol=1e-10, atol=0)
    assert rec.params["n_blocks"] == len(np.unique(iso.y_thresholds_))


def test_isotonic_of_a_builtin_set_is_sklearns():
    pytest.importorskip("sklearn")
    from sklearn.isotonic import IsotonicRegression

    ds = mcref.datasets.load("Perovskite_GPR_Bayesian")
    rec = mcref.recalibrate(ds.E, ds.u, "isotonic")
    iso = IsotonicRegression(out_of_bounds="clip").fit(ds.u**2, ds.E**2)
    np.testing.assert_allclose(rec.variance(ds.u), np.maximum(iso.predict(ds.u**2), rec.floor), rtol=1e-10, atol=0)
