"""The exact swap null of an ensemble and the combined verdict of ``mcref.from_samples``
(docs/methods.md, "Exact null of an ensemble"; issue 38, part 3).

Checked against a naive swap (the kernel's E', u' and ranks recomputed with NumPy from the
row's values), the uniformity the swap must produce (which value plays y, its rank), the size
of the combined verdict on calibrated ensembles (binomial tests), its power, and bit-identical
results for a seed whatever the thread count."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

import mcref
from mcref.verdict import _ensemble as ens


def ensemble(seed, M: int, m: int, *, law: str = "normal", spread: float = 1.0):
    """y from the predictive law N(mu, sd²) (or a unit-variance Laplace scaled by sd), the m
    members from the same law with their spread times ``spread`` (1: calibrated)."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=M)
    sd = rng.uniform(0.3, 1.2, M)
    eps = rng.standard_normal((M, m + 1)) if law == "normal" else rng.laplace(size=(M, m + 1)) / np.sqrt(2)
    return mu + sd * eps[:, 0], mu[:, None] + spread * sd[:, None] * eps[:, 1:]


def combined(y, draws, seed, n_swaps=99):
    """The combined verdict alone (what from_samples computes, without its other parts)."""
    E = y - draws.mean(axis=1)
    u = draws.std(axis=1, ddof=1)
    pit = mcref.rank_calibration(y, draws, seed=seed)
    return ens.ensemble_verdict(y, draws, E, u, pit, levels=(0.5, 0.9, 0.95), n_swaps=n_swaps, seed=seed)


def test_swap_matches_a_naive_swap_and_draws_uniformly():
    """Each swapped row is one of the row's m + 1 values as y with the others as members (E', u'
    as NumPy computes them), its rank among them is the randomized rank's integer part, and
    which value plays y, its rank and c' are uniform."""
    M, m, n = 40, 4, 500
    y, draws = ensemble(1, M, m)
    E, u, c = ens.swapped_sets(y, draws, n, seed=3)
    vals = np.concatenate([y[:, None], draws], axis=1)
    T = vals.sum(axis=1)
    yp = (E + T / m) * m / (m + 1)  # E' = y' - (T - y')/m
    pick = np.abs(vals[None, :, :] - yp[:, :, None]).argmin(axis=2)  # (n, M): which value is y'
    assert np.allclose(np.take_along_axis(vals[None].repeat(n, 0), pick[..., None], 2)[..., 0], yp, atol=1e-9)
    keep = np.ones((n, M, m + 1), dtype=bool)
    np.put_along_axis(keep, pick[..., None], False, axis=2)
    others = vals[None].repeat(n, 0)[keep].reshape(n, M, m)
    assert np.allclose(u, others.std(axis=2, ddof=1), rtol=1e-12)
    assert np.allclose(E, yp - others.mean(axis=2), atol=1e-12)
    rank = (others < yp[..., None]).sum(axis=2)
    assert np.array_equal(np.floor(c * (m + 1)).astype(int), rank)
    # uniform: which of the m + 1 values plays y, and its rank (exact under exchangeability)
    for k in (pick, rank):
        counts = np.bincount(k.ravel(), minlength=m + 1)
        assert st.chisquare(counts).pvalue > 0.01
    assert st.kstest(c.ravel()[:5000], "uniform").pvalue > 0.01


def test_ties_keep_the_rank_randomized_within_the_tie():
    """With tied values the swapped rank is uniform among the tie's positions (as
    mcref.rank_calibration) and the spread is computed from the other values."""
    y = np.array([1.0, 0.0, 2.0])
    draws = np.array([[1.0, 1.0, 3.0, 0.0], [0.0, 5.0, 1.0, 2.0], [2.0, 2.0, 2.5, 1.0]])
    E, u, c = ens.swapped_sets(y, draws, 400, seed=0)
    r = np.floor(c * 5).astype(int)
    # row 0 holds 0, 1, 1, 1, 3: a swapped 1 has one value below and ranks 1, 2 or 3
    one = np.isclose(E[:, 0], 1.0 - (6.0 - 1.0) / 4)
    assert one.any() and set(np.unique(r[one, 0])) == {1, 2, 3}
    assert np.allclose(u[one, 0], np.std([0.0, 1.0, 1.0, 3.0], ddof=1))


def test_readme_ensemble_is_no_longer_invalid():
    """README's calibrated 20-member Gaussian ensemble (rng 0, seed 0): validate's part calls it
    invalid (ZMS, ENCE); the combined verdict does not."""
    rng = np.random.default_rng(0)
    mu = rng.normal(size=1000); sd = rng.uniform(0.2, 0.8, 1000)
    y = mu + sd * rng.standard_normal(1000)
    draws = mu[:, None] + sd[:, None] * rng.standard_normal((1000, 20))
    check = mcref.from_samples(y, draws, verdict=False, seed=0, n_swaps=199)
    assert check.combined is not None and check.verdict == "valid" == check.combined.verdict
    assert [t.name for t in check.combined.tests][:5] == ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    text = str(check)
    assert "combined verdict: valid" in text and "min-p over 13 tests" in text and "199 swapped sets" in text
    rec = check.record()
    assert rec["combined"]["verdict"] == "valid" and len(rec["combined"]["tests"]) == 13


def test_observed_statistics_match_their_references():
    """The data's value of each combined test equals its reference computation: validate's
    statistics, scipy's χ² and KS of the ranks, the coverage, and the local-coverage sum
    Σ n_b (LCP_b − p)²/(p(1 − p)) over the bins of mcref.diagnostics.lcp."""
    y, draws = ensemble(21, 400, 8)
    chk = mcref.from_samples(y, draws, verdict=False, seed=3, n_swaps=19)
    obs = {t.name: t.observed for t in chk.combined.tests}
    E, u = chk.dataset.E, chk.dataset.u
    for name in ("ZMS", "RCE", "CC", "ENCE", "ZMSE"):
        nb = mcref.binning.default_n_bins(E.size)  # validate's bins at M = 400: 13
        assert obs[name] == pytest.approx(mcref.statistic(name, E, u, n_bins=nb), rel=1e-12)
    assert obs["ranks chi2"] == pytest.approx(chk.uniformity.chi2, rel=1e-12)
    assert obs["ranks KS"] == pytest.approx(st.kstest(chk.pit, "uniform").statistic, rel=1e-12)
    for row in chk.coverage:
        assert obs[f"coverage {row.level:g}"] == pytest.approx(row.observed, rel=1e-12)
    for loc in chk.local:
        d, p = loc.diagnostic, loc.level
        want = float(np.sum(d.counts * (d.value - p) ** 2) / (p * (1 - p)))
        assert obs[f"LCP {p:g} | {loc.along}"] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("law", ["normal", "laplace"])
@pytest.mark.parametrize("m", [5, 20])
def test_size_of_the_combined_verdict(law, m):
    """Calibrated ensembles: the combined p is uniform on its grid, so P(p ≤ a) = a at a = 0.05
    and 0.25 (30 sets per cell; the slow test runs 300)."""
    ps = np.array([combined(*ensemble([7, m, k], 120, m, law=law), seed=k).p for k in range(30)])
    for a in (0.05, 0.25):
        assert st.binomtest(int((ps <= a).sum()), ps.size, a).pvalue > 0.01, (a, np.sort(ps))


@pytest.mark.slow
@pytest.mark.parametrize("law", ["normal", "laplace"])
@pytest.mark.parametrize("m", [5, 20])
def test_size_of_the_combined_verdict_many_sets(law, m):
    ps = np.array([combined(*ensemble([8, m, k], 300, m, law=law), seed=k).p for k in range(300)])
    for a in (0.05, 0.25):
        assert st.binomtest(int((ps <= a).sum()), ps.size, a).pvalue > 0.01, (a, np.mean(ps <= a))


@pytest.mark.parametrize("spread", [0.7, 1.4])
def test_power_against_under_and_over_dispersed_members(spread):
    """Members' spread × 0.7 or × 1.4 (M = 300, m = 20): every set is rejected at the floor
    p = 1/100 (measured: 100 % of sets at M = 1000, docs/methods.md)."""
    for k in range(2):
        res = combined(*ensemble([9, k], 300, 20, spread=spread), seed=k)
        assert res.verdict == "invalid" and res.p == pytest.approx(0.01)


def test_same_seed_same_bits_whatever_the_thread_count():
    import numba

    y, draws = ensemble(11, 200, 6)
    x = np.random.default_rng(0).uniform(size=200)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = mcref.from_samples(y, draws, x=x, verdict=False, seed=5, n_swaps=40)
        numba.set_num_threads(max(1, min(2, numba.config.NUMBA_NUM_THREADS)))
        b = mcref.from_samples(y, draws, x=x, verdict=False, seed=5, n_swaps=40)
    finally:
        numba.set_num_threads(old)
    assert np.array_equal(a.combined.samples, b.combined.samples) and a.combined.p == b.combined.p
    assert len(a.combined.tests) == 16 and a.combined.tests[-1].name == "LCP 0.95 | x"  # along x too
    c = mcref.from_samples(y, draws, x=x, verdict=False, seed=6, n_swaps=40)
    assert not np.array_equal(a.combined.samples, c.combined.samples)
    # the ranks and the validation seeds are those of before the swaps existed (children 0 and 1)
    assert np.array_equal(a.pit, mcref.rank_calibration(y, draws, seed=np.random.SeedSequence(5).spawn(1)[0]))


def test_power_of_two_units_give_the_same_bits():
    """Every statistic is scale-free and × 4 is exact in floating point: the same swapped
    statistics and the same p-values."""
    y, draws = ensemble(12, 150, 5)
    a = mcref.from_samples(y, draws, verdict=False, seed=2, n_swaps=30)
    b = mcref.from_samples(4 * y, 4 * draws, verdict=False, seed=2, n_swaps=30)
    assert np.array_equal(a.combined.samples, b.combined.samples) and a.combined.p == b.combined.p


def test_no_swap_null_falls_back_with_a_note_and_bad_n_swaps_is_named():
    y, draws = ensemble(13, 100, 4)
    draws[3] = [1.0, 1.0, 1.0, 2.0]
    y[3] = 1.0  # four of the five values equal: a swap can leave members of zero spread
    res = mcref.from_samples(y, draws, verdict=False, seed=1, n_swaps=30)
    assert res.combined is None and any("no combined verdict" in n and "row 3" in n for n in res.notes)
    assert res.verdict in ("valid", "invalid")
    assert mcref.from_samples(y[:50], draws[:50], verdict=False, seed=1, n_swaps=0).combined is None
    with pytest.raises(ValueError, match=r"`n_swaps` must be an integer >= 19, got 5"):
        mcref.from_samples(y, draws, verdict=False, n_swaps=5)
