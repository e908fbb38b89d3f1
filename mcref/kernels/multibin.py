"""Binned statistics for several bin counts from one sorted sample (docs/methods.md, "Studies").

The scaling study evaluates ENCE and ZMSE for N ∈ {10, 20, …, 50} equal-count bins on
the same synthetic dataset. The bin boundaries of all those N, ``floor(M·i/N + 1/2)``,
cut the sorted points into at most Σ N segments (their union). One pass sums u², E²,
z² per *segment*; each bin of each N is then a sum of whole segments, and its
statistic comes from :func:`mcref.kernels.stats.finish_binned`, the evaluator of the
estimates and of the bootstrap. Per-segment sums (rather than prefix-sum differences)
keep every bin sum free of cancellation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT
from .generative import transform
from .stats import ENCE, ZMSE, finish_binned


@njit(**NJIT)
def multibin_kernel(dcode, nu, u2, z, v, cuts, bin_seg, n_bins, eps, seg, acc, out):
    """ENCE and ZMSE for every bin count of ``n_bins``, for each row r of a chunk.

    ``u2[r]`` sorted u², ``z[r]``/``v[r]`` the deviates of ε = D(z, v) (see
    :func:`.generative.transform`), E² = u²ε², z² = ε²; ``out[r, g, 0]`` = ENCE and
    ``out[r, g, 1]`` = ZMSE with ``n_bins[g]`` bins. Scratch: ``eps`` (M,), ``seg``
    (S, 4), ``acc`` (max N, 4).
    """
    n_rep = u2.shape[0]
    n_seg = cuts.shape[0] - 1
    m = np.float64(u2.shape[1])
    for r in range(n_rep):
        transform(dcode, nu, z[r], v[r], eps, eps)
        ur = u2[r]
        for s in range(n_seg):
            su2 = 0.0
            se2 = 0.0
            sz2 = 0.0
            lo = cuts[s]
            hi = cuts[s + 1]
            eb = eps[lo:hi]
            ub = ur[lo:hi]
            for i in range(eb.shape[0]):
                e2 = eb[i] * eb[i]
                su2 += ub[i]
                se2 += ub[i] * e2
                sz2 += e2
            seg[s, 0] = np.float64(hi - lo)
            seg[s, 1] = su2
            seg[s, 2] = se2
            seg[s, 3] = sz2
        for g in range(n_bins.shape[0]):
            nb = n_bins[g]
            for b in range(nb):
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                a3 = 0.0
                for s in range(bin_seg[g, b], bin_seg[g, b + 1]):
                    a0 += seg[s, 0]
                    a1 += seg[s, 1]
                    a2 += seg[s, 2]
                    a3 += seg[s, 3]
                acc[b, 0] = a0
                acc[b, 1] = a1
                acc[b, 2] = a2
                acc[b, 3] = a3
            out[r, g, 0] = finish_binned(ENCE, acc[:nb], m)
            out[r, g, 1] = finish_binned(ZMSE, acc[:nb], m)
