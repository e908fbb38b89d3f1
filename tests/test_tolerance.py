"""Equivalence margins of validate (issue 33: ``tolerance``; docs/methods.md, "Equivalence margins").

What is checked: the 1 − 2α interval is BCa on the same replicates (against an independent
NumPy BCa on the very resamples, and against scipy's BCa within Monte Carlo error); the test
says ``within`` when the margin is wider than the miscalibration and ``not shown`` when it is
narrower; its size at the boundary of the margin is at most about α; ``tolerance=None``
changes nothing; the errors; the CLI option.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtr, ndtri

from mcref import bootstrap, validate
from mcref.resampling._bootstrap import bca_interval_at, bca_p_value, resample_indices
from mcref.verdict._equivalence import check_tolerance, margin_region
from mcref.core._warnings import FewReplicatesWarning
from mcref.cli import main

FAST = dict(n_boot=1000, n_mc=200)


def _data(m, c, seed):
    rng = np.random.default_rng(seed)
    u = rng.lognormal(-1, 0.3, m)
    return c * u * rng.normal(size=m), u


def _validate(E, u, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        return validate(E, u, **{**FAST, "seed": 1, **kw})


# --- the interval and the p-values ---------------------------------------------------------


def test_interval_at_the_result_level_is_the_result_bit_for_bit():
    E, u = _data(3000, 1.1, 0)
    for stat in ("ZMS", "RCE", "ENCE"):
        b = bootstrap(stat, E, u, n_boot=2000, seed=3)
        assert bca_interval_at(b, b.confidence_level) == (b.low, b.high)


def _numpy_bca_zms(E, u, idx, level):
    """BCa of ZMS = <Z²> from scratch on the resamples ``idx`` (Efron & Tibshirani 1993, §14.3)."""
    z2 = (E / u) ** 2
    theta = z2.mean()
    boot = z2[idx].mean(axis=1)
    dist = np.append(boot, theta)
    z0 = ndtri(np.mean(dist < theta * (1 - 1e-12)))
    jack = (z2.sum() - z2) / (z2.size - 1)
    d = jack.mean() - jack
    a = np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)
    alpha = 1 - level
    t = z0 + ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    return np.quantile(dist, ndtr(z0 + t / (1 - a * t)))


def test_the_90_interval_against_an_independent_bca_on_the_same_resamples():
    E, u = _data(2000, 1.05, 1)
    b = bootstrap("ZMS", E, u, n_boot=3000, seed=7)
    idx = resample_indices(u, 3000, seed=7)
    np.testing.assert_allclose(np.sort(b.distribution), np.sort((E / u)[idx].__pow__(2).mean(axis=1)), rtol=1e-10)
    for level in (0.90, 0.95):
        np.testing.assert_allclose(bca_interval_at(b, level), _numpy_bca_zms(E, u, idx, level), rtol=1e-9)


def test_the_90_interval_against_scipy_bca_within_monte_carlo_error():
    E, u = _data(2000, 1.05, 2)
    z2 = (E / u) ** 2
    b = bootstrap("ZMS", E, u, n_boot=5000, seed=11)
    lo, hi = bca_interval_at(b, 0.90)
    ref = sps.bootstrap((z2,), np.mean, n_resamples=5000, confidence_level=0.90, method="BCa",
                        random_state=np.random.default_rng(12)).confidence_interval
    # Monte Carlo error of the difference of two runs' limits, in sd of the replicates: the 5 % quantile
    # of B = 5000, √(2·0.05·0.95/B)/φ(1.645) = 0.042, and z0's error √(2·0.25/B)/φ(0) = 0.025 entering
    # twice, 0.05: about 0.066 in all; 4 of them
    tol = 0.26 * b.se
    assert abs(lo - ref.low) < tol and abs(hi - ref.high) < tol, (lo, hi, ref, tol)


def test_p_values_invert_the_intervals():
    E, u = _data(3000, 1.0, 3)
    b = bootstrap("ZMS", E, u, n_boot=2000, seed=5)
    for alpha in (0.01, 0.05, 0.2):
        lo, hi = bca_interval_at(b, 1 - 2 * alpha)
        # the bound at level 1 - alpha is where the one-sided p-value equals alpha
        assert bca_p_value(b, lo, "lower") == pytest.approx(alpha, abs=1e-9)
        assert bca_p_value(b, hi, "upper") == pytest.approx(alpha, abs=1e-9)
    assert bca_p_value(b, -1.0, "lower") == 0.0 and bca_p_value(b, 10.0, "upper") == 0.0
    assert bca_p_value(b, 10.0, "lower") == 1.0 and bca_p_value(b, -1.0, "upper") == 1.0


# --- the test on data of known miscalibration ----------------------------------------------


@pytest.mark.parametrize("c", [0.9, 1.1])
def test_within_when_the_margin_is_wider_than_the_miscalibration(c):
    E, u = _data(20_000, c, 4)
    wide = _validate(E, u, stats=["ZMS", "RCE"], tolerance=0.15)  # |c - 1| = 0.10 < 0.15
    narrow = _validate(E, u, stats=["ZMS", "RCE"], tolerance=0.05)  # 0.05 < |c - 1|
    for s in ("ZMS", "RCE"):
        assert wide[s].verdict == "invalid" and narrow[s].verdict == "invalid"
        assert wide[s].equivalence == "within", wide[s]
        assert narrow[s].equivalence == "not shown", narrow[s]
        assert wide[s].p_equiv <= 0.05 < narrow[s].p_equiv
    assert wide["ZMS"].margin == pytest.approx((0.85 ** 2, 1.15 ** 2))
    assert wide["RCE"].margin == pytest.approx((-0.15, 0.15))
    assert wide.calibrated_within is True and narrow.calibrated_within is False


def test_the_binned_rows_and_the_model():
    E, u = _data(20_000, 1.0, 5)
    tab = _validate(E, u, tolerance=0.1)
    assert [r.name for r in tab.rows if r.margin is not None] == ["ZMS", "RCE", "ENCE", "ZMSE"]
    assert tab["CC"].margin is None and tab["CC"].equivalence is None
    # ENCE and ZMSE: the limit is the critical value of sets simulated at the margin, below the
    # population value δ (ENCE) or 2 ln(1 + δ) (ZMSE) by less than the bins' noise adds
    assert 0.5 * 0.1 < tab["ENCE"].margin[1] < 0.1 and tab["ENCE"].margin[0] == -math.inf
    assert 0.5 * 2 * math.log(1.1) < tab["ZMSE"].margin[1] < 2 * math.log(1.1)
    for r in tab.rows:
        if r.margin is not None:
            assert r.equivalence == "within" and r.p_equiv <= tab.alpha
            assert r.low <= r.equiv_low <= r.equiv_high <= r.high  # the 90 % interval inside the 95 %
            if r.name in ("ZMS", "RCE"):
                lo, hi = r.margin
                assert lo <= r.equiv_low and r.equiv_high <= hi
            else:  # the Monte Carlo test: within when the estimate is below the critical value
                assert r.estimate <= r.margin[1]
    assert tab.calibrated_within is True
    tight = _validate(E, u, tolerance={"ENCE": 0.005})  # sets at a margin of 0.5 %: as noisy as calibrated ones
    assert tight["ENCE"].equivalence == "not shown" and tight["ZMS"].margin is None
    assert tight["ENCE"].p_equiv > 0.05 and tight.calibrated_within is False


def _numpy_ence(E, u, n_bins):
    """ENCE with NumPy on u-sorted data: (1/N) Σ_b |RMV_b − RMSE_b| / RMV_b over equal-count bins."""
    o = np.argsort(u, kind="stable")
    E, u = E[o], u[o]
    m = u.size
    cuts = np.floor(m * np.arange(n_bins + 1) / n_bins + 0.5).astype(int)
    out = 0.0
    for a, b in zip(cuts[:-1], cuts[1:]):
        rmv, rmse = np.sqrt(np.mean(u[a:b] ** 2)), np.sqrt(np.mean(E[a:b] ** 2))
        out += abs(rmv - rmse) / rmv
    return out / n_bins


@pytest.mark.parametrize("c", [1.1, 0.9])
def test_sets_at_the_margin_have_errors_c_times_u(c):
    """The margin's sets (errors c·u·ε at the data's u and bins, drawn by the engine against u/c)
    against sets drawn with NumPy: the mean ENCE agrees within 4 combined standard errors."""
    from mcref.generative import get_distribution
    from mcref.reference import simulate_prepared
    from mcref.stats import info, prepare_for

    m, nb, n = 600, 10, 1500
    u = np.random.default_rng(1).lognormal(-1, 0.4, m)
    inf = [info("ENCE")]
    prep = prepare_for(inf, u * 0 + u, u, n_bins=nb)
    sim = simulate_prepared(inf, prep, [get_distribution("normal")], n_mc=n, seed=3, u_scale2=1 / c ** 2)
    ours = sim.samples[0, 0]
    rng = np.random.default_rng(4)
    ref = np.array([_numpy_ence(c * u * rng.normal(size=m), u, nb) for _ in range(n)])
    se = math.sqrt(ours.var(ddof=1) / n + ref.var(ddof=1) / n)
    assert abs(ours.mean() - ref.mean()) <= 4 * se, (ours.mean(), ref.mean(), se)
    # and far from the calibrated sets' (c = 1): the scale reaches the statistic
    calib = simulate_prepared(inf, prep, [get_distribution("normal")], n_mc=n, seed=3).samples[0, 0]
    assert abs(ours.mean() - calib.mean()) > 10 * se


def test_the_decision_is_the_tost_p_value():
    E, u = _data(5000, 1.04, 6)
    for delta in (0.02, 0.04, 0.06, 0.1):
        tab = _validate(E, u, stats=["ZMS", "RCE"], tolerance=delta)
        for s in ("ZMS", "RCE"):
            r = tab[s]
            assert (r.equivalence == "within") == (r.p_equiv <= 0.05), (delta, r)


def _boundary_rate(stat, c, delta, n, m=2000):
    """The fraction of n datasets of m points at the margin's boundary (E = c·u·N(0, 1), c = 1 ± δ)
    that the test calls "within" (the 90 % BCa interval of B = 1000 inside the margin)."""
    lo_m, hi_m = margin_region(stat, delta, 0.0 if stat == "RCE" else 1.0)
    hits = 0
    for k in range(n):
        E, u = _data(m, c, 100 + k)
        lo, hi = bca_interval_at(bootstrap(stat, E, u, n_boot=1000, seed=k), 0.90)
        hits += lo_m <= lo and hi <= hi_m
    return hits / n


def test_size_at_the_boundary_of_the_margin():
    """Data exactly at the upper boundary, ZMS = (1 + δ)² in the population: TOST at α = 0.05
    declares "within" at most about α of the time (binomial tolerance: 3 standard errors)."""
    n = 200
    rate = _boundary_rate("ZMS", 1.1, 0.1, n)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n), rate


@pytest.mark.slow
@pytest.mark.parametrize("stat, c", [("ZMS", 1.1), ("ZMS", 0.9), ("RCE", 1.1), ("RCE", 0.9)])
def test_size_at_both_boundaries(stat, c):
    """Both boundaries of ZMS and RCE, n = 400 (measured: 0.060, 0.050, 0.058, 0.055; se 0.011)."""
    n = 400
    rate = _boundary_rate(stat, c, 0.1, n)
    assert 0.05 - 3 * math.sqrt(0.05 * 0.95 / n) <= rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n), rate


def _binned_within_rate(stat, delta, n, m, half=False, c=None, seed0=5000):
    """The fraction of n sets of m points (10 bins) that validate(tolerance=δ) calls "within" for
    ``stat``: every bin off by c (default 1 + δ), or (``half``) half the bins calibrated and half
    off twice as much (the same mean error per bin)."""
    nb, hits = 10, 0
    for k in range(n):
        rng = np.random.default_rng(seed0 + k)
        u = np.sort(rng.lognormal(-1, 0.3, m))
        cc = 1 + delta if c is None else c
        far = 1 + 2 * delta if stat == "ENCE" else (1 + delta) ** 2
        scale = np.where((np.arange(m) * nb // m) % 2 == 0, 1.0, far) if half else np.full(m, cc)
        E = scale * u * rng.normal(size=m)
        tab = _validate(E, u, stats=[stat], tolerance=delta, n_bins=nb, n_mc=1000, seed=k)
        hits += tab[stat].equivalence == "within"
    return hits / n


@pytest.mark.parametrize("stat", ["ENCE", pytest.param("ZMSE", marks=pytest.mark.slow)])
def test_binned_margins_are_reachable_and_keep_their_level(stat):
    """Small fast version of the study (benchmarks/study_paths.py, section margins): at M = 600
    the margin δ = 0.2 is reached by calibrated sets, and sets exactly at the margin are called
    within no more often than α allows (binomial: 3 standard errors of 30 sets)."""
    n = 30
    assert _binned_within_rate(stat, 0.2, n, 600, c=1.0, seed0=7000) >= 0.5
    assert _binned_within_rate(stat, 0.2, n, 600, seed0=8000) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n)


@pytest.mark.slow
@pytest.mark.parametrize("stat, half", [("ENCE", False), ("ENCE", True), ("ZMSE", False), ("ZMSE", True)])
def test_size_of_the_binned_non_inferiority_tests(stat, half):
    """The one-sided margins of ENCE and ZMSE at their boundary (M = 5000, 10 bins, 400 sets):
    every bin off by 1 + δ (the least favourable pattern: the Monte Carlo test is exact there),
    or half the bins calibrated and half off twice as much (conservative). Before the simulated
    margins (BCa upper limit against δ) the first was 0.075 (ENCE) and 0.085 (ZMSE)."""
    n = 400
    rate = _binned_within_rate(stat, 0.1, n, 5000, half=half)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / n), rate


# --- tolerance=None changes nothing; the outputs ---------------------------------------------


def test_none_leaves_every_number_unchanged():
    E, u = _data(3000, 1.05, 7)
    plain = _validate(E, u)
    none = _validate(E, u, tolerance=None)
    with_tol = _validate(E, u, tolerance=0.05)
    assert plain.to_json() == none.to_json() and plain.to_csv() == none.to_csv() and str(plain) == str(none)
    assert "equiv" not in str(plain) + plain.to_csv() + plain.to_json() + plain.explained()
    assert none.tolerance is None and none.calibrated_within is None
    for a, b in zip(plain.rows, with_tol.rows):  # the margins add columns and change none
        fa, fb = a.flat(), b.flat()
        assert json.dumps(fa) == json.dumps({k: fb[k] for k in fa})
    assert json.dumps(plain.joint.flat()) == json.dumps(with_tol.joint.flat())


def test_outputs_carry_the_equivalence():
    E, u = _data(3000, 1.0, 8)
    tab = _validate(E, u, tolerance=0.1)
    head = next(l for l in str(tab).splitlines() if l.startswith("stat ")).split()
    assert head[-1] == "equiv"
    assert "calibrated within the margins" in str(tab) and "TOST" in str(tab)
    assert "equiv " in tab.explained() and "equiv" in tab.wide_table()
    js = json.loads(tab.to_json())
    assert js["tolerance"] == {"ZMS": 0.1, "RCE": 0.1, "ENCE": 0.1, "ZMSE": 0.1}
    assert js["calibrated_within"] is True
    assert [r["equivalence"] for r in js["rows"]] == ["within", "within", None, "within", "within"]
    csv = tab.to_csv().splitlines()
    cols = csv[0].split(",")
    assert {"margin_low", "margin_high", "equiv_low", "equiv_high", "p_equiv", "equivalence",
            "calibrated_within"} <= set(cols)


def test_with_other_rules_and_dependent_rows():
    """The equivalence test reads the BCa interval whatever decides the verdict, and the cluster
    bootstrap's interval (its jackknife acceleration) with ``groups``."""
    E, u = _data(2000, 1.0, 11)
    for kw in (dict(rule="mc"), dict(rule="paper"), dict(groups=np.arange(2000) // 4)):
        tab = _validate(E, u, stats=["ZMS", "RCE"], tolerance=0.2, **kw)
        for s in ("ZMS", "RCE"):
            r = tab[s]
            assert r.equivalence == "within" and r.low <= r.equiv_low <= r.equiv_high <= r.high, (kw, r)


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("tol, match", [
    (-0.1, r"`tolerance` must be in \(0, 1\)"),
    (0.0, r"`tolerance` must be in \(0, 1\)"),
    (float("nan"), r"`tolerance` must be in \(0, 1\)"),
    (1.0, r"`tolerance` must be in \(0, 1\)"),
    (True, "must be a number"),
    ("0.05", "must be a number"),
    ({}, "empty dict"),
    ({"FOO": 0.1}, "unknown statistic 'FOO'"),
    ({"CC": 0.1}, "CC has no calibrated value"),
    ({"MZ": 0.1}, "MZ is not among the table's statistics"),
    ({"ZMS": -1}, r"`tolerance`\['ZMS'\] must be in \(0, 1\)"),
    ({"ZMS": 1.5}, r"`tolerance`\['ZMS'\] must be in \(0, 1\)"),
])
def test_bad_tolerance(tol, match):
    with pytest.raises(ValueError, match=match):
        check_tolerance(tol, ["ZMS", "RCE", "CC", "ENCE", "ZMSE"], 0.05)


def test_checked_before_any_work_and_other_errors():
    E, u = _data(100, 1.0, 9)
    with pytest.raises(ValueError, match="has none of them"):
        validate(E, u, stats=["CC"], tolerance=0.05)
    with pytest.raises(ValueError, match="alpha"):
        check_tolerance(0.05, ["ZMS"], 0.5)
    assert check_tolerance({"zms": 0.05, "MZ": 2.0, "UCE": 0.3}, ["ZMS", "MZ", "UCE"], 0.05) == {
        "ZMS": 0.05, "MZ": 2.0, "UCE": 0.3}  # absolute margins need not be below 1
    assert margin_region("MZ", 0.1, 0.0) == (-0.1, 0.1) and margin_region("UCE", 0.3, None) == (-math.inf, 0.3)


# --- the command line -------------------------------------------------------------------------


def test_cli_tolerance(tmp_path, capsys):
    E, u = _data(3000, 1.0, 10)
    f = tmp_path / "d.csv"
    np.savetxt(f, np.c_[E, u], delimiter=",", header="E,u", comments="")
    opts = ["--stat", "ZMS,RCE", "--boot", "1000", "--mc", "200", "--seed", "1"]
    assert main(["validate", str(f), *opts, "--tolerance", "0.1", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["tolerance"] == {"ZMS": 0.1, "RCE": 0.1} and js["calibrated_within"] is True
    assert main(["validate", str(f), *opts, "--tolerance", "ZMS=0.1"]) == 0
    out = capsys.readouterr().out
    assert "equiv" in out and "ZMS in [0.81, 1.21]" in out
    assert main(["validate", str(f), *opts, "--tolerance", "0.1", "--csv"]) == 0
    assert "p_equiv" in capsys.readouterr().out.splitlines()[0]
    assert main(["validate", str(f), *opts, "--tolerance", "-1"]) == 2
    assert "--tolerance must be in (0, 1)" in capsys.readouterr().err
    assert main(["validate", str(f), *opts, "--tolerance", "CC=0.1"]) == 2
    assert "CC" in capsys.readouterr().err
    assert main(["validate", str(f), *opts, "--tolerance", "abc"]) == 2
    assert "--tolerance must be a number" in capsys.readouterr().err
