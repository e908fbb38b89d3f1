"""Simulated references: draws reproduced independently, exact χ² values, CRN, determinism."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sst

import naive
import mcref
from mcref import exact
from mcref.generative import get_distribution
from mcref.kernels.generative import transform
from mcref.kernels.rng import chunk_states, jump, repeat_states
from mcref.kernels.variates import fill_gamma, fill_normal
from mcref.reference import CHUNK, _mix_state, simulate, simulated_reference

ALL = ["ZMS", "MZ", "VarZ", "MSE", "MV", "RCE", "RCE2", "NLL", "CC", "ENCE", "ZMSE", "UCE"]


def _draws(u_sorted, dist, n_mc, seed):
    """Re-create the engine's ε for every repeat from its documented streams: per block of CHUNK
    repeats one xoshiro256** normal state (``chunk_states``), and for t(ν) a χ²_ν state keyed by
    the block and the distribution (``_mix_state``); repeat r of a block draws its row from the
    block's states jumped r times (2¹²⁸ steps each, ``jump``)."""
    d = get_distribution(dist)
    ss = np.random.SeedSequence(seed)
    n_chunks = -(-n_mc // CHUNK)
    states = chunk_states(np.random.SeedSequence(seed), n_chunks)
    out = []
    for c in range(n_chunks):
        zs = states[c].copy()
        vs = _mix_state(ss, c, d) if d.needs_mixing else None
        for r in range(min(CHUNK, n_mc - c * CHUNK)):
            z = np.empty(u_sorted.size)
            fill_normal(zs.copy(), z)
            jump(zs)
            v = z
            if vs is not None:
                v = np.empty_like(z)
                fill_gamma(vs.copy(), 0.5 * d.nu, v)
                v *= 2.0
                jump(vs)
            eps = np.empty(u_sorted.size)
            transform(d.code, d.nu if d.kind == "t" else 0.0, z, v, u_sorted[:1], eps)
            out.append(eps)
    return out


@pytest.mark.parametrize("dist", ["normal", "t6", "uniform", "laplace"])
def test_samples_equal_naive_statistics_on_same_draws(dist):
    rng = np.random.default_rng(3)
    u = rng.lognormal(0, 0.6, 700)
    u[::7] = u[0]  # ties in u
    n_mc = 40  # two chunks, the second partial
    sim = simulate(ALL, u, dists=[dist], n_mc=n_mc, n_bins=7, seed=11)
    us = np.sort(u, kind="stable")
    for r, eps in enumerate(_draws(us, dist, n_mc, 11)):
        E = us * eps
        for k, name in enumerate(ALL):
            want = naive.statistic(name, E, us, n_bins=7)
            np.testing.assert_allclose(sim.samples[0, k, r], want, rtol=1e-10, atol=1e-13, err_msg=name)


def test_zms_and_zmse_agree_with_exact_chi2_within_3_se():
    ds = mcref.datasets.load("Diffusion_RF")
    res = simulated_reference(["ZMS", "ZMSE"], ds.u, n_mc=20_000, n_bins=20, seed=2024)
    for name in ["ZMS", "ZMSE"]:
        ex = exact.exact_reference(name, ds.u, n_bins=20, method="exact")
        assert abs(res[name].mean - ex.mean) <= 3 * res[name].se, (name, res[name], ex)
        # the spread of the statistic too: sd within 3 of its own standard errors (≈ sd/√(2N))
        assert abs(res[name].sd - ex.sd) <= 3 * ex.sd / np.sqrt(2 * res[name].n_mc) * 1.5, name
    zms = res["ZMS"]
    m = ds.M
    assert zms.low == pytest.approx(sst.chi2.ppf(0.025, m) / m, abs=4 * zms.sd / np.sqrt(zms.n_mc) * 3)


def test_ence_matches_asymptotic_form_under_normal():
    ds = mcref.datasets.load("QM9_E")
    ref = simulated_reference("ENCE", ds.u, n_mc=4000, seed=7)
    asym = exact.exact_reference("ENCE", ds.u, method="asymptotic")
    # docs/methods.md, "Exact and asymptotic references": about three digits for normal D; allow 1 % plus 3 Monte Carlo se
    assert abs(ref.mean - asym.mean) <= 0.01 * asym.mean + 3 * ref.se


def test_method_exact_and_asymptotic_route_to_mcref_exact():
    u = np.random.default_rng(0).uniform(1, 2, 1000)
    r = simulated_reference("ZMS", u, method="exact")
    assert r.method == "exact" and r.mean == 1.0 and r.se == 0.0
    assert r.low == pytest.approx(sst.chi2.ppf(0.025, 1000) / 1000)
    r = simulated_reference("ZMSE", u, method="asymptotic", dist="t6", n_bins=10)
    assert r.mean == pytest.approx(np.mean(np.sqrt((6.0 - 1) / 100) * np.sqrt(2 / np.pi)), rel=1e-12)
    with pytest.raises(ValueError):
        simulated_reference("CC", u, method="exact")


def test_same_seed_bit_identical_across_thread_counts_and_calls():
    ds = mcref.datasets.load("Diffusion_RF")
    u = ds.u
    # every kind of drawn D: the normal stream, a mixing stream, a quantile map, the empirical
    # table and the permutation D's own stream
    kw = dict(dists=["normal", "t6", "laplace", "empirical", "permutation"], E=ds.E, n_mc=200, seed=42)
    a = simulate(["CC", "ENCE", "ZMSE", "ZMS"], u, n_threads=1, **kw).samples
    b = simulate(["CC", "ENCE", "ZMSE", "ZMS"], u, n_threads=2, **kw).samples
    c = simulate(["CC", "ENCE", "ZMSE", "ZMS"], u, n_threads=5, **kw).samples
    assert np.array_equal(a, b) and np.array_equal(a, c)
    d = simulate(["CC", "ENCE", "ZMSE", "ZMS"], u, n_threads=2, **kw).samples
    assert np.array_equal(b, d)
    e = simulate(["CC", "ENCE", "ZMSE", "ZMS"], u, dists=["normal"], n_mc=200, seed=43).samples
    assert not np.array_equal(a[0], e[0])


def test_numba_thread_count_does_not_change_results(tmp_path):
    code = (
        "import numpy as np, mcref;"
        "u = mcref.datasets.load('Diffusion_RF').u;"
        "s = mcref.simulate(['CC','ENCE'], u, dists=['normal','t6'], n_mc=100, seed=9).samples;"
        f"np.save(r'{tmp_path / 'x.npy'}', s)"
    )
    env = {**__import__("os").environ, "NUMBA_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    u = mcref.datasets.load("Diffusion_RF").u
    s = mcref.simulate(["CC", "ENCE"], u, dists=["normal", "t6"], n_mc=100, seed=9).samples
    assert np.array_equal(np.load(tmp_path / "x.npy"), s)


def test_common_random_numbers_each_dist_independent_of_the_others():
    u = mcref.datasets.load("Diffusion_RF").u
    both = simulate(["ENCE", "CC"], u, dists=["normal", "t6"], n_mc=96, seed=5).samples
    alone_n = simulate(["ENCE", "CC"], u, dists=["normal"], n_mc=96, seed=5).samples
    alone_t = simulate(["ENCE", "CC"], u, dists=["t6"], n_mc=96, seed=5).samples
    assert np.array_equal(both[0], alone_n[0]) and np.array_equal(both[1], alone_t[0])


def test_paired_se_smaller_than_unpaired_on_real_data():
    ds = mcref.datasets.load("Perovskite_LR")
    sim = simulate(["CC", "ENCE", "ZMSE"], ds.u, dists=["normal", "t6"], n_mc=2000, seed=3)
    for name in ["CC", "ENCE", "ZMSE"]:
        p = sim.paired_difference(name, "normal", "t6")
        assert p.se < 0.9 * p.se_unpaired, p  # independent draws: ratio 1 ± 0.02
        # paired se is the sd of the differences
        x, y = sim.samples[0, sim.names.index(name)], sim.samples[1, sim.names.index(name)]
        assert p.se == pytest.approx(np.std(x - y, ddof=1) / np.sqrt(x.size))


def test_reference_result_fields_and_keep_samples():
    u = np.random.default_rng(1).uniform(0.5, 1.5, 500)
    r = simulated_reference("CC", u, n_mc=300, seed=0, keep_samples=True)
    assert r.samples.shape == (300,)
    assert r.mean == pytest.approx(r.samples.mean(), rel=1e-14)
    assert r.se == pytest.approx(r.samples.std(ddof=1) / np.sqrt(300))
    assert (r.low, r.high) == tuple(np.quantile(r.samples, [0.025, 0.975]))
    many = simulated_reference(["ZMS", "CC"], u, n_mc=300, seed=0)
    assert set(many) == {"ZMS", "CC"} and many["CC"].mean == r.mean
    kw = simulated_reference(None, u, names=["ZMS", "CC"], n_mc=300, seed=0)
    assert kw["CC"].mean == r.mean and kw["ZMS"].mean == many["ZMS"].mean
    with pytest.raises(ValueError, match="not both"):
        simulated_reference("CC", u, names=["ZMS"], n_mc=10)


def test_empirical_dist_uses_the_data_z():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2, 400)
    E = u * rng.choice([-2.0, -0.5, 0.5, 2.0], size=400)
    sim = simulate(["ZMS"], u, dists=["empirical"], E=E, n_mc=200, seed=1)
    zs = np.sort(((E / u) - (E / u).mean()) / (E / u).std())
    assert sim.dists[0].values == pytest.approx(zs)
    with pytest.raises(ValueError, match="empirical"):
        simulate(["ZMS"], u, dists=["empirical"], n_mc=10)


def test_user_sampler_is_checked_and_used():
    u = np.random.default_rng(0).uniform(0.5, 2, 300)

    def good(rng, size):
        return rng.choice([-1.0, 1.0], size=size)

    r = simulated_reference("ZMS", u, dist=good, n_mc=50, seed=0)
    assert r.mean == pytest.approx(1.0, abs=1e-12)  # ε² = 1 exactly
    with pytest.raises(ValueError, match="unit-variance"):
        simulated_reference("ZMS", u, dist=lambda rng, size: 2 * rng.standard_normal(size), n_mc=10)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dist="t2"), "ν > 2"),
        (dict(dist="t(1.5)"), "ν > 2"),
        (dict(dist="cauchy"), "unknown distribution"),
        (dict(n_mc=0), "n_mc"),
        (dict(n_bins=50), "min_count"),
        (dict(method="bogus"), "method"),
    ],
)
def test_bad_input(kwargs, match):
    u = np.random.default_rng(0).uniform(0.5, 2, 300)
    with pytest.raises(ValueError, match=match):
        simulated_reference("ENCE", u, **{"n_mc": 10, **kwargs})


def test_bad_u():
    with pytest.raises(ValueError, match="> 0"):
        simulate(["ZMS"], [1.0, -1.0, 2.0], n_mc=10)
    with pytest.raises(ValueError, match="finite"):
        simulate(["ZMS"], [1.0, np.nan, 2.0], n_mc=10)
    with pytest.raises(ValueError, match="twice"):
        simulate(["ZMS"], [1.0, 1.5, 2.0], dists=["t6", "t(6)"], n_mc=10)


def test_all_dists_in_one_call_equal_the_documented_draws_of_each():
    """One kernel call evaluates every D on the chunk's one normal draw per repeat: each D's
    samples equal the statistics of its own re-created draws (normal, t(6) with its own χ²
    stream, the empirical D through its quantile function), whatever the other D."""
    rng = np.random.default_rng(21)
    u = rng.lognormal(0, 0.6, 600)
    E = u * rng.standard_t(5, 600)
    names = ["ZMS", "CC", "ENCE", "ZMSE"]
    n_mc = 40
    sim = simulate(names, u, dists=["t6", "empirical", "normal"], E=E, n_mc=n_mc, n_bins=6, seed=8)
    us = np.sort(u, kind="stable")
    table = get_distribution("empirical", Z=E / u).table
    z = np.concatenate([np.atleast_2d(e) for e in _draws(us, "normal", n_mc, 8)])
    for d, dist in enumerate(["t6", "empirical", "normal"]):
        if dist == "empirical":
            rows = []
            for r in range(n_mc):
                eps = np.empty(us.size)
                transform(get_distribution("empirical", Z=E / u).code, 0.0, z[r], z[r], table, eps)
                rows.append(eps)
        else:
            rows = _draws(us, dist, n_mc, 8)
        for r, eps in enumerate(rows):
            for k, name in enumerate(names):
                want = naive.statistic(name, us * eps, us, n_bins=6)
                np.testing.assert_allclose(sim.samples[d, k, r], want, rtol=1e-10, atol=1e-13, err_msg=(dist, name))


def test_kernel_split_into_calls_equals_one_call():
    """Each repeat owns its streams, so the repeats may run as any split into kernel calls (the
    tasks of the threads): the samples equal one call's bit for bit."""
    from mcref.kernels.fastrank import make_rank_scratch
    from mcref.kernels.generative import NORMAL, PERMUTATION, STUDENT_T
    from mcref.generative import permutation_distribution
    from mcref.kernels.reference import mc_chunk_kernel
    from mcref.kernels.stats import CC, ENCE, ZMS
    from mcref.reference import _prepare_u

    rng = np.random.default_rng(4)
    u = rng.lognormal(0, 0.5, 500)
    fx = _prepare_u(u, 5)
    m = u.size
    codes = np.array([ZMS, CC, ENCE], dtype=np.int64)
    dcodes = np.array([NORMAL, STUDENT_T, PERMUTATION], dtype=np.int64)
    nus = np.array([0.0, 6.0, 0.0])
    ss = np.random.SeedSequence(3)
    z0 = repeat_states(chunk_states(ss, 1), CHUNK, 0, 12)
    v0 = np.zeros((3, 12, 4), dtype=np.uint64)
    v0[1] = repeat_states(_mix_state(ss, 0, get_distribution("t6"))[None], CHUNK, 0, 12)
    perm = rng.standard_normal(m)
    v0[2] = repeat_states(_mix_state(ss, 0, permutation_distribution(perm))[None], CHUNK, 0, 12)

    def run(parts):
        outs, lo = [], 0
        for n in parts:
            zs, vs = z0[lo:lo + n].copy(), v0[:, lo:lo + n].copy()
            lo += n
            out = np.empty((3, 3, n))
            fy = fx.with_features(())
            mc_chunk_kernel(codes, np.full(codes.size, -1), dcodes, nus, np.ones(3), n, zs, vs, np.empty((1, m)),
                            np.empty((1, m)), fx.u[:1], perm, fx.u, fx.starts, fx.su2_bins, fx.su2, fx.slnu2, fx.xu,
                            fx.sxx, fy.xlab, fy.xacc0, fy.xnb, np.empty(m), np.empty(m), make_rank_scratch(m),
                            np.empty((3, 0, m)), out, *([np.empty(0, dtype=np.int64)] * 5))
            outs.append(out)
        return np.concatenate(outs, axis=2)

    one = run([12])
    assert np.array_equal(one, run([5, 7])) and np.array_equal(one, run([1] * 12))
    assert not np.array_equal(one[0], one[1])
    # the permutation D keeps the data's multiset of Z: its ZMS is mean(Z²) up to the order of the sum
    np.testing.assert_allclose(one[2, 0], np.mean(perm**2), rtol=1e-13)


def test_forwarding_functions_show_and_check_their_keywords():
    """bootstrap/simulated_reference take bootstrap_many's/simulate's keywords (one definition):
    help() shows them, and an unknown one is a TypeError naming the function called."""
    import inspect

    sig = inspect.signature(mcref.simulated_reference)
    assert {"n_mc", "n_bins", "seed", "n_threads"} <= set(sig.parameters) and "dists" not in sig.parameters
    assert set(inspect.signature(mcref.bootstrap).parameters) - {"name"} == \
        set(inspect.signature(mcref.bootstrap_many).parameters) - {"names"}
    u = np.linspace(0.5, 2.0, 50)
    with pytest.raises(TypeError, match=r"simulated_reference\(\) got an unexpected keyword argument 'nmc'"):
        mcref.simulated_reference("ZMS", u, nmc=10)
    with pytest.raises(TypeError, match=r"bootstrap\(\) got an unexpected keyword argument 'nboot'"):
        mcref.bootstrap("ZMS", u, u, nboot=10)


def test_permutation_d_in_the_shared_call_leaves_the_other_d_alone():
    """The permutation D joins the kernel call of the drawn D with its own stream: the other
    D's samples are bit-identical with and without it, its own samples do not depend on the
    other D, and every repeat keeps the data's multiset of Z (ZMS = mean Z²)."""
    from mcref.generative import permutation_distribution

    rng = np.random.default_rng(5)
    u = rng.lognormal(0, 0.5, 400)
    E = u * rng.standard_t(4, 400)
    perm = permutation_distribution(E / u)
    names = ["ZMS", "CC", "ENCE"]
    both = simulate(names, u, dists=["normal", perm, "t6"], E=E, n_mc=70, n_bins=5, seed=2)
    base = simulate(names, u, dists=["normal", "t6"], E=E, n_mc=70, n_bins=5, seed=2)
    alone = simulate(names, u, dists=[perm], E=E, n_mc=70, n_bins=5, seed=2)
    assert np.array_equal(both.samples[[0, 2]], base.samples)
    assert np.array_equal(both.samples[1], alone.samples[0])
    np.testing.assert_allclose(alone.samples[0, 0], np.mean((E / u) ** 2), rtol=1e-13)
    assert np.unique(alone.samples[0, 1]).size > 60  # CC varies from shuffle to shuffle
