"""Distribution fits (mcref.distfit), the fitted generative distribution t(fit), the
decimation experiment and the skewness map (docs/methods.md, "Distribution fits",
"Decimation").

References used here: scipy.special / scipy.stats on the same data, R's fitdistrplus on the
nine packaged sets (tests/data/fitdistrplus_fits.csv), exact laws of the synthetic models.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
import scipy.special as sp
import scipy.stats as sps
from numba import njit

import mcref
from mcref import cli, synthetic
from mcref import NU_BOUNDS, fit_scaled, fit_t, ks_distance
from mcref.kernels import fit as KF
from mcref.kernels import special as S
from mcref.shape import nig_skewness, skewness_gm

DATA = Path(__file__).parent / "data"


# ----------------------------------------------------------------------------------
# special functions: numba kernels vs scipy.special
# ----------------------------------------------------------------------------------


@njit
def _cdf_vec(family, nu, y):
    out = np.empty_like(y)
    ln = S.log_norm(family, nu)
    for i in range(y.size):
        out[i] = S.family_cdf(family, nu, y[i], ln)
    return out


@pytest.mark.parametrize("nu", [0.2, 0.5, 1.0, 1.7, 3.0, 6.0, 20.0, 150.0, 1000.0])
def test_family_cdfs_match_scipy(nu):
    y = np.geomspace(1e-10, 1e10, 2001)
    np.testing.assert_allclose(_cdf_vec(S.FAMILY_IG, nu, y), sp.gammaincc(nu, nu / y), rtol=0, atol=1e-12)
    np.testing.assert_allclose(_cdf_vec(S.FAMILY_F1, nu, y), sp.fdtr(1.0, nu, y), rtol=0, atol=1e-10)
    # IG(ν, ν) of scipy.stats: invgamma(a = ν, scale = ν)
    np.testing.assert_allclose(_cdf_vec(S.FAMILY_IG, nu, y[::50]), sps.invgamma(nu, scale=nu).cdf(y[::50]),
                               atol=1e-12)


def test_cdf_limits():
    assert _cdf_vec(S.FAMILY_F1, 3.0, np.array([0.0, -1.0, np.inf])).tolist() == [0.0, 0.0, 1.0]
    assert _cdf_vec(S.FAMILY_IG, 3.0, np.array([0.0, -1.0, np.inf])).tolist() == [0.0, 0.0, 1.0]


# ----------------------------------------------------------------------------------
# the KS objective is the real sup distance
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [20, 500, 20_000])
@pytest.mark.parametrize("family", ["ig", "f1"])
def test_ks_distance_equals_scipy_kstest(n, family):
    rng = np.random.default_rng(n)
    for nu, s in [(2.5, 0.7), (8.0, 3.0), (0.8, 1e-3)]:
        ref = sps.invgamma(nu, scale=nu * s) if family == "ig" else sps.f(1, nu, scale=s)
        x = ref.rvs(size=n, random_state=rng)
        for nu_m, s_m in [(nu, s), (1.3 * nu, 0.8 * s), (nu / 2, 2 * s)]:  # at and away from the truth
            model = sps.invgamma(nu_m, scale=nu_m * s_m) if family == "ig" else sps.f(1, nu_m, scale=s_m)
            want = sps.kstest(x, model.cdf).statistic
            assert ks_distance(x, family, nu_m, s_m) == pytest.approx(want, abs=1e-12)


def test_ks_distance_with_ties_and_every_block_size():
    """Rounded data (many ties) and block sizes from 'no blocks' to very coarse."""
    rng = np.random.default_rng(7)
    x = np.round(sps.f(1, 4).rvs(size=3000, random_state=rng), 2) + 0.01
    want = sps.kstest(x, sps.f(1, 4.5, scale=0.9).cdf).statistic
    xs, cum = np.unique(x, return_counts=True)
    cum = np.cumsum(cum)
    for block in (1, 2, 8, 17, 64, 300):
        assert KF.ks_distance(xs, cum, S.FAMILY_F1, 4.5, 0.9, block) == pytest.approx(want, abs=1e-12)


def test_ks_distance_rejects_bad_input():
    with pytest.raises(ValueError, match="strictly positive"):
        ks_distance(np.r_[0.0, np.ones(10)], "f1", 3, 1)
    with pytest.raises(ValueError, match="'ig'.*'f1'"):
        ks_distance(np.ones(10), "gamma", 3, 1)
    with pytest.raises(ValueError, match="finite and > 0"):
        ks_distance(np.arange(1.0, 11.0), "ig", -1, 1)


# ----------------------------------------------------------------------------------
# fits recover known parameters within their stated uncertainty
# ----------------------------------------------------------------------------------


def test_fit_scaled_minimises_ks():
    """The fitted point beats every point of a fine grid around it (the KS objective is
    piecewise smooth: a local search must not stop on a kink)."""
    x = sps.f(1, 5).rvs(size=4000, random_state=11) * 2.0
    nu, s, d = fit_scaled(x, "f1")
    assert d == pytest.approx(ks_distance(x, "f1", nu, s), abs=1e-14)
    for fn in np.linspace(0.8, 1.25, 9):
        for fs in np.linspace(0.9, 1.1, 9):
            assert ks_distance(x, "f1", nu * fn, s * fs) >= d - 1e-12


def test_distfit_recovers_tig_parameters():
    """TIG: u² ~ IG(3, 3) (nu_u2 = 3, sigma_u2 = 1), Z = t(5)·√(3/5) so Z² ~ F(1, 5)·0.6 and
    Z is a t(5) of scale √0.6: every estimate within 4 stated standard uncertainties."""
    E, u = synthetic.tig(20_000, 5.0, seed=21)
    f = mcref.distfit(E, u, n_boot=40, seed=22)
    truth = {"nu_u2": 3.0, "sigma_u2": 1.0, "nu_Z2": 5.0, "sigma_Z2": 0.6, "t_nu": 5.0, "t_loc": 0.0,
             "t_scale": math.sqrt(0.6), "mean_Z": 0.0, "sd_Z": 1.0}
    for p, v in truth.items():
        assert abs(f.values[p] - v) < 4 * f.se[p], (p, f.values[p], f.se[p])
    assert f.se_method["nu_u2"] == "bootstrap" and f.se_method["t_nu"] == "curvature"


def test_distfit_recovers_nig_error_law():
    """NIG(ν = 6): E²/σ² ~ F(1, 6) exactly, and nu_E2 = 2·nu_u2 (u² ~ IG(3, 3))."""
    E, u = synthetic.nig(20_000, 6.0, seed=23)
    f = mcref.distfit(E, u, n_boot=40, seed=24)
    assert abs(f.nu_E2 - 6.0) < 4 * f.se["nu_E2"]
    assert abs(f.sigma_E2 - 1.0) < 4 * f.se["sigma_E2"]
    assert abs(f.nu_E2 - 2 * f.nu_u2) < 4 * math.hypot(f.se["nu_E2"], 2 * f.se["nu_u2"])


def test_bootstrap_se_matches_the_spread_of_repeated_fits():
    """The bootstrap se of nu_Z2 and sigma_Z2 agrees (within a factor 1.6) with the standard
    deviation of the estimates over 16 independent datasets of the same model."""
    M = 3000
    est = []
    for r in range(16):
        E, u = synthetic.tig(M, 6.0, seed=100 + r)
        f = mcref.distfit(E, u, n_boot=0)
        est.append((f.nu_u2, f.sigma_Z2))
    sd = np.std(est, axis=0, ddof=1)
    E, u = synthetic.tig(M, 6.0, seed=99)
    f = mcref.distfit(E, u, n_boot=150, seed=1)
    for k, p in enumerate(("nu_u2", "sigma_Z2")):
        assert 1 / 1.6 < f.se[p] / sd[k] < 1.6, (p, f.se[p], sd[k])


def test_fit_t_matches_scipy_mle():
    z = sps.t(4).rvs(size=5000, random_state=31) * 0.7 - 0.2
    f = fit_t(z)
    df, loc, scale = sps.t.fit(z)
    ll_scipy = sps.t(df, loc, scale).logpdf(z).sum()
    assert f.loglik >= ll_scipy - 1e-6
    assert f.nu == pytest.approx(df, rel=2e-3) and f.loc == pytest.approx(loc, abs=2e-3)
    assert f.scale == pytest.approx(scale, rel=2e-3)
    assert f.loglik == pytest.approx(sps.t(f.nu, f.loc, f.scale).logpdf(z).sum(), rel=1e-12)


@pytest.mark.parametrize("n", [1, 255, 256, 257, 12_345, 100_003])
def test_t_loglik_region_is_the_tasks_bits(n):
    """One ``prange`` region over the blocks (:func:`t_loglik_all`) gives the tasks' block sums
    (:func:`t_loglik_sums`, mcref's threads) bit for bit, on one and on two threads, and both are
    the direct sums (NumPy, same order, to rounding)."""
    z = np.random.default_rng(n).standard_t(5, n) * 0.9 + 0.05
    nb = -(-n // KF.LL_BLOCK)
    ref = np.empty((nb, 3))
    KF.t_loglik_sums(z, 4.3, 0.01, 0.97, 0, nb, ref)
    old = numba.get_num_threads()
    try:
        for t in (1, 2):
            numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
            part = np.full((nb, 3), np.nan)
            KF.t_loglik_all(z, 4.3, 0.01, 0.97, part)
            assert part.tobytes() == ref.tobytes()
    finally:
        numba.set_num_threads(old)
    r = (z - 0.01) / 0.97
    np.testing.assert_allclose(ref.sum(axis=0), [np.log1p(r * r / 4.3).sum(), (r * r / (4.3 + r * r)).sum(),
                                                 (r / (4.3 + r * r)).sum()], rtol=1e-11, atol=1e-12)


def test_fit_t_same_bits_on_tasks_sorted_input_and_threads(monkeypatch):
    """The fit is the same, bit for bit, with its passes as ``prange`` regions or as tasks on mcref's
    threads (where numba's layer is not safe: ``prange_safe`` false), on 1 or 2 threads, and with
    its start read from a sorted copy instead of a partition; a sorted copy of another size is refused."""
    import mcref.parallel as P

    z = sps.t(5).rvs(size=30_011, random_state=8) * 1.1 + 0.03
    fits = set()
    old = numba.get_num_threads()
    try:
        for t in (1, 2):
            numba.set_num_threads(min(t, numba.config.NUMBA_NUM_THREADS))
            for layer in (None, "workqueue"):
                monkeypatch.setattr(P, "_layer", layer)
                fits.add(repr(fit_t(z)))
                fits.add(repr(fit_t(z, sorted_z=np.sort(z))))
    finally:
        numba.set_num_threads(old)
    assert len(fits) == 1
    with pytest.raises(ValueError, match="sorted_z"):
        fit_t(z, sorted_z=np.sort(z)[1:])


def test_prange_safe_only_with_a_thread_safe_layer(monkeypatch):
    """``prange`` on validate's path only where numba's threading layer is thread-safe (tbb, omp)
    and, for GNU OpenMP, not in a forked child."""
    import mcref.parallel as P

    for layer, forked, ok in [("tbb", False, True), ("tbb", True, True), ("omp", False, True), ("omp", True, False),
                              ("workqueue", False, False)]:
        monkeypatch.setattr(P, "_layer", layer)
        monkeypatch.setattr(P, "_forked", forked)
        assert P.prange_safe() is ok, (layer, forked)


def _fit_in_child(z):
    import mcref.parallel as P

    return repr(fit_t(z)), P._forked


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_fit_t_in_a_forked_child_after_the_parent_used_prange():
    """A child forked after the parent's fit ran its ``prange`` regions fits without them (GNU
    OpenMP is not fork-safe: numba would terminate the child) and gets the parent's bits."""
    import multiprocessing

    z = sps.t(5).rvs(size=20_000, random_state=9)
    parent = repr(fit_t(z))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        child, forked = pool.apply_async(_fit_in_child, (z,)).get(timeout=120)  # a terminated child: no hang
    assert forked and child == parent


def test_fit_t_normal_data_hits_the_bound():
    f = fit_t(np.random.default_rng(3).standard_normal(20_000))
    assert f.nu > 50  # a normal sample: ν̂ large, often at the bound
    if f.at_bound:
        assert f.nu == pytest.approx(NU_BOUNDS[1]) and math.isnan(f.se_nu)


def test_distfit_is_deterministic_across_thread_counts():
    E, u = synthetic.tig(3000, 6.0, seed=41)
    a = mcref.distfit(E, u, n_boot=30, seed=5)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = mcref.distfit(E, u, n_boot=30, seed=5)
    finally:
        numba.set_num_threads(old)
    assert a.as_dict() == b.as_dict() and a.ci == b.ci
    c = mcref.distfit(E, u, n_boot=30, seed=6)
    assert c.se != a.se


def test_distfit_input_errors():
    E, u = synthetic.tig(100, 6.0, seed=1)
    with pytest.raises(ValueError, match="exactly 0"):
        mcref.distfit(np.r_[0.0, E[1:]], u)
    with pytest.raises(ValueError, match="at least 2"):
        mcref.distfit(E, u, n_boot=1)
    with pytest.raises(ValueError, match="at least 8"):
        mcref.distfit(E[:5], u[:5])
    with pytest.raises(ValueError, match="same length"):
        mcref.distfit(E, u[:-1])
    with pytest.raises(ValueError, match="> 0|positive"):
        mcref.distfit(E, -u)


def test_distfit_frame_and_text():
    E, u = synthetic.tig(2000, 6.0, seed=2)
    f = mcref.distfit(E, u, n_boot=10, seed=1)
    df = f.to_frame("toy")
    assert df.index.tolist() == ["toy"]
    assert {"nu_u2", "nu_u2_se", "t_nu", "bias_Z", "ks_Z2"} <= set(df.columns)
    assert f.bias_Z == pytest.approx(100 * abs(np.mean(E / u)) / np.std(E / u, ddof=1))
    text = str(f)
    assert "curvature" in text and "bootstrap" in text and "nu_Z2" in text


# ----------------------------------------------------------------------------------
# against R's fitdistrplus on the nine packaged sets
# ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def r_fits():
    return pd.read_csv(DATA / "fitdistrplus_fits.csv").set_index("set")


@pytest.fixture(scope="module")
def our_fits():
    return {n: mcref.distfit(mcref.datasets.load(n).E, mcref.datasets.load(n).u, n_boot=0)
            for n in mcref.datasets.names()}


def test_ks_fits_at_least_as_good_as_fitdistrplus(r_fits, our_fits):
    """mge(gof = "KS") stops at local optima; mcref's minimum is never worse, and where the
    two minima coincide the parameters agree."""
    agree = 0
    for name, f in our_fits.items():
        r = r_fits.loc[name]
        for var, (nu_r, s_r) in {"u2": (r.ig_shape, r.ig_scale / r.ig_shape), "E2": (r.E2_df, r.E2_sigma),
                                 "Z2": (r.Z2_df, r.Z2_sigma)}.items():
            d_r = r[f"ks_{var}"]
            assert f.ks[var] <= d_r * (1 + 1e-6), (name, var)  # up to the optimisers' tolerances
            if abs(f.ks[var] - d_r) < 1e-4 * d_r:
                agree += 1
                assert f.values[f"nu_{var}"] == pytest.approx(nu_r, rel=1e-3), (name, var)
                assert f.values[f"sigma_{var}"] == pytest.approx(s_r, rel=1e-3), (name, var)
    assert agree >= 24  # 26 of the 27 fits coincide; fitdistrplus stops early on set 5's u²


def test_t_fits_agree_with_fitdistrplus(r_fits, our_fits):
    for name, f in our_fits.items():
        r = r_fits.loc[name]
        assert f.t_loglik >= r.t_loglik - 1e-6, name
        assert f.t_nu == pytest.approx(r.t_df, rel=5e-3), name
        assert f.t_loc == pytest.approx(r.t_mu, abs=5e-3 * r.t_sigma), name
        assert f.t_scale == pytest.approx(r.t_sigma, rel=5e-3), name
        assert f.se["t_scale"] == pytest.approx(r.t_se_sigma, rel=0.05), name
        assert f.se["t_nu"] == pytest.approx(r.t_se_df, rel=0.1), name


# ----------------------------------------------------------------------------------
# t(fit) as generative distribution
# ----------------------------------------------------------------------------------


def test_t_fit_distribution_uses_the_fitted_nu():
    E, u = synthetic.tig(20_000, 6.0, seed=51)
    d = mcref.get_distribution("t(fit)", Z=E / u)
    assert d.kind == "t" and d.nu == pytest.approx(fit_t(E / u).nu)
    assert d.label == f"t(fit ν={d.nu:.3g})"
    ref = mcref.simulated_reference("ZMS", u, dist="t(fit)", E=E, n_mc=400, seed=1)
    assert ref.dist == d.label
    sim = mcref.simulate(["ENCE"], u, dists=["normal", "t(fit)"], E=E, n_mc=50, seed=1)
    assert sim.reference("ENCE", "t(fit)").dist == d.label


def test_t_fit_refused_when_nu_below_two():
    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 1.5, 5000)
    E = u * sps.t(1.2).rvs(size=5000, random_state=rng)
    with pytest.raises(ValueError, match=r"ν̂ = 1\.\d+ ≤ 2.*'empirical'"):
        mcref.simulated_reference("ENCE", u, dist="t(fit)", E=E, n_mc=10)
    with pytest.raises(ValueError, match="needs E"):
        mcref.simulated_reference("ENCE", u, dist="t(fit)", n_mc=10)
    with pytest.raises(ValueError, match="ν̂ = .* ≤ 2"):
        mcref.validate(E, u, stats=["ENCE"], dists=["t(fit)"], n_mc=10, n_boot=100)


def test_cli_fit_and_t_fit(capsys):
    assert cli.main(["fit", "--dataset", "Diffusion_LR", "--boot", "0", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["dataset"] == "Diffusion_LR" and row["n_boot"] == 0
    assert row["ks_Z2"] == pytest.approx(ks_distance((mcref.datasets.load("Diffusion_LR").E
                                                      / mcref.datasets.load("Diffusion_LR").u) ** 2,
                                                     "f1", row["nu_Z2"], row["sigma_Z2"]), abs=1e-12)
    assert cli.main(["validate", "--dataset", "Perovskite_GPR_Bayesian", "--stat", "ENCE",
                     "--dists", "t(fit)", "--mc", "20", "--boot", "100"]) == 2
    assert "empirical" in capsys.readouterr().err


# ----------------------------------------------------------------------------------
# decimation and the skewness map
# ----------------------------------------------------------------------------------


def test_decimation_moves_rce_not_zms():
    """1 % of the points have a 30× larger u and small z-scores (z ~ 0.3·N(0, 1)): they
    dominate ⟨u²⟩ (RCE ≈ 0.57 with them, ≈ 0 without), while for ZMS they are 20 ordinary
    z² out of 2000. Removing them moves RCE by ~20 half-widths of its interval, ZMS by
    ~0.01 (interval ±0.06)."""
    rng = np.random.default_rng(0)
    M = 2000
    u = rng.uniform(0.5, 1.5, M)
    z = rng.standard_normal(M)
    u[:20] = 30.0
    z[:20] *= 0.3
    E = u * z
    r = mcref.decimation(E, u, max_fraction=0.02, steps=5, n_boot=1000, seed=1)
    assert r.leaves["RCE"] and not r.leaves["ZMS"]
    assert r.n_removed.tolist() == [0, 10, 20, 30, 40]
    assert r.first_exit["RCE"] == pytest.approx(0.005)
    rest = np.lexsort((-E, -u))[20:]
    want = mcref.statistic("RCE", E[rest], u[rest]) - mcref.statistic("RCE", E, u)
    assert r.delta["RCE"][2] == pytest.approx(want, rel=1e-12)
    assert want < -0.4
    assert r.delta["ZMS"][0] == 0.0
    df = r.to_frame()
    assert len(df) == 10 and df[df.stat == "RCE"].outside.sum() == 4


def test_decimation_removes_tied_u_by_largest_error_first():
    # a run of 40 tied largest u; the step that removes 10 points cuts the run: those removed must be
    # the tied points with the largest (signed) E, as the paper's order(-u, -E)
    rng = np.random.default_rng(3)
    M = 400
    u = rng.uniform(0.5, 1.0, M)
    u[:40] = 2.0
    E = u * rng.standard_normal(M)
    r = mcref.decimation(E, u, stats=("ZMS", "RCE"), max_fraction=0.05, steps=3, n_boot=200, seed=0)
    assert r.n_removed.tolist() == [0, 10, 20]
    order = sorted(range(M), key=lambda i: (-u[i], -E[i]))  # independent of the code's lexsort
    for step, n in ((1, 10), (2, 20)):
        rest = np.array(order[n:])
        assert set(range(M)) - set(rest.tolist()) <= set(range(40))  # only tied points removed
        for s in ("ZMS", "RCE"):
            want = mcref.statistic(s, E[rest], u[rest]) - mcref.statistic(s, E, u)
            assert r.delta[s][step] == pytest.approx(want, rel=1e-12, abs=1e-15)
    # removing the tied points with the smallest E instead would give another value
    other = np.array(sorted(range(M), key=lambda i: (-u[i], E[i]))[10:])
    assert mcref.statistic("ZMS", E[other], u[other]) - mcref.statistic("ZMS", E, u) != pytest.approx(r.delta["ZMS"][1])


def test_decimation_input_errors():
    E, u = synthetic.tig(500, 6.0, seed=1)
    with pytest.raises(ValueError, match="max_fraction"):
        mcref.decimation(E, u, max_fraction=0.7)
    with pytest.raises(ValueError, match="steps"):
        mcref.decimation(E, u, steps=1)
    with pytest.raises(ValueError, match="unknown statistic"):
        mcref.decimation(E, u, stats="XYZ")


def test_nig_skewness_curve_matches_samples():
    """Population β_GM of IG(ν/2, ν/2) and F(1, ν) vs the sample β_GM of 10⁶ draws (plain
    median; the sample value's sd is < 2e-3 here)."""
    bu, be = nig_skewness([4.0, 10.0])
    for k, nu in enumerate((4.0, 10.0)):
        x = sps.invgamma(nu / 2, scale=nu / 2).rvs(size=1_000_000, random_state=k)
        y = sps.f(1, nu).rvs(size=1_000_000, random_state=10 + k)
        assert skewness_gm(x, quantiles="plain") == pytest.approx(bu[k], abs=0.01)
        assert skewness_gm(y, quantiles="plain") == pytest.approx(be[k], abs=0.01)
    assert nig_skewness(1.5)[0][0] == 1.0  # infinite mean


def test_plots_draw(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from mcref.plots import plot_decimation, plot_fit_histograms, plot_skewness_map

    E, u = synthetic.tig(1000, 6.0, seed=3)
    ax = plot_skewness_map({"a": (E, u), "b": synthetic.nig(1000, 4.0, seed=4)})
    assert len(ax.lines) >= 5
    r = mcref.decimation(E, u, steps=3, n_boot=200, seed=1)
    ax2 = plot_decimation(r)
    assert len(ax2.lines) == 3
    axes = plot_fit_histograms(E, u)
    assert len(axes) == 3
    ax.figure.savefig(tmp_path / "map.png")


def test_cli_decimate(capsys):
    assert cli.main(["decimate", "--dataset", "Diffusion_RF", "--steps", "3", "--max-fraction", "0.02",
                     "--boot", "200", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["leaves"]) == {"ZMS", "RCE"} and len(out["points"]) == 6
    d = mcref.datasets.load("Diffusion_RF")
    rest = np.lexsort((-d.E, -d.u))[int(0.02 * d.M):]
    want = mcref.statistic("ZMS", d.E[rest], d.u[rest]) - mcref.statistic("ZMS", d.E, d.u)
    got = [p["delta"] for p in out["points"] if p["stat"] == "ZMS"][-1]
    assert got == pytest.approx(want, rel=1e-12)
    assert cli.main(["decimate", "--dataset", "Diffusion_RF", "--max-fraction", "0.9"]) == 2
    assert "--max-fraction" in capsys.readouterr().err


def test_the_t_fits_start_is_numpys_median_and_quartiles_bit_for_bit():
    """mcref._distfit._median_quartiles reads NumPy's order statistics from one partition: the same
    bits as np.median and np.percentile(z, [75, 25]) for odd and even n, ties and small samples."""
    from mcref._distfit import _median_quartiles

    rng = np.random.default_rng(11)
    for n in [*range(1, 40), 100, 101, 1000, 1001, 99_999, 100_002]:
        for z in (rng.standard_t(4, size=n), np.round(rng.normal(size=n), 1)):
            want = (float(np.median(z)), *(float(v) for v in np.percentile(z, [75, 25])))
            got = _median_quartiles(z)
            assert got == want, (n, got, want)
