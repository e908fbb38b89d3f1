"""The jackknife of CC: the leave-one-out Spearman ρ of (u, |E|) for every point in O(M log M)
in all (docs/methods.md, "Bootstrap": the jackknife of CC).

:func:`jack_cc_fast_kernel` is one serial pass: the centred ranks of u and |E| from their
prepared tie runs, the sums over the points above or tied with each point in one walk along each
order, and the joint counts of pairs above in both (:func:`_joint_counts`, Fenwick trees over
cache-sized buckets).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT, NJIT_EXACT

__all__ = ["jack_cc_fast_kernel"]


@njit(**NJIT_EXACT)
def _centred_ranks(gs, pos, mid, x):
    """``x[i]`` = (s + 1 + e)/2 − ``mid`` on the tie run [s, e) of ``gs``: ``scipy.stats.rankdata(
    method="average") − mid``, exactly. Run g (ascending values) holds the points
    ``pos[gs[g]:gs[g + 1]]``, or positions ``gs[g]..gs[g + 1] − 1`` for an empty ``pos``."""
    direct = pos.shape[0] == 0
    for g in range(gs.shape[0] - 1):
        a = gs[g]
        b = gs[g + 1]
        r = 0.5 * np.float64(a + 1 + b) - mid
        for k in range(a, b):
            x[k if direct else pos[k]] = r


@njit(**NJIT)
def jack_cc_fast_kernel(ugs, eord, egs, out):
    """Leave-one-out Spearman ρ of (u, |E|) for every point in O(M log M) in all.

    The points are the positions of u in ascending order, ``ugs`` the starts of its tie runs;
    ``eord`` is the stable order of |E| over the positions and ``egs`` the starts of the runs of
    equal |E| along it (:class:`mcref._prepared.Prepared`: ``ugs``, ``eord``, ``egs``).
    Leaving out point j lowers the average rank of every other point by a_i = 1 if its
    value is above the left-out one, ½ if tied (for u; b_i likewise for |E|). With the
    centred ranks x_i = r_i − M/2 (the M − 1 remaining ranks keep the mean M/2):

    Σ_{i≠j}(x_i − a_i)(y_i − b_i) = Σ_{i≠j} x_i y_i − Σ_{i≠j} x_i b_i − Σ_{i≠j} a_i y_i + Σ_{i≠j} a_i b_i,

    and likewise for the squares. The sums of x or y over the points above j (or tied with
    it) come from group sums in sorted order; Σ a_i b_i needs the joint counts
    #{u_i > u_j, |E|_i > |E|_j} (a Fenwick tree over the |E| groups, points taken by
    decreasing u), #{u_i > u_j, |E|_i = |E|_j}, #{u_i = u_j, |E|_i > |E|_j} and the exact
    duplicates (docs/methods.md, "Bootstrap": the jackknife of CC).

    Memory: the group sums of each order are folded into the per-point accumulators of Σxy (in
    ``out``), Σxx, Σyy in one walk along it (:func:`_order_terms`), in
    the order of the expression they enter. Five M-sized float64 arrays are alive (x, y and the
    three accumulators), then three (Σxy, Σxx·Σyy and the joint counts), the joint counts'
    scratch and 12 bytes a point (:func:`_joint_counts`): 44 bytes a point at the peak; no sort
    (the prepared orders).
    """
    m = out.shape[0]
    mid = 0.5 * m
    none = np.empty(0, dtype=eord.dtype)
    x = np.empty(m)
    y = np.empty(m)
    _centred_ranks(ugs, none, mid, x)
    _centred_ranks(egs, eord, mid, y)
    sxy_all = 0.0
    sxx_all = 0.0
    syy_all = 0.0
    for i in range(m):
        sxy_all += x[i] * y[i]
        sxx_all += x[i] * x[i]
        syy_all += y[i] * y[i]
    # sxy = (Σxy − x_j y_j) − s_xb − s_ay + s_ab, sxx = (Σxx − x_j²) − 2 s_xa + s_aa, syy likewise
    axy = out
    for j in range(m):
        axy[j] = sxy_all - x[j] * y[j]
    axx = np.empty(m)
    ayy = np.empty(m)
    _order_terms(egs, eord, mid, syy_all, x, axy, ayy)  # − Σ x_i b_i; Σyy − y_j² − 2 Σ y_i b_i + Σ b_i²
    _order_terms(ugs, None, mid, sxx_all, y, axy, axx)  # − Σ a_i y_i; Σxx − x_j² − 2 Σ x_i a_i + Σ a_i²
    for j in range(m):
        axx[j] = axx[j] * ayy[j]  # sxx·syy, so that ayy is freed before the joint counts (as are x, y)
    sab = np.empty(m)
    _joint_counts(ugs, eord, egs, sab, np.empty(m))
    for j in range(m):
        out[j] = (axy[j] + sab[j]) / np.sqrt(axx[j])


@njit(**NJIT)
def _order_terms(gs, pos, mid, own_all, w, cross, own):
    """The terms of :func:`jack_cc_fast_kernel` along one order: its runs of equal values (run g
    holds the points ``pos[gs[g]:gs[g + 1]]``, or positions ``gs[g]..gs[g + 1] − 1`` for ``pos``
    None), walked from the top run down, each point's terms from its run alone. With v_i the
    run's centred rank, c_k = 1 for a point above the left-out one and ½ for a tied one, and w the
    other variable's centred ranks: ``cross[i] −= Σ_{k≠i} w_k c_k`` and ``own[i] = (own_all − v_i²)
    − 2 Σ_{k≠i} v_k c_k + Σ_{k≠i} c_k²``. Along |E| (``eord``): w = x, cross = Σxy, own = Σyy; along u:
    w = y, cross = Σxy, own = Σxx. The sums over the points above and over a run are of
    half-integers, exact in any order below 2⁵² (M up to ~9·10⁷). One walk, one access per point to
    ``w``, ``cross`` and ``own`` (at random along |E|), where one walk per term read and wrote three
    arrays."""
    aw = 0.0
    av = 0.0
    a1 = 0.0
    for g in range(gs.shape[0] - 2, -1, -1):
        a = gs[g]
        b = gs[g + 1]
        v = 0.5 * np.float64(a + 1 + b) - mid
        tw = 0.0
        tv = 0.0
        for k in range(a, b):
            if pos is None:  # pruned at compile time: one specialization for each order
                i = k
            else:
                i = pos[k]
            tw += w[i]
            tv += v
        t1 = np.float64(b - a)
        for k in range(a, b):
            if pos is None:
                i = k
            else:
                i = pos[k]
            cross[i] = cross[i] - (aw + 0.5 * (tw - w[i]))
            o = own_all - v * v
            o = o - 2.0 * (av + 0.5 * (tv - v))
            own[i] = o + (a1 + 0.25 * (t1 - 1.0))
        aw += tw
        av += tv
        a1 += t1


@njit(**NJIT)
def _joint_counts(ugs, eord, egs, sab, scratch):
    """``sab[j]`` = Σ_{i≠j} a_i b_i of :func:`jack_cc_fast_kernel` = d1 + ½d2 + ½d3 + ¼d4, with
    d1 = #{u_i > u_j, |E|_i > |E|_j}, d2 = #{u_i > u_j, |E|_i = |E|_j}, d3 = #{u_i = u_j, |E|_i > |E|_j},
    d4 = #{u_i = u_j, |E|_i = |E|_j, i ≠ j}. ``scratch``: a free float64 array of M (its bytes hold
    two int32 arrays); 12 bytes a point besides.

    d1 and d2 in two cache-sized passes over the |E| groups cut into ~√n_y buckets of 2**s
    consecutive groups (one Fenwick tree over all n_y groups, 4·n_y bytes walked at random, missed
    the caches at M = 10⁷: 3.9 s there, 1.6 s now): (1) the u groups by decreasing u, each queried
    then inserted in a Fenwick tree over the buckets, give #{u_i > u_j, bucket_i > bucket_j}; (2)
    one scatter lays out each bucket's points by decreasing u, with their count from (1), their
    group within the bucket and whether they share the u group of the point before them (all read
    in order); each u group of a bucket, queried then inserted in a Fenwick tree over the bucket's
    groups, gives #{u_i > u_j, same bucket, |E|_i > |E|_j} and d2. Integer counts: the same ``sab``
    as any other way of counting, bit for bit. d3 and d4 by sorting each u group's |E| groups (a u
    group of one point has none)."""
    m = sab.shape[0]
    ny = egs.shape[0] - 1
    gy = np.empty(m, dtype=np.int32)  # the |E| group of each point
    for g in range(ny):
        for k in range(egs[g], egs[g + 1]):
            gy[eord[k]] = g
    ints = scratch.view(np.int32)
    cnt = ints[:m]  # pass 1's count of each point
    lf = ints[m:2 * m]  # pass 2, in bucket order: group within the bucket << 1 | same u group as the one before
    s = 0
    while (np.int64(1) << (2 * s)) < ny:  # buckets of 2**s groups, about √n_y of them
        s += 1
    nb = ((ny - 1) >> s) + 1
    tree = np.zeros(nb + 1, dtype=np.int32)  # counts <= M < 2**31
    inserted = np.int32(0)
    for gu in range(ugs.shape[0] - 2, -1, -1):  # pass 1: the buckets above
        k0 = ugs[gu]
        k1 = ugs[gu + 1]
        for i in range(k0, k1):
            le = np.int32(0)  # inserted with a bucket <= this one's
            p = (gy[i] >> s) + 1
            while p > 0:
                le += tree[p]
                p -= p & (-p)
            cnt[i] = inserted - le
        for i in range(k0, k1):
            p = (gy[i] >> s) + 1
            while p <= nb:
                tree[p] += 1
                p += p & (-p)
        inserted += np.int32(k1 - k0)
    start = np.zeros(nb + 1, dtype=np.int64)  # pass 2: each bucket's points by decreasing u
    for i in range(m):
        start[(gy[i] >> s) + 1] += 1
    for b in range(nb):
        start[b + 1] += start[b]
    fill = start[:nb].copy()
    last = np.full(nb, -1, dtype=np.int64)  # the u group of each bucket's last point laid out
    rec = np.empty(m, dtype=np.int64)  # point << 32 | its count from pass 1, in bucket order
    gu = ugs.shape[0] - 2
    for i in range(m - 1, -1, -1):  # in order: gy, cnt read in sequence, nb write streams
        while ugs[gu] > i:
            gu -= 1
        g = gy[i]
        b = g >> s
        f = fill[b]
        rec[f] = (np.int64(i) << 32) | np.int64(cnt[i])
        lf[f] = ((g - np.int32(b << s)) << 1) | np.int32(last[b] == gu)
        last[b] = gu
        fill[b] = f + 1
    width = np.int64(1) << s
    fine = np.zeros(width + 1, dtype=np.int32)
    for b in range(nb):
        a1 = start[b + 1]
        ins = np.int32(0)
        q = start[b]
        while q < a1:
            r = q + 1  # the points of one u group in this bucket: q … r − 1
            while r < a1 and (lf[r] & 1) == 1:
                r += 1
            for t in range(q, r):
                le = np.int32(0)  # inserted with a group <= this one's
                p = (lf[t] >> 1) + 1
                while p > 0:
                    le += fine[p]
                    p -= p & (-p)
                lt = np.int32(0)  # inserted with a group < this one's
                p = lf[t] >> 1
                while p > 0:
                    lt += fine[p]
                    p -= p & (-p)
                x = rec[t]
                sab[x >> 32] = np.float64(np.int32(x & 0xFFFFFFFF) + ins - le) + 0.5 * np.float64(le - lt)
            for t in range(q, r):
                p = (lf[t] >> 1) + 1
                while p <= width:
                    fine[p] += 1
                    p += p & (-p)
            ins += np.int32(r - q)
            q = r
        fine[:] = 0
    for gu in range(ugs.shape[0] - 1):  # d3, d4: within each u group of two points or more
        k0 = ugs[gu]
        k1 = ugs[gu + 1]
        if k1 - k0 < 2:
            continue
        ys = np.empty(k1 - k0, dtype=np.int32)
        for i in range(k0, k1):
            ys[i - k0] = gy[i]
        ys.sort()
        for i in range(k0, k1):
            g = gy[i]
            lo = np.searchsorted(ys, g, side="left")
            hi = np.searchsorted(ys, g, side="right")
            sab[i] = sab[i] + 0.5 * np.float64(ys.shape[0] - hi) + 0.25 * np.float64(hi - lo - 1)
