"""Validation workflow: every branch of the flowchart on hand-made ζ, and end-to-end tables."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mcref
import mcref.core._warnings
from mcref.verdict._validate import verdict_for
from mcref.resampling._zeta import zeta


@pytest.mark.parametrize(
    "kw, want",
    [
        # shape screen first
        (dict(zeta_bs=0.2, zeta_sim={"normal": 0.1}, d_sensitive=False, shape_flag=True), "unreliable"),
        # predefined reference: ζ_BS decides
        (dict(zeta_bs=0.99, zeta_sim={"normal": 5.0}, d_sensitive=True, shape_flag=False), "valid"),
        (dict(zeta_bs=-1.01, zeta_sim={"normal": 0.0}, d_sensitive=False, shape_flag=False), "invalid"),
        # simulated reference, all D agree
        (dict(zeta_bs=None, zeta_sim={"normal": 0.5, "t(6)": -0.9}, d_sensitive=True, shape_flag=False), "valid"),
        (dict(zeta_bs=None, zeta_sim={"normal": 1.5, "t(6)": 3.0}, d_sensitive=True, shape_flag=False), "invalid"),
        # D disagree and D-sensitive: not testable
        (dict(zeta_bs=None, zeta_sim={"normal": 1.5, "t(6)": 0.7}, d_sensitive=True, shape_flag=False),
         "not testable"),
        # D disagree but not D-sensitive (MC noise at the boundary): the first D decides
        (dict(zeta_bs=None, zeta_sim={"normal": 1.01, "t(6)": 0.99}, d_sensitive=False, shape_flag=False),
         "invalid"),
        (dict(zeta_bs=None, zeta_sim={"normal": 0.99, "t(6)": 1.01}, d_sensitive=False, shape_flag=False), "valid"),
    ],
)
def test_verdict_branches(kw, want):
    assert verdict_for(**kw) == want


def test_table_on_calibrated_data_is_consistent_with_its_parts():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 3000)
    E = u * rng.normal(size=3000)
    import warnings

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        # ENCE/ZMSE of well-calibrated data: (nearly) every resample lies above θ̂; when all
        # do, BCa is undefined and the percentile interval is used, with a warning that says so
        tab = mcref.validate(E, u, n_boot=1000, n_mc=1000, seed=1)
    degenerate = [str(w.message) for w in rec if issubclass(w.category, mcref.DegenerateBootstrapWarning)]
    for name in ("ENCE", "ZMSE"):
        assert (tab[name].interval_method == "percentile") == any(name in m for m in degenerate), name
        assert tab[name].bias > 0  # biased upwards at finite M
    assert [r.name for r in tab.rows] == ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    for r in tab.rows:
        assert r.low <= r.high
        if r.reference is not None:
            assert r.zeta_bs == zeta(r.estimate, r.reference, r.low, r.high)
        for d, ref in r.sim.items():
            assert r.zeta_sim[d] == zeta(r.estimate, ref.mean, r.low, r.high, u_ref=ref.se)
    # ZMS of calibrated normal data: predefined reference 1 inside the interval
    assert tab["ZMS"].verdict == "valid" and abs(tab["ZMS"].zeta_bs) <= 1
    # same seed: same table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        tab2 = mcref.validate(E, u, n_boot=1000, n_mc=1000, seed=1)
    assert tab.to_json() == tab2.to_json()


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small n_boot/n_mc keep the test fast; the warning is tested in test_newuser
def test_miscalibrated_data_is_invalid():
    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2.0, 3000)
    E = 2.0 * u * rng.normal(size=3000)  # u underestimated twofold
    tab = mcref.validate(E, u, stats=["ZMS", "RCE"], n_boot=1000, n_mc=500, seed=2)
    assert tab["ZMS"].verdict == "invalid" and tab["RCE"].verdict == "invalid"
    # shuffled u: no adaptivity, CC far below its simulated reference
    E = u * rng.normal(size=3000)
    tab = mcref.validate(E, rng.permutation(u), stats=["CC"], n_boot=1000, n_mc=500, seed=3)
    assert tab["CC"].verdict == "invalid"


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small n_boot/n_mc keep the test fast; the warning is tested in test_newuser
def test_outputs_render():
    ds = mcref.datasets.load("Diffusion_RF")
    tab = mcref.validate(ds.E, ds.u, n_boot=300, n_mc=300, seed=0, name=ds.name)
    text = str(tab)
    assert "Diffusion_RF" in text and "verdict" in text and "ZMSE" in text
    doc = json.loads(tab.to_json())
    assert doc["M"] == ds.M and len(doc["rows"]) == 5
    csv = tab.to_csv().splitlines()
    assert csv[0].startswith("dataset,seed,stat,estimate") and len(csv) == 6
    df = tab.to_frame()
    assert list(df.index) == ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    assert "zeta_Sim_t(6)" in df.columns
    r = tab["CC"]
    assert df.loc["CC", "mc_ratio_normal"] == pytest.approx(2 * r.sim["normal"].se / (0.5 * (r.high - r.low)))


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small n_boot/n_mc keep the test fast; the warning is tested in test_newuser
def test_homoscedastic_data_validates():
    """Constant u: the average statistics validate (shape screen of u² = 0); the binned ones
    are not testable (any split of equal u into bins is arbitrary), with the reason."""
    rng = np.random.default_rng(2)
    u = np.full(1000, 0.7)
    E = u * rng.normal(size=1000)
    tab = mcref.validate(E, u, stats=["ZMS", "RCE"], n_boot=300, n_mc=300, seed=0)
    assert tab.shape.beta_u2 == 0.0
    tab = mcref.validate(E, u, stats=["ZMS", "ENCE"], n_boot=300, n_mc=300, seed=0)
    assert tab["ENCE"].verdict == "not testable" and "all u are equal" in tab["ENCE"].reason
    assert tab.joint.stats == ("ZMS",)


@pytest.mark.parametrize(
    "kw, match",
    [(dict(n_boot=0), "n_boot"), (dict(n_mc=1), "n_mc"), (dict(dists=[]), "dists"),
     (dict(stats=["XYZ"]), "unknown statistic"), (dict(k_sensitivity=0), "k_sensitivity"),
     (dict(dists=["t1"]), "ν > 2")],
)
def test_bad_input(kw, match):
    u = np.linspace(1, 2, 2000)
    with pytest.raises(ValueError, match=match):
        mcref.validate(u * 0.5, u, **{"n_boot": 10, "n_mc": 10, **kw})


@pytest.mark.parametrize(
    "kw, want",
    [
        (dict(zeta_bs=0.3, p_sim={"normal": 0.001}, shape_flag=True), "unreliable"),
        (dict(zeta_bs=1.2, p_sim={"normal": 0.9}, shape_flag=False), "invalid"),  # predefined: ζ_BS decides
        (dict(zeta_bs=None, p_sim={"normal": 0.2, "t(6)": 0.6}, shape_flag=False), "valid"),
        (dict(zeta_bs=None, p_sim={"normal": 0.01, "t(6)": 0.04}, shape_flag=False), "invalid"),
        (dict(zeta_bs=None, p_sim={"normal": 0.01, "t(6)": 0.3}, shape_flag=False), "not testable"),
        (dict(zeta_bs=None, p_sim={"normal": 0.05}, shape_flag=False), "invalid"),  # p <= alpha rejects
        # the empirical D decides when present
        (dict(zeta_bs=None, p_sim={"normal": 0.01, "t(6)": 0.3, "empirical": 0.2}, shape_flag=False), "valid"),
        (dict(zeta_bs=None, p_sim={"normal": 0.5, "t(6)": 0.6, "empirical": 0.04}, shape_flag=False), "invalid"),
    ],
)
def test_mc_verdict_branches(kw, want):
    from mcref.verdict._validate import verdict_mc

    assert verdict_mc(**kw) == want


def test_p_value_is_the_monte_carlo_rank_formula():
    u = np.linspace(0.5, 2.0, 900)
    sim = mcref.simulate(["ENCE", "CC"], u, dists=["normal"], n_mc=199, seed=4)
    x = sim.samples[0, 0]
    th = float(np.quantile(x, 0.9))
    p, se = sim.p_value("ENCE", "normal", th, alternative="greater")
    assert p == (1 + np.sum(x >= th)) / 200 and se == pytest.approx(np.sqrt(p * (1 - p) / 199))
    pl, _ = sim.p_value("ENCE", "normal", th, alternative="less")
    assert pl == (1 + np.sum(x <= th)) / 200
    p2, _ = sim.p_value("ENCE", "normal", th)
    assert p2 == min(1.0, 2 * min(p, pl))
    assert sim.p_value("CC", "normal", 10.0, alternative="greater")[0] == 1 / 200  # beyond every θ_k
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        sim.p_value("CC", "normal", 0.0, alternative="bigger")


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small n_boot/n_mc keep the test fast; the warning is tested in test_newuser
def test_table_reports_p_values_both_verdicts_and_biased_intervals():
    ds = mcref.datasets.load("Diffusion_RF")
    tab = mcref.validate(ds.E, ds.u, n_boot=500, n_mc=500, seed=0, name=ds.name)
    paper = mcref.validate(ds.E, ds.u, n_boot=500, n_mc=500, seed=0, name=ds.name, rule="paper")
    mc = mcref.validate(ds.E, ds.u, n_boot=500, n_mc=500, seed=0, name=ds.name, rule="mc")
    for r, q, m in zip(tab.rows, paper.rows, mc.rows):
        assert r.verdict_paper == q.verdict == q.verdict_paper == m.verdict_paper
        assert r.alternative == ("greater" if r.name in ("ENCE", "ZMSE") else "two-sided")
        assert set(r.p_sim) == {"normal", "t(6)", "empirical", "permutation"}
        assert all(0 < p <= 1 for p in r.p_sim.values()) and r.p_sim == m.p_sim  # the same simulation
        if r.shape_flag:  # (the scale statistics: the scale test's own screen, mcref.verdict._scale_test)
            assert r.verdict == "unreliable" and r.test == "shape screen"
        elif r.name in ("ZMS", "RCE"):  # the scale tests: bootstrap-t by default, ζ_BS under rule="mc"
            assert r.verdict == ("valid" if r.p_test > 0.05 else "invalid") and r.test == "bootstrap-t"
            assert m.verdict == ("valid" if abs(m.zeta_bs) <= 1 else "invalid") and m.test == "zeta_BS"
        elif r.reference is not None:  # ζ_BS under every rule
            assert r.verdict == m.verdict == ("valid" if abs(r.zeta_bs) <= 1 else "invalid")
            assert r.test == m.test == "zeta_BS"
        else:  # the default rule decides by the permutation test, rule="mc" by the empirical D
            assert r.verdict == ("valid" if r.p_sim["permutation"] > 0.05 else "invalid") and r.test == "permutation"
            assert m.verdict == ("valid" if m.p_sim["empirical"] > 0.05 else "invalid") and m.test == "empirical"
        assert q.test == ("shape screen" if q.shape_flag else "zeta_BS" if q.reference is not None else "zeta_Sim")
        assert r.excludes_estimate == (not r.low <= r.estimate <= r.high)
    rec = tab.records()[3]
    assert {"p_normal", "p_se_t(6)", "verdict_paper", "excludes_estimate", "test"} <= set(rec)
    assert '"rule": "conditional"' in tab.to_json() and "p_normal" in tab.to_csv().splitlines()[0]
    assert '"rule": "mc"' in mc.to_json()
    assert "p[normal]" in tab.wide_table() and "paper" in str(tab)
    # the compact view says which test decided each row: a column, and a note that names the tests
    head = next(l for l in str(tab).splitlines() if l.startswith("stat ")).split()
    assert head == ["stat", "estimate", "BCa", "95%", "CI", "zeta_BS", "p", "test", "p[emp]", "finding", "paper"]
    cc = next(l for l in str(tab).splitlines() if l.startswith("CC "))
    assert " perm " in cc and "finding (column test; p: its p-value" in str(tab)
    # rule="mc" keeps its compact view
    assert "p[empirical]" in next(l for l in str(mc).splitlines() if l.startswith("stat "))
    with pytest.raises(ValueError, match="`rule` must be one of"):
        mcref.validate(ds.E, ds.u, rule="strict")


def test_bootstrap_warns_when_bca_excludes_the_estimate():
    # calibrated: ENCE biased up, z0 ≈ −2.6 (−2.54 to −2.75 over seeds 0-3: about 23 of the 5000
    # replicates below θ̂; the interval excludes θ̂ once z0 < −1.96). With 40 bins z0 was ≈ −3.5, and
    # 1000 replicates often had none below (z0 = −inf: the percentile interval instead)
    rng = np.random.default_rng(2)
    u = rng.uniform(0.5, 2, 4000)
    E = u * rng.normal(size=4000)
    with pytest.warns(mcref.BiasedIntervalWarning, match="excludes the estimate"):
        r = mcref.bootstrap("ENCE", E, u, n_boot=5000, n_bins=20, seed=0)
    assert r.method == "bca" and not r.low <= r.estimate <= r.high


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_d_sensitive_is_the_unpaired_rule_with_k():
    # the one D-sensitivity definition: |θ_ref(D1) − θ_ref(D2)| > k·√(u₁² + u₂²), computed here from
    # the table's own references and their standard uncertainties (not from PairedDifference)
    import math

    ds = mcref.datasets.load("Diffusion_RF")
    base = mcref.validate(ds.E, ds.u, stats=("ENCE", "ZMSE"), dists=("normal", "t6"), n_boot=200, n_mc=600,
                          seed=4)
    for row in base.rows:
        r1, r2 = row.sim["normal"], row.sim["t(6)"]
        diff = r1.mean - r2.mean
        z_unpaired = abs(diff) / math.hypot(r1.se, r2.se)
        z_paired = abs(diff) / row.sensitivity[0].se
        assert z_paired > 1.2 * z_unpaired  # common random numbers: the paired se is smaller
        # a k between the two z's: the unpaired rule says "not sensitive", a paired one would say "sensitive"
        k = math.sqrt(z_paired * z_unpaired)
        tab = mcref.validate(ds.E, ds.u, stats=(row.name,), dists=("normal", "t6"), n_boot=200, n_mc=600, seed=4,
                             k_sensitivity=k)
        assert tab.rows[0].d_sensitive is False
        tab = mcref.validate(ds.E, ds.u, stats=(row.name,), dists=("normal", "t6"), n_boot=200, n_mc=600, seed=4,
                             k_sensitivity=0.99 * z_unpaired)
        assert tab.rows[0].d_sensitive is True


def test_validate_checks_and_prepares_the_data_once(monkeypatch):
    """One check at the public boundary, one prepared dataset (sort by u, bins, tie runs, |E|
    order) for the bootstrap, the references, the shape screen and the tie spread; the
    conditional rule's scale tests (ZMS, RCE) check nothing again (``mcref.core._checks`` is
    counted too: modules that import a check inside a function find it there)."""
    import mcref.resampling._bootstrap as B
    import mcref.core._prepared as P
    import mcref.verdict._validate as V
    import mcref.core._checks as VA
    import mcref.reference as R
    import mcref.shape as SH
    import mcref.stats as ST

    calls = {"check_E_u": 0, "check_u": 0, "prepare": 0, "_prepare_u": 0}

    def counting(mod, name):
        fn = getattr(mod, name)

        def wrapper(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        monkeypatch.setattr(mod, name, wrapper)

    for mod in (V, B, SH, ST, R):
        for name in ("check_E_u", "check_u"):
            if hasattr(mod, name):
                counting(mod, name)
    counting(VA, "check_E_u")  # (its check_u is check_E_u's own step)
    counting(P, "prepare")
    counting(R, "_prepare_u")
    rng = np.random.default_rng(8)
    u = rng.uniform(0.5, 2.0, 4000)  # no ties: the tie spread prepares nothing more
    E = u * rng.normal(size=4000)
    tab = mcref.validate(E, u, n_boot=1000, n_mc=1000, seed=1)
    assert tab["ZMS"].test == tab["RCE"].test == "bootstrap-t"  # the scale tests ran
    assert calls == {"check_E_u": 1, "check_u": 0, "prepare": 1, "_prepare_u": 0}


def test_default_n_mc_keeps_the_papers_setting_and_a_budget_above():
    """10⁴ repeats up to M = 2·10⁴ (every published set), then about 2·10⁸/M element·repeats
    per D, never below 2000, never increasing with M."""
    from mcref.verdict._validate import MIN_DEFAULT_N_MC, N_MC_BUDGET, PAPER_N_MC

    ms = np.unique(np.logspace(0, 7, 400).astype(int))
    n = np.array([mcref.default_n_mc(int(m)) for m in ms])
    assert np.all(n[ms <= 20_000] == PAPER_N_MC)
    assert np.all(np.diff(n) <= 0) and n.min() == MIN_DEFAULT_N_MC
    above = (ms > 20_000) & (n > MIN_DEFAULT_N_MC)
    assert np.all(ms[above] * n[above] <= N_MC_BUDGET) and np.all(ms[above] * (n[above] + 100) > N_MC_BUDGET)
    assert all(mcref.default_n_mc(ds.M) == PAPER_N_MC for ds in map(mcref.datasets.load, mcref.datasets.names()))
    with pytest.raises(ValueError, match="`m`"):
        mcref.default_n_mc(0)


def test_validate_takes_n_mc_from_default_n_mc_and_says_so(monkeypatch):
    """n_mc=None (the default) asks default_n_mc(M); below the papers' 10⁴ the table's notes
    say which N_MC was used and how to get the papers' setting; an explicit n_mc is kept."""
    import mcref.verdict._validate as V

    E, u = mcref.synthetic.nig(800, 6, seed=3)
    seen = []
    monkeypatch.setattr(V, "default_n_mc", lambda m: seen.append(m) or 1200)
    tab = mcref.validate(E, u, stats=["ZMS", "CC"], n_boot=1000, seed=0)
    assert seen == [800] and tab.n_mc == 1200
    assert any(n.startswith("N_MC=1200: the default for M=800") and "n_mc=10000" in n for n in tab.notes)
    assert "N_MC=1200: the default" in str(tab)
    tab2 = mcref.validate(E, u, stats=["ZMS", "CC"], n_boot=1000, n_mc=1100, seed=0)
    assert tab2.n_mc == 1100 and not any("N_MC=" in n for n in tab2.notes) and seen == [800]


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_scale_rows_under_the_permutation_d_have_zeta_zero():
    """Issue 31: under the permutation D, ZMS (MZ, VarZ, NLL) is the data's own value up to the
    rounding of its sums, and its simulated interval has zero width: ζ_Sim2 divided two
    rounding noises (−0.333 printed where it is 0). The reference is the estimate itself."""
    rng = np.random.default_rng(5)
    u = rng.lognormal(0, 0.4, 700)
    E = u * rng.normal(size=700)
    tab = mcref.validate(E, u, stats=["ZMS", "MZ", "VarZ", "NLL", "ENCE"], n_boot=200, n_mc=200, seed=3)
    for s in ("ZMS", "MZ", "VarZ", "NLL"):
        r = tab[s]
        ref = r.sim["permutation"]
        assert (ref.mean, ref.low, ref.high, ref.se) == (r.estimate, r.estimate, r.estimate, 0.0)
        assert r.zeta_sim["permutation"] == 0.0 and r.zeta_sim2["permutation"] == 0.0
        assert r.p_sim["permutation"] == 1.0
    # a statistic that depends on the pairing keeps its simulated reference
    assert tab["ENCE"].sim["permutation"].high > tab["ENCE"].sim["permutation"].low


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_mv_is_not_testable():
    """Found by tests/test_invariants.py (scale invariance): MV = <u^2> depends on u alone, so every
    simulated dataset had the data's value up to rounding, and its permutation p-value, hence its
    verdict, was decided by rounding noise (valid for E, u; invalid for 3E, 3u). It is reported
    with its estimate and interval, ``not testable``, with the reason, and out of the joint verdict."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 300)
    E = u * rng.normal(size=300)
    for c in (1.0, 3.0, 0.1):
        tab = mcref.validate(c * E, c * u, stats=["ZMS", "MV", "MSE"], n_boot=200, n_mc=200, seed=1)
        mv = tab["MV"]
        assert mv.verdict == mv.verdict_paper == "not testable" and mv.test == "none" and mv.p_test is None
        assert "function of u alone" in mv.reason
        assert mv.low <= mv.estimate <= mv.high
        assert "MV" not in tab.joint.stats and "MV" not in tab.joint.excluded
        assert tab["MSE"].verdict in ("valid", "invalid")
