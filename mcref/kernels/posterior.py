r"""The swap null of posteriors of vector parameters (docs/methods.md, "Posteriors of vector
parameters").

Under calibration the truth θ*_i of case i is exchangeable with its S draws, so a swapped set
chooses, per case, which of the S + 1 vectors plays the truth. Every statistic of the check is a
function of the ranks of scalar functions h_f that are symmetric in the case's S + 1 vectors
(a parameter, a projection, a distance to a reference, a depth, a surprisal). After one sort per
case and function (:func:`rank_table`: for every vector j its count of smaller values ``lo`` and
of equal values ``cnt``), a swap's rank is a lookup (:func:`swap_block`):

.. math::

    u'_{if} = \frac{lo_{i j f} + T + V}{S + 1},\qquad j \sim U\{0, …, S\},\;
    T \sim U\{0, …, cnt_{ijf} - 1\},\; V \sim U(0, 1)

one j per (set, case) shared by all functions (the swap is of whole vectors), T and V per
(set, case, function) (the randomized rank of :func:`mcref.rank_calibration`). The sets
accumulate, per function, counts of u' on :data:`N_FINE` equal bins of [0, 1], Σu' and
Σ|u' − ½|: every statistic of the check is a function of these (B sets cost O(B·N·F)).

Sets are split into chunks of :data:`CHUNK`; chunk c draws from its own xoshiro256** state
``states[c]`` (docs/methods.md, "Random numbers") and writes its own rows, the cases in order,
so the sets do not depend on the thread count. :func:`energy_terms` gives the two terms of the
energy score per case.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uint64

from ._config import NJIT_EXACT, NJIT_EXACT_PARALLEL
from .rng import half_draw, load_state, step, store_state

#: swapped sets per chunk (one random stream each)
CHUNK = 8
#: equal bins of [0, 1] on which the swapped ranks are counted (the χ² bins are unions of them)
N_FINE = 100


@njit(**NJIT_EXACT)
def _below(st, r, halves, b):
    """Uniform integer in [0, b) (Lemire with rejection on 32-bit halves: exact)."""
    j = np.int64(-1)
    while j < 0:
        j, st, r, halves = half_draw(st, r, halves, b)
    return j, st, r, halves


@njit(**NJIT_EXACT_PARALLEL)
def rank_table(V, lo, cnt):
    """For every case i, function f and vector j of ``V`` (nb, F, S + 1): ``lo[i, j, f]`` the number of
    values of row (i, f) strictly below ``V[i, f, j]`` and ``cnt[i, j, f]`` the number equal to it
    (itself included): one sort per row."""
    nb, F, S1 = V.shape
    for t in prange(nb * F):
        i = t // F
        f = t - i * F
        row = V[i, f]
        o = np.argsort(row)
        p = 0
        while p < S1:
            q = p + 1
            while q < S1 and row[o[q]] == row[o[p]]:
                q += 1
            for k in range(p, q):
                lo[i, o[k], f] = p
                cnt[i, o[k], f] = q - p
            p = q


@njit(**NJIT_EXACT)
def _swap_chunk(lo, cnt, state, first, count, counts, s1, s2):
    nb, S1, F = lo.shape
    G = counts.shape[2]
    st = load_state(state)
    r = uint64(0)
    halves = 0
    for i in range(nb):
        for k in range(first, first + count):
            j, st, r, halves = _below(st, r, halves, S1)
            for f in range(F):
                rank = lo[i, j, f]
                c = cnt[i, j, f]
                if c > 1:
                    t, st, r, halves = _below(st, r, halves, c)
                    rank += t
                w, st = step(st)
                u = (rank + np.float64(w >> uint64(11)) * (1.0 / 9007199254740992.0)) / S1
                g = min(np.int64(u * G), G - 1)
                counts[k, f, g] += 1
                s1[k, f] += u
                s2[k, f] += abs(u - 0.5)
    store_state(state, st)


@njit(**NJIT_EXACT_PARALLEL)
def swap_block(lo, cnt, states, n_total, counts, s1, s2):
    """Add one block of cases (``lo``, ``cnt`` of :func:`rank_table`, (nb, S + 1, F)) to the
    accumulators of every swapped set: ``counts`` (n_total, F, G) the counts of u' per bin,
    ``s1``, ``s2`` (n_total, F) Σu' and Σ|u' − ½|. Chunk c (:data:`CHUNK` sets, the last one cut
    at ``n_total``) reads and advances ``states[c]`` only, and writes its own rows."""
    for c in prange(states.shape[0]):
        start = c * CHUNK
        count = min(CHUNK, n_total - start)
        if count > 0:
            _swap_chunk(lo, cnt, states[c], start, count, counts, s1, s2)


@njit(**NJIT_EXACT_PARALLEL)
def energy_terms(draws, truth, lags, near, spread):
    r"""Per case i: ``near[i]`` = (1/S) Σ_j ‖X_ij − y_i‖ and ``spread[i]`` the mean of ‖X_ij − X_ij'‖
    over the pairs used: all S(S − 1)/2 pairs when ``lags`` is empty, else the pairs
    (j, (j + l) mod S) for every lag l of ``lags`` (S pairs a lag). The energy score is
    ``near − spread/2`` (Gneiting & Raftery 2007)."""
    N, S, d = draws.shape
    for i in prange(N):
        acc = 0.0
        for j in range(S):
            q = 0.0
            for k in range(d):
                z = draws[i, j, k] - truth[i, k]
                q += z * z
            acc += math.sqrt(q)
        near[i] = acc / S
        acc = 0.0
        n = 0
        if lags.shape[0] == 0:
            for j in range(S):
                for jj in range(j + 1, S):
                    q = 0.0
                    for k in range(d):
                        z = draws[i, j, k] - draws[i, jj, k]
                        q += z * z
                    acc += math.sqrt(q)
            n = S * (S - 1) // 2
        else:
            for l in lags:
                for j in range(S):
                    jj = (j + l) % S
                    q = 0.0
                    for k in range(d):
                        z = draws[i, j, k] - draws[i, jj, k]
                        q += z * z
                    acc += math.sqrt(q)
            n = S * lags.shape[0]
        spread[i] = acc / n if n > 0 else 0.0
