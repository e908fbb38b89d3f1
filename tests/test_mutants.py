"""Tests added by the mutation run of issue 31 (benchmarks/mutation_results.md): each kills
mutants of _validate, _joint, features, _scale_test or the binned statistics that the other
tests let survive. References are closed forms or plain NumPy on the same data."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest


def _clustered_z(seed=0, G=12):
    rng = np.random.default_rng(seed)
    gid = np.repeat(np.arange(G), rng.integers(2, 7, G))
    z = 0.3 + 1.2 * rng.standard_normal(gid.size) + 0.5 * rng.standard_normal(G)[gid]
    return z, gid


def test_cluster_sandwich_se_of_zms_mz_varz_matches_numpy():
    """_scale_test._cluster_z_stat: θ and the cluster-robust se of ZMS, MZ and VarZ (CGM 2008 sandwich)."""
    from mcref.verdict._scale_test import _cluster_columns, _cluster_z_stat

    z, gid = _clustered_z()
    M, G = z.size, gid.max() + 1
    c = G / (G - 1.0)
    sums = _cluster_columns(z, gid).sum(axis=0)
    zbar = z.mean()
    m2 = np.mean((z - zbar) ** 2)
    ref = {"ZMS": (np.mean(z ** 2), z ** 2 - np.mean(z ** 2), 1.0),
           "NLL": (np.mean(z ** 2), z ** 2 - np.mean(z ** 2), 1.0),
           "MZ": (zbar, z - zbar, 1.0),
           "VarZ": (M / (M - 1.0) * m2, (z - zbar) ** 2 - m2, M / (M - 1.0))}
    for name, (th, psi, k) in ref.items():
        Psi = np.bincount(gid, psi)
        se = k * math.sqrt(c * np.sum(Psi ** 2)) / M
        got_th, got_se = _cluster_z_stat(name, sums, G)
        assert got_th == pytest.approx(th, rel=1e-12), name
        assert got_se == pytest.approx(se, rel=1e-10), name


def test_scale_tests_joint_se_is_the_binomial_se():
    """ScaleTests.joint: se = √(p(1 − p)/n) of the joint p, whichever subset of the scale statistics."""
    from mcref.verdict._scale_test import scale_tests

    rng = np.random.default_rng(1)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 300))
    E = u * rng.standard_normal(300)
    st = scale_tests(["ZMS", "MZ", "VarZ"], E, u, n_boot=99, seed=0)
    for names in (["ZMS", "MZ", "VarZ"], ["ZMS", "MZ"], ["VarZ"]):
        j = st.joint(names)
        assert 0 < j.p < 1 and j.n_mc == 99
        assert j.se == pytest.approx(math.sqrt(j.p * (1 - j.p) / 99), rel=1e-12)
        assert j.statistic == -j.p  # the minp convention: larger T = stronger evidence
    assert st.joint(["VarZ"]).p == st.p["VarZ"]


def test_cauchy_cap_mirrors_the_smallest_p():
    """_joint.combine_pvalues: p̃ = min(p, 1 − 1/N), so p = 1 gives tan(−π/2 + π/N) (= −1 at N = 4), the mirror of 1/N."""
    from mcref.verdict._joint import combine_pvalues

    assert float(combine_pvalues([1.0], "cauchy", n_pool=4)) == pytest.approx(-1.0, rel=1e-12)
    assert float(combine_pvalues([0.25], "cauchy", n_pool=4)) == pytest.approx(1.0, rel=1e-12)
    # 2-D: N = the number of columns, one T per column (mean over the rows)
    T = combine_pvalues(np.array([[1.0, 0.5, 0.25, 0.75], [1.0, 1.0, 0.5, 0.5]]), "cauchy")
    ref = np.mean(np.tan((0.5 - np.array([[0.75, 0.5, 0.25, 0.75], [0.75, 0.75, 0.5, 0.5]])) * np.pi), axis=0)
    np.testing.assert_allclose(T, ref, rtol=1e-12, atol=1e-15)


def test_scale_simulation_draws_from_the_t_fitted_to_z():
    """_joint.scale_simulation: the scale part's D is the unit-variance t(ν̂), ν̂ the ML fit to Z (not a default D)."""
    from mcref._distfit import fit_t
    from mcref.verdict._joint import scale_simulation

    rng = np.random.default_rng(1)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 300))
    E = u * rng.standard_t(5, 300)
    s = scale_simulation(["ZMS", "ENCE"], u, E, n_mc=20, seed=0)
    assert s.names == ("ZMS",) and len(s.dists) == 1
    d = s.dists[0]
    assert d.kind == "t" and d.nu == pytest.approx(fit_t(E / u).nu, rel=1e-12)
    assert d.label.startswith("t(fit")


def test_a_transposed_feature_array_gets_the_shape_message():
    """features.as_features: a (k, M) array (transposed) is refused for its shape, not column by column."""
    from mcref.features import as_features

    with pytest.raises(ValueError, match=r"an \(100, k\) array.*got shape \(3, 100\)"):
        as_features(np.zeros((3, 100)), 100)
    with pytest.raises(ValueError, match=r"got shape \(100, 2, 2\)"):
        as_features(np.zeros((100, 2, 2)), 100)


def test_pooled_levels_note_keeps_the_level_count():
    """features.feature_bins: the note of a pooled categorical feature names its levels, bins and the pooled ones."""
    from mcref.features import as_features, feature_bins

    g = np.array(["a"] * 100 + ["b"] * 120 + ["c"] * 140 + ["d"] * 10)
    b = feature_bins(as_features({"g": g}, g.size)[0], 20, min_count=30)
    # d (10 < 30) is pooled with the smallest other level, a: bins a+d, b, c
    assert b.n_bins == 3 and sorted(np.bincount(b.labels()).tolist()) == [110, 120, 140]
    assert b.how.startswith("categorical (4 levels), 3 bins of its levels (min_count=30); levels pooled")
    assert b.how.endswith("'a', 'd'")


def test_adaptive_feature_bins_take_the_callers_log_false():
    """features.feature_bins: log=False gives the linear grid on a positive feature (the bins of the shifted,
    negative feature, where only the linear grid exists); the default gives the log grid."""
    from mcref.features import as_features, feature_bins

    rng = np.random.default_rng(5)
    x = rng.lognormal(0.0, 1.0, 600)

    def labels(v, log):
        return feature_bins(as_features({"x": v}, v.size)[0], 8, min_count=30, binning="adaptive", log=log).labels()

    lin = labels(x - (x.max() + 1.0), None)  # all negative: linear grid
    np.testing.assert_array_equal(labels(x, False), lin)
    assert not np.array_equal(labels(x, None), lin)  # the log grid differs here: the test has teeth
    np.testing.assert_array_equal(labels(x, None), labels(x, True))
    x0 = np.where(x < np.quantile(x, 0.05), 0.0, x)  # non-negative with zeros: no log grid exists
    np.testing.assert_array_equal(labels(x0, None), labels(x0 - (x0.max() + 1.0), None))


def test_verdict_rules_at_their_boundaries():
    """_validate verdict rules: |ζ| = 1 is valid, p = α is invalid (p > α valid), as the docstrings state."""
    from mcref.verdict._validate import verdict_conditional, verdict_for, verdict_mc

    assert verdict_for(zeta_bs=None, zeta_sim={"a": 1.0, "b": -1.0}, d_sensitive=True, shape_flag=False) == "valid"
    assert verdict_for(zeta_bs=-1.0, zeta_sim={}, d_sensitive=False, shape_flag=False) == "valid"
    assert verdict_for(zeta_bs=None, zeta_sim={"a": 1.0, "b": 1.5}, d_sensitive=True,
                       shape_flag=False) == "not testable"
    assert verdict_for(zeta_bs=None, zeta_sim={"a": 1.5, "b": 1.0}, d_sensitive=False, shape_flag=False) == "invalid"
    assert verdict_for(zeta_bs=None, zeta_sim={"a": 1.0, "b": 1.5}, d_sensitive=False, shape_flag=False) == "valid"
    assert verdict_mc(zeta_bs=1.0, p_sim={}, shape_flag=False) == "valid"
    assert verdict_mc(zeta_bs=None, p_sim={"empirical": 0.05, "t": 0.9}, shape_flag=False) == "invalid"
    assert verdict_mc(zeta_bs=None, p_sim={"a": 0.05, "b": 0.0501}, shape_flag=False) == "not testable"
    assert verdict_mc(zeta_bs=None, p_sim={"a": 0.05, "b": 0.01}, shape_flag=False) == "invalid"
    assert verdict_mc(zeta_bs=None, p_sim={"a": 0.0501}, shape_flag=True) == "unreliable"
    assert verdict_conditional(zeta_bs=None, p_perm=0.05, shape_flag=False) == "invalid"
    assert verdict_conditional(zeta_bs=None, p_perm=0.0501, shape_flag=False) == "valid"
    assert verdict_conditional(zeta_bs=5.0, p_perm=None, shape_flag=False, p_scale=0.05) == "invalid"
    assert verdict_conditional(zeta_bs=1.0, p_perm=None, shape_flag=False) == "valid"
    with pytest.raises(ValueError, match="permutation p-value"):
        verdict_conditional(zeta_bs=None, p_perm=None, shape_flag=False)


def test_a_two_level_categorical_feature_is_accepted():
    """features.as_features: booleans and two strings (two levels) are a feature of two bins, not 'constant'."""
    from mcref.features import as_features, feature_bins

    b = np.arange(200) % 2 == 0
    for x in (b, np.where(b, "yes", "no")):
        f = as_features({"b": x}, 200)[0]
        assert f.categorical and len(f.levels) == 2
        assert feature_bins(f, 20, min_count=30).n_bins == 2
    with pytest.raises(ValueError, match="constant"):
        as_features({"b": np.full(200, "yes")}, 200)


def test_joint_test_with_two_simulated_sets():
    """_joint.joint_test: n = 2 simulated sets is allowed (p = (1 + #{T_k ≥ T_0})/3 by hand), n = 1 is not."""
    from mcref.verdict._joint import joint_test

    # pool (3, 1, 2), "greater": leave-one-out p = 1/3, 1, 2/3; minp T = −p: no simulated T ≥ −1/3
    r = joint_test([[1.0, 2.0]], [3.0], "greater")
    assert r.p == pytest.approx(1 / 3) and r.n_mc == 2 and r.p_stats[0] == pytest.approx(1 / 3)
    assert joint_test([[1.0, 2.0]], [1.5], "greater").p == pytest.approx(2 / 3)  # p 2/3, 1, 1/3: one T ≥
    with pytest.raises(ValueError, match="at least two simulated sets"):
        joint_test([[1.0]], [3.0])


def test_rce_test_does_not_depend_on_the_row_order():
    """_scale_test.rce_test: the pairs are resampled in (u, E) order, so a row permutation leaves T* and p unchanged."""
    from mcref.verdict._scale_test import rce_test

    rng = np.random.default_rng(7)
    u = np.round(np.sqrt(1 / rng.gamma(4, 0.25, 200)), 1)  # ties in u: the E order breaks them
    E = u * rng.standard_normal(200)
    a = rce_test(E, u, n_boot=99, seed=3)
    o = rng.permutation(200)
    b = rce_test(E[o], u[o], n_boot=99, seed=3)
    np.testing.assert_array_equal(a.tstar, b.tstar)
    assert a.p == b.p and a.t == b.t


def test_feature_rows_carry_nan_where_they_have_no_interval():
    """_validate._feature_row: an adaptivity row has no bootstrap interval or ζ: its bias, low, high, ζ are NaN."""
    import mcref

    rng = np.random.default_rng(2)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 300))
    E = u * rng.standard_normal(300)
    x = rng.uniform(0, 1, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few replicates: the rows' fields, not their precision, are checked
        t = mcref.validate(E, u, x=x, stats=["ENCE"], n_boot=100, n_mc=100, seed=0)
    r = t["ENCE|x"]
    for v in (r.bias, r.low, r.high, *r.zeta_sim.values(), *r.zeta_sim2.values()):
        assert isinstance(v, float) and math.isnan(v)
    assert r.test == "permutation" and r.verdict == ("valid" if r.p_test > 0.05 else "invalid")


def test_object_and_boolean_features_keep_their_levels():
    """features._one: an object array is read as strings (mixed types allowed), booleans keep bool levels."""
    from mcref.features import as_features

    f = as_features({"m": np.array([1, "a"] * 50, dtype=object)}, 100)[0]
    assert f.categorical and f.levels == ("1", "a")
    np.testing.assert_array_equal(f.values, np.tile([0.0, 1.0], 50))
    g = as_features({"b": np.arange(100) % 3 == 0}, 100)[0]
    assert g.levels == (False, True) and all(type(v) is bool for v in g.levels)


def test_permutation_reference_of_mse_uses_z_of_the_data():
    """_validate: the data-based D draw from Z = E/u: under the permutation D (E* = u·Z shuffled),
    E[MSE*] = ⟨u²⟩⟨Z²⟩ exactly; tolerance 5 se from the permutation variance ΣaΣb/(M−1)/M²."""
    import mcref

    rng = np.random.default_rng(3)
    m, n_mc = 200, 200
    u = rng.uniform(2.0, 4.0, m)
    E = u * rng.standard_normal(m)
    a, b = u ** 2, (E / u) ** 2
    sd = math.sqrt(np.sum((a - a.mean()) ** 2) * np.sum((b - b.mean()) ** 2) / (m - 1)) / m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = mcref.validate(E, u, stats=["MSE"], dists=["permutation"], rule="mc", n_boot=100, n_mc=n_mc, seed=1)
    ref = t["MSE"].sim["permutation"]
    assert abs(ref.mean - a.mean() * b.mean()) < 5 * sd / math.sqrt(n_mc)



def test_bootstrap_binned_replicates_with_bins_longer_than_a_leaf():
    """kernels.stats.bin_acc: a leaf of counts (256 points) inside one bin (its no-cut branch), against naive bins."""
    import importlib

    import naive

    BS = importlib.import_module("mcref.resampling._bootstrap")
    rng = np.random.default_rng(11)
    m, nb, n_boot = 1200, 2, 4  # bins of 600 points > a leaf of 256: leaves fall wholly inside a bin
    u = np.sqrt(1 / rng.gamma(4, 0.25, m))
    E = u * rng.standard_normal(m)
    names = ["ENCE", "ZMSE", "UCE"]
    res = BS.bootstrap_many(names, E, u, n_boot=n_boot, n_bins=nb, min_count=1, seed=5, method="percentile")
    idx = BS.resample_indices(u, n_boot, seed=5, n_bins=nb)
    for name in names:
        want = [naive.statistic(name, E[r], u[r], nb) for r in idx]
        np.testing.assert_allclose(res[name].distribution, want, rtol=1e-11, atol=1e-13)


def test_numeric_feature_with_more_than_twenty_values_is_binned():
    """features.MAX_LEVELS: a numeric feature of 20 distinct values is categorical, of 21 it is cut into bins."""
    from mcref.features import as_features

    assert as_features(np.arange(420) % 20, 420)[0].categorical
    f = as_features(np.arange(420) % 21, 420)[0]
    assert not f.categorical and f.levels == ()


def test_untestable_rows_carry_nan():
    """_validate: with one u, CC is 'not testable' with NaN estimate, bias, interval and ζ (_untestable_row); MV's
    bootstrap interval is [u², u²] (every resample), and it contains its estimate (excludes_estimate False)."""
    import mcref
    import mcref.verdict._validate as _V

    rng = np.random.default_rng(4)
    u = np.full(200, 1.5)
    E = u * rng.standard_normal(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = mcref.validate(E, u, stats=["CC", "ZMS", "MV"], n_boot=100, n_mc=100, seed=0)
    r = t["CC"]
    assert r.verdict == "not testable" and r.p_test is None
    for v in (r.estimate, r.bias, r.low, r.high, *r.zeta_sim.values(), *r.zeta_sim2.values()):
        assert isinstance(v, float) and math.isnan(v)
    mv = t["MV"]
    assert mv.estimate == mv.low == mv.high == 2.25 and mv.excludes_estimate is False
    # _run_notes: the note names the rows of its reason
    assert [n for n in t.notes if "not testable" in n] == [f"CC: not testable: {_V.CONSTANT_U_REASON}"]


def test_scale_test_takes_two_resamples_not_one():
    """_scale_test._check: n_boot = 2 is the smallest allowed (p on a pool of 2), n_boot = 1 is refused."""
    from mcref.verdict._scale_test import rce_test, scale_test

    z = np.random.default_rng(8).standard_normal(50)
    r = scale_test(z, n_boot=2, seed=0)
    assert r.tstar.shape == (1, 2) and 1 / 3 <= r.p["ZMS"] <= 1
    assert rce_test(np.abs(z) + 0.1, np.ones(50), n_boot=2, seed=0).tstar.shape == (1, 2)
    with pytest.raises(ValueError, match="n_boot"):
        scale_test(z, n_boot=1, seed=0)


def test_numeric_feature_bins_shrink_to_keep_min_count():
    """features.feature_bins: too many bins for M are shrunk to ⌊M/min_count⌋ equal-count bins (not refused)."""
    from mcref.features import as_features, feature_bins

    x = np.random.default_rng(0).uniform(0, 1, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ShrunkBinsWarning
        b = feature_bins(as_features({"x": x}, 300)[0], 20, min_count=30)
    assert b.n_bins == 10 and np.all(np.bincount(b.labels()) == 30)


def test_scale_tests_compute_rce_only_when_asked():
    """_scale_test.scale_tests: RCE's p is the pair bootstrap-t of rce_test on the second child of the seed."""
    from mcref.verdict._scale_test import rce_test, scale_tests

    rng = np.random.default_rng(9)
    u = np.sqrt(1 / rng.gamma(4, 0.25, 200))
    E = u * rng.standard_normal(200)
    st = scale_tests(["ZMS", "RCE"], E, u, n_boot=99, seed=np.random.SeedSequence(4))
    want = rce_test(E, u, n_boot=99, seed=np.random.SeedSequence(4).spawn(2)[1]).p["RCE"]
    assert st.p["RCE"] == want
    assert "RCE" not in scale_tests(["ZMS"], E, u, n_boot=99, seed=0).p


def test_joint_verdict_line_names_its_parts():
    """_joint.JointVerdict.line: the conditional line names consistency+adaptivity only when adaptivity rows exist."""
    from mcref.verdict._joint import JointVerdict

    kw = dict(p=0.3, se=0.01, dist="permutation", combine="minp", stats=("ENCE", "ENCE|x"), verdict="valid",
              driver="ENCE", driver_p=0.2, alpha=0.05, rule="conditional", p_consistency=0.25,
              consistency_stats=("ENCE",))
    plain = JointVerdict(**kw).line()
    assert "consistency 0.250 (minp of ENCE under the permutation D)" in plain and "adaptivity" not in plain
    both = JointVerdict(**kw, p_adaptivity=0.4, adaptivity_stats=("ENCE|x",), p_pairing=0.3).line()
    assert "consistency+adaptivity 0.300 (minp under the permutation D; consistency 0.250 (ENCE); adaptivity 0.400 " \
           "(ENCE|x))" in both


def test_bootstrap_sums_refuses_a_one_dimensional_x():
    """_scale_test.bootstrap_sums: X must be 2-D rows (a 1-D X is a ValueError naming its shape)."""
    from mcref.verdict._scale_test import bootstrap_sums

    with pytest.raises(ValueError, match=r"2-D array.*\(5,\)"):
        bootstrap_sums(np.ones(5), 10, 0)
    with pytest.raises(ValueError, match="2-D array"):
        bootstrap_sums(np.ones((0, 3)), 10, 0)
