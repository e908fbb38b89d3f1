"""Generative distributions: unit variance, shape (KS against scipy), kurtosis, errors."""

from __future__ import annotations

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
}


@pytest.mark.parametrize("spec", list(SCIPY))
def test_shape_matches_scipy_ks(spec):
    x = get_distribution(spec).sample(N, seed=1)
    assert sst.kstest(x, SCIPY[spec].cdf).pvalue > 1e-3


@pytest.mark.parametrize("spec", ["normal", "t6", "uniform", "laplace", "t(8)"])
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
