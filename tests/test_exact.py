"""Tests of mcref.exact: exact and asymptotic references checked against independent
numerics (40-digit values, a second quadrature, plain-numpy Monte Carlo)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

from mcref.binning import bin_starts
from mcref.exact import (
    ExactReference,
    _abs_log_chi2_var,
    exact_reference,
    kurtosis_of,
    zmse_exact_bin,
)
from mcref.generative import get_distribution

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)

# g(n) = E|ln(X/n)| and Var|ln(X/n)|, X ~ chi2_n, computed with mpmath 1.3 at 40 digits:
#   a = n/2;  g = 2*(d/da Gamma(a, x)|_{x=a} - ln(a)*Gamma(a, a))/Gamma(a) - (psi(a) - ln a)
#   var = psi1(a) + (psi(a) - ln a)**2 - g**2
MPMATH = {
    1: ("1.758564590889869319", "3.4560745393420093275"),
    2: ("1.015983533692573408", "0.94588944992149666555"),
    3: ("0.76791874575597177867", "0.48124565006720183787"),
    5: ("0.55754752453545574408", "0.22492465482859437115"),
    7: ("0.45805885003943890815", "0.14292189933358071304"),
    10: ("0.37513471514826923733", "0.091271974048437013004"),
    30: ("0.20947785319275466546", "0.02619318544031763873"),
    31: ("0.20596058183153604706", "0.025285324080783551852"),
    200: ("0.079988205342785216056", "0.003677137071317093319"),
    1000: ("0.035700328550422750344", "0.00072848854150164793757"),
    10**4: ("0.011284355876314222368", "0.000072693314456703776356"),
    10**5: ("0.0035682660735965928803", "7.2677772300195555131e-6"),
    10**6: ("0.0011283797312852538857", "7.2676218202661823343e-7"),
}


def asym2(n):
    """Two-term large-n expansion of g(n)."""
    n = np.asarray(n, dtype=float)
    return np.sqrt(2 / n) * SQRT_2_OVER_PI * (1 + 1 / (2 * n))


def g_density(n: int) -> float:
    """E|ln(X/n)| from the density of L = ln(X/n), without incomplete gamma functions.

    With a = n/2 and v = L*sqrt(a), the density of v is
    exp(-R(a)) / sqrt(2 pi) * exp(-a*(expm1(x) - x)), x = v/sqrt(a), where R is the
    Stirling remainder of ln Gamma(a).
    """
    a = n / 2
    if a >= 10:
        R = (
            1 / (12 * a) - 1 / (360 * a**3) + 1 / (1260 * a**5)
            - 1 / (1680 * a**7) + 1 / (1188 * a**9)
        )
    else:
        R = special.gammaln(a) - (a - 0.5) * math.log(a) + a - 0.5 * math.log(2 * math.pi)
    r = math.sqrt(a)
    c = math.exp(-R) / math.sqrt(2 * math.pi)

    def f(v):
        x = v / r
        if x > 700:
            return 0.0
        return abs(v) * c * math.exp(-a * (math.expm1(x) - x))

    kw = dict(epsabs=0, epsrel=1e-13, limit=200)
    return (integrate.quad(f, -np.inf, 0, **kw)[0] + integrate.quad(f, 0, np.inf, **kw)[0]) / r


# ---------------------------------------------------------------------------------
# g(n)
# ---------------------------------------------------------------------------------
def test_g_matches_40_digit_values():
    n = np.array(sorted(MPMATH))
    g_ref = np.array([float(MPMATH[k][0]) for k in n])
    v_ref = np.array([float(MPMATH[k][1]) for k in n])
    np.testing.assert_allclose(zmse_exact_bin(n), g_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(_abs_log_chi2_var(n), v_ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("n", [1, 2, 5, 30, 200, 5000, 10**5, 10**6])
def test_g_matches_density_quadrature(n):
    assert zmse_exact_bin(n) == pytest.approx(g_density(n), rel=1e-10, abs=0)


@pytest.mark.parametrize("n", [5, 30, 200])
def test_g_and_variance_against_brute_force_monte_carlo(n):
    rng = np.random.default_rng(n)
    y = np.abs(np.log(rng.chisquare(n, size=2_000_000) / n))
    R = y.size
    se_mean = y.std() / math.sqrt(R)
    assert abs(zmse_exact_bin(n) - y.mean()) < 4 * se_mean
    d2 = (y - y.mean()) ** 2
    se_var = d2.std() / math.sqrt(R)
    assert abs(_abs_log_chi2_var(n) - d2.mean()) < 4 * se_var


def test_g_large_n_asymptotics():
    lead = math.sqrt(2 / 1e5) * SQRT_2_OVER_PI
    assert zmse_exact_bin(10**5) == pytest.approx(lead, rel=1e-3)
    # the second-order term 1/(2n) is right: what is left is O(n^-2) (~0.14/n^2)
    n = np.array([100, 1000, 10**4, 10**5, 10**6, 10**7, 10**9])
    rel = np.abs(zmse_exact_bin(n) / asym2(n) - 1)
    assert np.all(rel < 0.15 / n.astype(float) ** 2 + 1e-13), rel
    # and the correction is really there (not just the leading term)
    assert zmse_exact_bin(100) / (math.sqrt(2 / 100) * SQRT_2_OVER_PI) - 1 == pytest.approx(
        0.005, rel=0.01
    )


def test_g_monotone_decreasing_and_no_quadrature_warnings():
    n = np.unique(np.concatenate([np.arange(1, 400), np.logspace(2.5, 7, 300).astype(int)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = zmse_exact_bin(n)
    assert np.all(np.diff(g) < 0)
    assert np.all(g > 0)


def test_zmse_exact_bin_shapes():
    assert isinstance(zmse_exact_bin(7), float)
    assert isinstance(zmse_exact_bin(np.int32(7)), float)
    out = zmse_exact_bin(np.array([[3, 4], [5, 3]]))
    assert out.shape == (2, 2) and out[0, 0] == out[1, 1]
    assert zmse_exact_bin([3.0, 4.0]).tolist() == zmse_exact_bin([3, 4]).tolist()
    assert zmse_exact_bin(np.array([], dtype=int)).shape == (0,)


# ---------------------------------------------------------------------------------
# ZMS and ZMSE, exact (normal D)
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [1, 37, 2000, 10**6])
def test_zms_exact(m):
    u = np.random.default_rng(m).lognormal(size=m)
    ref = exact_reference("ZMS", u)
    assert (ref.name, ref.method, ref.dist) == ("ZMS", "exact", "normal")
    assert ref.mean == 1.0
    assert ref.sd == pytest.approx(math.sqrt(2 / m), rel=1e-15)
    assert ref.low == pytest.approx(stats.chi2.ppf(0.025, m) / m, rel=1e-14)
    assert ref.high == pytest.approx(stats.chi2.ppf(0.975, m) / m, rel=1e-14)
    assert stats.chi2.cdf(ref.low * m, m) == pytest.approx(0.025, rel=1e-9)
    # ZMS needs no bins: M < n_bins * min_count is fine
    assert exact_reference("zms", u, n_bins=10**6).low == ref.low


def zmse_monte_carlo(u, n_bins, reps, seed, chunk=5000):
    """ZMSE of datasets (E = u z, z ~ N(0,1)) computed with plain numpy."""
    rng = np.random.default_rng(seed)
    order = np.argsort(u, kind="stable")
    us = u[order]
    starts = (2 * u.size * np.arange(n_bins + 1) + n_bins) // (2 * n_bins)
    counts = np.diff(starts)
    out = []
    for i in range(0, reps, chunk):
        E = rng.standard_normal((min(chunk, reps - i), u.size))
        E *= us
        Z2 = np.square(np.divide(E, us, out=E), out=E)
        zms_b = np.add.reduceat(Z2, starts[:-1], axis=1) / counts
        out.append(np.mean(np.abs(np.log(zms_b)), axis=1))
    return np.concatenate(out)


@pytest.mark.parametrize(
    ("m", "n_bins", "min_count", "reps"), [(2000, 20, 30, 20_000), (97, 3, 30, 200_000)]
)
def test_zmse_exact_against_monte_carlo(m, n_bins, min_count, reps):
    u = np.random.default_rng(1).lognormal(size=m)
    ref = exact_reference("ZMSE", u, n_bins=n_bins, min_count=min_count)
    assert (ref.name, ref.method, ref.dist) == ("ZMSE", "exact", "normal")
    assert ref.low is None and ref.high is None
    sim = zmse_monte_carlo(u, n_bins, reps, seed=m)
    se = sim.std() / math.sqrt(reps)
    assert abs(ref.mean - sim.mean()) < 4 * se, (ref.mean, sim.mean(), se)
    # sd: standard error of the sample sd ~ sd * sqrt((kurtosis - 1) / (4 R))
    kurt = stats.kurtosis(sim, fisher=False)
    se_sd = sim.std() * math.sqrt((kurt - 1) / (4 * reps))
    assert abs(ref.sd - sim.std()) < 4 * se_sd, (ref.sd, sim.std(), se_sd)


def test_zmse_exact_formula_and_second_order_agreement_with_asymptotic():
    m, n_bins = 97, 3
    u = np.linspace(1, 2, m)
    counts = np.diff(bin_starts(m, n_bins))
    assert counts.tolist() == [32, 33, 32]
    ref = exact_reference("ZMSE", u, n_bins=n_bins)
    assert ref.mean == pytest.approx(zmse_exact_bin(counts).mean(), rel=1e-15)
    assert ref.sd == pytest.approx(math.sqrt(_abs_log_chi2_var(counts).sum()) / n_bins, rel=1e-15)
    # exact / asymptotic = 1 + 1/(2 n_b) + O(n_b^-2) for equal bins
    u = np.random.default_rng(3).lognormal(size=4000)
    ex = exact_reference("ZMSE", u, n_bins=20)
    asy = exact_reference("ZMSE", u, n_bins=20, method="asymptotic")
    assert ex.mean / asy.mean - 1 == pytest.approx(1 / 400, abs=0.15 / 200**2)
    # Var|ln ZMS_b| -> (1 - 2/pi) * 2/n_b
    assert asy.sd == pytest.approx(ex.sd, rel=2e-2)


# ---------------------------------------------------------------------------------
# asymptotic references
# ---------------------------------------------------------------------------------
def test_ence_and_uce_asymptotic_against_monte_carlo():
    """ENCE and UCE of plain-numpy datasets vs their asymptotic references (normal D).

    Measured offline with 200 000 repeats on this u: ENCE MC/asym - 1 = -0.10 % (+-0.04),
    UCE -0.74 % (+-0.12).
    """
    m, n_bins, reps, chunk = 5000, 20, 20_000, 2500
    u = np.random.default_rng(0).lognormal(size=m)
    ence_ref = exact_reference("ENCE", u, n_bins=n_bins, method="asymptotic")
    uce_ref = exact_reference("UCE", u, n_bins=n_bins, method="asymptotic")
    assert (ence_ref.method, ence_ref.dist) == ("asymptotic", "kurtosis=3")

    rng = np.random.default_rng(2023)
    us = u[np.argsort(u, kind="stable")]
    starts = bin_starts(m, n_bins)[:-1]
    counts = np.diff(bin_starts(m, n_bins))
    mv = np.add.reduceat(us**2, starts) / counts
    ence, uce = [], []
    for _ in range(reps // chunk):
        E2 = np.square(rng.standard_normal((chunk, m)))
        E2 *= us**2
        mse = np.add.reduceat(E2, starts, axis=1) / counts
        ence.append(np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv), axis=1))
        uce.append(np.sum(counts / m * np.abs(mv - mse), axis=1))
    ence, uce = np.concatenate(ence), np.concatenate(uce)

    se = ence.std() / math.sqrt(reps)
    assert se / ence_ref.mean < 2e-3  # the MC resolves well below the 1 % tolerance
    assert ence.mean() == pytest.approx(ence_ref.mean, rel=1e-2)
    assert ence.std() == pytest.approx(ence_ref.sd, rel=3e-2)
    assert uce.mean() == pytest.approx(uce_ref.mean, rel=2e-2)
    assert uce.std() == pytest.approx(uce_ref.sd, rel=5e-2)


@pytest.mark.parametrize(
    ("dist", "draw"),
    [
        ("laplace", lambda rng, s: rng.laplace(0, 1 / math.sqrt(2), s)),
        ("uniform", lambda rng, s: rng.uniform(-math.sqrt(3), math.sqrt(3), s)),
    ],
)
def test_zms_and_zmse_asymptotic_non_normal(dist, draw):
    rng = np.random.default_rng(7)
    m, n_bins, reps = 1000, 4, 20_000
    u = rng.lognormal(size=m)
    eps = draw(rng, (reps, m))
    z2 = eps**2  # Z = E/u = eps; the binning by u only selects which eps share a bin
    zms = z2.mean(axis=1)
    ref = exact_reference("ZMS", u, method="asymptotic", kurtosis=dist)
    assert (ref.mean, ref.dist, ref.low) == (1.0, dist, None)
    # Var(ZMS) = (kappa - 1)/M holds exactly for any D
    kurt = stats.kurtosis(zms, fisher=False)
    assert abs(zms.std() - ref.sd) < 4 * zms.std() * math.sqrt((kurt - 1) / (4 * reps))
    assert abs(zms.mean() - 1) < 4 * zms.std() / math.sqrt(reps)

    starts = bin_starts(m, n_bins)
    counts = np.diff(starts)
    zmse = np.mean(np.abs(np.log(np.add.reduceat(z2, starts[:-1], axis=1) / counts)), axis=1)
    ref = exact_reference("ZMSE", u, n_bins=n_bins, method="asymptotic", kurtosis=dist)
    assert zmse.mean() == pytest.approx(ref.mean, rel=1.5e-2)


def test_asymptotic_formulas_by_hand():
    u = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    kappa = 4.5
    # bins of 3: {1,2,3}, {4,5,6}
    ence = exact_reference("ENCE", u, n_bins=2, min_count=3, method="asymptotic", kurtosis=kappa)
    uce = exact_reference("UCE", u, n_bins=2, min_count=3, method="asymptotic", kurtosis=kappa)
    zmse = exact_reference("ZMSE", u, n_bins=2, min_count=3, method="asymptotic", kurtosis=kappa)
    zms = exact_reference("ZMS", u, method="asymptotic", kurtosis=kappa)
    b = [u[:3], u[3:]]
    w = [np.sum(x**4) / np.sum(x**2) ** 2 for x in b]
    hn_var = 1 - 2 / math.pi
    sd_rce = [0.5 * math.sqrt((kappa - 1) * wb) for wb in w]  # sd(RCE_b)
    assert ence.mean == pytest.approx(np.mean(sd_rce) * SQRT_2_OVER_PI)
    assert ence.sd == pytest.approx(math.sqrt(sum(s**2 * hn_var for s in sd_rce)) / 2)
    sd_t = [math.sqrt((kappa - 1) * np.sum(x**4)) / 3 for x in b]  # sd(MSE_b - MV_b)
    assert uce.mean == pytest.approx(sum(3 / 6 * s * SQRT_2_OVER_PI for s in sd_t))
    assert uce.sd == pytest.approx(math.sqrt((kappa - 1) * (1 - 2 / math.pi) * np.sum(u**4)) / 6)
    assert zmse.mean == pytest.approx(math.sqrt((kappa - 1) / 3) * SQRT_2_OVER_PI)
    assert zms.sd == pytest.approx(math.sqrt((kappa - 1) / 6))
    assert ence.dist == "kurtosis=4.5"


def test_scale_behaviour_and_extreme_scales():
    u = np.random.default_rng(5).lognormal(size=600)
    kw = dict(n_bins=10, method="asymptotic")
    base_e, base_u = exact_reference("ENCE", u, **kw), exact_reference("UCE", u, **kw)
    for c in (1e-150, 1e150):  # u**4 would under/overflow without rescaling
        e, uc = exact_reference("ENCE", c * u, **kw), exact_reference("UCE", c * u, **kw)
        assert e.mean == pytest.approx(base_e.mean, rel=1e-12)
        assert uc.mean == pytest.approx(base_u.mean * c**2, rel=1e-12)
        assert uc.sd == pytest.approx(base_u.sd * c**2, rel=1e-12)


# ---------------------------------------------------------------------------------
# kurtosis and labels
# ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dist", "kappa", "label"),
    [
        ("normal", 3.0, "normal"),
        (" Normal ", 3.0, "normal"),
        ("gauss", 3.0, "normal"),
        ("uniform", 1.8, "uniform"),
        ("laplace", 6.0, "laplace"),
        ("t6", 6.0, "t(6)"),
        ("t(6)", 6.0, "t(6)"),
        (("t", 6), 6.0, "t(6)"),
        ("T( 10 )", 4.0, "t(10)"),
        ("t(5.5)", 7.0, "t(5.5)"),
    ],
)
def test_kurtosis_of(dist, kappa, label):
    assert kurtosis_of(dist) == pytest.approx(kappa, rel=1e-15)
    ref = exact_reference("ZMS", [1.0, 2.0], method="asymptotic", kurtosis=dist)
    assert ref.dist == label
    assert ref.sd == pytest.approx(math.sqrt((kappa - 1) / 2))


def test_kurtosis_of_empirical_distribution():
    z = np.random.default_rng(4).standard_t(7, size=5000)
    d = get_distribution("empirical", Z=z)
    zs = (z - z.mean()) / z.std()
    assert kurtosis_of(d) == pytest.approx(np.mean(zs**4), rel=1e-12)
    ref = exact_reference("ZMS", np.ones(10), method="asymptotic", kurtosis=d)
    assert ref.dist == "empirical"


def test_exact_accepts_normal_by_name_and_result_is_frozen():
    ref = exact_reference("zmse", np.arange(1.0, 61.0), n_bins=2, kurtosis="normal")
    assert isinstance(ref, ExactReference) and ref.dist == "normal"
    with pytest.raises(AttributeError):
        ref.mean = 0.0  # type: ignore[misc]


# ---------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------
U = np.arange(1.0, 101.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(name="CC"), r"no exact reference for CC; simulate"),
        (dict(name="cc", method="asymptotic"), r"no exact reference for CC; simulate"),
        (dict(name="RMSE"), r"`name` must be one of"),
        (dict(name=3), r"`name` must be one of"),
        (dict(name="ZMS", method="bootstrap"), r"`method` must be one of 'exact', 'asymptotic'"),
        (dict(name="ENCE"), r"'exact' is not available for ENCE; available methods for ENCE: 'as"),
        (dict(name="UCE", method="exact"), r"for UCE; available methods for UCE: 'asymptotic'"),
        (dict(name="ZMSE", kurtosis=4.0), r"'exact' requires a normal D"),
        (dict(name="ZMS", kurtosis="t(6)"), r"'exact' requires a normal D"),
        (dict(name="ZMS", method="asymptotic", kurtosis=1.0), r"`kurtosis` must be > 1"),
        (dict(name="ZMS", method="asymptotic", kurtosis=0.5), r"`kurtosis` must be > 1"),
        (dict(name="ZMS", method="asymptotic", kurtosis=math.inf), r"`kurtosis` must be finite"),
        (dict(name="ZMS", method="asymptotic", kurtosis=math.nan), r"`kurtosis` must be finite"),
        (dict(name="ZMS", method="asymptotic", kurtosis=True), r"`kurtosis` must be a real number"),
        (dict(name="ZMS", method="asymptotic", kurtosis=None), r"`kurtosis` must be a real number"),
        (dict(name="ZMS", method="asymptotic", kurtosis="t(4)"), r"infinite kurtosis for nu <= 4"),
        (dict(name="ZMS", method="asymptotic", kurtosis="cauchy"), r"unknown distribution"),
        (dict(name="ZMS", u=[1.0, 0.0, 2.0]), r"`u` must be > 0 \(1 non-posit"),
        (dict(name="ZMS", u=[1.0, np.nan]), r"`u` must contain only finite values"),
        (dict(name="ZMS", u=np.ones((2, 2))), r"`u` must be one-dimensional"),
        (dict(name="ZMS", u=[]), r"`u` must not be empty"),
        (dict(name="ZMSE", n_bins=2.5), r"`n_bins` must be an integer"),
        (dict(name="ZMSE", n_bins=0), r"`n_bins` must be an integer >= 1"),
        (dict(name="ZMS", min_count=0), r"`min_count` must be an integer >= 1"),
        (dict(name="ZMSE", n_bins=4), r"fewer than `min_count`=30 points per bin"),
        (dict(name="ENCE", method="asymptotic", n_bins=2, min_count=51), r"than `min_count`=51 "),
    ],
)
def test_exact_reference_errors(kwargs, match):
    kwargs = dict(kwargs)
    name = kwargs.pop("name")
    u = kwargs.pop("u", U)
    with pytest.raises(ValueError, match=match):
        exact_reference(name, u, **kwargs)


@pytest.mark.parametrize(
    ("dist", "match"),
    [
        ("t(4)", r"infinite kurtosis for nu <= 4 \(got nu=4\)"),
        ("t3", r"infinite kurtosis for nu <= 4 \(got nu=3\)"),
        (("t", 4.5 - 0.5), r"infinite kurtosis for nu <= 4"),
        ("t(2)", r"needs finite ν > 2"),
        ("t(abc)", r"unknown distribution 't\(abc\)'"),
        ("cauchy", r"unknown distribution 'cauchy'"),
        ("empirical", r"'empirical' needs the dataset's Z"),
        (6, r"`dist` must be a distribution name"),
        (lambda rng, size: rng.standard_normal(size), r"kurtosis of a user sampler is not known"),
    ],
)
def test_kurtosis_of_errors(dist, match):
    with pytest.raises(ValueError, match=match):
        kurtosis_of(dist)


@pytest.mark.parametrize(
    ("n", "match"),
    [
        (0, r"`n` must be >= 1"),
        ([3, -2], r"`n` must be >= 1"),
        (2.5, r"`n` must contain integer values"),
        ([np.nan], r"`n` must contain integer values"),
        (True, r"`n` must be integer degrees of freedom"),
        ("7", r"`n` must be integer degrees of freedom"),
    ],
)
def test_zmse_exact_bin_errors(n, match):
    with pytest.raises(ValueError, match=match):
        zmse_exact_bin(n)
