"""Tests of mcref.workflows._recalibrate: recalibrate (zms, rce, bvs, poly, isotonic) and the
cross-fitted validation recalibrate_cv (docs/methods.md, "Recalibration")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import mcref
import mcref.workflows._recalibrate as rc
from mcref import ClippedVarianceWarning, recalibrate, recalibrate_cv


def _data(seed, M=20_000, *, alpha=4.0, tails="normal"):
    """Calibrated (E, u): u² ~ IG(alpha, alpha) (mean alpha/(alpha-1)), E = u·ε with unit-variance ε."""
    rng = np.random.default_rng(seed)
    u = np.sqrt(alpha / rng.gamma(alpha, 1.0, M))
    eps = rng.normal(size=M) if tails == "normal" else rng.standard_t(4, M) / math.sqrt(2.0)
    return u * eps, u


# ------------------------------------------------------------------ recovery of the factor

@pytest.mark.parametrize("s", [0.7, 1.4])
@pytest.mark.parametrize("method", ["zms", "rce"])
def test_scale_factor_recovered_within_its_se(method, s):
    E, u = _data(1)
    rec = recalibrate(E, s * u, method)
    assert rec.method == method and rec.M == u.size
    assert abs(rec.params["s"] - 1 / s) < 4 * rec.se["s"]
    assert 0 < rec.se["s"] < 0.02
    np.testing.assert_allclose(rec.apply(s * u), rec.params["s"] * s * u)
    text = str(rec)
    assert method in text and "±" in text and f"{rec.params['s']:.6g}" in text


@pytest.mark.parametrize("s", [0.7, 1.4])
def test_bvs_factors_recovered_within_per_bin_se(s):
    E, u = _data(2)
    n_bins = 20
    rec = recalibrate(E, s * u, "bvs", n_bins=n_bins)
    assert len(rec.params) == n_bins
    # every bin within its own se, Bonferroni over the bins at a 0.1 % family-wise level
    k = sps.norm.ppf(1 - 0.001 / (2 * n_bins))
    for name, v in rec.params.items():
        assert abs(v - 1 / s) < k * rec.se[name], (name, v, rec.se[name])
    assert np.all(np.diff(rec.knots) > 0)  # bin centres: medians of ln u, increasing


def test_bvs_interpolates_in_ln_u_and_is_constant_beyond_the_ends():
    E, u = _data(3, M=3000)
    rec = recalibrate(E, u, "bvs", n_bins=5)
    c, v = rec.knots, rec.values
    lo, hi = math.exp(c[0]) / 10, math.exp(c[-1]) * 10
    np.testing.assert_allclose(rec.apply([lo, hi]), [math.sqrt(v[0]) * lo, math.sqrt(v[-1]) * hi])
    mid = math.exp(0.25 * c[1] + 0.75 * c[2])
    np.testing.assert_allclose(rec.apply([mid])[0] ** 2, (0.25 * v[1] + 0.75 * v[2]) * mid**2)
    # a covariate instead of u
    x = np.random.default_rng(0).uniform(size=u.size)
    rx = recalibrate(E, u, "bvs", x=x, n_bins=5)
    assert rx.on_x and "bins of x" in str(rx)
    assert rx.apply(u[:3], x=x[:3]).shape == (3,)
    with pytest.raises(ValueError, match=r"`x` is required"):
        rx.apply(u[:3])
    with pytest.raises(ValueError, match=r"`x` must be None: this 'bvs' recalibrator was not fitted on a covariate"):
        rec.apply(u[:3], x=x[:3])


@pytest.mark.parametrize("s", [0.7, 1.4])
def test_poly_recovers_b_and_a(s):
    E, u = _data(4)
    rec = recalibrate(E, s * u, "poly")
    assert set(rec.params) == {"a", "b"}
    assert abs(rec.params["b"] - 1 / s**2) < 4 * rec.se["b"]
    assert abs(rec.params["a"]) < 4 * rec.se["a"]
    rec2 = recalibrate(E, s * u, "poly", degree=2)
    assert set(rec2.params) == {"a", "b", "c"} and "c·u⁴" in str(rec2)
    assert abs(rec2.params["c"]) < 4 * rec2.se["c"]


def test_poly_clips_negative_variances_and_warns():
    rec = rc.Recalibrator("poly", {"a": -1.0, "b": 1.0}, {"a": 0.1, "b": 0.1}, 2000, floor=1e-6)
    with pytest.warns(ClippedVarianceWarning, match=r"clipped at the floor"):
        out = rec.apply([0.5, 2.0])
    np.testing.assert_allclose(out, [1e-3, math.sqrt(3.0)])


def test_isotonic_in_sample_zms_is_one_and_map_is_monotone():
    E, u = _data(6)
    rec = recalibrate(E, 1.4 * u, "isotonic")
    up = rec.apply(1.4 * u)
    assert abs(np.mean((E / up) ** 2) - 1) < 1e-9  # pooled blocks: Σ E²/u'² = n per block
    grid = np.linspace(0.3, 3, 200)
    assert np.all(np.diff(rec.apply(grid)) >= 0)
    assert rec.se == {} and "isotonic" in str(rec)
    # constant beyond the fitted points
    np.testing.assert_allclose(rec.apply([1e-3, 1e3]), np.sqrt([rec.values[0], rec.values[-1]]))


# ------------------------------------------------------------------ standard errors

@pytest.mark.parametrize("method, param", [("zms", "s"), ("rce", "s"), ("poly", "b")])
def test_stated_se_matches_sd_over_datasets(method, param):
    # delta method (zms, rce) and the HC0 sandwich (poly; the homoscedastic OLS se is ~4x too small)
    n = 50
    fits = [recalibrate(*(lambda E, u: (E, 1.4 * u))(*_data(c)), method)
            for c in np.random.SeedSequence(7).spawn(n)]
    sd = np.std([f.params[param] for f in fits], ddof=1)
    se = np.mean([f.se[param] for f in fits])
    tol = 1 + 3 / math.sqrt(2 * (n - 1))  # 3 relative se of a sample sd of n values: 1.30
    assert 1 / tol < se / sd < tol, (se, sd)


# ------------------------------------------------------------------ heavy tails

def _pair(E, u):
    a, b = recalibrate(E, u, "zms"), recalibrate(E, u, "rce")
    return a.params["s"], b.params["s"], math.hypot(a.se["s"], b.se["s"]), a.se["s"], b.se["s"]


def test_zms_and_rce_factors_agree_on_a_pure_scale_error():
    # light tails: same factor within 2 combined se
    s1, s2, se, *_ = _pair(*(lambda E, u: (E, 1.4 * u))(*_data(8)))
    assert abs(s1 - s2) < 2 * se
    # heavy tails (u² ~ IG(2, 2), t(4)): both still estimate 1/s, but MSE/MV is much noisier
    E, u = _data(8, alpha=2.0, tails="t4")
    s1, s2, se, se_zms, se_rce = _pair(E, 1.4 * u)
    assert abs(s1 - s2) < 2 * se
    assert se_rce > 1.3 * se_zms


def test_zms_and_rce_factors_differ_when_miscalibration_depends_on_u():
    # u reported as √u: ZMS weights every point alike, MSE/MV weights them by u², so the two
    # factors estimate different things; heavy-tailed u widens the gap
    gaps = {}
    for name, kw in {"light": {}, "heavy": {"alpha": 2.0, "tails": "t4"}}.items():
        E, u = _data(9, **kw)
        s1, s2, se, *_ = _pair(E, np.sqrt(u))
        assert abs(s1 - s2) > 2 * se, (name, s1, s2, se)
        gaps[name] = abs(s1 - s2) / s1
    assert gaps["heavy"] > 2 * gaps["light"]


# ------------------------------------------------------------------ cross-fitting

_FAST = {"n_boot": 1000, "n_mc": 1000}


def test_cross_fitting_never_fits_on_the_held_out_fold(monkeypatch):
    E, u = _data(10, M=600)
    E = E + np.arange(600) * 1e-9  # distinct values identify the rows
    seen = []
    real = rc.recalibrate

    def spy(E_tr, u_tr, method, **kw):
        seen.append(np.asarray(E_tr).copy())
        return real(E_tr, u_tr, method, **kw)

    monkeypatch.setattr(rc, "recalibrate", spy)
    cv = recalibrate_cv(E, u, "isotonic", n_splits=4, seed=0, stats=["ZMS"], **_FAST)
    assert len(seen) == 4 + 1  # one fit per fold, then the map on all data (not validated)
    assert sorted(np.concatenate(cv.folds).tolist()) == list(range(600))
    for held, E_tr in zip(cv.folds, seen[:4]):
        assert E_tr.size == 600 - held.size
        assert not np.isin(E[held], E_tr).any()  # the fold's own rows never reach its fit
        assert np.isin(np.delete(E, held), E_tr).all()
    assert seen[4].size == 600 and cv.recalibrator.M == 600


def test_cross_fitted_isotonic_is_not_perfect_out_of_sample():
    # a "leaky" map that memorises E² looks perfect in-sample (ZMS exactly 1 by construction);
    # held out, the same method gives a ZMS visibly different from 1
    E, u = _data(11, M=400)
    rec = recalibrate(E, u, "isotonic")
    assert abs(np.mean((E / rec.apply(u)) ** 2) - 1) < 1e-9
    cv = recalibrate_cv(E, u, "isotonic", n_splits=5, seed=1, stats=["ZMS"], **_FAST)
    zms_cv = np.mean((E / cv.u_cv) ** 2)
    assert cv.after["ZMS"].estimate == pytest.approx(zms_cv)
    assert abs(zms_cv - 1) > 0.05


def test_cross_fitted_validation_on_calibrated_and_miscalibrated_data():
    E, u = _data(12, M=2000)
    cv = recalibrate_cv(E, u, "zms", n_splits=5, seed=3, **_FAST)
    assert cv.n_splits == 5 and len(cv.factors) == 5 and len(cv.fold_se) == 5
    assert all(abs(f["s"] - 1) < 4 * se["s"] for f, se in zip(cv.factors, cv.fold_se))
    assert cv.after.joint is not None and 0 < cv.after.joint.p <= 1
    assert cv.after.joint.verdict in ("valid", "invalid")
    text = str(cv)
    assert "before" in text and "after" in text and "joint" in text
    assert f"p = {cv.after.joint.p:.3g}" in text and f"p = {cv.before.joint.p:.3g}" in text
    # a scale error: invalid before, repaired held-out
    bad = recalibrate_cv(E, 1.5 * u, "zms", seed=3, stats=["ZMS", "RCE"], **_FAST)
    assert bad.before["ZMS"].verdict == "invalid" and bad.after["ZMS"].verdict == "valid"
    # the same seed gives the same folds and tables
    again = recalibrate_cv(E, 1.5 * u, "zms", seed=3, stats=["ZMS", "RCE"], **_FAST)
    np.testing.assert_array_equal(again.u_cv, bad.u_cv)
    assert again.after.joint.p == bad.after.joint.p


# ------------------------------------------------------------------ bad inputs

@pytest.mark.parametrize("args, kw, msg", [
    (([1.0, np.nan, 2.0], [1.0, 1.0, 1.0]), {}, r"`E` must contain only finite values"),
    (([1.0, 2.0], [1.0, 1.0, 1.0]), {}, r"`E` and `u` must have the same length, got 2 and 3"),
    (([1.0, 2.0, 3.0], [1.0, 0.0, 1.0]), {}, r"`u` must be > 0 \(1 non-positive values"),
    (([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]), {"method": "platt"},
     r"`method` must be one of 'zms', 'rce', 'bvs', 'poly', 'isotonic'; got 'platt'"),
    (([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]), {"method": "zms", "x": [1.0, 2.0, 3.0]},
     r"`x` must be None for method 'zms': only 'bvs' can use a covariate"),
    (([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]), {"method": "bvs", "x": [1.0, 2.0]},
     r"`u` and `x` must have the same length, got 3 and 2"),
    ((np.ones(100), np.ones(100)), {"method": "bvs", "n_bins": 4},
     r"`n_bins`=4 leaves bins with fewer than 30 points \(M = 100\); use `n_bins` <= 3"),
    (([1.0, 2.0, 3.0], [1.0, 1.0, 1.0]), {"method": "poly", "degree": 3}, r"`degree` must be 1 or 2, got 3"),
])
def test_bad_inputs_recalibrate(args, kw, msg):
    with pytest.raises(ValueError, match=msg):
        recalibrate(*args, **kw)


def test_bad_inputs_recalibrate_cv():
    E, u = _data(13, M=200)
    with pytest.raises(ValueError, match=r"`n_splits` must be an integer >= 2, got 1"):
        recalibrate_cv(E, u, n_splits=1)
    with pytest.raises(ValueError, match=r"`n_splits` must be <= the number of points \(200\), got 500"):
        recalibrate_cv(E, u, n_splits=500)
    # bins checked on the smallest training set (160 points), before any work
    with pytest.raises(ValueError, match=r"`n_bins`=6 leaves bins with fewer than 30 points \(M = 160\)"):
        recalibrate_cv(E, u, "bvs", n_bins=6)
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        recalibrate_cv(E, u, "nope")


def test_exported_and_documented():
    for name in ("recalibrate", "recalibrate_cv", "Recalibrator", "RecalibrationCV", "ClippedVarianceWarning"):
        assert name in mcref.__all__ and getattr(mcref, name).__doc__


def test_cross_fitted_bvs_on_a_covariate():
    E, u = _data(14, M=1200)
    x = np.log(u) + np.random.default_rng(1).normal(0, 0.1, u.size)
    cv = recalibrate_cv(E, 1.3 * u, "bvs", x=x, n_bins=4, seed=2, stats=["ZMS"], **_FAST)
    assert cv.recalibrator.on_x and len(cv.factors[0]) == 4
    assert all(abs(v - 1 / 1.3) < 0.15 for f in cv.factors for v in f.values())
    assert cv.after["ZMS"].verdict == "valid"
