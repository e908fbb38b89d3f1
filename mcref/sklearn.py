r"""scikit-learn interface: mcref's recalibration maps inside an estimator, and scorers of
predictive uncertainty (needs scikit-learn: ``pip install "mcref[sklearn]"``; the rest of
mcref does not import it).

* :class:`RecalibratedRegressor` — wraps a regressor with ``predict(X, return_std=True)``;
  ``fit`` learns the regressor and a recalibration map u ↦ u' (:func:`mcref.recalibrate`)
  on cross-fitted (out-of-fold) predictions, or on held-out data for a prefitted regressor;
  ``predict(X, return_std=True)`` returns the recalibrated u'. A scikit-learn estimator:
  ``get_params``/``set_params``, :func:`sklearn.base.clone`, pipelines, grid searches and
  :func:`sklearn.model_selection.cross_val_score` work with it.
* :func:`neg_crps_scorer`, :func:`neg_nll_scorer`, :func:`zms_log_scorer` — ``scoring=``
  callables that read ``predict(X, return_std=True)``: cross-validate a UQ method with
  scikit-learn's own tools.

What :func:`mcref.recalibrate_cv` adds over cross-validating this wrapper with
scikit-learn: it works on (E, u) pairs after the fact, with no model to refit; its K-fold
cross-fitting yields one held-out u' per point, and the M held-out pairs are validated once,
as one dataset, by :func:`mcref.validate` (bootstrap intervals, simulated references,
verdicts) beside the validation of the original u. ``cross_val_score`` gives one score per
fold (a number on M/K points, no reference for what a calibrated model would score, no
verdict). Use the wrapper to deploy a recalibrated model and to tune it in a pipeline; use
``recalibrate_cv`` (or :func:`mcref.validate` on the wrapper's held-out predictions) to
decide whether the recalibrated u are calibrated.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .workflows._recalibrate import METHODS, MIN_BIN_COUNT, recalibrate
from .core._checks import check_choice, check_int
from .predictive import predict_mean_std

try:
    from sklearn.base import BaseEstimator, MetaEstimatorMixin, RegressorMixin, clone
    from sklearn.model_selection import KFold, check_cv
    from sklearn.utils.validation import check_is_fitted
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('mcref.sklearn needs scikit-learn: pip install "mcref[sklearn]" (or pip install '
                      "scikit-learn)") from exc

__all__ = ["RecalibratedRegressor", "neg_crps_scorer", "neg_nll_scorer", "zms_log_scorer"]


class RecalibratedRegressor(MetaEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""A regressor whose predicted standard deviations are recalibrated by an mcref map.

    Parameters
    ----------
    estimator : regressor
        Has ``predict(X, return_std=True)`` (GaussianProcessRegressor, BayesianRidge,
        ARDRegression, ...) or an NGBoost-style ``pred_dist(X)``.
    method : {"zms", "rce", "bvs", "poly", "isotonic"}, default: "zms"
        The map of :func:`mcref.recalibrate`.
    cv : int, cross-validation splitter or "prefit", default: 5
        An int or a splitter: ``fit`` fits a clone of ``estimator`` on each training fold,
        predicts the held-out fold (out-of-fold E = y − mean and u = std for every point),
        fits the map on those M pairs, then fits ``estimator`` on all the data (the map never
        sees in-sample u, which are often too small). ``"prefit"``: ``estimator`` is already
        fitted and ``fit(X, y)`` takes (X, y) as held-out calibration data.
    x_column : int, optional
        Column of X used as the covariate of ``method="bvs"`` (bins of x instead of u).
    n_bins : int, default: 20
        The most bins of ``"bvs"``. Each bin keeps at least 30 calibration points, so a small
        calibration set gets fewer: ``min(n_bins, M // 30)`` for M calibration pairs (the
        out-of-fold or held-out ones), e.g. 10 bins on 300 points, one on 30 to 59; the
        count used is ``n_bins_``. The folds of a grid search or ``cross_val_score`` may
        differ in size: each fit shrinks on its own (as :func:`mcref.validate`'s default
        bins do), where :func:`mcref.recalibrate` would refuse.
    degree : {1, 2}, default: 1
        Degree of ``"poly"``.
    random_state : int, optional
        Shuffle of the default K-fold split (``cv`` an int).

    Attributes
    ----------
    estimator_ : regressor
        The fitted regressor (on all the data, or ``estimator`` itself with ``"prefit"``).
    recalibrator_ : mcref.Recalibrator
        The fitted map u ↦ u'.
    n_bins_ : int or None
        The bins of ``"bvs"`` fitted (``n_bins`` shrunk to the calibration set; None for the
        other methods).
    oof_E_, oof_u_ : ndarray
        The calibration pairs the map was fitted on (out-of-fold, or held-out).

    Examples
    --------
    >>> from sklearn.linear_model import BayesianRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 2)); y = X @ [1.0, 2.0] + 2.0 * rng.normal(size=600)
    >>> class Overconfident(BayesianRidge):
    ...     def predict(self, X, return_std=False):
    ...         out = super().predict(X, return_std=return_std)
    ...         return (out[0], out[1] / 2) if return_std else out
    >>> model = RecalibratedRegressor(Overconfident(), method="zms", random_state=0).fit(X[:400], y[:400])
    >>> round(float(model.recalibrator_.params["s"]), 1)
    2.0
    >>> mean, std = model.predict(X[400:], return_std=True)
    """

    def __init__(self, estimator=None, *, method: str = "zms", cv: Any = 5, x_column: int | None = None,
                 n_bins: int = 20, degree: int = 1, random_state: int | None = None):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.x_column = x_column
        self.n_bins = n_bins
        self.degree = degree
        self.random_state = random_state

    def _x(self, X) -> np.ndarray | None:
        if self.x_column is None:
            return None
        return np.asarray(X)[:, self.x_column].astype(np.float64)

    def fit(self, X, y, **fit_params):
        """Fit the regressor and the recalibration map (see ``cv``); returns self.

        ``fit_params`` go to the regressor's ``fit``; those with one entry per row
        (``sample_weight``) are sliced with each training fold. The map itself is unweighted.
        """
        if self.estimator is None:
            raise ValueError("`estimator` must be a regressor with predict(X, return_std=True), got None")
        method = check_choice(self.method, "method", METHODS)
        if self.x_column is not None and method != "bvs":
            raise ValueError(f"`x_column` is the covariate of method='bvs'; method={method!r} takes none")
        if self.x_column is not None and (isinstance(self.x_column, bool) or not isinstance(self.x_column,
                                                                                              numbers.Integral)):
            raise ValueError(f"`x_column` must be a column index (int) or None, got {self.x_column!r}")
        X, y = _validate(self, X, y)
        if isinstance(self.cv, str) and self.cv == "prefit":
            check_is_fitted(self.estimator)
            self.estimator_ = self.estimator
            mean, std = predict_mean_std(self.estimator_, X)
            E, u = y - mean, std
        else:
            if isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool):
                splitter = KFold(int(self.cv), shuffle=True, random_state=self.random_state)
            else:
                splitter = check_cv(self.cv)
            E = np.empty_like(y)
            u = np.empty_like(y)
            seen = np.zeros(y.size, dtype=bool)
            for train, test in splitter.split(X, y):
                # per-row fit parameters (sample_weight, ...) follow the training rows of the fold
                fold_params = {k: _rows(v, train) if _per_row(v, y.size) else v for k, v in fit_params.items()}
                est = clone(self.estimator).fit(_rows(X, train), y[train], **fold_params)
                mean, std = predict_mean_std(est, _rows(X, test))
                E[test], u[test] = y[test] - mean, std
                seen[test] = True
            if not seen.all():
                raise ValueError("`cv` must hold out every row once (a K-fold-like splitter)")
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        # bvs: at most n_bins bins, each of MIN_BIN_COUNT (30) points or more: fewer on a small calibration set
        n_bins = check_int(self.n_bins, "n_bins", minimum=1)
        self.n_bins_ = min(n_bins, max(1, y.size // MIN_BIN_COUNT)) if method == "bvs" else None
        self.recalibrator_ = recalibrate(E, u, method, x=self._x(X), n_bins=self.n_bins_ or n_bins,
                                         degree=self.degree)
        self.oof_E_, self.oof_u_ = E, u
        return self

    def predict(self, X, return_std: bool = False):
        """The regressor's mean, and with ``return_std=True`` the recalibrated std u'."""
        check_is_fitted(self, "recalibrator_")
        X = _validate(self, X)
        if not return_std:
            return self.estimator_.predict(X)
        mean, std = predict_mean_std(self.estimator_, X)
        return mean, self.recalibrator_.apply(std, self._x(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def _validate(est, X, y=None):
    """scikit-learn's input checks (X 2-D numeric, y 1-D numeric; ``n_features_in_`` set by
    ``fit`` and checked by ``predict``)."""
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:  # scikit-learn < 1.6
        if y is None:
            return est._validate_data(X, reset=False)
        return est._validate_data(X, y, y_numeric=True)
    if y is None:
        return validate_data(est, X, reset=False)
    return validate_data(est, X, y, y_numeric=True)


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else np.asarray(X)[index]


def _per_row(value, n: int) -> bool:
    """A fit parameter with one entry per row (``sample_weight``): sliced with the rows."""
    return not isinstance(value, (str, bytes, dict)) and hasattr(value, "__len__") and len(value) == n


def neg_crps_scorer(estimator, X, y) -> float:
    """``scoring=`` callable: minus the mean Gaussian CRPS of ``predict(X, return_std=True)``
    (higher is better, as scikit-learn scorers)."""
    from .scores import crps_normal

    mean, std = predict_mean_std(estimator, X)
    return -float(crps_normal(np.asarray(y, dtype=np.float64), mean, std).mean())


def neg_nll_scorer(estimator, X, y) -> float:
    """``scoring=`` callable: minus the mean Gaussian negative log-likelihood."""
    from .scores import nll_normal

    mean, std = predict_mean_std(estimator, X)
    return -float(nll_normal(np.asarray(y, dtype=np.float64), mean, std).mean())


def zms_log_scorer(estimator, X, y) -> float:
    """``scoring=`` callable: −|ln ZMS|, ZMS = ⟨((y − mean)/std)²⟩ (0 for a calibrated scale,
    negative either way off it)."""
    mean, std = predict_mean_std(estimator, X)
    z = (np.asarray(y, dtype=np.float64) - mean) / std
    return -abs(float(np.log(np.mean(z * z))))
