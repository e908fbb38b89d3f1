"""Minimum Kolmogorov–Smirnov fits of scaled IG(ν, ν) and F(1, ν) families, and their
bootstrap (docs/methods.md, "Distribution fits").

The model for a positive sample x is x = s·Y with Y ~ IG(ν, ν) or F(1, ν); the fit
minimises the KS distance

    D(ν, s) = sup_x |F_n(x) − F_ν(x/s)|
            = max_i max( i/n − F_ν(x_(i)/s), F_ν(x_(i)/s) − (i−1)/n )

over θ = (ln ν, ln s) by Nelder–Mead, started from the best point of a grid over ν (the
scale of each grid point matches the sample median), as R's ``fitdistrplus::mge`` with
``gof = "KS"`` but robust to its local stops. ν is confined to [ν_lo, ν_hi].

:func:`ks_distance` is exact while evaluating the CDF at far fewer than n points: it
evaluates every ``block``-th order statistic first, then bounds each block between two
evaluated points a < c by max(c/n − F_a, F_c − (a+1)/n) (F is monotone) and bisects
only the blocks whose bound can exceed the running maximum.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_EXACT, NJIT_ORDERED, NJIT_ORDERED_PARALLEL
from .rng import bounded_draws
from .special import family_cdf, log_norm

_SLACK = 1e-12  # rounding slack on the block bounds


@njit(**NJIT_EXACT)
def ks_distance(xs, cum, family, nu, scale, block):
    """Exact sup distance between an ECDF and the CDF of s·Y_ν.

    ``xs``: the sample's distinct values, ascending; ``cum[j]``: the number of sample points
    ≤ ``xs[j]`` (so ``cum[-1]`` = n; plain data: 1, 2, …, n). At a distinct value x_j the
    ECDF jumps from cum[j−1]/n to cum[j]/n, and D = max_j max(cum[j]/n − F_j,
    F_j − cum[j−1]/n) (the formula of ``scipy.stats.kstest``).
    """
    m = xs.size
    inv_n = 1.0 / cum[m - 1]
    inv_s = 1.0 / scale
    ln = log_norm(family, nu)
    d = 0.0
    if block < 2 or m < 4 * block:
        for j in range(m):
            f = family_cdf(family, nu, xs[j] * inv_s, ln)
            below = cum[j - 1] if j > 0 else 0
            d = max(d, cum[j] * inv_n - f, f - below * inv_n)
        return d
    nb = (m - 1) // block  # evaluated points 0, block, ..., nb*block, then m − 1
    npts = nb + 2 if nb * block < m - 1 else nb + 1
    idx = np.empty(npts, dtype=np.int64)
    fv = np.empty(npts)
    for k in range(npts):
        j = k * block if k <= nb else m - 1
        idx[k] = j
        f = family_cdf(family, nu, xs[j] * inv_s, ln)
        fv[k] = f
        below = cum[j - 1] if j > 0 else 0
        d = max(d, cum[j] * inv_n - f, f - below * inv_n)
    # Refine the blocks whose bound can beat d by bisection (a stack of open blocks, the
    # block with the largest bound on top so that d grows early). For a < j < c:
    # cum[j]/n − F_j ≤ cum[c−1]/n − F_a and F_j − cum[j−1]/n ≤ F_c − cum[a]/n.
    cap = npts + 128
    st_a = np.empty(cap, dtype=np.int64)
    st_c = np.empty(cap, dtype=np.int64)
    st_fa = np.empty(cap)
    st_fc = np.empty(cap)
    top = 0
    best_k = 0
    best_ub = -1.0
    for k in range(npts - 1):
        ub = max(cum[idx[k + 1] - 1] * inv_n - fv[k], fv[k + 1] - cum[idx[k]] * inv_n)
        if ub > best_ub:
            best_ub, best_k = ub, k
    for k in range(npts - 1):
        if k != best_k:
            st_a[top], st_c[top], st_fa[top], st_fc[top] = idx[k], idx[k + 1], fv[k], fv[k + 1]
            top += 1
    st_a[top], st_c[top], st_fa[top], st_fc[top] = idx[best_k], idx[best_k + 1], fv[best_k], fv[best_k + 1]
    top += 1
    while top > 0:
        top -= 1
        a, c, fa, fc = st_a[top], st_c[top], st_fa[top], st_fc[top]
        if c - a < 2 or max(cum[c - 1] * inv_n - fa, fc - cum[a] * inv_n) + _SLACK <= d:
            continue
        if c - a <= 8 or top + 2 > cap:
            for j in range(a + 1, c):
                f = family_cdf(family, nu, xs[j] * inv_s, ln)
                d = max(d, cum[j] * inv_n - f, f - cum[j - 1] * inv_n)
            continue
        h = (a + c) // 2
        fh = family_cdf(family, nu, xs[h] * inv_s, ln)
        d = max(d, cum[h] * inv_n - fh, fh - cum[h - 1] * inv_n)
        st_a[top], st_c[top], st_fa[top], st_fc[top] = h, c, fh, fc
        top += 1
        st_a[top], st_c[top], st_fa[top], st_fc[top] = a, h, fa, fh
        top += 1
    return d


@njit(**NJIT_EXACT)
def _objective(xs, cum, family, th0, th1, lo, hi, block):
    """KS distance at θ = (ln ν, ln s), ln ν clipped to [lo, hi]."""
    return ks_distance(xs, cum, family, math.exp(min(max(th0, lo), hi)), math.exp(th1), block)


@njit(**NJIT_EXACT)
def nelder_mead_ks(xs, cum, family, th0, th1, step0, step1, lo, hi, block, max_eval, xtol, ftol):
    """Nelder–Mead (standard coefficients 1, 2, 1/2, 1/2) on the KS objective in 2-D.

    Returns (θ0, θ1, D, number of evaluations).
    """
    p = np.empty((3, 2))
    f = np.empty(3)
    p[0, 0], p[0, 1] = th0, th1
    p[1, 0], p[1, 1] = th0 + step0, th1
    p[2, 0], p[2, 1] = th0, th1 + step1
    for k in range(3):
        f[k] = _objective(xs, cum, family, p[k, 0], p[k, 1], lo, hi, block)
    n_eval = 3
    while n_eval < max_eval:
        # order: best 0, worst 2
        for i in range(3):
            for j in range(2 - i):
                if f[j + 1] < f[j]:
                    f[j], f[j + 1] = f[j + 1], f[j]
                    for c in range(2):
                        p[j, c], p[j + 1, c] = p[j + 1, c], p[j, c]
        size = max(abs(p[1, 0] - p[0, 0]), abs(p[2, 0] - p[0, 0]), abs(p[1, 1] - p[0, 1]), abs(p[2, 1] - p[0, 1]))
        if size <= xtol or (f[2] - f[0] <= ftol and size <= 100.0 * xtol):
            break
        c0 = 0.5 * (p[0, 0] + p[1, 0])
        c1 = 0.5 * (p[0, 1] + p[1, 1])
        r0, r1 = 2.0 * c0 - p[2, 0], 2.0 * c1 - p[2, 1]
        fr = _objective(xs, cum, family, r0, r1, lo, hi, block)
        n_eval += 1
        if fr < f[0]:
            e0, e1 = 3.0 * c0 - 2.0 * p[2, 0], 3.0 * c1 - 2.0 * p[2, 1]
            fe = _objective(xs, cum, family, e0, e1, lo, hi, block)
            n_eval += 1
            if fe < fr:
                p[2, 0], p[2, 1], f[2] = e0, e1, fe
            else:
                p[2, 0], p[2, 1], f[2] = r0, r1, fr
        elif fr < f[1]:
            p[2, 0], p[2, 1], f[2] = r0, r1, fr
        else:
            if fr < f[2]:  # outside contraction
                k0, k1 = 0.5 * (c0 + r0), 0.5 * (c1 + r1)
            else:  # inside contraction
                k0, k1 = 0.5 * (c0 + p[2, 0]), 0.5 * (c1 + p[2, 1])
            fk = _objective(xs, cum, family, k0, k1, lo, hi, block)
            n_eval += 1
            if fk < min(fr, f[2]):
                p[2, 0], p[2, 1], f[2] = k0, k1, fk
            else:  # shrink towards the best point
                for k in range(1, 3):
                    p[k, 0] = 0.5 * (p[0, 0] + p[k, 0])
                    p[k, 1] = 0.5 * (p[0, 1] + p[k, 1])
                    f[k] = _objective(xs, cum, family, p[k, 0], p[k, 1], lo, hi, block)
                n_eval += 2
    best = 0
    for k in range(1, 3):
        if f[k] < f[best]:
            best = k
    return min(max(p[best, 0], lo), hi), p[best, 1], f[best], n_eval


@njit(**NJIT_EXACT)
def ks_fit(xs, cum, family, log_nu_grid, log_med_grid, lo, hi, block, th0, th1, step, xtol, restart=True):
    """Minimum-KS fit of s·Y_ν to a sample given as distinct values ``xs`` and cumulative
    counts ``cum`` (see :func:`ks_distance`).

    With ``log_nu_grid`` non-empty the start is the best point of the grid (for each ln ν,
    ln s = ln median(x) − ``log_med_grid``, ln of the median of Y_ν); otherwise it is
    (``th0``, ``th1``) = (ln ν, ln s). Nelder–Mead (initial simplex sides ``step`` in ln ν
    and ``step``/2 in ln s) is then run, and restarted once from its result with a simplex
    of 10·``xtol`` unless ``restart`` is False. ``xtol``: the simplex size (in ln ν, ln s) at
    which each search stops. Returns (ν, s, D, evaluations).
    """
    m = xs.size
    n = cum[m - 1]
    n_eval = 0
    b0, b1 = th0, th1
    if log_nu_grid.size > 0:
        j = 0
        while 2 * cum[j] < n:
            j += 1
        lmed = math.log(xs[j])
        best_f = np.inf
        for k in range(log_nu_grid.size):
            t1 = lmed - log_med_grid[k]
            fk = _objective(xs, cum, family, log_nu_grid[k], t1, lo, hi, block)
            if fk < best_f:
                best_f, b0, b1 = fk, log_nu_grid[k], t1
        n_eval = log_nu_grid.size
    t0, t1, fv, ne = nelder_mead_ks(xs, cum, family, b0, b1, step, 0.5 * step, lo, hi, block, 400, xtol, 1e-10)
    n_eval += ne
    if restart:
        t0, t1, fv, ne = nelder_mead_ks(xs, cum, family, t0, t1, 10 * xtol, 5 * xtol, lo, hi, block, 200,
                                        xtol, 1e-12)
        n_eval += ne
    return math.exp(t0), math.exp(t1), fv, n_eval


@njit(**NJIT_EXACT)
def compress(x, order, counts, xs, cum):
    """Distinct values of the sample x (multiplicities ``counts``, ascending ``order``) into
    ``xs`` and their cumulative counts into ``cum``; returns their number."""
    m = 0
    total = 0
    for j in range(order.size):
        i = order[j]
        if counts[i] == 0:
            continue
        total += counts[i]
        if m > 0 and x[i] == xs[m - 1]:
            cum[m - 1] = total
        else:
            xs[m] = x[i]
            cum[m] = total
            m += 1
    return m


@njit(**NJIT_EXACT)
def boot_fit_replicate(xs2d, orders, families, zvals, state, theta, lo, hi, block, step, xtol, out):
    """One pair-bootstrap replicate of the KS fits and of the moments of Z.

    ``xs2d`` (k, n): the k positive variables (u², E², Z², unsorted, same row order);
    ``orders`` (k, n) their ascending orders; ``families`` (k,); ``zvals`` (n,) Z;
    ``state`` (4,) the replicate's own xoshiro state (advanced in place: the replicate's
    draws depend on its state only, not on the thread that runs it); ``theta`` (k, 2) the
    fit to the data, (ln ν, ln s), where the replicate's searches start; ``step``, ``xtol``
    as in :func:`ks_fit`. ``out`` (2k + 2,): ν and s per variable, then mean and sd of Z.
    """
    k_var, n = xs2d.shape
    no_grid = np.empty(0)
    counts = np.zeros(n, dtype=np.int64)
    bounded_draws(state, n, n, counts, True)
    xs = np.empty(n)
    cum = np.empty(n, dtype=np.int64)
    for v in range(k_var):
        mv = compress(xs2d[v], orders[v], counts, xs, cum)
        nu, s, _d, _ne = ks_fit(xs[:mv], cum[:mv], families[v], no_grid, no_grid, lo, hi, block,
                                theta[v, 0], theta[v, 1], step, xtol, False)
        out[2 * v] = nu
        out[2 * v + 1] = s
    mean = 0.0
    for i in range(n):
        mean += counts[i] * zvals[i]
    mean /= n
    ss = 0.0
    for i in range(n):
        ss += counts[i] * (zvals[i] - mean) ** 2
    out[2 * k_var] = mean
    out[2 * k_var + 1] = math.sqrt(ss / (n - 1))


#: values per block of :func:`t_loglik_sums` (partial sums added in block order: the same bits
#: whatever the number of threads); 256, so that M = 10⁵ values are 391 blocks, enough tasks for
#: 64 threads (issue 41; 2¹⁶ before: 2 blocks)
LL_BLOCK = 1 << 8


@njit(**NJIT_ORDERED)
def t_loglik_block(z, nu, mu, sigma, b, part):
    """The sums of the Student-t log-likelihood and its gradient (:func:`mcref._distfit.fit_t`)
    over block b of :data:`LL_BLOCK` values: with r = (z − μ)/σ, ``part[b]`` =
    ``(Σ ln(1 + r²/ν), Σ r²/(ν + r²), Σ r/(ν + r²))``, added in order (no reassociation: the
    same bits inside either caller, :func:`t_loglik_sums` or :func:`t_loglik_all`)."""
    n = z.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    for i in range(b * LL_BLOCK, min(n, (b + 1) * LL_BLOCK)):
        r = (z[i] - mu) / sigma
        r2 = r * r
        d = nu + r2
        s0 += math.log1p(r2 / nu)
        s1 += r2 / d
        s2 += r / d
    part[b, 0] = s0
    part[b, 1] = s1
    part[b, 2] = s2


@njit(**NJIT_ORDERED)
def t_loglik_sums(z, nu, mu, sigma, b0, b1, part):
    """:func:`t_loglik_block` for blocks b0 ≤ b < b1: a task of the fit on mcref's threads
    (:func:`mcref.parallel.over_tasks`), where numba's ``prange`` is not safe
    (:func:`mcref.parallel.prange_safe`); the caller adds the blocks in block order."""
    for b in range(b0, b1):
        t_loglik_block(z, nu, mu, sigma, b, part)


@njit(**NJIT_ORDERED_PARALLEL)
def t_loglik_all(z, nu, mu, sigma, part):
    """:func:`t_loglik_block` for every block (``part.shape[0]`` of them), on numba's threads: one
    parallel region per likelihood pass of the fit, which the threading layer starts in a few µs
    where a dispatch to mcref's threads costs about 70 µs on a 2-core VM (issue 41); the same bits
    as :func:`t_loglik_sums` (each block's sums in its own slot; tested)."""
    for b in prange(part.shape[0]):
        t_loglik_block(z, nu, mu, sigma, np.int64(b), part)  # int64, as the tasks' (one compile)
