"""Average ranks and Spearman's ρ against a fixed u, by a radix sort of IEEE keys (DESIGN §7).

The simulated reference of CC ranks a fresh ``a = |E*|`` 10⁴ times against the same u.
NumPy's AVX-512 ``argsort`` is ~7× faster than numba's ``np.argsort`` on such a machine,
so this module sorts with a method that exploits the data instead:

1. **Keys.** For a float64 the IEEE-754 bit pattern read as an integer is monotone in the
   value (after flipping the negatives), so ``key = 2**63 ± |bits|`` is a uint64 in value
   order, with ``-0.0`` and ``+0.0`` on the same key. One vectorised pass computes the
   keys and their min/max.
2. **Truncated key.** ``t = (key − kmin) >> s`` with the smallest shift ``s`` that makes
   ``t < 2**(2D)`` (``D`` = 10–12 bits, from the table size of the scratch): the shift is
   chosen from the actual range, so no bucket lies below the smallest value, and ~20
   binades of |E| (tiny |ε| values) still leave ~2¹⁸ levels per binade at M ≈ 14 000.
   Each point becomes one word ``t << 32 | i``.
3. **LSD radix sort on t**, two stable counting passes of ``D`` bits (one histogram pass
   for both digits, two scatter passes). The tables (2 × 2**D counters) stay in L1.
4. **Rank pass.** The second scatter pass puts each word at its final position ``j`` and,
   in the same loop, accumulates ``Σ j·xu[i]`` (or writes ``out[i] = j``): no extra pass.
   It also compares the word with its predecessor in the output; equal ``t`` (two values
   closer than one key level, or exact ties) is recorded as a *collision*.
5. **Groups.** A run of equal ``t`` (a few dozen pairs at M ≈ 14 000) is sorted by the
   actual values (insertion sort; heapsort if the insertion work exceeds ~8 moves per
   element, so a crowded group — e.g. all points in one key level next to a 1e300
   outlier — stays O(g log g)) and its provisional ranks are replaced by the average
   ranks of its value-ties; ``Σ (t³ − t)`` of the ties corrects ``syy``.

Cost: O(M + 2**D) per call, five passes over M words, no allocation (all buffers come
from :func:`make_rank_scratch`). Results are exact: ranks are multiples of 1/2 and
``Σ rank·xu`` is a sum of multiples of 1/4 far below 2**53, so every sum is exact in
float64 whatever the order.

Measured on the development machine (AMD EPYC Zen 5, AVX-512, one core; M = 13 885, u
with 135 distinct values, ``a = |u·N(0, 1)|``; ``benchmarks/bench_rank.py``): about
30 µs per call of :func:`spearman_fixed_u`, against ≈ 118 µs for NumPy's ``argsort``
alone (≈ 4× faster) and ≈ 1.1 ms for numba's ``np.argsort`` (≈ 40×).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from ._config import NJIT

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_MAG = np.uint64(0x7FFFFFFFFFFFFFFF)
_TOP = np.uint64(0x8000000000000000)
_LO32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S63 = np.uint64(63)


def radix_bits(m: int) -> int:
    """Digit width ``D`` for ``m`` points: ``clip(ceil(log2 m) − 3, 8, 13)`` (11 at M = 13 885).

    Measured optimum: fewer bits make the runs of equal t longer, more bits make the
    tables (2 × 2**D counters) leave L1 and the prefix sums longer.
    """
    m = max(int(m), 2)
    return min(13, max(8, (m - 1).bit_length() - 3))


def make_rank_scratch(m: int) -> tuple:
    """Scratch buffers of :func:`spearman_fixed_u` and :func:`average_ranks` for ``m`` points.

    Returns ``(w0, w1, gl, hist, gv)``: ``w0``, ``w1`` uint64 ``(m+1,)`` (sort words),
    ``gl`` uint64 ``(m,)`` (collision positions), ``hist`` uint64 ``(2, 2**D)`` (digit
    counters, ``D = radix_bits(m)``) and ``gv`` float64 ``(m,)`` (values of a group).
    Allocate once per chunk (per thread) and reuse for every call with the same ``m``.
    """
    m = int(m)
    if m < 0:
        raise ValueError("`m` must be >= 0")
    d = radix_bits(m)
    return (np.empty(m + 1, np.uint64), np.empty(m + 1, np.uint64), np.empty(max(m, 1), np.uint64),
            np.empty((2, 1 << d), np.uint64), np.empty(max(m, 1), np.float64))


@njit(**NJIT)
def _key(b):
    """Monotone uint64 key of the float64 whose bits are ``b``: 2**63 ± |b| (±0.0 → 2**63)."""
    mag = b & _MAG
    s = b >> _S63
    return _TOP + ((mag ^ (_ZERO - s)) + s)


@njit(**NJIT)
def _sort_first_digit(a, w0, w1, hist):
    """Steps 1–3 up to the first scatter: ``w1[1..m]`` = words ``t<<32 | i`` stably sorted
    by the low digit of t; ``hist[1]`` = start positions (1-based) of the high-digit
    buckets. Returns the shift of the high digit within a word."""
    m = a.shape[0]
    bits = a.view(np.uint64)
    kmin = _ALL
    kmax = _ZERO
    for i in range(m):  # vectorised: keys and their range
        k = _key(bits[i])
        w0[i + 1] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    nb = hist.shape[1]
    d = _ZERO
    while (_ONE << d) < uint64(nb):
        d += _ONE
    mask = uint64(nb - 1)
    tmax = (mask << d) | mask
    r = kmax - kmin
    s = _ZERO
    while (r >> s) > tmax:
        s += _ONE
    h0 = hist[0]
    h1 = hist[1]
    h0[:] = 0
    h1[:] = 0
    for i in range(m):  # both digit histograms; the word replaces the key
        t = (w0[i + 1] - kmin) >> s
        w0[i + 1] = (t << _S32) | uint64(i)
        h0[t & mask] += _ONE
        h1[t >> d] += _ONE
    c0 = _ONE
    c1 = _ONE
    for b in range(nb):  # exclusive prefix sums = 1-based bucket starts
        x = h0[b]
        h0[b] = c0
        c0 += x
        x = h1[b]
        h1[b] = c1
        c1 += x
    for i in range(1, m + 1):  # scatter by the low digit
        w = w0[i]
        q = (w >> _S32) & mask
        j = h0[q]
        h0[q] = j + _ONE
        w1[j] = w
    w0[0] = _ALL  # sentinel before position 1: its t never equals a real t (< 2**24)
    return _S32 + d


@njit(**NJIT)
def _heapsort2(v, p, n):
    """Heapsort of ``v[:n]`` carrying ``p`` along (O(n log n) fallback of :func:`_sort_group`)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift2(v, p, start, n)
    for end in range(n - 1, 0, -1):
        tv = v[0]
        v[0] = v[end]
        v[end] = tv
        tp = p[0]
        p[0] = p[end]
        p[end] = tp
        _sift2(v, p, 0, end)


@njit(**NJIT)
def _sift2(v, p, root, n):
    """Sift ``v[root]`` down the max-heap ``v[:n]``, carrying ``p``."""
    while True:
        c = 2 * root + 1
        if c >= n:
            return
        if c + 1 < n and v[c] < v[c + 1]:
            c += 1
        if v[root] < v[c]:
            tv = v[root]
            v[root] = v[c]
            v[c] = tv
            tp = p[root]
            p[root] = p[c]
            p[c] = tp
            root = c
        else:
            return


@njit(**NJIT)
def _fix_groups(a, w0, gl, nc, gv, gi, xu, out, want_ranks):
    """Step 5 for every run of equal t: sort the run by value (insertion sort, heapsort
    beyond 8n + 64 moves) and give its value-ties their average rank.

    ``want_ranks``: write the ranks to ``out[i]``; else return ``Σ (new − provisional
    rank)·xu_i`` over the runs. Also returns ``Σ (c³ − c)`` over value-ties of size c.
    One call per kernel call: numba calls with array arguments cost reference counting,
    so nothing here is split into per-group helpers.
    """
    m = a.shape[0]
    ds = 0.0
    ts = 0.0
    for c in range(nc):
        j = np.int64(gl[c])
        t = w0[j] >> _S32
        if (w0[j - 1] >> _S32) != t:
            continue  # stale hit: different t in the final order
        if j >= 2 and (w0[j - 2] >> _S32) == t:
            continue  # not the first pair of its run: handled from the first pair
        g0 = j - 1
        g1 = j
        while g1 < m and (w0[g1 + 1] >> _S32) == t:
            g1 += 1
        n = g1 - g0 + 1
        budget = 8 * n + 64
        for q in range(n):  # load the run (placement order) and insertion-sort it by value
            i = w0[g0 + q] & _LO32
            v = a[i]
            if not want_ranks:
                ds -= np.float64(g0 + q) * xu[i]  # remove the provisional rank
            p = q
            if budget >= 0:
                while p > 0 and v < gv[p - 1]:
                    gv[p] = gv[p - 1]
                    gi[p] = gi[p - 1]
                    p -= 1
                budget -= q - p
            gv[p] = v
            gi[p] = i
        if budget < 0:  # crowded run (values closer than one key level): O(n log n)
            _heapsort2(gv, gi, n)
        q = 0
        while q < n:  # value-ties inside the run share the average of their positions
            q0 = q
            while q + 1 < n and gv[q + 1] == gv[q0]:
                q += 1
            r = g0 + 0.5 * (q0 + q)
            if want_ranks:
                for k in range(q0, q + 1):
                    out[gi[k]] = r
            else:
                sx = 0.0
                for k in range(q0, q + 1):
                    sx += xu[gi[k]]
                ds += r * sx
            cnt = np.float64(q - q0 + 1)
            ts += cnt * cnt * cnt - cnt
            q += 1
    return ds, ts


@njit(**NJIT)
def spearman_fixed_u(a, xu, sxx, scratch):
    """ρ = Σ xu_i·(re_i − (M+1)/2) / √(sxx·syy), re = average ranks of ``a`` (NaN if ``a`` is constant).

    ``xu`` = average ranks of u minus (M+1)/2, ``sxx`` = Σ xu², ``syy`` = (M³ − M − Σ(c³ − c))/12
    over the tie groups (sizes c) of ``a``; ``scratch`` = :func:`make_rank_scratch` (M).
    ``a`` must not contain NaN. Equals ``scipy.stats.spearmanr(a, u).statistic``.
    """
    w0, w1, gl, hist, gv = scratch
    m = a.shape[0]
    if m < 2:
        return np.nan
    sh = _sort_first_digit(a, w0, w1, hist)
    h1 = hist[1]
    # step 4, written out (a helper taking arrays would cost refcounts per word) and
    # unrolled twice for two independent sums: final position j = provisional rank
    nc = 0
    s0 = 0.0
    s1 = 0.0
    x0 = 0.0
    x1 = 0.0
    i = 1
    while i <= m:
        w = w1[i]
        q = w >> sh
        j = h1[q]
        h1[q] = j + _ONE
        if ((w0[j - _ONE] ^ w) >> _S32) == _ZERO:  # same t as the word before it
            gl[nc] = j
            nc += 1
        w0[j] = w
        x = xu[w & _LO32]
        s0 += np.float64(j) * x
        x0 += x
        if i == m:
            break
        w = w1[i + 1]
        q = w >> sh
        j = h1[q]
        h1[q] = j + _ONE
        if ((w0[j - _ONE] ^ w) >> _S32) == _ZERO:
            gl[nc] = j
            nc += 1
        w0[j] = w
        x = xu[w & _LO32]
        s1 += np.float64(j) * x
        x1 += x
        i += 2
    ds, ts = _fix_groups(a, w0, gl, nc, gv, w1, xu, gv, False)
    mf = np.float64(m)
    syy = (mf * mf * mf - mf - ts) / 12.0
    num = (s0 + s1) + ds - 0.5 * (mf + 1.0) * (x0 + x1)
    return num / np.sqrt(sxx * syy)


@njit(**NJIT)
def average_ranks(x, out, scratch):
    """out_i = 1-based rank of x_i in increasing order, ties given their average rank (``rankdata``).

    ``scratch`` = :func:`make_rank_scratch` (M); ``x`` must not contain NaN (-0.0 ties with 0.0).
    """
    w0, w1, gl, hist, gv = scratch
    m = x.shape[0]
    if m == 0:
        return
    sh = _sort_first_digit(x, w0, w1, hist)
    h1 = hist[1]
    nc = 0
    for i in range(1, m + 1):
        w = w1[i]
        q = w >> sh
        j = h1[q]
        h1[q] = j + _ONE
        if ((w0[j - _ONE] ^ w) >> _S32) == _ZERO:
            gl[nc] = j
            nc += 1
        w0[j] = w
        out[w & _LO32] = np.float64(j)
    _fix_groups(x, w0, gl, nc, gv, w1, gv, out, True)
