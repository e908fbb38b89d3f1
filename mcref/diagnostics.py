"""Conditional-calibration diagnostics: consistency (along u) and adaptivity (along an input
feature x) (docs/methods.md, "Diagnostics").

The toolbox of P. Pernot's primer ("Validation of uncertainty quantification metrics: a
primer based on the consistency and adaptivity concepts", arXiv:2303.07170; code
ppernot/2023_Primer and ErrViewLib):

===========================  ==============================================  =============
function                     per bin (bins of x if given, else of u)         interval
===========================  ==============================================  =============
:func:`lzisd`                1/sd(Z), target 1                               delta method
:func:`lzms`                 ⟨Z²⟩, target 1                                  Student / BCa
:func:`lcp`                  coverage P(abs(E) ≤ U_p), target p              Wilson
:func:`reliability_diagram`  RMSE_b vs RMV_b, target the identity            bootstrap
:func:`calibration_curve`    P(E ≤ u·q_D(p)) vs p (whole set), miscal. area  Wilson-cc
:func:`confidence_curve`     RMSE or MAE after removing the largest u; DFPR  simulated
:func:`running_quantiles`    sliding-window HD quantiles of y along x        —
===========================  ==============================================  =============

Every binned diagnostic returns a :class:`BinnedDiagnostic` with per-bin arrays
``centers``, ``value``, ``low``, ``high``, ``counts`` and ``to_frame()``. ``binning`` is
``"equal"`` (equal counts, the default) or ``"adaptive"`` (:func:`mcref.binning.adaptive_bins`);
the default number of bins is max(min(⌊M/150⌋, 15), 2), as ErrViewLib's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numba
import numpy as np
from scipy import special, stats as st

from ._validation import as_float_array, check_choice, check_E_u, check_int, check_seed
from .binning import make_bins
from .kernels import confidence as KC
from .kernels.rng import chunk_states
from .parallel import map_chunks
from .shape import hd_quantile

__all__ = ["BinnedDiagnostic", "CalibrationCurve", "ConfidenceCurve", "RunningQuantiles", "lzisd", "lzms",
           "lcp", "reliability_diagram", "calibration_curve", "confidence_curve", "running_quantiles",
           "default_n_bins", "wilson_interval", "quantile_factor"]

_Z975 = 1.959963984540054


def default_n_bins(m: int) -> int:
    """ErrViewLib's default bin count of the local diagnostics: max(min(⌊M/150⌋, 15), 2)."""
    return max(min(m // 150, 15), 2)


@dataclass(frozen=True)
class BinnedDiagnostic:
    """A local statistic per bin.

    Attributes
    ----------
    name : str
        ``LZISD``, ``LZMS``, ``LCP(p)`` or ``RMSE``.
    centers : ndarray
        Bin abscissa: mid-range of the binning variable in the bin (the RMV for the
        reliability diagram).
    value, low, high : ndarray
        The statistic and its 95 % interval per bin.
    counts : ndarray of int
    target : float or ndarray
        The value of a calibrated dataset (1, p, or the RMV).
    variable : str
        ``"u"`` or ``"x"``: what the bins were cut on.
    overall : (float, float, float)
        The statistic on the whole set with its interval.
    """

    name: str
    centers: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    counts: np.ndarray
    target: Any
    variable: str
    overall: tuple[float, float, float] = (math.nan, math.nan, math.nan)

    @property
    def valid(self) -> np.ndarray:
        """Per bin: the interval contains the target."""
        t = np.broadcast_to(np.asarray(self.target, dtype=float), self.value.shape)
        return (self.low <= t) & (t <= self.high)

    @property
    def fraction_valid(self) -> float:
        """f_v: the fraction of bins whose interval contains the target."""
        return float(np.mean(self.valid))

    def to_frame(self):
        """A :class:`pandas.DataFrame`, one row per bin."""
        import pandas as pd

        t = np.broadcast_to(np.asarray(self.target, dtype=float), self.value.shape)
        return pd.DataFrame({"center": self.centers, "value": self.value, "low": self.low, "high": self.high,
                             "count": self.counts, "target": t, "valid": self.valid})


def _binned(E, u, x, n_bins, binning, log, min_count):
    E, u = check_E_u(E, u, min_size=4)
    if x is None:
        var, v = "u", u
    else:
        v = as_float_array(x, "x")
        if v.size != E.size:
            raise ValueError(f"`x` must have the same length as `E` ({E.size}), got {v.size}")
        var = "x"
    m = E.size
    n_bins = default_n_bins(m) if n_bins is None else check_int(n_bins, "n_bins", minimum=1)
    if log is None:
        log = bool(np.all(v > 0))
    b = make_bins(v, n_bins, binning=binning, min_count=min_count, shrink=True, log=log)
    vs = v[b.order]
    centers = np.array([0.5 * (vs[a] + vs[c - 1]) for a, c in zip(b.starts[:-1], b.starts[1:])])
    return E[b.order], u[b.order], b.starts, centers, var


def _varvar(z: np.ndarray) -> float:
    """Var(Var(Z)) ≈ (m4 − (n−3)/(n−1)·m2²)/n, central moments over n (Cho et al. 2008)."""
    n = z.size
    d = z - z.mean()
    m2 = np.mean(d**2)
    m4 = np.mean(d**4)
    return float((m4 - (n - 3) / (n - 1) * m2**2) / n)


def _isd(z: np.ndarray) -> tuple[float, float, float]:
    v = float(np.var(z, ddof=1))
    s = 1.0 / math.sqrt(v)
    sd = math.sqrt(max(_varvar(z), 0.0)) / (2.0 * v**1.5)
    return s, s - _Z975 * sd, s + _Z975 * sd


def lzisd(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
          min_count: int = 30) -> BinnedDiagnostic:
    r"""Local z inverse standard deviation: 1/sd(Z) per bin, target 1 (primer v1, ErrViewLib
    ``plotLZISD`` with ``method="cho"``).

    Interval: S ± 1.96·SD with S = 1/√V, V = var(Z) (n − 1) and, by the delta method,
    SD = √varvar(Z)/(2·V^{3/2}), varvar = (μ₄ − (n−3)/(n−1)·μ₂²)/n (central moments over n;
    S. Cho et al., 2008).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> d = lzisd(E, u)
    >>> d.counts.tolist() == [200] * 15, d.fraction_valid > 0.8
    (True, True)
    """
    Es, us, starts, centers, var = _binned(E, u, x, n_bins, binning, log, min_count)
    z = Es / us
    res = np.array([_isd(z[a:c]) for a, c in zip(starts[:-1], starts[1:])])
    return BinnedDiagnostic("LZISD", centers, res[:, 0], res[:, 1], res[:, 2], np.diff(starts), 1.0, var,
                            _isd(z))


def _zms_interval(z2: np.ndarray, method: str, n_boot: int, seed) -> tuple[float, float, float]:
    n = z2.size
    mu = float(z2.mean())
    if method == "stud" or (method == "auto" and n >= 400):
        h = st.t.ppf(0.975, n - 1) * math.sqrt(np.var(z2, ddof=1) / n)
        return mu, mu - h, mu + h
    from .bootstrap import bootstrap

    b = bootstrap("ZMS", np.sqrt(z2), np.ones(n), n_boot=n_boot, seed=seed)
    return mu, b.low, b.high


def lzms(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
         min_count: int = 100, method: str = "auto", n_boot: int = 5000, seed=None) -> BinnedDiagnostic:
    r"""Local z mean squares ⟨Z²⟩ per bin, target 1 (ErrViewLib ``plotLZMS``).

    Interval: Student, ⟨Z²⟩ ± t_{0.975, n−1}·sd(Z²)/√n (``method="stud"``, and ``"auto"``
    for bins of ≥ 400 points), else BCa bootstrap (:func:`mcref.bootstrap`).
    """
    method = check_choice(method, "method", ("auto", "stud", "bca"))
    Es, us, starts, centers, var = _binned(E, u, x, n_bins, binning, log, min_count)
    z2 = (Es / us) ** 2
    seeds = check_seed(seed).spawn(starts.size)
    res = np.array([_zms_interval(z2[a:c], method, n_boot, s) for a, c, s in zip(starts[:-1], starts[1:], seeds)])
    return BinnedDiagnostic("LZMS", centers, res[:, 0], res[:, 1], res[:, 2], np.diff(starts), 1.0, var,
                            _zms_interval(z2, method, n_boot, seeds[-1]))


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
    z2 = _Z975**2
    if not correction:
        mid = (k + z2 / 2) / (n + z2)
        half = _Z975 * np.sqrt(n) / (n + z2) * np.sqrt(p * q + z2 / (4 * n))
        return np.maximum(0.0, mid - half), np.minimum(1.0, mid + half)
    with np.errstate(invalid="ignore"):
        lo = (2 * k + z2 - 1 - _Z975 * np.sqrt(np.maximum(z2 - 2 - 1 / n + 4 * p * (n * q + 1), 0))) / (2 * (n + z2))
        hi = (2 * k + z2 + 1 + _Z975 * np.sqrt(np.maximum(z2 + 2 - 1 / n + 4 * p * (n * q - 1), 0))) / (2 * (n + z2))
    lo = np.where(p == 0, 0.0, np.maximum(0.0, lo))
    hi = np.where(p == 1, 1.0, np.minimum(1.0, hi))
    return lo, hi


def quantile_factor(prob, dist: Any = "normal") -> np.ndarray:
    """Quantiles q_D(prob) of a unit-variance generative distribution D (normal, t(ν),
    uniform, laplace; :func:`mcref.get_distribution` names)."""
    from .generative import get_distribution

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
    raise ValueError(f"`dist`: quantiles are available for normal, t(ν), uniform and laplace, got {d.label}")


def lcp(E, u, x=None, *, p: float = 0.95, dist: Any = "normal", n_bins: int | None = None,
        binning: str = "equal", log: bool | None = None, min_count: int = 30) -> BinnedDiagnostic:
    r"""Local coverage probability of the intervals ±U_p, U_p = u·q_D((1+p)/2), per bin, with
    Wilson 95 % intervals; target p (ErrViewLib ``plotLCP``; coverage counts abs(E) ≤ U_p).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1); u = rng.uniform(0.5, 2, 4000); E = u * rng.normal(size=4000)
    >>> abs(lcp(E, u, p=0.5).overall[0] - 0.5) < 0.03
    True
    """
    if not 0 < p < 1:
        raise ValueError(f"`p` must be in (0, 1), got {p}")
    Es, us, starts, centers, var = _binned(E, u, x, n_bins, binning, log, min_count)
    inside = np.abs(Es) <= us * float(quantile_factor((1 + p) / 2, dist))
    k = np.add.reduceat(inside.astype(np.int64), starts[:-1])
    n = np.diff(starts)
    lo, hi = wilson_interval(k, n)
    lo_all, hi_all = wilson_interval(inside.sum(), inside.size)
    return BinnedDiagnostic(f"LCP({p:g})", centers, k / n, lo, hi, n, p, var,
                            (float(inside.mean()), float(lo_all), float(hi_all)))


def reliability_diagram(E, u, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
                        min_count: int = 30, n_boot: int = 500, seed=None) -> BinnedDiagnostic:
    r"""Reliability diagram: RMSE_b = √⟨E²⟩ against RMV_b = √⟨u²⟩ per bin of u, with
    percentile bootstrap 95 % intervals of RMSE_b (pair resamples within the bin); target
    the identity. ``overall`` holds ENCE = ⟨abs(RMV_b − RMSE_b)/RMV_b⟩.

    ErrViewLib's ``plotRelDiag`` plots the centred sd(E) per bin; the RMSE is the quantity
    of ENCE and of the papers' text (docs/methods.md, "Diagnostics").
    """
    Es, us, starts, _centers, var = _binned(E, u, None, n_bins, binning, log, min_count)
    rng = np.random.default_rng(check_seed(seed))
    rmv, rmse, lo, hi = [], [], [], []
    for a, c in zip(starts[:-1], starts[1:]):
        e2 = Es[a:c] ** 2
        rmv.append(math.sqrt(np.mean(us[a:c] ** 2)))
        rmse.append(math.sqrt(e2.mean()))
        boot = np.sqrt(e2[rng.integers(0, e2.size, (n_boot, e2.size))].mean(axis=1))
        lo.append(np.quantile(boot, 0.025))
        hi.append(np.quantile(boot, 0.975))
    rmv, rmse = np.array(rmv), np.array(rmse)
    ence = float(np.mean(np.abs(rmv - rmse) / rmv))
    return BinnedDiagnostic("RMSE", rmv, rmse, np.array(lo), np.array(hi), np.diff(starts), rmv, var,
                            (ence, math.nan, math.nan))


@dataclass(frozen=True)
class CalibrationCurve:
    """Observed vs expected cumulative probability: ``observed[i]`` = P(E ≤ u·q_D(p_i)), with
    the Wilson-cc 95 % band (``low``, ``high``) and the miscalibration area."""

    expected: np.ndarray
    observed: np.ndarray
    low: np.ndarray
    high: np.ndarray
    miscalibration_area: float
    dist: str

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"expected": self.expected, "observed": self.observed, "low": self.low,
                             "high": self.high})


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
    from .generative import get_distribution

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
    return CalibrationCurve(p, obs, lo, hi, area, get_distribution(dist).label)


@dataclass(frozen=True)
class ConfidenceCurve:
    """A confidence curve with its probabilistic reference (:func:`confidence_curve`)."""

    k: np.ndarray
    curve: np.ndarray
    reference: np.ndarray
    ref_low: np.ndarray
    ref_high: np.ndarray
    oracle: np.ndarray
    dfpr: float
    dfpr_up95: float
    stat: str
    dist: str
    n_draws: int
    samples: np.ndarray | None = field(default=None, repr=False)

    @property
    def passes(self) -> bool:
        """DFPR ≤ its 95 % quantile under the reference (the curve is consistent with u)."""
        return self.dfpr <= self.dfpr_up95

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"k": self.k, "curve": self.curve, "reference": self.reference,
                             "ref_low": self.ref_low, "ref_high": self.ref_high, "oracle": self.oracle})


def _cuts(m: int) -> np.ndarray:
    return np.floor(np.arange(100) * m / 100 + 1e-9).astype(np.int64)


def confidence_curve(E, u, *, stat: str = "RMSE", dist: Any = "normal", n_draws: int = 500, seed=None,
                     keep_samples: bool = False) -> ConfidenceCurve:
    r"""Confidence curve, probabilistic reference and DFPR (P. Pernot, Digital Discovery 1
    (2022) 691; ErrViewLib ``plotCC``).

    Order the points by decreasing u; c(k), k = 0 … 99, is the RMSE (or MAE) of the errors
    left after removing the first ⌊k·M/100⌋. The reference is the mean of the same curve for
    ``n_draws`` synthetic sets E* = u·ε, ε ~ D (normal or unit-variance t(ν)), with the
    2.5–97.5 % Harrell–Davis quantiles as its band. DFPR = Σ_k abs(c(k) − c_ref(k)) (not
    normalised), compared with the 95 % HD quantile of the same distance for the draws. The
    oracle (points removed by decreasing abs(E)) is returned for display; it is not a
    reference.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> cc = confidence_curve(E, u, n_draws=200, seed=1)
    >>> cc.curve.shape, cc.passes
    ((100,), True)
    """
    from .generative import get_distribution

    E, u = check_E_u(E, u, min_size=100)
    stat = check_choice(stat, "stat", ("rmse", "mae")).upper()
    n_draws = check_int(n_draws, "n_draws", minimum=20)
    d = get_distribution(dist)
    if d.kind not in ("normal", "t"):
        raise ValueError(f"`dist`: the confidence-curve reference draws normal or t(ν) errors, got {d.label}")
    code = KC.STAT_RMSE if stat == "RMSE" else KC.STAT_MAE
    order = np.argsort(-u, kind="stable")
    cuts = _cuts(E.size)
    curve = np.empty(100)
    KC.curve_from_sorted(np.ascontiguousarray(E[order]), cuts, code, curve)
    oracle = np.empty(100)
    KC.curve_from_sorted(np.ascontiguousarray(E[np.argsort(-np.abs(E), kind="stable")]), cuts, code, oracle)
    samples = np.empty((n_draws, 100))
    states = chunk_states(check_seed(seed), n_draws)
    u_desc = np.ascontiguousarray(u[order])
    nu = d.nu if d.kind == "t" else 0.0
    n_threads = numba.get_num_threads()
    scratch = np.empty((n_threads, E.size))

    def draw(j: int, t: int) -> None:  # nogil kernel, one synthetic set per call
        KC.reference_curve(u_desc, cuts, code, nu, states[j], scratch[t], samples[j])

    map_chunks(draw, n_draws, n_threads)
    ref = samples.mean(axis=0)
    band = np.array([hd_quantile(samples[:, k], [0.025, 0.975]) for k in range(100)])
    dist_draws = np.abs(samples - ref).sum(axis=1)
    return ConfidenceCurve(np.arange(100), curve, ref, band[:, 0], band[:, 1], oracle,
                           float(np.abs(curve - ref).sum()), float(hd_quantile(dist_draws, 0.95)), stat, d.label,
                           n_draws, samples if keep_samples else None)


@dataclass(frozen=True)
class RunningQuantiles:
    """Sliding-window Harrell–Davis quantiles of y along x (:func:`running_quantiles`)."""

    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    window: int


def running_quantiles(x, y, *, p: float = 0.95, n_windows: int | None = None) -> RunningQuantiles:
    r"""Running (1 ∓ p)/2 quantiles of y in sliding windows of ⌊M/n⌋ consecutive points along
    x (step 1; n = ⌈2·M^{0.333}⌉ by default), Harrell–Davis estimates, at the window mid-range
    of x (ErrViewLib ``plotEvsPU`` with ``runQuant=TRUE``)."""
    from .shape import hd_weights

    x = as_float_array(x, "x")
    y = as_float_array(y, "y")
    if x.size != y.size:
        raise ValueError("`x` and `y` must have the same length")
    m = x.size
    n = math.ceil(2 * m**0.333) if n_windows is None else check_int(n_windows, "n_windows", minimum=1)
    w = max(m // n, 4)
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    weights = hd_weights(w, np.array([(1 - p) / 2, (1 + p) / 2]))
    starts = np.arange(m - w + 1)
    win = np.sort(np.lib.stride_tricks.sliding_window_view(ys, w), axis=1)
    q = np.stack([win[:, s:s + wt.size] @ wt for s, wt in weights], axis=1)
    mid = 0.5 * (xs[starts] + xs[starts + w - 1])
    return RunningQuantiles(mid, q[:, 0], q[:, 1], w)
