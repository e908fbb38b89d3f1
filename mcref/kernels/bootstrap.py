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
from .rng import bounded_draws, fill_indices
from .stats import N_SUMS, eval_weighted


@njit(**NJIT_PARALLEL)
def boot_kernel(codes, states, chunk, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, out):
    """Fill ``out[k, r]`` with statistic ``codes[k]`` on bootstrap resample ``r``.

    A resample is drawn directly as multiplicities ``w`` over the data sorted by u
    (M bounded draws, each incrementing a count), then evaluated by
    :func:`eval_weighted`: no index array, no sort, O(M) per replicate.
    """
    m = z.shape[0]
    n_codes = codes.shape[0]
    n_boot = out.shape[1]
    n_chunks = states.shape[0]
    n_bins = starts.shape[0] - 1
    for ch in prange(n_chunks):
        st = states[ch].copy()
        w = np.empty(m, dtype=np.int64)
        s = np.empty(N_SUMS)
        acc = np.empty((n_bins, 4))
        cs = np.empty(m + 1, dtype=np.int64)
        xu = np.empty(m)
        res = np.empty(n_codes)
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            w[:] = 0
            bounded_draws(st, m, m, w, True)
            eval_weighted(codes, w, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, s, acc, cs, xu, res)
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
