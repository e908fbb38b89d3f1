"""Conditional-calibration diagnostics (mcref.diagnostics), adaptive binning and the
primer's synthetic cases (docs/methods.md, "Binning", "Diagnostics")."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as sps

import mcref
from mcref import diagnostics as D
from mcref.binning import adaptive_bins, adaptive_starts, make_bins
from mcref.shape import hd_quantile
from mcref.synthetic import CASES, case

DATA = Path(__file__).parent / "data"


# ----------------------------------------------------------------------------------
# adaptive binning
# ----------------------------------------------------------------------------------


def _r_samples():
    rng = np.random.default_rng(20240601)
    x = np.sort(rng.standard_normal(5000))
    u = np.sort(0.1 * (0.1 + x**2))
    ln = np.sort(rng.lognormal(0, 1.2, 3000))
    return {"u": u, "x": x, "ln": ln}


def test_adaptive_bins_equal_errviewlib_genintervals():
    """Bin starts identical to ErrViewLib's genIntervals(equiPop = FALSE) run in R on the same
    samples (log and linear grids, merges of empty/small cells, splits of large bins)."""
    samples = _r_samples()
    n = 0
    for line in (DATA / "genintervals_adaptive.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f, nb, pm, lg, *starts = line.split()
        got = adaptive_starts(samples[f], int(nb), min_count=int(pm), log=lg == "TRUE")
        assert got[:-1].tolist() == list(map(int, starts)) and got[-1] == samples[f].size, line[:20]
        n += 1
    assert n == 7


def test_adaptive_rules_on_constructed_inputs():
    # merge: 4 linear cells of 90, 0, 0, 10 points (min_count 10) -> 90 | 10; split while > 25
    xs = np.sort(np.r_[np.linspace(1, 2, 90), np.linspace(9, 10, 10)])
    assert np.diff(adaptive_starts(xs, 4, min_count=10, log=False)).tolist() == [24, 22, 23, 21, 10]
    # a small last bin joins its left neighbour (cells of 60 and 2 points -> 62), which is then
    # split while above max(⌊62/2⌋, 10) = 31 points: 62 -> 32 + 30 -> 17 + 15 + 30
    xs = np.r_[np.linspace(0, 1, 60), [5.0, 5.1]]
    assert np.diff(adaptive_starts(xs, 2, min_count=5, log=False)).tolist() == [17, 15, 30]
    # log grid: decades 1-10, 10-100, 100-1000 with 40 points each -> one bin per decade
    xs = np.concatenate([np.geomspace(10**k, 10 ** (k + 1) * 0.999, 40) for k in range(3)])
    assert np.diff(adaptive_starts(xs, 3, min_count=10, log=True)).tolist() == [40, 40, 40]
    # the same data on a linear grid: everything below 334 falls in the first cell, then split
    lin = np.diff(adaptive_starts(xs, 3, min_count=10, log=False))
    assert lin.sum() == 120 and lin.max() <= max(120 // 3, 20)
    with pytest.raises(ValueError, match="log binning needs a strictly positive"):
        adaptive_bins(np.r_[-1.0, np.ones(50)], 3, min_count=5, log=True)


def test_make_bins_selects_the_rule():
    x = np.random.default_rng(1).lognormal(size=600)
    assert make_bins(x, 10).counts.tolist() == [60] * 10
    ad = make_bins(x, 10, binning="adaptive")
    assert ad.counts.sum() == 600 and ad.counts.min() >= 30
    with pytest.raises(ValueError, match="binning"):
        make_bins(x, 10, binning="quantile")


# ----------------------------------------------------------------------------------
# local statistics
# ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def calibrated():
    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 2.0, 6000)
    return u * rng.standard_normal(u.size), u


def test_default_bin_count():
    assert [mcref.binning.default_n_bins(m, rule="local") for m in (100, 450, 1500, 5000, 13885)] == [2, 3, 10, 15, 15]
    with pytest.warns(mcref.MCRefDeprecationWarning, match='default_n_bins\\(m, rule="local"\\)'):
        assert D.default_n_bins(1500) == 10  # the old spelling, deprecated


def test_lzisd_interval_equals_direct_formula(calibrated):
    E, u = calibrated
    d = D.lzisd(E, u, n_bins=12)
    order = np.argsort(u, kind="stable")
    z = (E / u)[order][d.counts.cumsum()[2] - d.counts[2]:d.counts.cumsum()[2]]  # bin 2
    v = np.var(z, ddof=1)
    m2, m4 = np.mean((z - z.mean()) ** 2), np.mean((z - z.mean()) ** 4)
    n = z.size
    sd = math.sqrt((m4 - (n - 3) / (n - 1) * m2**2) / n) / (2 * v**1.5)
    assert d.value[2] == pytest.approx(1 / math.sqrt(v), rel=1e-12)
    assert (d.low[2], d.high[2]) == pytest.approx((1 / math.sqrt(v) - 1.959963984540054 * sd,
                                                    1 / math.sqrt(v) + 1.959963984540054 * sd), rel=1e-12)
    assert d.counts.tolist() == [500] * 12 and d.variable == "u"


def test_lzms_student_interval_and_bca(calibrated):
    E, u = calibrated
    d = D.lzms(E, u, n_bins=10, method="stud")
    z2 = ((E / u)[np.argsort(u, kind="stable")][:600]) ** 2
    h = sps.t.ppf(0.975, 599) * np.std(z2, ddof=1) / math.sqrt(600)
    assert (d.value[0], d.low[0], d.high[0]) == pytest.approx((z2.mean(), z2.mean() - h, z2.mean() + h))
    b = D.lzms(E[:1000], u[:1000], n_bins=4, method="bca", n_boot=1000, seed=1, min_count=30)
    assert np.all(b.low < b.value) and np.all(b.value < b.high)


def test_wilson_matches_scipy():
    for k, n in ((0, 20), (3, 50), (95, 100), (333, 333), (170, 333)):
        for cc in (False, True):
            lo, hi = D.wilson_interval(k, n, correction=cc)
            ref = sps.binomtest(k, n).proportion_ci(0.95, method="wilsoncc" if cc else "wilson")
            assert (float(lo), float(hi)) == pytest.approx((ref.low, ref.high), abs=1e-12), (k, n, cc)


def test_lcp_coverage_near_p_on_calibrated_data_and_far_on_case_d(calibrated):
    E, u = calibrated
    for p in (0.25, 0.5, 0.75, 0.95):
        d = D.lcp(E, u, p=p)
        assert abs(d.overall[0] - p) < 4 * math.sqrt(p * (1 - p) / E.size)
        assert d.fraction_valid >= 0.7
    ds = case("D", seed=3)  # u twice too large: ±U_0.5 covers P(|N| ≤ 2·0.674) = 0.82
    d = D.lcp(ds.E, ds.u, ds.x, p=0.5, log=False)
    want = 2 * sps.norm.cdf(2 * sps.norm.ppf(0.75)) - 1
    assert abs(d.overall[0] - want) < 4 * math.sqrt(want * (1 - want) / ds.M)
    assert d.fraction_valid == 0.0


def test_lcp_with_a_t_distribution_uses_its_quantiles():
    ds = case("E", seed=2)  # t(4)/√2 errors: intervals from t4 quantiles cover p
    d = D.lcp(ds.E, ds.u, p=0.5, dist="t4")
    assert abs(d.overall[0] - 0.5) < 4 * math.sqrt(0.25 / ds.M)
    assert D.quantile_factor(0.975, "t4") == pytest.approx(sps.t.ppf(0.975, 4) / math.sqrt(2))


def test_reliability_diagram_ence_equals_the_statistic(calibrated):
    E, u = calibrated
    d = D.reliability_diagram(E, u, n_bins=20, seed=1)
    assert d.overall[0] == pytest.approx(mcref.statistic("ENCE", E, u, n_bins=20), rel=1e-12)
    order = np.argsort(u, kind="stable")
    assert d.value[0] == pytest.approx(math.sqrt(np.mean(E[order][:300] ** 2)))
    assert d.centers[0] == pytest.approx(math.sqrt(np.mean(u[order][:300] ** 2)))
    assert d.fraction_valid >= 0.7


def test_calibration_curve(calibrated):
    E, u = calibrated
    c = D.calibration_curve(E, u)
    assert c.miscalibration_area < 0.02
    c2 = D.calibration_curve(2 * E, u)  # errors twice too large
    assert c2.miscalibration_area > 0.1
    i = np.argmin(abs(c.expected - 0.3))
    assert c.observed[i] == pytest.approx(np.mean(E / u <= sps.norm.ppf(0.3)))
    assert c.low[i] <= c.observed[i] <= c.high[i]


def test_confidence_curve_reference_matches_its_analytic_expectation():
    """Under the reference model E* = u·N(0, 1), c(k)² = mean of E*² over the points left, whose
    expectation is the mean of u² over them: the simulated mean of c(k)² must agree within 4
    Monte Carlo standard errors, for every k."""
    rng = np.random.default_rng(8)
    u = rng.lognormal(0, 0.6, 4000)
    E = u * rng.standard_normal(u.size)
    cc = D.confidence_curve(E, u, n_mc=500, seed=2, keep_samples=True)
    u_desc = np.sort(u)[::-1]
    cuts = np.floor(np.arange(100) * 4000 / 100 + 1e-9).astype(int)
    want = np.array([np.mean(u_desc[c:] ** 2) for c in cuts])
    c2 = cc.samples**2
    se = c2.std(axis=0, ddof=1) / math.sqrt(500)
    assert np.all(np.abs(c2.mean(axis=0) - want) < 4 * se + 1e-12)
    # the data's own curve is the direct computation
    e_desc = E[np.argsort(-u, kind="stable")]
    assert cc.curve[37] == pytest.approx(math.sqrt(np.mean(e_desc[cuts[37]:] ** 2)), rel=1e-12)
    assert cc.dfpr == pytest.approx(np.abs(cc.curve - cc.reference).sum())
    assert cc.dfpr_up95 == pytest.approx(hd_quantile(np.abs(cc.samples - cc.reference).sum(axis=1), 0.95))
    mae = D.confidence_curve(E, u, stat="MAE", n_mc=100, seed=2)
    assert mae.curve[0] == pytest.approx(np.mean(np.abs(E)))


def test_confidence_curve_is_deterministic_across_threads():
    import numba

    ds = case("A", M=2000, seed=1)
    a = D.confidence_curve(ds.E, ds.u, n_mc=100, seed=4)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = D.confidence_curve(ds.E, ds.u, n_mc=100, seed=4)
    finally:
        numba.set_num_threads(old)
    assert np.array_equal(a.reference, b.reference) and a.dfpr_up95 == b.dfpr_up95


def test_running_quantiles_match_direct_hd():
    rng = np.random.default_rng(3)
    x = rng.uniform(size=500)
    y = rng.standard_normal(500)
    rq = D.running_quantiles(x, y)
    w = rq.window
    assert w == 500 // math.ceil(2 * 500**0.333)
    o = np.argsort(x, kind="stable")
    lo, hi = hd_quantile(y[o][10:10 + w], [0.025, 0.975])
    assert (rq.low[10], rq.high[10]) == pytest.approx((lo, hi), rel=1e-10)
    assert rq.x.size == 500 - w + 1


def test_diagnostics_bad_input(calibrated):
    E, u = calibrated
    with pytest.raises(ValueError, match="same length"):
        D.lzisd(E, u, x=np.arange(3.0))
    with pytest.raises(ValueError, match="`p` must be in"):
        D.lcp(E, u, p=1.5)
    with pytest.raises(ValueError, match="stat"):
        D.confidence_curve(E, u, stat="median")
    # any generative distribution is a reference now (ErrViewLib's Uniform, Laplace; tests/test_parity.py)
    assert D.confidence_curve(E, u, dist="uniform", n_mc=50, seed=0).dist == "uniform"
    frame = D.lzisd(E, u).to_frame()
    assert list(frame.columns) == ["center", "value", "low", "high", "count", "target", "valid"]


# ----------------------------------------------------------------------------------
# the primer's cases A–F
# ----------------------------------------------------------------------------------


def _flags(ds, seed):
    """(calibrated, consistent, adaptive) as the primer reads them: the BCa interval of ⟨Z²⟩
    contains 1 (a Student interval undercovers for the t(4) errors of case E);
    LZMS along u valid in ≥ 60 % of the bins and the confidence curve within its reference
    (DFPR; t(4) reference for the t(4) case E); LZMS along x valid in ≥ 60 % of the bins.
    Consistency is trivial for a constant u (case F), as in the primer."""
    lz_x = D.lzms(ds.E, ds.u, ds.x, method="stud", log=False)
    b = mcref.bootstrap("ZMS", ds.E, ds.u, n_boot=2000, seed=seed)
    cal = bool(b.low <= 1 <= b.high)
    if np.all(ds.u == ds.u[0]):
        cons = True
    else:
        lz_u = D.lzms(ds.E, ds.u, method="stud")
        cc = D.confidence_curve(ds.E, ds.u, n_mc=300, seed=seed, dist="t4" if ds.name == "case E" else "normal")
        cons = lz_u.fraction_valid >= 0.6 and cc.passes
    return cal, cons, lz_x.fraction_valid >= 0.6


@pytest.mark.parametrize("name", list(CASES))
def test_primer_cases_give_the_expected_flags(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(5):
            ds = case(name, M=5000, seed=seed)
            assert _flags(ds, seed) == CASES[name][0], (name, seed)


def test_cases_have_the_stated_moments():
    a = case("A", seed=0)
    assert np.array_equal(a.u, 0.1 * (0.1 + a.x**2)) and np.all(np.diff(a.x) >= 0)
    c = case("C", seed=0)
    assert np.array_equal(np.sort(c.u), np.sort(a.u)) and np.array_equal(c.E, a.E)
    d = case("D", seed=0)
    assert np.array_equal(d.u, 2 * a.u)
    assert abs(np.mean(d.Z**2) - 0.25) < 4 * math.sqrt(2 / 5000) * 0.25
    f = case("F", seed=0)
    assert np.all(f.u == f.u[0]) and f.u[0] == pytest.approx(math.sqrt(np.mean(a.u**2)))
    with pytest.raises(ValueError, match="one of A, B, C, D, E, F"):
        case("G")


# ----------------------------------------------------------------------------------
# plots and the CLI report
# ----------------------------------------------------------------------------------


def test_plots_render_and_save(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mcref import plots

    ds = case("C", M=2000, seed=1)
    for fn, args in ((plots.plot_lzms, (ds.E, ds.u)), (plots.plot_lzisd, (ds.E, ds.u, ds.x)),
                     (plots.plot_lcp, (ds.E, ds.u)), (plots.plot_reliability, (ds.E, ds.u)),
                     (plots.plot_calibration_curve, (ds.E, ds.u)), (plots.plot_confidence_curve, (ds.E, ds.u)),
                     (plots.plot_e_vs_u, (ds.E, ds.u)), (plots.plot_z_vs_x, (ds.E, ds.u, ds.x))):
        ax = fn(*args)
        assert ax.has_data(), fn.__name__
        plt.close(ax.figure)
    fig = plots.plot_report(ds.E, ds.u, ds.x, name=ds.name, seed=1, path=tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 50_000 and sum(a.has_data() for a in fig.axes) == 9
    f = case("F", M=2000, seed=1)  # constant u: the u panels are skipped, x panels remain
    fig2 = plots.plot_report(f.E, f.u, f.x, seed=1)
    assert sum(a.has_data() for a in fig2.axes) == 4
    plt.close("all")


def test_cli_report(tmp_path, capsys):
    from mcref import cli

    out = tmp_path / "rep.png"
    assert cli.main(["report", "--dataset", "Diffusion_RF", "--out", str(out), "--seed", "1"]) == 0
    assert out.stat().st_size > 50_000
    d = tmp_path / "html"
    capsys.readouterr()
    assert cli.main(["report", "--dataset", "Diffusion_RF", "--html", str(d), "--boot", "200", "--mc", "200",
                     "--seed", "2"]) == 0
    assert capsys.readouterr().out.startswith("Diffusion_RF: joint verdict: ")  # the answer first
    page = (d / "index.html").read_text()
    assert '<img src="report.png"' in page and "M = 2040" in page and "Words of this report" in page
    assert (d / "report.png").exists()
    # the benchmark report's renderer: one coloured finding cell per statistic of the table
    import re

    found = re.findall(r'<td class="txt f-(pass|fail|unreliable|not-testable)" data-v="([a-z ]+)">', page)
    assert len(found) == 5 + 5  # the finding and the published rule's verdict of each row


# ----------------------------------------------------------------------------------
# adaptive bins everywhere a binning is taken
# ----------------------------------------------------------------------------------


def _ence_direct(E, u, starts):
    o = np.argsort(u, kind="stable")
    Es, us = E[o], u[o]
    vals = []
    for a, c in zip(starts[:-1], starts[1:]):
        rmv = math.sqrt(np.mean(us[a:c] ** 2))
        vals.append(abs(rmv - math.sqrt(np.mean(Es[a:c] ** 2))) / rmv)
    return float(np.mean(vals))


def test_statistics_with_adaptive_bins():
    rng = np.random.default_rng(11)
    u = rng.lognormal(0, 0.8, 2000)
    E = u * rng.standard_normal(u.size)
    b = adaptive_bins(u, 20, min_count=30)
    got = mcref.statistic("ENCE", E, u, n_bins=20, binning="adaptive")
    assert got == pytest.approx(_ence_direct(E, u, b.starts), rel=1e-12)
    lin = adaptive_bins(u, 20, min_count=30, log=False)
    assert mcref.statistic("ENCE", E, u, binning="adaptive", log=False) == pytest.approx(
        _ence_direct(E, u, lin.starts), rel=1e-12)


def test_adaptive_jackknife_equals_leave_one_out():
    from mcref.resampling._bootstrap import jackknife
    from mcref.stats import info, prepare

    rng = np.random.default_rng(12)
    u = rng.lognormal(0, 0.7, 400)
    E = u * rng.standard_normal(u.size)
    prep = prepare(E, u, 8, min_count=30, binning="adaptive")
    o = np.argsort(u, kind="stable")
    for name in ("ENCE", "ZMSE", "UCE"):
        want = [mcref.statistic(name, np.delete(E[o], j), np.delete(u[o], j), n_bins=8, binning="adaptive")
                for j in range(u.size)]
        np.testing.assert_allclose(jackknife(info(name), prep), want, rtol=1e-12, atol=1e-15)


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # expected here: tied u straddle bin cuts (the warning itself is tested in test_newuser)
@pytest.mark.filterwarnings("ignore::mcref.DegenerateBootstrapWarning")  # well-calibrated ENCE: replicates all above
@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small settings keep it fast
def test_adaptive_reference_and_bootstrap():
    rng = np.random.default_rng(13)
    u = rng.lognormal(0, 0.8, 1500)
    E = u * rng.standard_normal(u.size)
    ref = mcref.simulated_reference("ENCE", u, n_mc=1000, seed=1, binning="adaptive", keep_samples=True)
    naive = [mcref.statistic("ENCE", u * rng.standard_normal(u.size), u, binning="adaptive") for _ in range(400)]
    se = math.hypot(ref.sd / math.sqrt(1000), np.std(naive, ddof=1) / math.sqrt(400))
    assert abs(ref.mean - np.mean(naive)) < 4 * se
    a = mcref.bootstrap("ENCE", E, u, n_boot=300, binning="adaptive", seed=3)
    b = mcref.bootstrap("ENCE", E, u, n_boot=300, binning="adaptive", seed=3)
    assert a.estimate == mcref.statistic("ENCE", E, u, binning="adaptive")
    assert np.array_equal(a.distribution, b.distribution) and a.low < a.high  # (ENCE is biased upwards)
    tab = mcref.validate(E, u, stats=["ENCE"], dists=["normal"], n_boot=200, n_mc=200, seed=1, binning="adaptive")
    assert tab["ENCE"].estimate == a.estimate and tab["ENCE"].tie_range is None


@pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning")  # copies of one point straddle a cut: equal values
def test_adaptive_bootstrap_recuts_the_kernels_own_resamples():
    """With adaptive bins, replicate b of a binned statistic is the statistic, bins re-cut, of the
    resample the kernel draws (:func:`mcref.resampling._bootstrap.resample_indices`, the same seed: u without
    ties, so the order of copies cannot matter), and the other statistics' replicates are those of a
    call without the binned ones, bit for bit (before, the binned company moved every statistic to
    other resamples). With tied u the same holds for ZMS, and the binned replicates repeat."""
    from mcref.resampling._bootstrap import resample_indices

    rng = np.random.default_rng(5)
    u = rng.lognormal(0, 0.8, 900)
    E = u * rng.standard_normal(900)
    kw = dict(n_boot=60, binning="adaptive", seed=3, n_bins=6, method="percentile")
    both = mcref.bootstrap_many(["ENCE", "ZMS", "ZMSE"], E, u, **kw)
    idx = resample_indices(u, 60, seed=3)
    for name in ("ENCE", "ZMSE"):
        ref = np.array([mcref.statistic(name, E[i], u[i], binning="adaptive", n_bins=6) for i in idx])
        np.testing.assert_allclose(both[name].distribution, ref, rtol=1e-12)
    np.testing.assert_allclose(both["ZMS"].distribution, [np.mean((E[i] / u[i]) ** 2) for i in idx], rtol=1e-12)
    alone = mcref.bootstrap("ZMS", E, u, **kw)
    assert np.array_equal(both["ZMS"].distribution, alone.distribution)
    ut = np.round(u, 1)  # runs of tied u, some straddling the adaptive cuts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = mcref.bootstrap_many(["ENCE", "ZMS"], E, ut, **kw)
        b = mcref.bootstrap_many(["ENCE", "ZMS"], E, ut, **kw)
        z = mcref.bootstrap("ZMS", E, ut, **kw)
    assert np.array_equal(a["ZMS"].distribution, z.distribution)
    assert np.array_equal(a["ENCE"].distribution, b["ENCE"].distribution)
    assert np.all(np.isfinite(a["ENCE"].distribution)) and np.unique(a["ENCE"].distribution).size > 50


def test_adaptive_kernel_equals_the_step_by_step_rule():
    import naive

    rng = np.random.default_rng(21)
    for _ in range(300):
        n = int(rng.integers(50, 3000))
        xs = np.sort(rng.lognormal(0, rng.uniform(0.1, 3), n))
        nb, pm, lg = int(rng.integers(1, 40)), int(rng.integers(1, 60)), bool(rng.integers(0, 2))
        if n < pm:
            continue
        assert adaptive_starts(xs, nb, min_count=pm, log=lg).tolist() == naive.adaptive_starts(xs, nb, pm, lg).tolist()


def test_whole_set_scores_are_reexported_at_the_top_level():
    import mcref
    from mcref import diagnostics as D

    for name in ("calib_scores", "CalibScores", "calibration_curve", "CalibrationCurve", "confidence_curve",
                 "ConfidenceCurve", "cc_consistency", "CCConsistency"):
        assert name in mcref.__all__ and getattr(mcref, name) is getattr(D, name)
    assert not hasattr(mcref, "lzms")  # the binned diagnostics stay in mcref.diagnostics


def test_new_diagnostics_reject_bad_input():
    from mcref import diagnostics as D

    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 400)
    E = u * rng.normal(size=400)
    with pytest.raises(ValueError, match="`stat`"):
        D.confidence_curve(E, u, stat="q99")
    with pytest.raises(ValueError, match="`stat`"):
        D.cc_consistency(E, u, stat="Q95")  # no bootstrap of the HD quantile curve
    with pytest.raises(ValueError, match="`p`"):
        D.lrr(E, u, p=1.0)
    with pytest.raises(ValueError, match="`U`"):
        D.lrr(E, u, U=-u)
    with pytest.raises(ValueError, match="`n_boot`"):
        D.lrr(E, u, n_boot=10)
    with pytest.raises(ValueError, match="`method`"):
        D.lzms(E, u, method="pivot")
    with pytest.raises(ValueError, match="`stat`"):
        D.adversarial_group_calibration(E, u, stat="min")
    with pytest.raises(ValueError, match="max_size"):
        D.group_zms_validity(E, u, min_size=300)
    with pytest.raises(ValueError, match="`probs`"):
        D.conditional_calibration_curves(E, u, probs=[0.0, 0.5])


def test_normp_quantiles_and_pit_against_scipy():
    """normp(p)'s quantile and CDF are SciPy's gennorm at scale √(Γ(1/p)/Γ(3/p)); p = 2 is the
    normal, p = 1 Laplace."""
    import math

    from scipy import stats as sst

    from mcref import diagnostics as D

    p = np.linspace(0.01, 0.99, 9)
    s = math.sqrt(math.gamma(0.25) / math.gamma(0.75))
    np.testing.assert_allclose(D.quantile_factor(p, "normp4"), sst.gennorm.ppf(p, 4) * s, rtol=1e-13)
    np.testing.assert_allclose(D.quantile_factor(p, "normp(2)"), sst.norm.ppf(p), rtol=1e-10)
    np.testing.assert_allclose(D.quantile_factor(p, "normp(1)"), D.quantile_factor(p, "laplace"), rtol=1e-10)
    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2, 500)
    E = u * rng.normal(size=500)
    np.testing.assert_allclose(D.pit(E, u, dist="normp4").values, D.pit(E, u, dist="normp", shape=4).values,
                               rtol=1e-14)


def test_confidence_curve_old_spelling_n_draws():
    """n_draws is the old spelling of n_mc (docs/api.rst, "Conventions"): same curve, a warning."""
    from mcref.core._warnings import MCRefDeprecationWarning

    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 2.0, 400)
    E = u * rng.normal(size=400)
    new = D.confidence_curve(E, u, n_mc=50, seed=1)
    with pytest.warns(MCRefDeprecationWarning, match=r"`n_draws` is now spelled `n_mc`"):
        old = D.confidence_curve(E, u, n_draws=50, seed=1)
    assert old.dfpr_up95 == new.dfpr_up95 and old.n_mc == 50
    with pytest.warns(MCRefDeprecationWarning, match=r"n_draws is now spelled n_mc"):
        assert new.n_draws == 50
