"""mcref.sklearn with real scikit-learn objects: RecalibratedRegressor is a scikit-learn estimator
(clone, get_params/set_params, cross_val_score with mcref's scorers, grid search), it recalibrates
the u of an overconfident Gaussian process on held-out data, and bad input gets one clear error."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.gaussian_process import GaussianProcessRegressor  # noqa: E402
from sklearn.gaussian_process.kernels import RBF, WhiteKernel  # noqa: E402
from sklearn.linear_model import BayesianRidge, LinearRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402

from mcref.sklearn import RecalibratedRegressor, neg_crps_scorer, neg_nll_scorer, zms_log_scorer  # noqa: E402


def problem(n=900, seed=0):
    """y = sin(3 x0) + x1 / 2 + noise whose sd grows with |x0| (0.2 to 0.8)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] + (0.2 + 0.6 * np.abs(X[:, 0])) * rng.normal(size=n)
    return X, y


def overconfident_gp():
    """A GP whose noise level is fixed far too low (no hyperparameter fit): u too small."""
    return GaussianProcessRegressor(kernel=1.0 * RBF(0.5) + WhiteKernel(0.01, noise_level_bounds="fixed"),
                                    optimizer=None, alpha=1e-6)


def zms(y, mean, std):
    return float(np.mean(((y - mean) / std) ** 2))


def test_recalibrated_gp_heldout_zms_closer_to_one():
    X, y = problem()
    tr, te = slice(0, 500), slice(500, None)
    raw = overconfident_gp().fit(X[tr], y[tr])
    z_raw = zms(y[te], *raw.predict(X[te], return_std=True))
    model = RecalibratedRegressor(overconfident_gp(), method="zms", cv=5, random_state=0).fit(X[tr], y[tr])
    mean, std = model.predict(X[te], return_std=True)
    z_rec = zms(y[te], mean, std)
    assert z_raw > 2.0  # the set-up: u far too small
    assert abs(np.log(z_rec)) < 0.25 * abs(np.log(z_raw)) and abs(np.log(z_rec)) < 0.3, (z_raw, z_rec)
    np.testing.assert_allclose(mean, raw.predict(X[te]))  # the mean is the refitted regressor's
    np.testing.assert_array_equal(model.predict(X[te]), mean)
    assert model.oof_E_.shape == model.oof_u_.shape == (500,)
    assert model.n_features_in_ == 2


def test_prefit_and_bvs_on_x():
    X, y = problem(seed=1)
    gp = overconfident_gp().fit(X[:300], y[:300])
    model = RecalibratedRegressor(gp, method="bvs", cv="prefit", x_column=0, n_bins=5).fit(X[300:600], y[300:600])
    assert model.estimator_ is gp
    z_raw = zms(y[600:], *gp.predict(X[600:], return_std=True))
    z_rec = zms(y[600:], *model.predict(X[600:], return_std=True))
    assert abs(np.log(z_rec)) < 0.25 * abs(np.log(z_raw))


def test_bvs_shrinks_its_bins_on_a_few_hundred_points():
    """Issue 34: 300 calibration pairs hold 10 bins of 30, not the 20 that recalibrate() refuses;
    each fold of a cross-validation shrinks on its own, and 20 stay 20 on a large set."""
    from mcref import recalibrate

    X, y = problem(n=300, seed=4)
    gp = overconfident_gp().fit(X[:150], y[:150])
    model = RecalibratedRegressor(gp, method="bvs", cv="prefit").fit(X, y)
    assert model.n_bins == 20 and model.n_bins_ == 10 and len(model.recalibrator_.params) == 10
    mean, std = gp.predict(X, return_std=True)
    with pytest.raises(ValueError, match="`n_bins`=20 leaves bins with fewer than 30 points"):
        recalibrate(y - mean, std, "bvs")
    same = recalibrate(y - mean, std, "bvs", n_bins=10)  # what the wrapper fitted
    np.testing.assert_array_equal(model.predict(X, return_std=True)[1], same.apply(std))
    scores = cross_val_score(RecalibratedRegressor(BayesianRidge(), method="bvs", cv=3, random_state=0), X, y,
                             cv=KFold(3, shuffle=True, random_state=0), scoring=neg_crps_scorer)
    assert np.isfinite(scores).all()  # 200-point training folds: 133-point out-of-fold sets, 4 bins
    big = RecalibratedRegressor(BayesianRidge(), method="bvs", cv=3, random_state=0).fit(*problem(n=900))
    assert big.n_bins_ == 20
    assert RecalibratedRegressor(BayesianRidge(), method="zms").fit(X, y).n_bins_ is None


def test_clone_params_and_cross_validation():
    X, y = problem(n=400, seed=2)
    model = RecalibratedRegressor(BayesianRidge(), method="rce", cv=3, random_state=0)
    c = clone(model)
    assert c.get_params()["method"] == "rce" and c.get_params()["cv"] == 3
    assert isinstance(c.get_params()["estimator"], BayesianRidge) and c.estimator is not model.estimator
    c.set_params(method="zms", estimator__alpha_1=1e-5)
    assert c.method == "zms" and c.estimator.alpha_1 == 1e-5
    cv = KFold(4, shuffle=True, random_state=0)
    for scorer in (neg_crps_scorer, neg_nll_scorer, zms_log_scorer):
        scores = cross_val_score(model, X, y, cv=cv, scoring=scorer)
        assert scores.shape == (4,) and np.isfinite(scores).all()
    assert (cross_val_score(model, X, y, cv=cv, scoring=zms_log_scorer) <= 0).all()
    r2 = cross_val_score(model, X, y, cv=cv)  # the default score: R² of the mean
    assert np.isfinite(r2).all()
    grid = GridSearchCV(model, {"method": ["zms", "isotonic"]}, cv=cv, scoring=neg_nll_scorer).fit(X, y)
    assert grid.best_params_["method"] in ("zms", "isotonic")


def test_estimator_without_return_std():
    X, y = problem(n=200)
    with pytest.raises(ValueError, match="LinearRegression has no predict\\(X, return_std=True\\)"):
        RecalibratedRegressor(LinearRegression()).fit(X, y)
    with pytest.raises(ValueError, match="LinearRegression has no predict"):
        neg_crps_scorer(LinearRegression().fit(X, y), X, y)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"estimator": None}, "`estimator` must be a regressor"),
        ({"method": "nope"}, "`method` must be one of"),
        ({"method": "zms", "x_column": 0}, "`x_column` is the covariate of method='bvs'"),
        ({"method": "bvs", "x_column": 1.5}, "`x_column` must be a column index"),
    ],
)
def test_bad_parameters(kwargs, match):
    X, y = problem(n=200)
    params = {"estimator": BayesianRidge(), **kwargs}
    with pytest.raises(ValueError, match=match):
        RecalibratedRegressor(**params).fit(X, y)


def test_predict_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        RecalibratedRegressor(BayesianRidge()).predict(np.zeros((2, 2)), return_std=True)


def test_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.base", None)  # as if scikit-learn were not installed
    monkeypatch.delitem(sys.modules, "mcref.sklearn", raising=False)
    with pytest.raises(ImportError, match=r'mcref\[sklearn\]'):
        import mcref.sklearn  # noqa: F401
    monkeypatch.delitem(sys.modules, "mcref.sklearn", raising=False)


def test_sample_weight_follows_the_folds():
    """A per-row fit parameter is sliced with each training fold (and given whole to the final fit)."""
    X, y = problem(n=300, seed=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 300)
    model = RecalibratedRegressor(BayesianRidge(), cv=3, random_state=0).fit(X, y, sample_weight=w)
    ref = BayesianRidge().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(model.predict(X), ref.predict(X))
