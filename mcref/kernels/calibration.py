"""Kernels of the distributional calibration checks (docs/methods.md, "Quantile and rank
calibration"): NEES of multivariate Gaussian predictions, and the simulation of the
simultaneous band of an ECDF of uniform values."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_EXACT, NJIT_PARALLEL
from .linalg import chol_mahalanobis
from .rng import next_double


@njit(**NJIT_EXACT)
def nees_kernel(y, mean, cov, nees, log_sg):
    """NEES ε_i = r_iᵀ Σ_i⁻¹ r_i, r_i = y_i − mean_i, and ln σ_G,i = ln det(Σ_i)/(2d), by a
    Cholesky factorisation of each Σ_i (d × d; :func:`mcref.kernels.linalg.chol_mahalanobis`).
    A matrix that is not positive definite gets NaN (the caller reports its index)."""
    n, d = y.shape
    L = np.empty((d, d))
    r = np.empty(d)
    w = np.empty(d)
    for i in range(n):
        for a in range(d):
            r[a] = y[i, a] - mean[i, a]
        e, logdet = chol_mahalanobis(cov[i], r, L, w)
        nees[i] = e
        log_sg[i] = logdet / (2.0 * d)


@njit(**NJIT_PARALLEL)
def ecdf_max_deviation(n, g, states, out):
    """For each state (one simulation each): draw ``n`` uniforms and return the largest
    standardized deviation max_k |F_n(t_k) − t_k| / √(t_k(1 − t_k)/n) over the regular grid
    t_k = k/(g + 1), k = 1 … g. The ECDF at the grid comes from bucket counts (cell
    ⌊x·(g + 1)⌋), O(n + g) per simulation."""
    for s in prange(states.shape[0]):
        st = states[s].copy()
        counts = np.zeros(g + 1, dtype=np.int64)
        for i in range(n):
            c = int(next_double(st) * (g + 1))
            counts[min(c, g)] += 1
        below = 0
        worst = 0.0
        for k in range(1, g + 1):
            below += counts[k - 1]  # x < k/(g+1)  (x = t_k has probability 0)
            t = k / (g + 1)
            dev = abs(below / n - t) / math.sqrt(t * (1.0 - t) / n)
            if dev > worst:
                worst = dev
        out[s] = worst
