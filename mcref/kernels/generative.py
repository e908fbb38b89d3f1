"""Transforms from standard normal deviates to the unit-variance distributions D (docs/methods.md,
"Generative distributions").

All D of one Monte Carlo call are driven by the same normal deviates Z (common random
numbers): uniform, Laplace and empirical D map U = Φ(Z) through their quantile
function; t(ν) is the scale mixture Z·√((ν−2)/V), V ~ χ²_ν, with V from a second
stream; the exponential power (normal-power) distribution normp(p) takes its sign from Z and
its magnitude from the same second stream, V ~ χ²_{2/p} (:func:`normp_value`). The normal D
uses Z itself. :func:`mixing_df` says which D need the second stream and with what degrees
of freedom.
"""

from __future__ import annotations

import math

from numba import njit

from ._config import NJIT

NORMAL, STUDENT_T, UNIFORM, LAPLACE, EMPIRICAL, USER, NORMP = range(7)
_SQRT3 = math.sqrt(3.0)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(**NJIT)
def mixing_df(code, par):
    """Degrees of freedom k of the mixing variates V ~ χ²_k = 2·Γ(k/2) of the D ``code`` with
    parameter ``par``: ν for t(ν), 2/p for normp(p), 0 (no mixing stream) for the others."""
    if code == STUDENT_T:
        return par
    if code == NORMP:
        return 2.0 / par
    return 0.0


@njit(**NJIT)
def normp_scale(p):
    """√(Γ(1/p)/Γ(3/p)): the scale that gives normp(p) unit variance."""
    return math.sqrt(math.gamma(1.0 / p) / math.gamma(3.0 / p))


@njit(**NJIT)
def normp_value(z, v, p, scale):
    """ε = sign(z)·scale·(v/2)^{1/p}, v ~ χ²_{2/p}: then G = v/2 ~ Γ(1/p, 1) and abs(ε/scale)^p = G,
    the exponential power distribution of density ∝ exp(−abs(ε/scale)^p) (normalp's ``rnormp``
    draws the same way), of variance scale²·Γ(3/p)/Γ(1/p) = 1 with ``scale`` = :func:`normp_scale`."""
    t = scale * (0.5 * v) ** (1.0 / p)
    return t if z >= 0 else -t


@njit(**NJIT)
def transform(code, nu, z, v, emp, out):
    """ε = F_D⁻¹(Φ(z)) (uniform, Laplace, empirical), z·√((ν−2)/v) (t), :func:`normp_value`
    (normp, ``nu`` holding p), z (normal)."""
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
    elif code == NORMP:
        scale = normp_scale(nu)
        for i in range(n):
            out[i] = normp_value(z[i], v[i], nu, scale)
    else:  # EMPIRICAL: inverse empirical CDF of the sorted standardized values
        k = emp.shape[0]
        for i in range(n):
            p = 0.5 * math.erfc(-z[i] * _INV_SQRT2)
            j = int(p * k)
            if j >= k:
                j = k - 1
            out[i] = emp[j]
