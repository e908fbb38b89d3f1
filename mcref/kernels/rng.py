"""Per-chunk random streams for numba kernels (docs/methods.md, "Random numbers").

Each chunk of replicates owns a xoshiro256** state (4 × uint64) drawn from a
``numpy.random.SeedSequence`` child, so a chunk's draws do not depend on which
thread runs it. Global NumPy or numba RNG state is never touched.

References: D. Blackman & S. Vigna, "Scrambled linear pseudorandom number
generators", ACM TOMS 47 (2021), doi:10.1145/3460772; D. Lemire, "Fast random
integer generation in an interval", ACM TOMACS 29 (2019), doi:10.1145/3230636.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from ._config import NJIT


def chunk_states(seed_seq: np.random.SeedSequence, n_chunks: int) -> np.ndarray:
    """Spawn one xoshiro256** state per chunk: array ``(n_chunks, 4)`` of uint64."""
    states = np.empty((n_chunks, 4), dtype=np.uint64)
    for c, child in enumerate(seed_seq.spawn(n_chunks)):
        s = child.generate_state(4, np.uint64)
        if not s.any():  # the all-zero state is the one forbidden state
            s[0] = np.uint64(0x9E3779B97F4A7C15)
        states[c] = s
    return states


@njit(**NJIT)
def _rotl(x, k):
    """Rotate the 64-bit word ``x`` left by ``k`` bits."""
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(**NJIT)
def step(st):
    """xoshiro256** on a state *tuple* ``(s0, s1, s2, s3)``: (next 64-bit word, new state).

    Kernels keep the state in a tuple (registers) inside their loops and write it back
    with :func:`store_state` at the end: an array state passed to a call in a hot loop
    costs numba atomic reference counts on every call.
    """
    s0, s1, s2, s3 = st
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, (s0, s1, s2, s3)


@njit(**NJIT)
def load_state(s):
    """State array → state tuple."""
    return (s[0], s[1], s[2], s[3])


@njit(**NJIT)
def store_state(s, st):
    """State tuple → state array (in place)."""
    s[0], s[1], s[2], s[3] = st


@njit(**NJIT)
def next_u64(s):
    """xoshiro256**: next 64-bit output; advances the state array ``s`` in place."""
    result, st = step(load_state(s))
    store_state(s, st)
    return result


@njit(**NJIT)
def bounded_draws(s, n, m, out, as_counts):
    """``m`` i.i.d. uniform integers in ``[0, n)``, ``n < 2**32``.

    Two 32-bit halves per 64-bit draw (low half first), each mapped by Lemire's
    multiply-shift with rejection, so the draws are exactly uniform. ``as_counts=False``
    writes draw k to ``out[k]``; ``as_counts=True`` adds 1 to ``out[draw]`` (a bootstrap
    resample as multiplicities; ``out`` must be zeroed by the caller). Both modes consume
    the stream identically. The state lives in registers during the loop.
    """
    n64 = uint64(n)
    mask = uint64(0xFFFFFFFF)
    threshold = (uint64(1) << uint64(32)) % n64  # = 2**32 mod n
    st = load_state(s)
    i = 0
    while i < m:
        r, st = step(st)
        for half in range(2):
            x = (r >> uint64(32 * half)) & mask
            prod = x * n64
            if (prod & mask) >= threshold and i < m:
                j = np.int64(prod >> uint64(32))
                if as_counts:
                    out[j] += 1
                else:
                    out[i] = j
                i += 1
    store_state(s, st)


@njit(**NJIT)
def bounded_one(s, n):
    """One uniform integer in ``[0, n)``, ``n < 2**32``: Lemire's nearly divisionless
    method (the modulo is computed only on the rare draws that may be rejected)."""
    n64 = uint64(n)
    mask = uint64(0xFFFFFFFF)
    prod = (next_u64(s) >> uint64(32)) * n64
    low = prod & mask
    if low < n64:
        threshold = (uint64(1) << uint64(32)) % n64
        while low < threshold:
            prod = (next_u64(s) >> uint64(32)) * n64
            low = prod & mask
    return np.int64(prod >> uint64(32))


@njit(**NJIT)
def fill_indices(s, n, out):
    """Fill ``out`` with i.i.d. uniform integers in ``[0, n)`` (see :func:`bounded_draws`)."""
    bounded_draws(s, n, out.shape[0], out, False)


@njit(**NJIT)
def next_double(s):
    """Uniform double in [0, 1) with 53 random bits."""
    return np.float64(next_u64(s) >> uint64(11)) * (1.0 / 9007199254740992.0)
