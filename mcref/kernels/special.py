"""Regularized incomplete gamma and beta functions, and the CDFs built on them, as numba
kernels (docs/methods.md, "Distribution fits").

The distribution fits minimise a Kolmogorov–Smirnov distance inside a numba bootstrap loop,
so the CDFs must be callable from compiled code. scipy's own implementations can be
reached from numba only through ctypes pointers, which numba cannot cache on disk, so the
two classic algorithms are written here (and tested against :mod:`scipy.special` to
~1e-13 over the range the fits use):

* lower/upper regularized incomplete gamma P(a, x), Q(a, x): series for x < a + 1,
  Legendre's continued fraction (modified Lentz) otherwise;
* regularized incomplete beta I_x(a, b): the continued fraction of DLMF 8.17.22 (modified
  Lentz), on x or on 1 − x (with the complement passed exactly) whichever converges.

References: W. H. Press et al., *Numerical Recipes*, 3rd ed. (2007), §6.2 and §6.4;
DLMF §8.9 and §8.17 (https://dlmf.nist.gov/8); W. J. Lentz, *Appl. Opt.* 15 (1976) 668.
"""

from __future__ import annotations

import math

from numba import njit

from ._config import NJIT_EXACT

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 10_000

#: Distribution families of the fits (codes shared with :mod:`mcref.kernels.fit`).
FAMILY_IG = 0  # Y ~ IG(ν, ν): density ∝ y^(−ν−1) exp(−ν/y)
FAMILY_F1 = 1  # Y ~ F(1, ν)


@njit(**NJIT_EXACT, inline="always")
def _lentz_step(an, b, c, d):
    """One step of the modified Lentz algorithm for a continued fraction b₀ + a₁/(b₁ + a₂/(b₂ + …)):
    d ← 1/(b + a·d), c ← b + a/c (both kept away from 0); returns (c, d, c·d), the factor of
    the running value."""
    d = an * d + b
    if abs(d) < _TINY:
        d = _TINY
    c = b + an / c
    if abs(c) < _TINY:
        c = _TINY
    d = 1.0 / d
    return c, d, d * c


@njit(**NJIT_EXACT)
def _gamma_series(a, x, lg_a):
    """P(a, x) by its power series (x < a + 1)."""
    ap = a
    term = 1.0 / a
    s = term
    for _ in range(_MAX_ITER):
        ap += 1.0
        term *= x / ap
        s += term
        if abs(term) < abs(s) * _EPS:
            break
    return s * math.exp(-x + a * math.log(x) - lg_a)


@njit(**NJIT_EXACT)
def _gamma_cfrac(a, x, lg_a):
    """Q(a, x) by Legendre's continued fraction (x ≥ a + 1), modified Lentz."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        c, d, delta = _lentz_step(an, b, c, d)
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - lg_a) * h


@njit(**NJIT_EXACT)
def gammaincc(a, x, lg_a):
    """Upper regularized incomplete gamma Q(a, x) = Γ(a, x)/Γ(a), a > 0; ``lg_a`` = lnΓ(a)."""
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return 1.0 - _gamma_series(a, x, lg_a)
    return _gamma_cfrac(a, x, lg_a)


@njit(**NJIT_EXACT)
def _beta_cfrac(a, b, x):
    """Continued fraction of I_x(a, b) (DLMF 8.17.22), modified Lentz."""
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < _TINY:
        d = _TINY
    d = 1.0 / d
    h = d
    for m in range(1, _MAX_ITER):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        c, d, delta = _lentz_step(aa, 1.0, c, d)
        h *= delta
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        c, d, delta = _lentz_step(aa, 1.0, c, d)
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


@njit(**NJIT_EXACT)
def betainc(a, b, x, xc, lbeta):
    """Regularized incomplete beta I_x(a, b) with ``xc`` = 1 − x given exactly and
    ``lbeta`` = ln B(a, b) (so that callers looping over x compute it once)."""
    if x <= 0.0:
        return 0.0
    if xc <= 0.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log(xc) - lbeta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cfrac(a, b, x) / a
    return 1.0 - front * _beta_cfrac(b, a, xc) / b


@njit(**NJIT_EXACT)
def log_norm(family, nu):
    """The ν-only constant of a family's CDF: lnΓ(ν) (IG) or ln B(1/2, ν/2) (F(1, ν))."""
    if family == FAMILY_IG:
        return math.lgamma(nu)
    return math.lgamma(0.5) + math.lgamma(0.5 * nu) - math.lgamma(0.5 * nu + 0.5)


@njit(**NJIT_EXACT)
def family_cdf(family, nu, y, lnorm):
    """CDF at ``y`` of IG(ν, ν) (``family`` 0) or F(1, ν) (``family`` 1); ``lnorm`` from
    :func:`log_norm`.

    IG(ν, ν): P(Y ≤ y) = Q(ν, ν/y). F(1, ν): P(Y ≤ y) = I_{y/(y+ν)}(1/2, ν/2).
    """
    if y <= 0.0:
        return 0.0
    if family == FAMILY_IG:
        return gammaincc(nu, nu / y, lnorm)
    if math.isinf(y):
        return 1.0
    return betainc(0.5, 0.5 * nu, y / (y + nu), nu / (y + nu), lnorm)
