"""Average ranks and Spearman's ρ against a fixed u, by a radix sort of IEEE keys
(docs/methods.md, "Simulated references").

The simulated reference of CC ranks a fresh ``a = |E*|`` 10⁴ times against the same u.
NumPy's AVX-512 ``argsort`` is ~7× faster than numba's ``np.argsort`` on such a machine;
this module beats both with a sort that exploits the data:

1. **Keys.** The IEEE-754 bits of a float64 read as an integer are monotone in the value
   (negatives flipped): ``key = 2**63 ± |bits|`` is a uint64 in value order, -0.0 and
   +0.0 on one key. One vectorised pass computes the keys and their min/max (a NaN is
   seen there: the kernels then return NaN).
2. **Truncated key.** ``t = (key − kmin) >> s`` with the smallest shift ``s`` that makes
   ``t < 2**(2D)`` (``D = 11`` at M ≈ 14 000, :func:`radix_bits`). The shift comes from
   the actual range, so no level lies below the smallest value; the ~20 binades that |E|
   spans (tiny |ε|) still get ~2¹⁸ levels each. Each point becomes one word
   ``t << 32 | i``.
3. **LSD radix sort on t**: two stable counting passes of ``D`` bits (one histogram pass
   for both digits, two scatter passes); the counters (2 × 2**D) stay in L1.
4. **Rank pass.** The second scatter puts each word at its final position ``j`` and, in
   the same loop, adds ``j·xu[i]`` to Σ (or writes ``out[i] = j``): no extra pass. It
   also compares the word with the one just before it in the output; an equal ``t``
   (values closer than one level, or exact ties) is recorded as a collision (~100 at
   M ≈ 14 000 with normal ε).
5. **Runs of equal t** are sorted by the actual values and their provisional ranks are
   replaced by the average ranks of their value-ties; ``Σ (c³ − c)`` over the ties
   (sizes c) corrects ``syy``. Short runs: insertion sort. Runs longer than 32 (many
   exact ties, or values squeezed into one level by a far outlier, e.g. 1 + 1e-9·U next
   to 1e300) get the same two-digit radix sort on their own key range (ties: one key,
   done at once); what is still equal after that is insertion-sorted, with a heapsort
   once that passes 8n + 64 moves, so no input is quadratic.

From ``BUCKET_MIN_M`` = 3·2**17 points on (where ``16·M`` bytes leave the caches and
the random reads ``xu[i]``, ``a[i]`` of steps 4–5 dominate: 40–65 ns per point at
M = 10⁶ against 5–6 ns at 10⁴–10⁵), :func:`spearman_fixed_u` ranks by
:func:`spearman_bucketed` instead: one scatter of interleaved ``(key, xu_i)`` pairs into
~M/256 buckets by the top bits of the key, then each bucket sorted and ranked in L1
(18–29 ns per point at 10⁶ on this 2-core VM under load, 1.5–1.6× the one-thread NumPy
``standard_normal`` floor of the same run, from 3.4–3.6×). Below ~4·10⁵ points the radix
path is faster (2–2.6× at 10⁴–1.3·10⁵, even at 2.6·10⁵; ``benchmarks/bench_scale_m.py``).

Cost: O(M + 2**D) per call, four passes over M words (keys, histograms, two scatters),
nothing allocated (all buffers come from :func:`make_rank_scratch`, once per chunk).
Exact up to M ≈ 2·10⁵: ranks are multiples of 1/2, so every term and partial sum of
``Σ rank·xu`` is a multiple of 1/4 of magnitude below M³/4, which float64 adds exactly in any
order while M³ < 2**53; beyond that (the bucketed path at 10⁶) the sum is correct to rounding.

Why this variant (all measured at M = 13 885, one core, same machine): a single
counting sort on 2**14–2**16 buckets + insertion sort took 48–55 µs (the table leaves
L1, the prefix sum runs over every bucket, and the dense binades leave 3 000–9 000
insertion moves); LSD scatters of separate (value, payload) arrays ≈ 47 µs; three
8-bit digits ≈ 60 µs (a scatter pass costs ~7 µs whatever the digit width from 6 to 12
bits); packed words with a separate final rank pass ≈ 42 µs. Two details matter as
much as the algorithm: unsigned indices (signed ones cost numba's negative-index
check, +30 % per scatter), and no helper calls with array arguments inside hot loops
(each costs atomic reference counts: 8× slower).

Measured (AMD EPYC Zen 5, AVX-512; ``benchmarks/bench_rank.py``: M = 13 885, QM9_E u
with 135 distinct values, a fresh ``a = |u·N(0, 1)|`` per call): :func:`spearman_fixed_u`
≈ 32–37 µs per call, ``np.argsort(a)`` alone ≈ 118–139 µs (3.7×), ``np.argsort`` +
NumPy ranks and sum ≈ 260 µs (7×), numba ``np.argsort`` + loop ≈ 980 µs (27×). Many
exact ties cost more (up to ~3× with a third of zeros or 5 distinct values: the
counters of the scatter passes then update the same slot over and over), still well
under numba's argsort.
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
_KEY_PINF = np.uint64(0x8000000000000000 + 0x7FF0000000000000)  # _key(+inf); NaNs lie outside
_KEY_NINF = np.uint64(0x8000000000000000 - 0x7FF0000000000000)  # _key(-inf)


def radix_bits(m: int) -> int:
    """Digit width ``D`` for ``m`` points: ``clip(ceil(log2 m) − 3, 8, 13)`` (11 at M = 13 885).

    Measured optimum: fewer bits make the runs of equal t longer, more bits make the
    tables (2 × 2**D counters) leave L1 and the prefix sums longer.
    """
    m = max(int(m), 2)
    return min(13, max(8, (m - 1).bit_length() - 3))


def make_rank_scratch(m: int, *, spearman_only: bool = False) -> tuple:
    """Scratch buffers of :func:`spearman_fixed_u` and :func:`average_ranks` for ``m`` points.

    Returns ``(w0, w1, gl, hist, gv, rec)``: ``w0``, ``w1`` uint64 ``(m+1,)`` (sort words),
    ``gl`` uint64 ``(m,)`` (collision positions), ``hist`` uint64 ``(2, 2**D)`` (digit
    counters, ``D = radix_bits(m)``; the kernels read ``D`` from this shape, any power
    of two with ``D <= 15`` works), ``gv`` float64 ``(m,)`` (values of a run) and ``rec``
    uint64 ``(2m,)`` (the (key, weight) pairs of :func:`spearman_bucketed`).
    Allocate once per chunk (per thread) and pass the tuple itself to the kernels, for
    every call with the same ``m``; two threads must not share one.

    ``spearman_only``: the scratch of :func:`spearman_fixed_u` alone, which from
    ``BUCKET_MIN_M`` points on takes the bucketed path and never reads ``w0`` nor ``gl``:
    those two are then one word each (16·M bytes less per thread: 160 MB at M = 10⁷).
    Not for :func:`average_ranks` nor :func:`spearman_radix`. Below ``BUCKET_MIN_M`` (the
    radix path) its ``rec`` is ``None``: a kernel that takes ``rec`` as an argument can test
    ``rec is None``, which numba decides at compile time, and leave the bucketed path
    uncompiled (:func:`mcref.kernels.reference._repeat_stats`).
    """
    return tuple(None if shape is None else np.empty(shape, dtype)
                 for shape, dtype in _rank_scratch_shapes(m, spearman_only))


def rank_scratch_bytes(m: int, *, spearman_only: bool = False) -> int:
    """Bytes of :func:`make_rank_scratch` (``m``, ``spearman_only``), without allocating them.

    Examples
    --------
    >>> rank_scratch_bytes(10**7, spearman_only=True) // 10**7  # w1, gv and rec: 32 bytes a point
    32
    """
    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
               for shape, dtype in _rank_scratch_shapes(m, spearman_only) if shape is not None)


def _rank_scratch_shapes(m: int, spearman_only: bool) -> list:
    """The ``(shape, dtype)`` of each buffer of :func:`make_rank_scratch`."""
    m = int(m)
    if not 0 <= m < 2**32:
        raise ValueError(f"`m` must be >= 0 and < 2**32 (a point index fills 32 bits of a word), got {m}")
    d = radix_bits(m)
    u64, f64 = np.uint64, np.float64
    if spearman_only and m >= BUCKET_MIN_M and (1 << d) >= 1024:  # spearman_bucketed: rec, w1, gv, hist
        return [(1, u64), (m + 1, u64), (1, u64), ((2, 1 << d), u64), (m, f64), (2 * m, u64)]
    n = max(m, 1)
    if spearman_only:  # spearman_radix alone: no rec (None)
        return [(m + 1, u64), (m + 1, u64), (n, u64), ((2, 1 << d), u64), (n, f64), (None, u64)]
    return [(m + 1, u64), (m + 1, u64), (n, u64), ((2, 1 << d), u64), (n, f64), (2 * n, u64)]


@njit(**NJIT)
def _key(b):
    """Monotone uint64 key of the float64 whose bits are ``b``: 2**63 ± |b| (±0.0 → 2**63)."""
    mag = b & _MAG
    s = b >> _S63
    return _TOP + ((mag ^ (_ZERO - s)) + s)


@njit(**NJIT)
def _shift_for(kmin, kmax, nb):
    """``(D, mask, s)`` for tables of ``nb = 2**D`` counters: smallest ``s`` with
    ``(kmax − kmin) >> s < 2**(2D)``."""
    d = _ZERO
    while (_ONE << d) < uint64(nb):
        d += _ONE
    mask = uint64(nb - 1)
    tmax = (mask << d) | mask
    r = kmax - kmin
    s = _ZERO
    while (r >> s) > tmax:
        s += _ONE
    return d, mask, s


@njit(**NJIT)
def _sort_first_digit(a, w0, w1, hist):
    """Steps 1–3 up to the first scatter.

    Leaves ``w1[1..m]`` = words ``t<<32 | i`` stably sorted by the low digit of t,
    ``hist[1]`` = 1-based start positions of the high-digit buckets, ``w0[0]`` = a
    sentinel (its t never equals a real t < 2**26). Returns the shift of the high digit
    within a word; 0 when all values are equal and 1 when one is NaN (nothing is
    sorted then).
    """
    m = a.shape[0]
    bits = a.view(np.uint64)
    kmin = _ALL
    kmax = _ZERO
    for i in range(m):  # vectorised: keys and their range
        k = _key(bits[i])
        w0[i + 1] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    if kmax > _KEY_PINF or kmin < _KEY_NINF:
        return _ONE
    if kmin == kmax:
        return _ZERO
    nb = hist.shape[1]
    d, mask, s = _shift_for(kmin, kmax, nb)
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
    w0[0] = _ALL
    return _S32 + d


@njit(**NJIT)
def _heapsort2(v, p, n):
    """Heapsort of ``v[:n]`` carrying ``p`` along: the O(n log n) guard of the insertion sorts."""
    for start in range(n // 2 - 1, -1, -1):
        _sift2(v, p, start, n)
    for end in range(n - 1, 0, -1):
        tv = v[0]
        v[0] = v[end]
        v[end] = tv
        tp = p[0]
        p[0] = p[end]
        p[end] = tp
        _sift2(v, p, np.int64(0), end)  # not a literal: one signature of _sift2


@njit(**NJIT, inline="always")
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
def _sort_long_run(a, gi, gv, n, hist):
    """Sort a long run (n > 32) of indices ``gi[:n]`` by value, values to ``gv[:n]``.

    The run's own key range gets the same two-digit LSD sort (a run of values closer
    than one key level of the whole array is spread again over 2**(2D) levels); ties in
    the run (one key) return at once; what is left equal on the finer key is finished
    by insertion sort, and by heapsort if that passes 8n + 64 moves. ``gv`` doubles as
    the word buffer (read before written at each index).
    """
    tmp = gv.view(np.uint64)
    bits = a.view(np.uint64)
    kmin = _ALL
    kmax = _ZERO
    for q in range(n):
        k = _key(bits[gi[q]])
        tmp[q] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    if kmin == kmax:  # one value: any order is sorted
        for q in range(n):
            gv[q] = a[gi[q]]
        return
    nb = hist.shape[1]
    d, mask, s = _shift_for(kmin, kmax, nb)
    h0 = hist[0]
    h1 = hist[1]
    h0[:] = 0
    h1[:] = 0
    for q in range(n):
        t = (tmp[q] - kmin) >> s
        tmp[q] = (t << _S32) | gi[q]
        h0[t & mask] += _ONE
        h1[t >> d] += _ONE
    c0 = _ZERO
    c1 = _ZERO
    for b in range(nb):
        x = h0[b]
        h0[b] = c0
        c0 += x
        x = h1[b]
        h1[b] = c1
        c1 += x
    for q in range(n):
        w = tmp[q]
        b = (w >> _S32) & mask
        j = h0[b]
        h0[b] = j + _ONE
        gi[j] = w
    sh = _S32 + d
    for q in range(n):
        w = gi[q]
        b = w >> sh
        j = h1[b]
        h1[b] = j + _ONE
        tmp[j] = w
    budget = 8 * n + 64
    tprev = _ALL
    for q in range(n):  # unpack in place; insertion sort inside runs of equal t
        w = tmp[q]
        i = w & _LO32
        v = a[i]
        t = w >> _S32
        p = q
        if t == tprev and budget >= 0:
            while p > 0 and v < gv[p - 1]:
                gv[p] = gv[p - 1]
                gi[p] = gi[p - 1]
                p -= 1
            budget -= q - p
        tprev = t
        gv[p] = v
        gi[p] = i
    if budget < 0:
        _heapsort2(gv, gi, n)


@njit(**NJIT)
def _fix_groups(a, w0, gl, nc, gv, gi, hist, xu, out, want_ranks):
    """Step 5 for every run of equal t in ``w0[1..m]``: sort the run by value and give its
    value-ties the average of their positions.

    The runs are found from the collision list ``gl[:nc]`` or, when it is long (many
    ties), by a sequential scan. ``want_ranks``: write the ranks to ``out[i]``; else
    return ``Σ (new − provisional rank)·xu_i``. Also returns ``Σ (c³ − c)`` over the
    value-ties (sizes c). One call per kernel call: a numba call with array arguments
    costs atomic reference counts, so the loops below are not split into helpers.
    """
    m = a.shape[0]
    ds = 0.0
    ts = 0.0
    scan = nc > (m >> 4)
    c = 0
    k = 1
    while True:
        if scan:
            while k < m and (w0[k + 1] >> _S32) != (w0[k] >> _S32):
                k += 1
            if k >= m:
                break
            g0 = k
        else:
            if c >= nc:
                break
            j = np.int64(gl[c])
            c += 1
            t = w0[j] >> _S32
            if (w0[j - 1] >> _S32) != t:
                continue  # stale hit: different t in the final order
            if j >= 2 and (w0[j - 2] >> _S32) == t:
                continue  # not the first pair of its run: handled from the first pair
            g0 = j - 1
        t = w0[g0] >> _S32
        g1 = g0 + 1
        while g1 < m and (w0[g1 + 1] >> _S32) == t:
            g1 += 1
        k = g1 + 1
        n = g1 - g0 + 1
        for q in range(n):  # indices in placement order; drop their provisional ranks
            i = w0[g0 + q] & _LO32
            gi[q] = i
            if not want_ranks:
                ds -= np.float64(g0 + q) * xu[i]
        if n > 32:
            _sort_long_run(a, gi, gv, n, hist)
        else:
            for q in range(n):  # insertion sort, at most 496 moves
                i = gi[q]
                v = a[i]
                p = q
                while p > 0 and v < gv[p - 1]:
                    gv[p] = gv[p - 1]
                    gi[p] = gi[p - 1]
                    p -= 1
                gv[p] = v
                gi[p] = i
        q = 0
        while q < n:  # value-ties share the average of their positions
            q0 = q
            while q + 1 < n and gv[q + 1] == gv[q0]:
                q += 1
            r = g0 + 0.5 * (q0 + q)
            if want_ranks:
                for p in range(q0, q + 1):
                    out[gi[p]] = r
            else:
                sx = 0.0
                for p in range(q0, q + 1):
                    sx += xu[gi[p]]
                ds += r * sx
            cnt = np.float64(q - q0 + 1)
            ts += cnt * cnt * cnt - cnt
            q += 1
    return ds, ts


#: from this many points on, :func:`spearman_fixed_u` ranks by :func:`spearman_bucketed`
BUCKET_MIN_M = 3 << 17
#: average points per first-pass bucket of :func:`spearman_bucketed` (a bucket's keys and weights stay in L1)
_BUCKET_POINTS = 256


@njit(**NJIT)
def spearman_bucketed(a, xu, sxx, scratch):
    """Spearman's ρ of ``a`` against the fixed u by cache-sized buckets: the same value as
    :func:`spearman_fixed_u` (to the rounding of the reordered sum), for large M.

    1. Keys (:func:`_key`) and their range, one vectorised pass.
    2. **Buckets**: a histogram of the top bits of ``key − kmin`` into ``≈ M/256`` buckets
       (a power of two), then one scatter of the pairs ``(key, xu_i)``: xu travels with its
       key, so nothing is read at random afterwards (at M = 10⁶ the random reads of the
       radix rank pass, ``xu[i]`` and ``a[i]``, are what made it 5–10× slower per point).
    3. **Each bucket**, in L1: a counting sort of its pairs on ``≈ n`` levels of its own key
       range (so an uneven density does not matter), then an insertion sort on the full
       key (a heapsort once it passes 8n + 64 moves). A bucket without equal keys (the rule
       for continuous |E*|; checked by one compare loop without branches) adds
       ``base·Σ xu + Σ q·xu_q`` (ranks lo + 1 + q, base = lo + 1 − (M+1)/2) in two independent
       sums instead of one dependent chain per point (1.13–1.19× faster at M = 5·10⁵–10⁶);
       otherwise one pass gives runs of equal keys (exact ties: equal values) their average
       rank r and adds ``(r − (M+1)/2)·Σ xu`` and ``c³ − c``.

    ρ = Σ (r_i − (M+1)/2)·xu_i / √(sxx·syy), syy = (M³ − M − Σ(c³ − c))/12, as
    :func:`spearman_fixed_u` (Spearman 1904; ``scipy.stats.spearmanr``). NaN for a constant
    ``a`` or a NaN in it. ``scratch`` = :func:`make_rank_scratch` (M) with a table of at least
    2**10 counters per row (M ≥ 2**13); uses ``rec`` (the bucketed pairs, interleaved: one
    write stream per bucket), ``w1``/``gv`` (a bucket sorted) and ``hist``.
    """
    rec, tk, tx = scratch[5], scratch[1], scratch[4]
    recx = rec.view(np.float64)
    hist = scratch[3]
    m = a.shape[0]
    if m < 2:
        return np.nan
    bits = a.view(np.uint64)
    kmin, kmax = _key_range(bits)
    if kmax > _KEY_PINF or kmin < _KEY_NINF or kmin == kmax:
        return np.nan
    nt = hist.shape[1]
    nb = 64
    while nb < nt and nb * _BUCKET_POINTS < m:
        nb *= 2
    h = hist[0]
    _scatter_buckets(bits, xu, kmin, kmax, nb, h, rec, recx)
    c0 = 0.5 * (np.float64(m) + 1.0)
    num = 0.0
    ts = 0.0
    lo = 0
    for b in range(nb):
        hi = np.int64(h[b])
        n = hi - lo
        if n == 1:
            num += (np.float64(lo) + 1.0 - c0) * recx[2 * lo + 1]
        elif n > 1:
            num, ts = _bucket_terms(rec, recx, lo, hi, c0, nt, hist[1], tk, tx, num, ts)
        lo = hi
    mf = np.float64(m)
    syy = (mf * mf * mf - mf - ts) / 12.0
    return num / np.sqrt(sxx * syy)


@njit(**NJIT, inline="always")
def _key_range(bits):
    """(min, max) of the keys (:func:`_key`) of ``bits``: step 1 of :func:`spearman_bucketed`
    (read only: the keys are recomputed in the next two passes)."""
    kmin = _ALL
    kmax = _ZERO
    for i in range(bits.shape[0]):
        k = _key(bits[i])
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    return kmin, kmax


@njit(**NJIT, inline="always")
def _scatter_buckets(bits, xu, kmin, kmax, nb, h, rec, recx):
    """Step 2 of :func:`spearman_bucketed`: the histogram of the top bits of ``key − kmin`` into
    ``nb`` buckets, then one scatter of the pairs ``(key, xu_i)`` into ``rec``/``recx``
    (interleaved); afterwards ``h[b]`` is the end of bucket b."""
    m = bits.shape[0]
    r = kmax - kmin
    s = _ZERO
    while (r >> s) >= uint64(nb):
        s += _ONE
    for b in range(nb):
        h[b] = 0
    for i in range(m):
        h[(_key(bits[i]) - kmin) >> s] += _ONE
    c = _ZERO
    for b in range(nb):
        x = h[b]
        h[b] = c
        c += x
    for i in range(m):  # scatter (key, xu)
        k = _key(bits[i])
        b = (k - kmin) >> s
        j = h[b]
        h[b] = j + _ONE
        rec[2 * j] = k
        recx[2 * j + 1] = xu[i]


@njit(**NJIT, inline="always")
def _bucket_terms(rec, recx, lo, hi, c0, nt, hs, tk, tx, num, ts):
    """Step 3 of :func:`spearman_bucketed` for the bucket ``[lo, hi)`` of two or more pairs:
    ``num`` and ``ts`` plus its terms of Σ (r_i − c0)·xu_i and Σ (c³ − c) over its tie groups
    (added in the order of the single loop it was, so the sums round alike)."""
    n = hi - lo
    bmin = _ALL
    bmax = _ZERO
    for q in range(lo, hi):
        k = rec[2 * q]
        bmin = min(bmin, k)
        bmax = max(bmax, k)
    if bmin == bmax:  # one value: one tie group
        sx = 0.0
        for q in range(lo, hi):
            sx += recx[2 * q + 1]
        fn = np.float64(n)
        return num + (np.float64(lo) + 0.5 * (fn + 1.0) - c0) * sx, ts + (fn * fn * fn - fn)
    _sort_bucket(rec, recx, lo, hi, bmin, bmax, nt, hs, tk, tx)
    return _sorted_bucket_terms(tk, tx, n, np.float64(lo) + 1.0 - c0, num, ts)


@njit(**NJIT, inline="always")
def _sort_bucket(rec, recx, lo, hi, bmin, bmax, nt, hs, tk, tx):
    """The pairs of the bucket ``[lo, hi)`` sorted by key into ``tk``, ``tx`` [0, n): a counting
    sort on ``≈ n`` levels of its own key range, then an insertion sort on the full key with a
    move budget (8n + 64) and a heapsort fallback."""
    n = hi - lo
    ns = 1
    while ns < n and ns < nt:
        ns *= 2
    rb = bmax - bmin
    s2 = _ZERO
    while (rb >> s2) >= uint64(ns):
        s2 += _ONE
    for q in range(ns):
        hs[q] = 0
    for q in range(lo, hi):
        hs[(rec[2 * q] - bmin) >> s2] += _ONE
    c = _ZERO
    for q in range(ns):
        x = hs[q]
        hs[q] = c
        c += x
    for q in range(lo, hi):  # counting sort of the bucket into tk, tx [0, n)
        k = rec[2 * q]
        g = (k - bmin) >> s2
        j = hs[g]
        hs[g] = j + _ONE
        tk[j] = k
        tx[j] = recx[2 * q + 1]
    budget = 8 * n + 64
    # insertion sort on the full key (nearly sorted), with a move budget and a heapsort
    # fallback: not the run sort of spearman_fixed_u (values, no budget), kept apart. The
    # largest key so far stays in a register (``top``): a key in order is neither stored back
    # nor compared with one just stored, so most points wait on no store (store-to-load
    # forwarding was on the loop's path). spearman_bucketed at M = 10⁶–4·10⁶, old against new
    # interleaved in one process: 0.96–1.14× (median 1.06×) over seven runs, same value each repeat
    top = tk[0]
    for q in range(1, n):
        k = tk[q]
        if k < top:  # out of order: shift the larger keys up (top is then at q again)
            x = tx[q]
            p = q
            while p > 0 and k < tk[p - 1]:
                tk[p] = tk[p - 1]
                tx[p] = tx[p - 1]
                p -= 1
            tk[p] = k
            tx[p] = x
            budget -= q - p
            if budget < 0:
                break
        else:
            top = k
    if budget < 0:
        _heapsort2(tk, tx, n)


@njit(**NJIT, inline="always")
def _sorted_bucket_terms(tk, tx, n, base, num, ts):
    """``num`` + Σ (rank − c0)·xu and ``ts`` + Σ (c³ − c) over a sorted bucket whose first rank
    is ``base`` + c0."""
    eq = 0  # equal neighbours (exact ties): a compare loop without branches
    for q in range(n - 1):
        eq += tk[q + 1] == tk[q]
    if eq == 0:  # the rule: ranks lo + 1 + q, so Σ (rank − c0)·xu = base·Σ xu + Σ q·xu
        sx = 0.0
        sqx = 0.0
        for q in range(n):
            sx += tx[q]
            sqx += np.float64(q) * tx[q]
        return num + (base * sx + sqx), ts
    q = 0
    while q < n:  # runs of equal keys share the average of their ranks
        q0 = q
        k = tk[q]
        sx = tx[q]
        while q + 1 < n and tk[q + 1] == k:
            q += 1
            sx += tx[q]
        num += (base + 0.5 * np.float64(q0 + q)) * sx
        if q > q0:
            fn = np.float64(q - q0 + 1)
            ts += fn * fn * fn - fn
        q += 1
    return num, ts


@njit(**NJIT, inline="always")
def spearman_fixed_u(a, xu, sxx, scratch):
    """ρ = Σ xu_i·(re_i − (M+1)/2) / √(sxx·syy), re = average ranks of ``a``; NaN if ``a`` is constant.

    ``xu`` = average ranks of u minus (M+1)/2, ``sxx`` = Σ xu², ``syy`` = (M³ − M − Σ(c³ − c))/12
    over the tie groups (sizes c) of ``a``; ``scratch`` = :func:`make_rank_scratch` (M).
    A NaN in ``a`` gives NaN. Equals ``scipy.stats.spearmanr(a, u).statistic``.
    :func:`spearman_radix` below ``BUCKET_MIN_M`` points, :func:`spearman_bucketed` from there on
    (its scattered pairs avoid the random reads that dominate once M·16 bytes leaves the caches).
    """
    if a.shape[0] >= BUCKET_MIN_M and scratch[3].shape[1] >= 1024:
        return spearman_bucketed(a, xu, sxx, scratch)
    return spearman_radix(a, xu, sxx, scratch)


@njit(**NJIT)
def spearman_radix(a, xu, sxx, scratch):
    """:func:`spearman_fixed_u` by the two-digit radix sort of the module docstring (steps 1–5)."""
    m = a.shape[0]
    w0, w1, gl, hist, gv = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    if m < 2:
        return np.nan
    sh = _sort_first_digit(a, w0, w1, hist)
    if sh <= _ONE:
        return np.nan  # a constant (syy = 0) or a NaN in a: the caller reports it
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
    ds, ts = _fix_groups(a, w0, gl, nc, gv, w1, hist, xu, gv, False)
    mf = np.float64(m)
    syy = (mf * mf * mf - mf - ts) / 12.0
    num = (s0 + s1) + ds - 0.5 * (mf + 1.0) * (x0 + x1)
    return num / np.sqrt(sxx * syy)


@njit(**NJIT)
def average_ranks(x, out, scratch):
    """out_i = 1-based rank of x_i in increasing order, ties given their average rank (``rankdata``).

    ``scratch`` = :func:`make_rank_scratch` (M); -0.0 ties with 0.0; a NaN in ``x`` makes all NaN.
    """
    w0, w1, gl, hist, gv = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    m = x.shape[0]
    if m == 0:
        return
    sh = _sort_first_digit(x, w0, w1, hist)
    if sh == _ZERO:
        out[:] = 0.5 * (m + 1.0)
        return
    if sh == _ONE:
        out[:] = np.nan  # as rankdata(nan_policy="propagate")
        return
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
    _fix_groups(x, w0, gl, nc, gv, w1, hist, gv, out, True)
