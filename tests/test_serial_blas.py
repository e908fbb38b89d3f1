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
