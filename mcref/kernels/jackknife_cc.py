"""The jackknife of CC: the leave-one-out Spearman ρ of (u, |E|) for every point in O(M log M)
in all (docs/methods.md, "Bootstrap": the jackknife of CC).

The pass is cut into steps, each a kernel over a range of blocks, so that threads share every
step (:func:`mcref.resampling._jackknife.cc_jackknife` runs them in order). The blocks are whole runs of tied
values (of u, or of |E| along its order), their number a function of M alone (never of the
thread count), and every sum that crosses blocks is either exact (sums of half-integers: the
walks' running sums; integer counts) or made block by block in a fixed order (Σx², Σy², Σxy),
so that the values do not depend on the threads:

1. :func:`cc_ranks`: the centred ranks of u and of |E| (with each point's |E| run), one call each;
2. :func:`cc_block_sums`: each u block's Σxy, Σx², Σy², Σy, its Σx per block of |E| runs and its
   points per bucket of |E| runs;
3. :func:`cc_walk` along |E|, then along u, each block from its running sums at the top;
4. :func:`cc_layout`, :func:`cc_pass2`: the joint counts by cache-sized buckets of |E| runs
   (Fenwick trees over the buckets, then within each);
5. :func:`cc_finish`: the pairs tied in u, and the values.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT

__all__ = ["cc_ranks", "cc_block_sums", "cc_walk", "cc_layout", "cc_pass2", "cc_finish"]


@njit(**NJIT)
def cc_ranks(c0, c1, gs, bl, pos, mid, r, gid, tot):
    """Blocks ``c0 … c1 − 1``: ``r[i]`` = (s + 1 + e)/2 − ``mid`` for the points i of each tie run
    [s, e) of ``gs`` (``scipy.stats.rankdata(method="average") − mid``, exactly). Block c holds the
    runs ``bl[c] … bl[c + 1] − 1``; run g holds the points ``pos[gs[g]:gs[g + 1]]``, or the
    positions ``gs[g] … gs[g + 1] − 1`` for ``pos`` None. Unless None, ``gid[i]`` = g (its run).
    ``tot[c]`` = Σ r over the block (half-integers: an exact sum)."""
    for c in range(c0, c1):
        sv = 0.0
        for g in range(bl[c], bl[c + 1]):
            a = gs[g]
            b = gs[g + 1]
            v = 0.5 * np.float64(a + 1 + b) - mid
            for k in range(a, b):
                if pos is None:  # pruned at compile time: one specialization for each order
                    i = k
                else:
                    i = pos[k]
                r[i] = v
                if gid is not None:
                    gid[i] = g
            sv += v * np.float64(b - a)
        tot[c] = sv


@njit(**NJIT)
def cc_block_sums(c0, c1, gs, bl, x, y, gy, t, out, xe, s, counts):
    """Blocks ``c0 … c1 − 1`` (positions ``gs[bl[c]] … gs[bl[c + 1]] − 1``): ``out[c]`` = (Σxy, Σx²,
    Σy², Σy) over the block, summed block by block in block order by the caller (the same bits
    for any thread count; below M ≈ 3·10⁵ every sum of quarter-integers is exact anyway),
    ``xe[c, e]`` = Σx over the block's points whose |E| run ``gy`` is in |E| block e = ``gy >> t``
    (half-integers: exact; read in order, where a walk along |E| would read x at random), and
    ``counts[c, b]`` = the block's points whose |E| run falls in bucket b = ``gy >> s`` (buckets of
    2**s consecutive runs: the joint counts' layout, :func:`cc_layout`)."""
    for c in range(c0, c1):
        sxy = 0.0
        sxx = 0.0
        syy = 0.0
        sy = 0.0
        xe[c, :] = 0.0
        counts[c, :] = 0
        for i in range(gs[bl[c]], gs[bl[c + 1]]):
            sxy += x[i] * y[i]
            sxx += x[i] * x[i]
            syy += y[i] * y[i]
            sy += y[i]
            xe[c, gy[i] >> t] += x[i]
            counts[c, gy[i] >> s] += 1
        out[c, 0] = sxy
        out[c, 1] = sxx
        out[c, 2] = syy
        out[c, 3] = sy


@njit(**NJIT)
def cc_walk(c0, c1, gs, bl, pos, mid, own_all, cross_all, top, w, cross, own, other):
    """The terms of the leave-one-out sums along one order, blocks ``c0 … c1 − 1`` (block c: runs
    ``bl[c] … bl[c + 1] − 1`` of ``gs``; run g holds the points ``pos[gs[g]:gs[g + 1]]``, or the
    positions ``gs[g] … gs[g + 1] − 1`` for ``pos`` None), each walked from its top run down from
    ``top[c]`` = (Σ w, Σ v, count) over the points of the blocks above.

    With v_i the run's centred rank, c_k = 1 for a point above the left-out one and ½ for a tied
    one, and w the other variable's centred ranks: ``cross[i] −= Σ_{k≠i} w_k c_k`` and ``own[i] =
    (own_all − v_i²) − 2 Σ_{k≠i} v_k c_k + Σ_{k≠i} c_k²``. Along |E| (``eord``, the first walk):
    w = x, own = Σyy, and ``cross[i]`` starts from ``cross_all − w_i v_i`` (Σxy without i). Along u
    (``pos`` None, the second): w = y, own = Σxx, and ``own[i]`` is multiplied by ``other[i]``
    (Σyy): Σxx·Σyy. The running sums are of half-integers, exact in any order below 2⁵² (M up to
    ~9·10⁷): a block started from ``top`` gets the bits of one walk from the top."""
    for c in range(c0, c1):
        aw = top[c, 0]
        av = top[c, 1]
        a1 = top[c, 2]
        for g in range(bl[c + 1] - 1, bl[c] - 1, -1):
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
                    cr = cross[i]
                else:
                    i = pos[k]
                    cr = cross_all - w[i] * v
                cross[i] = cr - (aw + 0.5 * (tw - w[i]))
                o = own_all - v * v
                o = o - 2.0 * (av + 0.5 * (tv - v))
                o = o + (a1 + 0.25 * (t1 - 1.0))
                if pos is None:
                    own[i] = o * other[i]
                else:
                    own[i] = o
            aw += tw
            av += tv
            a1 += t1


@njit(**NJIT)
def cc_layout(c0, c1, ugs, bl, gy, s, start, fill0, rec, lf):
    """Pass 1 of the joint counts and the layout of pass 2, u blocks ``c0 … c1 − 1``.

    Each point i is laid out in its bucket b (buckets of 2**s consecutive |E| runs; bucket b's
    slots are ``start[b] … start[b + 1] − 1``) by decreasing u: block c's points of bucket b from
    slot ``fill0[c, b]`` (after those of the blocks above), by decreasing position. ``rec`` gets
    i << 32 | #{u_k > u_i, bucket_k > bucket_i} (the blocks above from ``fill0``, block c's own
    runs above from a Fenwick tree over the buckets, each u run queried then inserted); ``lf``
    gets its run within the bucket << 1 | whether the point before it in the bucket shares its u
    run. A block is whole u runs, so its first point in a bucket never shares one with the point
    before: the layout of one pass over all points, for any split into blocks."""
    nb = start.shape[0] - 1
    tree = np.empty(nb + 1, dtype=np.int32)
    above = np.empty(nb, dtype=np.int32)
    fill = np.empty(nb, dtype=np.int64)
    last = np.empty(nb, dtype=np.int64)
    for c in range(c0, c1):
        tree[:] = 0
        last[:] = -1
        acc = np.int32(0)
        for b in range(nb - 1, -1, -1):  # the blocks above's points in buckets > b
            above[b] = acc
            acc += np.int32(fill0[c, b] - start[b])
            fill[b] = fill0[c, b]
        inserted = np.int32(0)
        for gu in range(bl[c + 1] - 1, bl[c] - 1, -1):
            k0 = ugs[gu]
            k1 = ugs[gu + 1]
            for i in range(k1 - 1, k0 - 1, -1):
                g = gy[i]
                b = g >> s
                le = np.int32(0)  # inserted with a bucket <= this one's
                p = b + 1
                while p > 0:
                    le += tree[p]
                    p -= p & (-p)
                f = fill[b]
                rec[f] = (np.int64(i) << 32) | np.int64(above[b] + inserted - le)
                lf[f] = ((g - np.int32(b << s)) << 1) | np.int32(last[b] == gu)
                last[b] = gu
                fill[b] = f + 1
            for i in range(k0, k1):
                p = (gy[i] >> s) + 1
                while p <= nb:
                    tree[p] += 1
                    p += p & (-p)
            inserted += np.int32(k1 - k0)


@njit(**NJIT)
def cc_pass2(c0, c1, start, bb, s, rec, lf, sab):
    """Pass 2 of the joint counts, buckets ``bb[c0] … bb[c1] − 1``: each bucket's points, laid out
    by decreasing u (:func:`cc_layout`), u run by u run, queried then inserted in a Fenwick tree
    over the bucket's 2**s |E| runs: ``sab[i]`` = d1 + ½ d2 with d1 = #{u_k > u_i, |E|_k > |E|_i}
    (pass 1's count in ``rec`` plus the bucket's own) and d2 = #{u_k > u_i, |E|_k = |E|_i}.
    Integer counts: the same ``sab`` for any split."""
    width = np.int64(1) << s
    fine = np.zeros(width + 1, dtype=np.int32)
    for b in range(bb[c0], bb[c1]):
        a1 = start[b + 1]
        ins = np.int32(0)
        q = start[b]
        while q < a1:
            r = q + 1  # the points of one u run in this bucket: q … r − 1
            while r < a1 and (lf[r] & 1) == 1:
                r += 1
            for t in range(q, r):
                le = np.int32(0)  # inserted with a run <= this one's
                p = (lf[t] >> 1) + 1
                while p > 0:
                    le += fine[p]
                    p -= p & (-p)
                lt = np.int32(0)  # inserted with a run < this one's
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


@njit(**NJIT)
def cc_finish(c0, c1, ugs, bl, gy, sxx_syy, sab, out):
    """u blocks ``c0 … c1 − 1``: ``sab[i]`` += ½ d3 + ¼ d4 with d3 = #{u_k = u_i, |E|_k > |E|_i} and
    d4 = #{u_k = u_i, |E|_k = |E|_i, k ≠ i} (by sorting each u run's |E| runs ``gy``; a run of one
    point has none), then ``out[i]`` = (``out[i]`` + ``sab[i]``) / √``sxx_syy[i]``: ``out`` holds the
    leave-one-out Σxy without Σ a_k b_k = ``sab``, and leaves with ρ."""
    for c in range(c0, c1):
        for gu in range(bl[c], bl[c + 1]):
            k0 = ugs[gu]
            k1 = ugs[gu + 1]
            if k1 - k0 >= 2:
                ys = np.empty(k1 - k0, dtype=np.int32)
                for i in range(k0, k1):
                    ys[i - k0] = gy[i]
                ys.sort()
                for i in range(k0, k1):
                    g = gy[i]
                    lo = np.searchsorted(ys, g, side="left")
                    hi = np.searchsorted(ys, g, side="right")
                    sab[i] = sab[i] + 0.5 * np.float64(ys.shape[0] - hi) + 0.25 * np.float64(hi - lo - 1)
            for i in range(k0, k1):
                out[i] = (out[i] + sab[i]) / np.sqrt(sxx_syy[i])
