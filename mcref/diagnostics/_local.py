"""Local statistics along u or along an input feature x, one value and interval per bin:
LZISD, LZMS, LZV, LZM, LRCE, LCP, LRR, the reliability diagram and the calibration curves per bin.

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import stats as st

from ..core._checks import dataset_args, check_choice, check_int, check_seed
from ..core._dot import fixed_dot
from ..shape import skewness_gm
from ._binned import BinnedDiagnostic, binned, binned_halfwidths
from ._coverage import (BINOMIAL_INTERVALS, CalibrationCurve, Z975, binomial_interval, calibration_curve,
                        quantile_factor, wilson_interval)

__all__ = ["lzisd", "lzms", "lzv", "lzm", "lrce", "lcp", "lrr", "reliability_diagram", "ConditionalCalibration",
           "conditional_calibration_curves"]


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
    return s, s - Z975 * sd, s + Z975 * sd


@dataset_args
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

    Common options of the binned diagnostics: ``n_bins`` (default ``mcref.binning.default_n_bins(M, rule="local")``),
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
    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
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
    from ..resampling._bootstrap import bca_levels, bootstrap

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
        from ..resampling._bootstrap import bootstrap_many

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
    from ..resampling._bootstrap import bootstrap

    b = bootstrap("ZMS", np.sqrt(z2), np.ones(n), n_boot=n_boot, seed=seed)
    return mu, b.low, b.high


@dataset_args
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
    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z2 = (Es / us) ** 2
    seeds = check_seed(seed).spawn(len(segs) + 1)
    res = np.array([_zms_interval(z2[a:c], method, n_boot, s) for (a, c), s in zip(segs, seeds)])
    skew = np.array([_skew(z2[a:c]) for a, c in segs])
    return BinnedDiagnostic("LZMS", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0, var,
                            _zms_interval(z2, method, n_boot, seeds[-1]), skew=skew, flagged=skew > 0.8)


def lzms_band(E, u, x=None, *, n_shuffles: int = 200, level: float = 0.95, seed=0, n_bins: int | None = None,
              binning: str = "equal", log: bool | None = None, min_count: int = 100, cuts: str = "mcref",
              aux=None) -> tuple[np.ndarray, np.ndarray]:
    r"""The central ``level`` range of ⟨Z²⟩ per bin of :func:`lzms` (same bins) over ``n_shuffles``
    shuffles of Z across the rows, u and x kept: the null of the permutation test of
    :func:`mcref.validate`'s binned rows, around the set's own ⟨Z²⟩ (docs/methods.md,
    "Adaptivity"). Returns (low, high), one value per bin.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> u = rng.uniform(0.5, 2, 2000); E = u * rng.standard_normal(2000)
    >>> lo, hi = lzms_band(E, u, n_bins=10, n_shuffles=100)
    >>> lo.shape, bool(np.all(lo < 1) and np.all(hi > 1))
    ((10,), True)
    """
    n_shuffles = check_int(n_shuffles, "n_shuffles", minimum=1)
    Es, us, segs, _, _ = binned(E, u, x, n_bins, binning, log, min_count, cuts, False, aux)
    z = Es / us
    rng = np.random.default_rng(seed)
    zms = np.array([np.add.reduceat(rng.permutation(z) ** 2, segs[:, 0]) for _ in range(n_shuffles)])
    zms /= segs[:, 1] - segs[:, 0]
    lo, hi = np.quantile(zms, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return lo, hi


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
        h = Z975 * math.sqrt(max(_varvar(z), 0.0))
        return v, v - h, v + h
    if method == "chisq":
        return v, float(st.chi2.ppf(0.025, n - 1) / (n - 1)), float(st.chi2.ppf(0.975, n - 1) / (n - 1))
    from ..resampling._bootstrap import bootstrap

    b = bootstrap("VarZ", z, np.ones(n), n_boot=n_boot, seed=seed)
    return v, b.low, b.high


@dataset_args
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
    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z = Es / us
    seeds = check_seed(seed).spawn(len(segs) + 1)
    res = np.array([_var_interval(z[a:c], method, n_boot, sd) for (a, c), sd in zip(segs, seeds)])
    return BinnedDiagnostic("LZV", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 1.0, var,
                            _var_interval(z, "auto", n_boot, seeds[-1]))


@dataset_args
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
    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    z = Es / us

    def tint(zb):
        n = zb.size
        mu = float(zb.mean())
        h = float(st.t.ppf(0.975, n - 1)) * math.sqrt(np.var(zb, ddof=1) / n)
        return mu, mu - h, mu + h

    res = np.array([tint(z[a:c]) for a, c in segs])
    return BinnedDiagnostic("LZM", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 0.0, var,
                            tint(z))


@dataset_args
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
    from ..resampling._bootstrap import bootstrap

    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts, slide, aux)
    seeds = check_seed(seed).spawn(len(segs) + 1)

    def bci(a, c, sd):
        b = bootstrap("RCE", Es[a:c], us[a:c], n_boot=n_boot, seed=sd)
        return b.estimate, b.low, b.high

    res = np.array([bci(a, c, sd) for (a, c), sd in zip(segs, seeds)])
    return BinnedDiagnostic("LRCE", centers, res[:, 0], res[:, 1], res[:, 2], segs[:, 1] - segs[:, 0], 0.0, var,
                            bci(0, Es.size, seeds[-1]))


@dataset_args
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
    Es, us, segs, centers, var, Us = binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts,
                                                        slide, aux)
    inside = np.abs(Es) <= Us
    cs = np.r_[0, np.cumsum(inside, dtype=np.int64)]
    k = cs[segs[:, 1]] - cs[segs[:, 0]]
    n = segs[:, 1] - segs[:, 0]
    lo, hi = binomial_interval(k, n, method=interval)
    lo_all, hi_all = binomial_interval(inside.sum(), inside.size, method=interval)
    return BinnedDiagnostic(f"LCP({p:g})", centers, k / n, lo, hi, n, p, var,
                            (float(inside.mean()), float(lo_all), float(hi_all)))


def _range_ratio(e: np.ndarray, U: np.ndarray, wlo, whi) -> float:
    """2·√⟨U²⟩ / (HD_{(1+p)/2}(e) − HD_{(1−p)/2}(e)), with the HD weights of len(e) points."""
    es = np.sort(e)
    (i0, w0), (i1, w1) = wlo, whi
    q_hi, q_lo = fixed_dot(w1, es[i1:i1 + w1.size]), fixed_dot(w0, es[i0:i0 + w0.size])
    return 2.0 * math.sqrt(np.mean(U * U)) / (q_hi - q_lo)


@dataset_args
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
    the BCa bootstrap interval of ``n_boot`` pair resamples within the bin, in mcref's BCa
    convention (type-7 quantiles, θ̂ among the replicates, jackknife acceleration). ErrViewLib
    uses boot's BCa (R = 1000), whose ``norm.inter`` interpolation of the order statistics puts
    the lower limit about 0.3–0.4 Monte Carlo sd below mcref's on bins of 150 points; its
    regression acceleration moves the limits by less than 0.05 sd there (0.4 sd on bins of
    ~900 points; docs/errviewlib.md, ``benchmarks/study_lrr_convention.py``). Binning options
    as :func:`lzisd`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1); u = rng.uniform(0.5, 2, 3000); E = u * rng.normal(size=3000)
    >>> d = lrr(E, u, n_boot=200, seed=1)
    >>> bool(abs(np.median(d.value) - 1) < 0.1)
    True
    """
    from ..resampling._bootstrap import bca_levels
    from ..core._hd import hd_weights

    if not 0 < p < 1:
        raise ValueError(f"`p` must be in (0, 1), got {p}")
    n_boot = check_int(n_boot, "n_boot", minimum=100)
    Es, us, segs, centers, var, Us = binned_halfwidths(E, u, x, U, p, dist, n_bins, binning, log, min_count, cuts,
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
        q_hi, q_lo = fixed_dot(w1, es[:, i1:i1 + w1.size]), fixed_dot(w0, es[:, i0:i0 + w0.size])
        dist_b = 2.0 * np.sqrt(U2.mean(axis=1)) / (q_hi - q_lo)
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


@dataset_args
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
    Es, us, segs, _centers, var = binned(E, u, None, n_bins, binning, log, min_count, cuts, False, aux)
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


@dataset_args
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
    Es, us, segs, centers, var = binned(E, u, x, n_bins, binning, log, min_count, cuts)
    q = quantile_factor(p, dist)
    obs = np.array([[np.mean(Es[a:c] <= us[a:c] * qi) for qi in q] for a, c in segs])
    pt = np.r_[0.0, p, 1.0]
    trapz = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 has only trapz
    area = np.array([trapz(np.abs(np.r_[0.0, o, 1.0] - pt), pt) for o in obs])
    n_eq = Es.size / len(segs)
    lo, hi = wilson_interval(p * n_eq, n_eq, correction=True)
    return ConditionalCalibration(p, obs, centers, segs[:, 1] - segs[:, 0], lo, hi, area, cc, var)
