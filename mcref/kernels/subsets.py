"""Means over random subsets drawn without replacement (docs/methods.md, "Diagnostics"):
the random groups of ErrViewLib's ``plotAGV`` and ``plotAGVZMS``.

A subset of n of the M points is the first n entries of a partial Fisher–Yates shuffle
(each step swaps in a uniform pick among the entries not yet chosen), so a subset costs O(n)
draws, whatever the order the permutation scratch was left in by the previous subset.
"""

from __future__ import annotations

from numba import njit

from ._config import NJIT
from .rng import bounded_one


@njit(**NJIT)
def subset_means(x, y, n, state, perm, out_x, out_y):
    """``out_x[r]``, ``out_y[r]``: the means of ``x`` and of ``y`` over the same uniform random
    ``n``-subset of range(M), drawn afresh for every r from the xoshiro ``state`` (advanced in
    place). ``perm`` is scratch holding a permutation of range(M) (any order)."""
    m = x.shape[0]
    for r in range(out_x.shape[0]):
        sx = 0.0
        sy = 0.0
        for i in range(n):
            j = i + bounded_one(state, m - i)
            t = perm[i]
            perm[i] = perm[j]
            perm[j] = t
            sx += x[perm[i]]
            sy += y[perm[i]]
        out_x[r] = sx / n
        out_y[r] = sy / n
