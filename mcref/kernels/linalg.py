"""Small dense linear algebra shared by the kernels of Gaussian predictions
(docs/methods.md, "Quantile and rank calibration" and "Proper scoring rules"): one
Cholesky factorisation with its positive-definiteness check, used by the NEES
(:func:`mcref.kernels.calibration.nees_kernel`) and by the Gaussian negative log-likelihood
(:func:`mcref.kernels.scores.nll_gaussian_kernel`)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._config import NJIT_EXACT


@njit(**NJIT_EXACT)
def chol_mahalanobis(S, r, L, w):
    """(rᵀ S⁻¹ r, ln det S) of a d × d matrix S by the Cholesky factorisation S = L Lᵀ and the
    forward substitution L w = r (so rᵀ S⁻¹ r = |w|²); ``L`` (d, d) and ``w`` (d,) are scratch
    that the caller allocates once. (NaN, NaN) when S is not positive definite (a pivot
    ≤ 0 or NaN)."""
    d = r.shape[0]
    logdet = 0.0
    for a in range(d):
        for b in range(a + 1):
            s = S[a, b]
            for k in range(b):
                s -= L[a, k] * L[b, k]
            if a == b:
                if not s > 0.0:
                    return np.nan, np.nan
                L[a, a] = math.sqrt(s)
                logdet += 2.0 * math.log(L[a, a])
            else:
                L[a, b] = s / L[b, b]
    e = 0.0
    for a in range(d):
        s = r[a]
        for k in range(a):
            s -= L[a, k] * w[k]
        w[a] = s / L[a, a]
        e += w[a] * w[a]
    return e, logdet
