"""The leave-one-out values (the jackknife) of the mean-type and the binned statistics, each in
O(1) or O(N) per left-out point from sums over all points (docs/methods.md, "Bootstrap"; the
drivers in :mod:`mcref.resampling._jackknife`). Every kernel is a task over a range of blocks, bins or points,
whose sums are over fixed blocks and added in a fixed order: the same bits for any thread count.
CC's pass is in :mod:`.jackknife_cc`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT, NJIT_EXACT, NJIT_ORDERED
from .rng import COUNT
from .stats import N_SUMS, NEED_ALL, finish_binned, finish_mean, mean_acc, pack_sums

__all__ = ["jack_mean_parts", "jack_bin_sums", "jack_kernel"]

#: element operations (≈ ns) per point of a mean-type jackknife, its tasks' size: ZMS's kernel takes 4.4–6 ns a
#: point, RCE's 14 (2-core VM, M = 10⁶). At 25 its tasks were 17 µs, short enough that two threads passing the
#: GIL between them made ZMS's pass slower on 2 threads than on 1 (6.2 against 5.0 ms); at 5, 3.9 against 6.2 ms
JACK_MEAN_WORK = 5.0


@njit(**NJIT)
def jack_mean_parts(c0, c1, block, z, zshift, z2, E2, u2, lnu2, raw):
    """``raw[c]`` = the raw sums of :func:`mean_acc` (N_RAW: n, Σz, Σ(z − c), Σ(z − c)², Σz², ΣE², Σu²,
    Σ ln u²; c = ``zshift``) over the points ``c·block … (c + 1)·block − 1``, blocks ``c0 … c1 − 1``: a
    task of the mean-type jackknives' totals, which the caller adds in block order (the same bits for
    any thread count; :func:`jack_kernel`)."""
    m = z.shape[0]
    ones = np.ones(min(block, m), dtype=COUNT)
    for c in range(c0, c1):
        a = c * block
        b = min(m, a + block)
        r = raw[c]
        r[:] = 0.0
        mean_acc(ones[:b - a], np.int64(0), b - a, b - a, np.int64(NEED_ALL), z[a:b], zshift, z2[a:b], E2[a:b],
                 u2[a:b], lnu2[a:b], r)


@njit(**NJIT_EXACT)
def jack_bin_sums(c0, c1, starts_m1, u2, E2, z2, inner):
    """``inner[b]`` = (Σu², ΣE², Σz²) over the original positions ``starts_m1[b] + 1 … starts_m1[b + 1] − 1``
    (the points strictly between two of the M − 1 points' bin starts), b = ``c0 … c1 − 1``: the sums
    of :func:`jack_kernel`, each over its own points in order (exact options: no reassociation, so
    the same bits for any split and from a fresh compilation or numba's cache alike)."""
    for b in range(c0, c1):
        su = 0.0
        se = 0.0
        sz = 0.0
        for i in range(starts_m1[b] + 1, starts_m1[b + 1]):
            su += u2[i]
            se += E2[i]
            sz += z2[i]
        inner[b, 0] = su
        inner[b, 1] = se
        inner[b, 2] = sz


@njit(**NJIT_ORDERED)
def jack_kernel(mcodes, bcodes, z, zshift, z2, E2, u2, lnu2, raw, starts_m1, inner, p0, p1, out):
    """Leave-one-out values ``out[k, p]``, p0 ≤ p < p1, of the mean-type statistics ``mcodes[k]`` (rows
    0 … K − 1) in O(1) each, then of the binned ones ``bcodes[k]`` (rows K …) in O(N) each: a task of
    the jackknife (:func:`mcref.parallel.over_tasks`); either list may be empty.

    Mean-type: from the raw sums ``raw`` over all points (:func:`jack_mean_parts`, added) less point
    p's terms, Σ(z − z̄)² over the others as Σ(z − c)² − (Σ(z − c))²/(M − 1) from the shifted sums.

    Binned: removing sorted point p keeps the stable order of the others; the M − 1 points are
    re-binned at ``starts_m1`` (equal-count starts for M − 1) and each bin's sums are built once, for
    every statistic, from ``inner`` (the sums strictly between two starts, :func:`jack_bin_sums`)
    and the points at the starts: reduced positions [a, e) are original positions
    [a + (a ≥ p), e + (e > p)) less p when p falls inside, that is [a, e) (p ≥ e), [a + 1, e + 1)
    (p ≤ a) or [a, e + 1) less p (a < p < e). No sums of prefixes: no M-sized arrays, and no
    cancellation between sums of ~M terms. Compiled without reassociation (:data:`NJIT_ORDERED`: its
    sums and differences in the order written, the same bits from a fresh compilation or numba's
    cache) and with the other fast-math flags: under exact options its two-thread pass at M = 10⁵
    took 20 against 16 ms (the jackknife phase, medians of 21, 2026-11-29); without reassociation
    alone, the same time and the same values as with it, bit for bit."""
    m = u2.shape[0]
    km = mcodes.shape[0]
    n_bins = starts_m1.shape[0] - 1
    acc = np.empty((n_bins, 4))
    s = np.empty(N_SUMS)
    n = raw[0] - 1.0
    for p in range(p0, p1):
        if km > 0:
            zc = z[p] - zshift
            a = raw[2] - zc
            pack_sums(s, n, raw[1] - z[p], (raw[3] - zc * zc) - a * a / n, raw[4] - z2[p], raw[5] - E2[p],
                      raw[6] - u2[p], raw[7] - lnu2[p])
            for k in range(km):
                out[k, p] = finish_mean(mcodes[k], s)
        if bcodes.shape[0] == 0:
            continue
        for b in range(n_bins):
            a = starts_m1[b]
            e = starts_m1[b + 1]
            su = inner[b, 0]
            se = inner[b, 1]
            sz = inner[b, 2]
            if p <= a:  # [a + 1, e + 1)
                su = su + u2[e]
                se = se + E2[e]
                sz = sz + z2[e]
            else:
                su = u2[a] + su
                se = E2[a] + se
                sz = z2[a] + sz
                if p < e:  # [a, e + 1) less p
                    su = (su + u2[e]) - u2[p]
                    se = (se + E2[e]) - E2[p]
                    sz = (sz + z2[e]) - z2[p]
            acc[b, 0] = np.float64(e - a)
            acc[b, 1] = su
            acc[b, 2] = se
            acc[b, 3] = sz
        for k in range(bcodes.shape[0]):
            out[km + k, p] = finish_binned(bcodes[k], acc, np.float64(m - 1))
