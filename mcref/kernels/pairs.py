r"""Sums of a kernel over the pairs of a pooled sample, for many weight vectors in one pass
(docs/methods.md, "Two-sample statistics and their permutation null").

For the pooled sample z_1, …, z_N (rows of Z) and a radial kernel k(r), r = ‖z_i − z_j‖, one
family code selects

* ``GAUSSIAN``: k = exp(−c·r²), c = 1/(2ℓ²);
* ``LAPLACE``: k = exp(−c·r), c = 1/ℓ;
* ``IMQ`` (inverse multiquadric): k = (1 + c·r²)^(−1/2), c = 1/ℓ²;
* ``DISTANCE``: k = r (the energy distance's "kernel"; c unused).

The core operation, :func:`pair_forms`, gives for the columns w_b of a weight matrix W (N × B)

.. math::

    q_b = \sum_{i<j} k(z_i, z_j)\, W_{ib} W_{jb}

without forming the N × N matrix: rows in tiles of ``TILE``, columns in blocks of at most
``CHUNK``; a tile's kernel values are computed once (:func:`fill_tile`) and multiplied with the
block of W by one small matrix product (all B columns at once, BLAS on the calling thread), so
one pass over the pairs serves a batch of permutations. Tile t and tile n_tiles − 1 − t form one
parallel task (the two ends of the triangle, as :func:`mcref.kernels.skce.pair_sum`); each task
adds into its own row of partial sums, and a serial loop adds the rows in task order, so the
result does not depend on the number of threads. The exponential is
:func:`mcref.kernels.skce.fexp` (branch-free, vectorizes).

Z is passed transposed (``Zt``, d × N_pad, C-contiguous) so that the loops over a tile's
columns run over contiguous memory; N_pad is a multiple of ``TILE`` and the padded rows carry
zero weight (the caller pads Z and W).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_ORDERED, NJIT_ORDERED_PARALLEL
from .rng import permute_into
from .skce import fexp

#: kernel families
GAUSSIAN, LAPLACE, IMQ, DISTANCE = 0, 1, 2, 3
#: rows per tile, and the widest block of columns (a multiple of TILE)
TILE = 64
CHUNK = 512


@njit(**NJIT_ORDERED)
def fill_tile(family, c, Zt, i0, j0, w, H, strict):
    """H[ii, jj] = k(z_{i0+ii}, z_{j0+jj}) for a TILE × w tile (H: TILE × w, C-contiguous);
    with ``strict`` the entries with j ≤ i are set to 0 (the tile on the diagonal)."""
    d = Zt.shape[0]
    for ii in range(TILE):
        h = H[ii]
        h[:] = 0.0
        for k in range(d):
            zi = Zt[k, i0 + ii]
            row = Zt[k, j0:j0 + w]  # a slice: the loop below vectorizes (5x faster than Zt[k, j0 + jj])
            for jj in range(w):
                u = zi - row[jj]
                h[jj] += u * u
        if family == GAUSSIAN:
            for jj in range(w):
                h[jj] = fexp(-c * h[jj])
        elif family == LAPLACE:
            for jj in range(w):
                h[jj] = fexp(-c * math.sqrt(h[jj]))
        elif family == IMQ:
            for jj in range(w):
                h[jj] = 1.0 / math.sqrt(1.0 + c * h[jj])
        else:
            for jj in range(w):
                h[jj] = math.sqrt(h[jj])
        if strict:
            for jj in range(min(w, ii + 1 + (i0 - j0))):
                h[jj] = 0.0


@njit(**NJIT_ORDERED)
def _forms_tile(family, c, Zt, W, tile, Hbuf, M, acc):
    """Adds Σ_{i in tile, j > i} k_ij W_ib W_jb into ``acc`` (B) for every column b."""
    n = Zt.shape[1]
    B = W.shape[1]
    i0 = tile * TILE
    for j0 in range(i0, n, CHUNK):
        w = min(CHUNK, n - j0)
        H = Hbuf[:TILE * w].reshape((TILE, w))
        fill_tile(family, c, Zt, i0, j0, w, H, j0 == i0)
        np.dot(H, W[j0:j0 + w], M)
        for ii in range(TILE):
            wi = W[i0 + ii]
            mi = M[ii]
            for b in range(B):
                acc[b] += wi[b] * mi[b]


@njit(**NJIT_ORDERED_PARALLEL)
def pair_forms(family, c, Zt, W):
    """q_b = Σ_{i<j} k(z_i, z_j)·W_ib·W_jb for each column b of W (N_pad × B, C-contiguous):
    one pass over the pairs for all B columns; per-task partial sums added in task order."""
    n = Zt.shape[1]
    B = W.shape[1]
    n_tiles = n // TILE
    n_tasks = (n_tiles + 1) // 2
    acc = np.zeros((n_tasks, B))
    for t in prange(n_tasks):
        Hbuf = np.empty(TILE * CHUNK)
        M = np.empty((TILE, B))
        _forms_tile(family, c, Zt, W, t, Hbuf, M, acc[t])
        if n_tiles - 1 - t != t:
            _forms_tile(family, c, Zt, W, n_tiles - 1 - t, Hbuf, M, acc[t])
    out = np.zeros(B)
    for t in range(n_tasks):
        for b in range(B):
            out[b] += acc[t, b]
    return out


@njit(**NJIT_ORDERED_PARALLEL)
def row_sums(family, c, Zt, n):
    """r_i = Σ_{j ≠ i, j < n} k(z_i, z_j) for the first ``n`` rows (i < n); each tile of rows is
    one task and each row is summed over its columns in order (the same bits for any thread
    count); the kernel values are those of :func:`fill_tile`."""
    n_pad = Zt.shape[1]
    n_tiles = n_pad // TILE
    out = np.zeros(n_pad)
    for t in prange(n_tiles):
        Hbuf = np.empty(TILE * CHUNK)
        i0 = t * TILE
        for j0 in range(0, n, CHUNK):
            w = min(CHUNK, n - j0)
            H = Hbuf[:TILE * w].reshape((TILE, w))
            fill_tile(family, c, Zt, i0, j0, w, H, False)
            for ii in range(TILE):
                i = i0 + ii
                h = H[ii]
                if j0 <= i < j0 + w:
                    h[i - j0] = 0.0  # the pair (i, i)
                s = 0.0
                for jj in range(w):
                    s += h[jj]
                out[i] += s
    return out[:n]


@njit(**NJIT_ORDERED_PARALLEL)
def permuted_labels(states, n, N, per, out):
    """out[b] (B × N, uint8) = a uniformly random arrangement of n ones and N − n zeros: batch
    k = b // ``per`` of rows drawn one after the other from the stream ``states[k]`` (a copy;
    :func:`mcref.kernels.rng.permute_into`); batches in parallel, the same bits for any thread
    count."""
    n_batches = states.shape[0]
    B = out.shape[0]
    for k in prange(n_batches):
        s = states[k].copy()
        src = np.zeros(N, dtype=np.uint8)
        src[:n] = 1
        for b in range(k * per, min(B, (k + 1) * per)):
            permute_into(s, src, out[b])


@njit(**NJIT_ORDERED, inline="always")
def kernel_of(family, c, Z, i, j):
    """k(z_i, z_j) of one pair (the values of :func:`fill_tile`)."""
    s = 0.0
    for a in range(Z.shape[1]):
        u = Z[i, a] - Z[j, a]
        s += u * u
    if family == GAUSSIAN:
        return fexp(-c * s)
    if family == LAPLACE:
        return fexp(-c * math.sqrt(s))
    if family == IMQ:
        return 1.0 / math.sqrt(1.0 + c * s)
    return math.sqrt(s)


@njit(**NJIT_ORDERED_PARALLEL)
def linear_mmd(family, c, Z, labels, out):
    """out[b] = the linear-time MMD² of labelling b (``labels`` B × N, 1 = X-set): the X-rows and
    the Y-rows each in increasing row order, h_i = k(x_{2i−1}, x_{2i}) + k(y_{2i−1}, y_{2i})
    − k(x_{2i−1}, y_{2i}) − k(x_{2i}, y_{2i−1}) averaged over i ≤ ⌊min(n, m)/2⌋; labellings in
    parallel, each summed in order (the same bits for any thread count)."""
    B, N = labels.shape
    for b in prange(B):
        xs = np.empty(N, dtype=np.int64)
        ys = np.empty(N, dtype=np.int64)
        nx, ny = 0, 0
        for i in range(N):
            if labels[b, i]:
                xs[nx] = i
                nx += 1
            else:
                ys[ny] = i
                ny += 1
        h = min(nx, ny) // 2
        s = 0.0
        for t in range(h):
            x1, x2, y1, y2 = xs[2 * t], xs[2 * t + 1], ys[2 * t], ys[2 * t + 1]
            s += (kernel_of(family, c, Z, x1, x2) + kernel_of(family, c, Z, y1, y2)
                  - kernel_of(family, c, Z, x1, y2) - kernel_of(family, c, Z, x2, y1))
        out[b] = s / h
