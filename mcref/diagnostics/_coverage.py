"""Coverage: binomial intervals of a proportion (Wilson, Clopper–Pearson, …), the quantile
factor of a D, the whole-set calibration curve P(E ≤ u·q_D(p)) vs p and the PIT histogram.

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import special, stats as st

from ..core._checks import dataset_args, check_choice, check_E_u, check_int
from ..kernels.generative import normp_scale

__all__ = ["Z975", "wilson_interval", "quantile_factor", "BINOMIAL_INTERVALS", "binomial_interval", "CalibrationCurve",
           "calibration_curve", "PIT", "pit"]


Z975 = 1.959963984540054


def wilson_interval(k, n, *, correction: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Wilson 95 % interval of a binomial proportion k/n, with the continuity correction when
    ``correction`` (DescTools ``BinomCI`` methods ``"wilson"`` and ``"wilsoncc"``).

    Examples
    --------
    >>> lo, hi = wilson_interval(95, 100)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.8882, 0.9785)
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = k / n
    q = 1.0 - p
    z2 = Z975**2
    if not correction:
        mid = (k + z2 / 2) / (n + z2)
        half = Z975 * np.sqrt(n) / (n + z2) * np.sqrt(p * q + z2 / (4 * n))
        return np.maximum(0.0, mid - half), np.minimum(1.0, mid + half)
    with np.errstate(invalid="ignore"):
        lo = (2 * k + z2 - 1 - Z975 * np.sqrt(np.maximum(z2 - 2 - 1 / n + 4 * p * (n * q + 1), 0))) / (2 * (n + z2))
        hi = (2 * k + z2 + 1 + Z975 * np.sqrt(np.maximum(z2 + 2 - 1 / n + 4 * p * (n * q - 1), 0))) / (2 * (n + z2))
    lo = np.where(p == 0, 0.0, np.maximum(0.0, lo))
    hi = np.where(p == 1, 1.0, np.minimum(1.0, hi))
    return lo, hi


def quantile_factor(prob, dist: Any = "normal") -> np.ndarray:
    """Quantiles q_D(prob) of a unit-variance generative distribution D (normal, t(ν),
    normp(p), uniform, laplace; :func:`mcref.get_distribution` names). normp(p):
    s·sign(P − ½)·(Γ⁻¹_{1/p}(abs(2P − 1)))^{1/p}, s = √(Γ(1/p)/Γ(3/p)) (:func:`scipy.stats.gennorm`;
    normalp's ``qnormp`` rescaled to unit variance, as ErrViewLib's ``Normp``)."""
    from ..generative import get_distribution

    d = get_distribution(dist)
    p = np.asarray(prob, dtype=float)
    if d.kind == "normal":
        return special.ndtri(p)
    if d.kind == "t":
        return st.t.ppf(p, d.nu) * math.sqrt((d.nu - 2) / d.nu)
    if d.kind == "uniform":
        return math.sqrt(3.0) * (2 * p - 1)
    if d.kind == "laplace":
        return st.laplace.ppf(p, scale=1 / math.sqrt(2.0))
    if d.kind == "normp":
        return st.gennorm.ppf(p, d.nu) * normp_scale(d.nu)
    raise ValueError(f"`dist`: quantiles are available for normal, t(ν), normp(p), uniform and laplace, got {d.label}")


#: The binomial interval methods of :func:`binomial_interval`.
BINOMIAL_INTERVALS = ("wilson", "wilsoncc", "clopper-pearson", "agresti-coull", "jeffreys")


def binomial_interval(k, n, *, method: str = "wilson", confidence_level: float = 0.95):
    r"""Confidence interval of a binomial proportion k/n (DescTools ``BinomCI``, the intervals
    offered by ErrViewLib's ``plotLCP``).

    With z = Φ⁻¹((1 + level)/2), p̂ = k/n, α = 1 − level:

    * ``"wilson"``: (k + z²/2)/(n + z²) ∓ z√n/(n + z²)·√(p̂(1 − p̂) + z²/(4n));
    * ``"wilsoncc"``: Wilson with continuity correction (:func:`wilson_interval`);
    * ``"clopper-pearson"``: Beta quantiles B⁻¹(α/2; k, n − k + 1), B⁻¹(1 − α/2; k + 1, n − k);
    * ``"agresti-coull"``: p̃ ∓ z√(p̃(1 − p̃)/ñ), ñ = n + z², p̃ = (k + z²/2)/ñ;
    * ``"jeffreys"``: Beta(k + ½, n − k + ½) quantiles, 0 at k = 0 and 1 at k = n.

    Limits are clipped to [0, 1]. Returns ``(low, high)`` arrays.

    Examples
    --------
    >>> lo, hi = binomial_interval(3, 10, method="clopper-pearson")
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.0667, 0.6525)
    """
    method = check_choice(method, "method", BINOMIAL_INTERVALS)
    if not 0.5 <= confidence_level < 1:
        raise ValueError(f"`confidence_level` must be in [0.5, 1), got {confidence_level}")
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    a = 1.0 - confidence_level
    z = float(special.ndtri(1 - a / 2))
    p = k / n
    with np.errstate(invalid="ignore", divide="ignore"):
        if method in ("wilson", "wilsoncc"):
            if confidence_level == 0.95:
                return wilson_interval(k, n, correction=method == "wilsoncc")
            if method == "wilsoncc":
                raise ValueError("`method`='wilsoncc' is available at confidence_level 0.95 only")
            mid = (k + z**2 / 2) / (n + z**2)
            half = z * np.sqrt(n) / (n + z**2) * np.sqrt(p * (1 - p) + z**2 / (4 * n))
            lo, hi = mid - half, mid + half
        elif method == "agresti-coull":
            nt = n + z**2
            pt = (k + z**2 / 2) / nt
            half = z * np.sqrt(pt * (1 - pt) / nt)
            lo, hi = pt - half, pt + half
        elif method == "jeffreys":
            lo = np.where(k == 0, 0.0, special.betaincinv(k + 0.5, n - k + 0.5, a / 2))
            hi = np.where(k == n, 1.0, special.betaincinv(k + 0.5, n - k + 0.5, 1 - a / 2))
        else:  # clopper-pearson
            lo = np.where(k == 0, 0.0, special.betaincinv(k, n - k + 1, a / 2))
            hi = np.where(k == n, 1.0, special.betaincinv(k + 1, n - k, 1 - a / 2))
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


@dataclass(frozen=True)
class CalibrationCurve:
    """Observed vs expected cumulative probability: ``observed[i]`` = P(E ≤ u·q_D(p_i)), with
    the Wilson-cc 95 % band (``low``, ``high``) and the miscalibration area.

    ``miscalibration_area_up`` is half the area of the band, ∫ (high − low)/2 dp, and
    ``calibration_error`` = √Σ(observed − p)² over the grid with its end points (ErrViewLib
    ``plotCalibrationQ``'s ``misCalUp`` and ``calErr``): an area below ``miscalibration_area_up``
    is within the band's mean half-width."""

    expected: np.ndarray
    observed: np.ndarray
    low: np.ndarray
    high: np.ndarray
    miscalibration_area: float
    dist: str
    miscalibration_area_up: float = math.nan
    calibration_error: float = math.nan

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"expected": self.expected, "observed": self.observed, "low": self.low,
                             "high": self.high})


@dataset_args
def calibration_curve(E, u, *, dist: Any = "normal", probs: Sequence[float] | None = None) -> CalibrationCurve:
    r"""Calibration curve of the predictive distributions E ~ u·D (ErrViewLib
    ``plotCalibrationQ``): the observed fraction of E ≤ u·q_D(p) against p on a grid
    (default p = 0.005 … 0.995), a Wilson-cc 95 % band around the observed curve, and the
    miscalibration area ∫₀¹ abs(observed − p) dp (trapezoid rule with the end points 0 and 1).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2); u = rng.uniform(0.5, 2, 5000); E = u * rng.normal(size=5000)
    >>> calibration_curve(E, u).miscalibration_area < 0.02
    True
    """
    from ..generative import get_distribution

    E, u = check_E_u(E, u, min_size=4)
    p = np.arange(5, 1000, 5) / 1000 if probs is None else np.asarray(probs, dtype=float)
    if p.ndim != 1 or np.any((p <= 0) | (p >= 1)):
        raise ValueError("`probs` must be probabilities strictly between 0 and 1")
    z = E / u
    obs = np.array([np.mean(z <= q) for q in quantile_factor(p, dist)])
    lo, hi = wilson_interval(obs * z.size, z.size, correction=True)
    pt = np.r_[0.0, p, 1.0]
    pe = np.r_[0.0, obs, 1.0]
    trapz = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
    area = float(trapz(np.abs(pe - pt), pt))
    lo_e, hi_e = wilson_interval(pe * z.size, z.size, correction=True)  # the band with its end points
    area_up = float(trapz(np.abs(hi_e - lo_e), pt)) / 2
    return CalibrationCurve(p, obs, lo, hi, area, get_distribution(dist).label, area_up,
                            float(np.sqrt(np.sum((pt - pe) ** 2))))


@dataclass(frozen=True)
class PIT:
    """Probability integral transform of the z-scores (:func:`pit`).

    Attributes
    ----------
    values : ndarray
        F_D(z_i), uniform on (0, 1) for a calibrated set.
    edges : ndarray
        Histogram edges (``n_bins`` equal cells of [0, 1]).
    counts : ndarray of int
        Histogram counts.
    expected, low, high : float
        M/n_bins and the 2.5 and 97.5 % Poisson quantiles around it (the band of a uniform
        histogram).
    dist : str
    """

    values: np.ndarray
    edges: np.ndarray
    counts: np.ndarray
    expected: float
    low: float
    high: float
    dist: str


@dataset_args
def pit(E, u, *, dist: Any = "normal", shape: float | None = None, n_bins: int = 10) -> PIT:
    r"""PIT histogram: F_D(Z), Z = E/u, for a unit-variance error distribution D, with the Poisson
    95 % band of a uniform histogram, [q_{0.025}, q_{0.975}] of Poisson(M/n_bins) (ErrViewLib
    ``plotPIT``).

    ``dist`` is a distribution of :func:`mcref.get_distribution` (normal, t(ν), uniform,
    Laplace), or ``"normp"`` with ``shape`` p: the unit-variance generalised normal of density
    ∝ exp(−|x/s|^p), ErrViewLib's ``dist = "norm"`` (``normalp::pnormp``; p = 2 is the normal
    distribution, p = 1 Laplace). Cells are [k/n, (k+1)/n) (the last one closed); R's ``hist``
    closes them on the right, which matters only for values exactly on a cell edge.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 5000); E = u * rng.normal(size=5000)
    >>> h = pit(E, u)
    >>> int(h.counts.sum()), h.expected
    (5000, 500.0)
    """
    E, u = check_E_u(E, u, min_size=4)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    z = E / u
    if isinstance(dist, str) and dist.lower() == "normp":
        if shape is None or not shape > 0:
            raise ValueError(f"`shape` must be > 0 for dist='normp', got {shape}")
        scale = normp_scale(shape)  # unit variance
        values, label = st.gennorm.cdf(z / scale, shape), f"normp({shape:g})"
    else:
        from ..generative import get_distribution

        d = get_distribution(dist)
        label = d.label
        if d.kind == "normal":
            values = special.ndtr(z)
        elif d.kind == "t":
            values = st.t.cdf(z * math.sqrt(d.nu / (d.nu - 2)), d.nu)
        elif d.kind == "uniform":
            values = np.clip((z / math.sqrt(3.0) + 1) / 2, 0.0, 1.0)
        elif d.kind == "laplace":
            values = st.laplace.cdf(z, scale=1 / math.sqrt(2.0))
        elif d.kind == "normp":
            values = st.gennorm.cdf(z / normp_scale(d.nu), d.nu)
        else:
            raise ValueError(f"`dist`: the PIT needs a normal, t(ν), normp(p), uniform or laplace D, got {d.label}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    counts = np.histogram(values, bins=edges)[0]
    lam = z.size / n_bins
    return PIT(values, edges, counts, lam, float(st.poisson.ppf(0.025, lam)), float(st.poisson.ppf(0.975, lam)),
               label)
