"""Calibration statistics as numba kernels (docs/methods.md, "Statistics", "Bootstrap").

All statistics are evaluated on data pre-sorted by ``u`` (stable order) and carry a
vector of integer weights ``w`` (multiplicities): ``w = 1`` gives the estimate, a
bootstrap resample is the multiset with counts ``w``, so no resample needs a sort
(docs/methods.md, "Bootstrap"). One evaluator, :func:`eval_weighted`, serves both; it
computes any subset of the statistics in at most three O(M) passes:

* mean pass — weighted sums of z, z², E², u², ln u² (ZMS, MZ, VarZ, MSE, MV, RCE, RCE2, NLL);
* bin pass — walks the sorted points with their multiplicities; equal-count bin
  boundaries are fixed positions of the expanded sequence, and a point whose copies
  straddle a boundary is split (ENCE, ZMSE, UCE);
* rank pass — average ranks of u from its tie groups, of |E| from the pre-sorted
  order of |E| and its tie groups, both with multiplicities (CC = Pearson correlation
  of the average ranks, i.e. Spearman's ρ with ties).

Statistic codes are the integer constants below; the registry in :mod:`mcref.stats`
maps names to codes.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._config import NJIT, NJIT_EXACT, NJIT_PARALLEL

ZMS, MZ, VARZ, MSE, MV, RCE, RCE2, NLL, CC, ENCE, ZMSE, UCE = range(12)
N_CODES = 12
LN_2PI = float(np.log(2.0 * np.pi))

# indices of the mean-pass sums
_S0, _SZ, _SZC2, _SZ2, _SE2, _SU2, _SLNU2 = range(7)
N_SUMS = 7
#: points per parallel block of the O(M) jackknife
_JACK_BLOCK = 4096


@njit(**NJIT)
def is_mean_code(code):
    """True for statistics that are functions of plain means (O(M) jackknife)."""
    return code <= NLL


@njit(**NJIT)
def is_binned_code(code):
    """True for statistics over equal-count bins of u (ENCE, ZMSE, UCE)."""
    return code >= ENCE


@njit(**NJIT)
def finish_mean(code, s):
    """Statistic ``code`` from the mean-pass sums ``s`` (see ``_S*`` indices).

    ZMS = ⟨z²⟩; MZ = ⟨z⟩; VarZ = Σ(z−z̄)²/(n−1) (from sums of z−c, c a shift);
    MSE = ⟨E²⟩; MV = ⟨u²⟩; RCE = (√MV − √MSE)/√MV; RCE2 = (MV − MSE)/MV;
    NLL = ½(⟨z²⟩ + ⟨ln u²⟩ + ln 2π).
    """
    n = s[_S0]
    if code == ZMS:
        return s[_SZ2] / n
    if code == MZ:
        return s[_SZ] / n
    if code == VARZ:
        # s[_SZ] is Σ z, s[_SZC2] is Σ (z - c)^2 and the shift c cancels through
        # Σ(z-c) = Σz - n c; see mean_sums
        return s[_SZC2] / (n - 1.0)
    if code == MSE:
        return s[_SE2] / n
    if code == MV:
        return s[_SU2] / n
    if code == RCE:
        rmv = np.sqrt(s[_SU2] / n)
        return (rmv - np.sqrt(s[_SE2] / n)) / rmv
    if code == RCE2:
        mv = s[_SU2] / n
        return (mv - s[_SE2] / n) / mv
    if code == NLL:
        return 0.5 * (s[_SZ2] / n + s[_SLNU2] / n + LN_2PI)
    return np.nan


@njit(**NJIT)
def finish_binned(code, acc, n_total):
    """Binned statistic ``code`` from per-bin sums ``acc[b] = (n_b, Σu², ΣE², Σz²)``.

    ENCE = (1/N) Σ_b |RMV_b − RMSE_b| / RMV_b; ZMSE = (1/N) Σ_b |ln ZMS_b|;
    UCE = Σ_b (n_b/M) |MV_b − MSE_b|.
    """
    n_bins = acc.shape[0]
    tot = 0.0
    for b in range(n_bins):
        nb = acc[b, 0]
        mv = acc[b, 1] / nb
        mse = acc[b, 2] / nb
        if code == ENCE:
            rmv = np.sqrt(mv)
            tot += abs(rmv - np.sqrt(mse)) / rmv
        elif code == ZMSE:
            tot += abs(np.log(acc[b, 3] / nb))
        else:  # UCE
            tot += nb / n_total * abs(mv - mse)
    if code == UCE:
        return tot
    return tot / n_bins


@njit(**NJIT)
def mean_sums(w, z, zshift, z2, E2, u2, lnu2, s):
    """Weighted sums of the mean pass into ``s`` (length N_SUMS); ``w`` are multiplicities.

    VarZ uses the shifted values z − c (c = ``zshift``, the data mean of z) and the
    one-pass formula Σw(z−c)² − (Σw(z−c))²/n, exact up to rounding and free of
    cancellation when c is near the mean.
    """
    s0 = 0.0
    sz = 0.0
    szc = 0.0
    szc2 = 0.0
    sz2 = 0.0
    se2 = 0.0
    su2 = 0.0
    sl = 0.0
    for i in range(w.shape[0]):
        wi = np.float64(w[i])
        zc = z[i] - zshift
        s0 += wi
        sz += wi * z[i]
        szc += wi * zc
        szc2 += wi * zc * zc
        sz2 += wi * z2[i]
        se2 += wi * E2[i]
        su2 += wi * u2[i]
        sl += wi * lnu2[i]
    pack_sums(s, s0, sz, szc2 - szc * szc / s0, sz2, se2, su2, sl)


@njit(**NJIT)
def pack_sums(s, n, sz, szc2, sz2, se2, su2, slnu2):
    """Store the mean-pass sums in ``s`` (n, Σz, Σ(z − z̄)², Σz², ΣE², Σu², Σln u²)."""
    s[_S0] = n
    s[_SZ] = sz
    s[_SZC2] = szc2
    s[_SZ2] = sz2
    s[_SE2] = se2
    s[_SU2] = su2
    s[_SLNU2] = slnu2


@njit(**NJIT)
def prefix_counts(w, cs):
    """``cs[i] = w[0] + … + w[i−1]`` (``cs[0] = 0``, length M + 1)."""
    c = 0
    cs[0] = 0
    for i in range(w.shape[0]):
        c += w[i]
        cs[i + 1] = c


@njit(**NJIT)
def bin_sums(w, starts, u2, E2, z2, acc, cs, cs_ready, corr):
    """Per-bin weighted sums ``acc[b] = (n_b, Σu², ΣE², Σz²)`` over equal-count bins.

    Points are in u order; the expanded sequence (point i repeated w[i] times) is cut
    at the fixed positions ``starts``. With the prefix sums ``cs`` of w (scratch of
    length M + 1), the points holding a bin's first and last positions are found by
    binary search (with ``cs_ready`` the caller has filled ``cs`` already); the interior
    points enter a contiguous weighted sum (looped over slices, so numba emits no
    negative-index checks and the loop vectorizes) and the two end points only with the
    copies that fall inside the bin.

    ``corr[b] = (ΔΣE², ΔΣz²)`` moves sums from bin b to bin b − 1 (b ≥ 1): the
    bootstrap's random order of tied copies at a cut (:func:`mcref.kernels.bootstrap.split_ties`);
    zeros keep the input order.
    """
    n_bins = starts.shape[0] - 1
    if not cs_ready:
        prefix_counts(w, cs)
    for b in range(n_bins):
        lo = starts[b]
        hi = starts[b + 1]
        # point holding position P: cs[i] <= P < cs[i + 1]
        i0 = np.searchsorted(cs, lo, side="right") - 1
        i1 = np.searchsorted(cs, hi - 1, side="right") - 1
        if i0 == i1:
            k0 = np.float64(hi - lo)
            k1 = 0.0
        else:
            k0 = np.float64(cs[i0 + 1] - lo)  # copies of i0 inside the bin
            k1 = np.float64(hi - cs[i1])  # copies of i1 inside the bin
        su = k0 * u2[i0] + k1 * u2[i1]
        se = k0 * E2[i0] + k1 * E2[i1]
        sz = k0 * z2[i0] + k1 * z2[i1]
        ww = w[i0 + 1:i1]
        uu = u2[i0 + 1:i1]
        ee = E2[i0 + 1:i1]
        zz = z2[i0 + 1:i1]
        for k in range(ww.shape[0]):
            wk = np.float64(ww[k])
            su += wk * uu[k]
            se += wk * ee[k]
            sz += wk * zz[k]
        acc[b, 0] = np.float64(hi - lo)
        acc[b, 1] = su
        acc[b, 2] = se
        acc[b, 3] = sz
    for b in range(1, n_bins):
        acc[b - 1, 2] += corr[b, 0]
        acc[b, 2] -= corr[b, 0]
        acc[b - 1, 3] += corr[b, 1]
        acc[b, 3] -= corr[b, 1]


@njit(**NJIT)
def rank_corr(w, ugs, eord, egs, xu):
    """Spearman ρ of (u, |E|) with multiplicities ``w``: Pearson correlation of average ranks.

    ``ugs`` are the starts of the tie groups of u (sorted order, last = M); ``eord`` is
    the order of the points by |E| and ``egs`` the starts of its tie groups. A tie
    group of total multiplicity C starting after p copies gets rank p + (C + 1)/2.
    ``xu`` is scratch (M,) for the centred u-ranks.
    """
    n = 0.0
    for i in range(w.shape[0]):
        n += np.float64(w[i])
    mid = 0.5 * (n + 1.0)
    p = 0.0
    sxx = 0.0
    for g in range(ugs.shape[0] - 1):
        c = 0.0
        for i in range(ugs[g], ugs[g + 1]):
            c += np.float64(w[i])
        r = p + 0.5 * (c + 1.0) - mid
        for i in range(ugs[g], ugs[g + 1]):
            xu[i] = r
        sxx += c * r * r
        p += c
    p = 0.0
    syy = 0.0
    sxy = 0.0
    for g in range(egs.shape[0] - 1):
        c = 0.0
        sx = 0.0
        for k in range(egs[g], egs[g + 1]):
            i = eord[k]
            wi = np.float64(w[i])
            c += wi
            sx += wi * xu[i]
        r = p + 0.5 * (c + 1.0) - mid
        sxy += r * sx
        syy += c * r * r
        p += c
    return sxy / np.sqrt(sxx * syy)


@njit(**NJIT)
def eval_weighted(codes, w, z, zshift, z2, E2, u2, lnu2, starts, ugs, eord, egs, s, acc, cs, cs_ready, corr, xu,
                  out):
    """Evaluate the statistics ``codes`` on the multiset (sorted data, multiplicities ``w``)."""
    need_mean = False
    need_bins = False
    for c in codes:
        if is_mean_code(c):
            need_mean = True
        elif is_binned_code(c):
            need_bins = True
    if need_mean:
        mean_sums(w, z, zshift, z2, E2, u2, lnu2, s)
    if need_bins:
        bin_sums(w, starts, u2, E2, z2, acc, cs, cs_ready, corr)
    for k in range(codes.shape[0]):
        c = codes[k]
        if is_mean_code(c):
            out[k] = finish_mean(c, s)
        elif is_binned_code(c):
            out[k] = finish_binned(c, acc, np.float64(z.shape[0]))
        else:
            out[k] = rank_corr(w, ugs, eord, egs, xu)


@njit(**NJIT_EXACT)
def scan_E_u(E, u, out):
    """One pass over unsorted (E, u): ``out = (#non-finite, max|E|, min u, max u, max|E/u|)``.

    Exact IEEE arithmetic (no fastmath), so that ``E/u`` and the extremes are those that
    ``mcref._validation.check_E_u`` computes with NumPy; u <= 0 makes ``min u`` <= 0.
    """
    bad = 0
    emax = 0.0
    umin = np.inf
    umax = 0.0
    zmax = 0.0
    for i in range(E.shape[0]):
        e = E[i]
        v = u[i]
        if not (np.isfinite(e) and np.isfinite(v)):
            bad += 1
            continue
        ae = abs(e)
        az = abs(e / v)
        emax = max(emax, ae)
        umin = min(umin, v)
        umax = max(umax, abs(v))
        zmax = max(zmax, az)
    out[0] = bad
    out[1] = emax
    out[2] = umin
    out[3] = umax
    out[4] = zmax


@njit(**NJIT)
def moments_kernel(codes, E, u, out):
    """Mean-type statistics ``codes`` of unsorted (E, u) from the sums they need only.

    z = E/u; one pass accumulates Σz, Σz², ΣE², Σu² and, for NLL only, Σ ln u²; VarZ
    adds a second pass for Σ(z − c)², c = Σz/n (see :func:`mean_sums`). No sort, no
    temporary array: :func:`finish_mean` gives the values (docs/methods.md, "Statistics").
    """
    need_z = False
    need_var = False
    need_z2 = False
    need_e2 = False
    need_u2 = False
    need_ln = False
    for c in codes:
        need_z |= c == MZ
        need_var |= c == VARZ
        need_z2 |= (c == ZMS) | (c == NLL)
        need_e2 |= (c == MSE) | (c == RCE) | (c == RCE2)
        need_u2 |= (c == MV) | (c == RCE) | (c == RCE2)
        need_ln |= c == NLL
    m = E.shape[0]
    sz = 0.0
    sz2 = 0.0
    se2 = 0.0
    su2 = 0.0
    sl = 0.0
    if need_z or need_var:
        for i in range(m):
            sz += E[i] / u[i]
    if need_z2:
        for i in range(m):
            z = E[i] / u[i]
            sz2 += z * z
    if need_e2:
        for i in range(m):
            se2 += E[i] * E[i]
    if need_u2:
        for i in range(m):
            su2 += u[i] * u[i]
    if need_ln:
        for i in range(m):
            sl += np.log(u[i] * u[i])
    szc2 = 0.0
    if need_var:
        c = sz / m
        szc = 0.0
        for i in range(m):
            zc = E[i] / u[i] - c
            szc += zc
            szc2 += zc * zc
        szc2 -= szc * szc / m
    s = np.empty(N_SUMS)
    pack_sums(s, np.float64(m), sz, szc2, sz2, se2, su2, sl)
    for k in range(codes.shape[0]):
        out[k] = finish_mean(codes[k], s)


# --------------------------------------------------------------------------- jackknife


@njit(**NJIT_PARALLEL)
def jack_mean_kernel(code, z, zshift, z2, E2, u2, lnu2, out):
    """Leave-one-out values of a mean-type statistic in O(M) from the total sums."""
    m = z.shape[0]
    w = np.ones(m, dtype=np.int64)
    tot = np.empty(N_SUMS)
    mean_sums(w, z, zshift, z2, E2, u2, lnu2, tot)
    # raw Σ(z-c) and Σ(z-c)^2 for the VarZ update
    szc = 0.0
    szc2 = 0.0
    for i in range(m):
        zc = z[i] - zshift
        szc += zc
        szc2 += zc * zc
    # blocks of points, one scratch vector per block: no allocation per point
    n_blocks = (m + _JACK_BLOCK - 1) // _JACK_BLOCK
    for blk in prange(n_blocks):
        s = np.empty(N_SUMS)
        for j in range(blk * _JACK_BLOCK, min((blk + 1) * _JACK_BLOCK, m)):
            zc = z[j] - zshift
            s[_S0] = tot[_S0] - 1.0
            s[_SZ] = tot[_SZ] - z[j]
            a = szc - zc
            s[_SZC2] = (szc2 - zc * zc) - a * a / s[_S0]
            s[_SZ2] = tot[_SZ2] - z2[j]
            s[_SE2] = tot[_SE2] - E2[j]
            s[_SU2] = tot[_SU2] - u2[j]
            s[_SLNU2] = tot[_SLNU2] - lnu2[j]
            out[j] = finish_mean(code, s)


@njit(**NJIT)
def prefix_sums(u2, E2, z2):
    """Prefix sums (length M + 1, starting at 0) of u², E² and Z² over the u-sorted points:
    the sums of any run of points in O(1), for the leave-one-out kernels."""
    m = u2.shape[0]
    pu = np.zeros(m + 1)
    pe = np.zeros(m + 1)
    pz = np.zeros(m + 1)
    for i in range(m):
        pu[i + 1] = pu[i] + u2[i]
        pe[i + 1] = pe[i] + E2[i]
        pz[i + 1] = pz[i] + z2[i]
    return pu, pe, pz


@njit(**NJIT_PARALLEL)
def jack_binned_kernel(code, starts_m1, u2, E2, z2, out):
    """Leave-one-out values of a binned statistic in O(M·N).

    Removing sorted point p keeps the stable order of the others; the M−1 points are
    re-binned at ``starts_m1`` (equal-count starts for M−1) and each bin's sums are
    read from prefix sums: reduced positions [a, b) are original positions
    [a + (a ≥ p), b + (b > p)) minus p when p falls inside.
    """
    m = u2.shape[0]
    n_bins = starts_m1.shape[0] - 1
    pu, pe, pz = prefix_sums(u2, E2, z2)
    for p in prange(m):
        acc = np.empty((n_bins, 4))
        for b in range(n_bins):
            a = starts_m1[b]
            e = starts_m1[b + 1]
            lo = a + (1 if a >= p else 0)
            hi = e + (1 if e > p else 0)
            su = pu[hi] - pu[lo]
            se = pe[hi] - pe[lo]
            sz = pz[hi] - pz[lo]
            if lo <= p < hi:
                su -= u2[p]
                se -= E2[p]
                sz -= z2[p]
            acc[b, 0] = np.float64(e - a)
            acc[b, 1] = su
            acc[b, 2] = se
            acc[b, 3] = sz
        out[p] = finish_binned(code, acc, np.float64(m - 1))


@njit(**NJIT_PARALLEL)
def jack_cc_kernel(us, ae, ru, re, out):
    """Leave-one-out Spearman ρ in O(M) per point (O(M²) in all, parallel over points).

    Removing point j lowers the average rank of point i by 1 if its value is above
    the left-out one, by ½ if tied, by 0 otherwise (for u and |E| alike).
    """
    m = us.shape[0]
    mid = 0.5 * m  # mean rank of M-1 points
    for j in prange(m):
        uj = us[j]
        ej = ae[j]
        sxy = 0.0
        sxx = 0.0
        syy = 0.0
        for i in range(m):
            x = ru[i] - mid - (1.0 if us[i] > uj else (0.5 if us[i] == uj else 0.0))
            y = re[i] - mid - (1.0 if ae[i] > ej else (0.5 if ae[i] == ej else 0.0))
            sxy += x * y
            sxx += x * x
            syy += y * y
        # remove the term of i == j itself (x = ru_j - mid - 1/2, likewise y)
        x = ru[j] - mid - 0.5
        y = re[j] - mid - 0.5
        sxy -= x * y
        sxx -= x * x
        syy -= y * y
        out[j] = sxy / np.sqrt(sxx * syy)
