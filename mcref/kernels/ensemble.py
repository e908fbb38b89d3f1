r"""Swapped ensembles: the exact null of an exchangeable ensemble (docs/methods.md, "Exact
null of an ensemble").

Under calibration the observation y of a case is exchangeable with its m members, so the
case's m + 1 values are a multiset whose every labelling (which value is y) is equally
likely. A swapped set draws, in every row independently, which of the m + 1 values plays
y (uniformly) and recomputes the Gaussian summary and the randomized rank:

.. math::

    y' = v_j,\quad \bar x' = \frac{S - y'}{m},\quad
    s'^2 = \frac{Q - y'^2 - m\bar x'^2}{m - 1},\quad E' = y' - \bar x',\quad u' = s',\quad
    c' = \frac{\#\{l \ne j: v_l < y'\} + T + V}{m + 1}

with S, Q the sum and the sum of squares of the row's values (centred on their mean), T
uniform on {0, …, #{l ≠ j: v_l = y'}} and V ~ U(0, 1) (the randomized rank of
:func:`mcref.rank_calibration`). Sets are split into fixed chunks of :data:`CHUNK`; chunk c
draws from its own xoshiro256** state ``states[c]`` (docs/methods.md, "Random numbers"), so
the sets do not depend on the thread count. Exact IEEE arithmetic (``NJIT_EXACT``): a cached
and a fresh compilation give the same bits.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uint64

from ._config import NJIT_EXACT, NJIT_EXACT_PARALLEL
from .rng import draw_below, load_state, step, store_state

#: swapped sets per chunk (one random stream each)
CHUNK = 8
#: below this fraction of the row's mean square, s'² is recomputed in two passes over the m
#: members (the one-pass form loses digits when y' dominates the row's sum of squares)
_CANCEL = 1e-6


@njit(**NJIT_EXACT)
def _two_pass_var(row, j, m):
    """Sample variance (n − 1) of the row's values without position ``j``, in two passes."""
    mean = 0.0
    for l in range(row.shape[0]):
        if l != j:
            mean += row[l]
    mean /= m
    acc = 0.0
    for l in range(row.shape[0]):
        if l != j:
            d = row[l] - mean
            acc += d * d
    return acc / (m - 1)


@njit(**NJIT_EXACT)
def swap_chunk(vs, S, Q, state, first, count, E_out, u_out, c_out):
    """Swapped sets ``first … first + count − 1`` of the rows ``vs`` (M, m + 1: each row's
    values sorted and centred; ``S``, ``Q`` their sums and sums of squares) into rows
    ``first …`` of ``E_out``, ``u_out``, ``c_out`` (see the module); advances ``state``."""
    M, m1 = vs.shape
    m = m1 - 1
    st = load_state(state)
    r = uint64(0)
    halves = 0
    for k in range(first, first + count):
        for i in range(M):
            j, st, r, halves = draw_below(st, r, halves, m1)
            yv = vs[i, j]
            lo = j
            while lo > 0 and vs[i, lo - 1] == yv:
                lo -= 1
            hi = j + 1
            while hi < m1 and vs[i, hi] == yv:
                hi += 1
            rank = lo
            if hi - lo > 1:
                t, st, r, halves = draw_below(st, r, halves, hi - lo)
                rank += t
            w, st = step(st)
            v = np.float64(w >> uint64(11)) * (1.0 / 9007199254740992.0)
            mean = (S[i] - yv) / m
            var = (Q[i] - yv * yv - m * mean * mean) / (m - 1)
            if var <= _CANCEL * Q[i] / m1:
                var = _two_pass_var(vs[i], j, m)
            E_out[k, i] = yv - mean
            u_out[k, i] = math.sqrt(var) if var > 0.0 else 0.0
            c_out[k, i] = (rank + v) / m1
    store_state(state, st)


@njit(**NJIT_EXACT_PARALLEL)
def swap_sets(vs, S, Q, states, c0, c1, n_total, E_out, u_out, c_out):
    """Chunks ``c0 … c1 − 1`` of the swapped sets (:func:`swap_chunk`, :data:`CHUNK` sets each,
    the last one cut at ``n_total``): row ``(c − c0)·CHUNK + k`` of the outputs holds set
    ``c·CHUNK + k``; chunk c reads and advances ``states[c]`` only."""
    for c in prange(c1 - c0):
        start = (c0 + c) * CHUNK
        count = min(CHUNK, n_total - start)
        if count > 0:
            swap_chunk(vs, S, Q, states[c0 + c], c * CHUNK, count, E_out, u_out, c_out)
