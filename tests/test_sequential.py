"""Sequential Monte Carlo tests (mcref.verdict._sequential; docs/methods.md, "Sequential Monte Carlo tests")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from mcref.verdict._sequential import SequentialTest, csm_stops


def test_csm_boundary_is_robbins_confidence_sequence():
    """The stopping rule is (n + 1)·Binom(S_n; n, α) ≤ ε, checked against scipy's pmf."""
    rng = np.random.default_rng(0)
    n = rng.integers(1, 5000, 400)
    s = (rng.random(400) * (n + 1)).astype(int)
    for alpha, eps in ((0.05, 1e-3), (0.025, 5e-4), (0.2, 0.05)):
        direct = (n + 1) * sps.binom.pmf(s, n, alpha) <= eps
        np.testing.assert_array_equal(csm_stops(n, s, alpha, eps), direct)


def _run(p: float, alternative: str, alpha: float, eps: float, n_max: int, rng, batch: int = 32):
    """One sequential test on a Bernoulli stream: θ_k ≥ θ̂ with probability p (and, for the
    two-sided test, θ_k ≤ θ̂ otherwise)."""
    t = SequentialTest(alternative, alpha, n_max, eps)
    while not t.decided:
        ge = int((rng.random(batch) < p).sum())
        t.update(ge, batch - ge, batch)
    return t


@pytest.mark.parametrize("p", [0.03, 0.045, 0.055, 0.08])
def test_resampling_risk_is_bounded_near_alpha(p):
    """Where p is near α (the hardest case), an early decision is wrong (p ≤ α decided when
    p > α, or the reverse) with probability at most ε: measured over 300 streams with ε = 0.05
    (a large ε, so that the bound can be checked with a few hundred streams), the wrong fraction
    is below ε + 3 binomial standard errors."""
    rng = np.random.default_rng(int(p * 1000))
    alpha, eps, trials = 0.05, 0.05, 300
    wrong = 0
    for _ in range(trials):
        t = _run(p, "greater", alpha, eps, 10**7, rng)
        assert t.early
        wrong += t.reject != (p <= alpha)
    assert wrong / trials <= eps + 3 * math.sqrt(eps * (1 - eps) / trials)


def test_far_from_alpha_stops_early():
    """p = 0.5 stops after the first batch; p = 0.001 well before the cap; both decide right."""
    rng = np.random.default_rng(1)
    t = _run(0.5, "greater", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is False and t.n == 32
    t = _run(0.001, "greater", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is True and t.n < 500
    t = _run(0.5, "two-sided", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is False and t.n <= 64


def test_the_cap_takes_the_fixed_n_decision():
    """At p = α the CSM seldom stops; at the cap the decision is the fixed-N Monte Carlo test,
    (1 + S)/(1 + N) ≤ α, on the counts of exactly N repeats."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        t = _run(0.05, "greater", 0.05, 1e-3, 640, rng)
        if not t.early:
            assert t.n == 640
            assert t.reject == ((1 + t.n_ge) / 641 <= 0.05)
            assert t.p == (1 + t.n_ge) / 641 and t.se == pytest.approx(math.sqrt(t.p * (1 - t.p) / 640))


def test_two_sided_uses_both_sides_at_half_alpha():
    """A two-sided test rejects when one side is surely below α/2 (p_≤ small here), and its p is
    twice the smaller side."""
    rng = np.random.default_rng(3)
    t = _run(0.995, "two-sided", 0.05, 1e-3, 10**6, rng)  # θ_k ≥ θ̂ nearly always: θ̂ in the lower tail
    assert t.reject is True and t.p == min(1.0, 2 * (1 + t.n_le) / (1 + t.n))
    t = SequentialTest("two-sided", 0.05, 100)
    t.update(0, 0, 0)
    assert not t.decided


def test_a_decided_test_keeps_its_counts():
    t = SequentialTest("greater", 0.05, 10_000)
    t.update(16, 16, 32)
    assert t.decided and t.reject is False
    t.update(0, 32, 32)
    assert (t.n, t.n_ge) == (32, 16)


def test_settle_stops_without_a_sequential_decision():
    """A test whose row's verdict is fixed elsewhere (the shape screen) is settled on the repeats run:
    decided, marked moot, ``reject`` the Monte Carlo decision of those repeats, not early; a
    decided test is left as it is."""
    t = SequentialTest("two-sided", 0.05, 2000)
    t.settle(1, 63, 64)  # p = 2·(1 + 1)/65 = 0.0615 > α
    assert t.decided and t.moot and not t.early and t.reject is False and t.n == 64
    assert t.p == pytest.approx(4 / 65)
    t.update(0, 64, 64)  # later batches are ignored
    assert t.n == 64
    u = SequentialTest("greater", 0.05, 2000)
    u.settle(0, 64, 64)
    assert u.reject is True and u.p == 1 / 65
    d = SequentialTest("greater", 0.05, 10_000)
    d.update(16, 16, 32)  # decided by the CSM
    d.settle(0, 64, 64)
    assert not d.moot and d.n == 32 and d.reject is False
    assert SequentialTest("two-sided", 0.05, 100).counts_of_p(4 / 65, 64) == (1, 1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        SequentialTest("both", 0.05, 100)
    with pytest.raises(ValueError, match="`alpha` and `eps` must lie in"):
        SequentialTest("greater", 1.5, 100)


# ------------------------------------------------------------------ validate's rounds (mcref.verdict._rounds)

import warnings  # noqa: E402

import mcref  # noqa: E402
from mcref.verdict._rounds import round_ends  # noqa: E402


def _data(m: int, kind: str, seed: int):
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(4.0, 0.25, m))
    e = rng.standard_normal(m)
    if kind == "inconsistent":  # |E| falls as u grows: CC, ENCE, ZMSE far beyond every shuffle
        return e / u, u
    return u * e, u


def _validate(E, u, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mcref.validate(E, u, stats=["ZMS", "RCE", "CC", "ENCE", "ZMSE"], n_boot=200,
                              dists=("permutation",), **kw)


def test_round_ends_double_up_to_the_cap():
    """Rounds end at 64, 128, 256, … below the cap, then at the cap; whole chunks of every kernel."""
    assert round_ends(2000) == [64, 128, 256, 512, 1024, 2000]
    assert round_ends(64) == [64] and round_ends(65) == [64, 65]
    assert all(e % 64 == 0 for e in round_ends(10_000)[:-1])


def test_observe_p_recovers_the_counts_of_a_p_value():
    """observe_p inverts p = (1 + S)/(1 + n) (two-sided: twice the smaller side) to the count S."""
    for alt, p, n, s in (("greater", 13 / 65, 64, 12), ("less", 1 / 129, 128, 0), ("two-sided", 2 * 5 / 257, 256, 4)):
        t = SequentialTest(alt, 0.05, 10_000)
        t.observe_p(p, n)
        assert t.n == n and min(t.n_ge, t.n_le) == s and math.isclose(t.p, p)


def test_simulation_rounds_are_the_first_repeats_of_the_full_run():
    """A round runs only its own repeats, bit for bit those of the full run, whatever company of
    statistics and D runs beside it (the chunks' streams depend on their index only)."""
    from mcref.core._prepared import prepare_for
    from mcref.generative import get_distribution
    from mcref.kernels.rng import fresh
    from mcref.reference import simulate_prepared
    from mcref.stats import info

    E, u = _data(500, "calibrated", 1)
    infos = [info(s) for s in ("ZMS", "RCE", "CC", "ENCE", "ZMSE")]
    prep = prepare_for(infos, E, u, n_bins=10, min_count=30, shrink=False, binning="equal", log=None)
    dists = [get_distribution(d, Z=E / u) for d in ("normal", "t6", "empirical", "permutation")]
    ss = np.random.SeedSequence(5)
    full = simulate_prepared(infos, prep, dists, n_mc=200, seed=fresh(ss))
    head = simulate_prepared(infos, prep, dists, n_mc=200, seed=fresh(ss), repeats=(0, 64))
    tail = simulate_prepared(infos[2:], prep, dists[3:], n_mc=200, seed=fresh(ss), repeats=(64, 200))
    np.testing.assert_array_equal(full.samples[:, :, :64], head.samples)
    np.testing.assert_array_equal(full.samples[3, 2:, 64:], tail.samples[0])
    # every repeat owns its streams: a round may start inside a block of CHUNK repeats
    mid = simulate_prepared(infos, prep, dists, n_mc=200, seed=fresh(ss), repeats=(10, 64))
    np.testing.assert_array_equal(full.samples[:, :, 10:64], mid.samples)
    for bad in ((64, 64), (0, 201), (-1, 10)):
        with pytest.raises(ValueError, match="a range within 200 repeats"):
            simulate_prepared(infos, prep, dists, n_mc=200, seed=fresh(ss), repeats=bad)


def test_a_sequential_row_is_the_fixed_test_of_its_own_repeats(monkeypatch):
    """Each row's p is the fixed-N_MC test's p of the repeats it was decided on: validate with
    n_mc = that row's n_test (fixed) gives the same p, bit for bit (permutation rows and the
    bootstrap-t scale rows alike); the verdicts equal those of the fixed test at the cap."""
    import mcref.verdict._validate as V

    monkeypatch.setattr(V, "MIN_VERDICT_REPLICATES_HARD", 1)  # the fixed test of a round's 64 repeats
    E, u = _data(1500, "calibrated", 2)
    seq = _validate(E, u, seed=7)
    assert seq.rounds is not None and seq.n_mc == mcref.default_n_mc(1500)
    fixed = _validate(E, u, seed=7, n_mc=seq.n_mc)
    assert fixed.rounds is None
    for r in seq.rows:
        assert r.n_test is not None and 64 <= r.n_test <= seq.n_mc
        own = _validate(E, u, seed=7, n_mc=r.n_test, sequential=False)[r.name]
        assert r.p_test == own.p_test, r.name
        assert r.verdict == fixed[r.name].verdict, r.name


def test_far_from_alpha_the_tests_stop_early_and_agree_with_the_fixed_test():
    """Data whose Z falls with u: the pairing rows are at the Monte Carlo floor and stop long before
    the cap (the CSM with S = 0 stops once (n + 1)·0.95ⁿ ≤ 10⁻³, n ≥ 230 for a one-sided row);
    their verdicts and the joint's equal the fixed test's."""
    E, u = _data(2000, "inconsistent", 3)
    seq = _validate(E, u, seed=1)
    fixed = _validate(E, u, seed=1, n_mc=seq.n_mc)
    for name in ("CC", "ENCE", "ZMSE"):
        r = seq[name]
        assert r.verdict == fixed[name].verdict == "invalid"
        assert r.n_test < seq.n_mc and r.p_test == 1.0 / (r.n_test + 1) * (2 if name == "CC" else 1)
    assert seq.joint.verdict == fixed.joint.verdict == "invalid"
    assert seq.rounds.n_perm < seq.n_mc
    assert "sequential Monte Carlo tests" in str(seq) and "< 0.00" in str(seq)


def test_sequential_is_the_default_of_the_conditional_rule_only():
    """No n_mc: sequential (conditional rule); n_mc given, rule='mc' or 'paper': the fixed test;
    sequential=True with another rule is refused with the reason."""
    E, u = _data(600, "calibrated", 4)
    assert _validate(E, u, seed=0).rounds is not None
    assert _validate(E, u, seed=0, n_mc=300).rounds is None
    assert _validate(E, u, seed=0, rule="mc", n_mc=300).rounds is None
    with pytest.raises(ValueError, match="sequential=True"):
        _validate(E, u, seed=0, rule="paper", sequential=True)


def test_large_m_defaults_drop_the_comparison_d_and_spend_less_bootstrap(monkeypatch):
    """Beyond COMPARISON_MAX_M the default dists is the permutation D alone (a note says so and the
    paper column reads "-"); default_n_boot spends 10⁹ element·replicates, 5000 to 1000."""
    import mcref.verdict._validate as V

    assert [mcref.default_n_boot(m) for m in (1000, 200_000, 400_000, 10**6, 10**8)] == [5000, 5000, 2500, 1000,
                                                                                         1000]
    monkeypatch.setattr(V, "COMPARISON_MAX_M", 500)
    E, u = _data(600, "calibrated", 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = mcref.validate(E, u, stats=["ZMS", "CC"], n_boot=200, seed=0)
        given = mcref.validate(E, u, stats=["ZMS", "CC"], n_boot=200, seed=0, dists=("normal", "permutation"))
    assert tab.dists == ("permutation",) and all(r.verdict_paper == "-" for r in tab.rows)
    assert any("not simulated by default" in n for n in tab.notes)
    assert given.dists == ("normal", "permutation")  # given: kept (the rule's permutation D is among them)


def test_sequential_rows_with_features_and_groups_are_their_own_fixed_tests(monkeypatch):
    """In company (a feature and groups), every row's sequential p is still the fixed test of its
    own n_test repeats computed in the same company, bit for bit (the rounds do not mix rows)."""
    import mcref.verdict._validate as V

    monkeypatch.setattr(V, "MIN_VERDICT_REPLICATES_HARD", 1)
    E, u = _data(1200, "calibrated", 9)
    rng = np.random.default_rng(9)
    kw = dict(x={"f": rng.uniform(size=1200)}, groups=np.repeat(np.arange(120), 10), seed=3)
    seq = _validate(E, u, **kw)
    for r in seq.rows:
        if r.n_test is not None:
            own = _validate(E, u, n_mc=r.n_test, sequential=False, **kw)[r.name]
            assert r.p_test == own.p_test, r.name


def test_scale_rounds_run_only_the_undecided_statistics():
    """Once RCE's row is decided (p far above α: at the first round), later rounds run the Z
    statistics alone; the final table keeps RCE's p of its decision and ZMS's of the last round."""
    from mcref.verdict._rounds import scale_rounds
    from mcref.verdict._scale_test import ScaleTests

    calls = []

    def run(b, names):
        calls.append((b, set(names)))
        # ZMS's p sits at α (its test runs to the cap); RCE's at 0.9 (decided at once)
        p = {n: {"ZMS": 0.05, "RCE": 0.9}[n] for n in names}
        return ScaleTests(p=p, unreliable={}, scale=None, label=f"B={b}")

    fit, tests, _ = scale_rounds(run, n_max=1024, rows=["ZMS", "RCE"], joint=None, joint_alpha=0.05, alpha=0.05)
    assert calls[0] == (64, {"ZMS", "RCE"})
    assert all(names == {"ZMS"} for _, names in calls[1:]) and calls[-1][0] == 1024
    assert tests["RCE"].n == 64 and tests["ZMS"].n == 1024
    assert fit.p == {"ZMS": 0.05, "RCE": 0.9} and fit.label == "B=1024"


def test_a_row_does_not_depend_on_its_company_under_the_sequential_rule():
    """The rounds run until every test beside a row is decided too, so the permutation D may run 64
    repeats in one company and 8192 in another (here: a feature whose ZMSE|f sits near α). A row's
    columns still do not depend on it, bit for bit: its verdict-relevant ones (estimate, interval, p,
    n_test, verdict) and its informational permutation columns (ref, u_ref, p[permutation], ζ_Sim,
    ζ_Sim2), which come from its own repeats: those its permutation test was decided on (CC: n_test),
    or the first round's 64 for a row decided by another test (RCE: its bootstrap-t)."""
    rng = np.random.default_rng([38, 4])
    m = 600
    u = np.sqrt(1.0 / rng.gamma(4.0, 0.25, m))
    x = rng.normal(size=m)
    E = u * rng.standard_normal(m) * np.where(x > 0, 1.12, 0.88)
    kw = dict(n_boot=200, dists=("permutation",), seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = mcref.validate(E, u, stats=["RCE", "CC"], **kw)
        big = mcref.validate(E, u, stats=["RCE", "CC", "ZMSE"], x={"f": x}, **kw)
        alone = mcref.validate(E, u, stats=["CC"], **kw)
    assert small.rounds.n_perm == 64 and big.rounds.n_perm > 1000  # the companies ran different repeats
    for name in ("RCE", "CC"):
        assert repr(small[name]) == repr(big[name]), name
    assert repr(alone["CC"]) == repr(big["CC"])
    cc, rce = big["CC"], big["RCE"]
    assert cc.sim["permutation"].n_mc == cc.n_test == big.rounds.n_info("CC")
    assert rce.sim["permutation"].n_mc == big.rounds.n_info("RCE") == 64 and rce.test == "bootstrap-t"


def test_a_row_the_screen_flags_stops_after_the_round_that_flags_it():
    """RCE's row is unreliable whenever the shape screen flags it, whatever its bootstrap-t p: its
    test is settled on the first round (moot) and its stream runs no further replicates, even while
    ZMS's test beside it runs on. Before, a flagged RCE near α ran its replicates to the cap
    (2000 of them at 10⁷ rows: a third of the worst case's time)."""
    from mcref.verdict._rounds import scale_rounds
    from mcref.verdict._scale_test import ScaleTests

    calls = []

    def run(b, names):
        calls.append((b, set(names)))
        p = {n: 0.05 for n in names}  # both at α: without the screen both would run to the cap
        return ScaleTests(p=p, unreliable={"RCE": True}, scale=None, label=f"B={b}")

    _, tests, _ = scale_rounds(run, n_max=1024, rows=["ZMS", "RCE"], joint=None, joint_alpha=0.05, alpha=0.05,
                               moot=lambda fit: {n for n, bad in fit.unreliable.items() if bad})
    assert calls[0] == (64, {"ZMS", "RCE"}) and all(names == {"ZMS"} for _, names in calls[1:])
    assert tests["RCE"].moot and tests["RCE"].n == 64 and tests["ZMS"].n == 1024 and not tests["ZMS"].moot

    # end to end: lognormal u, errors 3 % too large: E² heavy enough for the screen to flag RCE
    rng = np.random.default_rng([3000, 5, 0])
    m = 3000
    u = rng.lognormal(0.0, 0.5, m)
    E = math.sqrt(1.06) * u * rng.standard_normal(m) * (1 + 0.05 * rng.standard_normal(m))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = mcref.validate(E, u, n_boot=300, seed=0)
    rce = tab["RCE"]
    assert rce.verdict == "unreliable" and rce.shape_flag and rce.n_test == 64
    assert tab.rounds.tests["RCE"].moot and tab.rounds.n_scale > 64  # ZMS's test ran on
    assert "1 not run past the first round (the shape screen makes their rows unreliable whatever their p)" in tab.rounds.note()


def _perm_setup():
    """ZMS, CC, ENCE, ZMSE on 500 calibrated points, the permutation D, a seed and its full run of
    512 repeats (the rows' samples, K × 512)."""
    from mcref.core._prepared import prepare_for
    from mcref.generative import get_distribution
    from mcref.kernels.rng import fresh
    from mcref.reference import simulate_prepared
    from mcref.stats import info

    E, u = _data(500, "calibrated", 1)
    infos = [info(s) for s in ("ZMS", "CC", "ENCE", "ZMSE")]
    prep = prepare_for(infos, E, u, n_bins=10, min_count=30, shrink=False, binning="equal", log=None)
    perm = get_distribution("permutation", Z=prep.z)
    ss = np.random.SeedSequence(5)
    full = simulate_prepared(infos, prep, [perm], n_mc=512, seed=fresh(ss)).samples[0]
    return infos, prep, perm, ss, full


def test_later_permutation_rounds_simulate_only_the_rows_still_read(monkeypatch):
    """After the first round the permutation D simulates only the rows an undecided test reads: here
    ENCE (far from α) and ZMSE (p = 1) are decided early and CC (its value at its reference's 2.5 %
    point: p near α) runs on alone. The decided rows' repeats past their decision are NaN, and every
    repeat that was simulated equals the full run's, bit for bit."""
    import mcref.reference as R
    from mcref.verdict._rounds import permutation_rounds

    infos, prep, perm, ss, full = _perm_setup()
    tested = {"CC": (1, float(np.quantile(full[1], 0.025)), "two-sided"),
              "ENCE": (2, float(full[2].max()) * 2, "greater"), "ZMSE": (3, float(full[3].min()) / 2, "greater")}
    seen = []
    real = R.simulate_prepared

    def spy(infos, *a, **k):
        seen.append((k["repeats"], [i.name for i in infos]))
        return real(infos, *a, **k)

    monkeypatch.setattr(R, "simulate_prepared", spy)
    samples, tests = permutation_rounds(infos, prep, perm, n_mc=512, seed=ss, tested=tested, joint=None,
                                        joint_alpha=0.05, alpha=0.05)
    assert tests["ZMSE"].n == 64 and tests["ENCE"].n == 256 and tests["CC"].n == 512
    assert seen[0] == ((0, 64), ["ZMS", "CC", "ENCE", "ZMSE"])
    assert seen[1:] == [((64, 128), ["CC", "ENCE"]), ((128, 256), ["CC", "ENCE"]), ((256, 512), ["CC"])]
    for k, n in ((0, 64), (1, 512), (2, 256), (3, 64)):
        np.testing.assert_array_equal(samples[k, :n], full[k, :n])
        assert np.isnan(samples[k, n:]).all()


def test_a_moot_pairing_row_stops_but_the_joint_still_reads_it():
    """The two changes together: ENCE is moot (flagged) and its value sits near α, CC and ZMSE are
    far from it. ENCE's own test is settled on the first round, but the joint pairing part, still
    undecided, keeps simulating ENCE's repeats: every repeat simulated equals the full run's, bit
    for bit, and the joint's p is the joint test of those full-run repeats."""
    from mcref.verdict._joint import joint_test
    from mcref.verdict._rounds import permutation_rounds

    infos, prep, perm, ss, full = _perm_setup()
    values = [float(np.quantile(full[1], 0.5)), float(np.quantile(full[2], 0.97)), float(np.quantile(full[3], 0.5))]
    alts = ["two-sided", "greater", "greater"]
    tested = {"CC": (1, values[0], alts[0]), "ENCE": (2, values[1], alts[1]), "ZMSE": (3, values[2], alts[2])}
    samples, tests = permutation_rounds(infos, prep, perm, n_mc=512, seed=ss, tested=tested,
                                        joint=([1, 2, 3], values, alts), joint_alpha=0.05, alpha=0.05,
                                        moot={"ENCE"})
    assert tests["ENCE"].moot and tests["ENCE"].n == 64 and not tests["CC"].moot
    jt = tests["joint: pairing"]
    assert jt.n > 64  # the joint ran on past ENCE's settlement
    np.testing.assert_array_equal(samples[2, :jt.n], full[2, :jt.n])
    for name in ("CC", "ZMSE"):
        k, n = tested[name][0], tests[name].n
        np.testing.assert_array_equal(samples[k, :n], full[k, :n])
    expect = joint_test(full[[1, 2, 3], :jt.n], values, alts).p
    ref = SequentialTest("greater", 0.05, 512)
    ref.observe_p(expect, jt.n)
    assert (jt.n_ge, jt.n_le) == (ref.n_ge, ref.n_le)


def test_a_moot_scale_row_with_groups_leaves_its_company_unchanged():
    """With groups= (clustered scale tests, unit permutations) and a flagged RCE: RCE settles on the
    first round, and the ZMS and CC rows are bit for bit those validated without RCE beside them."""
    rng = np.random.default_rng([3000, 5, 0])
    m = 3000
    u = rng.lognormal(0.0, 0.5, m)
    E = math.sqrt(1.06) * u * rng.standard_normal(m) * (1 + 0.05 * rng.standard_normal(m))
    groups = np.repeat(np.arange(300), 10)
    kw = dict(n_boot=300, seed=0, groups=groups, dists=("permutation",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = mcref.validate(E, u, stats=["ZMS", "RCE", "CC"], **kw)
        alone = mcref.validate(E, u, stats=["ZMS", "CC"], **kw)
    rce = both["RCE"]
    assert rce.verdict == "unreliable" and rce.n_test == 64 and both.rounds.tests["RCE"].moot
    for name in ("ZMS", "CC"):
        assert repr(both[name]) == repr(alone[name]), name
