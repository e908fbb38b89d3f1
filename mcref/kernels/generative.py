"""Transforms from standard normal deviates to the unit-variance distributions D (docs/methods.md,
"Generative distributions").

All D of one Monte Carlo call are driven by the same normal deviates Z (common random
numbers): uniform, Laplace and empirical D map U = Φ(Z) through their quantile
function; t(ν) is the scale mixture Z·√((ν−2)/V), V ~ χ²_ν, with V from a second
stream; the exponential power (normal-power) distribution normp(p) takes its sign from Z and
its magnitude from the same second stream, V ~ χ²_{2/p} (:func:`normp_value`). The normal D
uses Z itself. :func:`mixing_df` says which D need the second stream and with what degrees
of freedom. The permutation D (the data's own Z shuffled across u) is no transform of Z: the
Monte Carlo kernel draws it from its own stream (:func:`.rng.permute_into`).
"""

from __future__ import annotations

import math

from numba import njit

from ._config import NJIT

NORMAL, STUDENT_T, UNIFORM, LAPLACE, EMPIRICAL, USER, NORMP, PERMUTATION = range(8)
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
    (normp, ``nu`` holding p), z (normal). ``emp``: the empirical D's table
    (:func:`mcref.generative.empirical_table`; its k sorted values at ``emp[4:4 + k]``)."""
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
    else:  # EMPIRICAL: inverse empirical CDF of the sorted standardized values, through their table
        k = int(emp[0])
        z0 = emp[1]
        inv_h = emp[2]
        n_grid = int(emp[3])
        grid = emp[4:6 + 2 * n_grid]
        vals = emp[6 + 2 * n_grid:6 + 2 * n_grid + k]
        thr = emp[6 + 2 * n_grid + k:]
        for i in range(n):
            out[i] = vals[empirical_index(z[i], k, z0, inv_h, n_grid, grid, thr)]


#: bound on |Φ̃ − Φ| of the cubic Hermite interpolation of :func:`empirical_index` (h⁴/384·max|Φ⁽⁴⁾|
#: = 3.6·10⁻¹³ on the grid h = 16/4096), with a margin for rounding
PHI_ERR = 1e-11


@njit(**NJIT, inline="always")
def empirical_index(z, k, z0, inv_h, n_grid, grid, thr):
    """j = ⌊Φ(z)·k⌋ ∈ [0, k) as the number of normal quantiles t_j = Φ⁻¹(j/k), 0 < j < k, that
    are ≤ z (``thr[j]`` = t_j, with sentinels t_0 = −∞, t_k = +∞).

    Φ̃(z): cubic Hermite interpolation of Φ and φ on a grid of [−8, 8] (``grid`` = pairs
    (Φ, h·φ) at z0 + c·h, 64 KB), |Φ̃ − Φ| ≤ h⁴/384·max|Φ⁽⁴⁾| < 4·10⁻¹³. When Φ̃·k is more
    than :data:`PHI_ERR`·k from an integer, ⌊Φ̃·k⌋ = ⌊Φ·k⌋ is certain and only the value is
    read (one random read, as erfc's index was, without the erfc: ~10 ns); otherwise (rare,
    and beyond the grid) the count is settled by comparing z with the t_j next to it. So
    the result is the count of the t_j ≤ z either way. The table is
    :func:`mcref.generative.empirical_table`."""
    x = min(max((z - z0) * inv_h, 0.0), n_grid - 1e-9)
    c = int(x)
    t = x - c
    t2 = t * t
    t3 = t2 * t
    p = ((2.0 * t3 - 3.0 * t2 + 1.0) * grid[2 * c] + (t3 - 2.0 * t2 + t) * grid[2 * c + 1]
         + (3.0 * t2 - 2.0 * t3) * grid[2 * c + 2] + (t3 - t2) * grid[2 * c + 3])
    y = p * k
    j = min(max(int(y), 0), k - 1)
    f = y - j
    margin = PHI_ERR * k
    if f > margin and f < 1.0 - margin:
        return j
    while thr[j] > z:
        j -= 1
    while thr[j + 1] <= z:
        j += 1
    return j
