"""Resampling and permutation by units: dependent rows (docs/methods.md, "Dependent test sets").

A dependent test set is cut into **units** that are resampled or permuted whole: the groups
of ``groups=`` (clusters), or blocks of consecutive rows along ``order=``. Every kernel here
works over the data sorted by u, as the i.i.d. kernels do (:mod:`.bootstrap`):

* a bootstrap resample is a vector of multiplicities ``w`` over the u-sorted points, drawn by
  one parametrised generator, :func:`unit_weights` (unit kind rows / groups / blocks): a
  cluster resample draws the group counts c ~ Multinomial(G; 1/G, …) and sets w_i = c_{g(i)};
  a block resample draws block starts (moving, circular or stationary blocks) and sets
  w_i = the number of drawn blocks that cover row i (a difference array along ``order``,
  read at each u-sorted point's position along ``order``). The resample size n = Σw differs
  from M for clusters: its equal-count bins are cut at ⌊n·b/N + ½⌋ of its own walk
  (:func:`unit_starts`) and its statistics divide by n;
* the delete-one-unit jackknife (:func:`jack_units_kernel`) evaluates the statistics on the
  weights w = 1 but 0 on one unit;
* the permutation by units (:func:`permute_units_into`) moves whole units' Z-vectors among
  the units of equal size; with one row per unit it is a row permutation.

Every kernel is a pure function of arrays; replicate (or chunk) r draws only from its own
states (the caller's ``states[r]``, ``tstates[r]`` rows), writes only its own output columns,
and scratch is allocated once per parallel task: results do not depend on the thread count.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._config import NJIT, NJIT_ORDERED
from .bootstrap import split_ties
from .rng import (COUNT, STACK_ROWS, bounded_one, load_state, multinomial_leaf, multinomial_start, next_double,
                  permute_into, store_state)
from .stats import (CC, N_RAW, N_SUMS, bin_acc, bin_finish, finish_codes, has_code, mean_acc, needs, prefix_counts,
                    rank_scratch)
from .variates import normal_fast, t_fast

#: unit kinds of :func:`unit_weights`
ROWS, GROUPS, BLOCKS = 0, 1, 2
#: block schemes of :func:`unit_weights` (the order of ``mcref.core._checks.BLOCK_METHODS``)
CIRCULAR, MOVING, STATIONARY = 0, 1, 2


@njit(**NJIT)
def unit_starts(n, n_bins, starts):
    """``starts[b] = ⌊n·b/N + ½⌋`` (b = 0 … N), in exact integer arithmetic: the equal-count bin
    starts of a resample of n points (``mcref.binning.bin_starts``)."""
    for b in range(n_bins + 1):
        starts[b] = (2 * n * b + n_bins) // (2 * n_bins)


@njit(**NJIT)
def _cover_add(cover, s, length, m):
    """One block of ``length`` rows from position ``s`` along the order, wrapping past M."""
    e = s + length
    cover[s] += 1
    if e <= m:
        cover[e] -= 1
    else:
        cover[m] -= 1
        cover[0] += 1
        cover[e - m] -= 1


@njit(**NJIT)
def unit_weights(s, kind, scheme, block, gid, opos, cnt, cover, stack, w):
    r"""Multiplicities ``w`` (over the u-sorted points) of one bootstrap resample by units;
    returns the resample size n = Σw. Advances the state array ``s``.

    * ``ROWS``: w ~ Multinomial(M; 1/M, …), the i.i.d. pairs bootstrap (leaf by leaf,
      :func:`mcref.kernels.rng.multinomial_leaf`);
    * ``GROUPS`` (cluster bootstrap): c ~ Multinomial(G; 1/G, …) over the G groups (``cnt``,
      length G), :math:`w_i = c_{g(i)}` with ``gid[i]`` the group of point i;
    * ``BLOCKS`` (Künsch 1989; Politis & Romano 1992, 1994): blocks of rows along the order
      are drawn until M rows are covered, the last one cut short (n = M); ``scheme``
      ``MOVING`` starts uniform in [0, M − ℓ], ``CIRCULAR`` in [0, M) wrapping past the end,
      ``STATIONARY`` in [0, M) with lengths Geometric(1/ℓ) (mean ℓ = ``block``), wrapping.
      :math:`w_i` = the number of blocks covering the order position ``opos[i]`` of point i,
      from the difference array ``cover`` (length M + 1).
    """
    m = w.shape[0]
    if kind == ROWS or kind == GROUPS:
        cells = m if kind == ROWS else cnt.shape[0]
        target = w if kind == ROWS else cnt
        st = load_state(s)
        sp = multinomial_start(stack, cells, cells)
        while sp > 0:
            _lo, _hi, sp, st = multinomial_leaf(st, stack, sp, target)
        store_state(s, st)
        if kind == ROWS:
            return m
        n = 0
        for i in range(m):
            c = cnt[gid[i]]
            w[i] = c
            n += c
        return n
    cover[:] = 0
    left = m
    q = 1.0 / block
    while left > 0:
        if scheme == MOVING:
            start = bounded_one(s, m - block + 1)
            length = block
        elif scheme == CIRCULAR:
            start = bounded_one(s, m)
            length = block
        else:
            start = bounded_one(s, m)
            length = 1
            if q < 1.0:  # Geometric(q) on {1, 2, …} by inversion of 1 − U in (0, 1]
                length = 1 + np.int64(math.floor(math.log(1.0 - next_double(s)) / math.log(1.0 - q)))
        length = min(length, left)
        _cover_add(cover, start, length, m)
        left -= length
    run = 0
    for t in range(m):
        run += cover[t]
        cover[t] = run
    for i in range(m):
        w[i] = cover[opos[i]]
    return m


@njit(**NJIT)
def _eval_scratch(m, n_bins, n_codes, ties, cc):
    """Scratch of :func:`_eval_units`, once per task: ``(w, starts, raw, sums, acc, cs, corr, cuts,
    row, buf, res)``; ``row`` and ``cs`` only for tie splits, ``buf`` only for CC."""
    return (np.empty(m, dtype=COUNT), np.empty(n_bins + 1, dtype=np.int64), np.empty(N_RAW), np.empty(N_SUMS),
            np.empty((n_bins, 4)), np.empty(m + 1 if ties else 0, dtype=np.int64), np.zeros((n_bins + 1, 2)),
            np.empty(n_bins + 1, dtype=np.int64), np.empty(m + 1 if ties else 0, dtype=np.int64),
            rank_scratch(m if cc else 0), np.empty(n_codes))


@njit(**NJIT)
def _eval_units(codes, need, need_bins, need_ties, w, n, tarr, groups, z, zshift, z2, E2, u2, lnu2, starts, ugs,
                slot, eslot, egs, raw, sums, acc, cs, corr, cuts, row, buf, res):
    """The statistics ``codes`` on the multiset ``w`` of n points, bins cut at ``starts``
    (already filled for n), tied runs at the cuts split from ``tarr`` (a bootstrap
    resample; an empty ``groups`` keeps the input order, as the jackknife does)."""
    m = w.shape[0]
    raw[:] = 0.0
    acc[:, :] = 0.0
    corr[:, :] = 0.0
    if need:
        mean_acc(w, np.int64(0), m, max(m, 1), need, z, zshift, z2, E2, u2, lnu2, raw)  # no literals: the
    if need_bins:  # signatures the bootstrap compiles
        bin_acc(w, np.int64(0), m, max(m, 1), starts, u2, E2, z2, acc, np.int64(0), np.int64(0))
        if need_ties:
            prefix_counts(w, cs)
            split_ties(tarr, w, cs, groups, starts, E2, z2, cuts, corr, False, row)
        bin_finish(starts, acc, corr)
    finish_codes(codes, raw, sums, acc, np.float64(n), w, ugs, slot, eslot, egs, buf, res, -1.0)


@njit(**NJIT)
def units_scratch(codes, groups, m, n_bins, n_units):
    """The scratch of :func:`boot_units_kernel`: :func:`_eval_scratch`'s arrays, then the unit counts,
    the cover rows and the split stack. Made once per thread of a run and kept between its tasks
    (:func:`mcref.parallel.per_thread`), as the i.i.d. kernel's (:func:`mcref.kernels.bootstrap.boot_scratch`):
    every replicate writes what it reads of them."""
    _need, need_bins = needs(codes)
    return _eval_scratch(m, n_bins, codes.shape[0], need_bins and groups.shape[0] > 0, has_code(codes, CC)) + (
        np.empty(max(n_units, 1), dtype=COUNT), np.empty(m + 1, dtype=np.int64),
        np.empty((STACK_ROWS, 3), dtype=np.int64))


@njit(**NJIT)
def boot_units_kernel(codes, kind, scheme, block, gid, opos, n_units, states, tstates, r0, r1, groups, z,
                      zshift, z2, E2, u2, lnu2, n_bins, ugs, slot, eslot, egs, scratch, out):
    """Fill ``out[k, r]`` (the whole (K, B) array) with statistic ``codes[k]`` on bootstrap
    resample r, r0 ≤ r < r1, drawn by units (:func:`unit_weights`; ``n_units`` groups for
    ``GROUPS``). The bins of each resample are its own equal-count bins of n = Σw points
    (:func:`unit_starts`); the statistics divide by n. Replicate r draws its units from
    ``states[r]`` and splits the tied runs of u that straddle a cut from its own tie stream
    ``tstates[r]`` (:func:`mcref.kernels.bootstrap.split_ties`), as in the i.i.d. kernel.
    One task of the bootstrap (threads run the tasks); ``scratch``: :func:`units_scratch`, a thread's,
    kept between its tasks: the same bits however the replicates are cut into tasks and whatever the
    thread count."""
    m = z.shape[0]
    n_codes = codes.shape[0]
    need, need_bins = needs(codes)
    need_ties = need_bins and groups.shape[0] > 0
    sarr = np.empty(4, dtype=np.uint64)
    tarr = np.empty(4, dtype=np.uint64)
    w, starts, raw, sums, acc, cs, corr, cuts, row, buf, res, cnt, cover, stack = scratch
    for r in range(r0, r1):
        for j in range(4):  # element by element: no shape-error path to compile
            sarr[j] = states[r, j]
            if need_ties:  # without tie splits ``tstates`` is not read (may be any (B, 4) array)
                tarr[j] = tstates[r, j]
        n = unit_weights(sarr, kind, scheme, block, gid, opos, cnt, cover, stack, w)
        if need_ties and row.shape[0] < n + 1:  # a cluster resample of unequal groups can exceed M points
            row = np.empty(n + 1 + n // 2, dtype=np.int64)
        unit_starts(n, n_bins, starts)
        _eval_units(codes, need, need_bins, need_ties, w, n, tarr, groups, z, zshift, z2, E2, u2, lnu2, starts,
                    ugs, slot, eslot, egs, raw, sums, acc, cs, corr, cuts, row, buf, res)
        for k in range(n_codes):
            out[k, r] = res[k]


@njit(**NJIT)
def unit_weights_into(states, chunk, kind, scheme, block, gid, opos, n_units, out, sizes):
    """The multiplicities of :func:`boot_units_kernel`'s resamples, one row of ``out``
    (n_boot, M) each, and their sizes n (``sizes``): the same draws from the same states."""
    m = out.shape[1]
    n_boot = out.shape[0]
    cnt = np.empty(max(n_units, 1), dtype=COUNT)
    cover = np.empty(m + 1, dtype=np.int64)
    stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
    for ch in range(states.shape[0]):
        sarr = states[ch].copy()
        for r in range(ch * chunk, min((ch + 1) * chunk, n_boot)):
            sizes[r] = unit_weights(sarr, kind, scheme, block, gid, opos, cnt, cover, stack, out[r])


@njit(**NJIT)
def jack_units_kernel(codes, gid, sizes, z, zshift, z2, E2, u2, lnu2, n_bins, ugs, slot, eslot, egs, j0, j1, out):
    """Delete-one-unit jackknife: ``out[k, j]``, j0 ≤ j < j1, = statistic ``codes[k]`` on the data
    without unit j (w = 1 but 0 on the points with ``gid == j``), its M − n_j points re-binned at
    ⌊(M − n_j)·b/N + ½⌋ in the stable u order. O(M) per unit; one task of the jackknife
    (:func:`mcref.parallel.over_tasks`)."""
    m = z.shape[0]
    n_codes = codes.shape[0]
    need, need_bins = needs(codes)
    need_cc = has_code(codes, CC)
    no_groups = np.empty((0, 2), dtype=np.int64)
    no_ties = no_groups.shape[0] > 0  # False, but not the literal: one signature of the callees
    w, starts, raw, sums, acc, cs, corr, cuts, row, buf, res = _eval_scratch(m, n_bins, n_codes, no_ties, need_cc)
    tarr = np.empty(4, dtype=np.uint64)
    for j in range(j0, j1):
        for i in range(m):
            w[i] = 0 if gid[i] == j else 1
        n = m - sizes[j]
        unit_starts(n, n_bins, starts)
        _eval_units(codes, need, need_bins, no_ties, w, n, tarr, no_groups, z, zshift, z2, E2, u2, lnu2, starts,
                    ugs, slot, eslot, egs, raw, sums, acc, cs, corr, cuts, row, buf, res)
        for k in range(n_codes):
            out[k, j] = res[k]


@njit(**NJIT)
def permute_units_into(s, src, members, ustart, cstart, uid, pscratch, out):
    """``out`` = ``src`` with whole units moved: a uniformly random permutation π of the units
    of each class of equal size (``permute_into`` on their ids), then unit π(j) receives unit
    j's values in member order: ``out[members[ustart[π(j)] + q]] = src[members[ustart[j] + q]]``.

    Units are numbered class by class: class k holds the units ``cstart[k] … cstart[k+1] − 1``,
    all of one size; ``uid`` = 0 … U − 1 and ``pscratch`` (U) is scratch. With one row per unit
    (one class) this is a row permutation of ``src``. Under "the units' Z-vectors are
    exchangeable among units of equal size, and independent of u" every arrangement is equally
    likely, so the permutation test stays exact (docs/methods.md, "Dependent test sets")."""
    for k in range(cstart.shape[0] - 1):
        a = cstart[k]
        b = cstart[k + 1]
        ids = pscratch[a:b]
        permute_into(s, uid[a:b], ids)
        for j in range(a, b):
            t = ids[j - a]
            d0 = ustart[t]
            s0 = ustart[j]
            for q in range(ustart[j + 1] - s0):
                out[members[d0 + q]] = src[members[s0 + q]]


@njit(**NJIT_ORDERED)
def _chunk_t_cluster(sizes, W, K, FL, FD, r, nu, state, b0, b1, out):
    """Rows b0 … b1 − 1 of ``out``: the cluster sums of :func:`t_cluster_sums`."""
    normal = not (nu < np.inf)
    scale = 1.0 if normal else math.sqrt((nu - 2.0) / nu)
    st = load_state(state)
    for b in range(b0, b1):
        for j in range(9):
            out[b, j] = 0.0
        for g in range(sizes.shape[0]):
            s1 = 0.0
            s2 = 0.0
            for _ in range(sizes[g]):
                if normal:
                    z, st = normal_fast(st)
                else:
                    z, st = t_fast(st, W, K, FL, FD, r, nu)
                    z *= scale
                s1 += z
                s2 += z * z
            n = np.float64(sizes[g])
            out[b, 0] += n
            out[b, 1] += s1
            out[b, 2] += s2
            out[b, 3] += n * n
            out[b, 4] += s1 * s1
            out[b, 5] += s2 * s2
            out[b, 6] += n * s1
            out[b, 7] += n * s2
            out[b, 8] += s1 * s2
    store_state(state, st)


@njit(**NJIT_ORDERED)
def t_cluster_sums(sizes, W, K, FL, FD, r, nu, states, chunk, c0, c1, out):
    r"""``out[k]`` = the cluster moments :math:`(\sum n_g, \sum S_{1g}, \sum S_{2g}, \sum n_g^2,
    \sum S_{1g}^2, \sum S_{2g}^2, \sum n_g S_{1g}, \sum n_g S_{2g}, \sum S_{1g} S_{2g})` of n_mc
    samples of independent unit-variance t(ν) rows laid out in clusters of ``sizes``
    (:math:`S_{pg}` = Σ z^p over cluster g): the law of the cluster-studentized scale statistics
    under independent t(ν) errors. ``W … nu`` are the tables of
    :func:`~mcref.kernels.variates.t_ziggurat` (ν): z = x·√((ν − 2)/ν), x ~ t(ν) by its ziggurat
    (:func:`~mcref.kernels.variates.t_fast`, as :func:`~mcref.kernels.resample.t_power_sums`);
    ν = inf: z ~ N(0, 1) (:func:`~mcref.kernels.variates.normal_fast`). Chunk c uses a copy of
    ``states[c]``. Rows of chunks c0 ≤ c < c1 of ``out`` (n_mc, 9): a task of the scale tests
    (:func:`mcref.parallel.over_tasks`); the rows do not depend on the tasks."""
    n_mc = out.shape[0]
    for c in range(c0, c1):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_mc, b0 + chunk)
        if b0 < b1:
            _chunk_t_cluster(sizes, W, K, FL, FD, r, nu, st, b0, b1, out)


@njit(**NJIT_ORDERED)
def _chunk_t_rce(v, cstart, W, K, FL, FD, r, nu, rho, state, b0, b1, out):
    """Rows b0 … b1 − 1 of ``out``: the cluster sums of :func:`t_rce_cluster_sums`."""
    normal = not (nu < np.inf)
    scale = 1.0 if normal else math.sqrt((nu - 2.0) / nu)
    a = math.sqrt(rho)
    c = math.sqrt(1.0 - rho)
    st = load_state(state)
    for b in range(b0, b1):
        for j in range(5):
            out[b, j] = 0.0
        for g in range(cstart.shape[0] - 1):
            eg = 0.0
            vg = 0.0
            eta = 0.0
            if rho > 0.0:
                eta, st = normal_fast(st)
            for i in range(cstart[g], cstart[g + 1]):
                if normal:
                    z, st = normal_fast(st)
                else:
                    z, st = t_fast(st, W, K, FL, FD, r, nu)
                    z *= scale
                z = a * eta + c * z
                eg += v[i] * z * z
                vg += v[i]
            out[b, 0] += eg
            out[b, 1] += vg
            out[b, 2] += eg * eg
            out[b, 3] += vg * vg
            out[b, 4] += eg * vg
    store_state(state, st)


@njit(**NJIT_ORDERED)
def t_rce_cluster_sums(v, cstart, W, K, FL, FD, r, nu, rho, states, chunk, c0, c1, out):
    r"""``out[k]`` = :math:`(\sum_g e_g, \sum_g v_g, \sum_g e_g^2, \sum_g v_g^2, \sum_g e_g v_g)` of
    n_mc samples of E = u·z, e = E² and v = u² summed over the clusters (``v`` = u² with each
    cluster's points consecutive, cluster g at ``v[cstart[g]:cstart[g+1]]``), with the
    random-intercept errors :math:`z_i = \sqrt\rho\,\eta_g + \sqrt{1-\rho}\,t_i`, η_g standard
    normal per cluster (:func:`~mcref.kernels.variates.normal_fast`) and t_i independent
    unit-variance t(ν) drawn as in :func:`t_cluster_sums` from the tables ``W … nu`` of
    :func:`~mcref.kernels.variates.t_ziggurat` (ν) (normal when ν = inf): the law of RCE's
    cluster-studentized T under errors correlated at ρ within the data's clusters, on the data's
    u (ρ = 0: independent rows). Chunk c uses a copy of ``states[c]``. Rows of chunks
    c0 ≤ c < c1 of ``out`` (n_mc, 5): a task of the scale tests (:func:`mcref.parallel.over_tasks`)."""
    n_mc = out.shape[0]
    for c in range(c0, c1):
        st = states[c].copy()
        b0 = c * chunk
        b1 = min(n_mc, b0 + chunk)
        if b0 < b1:
            _chunk_t_rce(v, cstart, W, K, FL, FD, r, nu, rho, st, b0, b1, out)


@njit(**NJIT)
def exchange_levels(s, lev, rr, gid, uid, pi, src, ustar, us, eps, xu):
    r"""One repeat of the permutation by **exchange of the groups' u-levels** (groups of unequal
    sizes; docs/methods.md, "Dependent test sets"). Each group keeps its rows, their Z and its
    pattern of u, :math:`u_i = \bar u_g r_i` (``lev[g]`` = ū_g, ``rr[i]`` = r_i), and takes the
    level of another group: :math:`u^*_i = \bar u_{\pi(g(i))} r_i`, π a uniformly random
    permutation of the G groups (``permute_into`` on ``uid`` into ``pi``). Exact for "the
    levels ū_g are exchangeable: independent of the groups' sizes, patterns and Z" (then the
    data's (levels, groups) pairing is one uniform draw of the G! pairings).

    Writes the repeat in ascending u* (ties in u-sorted order): ``us`` = sorted u*, ``eps`` =
    the Z of those rows (``src[o]``), ``xu`` = their average ranks minus (M + 1)/2; returns
    ``(o, Σ u*², Σ ln u*², Σ xu²)`` with o the sort (u-sorted positions in u* order)."""
    m = rr.shape[0]
    permute_into(s, uid, pi)
    for i in range(m):
        ustar[i] = lev[pi[gid[i]]] * rr[i]
    o = np.argsort(ustar, kind="mergesort")
    su2 = 0.0
    sln = 0.0
    for k in range(m):
        v = ustar[o[k]]
        us[k] = v
        eps[k] = src[o[k]]
        su2 += v * v
        sln += math.log(v * v)
    mid = 0.5 * (m + 1)
    sxx = 0.0
    a = 0
    while a < m:
        b = a + 1
        while b < m and us[b] == us[a]:
            b += 1
        x = 0.5 * (a + 1 + b) - mid  # average 1-based rank of the run [a, b)
        for k in range(a, b):
            xu[k] = x
            sxx += x * x
        a = b
    return o, su2, sln, sxx
