"""Calibration statistics as numba kernels (docs/methods.md, "Statistics", "Bootstrap").

All statistics are evaluated on data pre-sorted by ``u`` (stable order) and carry a
vector of integer weights ``w`` (multiplicities): ``w = 1`` gives the estimate, a
bootstrap resample is the multiset with counts ``w``, so no resample needs a sort
(docs/methods.md, "Bootstrap"). One evaluator, :func:`eval_weighted`, serves both; it
computes any subset of the statistics in at most three O(M) passes:

* mean pass — weighted sums of z, z², E², u², ln u², only those the requested
  statistics need (:func:`mean_acc`; ZMS, MZ, VarZ, MSE, MV, RCE, RCE2, NLL);
* bin pass — walks the sorted points with their multiplicities; equal-count bin
  boundaries are fixed positions of the expanded sequence, and a point whose copies
  straddle a boundary is split (:func:`bin_acc`; ENCE, ZMSE, UCE);
* rank pass — average ranks of u from its tie groups, of |E| from the pre-sorted
  order of |E| and its tie groups, both with multiplicities (:func:`rank_corr`; CC =
  Pearson correlation of the average ranks, i.e. Spearman's ρ with ties).

The mean and bin passes work on any range of points, so the bootstrap runs them on each
leaf of counts as it is drawn (:mod:`mcref.kernels.bootstrap`). Moments of unsorted data
(:func:`moments_kernel`) need no sort at all.

Statistic codes are the integer constants below; the registry in :mod:`mcref.stats`
maps names to codes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT, NJIT_EXACT, NJIT_ORDERED
from .rng import COUNT

ZMS, MZ, VARZ, MSE, MV, RCE, RCE2, NLL, CC, ENCE, ZMSE, UCE = range(12)
N_CODES = 12
LN_2PI = float(np.log(2.0 * np.pi))

# indices of the mean-pass sums
_S0, _SZ, _SZC2, _SZ2, _SE2, _SU2, _SLNU2 = range(7)
N_SUMS = 7


@njit(**NJIT)
def is_mean_code(code):
    """True for statistics that are functions of plain means (O(M) jackknife)."""
    return code <= NLL


@njit(**NJIT)
def is_binned_code(code):
    """True for statistics over equal-count bins of u (ENCE, ZMSE, UCE)."""
    return code >= ENCE


@njit(**NJIT)
def has_code(codes, code):
    """True when ``code`` is among ``codes``. A call, so the flag is typed ``bool`` in its
    caller: a flag set to ``False`` and then updated in a loop reached the callees it is passed
    to first as ``Literal[bool](False)`` (numba types a call as soon as its arguments have a
    type), compiling one more specialization of each."""
    for c in codes:
        if c == code:
            return True
    return False


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


@njit(**NJIT_ORDERED)
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
        else:  # UCE: (n_b/M)·|MV_b − MSE_b| = |Σu²_b − ΣE²_b|/M (exactly 0 when the sums agree)
            tot += abs(acc[b, 1] - acc[b, 2]) / n_total
    if code == UCE:
        return tot
    return tot / n_bins


# bits of the sums a set of mean-type statistics needs (:func:`mean_need`); NEED_N: the count n = Σw,
# which the row bootstrap knows (n = M) and leaves out (:func:`mcref.kernels.bootstrap.boot_kernel`)
NEED_Z, NEED_ZC, NEED_Z2, NEED_E2, NEED_U2, NEED_LN, NEED_N = 1, 2, 4, 8, 16, 32, 64
NEED_ALL = 127
#: raw accumulators of :func:`mean_acc`: n, Σz, Σ(z−c), Σ(z−c)², Σz², ΣE², Σu², Σln u²
N_RAW = 8


@njit(**NJIT)
def mean_need(codes):
    """Bit mask (NEED_*) of the sums that the mean-type statistics among ``codes`` need."""
    need = 0
    for c in codes:
        if c == MZ:
            need |= NEED_Z
        elif c == VARZ:
            need |= NEED_ZC
        elif c == ZMS:
            need |= NEED_Z2
        elif c == MSE:
            need |= NEED_E2
        elif c == MV:
            need |= NEED_U2
        elif c == RCE or c == RCE2:
            need |= NEED_E2 | NEED_U2
        elif c == NLL:
            need |= NEED_Z2 | NEED_LN
    return need | NEED_N if need else need


@njit(**NJIT)
def mean_acc(w, lo, hi, piece, need, z, zshift, z2, E2, u2, lnu2, raw):
    """Add the weighted sums of points ``[lo, hi)`` that ``need`` asks for to ``raw`` (N_RAW),
    one piece of ``piece`` points from ``lo`` at a time.

    One short loop per sum, each reading ``w`` and one data array: a statistic reads only
    its own arrays (ZMS: z² alone). The bootstrap passes a block of counts (up to 4096 points) while
    it is in L1 (docs/methods.md, "Bootstrap"). A call with arrays costs numba an atomic
    reference count per array on entry and on exit (7 arrays here); once per leaf of 256 points
    that was 40 % of ZMS's bootstrap (1.23 against 0.75 ns per element·replicate, one thread,
    M = 13 885). Loops run over slices, so numba emits no negative-index checks and they vectorize.
    The count n = Σw (``raw[0]``) is taken only under ``NEED_N``: the row bootstrap knows it is M.
    """
    for a in range(lo, hi, piece):
        b = min(a + piece, hi)
        ww = w[a:b]
        if need & NEED_N:
            n = 0
            for i in range(ww.shape[0]):
                n += ww[i]
            raw[0] += np.float64(n)
        if need & NEED_Z:
            raw[1] += wsum(ww, z[a:b])
        if need & NEED_ZC:
            s1, s2 = wsum_centered(ww, z[a:b], zshift)
            raw[2] += s1
            raw[3] += s2
        if need & NEED_Z2:
            raw[4] += wsum(ww, z2[a:b])
        if need & NEED_E2:
            raw[5] += wsum(ww, E2[a:b])
        if need & NEED_U2:
            raw[6] += wsum(ww, u2[a:b])
        if need & NEED_LN:
            raw[7] += wsum(ww, lnu2[a:b])


@njit(**NJIT_EXACT)
def wsum_centered(w, x, c):
    """(Σ w_i (x_i − c), Σ w_i (x_i − c)²) in strict IEEE order.

    Exact options (no fastmath): with contraction allowed, the freshly compiled kernel and
    the one loaded from numba's cache fused these products into FMAs differently, and VarZ
    of a replicate differed by an ulp between a run that compiled and one that loaded the
    cache (tests/test_bootstrap.py, the subprocess determinism test on a cold cache).
    """
    a = 0.0
    b = 0.0
    for i in range(w.shape[0]):
        wi = np.float64(w[i])
        d = x[i] - c
        a += wi * d
        b += wi * d * d
    return a, b


@njit(**NJIT)
def wsum(w, x):
    """Σ w_i x_i (integer weights)."""
    a = 0.0
    for i in range(w.shape[0]):
        a += np.float64(w[i]) * x[i]
    return a


@njit(**NJIT)
def mean_finish(raw, s):
    """Mean-pass sums ``s`` (N_SUMS) from the raw accumulators of :func:`mean_acc`.

    VarZ uses the shifted values z − c (c = ``zshift``, the data mean of z) and the
    one-pass formula Σw(z−c)² − (Σw(z−c))²/n, exact up to rounding and free of
    cancellation when c is near the mean.
    """
    n = raw[0]
    pack_sums(s, n, raw[1], raw[3] - raw[2] * raw[2] / n, raw[4], raw[5], raw[6], raw[7])


@njit(**NJIT)
def mean_sums(w, z, zshift, z2, E2, u2, lnu2, s):
    """All the weighted sums of the mean pass into ``s`` (N_SUMS); ``w`` are multiplicities."""
    raw = np.zeros(N_RAW)
    mean_acc(w, np.int64(0), w.shape[0], max(w.shape[0], 1), np.int64(NEED_ALL), z, zshift, z2, E2, u2, lnu2, raw)
    mean_finish(raw, s)


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


@njit(**NJIT, inline="always")
def _bin_piece(w, lo, hi, starts, u2, E2, z2, acc, b, p):
    """Add points ``[lo, hi)`` with multiplicities ``w`` to the equal-count bin sums
    ``acc[b] += (·, Σu², ΣE², Σz²)``; returns the updated ``(b, p)`` (:func:`bin_acc`'s pieces,
    inlined there: a call per piece would cost the atomic reference counts of its 7 arrays).

    Points are in u order; ``p`` copies precede point ``lo`` and the current bin is ``b``
    (start with 0, 0). The expanded sequence (point i repeated w[i] times) is cut at the
    fixed positions ``starts``: the points whose copies all fall in bin b enter it in one
    contiguous weighted loop (:func:`wsum3`), and a point whose copies straddle a cut is
    split between the bins. The bootstrap calls it once per leaf of counts; the counts
    ``acc[:, 0]`` are set by :func:`bin_finish`.
    """
    n_bins = starts.shape[0] - 1
    ww = w[lo:hi]  # slices: no negative-index checks, the loops vectorize
    n = ww.shape[0]
    k = 0
    for i in range(n):
        k += ww[i]
    if b < n_bins and p + k < starts[b + 1]:  # no cut inside: the common case
        su, se, sz = wsum3(ww, u2[lo:hi], E2[lo:hi], z2[lo:hi])
        acc[b, 1] += su
        acc[b, 2] += se
        acc[b, 3] += sz
        return b, p + k
    j0 = 0
    while j0 < n and b < n_bins:
        room = starts[b + 1] - p
        c = 0
        j = j0
        while j < n and c + ww[j] <= room:  # points wholly inside bin b
            c += ww[j]
            j += 1
        su, se, sz = wsum3(ww[j0:j], u2[lo + j0:lo + j], E2[lo + j0:lo + j], z2[lo + j0:lo + j])
        acc[b, 1] += su
        acc[b, 2] += se
        acc[b, 3] += sz
        p += c
        if p == starts[b + 1]:
            b += 1
        if j == n:
            break
        i = lo + j  # its copies straddle the cut at starts[b + 1]
        left = ww[j]
        while left > 0 and b < n_bins:
            take = min(left, starts[b + 1] - p)
            t = np.float64(take)
            acc[b, 1] += t * u2[i]
            acc[b, 2] += t * E2[i]
            acc[b, 3] += t * z2[i]
            p += take
            left -= take
            if p == starts[b + 1]:
                b += 1
        j0 = j + 1
    return b, p


@njit(**NJIT)
def bin_acc(w, lo, hi, piece, starts, u2, E2, z2, acc, b, p):
    """:func:`_bin_piece` over points ``[lo, hi)``, one piece of ``piece`` points from ``lo`` at a
    time. The bootstrap passes a block of up to 4096 points in pieces of 256, most of which then lie
    inside one bin: :func:`_bin_piece`'s vectorized sums, not its scalar walk to a cut (ENCE's
    bootstrap took 1.13–1.21× longer, M = 13 885–10⁵, in pieces of 4096). Returns the updated ``(b, p)``."""
    for a in range(lo, hi, piece):
        b, p = _bin_piece(w, a, min(a + piece, hi), starts, u2, E2, z2, acc, b, p)
    return b, p


@njit(**NJIT)
def wsum3(w, x, y, v):
    """(Σ w_i x_i, Σ w_i y_i, Σ w_i v_i), integer weights, one pass."""
    a = 0.0
    c = 0.0
    d = 0.0
    for i in range(w.shape[0]):
        wi = np.float64(w[i])
        a += wi * x[i]
        c += wi * y[i]
        d += wi * v[i]
    return a, c, d


@njit(**NJIT)
def bin_finish(starts, acc, corr):
    """Bin counts into ``acc[:, 0]``, then ``corr[b] = (ΔΣE², ΔΣz²)`` moved from bin b to
    bin b − 1 (b ≥ 1): the bootstrap's random order of tied copies at a cut
    (:func:`mcref.kernels.bootstrap.split_ties`); zeros keep the input order."""
    n_bins = starts.shape[0] - 1
    for b in range(n_bins):
        acc[b, 0] = np.float64(starts[b + 1] - starts[b])
    for b in range(1, n_bins):
        acc[b - 1, 2] += corr[b, 0]
        acc[b, 2] -= corr[b, 0]
        acc[b - 1, 3] += corr[b, 1]
        acc[b, 3] -= corr[b, 1]


@njit(**NJIT, inline="always")
def bin_sums(w, starts, u2, E2, z2, acc, corr):
    """Per-bin weighted sums ``acc[b] = (n_b, Σu², ΣE², Σz²)`` over equal-count bins of the
    multiset (sorted points, multiplicities ``w``): :func:`bin_acc` over all points, then
    :func:`bin_finish`."""
    acc[:, :] = 0.0
    bin_acc(w, np.int64(0), w.shape[0], max(w.shape[0], 1), starts, u2, E2, z2, acc, np.int64(0),
            np.int64(0))  # no literals
    bin_finish(starts, acc, corr)


#: positions of the |E| order per block of :func:`rank_corr` (32 Ki points: 512 KiB of ``buf``, in L2)
RANK_BLOCK = 1 << 15


#: dtype of :func:`rank_corr`'s buffer (:func:`rank_scratch`)
RANK_BUF = np.uint32

#: a point's count in CC's rank buffer takes one byte, saturated here; a count this large or larger is
#: kept whole in the buffer's third plane (:func:`wide_counts`)
COUNT_SAT = 255


@njit(**NJIT)
def rank_scratch(m):
    """CC's rank buffer for M = ``m`` points (:func:`rank_corr`): one array of :data:`RANK_BUF` that
    :func:`rank_planes` cuts into q = 2p + C + 1 per point (twice its run's average rank: an integer
    below 2³² for M < 2³¹), its count w_i in one byte saturated at :data:`COUNT_SAT`, the counts of
    :data:`COUNT_SAT` or more whole, and a flag that such a count was stored.

    5 bytes a point are written and read per replicate where (w_i, q) as two uint32 took 8, and
    (w_i, w_i·x_i) as float64 16: the u pass writes and the |E| pass reads them once per replicate,
    at random inside blocks, and at M = 10⁶ the two threads' buffers beside the shared slots
    overflowed the 32 MB L3 (docs/methods.md, "Bootstrap"). The whole counts are written and read
    only where a count reaches 255 (never in practice: a resample's count is binomial(M, 1/M)), so
    their pages are not touched."""
    buf = np.empty(2 * m + (m + 3) // 4 + 1, dtype=RANK_BUF)
    buf[-1] = 0
    return buf


@njit(**NJIT, inline="always")
def rank_planes(buf, m):
    """``(q, count bytes, whole counts, flag)`` of :func:`rank_scratch`'s ``buf`` for M = ``m``
    points."""
    n = buf.shape[0] - 1
    return buf[:m], buf[2 * m:n].view(np.uint8), buf[m:2 * m], buf[n:]


@njit(**NJIT)
def wide_counts(w, slot, cb, wide, sat):
    """The rare path of CC's u pass over ``w``, where a count reaches :data:`COUNT_SAT`: each ``w_i`` ≥
    :data:`COUNT_SAT` whole at ``wide[slot[i]]`` and :data:`COUNT_SAT` in its byte, and the flag
    ``sat`` set. A loop of its own, so that the pass stores every count's low byte with no branch
    (a branch or a ``min`` there took 0.3 ns a point of 1.0 at M = 10⁶)."""
    for i in range(w.shape[0]):
        if w[i] >= COUNT_SAT:
            cb[slot[i]] = COUNT_SAT
            wide[slot[i]] = w[i]
    sat[0] = 1


@njit(**NJIT)
def touch(qb, cb, lo, hi):
    """Read one value per cache line of ``qb[lo:hi]`` and ``cb[lo:hi]`` (sequential, prefetched;
    4-byte and 1-byte values): brings a block into cache before :func:`rank_corr` reads it at random."""
    t = 0
    for j in range(lo, hi, 16):
        t += qb[j]
    for j in range(lo, hi, 64):
        t += cb[j]
    return t


@njit(**NJIT)
def rank_u_run(w, slot, qb, cb, wide, sat, p, tu):
    """The u pass of :func:`rank_corr` where u has no ties, over the consecutive points of ``w`` (one
    point per run): ``qb[slot[i]] = 2p + w_i + 1`` and ``cb[slot[i]] = w_i`` (one byte), p the copies
    before point i (``qb, cb, wide, sat``: :func:`rank_planes`; :func:`wide_counts`); returns the new
    ``(p, tu)``, tu += w_i(w_i² − 1). Called on the whole array, or block by block as the bootstrap
    draws its counts (:func:`mcref.kernels.bootstrap.boot_kernel`): the same operations in the same
    order."""
    big = w.dtype.type(0)  # ≠ 0 where a count reaches COUNT_SAT
    for i in range(w.shape[0]):
        ci = w[i]
        c = np.float64(ci)
        j = slot[i]
        qb[j] = 2 * p + ci + 1
        cb[j] = ci  # its low byte (the whole count below 255; wide_counts marks the others)
        big |= (ci + 1) >> 8  # ci ≥ 255
        tu += c * (c * c - 1.0)
        p += ci
    if big != 0:
        wide_counts(w, slot, cb, wide, sat)
    return p, tu


@njit(**NJIT)
def rank_e_pass(n, tu, eslot, egs, buf):
    """The |E| pass of :func:`rank_corr` and ρ, from ``buf`` filled by the u pass (``n`` copies in
    all, ``tu`` = Σ(C³ − C) over u's runs); clears the buffer's flag for the next u pass."""
    qb, cb, wide, sat = rank_planes(buf, eslot.shape[0])
    if sat[0] == 0:
        return e_pass_sums(n, tu, eslot, egs, qb, cb, None)
    sat[0] = 0
    return e_pass_sums(n, tu, eslot, egs, qb, cb, wide)


@njit(**NJIT)
def e_pass_sums(n, tu, eslot, egs, qb, cb, wide):
    """:func:`rank_e_pass` on the planes of the buffer: ``wide`` the whole counts where a count
    saturated its byte, else None (a second compiled version, whose reads of a count have no
    branch: a branch there took 0.4–0.6 ns a point of 1.1 at M = 10⁶)."""
    m = eslot.shape[0]
    mid = 0.5 * np.float64(n + 1)
    p = 0
    te = 0.0
    sxy = 0.0
    warm = 0
    if egs.shape[0] == m + 1:  # no tied |E|
        for b0 in range(0, m, RANK_BLOCK):
            b1 = min(b0 + RANK_BLOCK, m)
            warm += touch(qb, cb, b0, b1)
            for k in range(b0, b1):
                j = eslot[k]
                ci = np.int64(cb[j])
                if wide is not None:
                    if ci == COUNT_SAT:
                        ci = np.int64(wide[j])
                c = np.float64(ci)
                wx = c * (0.5 * np.float64(qb[j]) - mid)
                sxy += (np.float64(p) + 0.5 * (c + 1.0) - mid) * wx
                te += c * (c * c - 1.0)
                p += ci
    else:
        nxt = 0
        for g in range(egs.shape[0] - 1):
            ci = 0
            sx = 0.0
            for k in range(egs[g], egs[g + 1]):
                if k == nxt:
                    warm += touch(qb, cb, np.int64(k), min(k + RANK_BLOCK, m))  # k is egs's int32: one signature
                    nxt += RANK_BLOCK
                j = eslot[k]
                wi = np.int64(cb[j])
                if wide is not None:
                    if wi == COUNT_SAT:
                        wi = np.int64(wide[j])
                ci += wi
                sx += np.float64(wi) * (0.5 * np.float64(qb[j]) - mid)
            c = np.float64(ci)
            sxy += (np.float64(p) + 0.5 * (c + 1.0) - mid) * sx
            te += c * (c * c - 1.0)
            p += ci
    sxy += 0.0 * np.float64(warm)  # keeps the touches (no nnan/ninf: not folded away)
    nf = np.float64(n)
    cube = nf * (nf * nf - 1.0)
    return sxy / np.sqrt((cube - tu) * (cube - te)) * 12.0


@njit(**NJIT)
def rank_corr(w, ugs, slot, eslot, egs, buf):
    """Spearman ρ of (u, |E|) with multiplicities ``w``: Pearson correlation of average ranks.

    ``ugs`` are the starts of the tie groups of u (sorted order, last = M) and ``egs``
    those of |E| over the points in |E| order. A tie group of total multiplicity C
    starting after p copies gets the centred rank x = p + (C + 1)/2 − (n + 1)/2, and
    Σ C x² = (n³ − n − Σ(C³ − C))/12 (ties among copies included). The u pass writes,
    for point i, ``(w_i, q_i)`` at ``slot[i]`` of ``buf``'s planes with q = 2p + C + 1 (twice its run's
    average rank: an integer, so x = q/2 − (n + 1)/2 exactly as p + (C + 1)/2 − (n + 1)/2); the |E|
    pass reads them at ``eslot[k]`` for the k-th point by |E| and sums y·Σ w x over its groups.
    ``slot`` places the points by blocks of RANK_BLOCK positions of the |E| order
    (``mcref.stats.rank_slots``), so the u pass writes M/RANK_BLOCK sequential streams and the
    |E| pass reads at random only inside one cache-sized block (docs/methods.md, "Bootstrap").
    ``buf`` is scratch, :func:`rank_scratch`; running positions are integers (1-cycle dependency
    chain).
    """
    m = w.shape[0]
    qb, cb, wide, sat = rank_planes(buf, m)
    n = np.int64(0)  # not the literal 0: rank_e_pass would compile once more for Literal[int](0)
    for i in range(m):
        n += w[i]
    tu = 0.0  # Σ (C³ − C) over the tie groups of u
    if ugs.shape[0] == m + 1:  # no tied u: one point per group, ugs not read
        _p, tu = rank_u_run(w, slot, qb, cb, wide, sat, np.int64(0), tu)
    else:
        p = 0
        big = w.dtype.type(0)
        for g in range(ugs.shape[0] - 1):
            ci = 0
            for i in range(ugs[g], ugs[g + 1]):
                ci += w[i]
            q = 2 * p + ci + 1
            for i in range(ugs[g], ugs[g + 1]):
                j = slot[i]
                qb[j] = q
                cb[j] = w[i]
                big |= (w[i] + 1) >> 8
            c = np.float64(ci)
            tu += c * (c * c - 1.0)
            p += ci
        if big != 0:
            wide_counts(w, slot, cb, wide, sat)
    return rank_e_pass(n, tu, eslot, egs, buf)


@njit(**NJIT, inline="always")
def finish_codes(codes, raw, s, acc, n_total, w, ugs, slot, eslot, egs, buf, out, tu):
    """``out[k]`` = statistic ``codes[k]`` from the mean sums ``raw`` (:func:`mean_acc`), the
    bin sums ``acc`` (:func:`bin_acc`, :func:`bin_finish`) and, for CC, the ranks of the
    multiset ``w`` (:func:`rank_corr`); ``s`` is scratch (N_SUMS). ``tu`` ≥ 0: CC's u pass is done
    already (``buf`` filled, ``tu`` its Σ(C³ − C); ``w`` unread), only its |E| pass is left; −1.0:
    the whole pass (always passed as a float: an omitted default compiled a second ``rank_e_pass``)."""
    mean_finish(raw, s)
    for k in range(codes.shape[0]):
        c = codes[k]
        if is_mean_code(c):
            out[k] = finish_mean(c, s)
        elif is_binned_code(c):
            out[k] = finish_binned(c, acc, n_total)
        elif tu >= 0.0:
            out[k] = rank_e_pass(np.int64(n_total), tu, eslot, egs, buf)
        else:
            out[k] = rank_corr(w, ugs, slot, eslot, egs, buf)


@njit(**NJIT, inline="always")
def needs(codes):
    """(mean-sum bits, any binned statistic) of ``codes``. The flag is a comparison, never a
    constant: a flag assigned ``False``/``True`` reached its callees as ``Literal[bool](False)``
    in some callers, one more compiled specialization of each (``_eval_units`` had four)."""
    n_binned = 0
    for c in codes:
        if is_binned_code(c):
            n_binned += 1
    return mean_need(codes), n_binned > 0


@njit(**NJIT)
def eval_weighted(codes, w, z, zshift, z2, E2, u2, lnu2, starts, ugs, slot, eslot, egs, raw, s, acc, corr, buf,
                  out):
    """Evaluate the statistics ``codes`` on the multiset (sorted data, multiplicities ``w``)."""
    need, need_bins = needs(codes)
    raw[:] = 0.0
    if need:
        mean_acc(w, np.int64(0), w.shape[0], max(w.shape[0], 1), need, z, zshift, z2, E2, u2, lnu2, raw)
    if need_bins:
        bin_sums(w, starts, u2, E2, z2, acc, corr)
    finish_codes(codes, raw, s, acc, np.float64(z.shape[0]), w, ugs, slot, eslot, egs, buf, out, -1.0)


@njit(**NJIT_EXACT)
def scan_E_u(E, u, out):
    """One pass over unsorted (E, u): ``out = (#non-finite, max|E|, min u, max u, max|E/u|)``.

    Exact IEEE arithmetic (no fastmath), so that ``E/u`` and the extremes are those that
    ``mcref.core._checks.check_E_u`` computes with NumPy; u <= 0 makes ``min u`` <= 0.
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
