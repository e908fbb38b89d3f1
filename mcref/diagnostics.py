"""Conditional-calibration diagnostics: consistency (along u) and adaptivity (along an input
feature x) (docs/methods.md, "Diagnostics").

The toolbox of P. Pernot's primer ("Validation of uncertainty quantification metrics: a
primer based on the consistency and adaptivity concepts", arXiv:2303.07170; code
ppernot/2023_Primer and ErrViewLib):

======================================  =========================================================  =======================
function                                per bin (bins of x if given, else of u)                    interval
======================================  =========================================================  =======================
:func:`lzisd`                           1/sd(Z), target 1                                          delta method / BCa
:func:`lzms`                            ⟨Z²⟩, target 1                                             Student / BCa / bspiv
:func:`lzv`                             var(Z), target 1                                           delta method / BCa / χ²
:func:`lzm`                             ⟨Z⟩, target 0                                              Student
:func:`lrce`                            RCE, target 0                                              BCa
:func:`lcp`                             coverage P(abs(E) ≤ U_p), target p                         Wilson (and 4 others)
:func:`lrr`                             interval width / empirical p range of E, target 1          BCa
:func:`reliability_diagram`             RMSE_b vs RMV_b, target the identity                       bootstrap
:func:`calibration_curve`               P(E ≤ u·q_D(p)) vs p (whole set), miscal. area             Wilson-cc
:func:`conditional_calibration_curves`  the same per bin of u or x                                 Wilson-cc (M/B points)
:func:`confidence_curve`                RMSE, MAE, RMSD or Q95 after removing the largest u; DFPR  simulated
:func:`adversarial_group_calibration`   worst abs(ln⟨Z²⟩) of random groups vs group size           control set
:func:`group_zms_validity`              valid ⟨Z²⟩ intervals of random groups vs group size        Wilson-cc
:func:`running_quantiles`               sliding-window HD quantiles of y along x                   —
======================================  =========================================================  =======================

Every binned diagnostic returns a :class:`BinnedDiagnostic` with per-bin arrays
``centers``, ``value``, ``low``, ``high``, ``counts`` and ``to_frame()``. ``binning`` is
``"equal"`` (equal counts, the default) or ``"adaptive"`` (:func:`mcref.binning.adaptive_bins`);
the default number of bins is max(min(⌊M/150⌋, 15), 2), as ErrViewLib's.
:meth:`BinnedDiagnostic.scores` gives the summary scores ZVE, ZVE_Up, ZVM and f_v,
:meth:`BinnedDiagnostic.valid_test` the binomial test of f_v; :func:`calib_scores` the ZMSE,
ENCE and UCE of bins of u and of x; :func:`lorenz_curve` and :func:`gini` the concentration of
the uncertainties. docs/errviewlib.md maps ErrViewLib's functions to these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numba
import numpy as np
from scipy import special, stats as st

from ._validation import as_float_array, check_choice, check_E_u, check_int, check_seed, renamed_keywords
from .binning import make_bins, resolve_n_bins, strata_bins
from .kernels import confidence as KC
from .kernels.generative import normp_scale
from .kernels.rng import chunk_states
from .parallel import map_chunks
from .shape import hd_quantile, skewness_gm

__all__ = ["BinnedDiagnostic", "CalibrationCurve", "ConfidenceCurve", "RunningQuantiles", "lzisd", "lzms",
           "lcp", "reliability_diagram", "calibration_curve", "confidence_curve", "running_quantiles",
           "default_n_bins", "wilson_interval", "quantile_factor",
           # ErrViewLib parity (docs/errviewlib.md)
           "lzv", "lzm", "lrce", "calib_scores", "binomial_interval", "BINOMIAL_INTERVALS", "LocalScores",
           "ValidBinsTest", "CalibScores", "lorenz_curve", "gini", "pit", "PIT", "cc_consistency",
           "CCConsistency", "ConditionalCalibration", "conditional_calibration_curves", "lrr",
           "GroupCalibration", "adversarial_group_calibration", "group_zms_validity", "group_sizes"]

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
    skew : ndarray or None
        Robust skewness β_GM per bin: of Z² (:func:`lzms`) or of E² (:func:`reliability_diagram`),
        else None.
    flagged : ndarray of bool or None
        Bins whose interval is unreliable by ErrViewLib's skewness rules (``plotLZMS``:
        β_GM(Z²) > 0.8; ``plotRelDiag``: β_GM(u²) > 0.6 or β_GM(E²) > 0.8); drawn in grey.
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
    skew: np.ndarray | None = field(default=None, repr=False)
    flagged: np.ndarray | None = field(default=None, repr=False)

    @property
    def valid(self) -> np.ndarray:
        """Per bin: the interval contains the target."""
        t = np.broadcast_to(np.asarray(self.target, dtype=float), self.value.shape)
        return (self.low <= t) & (t <= self.high)

    @property
    def fraction_valid(self) -> float:
        """f_v: the fraction of bins whose interval contains the target."""
        return float(np.mean(self.valid))

    def fraction_valid_interval(self) -> tuple[float, float, float]:
        """f_v with its Wilson 95 % interval with continuity correction (ErrViewLib ``fVal``,
        ``lofVal``, ``upfVal``: ``DescTools::BinomCI(method = "wilsoncc")``)."""
        k, n = int(np.sum(self.valid)), self.value.size
        lo, hi = wilson_interval(k, n, correction=True)
        return k / n, float(lo), float(hi)

    def valid_test(self, prob: float = 0.95) -> "ValidBinsTest":
        """Exact binomial test of the fraction of valid bins against ``prob``, the nominal
        coverage of the bin intervals (ErrViewLib ``testCovIntProb``: R's ``binom.test``, i.e.
        :func:`scipy.stats.binomtest` with the Clopper–Pearson 95 % interval).

        Examples
        --------
        >>> d = BinnedDiagnostic("LZV", np.arange(3.0), np.ones(3), np.full(3, 0.9), np.full(3, 1.1),
        ...                      np.full(3, 100), 1.0, "u")
        >>> t = d.valid_test(); (t.success, t.trials, round(t.p_value, 6))
        (3, 3, 1.0)
        """
        if not 0 < prob < 1:
            raise ValueError(f"`prob` must be in (0, 1), got {prob}")
        k, n = int(np.sum(self.valid)), self.value.size
        r = st.binomtest(k, n, prob)
        ci = r.proportion_ci(confidence_level=0.95, method="exact")
        return ValidBinsTest(k, n, k / n, float(ci.low), float(ci.high), float(r.pvalue), prob)

    def scores(self) -> "LocalScores":
        r"""Summary scores of the local analysis (ErrViewLib ``plotLZV``/``plotLZMS``/``plotLZISD``
        with ``score=TRUE``; Pernot, "Calibration in machine learning uncertainty
        quantification: beyond consistency to target adaptivity", APL Mach. Learn. 1 (2023)).

        With v_b the bin values, [l_b, h_b] their intervals and t the target (> 0):

        .. math::

            \mathrm{ZVE} = \exp\Big(\frac1N\sum_b \big|\ln\frac{v_b}{t}\big|\Big),\quad
            \mathrm{ZVE_{Up}} = \exp\Big(\frac1N\sum_b \max\big(\ln\frac{h_b}{v_b},
            \ln\frac{v_b}{l_b}\big)\Big),\quad
            \mathrm{ZVM} = v_{b^*}/t,\ b^* = \arg\max_b \big|\ln\frac{v_b}{t}\big|

        ZVM is significant when the interval of b* misses t. ZVE ≤ ZVE_Up says the mean
        deviation is within the mean interval half-width (in log scale). ErrViewLib's target is
        1 (ln v_b); the ratio to t gives the same numbers there. Raises ``ValueError`` for a
        statistic whose target is not a positive number (LZM, LRCE, the reliability diagram).
        """
        t = np.asarray(self.target, dtype=float)
        if t.ndim != 0 or not t > 0:
            raise ValueError(f"`scores` needs a positive scalar target (LZV, LZMS, LZISD, LCP); {self.name} has "
                             f"target {self.target!r}: use fraction_valid_interval()")
        if np.any(self.low <= 0) or np.any(self.value <= 0):
            raise ValueError(f"`scores`: {self.name} has non-positive values or interval limits; the log scores "
                             "are undefined")
        t = float(t)
        dev = np.abs(np.log(self.value / t))
        im = int(np.argmax(dev))
        up = np.maximum(np.log(self.high / self.value), np.log(self.value / self.low))
        f, lo, hi = self.fraction_valid_interval()
        return LocalScores(self.name, float(np.exp(dev.mean())), float(np.exp(up.mean())), float(self.value[im] / t),
                           bool(t < self.low[im] or t > self.high[im]), f, lo, hi)

    def to_frame(self):
        """A :class:`pandas.DataFrame`, one row per bin."""
        import pandas as pd

        t = np.broadcast_to(np.asarray(self.target, dtype=float), self.value.shape)
        return pd.DataFrame({"center": self.centers, "value": self.value, "low": self.low, "high": self.high,
                             "count": self.counts, "target": t, "valid": self.valid})


def _binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts, slide, aux):
    """:func:`_binned` plus the interval half-widths in the same order: the user's ``U``, or
    u·q((1 + p)/2) of ``dist`` (LCP and its interval)."""
    if U is None:
        Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
        return Es, us, segs, centers, var, us * float(quantile_factor((1 + p) / 2, dist))
    U = as_float_array(U, "U")
    if U.shape != np.shape(E) or np.any(U < 0):
        raise ValueError(f"`U` must be non-negative half-widths with the shape of `E` {np.shape(E)}, "
                         f"got shape {U.shape}")
    return _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux, carry=U)


def _binned(E, u, x, n_bins, binning, log, min_count, cuts="mcref", slide=False, aux=None, carry=None):
    """Sort (E, u) by the binning variable (u, or ``x``; ties broken by ``aux``, then by input
    order) and return ``(E_sorted, u_sorted, segs, centers, variable)``: ``segs`` (nb, 2) holds
    the [start, stop) of every bin, or of every sliding window with ``slide`` (ErrViewLib
    ``genIntervals(slide=TRUE)``: windows of ⌊M/n_bins⌋ consecutive points, step 1). An array
    ``carry`` (M rows) is returned sorted the same way as a sixth item."""
    E, u = check_E_u(E, u, min_size=4)
    binning = check_choice(binning, "binning", ("equal", "adaptive", "strata"))
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
    if slide:
        n_bins = resolve_n_bins(m, n_bins, min_count=min_count, shrink=True)
        w = m // n_bins
        a = np.arange(m - w + 1, dtype=np.int64)
        segs = np.column_stack([a, a + w])
        order = np.argsort(v, kind="stable")
    else:
        if binning == "strata":
            b = strata_bins(v, min_count=min_count)
        else:
            b = make_bins(v, n_bins, binning=binning, min_count=min_count, shrink=True, log=log, cuts=cuts)
        segs = np.column_stack([b.starts[:-1], b.starts[1:]])
        order = b.order
    if aux is not None:
        aux = as_float_array(aux, "aux")
        if aux.size != m:
            raise ValueError(f"`aux` must have the same length as `E` ({m}), got {aux.size}")
        order = np.lexsort((aux, v))  # by v, ties by aux (ErrViewLib order(X, aux))
    vs = v[order]
    if binning == "strata":  # the mean value of each (merged) stratum, as ErrViewLib's stratAgg
        cs = np.r_[0.0, np.cumsum(vs)]
        centers = (cs[segs[:, 1]] - cs[segs[:, 0]]) / (segs[:, 1] - segs[:, 0])
    else:
        centers = 0.5 * (vs[segs[:, 0]] + vs[segs[:, 1] - 1])
    if carry is not None:
        return E[order], u[order], segs, centers, var, carry[order]
    return E[order], u[order], segs, centers, var


@dataclass(frozen=True)
class ValidBinsTest:
    """Exact binomial test of the fraction of valid bins (:meth:`BinnedDiagnostic.valid_test`).

    Attributes
    ----------
    success, trials : int
        Valid bins and bins.
    estimate, low, high : float
        success/trials and its Clopper–Pearson 95 % interval.
    p_value : float
        Two-sided p-value of H0: P(valid) = ``prob``.
    prob : float
    """

    success: int
    trials: int
    estimate: float
    low: float
    high: float
    p_value: float
    prob: float


@dataclass(frozen=True)
class LocalScores:
    """Summary scores of a local analysis (:meth:`BinnedDiagnostic.scores`).

    Attributes
    ----------
    name : str
        The local statistic.
    mean_deviation : float
        ZVE, exp(mean abs(ln(v_b/t))) (1 for a perfect set).
    mean_deviation_up : float
        ZVE_Up, exp(mean max(ln(h_b/v_b), ln(v_b/l_b))): ZVE above it flags a deviation beyond
        the mean interval half-width.
    max_deviation : float
        ZVM, v_b/t of the bin farthest from t in log scale.
    max_significant : bool
        The interval of that bin misses t (ErrViewLib ``ZVMs``).
    f_valid, f_valid_low, f_valid_high : float
        Fraction of bins whose interval contains t, with its Wilson-cc 95 % interval.
    """

    name: str
    mean_deviation: float
    mean_deviation_up: float
    max_deviation: float
    max_significant: bool
    f_valid: float
    f_valid_low: float
    f_valid_high: float


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
          min_count: int = 30, method: str = "cho", n_boot: int = 500, seed=None, cuts: str = "mcref",
          slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local z inverse standard deviation: 1/sd(Z) per bin, target 1 (primer v1, ErrViewLib
    ``plotLZISD``).

    ``method="cho"`` (default): S ± 1.96·SD with S = 1/√V, V = var(Z) (n − 1) and, by the
    delta method, SD = √varvar(Z)/(2·V^{3/2}), varvar = (μ₄ − (n−3)/(n−1)·μ₂²)/n (central
    moments over n; S. Cho et al., 2008). ``method="bootstrap"``: BCa bootstrap interval of
    1/sd(Z) with max(``n_boot``, n) resamples (ErrViewLib ``rsdZCI``): the replicates of var(Z)
    (:func:`mcref.bootstrap`, statistic VarZ) mapped to 1/√V, with the bias correction and the
    jackknife acceleration of 1/sd(Z) itself.

    Common options of the binned diagnostics: ``n_bins`` (default :func:`default_n_bins`),
    ``binning`` ("equal", "adaptive", or "strata": one bin per distinct value of a discrete
    binning variable, strata below ``min_count`` points merged, :func:`mcref.binning.strata_bins`,
    ErrViewLib's ``plotStrat*``), ``log`` (log grid of adaptive bins), ``min_count``
    (``n_bins`` is reduced to ⌊M/min_count⌋ when needed), ``cuts`` (equal-count cut rule,
    :func:`mcref.binning.bin_starts`: "mcref" or "errviewlib"), ``slide`` (sliding windows of
    ⌊M/n_bins⌋ points instead of bins, ErrViewLib ``slide=TRUE``) and ``aux`` (tie-breaker of
    the sort, ErrViewLib ``aux``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> d = lzisd(E, u)
    >>> d.counts.tolist() == [200] * 15, d.fraction_valid > 0.8
    (True, True)
    """
    method = check_choice(method, "method", ("cho", "bootstrap"))
    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z = Es / us
    if method == "cho":
        res = np.array([_isd(z[a:c]) for a, c in segs])
        overall = _isd(z)
    else:
        seeds = check_seed(seed).spawn(len(segs) + 1)
        res = np.array([_isd_boot(z[a:c], max(n_boot, c - a), sd) for (a, c), sd in zip(segs, seeds)])
        overall = _isd_boot(z, max(n_boot, z.size), seeds[-1])
    return BinnedDiagnostic("LZISD", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0, var,
                            overall)


def _isd_boot(z: np.ndarray, n_boot: int, seed) -> tuple[float, float, float]:
    """BCa interval of S = 1/sd(Z): the bootstrap replicates of var(Z) (:func:`mcref.bootstrap`,
    VarZ) mapped to 1/√V, the acceleration from the leave-one-out values of 1/sd(Z) (closed form:
    V₍ᵢ₎ = (Σd² − n·dᵢ²/(n−1))/(n−2), d = z − z̄)."""
    from ._bootstrap import bca_levels, bootstrap

    n = z.size
    b = bootstrap("VarZ", z, np.ones(n), n_boot=n_boot, seed=seed)
    s_hat = 1.0 / math.sqrt(b.estimate)
    dist = np.append(1.0 / np.sqrt(b.distribution), s_hat)
    d = z - z.mean()
    jack = 1.0 / np.sqrt((np.sum(d**2) - n * d**2 / (n - 1)) / (n - 2))
    a1, a2, _z0, _a = bca_levels(s_hat, dist, jack)
    if not (np.isfinite(a1) and np.isfinite(a2)):  # degenerate BCa: percentile (as mcref.bootstrap)
        a1, a2 = 0.025, 0.975
    lo, hi = np.quantile(dist, [a1, a2])
    return s_hat, float(lo), float(hi)


def _zms_interval(z2: np.ndarray, method: str, n_boot: int, seed) -> tuple[float, float, float]:
    n = z2.size
    mu = float(z2.mean())
    if method == "bspiv":  # bootstrap-t: pivots t* = (mean* − mean)/sd*, sd* = sd of the resample
        from ._bootstrap import bootstrap_many

        b = bootstrap_many(["MZ", "VarZ"], z2, np.ones(n), n_boot=n_boot, method="percentile", seed=seed)
        t = (b["MZ"].distribution - mu) / np.sqrt(b["VarZ"].distribution)
        hi_q, lo_q = np.quantile(t, [0.975, 0.025])
        sd = float(np.std(z2, ddof=1))
        return mu, mu - sd * hi_q, mu - sd * lo_q
    if method in ("stud", "studc") or (method == "auto" and n >= 400):
        s2 = np.var(z2, ddof=1)
        h = st.t.ppf(0.975, n - 1) * math.sqrt(s2 / n)
        c = float(np.mean((z2 - mu) ** 3)) / (6 * s2 * n) if method == "studc" else 0.0
        return mu, mu + c - h, mu + c + h
    from ._bootstrap import bootstrap

    b = bootstrap("ZMS", np.sqrt(z2), np.ones(n), n_boot=n_boot, seed=seed)
    return mu, b.low, b.high


def lzms(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
         min_count: int = 100, method: str = "auto", n_boot: int = 5000, seed=None, cuts: str = "mcref",
         slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local z mean squares ⟨Z²⟩ per bin, target 1 (ErrViewLib ``plotLZMS``).

    Interval: Student, ⟨Z²⟩ ± t_{0.975, n−1}·sd(Z²)/√n (``method="stud"``, and ``"auto"``
    for bins of ≥ 400 points), else BCa bootstrap (:func:`mcref.bootstrap`; ``"bca"``).
    ``"studc"``: the Student interval shifted by the skewness correction μ₃/(6·s²·n), μ₃ the
    third central moment of Z² over n (ErrViewLib ``ZMSCI(method = "studc")``). ``"bspiv"``:
    bootstrap pivotal (bootstrap-t) interval ⟨Z²⟩ − sd(Z²)·[q_{0.975}(t*), q_{0.025}(t*)] of the
    ``n_boot`` pivots t* = (⟨Z²⟩* − ⟨Z²⟩)/sd*(Z²) of the resamples (ErrViewLib
    ``ZMSCI(method = "bspiv")``, quantile type 7). ``skew`` holds
    the robust skewness β_GM(Z²) = (⟨Z²⟩ − HD-median)/⟨abs(Z² − HD-median)⟩ of every bin
    (ErrViewLib ``skewgm``, :func:`mcref.shape.skewness_gm`); ``plotLZMS`` greys out bins above 0.8, where the interval is
    unreliable. Binning options as :func:`lzisd`.
    """
    method = check_choice(method, "method", ("auto", "stud", "studc", "bca", "bspiv"))
    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z2 = (Es / us) ** 2
    seeds = check_seed(seed).spawn(len(segs) + 1)
    res = np.array([_zms_interval(z2[a:c], method, n_boot, s) for (a, c), s in zip(segs, seeds)])
    skew = np.array([_skew(z2[a:c]) for a, c in segs])
    return BinnedDiagnostic("LZMS", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0, var,
                            _zms_interval(z2, method, n_boot, seeds[-1]), skew=skew, flagged=skew > 0.8)


def _skew(x: np.ndarray) -> float:
    """β_GM of a bin (:func:`mcref.shape.skewness_gm`), 0 for a constant bin (QM9_E has bins of
    one u value; ErrViewLib's ``skewgm`` gives NaN there)."""
    return 0.0 if x[0] == x[-1] and np.all(x == x[0]) else skewness_gm(x)


def _var_interval(z: np.ndarray, method: str, n_boot: int, seed) -> tuple[float, float, float]:
    n = z.size
    v = float(np.var(z, ddof=1))
    if method == "auto":
        method = "cho" if n >= 400 else "bootstrap"
    if method == "cho":
        h = _Z975 * math.sqrt(max(_varvar(z), 0.0))
        return v, v - h, v + h
    if method == "chisq":
        return v, float(st.chi2.ppf(0.025, n - 1) / (n - 1)), float(st.chi2.ppf(0.975, n - 1) / (n - 1))
    from ._bootstrap import bootstrap

    b = bootstrap("VarZ", z, np.ones(n), n_boot=n_boot, seed=seed)
    return v, b.low, b.high


def lzv(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
        min_count: int = 30, method: str = "auto", n_boot: int = 5000, seed=None, cuts: str = "mcref",
        slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local z variance: var(Z) per bin (n − 1 denominator), target 1 (ErrViewLib ``plotLZV``,
    ``varZCI``; Pernot, APL Mach. Learn. 1 (2023) 046121).

    Intervals (95 %), by ``method``:

    * ``"cho"``: V ± 1.96·√varvar(Z), varvar = (μ₄ − (n−3)/(n−1)·μ₂²)/n (central moments over
      n; S. Cho et al., 2008);
    * ``"bootstrap"``: BCa bootstrap of var(Z) with ``n_boot`` resamples (:func:`mcref.bootstrap`,
      statistic VarZ; ErrViewLib uses ``nptest::np.boot``);
    * ``"chisq"``: the χ²_{n−1} interval of a unit-variance normal Z, [χ²_{0.025}, χ²_{0.975}]/(n−1)
      (not centred on V, as ErrViewLib);
    * ``"auto"`` (default): ``"cho"`` for bins of ≥ 400 points, else ``"bootstrap"``.

    ``overall`` uses ``"auto"`` on the whole set, as ErrViewLib. Binning options as
    :func:`lzisd`. :meth:`BinnedDiagnostic.scores` gives ZVE, ZVE_Up, ZVM and f_v.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> d = lzv(E, u, method="cho")
    >>> d.fraction_valid > 0.8, d.scores().mean_deviation < 1.2
    (True, True)
    """
    method = check_choice(method, "method", ("auto", "cho", "bootstrap", "chisq"))
    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z = Es / us
    seeds = check_seed(seed).spawn(len(segs) + 1)
    res = np.array([_var_interval(z[a:c], method, n_boot, sd) for (a, c), sd in zip(segs, seeds)])
    return BinnedDiagnostic("LZV", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0, var,
                            _var_interval(z, "auto", n_boot, seeds[-1]))


def lzm(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
        min_count: int = 30, cuts: str = "mcref", slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local z mean ⟨Z⟩ per bin with the Student interval ⟨Z⟩ ± t_{0.975, n−1}·sd(Z)/√n, target 0
    (unbiasedness; ErrViewLib ``plotLZM``).

    ``overall`` uses the same Student interval on the whole set (ErrViewLib uses 1.96 there,
    a relative difference of about 1e-5 on its half-width for M ≥ 1000). Binning options as
    :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> lzm(E, u).fraction_valid > 0.8
    True
    """
    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z = Es / us

    def tint(zb):
        n = zb.size
        mu = float(zb.mean())
        h = float(st.t.ppf(0.975, n - 1)) * math.sqrt(np.var(zb, ddof=1) / n)
        return mu, mu - h, mu + h

    res = np.array([tint(z[a:c]) for a, c in segs])
    return BinnedDiagnostic("LZM", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 0.0, var,
                            tint(z))


def lrce(E, u, x=None, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
         min_count: int = 30, n_boot: int = 5000, seed=None, cuts: str = "mcref", slide: bool = False,
         aux=None) -> BinnedDiagnostic:
    r"""Local relative calibration error RCE = (RMV − RMSE)/RMV per bin with its BCa bootstrap 95 %
    interval (pairs resampled within the bin, :func:`mcref.bootstrap`), target 0 (ErrViewLib
    ``plotLRCE``; Pernot, APL Mach. Learn. 1 (2023) 046121).

    ``overall`` is the RCE of the whole set with its BCa interval. Binning options as
    :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> lrce(E, u, n_bins=5, n_boot=1000, seed=1).fraction_valid >= 0.8
    True
    """
    from ._bootstrap import bootstrap

    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    seeds = check_seed(seed).spawn(len(segs) + 1)

    def bci(a, c, sd):
        b = bootstrap("RCE", Es[a:c], us[a:c], n_boot=n_boot, seed=sd)
        return b.estimate, b.low, b.high

    res = np.array([bci(a, c, sd) for (a, c), sd in zip(segs, seeds)])
    return BinnedDiagnostic("LRCE", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 0.0, var,
                            bci(0, Es.size, seeds[-1]))


@dataclass(frozen=True)
class CalibScores:
    """Calibration scores of ErrViewLib's ``calibScores`` (:func:`calib_scores`).

    Attributes
    ----------
    zmse_u, ence_u, uce_u : float
        ZMSE (ErrViewLib ``Su``), ENCE and UCE on the bins of u.
    zmse_x, ence_x, uce_x : float
        The same on the bins of x (NaN without x; ErrViewLib ``SX``, ``enceX``, ``uceX``).
    scal : float
        abs(ln ZMS) of the whole set.
    stot : float
        scal + zmse_u (+ zmse_x).
    nll, calib, sharp : float
        NLL = (calib + sharp + ln 2π)/2, calib = ⟨Z²⟩, sharp = ⟨ln u²⟩.
    n_bins : int
    uce : str
        UCE weighting used ("mean" or "counts").
    """

    zmse_u: float
    ence_u: float
    uce_u: float
    zmse_x: float
    ence_x: float
    uce_x: float
    scal: float
    stot: float
    nll: float
    calib: float
    sharp: float
    n_bins: int
    uce: str


def _ece_zce(E: np.ndarray, u: np.ndarray, starts: np.ndarray, uce: str) -> tuple[float, float, float]:
    n = np.diff(starts)
    mv = np.add.reduceat(u**2, starts[:-1]) / n
    mse = np.add.reduceat(E**2, starts[:-1]) / n
    zms = np.add.reduceat((E / u) ** 2, starts[:-1]) / n
    w = np.full(n.size, 1.0 / n.size) if uce == "mean" else n / n.sum()
    return (float(np.mean(np.abs(np.log(zms)))), float(np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv))),
            float(np.sum(w * np.abs(mv - mse))))


def calib_scores(E, u, x=None, *, n_bins: int = 20, min_count: int = 30, cuts: str = "mcref",
                 uce: str = "mean") -> CalibScores:
    r"""ZMSE, ENCE and UCE on equal-count bins of u and of an input feature x, with the global
    scores (ErrViewLib ``calibScores``, ``eceFun``, ``zceFun``, ``nllFun``).

    .. math::

        \mathrm{ZMSE} = \frac1N\sum_b \lvert\ln \langle Z^2\rangle_b\rvert,\quad
        \mathrm{ENCE} = \frac1N\sum_b \frac{\lvert\mathrm{RMV}_b - \mathrm{RMSE}_b\rvert}{\mathrm{RMV}_b},\quad
        \mathrm{UCE} = \sum_b w_b \lvert\mathrm{MV}_b - \mathrm{MSE}_b\rvert

    with w_b = 1/N (``uce="mean"``, ErrViewLib's ``eceFun``, the default here) or n_b/M
    (``uce="counts"``, the weighting of :func:`mcref.statistic` and of Laves et al. 2020). The
    bins of x are the same index cuts applied to the points ordered by x (stable sort), as
    ErrViewLib. ``n_bins`` is reduced to ⌊M/min_count⌋ when M/n_bins < ``min_count``
    (ErrViewLib's default ``nBin = sqrt(M)`` is not an integer; pass it explicitly).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 2000); E = u * rng.normal(size=2000)
    >>> s = calib_scores(E, u, x=u)
    >>> s.ence_u == s.ence_x, s.ence_u < 0.2
    (True, True)
    """
    from .binning import bin_starts

    E, u = check_E_u(E, u, min_size=4)
    uce = check_choice(uce, "uce", ("mean", "counts"))
    m = E.size
    n_bins = resolve_n_bins(m, n_bins, min_count=min_count, shrink=True)
    starts = bin_starts(m, n_bins, cuts=cuts)
    ou = np.argsort(u, kind="stable")
    zu, eu, uu = _ece_zce(E[ou], u[ou], starts, uce)
    zx = ex = ux = math.nan
    if x is not None:
        x = as_float_array(x, "x")
        if x.size != m:
            raise ValueError(f"`x` must have the same length as `E` ({m}), got {x.size}")
        ox = np.argsort(x, kind="stable")
        zx, ex, ux = _ece_zce(E[ox], u[ox], starts, uce)
    calib = float(np.mean((E / u) ** 2))
    sharp = float(np.mean(np.log(u**2)))
    scal = abs(math.log(calib))
    stot = scal + zu + (0.0 if x is None else zx)
    return CalibScores(zu, eu, uu, zx, ex, ux, scal, stot, 0.5 * (calib + sharp + math.log(2 * math.pi)), calib,
                       sharp, n_bins, uce)


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
    normp(p), uniform, laplace; :func:`mcref.get_distribution` names). normp(p):
    s·sign(P − ½)·(Γ⁻¹_{1/p}(abs(2P − 1)))^{1/p}, s = √(Γ(1/p)/Γ(3/p)) (:func:`scipy.stats.gennorm`;
    normalp's ``qnormp`` rescaled to unit variance, as ErrViewLib's ``Normp``)."""
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
    if d.kind == "normp":
        return st.gennorm.ppf(p, d.nu) * normp_scale(d.nu)
    raise ValueError(f"`dist`: quantiles are available for normal, t(ν), normp(p), uniform and laplace, got {d.label}")


def lcp(E, u, x=None, *, p: float = 0.95, dist: Any = "normal", U=None, interval: str = "wilson",
        n_bins: int | None = None, binning: str = "equal", log: bool | None = None, min_count: int = 30,
        cuts: str = "mcref", slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local coverage probability of the intervals ±U_p per bin, target p (ErrViewLib
    ``plotLCP``; coverage counts abs(E) ≤ U_p).

    U_p = u·q_D((1+p)/2) by default, or the half-widths ``U`` (shape (M,)) of prediction
    intervals from any source (ErrViewLib's ``U`` matrix, one column per p: call once per
    column), in which case ``dist`` is not used. The 95 % interval of each binomial proportion
    is ``interval``: ``"wilson"`` (default), ``"wilsoncc"``, ``"clopper-pearson"``,
    ``"agresti-coull"`` or ``"jeffreys"`` (:func:`binomial_interval`; ErrViewLib ``binomCI``).
    Binning options as :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1); u = rng.uniform(0.5, 2, 4000); E = u * rng.normal(size=4000)
    >>> abs(lcp(E, u, p=0.5).overall[0] - 0.5) < 0.03
    True
    >>> d = lcp(E, u, p=0.5, U=0.6745 * u, interval="jeffreys")
    """
    if not 0 < p < 1:
        raise ValueError(f"`p` must be in (0, 1), got {p}")
    interval = check_choice(interval, "interval", BINOMIAL_INTERVALS)
    Es, us, segs, centers, var, Us = _binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts,
                                                        slide, aux)
    inside = np.abs(Es) <= Us
    cs = np.r_[0, np.cumsum(inside, dtype=np.int64)]
    k = cs[segs[:, 1]] - cs[segs[:, 0]]
    n = segs[:, 1] - segs[:, 0]
    lo, hi = binomial_interval(k, n, method=interval)
    lo_all, hi_all = binomial_interval(inside.sum(), inside.size, method=interval)
    return BinnedDiagnostic(f"LCP({p:g})", centers, k / n, lo, hi, n, p, var,
                            (float(inside.mean()), float(lo_all), float(hi_all)))


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


def reliability_diagram(E, u, *, n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
                        min_count: int = 30, n_boot: int = 500, seed=None, cuts: str = "mcref",
                        aux=None) -> BinnedDiagnostic:
    r"""Reliability diagram: RMSE_b = √⟨E²⟩ against RMV_b = √⟨u²⟩ per bin of u, with
    percentile bootstrap 95 % intervals of RMSE_b (pair resamples within the bin); target
    the identity. ``overall`` holds ENCE = ⟨abs(RMV_b − RMSE_b)/RMV_b⟩. ``skew`` holds β_GM(E²)
    per bin and ``flagged`` ErrViewLib's skewness rule of ``plotRelDiag`` (β_GM(u²) > 0.6 or
    β_GM(E²) > 0.8: the bootstrap interval is unreliable).

    ErrViewLib's ``plotRelDiag`` plots the centred sd(E) per bin; the RMSE is the quantity
    of ENCE and of the papers' text (docs/methods.md, "Diagnostics").
    """
    Es, us, segs, _centers, var = _binned(E, u, None, n_bins, binning, log, min_count, cuts, False, aux)
    rng = np.random.default_rng(check_seed(seed))
    rmv, rmse, lo, hi = [], [], [], []
    for a, c in segs:
        e2 = Es[a:c] ** 2
        rmv.append(math.sqrt(np.mean(us[a:c] ** 2)))
        rmse.append(math.sqrt(e2.mean()))
        boot = np.sqrt(e2[rng.integers(0, e2.size, (n_boot, e2.size))].mean(axis=1))
        lo.append(np.quantile(boot, 0.025))
        hi.append(np.quantile(boot, 0.975))
    rmv, rmse = np.array(rmv), np.array(rmse)
    ence = float(np.mean(np.abs(rmv - rmse) / rmv))
    skew_e2 = np.array([_skew(Es[a:c] ** 2) for a, c in segs])
    skew_u2 = np.array([_skew(us[a:c] ** 2) for a, c in segs])
    return BinnedDiagnostic("RMSE", rmv, rmse, np.array(lo), np.array(hi), segs[:, 1] - segs[:, 0], rmv, var,
                            (ence, math.nan, math.nan), skew=skew_e2, flagged=(skew_u2 > 0.6) | (skew_e2 > 0.8))


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
    lo_e, hi_e = wilson_interval(pe * z.size, z.size, correction=True)  # the band with its end points
    area_up = float(trapz(np.abs(hi_e - lo_e), pt)) / 2
    return CalibrationCurve(p, obs, lo, hi, area, get_distribution(dist).label, area_up,
                            float(np.sqrt(np.sum((pt - pe) ** 2))))


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
    n_mc: int
    samples: np.ndarray | None = field(default=None, repr=False)
    normalized: bool = False

    @property
    def n_draws(self) -> int:
        """Deprecated spelling of :attr:`n_mc` (docs/api.rst, "Conventions")."""
        import warnings

        from ._warnings import MCRefDeprecationWarning

        warnings.warn(MCRefDeprecationWarning("ConfidenceCurve.n_draws is now spelled n_mc"), stacklevel=2)
        return self.n_mc

    @property
    def auco(self) -> float:
        """AUCO = Σ_k abs(c(k) − c_oracle(k)), the area between the curve and the oracle
        (ErrViewLib ``plotConfidence(oracle = TRUE)``, reported there for non-normalised curves)."""
        return float(np.abs(self.curve - self.oracle).sum())

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


def _q95_weights(m: int, cuts: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Harrell–Davis weights of the 95th percentile for the M − cut points left at every cut."""
    from ._hd import hd_weights

    return [hd_weights(int(m - c), np.array([0.95]))[0] for c in cuts]


def _q95_curve(e: np.ndarray, cuts: np.ndarray, weights: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Q95(k): the HD 95th percentile of abs(e[cuts[k]:]) (ErrViewLib ``q95hd``), from the order
    statistics inside the weights' window only (a partition, then a sort of that window)."""
    a = np.abs(e)
    out = np.empty(cuts.size)
    for k, (c, (i0, w)) in enumerate(zip(cuts, weights)):
        x = np.partition(a[c:], [i0, i0 + w.size - 1])[i0:i0 + w.size]
        x.sort()
        out[k] = w @ x
    return out


@renamed_keywords(n_draws="n_mc")
def confidence_curve(E, u, *, stat: str = "RMSE", dist: Any = "normal", n_mc: int = 500, seed=None,
                     keep_samples: bool = False, normalize: bool = False) -> ConfidenceCurve:
    r"""Confidence curve, probabilistic reference and DFPR (P. Pernot, Digital Discovery 1
    (2022) 691; ErrViewLib ``plotCC``).

    Order the points by decreasing u; c(k), k = 0 … 99, is the statistic of the errors left
    after removing the first ⌊k·M/100⌋: ``"RMSE"``, ``"MAE"``, ``"RMSD"`` (sd with n − 1,
    ErrViewLib ``statS = "RMSD"``) or ``"Q95"``, the Harrell–Davis 95th percentile of abs(E)
    (ErrViewLib ``statS = "Q95"``, ``q95hd``). The reference is the mean of the same curve for
    ``n_mc`` synthetic sets E* = u·ε, ε ~ D, with the 2.5–97.5 % Harrell–Davis quantiles as
    its band. DFPR = Σ_k abs(c(k) − c_ref(k)) (not normalised), compared with the 95 % HD
    quantile of the same distance for the draws. The oracle (points removed by decreasing
    abs(E)) is returned for display; it is not a reference; ``auco`` is the area between curve
    and oracle.

    ``dist`` may be any generative distribution of :func:`mcref.get_distribution`: ErrViewLib's
    ``dist_probref`` values Normal, T4, Uniform, Laplace and Normp4 are ``"normal"``, ``"t4"``,
    ``"uniform"``, ``"laplace"`` and ``"normp4"``. For RMSE and MAE, normal, t(ν) and normp(p)
    are drawn in the numba kernel, the others in NumPy (one spawned stream per draw); RMSD and
    Q95 draw every D in NumPy. ``normalize`` divides every curve (data, oracle, draws) by its own
    c(0) (ErrViewLib ``normalize = TRUE``, which then reports neither DFPR nor AUCO; mcref
    computes them on the normalised curves).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> cc = confidence_curve(E, u, n_mc=200, seed=1)
    >>> cc.curve.shape, cc.passes
    ((100,), True)
    >>> confidence_curve(E, u, stat="Q95", n_mc=100, seed=1).passes
    True
    >>> confidence_curve(E, u, stat="Q95", dist="normp4", n_mc=100, seed=1).passes  # lighter tails than N(0, 1)
    False
    """
    from .generative import get_distribution

    E, u = check_E_u(E, u, min_size=100)
    stat = check_choice(stat, "stat", ("rmse", "mae", "rmsd", "q95")).upper()
    n_mc = check_int(n_mc, "n_mc", minimum=20)
    d = get_distribution(dist)
    code = KC.STAT_RMSE if stat == "RMSE" else KC.STAT_MAE
    order = np.argsort(-u, kind="stable")
    cuts = _cuts(E.size)
    curve = np.empty(100)
    oracle = np.empty(100)
    e_orc = E[np.argsort(-np.abs(E), kind="stable")]
    weights = _q95_weights(E.size, cuts) if stat == "Q95" else None
    if stat == "RMSD":  # sd of the errors left (n − 1): NumPy, two-pass per point
        curve[:] = [np.std(E[order][c:], ddof=1) for c in cuts]
        oracle[:] = [np.std(e_orc[c:], ddof=1) for c in cuts]
    elif stat == "Q95":
        curve[:] = _q95_curve(E[order], cuts, weights)
        oracle[:] = _q95_curve(e_orc, cuts, weights)
    else:
        KC.curve_from_sorted(np.ascontiguousarray(E[order]), cuts, code, curve)
        KC.curve_from_sorted(np.ascontiguousarray(e_orc), cuts, code, oracle)
    samples = np.empty((n_mc, 100))
    states = chunk_states(check_seed(seed), n_mc)
    u_desc = np.ascontiguousarray(u[order])
    n_threads = numba.get_num_threads()
    scratch = np.empty((n_threads, E.size))

    if stat in ("RMSD", "Q95"):  # NumPy draws, one spawned stream per synthetic set
        for j, sj in enumerate(check_seed(seed).spawn(n_mc)):
            e = u_desc * d.sample(E.size, seed=[int(v) for v in sj.generate_state(4)])
            if stat == "Q95":
                samples[j] = _q95_curve(e, cuts, weights)
                continue
            e = e - e.mean()  # RMSD: suffix sums of ε·u shifted by the draw's mean
            n = E.size - cuts
            s1 = np.cumsum(e[::-1])[::-1][cuts]
            s2 = np.cumsum((e * e)[::-1])[::-1][cuts]
            samples[j] = np.sqrt(np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1))
    elif d.kind in ("normal", "t", "normp"):
        def draw(j: int, t: int) -> None:  # nogil kernel, one synthetic set per call
            KC.reference_curve(u_desc, cuts, code, d.code, d.param, states[j], scratch[t], samples[j])

        map_chunks(draw, n_mc, n_threads)
    else:  # other distributions: NumPy draws, one spawned stream per synthetic set
        for j, sj in enumerate(check_seed(seed).spawn(n_mc)):
            eps = d.sample(E.size, seed=[int(v) for v in sj.generate_state(4)])
            KC.curve_from_sorted(np.ascontiguousarray(u_desc * eps), cuts, code, samples[j])
    if normalize:
        curve, oracle = curve / curve[0], oracle / oracle[0]
        samples /= samples[:, :1]
    ref = samples.mean(axis=0)
    band = np.array([hd_quantile(samples[:, k], [0.025, 0.975]) for k in range(100)])
    dist_draws = np.abs(samples - ref).sum(axis=1)
    return ConfidenceCurve(np.arange(100), curve, ref, band[:, 0], band[:, 1], oracle,
                           float(np.abs(curve - ref).sum()), float(hd_quantile(dist_draws, 0.95)), stat, d.label,
                           n_mc, samples if keep_samples else None, bool(normalize))


@dataclass(frozen=True)
class CCConsistency:
    """Consistency score of a confidence curve (:func:`cc_consistency`).

    Attributes
    ----------
    score, low, high : float
        Fraction of the 100 points k where the probabilistic reference lies within the 95 % BCa
        interval of the data's curve, with its Wilson-cc 95 % interval.
    curve_low, curve_high : ndarray, shape (100,)
        The BCa interval of c(k).
    curve : ConfidenceCurve
        The curve and its reference.
    """

    score: float
    low: float
    high: float
    curve_low: np.ndarray
    curve_high: np.ndarray
    curve: ConfidenceCurve


@renamed_keywords(n_draws="n_mc")
def cc_consistency(E, u, *, stat: str = "RMSE", dist: Any = "normal", n_mc: int = 1000, n_boot: int = 5000,
                   seed=None) -> CCConsistency:
    r"""Consistency score of the confidence curve (ErrViewLib ``plotCCVal(score = TRUE)``).

    For each k = 0 … 99, the 95 % BCa bootstrap interval of c(k), the RMSE (or MAE) of the
    errors left after removing the ⌊k·M/100⌋ largest u (``n_boot`` resamples; jackknife
    acceleration of the statistic itself); the score is the fraction of k whose interval holds
    the probabilistic reference (:func:`confidence_curve`, ``n_mc`` synthetic sets), with its
    Wilson-cc interval. ErrViewLib's k = 0 interval leaves out the point of largest u (R's
    ``E[-(1:0)]``); mcref's uses all points.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3); u = rng.uniform(0.5, 2, 1000); E = u * rng.normal(size=1000)
    >>> c = cc_consistency(E, u, n_mc=200, n_boot=500, seed=1)
    >>> c.score > 0.8
    True
    """
    from ._bootstrap import bca_levels, bootstrap

    n_boot = check_int(n_boot, "n_boot", minimum=100)
    stat = check_choice(stat, "stat", ("rmse", "mae")).upper()  # the bootstrapped statistics
    s_curve, s_boot = check_seed(seed).spawn(2)
    cc = confidence_curve(E, u, stat=stat, dist=dist, n_mc=n_mc, seed=s_curve)
    E, u = check_E_u(E, u, min_size=100)
    e = E[np.argsort(-u, kind="stable")]
    cuts = _cuts(E.size)
    lo, hi = np.empty(100), np.empty(100)
    for k, sk in enumerate(s_boot.spawn(100)):
        r = e[cuts[k]:]
        n = r.size
        if cc.stat == "RMSE":
            b = bootstrap("MSE", r, np.ones(n), n_boot=n_boot, seed=sk)
            th, t = math.sqrt(b.estimate), np.sqrt(b.distribution)
            jack = np.sqrt((np.sum(r**2) - r**2) / (n - 1))
        else:
            b = bootstrap("MZ", np.abs(r), np.ones(n), n_boot=n_boot, seed=sk)
            th, t = b.estimate, b.distribution
            jack = (np.sum(np.abs(r)) - np.abs(r)) / (n - 1)
        dist_k = np.append(t, th)
        a1, a2, _z0, _a = bca_levels(th, dist_k, jack)
        if not (np.isfinite(a1) and np.isfinite(a2)):
            a1, a2 = 0.025, 0.975
        lo[k], hi[k] = np.quantile(dist_k, [a1, a2])
    ok = int(np.sum((cc.reference >= lo) & (cc.reference <= hi)))
    wl, wh = wilson_interval(ok, 100, correction=True)
    return CCConsistency(ok / 100, float(wl), float(wh), lo, hi, cc)


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
    from ._hd import hd_weights

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


def lorenz_curve(x) -> tuple[np.ndarray, np.ndarray]:
    r"""Lorenz curve of abs(x): p_i = i/n and L_i = Σ_{j≤i} x_(j) / Σ_j x_(j), i = 1 … n, x_(j)
    the sorted abs(x) (ErrViewLib ``plotLorenz``; applied to u it shows how concentrated the
    uncertainties are). Returns ``(p, L)``.

    Examples
    --------
    >>> p, L = lorenz_curve([1.0, 1.0, 2.0])
    >>> p.tolist(), L.tolist()
    ([0.3333333333333333, 0.6666666666666666, 1.0], [0.25, 0.5, 1.0])
    """
    x = np.sort(np.abs(as_float_array(x, "x")))
    if not x[-1] > 0:
        raise ValueError("`x` must have a non-zero value for a Lorenz curve")
    return np.arange(1, x.size + 1) / x.size, np.cumsum(x) / x.sum()


def gini(x) -> float:
    r"""Gini coefficient of abs(x), G = 2 Σ_i i·x_(i) / (n Σ_i x_(i)) − (n + 1)/n, x_(i) sorted
    (ErrViewLib ``gini``, i.e. ``ineq::Gini(abs(x))``): 0 for equal values, → 1 when one value
    dominates; equal to the mean absolute difference over twice the mean.

    Examples
    --------
    >>> gini([1.0, 1.0, 1.0]), round(gini([0.0, 0.0, 1.0]), 12)
    (0.0, 0.666666666667)
    """
    x = np.sort(np.abs(as_float_array(x, "x")))
    n = x.size
    if not x[-1] > 0:
        raise ValueError("`x` must have a non-zero value for a Gini coefficient")
    return float(2.0 * np.sum(x * np.arange(1, n + 1)) / (n * x.sum()) - (n + 1) / n)


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
        from .generative import get_distribution

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


@dataclass(frozen=True)
class ConditionalCalibration:
    """Calibration curves per bin of u or of x (:func:`conditional_calibration_curves`).

    Attributes
    ----------
    expected : ndarray, shape (P,)
        The probabilities p.
    observed : ndarray, shape (B, P)
        Per bin b, the fraction of E ≤ u·q_D(p) among its points.
    centers, counts : ndarray, shape (B,)
        Bin mid-ranges of the binning variable and bin sizes.
    band_low, band_high : ndarray, shape (P,)
        Wilson-cc 95 % band around the identity for a bin of M/B points (ErrViewLib's band).
    miscalibration_area : ndarray, shape (B,)
        ∫ abs(observed − p) dp per bin (trapezoid rule with the end points 0 and 1).
    overall : CalibrationCurve
        The curve of the whole set.
    variable : str
        ``"u"`` or ``"x"``.
    """

    expected: np.ndarray
    observed: np.ndarray
    centers: np.ndarray
    counts: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    miscalibration_area: np.ndarray
    overall: CalibrationCurve
    variable: str


def conditional_calibration_curves(E, u, x=None, *, dist: Any = "normal", probs: Sequence[float] | None = None,
                                   n_bins: int | None = None, binning: str = "equal", log: bool | None = None,
                                   min_count: int = 30, cuts: str = "mcref") -> ConditionalCalibration:
    r"""Calibration curves conditioned on u or on a feature x (ErrViewLib
    ``plotCalibrationQ(cond = ...)``): in every bin of u (or of ``x``) the observed fraction of
    E ≤ u·q_D(p) against p (:func:`calibration_curve`, whose grid ``probs`` and ``dist`` it
    takes), with ErrViewLib's band, the Wilson-cc 95 % interval of p for a bin of M/B points,
    B the number of bins. A set calibrated conditionally has every bin's curve inside the band;
    the whole-set curve alone can hide compensating bins. Binning options as :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2); u = rng.uniform(0.5, 2, 4000); E = u * rng.normal(size=4000)
    >>> c = conditional_calibration_curves(E, u)
    >>> c.observed.shape, bool(c.miscalibration_area.max() < 0.1)  # ~270 points per bin
    ((15, 199), True)
    """
    cc = calibration_curve(E, u, dist=dist, probs=probs)
    p = cc.expected
    Es, us, segs, centers, var = _binned(E, u, x, n_bins, binning, log, min_count, cuts)
    q = quantile_factor(p, dist)
    obs = np.array([[np.mean(Es[a:c] <= us[a:c] * qi) for qi in q] for a, c in segs])
    pt = np.r_[0.0, p, 1.0]
    trapz = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
    area = np.array([trapz(np.abs(np.r_[0.0, o, 1.0] - pt), pt) for o in obs])
    n_eq = Es.size / len(segs)
    lo, hi = wilson_interval(p * n_eq, n_eq, correction=True)
    return ConditionalCalibration(p, obs, centers, segs[:, 1] - segs[:, 0], lo, hi, area, cc, var)


def _range_ratio(e: np.ndarray, U: np.ndarray, wlo, whi) -> float:
    """2·√⟨U²⟩ / (HD_{(1+p)/2}(e) − HD_{(1−p)/2}(e)), with the HD weights of len(e) points."""
    es = np.sort(e)
    (i0, w0), (i1, w1) = wlo, whi
    return 2.0 * math.sqrt(np.mean(U * U)) / (w1 @ es[i1:i1 + w1.size] - w0 @ es[i0:i0 + w0.size])


def lrr(E, u, x=None, *, p: float = 0.95, dist: Any = "normal", U=None, n_bins: int | None = None,
        binning: str = "equal", log: bool | None = None, min_count: int = 30, n_boot: int = 1000, seed=None,
        cuts: str = "mcref", slide: bool = False, aux=None) -> BinnedDiagnostic:
    r"""Local range ratio per bin, target 1 (ErrViewLib ``plotLRR``):

    .. math::

        \mathrm{LRR}_b = \frac{2\sqrt{\langle U_p^2\rangle_b}}{Q_{(1+p)/2}(E_b) - Q_{(1-p)/2}(E_b)}

    the mean width of the prediction intervals ±U_p over the width of the empirical p interval
    of the errors in the bin (Harrell–Davis quantiles, :func:`mcref.shape.hd_quantile`). Above 1
    the intervals are too wide, below 1 too narrow. U_p = u·q_D((1+p)/2) by default, or the
    half-widths ``U`` of intervals from any source (ErrViewLib's ``U``). The 95 % interval is
    the BCa bootstrap interval of ``n_boot`` pair resamples within the bin (ErrViewLib: boot's
    BCa, R = 1000, acceleration from the regression estimate of the influence values; here the
    jackknife, which differs from it by up to 0.02 in the acceleration on bins of 150 points and
    moves a limit by about half its Monte Carlo sd; docs/errviewlib.md). Binning options as
    :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> d = lrr(E, u, n_boot=200, seed=1)
    >>> bool(abs(np.median(d.value) - 1) < 0.1)
    True
    """
    from ._bootstrap import bca_levels
    from ._hd import hd_weights

    if not 0 < p < 1:
        raise ValueError(f"`p` must be in (0, 1), got {p}")
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    Es, us, segs, centers, var, Us = _binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts,
                                                        slide, aux)
    probs = np.array([(1 - p) / 2, (1 + p) / 2])
    seeds = check_seed(seed).spawn(len(segs) + 1)

    def one(e, Ub, sd):
        n = e.size
        w = hd_weights(n, probs)
        theta = _range_ratio(e, Ub, *w)
        rng = np.random.default_rng(sd)
        idx = rng.integers(0, n, (n_boot, n))
        es, U2 = e[idx], Ub[idx] ** 2
        es.sort(axis=1)
        (i0, w0), (i1, w1) = w
        dist_b = 2.0 * np.sqrt(U2.mean(axis=1)) / (es[:, i1:i1 + w1.size] @ w1 - es[:, i0:i0 + w0.size] @ w0)
        wj = hd_weights(n - 1, probs)
        jack = np.array([_range_ratio(np.delete(e, i), np.delete(Ub, i), *wj) for i in range(n)])
        dist_b = np.append(dist_b, theta)  # bca_levels' convention (θ̂ with the replicates)
        a1, a2, _z0, _a = bca_levels(theta, dist_b, jack)
        if not (np.isfinite(a1) and np.isfinite(a2)):
            a1, a2 = 0.025, 0.975
        lo, hi = np.quantile(dist_b, [a1, a2])
        return theta, float(lo), float(hi)

    res = np.array([one(Es[a:c], Us[a:c], sd) for (a, c), sd in zip(segs, seeds)])
    return BinnedDiagnostic(f"LRR({p:g})", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0,
                            var, one(Es, Us, seeds[-1]))


def group_sizes(m: int, min_size: int, max_size: float | None = None, *, start: int = 0) -> np.ndarray:
    """The group sizes of ErrViewLib's ``plotAGV`` (``start`` = 0) and ``plotAGVZMS`` (1):
    M/2^k, k = start … 20, kept between ``min_size`` and ``max_size`` (default M) and rounded half
    to even (R's ``round``)."""
    s = m / 2.0 ** np.arange(start, 21)
    hi = m if max_size is None else max_size
    return np.round(s[(s >= min_size) & (s <= hi)]).astype(np.int64)


def _group_means(values: np.ndarray, other: np.ndarray, n: int, count: int, state: np.ndarray):
    from .kernels.subsets import subset_means

    a, b = np.empty(count), np.empty(count)
    subset_means(values, other, int(n), state, np.arange(values.size, dtype=np.int64), a, b)
    return a, b


@dataclass(frozen=True)
class GroupCalibration:
    """Calibration of random groups against their size (:func:`adversarial_group_calibration`,
    :func:`group_zms_validity`).

    Attributes
    ----------
    sizes : ndarray of int
        Group sizes n.
    fraction : ndarray
        n/M (the abscissa of ErrViewLib's plots).
    value, sd : ndarray
        The data's statistic per size and its standard deviation over the repeats.
    control, control_sd : ndarray
        The same for the control set ε ~ D (same groups).
    low, high, control_low, control_high : ndarray or None
        Wilson-cc 95 % intervals of fractions (:func:`group_zms_validity`), else None.
    stat : str
    dist : str
    n_rep : int
    """

    sizes: np.ndarray
    fraction: np.ndarray
    value: np.ndarray
    sd: np.ndarray
    control: np.ndarray
    control_sd: np.ndarray
    stat: str
    dist: str
    n_rep: int
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    control_low: np.ndarray | None = None
    control_high: np.ndarray | None = None


def _control_z(m: int, dist, rng_seed) -> tuple[np.ndarray, str]:
    from .generative import get_distribution

    d = get_distribution(dist)
    return d.sample(m, seed=[int(v) for v in rng_seed.generate_state(4)]), d.label


def adversarial_group_calibration(E, u, *, min_size: int = 50, n_groups: int = 100, n_rep: int = 500,
                                  stat: str = "max", dist: Any = "normal", seed=None) -> GroupCalibration:
    r"""Calibration error of the worst of random groups, against the group size (ErrViewLib
    ``plotAGV``, after the adversarial group calibration of Y. Chung et al., NeurIPS 2021).

    For each size n = M/2^k ≥ ``min_size`` (:func:`group_sizes`): ``n_rep`` times, draw
    ``n_groups`` groups of n points (without replacement) and take the statistic ``stat``
    (``"max"``, ``"mean"``, ``"median"`` or ``"q95"``, R's type-7 quantile) of their
    calibration errors abs(ln⟨Z²⟩_group); ``value`` and ``sd`` are the mean and standard
    deviation of that over the repeats. The control is the same on one draw Z_c ~ D of M points
    with the same groups: a calibrated set follows the control at every size; a gap opening at
    small n flags groups of points less calibrated than the average.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 1000); E = u * rng.normal(size=1000)
    >>> g = adversarial_group_calibration(E, u, n_rep=50, seed=1)
    >>> g.sizes.tolist(), bool(np.all(np.abs(g.value - g.control) < 4 * g.control_sd + 0.05))
    ([1000, 500, 250, 125, 62], True)
    """
    E, u = check_E_u(E, u, min_size=4)
    stat = check_choice(stat, "stat", ("max", "mean", "median", "q95"))
    n_groups = check_int(n_groups, "n_groups", minimum=1)
    n_rep = check_int(n_rep, "n_rep", minimum=2)
    min_size = check_int(min_size, "min_size", minimum=1)
    m = E.size
    sizes = group_sizes(m, min_size)
    if sizes.size == 0:
        raise ValueError(f"`min_size` ({min_size}) must not exceed the number of points ({m})")
    s_ctrl, s_groups = check_seed(seed).spawn(2)
    zc, label = _control_z(m, dist, s_ctrl)
    z2, zc2 = (E / u) ** 2, zc**2
    red = {"max": np.max, "mean": np.mean, "median": np.median,
           "q95": lambda a, axis: np.quantile(a, 0.95, axis=axis)}[stat]
    states = chunk_states(s_groups, sizes.size)
    out = np.empty((4, sizes.size))
    for i, n in enumerate(sizes):
        a, b = _group_means(z2, zc2, n, n_rep * n_groups, states[i])
        ta = red(np.abs(np.log(a)).reshape(n_rep, n_groups), axis=1)
        tb = red(np.abs(np.log(b)).reshape(n_rep, n_groups), axis=1)
        out[:, i] = ta.mean(), ta.std(ddof=1), tb.mean(), tb.std(ddof=1)
    return GroupCalibration(sizes, sizes / m, out[0], out[1], out[2], out[3], stat, label, n_rep)


def group_zms_validity(E, u, *, min_size: int = 100, max_size: float | None = None, n_rep: int = 1000,
                       dist: Any = "normal", seed=None) -> GroupCalibration:
    r"""Fraction of random groups whose ⟨Z²⟩ interval contains 1, against the group size
    (ErrViewLib ``plotAGVZMS(method = "stud")``).

    For each size n = M/2^k, k ≥ 1, between ``min_size`` and ``max_size`` (default M/10;
    :func:`group_sizes`): ``n_rep`` groups of n points (without replacement), each with its
    Student 95 % interval ⟨Z²⟩ ± t_{0.975, n−1}·sd(Z²)/√n (:func:`lzms`, ``method="stud"``);
    ``value`` is the fraction that contains 1, with its Wilson-cc interval (``low``, ``high``).
    The control does the same on one draw Z_c ~ D (same groups); its fraction is ≈ 0.95 for
    n large enough. ``sd`` holds the binomial standard deviation √(f(1 − f)/n_rep).
    """
    E, u = check_E_u(E, u, min_size=4)
    n_rep = check_int(n_rep, "n_rep", minimum=2)
    min_size = check_int(min_size, "min_size", minimum=2)
    m = E.size
    sizes = group_sizes(m, min_size, m / 10 if max_size is None else float(max_size), start=1)
    if sizes.size == 0:
        raise ValueError(f"no group size M/2^k lies between `min_size` ({min_size}) and `max_size` "
                         f"({m / 10 if max_size is None else max_size}) for M = {m}")
    s_ctrl, s_groups = check_seed(seed).spawn(2)
    zc, label = _control_z(m, dist, s_ctrl)
    states = chunk_states(s_groups, sizes.size)
    res = []
    for i, n in enumerate(sizes):
        tq = st.t.ppf(0.975, n - 1)
        fr = []
        for z2 in ((E / u) ** 2, zc**2):
            st_i = states[i].copy()  # data and control: the same groups
            mu, m2 = _group_means(z2, z2 * z2, n, n_rep, st_i)
            h = tq * np.sqrt(np.maximum(m2 - mu * mu, 0.0) * n / (n - 1) / n)
            fr.append(np.mean((mu - h <= 1.0) & (1.0 <= mu + h)))
        res.append(fr)
    f = np.array(res)
    lo, hi = wilson_interval(f * n_rep, n_rep, correction=True)
    sd = np.sqrt(f * (1 - f) / n_rep)
    return GroupCalibration(sizes, sizes / m, f[:, 0], sd[:, 0], f[:, 1], sd[:, 1], "ZMS valid", label, n_rep,
                            lo[:, 0], hi[:, 0], lo[:, 1], hi[:, 1])
