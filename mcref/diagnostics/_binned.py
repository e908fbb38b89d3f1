"""The binned (local) diagnostics' common part: bins of u or of an input feature x
(:func:`binned`), the per-bin result :class:`BinnedDiagnostic` with its summary scores and
its test of f_v, and ErrViewLib's default bin count.

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as st

from ..core._checks import as_float_array, check_choice, check_E_u, check_int
from ..binning import default_n_bins as bin_count, make_bins, resolve_n_bins, strata_bins
from ._coverage import quantile_factor, wilson_interval

__all__ = ["default_n_bins", "BinnedDiagnostic", "binned_halfwidths", "binned", "ValidBinsTest", "LocalScores"]


def default_n_bins(m: int) -> int:
    """Deprecated spelling of ``mcref.binning.default_n_bins(m, rule="local")``, the local
    diagnostics' bin count max(min(⌊M/150⌋, 15), 2) (one function holds both default rules)."""
    import warnings

    from ..core._warnings import MCRefDeprecationWarning

    warnings.warn(MCRefDeprecationWarning('mcref.diagnostics.default_n_bins(m) is now spelled '
                                          'mcref.binning.default_n_bins(m, rule="local")'), stacklevel=2)
    return bin_count(m, rule="local")


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


def binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts, slide, aux):
    """:func:`binned` plus the interval half-widths in the same order: the user's ``U``, or
    u·q((1 + p)/2) of ``dist`` (LCP and its interval)."""
    if U is None:
        Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
        return Es, us, segs, centers, var, us * float(quantile_factor((1 + p) / 2, dist))
    U = as_float_array(U, "U")
    if U.shape != np.shape(E) or np.any(U < 0):
        raise ValueError(f"`U` must be non-negative half-widths with the shape of `E` {np.shape(E)}, "
                         f"got shape {U.shape}")
    return binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux, carry=U)


def binned(E, u, x, n_bins, binning, log, min_count, cuts="mcref", slide=False, aux=None, carry=None):
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
    n_bins = bin_count(m, rule="local") if n_bins is None else check_int(n_bins, "n_bins", minimum=1)
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
