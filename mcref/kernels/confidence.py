"""Confidence curves and their probabilistic reference (docs/methods.md, "Diagnostics").

A confidence curve c(k), k = 0 … 99, is a statistic of the errors left after removing
the ⌊k·M/100⌋ points with the largest u (P. Pernot, "Confidence curves for UQ validation:
probabilistic reference vs. oracle", Digital Discovery 1 (2022) 691, ErrViewLib ``Sconf``).
With the errors ordered by decreasing u, the points left at step k are a suffix of that
order, so the whole curve is one pass of suffix sums: O(M) per curve.
"""

from __future__ import annotations

import math

from numba import njit

from ._config import NJIT
from .generative import NORMP, STUDENT_T, normp_scale, normp_value
from .variates import next_gamma, next_normal

STAT_RMSE = 0
STAT_MAE = 1


@njit(**NJIT)
def curve_from_sorted(e, cuts, stat, out):
    """c(k) of the errors ``e`` ordered by decreasing u: the statistic of ``e[cuts[k]:]``.

    ``stat`` 0: RMSE = √⟨e²⟩; 1: MAE = ⟨|e|⟩. ``cuts`` ascending, < len(e).
    """
    m = e.shape[0]
    k = cuts.shape[0] - 1
    acc = 0.0
    for i in range(m - 1, -1, -1):
        acc += e[i] * e[i] if stat == STAT_RMSE else abs(e[i])
        while k >= 0 and cuts[k] == i:
            mean = acc / (m - i)
            out[k] = math.sqrt(mean) if stat == STAT_RMSE else mean
            k -= 1


@njit(**NJIT)
def reference_curve(u_desc, cuts, stat, dcode, par, state, e, out):
    """The confidence curve of one synthetic set E* = u·ε, ε ~ N(0, 1) (``dcode`` NORMAL), the
    unit-variance t(ν) (STUDENT_T, ``par`` = ν > 2: ε = z·√((ν − 2)/V), V = 2·Γ(ν/2)) or the
    unit-variance normp(p) (NORMP, ``par`` = p: :func:`.generative.normp_value`, V = 2·Γ(1/p)),
    drawn from the xoshiro ``state`` (advanced in place); ``e`` is scratch of len(u_desc). The
    draws depend on the state only, so a thread pool running one call per draw gives
    thread-count-independent results."""
    m = u_desc.shape[0]
    scale = normp_scale(par) if dcode == NORMP else 1.0
    for i in range(m):
        z = next_normal(state)
        if dcode == STUDENT_T:
            v = 2.0 * next_gamma(state, 0.5 * par)
            z *= math.sqrt((par - 2.0) / v)
        elif dcode == NORMP:
            z = normp_value(z, 2.0 * next_gamma(state, 1.0 / par), par, scale)
        e[i] = u_desc[i] * z
    curve_from_sorted(e, cuts, stat, out)
