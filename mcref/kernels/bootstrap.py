"""The bootstrap resampling loop: one serial kernel over a task's replicates, run by threads
(docs/methods.md, "Bootstrap", "Parallelism").

Every replicate ``r`` draws from its own xoshiro256** states ``states[r]``,
``tstates[r]`` and writes only its own column of ``out``; the tasks are runs of
several replicates (scratch allocated once per task), so the result depends neither on the
task size nor on the number of threads (docs/methods.md, "Random numbers",
"Code conventions").
A resample is drawn as multiplicities over the data pre-sorted by u (no sort per
resample), generated in order, leaf by leaf, by conditional binomial splitting
(:func:`mcref.kernels.rng.multinomial_leaf`); the mean and bin sums are accumulated on
each leaf while its counts are in L1. Memory is then walked in order whatever M: the
per-element cost stays flat from M = 10⁴ to 10⁶, where M random increments of a count
array (the previous generator) missed the cache (docs/methods.md, "Bootstrap").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT
from .rng import (COUNT, LEAF_BITS, STACK_ROWS, bounded_one, leaf_counts, load_state, multinomial_leaf,
                  multinomial_split, multinomial_start)
from .stats import (CC, N_RAW, N_SUMS, NEED_N, bin_acc, bin_finish, finish_binned, finish_codes, has_code,
                    mean_acc, needs, prefix_counts, rank_planes, rank_scratch,
                    rank_u_run)


#: the bin sums of a block are taken in pieces of this many points, most of them inside one bin
#: (:func:`mcref.kernels.stats.bin_acc`)
BIN_PIECE = 256


@njit(**NJIT)
def split_ties(st, w, cs, groups, starts, E2, z2, cuts, corr, emit, row):
    """Random split, at the bin cuts, of every run of tied u that straddles a cut.

    A resample sorted by u keeps tied points in the order they were drawn (R's stable
    ``order`` on the resampled vector, as in the papers' ``np.boot``): within a run of
    equal u the copies are in uniformly random order, and where the run straddles bin
    cuts that order decides which copies fall in which bin. Only runs of ≥ 2 distinct
    points (``groups[g] = (start, end)`` over the u-sorted points) need it.

    For such a run, its K copies are laid out in input order in ``row[p0:p1]`` (each
    point's first position gets its index less the previous point's with copies, and a
    running sum fills in the rest: no branch per copy, a 1-operation chain; the running
    maximum of indices it replaced, a 4-operation chain, took 50.2 µs a replicate of ENCE on
    QM9_E against 49.1, one thread), then a partial Fisher–Yates shuffle (the replicate's tie stream ``st``) makes
    the split at every cut that of a uniform random permutation: forward over the
    positions below the last cut or, for a single cut above the middle, backward over
    the fewer positions above it. The sums that cross each cut are updated swap by swap.

    ``emit=False``: fills ``corr[b] = (ΔΣE², ΔΣz²)``, the sums that move from bin b to
    bin b − 1 relative to the input order (u² is the same for every copy of a run);
    ``row`` is scratch (M + 1). ``emit=True``: ``row`` is the resample's walk order and
    only the straddling runs are rewritten. ``cs`` are the prefix sums of ``w``
    (:func:`prefix_counts`), ``cuts`` int64 scratch (n_bins + 1).
    """
    n_bins = starts.shape[0] - 1
    if not emit:
        corr[:, :] = 0.0
    for g in range(groups.shape[0]):
        a = groups[g, 0]
        b = groups[g, 1]
        p0 = cs[a]
        p1 = cs[b]
        j = np.searchsorted(starts, p0, side="right")  # first cut after the run's start
        if j >= n_bins or starts[j] >= p1:
            continue
        r = 0
        while j + r < n_bins and starts[j + r] < p1:
            cuts[r] = starts[j + r] - p0  # cut positions inside the run
            r += 1
        n = p1 - p0
        seg = row[p0:p1]
        # lay out the copies in input order: each point's first position gets its index minus the
        # previous point's with copies, and a running sum fills in the rest (a 1-cycle chain)
        seg[:] = 0
        prev = np.int64(0)
        for i in range(a, b):
            c = cs[i] - p0
            if c < n:  # a point without copies is overwritten by the next one
                seg[c] = i - prev
            prev = i if cs[i + 1] > cs[i] else prev
        mx = np.int64(0)
        for k in range(n):
            mx += seg[k]
            seg[k] = mx
        # Partial Fisher–Yates. A swap of positions t < x changes the content below a cut
        # q only when t < q <= x: the element from x comes in, the one at t goes out, so
        # the corrections accumulate during the shuffle, with no summing pass.
        q = cuts[r - 1]
        if emit:
            if r == 1 and q > n - q:
                for t in range(n - 1, q - 1, -1):
                    x = bounded_one(st, t + 1)
                    et = seg[t]
                    seg[t] = seg[x]
                    seg[x] = et
            else:
                for t in range(q):
                    x = t + bounded_one(st, n - t)
                    et = seg[t]
                    seg[t] = seg[x]
                    seg[x] = et
        elif r == 1 and q > n - q:  # backward over the positions above the single cut
            de = 0.0
            dz = 0.0
            for t in range(n - 1, q - 1, -1):
                x = bounded_one(st, t + 1)
                et = seg[t]
                ex = seg[x]
                seg[t] = ex
                seg[x] = et
                f = 1.0 if x < q else 0.0  # branch-free: a select, not a jump
                de += f * (E2[et] - E2[ex])
                dz += f * (z2[et] - z2[ex])
            corr[j, 0] += de
            corr[j, 1] += dz
        elif r == 1:  # forward over the positions below the single cut
            # (deliberately written out beside the backward and several-cut loops: a shared
            # helper taking the direction costs a branch per swap in this hot loop)
            de = 0.0
            dz = 0.0
            for t in range(q):
                x = t + bounded_one(st, n - t)
                et = seg[t]
                ex = seg[x]
                seg[t] = ex
                seg[x] = et
                f = 1.0 if x >= q else 0.0
                de += f * (E2[ex] - E2[et])
                dz += f * (z2[ex] - z2[et])
            corr[j, 0] += de
            corr[j, 1] += dz
        else:  # several cuts inside the run: forward below the last one
            for t in range(q):
                x = t + bounded_one(st, n - t)
                et = seg[t]
                ex = seg[x]
                seg[t] = ex
                seg[x] = et
                ve = E2[ex] - E2[et]
                vz = z2[ex] - z2[et]
                for c in range(r):
                    f = 1.0 if (t < cuts[c]) and (cuts[c] <= x) else 0.0
                    corr[j + c, 0] += f * ve
                    corr[j + c, 1] += f * vz


@njit(**NJIT)
def tie_orders_kernel(code, states, groups, starts, u2, E2, z2, out):
    """``out[r]`` = the binned statistic ``code`` on the data (u-sorted, stable) with every run of
    tied u put in a uniformly random order, order r drawn from ``states[r]`` (an (R, 4) array of
    xoshiro256** states): :func:`mcref.stats.tie_spread`.

    Only the order inside a run that straddles a bin cut changes a binned statistic, so each
    order is the data's bin sums (:func:`bin_acc`, once) plus the sums that the random order of
    those runs moves across the cuts: :func:`split_ties` with every multiplicity 1, as the
    bootstrap splits a resample's tied copies (the split at each cut that of a uniform random
    permutation of the run). O(Σ straddling run lengths) per order, not a shuffle and sort of
    the M rows (at M = 10⁶ with u to three decimals, ENCE's 100 orders took 7.4 s that way).
    """
    m = u2.shape[0]
    n_bins = starts.shape[0] - 1
    w = np.ones(m, dtype=COUNT)
    cs = np.arange(m + 1)  # the prefix counts of all-ones multiplicities
    row = np.empty(m + 1, dtype=np.int64)
    base = np.zeros((n_bins, 4))
    zero = np.int64(0)
    bin_acc(w, zero, m, max(m, np.int64(1)), starts, u2, E2, z2, base, zero, zero)
    acc = np.empty((n_bins, 4))
    corr = np.zeros((n_bins + 1, 2))
    cuts = np.empty(n_bins + 1, dtype=np.int64)
    tarr = np.empty(4, dtype=np.uint64)
    for r in range(states.shape[0]):
        for j in range(4):
            tarr[j] = states[r, j]
        split_ties(tarr, w, cs, groups, starts, E2, z2, cuts, corr, False, row)
        acc[:, :] = base
        bin_finish(starts, acc, corr)
        out[r] = finish_binned(code, acc, np.float64(m))


@njit(**NJIT)
def boot_layout(codes, groups, ugs, m):
    """What :func:`boot_kernel` keeps of a replicate for ``codes`` on M = ``m`` points:
    ``(need_ties, cc_blocks, whole)``. Tie splits where a binned statistic meets runs of tied u;
    CC's u pass block by block as the counts are drawn where u has no ties and no tie split needs
    the whole counts (:func:`rank_u_run`: the same operations in the same order as
    :func:`rank_corr`'s); the whole multiplicities only for CC's rank pass over tied u and the tie
    splits, otherwise one block's counts, reused (an M-sized array written per replicate left the
    caches at M = 10⁶)."""
    _need, need_bins = needs(codes)
    need_ties = need_bins and groups.shape[0] > 0
    need_cc = has_code(codes, CC)
    cc_blocks = need_cc and not need_ties and ugs.shape[0] == m + 1
    whole = (need_cc and not cc_blocks) or need_ties
    return need_ties, cc_blocks, whole


@njit(**NJIT)
def boot_scratch(codes, groups, ugs, m):
    """The scratch of :func:`boot_kernel` that grows with M: ``(w, cs, row, buf)``, the counts (M,
    or one block where :func:`boot_layout` keeps no whole ones), the prefix counts and walk rows of
    the tie splits (M + 1 each, or empty) and CC's rank buffer (:func:`rank_scratch` of M, or of 0). Made once per
    thread of a run and reused by its tasks (:func:`mcref.resampling._bootstrap._boot_rows`): every
    replicate writes what it reads of them. Allocated per task, at M = 10⁶ with tied u their pages
    were faulted in again task after task, 1.3 million faults and a quarter of the bootstrap's
    time at B = 1000 (2026-11-28)."""
    need_ties, _cc_blocks, whole = boot_layout(codes, groups, ugs, m)
    return (np.empty(m if whole else min(m, np.int64(1) << LEAF_BITS), dtype=COUNT),
            np.empty(m + 1 if need_ties else 0, dtype=np.int64), np.empty(m + 1 if need_ties else 0, dtype=np.int64),
            rank_scratch(m if has_code(codes, CC) else 0))


@njit(**NJIT)
def boot_kernel(codes, states, tstates, r0, r1, groups, z, zshift, z2, E2, u2, lnu2, starts, ugs, slot, eslot, egs,
                w, cs, row, buf, out):
    """Fill ``out[k, r]`` with statistic ``codes[k]`` on bootstrap resample ``r``, for
    ``r0 ≤ r < r1``: one task of the bootstrap (threads run the tasks, :func:`mcref.resampling._bootstrap._by_tasks`).

    A resample is drawn directly as multiplicities ``w`` over the data sorted by u, leaf
    by leaf in order (:func:`mcref.kernels.rng.multinomial_leaf`); each block (a full leaf of 4096
    points, 16 KiB of counts, or the leaves of the last fewer than 4096) has its mean sums and
    bin sums added while it is in
    cache (:func:`mean_acc`, :func:`bin_acc`). Tied
    runs that straddle a bin cut then get a random split of their copies between the bins
    (:func:`split_ties`), and CC its rank pass (:func:`rank_corr`): no index array, no
    sort, O(M) per replicate with sequential memory access. The M counts are kept whole only
    for CC and the tie splits; otherwise one block's counts are reused (the same sums, bit for
    bit, and no M-sized array written per replicate).

    Replicate ``r`` draws its multiplicities from ``states[r]`` and its tie splits from its
    own ``tstates[r]`` (arrays (B, 4), whole): the resamples of a statistic do not depend on
    whether a binned statistic (and which bins) shares the call. The task's scratch is
    allocated once; since every replicate starts from its own states, ``out`` (the whole (K, B)
    array) is the same bits however the replicates are cut into tasks and whatever the thread
    count. Whole arrays and integer ranges: every call has the same types, one compiled
    signature; a serial kernel, not a ``prange`` one (seconds less to compile). ``w``, ``cs``,
    ``row``, ``buf``: the M-sized scratch, :func:`boot_scratch` (a thread's, kept between its tasks).
    """
    m = z.shape[0]
    n_codes = codes.shape[0]
    n_bins = starts.shape[0] - 1
    need, need_bins = needs(codes)
    need_ties, cc_blocks, whole = boot_layout(codes, groups, ugs, m)
    tarr = np.empty(4, dtype=np.uint64)
    leaf = np.int64(1) << LEAF_BITS
    small = np.int64(BIN_PIECE)
    zero = np.int64(0)
    stack = np.empty((STACK_ROWS, 3), dtype=np.int64)
    raw = np.empty(N_RAW)
    s = np.empty(N_SUMS)
    acc = np.empty((n_bins, 4))
    corr = np.zeros((n_bins + 1, 2))
    cuts = np.empty(n_bins + 1, dtype=np.int64)
    res = np.empty(n_codes)
    qb, cb, wide, sat = rank_planes(buf, m if cc_blocks else 0)
    for r in range(r0, r1):
        raw[:] = 0.0
        acc[:, :] = 0.0
        b = np.int64(0)  # not literals: one signature of bin_acc (a literal 0 compiles a second)
        p = np.int64(0)
        st = load_state(states[r])
        if need_ties:  # without tie splits ``tstates`` is not read (may be any (B, 4) array)
            for j in range(4):
                tarr[j] = tstates[r, j]
        pc = zero  # CC's u pass: copies so far, Σ(C³ − C)
        tu = 0.0
        sp = multinomial_start(stack, m, m)
        while sp > 0:  # block by block, in order (multinomial_leaf), its sums taken while it is in L1
            lo, hi, k, sp, st = multinomial_split(st, stack, sp)
            blo = lo  # a block: one full leaf, or the leaves of the last fewer than 4096 points
            st = leaf_counts(st, k, w[lo:hi] if whole else w[:hi - lo])
            while hi - blo < leaf and sp > 0:
                lo, hi, k, sp, st = multinomial_split(st, stack, sp)
                st = leaf_counts(st, k, w[lo:hi] if whole else w[lo - blo:hi - blo])
            wb = w[blo:hi] if whole else w[:hi - blo]
            if need:  # n = Σw = M: not counted (raw[0] set below; a pass over the counts, 9 % of ZMS's)
                mean_acc(wb, zero, hi - blo, leaf, need & ~NEED_N, z[blo:hi], zshift, z2[blo:hi], E2[blo:hi], u2[blo:hi],
                         lnu2[blo:hi], raw)
            if need_bins:  # in pieces of 256 points, most of them inside one bin (bin_acc)
                b, p = bin_acc(wb, zero, hi - blo, small, starts, u2[blo:hi], E2[blo:hi], z2[blo:hi], acc, b, p)
            if cc_blocks:
                pc, tu = rank_u_run(wb, slot[blo:hi], qb, cb, wide, sat, pc, tu)
        raw[0] = np.float64(m)  # the resample's size, exactly the sum of its counts
        if need_ties:
            prefix_counts(w, cs)
            split_ties(tarr, w, cs, groups, starts, E2, z2, cuts, corr, False, row)
        if need_bins:
            bin_finish(starts, acc, corr)
        finish_codes(codes, raw, s, acc, np.float64(m), w, ugs, slot, eslot, egs, buf, res, tu if cc_blocks else -1.0)
        for k in range(n_codes):
            out[k, r] = res[k]


@njit(**NJIT)
def resample_scratch(m, n_bins):
    """Scratch arrays of :func:`draw_resample` for M points and ``n_bins`` bins:
    ``(w, stack, cuts, corr, cs)``, allocated once per task."""
    return (np.empty(m, dtype=COUNT), np.empty((STACK_ROWS, 3), dtype=np.int64),
            np.empty(n_bins + 1, dtype=np.int64), np.empty((n_bins + 1, 2)), np.empty(m + 1, dtype=np.int64))


@njit(**NJIT)
def draw_resample(state, tstate, m, groups, starts, w, stack, cuts, corr, cs, tarr, row):
    """Resample r of :func:`boot_kernel` from its states ``state`` = ``states[r]``
    (multiplicities) and ``tstate`` = ``tstates[r]`` (tie splits; neither is modified,
    ``tarr`` is a 4-word scratch for the tie stream), as the row of point
    indices (u-sorted positions) in the order the kernel walks them: ascending u, tied copies
    in input order except in the tied runs that straddle a bin cut, which :func:`split_ties`
    orders segment by segment (empty ``groups``: no binned statistic)."""
    st = load_state(state)
    sp = multinomial_start(stack, m, m)
    while sp > 0:
        _lo, _hi, sp, st = multinomial_leaf(st, stack, sp, w)
    k = 0
    for i in range(m):
        for _ in range(w[i]):
            row[k] = i
            k += 1
    if groups.shape[0] > 0:
        for j in range(4):  # element by element: no shape-error path to compile
            tarr[j] = tstate[j]
        prefix_counts(w, cs)
        dummy = np.empty(1)
        split_ties(tarr, w, cs, groups, starts, dummy, dummy, cuts, corr, True, row)


@njit(**NJIT)
def boot_indices_kernel(states, tstates, r0, r1, m, groups, starts, out):
    """The resamples r0 ≤ r < r1 that :func:`boot_kernel` draws (:func:`draw_resample`), one row of
    ``out`` (B, M) each, each from its own states: a task (the same bits however cut)."""
    w, stack, cuts, corr, cs = resample_scratch(m, starts.shape[0] - 1)
    tarr = np.empty(4, dtype=np.uint64)
    for r in range(r0, r1):
        draw_resample(states[r], tstates[r], m, groups, starts, w, stack, cuts, corr, cs, tarr, out[r])
