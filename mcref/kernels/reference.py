"""Monte Carlo kernel of the simulated references (docs/methods.md, "Simulated references").

u is fixed, so the bins, the per-bin Σu², Σln u² and the centred average ranks of u
are computed once; each repeat is then one fused O(M) pass over fresh ε (mean and
binned statistics) plus, for CC, one rank pass over |E*| (:mod:`.fastrank`).
The kernel is serial and releases the GIL: threads run chunks of repeats in parallel,
each chunk with its own random streams (see :mod:`mcref.reference`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT
from .fastrank import spearman_fixed_u, spearman_radix
from .generative import NORMAL, PERMUTATION, mixing_df, transform
from .rng import permute_any, permute_scratch
from .units import exchange_levels, permute_units_into
from .variates import fill_gamma, fill_normal
from .stats import CC, N_SUMS, finish_binned, finish_mean, is_binned_code, is_mean_code, pack_sums


@njit(**NJIT)
def mc_chunk_kernel(codes, grp, dcodes, nus, c2s, n_rep, zstates, vstates, zbuf, vbuf, emp, perm, u, starts, su2_bins,
                    su2, slnu2, xu, sxx, xlab, xacc0, xnb, eps, a, rank_scratch, keep, out, pmem, pust, pcst, puid,
                    pscr):
    """Statistics ``codes`` for each repeat r of the chunk and each D: ε = D_d(z, v_d),
    E* = u·ε (u sorted), ``out[d, k, r]`` = statistic k on (E*, u) under D ``dcodes[d]``
    (t(ν) with ν = ``nus[d]``).

    The deviates are drawn here, one repeat at a time, from the repeat's own xoshiro256**
    streams (:mod:`.variates`; one per repeat, :func:`.rng.repeat_states`, so that the repeats
    are independent tasks): z ~ N(0, 1) from ``zstates[r]`` (ziggurat), **once per repeat
    for all D** (common random numbers), and for each t(ν) or normp(p) D, v ~ χ²_k =
    2·Gamma(k/2), k = :func:`.generative.mixing_df`, from its own ``vstates[d, r]`` (``nus[d]``
    is the D's parameter, ν or p); the permutation D is ε = a uniformly random permutation of
    ``perm`` (the data's Z), shuffled from its own ``vstates[d, r]`` (:func:`.rng.permute_any`:
    by buckets from 2²¹ values on),
    and draws no normals. With permutation units (``pust`` non-empty: dependent rows, groups or
    blocks along an order) the permutation D moves whole units of ``perm`` (the data's Z in
    u-sorted order) among the units of equal size instead
    (:func:`.units.permute_units_into`; ``pmem``, ``pust``, ``pcst``, ``puid`` the units,
    ``pscr`` scratch). With u-levels (groups of unequal sizes) the permutation D is not run here
    but by :func:`mc_levels_kernel`, so that a call without groups does not compile the level
    exchange. ``zbuf``/``vbuf`` (one row each) are the scratch rows they are
    drawn into, so nothing of size repeats × M is materialised. The states advance in
    place. With an empty
    ``zstates`` (a user-supplied D, drawn in Python; one D) the rows r of ``zbuf`` are read
    instead. z* = E*/u is taken as ε itself (equal up to rounding). A non-empty ``keep``
    (shape (n_D, n_rep, M)) receives each repeat's ε, for the statistics that are not
    kernel codes (:mod:`.user`).

    ``grp[k]`` conditions a binned statistic: −1 on the bins of u (``starts``), g ≥ 0 on the
    bins of feature g, given as each sorted position's bin label ``xlab[g]`` with the bins'
    counts and Σu² in ``xacc0[g, :xnb[g]]`` (one ε per repeat serves every conditioning).
    Under D d the binned statistics are computed against u·√``c2s[d]`` (1 but for the
    permutation D, whose binned rows measure calibration around the set's own scale ZMS:
    docs/methods.md, "Adaptivity").
    """
    draw = zstates.shape[0] > 0
    plab, pcnt = permute_scratch(perm.shape[0] if pust.shape[0] == 0 else 0)
    need_z = False  # the permutation D alone draws no normals
    for d in range(dcodes.shape[0]):
        if dcodes[d] != PERMUTATION:
            need_z = True
    for r in range(n_rep):
        if draw:
            zr = zbuf[0]
            if need_z:
                fill_normal(zstates[r], zr)
        else:
            zr = zbuf[r]
        for d in range(dcodes.shape[0]):
            e = eps
            if dcodes[d] == PERMUTATION:
                if pust.shape[0] > 0:
                    permute_units_into(vstates[d, r], perm, pmem, pust, pcst, puid, pscr, eps)
                else:
                    permute_any(vstates[d, r], perm, eps, plab, pcnt)
            elif dcodes[d] == NORMAL:  # ε = z: read the row itself, no copy (8 MB a repeat at M = 10⁶)
                e = zr
            else:
                vr = vbuf[0]
                df = mixing_df(dcodes[d], nus[d])
                if draw and df > 0.0:
                    fill_gamma(vstates[d, r], 0.5 * df, vr)
                    for i in range(vr.shape[0]):
                        vr[i] *= 2.0
                transform(dcodes[d], nus[d], zr, vr, emp, eps)
            if keep.shape[1] > 0:
                for i in range(e.shape[0]):  # element by element: no shape-error path to compile
                    keep[d, r, i] = e[i]
            _repeat_stats(codes, grp, c2s[d], e, u, starts, su2_bins, su2, slnu2, xu, sxx, xlab, xacc0, xnb, a,
                          rank_scratch, rank_scratch[5], out[d], r)


@njit(**NJIT)
def mc_levels_kernel(codes, grp, c2, n_rep, vstates, perm, starts, xlab, xacc0, xnb, a, rank_scratch, out, pmem, pust,
                     pcst, puid, pscr, lev, rr, lgid):
    """The permutation D of :func:`mc_chunk_kernel` with u-levels (groups of unequal sizes):
    ``out[k, r]`` = statistic ``codes[k]`` on repeat r, drawn from its own ``vstates[r]``.

    With permutation units (``pust`` non-empty) the whole units' Z-vectors of ``perm`` (the
    data's Z in u-sorted order) first move among the units of equal size
    (:func:`.units.permute_units_into`), then the groups' u-levels are exchanged
    (:func:`.units.exchange_levels`: ``lev[g]`` the level of group g, ``rr`` each point's u
    over its group's level, ``lgid`` its group) on those permuted Z, so u changes per repeat
    and its sums, ranks and feature bins are recomputed (:func:`_level_fixed`). The two moves
    act on different things (Z between groups of one size; u-levels between groups, each
    group's u-order kept) and commute, so one repeat is a uniform draw from their product:
    exact when both hypotheses hold (docs/methods.md, "Dependent test sets"); the Z moves are
    what let a row binned on a feature x vary (the u-level exchange keeps each row's Z and x).
    ``c2``, ``grp``, ``starts``, ``xlab``, ``xacc0``, ``xnb``, ``a``, ``rank_scratch``: as in
    :func:`mc_chunk_kernel`."""
    m = perm.shape[0]
    ustar, us, eps_l, xu_l, eps = np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    luid = np.arange(lev.shape[0])
    lpi = np.empty(lev.shape[0], dtype=np.int64)
    su2b = np.empty(starts.shape[0] - 1)
    xlab_l = np.empty((xlab.shape[0], m), dtype=np.int64)
    xacc_l = np.empty_like(xacc0)
    for r in range(n_rep):
        src = perm
        if pust.shape[0] > 0:  # the Z-vectors among the groups of equal size first (the same stream)
            permute_units_into(vstates[r], perm, pmem, pust, pcst, puid, pscr, eps)
            src = eps
        o, s2, sl, sx = exchange_levels(vstates[r], lev, rr, lgid, luid, lpi, src, ustar, us, eps_l, xu_l)
        _level_fixed(o, us, starts, su2b, xlab, xacc0, xlab_l, xacc_l)
        _repeat_stats(codes, grp, c2, eps_l, us, starts, su2b, s2, sl, xu_l, sx, xlab_l, xacc_l, xnb, a, rank_scratch,
                      rank_scratch[5], out, r)


@njit(**NJIT)
def _level_fixed(o, us, starts, su2b, xlab, xacc0, xlab_l, xacc_l):
    """The sums of a repeat's own u (u-level exchange): Σu² per bin of u (``starts`` over the
    rows sorted by u, ``us``) and, per feature g, each row's bin in that order and the bins'
    (n_b, Σu²) (``xacc0[g, :, 0]`` is the fixed count)."""
    for b in range(starts.shape[0] - 1):
        t = 0.0
        for k in range(starts[b], starts[b + 1]):
            t += us[k] * us[k]
        su2b[b] = t
    for g in range(xlab.shape[0]):
        for b in range(xacc0.shape[1]):
            xacc_l[g, b, 0] = xacc0[g, b, 0]
            xacc_l[g, b, 1] = 0.0
        for k in range(o.shape[0]):
            lab = xlab[g, o[k]]
            xlab_l[g, k] = lab
            xacc_l[g, lab, 1] += us[k] * us[k]


@njit(**NJIT)
def scale_acc(acc, c2, out):
    """``out[b] = (n_b, c2·Σu², ΣE², Σz²/c2)``: the bin sums of ``acc`` against u·√c2."""
    for b in range(acc.shape[0]):
        out[b, 0] = acc[b, 0]
        out[b, 1] = acc[b, 1] * c2
        out[b, 2] = acc[b, 2]
        out[b, 3] = acc[b, 3] / c2


@njit(**NJIT)
def label_acc(lab, eps, u, acc0, acc):
    """Bin sums of (u·ε, u) over the bins given by each point's label ``lab``:
    ``acc[b] = (n_b, Σu², ΣE², Σz²)`` with n_b and Σu² copied from ``acc0`` (fixed u)."""
    for b in range(acc.shape[0]):
        acc[b, 0] = acc0[b, 0]
        acc[b, 1] = acc0[b, 1]
        acc[b, 2] = 0.0
        acc[b, 3] = 0.0
    for i in range(eps.shape[0]):
        z = eps[i]
        e = u[i] * z
        b = lab[i]
        acc[b, 2] += e * e
        acc[b, 3] += z * z


@njit(**NJIT)
def _repeat_stats(codes, grp, c2, eps, u, starts, su2_bins, su2, slnu2, xu, sxx, xlab, xacc0, xnb, a, rank_scratch,
                  rec, out, r):
    """``out[k, r]`` = statistic ``codes[k]`` on (u·ε, u): one pass for the whole-set sums
    (and a = |u·ε| when CC is asked), one over the bins of u when a statistic is binned on
    them, then the rank pass of CC, and one labelled pass per feature that a statistic is
    binned on (``grp``). Each statistic reads only its own sums, so its value does not depend
    on the statistics beside it.

    ``rec`` is ``rank_scratch[5]``, an argument of its own so that numba decides ``rec is None``
    at compile time: the scratch of a set below ``BUCKET_MIN_M`` points has none, and CC's
    rank pass then compiles :func:`.fastrank.spearman_radix` alone, not the bucketed path it
    cannot take (about 5 s less to compile the references on a cold cache, 2-core VM)."""
    m = u.shape[0]
    n_bins = starts.shape[0] - 1
    need_cc = False
    need_bins = False
    for k in range(codes.shape[0]):
        if codes[k] == CC:
            need_cc = True
        if grp[k] < 0 and is_binned_code(codes[k]):
            need_bins = True
    s = np.empty(N_SUMS)
    # the whole-set sums in one pass of their own, cut nowhere: a moment statistic's value does not
    # depend on the bins of the binned statistics beside it (the rounding of per-bin partial sums would)
    tz = 0.0
    tz2 = 0.0
    te2 = 0.0
    for i in range(m):
        z = eps[i]
        e = u[i] * z
        tz += z
        tz2 += z * z
        te2 += e * e
    if need_cc:
        for i in range(m):
            a[i] = abs(u[i] * eps[i])
    acc = np.empty((n_bins if need_bins else 0, 4))
    for b in range(acc.shape[0]):
        bz2 = 0.0
        be2 = 0.0
        # loop over slices: no negative-index checks, so the loops vectorize
        eb = eps[starts[b]:starts[b + 1]]
        ub = u[starts[b]:starts[b + 1]]
        for i in range(eb.shape[0]):
            z = eb[i]
            e = ub[i] * z
            bz2 += z * z
            be2 += e * e
        acc[b, 0] = np.float64(starts[b + 1] - starts[b])
        acc[b, 1] = su2_bins[b]
        acc[b, 2] = be2
        acc[b, 3] = bz2
    fm = np.float64(m)
    pack_sums(s, fm, tz, tz2 - tz * tz / fm, tz2, te2, su2, slnu2)
    if c2 != 1.0:
        scaled = np.empty((acc.shape[0], 4))
        scale_acc(acc, c2, scaled)
        acc = scaled
    for g in range(xlab.shape[0]):
        used = False
        for k in range(codes.shape[0]):
            if grp[k] == g:
                used = True
        if not used:
            continue
        xacc = np.empty((xnb[g], 4))
        label_acc(xlab[g], eps, u, xacc0[g], xacc)
        if c2 != 1.0:
            scale_acc(xacc.copy(), c2, xacc)
        for k in range(codes.shape[0]):
            if grp[k] == g:
                out[k, r] = finish_binned(codes[k], xacc, fm)
    for k in range(codes.shape[0]):
        c = codes[k]
        if grp[k] >= 0:
            continue
        if is_mean_code(c):
            out[k, r] = finish_mean(c, s)
        elif is_binned_code(c):
            out[k, r] = finish_binned(c, acc, fm)
        else:
            if rec is None:  # pruned at compile time: one path compiles
                out[k, r] = spearman_radix(a, xu, sxx, rank_scratch)
            else:
                out[k, r] = spearman_fixed_u(a, xu, sxx, rank_scratch)
