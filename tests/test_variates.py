"""In-kernel normal and gamma variates (mcref/kernels/variates.py): exact distributions,
tables, determinism and stream use.

Every statistical test uses a fixed seed and a threshold that a wrong distribution at the
tested size fails: KS p-value > 1e-3 on 10⁶ draws, moments within 5 standard errors
(exact asymptotic variances of the sample moments), χ² p-value > 1e-3 on the tail and on
the layer bins of the ziggurat, KS of the wedge and tail paths fed directly. Checked by
mutation: a heavier tail (r + 1.1x), a dropped tail sign, no wedge test, a wedge ordinate
scaled by 0.9, a fast bound K 0.3 % too large, the squeeze constant 0.02 for 0.0331 and
the boost exponent 2 % off each make at least one test fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from mcref.kernels import variates as V
from mcref.kernels._config import NJIT
from mcref.kernels.rng import chunk_states, next_u64

N = 1_000_000
GAMMA_SHAPES = (0.3, 1.0, 2.5, 3.0, 4.0, 12.0, 24.0)


def state(seed: int) -> np.ndarray:
    return chunk_states(np.random.SeedSequence(seed), 1)[0]


@pytest.fixture(scope="module")
def normals() -> np.ndarray:
    z = np.empty(N)
    V.fill_normal(state(20250101), z)
    return z


@pytest.fixture(scope="module")
def gammas() -> dict[float, np.ndarray]:
    out = {}
    for k, a in enumerate(GAMMA_SHAPES):
        g = np.empty(N)
        V.fill_gamma(state(777 + k), a, g)
        out[a] = g
    return out


# ---- moments: exact values and standard errors of the sample moments ------------------
def central_moments(kappa: dict[int, float]) -> dict[int, float]:
    """μ2..μ6 from the cumulants κ2..κ6."""
    k2, k3, k4, k5, k6 = (kappa[i] for i in range(2, 7))
    return {2: k2, 3: k3, 4: k4 + 3 * k2**2, 5: k5 + 10 * k3 * k2,
            6: k6 + 15 * k4 * k2 + 10 * k3**2 + 15 * k2**3}


def check_moments(x: np.ndarray, mean: float, mu: dict[int, float]) -> None:
    """Sample mean, variance and skewness within 5 asymptotic standard errors.

    n·Var(m2) = μ4 − μ2², n·Var(m3) = μ6 − μ3² − 6μ2μ4 + 9μ2³, n·Cov(m2, m3) = μ5 − 4μ2μ3;
    skewness m3/m2^1.5 by the delta method.
    """
    n = x.size
    d = x - x.mean()
    m2, m3 = np.mean(d * d), np.mean(d**3)
    v22 = (mu[4] - mu[2] ** 2) / n
    v33 = (mu[6] - mu[3] ** 2 - 6 * mu[2] * mu[4] + 9 * mu[2] ** 3) / n
    c23 = (mu[5] - 4 * mu[2] * mu[3]) / n
    skew = mu[3] / mu[2] ** 1.5
    v_skew = v33 / mu[2] ** 3 - 3 * mu[3] * c23 / mu[2] ** 4 + 2.25 * mu[3] ** 2 * v22 / mu[2] ** 5
    assert abs(x.mean() - mean) < 5 * math.sqrt(mu[2] / n)
    assert abs(m2 - mu[2]) < 5 * math.sqrt(v22)
    assert abs(m3 / m2**1.5 - skew) < 5 * math.sqrt(v_skew)


# ---- tables ---------------------------------------------------------------------------
def test_ziggurat_layers_have_equal_areas():
    X, F, r, v = V.ziggurat_tables()
    assert X.shape == F.shape == (V.N_LAYERS + 1,)
    assert X[1] == r and X[-1] == 0.0 and F[0] == 0.0 and F[-1] == 1.0
    assert np.all(np.diff(X) < 0) and np.all(np.diff(F) > 0)
    np.testing.assert_allclose(F[1:-1], np.exp(-0.5 * X[1:-1] ** 2), rtol=1e-15)
    # base layer: rectangle [0, r] × [0, f(r)] plus the tail ∫_r^∞ f
    tail = math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    assert v == pytest.approx(r * math.exp(-0.5 * r * r) + tail, rel=1e-15)
    areas = X[:-1] * (F[1:] - F[:-1])  # layer i: [0, X[i]] × [F[i], F[i+1]]
    np.testing.assert_allclose(areas, v, rtol=1e-12)
    assert r == pytest.approx(3.6541528853610088, rel=1e-12)  # Marsaglia & Tsang (2000), 256 layers
    # the kernels' tables are these; fast acceptance j < K[i] ⇔ j·2^-53·X[i] < X[i+1]
    np.testing.assert_array_equal(V._W[:256] * 2.0**53, X[:-1])
    np.testing.assert_array_equal(V._W[256:], -V._W[:256])
    assert np.all(V._K.astype(float) * X[:-1] / 2.0**53 <= X[1:])
    assert 0.985 < np.mean(X[1:] / X[:-1]) < 0.995  # share of one-comparison draws


# ---- normal ---------------------------------------------------------------------------
def test_normal_ks(normals):
    assert stats.kstest(normals, "norm").pvalue > 1e-3


def test_normal_moments(normals):
    check_moments(normals, 0.0, central_moments({2: 1.0, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0.0}))


def test_normal_tail_and_layer_frequencies():
    """χ² of the frequencies beyond ±3, ±r (tail start), ±4 and of |Z| in the 256 layer
    bins [X[i+1], X[i]); KS of the draws beyond r against the truncated normal."""
    X, _, r, _ = V.ziggurat_tables()
    s = state(99)
    z = np.empty(2_000_000)
    edges = np.array([-np.inf, -4.0, -r, -3.0, 3.0, r, 4.0, np.inf])
    layer_edges = np.append(X[:0:-1], np.inf)  # 0 = X[256] < X[255] < … < X[1] = r < ∞
    counts = np.zeros(edges.size - 1)
    layer_counts = np.zeros(layer_edges.size - 1)
    tail = []
    n = 0
    for _ in range(5):
        V.fill_normal(s, z)
        n += z.size
        counts += np.diff(np.searchsorted(np.sort(z), edges))
        a = np.abs(z)
        layer_counts += np.histogram(a, layer_edges)[0]
        tail.append(a[a > r])
    p = np.diff(stats.norm.cdf(edges))
    assert np.all(n * p[[0, 1, 5, 6]] > 100)  # enough draws in the tail bins
    assert stats.chisquare(counts, n * p).pvalue > 1e-3
    p_layer = 2 * np.diff(stats.norm.cdf(layer_edges))
    assert stats.chisquare(layer_counts, n * p_layer).pvalue > 1e-3
    tail = np.concatenate(tail)
    assert tail.size > 2000
    assert stats.kstest(tail, stats.truncnorm(r, np.inf).cdf).pvalue > 1e-3


@njit(**NJIT)
def _slow_path_draws(s, i, out):
    """``_normal_slow`` fed attempt words of layer i (sign +) that fail the fast test:
    j uniform on [K[i], 2^53), i.e. x uniform on [X[i+1], X[i])."""
    st = V._load(s)
    k0 = V._K[i]
    span = 9007199254740992.0 - np.float64(k0)
    for n in range(out.shape[0]):
        w, st = V._step(st)
        j = k0 + np.uint64(V._unit(w) * span)
        z, st = V._normal_slow(st, (j << np.uint64(11)) | np.uint64(i))
        out[n] = z
    V._store(s, st)


@pytest.mark.parametrize("i", [0, 1, 60, 128, 200, 255])
def test_normal_slow_paths_exact(i):
    """The wedge test and the tail method, in isolation: given a first attempt in the wedge
    of layer i ≥ 1, the output is accepted x with density ∝ f(x) − F[i] on [X[i+1], X[i])
    (probability p) or, after a rejection, a fresh N(0, 1); in the base layer (i = 0) it
    is the normal tail beyond r. KS against these exact laws, 2·10⁵ draws each."""
    X, F, r, _ = V.ziggurat_tables()
    z = np.empty(200_000)
    _slow_path_draws(state(300 + i), i, z)
    if i == 0:
        law = stats.truncnorm(r, np.inf).cdf
    else:
        lo, hi, f_lo = X[i + 1], X[i], F[i]

        def area(x):  # ∫_lo^x (f(t) − F[i]) dt, f(t) = exp(−t²/2)
            x = np.clip(x, lo, hi)
            return math.sqrt(2 * math.pi) * (stats.norm.cdf(x) - stats.norm.cdf(lo)) - f_lo * (x - lo)

        p = area(hi) / ((hi - lo) * (F[i + 1] - f_lo))
        assert 0.0 < p < 1.0

        def law(x):
            return p * area(x) / area(hi) + (1 - p) * stats.norm.cdf(x)
    assert stats.kstest(z, law).pvalue > 1e-3


# ---- Student t ------------------------------------------------------------------------
T_NUS = (2.5, 3.0, 6.0, 50.0)


def t_density(x, nu):
    """The ziggurat's unnormalized t density (1 + x²/ν)^(−(ν+1)/2)."""
    return (1.0 + np.asarray(x) ** 2 / nu) ** (-0.5 * (nu + 1.0))


@pytest.mark.parametrize("nu", T_NUS)
def test_t_ziggurat_layers_have_equal_areas(nu):
    """Layer i is [0, X[i]] × [F[i], F[i+1]] of area v, the base one including the exact tail
    ∫_r^∞ f = sf_t(r)/c_ν; the top closes at f(0) = 1; the fast bound is under the curve."""
    W, K, FL, FD, r, nu_ = V.t_ziggurat(nu)
    X = np.append(W[:256] * 2.0**53, 0.0)
    F = np.append(FL, 1.0)
    assert nu_ == nu and X[1] == r and np.all(np.diff(X) < 0) and np.all(FD > 0)
    np.testing.assert_allclose(F[1:-1], t_density(X[1:-1], nu), rtol=1e-13)
    np.testing.assert_allclose(FL + FD, F[1:], rtol=1e-15, atol=1e-17)
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)
    v = r * t_density(r, nu) + stats.t.sf(r, nu) / c
    np.testing.assert_allclose(X[:-1] * FD, v, rtol=1e-9)
    np.testing.assert_array_equal(W[256:], -W[:256])
    # the largest fast draw of layer i, j = K[i] − 1, stays in the box under the curve
    fast = K > 0  # the top layer (X[256] = 0) has no fast acceptance
    assert np.all((K[fast] - np.uint64(1)).astype(float) * W[:256][fast] <= X[1:][fast])


def test_t_ziggurat_limits_and_bad_nu():
    assert V.t_ziggurat(math.inf)[0] is V._W  # the normal's tables
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="nu"):
            V.t_ziggurat(bad)


@pytest.mark.parametrize("nu", T_NUS)
def test_t_ks_tail_and_layers(nu):
    """10⁶ draws: KS against scipy's t(ν); χ² of |X| in the 256 layer bins and beyond r
    (the tail method's share), and KS of the draws beyond r against the truncated t."""
    tab = V.t_ziggurat(nu)
    x = np.empty(N)
    V.fill_t(state(4242 + int(nu)), *tab, x)
    assert stats.kstest(x, stats.t(nu).cdf).pvalue > 1e-3
    X = np.append(tab[0][:256] * 2.0**53, 0.0)
    edges = np.append(X[:0:-1], np.inf)  # 0 < X[255] < … < X[1] = r < ∞
    counts = np.histogram(np.abs(x), edges)[0]
    p = 2 * np.diff(stats.t.cdf(edges, nu))
    assert stats.chisquare(counts, N * p).pvalue > 1e-3
    r = tab[4]
    tail = np.abs(x[np.abs(x) > r])
    assert tail.size > 200
    sf_r = stats.t.sf(r, nu)
    assert stats.kstest(tail, lambda t: 1.0 - stats.t.sf(t, nu) / sf_r).pvalue > 1e-3


@njit(**NJIT)
def _t_slow_draws(s, i, W, K, FL, FD, r, nu, out):
    """``_t_slow`` fed attempt words of layer i (sign +) that fail the fast test."""
    st = V._load(s)
    k0 = K[i]
    span = 9007199254740992.0 - np.float64(k0)
    for n in range(out.shape[0]):
        w, st = V._step(st)
        j = k0 + np.uint64(V._unit(w) * span)
        z, st = V._t_slow(st, (j << np.uint64(11)) | np.uint64(i), W, K, FL, FD, r, nu)
        out[n] = z
    V._store(s, st)


@pytest.mark.parametrize("nu,i", [(3.0, 0), (3.0, 1), (3.0, 128), (6.0, 0), (6.0, 60), (6.0, 255)])
def test_t_slow_paths_exact(nu, i):
    """The wedge test and the tail method alone (as for the normal): the base layer gives the t
    tail beyond r; layer i ≥ 1 an accepted x with density ∝ f(x) − F[i] on [X[i+1], X[i])
    (probability p) or, after a rejection, a fresh t(ν). KS, 2·10⁵ draws."""
    tab = V.t_ziggurat(nu)
    W, K, FL, FD, r, _ = tab
    z = np.empty(200_000)
    _t_slow_draws(state(500 + i), i, *tab, z)
    c = math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)) / math.sqrt(nu * math.pi)
    if i == 0:
        sf_r = stats.t.sf(r, nu)

        def law(x):
            return np.where(x > r, 1.0 - stats.t.sf(np.maximum(x, r), nu) / sf_r, 0.0)
    else:
        X = np.append(W[:256] * 2.0**53, 0.0)
        hi, lo, f_lo = X[i], X[i + 1], FL[i]

        def area(x):  # ∫_lo^x (f(t) − F[i]) dt
            x = np.clip(x, lo, hi)
            return (stats.t.cdf(x, nu) - stats.t.cdf(lo, nu)) / c - f_lo * (x - lo)

        p = area(hi) / ((hi - lo) * FD[i])
        assert 0.0 < p < 1.0

        def law(x):
            return p * area(x) / area(hi) + (1 - p) * stats.t.cdf(x, nu)
    assert stats.kstest(z, law).pvalue > 1e-3


# ---- gamma ----------------------------------------------------------------------------
@pytest.mark.parametrize("a", GAMMA_SHAPES)
def test_gamma_ks(gammas, a):
    assert stats.kstest(gammas[a], stats.gamma(a).cdf).pvalue > 1e-3


@pytest.mark.parametrize("a", GAMMA_SHAPES)
def test_gamma_moments(gammas, a):
    # cumulants of Gamma(a, 1): κ_n = a·(n − 1)!
    check_moments(gammas[a], a, central_moments({k: a * math.factorial(k - 1) for k in range(2, 7)}))


def test_gamma_invalid_shape_gives_nan_and_draws_nothing():
    s = state(5)
    s0 = s.copy()
    out = np.ones(4)
    for a in (0.0, -1.0, np.nan):
        assert np.isnan(V.next_gamma(s, a))
        V.fill_gamma(s, a, out)
        assert np.all(np.isnan(out))
    np.testing.assert_array_equal(s, s0)


# ---- determinism and stream use -------------------------------------------------------
def test_same_state_same_sequence_and_fill_equals_next():
    s = state(11)
    a = np.empty(5000)
    V.fill_normal(s.copy(), a)
    b = np.empty(5000)
    V.fill_normal(s.copy(), b)
    np.testing.assert_array_equal(a, b)
    s1, s2 = s.copy(), s.copy()
    V.fill_normal(s1, a)
    np.testing.assert_array_equal(a, [V.next_normal(s2) for _ in range(a.size)])
    np.testing.assert_array_equal(s1, s2)
    for shape in (0.3, 4.0):
        g1, g2 = s.copy(), s.copy()
        V.fill_gamma(g1, shape, a)
        np.testing.assert_array_equal(a, [V.next_gamma(g2, shape) for _ in range(a.size)])
        np.testing.assert_array_equal(g1, g2)


@njit(**NJIT)
def _t_fast_loop(s, W, K, FL, FD, r, nu, out):
    """One :func:`V.t_fast` call per value, on the state tuple, a normal word in between."""
    st = V._load(s)
    for n in range(out.shape[0]):
        x, st = V.t_fast(st, W, K, FL, FD, r, nu)
        out[n] = x
        if n % 7 == 3:
            _z, st = V.normal_fast(st)
    V._store(s, st)


@pytest.mark.parametrize("nu", (2.5, 5.0))
def test_fill_t_equals_t_fast_per_draw(nu):
    """fill_t is repeated t_fast: the same values and final state; a per-draw caller may
    interleave other draws on the same stream (the cluster references do)."""
    tab = V.t_ziggurat(nu)
    s = state(16)
    s1, s2 = s.copy(), s.copy()
    a = np.empty(20_000)
    V.fill_t(s1, *tab, a)
    b = np.empty(20_000)
    _t_fast_loop(s2, *tab, b)
    assert not np.array_equal(a, b)  # the interleaved normals move the stream
    s3 = s.copy()
    pieces = []
    for n in range(b.size):
        one = np.empty(1)
        V.fill_t(s3, *tab, one)
        pieces.append(one[0])
        if n % 7 == 3:
            V.next_normal(s3)
    np.testing.assert_array_equal(b, pieces)
    np.testing.assert_array_equal(s2, s3)
    np.testing.assert_array_equal(a[:4], b[:4])


def test_fill_2d_is_row_major_flat_fill():
    s = state(12)
    m, f = np.empty((40, 25)), np.empty(1000)
    s1, s2 = s.copy(), s.copy()
    V.fill_normal(s1, m)
    V.fill_normal(s2, f)
    np.testing.assert_array_equal(m.ravel(), f)
    V.fill_gamma(s1, 2.5, m)
    V.fill_gamma(s2, 2.5, f)
    np.testing.assert_array_equal(m.ravel(), f)
    np.testing.assert_array_equal(s1, s2)


def test_draws_are_xoshiro_words_with_documented_bits():
    """next_exponential uses one next_u64 word; a normal accepted on the fast path is
    ±j·2^-53·X[i] with i = bits 0–7, sign = bit 8, j = top 53 bits of one word."""
    X = V.ziggurat_tables()[0]
    s = state(13)
    for _ in range(200):
        ref = s.copy()
        w = int(next_u64(ref))
        e = V.next_exponential(s)
        assert e == -math.log(((w >> 11) + 1) * 2.0**-53)
        np.testing.assert_array_equal(s, ref)
    checked = 0
    for _ in range(2000):
        ref = s.copy()
        w = int(next_u64(ref))
        i, sign, j = w & 0xFF, (w >> 8) & 1, w >> 11
        z = V.next_normal(s)
        if j < int(V._K[i]):  # fast path: exactly one word
            assert z == (-1.0 if sign else 1.0) * (j * (X[i] * 2.0**-53))
            np.testing.assert_array_equal(s, ref)
            checked += 1
    assert checked > 1900


def test_state_advances():
    s = state(14)
    seen = {tuple(s)}
    for k in range(50):
        if k % 2:
            V.next_normal(s)
        else:
            V.next_gamma(s, 3.0)
        seen.add(tuple(s))
    assert len(seen) == 51
    before = s.copy()
    V.fill_normal(s, np.empty(3))
    assert not np.array_equal(s, before)
    z1, z2 = np.empty(100), np.empty(100)
    V.fill_normal(s, z1)
    V.fill_normal(s, z2)
    assert not np.array_equal(z1, z2)


@njit(**NJIT)  # inlined code takes the caller's options: bitwise equal under the project's
def _user_kernel(s, a, out):
    for k in range(out.shape[0]):
        out[k] = V.next_normal(s) + V.next_gamma(s, a)


def test_next_functions_inline_in_user_kernels():
    s = state(15)
    s1, s2 = s.copy(), s.copy()
    out = np.empty(1000)
    _user_kernel(s1, 2.0, out)
    ref = np.array([V.next_normal(s2) + V.next_gamma(s2, 2.0) for _ in range(out.size)])
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(s1, s2)
