r"""Kernel calibration error (SKCE) of regression predictive distributions, and its tests
(docs/methods.md, "Kernel calibration error (SKCE)").

The moment statistics of mcref (ZMS, RCE, …) test the second moment of Z = E/u; a model can
pass them all with the wrong predictive *shape* (Laplace errors under Gaussian predictions of
the right variance, a shape wrong only for some predictions). The squared kernel calibration
error of Widmann, Lindsten & Zachariah (ICLR 2021) tests the whole conditional law of the
target given the prediction, without bins:

.. math::

    \mathrm{SKCE} = E\,h((P, Y), (\tilde P, \tilde Y)),\qquad
    h = k_P(P, \tilde P)\,[k_Y(Y, \tilde Y) - E_{Z\sim P} k_Y(Z, \tilde Y)
        - E_{\tilde Z\sim\tilde P} k_Y(Y, \tilde Z) + E\,k_Y(Z, \tilde Z)],

with k_P = exp(−W₂(p, p̃)/ℓ_P) and k_Y Gaussian exp(−(y − ỹ)²/(2ℓ_Y²)) or exponential
exp(−|y − ỹ|/ℓ_Y). It is 0 for calibrated predictions and > 0 otherwise (for these
characteristic kernels). The pair sums are numba kernels (:mod:`mcref.kernels.skce`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats as sps

from .core._checks import as_float_array, check_choice, check_int, check_positive_number, check_probability, check_seed
from .kernels import skce as _k
from .kernels.rng import chunk_states
from .parallel import parallel_kernel, serial_blas

__all__ = ["skce", "skce_test", "ucme", "skce_length_scales", "default_skce_n_mc", "default_skce_n_boot", "SKCETest",
           "DEFAULT_CME_LOCATIONS"]

FAMILIES = ("normal", "laplace")
TARGET_KERNELS = ("gaussian", "exponential")
ESTIMATORS = ("unbiased", "block", "biased")
METHODS = ("auto", "consistency", "asymptotic_block", "asymptotic_unbiased", "cme")
#: test locations of the CME test (``method="cme"``) and of :func:`ucme` by default
DEFAULT_CME_LOCATIONS = 5
#: above this many rows, ``method="auto"`` takes the asymptotic block test
AUTO_CONSISTENCY_MAX = 20_000
#: pairs of rows for the median heuristic: all of them up to this many rows, else a fixed subsample
_ALL_PAIRS_MAX = 1024
_N_PAIRS = 1 << 17
#: pair evaluations that the default Monte Carlo budget of the consistency test allows
_MC_PAIR_BUDGET = 5e9


@dataclass(frozen=True)
class SKCETest:
    """A kernel calibration test (:func:`skce_test`).

    Attributes
    ----------
    estimate : float
        The SKCE estimate that the test reads (the ``estimator``'s, or the block estimator's
        for ``method="asymptotic_block"``), in the units of the kernels (no unit: k ≤ 1).
    pvalue : float
        One-sided p-value of calibration (large SKCE values are evidence of miscalibration).
    method : str
        ``"consistency"`` (targets redrawn from the predictions, exact Monte Carlo p),
        ``"asymptotic_block"`` (z-test of the block estimator over its blocks),
        ``"asymptotic_unbiased"`` (the unbiased estimate against its wild bootstrap) or ``"cme"``
        (the χ² test of the calibration mean embedding at J test locations; ``estimate`` is then
        the UCME).
    n_test : int
        The Monte Carlo repeats that the consistency test ran (fewer than ``n_mc`` where it
        stopped early), the number of blocks, the bootstrap replicates, or J (the test
        locations of ``"cme"``, the degrees of freedom of its χ²).
    alpha : float
        The level; ``rejected`` is ``pvalue <= alpha``.
    estimator : str
        ``"unbiased"``, ``"block"``, ``"biased"`` or ``"ucme"`` (``method="cme"``).
    block_size : int
        B of the block estimator (2: the linear estimator); used only by that estimator.
    length_scales : tuple of float
        (ℓ_P, ℓ_Y), the lengths of the prediction and target kernels, in the units of y.
    statistic : float
        The z score of the asymptotic block test; the estimate for the consistency test;
        n·μ̂ᵀΣ̂⁻¹μ̂ for the CME test.
    std_error : float
        The standard error of the block estimate (asymptotic block test); NaN otherwise.
    reference : ndarray or None
        The estimates on the redrawn targets (consistency test), in the order drawn, or the
        bootstrap replicates T*.
    seed : int or None
        The entropy of the random streams of the consistency test, the bootstrap or the draw of
        the CME test's locations (pass it as ``seed`` to repeat the test bit for bit).
    """

    estimate: float
    pvalue: float
    method: str
    n_test: int
    alpha: float
    estimator: str
    block_size: int
    length_scales: tuple[float, float]
    statistic: float
    std_error: float = math.nan
    reference: np.ndarray | None = field(default=None, repr=False)
    seed: int | None = None

    @property
    def rejected(self) -> bool:
        """Whether calibration is rejected at ``alpha`` (``pvalue <= alpha``)."""
        return bool(self.pvalue <= self.alpha)


@dataclass(frozen=True)
class _Prepared:
    code: int
    y: np.ndarray        # targets / ℓ_Y
    P: np.ndarray        # 3 × n: μ, σ (or b), 1/√(1+σ²) (or 1/b), all / ℓ_Y
    S: np.ndarray        # n × m sorted samples / ℓ_Y (or 0 × 1)
    rho: float           # ℓ_Y / ℓ_P
    length_scales: tuple[float, float]


def _check_predictions(y, loc, scale, samples, family):
    """y, and (loc, scale) or sorted samples, checked and normalized."""
    y = as_float_array(y, "y")
    if y.size < 2:
        raise ValueError(f"`y` must have at least 2 values, got {y.size}")
    if samples is not None:
        if loc is not None or scale is not None:
            raise ValueError("pass either `samples` or `loc` and `scale`, not both")
        if family != "normal":
            raise ValueError("`family` describes `loc` and `scale`; `samples` carry their own law (leave `family` out)")
        try:
            S = np.asarray(samples, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`samples` must be a 2-D array of real numbers ({exc})") from None
        if S.ndim != 2 or S.shape[0] != y.size:
            raise ValueError(f"`samples` must have shape (len(y), m) = ({y.size}, m), got {S.shape}")
        if S.shape[1] < 2:
            raise ValueError(f"`samples` must have at least 2 members per row (m >= 2), got m = {S.shape[1]}")
        if not np.isfinite(S).all():
            bad = np.flatnonzero(~np.isfinite(S).all(axis=1))
            raise ValueError(f"`samples` must be finite ({bad.size} row(s) with NaN/inf, first at index {bad[0]})")
        return y, None, None, np.ascontiguousarray(np.sort(S, axis=1))
    if loc is None or scale is None:
        raise ValueError("pass `loc` and `scale` (the predictive laws' location and scale) or `samples`")
    loc = as_float_array(loc, "loc")
    scale = as_float_array(scale, "scale")
    for name, a in (("loc", loc), ("scale", scale)):
        if a.shape != y.shape:
            raise ValueError(f"`{name}` must have the length of `y` ({y.size}), got {a.size}")
    if (scale <= 0).any():
        bad = scale <= 0
        raise ValueError(f"`scale` must be > 0 ({int(bad.sum())} non-positive values, first at index "
                         f"{int(np.argmax(bad))})")
    return y, loc, scale, None


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of the median heuristic: all i < j up to ``_ALL_PAIRS_MAX`` rows, else 2¹⁷ pairs
    i ≠ j drawn by a generator of fixed seed (the same pairs for every data set of n rows)."""
    if n <= _ALL_PAIRS_MAX:
        return np.triu_indices(n, 1)
    rng = np.random.Generator(np.random.PCG64(20210503))
    i = rng.integers(0, n, _N_PAIRS)
    j = rng.integers(0, n - 1, _N_PAIRS)
    return i, j + (j >= i)


def _w2_pairs(loc, scale, S, family, i, j) -> np.ndarray:
    """W₂ between the predictions of the rows i and j."""
    if S is None:
        c = 2.0 if family == "laplace" else 1.0
        return np.sqrt((loc[i] - loc[j]) ** 2 + c * (scale[i] - scale[j]) ** 2)
    out = np.empty(i.size)
    for lo in range(0, i.size, 8192):
        sl = slice(lo, lo + 8192)
        out[sl] = np.sqrt(np.mean((S[i[sl]] - S[j[sl]]) ** 2, axis=1))
    return out


def skce_length_scales(loc=None, scale=None, *, samples=None, family: Literal["normal", "laplace"] = "normal"
                       ) -> tuple[float, float]:
    r"""The default lengths (ℓ_P, ℓ_Y) of the kernels, from the predictions alone.

    A median heuristic that reads no target, so that the consistency test's statistic is the
    same function of the observed and of the redrawn targets:

    - ℓ_Y = the median over pairs of rows of :math:`\sqrt{(m_i - m_j)^2 + v_i + v_j}`, the rms
      of Z_i − Z_j for Z_i ∼ p_i (m, v the predictive mean and variance: μ, σ²; μ, 2b²; the
      members' mean and variance);
    - ℓ_P = the median of the positive W₂(p_i, p_j) over the same pairs (ℓ_Y when every
      prediction is the same: k_P ≡ 1 then).

    The pairs are all pairs of rows up to 1024 rows, else a fixed set of 2¹⁷ random pairs (a
    generator of fixed seed: the same pairs for any data of that size). Multiplying loc and
    scale (or the samples) by c > 0 multiplies both lengths by c, so the SKCE and its tests
    do not change with the unit of y.
    """
    family = check_choice(family, "family", FAMILIES)
    if samples is None and (loc is None or scale is None):
        raise ValueError("pass `loc` and `scale` (the predictive laws' location and scale) or `samples`")
    n = np.shape(samples)[0] if samples is not None else np.size(loc)
    if n < 2:
        raise ValueError(f"the predictions must have at least 2 rows, got {n}")
    _, loc_, scale_, S = _check_predictions(np.zeros(n), loc, scale, samples, family)
    return _length_scales(loc_, scale_, S, family)


def _length_scales(loc, scale, S, family) -> tuple[float, float]:
    """:func:`skce_length_scales` on checked predictions (``S`` sorted, or None)."""
    if S is not None:
        mean, var = S.mean(axis=1), S.var(axis=1)
    else:
        mean, var = loc, (2.0 if family == "laplace" else 1.0) * scale ** 2
    i, j = _pairs(mean.size)
    l_y = float(np.median(np.sqrt((mean[i] - mean[j]) ** 2 + var[i] + var[j])))
    if not l_y > 0:
        raise ValueError("the predictions are all the same point mass: no length scale can be drawn from "
                         "them; pass `length_scales=(l_P, l_Y)`")
    w = _w2_pairs(loc, scale, S, family, i, j)
    w = w[w > 0]
    l_p = float(np.median(w)) if w.size else l_y
    return l_p, l_y


def _prepare(y, loc, scale, samples, family, target_kernel, length_scales) -> _Prepared:
    family = check_choice(family, "family", FAMILIES)
    y, loc, scale, S = _check_predictions(y, loc, scale, samples, family)
    if target_kernel is None:
        target_kernel = "exponential" if family == "laplace" and S is None else "gaussian"
    target_kernel = check_choice(target_kernel, "target_kernel", TARGET_KERNELS)
    if S is None and family == "laplace" and target_kernel != "exponential":
        raise ValueError("`target_kernel` must be 'exponential' for Laplace predictions (the closed form "
                         "of the Gaussian kernel's expectations is not implemented for them)")
    if length_scales is None:
        l_p, l_y = _length_scales(loc, scale, S, family)
    else:
        try:
            l_p, l_y = length_scales
        except (TypeError, ValueError):
            raise ValueError(f"`length_scales` must be None or a pair (l_P, l_Y), got {length_scales!r}") from None
        l_p = check_positive_number(l_p, "length_scales", plural=True)
        l_y = check_positive_number(l_y, "length_scales", plural=True)
    inv = 1.0 / l_y
    ys = np.ascontiguousarray(y * inv)
    if S is not None:
        code = _k.SAMPLES_GAUSS if target_kernel == "gaussian" else _k.SAMPLES_EXP
        P = np.zeros((3, 0))
        S = np.ascontiguousarray(S * inv)
    else:
        mu, sd = loc * inv, scale * inv
        if family == "laplace":
            code, third = _k.LAPLACE_EXP, 1.0 / sd
        else:
            code = _k.NORMAL_GAUSS if target_kernel == "gaussian" else _k.NORMAL_EXP
            third = 1.0 / np.sqrt(1.0 + sd * sd)
        P = np.ascontiguousarray(np.stack([mu, sd, third]))
        S = np.zeros((0, 1))
    return _Prepared(code, ys, P, S, l_y / l_p, (l_p, l_y))


def _check_estimator(estimator, block_size, n) -> tuple[str, int]:
    estimator = check_choice(estimator, "estimator", ESTIMATORS)
    block_size = check_int(block_size, "block_size", minimum=2)
    if estimator == "block" and block_size > n:
        raise ValueError(f"`block_size` must be at most len(y) = {n}, got {block_size}")
    return estimator, block_size


def _statistic(p: _Prepared, mode: int, estimator: str, block_size: int, y=None) -> float:
    """The ``estimator``'s value (or its part ``mode``) on targets ``y`` (default: the data's)."""
    y = p.y if y is None else y
    n = y.size
    if estimator == "unbiased":
        return parallel_kernel(_k.pair_sum)(p.code, mode, y, p.P, p.S, p.rho) * (2.0 / (n * (n - 1.0)))
    if estimator == "biased":
        return (2.0 * parallel_kernel(_k.pair_sum)(p.code, mode, y, p.P, p.S, p.rho)
                + parallel_kernel(_k.diag_sum)(p.code, mode, y, p.P, p.S, p.rho)) / (float(n) * n)
    sums = parallel_kernel(_k.block_sums)(p.code, mode, y, p.P, p.S, p.rho, block_size)
    return math.fsum(sums) / (sums.size * block_size * (block_size - 1) / 2.0)


def skce(y, loc=None, scale=None, *, samples=None, family: Literal["normal", "laplace"] = "normal",
         estimator: Literal["unbiased", "block", "biased"] = "unbiased", block_size: int = 2,
         length_scales: tuple[float, float] | None = None,
         target_kernel: Literal["gaussian", "exponential"] | None = None) -> float:
    r"""The squared kernel calibration error (SKCE) of predictive distributions.

    .. math::

        \widehat{\mathrm{SKCE}}_{u} = \binom{M}{2}^{-1}\sum_{i<j} h_{ij},\qquad
        h_{ij} = k_P(p_i, p_j)\,[k_Y(y_i, y_j) - E_{Z\sim p_i}k_Y(Z, y_j)
                 - E_{\tilde Z\sim p_j}k_Y(y_i, \tilde Z) + E\,k_Y(Z, \tilde Z)]

    with k_P = exp(−W₂(p_i, p_j)/ℓ_P) (W₂ the 2-Wasserstein distance) and the target kernel
    k_Y Gaussian exp(−(y − ỹ)²/(2ℓ_Y²)) or exponential exp(−|y − ỹ|/ℓ_Y); the expectations are
    in closed form. 0 in expectation for calibrated predictions, > 0 otherwise.

    Parameters
    ----------
    y : array_like, shape (M,)
        The targets (for a set of errors E with uncertainties u: y = E, loc = 0, scale = u).
    loc, scale : array_like, shape (M,), optional
        The predictive laws: N(loc, scale²) (``family="normal"``) or Laplace(loc, scale).
    samples : array_like, shape (M, m), optional
        Instead of loc and scale: m ≥ 2 members (an ensemble, or draws) per row; the
        expectations are averages over the members, W₂ is between the empirical laws.
    family : {"normal", "laplace"}, default: "normal"
        The law of loc and scale.
    estimator : {"unbiased", "block", "biased"}, default: "unbiased"
        The U-statistic over all pairs (O(M²)); the mean over the M // B blocks of B
        consecutive rows of their U-statistics (O(M·B); B = 2 is the linear estimator); the
        V-statistic (the pairs i = j included, ≥ 0 up to rounding, biased upwards).
    block_size : int, default: 2
        B of the block estimator.
    length_scales : (float, float), optional
        (ℓ_P, ℓ_Y) in the units of y; (1, 1) gives the values of CalibrationErrors.jl
        (``WassersteinExponentialKernel() ⊗ SqExponentialKernel()``, ``⊗ ExponentialKernel()``
        for Laplace). Default: :func:`skce_length_scales`, a median heuristic on the
        predictions, so that the SKCE does not depend on the unit of y.
    target_kernel : {"gaussian", "exponential"}, optional
        k_Y; default Gaussian, exponential for Laplace predictions (the only one for them).

    Returns
    -------
    float

    See Also
    --------
    skce_test : the tests of calibration built on it.

    Notes
    -----
    The pair sums run in parallel over fixed tiles of rows and are added in a fixed order: the
    result does not depend on the number of threads. docs/methods.md, "Kernel calibration
    error (SKCE)", gives the closed forms.

    References
    ----------
    .. [1] D. Widmann, F. Lindsten and D. Zachariah, "Calibration tests beyond
       classification", ICLR 2021. https://openreview.net/forum?id=-bxf89v3Nx

    Examples
    --------
    >>> import numpy as np, mcref
    >>> round(mcref.skce([0.0, 0.0], [0.0, 0.0], [1.0, 1.0], length_scales=(1, 1)), 6)  # 1 − √2 + 1/√3
    0.163137
    """
    p = _prepare(y, loc, scale, samples, family, target_kernel, length_scales)
    estimator, block_size = _check_estimator(estimator, block_size, p.y.size)
    return float(_statistic(p, _k.FULL, estimator, block_size))


def default_skce_n_mc(n: int) -> int:
    """The consistency test's default repeats: 999 up to ~3000 rows, then fewer so that
    n_mc·M²/2 pair evaluations stay near 5·10⁹ (99 at 10⁴), never under 99."""
    pairs = n * (n - 1) / 2.0
    k = int(_MC_PAIR_BUDGET / pairs)
    for cap in (999, 499, 199, 99):
        if k >= cap:
            return cap
    return 99


def _block_test(p: _Prepared, block_size: int, alpha: float) -> SKCETest:
    n_blocks = p.y.size // block_size
    if n_blocks < 2:
        raise ValueError(f"the asymptotic block test needs at least 2 blocks: `block_size` must be at most "
                         f"len(y) // 2 = {p.y.size // 2}, got {block_size}")
    values = parallel_kernel(_k.block_sums)(p.code, _k.FULL, p.y, p.P, p.S, p.rho, block_size) / (block_size * (block_size - 1) / 2.0)
    est = math.fsum(values) / n_blocks
    sd = float(np.std(values, ddof=1))
    se = sd / math.sqrt(n_blocks)
    if se > 0:
        z = est / se
    else:
        z = math.inf if est > 0 else (-math.inf if est < 0 else 0.0)
    pvalue = float(sps.norm.sf(z)) if se > 0 else (0.0 if est > 0 else 1.0)
    return SKCETest(estimate=est, pvalue=pvalue, method="asymptotic_block", n_test=n_blocks, alpha=alpha,
                    estimator="block", block_size=block_size, length_scales=p.length_scales, statistic=z,
                    std_error=se)


#: up to this many rows the consistency test runs each repeat in one thread (repeats in parallel)
_SERIAL_REPEATS_MAX = 4096


#: repeats per round of the consistency test (the stopping rule is read after each round; the
#: result does not depend on it)
_ROUND = 16


def _consistency_test(p: _Prepared, estimator: str, block_size: int, n_mc: int, stop: int | None, seed,
                      alpha: float) -> SKCETest:
    seed_seq = check_seed(seed)
    states = chunk_states(seed_seq, n_mc)  # one stream per repeat
    n = p.y.size
    free = _statistic(p, _k.YFREE, estimator, block_size)  # the same for every redraw
    serial = n <= _SERIAL_REPEATS_MAX
    kind = {"unbiased": _k.UNBIASED, "biased": _k.BIASED, "block": _k.BLOCK}[estimator]
    norm = {"unbiased": 2.0 / (n * (n - 1.0)), "biased": 1.0 / (float(n) * n),
            "block": 1.0 / ((n // block_size) * block_size * (block_size - 1) / 2.0)}[estimator]

    def run(lo, hi, observed):
        if serial:  # repeats in parallel, each in one thread
            return parallel_kernel(_k.redrawn_statistics)(p.code, kind, p.y, p.P, p.S, p.rho, block_size, states[lo:hi],
                                         observed) * norm
        out = np.empty(hi - lo + 1)  # each repeat a parallel pair sum
        out[0] = _statistic(p, _k.YDEP, estimator, block_size) if observed else np.nan
        ystar = np.empty_like(p.y)
        for k in range(lo, hi):
            _k.draw_targets(p.code, p.P, p.S, states[k].copy(), ystar)
            out[k - lo + 1] = _statistic(p, _k.YDEP, estimator, block_size, ystar)
        return out

    observed = run(0, 0, True)[0]
    ref = np.empty(0)
    pvalue = math.nan
    while ref.size < n_mc:
        ref = np.concatenate([ref, run(ref.size, min(n_mc, ref.size + _ROUND), False)[1:]])
        hits = np.flatnonzero(ref >= observed)
        if stop is not None and hits.size >= stop:  # Besag & Clifford: p = h / L
            ref = ref[: hits[stop - 1] + 1]
            pvalue = stop / ref.size
            break
    if math.isnan(pvalue):
        pvalue = (1.0 + np.count_nonzero(ref >= observed)) / (1.0 + n_mc)
    return SKCETest(estimate=free + observed, pvalue=pvalue, method="consistency",
                    n_test=ref.size, alpha=alpha, estimator=estimator, block_size=block_size,
                    length_scales=p.length_scales, statistic=free + observed, reference=free + ref,
                    seed=int(seed_seq.entropy) if isinstance(seed_seq.entropy, int) else None)


def default_skce_n_boot(n: int) -> int:
    """The wild bootstrap's default replicates: 999 up to 2000 rows, 499 up to 10⁴, then 199."""
    return 999 if n <= 2000 else (499 if n <= 10_000 else 199)


def _wild_test(p: _Prepared, n_boot: int, seed, alpha: float) -> SKCETest:
    seed_seq = check_seed(seed)
    n = p.y.size
    rng = np.random.Generator(np.random.PCG64(seed_seq))
    W = np.ascontiguousarray(rng.integers(0, 2, (n_boot, n)).astype(np.float64) * 2.0 - 1.0)
    sums = parallel_kernel(_k.wild_sums)(p.code, p.y, p.P, p.S, p.rho, W) * (2.0 / (n * (n - 1.0)))
    est, ref = float(sums[0]), sums[1:]
    pvalue = (1.0 + np.count_nonzero(ref >= est)) / (1.0 + n_boot)
    return SKCETest(estimate=est, pvalue=pvalue, method="asymptotic_unbiased", n_test=n_boot, alpha=alpha,
                    estimator="unbiased", block_size=2, length_scales=p.length_scales, statistic=est,
                    reference=ref, seed=int(seed_seq.entropy) if isinstance(seed_seq.entropy, int) else None)


def _cme_locations(n: int, n_locations, seed) -> tuple[np.ndarray, np.random.SeedSequence]:
    """J distinct rows drawn uniformly (sorted): the test locations (p_j, y_j) of the CME."""
    n_locations = check_int(n_locations, "n_locations", minimum=1)
    if n_locations >= n:
        raise ValueError(f"`n_locations` must be less than len(y) = {n} (the covariance of the J deviations "
                         f"needs more rows than locations), got {n_locations}")
    seed_seq = check_seed(seed)
    rng = np.random.Generator(np.random.PCG64(seed_seq))
    return np.sort(rng.choice(n, n_locations, replace=False)).astype(np.int64), seed_seq


def _cme_deviations(p: _Prepared, loc: np.ndarray) -> np.ndarray:
    """The n × J deviations k_P(p_i, p_j)·[k_Y(y_i, y_j) − E_{Z∼p_i} k_Y(Z, y_j)] at the locations."""
    out = np.empty((p.y.size, loc.size))
    parallel_kernel(_k.cme_deviations)(p.code, p.y, p.P, p.S, p.rho, loc, np.ascontiguousarray(p.y[loc]), out)
    return out


def ucme(y, loc=None, scale=None, *, samples=None, family: Literal["normal", "laplace"] = "normal",
         length_scales: tuple[float, float] | None = None,
         target_kernel: Literal["gaussian", "exponential"] | None = None,
         n_locations: int = DEFAULT_CME_LOCATIONS, seed=None) -> float:
    r"""The unnormalized calibration mean embedding (UCME) at J test locations.

    .. math::

        \mathrm{UCME}^2 = \frac1J\sum_{j=1}^J \hat\mu_j^2,\qquad
        \hat\mu_j = \frac1M\sum_{i=1}^M k_P(p_i, p_{(j)})\,[k_Y(y_i, y_{(j)})
                     - E_{Z\sim p_i} k_Y(Z, y_{(j)})],

    the squared calibration mean embedding evaluated at the test locations (p_(j), y_(j)), J
    rows of the data drawn uniformly without replacement (``seed``); the kernels and their
    default lengths are those of :func:`skce`. 0 in expectation (up to O(1/M)) for calibrated
    predictions.

    Parameters
    ----------
    y, loc, scale, samples, family, length_scales, target_kernel
        As in :func:`skce`.
    n_locations : int, default: 5
        J, fewer than the rows.
    seed : None, int, SeedSequence or Generator
        The draw of the test locations.

    Returns
    -------
    float

    See Also
    --------
    skce_test : ``method="cme"``, the χ² test of the same embedding.

    Notes
    -----
    docs/methods.md, "Kernel calibration error (SKCE)": the estimator of CalibrationErrors.jl
    (``UCME``), O(M·J); the reference is :func:`skce`'s (Widmann, Lindsten & Zachariah, ICLR 2021).

    Examples
    --------
    >>> import numpy as np, mcref
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 500)
    >>> E = u * rng.standard_normal(500)
    >>> mcref.ucme(E, np.zeros(500), u, seed=1) < 1e-3
    True
    """
    p = _prepare(y, loc, scale, samples, family, target_kernel, length_scales)
    idx, _ = _cme_locations(p.y.size, n_locations, seed)
    return float(np.mean(_cme_deviations(p, idx).mean(axis=0) ** 2))


@serial_blas()  # Σ̂ and its pseudo-inverse: the same bits whatever BLAS's threads (mcref.core._dot)
def _cme_test(p: _Prepared, n_locations, seed, alpha: float) -> SKCETest:
    """The CME test: T = M·μ̂ᵀΣ̂⁻¹μ̂ (Σ̂ the covariance of the deviations, ddof 1) against χ²_J (J: the
    rank of Σ̂), as CalibrationTests.jl's ``AsymptoticCMETest``."""
    idx, seed_seq = _cme_locations(p.y.size, n_locations, seed)
    D = _cme_deviations(p, idx)
    n, J = D.shape
    mu = D.mean(axis=0)
    C = np.atleast_2d(np.cov(D, rowvar=False, ddof=1))
    x, _, rank, _ = np.linalg.lstsq(C, mu, rcond=None)  # rank-deficient Σ̂ (tied rows): a pseudo-inverse
    stat = float(n * (mu @ x))
    df = max(int(rank), 1)
    pvalue = float(sps.chi2.sf(stat, df))
    return SKCETest(estimate=float(np.mean(mu ** 2)), pvalue=pvalue, method="cme", n_test=J,
                    alpha=alpha, estimator="ucme", block_size=2, length_scales=p.length_scales, statistic=stat,
                    seed=int(seed_seq.entropy) if isinstance(seed_seq.entropy, int) else None)


def skce_test(y, loc=None, scale=None, *, samples=None, family: Literal["normal", "laplace"] = "normal",
              estimator: Literal["unbiased", "block", "biased"] = "unbiased", block_size: int = 2,
              length_scales: tuple[float, float] | None = None,
              target_kernel: Literal["gaussian", "exponential"] | None = None,
              method: Literal["auto", "consistency", "asymptotic_block", "asymptotic_unbiased", "cme"] = "auto",
              n_mc: int | None = None, stop_exceedances: int | None = 10, n_boot: int | None = None,
              n_locations: int = DEFAULT_CME_LOCATIONS, seed=None, alpha: float = 0.05) -> SKCETest:
    r"""A test of calibration of predictive distributions by their SKCE (:func:`skce`).

    H₀: each target is distributed as its prediction (calibration in the strong sense: the
    law of Y given the prediction P is P). Large SKCE values reject it (one-sided).

    * ``"consistency"``: redraw the targets from the predictions (y* ∼ p_i: μ + σε for the
      normal, a uniformly drawn member for samples), ``n_mc`` times, and compare:
      p = (1 + #{T_k ≥ T})/(1 + n_mc), exact for any n_mc (the length scales read only the
      predictions, so T is the same function of y and y*). The part of the pair sum free of
      y is computed once. The repeats stop at the ``stop_exceedances``-th T_k ≥ T, at repeat L,
      with p = h/L (Besag & Clifford's sequential Monte Carlo p-value, exact too): a calibrated
      set costs about h/p repeats instead of n_mc, a miscalibrated one runs all n_mc.
      O(n_mc·M²) at most.
    * ``"asymptotic_block"``: the block estimator's mean over its M // B blocks divided by its
      standard error over the blocks, against N(0, 1) (Widmann et al. 2021, Lemma 1). O(M·B).
    * ``"asymptotic_unbiased"``: the unbiased estimate against its wild (multiplier) bootstrap
      T*_r = Σ_{i<j} w_ri·w_rj·h_ij / (M(M − 1)/2), w = ±1 with probability ½ (h is a degenerate
      kernel under H₀, so T* has the null limit law of T, Σ_k λ_k(χ²₁ − 1)/M: Dehling &
      Mikosch 1994): p = (1 + #{T*_r ≥ T})/(1 + n_boot). One pass over the pairs,
      O(M²·n_boot) multiply-adds, no M × M array.
    * ``"cme"``: the χ² test of the calibration mean embedding at J = ``n_locations`` test
      locations (:func:`ucme`; J rows of the data drawn with ``seed``): the M × J deviations
      d_ij = k_P(p_i, p_(j))·[k_Y(y_i, y_(j)) − E_{Z∼p_i} k_Y(Z, y_(j))], their mean μ̂ and
      covariance Σ̂, T = M·μ̂ᵀΣ̂⁻¹μ̂ (Widmann et al. 2021, after Chwialkowski et al. 2015 and
      Jitkrittum et al. 2016; CalibrationTests.jl's ``AsymptoticCMETest``) against χ²_J. O(M·J);
      ``estimate`` is the UCME. Asymptotic: liberal at small M (measured on calibrated sets,
      J = 5: 6.3 % at α = 0.05 for M = 1000, 7 % at 300, 4.9 % at 3000; docs/methods.md).
    * ``"auto"``: the consistency test up to 20 000 rows, else the asymptotic block test with
      B = ⌊√M⌋ (whatever ``block_size``: B = 2 is nearly powerless, docs/methods.md).

    Parameters
    ----------
    y, loc, scale, samples, family, estimator, block_size, length_scales, target_kernel
        As in :func:`skce`; ``estimator`` is the consistency test's statistic (the block test
        always reads the block estimator).
    method : {"auto", "consistency", "asymptotic_block", "asymptotic_unbiased", "cme"}, default: "auto"
    n_mc : int, optional
        Repeats of the consistency test; default :func:`default_skce_n_mc` (999 up to about
        3000 rows, 99 at 10⁴); the most repeats when the test does not stop early.
    stop_exceedances : int or None, default: 10
        h of the sequential stop; None runs all ``n_mc`` repeats (p = (1 + #{T_k ≥ T})/(1 + n_mc)).
    n_boot : int, optional
        Replicates of the wild bootstrap (``"asymptotic_unbiased"``); default
        :func:`default_skce_n_boot`.
    n_locations : int, default: 5
        J, the test locations of ``method="cme"`` (fewer than the rows).
    seed : None, int, SeedSequence or Generator
        The random streams of the consistency test and of the wild bootstrap (one stream per repeat, spawned from a
        ``SeedSequence``: the same p whatever the number of threads), or the draw of the CME test's locations.
    alpha : float, default: 0.05
        The level of ``rejected``.

    Returns
    -------
    SKCETest

    References
    ----------
    .. [1] D. Widmann, F. Lindsten and D. Zachariah, "Calibration tests beyond
       classification", ICLR 2021. https://openreview.net/forum?id=-bxf89v3Nx
    .. [2] J. Besag and P. Clifford, "Sequential Monte Carlo p-values", Biometrika 78,
       301–304 (1991). https://doi.org/10.1093/biomet/78.2.301
    .. [3] H. Dehling and T. Mikosch, "Random quadratic forms and the bootstrap for
       U-statistics", J. Multivariate Anal. 51, 392–413 (1994).
       https://doi.org/10.1006/jmva.1994.1069
    .. [4] K. Chwialkowski, A. Ramdas, D. Sejdinovic and A. Gretton, "Fast two-sample testing
       with analytic representations of probability measures", NeurIPS 2015; W. Jitkrittum,
       Z. Szabó, K. Chwialkowski and A. Gretton, "Interpretable distribution features with
       maximum testing power", NeurIPS 2016.

    Examples
    --------
    >>> import numpy as np, mcref
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 300)
    >>> E = u * rng.standard_normal(300)
    >>> res = mcref.skce_test(E, np.zeros(300), u, seed=1)
    >>> res.method, res.pvalue > 0.05, res.n_test < 999  # stopped at the 10th exceedance
    ('consistency', True, True)
    """
    p = _prepare(y, loc, scale, samples, family, target_kernel, length_scales)
    n = p.y.size
    estimator, block_size = _check_estimator(estimator, block_size, n)
    method = check_choice(method, "method", METHODS)
    alpha = check_probability(alpha, "alpha")
    if method == "auto":
        if n > AUTO_CONSISTENCY_MAX:  # B = 2 has almost no power (docs/methods.md): B = ⌊√M⌋
            return _block_test(p, math.isqrt(n), alpha)
        method = "consistency"
    if method == "asymptotic_block":
        return _block_test(p, block_size, alpha)
    if method == "cme":
        return _cme_test(p, n_locations, seed, alpha)
    if method == "asymptotic_unbiased":
        n_boot = default_skce_n_boot(n) if n_boot is None else check_int(n_boot, "n_boot", minimum=1)
        return _wild_test(p, n_boot, seed, alpha)
    n_mc = default_skce_n_mc(n) if n_mc is None else check_int(n_mc, "n_mc", minimum=1)
    if stop_exceedances is not None:
        stop_exceedances = check_int(stop_exceedances, "stop_exceedances", minimum=1)
    return _consistency_test(p, estimator, block_size, n_mc, stop_exceedances, seed, alpha)
