"""Bin boundaries: equal counts and the adaptive rule (docs/methods.md, "Binning", "Diagnostics")."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._config import NJIT
from .stats import finish_binned, prefix_sums


@njit(**NJIT)
def equal_count_starts(m, n_bins, out):
    """Bin starts of ``m`` sorted points in ``n_bins`` equal-count bins.

    ``out[i] = floor(m*i/n_bins + 1/2)`` for ``i = 0..n_bins`` (so ``out[n_bins] = m``),
    computed exactly in integers as ``(2*m*i + n_bins) // (2*n_bins)``; this is
    ErrViewLib's ``genIntervals`` rule (round half up).
    """
    for i in range(n_bins + 1):
        out[i] = (2 * m * i + n_bins) // (2 * n_bins)


@njit(**NJIT)
def adaptive_starts_kernel(xs, n_bins, min_count, log, out):
    """Adaptive bin starts of the sorted sample ``xs`` into ``out`` (capacity ≥ len(xs) + 1);
    returns the number of bins. The rule of :func:`mcref.binning.adaptive_starts`
    (ErrViewLib ``genIntervals(equiPop = FALSE)``): equal-width cells of ln x (``log``) or x,
    merge the first small bin from the left into its right neighbour (a small last bin into
    its left one) until none has fewer than ``min_count`` points, then cut the first bin above
    max(⌊M/n⌋, 2·min_count) points after ⌊count/2⌋ + 1 points until none is. ``n_bins`` is
    first reduced to ⌊M/min_count⌋ when M/n_bins < min_count (M ≥ min_count required)."""
    m = xs.shape[0]
    if m < n_bins * min_count:
        n_bins = m // min_count
    n0 = n_bins
    lo = math.log(xs[0]) if log else xs[0]
    hi = math.log(xs[m - 1]) if log else xs[m - 1]
    step = (hi - lo) / n_bins
    out[0] = 0
    j = 0
    for i in range(1, n_bins):
        lim = lo + i * step
        while j < m and (math.log(xs[j]) if log else xs[j]) < lim:
            j += 1
        out[i] = j
    out[n_bins] = m
    nb = n_bins
    # merge
    while True:
        hit = -1
        for i in range(nb - 1):
            if out[i + 1] - out[i] < min_count:
                hit = i
                break
        if hit >= 0:
            for k in range(hit + 1, nb):  # drop start hit + 1
                out[k] = out[k + 1]
            nb -= 1
            continue
        if nb > 1 and out[nb] - out[nb - 1] < min_count:
            out[nb - 1] = out[nb]  # drop start nb - 1
            nb -= 1
            continue
        break
    # split
    pop_max = max(m // n0, 2 * min_count)
    while True:
        hit = -1
        for i in range(nb):
            if out[i + 1] - out[i] > pop_max:
                hit = i
                break
        if hit < 0:
            break
        for k in range(nb + 1, hit + 1, -1):  # make room at hit + 1
            out[k] = out[k - 1]
        out[hit + 1] = out[hit] + (out[hit + 2] - out[hit]) // 2 + 1
        nb += 1
    return nb


@njit(**NJIT)
def adaptive_jackknife_kernel(code, us, u2, e2, z2, n_bins, min_count, log, j0, out):
    """Leave-one-out values of the binned statistic ``code`` (ENCE, ZMSE, UCE of
    :mod:`mcref.kernels.stats`) with the adaptive bins of the M − 1 points recomputed for
    every left-out point; inputs sorted by u; ``out[p]`` for left-out point ``j0 + p``.
    Bin sums come from prefix sums, as in the equal-count jackknife."""
    m = us.shape[0]
    cu2, ce2, cz2 = prefix_sums(u2, e2, z2)
    xs = np.empty(m - 1)
    st = np.empty(m + 1, dtype=np.int64)
    acc = np.empty((m, 4))
    for p in range(out.shape[0]):
        j = j0 + p
        k = 0
        for i in range(m):
            if i != j:
                xs[k] = us[i]
                k += 1
        nb = adaptive_starts_kernel(xs, n_bins, min_count, log, st)
        for b in range(nb):
            a, c = st[b], st[b + 1]
            lo = a + (1 if a >= j else 0)  # reduced positions [a, c) -> full positions, minus j
            hi = c + (1 if c > j else 0)
            acc[b, 0] = np.float64(c - a)
            acc[b, 1] = cu2[hi] - cu2[lo]
            acc[b, 2] = ce2[hi] - ce2[lo]
            acc[b, 3] = cz2[hi] - cz2[lo]
            if lo <= j < hi:
                acc[b, 1] -= u2[j]
                acc[b, 2] -= e2[j]
                acc[b, 3] -= z2[j]
        out[p] = finish_binned(code, acc[:nb], np.float64(m - 1))
