"""The pair tiles of :mod:`mcref.kernels.pairs` against plain NumPy (docs/methods.md, "Two-sample
statistics and their permutation null")."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from mcref.kernels import pairs
from mcref.parallel import serial_blas


def _padded(Z, W):
    N, d = Z.shape
    n_pad = -(-N // pairs.TILE) * pairs.TILE
    Zt = np.zeros((d, n_pad))
    Zt[:, :N] = Z.T
    Wp = np.zeros((n_pad, W.shape[1]))
    Wp[:N] = W
    return Zt, Wp


def _dense(Z, family, c):
    D = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1))
    return {pairs.GAUSSIAN: np.exp(-c * D ** 2), pairs.LAPLACE: np.exp(-c * D),
            pairs.IMQ: 1.0 / np.sqrt(1.0 + c * D ** 2), pairs.DISTANCE: D}[family]


FAMILIES = [(pairs.GAUSSIAN, 0.3), (pairs.LAPLACE, 0.7), (pairs.IMQ, 0.5), (pairs.DISTANCE, 0.0)]


@pytest.mark.parametrize("N", [2, 63, 64, 65, 130, 600])
@pytest.mark.parametrize("family,c", FAMILIES)
def test_forms_and_row_sums_match_numpy(N, family, c):
    rng = np.random.default_rng(N)
    Z = rng.normal(size=(N, 3))
    Z[N // 2] = Z[0]  # a tie: distance 0
    Z = np.round(Z, 1)  # and many tied coordinates
    W = (rng.random((N, 5)) < 0.5).astype(np.float64)
    W[:, 0] = 1.0
    Zt, Wp = _padded(Z, W)
    with serial_blas():
        q = pairs.pair_forms(family, c, Zt, Wp)
        r = pairs.row_sums(family, c, Zt, N)
    K = _dense(Z, family, c)
    ref = np.einsum("ib,ij,jb->b", W, np.triu(K, 1), W)
    np.testing.assert_allclose(q, ref, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(K).max()))
    np.testing.assert_allclose(r, K.sum(1) - np.diag(K), rtol=1e-12, atol=1e-300)


def test_forms_bits_do_not_depend_on_threads():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(700, 4))
    W = (rng.random((700, 33)) < 0.5).astype(np.float64)
    Zt, Wp = _padded(Z, W)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        with serial_blas():
            a = pairs.pair_forms(pairs.GAUSSIAN, 0.2, Zt, Wp)
            ra = pairs.row_sums(pairs.GAUSSIAN, 0.2, Zt, 700)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        with serial_blas():
            b = pairs.pair_forms(pairs.GAUSSIAN, 0.2, Zt, Wp)
            rb = pairs.row_sums(pairs.GAUSSIAN, 0.2, Zt, 700)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(a, b) and np.array_equal(ra, rb)
