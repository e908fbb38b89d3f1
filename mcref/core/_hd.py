"""Harrell–Davis quantiles: the weights of the order statistics and their application.

One home for the HD weights (:func:`hd_weights`), used by the shape screen
(:mod:`mcref.shape`: :func:`~mcref.shape.hd_quantile`, β_GM, κ_CS), by the ErrViewLib cut
rule of the bins (:mod:`mcref.binning`) and by the Q95 and interval curves of the
diagnostics. Operates on sorted float64 arrays; no argument checks (the public callers
check).

References
----------
F. E. Harrell and C. E. Davis (1982), "A new distribution-free quantile estimator",
*Biometrika* 69:635–640, doi:10.1093/biomet/69.3.635.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import betainc, betaincinv, betainccinv

from ._dot import fixed_dot

__all__ = ["HD_TAIL", "hd_weights", "hd_apply", "quantiles_sorted"]

#: Beta-CDF values within this distance of 0 or 1 are rounded to 0 / 1 in the
#: Harrell–Davis weights (see :func:`hd_weights`).
HD_TAIL = 1e-30


#: grid points of :func:`_betainc_threads` per thread, at least (about 0.35 ms of SciPy's betainc at
#: n = 10⁵: a thread's wake-up is paid for)
BETAINC_PER_THREAD = 1024


def _betainc_threads(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """``betainc(a, b, x)``, its ranges on numba's thread count of threads (SciPy's ufunc releases the
    GIL; element by element, so the same bits): the window of an HD weight at n = 10⁵ is ~3600
    points, 1.3 ms of serial work in the scale tests' screen (0.7 ms on two threads)."""
    import numba

    from ..parallel import map_chunks

    T = min(numba.get_num_threads(), x.size // BETAINC_PER_THREAD)
    if T < 2:
        return betainc(a, b, x)
    out = np.empty_like(x)
    cuts = np.linspace(0, x.size, T + 1).astype(np.int64)
    map_chunks(lambda c, _t: betainc(a, b, x[cuts[c]:cuts[c + 1]], out=out[cuts[c]:cuts[c + 1]]), T, T)
    return out


def hd_weights(n: int, probs: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Harrell–Davis weights for ``n`` sorted points, one ``(start, w)`` per probability (read-only
    arrays, kept for the last :data:`HD_CACHE` calls: a function of ``n`` and ``probs`` alone, which a
    study or a repeated validate of one size asks for again; 1.4 ms of the scale tests' screen at
    n = 10⁵, serial but for SciPy's betainc).

    The estimate at ``probs[k]`` is ``fixed_dot(w, xs[start:start + w.size])``
    (:func:`mcref.core._dot.fixed_dot`: not ``w @ …``, whose bits depend on BLAS's threads). The beta CDF
    :math:`I_{i/n}(a, b)` is evaluated only on the grid points where it is not within
    ``HD_TAIL`` of 0 or 1 (window from :func:`scipy.special.betaincinv` and
    :func:`scipy.special.betainccinv`), and set to exactly 0 / 1 outside: the skipped
    weights add up to at most ``2 * HD_TAIL``, far below rounding, while only
    about 23 standard deviations of Beta(a, b), i.e. O(sqrt(n)) points, are evaluated.
    """
    return list(_hd_weights(int(n), tuple(float(p) for p in np.ravel(probs))))


#: the calls of :func:`hd_weights` whose weights are kept
HD_CACHE = 32


@lru_cache(maxsize=HD_CACHE)
def _hd_weights(n: int, probs: tuple[float, ...]) -> tuple[tuple[int, np.ndarray], ...]:
    out = []
    for p in probs:
        a, b = p * (n + 1), (1.0 - p) * (n + 1)
        lo, hi = betaincinv(a, b, HD_TAIL), betainccinv(a, b, HD_TAIL)
        i0 = min(max(int(np.floor(lo * n)), 0), n - 1) if np.isfinite(lo) else 0
        i1 = min(max(int(np.ceil(hi * n)), i0 + 1), n) if np.isfinite(hi) else n
        cdf = _betainc_threads(a, b, np.arange(i0, i1 + 1, dtype=np.float64) / n)
        if not (cdf[0] <= 10 * HD_TAIL and cdf[-1] == 1.0):  # inverse inaccurate: full grid
            i0, i1 = 0, n
            cdf = _betainc_threads(a, b, np.arange(n + 1, dtype=np.float64) / n)
        cdf[0], cdf[-1] = 0.0, 1.0
        w = np.diff(cdf)
        w.setflags(write=False)
        out.append((i0, w))
    return tuple(out)


def hd_apply(weights: list[tuple[int, np.ndarray]], xs: np.ndarray) -> np.ndarray:
    """Apply :func:`hd_weights` to the sorted sample ``xs`` (:func:`mcref.core._dot.fixed_dot`)."""
    return np.array([fixed_dot(w, xs[i0:i0 + w.size]) for i0, w in weights])


def quantiles_sorted(xs: np.ndarray, probs: np.ndarray, method: str) -> np.ndarray:
    """Quantiles of the sorted sample ``xs``: HD, or numpy's default (linear, type 7)."""
    if method == "plain":
        return np.quantile(xs, probs)
    return hd_apply(hd_weights(xs.size, probs), xs)
