"""A user's own statistic (mcref.register_statistic) works like a built-in one.

Checked against independent references: NumPy on the same data (value, jackknife), the
built-in statistic it copies (the same resamples and simulated datasets: equal replicates
to rounding), scipy.stats.bootstrap's BCa interval (within bootstrap noise), and the closed
form E|ε| of the simulated reference under a normal and a unit-variance t D (within the
Monte Carlo standard error).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy import special, stats as sps

import mcref
from mcref import stats as S

sys.path.insert(0, str(Path(__file__).parent))
import _toy_study as toy  # noqa: E402


@numba.njit
def mean_abs_z(E, u):
    return np.mean(np.abs(E / u))


@numba.njit
def zms_copy(E, u):
    z = E / u
    return np.mean(z * z)


@pytest.fixture
def registered():
    """MAZ (mean |Z|, reference √(2/π), two-sided) and ZMSc (a copy of ZMS, reference 1)."""
    S.register_statistic("MAZ", mean_abs_z, reference=math.sqrt(2 / math.pi), screens=("Z2",))
    S.register_statistic("ZMSc", zms_copy, reference=1.0, screens=("Z2",), pairing=False)
    yield
    for name in ("MAZ", "ZMSc"):
        if name in S.STATISTICS:
            S.unregister_statistic(name)


def _data(m=1500, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    if ties:
        u = np.round(u, 1)  # 16 distinct values: runs of equal u straddle bin cuts
    return u * rng.normal(size=m), u


def test_value_equals_numpy(registered):
    E, u = _data()
    assert S.info("maz").user and S.info("MAZ").alternative == "two-sided"
    assert mcref.statistic("MAZ", E, u) == pytest.approx(np.mean(np.abs(E / u)), rel=1e-14)
    vals = mcref.statistics(["ENCE", "MAZ", "ZMS"], E, u)
    assert list(vals) == ["ENCE", "MAZ", "ZMS"]
    assert vals["MAZ"] == pytest.approx(np.mean(np.abs(E / u)), rel=1e-14)
    assert vals["ZMS"] == pytest.approx(np.mean((E / u) ** 2), rel=1e-14)


@pytest.mark.parametrize("ties", [False, True])
def test_bootstrap_walks_the_builtin_resamples(registered, ties):
    """The copy of ZMS gets the replicates of ZMS itself (same resamples, also when tied
    runs are split between bins, which advances the stream), so the same BCa interval."""
    E, u = _data(ties=ties)
    res = mcref.bootstrap_many(["ZMS", "ENCE", "ZMSc"], E, u, n_boot=1000, n_bins=10, seed=7)
    a, b = res["ZMS"], res["ZMSc"]
    np.testing.assert_allclose(b.distribution, a.distribution, rtol=1e-12)
    assert (b.low, b.high) == pytest.approx((a.low, a.high), rel=1e-12)
    assert b.acceleration == pytest.approx(a.acceleration, rel=1e-9, abs=1e-14)


def test_bootstrap_adaptive_bins_same_resamples(registered):
    E, u = _data(m=600)
    res = mcref.bootstrap_many(["ZMS", "ENCE", "ZMSc"], E, u, n_boot=1000, n_bins=5, binning="adaptive", seed=3)
    np.testing.assert_allclose(res["ZMSc"].distribution, res["ZMS"].distribution, rtol=1e-12)


def test_jackknife_equals_leave_one_out(registered):
    E, u = _data(m=300)
    prep = S.prepare(E, u, None)
    jack = mcref.resampling._bootstrap.jackknife(S.info("MAZ"), prep)
    az = np.abs(prep.E / prep.u)
    loo = (az.sum() - az) / (az.size - 1)
    np.testing.assert_allclose(jack, loo, rtol=1e-12)


def test_bca_agrees_with_scipy(registered):
    E, u = _data(m=2000, seed=5)
    ours = mcref.bootstrap("MAZ", E, u, n_boot=5000, seed=1)
    ref = sps.bootstrap((np.abs(E / u),), np.mean, n_resamples=5000, method="BCa",
                        random_state=np.random.default_rng(2)).confidence_interval
    # independent resamples: each limit is a quantile of 5000 replicates, whose noise is
    # ~0.04 bootstrap se at 2.5 %; 0.25 se is > 4 sd of the difference of two such limits
    tol = 0.25 * ours.se
    assert abs(ours.low - ref.low) < tol and abs(ours.high - ref.high) < tol
    assert ours.se == pytest.approx(np.std(np.abs(E / u), ddof=1) / math.sqrt(E.size), rel=0.05)


def _mean_abs_t(nu: float) -> float:
    """E|ε| for a unit-variance Student t(ν)."""
    e_abs_t = 2 * math.sqrt(nu) * math.exp(special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2)) \
        / (math.sqrt(math.pi) * (nu - 1))
    return e_abs_t * math.sqrt((nu - 2) / nu)


def test_simulated_reference_matches_closed_form(registered):
    E, u = _data(m=500)
    sim = mcref.simulate(["MAZ"], u, dists=["normal", "t6"], n_mc=4000, seed=11)
    for dist, expected in (("normal", math.sqrt(2 / math.pi)), ("t6", _mean_abs_t(6.0))):
        ref = sim.reference("MAZ", dist)
        assert abs(ref.mean - expected) < 4 * ref.se, (dist, ref.mean, expected, ref.se)
        # sd of a mean of M i.i.d. |ε|: sqrt((1 - E|ε|²)/M), within the MC error of an sd
        assert ref.sd == pytest.approx(math.sqrt((1 - expected ** 2) / u.size), rel=0.1)


def test_simulate_uses_the_builtin_datasets(registered):
    """Under every kind of D (in-kernel normal and t, empirical, a user sampler, the
    permutation D), the copy of ZMS sees the simulated datasets of ZMS."""
    E, u = _data(m=800)
    perm = mcref.generative.permutation_distribution(E / u)
    sim = mcref.simulate(["ZMS", "CC", "ZMSc"], u, dists=["normal", "t6", "empirical", perm], E=E, n_mc=300,
                         seed=4)
    np.testing.assert_allclose(sim.samples[:, 2], sim.samples[:, 0], rtol=1e-12)
    alone = mcref.simulate(["ZMSc"], u, dists=["normal", "t6", "empirical", perm], E=E, n_mc=300, seed=4,
                           n_threads=1)
    np.testing.assert_array_equal(alone.samples[:, 0], sim.samples[:, 2])  # any thread count, any company


def test_validate_row_and_joint(registered):
    E, u = _data(m=1000)
    tab = mcref.validate(E, u, stats=["ZMS", "ZMSc", "CC"], n_boot=1000, n_mc=1000, seed=5)
    a, b = tab["ZMS"], tab["ZMSc"]
    assert b.estimate == pytest.approx(a.estimate, rel=1e-12)
    assert (b.low, b.high) == pytest.approx((a.low, a.high), rel=1e-12)
    assert b.verdict == a.verdict and b.p_sim == pytest.approx(a.p_sim)
    assert "ZMSc" in tab.joint.stats
    assert a.test == "bootstrap-t" and b.test == "t(fit)"  # a registered scale statistic: the t(ν̂) test
    # a simulated-reference user statistic of the multiset of Z (no reference, no scale test): the
    # permutation cannot move it, so the conditional rule gives it no p (issue 38) ...
    S.register_statistic("MAZ", mean_abs_z, replace=True)  # no reference now
    row = mcref.validate(E, u, stats=["MAZ"], n_boot=1000, n_mc=1000, seed=5)["MAZ"]
    assert row.reference is None and row.verdict == "not testable" and row.p_test is None and row.reason
    # ... and the Monte Carlo rule decides it by its test under the empirical D
    row = mcref.validate(E, u, stats=["MAZ"], n_boot=1000, n_mc=1000, seed=5, rule="mc")["MAZ"]
    assert row.reference is None and 0 < row.p_sim["empirical"] <= 1 and row.verdict in ("valid", "invalid")


def test_study_workers_receive_the_registry(registered):
    """Loky workers are fresh processes: the runner ships the registered statistics."""
    spec = mcref.studies.StudySpec("user", {"stat": "MAZ"}, [{"i": i} for i in range(4)], toy.user_stat_cell)
    seq = mcref.studies.run_study(spec, n_jobs=1, progress=False, seed=0).table
    par = mcref.studies.run_study(spec, n_jobs=2, backend="loky", progress=False, seed=0).table
    np.testing.assert_array_equal(par["value"].to_numpy(), seq["value"].to_numpy())
    np.testing.assert_allclose(seq["value"], seq["numpy"], rtol=1e-14)


def test_bad_registrations(registered):
    with pytest.raises(ValueError, match=r"`name`='zms' is a built-in statistic \(ZMS\)"):
        S.register_statistic("zms", mean_abs_z)
    with pytest.raises(ValueError, match=r"statistic 'MAZ' is already registered; pass replace=True"):
        S.register_statistic("maz", mean_abs_z)
    with pytest.raises(ValueError, match=r"`alternative` must be one of 'two-sided', 'greater', 'less'"):
        S.register_statistic("X1", mean_abs_z, alternative="bigger")
    with pytest.raises(ValueError, match=r"`reference` must be None, a number or a function"):
        S.register_statistic("X1", mean_abs_z, reference="one")
    with pytest.raises(ValueError, match=r"`screens` must be one of 'z2', 'u2', 'e2'"):
        S.register_statistic("X1", mean_abs_z, screens=("Z4",))
    with pytest.raises(ValueError, match=r"`name` must be a non-empty string"):
        S.register_statistic("a b", mean_abs_z)
    with pytest.raises(ValueError, match=r"statistic 'X1': `func\(E, u\)` must compile with numba"):
        S.register_statistic("X1", lambda E, u: E.no_such_method())
    with pytest.raises(ValueError, match=r"statistic 'X1': `func\(E, u\)` must return a float, got ndarray"):
        S.register_statistic("X1", lambda E, u: E / u)
    with pytest.raises(ValueError, match=r"ZMS is a built-in statistic; only registered ones can be removed"):
        S.unregister_statistic("ZMS")
    assert "X1" not in S.STATISTICS


def test_plain_python_function_is_compiled(registered):
    S.register_statistic("MAZ2", lambda E, u: np.mean(np.abs(E / u)) ** 2, alternative="greater")
    try:
        E, u = _data(m=200)
        assert mcref.statistic("maz2", E, u) == pytest.approx(np.mean(np.abs(E / u)) ** 2, rel=1e-14)
    finally:
        S.unregister_statistic("MAZ2")
    with pytest.raises(ValueError, match=r"unknown statistic 'MAZ2'"):
        mcref.statistic("MAZ2", E, u)


def test_undefined_value_is_an_error(registered):
    S.register_statistic("NANS", lambda E, u: np.nan)
    try:
        E, u = _data(m=50)
        with pytest.raises(ValueError, match=r"statistic NANS is undefined for this dataset"):
            mcref.statistic("NANS", E, u)
    finally:
        S.unregister_statistic("NANS")
