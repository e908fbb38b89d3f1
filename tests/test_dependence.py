"""Dependent test sets: groups= and order= (docs/methods.md, "Dependent test sets").

Every kernel is checked against a naive NumPy expansion on the same random draws
(``tests/naive.py``): the unit weights, the statistics of a resample, the delete-one-group
jackknife, the cluster-studentized scale statistic, the permutation by units; the block length
against arch (when installed) and a hand computation; determinism over thread counts; the bad
inputs; and, marked slow, the size of the labelled rule on a small Monte Carlo.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numba
import numpy as np
import pytest

import mcref
from mcref.core._dependence import design_effect, icc, optimal_block_length, units_for
from mcref.core._prepared import prepare
from mcref.kernels.rng import (bounded_one, chunk_states, keyed_states, multinomial_counts, next_double,
                              repeat_states)
from mcref.kernels.rng import COUNT, STACK_ROWS
from mcref.kernels.stats import CC, ENCE, RCE, UCE, ZMS, ZMSE
from mcref.kernels.units import (BLOCKS, CIRCULAR, GROUPS, MOVING, ROWS, STATIONARY, boot_units_kernel,
                                 permute_units_into, unit_weights_into, units_scratch)

import naive

STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE")
CODES = np.array([ZMS, RCE, CC, ENCE, ZMSE, UCE], dtype=np.int64)


def clustered(seed=0, G=40, size=None, rho=0.5):
    """A calibrated clustered set: group σ, 10 % jitter, ε = √ρ·shared + √(1 − ρ)·own."""
    rng = np.random.default_rng(seed)
    sizes = np.full(G, 12) if size is None else size(rng, G)
    g = np.repeat(np.arange(sizes.size), sizes)
    u = np.sqrt(1 / rng.gamma(4, 0.25, sizes.size))[g] * np.exp(0.1 * rng.normal(size=g.size))
    eps = math.sqrt(rho) * rng.normal(size=sizes.size)[g] + math.sqrt(1 - rho) * rng.normal(size=g.size)
    perm = rng.permutation(g.size)  # rows of a group need not be adjacent
    return (u * eps)[perm], u[perm], g[perm]


def _units(E, u, **labels):
    prep = prepare(E, u, 4, min_count=1)
    return prep, units_for(prep.order, z2=prep.z2, **labels)


# --------------------------------------------------------------------------- unit weights


def test_group_weights_are_the_drawn_group_counts_expanded():
    E, u, g = clustered()
    prep, un = _units(E, u, groups=g)
    states = chunk_states(np.random.SeedSequence(5), 2)
    w = np.empty((70, E.size), dtype=COUNT)
    n = np.empty(70, dtype=np.int64)
    unit_weights_into(states, 64, GROUPS, 0, 0, un.gid, un.opos, un.n_units, w, n)
    for r in (0, 63, 64, 69):  # the first replicates of each chunk's stream
        s = states[r // 64].copy()
        cnt = np.empty(un.n_units, dtype=np.int64)
        stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
        for _ in range(r % 64 + 1):
            multinomial_counts(s, un.n_units, un.n_units, cnt, stack)
        assert cnt.sum() == un.n_units
        np.testing.assert_array_equal(w[r], naive.cluster_weights(cnt, un.gid))
        assert n[r] == int(np.sum(cnt * un.sizes))


def test_row_weights_are_the_iid_resamples():
    """Unit kind ROWS draws exactly the multiplicities of the i.i.d. bootstrap."""
    rng = np.random.default_rng(1)
    u = rng.uniform(0.5, 2, 300)
    states, _ = mcref.resampling._bootstrap.replicate_states(np.random.SeedSequence(3), 10)  # one stream per replicate
    w = np.empty((10, 300), dtype=COUNT)
    unit_weights_into(states, 1, ROWS, 0, 0, np.zeros(300, np.int64), np.arange(300), 1, w, np.empty(10, np.int64))
    idx = mcref.resampling._bootstrap.resample_indices(u, 10, np.random.SeedSequence(3))
    order = np.argsort(u, kind="stable")
    pos = np.empty(300, dtype=np.int64)
    pos[order] = np.arange(300)
    for r in range(10):
        np.testing.assert_array_equal(w[r], np.bincount(pos[idx[r]], minlength=300))


@pytest.mark.parametrize("scheme,code", [("circular", CIRCULAR), ("moving", MOVING), ("stationary", STATIONARY)])
@pytest.mark.parametrize("block", [1, 7, 25])
def test_block_weights_against_the_blocks_written_out(scheme, code, block):
    rng = np.random.default_rng(2)
    m = 203
    E, u = rng.normal(size=m), rng.uniform(0.5, 2, m)
    t = rng.permutation(m).astype(float)  # the order is not the input order
    prep, un = _units(E, u, order=t, block_length=block, block_method=scheme)
    states = chunk_states(np.random.SeedSequence(9), 1)
    w = np.empty((5, m), dtype=COUNT)
    unit_weights_into(states, 64, BLOCKS, code, block, un.gid, un.opos, 0, w, np.empty(5, np.int64))
    s = states[0].copy()
    for r in range(5):
        rows = naive.block_rows(m, block, scheme, lambda n: int(bounded_one(s, n)), lambda: float(next_double(s)))
        assert len(rows) == m
        cover = np.bincount(rows, minlength=m)  # per order position
        np.testing.assert_array_equal(w[r], cover[un.opos])


# --------------------------------------------------------------------------- statistics on a resample


@pytest.mark.parametrize("labels", ["groups", "order"])
def test_resample_statistics_equal_the_statistic_on_the_expanded_data(labels):
    E, u, g = clustered(seed=3)
    lab = {"groups": g} if labels == "groups" else {"order": np.arange(E.size), "block_length": 9}
    n_bins = 4
    prep, un = _units(E, u, **lab)
    # one state per replicate (the kernel's convention), tasks of 4 replicates
    states = repeat_states(chunk_states(np.random.SeedSequence(11), 1), 64, 0, 6)
    tstates = repeat_states(keyed_states(np.random.SeedSequence(11), 1, 7), 64, 0, 6)
    out = np.empty((CODES.size, 6))
    no_ties = np.empty((0, 2), np.int64)
    scratch = units_scratch(CODES, no_ties, E.size, n_bins, un.n_units)
    for r0, r1 in ((0, 4), (4, 6)):  # two tasks, the second on the first's scratch
        boot_units_kernel(CODES, un.kernel_kind, un.scheme, un.block_length, un.gid, un.opos, un.n_units, states,
                          tstates, r0, r1, no_ties, prep.z, prep.zshift, prep.z2, prep.E2, prep.u2, prep.lnu2, n_bins,
                          prep.ugs, *prep.slots(), prep.egs, scratch, out)
    w = np.empty((6, E.size), dtype=COUNT)
    n = np.empty(6, dtype=np.int64)
    unit_weights_into(states, 1, un.kernel_kind, un.scheme, un.block_length, un.gid, un.opos, un.n_units, w, n)
    for r in range(6):
        idx = np.repeat(np.arange(E.size), w[r])  # u-sorted positions, copies adjacent: the stable order
        Ex, ux = prep.E[idx], prep.u[idx]
        for k, name in enumerate(STATS):
            assert out[k, r] == pytest.approx(naive.statistic(name, Ex, ux, n_bins), rel=1e-10, abs=1e-12), name


def test_group_jackknife_against_deleting_each_group():
    E, u, g = clustered(seed=4, size=lambda rng, G: rng.integers(3, 20, G))
    res = mcref.bootstrap_many(STATS, E, u, n_bins=4, min_count=5, n_boot=200, groups=g, seed=1)
    prep, un = _units(E, u, groups=g)
    from mcref.resampling._bootstrap import unit_jackknife
    from mcref.stats import info

    jack = unit_jackknife([info(s) for s in STATS], prep, un)
    for k, name in enumerate(STATS):
        ref = naive.group_jackknife(name, E, u, g, 4)
        np.testing.assert_allclose(np.sort(jack[k]), np.sort(list(ref.values())), rtol=1e-10, atol=1e-13)
        d = np.mean(jack[k]) - jack[k]
        a = np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)
        assert res[name].acceleration == pytest.approx(a, rel=1e-9, abs=1e-14)


def test_group_numbering_does_not_depend_on_label_spelling_or_row_order():
    E, u, g = clustered(seed=5)
    a = mcref.bootstrap("ENCE", E, u, n_bins=4, n_boot=300, groups=g, seed=2)
    b = mcref.bootstrap("ENCE", E, u, n_bins=4, n_boot=300, groups=np.array([f"mol-{x:03d}" for x in 99 - g]),
                        seed=2)
    assert (a.low, a.high, a.bias) == (b.low, b.high, b.bias)


# --------------------------------------------------------------------------- permutation by units


def test_permutation_by_units_moves_whole_z_vectors_among_equal_sizes():
    E, u, g = clustered(seed=6, size=lambda rng, G: rng.choice([3, 5, 8], G))
    prep, un = _units(E, u, groups=g)
    s = chunk_states(np.random.SeedSequence(1), 1)[0].copy()
    uid = np.arange(un.n_perm_units, dtype=np.int64)
    out = np.full(E.size, np.nan)
    permute_units_into(s, prep.z, un.members, un.ustart, un.cstart, uid, np.empty_like(uid), out)
    vec = [tuple(prep.z[un.members[un.ustart[j]:un.ustart[j + 1]]]) for j in range(un.n_perm_units)]
    got = [tuple(out[un.members[un.ustart[j]:un.ustart[j + 1]]]) for j in range(un.n_perm_units)]
    assert sorted(got) == sorted(vec)  # a bijection of the units' Z-vectors, each intact
    size = {v: len(v) for v in vec}
    assert all(len(x) == size[x] for x in got)
    assert got != vec  # something moved
    # each group's members are one group (the permutation units are the groups)
    for j in range(un.n_perm_units):
        assert np.unique(un.gid[un.members[un.ustart[j]:un.ustart[j + 1]]]).size == 1


def test_blocks_along_the_order_are_consecutive():
    rng = np.random.default_rng(7)
    m = 101
    t = rng.permutation(m)
    prep, un = _units(rng.normal(size=m), rng.uniform(1, 2, m), order=t, block_length=10)
    along = un.opos[un.members]
    assert np.array_equal(np.sort(along), np.arange(m))
    for j in range(un.n_perm_units):
        seg = un.opos[un.members[un.ustart[j]:un.ustart[j + 1]]]
        assert np.all(np.diff(seg) == 1) and seg[0] % 10 == 0
    assert sorted(np.diff(un.ustart).tolist()) == [1] + [10] * 10


def test_level_exchange_gives_each_group_another_groups_level():
    from mcref.kernels.units import exchange_levels
    from scipy.stats import rankdata

    E, u, g = clustered(seed=14, size=lambda rng, G: rng.integers(2, 25, G))
    prep = prepare(E, u, 4, min_count=1)
    un = units_for(prep.order, groups=g, z2=prep.z2, us=prep.u)
    assert un.levels is not None  # unequal sizes: the u-levels are exchanged
    np.testing.assert_allclose(un.levels[un.gid] * un.ratios, prep.u, rtol=1e-14)
    m = E.size
    s = chunk_states(np.random.SeedSequence(2), 1)[0].copy()
    ustar, us, eps, xu = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    pi = np.empty(un.n_units, dtype=np.int64)
    o, su2, sln, sxx = exchange_levels(s, un.levels, un.ratios, un.gid, np.arange(un.n_units), pi, prep.z, ustar, us,
                                       eps, xu)
    assert sorted(pi) == list(range(un.n_units))  # a permutation of the groups
    np.testing.assert_allclose(ustar, un.levels[pi[un.gid]] * un.ratios, rtol=1e-15)
    for j in range(un.n_units):  # each group: one level, another group's, and its own pattern of u
        lv = ustar[un.gid == j] / un.ratios[un.gid == j]
        np.testing.assert_allclose(lv, un.levels[pi[j]], rtol=1e-12)
    assert np.all(np.diff(us) >= 0) and np.array_equal(us, ustar[o])
    np.testing.assert_array_equal(eps, prep.z[o])  # every row keeps its Z
    np.testing.assert_allclose(xu, rankdata(us) - (m + 1) / 2)
    assert su2 == pytest.approx(np.sum(us ** 2)) and sxx == pytest.approx(np.sum(xu ** 2))
    assert sln == pytest.approx(np.sum(np.log(us ** 2)))


def test_equal_sizes_permute_z_vectors_unequal_exchange_levels():
    E, u, g = clustered(seed=15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        a = mcref.validate(E, u, groups=g, n_boot=100, n_mc=100, n_bins=4, seed=1)
        g2 = g.copy()
        g2[g2 == 0] = 1  # one group of 24: unequal sizes
        b = mcref.validate(E, u, groups=g2, n_boot=100, n_mc=100, n_bins=4, seed=1)
    assert "Z-vectors permuted" in a.dependence.units and "u-levels exchanged" in b.dependence.units
    assert "u-levels exchanged" in str(b)
    # u-levels that follow the sizes are not exchangeable: Z-vectors permuted within sizes (exact)
    rng = np.random.default_rng(3)
    sizes = np.repeat([4, 8, 16, 32], 6)
    gg = np.repeat(np.arange(sizes.size), sizes)
    uu = (sizes ** -0.5)[gg] * np.exp(0.1 * rng.normal(size=gg.size))
    prep = prepare(uu * rng.normal(size=gg.size), uu, 4, min_count=1)
    un = units_for(prep.order, groups=gg, z2=prep.z2, us=prep.u)
    assert un.levels is None and un.level_size_p < 0.05 and un.n_classes == 4
    assert "follow their sizes" in un.describe()


def _issue38(seed=0, m=1500, err=True):
    """The reproducer of issue 38: i.i.d. rows, an adaptivity error along x (sd 1.4·u for x > 0,
    0.6·u else, ⟨σ²⟩ = ⟨u²⟩ kept), 80 arbitrary labels (unequal sizes, most sizes shared)."""
    rng = np.random.default_rng([777, seed])
    u = rng.lognormal(-1, .4, m)
    x = rng.normal(size=m)
    s = u * np.where(x > 0, 1.4, .6) if err else u.copy()
    s *= np.sqrt(np.mean(u ** 2) / np.mean(s ** 2))
    return s * rng.normal(size=m), u, x, rng.integers(0, 80, m)


def test_unequal_groups_move_z_vectors_then_exchange_levels(monkeypatch):
    """Groups of unequal sizes: one repeat of the permutation D is the permutation of whole
    Z-vectors among the groups of equal size, then the exchange of the groups' u-levels, both from
    the permutation D's stream; replayed here step by step from the kernel's own arguments (the same
    draws), ZMSE over the bins of x (against the set's scale c² = ZMS) matches the kernel's, and it
    varies (under the u-level exchange alone it could not: each row kept its Z and its x)."""
    import mcref.reference as R
    from mcref.kernels.units import exchange_levels
    from mcref.generative import get_distribution
    from mcref.stats import info

    E, u, x, g = _issue38(m=600)
    prep = prepare(E, u, 4, min_count=1)
    un = units_for(prep.order, groups=g, z2=prep.z2, us=prep.u)
    assert un.levels is not None and un.n_classes < un.n_perm_units  # u-levels exchanged; some sizes shared
    lab = np.digitize(x, np.quantile(x, [0.25, 0.5, 0.75]))[prep.order]  # 4 bins of x, per u-sorted point
    seen = {}
    real = R.mc_levels_kernel  # the permutation D with u-levels runs in its own kernel

    def spy(*a):
        names = real.py_func.__code__.co_varnames[:real.py_func.__code__.co_argcount]
        if not seen:
            seen.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in zip(names, a)})
        return real(*a)

    monkeypatch.setattr(R, "mc_levels_kernel", spy)
    z = prep.z
    c2 = float(np.mean(z * z))
    xi = info("ZMSE")
    sim = R.simulate_prepared([xi, replace(xi, name="ZMSE|x")], prep,
                              [get_distribution("permutation", Z=z)], n_mc=40, seed=5, features=[lab], grp=[-1, 0],
                              perm_scale=c2, units=un, n_threads=1)  # one thread: the first call is task 0
    m = z.size
    uid = np.arange(un.n_perm_units, dtype=np.int64)
    moved, ustar, us, eps, xu = np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    pi = np.empty(un.n_units, dtype=np.int64)
    got = sim.samples[0][1]
    for r in range(seen["n_rep"]):
        s = seen["vstates"][r].copy()  # the repeat's own stream
        permute_units_into(s, z, un.members, un.ustart, un.cstart, uid, np.empty_like(uid), moved)
        o, *_ = exchange_levels(s, un.levels, un.ratios, un.gid, np.arange(un.n_units), pi, moved, ustar, us, eps, xu)
        zb = np.bincount(lab[o], eps ** 2, 4) / np.bincount(lab[o], None, 4) / c2
        assert got[r] == pytest.approx(np.mean(np.abs(np.log(zb))), rel=1e-12)
    assert np.ptp(got) > 0.01  # the pairing of Z with x moves


def test_unequal_groups_find_the_adaptivity_error_of_issue_38():
    """Issue 38's reproducer: 80 arbitrary labels over i.i.d. rows with an adaptivity error along x.
    The u-level exchange alone kept every row's Z and x (ZMSE|x's reference sd 1e-17, p from rounding,
    'valid'); with the Z-vectors permuted among the groups of equal size the rows of x find it."""
    E, u, x, g = _issue38()
    tab = mcref.validate(E, u, x={"x": x}, groups=g, stats=("ZMSE",), n_boot=1000, seed=0)
    assert "u-levels exchanged" in tab.dependence.units and "Z-vectors permuted" in tab.dependence.units
    r = tab["ZMSE|x"]
    assert r.verdict == "invalid" and r.p_test <= 0.05
    assert r.sim["permutation"].sd > 0.1 * r.sim["permutation"].mean  # a reference that varies
    assert tab.joint.verdict == "invalid" and "ZMSE|x" in tab.joint.stats


def _distinct_sizes(seed=5):
    """25 groups of 8 … 32 rows (every size its own: M = 500), u-levels free of the sizes, an
    adaptivity error along x."""
    rng = np.random.default_rng(seed)
    sizes = np.arange(8, 33)
    g = np.repeat(np.arange(sizes.size), sizes)
    u = rng.lognormal(-1, .3, sizes.size)[g] * rng.lognormal(0, .2, g.size)
    x = rng.normal(size=g.size)
    return u * rng.normal(size=g.size) * np.where(x > 0, 1.3, .7), u, x, g


def test_a_permutation_reference_that_cannot_vary_gives_no_p():
    """Every group of a size of its own, u-levels exchangeable: the permutation can only exchange
    u-levels, each row keeps its Z and its x, so the rows of x are 'not testable' with the reason
    (no p, no p[permutation]) and leave the joint verdict; the rows of u stand. E and u times 3.7
    (the same Z up to rounding) move no p: nothing is decided by rounding."""
    from mcref.verdict._testable import X_FIXED_REASON

    E, u, x, g = _distinct_sizes()
    kw = dict(x={"x": x}, groups=g, stats=("ZMS", "CC", "ZMSE"), n_bins=5, n_boot=1000, seed=1)
    tab = mcref.validate(E, u, **kw)
    assert "Z never moves" in tab.dependence.units
    for nm in ("ZMSE|x",):
        r = tab[nm]
        assert (r.verdict, r.p_test, r.test, r.reason) == ("not testable", None, "none", X_FIXED_REASON)
        assert math.isnan(r.p_sim["permutation"]) and nm not in tab.joint.stats
        assert r.estimate > 0  # the estimate stays
    assert f"ZMSE|x: not testable: {X_FIXED_REASON}" in tab.notes
    assert {"CC", "ZMSE"} <= set(tab.joint.stats) and tab["CC"].p_test is not None
    big = mcref.validate(3.7 * E, 3.7 * u, **kw)
    assert [(r.name, r.verdict, r.p_test) for r in big.rows] == [(r.name, r.verdict, r.p_test) for r in tab.rows]
    assert big.joint.p == tab.joint.p


def test_degenerate_references_are_measured_too():
    """The safety net: a permutation reference whose range is at most 1e-9 of its size does not
    vary (a ZMSE over bins of x under the u-level exchange alone: its spread is rounding)."""
    from mcref.reference import Simulation
    from mcref.verdict._testable import degenerate, degenerate_rows
    from mcref.generative import get_distribution

    flat = 0.78 * (1 + 1e-16 * np.arange(50))
    assert degenerate(flat) and degenerate(np.zeros(5))
    assert not degenerate(0.78 + 1e-6 * np.arange(50))
    sim = Simulation(names=("ZMS", "CC", "ZMSE|x"), dists=(get_distribution("permutation", Z=np.ones(3)),),
                     samples=np.stack([[np.ones(50), np.linspace(0, 1, 50), flat]]), n_bins=4)
    out = degenerate_rows(sim, sim.names)
    assert list(out) == ["ZMSE|x"] and "does not vary" in out["ZMSE|x"]  # ZMS: untestable by definition


# --------------------------------------------------------------------------- scale test, diagnostics


def test_cluster_studentized_zms_against_the_sandwich_se():
    from mcref.verdict._scale_test import scale_test

    E, u, g = clustered(seed=8)
    z = E / u
    res = scale_test(z, ["ZMS"], n_boot=199, seed=0, clusters=np.unique(g, return_inverse=True)[1])
    t = (np.mean(z ** 2) - 1) / naive.cluster_se_zms(z, g)
    assert res.t["ZMS"] == pytest.approx(t, rel=1e-10)


def test_cluster_rce_is_the_intersection_with_a_t_reference_in_the_clusters():
    """RCE with clusters: p = max(p_boot, p_t); the bootstrap part is the cluster bootstrap-t alone
    (the t draws come after its streams); the random-intercept t(ν̂) reference's T have the
    location and spread of the bootstrap's T* (left-skewed, sd ≈ 1.3 here); without clusters RCE
    keeps the bootstrap-t alone."""
    from mcref.verdict._scale_test import _rce_test

    E, u, g = clustered(seed=11, size=lambda rng, G: rng.integers(2, 40, G))
    gid = np.unique(g, return_inverse=True)[1]
    res = _rce_test(E, u, 999, np.random.SeedSequence(3), clusters=gid)
    assert res.p["RCE"] == max(res.p_boot["RCE"], res.p_t["RCE"]) and res.nu > 2
    ts, tb = res.tsim[0], res.tstar[0]  # two approximations of the law of T: the same location and spread
    assert abs(np.median(ts) - np.median(tb)) < 0.3 and 0.75 < np.std(ts) / np.std(tb) < 1.33
    v, e = u * u, E * E
    eg, vg = np.bincount(gid, e), np.bincount(gid, v)
    r = eg.sum() / vg.sum()
    assert res.t["RCE"] == pytest.approx((r - 1) / (np.sqrt(np.sum((eg - r * vg) ** 2)) / vg.sum()), rel=1e-10)
    plain = _rce_test(E, u, 999, np.random.SeedSequence(3))
    assert plain.p_t == {} and plain.tsim is None and plain.p["RCE"] == plain.p_boot["RCE"]


def test_units_with_ties_do_not_depend_on_row_order():
    """Tied u and tied order values: each row's group number (groups numbered by their first point
    in ascending (u, Z²)) and block (tied order values taken in ascending (u, Z²)) are the same in
    any row order."""
    from mcref.core._prepared import prepare

    rng = np.random.default_rng(12)
    m = 240
    u = rng.choice([0.5, 1.0, 2.0], m)
    E = u * rng.normal(size=m)
    g = rng.integers(0, 30, m)
    t = rng.integers(0, 40, m)
    perm = rng.permutation(m)

    def units(idx, **lab):
        p = prepare(E[idx], u[idx], n_bins=2, ranks=False)
        un = units_for(p.order, **{k: v[idx] for k, v in lab.items()}, z2=p.z2, us=p.u, block_length=6
                       if "order" in lab else None)
        return p.E, p.u, un

    for lab in ({"groups": g}, {"order": t}):
        Ea, ua, a = units(np.arange(m), **lab)
        Eb, ub, b = units(perm, **lab)
        assert dict(zip(zip(ua, Ea), a.gid.tolist())) == dict(zip(zip(ub, Eb), b.gid.tolist()))  # each row's unit
        assert a.sizes.tolist() == b.sizes.tolist()


def test_icc_and_design_effect():
    E, u, g = clustered(seed=9, size=lambda rng, G: rng.integers(2, 30, G))
    z = E / u
    gid = np.unique(g, return_inverse=True)[1]
    assert icc(z, gid) == pytest.approx(naive.icc_anova(z, g), rel=1e-10)
    assert icc(z * z, gid) == pytest.approx(naive.icc_anova(z * z, g), rel=1e-10)
    # closed form: clusters of n with one shared value per cluster and no within spread: d = n
    assert design_effect(np.repeat(np.arange(10.0), 7), np.repeat(np.arange(10), 7)) == pytest.approx(7.0)
    assert design_effect(np.arange(50.0), np.arange(50) // 1 * 0 + np.arange(50)) == pytest.approx(1.0)


def test_icc_recovers_the_generating_correlation():
    """Monte Carlo expectation: ρ = 0.6 clusters of 20; the estimate's sd at G = 400 is about 0.02."""
    E, u, g = clustered(seed=10, G=400, size=lambda rng, G: np.full(G, 20), rho=0.6)
    d = mcref.dependence(E, u, groups=g)
    assert d.icc_z == pytest.approx(0.6, abs=0.08)
    assert d.icc_z2 == pytest.approx(0.36, abs=0.08)  # corr(Z1², Z2²) = ρ² for normal errors
    assert d.design_effect == pytest.approx(1 + 19 * 0.36, rel=0.3)
    assert d.independent_rows_wrong


# --------------------------------------------------------------------------- block length


def _ar(phi, n, seed):
    rng = np.random.default_rng(seed)
    e = rng.normal(size=n)
    x = np.empty(n)
    x[0] = e[0]
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_block_length_matches_arch(phi):
    arch = pytest.importorskip("arch.bootstrap")
    x = _ar(phi, 1200, 3)
    ref = arch.optimal_block_length(x).to_numpy()[0]
    np.testing.assert_allclose(optimal_block_length(x), ref, rtol=1e-12)


def test_block_length_by_hand():
    """An alternating series: every autocorrelation is ±(n − k)/n, never inside the band, so the
    bandwidth is its maximum ⌈√n⌉ + 5; the formulas of Politis & White (2004) written out."""
    n = 100
    x = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    m = 10 + 5
    gam = np.array([(-1.0) ** k * (n - k) / n for k in range(m + 1)])
    h = np.array([min(1.0, 2 * (1 - k / m)) for k in range(1, m + 1)])
    G = 2 * np.sum(h * np.arange(1, m + 1) * gam[1:])
    s2 = gam[0] + 2 * np.sum(h * gam[1:])
    b_sb = min((2 * G * G / (2 * s2 * s2) * n) ** (1 / 3), math.ceil(min(3 * 10, n / 3)))
    b_cb = min((2 * G * G / (4 / 3 * s2 * s2) * n) ** (1 / 3), math.ceil(min(3 * 10, n / 3)))
    np.testing.assert_allclose(optimal_block_length(x), (b_sb, b_cb), rtol=1e-12)



def test_order_block_length_by_hand():
    """The blocks of ``order=`` miss at most 2 % of the long-run variance: ℓ = max(b_PW, ⌈κ/0.02⌉)
    (but at least b_PW, at most M/10), κ = G/σ̂² with G, σ̂² of Politis & White written out. The
    alternating series above needs κ/0.02 ≫ M/10 rows: ℓ stays Politis & White's 18 and misses κ/18."""
    from mcref.core._dependence import order_block_length

    n, m = 100, 15
    x = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    gam = np.array([(-1.0) ** k * (n - k) / n for k in range(m + 1)])
    h = np.array([min(1.0, 2 * (1 - k / m)) for k in range(1, m + 1)])
    G = 2 * np.sum(h * np.arange(1, m + 1) * gam[1:])
    s2 = gam[0] + 2 * np.sum(h * gam[1:])
    ell, missed = order_block_length(x)
    assert ell == math.ceil(optimal_block_length(x)[1]) == 18 and missed == pytest.approx(G / s2 / 18, rel=1e-12)
    for phi, seed in ((0.5, 1), (0.8, 2)):
        z = _ar(phi, 3000, seed)
        x = z * z
        b_cb = optimal_block_length(x)[1]
        kappa = math.sqrt(b_cb ** 3 * (4 / 3) / (2 * x.size))  # b_cb = (2 G² n / (4/3 σ⁴))^(1/3), uncapped here
        ell, missed = order_block_length(x)
        assert ell == min(max(math.ceil(b_cb), math.ceil(kappa / 0.02)), x.size // 10)
        assert missed == pytest.approx(kappa / ell, rel=1e-9)


def test_order_block_length_estimates_the_mean_lag():
    """κ of Z² for Gaussian AR(1) Z is 2ρ/(1 − ρ²), ρ = φ² (Σ|k|ρ^|k| / Σρ^|k|): the flat-top
    estimate, averaged over 4 series of 10⁵, within 15 % (its spread over seeds is about 10 %)."""
    from mcref.core._dependence import _pw_terms

    phi = 0.8
    rho = phi * phi
    est = []
    for seed in range(4):
        z = _ar(phi, 100_000, 10 + seed) * math.sqrt(1 - rho)
        g, lr, _, _ = _pw_terms(z * z)
        est.append(g / lr)
    assert np.mean(est) == pytest.approx(2 * rho / (1 - rho * rho), rel=0.15)


def test_a_dependence_long_against_m_is_said_on_the_table():
    z = _ar(0.97, 400, 5) * math.sqrt(1 - 0.97 ** 2)
    u = np.exp(0.3 * np.sin(np.arange(400) / 40))
    tab = mcref.validate(u * z, u, order=np.arange(400), stats=["ZMS"], n_boot=1000, n_mc=1000, seed=1)
    assert tab.dependence.block_length == 40  # capped at 10 blocks
    assert "more rows than 10 blocks allow" in str(tab) and "invalid too often" in str(tab)

# --------------------------------------------------------------------------- determinism, no labels


def test_no_labels_is_the_unchanged_path():
    rng = np.random.default_rng(12)
    u = rng.uniform(0.5, 2, 400)
    E = u * rng.normal(size=400)
    opts = dict(stats=["ZMS", "CC", "ENCE"], n_boot=200, n_mc=200, seed=4, n_bins=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.FewReplicatesWarning)
        a = mcref.validate(E, u, **opts).to_json()
        b = mcref.validate(E, u, groups=None, order=None, block_length=None, **opts).to_json()
    assert a == b and '"dependence"' not in a


@pytest.mark.parametrize("labels", ["groups", "order"])
def test_same_seed_same_table_for_any_thread_count(labels):
    E, u, g = clustered(seed=13)
    lab = {"groups": g} if labels == "groups" else {"order": np.arange(E.size)}
    n0 = numba.get_num_threads()
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        try:
            for n in (1, max(1, min(2, numba.config.NUMBA_NUM_THREADS))):
                numba.set_num_threads(n)
                out.append(mcref.validate(E, u, **lab, n_boot=150, n_mc=150, n_bins=4, seed=6).to_json())
        finally:
            numba.set_num_threads(n0)
    assert out[0] == out[1]


@pytest.mark.parametrize("labels", ["groups", "order"])
def test_first_chunks_do_not_depend_on_the_number_of_replicates(labels):
    """Chunk c draws from its own streams only: the first 128 replicates of B = 128 and B = 320
    are the same, bit for bit (the shape sequential tests will stop early in)."""
    E, u, g = clustered(seed=17)
    lab = {"groups": g} if labels == "groups" else {"order": np.arange(E.size), "block_method": "stationary"}
    a = mcref.bootstrap_many(["ZMS", "CC", "ENCE"], E, u, n_bins=4, n_boot=128, seed=8, method="percentile", **lab)
    b = mcref.bootstrap_many(["ZMS", "CC", "ENCE"], E, u, n_bins=4, n_boot=320, seed=8, method="percentile", **lab)
    for k in a:
        np.testing.assert_array_equal(a[k].distribution, b[k].distribution[:128])


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kw,match", [
    (dict(groups=np.arange(10)), r"`groups` must give one label per row: 10 labels for 100 rows"),
    (dict(groups=np.zeros(100)), r"`groups` must hold at least two groups"),
    (dict(groups=np.arange(100)), r"`groups` gives every row a group of its own"),
    (dict(groups=[None] + [1] * 99), r"`groups` must label every row \(1 missing"),
    (dict(order=np.r_[np.nan, np.arange(99.0)]), r"`order` must contain only finite values"),
    (dict(order=np.arange(100), block_length=51), r"`block_length` must be at most M // 2 = 50"),
    (dict(order=np.arange(100), block_length=0), r"`block_length` must be an integer >= 1"),
    (dict(block_length=5), r"`block_length` goes with `order`"),
    (dict(groups=np.arange(100) // 10, order=np.arange(100)), r"give `groups` or `order`, not both"),
    (dict(order=np.arange(100), block_method="overlapping"), r"`block_method` must be one of"),
])
def test_bad_labels(kw, match):
    rng = np.random.default_rng(0)
    u = rng.uniform(1, 2, 100)
    with pytest.raises(ValueError, match=match):
        mcref.validate(u * rng.normal(size=100), u, n_boot=100, n_mc=100, **kw)
    if "block_method" not in kw:
        with pytest.raises(ValueError, match=match):
            mcref.bootstrap("ZMS", u * rng.normal(size=100), u, n_boot=100, **kw)


def test_adaptive_bins_and_user_statistics_are_refused_with_labels():
    rng = np.random.default_rng(0)
    u = rng.uniform(1, 2, 300)
    E = u * rng.normal(size=300)
    with pytest.raises(ValueError, match=r"`groups`/`order` need binning='equal'"):
        mcref.bootstrap("ENCE", E, u, n_boot=100, binning="adaptive", n_bins=5, groups=np.arange(300) // 10)


def test_cli_and_benchmark_take_a_group_column(tmp_path, capsys):
    from mcref.cli import main

    E, u, g = clustered(seed=16)
    path = tmp_path / "set.csv"
    with open(path, "w") as f:
        f.write("E,u,mol,t\n")
        for i in range(E.size):
            f.write(f"{float(E[i])!r},{float(u[i])!r},m{g[i]},{i}\n")
    assert main(["validate", str(path), "--groups", "mol", "--boot", "100", "--mc", "100", "--bins", "4",
                 "--seed", "3", "--json"]) == 0
    out = capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        tab = mcref.validate(E, u, groups=np.array([f"m{x}" for x in g]), n_boot=100, n_mc=100, n_bins=4, seed=3)
    assert '"design_effect"' in out and f'"n_units": {np.unique(g).size}' in out
    import json

    got = json.loads(out)
    assert got["rows"][0]["estimate"] == tab.rows[0].estimate and got["joint"]["p"] == tab.joint.p
    assert main(["validate", str(path), "--groups", "nope", "--boot", "100", "--mc", "100"]) == 2
    assert "--groups: no column 'nope'" in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        res = mcref.benchmark([str(path)], groups="mol", n_boot=100, n_mc=100, n_bins=4, n_jobs=1, progress=False,
                              stats=["ZMS", "ENCE"], seed=2)
    row = res.table[res.table.stat == "ZMS"].iloc[0]
    assert row["n_groups"] == np.unique(g).size and row["design_effect"] > 1
    with pytest.raises(ValueError, match="no column 'nope'"), warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        mcref.benchmark([str(path)], groups="nope", n_boot=100, n_mc=100, n_jobs=1, progress=False)


# --------------------------------------------------------------------------- size (slow)


@pytest.mark.slow
def test_size_of_the_labelled_rule_on_clustered_sets():
    """100 calibrated sets of 40 clusters of 12 at ρ = 0.6 (M = 480): the labelled joint verdict
    rejects within the binomial band of 5 % (3 sd: ≤ 11.5 %), the independent-rows rule far more."""
    lab, iid = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        for s in range(100):
            E, u, g = clustered(seed=1000 + s, rho=0.6)
            opts = dict(n_boot=200, n_mc=200, n_bins=8, seed=s, dists=("permutation",))
            lab.append(mcref.validate(E, u, groups=g, **opts).joint.verdict == "invalid")
            iid.append(mcref.validate(E, u, **opts).joint.verdict == "invalid")
    assert np.mean(lab) <= 0.115
    assert np.mean(iid) > 0.2


# --------------------------------------------------------------------------- small-G intervals (issue 38, part 5)


def test_bm_df_against_the_satterthwaite_matrix():
    """The O(G) Bell–McCaffrey ν equals (tr W)²/tr W² of the G×G matrix
    W = D(√s)(diag h − hhᵀ)D(√s), s = 1/(1 − h); equal weights give G − 1 exactly."""
    from mcref.core._dependence import bm_df

    rng = np.random.default_rng(5)
    for G in (2, 3, 7, 40):
        b = rng.lognormal(0, 1, G)
        h = b / b.sum()
        s = np.sqrt(1 / (1 - h))
        W = s[:, None] * (np.diag(h) - np.outer(h, h)) * s[None, :]
        assert bm_df(b) == pytest.approx(np.trace(W) ** 2 / np.sum(W * W), rel=1e-12)
        assert bm_df(np.full(G, 3.7)) == pytest.approx(G - 1, rel=1e-12)


def _bca_t_by_hand(theta, dist, jack, G, nu, alpha=0.05):
    """BCa limits with the critical values √(G/(G − 1))·t_ν in place of z (docs/methods.md)."""
    from scipy import stats as st

    z0 = st.norm.ppf(np.mean(dist < theta))
    d = jack.mean() - jack
    a = np.sum(d ** 3) / (6 * np.sum(d ** 2) ** 1.5)
    q = z0 + math.sqrt(G / (G - 1)) * st.t.ppf([alpha / 2, 1 - alpha / 2], nu)
    return np.quantile(dist, st.norm.cdf(z0 + q / (1 - a * q)))


@pytest.mark.parametrize("sizes", ["equal", "unequal"])
def test_small_g_interval_against_numpy_on_the_same_replicates(sizes):
    """ZMS and RCE with ``groups``: the interval is the BCa of the replicates with the expanded
    t critical values, z0, the delete-one-group jackknife and ν all recomputed here in NumPy."""
    size = None if sizes == "equal" else (lambda rng, G: rng.integers(1, 60, G))
    E, u, g = clustered(seed=11, G=12, size=size)
    res = mcref.bootstrap_many(["ZMS", "RCE", "CC"], E, u, groups=g, n_boot=999, seed=4)
    labels = np.unique(g)
    G = labels.size
    for name in ("ZMS", "RCE"):
        r = res[name]
        if name == "ZMS":
            a, b = [np.array([f(g == k) for k in labels]) for f in (lambda m: np.sum((E[m] / u[m]) ** 2),
                                                                    lambda m: m.sum())]
            theta = a.sum() / b.sum()
            jack = (a.sum() - a) / (b.sum() - b)
        else:
            a, b = [np.array([np.sum(x[g == k] ** 2) for k in labels]) for x in (E, u)]
            theta = 1 - np.sqrt(a.sum() / b.sum())
            jack = 1 - np.sqrt((a.sum() - a) / (b.sum() - b))
        h = b / b.sum()
        s = np.sqrt(1 / (1 - h))
        W = s[:, None] * (np.diag(h) - np.outer(h, h)) * s[None, :]
        nu = np.trace(W) ** 2 / np.sum(W * W)
        assert r.method == "bca-t" and r.n_units == G and r.t_df == pytest.approx(nu, rel=1e-10)
        assert r.estimate == pytest.approx(theta, rel=1e-12)
        lo, hi = _bca_t_by_hand(r.estimate, np.append(r.distribution, r.estimate), jack, G, nu)
        assert (r.low, r.high) == pytest.approx((lo, hi), rel=1e-9, abs=1e-12)
        # wider than the plain BCa of the same replicates, which the expanded values replace
        lo0, hi0 = np.quantile(np.append(r.distribution, r.estimate), _bca_levels_normal(r))
        assert r.low <= lo0 and r.high >= hi0
    assert res["CC"].method == "bca" and res["CC"].n_units == 0  # other statistics: BCa as before


def _bca_levels_normal(r):
    from scipy import stats as st

    q = r.z0 + st.norm.ppf([0.025, 0.975])
    return st.norm.cdf(r.z0 + q / (1 - r.acceleration * q))


def test_small_g_interval_at_its_level_and_its_p_value_invert_each_other():
    """bca_interval_at gives the interval back bit for bit, and bca_p_value of its limits is α/2:
    the expanded t map and its inverse (the equivalence test reads both)."""
    from mcref.resampling._bootstrap import bca_interval_at, bca_p_value

    E, u, g = clustered(seed=3, G=8)
    r = mcref.bootstrap("ZMS", E, u, groups=g, n_boot=999, seed=2)
    assert r.method == "bca-t"
    assert bca_interval_at(r, 0.95) == (r.low, r.high)
    assert bca_p_value(r, r.low, "lower") == pytest.approx(0.025, abs=1e-9)
    assert bca_p_value(r, r.high, "upper") == pytest.approx(0.025, abs=1e-9)
    lo90, hi90 = bca_interval_at(r, 0.90)
    assert r.low < lo90 < hi90 < r.high


def test_few_units_note_in_the_table_and_json():
    """Fewer than FEW_UNITS effective units: ZMS and RCE say their interval's coverage is not
    assured, in the text table and the JSON; many equal groups and no labels say nothing."""
    import json

    opts = dict(stats=["ZMS", "RCE"], n_boot=200, n_mc=100, seed=1, dists=("permutation",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.MCRefWarning)  # B, N_MC below the stable counts
        E, u, g = clustered(seed=2, G=6, size=lambda rng, G: np.full(G, 50))
        few = mcref.validate(E, u, groups=g, **opts)
        E2, u2, g2 = clustered(seed=2, G=100)  # RCE: u varies between clusters, ν + 1 ≈ 76
        many = mcref.validate(E2, u2, groups=g2, **opts)
        none = mcref.validate(E2, u2, **opts)
        blocks = mcref.validate(E2, u2, order=np.arange(E2.size), block_length=100, **opts)
    text = " ".join(str(few).split())  # the notes wrap
    assert "ZMS: few clusters (G = 6, effective 6.0): interval coverage not assured" in text
    v = np.array([np.sum(u[g == k] ** 2) for k in np.unique(g)])  # u varies between clusters: ν < G − 1
    h = v / v.sum()
    s = np.sqrt(1 / (1 - h))
    W = s[:, None] * (np.diag(h) - np.outer(h, h)) * s[None, :]
    assert f"RCE: few clusters (G = 6, effective {np.trace(W) ** 2 / np.sum(W * W) + 1:.1f})" in text
    rows = {r["stat"]: r for r in json.loads(few.to_json())["rows"]}
    assert rows["ZMS"]["interval"] == "bca-t" and "few clusters (G = 6" in rows["ZMS"]["interval_note"]
    assert all(r.interval_note == "" and r.interval_method == "bca-t" for r in many.rows)
    assert "not assured" not in str(many)
    assert all(r.interval_note == "" and r.interval_method == "bca" for r in none.rows)
    assert "few blocks along order (G = 12" in " ".join(str(blocks).split())


@pytest.mark.slow
def test_coverage_of_the_small_g_interval():
    """Coverage Monte Carlo: 100 equal clusters of 12 at ρ = 0.5 (u per row: 100 effective units
    for both rows, no note), 200 calibrated sets; the 95 % interval of ZMS (truth 1) and of RCE
    (truth 0, the parameter 1 − √(E[ΣE²|u]/Σu²)) covers within 3 binomial sd of 95 %."""
    n, cov = 200, {"ZMS": 0, "RCE": 0}
    g = np.repeat(np.arange(100), 12)
    for s in range(n):
        rng = np.random.default_rng([38, 5, s])
        u = rng.lognormal(0, 0.3, g.size)
        z = math.sqrt(0.5) * rng.normal(size=100)[g] + math.sqrt(0.5) * rng.normal(size=g.size)
        res = mcref.bootstrap_many(["ZMS", "RCE"], u * z, u, groups=g, n_boot=500, seed=s)
        cov["ZMS"] += res["ZMS"].low <= 1.0 <= res["ZMS"].high
        cov["RCE"] += res["RCE"].low <= 0.0 <= res["RCE"].high
        assert res["ZMS"].note == "" and res["RCE"].note == ""
    band = 0.95 - 3 * math.sqrt(0.95 * 0.05 / n)
    assert cov["ZMS"] / n >= band and cov["RCE"] / n >= band
