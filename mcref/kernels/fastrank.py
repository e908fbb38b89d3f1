"""Average ranks and Spearman's ρ against a fixed u by an LSD radix sort of IEEE keys (DESIGN §7).

WIP
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


def make_rank_scratch(m: int) -> tuple:
    m = int(m)
    d = min(12, max(6, int(np.ceil(np.log2(max(m, 2)))) - 3))
    return (np.empty(m, np.uint64), np.empty(m, np.uint64), np.empty((2, 1 << d), np.uint64),
            np.empty(m, np.float64), np.empty(m, np.float64))


@njit(**NJIT)
def _key(b):
    """Monotone uint64 key of the float64 with bits ``b``; -0.0 and +0.0 share a key."""
    mag = b & _MAG
    s = b >> _S63
    return _TOP + ((mag ^ (_ZERO - s)) + s)


@njit(**NJIT)
def _radix_sort(a, w0, w1, hist):
    m = a.shape[0]
    bits = a.view(np.uint64)
    kmin = _ALL
    kmax = _ZERO
    for i in range(m):
        k = _key(bits[i])
        w0[i] = k
        kmin = min(kmin, k)
        kmax = max(kmax, k)
    nb = hist.shape[1]
    d = uint64(0)
    while (_ONE << d) < uint64(nb):
        d += _ONE
    mask = uint64(nb - 1)
    r = kmax - kmin
    s = uint64(0)
    while (r >> s) > (mask << d | mask):
        s += _ONE
    h0 = hist[0]
    h1 = hist[1]
    h0[:] = 0
    h1[:] = 0
    for i in range(m):
        t = (w0[i] - kmin) >> s
        w0[i] = (t << _S32) | uint64(i)
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
    for i in range(m):
        w = w0[i]
        q = (w >> _S32) & mask
        j = h0[q]
        h0[q] = j + _ONE
        w1[j] = w
    sh = _S32 + d
    for i in range(m):
        w = w1[i]
        q = w >> sh
        j = h1[q]
        h1[q] = j + _ONE
        w0[j] = w


@njit(**NJIT)
def _heapsort2(v, x, n):
    for start in range(n // 2 - 1, -1, -1):
        _sift2(v, x, start, n)
    for end in range(n - 1, 0, -1):
        tv = v[0]
        v[0] = v[end]
        v[end] = tv
        tx = x[0]
        x[0] = x[end]
        x[end] = tx
        _sift2(v, x, 0, end)


@njit(**NJIT)
def _sift2(v, x, root, n):
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
            tx = x[root]
            x[root] = x[c]
            x[c] = tx
            root = c
        else:
            return


@njit(**NJIT)
def _sort_group(v, x, n):
    budget = 8 * n + 64
    for q in range(1, n):
        vq = v[q]
        if vq < v[q - 1]:
            xq = x[q]
            j = q
            while j > 0 and vq < v[j - 1]:
                v[j] = v[j - 1]
                x[j] = x[j - 1]
                j -= 1
            v[j] = vq
            x[j] = xq
            budget -= q - j
            if budget < 0:
                _heapsort2(v, x, n)
                return


@njit(**NJIT)
def spearman_fixed_u(a, xu, sxx, scratch):
    w0, w1, hist, gv, gx = scratch
    m = a.shape[0]
    if m < 2:
        return np.nan
    _radix_sort(a, w0, w1, hist)
    # pass over sorted words: provisional ranks k+1; positions whose truncated key
    # equals the previous one are collected in w1
    S = 0.0
    X = 0.0
    nc = 0
    tprev = w0[0] >> _S32
    x = xu[w0[0] & _LO32]
    S = x
    X = x
    for k in range(1, m):
        w = w0[k]
        x = xu[w & _LO32]
        S += (k + 1.0) * x
        X += x
        t = w >> _S32
        if t == tprev:
            w1[nc] = uint64(k)
            nc += 1
        tprev = t
    ts = 0.0
    q = 0
    while q < nc:
        g0 = np.int64(w1[q]) - 1
        while q + 1 < nc and w1[q + 1] == w1[q] + _ONE:
            q += 1
        g1 = np.int64(w1[q]) + 1
        q += 1
        n = g1 - g0
        prov = 0.0
        for j in range(n):
            i = w0[g0 + j] & _LO32
            gv[j] = a[i]
            xj = xu[i]
            gx[j] = xj
            prov += (g0 + j + 1.0) * xj
        _sort_group(gv, gx, n)
        new = 0.0
        j = 0
        while j < n:
            j0 = j
            sx = gx[j]
            while j + 1 < n and gv[j + 1] == gv[j0]:
                j += 1
                sx += gx[j]
            new += (g0 + 0.5 * (j0 + j) + 1.0) * sx
            tt = j - j0 + 1.0
            ts += tt * tt * tt - tt
            j += 1
        S += new - prov
    mf = np.float64(m)
    syy = (mf * mf * mf - mf - ts) / 12.0
    num = S - 0.5 * (mf + 1.0) * X
    return num / np.sqrt(sxx * syy)
