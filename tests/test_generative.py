"""Generative distributions: unit variance, shape (KS against scipy), kurtosis, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sst

from mcref.generative import get_distribution

N = 200_000
SCIPY = {
    "normal": sst.norm(),
    "t6": sst.t(6, scale=np.sqrt(4 / 6)),
    "t(3.5)": sst.t(3.5, scale=np.sqrt(1.5 / 3.5)),
    "uniform": sst.uniform(-np.sqrt(3), 2 * np.sqrt(3)),
    "laplace": sst.laplace(scale=1 / np.sqrt(2)),
    # exponential power of shape p, unit variance: scale √(Γ(1/p)/Γ(3/p))
    "normp4": sst.gennorm(4, scale=math.sqrt(math.gamma(1 / 4) / math.gamma(3 / 4))),
    "normp(1.5)": sst.gennorm(1.5, scale=math.sqrt(math.gamma(1 / 1.5) / math.gamma(3 / 1.5))),
}


@pytest.mark.parametrize("spec", list(SCIPY))
def test_shape_matches_scipy_ks(spec):
    x = get_distribution(spec).sample(N, seed=1)
    assert sst.kstest(x, SCIPY[spec].cdf).pvalue > 1e-3


@pytest.mark.parametrize("spec", ["normal", "t6", "uniform", "laplace", "t(8)", "normp4", "normp(1.5)"])
def test_zero_mean_unit_variance_within_standard_error(spec):
    d = get_distribution(spec)
    x = d.sample(N, seed=2)
    assert abs(x.mean()) < 4 / np.sqrt(N)
    # se of the sample variance: sqrt((kappa - 1)/N)
    assert abs(x.var() - 1) < 4 * np.sqrt((d.kurtosis - 1) / N)


def test_kurtosis_values():
    assert get_distribution("normal").kurtosis == 3
    assert get_distribution("t6").kurtosis == 6
    assert get_distribution("t(10)").kurtosis == pytest.approx(4)
    assert get_distribution("t4").kurtosis == np.inf
    assert get_distribution("uniform").kurtosis == pytest.approx(1.8)
    assert get_distribution("laplace").kurtosis == 6


@pytest.mark.parametrize("spec", ["t6", "t(6)", "T6", ("t", 6), "t(nu=6)", "t 6"])
def test_t_spellings(spec):
    d = get_distribution(spec)
    assert d.kind == "t" and d.nu == 6 and d.label == "t(6)"


@pytest.mark.parametrize("spec", ["t2", "t(1)", ("t", 2.0), ("t", -3), ("t", float("inf"))])
def test_t_nu_at_most_2_rejected(spec):
    with pytest.raises(ValueError, match="ν"):
        get_distribution(spec)


def test_common_random_numbers_are_monotone_maps_of_z():
    z = np.random.default_rng(0).standard_normal(1000)
    for spec in ["uniform", "laplace"]:
        eps = get_distribution(spec).draw(z, None)
        assert np.array_equal(np.argsort(eps), np.argsort(z))


def test_unknown_and_user():
    with pytest.raises(ValueError, match="unknown distribution"):
        get_distribution("gumbel")
    with pytest.raises(ValueError, match="unit-variance"):
        get_distribution(lambda rng, size: rng.uniform(size=size))
    with pytest.raises(ValueError, match="failed"):
        get_distribution(lambda rng: 0)
    d = get_distribution(lambda rng, size: rng.standard_normal(size))
    assert d.kind == "user"


@pytest.mark.parametrize("p", [4.0, 1.5, 8.0])
def test_normp_variance_and_kurtosis_against_closed_forms(p):
    """Var = 1 and E[ε⁴] = Γ(5/p)Γ(1/p)/Γ(3/p)² (2.1884 at p = 4, ErrViewLib's Normp4), within
    the Monte Carlo standard errors: se(var) = √((κ − 1)/N), se(m4) = √((E[ε⁸] − κ²)/N)."""
    g = math.gamma
    kappa = g(5 / p) * g(1 / p) / g(3 / p) ** 2
    m8 = g(9 / p) * g(1 / p) ** 3 / g(3 / p) ** 4
    d = get_distribution(("normp", p))
    assert d.kurtosis == pytest.approx(kappa, rel=1e-12)
    x = d.sample(N, seed=5)
    assert abs(np.mean(x**2) - 1) < 4 * math.sqrt((kappa - 1) / N)
    assert abs(np.mean(x**4) - kappa) < 4 * math.sqrt((m8 - kappa**2) / N)
    assert get_distribution("normp4").kurtosis == pytest.approx(2.188439615, rel=1e-9)


@pytest.mark.parametrize("spec", ["normp4", "normp(4)", "NormP4", ("normp", 4), "normp(p=4)"])
def test_normp_spellings(spec):
    d = get_distribution(spec)
    assert d.kind == "normp" and d.nu == 4 and d.label == "normp(4)" and d.needs_mixing and d.mixing_df == 0.5


@pytest.mark.parametrize("spec", ["normp0.1", ("normp", 0), ("normp", "x"), ("normp", float("nan"))])
def test_normp_bad_shape_rejected(spec):
    with pytest.raises(ValueError, match="shape p"):
        get_distribution(spec)


def test_normp_in_the_engine():
    """normp4 runs through simulate (in-kernel draws), the synthetic sets and the confidence-curve
    kernel: unit variance of ε in each (means within standard errors)."""
    import mcref

    kappa = get_distribution("normp4").kurtosis
    u = np.full(500, 2.0)
    s = mcref.simulate(["ZMS"], u, dists=("normal", "normp4"), n_mc=2000, seed=1)
    zms = s.samples[1, 0]
    assert abs(zms.mean() - 1) < 4 * math.sqrt((kappa - 1) / 500 / 2000)
    assert abs(zms.var() * 500 / (kappa - 1) - 1) < 0.15  # var(ZMS) = (κ − 1)/M
    E, u2 = mcref.synthetic.ig(50_000, 6, dist="normp4", seed=2)
    z = E / u2
    assert abs(np.mean(z**2) - 1) < 4 * math.sqrt((kappa - 1) / z.size)
    assert abs(np.mean(z**4) - kappa) < 0.1
    from mcref import diagnostics as D

    cc = D.confidence_curve(np.ones(400), np.ones(400), dist="normp4", n_mc=200, seed=3, keep_samples=True)
    # with u = 1 the reference's c(0) is the RMS of 400 unit-variance draws
    assert abs(np.mean(cc.samples[:, 0] ** 2) - 1) < 4 * math.sqrt((kappa - 1) / 400 / 200)


@pytest.mark.parametrize("k", [2, 3, 7, 1000, 50_000])
def test_empirical_d_is_the_inverse_empirical_cdf_of_phi(k):
    """ε = values[⌊Φ(z)·k⌋], the empirical D's map, on z across the whole range (tails beyond
    the interpolation grid included): the table's index equals the count of the normal
    quantiles Φ⁻¹(j/k) ≤ z exactly, and ⌊Φ(z)·k⌋ from scipy's ndtr wherever z is not within
    rounding of a quantile."""
    from scipy.special import ndtr, ndtri

    from mcref.generative import get_distribution
    from mcref.kernels.generative import EMPIRICAL, transform

    rng = np.random.default_rng(k)
    d = get_distribution("empirical", Z=rng.standard_t(5, k))
    vals = d.values
    z = np.concatenate([rng.standard_normal(100_000), 4 * rng.standard_normal(20_000), [-40.0, -8.0, 8.0, 40.0]])
    out = np.empty_like(z)
    transform(EMPIRICAL, 0.0, z, z, d.table, out)
    count = np.searchsorted(ndtri(np.arange(1, k) / k), z, side="right")
    np.testing.assert_array_equal(out, vals[count])
    j = np.minimum((ndtr(z) * k).astype(np.int64), k - 1)
    near = np.abs(ndtr(z) * k - np.round(ndtr(z) * k)) < 1e-9
    np.testing.assert_array_equal(out[~near], vals[j[~near]])


def test_permutation_is_a_named_distribution():
    """``"permutation"`` is a D like the others (simulate, validate, benchmark take it by name)
    and needs the data's Z, which it keeps as they are (not standardized), sorted: a function of their
    multiset, whatever the order of the rows."""
    z = np.array([0.5, -2.0, 1.5, 3.0])
    d = get_distribution("permutation", Z=z)
    assert d.kind == "permutation" and d.label == "permutation" and d.own_stream and not d.needs_mixing
    np.testing.assert_array_equal(d.values, np.sort(z))
    with pytest.raises(ValueError, match="'permutation' shuffles the dataset's Z across u: it needs E"):
        get_distribution("permutation")
