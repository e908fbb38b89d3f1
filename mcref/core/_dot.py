"""Dot products whose bits do not depend on BLAS's threads (docs/methods.md, "Invariants").

``w @ x`` calls BLAS, and OpenBLAS splits a dot of more than 10 000 values between its threads:
the sum then changes in its last bits with their number (``OPENBLAS_NUM_THREADS``, the cores, a
study's worker limits). :func:`fixed_dot` sums in an order fixed by the sizes alone. The long
loops of lagged dot products (:func:`mcref.optimal_block_length`) keep BLAS's speed instead and
run inside :func:`mcref.parallel.serial_blas`, BLAS on one thread.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fixed_dot"]


def fixed_dot(w: np.ndarray, x: np.ndarray) -> np.ndarray | float:
    """Σ_k w_k x_k over the last axis of ``x`` (one vector, or rows), in an order fixed by the sizes
    alone: NumPy's pairwise sum of the products.

    The Harrell–Davis windows (:mod:`mcref.core._hd`) pass 10 000 values from M ≈ 10⁶ on: with
    ``w @ x`` the shape screen's β_GM of a set of 10⁶ rows differed by 4·10⁻¹⁶ between one and two
    BLAS threads. Rows are summed in blocks of about 65 536 products, so that the scratch stays
    small (``running_quantiles``' windows).

    Examples
    --------
    >>> float(fixed_dot(np.array([0.25, 0.5, 0.25]), np.array([1.0, 2.0, 4.0])))
    2.25
    >>> fixed_dot(np.array([1.0, 1.0]), np.arange(6.0).reshape(3, 2)).tolist()
    [1.0, 5.0, 9.0]
    """
    if x.ndim < 2 or x.size <= _BLOCK:
        return np.add.reduce(w * x, axis=-1)
    out = np.empty(x.shape[:-1])  # rows in blocks: the products' scratch stays near _BLOCK values
    rows = max(1, _BLOCK // max(1, x.shape[-1]))
    for r in range(0, x.shape[0], rows):
        np.add.reduce(w * x[r:r + rows], axis=-1, out=out[r:r + rows])
    return out


#: values of products held at once by :func:`fixed_dot` on rows (each row's sum is the same whatever the blocks)
_BLOCK = 1 << 16
