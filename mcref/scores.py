r"""Proper scoring rules of predictive distributions (docs/methods.md, "Proper scoring rules").

Every score is computed per case and returned as an array of the cases' shape; the mean
score of a set is the ``.mean()`` of that array (lower is better for all of them).

* :func:`crps_normal` — CRPS of Gaussian predictions, closed form; for calibration data
  (errors E, uncertainties u) it is ``crps_normal(E, 0, u)``;
* :func:`crps_ensemble` — CRPS of an ensemble (samples of the predictive distribution),
  ``"standard"`` or ``"fair"`` estimator, O(m log m) per case by sorting;
* :func:`interval_score` — the interval (Winkler) score of central prediction intervals,
  with :func:`normal_interval` (the central 1 − α interval of a Gaussian), :func:`picp`
  (coverage) and :func:`mpiw` (mean width);
* :func:`coverage_table` — PICP, MPIW and mean interval score of the intervals ±q·u at
  several levels, for Gaussian or any unit-variance generative distribution D of mcref;
* :func:`nll_gaussian` — negative log-likelihood of multivariate Gaussian predictions
  (full covariances, Cholesky), and :func:`nll_normal`, its univariate form from (μ, σ).

The kernels are in :mod:`mcref.kernels.scores`.

References
----------
.. [GR07] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and
   estimation", J. Am. Stat. Assoc. 102, 359–378 (2007), doi:10.1198/016214506000001437.
.. [F14] C. A. T. Ferro, "Fair scores for ensemble forecasts", Q. J. R. Meteorol. Soc. 140,
   1917–1923 (2014), doi:10.1002/qj.2270.
.. [W72] R. L. Winkler, "A decision-theoretic approach to interval estimation", J. Am. Stat.
   Assoc. 67, 187–191 (1972), doi:10.1080/01621459.1972.10481224.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
from scipy import special

from .core._checks import dataset_args, as_finite_array, check_cases, check_choice, check_E_u, check_probability
from .kernels import scores as KS
from .parallel import parallel_kernel

__all__ = ["crps_normal", "crps_ensemble", "interval_score", "normal_interval", "picp", "mpiw",
           "coverage_table", "CoverageTable", "nll_gaussian", "nll_normal"]

DEFAULT_LEVELS = (0.5, 0.68, 0.9, 0.95)
_HALF_LOG_2PI = 0.5 * float(np.log(2.0 * np.pi))


# -- input validation ---------------------------------------------------------------------

def _index(mask: np.ndarray):
    """The first True of ``mask`` (at least 1-D): an int in 1-D, a tuple in N-D."""
    flat = int(np.argmax(mask))
    if mask.ndim == 1:
        return flat
    return tuple(int(k) for k in np.unravel_index(flat, mask.shape))


def _names(names: Sequence[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def _broadcast(names: Sequence[str], arrays: Sequence[np.ndarray]) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """Broadcast validated arrays to one shape; return the shape and flat contiguous copies."""
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise ValueError(f"{_names(names)} must broadcast to one shape, got shapes {shapes}") from None
    flat = [np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1) for a in arrays]
    return shape, flat


def _check_positive(a: np.ndarray, name: str) -> None:
    bad = ~(a > 0)
    if bad.any():
        if a.ndim == 0:
            raise ValueError(f"`{name}` must be > 0, got {float(a)}")
        raise ValueError(f"`{name}` must be > 0 ({int(bad.sum())} non-positive values, first at index {_index(bad)})")


def _check_ordered(lower: np.ndarray, upper: np.ndarray) -> None:
    bad = lower > upper
    if bad.any():
        if bad.ndim == 0:
            raise ValueError(f"`lower` must be <= `upper`, got lower = {float(lower)} > upper = {float(upper)}")
        raise ValueError(f"`lower` must be <= `upper` ({int(bad.sum())} intervals with lower > upper, "
                         f"first at index {_index(bad)})")


def _check_alpha(alpha: Any) -> np.ndarray:
    a = as_finite_array(alpha, "alpha")
    if a.ndim == 0:
        return np.asarray(check_probability(float(a), "alpha"))
    bad = ~((a > 0) & (a < 1))
    if bad.any():
        raise ValueError(f"`alpha` must be in (0, 1) ({int(bad.sum())} values outside, first at index {_index(bad)})")
    return a


def _location_scale_iv(y, mu, sigma, names=("y", "mu", "sigma")):
    """Finite y, μ, σ with σ > 0, broadcast to one shape (flat copies and the shape)."""
    arrays = [as_finite_array(v, n) for v, n in zip((y, mu, sigma), names)]
    _check_positive(arrays[2], names[2])
    return _broadcast(names, arrays)


def _shaped(out: np.ndarray, shape: tuple[int, ...]):
    """``out`` in the cases' shape; a Python float for scalar inputs."""
    return float(out[0]) if shape == () else out.reshape(shape)


# -- CRPS ---------------------------------------------------------------------------------

def crps_normal(y, mu, sigma) -> np.ndarray:
    r"""Continuous ranked probability score of Gaussian predictions N(μ, σ²) at the observations y.

    .. math::

        \mathrm{CRPS}(N(\mu, \sigma^2), y) = \int_{-\infty}^{\infty}
        \bigl(F(x) - \mathbf{1}[x \ge y]\bigr)^2\,dx
        = \sigma\Bigl[w\,\bigl(2\Phi(w) - 1\bigr) + 2\varphi(w) - \frac{1}{\sqrt{\pi}}\Bigr],
        \qquad w = \frac{y - \mu}{\sigma},

    with Φ and φ the standard normal CDF and density (Gneiting & Raftery 2007). For calibration data, errors
    E = y − ŷ and uncertainties u, the score of the predictions N(ŷ, u²) is
    ``crps_normal(E, 0, u)`` (the CRPS is invariant to a common shift of y and μ).

    Parameters
    ----------
    y : array_like
        Observations (or errors E).
    mu : array_like
        Predicted means (0 for errors); broadcast against ``y``.
    sigma : array_like
        Predicted standard deviations (the uncertainties u), > 0; broadcast against ``y``.

    Returns
    -------
    ndarray or float
        The CRPS of each case, in the broadcast shape of the inputs (a float for scalars),
        in the units of y. The mean score of a set is ``crps_normal(y, mu, sigma).mean()``.

    Raises
    ------
    ValueError
        Non-finite or non-numeric inputs, σ ≤ 0, or shapes that do not broadcast.

    See Also
    --------
    crps_ensemble : the CRPS of samples of the predictive distribution.
    nll_normal : the logarithmic score of the same predictions.

    Notes
    -----
    One numba loop over the cases (:func:`mcref.kernels.scores.crps_normal_kernel`), with
    2Φ(w) − 1 = erf(w/√2); docs/methods.md, "Proper scoring rules".
    Gneiting & Raftery (2007): J. Am. Stat. Assoc. 102, 359, doi:10.1198/016214506000001437.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 100_000); E = u * rng.standard_normal(u.size)
    >>> round(float(crps_normal(E, 0.0, u).mean()), 3)            # calibrated u
    0.707
    >>> round(float(crps_normal(E, 0.0, 0.5 * u).mean()), 3)      # over-confident u: worse
    0.764
    >>> round(crps_normal(0.0, 0.0, 1.0), 6)                      # (√2 − 1)/√π
    0.233695
    """
    shape, (y, mu, sigma) = _location_scale_iv(y, mu, sigma)
    out = np.empty(y.size)
    parallel_kernel(KS.crps_normal_kernel)(y, mu, sigma, out)
    return _shaped(out, shape)


def crps_ensemble(y, samples, *, axis: int = -1, estimator: Literal["standard", "fair"] = "standard") -> np.ndarray:
    r"""Continuous ranked probability score of ensemble predictions (m samples per case).

    With the ensemble x_1, …, x_m of a case and its observation y:

    .. math::

        \mathrm{CRPS}(x, y) = \frac{1}{m}\sum_{j=1}^{m}\lvert x_j - y\rvert
        - \frac{1}{2\,m^2}\sum_{j=1}^{m}\sum_{k=1}^{m}\lvert x_j - x_k\rvert
        \quad(\text{"standard"}),

    the CRPS of the ensemble's empirical distribution [1]_ (scoringrules' ``"nrg"``,
    properscoring's ``crps_ensemble``). ``"fair"`` divides the double sum by
    2m(m − 1) instead of 2m²: an unbiased estimator of the CRPS of the distribution the
    members are drawn from, whatever m [2]_ (scoringrules' ``"fair"``); the standard one
    is larger by :math:`\sum_{j,k}\lvert x_j - x_k\rvert / (2m^2(m - 1))`, which favours
    ensembles too narrow at small m.

    Parameters
    ----------
    y : array_like
        Observations, shape of ``samples`` without its ensemble axis (or broadcast to it).
    samples : array_like
        Ensemble members, e.g. shape (n_cases, m); the members lie along ``axis``.
    axis : int, default: -1
        The ensemble axis of ``samples``.
    estimator : {"standard", "fair"}, default: "standard"
        The estimator of the CRPS (above). ``"fair"`` needs m ≥ 2.

    Returns
    -------
    ndarray or float
        The CRPS of each case, shape of ``samples`` without ``axis`` (a float for one case).
        The mean score is ``crps_ensemble(y, samples).mean()``.

    Raises
    ------
    ValueError
        NaN or infinite values (refused, not skipped), an empty ensemble, m < 2 with
        ``"fair"``, an unknown estimator, a bad axis, or ``y`` not of the cases' shape.

    See Also
    --------
    crps_normal : the closed form for Gaussian predictions.

    Notes
    -----
    O(m log m) per case: with d_(1) ≤ … ≤ d_(m) the sorted d_j = x_j − y,
    :math:`\sum_{j,k}\lvert x_j - x_k\rvert = 2\sum_j (2j - m - 1)\,d_{(j)}` (1-based j).
    The members are sorted once (a sorted copy, NumPy's sort), then one O(m) numba pass per case gives both sums
    (:func:`mcref.kernels.scores.crps_ensemble_kernel`); memory: one copy of ``samples``.
    docs/methods.md, "Proper scoring rules".

    References
    ----------
    .. [1] Gneiting & Raftery (2007), [GR07] in :mod:`mcref.scores`, doi:10.1198/016214506000001437.
    .. [2] C. A. T. Ferro, "Fair scores for ensemble forecasts", Q. J. R. Meteorol. Soc. 140,
       1917–1923 (2014), doi:10.1002/qj.2270.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.standard_normal(2000)
    >>> X = rng.standard_normal((2000, 10))                  # 10 members of N(0, 1) per case
    >>> exact = crps_normal(y, 0.0, 1.0).mean()
    >>> bool(crps_ensemble(y, X).mean() > exact)             # standard: biased up at m = 10
    True
    >>> bool(abs(crps_ensemble(y, X, estimator="fair").mean() - exact) < 0.01)   # fair: unbiased
    True
    """
    shape, y, x, fair = _crps_ensemble_iv(y, samples, axis, estimator)
    xs = np.array(x, dtype=np.float64, order="C").reshape(-1, x.shape[-1])  # a copy: sorted in place
    xs.sort(axis=-1)
    out = np.empty(y.size)
    parallel_kernel(KS.crps_ensemble_kernel)(y, xs, fair, out)
    return _shaped(out, shape)


def _crps_ensemble_iv(y, samples, axis, estimator):
    """Finite y and samples, the ensemble axis moved last, m ≥ 2 for the fair estimator, y of the
    cases' shape: (cases' shape, flat y, samples (..., m), fair)."""
    estimator = check_choice(estimator, "estimator", ("standard", "fair"))
    x = as_finite_array(samples, "samples")
    if x.ndim == 0:
        raise ValueError("`samples` must have an ensemble axis, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"`axis` must be an integer in [{-x.ndim}, {x.ndim - 1}] for `samples` of shape "
                         f"{x.shape}, got {axis!r}")
    x = np.moveaxis(x, axis, -1)
    shape, m = x.shape[:-1], x.shape[-1]
    if estimator == "fair" and m < 2:
        raise ValueError(f"`samples` must hold at least 2 members per case for estimator='fair', got {m}")
    y = as_finite_array(y, "y")
    try:
        y = np.broadcast_to(y, shape)
    except ValueError:
        raise ValueError(f"`y` must have the shape of `samples` without its ensemble axis, {shape}, "
                         f"got {y.shape}") from None
    return shape, np.ascontiguousarray(y).reshape(-1), x, estimator == "fair"


# -- intervals ----------------------------------------------------------------------------

def _interval_iv(y, lower, upper, alpha=None):
    """Finite y, lower, upper (and α in (0, 1)), lower ≤ upper; ``y`` gains a trailing axis when
    the bounds carry one more axis (one column per level)."""
    y = as_finite_array(y, "y")
    lower = as_finite_array(lower, "lower")
    upper = as_finite_array(upper, "upper")
    arrays, names = [y, lower, upper], ["y", "lower", "upper"]
    if alpha is not None:
        arrays.append(_check_alpha(alpha))
        names.append("alpha")
    if max(lower.ndim, upper.ndim) == y.ndim + 1:
        arrays[0] = y[..., None]
    shape, flat = _broadcast(names, arrays)
    _check_ordered(flat[1].reshape(shape), flat[2].reshape(shape))
    return shape, flat


def interval_score(y, lower, upper, alpha) -> np.ndarray:
    r"""Interval (Winkler) score of the central 1 − α prediction intervals [l, r] at y.

    .. math::

        S_\alpha(l, r; y) = (r - l) + \frac{2}{\alpha}\,(l - y)\,\mathbf{1}[y < l]
        + \frac{2}{\alpha}\,(y - r)\,\mathbf{1}[y > r],

    the width plus a penalty for a miss [1]_ [2]_; its expectation is minimised by the α/2
    and 1 − α/2 quantiles of the distribution of y.

    Parameters
    ----------
    y : array_like
        Observations (or errors E), shape (...).
    lower, upper : array_like
        Interval bounds, lower ≤ upper: the shape of ``y`` (one interval per case) or with
        one more trailing axis of K levels, shape (..., K).
    alpha : float or array_like
        1 − the nominal coverage of the intervals, in (0, 1); broadcast against the bounds
        (e.g. shape (K,) for K levels).

    Returns
    -------
    ndarray or float
        The score of each interval, in the broadcast shape (a float for scalars). The mean
        score is ``interval_score(y, lower, upper, alpha).mean(axis=0)`` (per level).

    Raises
    ------
    ValueError
        Non-finite inputs, lower > upper, α outside (0, 1), or shapes that do not broadcast.

    See Also
    --------
    normal_interval : the central 1 − α interval of N(μ, σ²).
    picp, mpiw, coverage_table

    Notes
    -----
    A numba loop over the cases (:func:`mcref.kernels.scores.interval_score_kernel`);
    docs/methods.md, "Proper scoring rules".

    References
    ----------
    .. [1] R. L. Winkler, "A decision-theoretic approach to interval estimation", J. Am.
       Stat. Assoc. 67, 187–191 (1972), doi:10.1080/01621459.1972.10481224.
    .. [2] Gneiting & Raftery (2007), [GR07] in :mod:`mcref.scores`, doi:10.1198/016214506000001437.

    Examples
    --------
    >>> interval_score([0.5, -2.0, 3.0], -1.0, 1.0, 0.1)     # inside; 1 below; 2 above
    array([ 2., 22., 42.])
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 100_000); E = u * rng.standard_normal(u.size)
    >>> lo, hi = normal_interval(0.0, u, 0.1)                # ±1.645·u
    >>> round(float(interval_score(E, lo, hi, 0.1).mean()), 2)
    5.17
    """
    shape, (y, lower, upper, alpha) = _interval_iv(y, lower, upper, alpha)
    out = np.empty(y.size)
    parallel_kernel(KS.interval_score_kernel)(y, lower, upper, alpha, out)
    return _shaped(out, shape)


def normal_interval(mu, sigma, alpha) -> tuple[np.ndarray, np.ndarray]:
    r"""The central 1 − α interval μ ± z·σ of N(μ, σ²), z = Φ⁻¹(1 − α/2).

    Parameters
    ----------
    mu : array_like
        Predicted means (0 for errors E).
    sigma : array_like
        Predicted standard deviations (uncertainties u), > 0.
    alpha : float or array_like of shape (K,)
        1 − the coverage, in (0, 1). With K levels the bounds gain a trailing axis of K.

    Returns
    -------
    lower, upper : ndarray or float
        The bounds, in the broadcast shape of ``mu`` and ``sigma`` (plus (K,) for K levels).

    Raises
    ------
    ValueError
        Non-finite inputs, σ ≤ 0, α outside (0, 1) or α with more than one axis.

    See Also
    --------
    interval_score, picp, mpiw

    Examples
    --------
    >>> lo, hi = normal_interval(0.0, [1.0, 2.0], [0.5, 0.05])
    >>> hi.round(3)                    # z = 0.674 and 1.960, for σ = 1 and 2
    array([[0.674, 1.96 ],
           [1.349, 3.92 ]])
    """
    a = _check_alpha(alpha)
    if a.ndim > 1:
        raise ValueError(f"`alpha` must be a number or a 1-D array of levels, got shape {a.shape}")
    mu = as_finite_array(mu, "mu")
    sigma = as_finite_array(sigma, "sigma")
    _check_positive(sigma, "sigma")
    try:
        shape = np.broadcast_shapes(mu.shape, sigma.shape)
    except ValueError:
        raise ValueError(f"`mu` and `sigma` must broadcast to one shape, got shapes {mu.shape}, "
                         f"{sigma.shape}") from None
    z = -special.ndtri(0.5 * a)  # Φ⁻¹(1 − α/2), accurate for small α
    if a.ndim == 1:
        mu = np.broadcast_to(mu, shape)[..., None]
        sigma = np.broadcast_to(sigma, shape)[..., None]
    return (mu - z * sigma)[()], (mu + z * sigma)[()]


def _cases_iv(lower, upper, n: int | None):
    """Finite bounds of shape (n,) or (n, K) (scalars broadcast to n cases when n is known),
    lower ≤ upper."""
    lower = as_finite_array(lower, "lower")
    upper = as_finite_array(upper, "upper")
    if n is not None:
        lower, upper = (np.broadcast_to(b, (n,)) if b.ndim == 0 else b for b in (lower, upper))
    ok = lower.shape == upper.shape and lower.ndim in (1, 2) and (n is None or lower.shape[0] == n)
    if not ok:
        want = "(n,) or (n, K)" if n is None else f"(n,) or (n, K) with n = len(y) = {n}"
        raise ValueError(f"`lower` and `upper` must have the same shape {want}, got {lower.shape} and {upper.shape}")
    _check_ordered(lower, upper)
    return lower, upper


def picp(y, lower, upper):
    r"""Prediction interval coverage probability: the fraction of cases with l_i ≤ y_i ≤ r_i.

    .. math::

        \mathrm{PICP} = \frac{1}{n}\sum_{i=1}^{n}\mathbf{1}[l_i \le y_i \le r_i]

    Parameters
    ----------
    y : array_like, shape (n,)
        Observations (or errors E).
    lower, upper : array_like, shape (n,) or (n, K), or float
        Interval bounds of each case, lower ≤ upper; one column per level (a number: the
        same bound for every case).

    Returns
    -------
    float or ndarray of shape (K,)
        The coverage, per level (column). For calibrated central 1 − α intervals its
        expectation is 1 − α.

    Raises
    ------
    ValueError
        Non-finite inputs, lower > upper, or bounds not of shape (n,) or (n, K).

    See Also
    --------
    mpiw, coverage_table

    Examples
    --------
    >>> picp([0.0, 1.5, -3.0, 0.2], -1.0, 1.0)     # bounds broadcast: 2 of 4 inside
    0.5
    """
    y = as_finite_array(y, "y")
    if y.ndim != 1:
        raise ValueError(f"`y` must be one-dimensional (the cases), got shape {y.shape}")
    lower, upper = _cases_iv(lower, upper, y.size)
    yy = y if lower.ndim == 1 else y[:, None]
    inside = (lower <= yy) & (yy <= upper)
    r = inside.mean(axis=0)
    return float(r) if r.ndim == 0 else r


def mpiw(lower, upper):
    r"""Mean prediction interval width, per level: (1/n)·Σ_i (r_i − l_i).

    Parameters
    ----------
    lower, upper : array_like, shape (n,) or (n, K)
        Interval bounds of each case, lower ≤ upper; one column per level.

    Returns
    -------
    float or ndarray of shape (K,)
        The mean width, per level (column).

    Raises
    ------
    ValueError
        Non-finite inputs, lower > upper, or bounds not of the same shape (n,) or (n, K).

    See Also
    --------
    picp, coverage_table

    Examples
    --------
    >>> float(mpiw([-1.0, -2.0], [1.0, 2.0]))
    3.0
    """
    lower, upper = _cases_iv(lower, upper, None)
    r = (upper - lower).mean(axis=0)
    return float(r) if r.ndim == 0 else r


@dataclass(frozen=True)
class CoverageTable:
    """Coverage, width and interval score of the intervals ±q·u (:func:`coverage_table`).

    Attributes
    ----------
    levels : ndarray
        Nominal coverages p (= 1 − α).
    q : ndarray
        The factors q = q_D((1 + p)/2) of the intervals ±q·u.
    picp : ndarray
        Observed coverage per level.
    low, high : ndarray
        Wilson 95 % interval of the coverage (:func:`mcref.diagnostics.wilson_interval`).
    mpiw : ndarray
        Mean interval width 2·q·⟨u⟩.
    interval_score : ndarray
        Mean interval score at α = 1 − p.
    n : int
        Number of cases.
    dist : str
        Label of the distribution D whose quantiles make the intervals.
    """

    levels: np.ndarray
    q: np.ndarray
    picp: np.ndarray
    low: np.ndarray
    high: np.ndarray
    mpiw: np.ndarray
    interval_score: np.ndarray
    n: int
    dist: str

    def to_frame(self):
        """A :class:`pandas.DataFrame`, one row per level."""
        import pandas as pd

        return pd.DataFrame({"level": self.levels, "q": self.q, "picp": self.picp, "low": self.low,
                             "high": self.high, "mpiw": self.mpiw, "interval_score": self.interval_score})


@dataset_args
def coverage_table(E, u, levels: Sequence[float] = DEFAULT_LEVELS, dist: Any = "normal") -> CoverageTable:
    r"""PICP, MPIW and mean interval score of the central intervals ±q·u of errors E, per level.

    For each level p the interval of case i is [−q·u_i, q·u_i] with q = q_D((1 + p)/2)
    the quantile of the unit-variance distribution D (Φ⁻¹((1 + p)/2) for the normal):
    calibrated data, E = u·ε with ε ~ D, cover with probability p. The interval score uses
    α = 1 − p.

    Parameters
    ----------
    E : array_like, shape (n,)
        Errors.
    u : array_like, shape (n,)
        Uncertainties, > 0.
    levels : sequence of float, default: (0.5, 0.68, 0.9, 0.95)
        Nominal coverages p, each in (0, 1).
    dist : str or Distribution, default: "normal"
        D, by :func:`mcref.get_distribution` name: ``"normal"``, ``"t(ν)"``, ``"t(fit)"``
        (ν fitted to E/u), ``"uniform"``, ``"laplace"``.

    Returns
    -------
    CoverageTable
        Per level: coverage with its Wilson 95 % interval, mean width, mean interval score
        (``.to_frame()`` for a table).

    Raises
    ------
    ValueError
        Invalid E or u, levels outside (0, 1), or a D without closed-form quantiles
        (``"empirical"``, a user sampler).

    See Also
    --------
    picp, mpiw, interval_score, mcref.diagnostics.lcp

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 100_000); E = u * rng.standard_normal(u.size)
    >>> t = coverage_table(E, u)
    >>> t.picp.round(3)
    array([0.499, 0.677, 0.899, 0.95 ])
    >>> t.to_frame().columns.tolist()
    ['level', 'q', 'picp', 'low', 'high', 'mpiw', 'interval_score']
    """
    from .diagnostics import quantile_factor, wilson_interval
    from .generative import get_distribution

    E, u = check_E_u(E, u, min_size=1)
    p = as_finite_array(levels, "levels")
    if p.ndim > 1 or not np.all((p > 0) & (p < 1)):
        raise ValueError(f"`levels` must be a number or a 1-D sequence of levels in (0, 1), got {np.asarray(levels)}")
    p = np.atleast_1d(p)
    d = get_distribution(dist, Z=E / u)
    q = np.asarray(quantile_factor(0.5 * (1.0 + p), d), dtype=float)
    lower = -np.outer(u, q)
    upper = np.outer(u, q)
    cover = picp(E, lower, upper)
    lo, hi = wilson_interval(np.round(cover * E.size), E.size)
    scores = interval_score(E, lower, upper, 1.0 - p).mean(axis=0)
    return CoverageTable(p, q, np.atleast_1d(cover), np.atleast_1d(lo), np.atleast_1d(hi),
                         np.atleast_1d(mpiw(lower, upper)), np.atleast_1d(scores), int(E.size), d.label)


# -- logarithmic score --------------------------------------------------------------------

def nll_gaussian(y, mean, cov) -> np.ndarray:
    r"""Negative log-likelihood of multivariate Gaussian predictions N(mean_i, Σ_i) at y_i.

    .. math::

        \mathrm{NLL}_i = \tfrac12\bigl[d\ln 2\pi + \ln\det\Sigma_i
        + (y_i - \mu_i)^\top \Sigma_i^{-1} (y_i - \mu_i)\bigr],

    the logarithmic score (Gneiting & Raftery 2007) (in nats). Its Mahalanobis term is the NEES of
    :func:`mcref.calibration.nees`, computed by the same Cholesky kernel.

    Parameters
    ----------
    y : array_like, shape (n, d) or (n,)
        Observations; 1-D: d = 1.
    mean : array_like, shape (n, d), (d,), (n,) for d = 1, or a scalar
        Predicted means.
    cov : array_like, shape (n, d, d), (n, d) (variances), or (d, d) (shared)
        Predicted covariances, symmetric positive definite; for 1-D ``y``, the variances u²
        (shape (n,), or a number shared by all the cases).

    Returns
    -------
    ndarray of shape (n,)
        The NLL of each case; the mean score is ``nll_gaussian(y, mean, cov).mean()``.

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, a non-symmetric or non-positive-definite covariance
        (the message gives the first case).

    See Also
    --------
    nll_normal : the univariate form from (μ, σ).
    mcref.calibration.nees, mcref.qce

    Notes
    -----
    Cholesky factorisation Σ_i = L Lᵀ per case, ln det Σ_i = 2·Σ ln L_aa, the quadratic form
    by forward substitution: O(d³) per case (:func:`mcref.kernels.scores.nll_gaussian_kernel`
    with :func:`mcref.kernels.linalg.chol_mahalanobis`); docs/methods.md, "Proper scoring rules".
    Gneiting & Raftery (2007): J. Am. Stat. Assoc. 102, 359, doi:10.1198/016214506000001437.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    >>> y = rng.multivariate_normal([0.0, 0.0], cov, size=100_000)
    >>> round(float(nll_gaussian(y, 0.0, cov).mean()), 2)   # entropy: ½(2 ln 2πe + ln 1.75)
    3.12
    """
    if np.ndim(y) == 1 and np.ndim(cov) == 0:  # one variance shared by all the cases
        cov = np.broadcast_to(as_finite_array(cov, "cov"), np.shape(y))
    y, mean, cov = check_cases(y, mean, cov)
    out = np.empty(y.shape[0])
    KS.nll_gaussian_kernel(y, mean, cov, out)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        raise ValueError(f"`cov` must be positive definite: {bad.size} case(s) are not (first at index {bad[0]})")
    return out


def nll_normal(y, mu, sigma) -> np.ndarray:
    r"""Negative log-likelihood of univariate Gaussian predictions N(μ, σ²) at y.

    .. math::

        \mathrm{NLL} = \tfrac12\ln 2\pi + \ln\sigma + \tfrac12\,w^2, \qquad w = \frac{y - \mu}{\sigma}.

    For calibration data (errors E, uncertainties u) it is ``nll_normal(E, 0, u)`` =
    ½ ln 2π + ln u + Z²/2, equal to ``nll_gaussian(E, 0, u**2)``.

    Parameters
    ----------
    y, mu, sigma : array_like
        As in :func:`crps_normal`: observations (or errors E), predicted means (0 for
        errors) and standard deviations (the uncertainties u, > 0), broadcast together.

    Returns
    -------
    ndarray or float
        The NLL of each case, in the broadcast shape; the mean is ``.mean()``.

    Raises
    ------
    ValueError
        Non-finite inputs, σ ≤ 0, or shapes that do not broadcast.

    See Also
    --------
    nll_gaussian, crps_normal

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 100_000); E = u * rng.standard_normal(u.size)
    >>> round(float(nll_normal(E, 0.0, u).mean() - np.log(u).mean()), 2)   # ½(ln 2π + 1)
    1.42
    """
    shape, (y, mu, sigma) = _location_scale_iv(y, mu, sigma)
    w = (y - mu) / sigma
    return _shaped(_HALF_LOG_2PI + np.log(sigma) + 0.5 * w * w, shape)
