"""mcref's ``prange`` kernels off validate's path (scores, the uniformity band, SKCE, the ensemble's
swapped sets) and their serial twins (:func:`mcref.parallel.parallel_kernel`): where numba's
threading layer is not safe (a forked child of a parent that used GNU OpenMP, the ``workqueue``
layer) the same Python function runs compiled without ``parallel``, and gives the same bits."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

import mcref.parallel as P
from mcref import scores
from mcref._skce import skce, skce_test
from mcref.calibration import _band_h
from mcref.verdict._ensemble import swapped_sets


def _outputs() -> list[bytes]:
    """Every ``prange`` kernel's output on small inputs, as bytes."""
    rng = np.random.default_rng(4)
    n = 300
    y = rng.normal(size=n)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, n)
    samples = mu[:, None] + sigma[:, None] * rng.standard_t(5, size=(n, 20))
    out = [scores.crps_normal(y, mu, sigma), scores.crps_ensemble(y, samples),
           scores.crps_ensemble(y, samples, estimator="fair"),
           scores.interval_score(y, mu - 1.64 * sigma, mu + 1.64 * sigma, 0.1),
           np.array([_band_h(200, 49, 300, 0.95, 3)])]
    out += [np.array([skce(y, mu, sigma, estimator=e, block_size=4)]) for e in ("unbiased", "block", "biased")]
    for method in ("consistency", "asymptotic_block", "asymptotic_unbiased", "cme"):
        t = skce_test(y, mu, sigma, method=method, n_mc=60, seed=2) if method == "consistency" else \
            skce_test(y, mu, sigma, method=method, seed=2)
        out.append(np.array([t.estimate, t.statistic, t.pvalue, np.nan if t.reference is None else np.sum(t.reference)]))
    out += list(swapped_sets(y[:40], samples[:40], 5, seed=1))
    return [np.asarray(a).tobytes() for a in out]


def test_serial_twins_give_the_prange_kernels_bits(monkeypatch):
    """``parallel_kernel`` hands back the kernel where ``prange_safe``, and otherwise its serial twin,
    whose outputs are the kernel's bit for bit."""
    from mcref.kernels.scores import crps_normal_kernel

    monkeypatch.setattr(P, "_layer", "omp")
    monkeypatch.setattr(P, "_forked", False)
    assert P.parallel_kernel(crps_normal_kernel) is crps_normal_kernel
    want = _outputs()
    monkeypatch.setattr(P, "_layer", "workqueue")
    twin = P.parallel_kernel(crps_normal_kernel)
    assert twin is not crps_normal_kernel and not twin.targetoptions.get("parallel")
    assert _outputs() == want


def _child_outputs():
    return _outputs(), P._forked


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_prange_kernels_in_a_forked_child_after_the_parent_used_openmp():
    """A child forked after the parent ran ``prange`` kernels (GNU OpenMP: numba would terminate a
    child that starts a region) runs them as serial twins, with the parent's bits."""
    parent = _outputs()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        child, forked = pool.apply_async(_child_outputs).get(timeout=120)  # a terminated child: no hang
    assert forked and child == parent


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")  # B = N_MC = 200: quick
def test_validate_with_groups_and_features_same_on_regions_twins_and_tasks(monkeypatch):
    """Regions, tasks and serial twins together on validate's combined path: features (adaptivity
    rows), dependent rows in groups (the cluster scale tests fit ν̂ by a region too), and the plain
    table, each the same bit for bit whether numba's threads may run (``omp``) or not
    (``workqueue``: tasks and twins), on 1 and 2 threads."""
    import numba

    import mcref

    rng = np.random.default_rng(12)
    m = 3000
    u = rng.lognormal(0.0, 0.5, m)
    E = 1.1 * u * rng.standard_t(6, m) * np.sqrt(4 / 6)
    x = rng.normal(size=m)
    gid = np.repeat(np.arange(m // 6), 6)
    calls = [dict(), dict(x=x), dict(groups=gid), dict(x=x, groups=gid)]
    seen = {}
    old = numba.get_num_threads()
    try:
        for t in (1, 2):
            numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
            for layer in ("omp", "workqueue"):
                monkeypatch.setattr(P, "_layer", layer)
                monkeypatch.setattr(P, "_forked", False)
                for k, kw in enumerate(calls):
                    r = mcref.validate(E, u, seed=5, n_boot=200, n_mc=200, progress=False, **kw)
                    seen.setdefault(k, set()).add(repr(r))  # every row, reference and p at full precision
    finally:
        numba.set_num_threads(old)
    assert all(len(v) == 1 for v in seen.values())
    assert len({next(iter(v)) for v in seen.values()}) == len(calls)  # the options change the tables
