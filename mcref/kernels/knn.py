r"""Nearest-neighbour balls of a pooled sample, for many labellings in one pass
(docs/methods.md, "Nearest-neighbour statistics and diversity").

A pooled sample z_1, …, z_N (rows of Z) and a labelling (True: the row is in the "real" set X,
False: in the "fake" set Y). Each point's radius ρ_p is the distance to its k-th nearest
neighbour *in its own set*, itself excluded (copies of it at distance 0 count). Every
comparison is made on squared distances

.. math::

    D(p, q) = \sum_{t} (z_{pt} - z_{qt})^2

summed in the order of the columns with exact IEEE arithmetic (``NJIT_EXACT``: no reassociation,
no contraction into FMA), so D(p, q) = D(q, p) bit for bit and every kernel here computes the
same value for the same pair.

Each point carries a list of K other points sorted by D (:func:`sort_lists`) and a bound S_p:
every point *not* in the list has D ≥ S_p. For a labelling, the k-th same-set entry of the
list, if its D is < S_p, is the exact k-th same-set neighbour (every point with D ≤ ρ_p² < S_p
is in the list), and the points q of the other set with D(p, q) < ρ_p² are the entries before
it. Otherwise the point is done by an exact search over all N points (:func:`_brute`). So the
counts are those of the definitions, for any K; K only sets how often the search is needed.

:func:`prdc_counts` runs over the labellings in fixed chunks of ``CHUNK`` labellings, one
parallel task per chunk with its own scratch marks; the counts are integers, so the result does
not depend on the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._config import NJIT_EXACT, NJIT_EXACT_PARALLEL

#: labellings per parallel task
CHUNK = 4


@njit(**NJIT_EXACT, inline="always")
def sqdist(Z, p, q):
    """D(p, q) = Σ_t (Z[p, t] − Z[q, t])², in the order of the columns."""
    s = 0.0
    for t in range(Z.shape[1]):
        v = Z[p, t] - Z[q, t]
        s += v * v
    return s


@njit(**NJIT_EXACT_PARALLEL)
def sort_lists(Z, idx, d2):
    """Fill d2[p, e] = D(p, idx[p, e]) and sort each row of (d2, idx) by d2 (insertion sort: the
    tree's order is already nearly D's order)."""
    N, K = idx.shape
    for p in prange(N):
        for e in range(K):
            d2[p, e] = sqdist(Z, p, idx[p, e])
        for e in range(1, K):
            v = d2[p, e]
            j = idx[p, e]
            f = e - 1
            while f >= 0 and d2[p, f] > v:
                d2[p, f + 1] = d2[p, f]
                idx[p, f + 1] = idx[p, f]
                f -= 1
            d2[p, f + 1] = v
            idx[p, f + 1] = j


@njit(**NJIT_EXACT)
def _brute_radius(Z, lab, p, k, best):
    """The k-th smallest D(p, q) over the q ≠ p with lab[q] == lab[p] (best: scratch of k)."""
    mine = lab[p]
    n_best = 0
    for q in range(Z.shape[0]):
        if q == p or lab[q] != mine:
            continue
        v = sqdist(Z, p, q)
        if n_best < k:
            f = n_best - 1
            n_best += 1
        elif v < best[k - 1]:
            f = k - 2
        else:
            continue
        while f >= 0 and best[f] > v:
            best[f + 1] = best[f]
            f -= 1
        best[f + 1] = v
    return best[k - 1]


@njit(**NJIT_EXACT)
def _brute(Z, lab, p, k, best, in_real, in_fake):
    """Point p by an exact search over all N: its radius, then the other set's points inside its
    ball (marked in in_real if p is real, in in_fake if p is fake). Returns their number."""
    r2 = _brute_radius(Z, lab, p, k, best)
    mine = lab[p]
    hits = 0
    for q in range(Z.shape[0]):
        if lab[q] == mine:
            continue
        if sqdist(Z, p, q) < r2:
            hits += 1
            if mine:
                in_real[q] = 1
            else:
                in_fake[q] = 1
    return hits


@njit(**NJIT_EXACT)
def _one_labelling(Z, idx, d2, bound, lab, k, best, in_real, in_fake, out):
    """The four counts of one labelling (out: precision's, density's, recall's, coverage's)."""
    N, K = idx.shape
    for q in range(N):
        in_real[q] = 0
        in_fake[q] = 0
    n_dens = 0
    n_cov = 0
    for p in range(N):
        mine = lab[p]
        cnt = 0
        stop = -1
        for e in range(K):
            if d2[p, e] >= bound[p]:
                break
            if lab[idx[p, e]] == mine:
                cnt += 1
                if cnt == k:
                    stop = e
                    break
        if stop < 0:
            hits = _brute(Z, lab, p, k, best, in_real, in_fake)
        else:
            r2 = d2[p, stop]
            hits = 0
            for e in range(stop):
                if d2[p, e] >= r2:
                    break
                q = idx[p, e]
                if lab[q] != mine:
                    hits += 1
                    if mine:
                        in_real[q] = 1
                    else:
                        in_fake[q] = 1
        if mine:
            n_dens += hits
            if hits > 0:
                n_cov += 1
    n_prec = 0
    n_rec = 0
    for q in range(N):
        if lab[q]:
            n_rec += in_fake[q]
        else:
            n_prec += in_real[q]
    out[0] = n_prec
    out[1] = n_dens
    out[2] = n_rec
    out[3] = n_cov


@njit(**NJIT_EXACT_PARALLEL)
def prdc_counts(Z, idx, d2, bound, labels, k, out):
    """For each labelling b (row of ``labels``, True = real), out[b] = (#fakes inside some real
    ball, #(fake, real ball) pairs with the fake inside, #reals inside some fake ball, #real balls
    holding a fake); balls open (D < ρ²). Chunks of CHUNK labellings, one task each."""
    B, N = labels.shape
    n_chunks = (B + CHUNK - 1) // CHUNK
    for c in prange(n_chunks):
        best = np.empty(k)
        in_real = np.empty(N, np.uint8)
        in_fake = np.empty(N, np.uint8)
        for b in range(c * CHUNK, min(B, (c + 1) * CHUNK)):
            _one_labelling(Z, idx, d2, bound, labels[b], k, best, in_real, in_fake, out[b])
