"""Kernels of the proper scoring rules (docs/methods.md, "Proper scoring rules").

Each kernel takes flat, contiguous float64 arrays of the same length (the public functions
of :mod:`mcref.scores` validate and broadcast them) and fills ``out``, one score per case.
The cases are independent, so the ``prange`` loops give the same bits for any number of
threads.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_EXACT, NJIT_ORDERED_PARALLEL, NJIT_PARALLEL
from .linalg import chol_mahalanobis

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)

@njit(**NJIT_PARALLEL)
def crps_normal_kernel(y, mu, sigma, out):
    """CRPS(N(μ, σ²), y) = σ·[w·erf(w/√2) + 2φ(w) − 1/√π], w = (y − μ)/σ (erf(w/√2) = 2Φ(w) − 1)."""
    for i in prange(y.shape[0]):
        w = (y[i] - mu[i]) / sigma[i]
        out[i] = sigma[i] * (w * math.erf(w * _INV_SQRT2) + 2.0 * _INV_SQRT_2PI * math.exp(-0.5 * w * w)
                             - _INV_SQRT_PI)


# its two sums keep their written order: reassociated, a cache-loaded compilation and a fresh one (the
# serial twin of parallel.parallel_kernel) vectorized them differently, 1 ulp apart
@njit(**NJIT_ORDERED_PARALLEL)
def crps_ensemble_kernel(y, xs, fair, out):
    """CRPS of the ensemble of row i of ``xs`` (m members, **sorted** ascending) at y_i:
    mean|x − y| − Σ_jk |x_j − x_k|/(2m²) (``fair``: /(2m(m − 1))), the double sum as
    2·Σ_j (2j − m + 1)·d_j with d_j = x_(j) − y_i (0-based j; subtracting y keeps the sorted
    order and avoids cancellation when the ensemble sits far from 0): O(m) per case."""
    n, m = xs.shape
    pairs = float(m) * (m - 1) if fair else float(m) * m
    for i in prange(n):
        yi = y[i]
        s1 = 0.0
        s2 = 0.0
        for j in range(m):
            d = xs[i, j] - yi
            s1 += abs(d)
            s2 += (2 * j - m + 1) * d
        out[i] = s1 / m - s2 / pairs


@njit(**NJIT_PARALLEL)
def interval_score_kernel(y, lower, upper, alpha, out):
    """Interval score (r − l) + (2/α)(l − y)·1[y < l] + (2/α)(y − r)·1[y > r] of [l, r] at y."""
    for i in prange(y.shape[0]):
        s = upper[i] - lower[i]
        if y[i] < lower[i]:
            s += 2.0 / alpha[i] * (lower[i] - y[i])
        elif y[i] > upper[i]:
            s += 2.0 / alpha[i] * (y[i] - upper[i])
        out[i] = s


@njit(**NJIT_EXACT)
def nll_gaussian_kernel(y, mean, cov, out):
    """−ln N(y_i; mean_i, Σ_i) = ½[d ln 2π + ln det Σ_i + r_iᵀ Σ_i⁻¹ r_i], r_i = y_i − mean_i, by the
    Cholesky factorisation of :func:`mcref.kernels.linalg.chol_mahalanobis` (NaN when Σ_i is not
    positive definite: the caller reports its index)."""
    n, d = y.shape
    L = np.empty((d, d))
    r = np.empty(d)
    w = np.empty(d)
    c = d * _LOG_2PI
    for i in range(n):
        for a in range(d):
            r[a] = y[i, a] - mean[i, a]
        e, logdet = chol_mahalanobis(cov[i], r, L, w)
        out[i] = 0.5 * (c + logdet + e)
