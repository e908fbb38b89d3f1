"""Kernels of a user statistic (:func:`mcref.register_statistic`): the bootstrap, the
jackknife and the Monte Carlo references of any numba function ``func(E, u) -> float``.

A user function cannot be a kernel code, so each registered statistic gets its own three
kernels, built here around it (numba closures over the user's dispatcher; not cached on
disk, since the user's function is not). They walk the same random streams as the
built-in kernels: the bootstrap draws its resamples with :func:`.bootstrap.draw_resample`
(the resamples of :func:`.bootstrap.boot_kernel` for the same states), and the references
read the ε that :func:`.reference.mc_chunk_kernel` keeps. So a user statistic is computed
on exactly the resamples and the simulated datasets of the built-in ones.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from numba import njit

from ._config import NJIT_USER
from .bootstrap import draw_resample, resample_scratch


class UserKernels(NamedTuple):
    boot: Callable
    jack: Callable
    sim: Callable


def make_user_kernels(func) -> UserKernels:
    """The three kernels of the numba function ``func(E, u) -> float``.

    ``boot(states, tstates, r0, r1, E, u, groups, starts, out)``: ``out[r]`` = func on resample r
    for r0 ≤ r < r1, scratch allocated once per call (E, u sorted by u; ``states``/``tstates``
    (B, 4) and ``out`` (B,) whole, ``groups``/``starts`` as in ``boot_kernel``).
    ``jack(E, u, j0, out)``: ``out[k]`` = func without point j0 + k (leave-one-out).
    ``sim(eps, u, out)``: ``out[r]`` = func(u·eps[r], u) for the kept ε of a chunk.
    """

    @njit(**NJIT_USER)
    def boot(states, tstates, r0, r1, E, u, groups, starts, out):
        m = E.shape[0]
        w, stack, cuts, corr, cs = resample_scratch(m, starts.shape[0] - 1)
        tarr = np.empty(4, dtype=np.uint64)
        row = np.empty(m, dtype=np.int64)
        Eb = np.empty(m)
        ub = np.empty(m)
        for r in range(r0, r1):
            draw_resample(states[r], tstates[r], m, groups, starts, w, stack, cuts, corr, cs, tarr, row)
            for k in range(m):
                Eb[k] = E[row[k]]
                ub[k] = u[row[k]]
            out[r] = func(Eb, ub)

    @njit(**NJIT_USER)
    def jack(E, u, j0, out):
        m = E.shape[0]
        Eb = np.empty(m - 1)
        ub = np.empty(m - 1)
        for k in range(out.shape[0]):
            j = j0 + k
            Eb[:j] = E[:j]
            ub[:j] = u[:j]
            Eb[j:] = E[j + 1:]
            ub[j:] = u[j + 1:]
            out[k] = func(Eb, ub)

    @njit(**NJIT_USER)
    def sim(eps, u, out):
        m = u.shape[0]
        Eb = np.empty(m)
        for r in range(out.shape[0]):
            for i in range(m):
                Eb[i] = u[i] * eps[r, i]
            out[r] = func(Eb, u)

    return UserKernels(boot, jack, sim)
