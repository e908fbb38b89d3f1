"""Resampled column sums: the bootstrap loop of the studentized scale tests
(:mod:`mcref.verdict._scale_test`; docs/methods.md, "Scale test").

Replicates are split into fixed-size chunks; chunk ``c`` draws from its own xoshiro256**
state ``states[c]`` and writes only its own rows of ``out``, so the result does not depend
on the number of threads (docs/methods.md, "Random numbers"). The sums are accumulated in
index order without reassociation (``NJIT_ORDERED``), so a cached and a fresh compilation
give the same bits.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_EXACT_PARALLEL, NJIT_ORDERED, NJIT_ORDERED_PARALLEL
from .rng import COUNT, LEAF_BITS, STACK_ROWS, leaf_counts, load_state, multinomial_split, multinomial_start, store_state
from .variates import fill_normal, fill_t


#: how :func:`resampled_sums` reads the rows of X: its columns as they are (``PLAIN``: K sums of
#: X's K columns), the powers of one column (``POWERS``: X = (z), the sums of z, z², z³, z⁴, the Z
#: scale test's) or a pair and its products (``PAIRS``: X = (e, w), the sums of e, w, e², w², e·w,
#: the RCE test's). The products are made as the rows are read, by the IEEE operations that
#: would have stored them (x = z·z, x·z, x·x; e·e, w·w, e·w): the same bits as sums of stored
#: columns, from a quarter (Z) or two fifths (RCE) of the memory, none of it written per call.
PLAIN, POWERS, PAIRS = 0, 1, 2


@njit(**NJIT_ORDERED)
def _chunk_sums(X, expand, state, b0, b1, out):
    """Rows b0..b1-1 of ``out``: Σ_i w_i·x_ik with w a multinomial(M; 1/M, …) resample, drawn
    leaf by leaf in row order from ``state`` (advanced in place;
    :func:`mcref.kernels.rng.multinomial_leaf`), x_ik the k-th column of row i as ``expand``
    makes it (:data:`PLAIN`, :data:`POWERS`, :data:`PAIRS`): each leaf's counts are used while in
    cache, and the rows of X are read once, in order (no M-sized count array, no random access).

    Each column's sum is one chain in row order, as a plain loop would add it. The leaf's
    columns are taken four at a time into scalar accumulators (the five of ``PAIRS`` at once),
    and a zero count is added rather than branched on (X is finite, so w·x = ±0 leaves a sum's
    bits as they are): the ``if c:`` branch mispredicted about every third row, and accumulators
    in an array waited on their own stores. Same bits; one thread, against the loop it replaced,
    M = 300–10⁶: 1.6–2.9× with K = 1, 2 or 4 columns, 1.5–1.9× with 5, 1.0–1.3× with 9."""
    m, k = X.shape
    seg = np.empty(np.int64(1) << LEAF_BITS, dtype=COUNT)
    stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
    acc = np.empty(out.shape[1])
    for b in range(b0, b1):
        acc[:] = 0.0
        st = load_state(state)
        sp = multinomial_start(stack, m, m)
        while sp > 0:
            lo, hi, n, sp, st = multinomial_split(st, stack, sp)
            st = leaf_counts(st, n, seg[:hi - lo])
            if expand == POWERS:
                a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
                for i in range(lo, hi):
                    c = np.float64(seg[i - lo])
                    z = X[i, 0]
                    x = z * z
                    a0 += c * z
                    a1 += c * x
                    a2 += c * (x * z)
                    a3 += c * (x * x)
                acc[0], acc[1], acc[2], acc[3] = a0, a1, a2, a3
            elif expand == PAIRS:
                a0, a1, a2, a3, a4 = acc[0], acc[1], acc[2], acc[3], acc[4]
                for i in range(lo, hi):
                    c = np.float64(seg[i - lo])
                    e = X[i, 0]
                    w = X[i, 1]
                    a0 += c * e
                    a1 += c * w
                    a2 += c * (e * e)
                    a3 += c * (w * w)
                    a4 += c * (e * w)
                acc[0], acc[1], acc[2], acc[3], acc[4] = a0, a1, a2, a3, a4
            else:
                for j0 in range(0, k, 4):  # columns j0 … j0 + nj − 1 in registers
                    nj = min(4, k - j0)
                    a0 = acc[j0]
                    a1 = acc[j0 + 1] if nj > 1 else 0.0
                    a2 = acc[j0 + 2] if nj > 2 else 0.0
                    a3 = acc[j0 + 3] if nj > 3 else 0.0
                    for i in range(lo, hi):
                        c = np.float64(seg[i - lo])
                        a0 += c * X[i, j0]
                        if nj > 1:
                            a1 += c * X[i, j0 + 1]
                        if nj > 2:
                            a2 += c * X[i, j0 + 2]
                        if nj > 3:
                            a3 += c * X[i, j0 + 3]
                    acc[j0] = a0
                    if nj > 1:
                        acc[j0 + 1] = a1
                    if nj > 2:
                        acc[j0 + 2] = a2
                    if nj > 3:
                        acc[j0 + 3] = a3
        store_state(state, st)
        for j in range(acc.shape[0]):
            out[b, j] = acc[j]


@njit(**NJIT_ORDERED)
def resampled_sums(X, expand, states, chunk, c0, c1, out):
    """``out[b, k] = Σ_i w_{b,i}·x_ik`` for the bootstrap resamples of the rows of X (shape
    (M, K), M < 2³²; x_ik: the k-th column of row i as ``expand`` makes it, :data:`PLAIN`, :data:`POWERS`,
    :data:`PAIRS`) of chunks c0 ≤ c < c1: chunk c = replicates [c·chunk, (c+1)·chunk) (of
    ``out.shape[0]``) uses ``states[c]`` (a copy: the caller's states are not advanced). A task of
    the scale tests (:func:`mcref.parallel.over_tasks`): the rows do not depend on the tasks."""
    n_boot = out.shape[0]
    for c in range(c0, c1):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_boot, b0 + chunk)
        if b0 < b1:
            _chunk_sums(X, expand, st, b0, b1, out)


#: t variates drawn per call of the filling kernel (an L1-sized buffer)
T_BUF = 1024


@njit(**NJIT_ORDERED)
def _chunk_t_sums(m, W, K, FL, FD, r, nu, state, b0, b1, out):
    """Rows b0..b1-1 of ``out``: Σz, Σz², Σz³, Σz⁴ of m unit-variance t(ν) draws
    z = x·√((ν − 2)/ν), x ~ t(ν) by the ziggurat of :func:`~mcref.kernels.variates.t_ziggurat`
    (its tables ``W … nu``), or N(0, 1) when ν = inf (:func:`~mcref.kernels.variates.fill_normal`),
    drawn T_BUF at a time and summed in draw order."""
    normal = not (nu < np.inf)
    c = 1.0 if normal else math.sqrt((nu - 2.0) / nu)
    buf = np.empty(min(m, T_BUF))
    for b in range(b0, b1):
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        done = 0
        while done < m:
            seg = buf[:min(T_BUF, m - done)]
            if normal:
                fill_normal(state, seg)
            else:
                fill_t(state, W, K, FL, FD, r, nu, seg)
            for i in range(seg.shape[0]):
                z = seg[i] * c
                z2 = z * z
                s1 += z
                s2 += z2
                s3 += z2 * z
                s4 += z2 * z2
            done += seg.shape[0]
        out[b, 0] = s1
        out[b, 1] = s2
        out[b, 2] = s3
        out[b, 3] = s4


@njit(**NJIT_ORDERED)
def t_power_sums(m, W, K, FL, FD, r, nu, states, chunk, c0, c1, out):
    """``out[k] = (Σz, Σz², Σz³, Σz⁴)`` of the samples of m unit-variance t(ν) draws of chunks
    c0 ≤ c < c1 (chunk c = samples [c·chunk, (c+1)·chunk) of ``out.shape[0]``), the tables
    ``W … nu`` of :func:`~mcref.kernels.variates.t_ziggurat` (ν) (ν = inf: normal draws);
    chunk c uses a copy of ``states[c]``. A task of the scale tests
    (:func:`mcref.parallel.over_tasks`): the rows do not depend on the tasks."""
    n_mc = out.shape[0]
    for c in range(c0, c1):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_mc, b0 + chunk)
        if b0 < b1:
            _chunk_t_sums(m, W, K, FL, FD, r, nu, st, b0, b1, out)


@njit(**NJIT_ORDERED_PARALLEL)
def resampled_sums_all(X, expand, states, chunk, out):
    """:func:`resampled_sums` over every chunk (``states.shape[0]`` of them) as one ``prange``
    region: a short round of the scale tests on numba's threads (:func:`mcref.parallel.run_region`),
    the same rows, bit for bit."""
    for c in prange(states.shape[0]):
        i = np.int64(c)  # prange's index is unsigned: int64, the tasks' signature (one compile)
        resampled_sums(X, expand, states, chunk, i, i + 1, out)


@njit(**NJIT_ORDERED_PARALLEL)
def t_power_sums_all(m, W, K, FL, FD, r, nu, states, chunk, out):
    """:func:`t_power_sums` over every chunk (``states.shape[0]`` of them) as one ``prange`` region
    (:func:`mcref.parallel.run_region`), the same rows, bit for bit."""
    for c in prange(states.shape[0]):
        i = np.int64(c)  # prange's index is unsigned: int64, the tasks' signature (one compile)
        t_power_sums(m, W, K, FL, FD, r, nu, states, chunk, i, i + 1, out)


#: rows per ``prange`` iteration of :func:`z_power_sums` and :func:`rce_columns_all` (the pages of
#: the latter's X first touched by the thread that writes them)
COLUMN_ROWS = 1 << 14


@njit(**NJIT_EXACT_PARALLEL)
def z_power_sums(z, part):
    """``part[b]``: the sums of z, z², z³, z⁴ (x = z·z, x·z, x·x: each value one IEEE product of
    NumPy's ``np.column_stack([z, x, x * z, x * x])``) over block b of :data:`COLUMN_ROWS` rows, in
    row order: their sum in block order is the Z scale test's observed sums, the same bits for any
    thread count (:func:`mcref.verdict._scale_test._z_columns`; NumPy's ``X.sum(axis=0)`` took
    1.1 ms of the serial part at M = 10⁵). The resampling makes the same powers from z
    (:data:`POWERS`)."""
    m = z.shape[0]
    for b in prange((m + COLUMN_ROWS - 1) // COLUMN_ROWS):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(b * COLUMN_ROWS, min(m, (b + 1) * COLUMN_ROWS)):
            x = z[i] * z[i]
            s0 += z[i]
            s1 += x
            s2 += x * z[i]
            s3 += x * x
        part[b, 0] = s0
        part[b, 1] = s1
        part[b, 2] = s2
        part[b, 3] = s3


@njit(**NJIT_EXACT_PARALLEL)
def rce_columns_all(E, v, scale, X, part):
    """The rows (e, v) of the RCE scale test into X (shape (M, 2)), e = E²/s (``v``: u²/s already,
    s = ``scale``), the IEEE operations of NumPy's ``E * E / scale``, on numba's threads (about 60
    of the scale tests' serial ms at M = 10⁶ were the serial writes and page faults of a first
    version); ``part[b]``: the sums of e, v, e², v², e·v over block b of :data:`COLUMN_ROWS` rows,
    as :func:`z_power_sums`'s. The resampling makes the same products from (e, v) (:data:`PAIRS`):
    the five stored columns were an (M, 5) array of 40 MB at M = 10⁶, past glibc's 32 MiB
    threshold for reusing freed memory, and writing its fresh pages took 40 ms per call, serial."""
    m = E.shape[0]
    for b in prange((m + COLUMN_ROWS - 1) // COLUMN_ROWS):
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        for i in range(b * COLUMN_ROWS, min(m, (b + 1) * COLUMN_ROWS)):
            e = E[i] * E[i] / scale
            w = v[i]
            X[i, 0] = e
            X[i, 1] = w
            s0 += e
            s1 += w
            s2 += e * e
            s3 += w * w
            s4 += e * w
        part[b, 0] = s0
        part[b, 1] = s1
        part[b, 2] = s2
        part[b, 3] = s3
        part[b, 4] = s4
