r"""ζ-scores: the validation test of a statistic against its reference (docs/methods.md, "ζ-scores").

.. math::

    \zeta = \frac{\theta - \theta_\mathrm{ref}}{\sqrt{(\theta - \mathrm{lim})^2 + (2u_\mathrm{ref})^2}},
    \qquad \mathrm{lim} = \begin{cases} I^- & \theta \ge \theta_\mathrm{ref} \\ I^+ & \text{otherwise} \end{cases}

:math:`|\zeta| \le 1` validates. With :math:`u_\mathrm{ref} = 0` this is Eq. 20 of
Pernot (2024): :math:`|\zeta| \le 1 \iff \theta_\mathrm{ref} \in I`.
"""

from __future__ import annotations

import math

__all__ = ["zeta", "zeta_sim2"]


def _finite(x, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a real number, got {x!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"`{name}` must be finite, got {v}")
    return v


def zeta(estimate: float, reference: float, low: float, high: float, *, u_ref: float = 0.0) -> float:
    r"""ζ-score of ``estimate`` against ``reference`` with the interval [low, high] around it.

    Parameters
    ----------
    estimate : float
        θ, the statistic on the data.
    reference : float
        θ_ref (predefined, or simulated).
    low, high : float
        95 % interval I around θ (e.g. the BCa interval), ``low <= estimate <= high`` not
        required but ``low <= high`` is.
    u_ref : float, default: 0
        Standard uncertainty of a simulated reference (its Monte Carlo standard error);
        enters as ``(2 u_ref)²``.

    Returns
    -------
    float
        ζ; ``|ζ| <= 1`` means validated. ±inf when θ ≠ θ_ref and the relevant half of the
        interval has zero width (and u_ref = 0); 0 when θ = θ_ref.

    References
    ----------
    .. [1] P. Pernot, "Negative impact of heavy-tailed uncertainty and error distributions
       on the reliability of calibration statistics for machine learning regression
       tasks" (2024), arXiv:2402.10043, Eq. 20.

    Examples
    --------
    >>> round(zeta(1.1, 1.0, 0.95, 1.3), 6)   # reference inside the interval
    0.666667
    >>> zeta(1.1, 1.0, 1.05, 1.3) > 1    # reference below the interval
    True
    """
    th = _finite(estimate, "estimate")
    ref = _finite(reference, "reference")
    lo = _finite(low, "low")
    hi = _finite(high, "high")
    ur = _finite(u_ref, "u_ref")
    if lo > hi:
        raise ValueError(f"`low` must be <= `high`, got [{lo}, {hi}]")
    if ur < 0:
        raise ValueError(f"`u_ref` must be >= 0, got {ur}")
    diff = th - ref
    if diff == 0.0:
        return 0.0
    lim = lo if th >= ref else hi
    den = math.sqrt((th - lim) ** 2 + (2.0 * ur) ** 2)
    if den == 0.0:
        return math.copysign(math.inf, diff)
    return diff / den


def zeta_sim2(estimate: float, reference: float, low_ref: float, high_ref: float) -> float:
    r"""ζ of the "Sim2" scheme: the interval I_D of the simulated θ_k sits around the
    reference, so the roles swap: :math:`\zeta_{Sim2} = -\zeta(\theta_\mathrm{ref}, \theta, I_D)`.

    Examples
    --------
    >>> round(zeta_sim2(1.1, 1.0, 0.9, 1.05), 6)   # estimate above the upper simulated quantile
    2.0
    """
    return -zeta(reference, estimate, low_ref, high_ref)
