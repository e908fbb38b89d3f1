"""Joint verdict (mcref.verdict._joint): leave-one-out p-values and the joint p-value against
brute-force O(n²) versions, uniformity under an exact null, power, and validate's
``joint`` field."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
import scipy.stats as sps

import mcref
from mcref.generative import permutation_distribution
from mcref.verdict._joint import (COMBINATIONS, combine_pvalues, conditional_joint_verdict, joint_test, joint_tests,
                          loo_pvalues, scale_simulation, sidak)


# ----------------------------------------------------------------------------------------
# brute-force references: the definitions, one member at a time
# ----------------------------------------------------------------------------------------
def naive_loo(x, alt):
    N = len(x)
    out = np.empty(N)
    for i in range(N):
        others = [x[j] for j in range(N) if j != i]
        ge = sum(o >= x[i] for o in others)
        le = sum(o <= x[i] for o in others)
        pg, pl = (1 + ge) / N, (1 + le) / N
        out[i] = pg if alt == "greater" else pl if alt == "less" else min(1.0, 2 * min(pg, pl))
    return out


def naive_joint(samples, observed, alts, combine):
    S, n = samples.shape
    pool = np.column_stack([observed, samples])
    N = n + 1
    P = np.array([naive_loo(list(pool[s]), alts[s]) for s in range(S)])
    T, F = [], []
    for k in range(N):
        p = P[:, k]
        fisher = -2 * sum(math.log(v) for v in p)
        F.append(fisher)
        if combine == "minp":
            T.append(-min(p))
        elif combine == "fisher":
            T.append(fisher)
        else:
            T.append(sum(math.tan((0.5 - min(v, 1 - 1 / N)) * math.pi) for v in p) / S)
    count = 0
    for k in range(1, N):
        if combine == "minp":
            count += T[k] > T[0] or (T[k] == T[0] and F[k] >= F[0])
        else:
            count += T[k] >= T[0]
    return (1 + count) / N, P[:, 0]


@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_loo_pvalues_match_brute_force_with_ties(alt):
    rng = np.random.default_rng(0)
    for size in (2, 3, 17, 200):
        x = rng.integers(0, 6, size).astype(float)  # many ties
        np.testing.assert_array_equal(loo_pvalues(x, alt), naive_loo(list(x), alt))
        y = rng.normal(size=size)
        np.testing.assert_array_equal(loo_pvalues(y, alt), naive_loo(list(y), alt))


def test_loo_pvalues_rows_take_their_own_direction():
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=(3, 60)), 1)
    alts = ["greater", "two-sided", "less"]
    got = loo_pvalues(x, alts)
    for s in range(3):
        np.testing.assert_array_equal(got[s], naive_loo(list(x[s]), alts[s]))


@pytest.mark.parametrize("combine", COMBINATIONS)
def test_joint_pvalue_matches_brute_force(combine):
    rng = np.random.default_rng(2)
    alts = ["two-sided", "two-sided", "greater", "greater"]
    for trial in range(6):
        n = int(rng.integers(5, 120))
        # correlated statistics, half of the trials with ties (rounded)
        base = rng.normal(size=n + 1)
        X = np.vstack([base + rng.normal(size=n + 1) * w for w in (0.3, 1.0, 0.5, 2.0)])
        if trial % 2:
            X = np.round(X, 0)
        sims, obs = X[:, 1:], X[:, 0]
        got = joint_test(sims, obs, alts, combine=combine)
        want_p, want_pobs = naive_joint(sims, obs, alts, combine)
        assert got.p == want_p
        np.testing.assert_array_equal(got.p_stats, want_pobs)
        assert got.se == pytest.approx(math.sqrt(want_p * (1 - want_p) / n))


def test_data_pvalues_are_those_of_simulation_p_value():
    """The data's per-statistic p inside the joint test is Simulation.p_value (an independent code path)."""
    rng = np.random.default_rng(3)
    u = rng.lognormal(0, 0.4, 600)
    E = u * rng.normal(size=600)
    names = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    sim = mcref.simulate(names, u, dists=["normal"], n_mc=300, E=E, seed=4)
    est = mcref.statistics(names, E, u)
    from mcref.verdict._validate import alternative_for

    alts = [alternative_for(s) for s in names]
    res = joint_test(sim.samples[0], [est[s] for s in names], alts)
    for j, s in enumerate(names):
        assert res.p_stats[j] == sim.p_value(s, "normal", est[s], alternative=alts[j])[0]


@pytest.mark.parametrize("combine", COMBINATIONS)
def test_joint_pvalue_is_uniform_under_an_exact_null(combine):
    """The data are one more draw from the simulated law (dependent statistics, mixed
    directions): P(p_joint <= 0.05) = 0.05 exactly with n = 199 (continuous statistics)."""
    rng = np.random.default_rng(10 + COMBINATIONS.index(combine))
    reps, n = 2000, 199
    alts = ["two-sided", "greater", "greater", "two-sided"]
    L = np.array([[1, 0, 0, 0], [0.6, 0.8, 0, 0], [0.5, 0.5, 0.7, 0], [-0.3, 0.2, 0.1, 0.9]])
    rejects = 0
    for _ in range(reps):
        X = L @ rng.standard_t(5, size=(4, n + 1))
        X[1:3] = X[1:3] ** 2  # one-sided discrepancies: non-negative, skewed
        rejects += joint_test(X[:, 1:], X[:, 0], alts, combine=combine).p <= 0.05
    assert sps.binomtest(rejects, reps, 0.05).pvalue > 0.01, rejects


@pytest.mark.parametrize("combine", COMBINATIONS)
def test_joint_pvalue_is_conservative_with_heavy_ties(combine):
    rng = np.random.default_rng(20 + COMBINATIONS.index(combine))
    reps, n = 1500, 99
    rejects = 0
    for _ in range(reps):
        X = rng.integers(0, 4, size=(3, n + 1)).astype(float)
        rejects += joint_test(X[:, 1:], X[:, 0], ["greater", "two-sided", "less"], combine=combine).p <= 0.05
    assert sps.binomtest(rejects, reps, 0.05, alternative="greater").pvalue > 0.01, rejects


def test_joint_tests_share_the_pool():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3, 101))
    many = joint_tests(X[:, 1:], X[:, 0], "two-sided")
    for c in COMBINATIONS:
        one = joint_test(X[:, 1:], X[:, 0], "two-sided", combine=c)
        assert (many[c].p, many[c].statistic, many[c].combine) == (one.p, one.statistic, c)


def test_combine_pvalues_formulas():
    p = np.array([0.5, 0.25, 0.01])
    assert float(combine_pvalues(p, "minp")) == -0.01
    assert float(combine_pvalues(p, "fisher")) == pytest.approx(-2 * (math.log(0.5) + math.log(0.25) + math.log(0.01)))
    # Cauchy combination, Liu & Xie: mean tan((0.5 - p) pi); the cap at 1 - 1/N keeps p = 1 finite
    want = (math.tan(0) + math.tan(0.25 * math.pi) + math.tan(0.49 * math.pi)) / 3
    assert float(combine_pvalues(p, "cauchy")) == pytest.approx(want)
    capped = combine_pvalues(np.array([[1.0, 0.1], [0.1, 1.0]]), "cauchy")  # N = 2 columns
    assert np.all(np.isfinite(capped))


def test_power_on_a_clearly_miscalibrated_set():
    """u too small by 30 % on the upper half of u: every combination rejects, under the true D."""
    rng = np.random.default_rng(6)
    u = np.sqrt(1 / rng.gamma(3, 1 / 3, 2000))
    names = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    sim = mcref.simulate(names, u, dists=["normal"], n_mc=500, seed=7)
    E = np.where(u > np.median(u), 1.3, 1.0) * u * rng.normal(size=2000)
    est = mcref.statistics(names, E, u)
    from mcref.verdict._validate import alternative_for

    for c in COMBINATIONS:
        res = joint_test(sim.samples[0], [est[s] for s in names], [alternative_for(s) for s in names], combine=c)
        assert res.p < 0.05, (c, res.p)


@pytest.mark.parametrize(
    "kw, match",
    [(dict(combine="max"), "`combine` must be one of 'minp', 'fisher', 'cauchy', got 'max'"),
     (dict(alternative=["greater"]), "one direction per statistic"),
     (dict(alternative="bigger"), "`alternative` must be one of"),
     (dict(observed=[1.0]), "`observed` must hold one estimate per row"),
     (dict(samples=np.zeros((2, 1))), "at least two simulated sets"),
     (dict(observed=[np.nan, 0.0]), "`observed` contains NaN")],
)
def test_bad_input(kw, match):
    args = dict(samples=np.zeros((2, 10)), observed=[0.0, 0.0], alternative="two-sided")
    args.update(kw)
    combine = args.pop("combine", "fisher")
    with pytest.raises(ValueError, match=match):
        joint_test(args["samples"], args["observed"], args["alternative"], combine=combine)


def test_validate_bad_combine_is_named():
    u = np.linspace(1, 2, 500)
    with pytest.raises(ValueError, match="`combine` must be one of"):
        mcref.validate(u * 0.5, u, combine="bonferroni", n_boot=100, n_mc=100)


# ----------------------------------------------------------------------------------------
# validate(...).joint
# ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(8)
    u = np.sqrt(1 / rng.gamma(3, 1 / 3, 1500))
    E = u * rng.normal(size=1500)
    import warnings

    with warnings.catch_warnings():  # small B on calibrated data: BCa may fall back to the percentile interval
        warnings.simplefilter("ignore", mcref.DegenerateBootstrapWarning)
        # rule="mc": the joint test under the empirical D (the default before the conditional rule)
        with pytest.warns(mcref.FewReplicatesWarning):
            ok = mcref.validate(E, u, n_boot=300, n_mc=500, seed=1, rule="mc")
        with pytest.warns(mcref.FewReplicatesWarning):
            bad = mcref.validate(1.25 * E, u, n_boot=300, n_mc=500, seed=1, combine="cauchy", rule="mc")
        with pytest.warns(mcref.FewReplicatesWarning):
            two = mcref.validate(E, u, n_boot=300, n_mc=500, seed=1, dists=("normal", "t6"), combine="minp",
                                 rule="mc")
    return ok, bad, two


def test_validate_joint_fields(tables):
    ok, bad, two = tables
    for tab in tables:
        j = tab.joint
        assert j.stats == tuple(r.name for r in tab.rows if not r.shape_flag)
        assert j.excluded == tuple(r.name for r in tab.rows if r.shape_flag)
        # the driver is the covered statistic with the smallest per-statistic p of the table's rows
        ps = {s: tab[s].p_sim[j.dist] for s in j.stats}
        assert j.driver_p == min(ps.values()) and ps[j.driver] == j.driver_p
        assert j.se == pytest.approx(math.sqrt(j.p * (1 - j.p) / tab.n_mc))
        assert set(j.p_dist) == set(tab.dists) and j.p_dist[j.dist] == j.p and j.rule == "mc"
    assert ok.joint.dist == "empirical" and ok.joint.combine == "minp"
    assert ok.joint.verdict == ("valid" if ok.joint.p > 0.05 else "invalid")
    assert bad.joint.combine == "cauchy" and bad.joint.verdict == "invalid" and bad.joint.p < 0.01
    assert "ZMS" in bad.joint.stats  # average calibration enters by its simulated law
    # without the empirical D every D must agree; the reported p is the largest
    assert two.joint.dist in ("normal", "t(6)") and two.joint.p == max(two.joint.p_dist.values())
    ps = list(two.joint.p_dist.values())
    want = ("valid" if all(p > 0.05 for p in ps) else "invalid" if all(p <= 0.05 for p in ps)
            else "not testable")
    assert two.joint.verdict == want


def test_validate_joint_is_the_joint_test_of_its_simulation(tables):
    """Recompute the joint p from an independent simulation with the same seed stream."""
    ok = tables[0]
    rng = np.random.default_rng(8)
    u = np.sqrt(1 / rng.gamma(3, 1 / 3, 1500))
    E = u * rng.normal(size=1500)
    names = [r.name for r in ok.rows]
    ss_sim = np.random.SeedSequence(1).spawn(3)[1]
    sim = mcref.simulate(names, u, dists=["normal", "t6", "empirical", permutation_distribution(E / u)], n_mc=500,
                         E=E, seed=ss_sim)
    from mcref.verdict._validate import alternative_for

    cov = list(ok.joint.stats)
    X = sim.samples[2][[names.index(s) for s in cov]]
    want, _ = naive_joint(X, [ok[s].estimate for s in cov], [alternative_for(s) for s in cov], "minp")
    assert ok.joint.p == want


def test_validate_joint_is_printed_and_exported(tables):
    ok, bad, _ = tables
    text = bad.wide_table()  # one line per note (the compact view wraps them at 100 columns)
    # the headline first (the answer), the joint verdict's detail under the table
    assert text.splitlines()[1].startswith("joint verdict: invalid (p")
    line = next(l for l in text.splitlines() if l.startswith("joint verdict, how:"))
    assert "joint verdict: invalid" in str(bad)
    assert line.startswith(("joint verdict, how: invalid (p = ", "joint verdict, how: invalid (p < "))  # "< b" at the floor
    assert "cauchy combination of ZMS" in line
    assert f"smallest p: {bad.joint.driver}" in line and "under the empirical D" in line
    doc = json.loads(ok.to_json())
    assert doc["joint"]["p"] == ok.joint.p and doc["joint"]["verdict"] == ok.joint.verdict
    assert doc["joint"]["stats"] == "+".join(ok.joint.stats)
    rows = list(csv.DictReader(io.StringIO(ok.to_csv())))
    assert len(rows) == len(ok.rows)
    for r in rows:  # one joint verdict per table, repeated on every row (as the dataset and seed)
        assert r["joint_verdict"] == ok.joint.verdict and float(r["joint_p"]) == pytest.approx(ok.joint.p)
        assert r["joint_stats"] == "+".join(ok.joint.stats)


def test_cli_prints_the_joint_line(capsys):
    from mcref.cli import main

    assert main(["validate", "--dataset", "Diffusion_RF", "--boot", "200", "--mc", "200", "--seed", "0"]) == 0
    assert "joint verdict: " in capsys.readouterr().out


def test_permutation_distribution_shuffles_the_data_z():
    z = np.arange(7.0)
    d = permutation_distribution(z)
    x = np.array([d.sample(7, seed=s) for s in range(5)])
    assert np.all(np.sort(x, axis=1) == z) and not np.all(x == z)
    with pytest.raises(ValueError, match="the permutation D draws 7 values"):
        d.sample(8, seed=0)
    # ZMS is invariant under it: a permutation test sees consistency only
    u = np.linspace(1, 2, 7)
    sim = mcref.simulate(["ZMS"], u, dists=[d], E=u * z, n_mc=10, seed=0)
    np.testing.assert_allclose(sim.samples[0, 0], np.mean(z**2))


def test_validate_joint_leaves_out_unreliable_statistics():
    """Diffusion_RF: the shape screen calls RCE unreliable (E² too skewed), so the joint
    verdict combines the four others and says so; heavy-tailed Z with ZMS alone: no joint verdict."""
    ds = mcref.datasets.load("Diffusion_RF")
    with pytest.warns(mcref.FewReplicatesWarning):
        tab = mcref.validate(ds.E, ds.u, n_boot=200, n_mc=200, seed=0, rule="mc")
    assert [r.name for r in tab.rows if r.shape_flag] == ["RCE"]
    assert tab.joint.stats == ("ZMS", "CC", "ENCE", "ZMSE") and tab.joint.excluded == ("RCE",)
    assert str(tab.joint.line()).endswith("; left out as unreliable: RCE")
    # the conditional rule keeps RCE in its permutation part (exact whatever the shape screen says)
    with pytest.warns(mcref.FewReplicatesWarning):
        cond = mcref.validate(ds.E, ds.u, n_boot=200, n_mc=200, seed=0)
    assert cond.joint.consistency_stats == ("RCE", "CC", "ENCE", "ZMSE") and cond.joint.scale_stats == ("ZMS",)
    assert cond.joint.excluded == () and cond["RCE"].verdict == "unreliable"
    rng = np.random.default_rng(9)
    u = rng.uniform(1, 2, 2000)
    E = u * rng.standard_t(2.2, 2000)
    with pytest.warns(mcref.FewReplicatesWarning):
        tab = mcref.validate(E, u, stats=["ZMS"], n_boot=200, n_mc=200, seed=0)
    assert tab["ZMS"].shape_flag and tab.joint is None
    assert "joint verdict: none (no statistic left to test: the shape screen calls every" in str(tab)
    assert json.loads(tab.to_json())["joint"] is None


def test_validate_permutation_d():
    """dists=("permutation",): ZMS is constant under it (p = 1, left out of the joint test);
    a consistency break is caught, a pure scale error is not (by construction)."""
    rng = np.random.default_rng(11)
    u = np.sqrt(1 / rng.gamma(3, 1 / 3, 2000))
    eps = rng.normal(size=2000)
    with pytest.warns(mcref.FewReplicatesWarning):
        brk = mcref.validate(np.where(u > np.median(u), 1.5, 1.0) * u * eps, u, n_boot=300, n_mc=500, seed=2,
                             dists=("permutation",), rule="mc")
    assert brk.dists == ("permutation",) and brk["ZMS"].p_sim["permutation"] == 1.0
    assert "ZMS" not in brk.joint.stats and brk.joint.dist == "permutation"
    assert brk.joint.verdict == "invalid"
    with pytest.warns(mcref.FewReplicatesWarning):
        scl = mcref.validate(1.5 * u * eps, u, stats=["ZMS", "ENCE"], n_boot=300, n_mc=500, seed=2,
                             dists=("permutation",), rule="mc")
    assert scl.joint.stats == ("ENCE",) and scl.joint.p > 0.05  # blind to the scale ...
    assert scl["ZMS"].verdict == "invalid"  # ... which ZMS catches by its predefined reference
    with pytest.warns(mcref.FewReplicatesWarning):
        zms = mcref.validate(1.5 * u * eps, u, stats=["ZMS"], n_boot=300, n_mc=300, seed=2, dists=("permutation",),
                             rule="mc")
    assert zms.joint is None  # nothing the permutation D can test


def test_validate_joint_does_not_depend_on_the_thread_count():
    import numba

    rng = np.random.default_rng(12)
    u = rng.uniform(0.5, 2.0, 800)
    E = u * rng.normal(size=800)
    before = numba.get_num_threads()
    out = []
    try:
        for t in sorted({1, before}):
            numba.set_num_threads(t)
            with pytest.warns(mcref.FewReplicatesWarning):
                out.append(mcref.validate(E, u, n_boot=200, n_mc=300, seed=5).joint)
    finally:
        numba.set_num_threads(before)
    assert all(j == out[0] for j in out)


# ----------------------------------------------------------------------------------------
# the conditional rule (validate's default): Šidák combination of the permutation test of
# consistency with the scale test (docs/methods.md, "Joint verdict")
# ----------------------------------------------------------------------------------------
def test_sidak_is_exact_on_independent_uniforms():
    """min of k independent uniforms has CDF 1 − (1 − t)^k, so sidak(min, k) is uniform: its
    rejection rate at level a is a, within the binomial sd; closed forms for k = 1, 2."""
    assert sidak(0.3, 1) == 0.3 and sidak(0.025, 2) == pytest.approx(1 - 0.975**2)
    assert sidak(0.0, 2) == 0.0 and sidak(1.0, 2) == 1.0
    n = 200_000
    U = np.random.default_rng(20).uniform(size=(3, n))
    for k in (2, 3):
        p = sidak(U[:k].min(axis=0), k)
        for a in (0.01, 0.05, 0.2, 0.5):
            assert abs(np.mean(p <= a) - a) < 4 * math.sqrt(a * (1 - a) / n)
        assert sps.kstest(p, "uniform").pvalue > 1e-3
    # the plain minimum is not a p-value: it rejects 1 − 0.95² = 9.75 % at 5 %
    assert np.mean(U[:2].min(axis=0) <= 0.05) == pytest.approx(0.0975, abs=4 * math.sqrt(0.1 * 0.9 / n))
    with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
        sidak(0.1, 0)
    with pytest.raises(ValueError, match="`p_min` must lie in"):
        sidak(1.5, 2)


STATS5 = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]


def conditional_joint(E, u, n_mc, seed):
    """The conditional joint verdict of one dataset, without the bootstrap: the permutation D,
    the scale simulation under the fitted t, the shape screen, conditional_joint_verdict."""
    from mcref.verdict._validate import alternative_for
    from mcref.binning import default_n_bins

    nb = default_n_bins(E.size, 30)
    s_perm, s_fit = seed.spawn(2)
    sim = mcref.simulate(STATS5, u, dists=[permutation_distribution(E / u)], E=E, n_mc=n_mc, n_bins=nb, seed=s_perm)
    est = mcref.statistics(STATS5, E, u, n_bins=nb)
    screen = mcref.shape_screen(E, u)
    return conditional_joint_verdict(sim, est, {s: alternative_for(s) for s in STATS5}, stats=STATS5,
                                     flagged=[s for s in STATS5 if screen.unreliable(s)],
                                     scale_sim=scale_simulation(STATS5, u, E, n_mc=n_mc, seed=s_fit))


def unit_t(rng, nu, size):
    return rng.standard_t(nu, size) / math.sqrt(nu / (nu - 2))


@pytest.mark.parametrize("truth", ["normal", "t3"])
def test_conditional_joint_verdict_has_size_alpha(truth):
    """Calibrated data, u² ~ IG(4, 4), M = 2000: the joint verdict rejects α of the sets, within 3
    binomial sd (150 sets: ±5.3 % at α = 0.05, ±9.8 % at 0.2). Under t(3) the shape screen leaves
    ZMS out in nearly every set and the permutation part is exact under any D; the Monte Carlo
    test under the empirical D rejected 14 % there (docs/methods.md, "Heavy tails")."""
    n, M = 150, 2000
    rng = np.random.default_rng([21, M])
    p = np.empty(n)
    for i, ss in enumerate(np.random.SeedSequence([22, M]).spawn(n)):
        u = np.sqrt(1 / rng.gamma(4, 1 / 4, M))
        eps = rng.normal(size=M) if truth == "normal" else unit_t(rng, 3, M)
        j = conditional_joint(u * eps, u, 99, ss)
        assert j.rule == "conditional" and j.consistency_stats == ("RCE", "CC", "ENCE", "ZMSE")
        p[i] = j.p
    for a in (0.05, 0.2):
        assert abs(np.mean(p <= a) - a) <= 3 * math.sqrt(a * (1 - a) / n), (a, np.mean(p <= a))


def test_conditional_joint_verdict_power():
    """It sees a scale error on normal data through ZMS (the permutation part cannot), and a
    consistency failure under t(3) through the permutation part (the screen leaves ZMS out)."""
    rng = np.random.default_rng(23)
    n = 30
    scale, cons, heavy = [], [], []
    for i, ss in enumerate(np.random.SeedSequence(24).spawn(n)):
        u = np.sqrt(1 / rng.gamma(3, 1 / 3, 500))
        j = conditional_joint(1.25 * u * rng.normal(size=500), u, 199, ss)
        scale.append(j.p <= 0.05)
        cons.append(j.p_consistency <= 0.05)
        u = np.sqrt(1 / rng.gamma(4, 1 / 4, 2000))
        g = np.sqrt(u) * math.sqrt(np.mean(u**2) / np.mean(u))  # reported u ∝ u^0.5, same mean square
        heavy.append(conditional_joint(u * unit_t(rng, 3, 2000), g, 199, ss).p <= 0.05)
    assert np.mean(scale) >= 0.9 and np.mean(cons) <= 0.2 and np.mean(heavy) >= 0.9


@pytest.fixture(scope="module")
def conditional_table():
    rng = np.random.default_rng(8)
    u = np.sqrt(1 / rng.gamma(3, 1 / 3, 1500))
    E = u * rng.normal(size=1500)
    with pytest.warns(mcref.FewReplicatesWarning):
        tab = mcref.validate(1.1 * E, u, n_boot=300, n_mc=500, seed=1)
    return E, u, tab


def test_validate_conditional_joint_is_the_sidak_of_its_parts(conditional_table):
    """Recompute both parts by brute force from an independent simulation with the same seed
    stream, then the Šidák combination."""
    E, u, tab = conditional_table
    E = 1.1 * E
    j = tab.joint
    from mcref.verdict._scale_test import scale_test

    # the scale part: the studentized scale test of ZMS, B = N_MC, on the fourth child of the seed
    nu = mcref.fit_t(E / u).nu
    assert tab.rule == "conditional" and j.rule == "conditional"
    assert j.scale_dist == f"bootstrap-t and t(fit nu={nu:.3g}), B=500"
    assert j.dist == "permutation+" + j.scale_dist and tab["ZMS"].test == "bootstrap-t"
    assert j.consistency_stats == ("RCE", "CC", "ENCE", "ZMSE") and j.scale_stats == ("ZMS",)
    names = [r.name for r in tab.rows]
    root = np.random.SeedSequence(1)
    ss_sim = root.spawn(3)[1]
    sim = mcref.simulate(names, u, dists=["normal", "t6", "empirical", permutation_distribution(E / u)], n_mc=500,
                         E=E, seed=ss_sim)
    fit = scale_test(E / u, ["ZMS"], n_boot=500, seed=root.spawn(1)[0].spawn(2)[0])
    # under the permutation D the binned rows are tested against the set's own scale: ENCE and ZMSE
    # of (E, u·c), c² = ZMS, on the same shuffles (the same stream): E* = u·c·perm(Z/c) = u·perm(Z)
    c = math.sqrt(np.mean((E / u) ** 2))
    binned = ["ENCE", "ZMSE"]
    simc = mcref.simulate(binned, u * c, dists=["normal", "t6", "empirical", permutation_distribution(E / (u * c))],
                          n_mc=500, E=E, seed=ss_sim)
    est = {s: tab[s].estimate for s in names}
    est.update({s: mcref.statistic(s, E, u * c, n_bins=tab.n_bins) for s in binned})
    from mcref.verdict._validate import alternative_for

    def part(sm, d, cover):
        X = np.array([(simc if s in binned and d == 3 else sm).samples[d][(simc if s in binned and d == 3 else sm)
                                                                          .names.index(s)] for s in cover])
        return naive_joint(X, [est[s] if d == 3 else tab[s].estimate for s in cover],
                           [alternative_for(s) for s in cover], "minp")[0]

    pc, ps = part(sim, 3, j.consistency_stats), fit.p["ZMS"]
    assert tab["ZMS"].p_test == ps and tab["ZMS"].verdict == ("valid" if ps > 0.05 else "invalid")
    assert (j.p_consistency, j.p_scale) == (pc, ps)
    assert j.p == pytest.approx(1 - (1 - min(pc, ps)) ** 2, abs=1e-15)
    assert j.verdict == ("valid" if j.p > 0.05 else "invalid")
    # the driver: smallest per-statistic p, each statistic under its part's D
    ps_row = {s: tab[s].p_sim["permutation"] if s in j.consistency_stats else tab[s].p_test for s in j.stats}
    assert j.driver_p == min(ps_row.values()) and ps_row[j.driver] == j.driver_p
    line = next(l for l in tab.wide_table().splitlines() if l.startswith("joint verdict, how:"))
    assert "Sidak combination" in line and "under the permutation D" in line and "ZMS under bootstrap-t and t(fit nu=" in line
    flat = json.loads(tab.to_json())["joint"]
    assert flat["rule"] == "conditional" and flat["p_consistency"] == pc and flat["scale_stats"] == "ZMS"


def test_validate_conditional_rule_adds_its_d():
    rng = np.random.default_rng(25)
    u = rng.uniform(0.5, 2.0, 600)
    E = u * rng.normal(size=600)
    with pytest.warns(mcref.FewReplicatesWarning):
        tab = mcref.validate(E, u, stats=["ZMS", "ENCE"], dists=["normal"], n_boot=200, n_mc=200, seed=0)
    assert tab.dists == ("normal", "permutation")  # the rule decides by the permutation D alone
    assert "dists: permutation added (the conditional rule decides by it" in tab.wide_table()
    assert tab["ENCE"].test == "permutation" and not tab["ENCE"].d_sensitive and tab["ENCE"].sensitivity == []
    with pytest.warns(mcref.FewReplicatesWarning):
        mc = mcref.validate(E, u, stats=["ZMS", "ENCE"], dists=["normal"], n_boot=200, n_mc=200, seed=0, rule="mc")
    assert mc.dists == ("normal",) and mc["ENCE"].test == "every D" and mc.joint.rule == "mc"
    # a table of ZMS alone: the scale part only; of ENCE alone: the permutation part only
    with pytest.warns(mcref.FewReplicatesWarning):
        z = mcref.validate(E, u, stats=["ZMS"], n_boot=200, n_mc=200, seed=0)
    assert z.joint.p == z.joint.p_scale and z.joint.p_consistency is None and z.joint.stats == ("ZMS",)
    with pytest.warns(mcref.FewReplicatesWarning):
        e = mcref.validate(E, u, stats=["ENCE"], n_boot=200, n_mc=200, seed=0)
    assert e.joint.p == e.joint.p_consistency and e.joint.p_scale is None


@pytest.mark.parametrize("company", ["alone", "features", "groups"])
def test_permutation_d_alone_gives_the_default_verdicts_bit_for_bit(company):
    """The comparison D (normal, t(6), empirical) decide nothing under the conditional rule: with
    ``dists=("permutation",)`` every row's verdict, test, p, n_test, interval and the joint verdict
    are those of the four default D, bit for bit (the streams are keyed by D, so leaving D out
    moves no other D's draws), in the sequential default and in the fixed test, with a feature and
    with groups; the published rule's column reads "-" (no generative D to read)."""
    rng = np.random.default_rng(7)
    u = rng.lognormal(0.0, 0.5, 1500)
    E = u * rng.standard_t(5, 1500) * np.sqrt(3 / 5) * (1 + 0.3 * (u > np.median(u)))  # ENCE near α
    x = {"x": rng.normal(size=1500) + 0.2 * E} if company == "features" else None
    groups = np.repeat(np.arange(300), 5) if company == "groups" else None
    for n_mc in (None, 1000):
        kw = dict(x=x, groups=groups, n_boot=1000, n_mc=n_mc, seed=4, progress=False)
        full = mcref.validate(E, u, **kw)
        alone = mcref.validate(E, u, dists=("permutation",), **kw)
        assert full.dists == ("normal", "t(6)", "empirical", "permutation") and alone.dists == ("permutation",)
        assert [r.name for r in full.rows] == [r.name for r in alone.rows]
        for a, b in zip(full.rows, alone.rows):
            for f in ("estimate", "low", "high", "verdict", "test", "p_test", "n_test", "shape_flag", "finding"):
                va, vb = getattr(a, f), getattr(b, f)
                assert va == vb or (va != va and vb != vb), (a.name, f, va, vb)
            assert a.p_sim["permutation"] == b.p_sim["permutation"]
            assert set(b.p_sim) == {"permutation"}
        for f in ("p", "verdict", "stats", "driver", "driver_p", "p_consistency", "p_scale"):
            assert getattr(full.joint, f) == getattr(alone.joint, f), f
        assert not any("added" in n for n in alone.notes)
        assert all(r.verdict_paper == "-" for r in alone.rows)
        assert any(r.verdict_paper != "-" for r in full.rows)


def _permutations(n: int, n_draws: int, seed: int, bits: int = 0) -> np.ndarray:
    """``n_draws`` shuffles of 0, …, n − 1 by the in-kernel shuffle: :func:`permute_into`
    (``bits`` = 0) or :func:`permute_blocked` with 2**bits buckets."""
    from mcref.kernels.rng import permute_blocked, permute_into, seed_state

    st = seed_state(np.random.SeedSequence(seed))
    src = np.arange(float(n))
    out = np.empty((n_draws, n))
    lab, cnt = np.empty(n, dtype=np.uint8), np.empty(2 << max(bits, 1), dtype=np.int64)
    for k in range(n_draws):
        if bits:
            permute_blocked(st, src, out[k], lab, cnt, bits)
        else:
            permute_into(st, src, out[k])
    return out


@pytest.mark.parametrize("bits", [0, 1, 2, 8])
def test_kernel_permutations_are_uniform(bits):
    """The in-kernel shuffles of the permutation D (inside-out Fisher–Yates, and by buckets with
    2, 4 or 256 buckets: several items per bucket, and empty buckets): each of the 4! = 24 orders
    of 4 items comes with probability 1/24 (χ² goodness of fit on 48 000 shuffles), and in
    20 000 shuffles of 50 items the first item lands in every position with probability 1/50
    (χ², 49 df)."""
    from scipy import stats as st

    x = _permutations(4, 48_000, seed=1, bits=bits)
    assert np.all(np.sort(x, axis=1) == np.arange(4.0))
    code = (x @ np.array([64.0, 16.0, 4.0, 1.0])).astype(int)
    counts = np.unique(code, return_counts=True)[1]
    assert counts.size == 24
    assert st.chisquare(counts).pvalue > 1e-4
    y = _permutations(50, 20_000, seed=2, bits=bits)
    assert np.all(np.sort(y, axis=1) == np.arange(50.0))
    pos = np.argmax(y == 0.0, axis=1)
    assert st.chisquare(np.bincount(pos, minlength=50)).pvalue > 1e-4
    # consecutive shuffles are independent: the pair (position in draw k, in draw k + 1) is uniform on 50²/25 cells
    pair = (pos[:-1] // 10) * 5 + pos[1:] // 10
    assert st.chisquare(np.bincount(pair, minlength=25)).pvalue > 1e-4
    # two items' relative order and distance: item 1 follows item 0 in half the shuffles
    after = np.argmax(y == 1.0, axis=1) > pos
    assert abs(after.mean() - 0.5) < 4 * math.sqrt(0.25 / after.size)


def test_permute_any_is_the_shuffle_of_its_size():
    """Below BLOCKED_MIN values permute_any is permute_into, from there on permute_blocked with
    2**BUCKET_BITS buckets (the same draws), and the large shuffle is a permutation whose first
    item lands in each fifth of the positions with probability 1/5."""
    from scipy import stats as st

    from mcref.kernels.rng import (BLOCKED_MIN, BUCKET_BITS, permute_any, permute_blocked, permute_into,
                                   permute_scratch, seed_state)

    for n in (1000, BLOCKED_MIN):
        src = np.arange(float(n))
        a, b = np.empty(n), np.empty(n)
        s1 = seed_state(np.random.SeedSequence(7))
        s2 = s1.copy()
        lab, cnt = permute_scratch(n)
        assert lab.size == (n if n >= BLOCKED_MIN else 0)
        permute_any(s1, src, a, lab, cnt)
        if n < BLOCKED_MIN:
            permute_into(s2, src, b)
        else:
            permute_blocked(s2, src, b, np.empty(n, dtype=np.uint8), np.empty(2 << BUCKET_BITS, dtype=np.int64),
                            BUCKET_BITS)
        assert np.array_equal(a, b) and np.array_equal(s1, s2) and np.array_equal(np.sort(a), src)
    n = BLOCKED_MIN
    src = np.arange(float(n))
    st_ = seed_state(np.random.SeedSequence(8))
    lab, cnt = permute_scratch(n)
    out = np.empty(n)
    where = []
    for _ in range(100):
        permute_any(st_, src, out, lab, cnt)
        where.append(int(np.argmax(out == 0.0)) * 5 // n)
    assert st.chisquare(np.bincount(where, minlength=5)).pvalue > 1e-4


def test_permutation_d_p_value_is_exact_on_a_tiny_set():
    """With M = 4 the permutation distribution of CC is the 24 orders of Z: the simulated CC
    samples take only those values, with the frequencies of the exact enumeration (χ²)."""
    import itertools

    from scipy import stats as st
    from scipy.stats import spearmanr

    u = np.array([1.0, 2.0, 3.0, 4.0])
    z = np.array([0.3, -1.1, 2.0, 0.7])
    exact = np.array([spearmanr(np.abs(u * np.array(p)), u)[0] for p in itertools.permutations(z)])
    sim = mcref.simulate(["CC"], u, dists=[permutation_distribution(z)], E=u * z, n_mc=24_000, seed=3)
    vals, counts = np.unique(np.round(sim.samples[0, 0], 12), return_counts=True)
    ev, ec = np.unique(np.round(exact, 12), return_counts=True)
    np.testing.assert_array_equal(vals, ev)
    assert st.chisquare(counts, ec / 24 * 24_000).pvalue > 1e-4
