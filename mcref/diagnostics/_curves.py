"""Curves over the whole set: the confidence curve (and its consistency test), the running
quantiles along x, the Lorenz curve and the Gini coefficient of the uncertainties.

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from ..core._checks import (as_float_array, check_choice, check_E_u, check_int, check_seed, dataset_args,
                           renamed_keywords)
from ..kernels import confidence as KC
from ..kernels.rng import chunk_states
from ..parallel import map_chunks
from ..shape import hd_quantile
from ._coverage import wilson_interval

__all__ = ["ConfidenceCurve", "confidence_curve", "CCConsistency", "cc_consistency", "RunningQuantiles",
           "running_quantiles", "lorenz_curve", "gini"]


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

        from ..core._warnings import MCRefDeprecationWarning

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
    from ..core._hd import hd_weights

    return [hd_weights(int(m - c), np.array([0.95]))[0] for c in cuts]


def _q95_curve(e: np.ndarray, cuts: np.ndarray, weights: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Q95(k): the HD 95th percentile of abs(e[cuts[k]:]) (ErrViewLib ``q95hd``), from the order
    statistics inside the weights' window only (a partition, then a sort of that window)."""
    from ..core._dot import fixed_dot

    a = np.abs(e)
    out = np.empty(cuts.size)
    for k, (c, (i0, w)) in enumerate(zip(cuts, weights)):
        x = np.partition(a[c:], [i0, i0 + w.size - 1])[i0:i0 + w.size]
        x.sort()
        out[k] = fixed_dot(w, x)
    return out


@dataset_args
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
    from ..generative import get_distribution

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


@dataset_args
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
    from ..resampling._bootstrap import bca_levels, bootstrap

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
    from ..core._dot import fixed_dot
    from ..core._hd import hd_weights

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
    q = np.stack([fixed_dot(wt, win[:, s:s + wt.size]) for s, wt in weights], axis=1)
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
