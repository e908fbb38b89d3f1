"""Transforms from standard normal deviates to the unit-variance distributions D (docs/methods.md,
"Generative distributions").

All D of one Monte Carlo call are driven by the same normal deviates Z (common random
numbers): uniform, Laplace and empirical D map U = Φ(Z) through their quantile
function; t(ν) is the scale mixture Z·√((ν−2)/V), V ~ χ²_ν, with V from a second
stream. The normal D uses Z itself.
"""

from __future__ import annotations

import math

from numba import njit

from ._config import NJIT

NORMAL, STUDENT_T, UNIFORM, LAPLACE, EMPIRICAL, USER = range(6)
_SQRT3 = math.sqrt(3.0)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(**NJIT)
def transform(code, nu, z, v, emp, out):
    """ε = F_D⁻¹(Φ(z)) (uniform, Laplace, empirical), z·√((ν−2)/v) (t), z (normal)."""
    n = z.shape[0]
    if code == NORMAL or code == USER:
        for i in range(n):
            out[i] = z[i]
    elif code == STUDENT_T:
        c = nu - 2.0
        for i in range(n):
            out[i] = z[i] * math.sqrt(c / v[i])
    elif code == UNIFORM:
        # 2Φ(z) − 1 = erf(z/√2); ε = √3 (2U − 1)
        for i in range(n):
            out[i] = _SQRT3 * math.erf(z[i] * _INV_SQRT2)
    elif code == LAPLACE:
        # 1 − 2|U − ½| = 2Φ(−|z|) = erfc(|z|/√2); ε = sign(z)·(−ln(that))/√2 (scale 1/√2)
        for i in range(n):
            t = -math.log(math.erfc(abs(z[i]) * _INV_SQRT2)) * _INV_SQRT2
            out[i] = t if z[i] >= 0 else -t
    else:  # EMPIRICAL: inverse empirical CDF of the sorted standardized values
        k = emp.shape[0]
        for i in range(n):
            p = 0.5 * math.erfc(-z[i] * _INV_SQRT2)
            j = int(p * k)
            if j >= k:
                j = k - 1
            out[i] = emp[j]
