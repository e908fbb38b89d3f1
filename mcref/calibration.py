"""Calibration of whole predictive distributions, beyond the variance (docs/methods.md,
"Quantile and rank calibration").

* :func:`qce` — quantile calibration error of Gaussian predictions (mean vector and
  covariance): the NEES ε = (y − ŷ)ᵀ Σ̂⁻¹ (y − ŷ) against the χ²_d quantiles; marginal
  (M-QCE) or conditional on the generalized standard deviation σ_G = det(Σ̂)^{1/(2d)}
  (C-QCE), as netcal's ``QCE`` (F. Küppers et al., ECCV Workshops 2022, arXiv:2207.01242).
* :func:`rank_calibration` — the rank of the truth among samples of the predictive
  distribution (simulation-based calibration, S. Talts et al. 2018, arXiv:1804.06788), or of
  its surprisal −ln p among the samples' surprisals for vector outputs; randomized so that a
  calibrated predictor gives exactly uniform c_i ∈ (0, 1).
* :func:`uniformity` — tests of the c_i: histogram χ² test, and the ECDF − t curve with
  pointwise and simultaneous 95 % bands (the simultaneous band is simulated on a grid of
  evaluation points fixed in advance).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from scipy import stats as st

from .core._checks import check_cases, check_finite_cases, check_int, check_probability, check_seed, renamed_keywords
from .kernels import calibration as KC
from .kernels.rng import chunk_states
from .parallel import parallel_kernel

__all__ = ["QCEResult", "qce", "nees", "rank_calibration", "Uniformity", "uniformity"]

DEFAULT_QUANTILES = np.linspace(0.05, 0.95, 19)


def nees(y, mean, cov) -> tuple[np.ndarray, np.ndarray]:
    """NEES ε_i = (y_i − ŷ_i)ᵀ Σ_i⁻¹ (y_i − ŷ_i) and the generalized standard deviations
    σ_G,i = det(Σ_i)^{1/(2d)}. Raises for a covariance that is not positive definite.

    Examples
    --------
    >>> e, sg = nees([[1.0, 2.0]], [[0.0, 0.0]], [[[1.0, 0.0], [0.0, 4.0]]])
    >>> float(e[0]), round(float(sg[0]), 12)   # 1²/1 + 2²/4; σ_G = (1·4)^(1/4) = √2
    (2.0, 1.414213562373)
    """
    y, mean, cov = check_cases(y, mean, cov)
    e = np.empty(y.shape[0])
    lsg = np.empty(y.shape[0])
    KC.nees_kernel(y, mean, cov, e, lsg)
    bad = np.flatnonzero(np.isnan(e))
    if bad.size:
        raise ValueError(f"`cov` must be positive definite: {bad.size} case(s) are not (first at index {bad[0]})")
    return e, np.exp(lsg)


@dataclass(frozen=True)
class QCEResult:
    """Quantile calibration error (:func:`qce`).

    Attributes
    ----------
    value : float
        QCE averaged over the quantile levels.
    quantiles : ndarray
        Levels τ.
    per_quantile : ndarray
        QCE(τ).
    coverage : ndarray
        Observed P(ε ≤ χ²_d(τ)) over all cases.
    marginal : bool
    bin_edges, bin_counts, bin_coverage : ndarray or None
        C-QCE: edges of the σ_G bins, counts, and coverage per (τ, bin).
    nees, sigma_g : ndarray
    dim : int
    """

    value: float
    quantiles: np.ndarray
    per_quantile: np.ndarray
    coverage: np.ndarray
    marginal: bool
    bin_edges: np.ndarray | None
    bin_counts: np.ndarray | None
    bin_coverage: np.ndarray | None
    nees: np.ndarray
    sigma_g: np.ndarray
    dim: int


@renamed_keywords(bins="n_bins")
def qce(y, mean, cov, *, quantiles=DEFAULT_QUANTILES, marginal: bool = True, n_bins: int = 10,
        sample_threshold: int = 1, range_: tuple[float, float] | None = None) -> QCEResult:
    r"""Quantile calibration error of Gaussian predictions N(mean_i, cov_i) of y_i.

    With ε_i the NEES and χ²_d(τ) the τ-quantile of χ²_d:

    * M-QCE(τ) = abs(mean_i 1(ε_i ≤ χ²_d(τ)) − τ) (``marginal=True``);
    * C-QCE(τ) = Σ_b (n_b/N′)·abs(freq_b(τ) − τ) over ``n_bins`` equal-width bins of σ_G on
      [min, max] (or ``range_``), bins with fewer than ``sample_threshold`` cases left out
      (N′ the cases in the bins kept) — netcal's ``QCE(marginal=False)`` (its ``bins``).

    The reported ``value`` is the mean over the levels ``quantiles``. 1-D data: ``y`` (n,),
    ``mean`` (n,) or a scalar, ``cov`` the variances u² (n,); then ε = z² and the QCE is the
    miscalibration of the central intervals ±u·Φ⁻¹((1+τ)/2).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2, 20_000); E = u * rng.standard_normal(20_000)
    >>> bool(qce(E, 0.0, u**2).value < 0.01), bool(qce(E, 0.0, (0.7 * u)**2).value > 0.1)
    (True, True)
    """
    e, sg = nees(y, mean, cov)
    n = e.size
    d = np.asarray(y).reshape(n, -1).shape[1]
    q = np.atleast_1d(np.asarray(quantiles, dtype=float))
    if q.ndim != 1 or np.any((q <= 0) | (q >= 1)):
        raise ValueError("`quantiles` must be levels strictly between 0 and 1")
    inside = e[None, :] <= st.chi2.ppf(q, d)[:, None]  # (q, n)
    coverage = inside.mean(axis=1)
    if marginal:
        per_q = np.abs(coverage - q)
        return QCEResult(float(per_q.mean()), q, per_q, coverage, True, None, None, None, e, sg, d)
    bins = check_int(n_bins, "n_bins", minimum=1)
    sample_threshold = check_int(sample_threshold, "sample_threshold", minimum=1)
    lo, hi = (float(sg.min()), float(sg.max())) if range_ is None else map(float, range_)
    if not hi > lo:
        hi = lo + 1.0  # all σ_G equal: one populated bin
    edges = np.linspace(lo, hi, bins + 1)
    idx = np.clip(np.searchsorted(edges, sg, side="right") - 1, 0, bins - 1)
    inrange = (sg >= lo) & (sg <= hi)
    counts = np.bincount(idx[inrange], minlength=bins)
    hits = np.stack([np.bincount(idx[inrange], weights=inside[k, inrange], minlength=bins) for k in range(q.size)])
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = hits / counts
    keep = counts >= sample_threshold
    if not keep.any():
        raise ValueError(f"no bin holds `sample_threshold`={sample_threshold} cases")
    w = counts[keep] / counts[keep].sum()
    per_q = (np.abs(freq[:, keep] - q[:, None]) * w).sum(axis=1)
    return QCEResult(float(per_q.mean()), q, per_q, coverage, False, edges, counts, freq, e, sg, d)


def rank_calibration(truth, samples, *, seed=None, logpdf: Callable[[np.ndarray, int], np.ndarray] | None = None
                     ) -> np.ndarray:
    r"""Randomized ranks c_i ∈ (0, 1) of the truth among samples of each predictive distribution.

    Scalar outputs: ``truth`` (n,), ``samples`` (n, S); r_i = #{s < y_i} + a uniform draw
    among the #{s = y_i} + 1 tie positions, and c_i = (r_i + V_i)/(S + 1) with V_i ~ U(0, 1):
    exactly U(0, 1) when y_i is exchangeable with the samples (a calibrated predictor).

    Vector outputs (surprisal mode): ``truth`` (n, d), ``samples`` (n, S, d) and
    ``logpdf(x, i)`` the predictive log density of case i at the points x (…, d); the rank is
    that of −ln p(y_i) among the samples' −ln p (S. Talts et al. 2018; the surprisal makes the
    rank one-dimensional: large when the truth is less probable than the samples).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> mu = rng.standard_normal(3000); y = mu + rng.standard_normal(3000)
    >>> c = rank_calibration(y, mu[:, None] + rng.standard_normal((3000, 99)), seed=2)
    >>> bool(uniformity(c).chi2_pvalue > 1e-3)
    True
    """
    rng = np.random.default_rng(check_seed(seed))
    t = np.asarray(truth, dtype=float)
    s = np.asarray(samples, dtype=float)
    if logpdf is not None:
        if t.ndim != 2 or s.ndim != 3 or s.shape[0] != t.shape[0] or s.shape[2] != t.shape[1]:
            raise ValueError(f"surprisal mode needs `truth` (n, d) and `samples` (n, S, d), got {t.shape} and {s.shape}")
        check_finite_cases(t, "truth")
        check_finite_cases(s, "samples")
        t_score = np.array([-float(np.asarray(logpdf(t[i][None, :], i)).ravel()[0]) for i in range(t.shape[0])])
        s_score = np.stack([-np.asarray(logpdf(s[i], i), dtype=float).ravel() for i in range(t.shape[0])])
        if s_score.shape != s.shape[:2] or not np.all(np.isfinite(s_score)) or not np.all(np.isfinite(t_score)):
            raise ValueError("`logpdf(x, i)` must return one finite log density per point of x")
        t, s = t_score, s_score
    if t.ndim != 1 or s.ndim != 2 or s.shape[0] != t.size:
        raise ValueError(f"`truth` must have shape (n,) and `samples` (n, S), got {t.shape} and {s.shape}")
    if s.shape[1] < 1:
        raise ValueError("`samples` must hold at least one sample per case")
    check_finite_cases(t, "truth")
    check_finite_cases(s, "samples")
    return randomized_ranks((s < t[:, None]).sum(axis=1), (s == t[:, None]).sum(axis=1), s.shape[1], rng)


def randomized_ranks(below: np.ndarray, ties: np.ndarray, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    r"""The randomized ranks of :func:`rank_calibration` from the counts of samples below
    (``below``) and equal to (``ties``) each truth among ``n_samples``:
    c = (below + ⌊U·(ties + 1)⌋ + V)/(n_samples + 1), U and V uniform from ``rng`` (U for all
    cases first, then V): the same bits as :func:`rank_calibration` given the same generator."""
    r = below + np.floor(rng.uniform(size=below.size) * (ties + 1))
    return (r + rng.uniform(size=below.size)) / (n_samples + 1)


@dataclass(frozen=True)
class Uniformity:
    """Tests of uniform c_i (:func:`uniformity`).

    ``grid`` t_k; ``deviation`` ECDF(t_k) − t_k; ``pointwise`` ±1.96·√(t(1−t)/n);
    ``simultaneous`` ±h·√(t(1−t)/n) with h the simulated 95 % quantile of the largest
    standardized deviation over the grid; ``inside`` whether the curve stays within the
    simultaneous band; the histogram χ² test (``chi2``, ``chi2_pvalue``, ``counts``).
    """

    n: int
    grid: np.ndarray
    deviation: np.ndarray
    pointwise: np.ndarray
    simultaneous: np.ndarray
    h: float
    inside: bool
    counts: np.ndarray
    chi2: float
    chi2_pvalue: float


@functools.lru_cache(maxsize=64)
def _h_cached(n: int, grid_size: int, n_sim: int, level: float, seed: int) -> float:
    out = np.empty(n_sim)
    parallel_kernel(KC.ecdf_max_deviation)(n, grid_size, chunk_states(check_seed(seed), n_sim), out)
    return float(np.quantile(out, level, method="higher"))  # conservative for the discrete ECDF at small n


def _band_h(n: int, grid_size: int, n_sim: int, level: float, seed) -> float:
    """The simultaneous-band constant h (cached for an integer seed: it depends on n, the grid,
    the level and the simulations only, not on the data)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return _h_cached(int(n), int(grid_size), int(n_sim), level, int(seed))
    return _h_cached.__wrapped__(int(n), int(grid_size), int(n_sim), level, seed)


@renamed_keywords(bins="n_bins", n_sim="n_mc", level="confidence_level")
def uniformity(c, *, n_bins: int = 20, grid_size: int = 99, n_mc: int = 20_000, confidence_level: float = 0.95,
               seed: Any = 0) -> Uniformity:
    r"""Uniformity of the c_i: ECDF − t with pointwise and simultaneous bands, and a
    histogram χ² test (``n_bins`` equal bins, ``scipy.stats.chisquare``).

    The simultaneous band: on the grid t_k = k/(grid_size + 1) (fixed in advance, not taken
    from the sample), h is the ``confidence_level`` quantile of max_k abs(F_n(t_k) − t_k)/√(t_k(1−t_k)/n)
    over ``n_mc`` simulated uniform samples of the same n (numba kernel, bucket counts on the
    grid; cached per n); the band is ±h·√(t(1−t)/n), and a calibrated sample stays inside it
    with probability ``confidence_level``. With 20 000 simulations the Monte Carlo error of h is about
    0.01 (with 2000 it was ±0.1, enough to move the band's coverage by ±2 %).
    """
    c = np.asarray(c, dtype=float)
    if c.ndim != 1 or c.size < 2 or np.any((c < 0) | (c > 1)) or not np.all(np.isfinite(c)):
        raise ValueError("`c` must be a 1-D array of at least 2 values in [0, 1]")
    n = c.size
    grid_size = check_int(grid_size, "grid_size", minimum=1)
    n_mc = check_int(n_mc, "n_mc", minimum=100)
    grid = np.arange(1, grid_size + 1) / (grid_size + 1)
    cs = np.sort(c)
    dev = np.searchsorted(cs, grid, side="right") / n - grid
    sd = np.sqrt(grid * (1 - grid) / n)
    h = _band_h(n, grid_size, n_mc, check_probability(confidence_level, "confidence_level"), seed)
    counts = np.histogram(c, bins=check_int(n_bins, "n_bins", minimum=1), range=(0, 1))[0]
    chi = st.chisquare(counts)
    return Uniformity(n, grid, dev, 1.959963984540054 * sd, h * sd, h, bool(np.all(np.abs(dev) <= h * sd)),
                      counts, float(chi.statistic), float(chi.pvalue))
