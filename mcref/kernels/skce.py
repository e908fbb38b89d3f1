r"""Squared kernel calibration error (SKCE) of regression predictive distributions: the pair
function and its sums (docs/methods.md, "Kernel calibration error (SKCE)").

For predictions p and targets y, with the tensor-product kernel
k((p, y), (p̃, ỹ)) = k_P(p, p̃)·k_Y(y, ỹ), the SKCE's pair function is

.. math::

    h_{ij} = k_P(p_i, p_j)\,\bigl[k_Y(y_i, y_j) - E_{Z\sim p_i} k_Y(Z, y_j)
             - E_{\tilde Z\sim p_j} k_Y(y_i, \tilde Z) + E\,k_Y(Z, \tilde Z)\bigr],

k_P = exp(−ρ·W₂(p_i, p_j)), where every array here is already divided by the target
kernel's length ℓ_Y (so k_Y has length 1) and ρ = ℓ_Y/ℓ_P. The expectations in closed form:

* normal N(μ, σ²), Gaussian k_Y = exp(−d²/2): E k_Y(Z, y) = a·exp(−a²(μ − y)²/2),
  a = (1 + σ²)^−½; E k_Y(Z, Z̃) = g·exp(−g²(μ − μ̃)²/2), g = (1 + σ² + σ̃²)^−½;
  W₂² = Δμ² + Δσ²;
* normal, exponential k_Y = exp(−|d|): E e^{−|W|} for W ~ N(d, s²) (:func:`normal_exp_mean`);
* Laplace(μ, b), exponential k_Y: sums of Laplace laws (:func:`laplace_exp_mean`,
  :func:`laplace_exp_mean2`); W₂² = Δμ² + 2Δb²;
* samples (ensembles, m members per row, sorted): the expectations are averages over the
  members; W₂² = the mean squared difference of the order statistics.

Each pair function computes the whole h (``FULL``), the part free of y (``YFREE``: k_P·E k_Y(Z, Z̃),
the same for every redraw of the targets) or the rest (``YDEP``).

The sums over pairs run over fixed tiles of ``TILE`` rows, two tiles (one from each end of the
triangle) per parallel task so that the tasks cost the same; each task writes its own partial
sum and a serial loop adds them in task order (Neumaier), so a result does not depend on the
number of threads. No M × M array is formed.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types, uint64
from numba.extending import intrinsic

from ._config import NJIT_ORDERED, NJIT_ORDERED_PARALLEL
from .rng import bounded_one
from .variates import fill_normal, next_exponential

#: prediction families and target kernels (the codes of :mod:`mcref._skce`)
NORMAL_GAUSS, NORMAL_EXP, LAPLACE_EXP, SAMPLES_GAUSS, SAMPLES_EXP = 0, 1, 2, 3, 4
#: which part of the pair function: all of it, the part free of y, the part with y
FULL, YFREE, YDEP = 0, 1, 2
#: rows per tile of the pair sums
TILE = 64

_SQRT_PI = math.sqrt(math.pi)
_SQRT_HALF = math.sqrt(0.5)


# --------------------------------------------------------------------------- special functions


@intrinsic
def _f64_bits(typingctx, x):
    """The bits of a float64 as a uint64 (a vectorizable bitcast)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def _bits_f64(typingctx, x):
    """The float64 of a uint64's bits (a vectorizable bitcast)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.uint64), codegen


@njit(**NJIT_ORDERED, inline="always")
def fexp(x):
    """exp(x) for x ≤ 0 (≤ 2.3e-16 relative; exp(−708) for x < −708): Cody–Waite reduction
    x = k·ln 2 + r, |r| ≤ ln 2/2, Taylor polynomial of degree 13 (truncation 4e-18), 2^k from
    the bits of k + 2⁵² + 1023. Branch-free and call-free, so that loops over it vectorize
    (libm's exp is a call per value). Inlined into its callers, whose options must keep the
    order of the reduction's two subtractions (no ``reassoc``: :data:`NJIT_ORDERED`)."""
    x = max(x, -708.0)
    k = math.floor(x * 1.4426950408889634 + 0.5)
    r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _bits_f64(_f64_bits(k + 4503599627371519.0) << uint64(52))

@njit(**NJIT_ORDERED)
def erfcx(x):
    """The scaled complementary error function exp(x²)·erfc(x), for x ≥ 0.

    x < 12: x² is split as xh² + (2xh·xl + xl²) with xh = x rounded down to 2⁻²⁰ (xh² exact),
    so exp(x²) carries no error from rounding x²; beyond, the asymptotic series (14 terms,
    below 1e-20 relative at x = 12; libm's erfc loses digits near its underflow)."""
    if x < 12.0:
        xh = math.floor(x * 1048576.0) * (1.0 / 1048576.0)
        xl = x - xh
        return math.exp(xh * xh) * math.exp((2.0 * xh + xl) * xl) * math.erfc(x)
    r = 1.0 / (2.0 * x * x)
    s, term = 1.0, 1.0
    for n in range(1, 15):
        term *= -(2.0 * n - 1.0) * r
        s += term
    return s / (x * _SQRT_PI)


@njit(**NJIT_ORDERED)
def normal_exp_mean(d, s):
    """E exp(−|W|) for W ~ N(d, s²), s > 0:
    e^{s²/2}[e^{−d}Φ(d/s − s) + e^{d}Φ(−d/s − s)], each term written without overflow
    (through :func:`erfcx` where Φ is small)."""
    d = abs(d)
    q = d / s
    # e^{s²/2 + d}Φ(−q − s) = ½ e^{−q²/2} erfcx((q + s)/√2)
    out = 0.5 * fexp(-0.5 * q * q) * erfcx((q + s) * _SQRT_HALF)
    if q >= s:  # e^{s²/2 − d}Φ(q − s), Φ ≥ ½ and the exponent ≤ −s²/2
        out += fexp(0.5 * s * s - d) * 0.5 * math.erfc(-(q - s) * _SQRT_HALF)
    else:
        out += 0.5 * fexp(-0.5 * q * q) * erfcx((s - q) * _SQRT_HALF)
    return out


@njit(**NJIT_ORDERED)
def _rho(t):
    """(1 − e^{−t})/t for t ≥ 0 (1 at t = 0)."""
    if t < 1e-8:
        return 1.0 - 0.5 * t
    return -math.expm1(-t) / t


@njit(**NJIT_ORDERED)
def _exp_dd1(x0, x1, z):
    """The divided difference of x ↦ e^{−xz} at x0, x1 (its derivative where they meet)."""
    return -z * fexp(-min(x0, x1) * z) * _rho(abs(x1 - x0) * z)


@njit(**NJIT_ORDERED)
def _exp_dd2(x0, x1, x2, z):
    """The second divided difference of x ↦ e^{−xz} at x0, x1, x2 (> 0).

    Sorted b0 ≤ b1 ≤ b2, D = b2 − b0: when zD < 1, e^{−b0 z}·Σ_{k≥2} (−z)^k/k!·h_{k−2}(δ1, δ2)
    (h the complete homogeneous polynomials of δ = b − b0); else the recursion
    (E[b1,b2] − E[b0,b1])/D, which then loses no more than a factor of a few."""
    b0, b1, b2 = x0, x1, x2
    if b0 > b1:
        b0, b1 = b1, b0
    if b1 > b2:
        b1, b2 = b2, b1
    if b0 > b1:
        b0, b1 = b1, b0
    dd = b2 - b0
    if z * dd >= 1.0:
        return (_exp_dd1(b1, b2, z) - _exp_dd1(b0, b1, z)) / dd
    d1, d2 = b1 - b0, b2 - b0
    h, p2 = 1.0, 1.0  # h_0, δ2^0
    coef = 0.5 * z * z  # (−z)^2/2!
    s = coef
    for k in range(3, 40):
        p2 *= d2
        h = d1 * h + p2
        coef *= -z / k
        term = coef * h
        s += term
        if abs(term) <= 1e-17 * abs(s):
            break
    return fexp(-b0 * z) * s


@njit(**NJIT_ORDERED)
def laplace_exp_mean(a, z):
    """E exp(−|X − z|) for X ~ Laplace(0, 1/a), z ≥ 0:
    a/(1 + a)·[e^{−z} + z·e^{−min(1, a)z}·(1 − e^{−|1 − a|z})/(|1 − a|z)]
    (= (b e^{−z/b} − e^{−z})/(b² − 1), b = 1/a, with no cancellation near b = 1)."""
    return a / (1.0 + a) * (fexp(-z) - _exp_dd1(1.0, a, z))


@njit(**NJIT_ORDERED)
def laplace_exp_mean2(a1, a2, z):
    """E exp(−|X − X̃ − z|) for independent X ~ Laplace(0, 1/a1), X̃ ~ Laplace(0, 1/a2), z ≥ 0.

    With V ~ Laplace(0, 1), this is 2·f(z), f the density of V + X − X̃: by partial fractions
    of its characteristic function Π_k a_k²/(a_k² + t²) (a_0 = 1), 2f(z) = a1²a2²·F[a_0, a1, a2],
    the second divided difference of F(x) = 2e^{−xz}/Π_k(a_k + x). By Leibniz' rule
    F[x0,x1,x2] = 2(E[x0]P[x0,x1,x2] + E[x0,x1]P[x1,x2] + E[x0,x1,x2]P[x2]), E(x) = e^{−xz},
    P = Π_k 1/(a_k + x) with c_k[x_s..x_t] = (−1)^{t−s}/Π_r(a_k + x_r): three positive terms,
    so coincident or near scales (b = b̃, b = 1) lose no digits."""
    x0, x1, x2 = 1.0, a1, a2
    q00, q01, q02 = 0.5, 1.0 / (1.0 + a1), 1.0 / (1.0 + a2)
    q11, q12, q22 = 0.5 / a1, 1.0 / (a1 + a2), 0.5 / a2
    # q_kr = 1/(a_k + x_r) (a symmetric table): P[x2] and −P[x1,x2] (three splits of [x1, x2])
    p2 = q02 * q12 * q22
    p12 = (q01 * q02) * q12 * q22 + q01 * (q11 * q12) * q22 + q01 * q11 * (q12 * q22)
    # P[x0,x1,x2] = Σ_{0≤r≤s≤2} c0[x0..xr]·c1[xr..xs]·c2[xs..x2], every term positive
    c0 = (q00, q00 * q01, q00 * q01 * q02)  # |c0[x0..xr]|, r = 0, 1, 2
    p012 = 0.0
    # c1[xr..xs], c2[xs..x2] magnitudes
    for r in range(3):
        for s in range(r, 3):
            c1 = 1.0
            for t in range(r, s + 1):
                c1 *= (q01, q11, q12)[t]
            c2 = 1.0
            for t in range(s, 3):
                c2 *= (q02, q12, q22)[t]
            p012 += c0[r] * c1 * c2
    e0 = fexp(-x0 * z)
    e01 = -_exp_dd1(x0, x1, z)  # ≥ 0
    e012 = _exp_dd2(x0, x1, x2, z)
    return 2.0 * a1 * a1 * a2 * a2 * (e0 * p012 + e01 * p12 + e012 * p2)


# --------------------------------------------------------------------------- pair functions


@njit(**NJIT_ORDERED, inline="always")
def _normal_gauss(mode, yi, mi, si, ai, yj, mj, sj, aj, rho):
    """h for N(μ, σ²) and the Gaussian target kernel; k_P enters each exponent (4 exp)."""
    dm = mi - mj
    ds = si - sj
    base = -rho * math.sqrt(dm * dm + ds * ds)
    h = 0.0
    if mode != YFREE:
        dy = yi - yj
        e1 = ai * (mi - yj)
        e2 = aj * (yi - mj)
        h = fexp(base - 0.5 * dy * dy) - ai * fexp(base - 0.5 * e1 * e1) - aj * fexp(base - 0.5 * e2 * e2)
    if mode != YDEP:
        g2 = 1.0 / (1.0 + si * si + sj * sj)
        h += math.sqrt(g2) * fexp(base - 0.5 * g2 * dm * dm)
    return h


@njit(**NJIT_ORDERED)
def _normal_exp(mode, yi, mi, si, yj, mj, sj, rho):
    """h for N(μ, σ²) and the exponential target kernel."""
    dm = mi - mj
    ds = si - sj
    kp = fexp(-rho * math.sqrt(dm * dm + ds * ds))
    h = 0.0
    if mode != YFREE:
        h = fexp(-abs(yi - yj)) - normal_exp_mean(mi - yj, si) - normal_exp_mean(yi - mj, sj)
    if mode != YDEP:
        h += normal_exp_mean(dm, math.sqrt(si * si + sj * sj))
    return kp * h


@njit(**NJIT_ORDERED)
def _laplace_exp(mode, yi, mi, bi, ai, yj, mj, bj, aj, rho):
    """h for Laplace(μ, b) and the exponential target kernel; W₂² = Δμ² + 2Δb²."""
    dm = mi - mj
    db = bi - bj
    kp = fexp(-rho * math.sqrt(dm * dm + 2.0 * db * db))
    h = 0.0
    if mode != YFREE:
        h = fexp(-abs(yi - yj)) - laplace_exp_mean(ai, abs(mi - yj)) - laplace_exp_mean(aj, abs(yi - mj))
    if mode != YDEP:
        h += laplace_exp_mean2(ai, aj, abs(dm))
    return kp * h


@njit(**NJIT_ORDERED)
def exp_cross_sum(x, z):
    """Σ_k Σ_l exp(−|x_k − z_l|) for sorted x and z, in O(len(x) + len(z)) exps: two merged
    sweeps carrying Σ exp(−(position − x_k)) over the members passed, every factor ≤ 1."""
    m, n = x.shape[0], z.shape[0]
    total = 0.0
    k, acc, pos = 0, 0.0, 0.0  # pairs with x_k ≤ z_l, swept upwards
    for l in range(n):
        while k < m and x[k] <= z[l]:
            acc = acc * fexp(pos - x[k]) + 1.0 if acc > 0.0 else 1.0
            pos = x[k]
            k += 1
        if acc > 0.0:
            acc *= fexp(pos - z[l])
            pos = z[l]
            total += acc
    k, acc, pos = m - 1, 0.0, 0.0  # pairs with x_k > z_l, swept downwards
    for l in range(n - 1, -1, -1):
        while k >= 0 and x[k] > z[l]:
            acc = acc * fexp(x[k] - pos) + 1.0 if acc > 0.0 else 1.0
            pos = x[k]
            k -= 1
        if acc > 0.0:
            acc *= fexp(z[l] - pos)
            pos = z[l]
            total += acc
    return total


@njit(**NJIT_ORDERED)
def _samples(mode, gauss, yi, yj, xi, xj, rho):
    """h for samples (sorted rows ``xi``, ``xj`` of m members): the expectations as averages
    over the members, W₂² = mean (x_i(k) − x_j(k))²."""
    m = xi.shape[0]
    w2 = 0.0
    for k in range(m):
        d = xi[k] - xj[k]
        w2 += d * d
    kp = fexp(-rho * math.sqrt(w2 / m))
    h = 0.0
    if mode != YFREE:
        s1, s2 = 0.0, 0.0
        for k in range(m):
            d1 = xi[k] - yj
            d2 = yi - xj[k]
            if gauss:
                s1 += fexp(-0.5 * d1 * d1)
                s2 += fexp(-0.5 * d2 * d2)
            else:
                s1 += fexp(-abs(d1))
                s2 += fexp(-abs(d2))
        dy = yi - yj
        h = (fexp(-0.5 * dy * dy) if gauss else fexp(-abs(dy))) - (s1 + s2) / m
    if mode != YDEP:
        if gauss:
            s = 0.0
            for k in range(m):
                for l in range(m):
                    d = xi[k] - xj[l]
                    s += fexp(-0.5 * d * d)
        else:
            s = exp_cross_sum(xi, xj)
        h += s / (m * m)
    return kp * h


@njit(**NJIT_ORDERED)
def pair(family, mode, i, j, yi, yj, P, S, rho):
    """h((p_i, y_i), (p_j, y_j)) (or its ``mode`` part) for the rows i, j of the predictions
    ``P`` (3 × n: μ; σ or b; 1/√(1 + σ²) or 1/b) or the sorted samples ``S`` (n × m)."""
    if family == NORMAL_GAUSS:
        return _normal_gauss(mode, yi, P[0, i], P[1, i], P[2, i], yj, P[0, j], P[1, j], P[2, j], rho)
    if family == NORMAL_EXP:
        return _normal_exp(mode, yi, P[0, i], P[1, i], yj, P[0, j], P[1, j], rho)
    if family == LAPLACE_EXP:
        return _laplace_exp(mode, yi, P[0, i], P[1, i], P[2, i], yj, P[0, j], P[1, j], P[2, j], rho)
    return _samples(mode, family == SAMPLES_GAUSS, yi, yj, S[i], S[j], rho)


# --------------------------------------------------------------------------- sums over pairs

#: the normal/Gaussian rows are computed in chunks of this many pairs into a buffer (a loop that
#: vectorizes), then added in order
CHUNK = 256


@njit(**NJIT_ORDERED, inline="always")
def _neumaier(s, c, x):
    """One step of Neumaier's compensated sum: (new sum, new compensation)."""
    t = s + x
    if abs(s) >= abs(x):
        c += (s - t) + x
    else:
        c += (x - t) + s
    return t, c


@njit(**NJIT_ORDERED)
def fill_row(family, mode, i, c0, c1, y, P, S, rho, buf):
    """buf[j − c0] = h_ij for c0 ≤ j < c1 (at most ``CHUNK``); for normal predictions and the
    Gaussian kernel a branch-free loop that vectorizes."""
    yi = y[i]
    if family == NORMAL_GAUSS:
        mi, si, ai = P[0, i], P[1, i], P[2, i]
        mu, sg, a = P[0], P[1], P[2]
        if mode == FULL:
            for j in range(c0, c1):
                buf[j - c0] = _normal_gauss(FULL, yi, mi, si, ai, y[j], mu[j], sg[j], a[j], rho)
        elif mode == YDEP:
            for j in range(c0, c1):
                buf[j - c0] = _normal_gauss(YDEP, yi, mi, si, ai, y[j], mu[j], sg[j], a[j], rho)
        else:
            for j in range(c0, c1):
                buf[j - c0] = _normal_gauss(YFREE, yi, mi, si, ai, y[j], mu[j], sg[j], a[j], rho)
    else:
        for j in range(c0, c1):
            buf[j - c0] = pair(family, mode, i, j, yi, y[j], P, S, rho)


@njit(**NJIT_ORDERED)
def row_sum(family, mode, i, j0, j1, y, P, S, rho, buf):
    """Σ_{j0 ≤ j < j1} h_ij, ``CHUNK`` pairs at a time (:func:`fill_row`), added in order
    (``buf``: scratch of ``CHUNK`` values)."""
    total = 0.0
    for c0 in range(j0, j1, CHUNK):
        c1 = min(j1, c0 + CHUNK)
        fill_row(family, mode, i, c0, c1, y, P, S, rho, buf)
        s = 0.0
        for k in range(c1 - c0):
            s += buf[k]
        total += s
    return total


@njit(**NJIT_ORDERED_PARALLEL)
def pair_sum(family, mode, y, P, S, rho):
    """Σ_{i<j} h_ij over all pairs: tiles of ``TILE`` rows, tile t and tile n_tiles − 1 − t in
    one task, a compensated partial sum per task, added in task order; no M × M array."""
    n = y.shape[0]
    n_tiles = (n + TILE - 1) // TILE
    n_tasks = (n_tiles + 1) // 2
    part = np.zeros(n_tasks)
    comp = np.zeros(n_tasks)
    for t in prange(n_tasks):
        buf = np.empty(CHUNK)
        s, c = 0.0, 0.0
        for which in range(2):
            tile = t if which == 0 else n_tiles - 1 - t
            if which == 1 and tile == t:
                break
            for i in range(tile * TILE, min(n, tile * TILE + TILE)):
                s, c = _neumaier(s, c, row_sum(family, mode, i, i + 1, n, y, P, S, rho, buf))
        part[t] = s
        comp[t] = c
    s, c = 0.0, 0.0
    for t in range(n_tasks):
        s, c = _neumaier(s, c, part[t])
        s, c = _neumaier(s, c, comp[t])
    return s + c


@njit(**NJIT_ORDERED_PARALLEL)
def diag_sum(family, mode, y, P, S, rho):
    """Σ_i h_ii (the diagonal of the biased estimator), in fixed chunks of rows."""
    n = y.shape[0]
    n_chunks = (n + 1023) // 1024
    part = np.zeros(n_chunks)
    for t in prange(n_chunks):
        s = 0.0
        for i in range(t * 1024, min(n, (t + 1) * 1024)):
            s += pair(family, mode, i, i, y[i], y[i], P, S, rho)
        part[t] = s
    s, c = 0.0, 0.0
    for t in range(n_chunks):
        s, c = _neumaier(s, c, part[t])
    return s + c


@njit(**NJIT_ORDERED_PARALLEL)
def block_sums(family, mode, y, P, S, rho, block_size):
    """Σ_{i<j in block k} h_ij for the n // B blocks of B consecutive rows (the rest dropped),
    in fixed chunks of blocks."""
    n_blocks = y.shape[0] // block_size
    per = max(1, 4096 // block_size)
    n_chunks = (n_blocks + per - 1) // per
    out = np.empty(n_blocks)
    for t in prange(n_chunks):
        buf = np.empty(CHUNK)
        for k in range(t * per, min(n_blocks, (t + 1) * per)):
            lo = k * block_size
            s = 0.0
            for i in range(lo, lo + block_size - 1):
                s += row_sum(family, mode, i, i + 1, lo + block_size, y, P, S, rho, buf)
            out[k] = s
    return out


# --------------------------------------------------------------------------- redrawn targets


@njit(**NJIT_ORDERED)
def draw_targets(family, P, S, state, out):
    """Targets drawn from the predictions (one stream ``state`` per redraw): μ + σ·N(0, 1),
    μ + b·(Exp − Exp) for Laplace, a uniformly chosen member for samples."""
    if family == NORMAL_GAUSS or family == NORMAL_EXP:
        fill_normal(state, out)
        for i in range(out.shape[0]):
            out[i] = P[0, i] + P[1, i] * out[i]
    elif family == LAPLACE_EXP:
        for i in range(out.shape[0]):
            e = next_exponential(state) - next_exponential(state)
            out[i] = P[0, i] + P[1, i] * e
    else:
        m = S.shape[1]
        for i in range(out.shape[0]):
            out[i] = S[i, bounded_one(state, m)]


# --------------------------------------------------------------------------- the consistency test

#: the statistics of :func:`serial_statistic`
UNBIASED, BIASED, BLOCK = 0, 1, 2


@njit(**NJIT_ORDERED)
def serial_statistic(code, kind, mode, y, P, S, rho, block_size, buf):
    """The un-normalized sum of an estimator (unbiased: Σ_{i<j}; biased: 2Σ_{i<j} + Σ_i h_ii;
    block: Σ over blocks of Σ_{i<j in block}), in one thread, in a fixed order."""
    n = y.shape[0]
    s, c = 0.0, 0.0
    if kind == BLOCK:
        for k in range(n // block_size):
            lo = k * block_size
            for i in range(lo, lo + block_size - 1):
                s, c = _neumaier(s, c, row_sum(code, mode, i, i + 1, lo + block_size, y, P, S, rho, buf))
        return s + c
    for i in range(n - 1):
        s, c = _neumaier(s, c, row_sum(code, mode, i, i + 1, n, y, P, S, rho, buf))
    if kind == UNBIASED:
        return s + c
    d = 0.0
    for i in range(n):
        d += pair(code, mode, i, i, y[i], y[i], P, S, rho)
    return 2.0 * (s + c) + d


@njit(**NJIT_ORDERED_PARALLEL)
def redrawn_statistics(code, kind, y, P, S, rho, block_size, states, observed):
    """The y-dependent part (``YDEP``) of :func:`serial_statistic` on the data (entry 0, NaN
    unless ``observed``) and on targets redrawn from the predictions with each stream of
    ``states`` (entries 1…): in parallel over the repeats, each in one thread (for small sets,
    where a parallel pair sum per repeat would cost more to start than to run)."""
    n_mc = states.shape[0]
    out = np.empty(n_mc + 1)
    out[0] = np.nan
    for k in prange(n_mc + 1):
        if k == 0 and not observed:
            continue
        buf = np.empty(CHUNK)
        ystar = np.empty(y.shape[0])
        if k == 0:
            ystar[:] = y
        else:
            state = states[k - 1].copy()
            draw_targets(code, P, S, state, ystar)
        out[k] = serial_statistic(code, kind, YDEP, ystar, P, S, rho, block_size, buf)
    return out


# --------------------------------------------------------------------------- the wild bootstrap


@njit(**NJIT_ORDERED)
def _wild_tile(family, y, P, S, rho, W, tile, H, v, acc):
    """One tile of :func:`wild_sums`: adds Σ_r-wise W_ri·Σ_j W_rj·h_ij over its rows i into
    ``acc`` (R) and returns Σ h_ij; ``H`` (TILE × CHUNK) and ``v`` (TILE × R) are scratch."""
    n = y.shape[0]
    R = W.shape[0]
    lo = tile * TILE
    hi = min(n, lo + TILE)
    s_obs = 0.0
    for ii in range(TILE):
        for r in range(R):
            v[ii, r] = 0.0
    for c0 in range(lo + 1, n, CHUNK):
        c1 = min(n, c0 + CHUNK)
        for ii in range(hi - lo):
            i = lo + ii
            start = min(c1, max(c0, i + 1))
            for k in range(start - c0):
                H[ii, k] = 0.0
            if start < c1:
                fill_row(family, FULL, i, start, c1, y, P, S, rho, H[ii, start - c0:])
                for k in range(start - c0, c1 - c0):
                    s_obs += H[ii, k]
        for r in range(R):
            for ii in range(hi - lo):
                d = 0.0
                for k in range(c1 - c0):
                    d += H[ii, k] * W[r, c0 + k]
                v[ii, r] += d
    for r in range(R):
        a = 0.0
        for ii in range(hi - lo):
            a += W[r, lo + ii] * v[ii, r]
        acc[r] += a
    return s_obs


@njit(**NJIT_ORDERED_PARALLEL)
def wild_sums(family, y, P, S, rho, W):
    """Σ_{i<j} h_ij and, for each row r of the multipliers ``W`` (R × n, ±1),
    Σ_{i<j} W_ri·W_rj·h_ij, in one pass over the pairs (each h_ij computed once): the same
    folded tiles as :func:`pair_sum`; a tile's rows meet ``CHUNK`` columns at a time, so each
    row of W is read once per tile and chunk; per-task partial sums added in task order."""
    n = y.shape[0]
    R = W.shape[0]
    n_tiles = (n + TILE - 1) // TILE
    n_tasks = (n_tiles + 1) // 2
    acc = np.zeros((n_tasks, R))
    tot = np.zeros(n_tasks)
    for t in prange(n_tasks):
        H = np.zeros((TILE, CHUNK))
        v = np.empty((TILE, R))
        s_obs = _wild_tile(family, y, P, S, rho, W, t, H, v, acc[t])
        if n_tiles - 1 - t != t:
            s_obs += _wild_tile(family, y, P, S, rho, W, n_tiles - 1 - t, H, v, acc[t])
        tot[t] = s_obs
    out = np.zeros(R + 1)
    for t in range(n_tasks):
        out[0] += tot[t]
        for r in range(R):
            out[r + 1] += acc[t, r]
    return out


# --------------------------------------------------------------------------- the calibration mean embedding


@njit(**NJIT_ORDERED)
def _w2(family, i, j, P, S):
    """W₂(p_i, p_j): Δμ² + Δσ² (normal), Δμ² + 2Δb² (Laplace), the mean squared difference of the
    sorted members (samples)."""
    if family == SAMPLES_GAUSS or family == SAMPLES_EXP:
        m = S.shape[1]
        w = 0.0
        for k in range(m):
            d = S[i, k] - S[j, k]
            w += d * d
        return math.sqrt(w / m)
    dm = P[0, i] - P[0, j]
    ds = P[1, i] - P[1, j]
    return math.sqrt(dm * dm + (2.0 if family == LAPLACE_EXP else 1.0) * ds * ds)


@njit(**NJIT_ORDERED)
def witness(family, i, yi, j, t, P, S, rho):
    """The calibration mean embedding's term of row i at the test location (p_j, t):
    k_P(p_i, p_j)·[k_Y(y_i, t) − E_{Z∼p_i} k_Y(Z, t)] (closed forms as in the pair functions)."""
    kp = fexp(-rho * _w2(family, i, j, P, S))
    d = yi - t
    if family == NORMAL_GAUSS:
        e = P[2, i] * (P[0, i] - t)
        return kp * (fexp(-0.5 * d * d) - P[2, i] * fexp(-0.5 * e * e))
    if family == NORMAL_EXP:
        return kp * (fexp(-abs(d)) - normal_exp_mean(P[0, i] - t, P[1, i]))
    if family == LAPLACE_EXP:
        return kp * (fexp(-abs(d)) - laplace_exp_mean(P[2, i], abs(P[0, i] - t)))
    m = S.shape[1]
    s = 0.0
    for k in range(m):
        x = S[i, k] - t
        s += fexp(-0.5 * x * x) if family == SAMPLES_GAUSS else fexp(-abs(x))
    kt = fexp(-0.5 * d * d) if family == SAMPLES_GAUSS else fexp(-abs(d))
    return kp * (kt - s / m)


@njit(**NJIT_ORDERED_PARALLEL)
def cme_deviations(family, y, P, S, rho, loc, t, out):
    """out[i, l] = :func:`witness` of row i at the test location (p_loc[l], t[l]): the n × J
    matrix of the UCME and of its χ² test (each entry computed once, rows in parallel)."""
    n = y.shape[0]
    for i in prange(n):
        for l in range(loc.shape[0]):
            out[i, l] = witness(family, i, y[i], loc[l], t[l], P, S, rho)
