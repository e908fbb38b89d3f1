"""mcref.parallel.serial_blas runs BLAS on one thread inside its block and restores it after
(docs/methods.md, "Parallelism"): the t fit's L-BFGS-B steps, made between its threaded
likelihood passes, would otherwise wake OpenBLAS's threads, which spin on the cores the passes
need."""

from __future__ import annotations

import threading

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import mcref._distfit as DF  # noqa: E402
from mcref.parallel import serial_blas  # noqa: E402


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_blas_threads():
    """BLAS at two threads around the test, whatever the environment set (OPENBLAS_NUM_THREADS=1, …)."""
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can drive")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if set(_blas_threads()) != {2}:
            pytest.skip("the BLAS libraries here do not take two threads")
        yield


def test_one_thread_inside_and_restored_after(two_blas_threads):
    with serial_blas():
        assert set(_blas_threads()) == {1}
        with serial_blas():  # nested: still one, and the inner exit restores nothing
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}
    assert set(_blas_threads()) == {2}


def test_a_block_from_another_thread_inside_leaves_the_limit_to_the_outermost(two_blas_threads):
    seen = []

    def other():
        with serial_blas():
            seen.append(set(_blas_threads()))

    with serial_blas():
        th = threading.Thread(target=other)
        th.start()
        th.join()
        assert seen == [{1}]
        assert set(_blas_threads()) == {1}  # the other thread's exit restored nothing
    assert set(_blas_threads()) == {2}


def test_an_error_inside_restores(two_blas_threads):
    with pytest.raises(ZeroDivisionError):
        with serial_blas():
            1 / 0
    assert set(_blas_threads()) == {2}


def test_the_t_fit_runs_its_optimizer_with_blas_on_one_thread(two_blas_threads, monkeypatch):
    seen = []
    minimize = DF.optimize.minimize

    def spy(*args, **kwargs):
        seen.append(set(_blas_threads()))
        return minimize(*args, **kwargs)

    monkeypatch.setattr(DF.optimize, "minimize", spy)
    z = np.random.default_rng(3).standard_t(5, size=5000)
    fit = DF.fit_t(z)
    assert seen == [{1}]
    assert set(_blas_threads()) == {2}
    assert 2 < fit.nu < 12


def test_hd_estimates_do_not_depend_on_blas_threads(two_blas_threads):
    """The Harrell–Davis windows pass 10 000 values from M ≈ 10⁶ on, where OpenBLAS splits a dot
    between its threads: ``w @ x`` then changed in its last bits with their number, and with it the
    shape screen's β_GM. mcref.core._dot.fixed_dot sums in an order fixed by the sizes alone."""
    from mcref.core._hd import hd_apply, hd_weights
    from mcref.shape import skewness_gm

    x = np.random.default_rng(1).standard_normal(10**6) ** 2
    xs = np.sort(x)
    w = hd_weights(xs.size, np.array([0.125, 0.25, 0.5, 0.75, 0.875]))
    assert max(v.size for _, v in w) > 10_000
    two = hd_apply(w, xs), skewness_gm(x)
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        one = hd_apply(w, xs), skewness_gm(x)
    assert np.array_equal(one[0], two[0]) and one[1] == two[1]
    # the sum itself: NumPy's pairwise sum of the products, close to the exact one
    i0, v = w[2]
    exact = float(np.sum(v.astype(np.longdouble) * xs[i0:i0 + v.size].astype(np.longdouble)))
    assert abs(two[0][2] - exact) <= 1e-14 * abs(exact)


def test_dependence_measures_do_not_depend_on_blas_threads(two_blas_threads):
    """The design effect and the autocorrelations (fixed_dot) and Politis & White's block lengths
    (their lagged dots under serial_blas) give the same bits on one and on two BLAS threads."""
    from mcref.core._dependence import _acf, _long_run_ratio, design_effect, optimal_block_length

    rng = np.random.default_rng(2)
    e = rng.standard_normal(200_000)
    x = np.convolve(e, np.ones(5) / 5, mode="same")  # serially dependent
    gid = np.repeat(np.arange(20_000), 10)
    def measures():
        d, rho = _long_run_ratio(x)
        return design_effect(x, gid), _acf(x, 3).tolist(), optimal_block_length(x), d, rho.tolist()

    two = measures()
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        one = measures()
    assert one == two
    assert 3.8 < two[0] < 4.6  # five-point moving averages in groups of ten: d = 1 + 2·Σ_k (1 − k/10)·ρ_k = 4.2


def test_fixed_dot_on_rows_is_each_rows_own_sum():
    """fixed_dot sums rows in blocks (to bound its scratch): each row's value is the 1-D sum of that
    row, bit for bit, whatever the blocks, and matches the exact sum to rounding."""
    from mcref.core._dot import fixed_dot

    rng = np.random.default_rng(4)
    x = rng.standard_normal((700, 301))  # 210 700 products: four blocks of 217 rows
    w = rng.random(301)
    got = fixed_dot(w, x)
    assert got.shape == (700,)
    assert all(got[r] == fixed_dot(w, x[r]) for r in range(700))
    exact = (x.astype(np.longdouble) * w.astype(np.longdouble)).sum(axis=1)
    assert np.allclose(got, exact.astype(np.float64), rtol=0, atol=1e-12)
