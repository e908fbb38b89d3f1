"""Equal-count bin boundaries (docs/methods.md, "Binning")."""

from __future__ import annotations

from numba import njit

from ._config import NJIT


@njit(**NJIT)
def equal_count_starts(m, n_bins, out):
    """Bin starts of ``m`` sorted points in ``n_bins`` equal-count bins.

    ``out[i] = floor(m*i/n_bins + 1/2)`` for ``i = 0..n_bins`` (so ``out[n_bins] = m``),
    computed exactly in integers as ``(2*m*i + n_bins) // (2*n_bins)``; this is
    ErrViewLib's ``genIntervals`` rule (round half up).
    """
    for i in range(n_bins + 1):
        out[i] = (2 * m * i + n_bins) // (2 * n_bins)
