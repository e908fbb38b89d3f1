"""Resampled column sums: the bootstrap loop of the studentized scale tests
(:mod:`mcref._scale_test`; docs/methods.md, "Scale test").

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

from ._config import NJIT_ORDERED, NJIT_ORDERED_PARALLEL
from .rng import bounded_draws
from .variates import next_gamma, next_normal


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


@njit(**NJIT_ORDERED)
def _chunk_t_sums(m, nu, state, b0, b1, out):
    """Rows b0..b1-1 of ``out``: Σz, Σz², Σz³, Σz⁴ of m unit-variance t(ν) draws
    z = N·√((ν − 2)/χ²_ν), χ²_ν = 2·Gamma(ν/2) (normal when ν = inf)."""
    normal = not (nu < np.inf)
    for b in range(b0, b1):
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        for _ in range(m):
            z = next_normal(state)
            if not normal:
                z *= math.sqrt((nu - 2.0) / (2.0 * next_gamma(state, 0.5 * nu)))
            z2 = z * z
            s1 += z
            s2 += z2
            s3 += z2 * z
            s4 += z2 * z2
        out[b, 0] = s1
        out[b, 1] = s2
        out[b, 2] = s3
        out[b, 3] = s4


@njit(**NJIT_ORDERED_PARALLEL)
def t_power_sums(m, nu, states, chunk, n_mc):
    """``out[k] = (Σz, Σz², Σz³, Σz⁴)`` of n_mc samples of m unit-variance t(ν) draws; chunk c
    of the samples uses a copy of ``states[c]`` (the result does not depend on the threads)."""
    out = np.empty((n_mc, 4))
    for c in prange(states.shape[0]):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_mc, b0 + chunk)
        if b0 < b1:
            _chunk_t_sums(m, nu, st, b0, b1, out)
    return out
