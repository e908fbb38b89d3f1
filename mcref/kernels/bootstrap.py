"""The bootstrap resampling loop: one numba-parallel kernel (DESIGN §4).

Replicates are split into fixed-size chunks; chunk ``c`` draws from its own
xoshiro256** state ``states[c]`` and writes only its own columns of ``out``, so the
result does not depend on the number of threads (STYLE.md conventions 4–5).
A resample is drawn as M uniform indices; statistics of the mean type are summed by
gathering over those indices, the others see the resample as multiplicities over the
data pre-sorted by u (no sort per resample).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._config import NJIT, NJIT_PARALLEL
from .rng import fill_indices
from .stats import N_SUMS, eval_weighted, finish_mean, is_mean_code, mean_sums_gather


@njit(**NJIT_PARALLEL)
def boot_kernel(codes, states, chunk, rows, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, out):
    """Fill ``out[k, r]`` with statistic ``codes[k]`` on bootstrap resample ``r``."""
    m = z.shape[0]
    n_codes = codes.shape[0]
    n_boot = out.shape[1]
    n_chunks = states.shape[0]
    n_bins = starts.shape[0] - 1
    all_mean = True
    for c in codes:
        if not is_mean_code(c):
            all_mean = False
    for ch in prange(n_chunks):
        st = states[ch].copy()
        idx = np.empty(m, dtype=np.int64)
        w = np.empty(m, dtype=np.int64)
        s = np.empty(N_SUMS)
        acc = np.empty((n_bins, 4))
        xu = np.empty(m)
        res = np.empty(n_codes)
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            fill_indices(st, m, idx)
            if all_mean:
                mean_sums_gather(idx, rows, s)
                for k in range(n_codes):
                    out[k, r] = finish_mean(codes[k], s)
            else:
                w[:] = 0
                for k in range(m):
                    w[idx[k]] += 1
                eval_weighted(codes, w, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, s, acc, xu, res)
                for k in range(n_codes):
                    out[k, r] = res[k]


@njit(**NJIT_PARALLEL)
def boot_indices_kernel(states, chunk, m, out):
    """The resample indices ``out[r]`` that :func:`boot_kernel` draws (for tests and users)."""
    n_boot = out.shape[0]
    for ch in prange(states.shape[0]):
        st = states[ch].copy()
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            fill_indices(st, m, out[r])
