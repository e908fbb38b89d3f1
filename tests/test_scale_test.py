"""The studentized bootstrap-t scale tests (mcref.verdict._scale_test; docs/methods.md, "Scale test")."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from mcref.verdict._scale_test import (bootstrap_sums, rce_test, scale_test, scale_tests, scale_unreliable, tail_ratio,
                               TAIL_RATIO_LIMIT)


def _t_reference(z):
    """T of ZMS, MZ, VarZ by plain NumPy (plug-in variances, as the docstring's formulas)."""
    m = z.size
    x = z ** 2
    t_zms = (x.mean() - 1) / math.sqrt(x.var() / m)
    t_mz = z.mean() / math.sqrt(z.var() / m)
    c = z - z.mean()
    m2, m4 = np.mean(c ** 2), np.mean(c ** 4)
    v = np.var(z, ddof=1)
    t_varz = (v - 1) / (m / (m - 1) * math.sqrt((m4 - m2 ** 2) / m))
    return {"ZMS": t_zms, "NLL": t_zms, "MZ": t_mz, "VarZ": t_varz}


def test_statistics_match_a_numpy_reference():
    rng = np.random.default_rng(3)
    z = 1.1 * rng.standard_t(5, 700) + 0.05
    res = scale_test(z, ["ZMS", "MZ", "VarZ", "NLL"], n_boot=200, seed=0)
    ref = _t_reference(z)
    for n in res.t:
        assert res.t[n] == pytest.approx(ref[n], rel=1e-9)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 700))
    E = 0.9 * u * rng.laplace(0, 2 ** -0.5, 700)
    r = (E ** 2).sum() / (u ** 2).sum()
    se = math.sqrt(((E ** 2 - r * u ** 2) ** 2).sum()) / (u ** 2).sum()
    assert rce_test(E, u, n_boot=200, seed=0).t["RCE"] == pytest.approx((r - 1) / se, rel=1e-9)


def test_bootstrap_replicates_match_a_numpy_reference():
    """T*_b from the resampled sums equals the plain formula on an explicit resample: columns
    (1, i) recover the counts' total and Σ w_i·i, and z-columns give the resample's T*."""
    rng = np.random.default_rng(4)
    z = rng.standard_normal(50)
    X = np.column_stack([np.ones(50), np.arange(50.0), z, z * z])
    S = bootstrap_sums(X, 300, np.random.SeedSequence(9))
    assert S.shape == (300, 4) and np.all(S[:, 0] == 50)
    assert abs(S[:, 1].mean() / 50 - 24.5) < 4 * 14.4 / math.sqrt(50 * 300)  # E Σw·i = Σi, sd of index 14.4
    # the p-values: equal-tailed against each pool, and their maximum
    res = scale_test(z, n_boot=300, seed=5)

    def eq(pool, t):
        return min(1.0, 2 * min(1 + np.count_nonzero(pool >= t), 1 + np.count_nonzero(pool <= t)) / 301)

    assert res.p_boot["ZMS"] == eq(res.tstar[0], res.t["ZMS"]) and res.p_t["ZMS"] == eq(res.tsim[0], res.t["ZMS"])
    assert res.p["ZMS"] == max(res.p_boot["ZMS"], res.p_t["ZMS"])
    # the t(ν̂) pool: T of M unit-variance t(ν̂) draws, centred at the true value
    assert abs(np.median(res.tsim[0])) < 0.5 and np.isfinite(res.nu)


def test_bootstrap_sums_are_multinomial_counts_across_leaves():
    """With X the identity, each replicate's sums are its multiplicities: M draws over M cells,
    each cell Binomial(M, 1/M) and the cells of the first leaf (256 of M = 600, split off by
    the binomial tree) together Binomial(M, 256/M), mean and variance within 4 standard errors."""
    m, b = 600, 1000
    S = bootstrap_sums(np.eye(m), b, np.random.SeedSequence(3))
    assert np.all(S == np.round(S)) and np.all(S >= 0) and np.all(S.sum(axis=1) == m)
    assert abs(S.mean() - 1.0) < 4 * math.sqrt((1 - 1 / m) / (m * b))
    first = S[:, :256].sum(axis=1)
    p = 256 / m
    var = m * p * (1 - p)
    assert abs(first.mean() - m * p) < 4 * math.sqrt(var / b)
    assert abs(first.var(ddof=1) - var) < 4 * var * math.sqrt(2 / (b - 1))
    # neighbouring cells across the leaf boundary are negatively correlated as the multinomial's -1/(M-1)
    c = np.corrcoef(S[:, 255], S[:, 256])[0, 1]
    assert abs(c + 1 / (m - 1)) < 4 / math.sqrt(b)


@pytest.mark.parametrize("k", [1, 3, 4, 5, 6, 9])
def test_bootstrap_sums_are_the_counts_times_x_column_by_column(k):
    """Each column's sums are W·X[:, j], with W the counts of the same streams (X = identity), for
    K = 1 … 9 columns: the kernel takes them four at a time into registers, partial groups of 1–3
    included. X holds small integers times powers of two, so every product and partial sum is
    exact in float64 (the kernel may fuse them into FMAs) and the comparison is bit for bit."""
    m, b = 700, 40
    W = bootstrap_sums(np.eye(m), b, np.random.SeedSequence(8))
    X = np.random.default_rng(k).integers(-1000, 1001, (m, k)) * 2.0 ** np.arange(k)
    got = bootstrap_sums(X, b, np.random.SeedSequence(8))
    assert np.array_equal(got, W @ X)
    assert len({tuple(c) for c in got.T}) == k  # columns distinct: a column read twice would show


@pytest.mark.parametrize("m", [5, 700, 70_000])
def test_expanded_columns_give_the_bits_of_stored_ones(m):
    """The resampling's POWERS (z → z, z², z³, z⁴) and PAIRS ((e, w) → e, w, e², w², e·w) give the
    sums of the same streams over the stored columns (NumPy's products x = z·z, x·z, x·x; e·e, w·w,
    e·w) bit for bit, on data whose products round: the scale tests read one or two columns
    instead of four or five and keep their bits."""
    from mcref.verdict._scale_test import _resampled
    from mcref.kernels.resample import PAIRS, POWERS

    rng = np.random.default_rng(m)
    z = 1.3 * rng.standard_t(5, m) + 0.1
    e, w = z * z / 1.7, rng.lognormal(0, 0.5, m)
    x = z * z
    for base, expand, cols in ((z[:, None], POWERS, [z, x, x * z, x * x]),
                               (np.column_stack([e, w]), PAIRS, [e, w, e * e, w * w, e * w])):
        def ss():  # a fresh one per call: the streams spawn its children
            return np.random.SeedSequence(m)

        got = _resampled(base, ss(), 0, 37, expand)
        want = _resampled(np.column_stack(cols), ss(), 0, 37)
        assert got.shape == (37, len(cols)) and np.array_equal(got, want)
        # and the rounds: replicates 11 … 36 alone are the same rows
        assert np.array_equal(_resampled(base, ss(), 11, 37, expand), want[11:])


def test_determinism_and_threads():
    rng = np.random.default_rng(6)
    z = rng.standard_normal(3000)
    a = scale_test(z, ["ZMS", "VarZ"], n_boot=700, seed=11)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = scale_test(z, ["ZMS", "VarZ"], n_boot=700, seed=11)
    finally:
        numba.set_num_threads(old)
    assert np.array_equal(a.tstar, b.tstar) and np.array_equal(a.tsim, b.tsim) and a.p == b.p
    assert a.p_joint == b.p_joint
    c = scale_test(z, ["ZMS", "VarZ"], n_boot=700, seed=12)
    assert not np.array_equal(a.tstar, c.tstar)


@pytest.mark.parametrize("m", [3, 5000, 16_385])
def test_regions_and_tasks_give_the_same_bits(monkeypatch, m):
    """A round as one ``prange`` region (``run_region``: the replicates' sums, the t(ν̂) sums, the
    columns) and as tasks on mcref's threads (``prange_safe`` false, or more than ``REGION_WORK``)
    give the same tests bit for bit, on 1 and 2 threads; the stored columns are z and (e, v) as NumPy
    computes them, and the sums of the columns they expand into (NumPy's products, by blocks of rows,
    in block order) the exact column sums to rounding."""
    import mcref.parallel as P
    from mcref.verdict._scale_test import _rce_columns, _z_columns

    rng = np.random.default_rng(m)
    u = rng.lognormal(0, 0.5, m)
    E = 1.05 * u * rng.standard_t(6, m) * math.sqrt(4 / 6)
    seen = set()
    old = numba.get_num_threads()
    try:
        for t in (1, 2):
            numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
            for layer, limit in ((None, P.REGION_WORK), ("workqueue", P.REGION_WORK), (None, 0.0)):
                monkeypatch.setattr(P, "_layer", layer)
                monkeypatch.setattr(P, "REGION_WORK", limit)
                zt = scale_test(E / u, ["ZMS", "VarZ"], n_boot=40, seed=2, nu=7.5)
                rt = rce_test(E, u, n_boot=40, seed=2)
                z = E / u
                v = u * u
                s = v.mean()
                v /= s
                seen.add((repr(zt.p), repr(zt.t), repr(rt.p), repr(rt.t), np.asarray(zt.tstar).tobytes(),
                          np.asarray(zt.tsim).tobytes(), np.asarray(rt.tstar).tobytes(),
                          *(a.tobytes() for a in _z_columns(z)), *(a.tobytes() for a in _rce_columns(E, v, s))))
    finally:
        numba.set_num_threads(old)
    assert len(seen) == 1
    *_, zc, zsum, rc, rsum = seen.pop()
    x = z * z
    e = E * E / s
    assert zc == z.tobytes() and rc == np.column_stack([e, v]).tobytes()
    for cols, got_sum in (([z, x, x * z, x * x], zsum), ([e, v, e * e, v * v, e * v], rsum)):
        for k, c in enumerate(cols):  # each column's sum within rounding of its magnitudes' sum
            assert abs(np.frombuffer(got_sum)[k] - math.fsum(c)) <= 1e-13 * math.fsum(np.abs(c))


def test_bad_inputs():
    with pytest.raises(ValueError, match="constant"):
        scale_test(np.ones(10), n_boot=10)
    with pytest.raises(ValueError):
        scale_test([1.0, np.nan, 2.0, 3.0], n_boot=10)
    with pytest.raises(ValueError, match="at least 3"):
        scale_test([1.0, 2.0], n_boot=10)
    with pytest.raises(ValueError, match="stats"):
        scale_test(np.arange(5.0), ["CC"], n_boot=10)
    with pytest.raises(ValueError, match="n_boot"):
        scale_test(np.arange(5.0), n_boot=1)
    with pytest.raises(ValueError):
        rce_test(np.arange(5.0), -np.ones(5), n_boot=10)
    assert scale_tests(["CC"], np.ones(5), np.ones(5), n_boot=10, seed=0) is None


def test_tail_screen_separates_laplace_from_t3():
    rng = np.random.default_rng(7)
    lap = [tail_ratio(rng.laplace(size=10_000)) for _ in range(20)]
    t3 = [tail_ratio(rng.standard_t(3, 10_000)) for _ in range(20)]
    assert max(lap) < 1.25 < min(t3) and max(lap) < TAIL_RATIO_LIMIT
    assert not scale_unreliable(rng.laplace(size=10_000), 0.81) and not scale_unreliable(rng.standard_t(3, 10_000), 0.7)
    assert scale_unreliable(rng.standard_t(2.2, 10_000), 0.9)


def _rate(hits):
    hits = np.asarray(hits)
    return hits.mean(), math.sqrt(0.05 * 0.95 / hits.size)


def test_power_laplace_scale_error():
    """A 25 % scale error with Laplace errors, M = 2000: detected at a rate far from the size
    (the previous t(ν̂) test: 0.17). 40 sets: the rate must exceed 5 % by 10 binomial sd."""
    root = np.random.SeedSequence(2027)
    hits = []
    for ss in root.spawn(40):
        rng = np.random.default_rng(ss)
        z = 1.25 * rng.laplace(0, 2 ** -0.5, 2000)
        hits.append(scale_test(z, n_boot=199, seed=ss.spawn(1)[0]).p["ZMS"] <= 0.05)
    rate, sd = _rate(hits)
    assert rate >= 0.05 + 10 * sd


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "skewed"])
def test_size_on_calibrated_data(kind):
    """Size at α = 0.05 within 3 binomial sd (400 sets, M = 500, B = 199): the scale test
    of ZMS and the bootstrap-t of RCE."""
    root = np.random.SeedSequence(31)
    hz, hr = [], []
    for ss in root.spawn(400):
        rng = np.random.default_rng(ss)
        eps = rng.standard_normal(500) if kind == "normal" else (rng.gamma(2.0, 1.0, 500) - 2) / math.sqrt(2)
        u = np.sqrt(1 / rng.gamma(4, 0.25, 500))
        a, b = ss.spawn(2)
        hz.append(scale_test(eps, n_boot=199, seed=a).p["ZMS"] <= 0.05)
        hr.append(rce_test(u * eps, u, n_boot=199, seed=b).p["RCE"] <= 0.05)
    for hits in (hz, hr):
        rate, sd = _rate(hits)
        assert abs(rate - 0.05) <= 3 * sd, (kind, rate)


def test_rounds_with_a_cache_give_the_uncached_tests():
    """validate's rounds call scale_tests on the same data with a cache (ν̂ and the screen kept,
    replicates added): each call equals the uncached call of the same B, screen flag and note
    included, also when a round runs one statistic only (``only``)."""
    rng = np.random.default_rng(12)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 1500))
    E = u * rng.standard_t(2.6, 1500) * 0.5  # power-law tails: the screen flags ZMS
    cache: dict = {}
    for b, only in ((64, None), (128, {"ZMS"}), (192, {"ZMS", "RCE"})):
        got = scale_tests(["ZMS", "RCE"], E, u, n_boot=b, seed=np.random.SeedSequence(4), cache=cache, only=only)
        ref = scale_tests(["ZMS", "RCE"], E, u, n_boot=b, seed=np.random.SeedSequence(4), only=only)
        assert got.p == ref.p and got.unreliable == ref.unreliable and got.note == ref.note
    assert got.unreliable["ZMS"] and "unreliable" in got.note and set(got.p) == {"ZMS", "RCE"}
