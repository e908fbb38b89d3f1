"""The kernel calibration error (mcref.skce, mcref.skce_test; kernels/skce.py): published
values, quadrature of the definitions, naive estimators, thread-count and unit invariance,
the input checks, the size and power of the tests."""

from __future__ import annotations

import math
import random

import numba
import numpy as np
import pytest
from scipy import integrate, special, stats

import mcref
from mcref.kernels import skce as K

import naive

SQ2, SQ3, SQ5, SQ6 = math.sqrt(2), math.sqrt(3), math.sqrt(5), math.sqrt(6)


def rel(a, b):
    return abs(a - b) / abs(b)


# --------------------------------------------------------------------------- published values


def test_calibrationerrors_jl_values():
    """CalibrationErrors.jl's exact values, normal predictions, length scales 1."""
    v = mcref.skce([0.0, 0.0], [0.0, 0.0], [1.0, 1.0], length_scales=(1, 1))
    assert rel(v, 1 - SQ2 + 1 / SQ3) < 1e-12
    v = mcref.skce([1.0, 0.0], [0.0, 1.0], [1.0, 2.0], length_scales=(1, 1))
    exact = math.exp(-SQ2) * (math.exp(-0.5) - 1 / SQ2 - 1 / SQ5 + math.exp(-1 / 12) / SQ6)
    assert rel(v, exact) < 1e-12 and round(v, 6) == -0.041861
    v = mcref.skce([0.0, 1.0], [0.0, 1.0], [1.0, 2.0], length_scales=(1, 1))
    exact = math.exp(-SQ2) * (math.exp(-0.5) - math.exp(-0.25) / SQ2 - math.exp(-0.1) / SQ5
                              + math.exp(-1 / 12) / SQ6)
    assert rel(v, exact) < 1e-12 and round(v, 6) == 0.006512


def test_pycalibration_readme():
    """pycalibration's README: random.seed(1234); 100 predictions Normal(gauss(0, 1), random()),
    then 100 targets gauss(0, 1); unbiased SKCE with WassersteinExponentialKernel ⊗
    SqExponentialKernel."""
    r = random.Random(1234)
    preds = [(r.gauss(0, 1), r.random()) for _ in range(100)]
    y = [r.gauss(0, 1) for _ in range(100)]
    v = mcref.skce(y, [p[0] for p in preds], [p[1] for p in preds], length_scales=(1, 1))
    assert rel(v, 0.02203618235964146) < 1e-12


# --------------------------------------------------------------------------- closed forms against quadrature


def _quad(f, points):
    edges = [-np.inf] + sorted(points) + [np.inf]
    return sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=400)[0] for a, b in zip(edges[:-1], edges[1:]))


def _h_by_quadrature(k, dens1, dens2, y1, y2, kp, pts1, pts2, inner):
    """h of two rows from the definition: each expectation a numerical integral; ``inner(zt)``
    is E_{Z∼p_1} k(Z − zt), the inner integral of E k(Z, Z̃) (a closed form or a quadrature)."""
    e1 = _quad(lambda z: k(z - y2) * dens1(z), pts1 + [y2])
    e2 = _quad(lambda z: k(y1 - z) * dens2(z), pts2 + [y1])
    ee = _quad(lambda zt: inner(zt) * dens2(zt), pts2 + pts1)
    return kp * (k(y1 - y2) - e1 - e2 + ee)


def _laplace_g(b, z):
    """E exp(−|X − z|), X ~ Laplace(0, b): (b e^{−z/b} − e^{−z})/(b² − 1), (1 + z)e^{−z}/2 at b = 1
    (CalibrationErrors.jl, src/distributions/laplace.jl)."""
    z = abs(z)
    if b == 1.0:
        return (1 + z) * math.exp(-z) / 2
    return (b * math.exp(-z / b) - math.exp(-z)) / (b * b - 1)


@pytest.mark.parametrize("m1,b1,m2,b2,y1,y2", [
    (0.0, 1.0, 0.5, 2.0, 0.3, -1.0),   # general
    (0.2, 0.7, -0.4, 0.7, 1.5, 0.0),   # b = b̃
    (0.0, 1.0, 1.0, 1.0, 0.0, 0.0),    # b = b̃ = 1 (the kernel's own scale)
    (1.0, 0.3, 1.0, 3.0, 2.0, -2.0),   # same location
])
def test_laplace_pairs_against_quadrature(m1, b1, m2, b2, y1, y2):
    """Laplace predictions, exponential kernel, length scales (1, 1): h by quadrature of its
    definition (W₂² = Δμ² + 2Δb²)."""
    kp = math.exp(-math.sqrt((m1 - m2) ** 2 + 2 * (b1 - b2) ** 2))
    ref = _h_by_quadrature(lambda d: math.exp(-abs(d)), stats.laplace(m1, b1).pdf, stats.laplace(m2, b2).pdf,
                           y1, y2, kp, [m1], [m2], lambda zt: _laplace_g(b1, zt - m1))
    v = mcref.skce([y1, y2], [m1, m2], [b1, b2], family="laplace", length_scales=(1, 1))
    assert rel(v, ref) < 1e-9


def _normal_exp_mean(d, s):
    """E exp(−|W|), W ~ N(d, s²): e^{s²/2}[e^{−d}Φ(d/s − s) + e^{d}Φ(−d/s − s)]."""
    return (math.exp(s * s / 2 - d + special.log_ndtr(d / s - s))
            + math.exp(s * s / 2 + d + special.log_ndtr(-d / s - s)))


@pytest.mark.parametrize("m1,s1,m2,s2,y1,y2", [
    (0.0, 1.0, 0.5, 2.0, 0.3, -1.0), (0.2, 0.1, -0.4, 0.1, 1.5, 0.0), (0.0, 3.0, 5.0, 0.2, 0.0, 9.0)])
def test_normal_exponential_pairs_against_quadrature(m1, s1, m2, s2, y1, y2):
    """Normal predictions, exponential kernel: h by quadrature (Z − Z̃ ~ N(Δμ, σ² + σ̃²))."""
    kp = math.exp(-math.hypot(m1 - m2, s1 - s2))
    d1 = stats.norm(m1, s1).pdf
    ref = _h_by_quadrature(lambda d: math.exp(-abs(d)), d1, stats.norm(m2, s2).pdf, y1, y2, kp, [m1], [m2],
                           lambda zt: _normal_exp_mean(m1 - zt, s1))
    v = mcref.skce([y1, y2], [m1, m2], [s1, s2], target_kernel="exponential", length_scales=(1, 1))
    assert rel(v, ref) < 1e-9


def test_normal_gaussian_pair_against_quadrature():
    kp = math.exp(-math.hypot(0.4, 0.5) / 0.8)
    k = lambda d: math.exp(-d * d / (2 * 1.7 ** 2))  # noqa: E731
    d1 = stats.norm(0.0, 1.0).pdf
    ref = _h_by_quadrature(k, d1, stats.norm(0.4, 0.5).pdf, 0.9, -0.2, kp, [0.0], [0.4],
                           lambda zt: math.exp(-zt * zt / (2 * (1.7 ** 2 + 1))) * 1.7 / math.sqrt(1.7 ** 2 + 1))
    assert rel(mcref.skce([0.9, -0.2], [0.0, 0.4], [1.0, 0.5], length_scales=(0.8, 1.7)), ref) < 1e-10


def test_special_functions():
    """erfcx against scipy, the vectorizable exp against NumPy's, the O(m) sum of the exponential
    kernel over member pairs against the double loop, the Laplace means at coincident scales
    against their neighbours."""
    x = np.concatenate([np.linspace(0, 40, 4001), [1e-300, 11.99, 12.0, 12.01, 1e3]])
    got = np.array([K.erfcx(v) for v in x])
    assert np.max(np.abs(got / special.erfcx(x) - 1)) < 2e-14
    x = -np.random.default_rng(0).random(20000) * np.r_[1.0, 50.0, 700.0].repeat(20000 // 3 + 1)[:20000]
    got = np.array([K.fexp(v) for v in x])
    assert np.max(np.abs(got / np.exp(x) - 1)) < 5e-16
    rng = np.random.default_rng(1)
    for m, n in ((5, 7), (1, 1), (12, 3)):
        a, b = np.sort(rng.normal(size=m) * 3), np.sort(rng.normal(size=n) * 3)
        b[0] = a[0]  # a tie
        ref = sum(math.exp(-abs(p - q)) for p in a for q in b)
        assert rel(K.exp_cross_sum(a, b), ref) < 1e-13
    for z in (0.0, 0.5, 4.0):
        assert rel(K.laplace_exp_mean(1.0, z), K.laplace_exp_mean(1.0 + 1e-7, z)) < 1e-6
        assert rel(K.laplace_exp_mean2(1.0, 1.0, z), K.laplace_exp_mean2(1.0 - 1e-7, 1.0 + 1e-7, z)) < 1e-6
        assert rel(K.laplace_exp_mean2(2.0, 2.0, z), K.laplace_exp_mean2(2.0, 2.0 + 1e-6, z)) < 1e-5


# --------------------------------------------------------------------------- estimators against their definitions


def _normal_set(n, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sd = rng.uniform(0.3, 2.0, n)
    return mu + sd * rng.standard_normal(n), mu, sd


@pytest.mark.parametrize("estimator,block_size", [("unbiased", 2), ("biased", 2), ("block", 2), ("block", 7)])
def test_normal_estimators_against_naive(estimator, block_size):
    y, mu, sd = _normal_set(45)
    h = lambda i, j: naive.skce_h_normal_gauss(y[i], mu[i], sd[i], y[j], mu[j], sd[j], 0.7, 1.3)  # noqa: E731
    ref = naive.skce_estimate(h, y.size, estimator, block_size)
    got = mcref.skce(y, mu, sd, estimator=estimator, block_size=block_size, length_scales=(0.7, 1.3))
    assert abs(got - ref) < 1e-13 * max(1.0, abs(ref)) + 1e-15


@pytest.mark.parametrize("kernel", ["gaussian", "exponential"])
@pytest.mark.parametrize("estimator,block_size", [("unbiased", 2), ("biased", 2), ("block", 4)])
def test_samples_estimators_against_naive(kernel, estimator, block_size):
    rng = np.random.default_rng(3)
    n, m = 14, 5
    S = rng.normal(size=(n, m)) * rng.uniform(0.5, 2, (n, 1)) + rng.normal(size=(n, 1))
    S[2, 1] = S[2, 3]  # ties between members
    y = rng.normal(size=n)
    h = lambda i, j: naive.skce_h_samples(y[i], S[i], y[j], S[j], kernel, 0.9, 1.1)  # noqa: E731
    ref = naive.skce_estimate(h, n, estimator, block_size)
    got = mcref.skce(y, samples=S, estimator=estimator, block_size=block_size, length_scales=(0.9, 1.1),
                     target_kernel=kernel)
    assert abs(got - ref) < 1e-13


def test_pair_sum_over_many_tiles_against_naive():
    """Several tiles of rows, the folded tasks (odd and even tile counts) and the row chunks."""
    for n in (64 * 5 + 3, 64 * 4):
        y, mu, sd = _normal_set(n, seed=n)
        h = lambda i, j: naive.skce_h_normal_gauss(y[i], mu[i], sd[i], y[j], mu[j], sd[j])  # noqa: E731
        ref = sum(h(i, j) for i in range(n) for j in range(i + 1, n)) / (n * (n - 1) / 2)
        assert abs(mcref.skce(y, mu, sd, length_scales=(1, 1)) - ref) < 1e-14


def test_two_members_equal_the_discrete_law():
    """Samples with identical members are a point mass: with the exponential kernel, h is then
    that of the two members treated as draws."""
    y = np.array([0.1, -0.4, 0.8])
    S = np.array([[0.0, 1.0], [0.5, 0.5], [-1.0, 2.0]])
    a = mcref.skce(y, samples=S, length_scales=(1, 1))
    b = mcref.skce(y, samples=S[:, ::-1], length_scales=(1, 1))  # member order is irrelevant
    assert a == b


# --------------------------------------------------------------------------- invariances


def test_thread_count_invariance():
    """Bit-identical with 1 and 2 threads: the estimators and the consistency test."""
    y, mu, sd = _normal_set(700)
    S = mu[:, None] + sd[:, None] * np.random.default_rng(5).normal(size=(700, 4))
    calls = [lambda: mcref.skce(y, mu, sd), lambda: mcref.skce(y, mu, sd, estimator="biased"),
             lambda: mcref.skce(y, mu, sd, estimator="block", block_size=9),
             lambda: mcref.skce(y, samples=S, target_kernel="exponential"),
             lambda: mcref.skce_test(y, mu, sd, n_mc=9, seed=3).reference.tolist(),
             lambda: mcref.skce_test(y, mu, sd, method="asymptotic_unbiased", n_boot=9, seed=3).reference.tolist()]
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = [f() for f in calls]
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = [f() for f in calls]
    finally:
        numba.set_num_threads(before)
    assert one == two


def test_unit_invariance():
    """y, loc, scale × c: the same estimate and p (the default length scales follow the unit);
    bit for bit when c is a power of 2."""
    y, mu, sd = _normal_set(200, seed=7)
    base = mcref.skce_test(y, mu, sd, n_mc=49, seed=11)
    for c in (4.0, 0.125):
        t = mcref.skce_test(c * y, c * mu, c * sd, n_mc=49, seed=11)
        assert (t.estimate, t.pvalue) == (base.estimate, base.pvalue)
        assert t.length_scales == (c * base.length_scales[0], c * base.length_scales[1])
    t = mcref.skce_test(3.7 * y, 3.7 * mu, 3.7 * sd, n_mc=49, seed=11)
    assert rel(t.estimate, base.estimate) < 1e-9 and t.pvalue == base.pvalue
    b = mcref.skce_test(y, mu, sd, method="asymptotic_block", block_size=10)
    t = mcref.skce_test(3.7 * y, 3.7 * mu, 3.7 * sd, method="asymptotic_block", block_size=10)
    assert rel(t.pvalue, b.pvalue) < 1e-8
    S = mu[:, None] + sd[:, None] * np.random.default_rng(2).normal(size=(200, 6))
    assert mcref.skce(y, samples=S) == mcref.skce(8 * y, samples=8 * S)
    assert mcref.skce(y, mu, sd, family="laplace") == mcref.skce(2 * y, 2 * mu, 2 * sd, family="laplace")


def test_length_scales_rule():
    """The documented rule, all pairs up to 1024 rows: medians of the rms of Z_i − Z_j and of W₂."""
    _, mu, sd = _normal_set(60, seed=1)
    i, j = np.triu_indices(60, 1)
    l_p, l_y = mcref.skce_length_scales(mu, sd)
    assert l_y == np.median(np.sqrt((mu[i] - mu[j]) ** 2 + sd[i] ** 2 + sd[j] ** 2))
    assert l_p == np.median(np.hypot(mu[i] - mu[j], sd[i] - sd[j]))
    # beyond 1024 rows a fixed subsample of 2¹⁷ pairs: close to the median over all pairs
    _, mu, sd = _normal_set(1500, seed=2)
    i, j = np.triu_indices(1500, 1)
    l_p, l_y = mcref.skce_length_scales(mu, sd)
    assert rel(l_y, np.median(np.sqrt((mu[i] - mu[j]) ** 2 + sd[i] ** 2 + sd[j] ** 2))) < 0.02
    assert rel(l_p, np.median(np.hypot(mu[i] - mu[j], sd[i] - sd[j]))) < 0.02
    # constant u: every prediction the same law, k_P ≡ 1 whatever ℓ_P
    l_p, l_y = mcref.skce_length_scales(np.zeros(10), np.ones(10))
    assert l_p == l_y == math.sqrt(2)


# --------------------------------------------------------------------------- input checks


def test_length_scales_input_checks():
    with pytest.raises(ValueError, match=r"at least 2 rows"):
        mcref.skce_length_scales([0.0], [1.0])
    with pytest.raises(ValueError, match=r"pass `loc` and `scale`"):
        mcref.skce_length_scales()
    with pytest.raises(ValueError, match=r"`scale` must be > 0"):
        mcref.skce_length_scales([0.0, 1.0], [1.0, -1.0])


@pytest.mark.parametrize("kwargs,match", [
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1.0, 0.0]), r"`scale` must be > 0"),
    (dict(y=[0.0, 1.0], loc=[0.0], scale=[1.0, 1.0]), r"`loc` must have the length of `y`"),
    (dict(y=[0.0, np.nan], loc=[0.0, 0.0], scale=[1.0, 1.0]), r"`y` must contain only finite values"),
    (dict(y=[0.0], loc=[0.0], scale=[1.0]), r"`y` must have at least 2 values"),
    (dict(y=[0.0, 1.0]), r"pass `loc` and `scale`"),
    (dict(y=[0.0, 1.0], samples=[[0.0], [1.0]]), r"at least 2 members"),
    (dict(y=[0.0, 1.0], samples=[[0.0, 1.0]]), r"`samples` must have shape"),
    (dict(y=[0.0, 1.0], samples=[[0.0, 1.0], [np.inf, 1.0]]), r"`samples` must be finite"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], samples=[[0.0, 1.0], [1.0, 2.0]]), r"either `samples`"),
    (dict(y=[0.0, 1.0], samples=[[0.0, 1.0], [1.0, 2.0]], family="laplace"), r"`family` describes"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], family="t"), r"`family` must be one of"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], target_kernel="rbf"), r"`target_kernel` must be one of"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], family="laplace", target_kernel="gaussian"),
     r"must be 'exponential' for Laplace"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], estimator="u"), r"`estimator` must be one of"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], estimator="block", block_size=3),
     r"`block_size` must be at most"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], block_size=1), r"`block_size` must be an integer >= 2"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], length_scales=(1.0, 0.0)), r"`length_scales` must hold"),
    (dict(y=[0.0, 1.0], loc=[0.0, 0.0], scale=[1, 1], length_scales=1.0), r"`length_scales` must be None or a pair"),
    (dict(y=[0.0, 1.0], samples=[[1.0, 1.0], [1.0, 1.0]]), r"the same point mass"),
])
def test_input_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mcref.skce(**kwargs)


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="exact"), r"`method` must be one of"),
    (dict(n_mc=0), r"`n_mc` must be an integer >= 1"),
    (dict(alpha=1.5), r"`alpha` must be in \(0, 1\)"),
    (dict(method="asymptotic_block", block_size=3), r"at least 2 blocks"),
    (dict(seed=-1), r"`seed` must be None"),
    (dict(stop_exceedances=0), r"`stop_exceedances` must be an integer >= 1"),
    (dict(method="asymptotic_unbiased", n_boot=0), r"`n_boot` must be an integer >= 1"),
])
def test_test_input_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mcref.skce_test([0.0, 1.0, 2.0, 3.0, 4.0], np.zeros(5), np.ones(5), **kwargs)


# --------------------------------------------------------------------------- the tests: size and power


def test_consistency_test_is_exact_and_reproducible():
    y, mu, sd = _normal_set(150, seed=2)
    a = mcref.skce_test(y, mu, sd, n_mc=39, seed=5, stop_exceedances=None)
    b = mcref.skce_test(y, mu, sd, n_mc=39, seed=a.seed, stop_exceedances=None)
    assert a.pvalue == b.pvalue and np.array_equal(a.reference, b.reference)
    hits = a.reference >= a.estimate - 1e-15
    assert a.pvalue == (1 + np.count_nonzero(hits)) / 40 and 0.2 < a.pvalue
    # stopped at the 3rd exceedance, L repeats: p = 3/L, the first L repeats of the full run
    c = mcref.skce_test(y, mu, sd, n_mc=39, seed=5, stop_exceedances=3)
    L = int(np.flatnonzero(hits)[2]) + 1
    assert (c.n_test, c.pvalue) == (L, 3 / L) and np.array_equal(c.reference, a.reference[:L])
    assert rel(a.estimate, mcref.skce(y, mu, sd)) < 1e-12
    assert a.method == "consistency" and a.n_test == 39 and a.estimator == "unbiased"
    assert mcref.default_skce_n_mc(500) == 999 and mcref.default_skce_n_mc(10_000) == 99
    assert mcref.default_skce_n_mc(10 ** 6) == 99


def _calibrated(rng, n):
    u = rng.uniform(0.5, 2.0, n)
    return u * rng.standard_normal(n), np.zeros(n), u


def test_size_consistency_test():
    """Calibrated normal sets: the rejection rate at α = 0.05 is binomially compatible with 5 %."""
    rng = np.random.default_rng(2024)
    n_sets = 200
    rej = sum(mcref.skce_test(*_calibrated(rng, 60), n_mc=39, seed=int(rng.integers(2 ** 31))).pvalue <= 0.05
              for _ in range(n_sets))
    assert stats.binomtest(rej, n_sets, 0.05).pvalue > 0.01, rej


def test_size_asymptotic_block_test():
    """B = 2 holds its level; larger blocks are conservative (the paper's 0.02 at B = √n): the
    rate must not exceed 5 % beyond binomial noise."""
    rng = np.random.default_rng(99)
    n_sets = 300
    for b, two_sided in ((2, True), (20, False)):
        rej = sum(mcref.skce_test(*_calibrated(rng, 400), method="asymptotic_block", block_size=b).pvalue <= 0.05
                  for _ in range(n_sets))
        alt = "two-sided" if two_sided else "greater"
        assert stats.binomtest(rej, n_sets, 0.05, alternative=alt).pvalue > 0.01, (b, rej)


def test_power_laplace_errors_under_gaussian_predictions():
    """Laplace-shaped errors of the right variance (Z² has mean 1: ZMS is blind) under Gaussian
    predictions: the SKCE rejects."""
    rng = np.random.default_rng(8)
    n = 2000
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.laplace(size=n) / math.sqrt(2)
    res = mcref.skce_test(E, np.zeros(n), u, n_mc=19, seed=1)
    assert res.pvalue == 1 / 20 and res.n_test == 19
    assert mcref.skce_test(E, np.zeros(n), u, method="asymptotic_block", block_size=50).pvalue < 0.05


@pytest.mark.slow
def test_size_slow():
    """Larger: both tests at M = 500, 400 sets each."""
    rng = np.random.default_rng(7)
    n_sets = 400
    for kw, alt in ((dict(n_mc=99), "two-sided"), (dict(method="asymptotic_block", block_size=2), "two-sided"),
                    (dict(method="asymptotic_block", block_size=22), "greater")):
        rej = sum(mcref.skce_test(*_calibrated(rng, 500), seed=int(rng.integers(2 ** 31)), **kw).pvalue <= 0.05
                  for _ in range(n_sets))
        assert stats.binomtest(rej, n_sets, 0.05, alternative=alt).pvalue > 0.01, (kw, rej)


def test_wild_bootstrap_sums_against_naive():
    """One pass gives Σ_{i<j} h_ij and every Σ_{i<j} w_ri w_rj h_ij (several tiles, samples too)."""
    rng = np.random.default_rng(4)
    for n, samples in ((64 * 3 + 5, False), (30, True)):
        y, mu, sd = _normal_set(n, seed=n)
        S = np.sort(mu[:, None] + sd[:, None] * rng.normal(size=(n, 3)), axis=1)
        if samples:
            P, SS, code = np.zeros((3, 0)), S, K.SAMPLES_EXP
            h = lambda i, j: naive.skce_h_samples(y[i], S[i], y[j], S[j], "exponential")  # noqa: E731
        else:
            P, SS, code = np.ascontiguousarray(np.stack([mu, sd, 1 / np.sqrt(1 + sd * sd)])), np.zeros((0, 1)), 0
            h = lambda i, j: naive.skce_h_normal_gauss(y[i], mu[i], sd[i], y[j], mu[j], sd[j])  # noqa: E731
        H = np.array([[h(i, j) if j > i else 0.0 for j in range(n)] for i in range(n)])
        W = rng.choice([-1.0, 1.0], size=(5, n))
        out = K.wild_sums(code, y, P, SS, 1.0, W)
        assert abs(out[0] - H.sum()) < 1e-11
        assert np.allclose(out[1:], np.einsum("ri,ij,rj->r", W, H, W), rtol=0, atol=1e-11)


def test_asymptotic_unbiased_test():
    y, mu, sd = _normal_set(120, seed=9)
    a = mcref.skce_test(y, mu, sd, method="asymptotic_unbiased", n_boot=99, seed=3)
    assert a.method == "asymptotic_unbiased" and a.n_test == 99 and a.reference.size == 99
    assert rel(a.estimate, mcref.skce(y, mu, sd)) < 1e-12
    assert a.pvalue == (1 + np.count_nonzero(a.reference >= a.estimate)) / 100
    b = mcref.skce_test(4 * y, 4 * mu, 4 * sd, method="asymptotic_unbiased", n_boot=99, seed=3)
    assert (b.estimate, b.pvalue) == (a.estimate, a.pvalue)
    rng = np.random.default_rng(31)
    n_sets = 150
    rej = sum(mcref.skce_test(*_calibrated(rng, 80), method="asymptotic_unbiased", n_boot=99,
                              seed=int(rng.integers(2 ** 31))).pvalue <= 0.05 for _ in range(n_sets))
    assert stats.binomtest(rej, n_sets, 0.05).pvalue > 0.01, rej
    n = 2000
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.laplace(size=n) / math.sqrt(2)
    assert mcref.skce_test(E, np.zeros(n), u, method="asymptotic_unbiased", n_boot=49, seed=1).pvalue == 1 / 50


def test_auto_beyond_20000_rows_is_the_block_test_with_root_m_blocks():
    rng = np.random.default_rng(12)
    n = 20_001
    u = rng.uniform(0.5, 2.0, n)
    res = mcref.skce_test(u * rng.standard_normal(n), np.zeros(n), u)
    assert (res.method, res.block_size, res.n_test) == ("asymptotic_block", 141, 141)


# --------------------------------------------------------------------------- the CME test (UCME)


def _numpy_deviations(y, mu, sd, samples, family, kernel, lp, ly, idx):
    """The CME deviations written out in NumPy (docs/methods.md): k_P(p_i, p_j)·[k_Y(y_i, y_j) −
    E_{Z∼p_i} k_Y(Z, y_j)], the expectation in closed form (normal, Laplace) or the members' mean."""
    t = y[idx][None, :]
    if samples is not None:
        S = np.sort(samples, axis=1)
        w2 = np.sqrt(np.mean((S[:, None, :] - S[idx][None, :, :]) ** 2, axis=2))
        d = S[:, :, None] - t[:, None, :]
        k = np.exp(-d ** 2 / (2 * ly ** 2)) if kernel == "gaussian" else np.exp(-np.abs(d) / ly)
        ek = k.mean(axis=1)
    else:
        c = 2.0 if family == "laplace" else 1.0
        w2 = np.sqrt((mu[:, None] - mu[idx]) ** 2 + c * (sd[:, None] - sd[idx]) ** 2)
        z = (mu[:, None] - t) / ly
        s = (sd / ly)[:, None]
        if family == "laplace":  # E e^{-|X - z|}, X ~ Laplace(0, b): (b e^{-|z|/b} - e^{-|z|})/(b^2 - 1)
            ek = (s * np.exp(-np.abs(z) / s) - np.exp(-np.abs(z))) / (s ** 2 - 1)
        elif kernel == "gaussian":
            a = 1 / np.sqrt(1 + s ** 2)
            ek = a * np.exp(-(a * z) ** 2 / 2)
        else:  # W ~ N(z, s^2): e^{s^2/2}[e^{-z} Φ(z/s - s) + e^{z} Φ(-z/s - s)]
            ek = np.exp(s ** 2 / 2) * (np.exp(-z) * special.ndtr(z / s - s) + np.exp(z) * special.ndtr(-z / s - s))
    dy = y[:, None] - t
    ky = np.exp(-dy ** 2 / (2 * ly ** 2)) if kernel == "gaussian" else np.exp(-np.abs(dy) / ly)
    return np.exp(-w2 / lp) * (ky - ek)


@pytest.mark.parametrize("family, kernel, ens", [("normal", "gaussian", False), ("normal", "exponential", False),
                                                 ("laplace", "exponential", False), ("normal", "gaussian", True),
                                                 ("normal", "exponential", True)])
def test_cme_statistic_against_numpy(family, kernel, ens):
    """UCME, T = n μ̂ᵀ Σ̂⁻¹ μ̂ and its χ²_J p against the formula written out in NumPy on the same data
    and the same test locations (J rows drawn by PCG64(SeedSequence(seed)), sorted)."""
    rng = np.random.default_rng(11)
    n, J = 120, 4
    mu, sd = rng.normal(size=n), rng.uniform(0.4, 1.7, n)
    samples = mu[:, None] + sd[:, None] * rng.standard_normal((n, 7)) if ens else None
    y = mu + 1.2 * sd * rng.standard_normal(n)  # a little miscalibrated: T is not near 0
    kw = dict(samples=samples) if ens else dict(loc=mu, scale=sd, family=family)
    res = mcref.skce_test(y, method="cme", n_locations=J, seed=9, target_kernel=kernel, **kw)
    lp, ly = res.length_scales
    idx = np.sort(np.random.Generator(np.random.PCG64(np.random.SeedSequence(9))).choice(n, J, replace=False))
    D = _numpy_deviations(y, mu, sd, samples, family, kernel, lp, ly, idx)
    m = D.mean(axis=0)
    T = n * m @ np.linalg.solve(np.cov(D, rowvar=False), m)
    assert rel(res.statistic, T) < 1e-9 and rel(res.estimate, np.mean(m ** 2)) < 1e-9
    assert rel(res.pvalue, stats.chi2.sf(T, J)) < 1e-9
    assert (res.method, res.n_test, res.estimator, res.seed) == ("cme", J, "ucme", 9)
    assert rel(mcref.ucme(y, n_locations=J, seed=9, target_kernel=kernel, **kw), res.estimate) < 1e-15
    assert mcref.skce_test(y, method="cme", n_locations=J, seed=9, target_kernel=kernel, **kw) == res  # same seed


def test_cme_size_and_power():
    """Calibrated normal sets of M = 3000: the asymptotic χ²_J test rejects 5 % (binomial tolerance;
    it is liberal below, 6.3 % at M = 1000 over 1500 sets, docs/methods.md); Laplace errors of the
    right variance under normal predictions are rejected at M = 4000."""
    rng = np.random.default_rng(2021)
    n_sets = 400
    rej = sum(mcref.skce_test(*_calibrated(rng, 3000), method="cme", seed=int(rng.integers(2 ** 31))).pvalue <= 0.05
              for _ in range(n_sets))
    assert stats.binomtest(rej, n_sets, 0.05).pvalue > 0.01, rej
    n = 4000
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.laplace(size=n) / math.sqrt(2)
    assert mcref.skce_test(E, np.zeros(n), u, method="cme", seed=1).pvalue < 0.05


def test_cme_input_checks():
    y = np.arange(6.0)
    with pytest.raises(ValueError, match=r"`n_locations` must be less than len\(y\) = 6"):
        mcref.skce_test(y, np.zeros(6), np.ones(6), method="cme", n_locations=6)
    with pytest.raises(ValueError, match=r"`n_locations` must be an integer >= 1"):
        mcref.ucme(y, np.zeros(6), np.ones(6), n_locations=0)


# --------------------------------------------------------------------------- validate(stats=[..., "SKCE"])


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_validate_skce_row(tmp_path):
    """The row is skce_test(E, 0, u) on validate's last child seed; the other rows and the joint
    verdict are bit-identical with and without it; JSON and CSV carry it."""
    import json

    rng = np.random.default_rng(4)
    n = 200
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.laplace(size=n) / math.sqrt(2)
    kw = dict(n_boot=500, n_mc=500, seed=12)
    a = mcref.validate(E, u, stats=["ZMS", "skce", "CC"], **kw)
    b = mcref.validate(E, u, stats=["ZMS", "CC"], **kw)
    assert [r.name for r in a.rows] == ["ZMS", "CC", "SKCE"]
    assert a.rows[:2] == b.rows and a.joint == b.joint
    child = np.random.SeedSequence(12).spawn(5)[4]  # boot, sim, ties, fit; then SKCE (no tolerance)
    ref = mcref.skce_test(E, np.zeros(n), u, seed=child)
    row = a["SKCE"]
    assert (row.estimate, row.p_test, row.n_test, row.test) == (ref.estimate, ref.pvalue, ref.n_test, "consistency")
    assert row.tested == "calibration" and row.finding == ("miscalibrated" if ref.pvalue <= 0.05 else "calibrated")
    assert "SKCE" not in a.joint.stats and any(note.startswith("SKCE: ") for note in a.notes)
    rec = json.loads(a.to_json())["rows"][2]
    assert rec["stat"] == "SKCE" and rec["p_test"] == ref.pvalue and rec["finding"] == row.finding
    assert a.to_csv().splitlines()[3].split(",")[2] == "SKCE"
    assert "SKCE" in str(a) and "SKCE" in a.wide_table() and "SKCE" in a.explained()
    pytest.importorskip("matplotlib")
    from mcref.report._html import write_dataset_report

    page = open(write_dataset_report(a, E, u, None, tmp_path / "rep", seed=1), encoding="utf-8").read()
    assert ">SKCE<" in page and "consistency" in page


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_validate_skce_row_beyond_20000_rows_is_the_block_test():
    rng = np.random.default_rng(8)
    n = 20_001
    u = rng.uniform(0.5, 2.0, n)
    E = u * rng.standard_normal(n)
    row = mcref.validate(E, u, stats=["ZMS", "SKCE"], n_boot=200, n_mc=200, seed=3)["SKCE"]
    ref = mcref.skce_test(E, np.zeros(n), u, method="asymptotic_block", block_size=math.isqrt(n))
    assert (row.test, row.p_test, row.estimate, row.n_test) == ("asymptotic_block", ref.pvalue, ref.estimate, None)


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_validate_skce_refused_with_groups_and_alone():
    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 2.0, 120)
    E = u * rng.standard_normal(120)
    tab = mcref.validate(E, u, stats=["ZMS", "SKCE"], groups=np.repeat(np.arange(40), 3), n_boot=200, n_mc=200,
                         seed=1)
    row = tab["SKCE"]
    assert row.verdict == "not testable" and "redraws every row independently" in row.reason
    assert row.p_test is None
    with pytest.raises(ValueError, match=r"`stats` must name at least one statistic of the registry beside SKCE"):
        mcref.validate(E, u, stats=["SKCE"])


def test_cli_validate_and_report_stats_skce(tmp_path, capsys):
    """``--stats ZMS,SKCE`` (alias of --stat) in ``mcref validate`` and ``mcref report --html``."""
    pytest.importorskip("matplotlib")
    from mcref.cli import main

    rng = np.random.default_rng(6)
    u = rng.uniform(0.5, 2.0, 150)
    f = tmp_path / "d.csv"
    np.savetxt(f, np.c_[u * rng.standard_normal(150), u], delimiter=",", header="E,u", comments="")
    small = ["--boot", "200", "--mc", "200", "--seed", "0"]
    assert main(["validate", str(f), "--stats", "ZMS,SKCE", "--csv", *small]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].split(",")[2] == "SKCE"
    assert main(["validate", str(f), "--stat", "ZMS,SKCE", *small]) == 0
    out = capsys.readouterr().out
    assert "SKCE (beside the joint verdict)" in out and "consist" in out
    assert main(["report", str(f), "--stats", "ZMS,SKCE", "--html", str(tmp_path / "rep"), *small]) == 0
    assert "SKCE (beside the joint verdict)" in capsys.readouterr().out
    assert ">SKCE<" in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert main(["bench", str(f), "--stats", "ZMS,SKCE", *small]) == 2  # not in the benchmark yet: said so
    assert "SKCE is a row of validate" in capsys.readouterr().err


def test_from_samples_skce_beside_the_verdict():
    """from_samples(skce=True): skce_test(y, samples=...) on the 4th child of the check's seed; the
    rest of the check (ranks, coverage, combined verdict) is the same with and without it."""
    rng = np.random.default_rng(21)
    n, m = 150, 12
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + sd * rng.laplace(size=n) / math.sqrt(2)
    draws = mu[:, None] + sd[:, None] * rng.standard_normal((n, m))
    a = mcref.from_samples(y, draws, verdict=False, seed=3, n_swaps=99, skce=True)
    b = mcref.from_samples(y, draws, verdict=False, seed=3, n_swaps=99)
    ref = mcref.skce_test(y, samples=draws, seed=np.random.SeedSequence(3).spawn(4)[3])
    assert (a.skce.estimate, a.skce.pvalue, a.skce.n_test) == (ref.estimate, ref.pvalue, ref.n_test)
    assert b.skce is None and np.array_equal(a.pit, b.pit) and a.coverage == b.coverage
    assert a.combined.p == b.combined.p and a.verdict == b.verdict
    assert "SKCE of the ensembles (consistency test, beside the verdict" in str(a)
    assert a.record()["skce"]["pvalue"] == ref.pvalue
