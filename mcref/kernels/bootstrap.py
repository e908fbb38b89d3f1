"""The bootstrap resampling loop: one numba-parallel kernel (DESIGN §4).

Replicates are split into fixed-size chunks; chunk ``c`` draws from its own
xoshiro256** state ``states[c]`` and writes only its own columns of ``out``, so the
result does not depend on the number of threads (STYLE.md conventions 4–5).
A resample is drawn as multiplicities over the data pre-sorted by u (no sort per
resample). Summing the mean-type statistics by gathering over drawn indices was
measured slower (random 64-byte row loads) than counting then one sequential pass.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._config import NJIT, NJIT_PARALLEL
from .rng import bounded_draws, bounded_one
from .stats import N_SUMS, eval_weighted, is_binned_code


@njit(**NJIT)
def shuffle_straddling(st, w, groups, starts, perm, info):
    """Random order of the copies of every tie group that straddles a bin cut.

    A resample sorted by u keeps tied points in the order they were drawn (R's stable
    ``order`` on the resampled vector, as in the reference papers): within a run of
    equal u the copies are in uniformly random order. Only runs of ≥ 2 distinct points
    (``groups[g] = (start, end)`` over the u-sorted points) whose copies cover a cut
    need that order. For each, ``info[g] = (straddles, offset into perm, first
    position)``; the shuffled copies (point indices) are ``perm[offset:offset + k]``.
    The draws come from the chunk's stream ``st`` (Fisher–Yates).
    """
    n_bins = starts.shape[0] - 1
    pos = 0
    prev = 0
    off = 0
    for g in range(groups.shape[0]):
        a = groups[g, 0]
        b = groups[g, 1]
        for x in w[prev:a]:
            pos += x
        p0 = pos
        for x in w[a:b]:
            pos += x
        p1 = pos
        prev = b
        j = np.searchsorted(starts, p0, side="right")  # first cut after the group's start
        info[g, 0] = 0
        info[g, 1] = off
        info[g, 2] = p0
        if j >= n_bins or starts[j] >= p1:
            continue
        info[g, 0] = 1
        n = 0
        for i in range(a, b):
            for _ in range(w[i]):
                perm[off + n] = i
                n += 1
        for t in range(n - 1, 0, -1):
            r = bounded_one(st, t + 1)
            tmp = perm[off + t]
            perm[off + t] = perm[off + r]
            perm[off + r] = tmp
        off += n


@njit(**NJIT)
def tie_corrections(w, groups, starts, E2, z2, perm, info, corr):
    """Per-cut corrections ``corr[b] = (ΔΣE², ΔΣz²)`` for the shuffled tie groups.

    At a cut inside a shuffled group, the lower bin receives the first copies of the
    shuffled order instead of the first copies of the input order; u² is the same for
    all of them, so only the E² and z² sums move.
    """
    corr[:, :] = 0.0
    n_bins = starts.shape[0] - 1
    for g in range(groups.shape[0]):
        if info[g, 0] == 0:
            continue
        a = groups[g, 0]
        off = info[g, 1]
        p0 = info[g, 2]
        j = np.searchsorted(starts, p0, side="right")
        p1 = p0 + _group_size(w, groups[g, 0], groups[g, 1])
        k = 0
        i = a
        left = 0  # copies of point i - 1 not yet walked in the input order
        se_in = 0.0
        sz_in = 0.0
        se_sh = 0.0
        sz_sh = 0.0
        while j < n_bins and starts[j] < p1:
            q = starts[j] - p0  # copies of this group below cut j
            while k < q:
                while left == 0:
                    left = w[i]
                    i += 1
                se_in += E2[i - 1]
                sz_in += z2[i - 1]
                left -= 1
                s = perm[off + k]
                se_sh += E2[s]
                sz_sh += z2[s]
                k += 1
            corr[j, 0] += se_sh - se_in
            corr[j, 1] += sz_sh - sz_in
            j += 1


@njit(**NJIT)
def _group_size(w, a, b):
    """Total multiplicity of points a..b−1."""
    n = 0
    for x in w[a:b]:
        n += x
    return n


@njit(**NJIT_PARALLEL)
def boot_kernel(codes, states, chunk, groups, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, out):
    """Fill ``out[k, r]`` with statistic ``codes[k]`` on bootstrap resample ``r``.

    A resample is drawn directly as multiplicities ``w`` over the data sorted by u
    (M bounded draws, each incrementing a count); tie groups straddling a bin cut get a
    random order of their copies (:func:`shuffle_straddling`); then
    :func:`eval_weighted` evaluates it: no index array, no sort, O(M) per replicate.
    """
    m = z.shape[0]
    n_codes = codes.shape[0]
    n_boot = out.shape[1]
    n_chunks = states.shape[0]
    n_bins = starts.shape[0] - 1
    need_ties = False
    for c in codes:
        if is_binned_code(c):
            need_ties = groups.shape[0] > 0
    for ch in prange(n_chunks):
        st = states[ch].copy()
        w = np.empty(m, dtype=np.int64)
        s = np.empty(N_SUMS)
        acc = np.empty((n_bins, 4))
        cs = np.empty(m + 1, dtype=np.int64)
        corr = np.zeros((n_bins + 1, 2))
        perm = np.empty(m, dtype=np.int64)
        info = np.empty((groups.shape[0], 3), dtype=np.int64)
        xu = np.empty(m)
        res = np.empty(n_codes)
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            w[:] = 0
            bounded_draws(st, m, m, w, True)
            if need_ties:
                shuffle_straddling(st, w, groups, starts, perm, info)
                tie_corrections(w, groups, starts, E2, z2, perm, info, corr)
            eval_weighted(codes, w, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, s, acc, cs, corr, xu, res)
            for k in range(n_codes):
                out[k, r] = res[k]


@njit(**NJIT_PARALLEL)
def boot_indices_kernel(states, chunk, m, groups, starts, out):
    """The resamples that :func:`boot_kernel` draws (with binned statistics), as rows of
    point indices (u-sorted positions) in the order the kernel walks them: ascending u,
    tied copies in input order except in the shuffled straddling groups."""
    n_boot = out.shape[0]
    for ch in prange(states.shape[0]):
        st = states[ch].copy()
        w = np.empty(m, dtype=np.int64)
        perm = np.empty(m, dtype=np.int64)
        info = np.empty((groups.shape[0], 3), dtype=np.int64)
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            w[:] = 0
            bounded_draws(st, m, m, w, True)
            if groups.shape[0] > 0:
                shuffle_straddling(st, w, groups, starts, perm, info)
            row = out[r]
            k = 0
            g = 0
            i = 0
            while i < m:
                if g < groups.shape[0] and i == groups[g, 0]:
                    b = groups[g, 1]
                    if info[g, 0] == 1:
                        n = _group_size(w, i, b)
                        for t in range(n):
                            row[k] = perm[info[g, 1] + t]
                            k += 1
                        i = b
                        g += 1
                        continue
                    g += 1
                for _ in range(w[i]):
                    row[k] = i
                    k += 1
                i += 1
