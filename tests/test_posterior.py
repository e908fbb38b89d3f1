"""from_posterior: the check of posteriors of vector parameters (issue 62), against scipy, the
`tarp` package, rank_calibration, closed forms and a naive recomputation of the swapped sets."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy import stats

from mcref.calibration import rank_calibration
from mcref.kernels import posterior as KP
from mcref.posterior._check import from_posterior, tarp_coverage
from mcref.posterior._swap import chi2_bins, layout, moments, run_swaps, uniformity_stats
from mcref.synthetic import gaussian_linear_posterior


def toy(n=200, s=30, d=2, seed=0, **kw):
    return gaussian_linear_posterior(n, s, d=d, seed=seed, **kw)


def rank_seed(seed, f):
    """The SeedSequence of function f's observed ranks (from_posterior: spawn(3)[0], then child f)."""
    return np.random.SeedSequence(seed).spawn(3)[0].spawn(f + 1)[f]


@pytest.fixture(scope="module")
def calibrated():
    t, x, ex = toy(300, 40, d=3, seed=1)
    return t, x, ex, from_posterior(t, x, logpdf=ex["logpdf"], prior_draws=ex["prior_draws"], n_swaps=99, seed=7)


def test_parameter_ranks_are_rank_calibration_and_ks_is_scipy(calibrated):
    t, x, _, c = calibrated
    for k in range(3):
        ref = rank_calibration(t[:, k], x[:, :, k], seed=rank_seed(7, k))
        np.testing.assert_array_equal(c.ranks[:, k], ref)
        assert c.parameters[k].ks_p == stats.kstest(ref, "uniform").pvalue
        counts = np.histogram(ref, bins=chi2_bins(300), range=(0, 1))[0]
        assert c.parameters[k].chi2_p == pytest.approx(stats.chisquare(counts).pvalue, rel=1e-12)
        cov = [np.mean(np.abs(ref - 0.5) <= p / 2) for p in (0.5, 0.9, 0.95)]
        assert c.parameters[k].coverage == pytest.approx(cov)


def test_surprisal_ranks_are_rank_calibration_logpdf(calibrated):
    t, x, ex, c = calibrated
    f = 3 + len(c.joint_ranks) - 1  # the surprisal is the last function
    assert list(c.joint_ranks)[-1] == "surprisal"
    ref = rank_calibration(t, x, logpdf=ex["logpdf"], seed=rank_seed(7, f))
    np.testing.assert_array_equal(c.joint_ranks["surprisal"], ref)


def test_tarp_matches_numpy_and_the_tarp_package():
    tarp = pytest.importorskip("tarp")
    t, x, _ = toy(400, 97, d=3, seed=2, scale=0.8)
    refs = np.random.default_rng(3).uniform(-2, 2, size=t.shape)
    c = from_posterior(t, x, references=refs, n_swaps=19, seed=1)
    sd = c.tarp.scale
    dist_draws = np.sqrt((((x - refs[:, None, :]) / sd) ** 2).sum(axis=2))
    dist_truth = np.sqrt((((t - refs) / sd) ** 2).sum(axis=1))
    f = (dist_draws < dist_truth[:, None]).mean(axis=1)
    np.testing.assert_allclose(c.tarp.f, f, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(c.tarp.ecp, (f[:, None] < c.tarp.alpha[None, :]).mean(axis=0))
    # tarp 0.1.1 on the same standardized vectors and references (norm=False): its grid spans
    # [min f, max f]; its ECP at the interior edges is mean(f < edge), the last edge 1
    ecp, alpha = tarp.get_tarp_coverage(np.ascontiguousarray((x / sd).transpose(1, 0, 2)), t / sd,
                                        references=refs / sd, norm=False, bootstrap=False)
    assert alpha[0] == f.min() and alpha[-1] == f.max()
    np.testing.assert_allclose(ecp[1:-1], c.tarp.ecp_at(alpha[1:-1]), rtol=0, atol=1e-12)
    assert ecp[-1] == pytest.approx(1.0)


def test_tarp_coverage_alone_is_the_checks_tarp():
    t, x, _ = toy(200, 40, d=3, seed=15, scale=1.25)
    a, b = from_posterior(t, x, n_swaps=19, seed=9).tarp, tarp_coverage(t, x, seed=9)
    for name in ("f", "references", "ecp", "scale"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    # the caller's scale and references: no moments pass, the same f
    c = tarp_coverage(t, x, references=b.references, scale=b.scale)
    np.testing.assert_array_equal(c.f, b.f)
    # f against plain NumPy on the vectors standardized by a scale of the caller's
    sd = np.array([0.5, 2.0, 1.5])
    g = tarp_coverage(t, x, references=b.references, scale=sd).f
    dd = np.sqrt((((x - b.references[:, None, :]) * (1 / sd)) ** 2).sum(-1))
    dt = np.sqrt((((t - b.references) * (1 / sd)) ** 2).sum(-1))
    np.testing.assert_array_equal(g, (dd < dt[:, None]).mean(axis=1))
    with pytest.raises(ValueError, match=r"`scale` must hold d = 3 finite positive values"):
        tarp_coverage(t, x, scale=[1.0, 0.0, 1.0])
    x[4, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"`draws` must be finite .* index 4"):
        tarp_coverage(t, x)
    with pytest.raises(ValueError, match=r"`draws` must be finite .* index 4"):  # no moments pass: the counts' check
        tarp_coverage(t, x, references=b.references, scale=b.scale)


def test_swap_counts_equal_a_naive_recomputation_of_the_swapped_sets():
    # S + 1 = 100 = the fine bins: each rank fills one bin, V never matters, so each set's counts are
    # the histogram of the ranks recomputed from scratch on the swapped data
    t, x, ex = toy(40, 99, d=3, seed=4, corr=0.5)
    N, S, d = x.shape
    scores = np.stack([-ex["logpdf"](np.concatenate([t[i][None], x[i]]), i) for i in range(N)])
    mom = moments(t, x)
    lay = layout(mom, ("a", "b", "c"), N, references=None, with_surprisal=True, max_pairs=2,
                 seed_seq=np.random.SeedSequence(1))
    assert lay.pairs.shape == (2, 2) and lay.kinds.count("projection") == 4
    run = run_swaps(t, x, lay, mom, scores, 11, np.random.SeedSequence(2), np.random.SeedSequence(3), record=True)
    pooled = np.concatenate([t[:, None, :], x], axis=1)
    for k in range(11):
        j = run.swaps[k]
        truth2 = pooled[np.arange(N), j]
        others = np.stack([np.delete(pooled[i], j[i], axis=0) for i in range(N)])
        sc2 = np.stack([np.concatenate([scores[i, [j[i]]], np.delete(scores[i], j[i])]) for i in range(N)])
        vals_t, vals_o = _naive_functions(truth2, others, lay, mom, sc2)
        below = (vals_o < vals_t[:, None, :]).sum(axis=1)  # (N, F)
        hist = np.stack([np.bincount(below[:, f], minlength=KP.N_FINE) for f in range(below.shape[1])])
        np.testing.assert_array_equal(run.counts[k], hist)


def _naive_functions(truth, draws, lay, mom, scores):
    """Every function of the check recomputed from its definition on a (swapped) set."""
    z_t, z_d = truth / lay.sd, draws / lay.sd
    cols_t, cols_d = [truth[:, k] for k in range(truth.shape[1])], [draws[:, :, k] for k in range(truth.shape[1])]
    for a, b in lay.pairs:
        cols_t += [z_t[:, a] + z_t[:, b], z_t[:, a] - z_t[:, b]]
        cols_d += [z_d[:, :, a] + z_d[:, :, b], z_d[:, :, a] - z_d[:, :, b]]
    ref = lay.references / lay.sd
    cols_t.append(np.sqrt(((z_t - ref) ** 2).sum(axis=1)))
    cols_d.append(np.sqrt(((z_d - ref[:, None, :]) ** 2).sum(axis=2)))
    zm = mom.pmean / lay.sd
    W = np.linalg.inv(mom.pcov / np.outer(lay.sd, lay.sd))
    ct, cd = z_t - zm, z_d - zm[:, None, :]
    cols_t.append(np.einsum("ik,ikl,il->i", ct, W, ct))
    cols_d.append(np.einsum("isk,ikl,isl->is", cd, W, cd))
    cols_t.append(scores[:, 0])
    cols_d.append(scores[:, 1:])
    return np.stack(cols_t, axis=1), np.stack(cols_d, axis=2)


def test_uniformity_stats_are_chi2_and_grid_ks():
    u = np.random.default_rng(5).uniform(size=(500, 2))
    from mcref.posterior._swap import count_ranks

    chi, ks = uniformity_stats(count_ranks(u), 500)
    counts = np.histogram(u[:, 0], bins=20, range=(0, 1))[0]
    assert chi[0] == pytest.approx(stats.chisquare(counts).statistic, rel=1e-12)
    grid = np.arange(1, 100) / 100
    assert ks[1] == pytest.approx(np.abs((u[:, 1][:, None] < grid).mean(axis=0) - grid).max(), abs=1e-15)


def test_swap_null_is_uniform_on_calibrated_toys():
    # 60 calibrated sets: every part and the verdict reject at 0.1 about 10 % of the time
    p = []
    for r in range(60):
        t, x, ex = toy(100, 19, d=2, seed=100 + r)
        c = from_posterior(t, x, n_swaps=39, seed=r)
        p.append([c.pvalue] + [j.p for j in c.joint])
    p = np.array(p)
    rate = (p <= 0.1).mean(axis=0)
    se = np.sqrt(0.1 * 0.9 / 60)
    assert rate[0] <= 0.1 + 3 * se
    assert (rate <= 0.1 + 3.5 * se).all(), rate
    assert abs((p <= 0.1).mean() - 0.1) <= 3 * se  # pooled over parts (correlated: a loose check)


def test_wrong_correlation_is_found_by_the_joint_parts_not_the_marginals():
    t, x, _ = toy(400, 50, d=2, seed=6, corr=0.6)
    c = from_posterior(t, x, n_swaps=199, seed=1)
    p = {j.name: j.p for j in c.joint}
    assert p["projections chi2 (max)"] <= 0.01 and p["depth KS"] <= 0.01
    assert min(r.ks_p for r in c.parameters) > 0.01 and c.direction == "wrong dependence"
    assert c.verdict == "invalid"
    assert any("dependence between the parameters is wrong" in f for f in c.findings)


@pytest.mark.parametrize("kw, direction", [(dict(scale=0.8), "overconfident"), (dict(scale=1.25), "underconfident"),
                                           (dict(shift=0.5), "biased high"), (dict(shift=-0.5), "biased low")])
def test_directional_findings(kw, direction):
    t, x, _ = toy(1000, 50, d=2, seed=8, **kw)
    c = from_posterior(t, x, n_swaps=39, seed=2)  # B = 39: the two-sided direction p's reach 2/40 = alpha
    assert c.parameters[0].direction == direction
    assert c.verdict == "invalid"
    assert c.direction == direction and c.findings[0].startswith("overall direction: " + direction)
    assert c.direction_parameter == ("theta_0" if direction.startswith("biased") else None)


def test_direction_statistics_are_the_grid_means_of_the_ranks():
    t, x, _ = toy(300, 40, d=2, seed=11, scale=0.8)
    c = from_posterior(t, x, n_swaps=39, seed=4)
    mid = (np.minimum(np.floor(c.ranks * 100), 99) + 0.5) / 100  # the fine bins' midpoints
    tests = {d.name: d for d in c.direction_tests}
    assert tests["spread"].statistic == pytest.approx(np.mean(np.abs(mid - 0.5)) - 0.25, abs=1e-12)
    assert tests["skew theta_0"].statistic == pytest.approx(mid[:, 0].mean() - 0.5, abs=1e-12)
    sp = {k: np.mean(np.abs((np.minimum(np.floor(v * 100), 99) + 0.5) / 100 - 0.5)) for k, v in c.joint_ranks.items()}
    assert tests["dependence"].statistic == pytest.approx(abs(sp["theta_0+theta_1"] - sp["theta_0-theta_1"]),
                                                          abs=1e-12)
    # exact p of B = 39 sets: a multiple of 1/40, two-sided ones capped at 1
    assert all(abs(d.p * 40 - round(d.p * 40)) < 1e-9 and 0 < d.p <= 1 for d in c.direction_tests)
    assert c.verdict == "invalid" and c.direction == "overconfident" and "direction: overconfident" in str(c)
    assert c.record()["direction"] == "overconfident"


def test_direction_reads_calibrated_exactly_when_the_verdict_does_not_reject(calibrated):
    checks = [calibrated[3]] + [from_posterior(*toy(300, 40, d=2, seed=s)[:2], n_swaps=39, seed=4) for s in (1, 2)]
    assert {c.verdict for c in checks} == {"valid", "invalid"}  # the fixture rejects (p = 0.03), the others not
    for c in checks:
        assert (c.direction == "calibrated") == (c.verdict == "valid")
        assert c.direction_parameter is None or c.direction.startswith("biased")


def test_prior_as_posterior_reads_calibrated_but_uninformative():
    t, x, ex = toy(300, 40, d=2, seed=9, prior_as_posterior=True)
    c = from_posterior(t, x, prior_draws=ex["prior_draws"], n_swaps=39, seed=3)
    assert np.all(np.abs(c.contraction) < 0.1)  # 1 - var_prior/var_prior ± a few %
    if c.verdict == "valid":
        assert any(f.startswith("calibrated but uninformative") for f in c.findings)
    else:
        assert any(f.startswith("uninformative") for f in c.findings)


def test_sharpness_closed_forms(calibrated):
    t, x, ex, c = calibrated
    # contraction 1 - (1/(1 + n_obs))/1 = 10/11: posterior var exact, the prior var from 1000 draws (se 4.5 %)
    assert np.all(np.abs(c.contraction - 10 / 11) < 3 * 0.045 / 11 + 3 * np.sqrt(2 / (300 * 39)) / 11)
    # RMSE of the posterior mean: sqrt(1/11 + 1/(11·40)) (posterior sd plus the draws' mean error)
    se = np.sqrt(1 / 11 * (1 + 1 / 40))
    assert np.all(np.abs(np.array(c.sharpness.rmse) - se) < 4 * se / np.sqrt(2 * 300))
    # energy score, all pairs (fair form), plain NumPy
    near = np.linalg.norm(x - t[:, None, :], axis=2).mean(axis=1)
    pair = np.linalg.norm(x[:, :, None, :] - x[:, None, :, :], axis=3).sum(axis=(1, 2)) / (40 * 39)
    assert c.sharpness.energy_pairs == "all pairs"
    assert c.sharpness.energy_score == pytest.approx(float(np.mean(near - 0.5 * pair)), rel=1e-12)


def test_same_bits_for_one_and_two_threads():
    t, x, ex = toy(150, 30, d=3, seed=10, corr=0.3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = from_posterior(t, x, logpdf=ex["logpdf"], n_swaps=49, seed=4)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        b = from_posterior(t, x, logpdf=ex["logpdf"], n_swaps=49, seed=4)
    finally:
        numba.set_num_threads(before)
    assert a.pvalue == b.pvalue and a.to_json() == b.to_json()
    np.testing.assert_array_equal(a.ranks, b.ranks)


def test_one_parameter_and_printing():
    t, x, _ = toy(200, 30, d=1, seed=11)
    c = from_posterior(t[:, 0], x[:, :, 0], names=["mu"], n_swaps=19, seed=5)
    assert c.d == 1 and c.names == ("mu",)
    assert [j.name for j in c.joint] == ["mu KS", "mu chi2", "mu |skew|", "mu |spread|", "TARP KS"]
    off = from_posterior(t[:, 0], x[:, :, 0], names=["mu"], n_swaps=19, seed=5, directional=False)
    assert [j.name for j in off.joint] == ["mu KS", "mu chi2", "TARP KS"]
    assert [j.p for j in off.joint] == [j.p for j in c.joint if "|" not in j.name]  # the same swapped sets
    text = str(c)
    assert "verdict:" in text and "parts: per parameter" in text and "energy score" in text
    assert set(c.to_frame()["name"]) == {"mu"}


BAD = [
    (lambda t, x: (t[:-1], x), {}, r"`draws` must hold one row per case of `truth`: N = 29"),
    (lambda t, x: (t, x[:, :, :1]), {}, r"`draws` must have the d = 2 parameters"),
    (lambda t, x: (t, x[:, :1]), {}, r"at least 2 draws per case \(S >= 2\), got S = 1"),
    (lambda t, x: (t, x[:, :, :, None]), {}, r"`draws` must have shape \(N, S, d\)"),
    (lambda t, x: (np.where(np.arange(30)[:, None] == 3, np.nan, t), x), {}, r"`truth` must be finite .* index 3"),
    (lambda t, x: (t, np.where(np.arange(30)[:, None, None] == 5, np.inf, x)), {},
     r"`draws` must be finite .* index 5"),
    (lambda t, x: (t, x), {"logpdf": lambda p, i: np.zeros(3)}, r"`logpdf\(x, i\)` must return one log density"),
    (lambda t, x: (t, x), {"references": np.zeros((30, 3))}, r"`references` must have shape \(N, d\) = \(30, 2\)"),
    (lambda t, x: (t, x), {"prior_draws": np.zeros((50, 3))}, r"`prior_draws` must have shape \(K, d\) .* d = 2"),
    (lambda t, x: (t, x), {"names": ["a"]}, r"`names` must give 2 distinct"),
    (lambda t, x: (t, x), {"n_swaps": 5}, r"n_swaps"),
]


@pytest.mark.parametrize("make, kw, match", BAD)
def test_bad_input(make, kw, match):
    t, x, _ = toy(30, 10, d=2, seed=12)
    t2, x2 = make(t, x)
    with pytest.raises(ValueError, match=match):
        from_posterior(t2, x2, **kw)


def test_ties_and_fewer_draws_than_parameters():
    # integer-valued posteriors (ties everywhere) and S + 1 <= d (a singular covariance: the depth's
    # pseudo-inverse): the ranks stay in (0, 1), every swapped set counts N cases per function, and a
    # calibrated discrete toy is not rejected at 1e-3
    t, x, _ = toy(300, 30, d=2, seed=13)
    c = from_posterior(np.round(3 * t), np.round(3 * x), n_swaps=99, seed=6)
    assert np.all((c.ranks > 0) & (c.ranks < 1)) and c.pvalue > 1e-3
    t, x, _ = toy(100, 3, d=5, n_obs=5, seed=14)
    mom = moments(t, x)
    lay = layout(mom, tuple("abcde"), 100, references=None, with_surprisal=False, max_pairs=3,
                 seed_seq=np.random.SeedSequence(0))
    run = run_swaps(t, x, lay, mom, None, 19, np.random.SeedSequence(1), np.random.SeedSequence(2))
    assert (run.counts.sum(axis=2) == 100).all() and np.all(np.isfinite(run.u))
    assert from_posterior(t, x, n_swaps=19, seed=1).verdict in ("valid", "invalid")


@pytest.mark.slow
def test_the_verdict_is_exact_on_relabelings_of_one_dataset():
    # the swap null's claim itself: given one dataset's multisets of S + 1 vectors, a relabeling (which
    # vector is the truth, uniform per case) is a draw of the null; the verdict rejects at 0.1 in 10 %
    # (150 checks: 17 s on the loaded VM, so slow)
    t, x, _ = toy(60, 19, d=3, seed=16, corr=0.3)
    pooled = np.concatenate([t[:, None], x], axis=1)
    rng = np.random.default_rng(0)
    p = []
    for r in range(150):
        j = rng.integers(0, 20, size=60)
        keep = np.ones((60, 20), bool)
        keep[np.arange(60), j] = False
        p.append(from_posterior(pooled[np.arange(60), j], pooled[keep].reshape(60, 19, 3), n_swaps=19, seed=r).pvalue)
    assert abs(np.mean(np.array(p) <= 0.1) - 0.1) <= 3 * np.sqrt(0.1 * 0.9 / 150)
