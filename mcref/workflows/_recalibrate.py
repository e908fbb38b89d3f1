r"""Recalibration of the uncertainties, with honest (cross-fitted) validation
(docs/methods.md, "Recalibration").

:func:`recalibrate` fits a map u ↦ u' on calibration data (E, u); :func:`recalibrate_cv`
validates a recalibration method on data that the fitted map never saw (shuffled K-fold
cross-fitting), beside the validation of the original (E, u).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..core._checks import dataset_args, as_float_array, check_choice, check_E_u, check_int, check_seed, check_u
from ..core._warnings import MCRefWarning
from ..parallel import serial_blas

#: the recalibration methods of :func:`recalibrate`
METHODS = ("zms", "rce", "bvs", "poly", "isotonic")
#: methods that can bin on a covariate ``x`` instead of u
X_METHODS = ("bvs",)
#: smallest number of points per bin of ``"bvs"``
MIN_BIN_COUNT = 30
#: u'² is floored at this fraction of the calibration data's mean u²
FLOOR_FRACTION = 1e-6


class ClippedVarianceWarning(MCRefWarning, UserWarning):
    """A recalibrated variance u'² came out ≤ 0 (polynomial scaling extrapolated below
    zero) and was clipped at a small positive floor (``FLOOR_FRACTION`` times the
    calibration data's mean u²): the fitted map is not a variance there."""


@dataclass(frozen=True)
class Recalibrator:
    r"""A fitted recalibration map u ↦ u' (:func:`recalibrate`).

    Attributes
    ----------
    method : str
        ``"zms"``, ``"rce"``, ``"bvs"``, ``"poly"`` or ``"isotonic"``.
    params : dict[str, float]
        Fitted parameters: ``s`` (scale factor u' = s·u) for ``"zms"`` and ``"rce"``;
        ``s_1`` … ``s_N`` (per-bin factors) for ``"bvs"``; ``a``, ``b`` (and ``c``) of
        u'² = a + b·u² (+ c·u⁴) for ``"poly"``; ``n_blocks`` (the number of constant
        pieces of the fit) for ``"isotonic"``.
    se : dict[str, float]
        Standard errors of :attr:`params` (delta method, or the OLS covariance); empty for
        ``"isotonic"``.
    M : int
        Number of calibration points.
    knots, values : ndarray
        Interpolation table of ``"bvs"`` (bin centres: median ln u, or median x; s_b²) and
        ``"isotonic"`` (distinct u² of the data; fitted u'²); empty otherwise.
    on_x : bool
        ``"bvs"`` binned on the covariate ``x`` rather than on u.
    floor : float
        Smallest u'² that :meth:`apply` returns.
    """

    method: str
    params: dict[str, float]
    se: dict[str, float]
    M: int
    knots: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    values: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    on_x: bool = False
    floor: float = 0.0

    def variance(self, u, x=None) -> np.ndarray:
        """Recalibrated variances u'² of uncertainties ``u`` (and covariate ``x``)."""
        u = check_u(u)
        x = self._check_x(x, u.size)
        u2 = u * u
        if self.method in ("zms", "rce"):
            out = self.params["s"] ** 2 * u2
        elif self.method == "bvs":
            t = x if self.on_x else np.log(u)
            out = np.interp(t, self.knots, self.values) * u2  # constant beyond the end centres
        elif self.method == "poly":
            out = self.params["a"] + self.params["b"] * u2 + self.params.get("c", 0.0) * u2 * u2
            low = out < self.floor
            if low.any():
                warnings.warn(ClippedVarianceWarning(
                    f"polynomial scaling gives u'² < {self.floor:.3g} for {int(low.sum())} of {u.size} values "
                    f"(smallest {float(out.min()):.3g}); clipped at the floor"), stacklevel=3)
        else:  # isotonic
            out = np.interp(u2, self.knots, self.values)
        return np.maximum(out, self.floor)

    def apply(self, u, x=None) -> np.ndarray:
        """Recalibrated uncertainties u' of ``u`` (``x``: the covariate of ``"bvs"`` binned on x).

        Warns
        -----
        ClippedVarianceWarning
            ``"poly"`` gives u'² below the floor for some ``u`` (clipped).
        """
        return np.sqrt(self.variance(u, x))

    def _check_x(self, x, m: int):
        if not self.on_x:
            if x is not None:
                raise ValueError(f"`x` must be None: this {self.method!r} recalibrator was not fitted on a covariate")
            return None
        if x is None:
            raise ValueError("`x` is required: this 'bvs' recalibrator was fitted on bins of a covariate x")
        x = as_float_array(x, "x")
        if x.size != m:
            raise ValueError(f"`u` and `x` must have the same length, got {m} and {x.size}")
        return x

    def __str__(self) -> str:
        on = " (bins of x)" if self.on_x else ""
        lines = [f"Recalibrator: {self.method}{on}, fitted on M = {self.M} points"]
        if self.method == "isotonic":
            lines.append(f"  u'² = isotonic fit of E² on u², {int(self.params['n_blocks'])} constant blocks")
        else:
            form = {"zms": "u' = s·u, s² = ZMS", "rce": "u' = s·u, s² = MSE/MV",
                    "bvs": "u' = s_b·u, s_b² = ZMS of bin b (interpolated in " + ("x)" if self.on_x else "ln u)"),
                    "poly": "u'² = a + b·u²" + (" + c·u⁴" if "c" in self.params else "")}[self.method]
            lines.append(f"  {form}")
            for k, v in self.params.items():
                lines.append(f"  {k:>5} = {v:.6g} ± {self.se.get(k, float('nan')):.2g}")
        return "\n".join(lines)


def _recalibrate_iv(E, u, method, x, n_bins, degree):
    E, u = check_E_u(E, u, min_size=2)
    method = check_choice(method, "method", METHODS)
    if x is not None:
        if method not in X_METHODS:
            raise ValueError(f"`x` must be None for method {method!r}: only {', '.join(map(repr, X_METHODS))} "
                             "can use a covariate")
        x = as_float_array(x, "x")
        if x.size != u.size:
            raise ValueError(f"`u` and `x` must have the same length, got {u.size} and {x.size}")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    degree = check_int(degree, "degree", minimum=1)
    if degree > 2:
        raise ValueError(f"`degree` must be 1 or 2, got {degree}")
    if method == "bvs" and u.size // n_bins < MIN_BIN_COUNT:
        raise ValueError(f"`n_bins`={n_bins} leaves bins with fewer than {MIN_BIN_COUNT} points "
                         f"(M = {u.size}); use `n_bins` <= {max(u.size // MIN_BIN_COUNT, 1)}")
    return E, u, method, x, n_bins, degree


def _scale_se(y: np.ndarray) -> tuple[float, float]:
    """s = √⟨y⟩ and its delta-method se from the sample variance of y."""
    s2 = float(np.mean(y))
    se_s2 = float(np.std(y, ddof=1)) / math.sqrt(y.size) if y.size > 1 else float("nan")
    s = math.sqrt(s2)
    return s, se_s2 / (2.0 * s) if s > 0 else float("nan")


@dataset_args(x=False)
def recalibrate(
    E,
    u,
    method: Literal["zms", "rce", "bvs", "poly", "isotonic"] = "zms",
    *,
    x=None,
    n_bins: int = 20,
    degree: int = 1,
) -> Recalibrator:
    r"""Fit a recalibration map u ↦ u' on calibration data (E, u).

    .. math::

        \text{zms: } u' = s\,u,\ s^2 = \langle z^2\rangle;\quad
        \text{rce: } s^2 = \langle E^2\rangle / \langle u^2\rangle;\quad
        \text{bvs: } s_b^2 = \langle z^2\rangle_b;\quad
        \text{poly: } u'^2 = a + b\,u^2\,(+\,c\,u^4);\quad
        \text{isotonic: } u'^2 = \mathrm{iso}(E^2 \mid u^2)

    Parameters
    ----------
    E, u : array_like, shape (M,)
        Errors and (reported) uncertainties of the calibration data.
    method : {"zms", "rce", "bvs", "poly", "isotonic"}, default: "zms"
        ``"zms"``: σ-scaling, one factor s with s² = ZMS = ⟨z²⟩ (Laves et al. [1]_).
        ``"rce"``: one factor from the RCE's quantities, s² = MSE/MV = ⟨E²⟩/⟨u²⟩.
        ``"bvs"``: binwise variance scaling (Frenkel & Hernández-Lobato [2]_; Pernot [3]_):
        equal-count bins of u (or of ``x``), s_b² = ZMS of bin b, interpolated linearly in
        ln u (or x) between the bin centres (median of each bin), constant beyond the ends.
        ``"poly"``: u'² = a + b·u² (``degree=2``: + c·u⁴), least squares of E² on the powers
        of u². ``"isotonic"``: isotonic (increasing) regression of E² on u² (Busk et al.
        [4]_), interpolated linearly in u² between the fitted points, constant beyond.
    x : array_like, shape (M,), optional
        Covariate to bin on (``"bvs"`` only; the other methods refuse it).
    n_bins : int, default: 20
        Bins of ``"bvs"``; each must keep at least 30 points.
    degree : {1, 2}, default: 1
        Degree of ``"poly"`` in u².

    Returns
    -------
    Recalibrator
        ``.apply(u, x=None)`` gives u'; ``.params`` and ``.se`` the fitted parameters.

    Warns
    -----
    ClippedVarianceWarning
        From :meth:`Recalibrator.apply`, when ``"poly"`` extrapolates u'² below its floor.

    See Also
    --------
    recalibrate_cv : validation of a method on held-out data.

    Notes
    -----
    Standard errors: ``"zms"``: se(s²) = sd(z²)/√M, se(s) = se(s²)/(2s) (delta method).
    ``"rce"``: s² = r = ⟨E²⟩/⟨u²⟩, se(r) = sd(E² − r u²)/(⟨u²⟩√M) (delta method of a ratio of
    means), se(s) = se(r)/(2s). ``"bvs"``: the ``"zms"`` se within each bin. ``"poly"``:
    the heteroscedasticity-consistent (White, HC0) covariance of the least-squares estimate
    — E² has variance ∝ u⁴, so the homoscedastic OLS formula would misstate it.
    Fitted u'² are floored at ``FLOOR_FRACTION``·⟨u²⟩. Cost O(M log M) (a sort) for
    ``"bvs"`` and ``"isotonic"``, O(M) otherwise (docs/methods.md, "Recalibration").

    References
    ----------
    .. [1] M.-H. Laves, S. Ihler, J. F. Fast, L. A. Kahrs, T. Ortmaier, "Well-calibrated
       regression uncertainty in medical imaging with deep learning", Proc. MIDL 2020,
       PMLR 121, 393–412 (2020).
    .. [2] B. Frenkel, J. M. Hernández-Lobato, binwise variance scaling of uncertainties
       (2023), as described by [3]_.
    .. [3] P. Pernot, "Calibration in machine learning uncertainty quantification: beyond
       consistency to target adaptivity", APL Mach. Learn. 1, 046121 (2023),
       doi:10.1063/5.0174943.
    .. [4] J. Busk et al., "Calibrated uncertainty for molecular property prediction using
       ensembles of message passing neural networks", Mach. Learn.: Sci. Technol. 3,
       015012 (2022), doi:10.1088/2632-2153/ac3eb3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.lognormal(-1, 0.3, 5000); E = u * rng.normal(size=5000)
    >>> rec = recalibrate(E, 2.0 * u)          # reported uncertainties twice too large
    >>> round(rec.params["s"], 2)
    0.5
    """
    E, u, method, x, n_bins, degree = _recalibrate_iv(E, u, method, x, n_bins, degree)
    M = u.size
    u2 = u * u
    E2 = E * E
    floor = FLOOR_FRACTION * float(np.mean(u2))
    if method == "zms":
        s, se = _scale_se(E2 / u2)
        return Recalibrator(method, {"s": s}, {"s": se}, M, floor=floor)
    if method == "rce":
        mu2 = float(np.mean(u2))
        r = float(np.mean(E2)) / mu2
        s = math.sqrt(r)
        se_r = float(np.std(E2 - r * u2, ddof=1)) / (mu2 * math.sqrt(M))
        return Recalibrator(method, {"s": s}, {"s": se_r / (2 * s) if s > 0 else float("nan")}, M, floor=floor)
    if method == "bvs":
        from ..binning import bin_starts

        key = x if x is not None else u
        order = np.argsort(key, kind="stable")
        starts = bin_starts(M, n_bins)
        z2 = (E2 / u2)[order]
        t = (x if x is not None else np.log(u))[order]
        params, se, centres, values = {}, {}, np.empty(n_bins), np.empty(n_bins)
        for b in range(n_bins):
            sl = slice(starts[b], starts[b + 1])
            s_b, se_b = _scale_se(z2[sl])
            params[f"s_{b + 1}"], se[f"s_{b + 1}"] = s_b, se_b
            centres[b] = float(np.median(t[sl]))
            values[b] = s_b * s_b
        return Recalibrator(method, params, se, M, knots=centres, values=values, on_x=x is not None, floor=floor)
    if method == "poly":
        m2 = float(np.mean(u2))
        v = u2 / m2  # scaled columns: a well-conditioned design
        X = np.column_stack([np.ones(M), v] + ([v * v] if degree == 2 else []))
        y = E2 / m2
        if M <= X.shape[1]:
            raise ValueError(f"the dataset must have more than {X.shape[1]} points for `degree`={degree}")
        with serial_blas():  # products over M rows: the same bits whatever BLAS's threads (mcref.core._dot)
            coef, *_ = np.linalg.lstsq(X, y, rcond=None)
            bread = np.linalg.inv(X.T @ X)
            res = y - X @ coef
            cov = bread @ ((X * (res * res)[:, None]).T @ X) @ bread  # HC0 sandwich
        scale = np.array([m2, 1.0, 1.0 / m2][: X.shape[1]])
        names = ["a", "b", "c"][: X.shape[1]]
        params = {k: float(c * f) for k, c, f in zip(names, coef, scale)}
        se = {k: float(math.sqrt(max(cov[i, i], 0.0)) * f) for i, (k, f) in enumerate(zip(names, scale))}
        return Recalibrator(method, params, se, M, floor=floor)
    # isotonic
    from scipy.optimize import isotonic_regression

    order = np.argsort(u2, kind="stable")
    knots, inverse, counts = np.unique(u2[order], return_inverse=True, return_counts=True)
    ymean = np.bincount(inverse, weights=E2[order]) / counts  # tied u² pooled first
    fit = isotonic_regression(ymean, weights=counts.astype(np.float64), increasing=True).x
    fit = np.maximum(fit, floor)
    n_blocks = int(np.count_nonzero(np.diff(fit))) + 1
    return Recalibrator(method, {"n_blocks": float(n_blocks)}, {}, M, knots=knots, values=fit, floor=floor)


@dataclass(frozen=True)
class RecalibrationCV:
    """Cross-fitted recalibration and its validation (:func:`recalibrate_cv`).

    Attributes
    ----------
    method : str
    n_splits : int
        Number of folds K.
    before : ValidationTable
        Validation of the original (E, u).
    after : ValidationTable
        Validation of (E, u'), u' the held-out recalibrated uncertainties of every fold.
    factors : list of dict[str, float]
        Fitted parameters of each fold's recalibrator (fitted on the other K − 1 folds).
    fold_se : list of dict[str, float]
        Their standard errors.
    folds : tuple of ndarray
        Indices of each held-out fold (into the input arrays).
    u_cv : ndarray, shape (M,)
        The cross-fitted u' (each value from a map that did not see its point).
    recalibrator : Recalibrator
        The same method fitted on all the data: the map to use on new data (it is not
        validated here; the cross-fitted result is its honest estimate).
    """

    method: str
    n_splits: int
    before: Any
    after: Any
    factors: list
    fold_se: list
    folds: tuple
    u_cv: np.ndarray = field(repr=False)
    recalibrator: Recalibrator = field(repr=False)

    def __str__(self) -> str:
        b, a = self.before, self.after
        lines = [f"Cross-fitted recalibration: {self.method}, K = {self.n_splits} folds, M = {self.u_cv.size} "
                 "(each u' from a map fitted without its point)"]
        if self.method != "isotonic":
            for k in self.factors[0]:
                vals = ", ".join(f"{f[k]:.4g}" for f in self.factors)
                lines.append(f"  fold {k}: {vals}")
        if b.joint is not None and a.joint is not None:  # the answer first: the joint verdicts
            lines.append(f"  {'joint':<6} {'p = ' + format(b.joint.p, '.3g'):>10} {b.joint.verdict:>13}   "
                         f"{'p = ' + format(a.joint.p, '.3g'):>10} {a.joint.verdict:>13}")
        lines.append(f"  {'':<6} {'before':>24}   {'after':>24}")
        for r in b.rows:
            try:
                ra = a[r.name]
            except KeyError:  # pragma: no cover - same stats in both tables
                continue
            lines.append(f"  {r.name:<6} {r.estimate:>10.4g} {r.finding:>13}   {ra.estimate:>10.4g} {ra.finding:>13}")
        return "\n".join(lines)


def _cross_fit(E, u, x, folds, fit):
    """u' of every point from a map fitted on the other folds only: ``fit`` receives the
    training rows, never the held-out ones (the structural guarantee of
    :func:`recalibrate_cv`)."""
    u_cv = np.empty_like(u)
    fitted = []
    M = u.size
    for held in folds:
        train = np.ones(M, dtype=bool)
        train[held] = False
        rec = fit(E[train], u[train], None if x is None else x[train])
        u_cv[held] = rec.apply(u[held], None if x is None else x[held])
        fitted.append(rec)
    return u_cv, fitted


@dataset_args(x=False)
def recalibrate_cv(
    E,
    u,
    method: Literal["zms", "rce", "bvs", "poly", "isotonic"] = "zms",
    *,
    x=None,
    n_splits: int = 5,
    n_bins: int = 20,
    degree: int = 1,
    n_boot: int = 5000,
    n_mc: int | None = None,
    seed=None,
    **validate_options,
) -> RecalibrationCV:
    r"""Validate a recalibration method on held-out data: shuffled K-fold cross-fitting.

    .. math::

        u'_i = f_{-k(i)}(u_i),\qquad f_{-k} = \texttt{recalibrate}(E_{-k}, u_{-k})

    The points are shuffled and split into K folds; each fold's u' comes from the map fitted
    on the other K − 1 folds. The M held-out pairs (E, u') form one dataset, validated once
    by :func:`mcref.validate`, beside the validation of the original (E, u).

    Parameters
    ----------
    E, u : array_like, shape (M,)
        Errors and uncertainties.
    method : {"zms", "rce", "bvs", "poly", "isotonic"}, default: "zms"
        See :func:`recalibrate`.
    x : array_like, shape (M,), optional
        Covariate of ``"bvs"`` (see :func:`recalibrate`).
    n_splits : int, default: 5
        Number of folds K (2 ≤ K ≤ M).
    n_bins : int, default: 20
        Bins of ``"bvs"`` in each training set (at least 30 points each).
    degree : {1, 2}, default: 1
        Degree of ``"poly"``.
    n_boot, n_mc : int, default: 5000, :func:`mcref.default_n_mc` of M
        Passed to :func:`mcref.validate`.
    seed : None, int or SeedSequence
        One seed: the shuffle and the two validations get spawned children.
    **validate_options
        Other keyword arguments of :func:`mcref.validate` (``stats``, ``dists``, ``combine``, …).

    Returns
    -------
    RecalibrationCV

    Warns
    -----
    ClippedVarianceWarning
        ``"poly"`` extrapolates u'² below its floor on a held-out fold.

    See Also
    --------
    recalibrate, validate

    Notes
    -----
    A map validated on its own calibration data looks better than it is (``"isotonic"``
    makes the in-sample ZMS exactly 1 whatever the data). Cross-fitting uses every point
    once for validation and never with a map that saw it. Cost: K fits and two validations
    (docs/methods.md, "Recalibration").

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.lognormal(-1, 0.3, 1000); E = u * rng.normal(size=1000)
    >>> cv = recalibrate_cv(E, 1.5 * u, stats=["ZMS"], n_boot=1000, n_mc=1000, seed=0)
    >>> cv.before["ZMS"].verdict, cv.after["ZMS"].verdict
    ('invalid', 'valid')
    """
    from ..verdict._validate import validate

    E, u = check_E_u(E, u, min_size=3)
    n_splits = check_int(n_splits, "n_splits", minimum=2)
    if n_splits > u.size:
        raise ValueError(f"`n_splits` must be <= the number of points ({u.size}), got {n_splits}")
    if x is not None:
        x = as_float_array(x, "x")
        if x.size != u.size:
            raise ValueError(f"`u` and `x` must have the same length, got {u.size} and {x.size}")
    # every option checked once, before any fit, on the size of the smallest training set
    m_train = u.size - -(-u.size // n_splits)
    _recalibrate_iv(E[:m_train], u[:m_train], method, None if x is None else x[:m_train], n_bins, degree)
    method = method.lower()
    ss = check_seed(seed)
    s_shuffle, s_before, s_after = ss.spawn(3)
    perm = np.random.default_rng(s_shuffle).permutation(u.size)
    folds = tuple(np.sort(f) for f in np.array_split(perm, n_splits))

    def fit(E_tr, u_tr, x_tr):
        return recalibrate(E_tr, u_tr, method, x=x_tr, n_bins=n_bins, degree=degree)

    u_cv, fitted = _cross_fit(E, u, x, folds, fit)
    before = validate(E, u, n_boot=n_boot, n_mc=n_mc, seed=s_before, **validate_options)
    after = validate(E, u_cv, n_boot=n_boot, n_mc=n_mc, seed=s_after, **validate_options)
    return RecalibrationCV(method, n_splits, before, after, [r.params for r in fitted], [r.se for r in fitted],
                           folds, u_cv, fit(E, u, x))
