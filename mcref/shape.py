"""Shape screen of a dataset: robust skewness and kurtosis (docs/methods.md, "Shape screen").

The average-calibration statistics of a dataset ``(E, u)`` (RCE, ZMS, ...) are
means of squared quantities, and their sampling distributions become unreliable
when ``u**2``, ``E**2`` or ``Z**2 = (E/u)**2`` are strongly right-skewed. This module
computes the robust shape indicators used for that screen in P. Pernot's
ErrViewLib (R package, functions ``skewgm``, ``kurtcs`` and ``hd``):

* the Harrell–Davis quantile estimator :func:`hd_quantile`;
* the Groeneveld–Meeden skewness :func:`skewness_gm`;
* the Crow–Siddiqui kurtosis :func:`kurtosis_cs`;
* the screen itself, :func:`shape_screen`, returning a :class:`ShapeScreen`.

References
----------
F. E. Harrell and C. E. Davis (1982), "A new distribution-free quantile estimator",
*Biometrika* 69:635–640, doi:10.1093/biomet/69.3.635.

R. A. Groeneveld and G. Meeden (1984), "Measuring skewness and kurtosis",
*The Statistician* 33:391–399, doi:10.2307/2987742.

E. L. Crow and M. M. Siddiqui (1967), "Robust estimation of location",
*J. Am. Stat. Assoc.* 62:353–389, doi:10.1080/01621459.1967.10482914.

P. Pernot, ErrViewLib (R package), functions ``skewgm`` and ``kurtcs``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core._checks import dataset_args, as_float_array, check_choice, check_E_u, check_probability
from .core._hd import hd_apply, hd_weights, quantiles_sorted  # noqa: F401 - hd_weights: mcref.shape.hd_weights
from .core._prepared import Prepared
from .stats import info

__all__ = [
    "hd_quantile",
    "skewness_gm",
    "kurtosis_cs",
    "ShapeScreen",
    "shape_screen",
    "skewness_gm_dist",
    "nig_skewness",
]

#: Minimum number of points for the shape statistics (skewness, kurtosis, screen).
MIN_POINTS = 4

#: Rounded normal value of the Crow–Siddiqui ratio, subtracted in :func:`kurtosis_cs`
#: (ErrViewLib's convention; the exact normal value is 2.9058...).
CS_NORMAL = 2.91

_QUANTILE_METHODS = ("hd", "plain")
_CS_PROBS = np.array([0.025, 0.25, 0.75, 0.975])
_SCREEN_PROBS = np.array([0.5, 0.025, 0.25, 0.75, 0.975])  # median, then _CS_PROBS

# ----------------------------------------------------------------------------------
# Internal helpers: operate on validated, sorted float64 arrays.
# ----------------------------------------------------------------------------------


def _check_min_points(x: np.ndarray, name: str) -> None:
    if x.size < MIN_POINTS:
        raise ValueError(f"`{name}` must have at least {MIN_POINTS} points, got {x.size}")


def _check_not_constant(xs: np.ndarray, name: str) -> None:
    # Tested on the data, not on the computed spread: with HD weights (which sum to 1
    # only up to rounding) a constant sample gives a spread of ~1e-16, not 0.
    if xs[0] == xs[-1]:
        raise ValueError(
            f"`{name}` has a degenerate distribution: all its values are equal "
            f"({float(xs[0])!r}), so its robust skewness and kurtosis are undefined"
        )


def _skewness_from(xs: np.ndarray, median: float) -> float:
    """beta_GM of a non-constant sorted sample (denominator > 0 in exact arithmetic)."""
    return (float(np.mean(xs)) - median) / float(np.mean(np.abs(xs - median)))


def _kurtosis_from(q: np.ndarray, name: str) -> float:
    """kappa_CS from the quantiles at ``_CS_PROBS``."""
    q025, q25, q75, q975 = (float(v) for v in q)
    iqr = q75 - q25
    if not iqr > 0.0:  # plain quantiles of a sample with heavy ties
        raise ValueError(
            f"`{name}` has a degenerate distribution: its interquartile range is 0, "
            "so the Crow-Siddiqui kurtosis is undefined"
        )
    return (q975 - q025) / iqr - CS_NORMAL


def _shape_of(xs: np.ndarray, name: str, method: str,
              weights: list[tuple[int, np.ndarray]] | None) -> tuple[float, float]:
    """(beta_GM, kappa_CS) of the **sorted** sample ``xs``; ``weights``: HD weights at
    ``_SCREEN_PROBS``."""
    _check_not_constant(xs, name)
    if method == "plain":
        median = float(np.median(xs))
        q = np.quantile(xs, _CS_PROBS)
    else:
        hd = hd_apply(weights, xs)
        median, q = float(hd[0]), hd[1:]
    return _skewness_from(xs, median), _kurtosis_from(q, name)


# ----------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------


def hd_quantile(x: Any, q: Any) -> float | np.ndarray:
    r"""Harrell–Davis estimate of the quantile(s) ``q`` of the sample ``x``.

    The estimate is a weighted mean of the order statistics
    :math:`x_{(1)} \le \dots \le x_{(n)}`,

    .. math::

        \mathrm{HD}(q) = \sum_{i=1}^{n} W_i\, x_{(i)}, \qquad
        W_i = I_{i/n}(a, b) - I_{(i-1)/n}(a, b),

    with :math:`a = q(n+1)`, :math:`b = (1-q)(n+1)` and :math:`I_x(a, b)` the
    regularized incomplete beta function. It equals
    :func:`scipy.stats.mstats.hdquantiles` (to rounding) but sorts once and, for each
    quantile, evaluates :func:`scipy.special.betainc` in one vectorised call, only on
    the grid points :math:`i/n` where :math:`I_{i/n}(a, b)` is not within
    :math:`10^{-30}` of 0 or 1 (it is set to 0 / 1 outside; the neglected weights sum
    to less than :math:`2 \times 10^{-30}`). That window holds
    :math:`O(\sqrt{n})` points, so the cost is dominated by the sort.

    Parameters
    ----------
    x : array_like, shape (n,)
        Sample of finite values, ``n >= 2``.
    q : float or array_like of float
        Probability level(s), each strictly between 0 and 1.

    Returns
    -------
    float or ndarray
        A float when ``q`` is a scalar, else an array with the shape of ``q``.

    Raises
    ------
    ValueError
        If ``x`` is not a finite 1-D sample of at least 2 points, or a ``q`` is not in
        (0, 1).

    References
    ----------
    F. E. Harrell and C. E. Davis (1982), *Biometrika* 69:635–640,
    doi:10.1093/biomet/69.3.635.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=1000)
    >>> round(hd_quantile(x, 0.5), 4)
    -0.0757
    >>> hd_quantile(x, [0.25, 0.75]).round(4).tolist()
    [-0.6902, 0.6147]
    """
    x = as_float_array(x, "x")
    if x.size < 2:
        raise ValueError(f"`x` must have at least 2 points, got {x.size}")
    q_arr = np.asarray(q)
    scalar = q_arr.ndim == 0
    probs = np.array([check_probability(v, "q") for v in q_arr.ravel()], dtype=np.float64)
    if probs.size == 0:
        raise ValueError("`q` must not be empty")
    est = quantiles_sorted(np.sort(x), probs, "hd")
    if scalar:
        return float(est[0])
    return est.reshape(q_arr.shape)


def skewness_gm(x: Any, *, quantiles: str = "hd") -> float:
    r"""Groeneveld–Meeden robust skewness of the sample ``x``.

    .. math::

        \beta_{GM} = \frac{\bar{x} - \tilde{x}}{\frac{1}{n}\sum_i |x_i - \tilde{x}|},

    with :math:`\bar x` the mean and :math:`\tilde x` the median (Harrell–Davis
    estimate by default, as ErrViewLib's ``skewgm``). :math:`\beta_{GM} \in [-1, 1]`,
    0 for a symmetric distribution; for the exponential distribution it is
    :math:`(1 - \ln 2)/\ln 2 \approx 0.443`.

    Parameters
    ----------
    x : array_like, shape (n,)
        Sample of finite values, ``n >= 4``.
    quantiles : {"hd", "plain"}, default "hd"
        Median by :func:`hd_quantile` or by :func:`numpy.median`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For an invalid ``x`` or ``quantiles``, fewer than 4 points, or a degenerate
        sample (all values equal, so that the denominator is 0).

    References
    ----------
    R. A. Groeneveld and G. Meeden (1984), *The Statistician* 33:391–399,
    doi:10.2307/2987742. P. Pernot, ErrViewLib (R package), function ``skewgm``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).exponential(size=10_000)
    >>> round(skewness_gm(x), 2)
    0.45
    """
    x = as_float_array(x, "x")
    method = check_choice(quantiles, "quantiles", _QUANTILE_METHODS)
    _check_min_points(x, "x")
    xs = np.sort(x)
    _check_not_constant(xs, "x")
    if method == "plain":
        median = float(np.median(xs))
    else:
        median = float(quantiles_sorted(xs, np.array([0.5]), "hd")[0])
    return _skewness_from(xs, median)


def kurtosis_cs(x: Any, *, quantiles: str = "hd") -> float:
    r"""Crow–Siddiqui robust kurtosis of the sample ``x``.

    .. math::

        \kappa_{CS} = \frac{q_{0.975} - q_{0.025}}{q_{0.75} - q_{0.25}} - 2.91,

    where 2.91 is the (rounded) value of the ratio for the normal distribution,
    :math:`2\,\Phi^{-1}(0.975) / (2\,\Phi^{-1}(0.75)) = 2.9058`, so that a normal
    sample gives :math:`\kappa_{CS} \approx -0.004`. Quantiles by Harrell–Davis by
    default (as ErrViewLib's ``kurtcs``), else numpy's default (linear, type 7).

    Parameters
    ----------
    x, quantiles
        As in :func:`skewness_gm` (here the four quantiles by :func:`hd_quantile` or by
        :func:`numpy.quantile`).

    Returns
    -------
    float
        κ_CS: about 0 for a normal sample, > 0 for heavier tails.

    Raises
    ------
    ValueError
        As :func:`skewness_gm`, and for an interquartile range of 0 (with plain quantiles,
        when many values are tied).

    References
    ----------
    E. L. Crow and M. M. Siddiqui (1967), *J. Am. Stat. Assoc.* 62:353–389,
    doi:10.1080/01621459.1967.10482914. P. Pernot, ErrViewLib (R package), function
    ``kurtcs``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=10_000)
    >>> round(kurtosis_cs(x), 2)
    -0.02
    """
    x = as_float_array(x, "x")
    method = check_choice(quantiles, "quantiles", _QUANTILE_METHODS)
    _check_min_points(x, "x")
    xs = np.sort(x)
    _check_not_constant(xs, "x")
    return _kurtosis_from(quantiles_sorted(xs, _CS_PROBS, method), "x")


@dataclass(frozen=True)
class ShapeScreen:
    r"""Robust shape indicators of ``u**2``, ``E**2`` and ``Z**2`` and their verdict.

    A squared variable *fails* its screen when its Groeneveld–Meeden skewness exceeds
    its threshold: :math:`\beta_{GM}(u^2) > 0.6` makes the statistics built on
    :math:`u^2` unreliable, :math:`\beta_{GM}(E^2) > 0.8` likewise those built on
    :math:`E^2`, and :math:`\beta_{GM}(Z^2) > 0.8` makes ZMS unreliable (safety thresholds of
    docs/methods.md, "Shape screen"). The kurtoses are reported, not used in the verdict.
    Use :func:`dataclasses.replace` to apply other thresholds.

    Design decision — statistic to screens mapping used by :meth:`unreliable`
    (case-insensitive names):

    * ``ZMS``, ``MZ``, ``VarZ``, ``NLL`` (functions of Z): flagged when the ``Z2``
      screen fails;
    * ``RCE``, ``RCE2``, ``MSE``, ``MV`` (functions of ⟨u²⟩ and ⟨E²⟩): flagged when the
      ``u2`` **or** the ``E2`` screen fails;
    * ``CC``, ``ENCE``, ``ZMSE``, ``UCE``: never flagged — the thresholds were derived
      for the average-calibration statistics (Pernot 2024) and have not been
      established for rank or binned statistics.

    Attributes
    ----------
    beta_u2, beta_E2, beta_Z2 : float
        :math:`\beta_{GM}` of ``u**2``, ``E**2`` and ``Z**2``.
    kappa_u2, kappa_E2, kappa_Z2 : float
        :math:`\kappa_{CS}` of ``u**2``, ``E**2`` and ``Z**2``.
    threshold_u2, threshold_E2, threshold_Z2 : float
        Largest acceptable :math:`\beta_{GM}` (0.6, 0.8, 0.8).
    """

    beta_u2: float
    beta_E2: float
    beta_Z2: float
    kappa_u2: float
    kappa_E2: float
    kappa_Z2: float
    threshold_u2: float = 0.6
    threshold_E2: float = 0.8
    threshold_Z2: float = 0.8

    @property
    def reliable_u2(self) -> bool:
        """True when ``beta_u2 <= threshold_u2``."""
        return bool(self.beta_u2 <= self.threshold_u2)

    @property
    def reliable_E2(self) -> bool:
        """True when ``beta_E2 <= threshold_E2``."""
        return bool(self.beta_E2 <= self.threshold_E2)

    @property
    def reliable_Z2(self) -> bool:
        """True when ``beta_Z2 <= threshold_Z2``."""
        return bool(self.beta_Z2 <= self.threshold_Z2)

    def unreliable(self, stat_name: str) -> bool:
        """Whether the screen flags the statistic ``stat_name`` (see the class notes).

        Raises
        ------
        ValueError
            If ``stat_name`` is not a registered statistic.
        """
        return any(not getattr(self, f"reliable_{v}") for v in info(stat_name).screens)


@dataset_args
def shape_screen(E: Any, u: Any, *, quantiles: str = "hd") -> ShapeScreen:
    r"""Shape screen of the dataset ``(E, u)``.

    Computes :func:`skewness_gm` and :func:`kurtosis_cs` of :math:`u^2`, :math:`E^2`
    and :math:`Z^2` with :math:`Z = E/u`. With HD quantiles, the beta-CDF weights
    are computed once and shared by the three variables.

    Parameters
    ----------
    E : array_like, shape (M,)
        Errors, finite.
    u : array_like, shape (M,)
        Uncertainties, finite and > 0. ``M >= 4``.
    quantiles : {"hd", "plain"}, default "hd"
        Quantile estimator (see :func:`skewness_gm`).

    Returns
    -------
    ShapeScreen

    Raises
    ------
    ValueError
        For an invalid dataset or ``quantiles``, fewer than 4 points, or a degenerate
        squared variable, named ``E**2`` or ``Z**2``. A constant ``u``
        (homoscedastic data) is accepted: its screen reports β = 0 and κ = NaN; so is a
        constant ``|E|`` (for E²).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> u = rng.lognormal(sigma=1.0, size=5000)
    >>> E = u * rng.normal(size=5000)
    >>> s = shape_screen(E, u)
    >>> s.reliable_u2, s.reliable_Z2
    (False, True)
    >>> s.unreliable("RCE"), s.unreliable("CC")
    (True, False)
    """
    E, u = check_E_u(E, u, min_size=MIN_POINTS)
    Z = E / u
    return _screen_sorted(np.sort(u * u), np.sort(E * E), np.sort(Z * Z), quantiles)


def shape_screen_prepared(prep: Prepared, *, quantiles: str = "hd") -> ShapeScreen:
    """:func:`shape_screen` of a dataset checked and prepared by the caller
    (:func:`mcref.stats.prepare`): its u² is already sorted, and its E² too when the order of
    |E| was prepared (for CC); the same screen to the bit, with one sort (Z²) instead of three."""
    if prep.M < MIN_POINTS:
        raise ValueError(f"the shape screen needs at least {MIN_POINTS} points, got {prep.M}")
    e2 = prep.E2[prep.eord] if prep.eord.size == prep.M else np.sort(prep.E2)
    return _screen_sorted(prep.u2, e2, np.sort(prep.z2), quantiles)


def _screen_sorted(u2: np.ndarray, e2: np.ndarray, z2: np.ndarray, quantiles: str) -> ShapeScreen:
    """The screen from the sorted u², E² and Z²."""
    method = check_choice(quantiles, "quantiles", _QUANTILE_METHODS)
    weights = hd_weights(u2.size, _SCREEN_PROBS) if method == "hd" else None
    if u2[0] == u2[-1]:
        # homoscedastic data: u² has no shape to screen (no skewness, no tails)
        b_u, k_u = 0.0, float("nan")
    else:
        b_u, k_u = _shape_of(u2, "u**2", method, weights)
    if e2[0] == e2[-1]:
        # one |E| for every point: E² has no shape either (CC is then not testable in validate)
        b_E, k_E = 0.0, float("nan")
    else:
        b_E, k_E = _shape_of(e2, "E**2", method, weights)
    b_Z, k_Z = _shape_of(z2, "Z**2", method, weights)
    return ShapeScreen(beta_u2=b_u, beta_E2=b_E, beta_Z2=b_Z,
                       kappa_u2=k_u, kappa_E2=k_E, kappa_Z2=k_Z)


def skewness_gm_dist(dist) -> float:
    r"""Population Groeneveld–Meeden skewness of a positive continuous distribution.

    .. math::

        \beta_{GM} = \frac{\mu - m}{E|X - m|}
                   = \frac{\mu - m}{\mu - m + 2\int_0^m F(x)\,dx},

    with μ the mean and m the median (E|X − m| = μ − m + 2E[(m − X)⁺]); 1 when the mean is
    infinite. ``dist`` is a frozen :mod:`scipy.stats` distribution on (0, ∞).

    Examples
    --------
    >>> import math, scipy.stats
    >>> round(skewness_gm_dist(scipy.stats.expon()), 4) == round((1 - math.log(2)) / math.log(2), 4)
    True
    """
    from scipy import integrate

    mu = float(dist.mean())
    if not math.isfinite(mu):
        return 1.0
    m = float(dist.median())
    below = integrate.quad(dist.cdf, 0.0, m, limit=200, epsabs=1e-13, epsrel=1e-11)[0]
    return (mu - m) / (mu - m + 2.0 * below)


def nig_skewness(nu: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""The NIG model's curve of the skewness map: (β_GM(u²), β_GM(E²)) for each ν.

    NIG model: u²/σ² ~ IG(ν/2, ν/2) and E = u·N(0, 1), so that E²/σ² ~ F(1, ν) (scales do
    not change β_GM). Population values (:func:`skewness_gm_dist`); the heavy-tails paper
    (Fig. 6) draws the same curve from samples of 10⁶ points.

    Examples
    --------
    >>> bu, be = nig_skewness([4.0, 1e3])
    >>> bool(bu[0] > bu[1] and be[0] > be[1])
    True
    """
    from scipy import stats as st

    nus = np.atleast_1d(np.asarray(nu, dtype=float))
    if np.any(~np.isfinite(nus)) or np.any(nus <= 0):
        raise ValueError("`nu` must be finite and > 0")
    bu = np.array([skewness_gm_dist(st.invgamma(v / 2, scale=v / 2)) for v in nus])
    be = np.array([skewness_gm_dist(st.f(1, v)) for v in nus])
    return bu, be
