r"""The swap null of posteriors of vector parameters (docs/methods.md, "Posteriors of vector
parameters").

Under calibration the truth θ*_i of case i is exchangeable with its S draws, so a swapped set
chooses, per case, which of the S + 1 vectors plays the truth. Every statistic of the check is a
function of the ranks of scalar functions h_f that are symmetric in the case's S + 1 vectors
(a parameter, a projection, a distance to a reference, a depth, a surprisal). After one sort per
case and function (:func:`rank_table`: for every vector j its count of smaller values and of
equal values), a swap's rank is a lookup (:func:`swap_block`):

.. math::

    u'_{if} = \frac{lo_{i j f} + T + V}{S + 1},\qquad j \sim U\{0, …, S\},\;
    T \sim U\{0, …, cnt_{ijf} - 1\},\; V \sim U(0, 1)

one j per (set, case) shared by all functions (the swap is of whole vectors), T and V per
(set, case, function) (the randomized rank of :func:`mcref.rank_calibration`; V only where it
can move u' across a bin edge). The sets accumulate, per function, the counts of u' on
:data:`N_FINE` equal bins of [0, 1]: every statistic of the verdict is a function of these
(B sets cost O(B·N·F)). :func:`case_moments` gives each case's means and covariances.

Sets are split into chunks of :data:`CHUNK`; chunk c draws from its own xoshiro256** state
``states[c]`` (docs/methods.md, "Random numbers") and writes its own rows, the cases in order,
so the sets do not depend on the thread count. :func:`energy_terms` gives the two terms of the
energy score per case, :func:`tarp_counts` TARP's counts alone.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, uint64

from ._config import NJIT_EXACT, NJIT_EXACT_PARALLEL
from .rng import draw_below, load_state, step, store_state

#: swapped sets per chunk (one random stream each)
CHUNK = 8
#: equal bins of [0, 1] on which the swapped ranks are counted (the χ² bins are unions of them)
N_FINE = 100


#: bits of one radix digit (six passes cover the 64 bits of a key)
_DIGIT = 11


@njit(**NJIT_EXACT)
def _radix_order(vals, keys, keys2, idx, idx2, hist):
    """``idx`` = the order of ``vals`` (float64, no NaN): LSD radix sort of their order-preserving
    64-bit keys (sign bit flipped for positives, all bits for negatives), :data:`_DIGIT` bits a
    pass, a pass skipped when one bucket holds every key. Stable; −0.0 sorts before +0.0 (equal
    values: the caller groups ties by value)."""
    n = vals.shape[0]
    b = vals.view(np.uint64)
    top = uint64(1) << uint64(63)
    for p in range(n):
        x = b[p]
        keys[p] = ~x if x & top else x | top
        idx[p] = p
    mask = uint64((1 << _DIGIT) - 1)
    for sh in range(0, 64, _DIGIT):
        hist[:] = 0
        for p in range(n):
            hist[np.int64((keys[p] >> uint64(sh)) & mask)] += 1
        if hist[np.int64((keys[0] >> uint64(sh)) & mask)] == n:
            continue
        acc = 0
        for q in range(hist.shape[0]):
            c = hist[q]
            hist[q] = acc
            acc += c
        for p in range(n):
            dg = np.int64((keys[p] >> uint64(sh)) & mask)
            pos = hist[dg]
            hist[dg] = pos + 1
            keys2[pos] = keys[p]
            idx2[pos] = idx[p]
        for p in range(n):
            keys[p] = keys2[p]
            idx[p] = idx2[p]


@njit(**NJIT_EXACT)
def _case_values(truth, draws, i, sd, ref, pairs, W, depth, mean, scores, out):
    """The F functions of case i's S + 1 vectors (0: the truth) into ``out`` (F, S + 1): the d
    parameters, the standardized pair sums and differences, TARP's standardized distance to
    ``ref``, the depth (z − z̄)ᵀW(z − z̄) when ``depth``, the surprisal ``scores`` when given."""
    S1 = draws.shape[1] + 1
    d = truth.shape[1]
    P = pairs.shape[0]
    z = np.empty(d)
    inv = np.empty(d)  # z = θ·(1/s): a product, not a quotient, in the inner loops (as tarp_counts)
    rz = np.empty(d)
    mz = np.empty(d)
    for k in range(d):
        inv[k] = 1.0 / sd[k]
        rz[k] = ref[k] * inv[k]
        mz[k] = mean[k] * inv[k]
    for j in range(S1):
        for k in range(d):
            x = truth[i, k] if j == 0 else draws[i, j - 1, k]
            out[k, j] = x
            z[k] = x * inv[k]
        for q in range(P):
            a = pairs[q, 0]
            b = pairs[q, 1]
            out[d + 2 * q, j] = z[a] + z[b]
            out[d + 2 * q + 1, j] = z[a] - z[b]
        f = d + 2 * P
        acc = 0.0
        for k in range(d):
            e = z[k] - rz[k]
            acc += e * e
        out[f, j] = math.sqrt(acc)
        f += 1
        if depth:
            acc = 0.0
            for k in range(d):
                ck = z[k] - mz[k]
                for l in range(d):
                    acc += ck * W[k, l] * (z[l] - mz[l])
            out[f, j] = acc
            f += 1
        if scores.shape[0] > 0:
            out[f, j] = scores[i, j]


@njit(**NJIT_EXACT_PARALLEL)
def rank_table(truth, draws, i0, sd, refs, pairs, Ws, depth, means, scores, lo, cnt):
    """For the cases i0 … i0 + nb − 1 (nb = ``lo.shape[0]``), every function f (:func:`_case_values`)
    and vector j: ``lo[i − i0, j, f]`` twice the number of the case's S + 1 values of f strictly below
    vector j's, plus 1 when another value equals it, and ``cnt[i − i0, j, f]`` the number equal to it
    (itself included; the swaps read it for tied values only): one radix sort per
    case and function. ``Ws`` (nb, d, d) the depth's precision matrices of the standardized vectors
    (used when ``depth``), ``means`` (nb, d) the cases' pooled means, ``scores`` (N, S + 1) the
    surprisals (0 rows: none)."""
    nb, S1, F = lo.shape
    for t in prange(nb):
        i = i0 + t
        vals = np.empty((F, S1))
        _case_values(truth, draws, i, sd, refs[i], pairs, Ws[t], depth, means[t], scores, vals)
        keys = np.empty(S1, dtype=np.uint64)
        keys2 = np.empty(S1, dtype=np.uint64)
        idx = np.empty(S1, dtype=np.int64)
        idx2 = np.empty(S1, dtype=np.int64)
        hist = np.empty(1 << _DIGIT, dtype=np.int64)
        for f in range(F):
            row = vals[f]
            _radix_order(row, keys, keys2, idx, idx2, hist)
            p = 0
            while p < S1:
                q = p + 1
                while q < S1 and row[idx[q]] == row[idx[p]]:
                    q += 1
                for k in range(p, q):
                    lo[t, idx[k], f] = 2 * p + (1 if q - p > 1 else 0)
                    cnt[t, idx[k], f] = q - p
                p = q


@njit(**NJIT_EXACT)
def _swap_chunk(lo, cnt, state, first, count, counts, i0, jout):
    nb, S1, F = lo.shape
    G = counts.shape[2]
    st = load_state(state)
    r = uint64(0)
    halves = 0
    for i in range(nb):
        for k in range(first, first + count):
            j, st, r, halves = draw_below(st, r, halves, S1)
            if jout.shape[0] > 0:
                jout[k, i0 + i] = j
            for f in range(F):
                v = lo[i, j, f]
                rank = v >> 1
                if v & 1:  # tied (rare): cnt is read only then
                    t, st, r, halves = draw_below(st, r, halves, cnt[i, j, f])
                    rank += t
                g = (rank * G) // S1
                if ((rank + 1) * G - 1) // S1 != g:  # the rank's interval straddles a bin edge: V decides
                    w, st = step(st)
                    u = (rank + np.float64(w >> uint64(11)) * (1.0 / 9007199254740992.0)) / S1
                    g = min(np.int64(u * G), G - 1)
                counts[k, f, g] += 1
    store_state(state, st)


@njit(**NJIT_EXACT_PARALLEL)
def swap_block(lo, cnt, states, n_total, counts, i0, jout):
    """Add one block of cases (``lo``, ``cnt`` of :func:`rank_table`, (nb, S + 1, F)) to the counts
    ``counts`` (n_total, F, G) of every swapped set's u' on the G fine bins. A rank r whose
    interval [r, r + 1)·G/(S + 1) lies in one bin needs no V (its bin is ⌊rG/(S + 1)⌋ whatever V);
    the others draw V. Chunk c (:data:`CHUNK` sets, the last one cut at ``n_total``) reads and
    advances ``states[c]`` only, and writes its own rows. ``jout`` (n_total, N), when it has rows,
    records which vector played the truth in set k for case i0 + i (for the tests)."""
    for c in prange(states.shape[0]):
        start = c * CHUNK
        count = min(CHUNK, n_total - start)
        if count > 0:
            _swap_chunk(lo, cnt, states[c], start, count, counts, i0, jout)


@njit(**NJIT_EXACT_PARALLEL)
def case_moments(truth, draws, full, pmean, pcov, dmean, dvar, lo, hi):
    """Per case i: the mean ``pmean[i]`` and covariance ``pcov[i]`` (divisor S) of its S + 1 pooled
    vectors, the mean ``dmean[i]`` and variance ``dvar[i]`` (divisor S − 1) of its S draws, the
    pooled minimum ``lo[i]`` and maximum ``hi[i]``: two passes each (over the case's values, in
    cache). Without ``full``, the variances alone (the diagonal of ``pcov``); ``dvar`` with no rows:
    not computed (its pass skipped; the other outputs bit for bit the same)."""
    N, S, d = draws.shape
    for i in prange(N):
        s = np.zeros(d)
        acc = np.zeros(d)
        for k in range(d):
            lo[i, k] = truth[i, k]
            hi[i, k] = truth[i, k]
        for j in range(S):  # the draws row by row (contiguous), one sum per parameter in the order of j
            for k in range(d):
                x = draws[i, j, k]
                s[k] += x
                lo[i, k] = min(lo[i, k], x)
                hi[i, k] = max(hi[i, k], x)
        for k in range(d):
            dmean[i, k] = s[k] / S
            pmean[i, k] = (s[k] + truth[i, k]) / (S + 1)
        if dvar.shape[0] > 0:  # the draws' own variance (TARP alone passes none: one pass less)
            for j in range(S):
                for k in range(d):
                    e = draws[i, j, k] - dmean[i, k]
                    acc[k] += e * e
            for k in range(d):
                dvar[i, k] = acc[k] / (S - 1)
        for k in range(d):
            e0 = truth[i, k] - pmean[i, k]
            acc[k] = e0 * e0
        if not full:
            for j in range(S):
                for k in range(d):
                    e = draws[i, j, k] - pmean[i, k]
                    acc[k] += e * e
            for k in range(d):
                pcov[i, k, k] = acc[k] / S
            continue
        for k in range(d):
            for l in range(k, d):
                e0 = truth[i, k] - pmean[i, k]
                c = e0 * (truth[i, l] - pmean[i, l])
                for j in range(S):
                    c += (draws[i, j, k] - pmean[i, k]) * (draws[i, j, l] - pmean[i, l])
                pcov[i, k, l] = c / S
                pcov[i, l, k] = c / S


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


@njit(**NJIT_EXACT_PARALLEL)
def tarp_counts(truth, draws, refs, sd, out, qsum):
    """TARP's counts alone: ``out[i]`` = #{j: ‖(θ_ij − r_i)/sd‖ < ‖(θ*_i − r_i)/sd‖}, the distances
    rounded as :func:`_case_values` rounds them (the same standardization θ·(1/s), the same square
    roots), one pass over the case's draws with no temporaries of their size. The squared distance
    q of a draw decides alone when q < q0·(1 − 10⁻¹²) (then √q < √q0 after rounding) or q ≥ q0 (then √q ≥ √q0); only
    the draws in between take the square root. ``qsum[i]`` the sum of the case's squared distances
    (not finite when a value is NaN or inf: the caller's check of the data)."""
    N, S, d = draws.shape
    for i in prange(N):
        inv = np.empty(d)
        rz = np.empty(d)
        q0 = 0.0
        for k in range(d):
            inv[k] = 1.0 / sd[k]
            rz[k] = refs[i, k] * inv[k]
            e = truth[i, k] * inv[k] - rz[k]
            q0 += e * e
        t0 = math.sqrt(q0)
        sure = q0 * (1.0 - 1e-12)
        c = 0
        acc = q0
        for j in range(S):
            q = 0.0
            for k in range(d):
                e = draws[i, j, k] * inv[k] - rz[k]
                q += e * e
            if q < sure:
                c += 1
            elif q < q0 and math.sqrt(q) < t0:
                c += 1
            acc += q
        out[i] = c
        qsum[i] = acc
