"""Resampled column sums: the bootstrap loop of the studentized scale tests
(:mod:`mcref._scale_test`; docs/methods.md, "Scale test").

Replicates are split into fixed-size chunks; chunk ``c`` draws from its own xoshiro256**
state ``states[c]`` and writes only its own rows of ``out``, so the result does not depend
on the number of threads (docs/methods.md, "Random numbers"). The sums are accumulated in
index order without reassociation (``NJIT_ORDERED``), so a cached and a fresh compilation
give the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._config import NJIT_ORDERED
from .rng import bounded_draws

NJIT_ORDERED_PARALLEL = dict(NJIT_ORDERED, parallel=True)


@njit(**NJIT_ORDERED)
def _chunk_sums(X, state, b0, b1, out):
    """Rows b0..b1-1 of ``out``: Σ_i w_i·X[i, k] with w a multinomial(M; 1/M, …) resample
    (M uniform draws in [0, M), counted), drawn from ``state`` (advanced in place)."""
    m, k = X.shape
    counts = np.zeros(m, dtype=np.int64)
    for b in range(b0, b1):
        counts[:] = 0
        bounded_draws(state, m, m, counts, True)
        for j in range(k):
            out[b, j] = 0.0
        for i in range(m):
            c = counts[i]
            if c:
                for j in range(k):
                    out[b, j] += c * X[i, j]


@njit(**NJIT_ORDERED_PARALLEL)
def resampled_sums(X, states, chunk, n_boot):
    """``out[b, k] = Σ_i w_{b,i}·X[i, k]`` for n_boot bootstrap resamples of the rows of X
    (shape (M, K), M < 2³²); chunk c = replicates [c·chunk, (c+1)·chunk) uses ``states[c]``
    (a copy: the caller's states are not advanced)."""
    m, k = X.shape
    out = np.empty((n_boot, k))
    n_chunks = states.shape[0]
    for c in prange(n_chunks):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_boot, b0 + chunk)
        if b0 < b1:
            _chunk_sums(X, st, b0, b1, out)
    return out
