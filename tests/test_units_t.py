"""The t(ν̂) references in clusters (mcref/kernels/units.py: ``t_cluster_sums``, ``t_rce_cluster_sums``):
their rows are the t ziggurat's draws (``variates.t_fast``, the sampler of ``fill_t`` and of the
unclustered reference), in each chunk's own stream order; the law of the cluster sums against
exact moments of unit-variance t(ν); the same bits for any thread count.

Every statistical check uses a fixed seed and a tolerance of 5 standard errors (or a KS p-value
> 1e-3), which a missing scale √((ν − 2)/ν), normal rows for t rows, or a dropped random intercept
fail at these sizes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mcref.kernels import variates as V
from mcref.kernels.rng import chunk_states
from mcref.kernels import units as U

CHUNK = 500


def _over(kernel, k: int, st: np.ndarray, n_mc: int, tasks=None) -> np.ndarray:
    """``out`` (n_mc, k) of a task kernel run over ranges of chunks ``tasks`` (default: one range of all)."""
    out = np.empty((n_mc, k))
    for c0, c1 in tasks or [(0, st.shape[0])]:
        kernel(c0, c1, out)
    return out


def t_cluster_sums(sizes, W, K, FL, FD, r, nu, st, chunk, n_mc, tasks=None):
    """The cluster moments of n_mc samples (:func:`mcref.kernels.units.t_cluster_sums` over ``tasks``)."""
    return _over(lambda c0, c1, out: U.t_cluster_sums(sizes, W, K, FL, FD, r, nu, st, chunk, c0, c1, out), 9, st,
                 n_mc, tasks)


def t_rce_cluster_sums(v, cstart, W, K, FL, FD, r, nu, rho, st, chunk, n_mc, tasks=None):
    """The RCE cluster sums of n_mc samples (:func:`mcref.kernels.units.t_rce_cluster_sums` over ``tasks``)."""
    return _over(lambda c0, c1, out: U.t_rce_cluster_sums(v, cstart, W, K, FL, FD, r, nu, rho, st, chunk, c0, c1,
                                                          out), 5, st, n_mc, tasks)


def states(seed: int, n_mc: int) -> np.ndarray:
    return chunk_states(np.random.SeedSequence(seed), -(-n_mc // CHUNK))


def unit_t(nu: float) -> float:
    """The factor √((ν − 2)/ν) from t(ν) to unit variance (1 for the normal)."""
    return 1.0 if nu == math.inf else math.sqrt((nu - 2.0) / nu)


def kurtosis_t(nu: float) -> float:
    """E z⁴ of unit-variance t(ν), ν > 4: 3(ν − 2)/(ν − 4) (3 for the normal)."""
    return 3.0 if nu == math.inf else 3.0 * (nu - 2.0) / (nu - 4.0)


def near(x: np.ndarray, mean: float, se: float | None = None) -> bool:
    """The sample mean of x within 5 standard errors of ``mean`` (``se`` exact, else the sample's)."""
    se = x.std(ddof=1) / math.sqrt(x.size) if se is None else se
    return abs(x.mean() - mean) < 5.0 * se


@pytest.mark.parametrize("nu", (3.0, 7.5, math.inf))
def test_single_rows_are_the_ziggurat_stream_of_each_chunk(nu):
    """One cluster of one row: S₁ of sample b is the b-th draw of its chunk's stream, i.e. chunk c's
    rows are fill_t(states[c])·√((ν − 2)/ν) (fill_normal for ν = inf), bit for bit, in both kernels."""
    tab = V.t_ziggurat(nu)
    n_mc = 1700
    st = states(3, n_mc)
    out = t_cluster_sums(np.array([1], dtype=np.int64), *tab, st, CHUNK, n_mc)
    rce = t_rce_cluster_sums(np.ones(1), np.array([0, 1], dtype=np.int64), *tab, 0.0, st, CHUNK, n_mc)
    ref = np.empty(n_mc)
    for c in range(st.shape[0]):
        seg = ref[c * CHUNK:(c + 1) * CHUNK]
        if nu == math.inf:
            V.fill_normal(st[c].copy(), seg)
        else:
            V.fill_t(st[c].copy(), *tab, seg)
    ref *= unit_t(nu)
    np.testing.assert_array_equal(out[:, 1], ref)
    np.testing.assert_array_equal(out[:, 0], 1.0)
    np.testing.assert_array_equal(rce[:, 0], ref * ref)


def test_random_intercept_stream_order():
    """t_rce_cluster_sums with ρ > 0: per cluster one normal η_g, then its rows' t draws, from the
    chunk's one stream (a per-draw reference from next_normal and one-value fill_t calls)."""
    nu, rho = 5.0, 0.3
    tab = V.t_ziggurat(nu)
    v = np.array([0.5, 2.0, 1.0, 1.5, 0.25, 3.0])
    cstart = np.array([0, 2, 3, 6], dtype=np.int64)
    n_mc = 2 * CHUNK + 7
    st = states(4, n_mc)
    out = t_rce_cluster_sums(v, cstart, *tab, rho, st, CHUNK, n_mc)
    a, c, one = math.sqrt(rho), math.sqrt(1.0 - rho), np.empty(1)
    for ch in (0, 2):
        s = st[ch].copy()
        for b in range(ch * CHUNK, min(n_mc, (ch + 1) * CHUNK)):
            row = np.zeros(5)
            for g in range(cstart.size - 1):
                eta = V.next_normal(s)
                eg = vg = 0.0
                for i in range(cstart[g], cstart[g + 1]):
                    V.fill_t(s, *tab, one)
                    z = a * eta + c * (one[0] * unit_t(nu))
                    eg += v[i] * z * z
                    vg += v[i]
                row += [eg, vg, eg * eg, vg * vg, eg * vg]
            np.testing.assert_allclose(out[b], row, rtol=1e-13)


@pytest.mark.parametrize("nu", (3.0, 6.0, math.inf))
def test_single_rows_have_the_unit_variance_t_law(nu):
    """2·10⁵ single-row clusters: KS against scipy's t(ν, scale √((ν − 2)/ν)) (N(0, 1) for ν = inf);
    the RCE kernel's e = z² against the law of z², a scaled F(1, ν)."""
    tab = V.t_ziggurat(nu)
    n_mc = 200_000
    z = t_cluster_sums(np.array([1], dtype=np.int64), *tab, states(5, n_mc), CHUNK, n_mc)[:, 1]
    law = stats.norm() if nu == math.inf else stats.t(nu, scale=unit_t(nu))
    assert stats.kstest(z, law.cdf).pvalue > 1e-3
    e = t_rce_cluster_sums(np.ones(1), np.array([0, 1], dtype=np.int64), *tab, 0.0, states(6, n_mc), CHUNK,
                           n_mc)[:, 0]
    law2 = stats.chi2(1) if nu == math.inf else stats.f(1, nu, scale=unit_t(nu) ** 2)
    assert stats.kstest(e, law2.cdf).pvalue > 1e-3


@pytest.mark.parametrize("nu", (10.0, math.inf))
def test_cluster_sums_have_the_exact_moments(nu):
    """10⁵ samples of one cluster of n = 5 independent unit-variance t(ν) rows (ν = 10: E z⁴ = 4,
    E z⁸ = 105(ν − 2)³/((ν − 4)(ν − 6)(ν − 8)) = 1120): E S₁ = 0, E S₁² = n, E S₂ = n,
    E S₂² = n(E z⁴ − 1) + n², E S₁⁴ = n E z⁴ + 3n(n − 1); single rows: E z⁴, with the exact
    standard error √((E z⁸ − (E z⁴)²)/N)."""
    tab = V.t_ziggurat(nu)
    n, n_mc = 5, 100_000
    out = t_cluster_sums(np.array([n], dtype=np.int64), *tab, states(7, n_mc), CHUNK, n_mc)
    k4 = kurtosis_t(nu)
    s1, s2 = out[:, 1], out[:, 2]
    np.testing.assert_array_equal(out[:, 4], s1 * s1)
    assert near(s1, 0.0, math.sqrt(n / n_mc))
    assert near(s1 * s1, n, math.sqrt((n * k4 + 3 * n * (n - 1) - n * n) / n_mc))
    assert near(s2, n)
    assert near(s2 * s2, n * (k4 - 1.0) + n * n)
    assert near(s1 ** 4, n * k4 + 3.0 * n * (n - 1))
    z = t_cluster_sums(np.array([1], dtype=np.int64), *tab, states(8, n_mc), CHUNK, n_mc)[:, 1]
    k8 = 105.0 if nu == math.inf else 105.0 * (nu - 2.0) ** 3 / ((nu - 4.0) * (nu - 6.0) * (nu - 8.0))
    assert near(z ** 4, k4, math.sqrt((k8 - k4 * k4) / n_mc))


@pytest.mark.parametrize("rho", (0.0, 0.5))
def test_random_intercept_cluster_moments(rho):
    """10⁵ samples of one cluster of n = 4 rows, v = 1, z_i = √ρ η + √(1 − ρ) t_i, ν = 10:
    E e = n, E e² = n(3ρ² + 6ρ(1 − ρ) + (1 − ρ)² E t⁴) + n(n − 1)(3ρ² + 2ρ(1 − ρ) + (1 − ρ)²)
    (31 at ρ = 0.5, 28 without the intercept); v sums exact."""
    nu, n, n_mc = 10.0, 4, 100_000
    out = t_rce_cluster_sums(np.ones(n), np.array([0, n], dtype=np.int64), *V.t_ziggurat(nu), rho,
                             states(9, n_mc), CHUNK, n_mc)
    k4 = kurtosis_t(nu)
    e = out[:, 0]
    assert near(e, n)
    same = 3 * rho ** 2 + 6 * rho * (1 - rho) + (1 - rho) ** 2 * k4
    other = 3 * rho ** 2 + 2 * rho * (1 - rho) + (1 - rho) ** 2
    assert near(e * e, n * same + n * (n - 1) * other)
    np.testing.assert_array_equal(out[:, 1], n)
    np.testing.assert_array_equal(out[:, 2], e * e)


def test_same_bits_for_any_tasks_and_number_of_samples():
    """Chunk c draws from states[c] only: one task of all chunks and one task per chunk (in any
    order, as threads would run them) give the same bits, and the first samples do not depend on
    how many follow."""
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 9, 60).astype(np.int64)
    cstart = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    v = rng.uniform(0.2, 3.0, cstart[-1])
    n_mc = 3 * CHUNK + 11
    st = states(10, n_mc)
    runs = []
    for tasks in (None, [(c, c + 1) for c in reversed(range(st.shape[0]))]):  # one range; one task per chunk
        runs.append([f(*V.t_ziggurat(nu)) for nu in (4.5, math.inf) for f in (
            lambda *tab: t_cluster_sums(sizes, *tab, st, CHUNK, n_mc, tasks),
            lambda *tab: t_rce_cluster_sums(v, cstart, *tab, 0.4, st, CHUNK, n_mc, tasks))])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    short = t_cluster_sums(sizes, *V.t_ziggurat(4.5), st[:2], CHUNK, 2 * CHUNK)
    np.testing.assert_array_equal(short, runs[0][0][:2 * CHUNK])
