"""mcref.stats against the naive references of tests/naive.py (docs/methods.md, "Data and notation" to "Binning")."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import mcref

import naive
from mcref.core._warnings import ShrunkBinsWarning

S = importlib.import_module("mcref.stats")  # the submodule (mcref.statistic... are functions)

ALL = naive.ALL

# Relative tolerance 1e-12 as required; the tiny absolute floor covers statistics that
# are differences of nearly equal sums (MZ, RCE, RCE2, CC close to 0), whose absolute
# rounding error is ~M·eps·(size of the summands), not relative to the result.
RTOL = 1e-12
ATOL = 1e-13


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_registry_lists_design_statistics():
    assert set(S.names()) == set(ALL)
    for name in ALL:
        assert S.info(name).name == name
        assert S.info(name.lower()).name == name  # case-insensitive
        assert S.info(name).binned == (name in naive.BINNED)


# (case, n_bins): M divisible and not divisible by N, M exactly min_count·N, ties in u / |E|
BIN_SETUPS = [
    ("cal300", 10),           # 300 / 10 divisible
    ("cal300", 7),            # not divisible
    ("cal300", 1),            # one bin
    ("cal457_lognormal", 15),  # 457 / 15 = 30.47: close to min_count·N
    ("tied_u", 12),           # 361 / 12 = 30.08, u takes 7 values (bins cut inside tie runs)
    ("tied_E", 11),           # 330 = 30·11 exactly min_count·N
    ("tied_both", 13),        # 403 = 13·31
]


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # expected here: tied u straddle bin cuts (the warning itself is tested in test_newuser)
@pytest.mark.parametrize("case_name,n_bins", BIN_SETUPS)
@pytest.mark.parametrize("name", ALL)
def test_statistic_matches_naive(gen, case_name, n_bins, name):
    E, u = gen.make_case(case_name)
    got = S.statistic(name, E, u, n_bins=n_bins)
    close(got, naive.statistic(name, E, u, n_bins))


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # expected here: tied u straddle bin cuts (the warning itself is tested in test_newuser)
@pytest.mark.parametrize("case_name", ["cal300", "tied_u", "tied_both"])
def test_statistics_many_equals_one_at_a_time(gen, case_name):
    E, u = gen.make_case(case_name)
    many = S.statistics(ALL, E, u, n_bins=9)
    assert list(many) == list(ALL)
    for name in ALL:
        one = S.statistic(name, E, u, n_bins=9)
        close(many[name], one, rtol=1e-14, atol=1e-15)
        close(many[name], naive.statistic(name, E, u, 9))
    # a subset in another order, with repeats of the binned ones
    sub = S.statistics(["UCE", "CC", "ZMS", "ENCE"], E, u, n_bins=9)
    assert list(sub) == ["UCE", "CC", "ZMS", "ENCE"]
    for name, v in sub.items():
        close(v, many[name], rtol=1e-14, atol=1e-15)


def test_stable_order_of_ties_matters_for_binned():
    """Two data sets that differ only in the input order of tied u values: the stable rule
    puts different points into the bins, and mcref must follow the input order."""
    rng = np.random.default_rng(7)
    m = 120
    u = np.repeat([1.0, 2.0], m // 2)
    E = u * rng.normal(size=m)
    perm = np.concatenate([rng.permutation(m // 2), m // 2 + rng.permutation(m // 2)])
    for name in naive.BINNED:
        with pytest.warns(mcref.TieOrderWarning, match=f"{name}: 2 run"):  # the user is told
            a = S.statistic(name, E, u, n_bins=3, min_count=30)
        with pytest.warns(mcref.TieOrderWarning):
            b = S.statistic(name, E[perm], u[perm], n_bins=3, min_count=30)
        close(a, naive.statistic(name, E, u, 3))
        close(b, naive.statistic(name, E[perm], u[perm], 3))
    # the middle bin straddles the tie run, so the two orders give different values (ENCE;
    # not UCE here: with MV_b > MSE_b in every bin it equals MV − MSE whatever the order)
    with pytest.warns(mcref.TieOrderWarning):
        assert abs(S.statistic("ENCE", E, u, n_bins=3, min_count=30)
                   - S.statistic("ENCE", E[perm], u[perm], n_bins=3, min_count=30)) > 0.01


def test_cc_with_ties_matches_spearmanr(gen):
    E, u = gen.tied_both(500, 21)
    assert np.unique(u).size == 5 and np.unique(np.abs(E)).size < 100
    close(S.statistic("CC", E, u), naive.cc(E, u))


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # expected here: tied u straddle bin cuts (the warning itself is tested in test_newuser)
def test_qm9_statistics(qm9):
    E, u = qm9
    assert np.unique(u).size < 200  # heavy ties in u
    for name in ALL:
        close(S.statistic(name, E, u, n_bins=20), naive.statistic(name, E, u, 20), rtol=1e-11)


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # expected here: tied u straddle bin cuts (the warning itself is tested in test_newuser)
def test_list_input_and_min_count_argument():
    E = [0.5, -1.0, 2.0, 0.1, -0.3, 1.5]
    u = [1.0, 1.0, 2.0, 0.5, 0.7, 1.1]
    Ea, ua = np.array(E), np.array(u)
    for name in ALL:
        close(S.statistic(name, E, u, n_bins=2, min_count=3), naive.statistic(name, Ea, ua, 2))


# --------------------------------------------------------------------------- references


@pytest.mark.parametrize("name", ALL)
def test_predefined_reference(cal_data, name):
    E, u = cal_data
    want = naive.predefined_reference(name, E, u)
    got = S.predefined_reference(name, E, u)
    if want is None:
        assert got is None
    else:
        assert isinstance(got, float)
        close(got, want)


def test_nll_reference_equals_nll_when_zms_is_one():
    u = np.array([0.5, 1.0, 2.0, 3.0])
    E = u.copy()  # Z = 1 everywhere, ZMS = 1
    close(S.predefined_reference("NLL", E, u), S.statistic("NLL", E, u))


# --------------------------------------------------------------------------- input errors


def _data(m=300):
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, m)
    return u * rng.normal(size=m), u


@pytest.mark.parametrize("name", ["ZMS", "CC", "ENCE"])
def test_nan_and_inf_rejected(name):
    E, u = _data()
    bad = E.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match=r"`E` must contain only finite values \(1 NaN and 0 infinite.*index 5"):
        S.statistic(name, bad, u)
    bad = u.copy()
    bad[7] = np.inf
    with pytest.raises(ValueError, match=r"`u` must contain only finite values \(0 NaN and 1 infinite.*index 7"):
        S.statistic(name, E, bad)
    bad = E.copy()
    bad[0] = -np.inf
    with pytest.raises(ValueError, match=r"`E` must contain only finite"):
        S.statistics([name, "MV"], bad, u)


@pytest.mark.parametrize("value", [0.0, -1.0])
def test_nonpositive_u_rejected(value):
    E, u = _data()
    u = u.copy()
    u[3] = value
    with pytest.raises(ValueError, match=r"`u` must be > 0 \(1 non-positive values, first at index 3\)"):
        S.statistic("ZMS", E, u)


def test_mismatched_lengths_rejected():
    E, u = _data()
    with pytest.raises(ValueError, match=r"`E` and `u` must have the same length, got 299 and 300"):
        S.statistic("ZMS", E[:-1], u)


def test_other_shape_errors():
    E, u = _data()
    with pytest.raises(ValueError, match=r"`E` must be one-dimensional"):
        S.statistic("ZMS", E.reshape(30, 10), u.reshape(30, 10))
    with pytest.raises(ValueError, match=r"`u` must not be empty"):
        S.statistic("ZMS", [1.0], [])
    with pytest.raises(ValueError, match=r"at least 2 points"):
        S.statistic("ZMS", [1.0], [1.0])
    with pytest.raises(ValueError, match=r"`E` must be a 1-D array of real numbers"):
        S.statistic("ZMS", ["a", "b"], [1.0, 2.0])


def test_unknown_statistic():
    E, u = _data()
    with pytest.raises(ValueError, match=r"unknown statistic 'ZMSX'.*known statistics: ZMS"):
        S.statistic("ZMSX", E, u)
    with pytest.raises(ValueError, match=r"unknown statistic"):
        S.statistics(["ZMS", "nope"], E, u)
    with pytest.raises(ValueError, match=r"unknown statistic"):
        S.predefined_reference("nope", E, u)
    with pytest.raises(ValueError, match=r"unknown statistic"):
        S.info(3)


@pytest.mark.parametrize("name", naive.BINNED)
def test_min_count_rule(name):
    E, u = _data(599)  # 599 / 20 = 29.95 < 30
    with pytest.raises(ValueError, match=r"`n_bins`=20 leaves fewer than `min_count`=30 points per bin for M=599.*use at most 19 bins"):
        S.statistic(name, E, u, n_bins=20)
    # exactly M = min_count·N is accepted
    E6, u6 = np.append(E, 0.3), np.append(u, 1.0)
    close(S.statistic(name, E6, u6, n_bins=20), naive.statistic(name, E6, u6, 20))
    # a lower min_count accepts the 599 points in 20 bins
    close(S.statistic(name, E, u, n_bins=20, min_count=29), naive.statistic(name, E, u, 20))
    # non-binned statistics ignore n_bins entirely
    close(S.statistic("ZMS", E, u, n_bins=10_000), naive.zms(E, u))


@pytest.mark.parametrize("name", naive.BINNED)
def test_shrink(name):
    E, u = _data(599)
    with pytest.warns(ShrunkBinsWarning, match=r"n_bins reduced from 20 to 19"):
        got = S.statistic(name, E, u, n_bins=20, shrink=True)
    close(got, naive.statistic(name, E, u, 599 // 30))
    with pytest.warns(ShrunkBinsWarning, match=r"from 50 to 11"):
        got = S.statistic(name, E[:340], u[:340], n_bins=50, min_count=30, shrink=True)
    close(got, naive.statistic(name, E[:340], u[:340], 11))
    with pytest.raises(ValueError, match=r"M=20 points cannot fill a single bin of `min_count`=30"):
        S.statistic(name, E[:20], u[:20], n_bins=2, shrink=True)


def test_shrink_not_triggered_when_enough_points():
    import warnings

    E, u = _data(600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = S.statistic("ENCE", E, u, n_bins=20, shrink=True)
    close(got, naive.ence(E, u, 20))


@pytest.mark.parametrize("n_bins,match", [(0, r"`n_bins` must be an integer >= 1, got 0"),
                                          (2.5, r"`n_bins` must be an integer, got 2.5"),
                                          (True, r"`n_bins` must be an integer, got True")])
def test_bad_n_bins(n_bins, match):
    E, u = _data()
    with pytest.raises(ValueError, match=match):
        S.statistic("ENCE", E, u, n_bins=n_bins)


def test_bad_min_count():
    E, u = _data()
    with pytest.raises(ValueError, match=r"`min_count` must be an integer >= 1, got 0"):
        S.statistic("ENCE", E, u, n_bins=5, min_count=0)


def test_undefined_statistics_raise():
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, 90)
    E = u * rng.normal(size=90)
    E[np.argsort(u, kind="stable")[:30]] = 0.0  # the first bin has only zero errors
    with pytest.raises(ValueError, match=r"statistic ZMSE is undefined for this dataset: a bin has only zero errors"):
        S.statistic("ZMSE", E, u, n_bins=3)
    with pytest.raises(ValueError, match=r"statistic CC is undefined.*single value"):
        S.statistic("CC", E, np.ones(90))
    with pytest.raises(ValueError, match=r"statistic CC is undefined"):
        S.statistic("CC", np.full(90, 2.0), u)


# --------------------------------------------------------------------------- cheap small calls


def _moments_numpy(E, u):
    z = E / u
    mse, mv = np.mean(E**2), np.mean(u**2)
    return {"ZMS": np.mean(z**2), "MZ": np.mean(z), "VarZ": np.var(z, ddof=1), "MSE": mse, "MV": mv,
            "RCE": (np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv), "RCE2": (mv - mse) / mv,
            "NLL": 0.5 * (np.mean(z**2) + np.mean(np.log(u**2)) + np.log(2 * np.pi))}


def test_moment_statistics_never_sort(monkeypatch):
    """Mean-type statistics are moments of the unsorted data: neither the prepare (sort,
    bins, ranks) path nor any argsort runs, and the values are the NumPy formulas."""
    def boom(*args, **kwargs):
        raise AssertionError("the sort/prepare path ran for a moment statistic")

    monkeypatch.setattr(S, "prepare", boom)
    monkeypatch.setattr(S, "evaluate", boom)
    monkeypatch.setattr(np, "argsort", boom)
    E, u = _data(1001)
    want = _moments_numpy(E, u)
    got = S.statistics(list(want), E, u)
    assert list(got) == list(want)
    for name, v in want.items():
        close(got[name], v)
        close(S.statistic(name, E, u), v)


def test_mixed_request_sorts_once(monkeypatch):
    """Binned statistics and CC share one prepare (one sort by u); |E| is ordered only for CC."""
    calls = []
    real = S.prepare

    def counting(*args, **kwargs):
        prep = real(*args, **kwargs)
        calls.append(prep)
        return prep

    monkeypatch.setattr(S, "prepare", counting)
    E, u = _data(600)
    got = S.statistics(["ZMS", "ENCE", "CC", "UCE", "MV"], E, u, n_bins=10)
    assert len(calls) == 1 and calls[0].eord.size == E.size
    for name, v in got.items():
        want = _moments_numpy(E, u)[name] if name in ("ZMS", "MV") else naive.statistic(name, E, u, 10)
        close(v, want)
    calls.clear()
    S.statistics(["ENCE", "ZMSE"], E, u, n_bins=10)
    assert len(calls) == 1 and calls[0].eord.size == 0  # no CC: no order of |E|


@pytest.mark.parametrize("E,u", [
    ([1e-170, 0.0, 1e-170], [1.0, 1.0, 1.0]),    # squares of E underflow
    ([1.0, 2.0, 3.0], [1e-170, 1.0, 1.0]),       # u² underflows
    ([1e154, 1.0, 1.0], [1.0, 1.0, 1.0]),        # ΣE² overflows
    ([1.0, 1.0, 1.0], [1e-160, 1e160, 1.0]),     # u² over- and underflow
    ([1e150, 1.0, 1.0], [1e-10, 1.0, 1.0]),      # Z² overflows
    ([1.0, 2.0], [1.0, -2.0]),                   # u <= 0
    ([1.0, np.nan], [1.0, 2.0]),
])
def test_one_pass_check_equals_check_E_u(E, u):
    """The one-pass input check accepts and refuses exactly what check_E_u does, with its message."""
    from mcref.core._checks import check_E_u

    with pytest.raises(ValueError) as want:
        check_E_u(E, u)
    with pytest.raises(ValueError, match=str(want.value).replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("*", r"\*").replace("+", r"\+").replace(".", r"\.")):
        S.statistic("ZMS", E, u)
    # and data just inside the limits pass both
    E2, u2 = np.array([1e-150, 0.0, 3.0]), np.array([1e-150, 1.0, 1.0])
    check_E_u(E2, u2)
    close(S.statistic("ZMS", E2, u2), _moments_numpy(E2, u2)["ZMS"])
