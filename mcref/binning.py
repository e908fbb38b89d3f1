"""Binning of a dataset by its uncertainties (docs/methods.md, "Binning").

The binning depends on ``u`` only: it is computed once per dataset and handed to the
binned statistics (ENCE, ZMSE, UCE) as the stable order of ``u`` plus the bin starts.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .core._checks import as_float_array, check_int
from .core._warnings import ShrunkBinsWarning
from .kernels.binning import adaptive_starts_kernel, equal_count_starts

__all__ = ["Binning", "equal_count_bins", "adaptive_bins", "make_bins", "bin_starts", "resolve_n_bins",
           "segment_layout", "sqrt_starts", "default_n_bins", "DEFAULT_N_BINS", "CUTS", "strata_bins",
           "pooled_level_bins", "whole_runs"]

#: The equal-count cut rules (docs/methods.md, "Binning"): ``"mcref"`` cuts at ⌊M·i/N + ½⌋,
#: ``"errviewlib"`` at ⌊HD_{i/N}(1, …, M)⌋ as ErrViewLib's ``genIntervals``.
CUTS = ("mcref", "errviewlib")


@dataclass(frozen=True)
class Binning:
    """Equal-count bins of a dataset.

    Attributes
    ----------
    order : ndarray of int64, shape (M,)
        Stable ascending order of ``u``: ``u[order]`` is sorted, ties keep input order.
    starts : ndarray of int64, shape (n_bins + 1,)
        Start of each bin in the sorted order; ``starts[-1] == M``.
    n_bins : int
        Number of bins.
    """

    order: np.ndarray
    starts: np.ndarray
    n_bins: int

    @property
    def counts(self) -> np.ndarray:
        """Number of points in each bin."""
        return np.diff(self.starts)

    def labels(self) -> np.ndarray:
        """Bin index (0-based) of every point, in the input order."""
        lab = np.empty(self.order.size, dtype=np.int64)
        lab[self.order] = np.repeat(np.arange(self.n_bins), self.counts)
        return lab


def bin_starts(m: int, n_bins: int, *, cuts: str = "mcref") -> np.ndarray:
    r"""Starts of ``n_bins`` equal-count bins over ``m`` sorted points.

    ``cuts="mcref"`` (default): bin :math:`i` starts at :math:`c_i = \lfloor M i/N + 1/2\rfloor`
    (round half up, exact integer arithmetic). ``cuts="errviewlib"``: ErrViewLib's
    ``genIntervals(M, N)``, which starts bin i after :math:`\lfloor \mathrm{HD}_{p_i}(1, \dots,
    M)\rfloor` points, HD the Harrell–Davis quantile of the ranks at R's level
    :math:`p_i = i\cdot\mathrm{fl}(1/N)` (``seq(0, 1, length.out = N + 1)``). That quantile lies
    within ½ of M·i/N + ½, so it gives :math:`c_i` unless M·i/N is a half-integer; there it is
    within a few units in the last place of the integer :math:`c_i` (1.3e-3 below it for M = 10,
    N = 4; exactly on it, by symmetry, at the median of an odd M), and R's cut is :math:`c_i - 1`
    when its double-precision value falls below :math:`c_i`. mcref computes the quantile's
    distance to :math:`c_i` accurately for R's double inputs (:func:`_hd_rank_offset`) and takes
    :math:`c_i - 1` when the quantile, rounded to the nearest double, is below :math:`c_i`; the
    median of an odd M stays at :math:`c_i`. Where the true value is within R's own rounding
    error (``pbeta`` and ``sum``, about ½ unit in the last place) of that midpoint, R's side is
    decided by its rounding: measured on 30 121 pairs (M ≤ 19 985), 741 of 21 128 half-integer
    cuts (in 642 pairs) differ by one point, every other cut equals R's (docs/errviewlib.md,
    ``tests/data/errviewlib_cuts.txt``).

    Examples
    --------
    >>> bin_starts(10, 4).tolist(), bin_starts(10, 4, cuts="errviewlib").tolist()
    ([0, 3, 5, 8, 10], [0, 2, 5, 8, 10])
    """
    from .core._checks import check_choice

    cuts = check_choice(cuts, "cuts", CUTS)
    out = np.empty(n_bins + 1, dtype=np.int64)
    equal_count_starts(m, n_bins, out)
    if cuts == "errviewlib":
        for i in np.flatnonzero((2 * m * np.arange(n_bins + 1)) % (2 * n_bins) == n_bins):  # M·i/N half-integer
            if 2 * i == n_bins:
                continue  # the median of an odd M: HD is (M + 1)/2 by symmetry, and R lands on it
            c = float(out[i])
            out[i] -= _hd_rank_offset(m, int(i), n_bins) < -0.5 * (c - np.nextafter(c, 0.0))
    return out


def sqrt_starts(m: int, *, min_count: int = 30, cuts: str = "mcref") -> np.ndarray:
    r"""Bin starts of ErrViewLib's default ``nBin = sqrt(M)`` (``calibScores``), which is not an
    integer unless M is a square.

    ``genIntervals(M, nBin)`` with a fractional ``nBin`` = √M takes the probability grid
    ``seq(0, 1, length.out = nBin + 1)``, whose length R rounds up (⌈√M⌉ + 1 points, i.e. ⌈√M⌉
    equal-count cuts), and keeps its first ⌊√M⌋ starts (``[1:nBin]``): ⌊√M⌋ bins, the first
    ⌊√M⌋ − 1 of M/⌈√M⌉ points and the last one of about twice that. When √M < ``min_count``
    (M < 900 for the default 30), R first reduces nBin to ⌊M/min_count⌋, an integer.

    Examples
    --------
    >>> s = sqrt_starts(1200)            # sqrt(1200) = 34.64: 34 bins, the last one doubled
    >>> s.size - 1, int(s[1]), int(s[-1] - s[-2])
    (34, 34, 69)
    """
    r = math.sqrt(m)
    if m / r < min_count:
        return bin_starts(m, resolve_n_bins(m, max(m // min_count, 1), min_count=min_count), cuts=cuts)
    if r == math.floor(r):
        return bin_starts(m, int(r), cuts=cuts)
    return np.r_[bin_starts(m, math.ceil(r), cuts=cuts)[: math.floor(r)], m].astype(np.int64)


#: the papers' bin count, the default of every binned statistic
DEFAULT_N_BINS = 20


def default_n_bins(m: int, min_count: int = 30, *, rule: str = "statistics") -> int:
    """The bin count of ``n_bins=None``, by one of two rules:

    - ``rule="statistics"`` (the binned statistics ENCE, ZMSE, UCE and their tests): the papers'
      20, or fewer when M/20 < ``min_count`` (``floor(M/min_count)``, so that every bin keeps
      ``min_count`` points); 20 when even one bin cannot be filled (then :func:`resolve_n_bins`
      says so);
    - ``rule="local"`` (the local diagnostics of :mod:`mcref.diagnostics`: LZISD, LZMS, LCP, …):
      ErrViewLib's max(min(⌊M/150⌋, 15), 2); ``min_count`` plays no part.

    Examples
    --------
    >>> default_n_bins(13885), default_n_bins(500), default_n_bins(500, 20)
    (20, 16, 20)
    >>> [default_n_bins(m, rule="local") for m in (100, 450, 13885)]
    [2, 3, 15]
    """
    if rule == "local":
        return max(min(m // 150, 15), 2)
    if rule != "statistics":
        raise ValueError(f"`rule` must be 'statistics' or 'local', got {rule!r}")
    return DEFAULT_N_BINS if m < min_count else max(1, min(DEFAULT_N_BINS, m // min_count))


def _hd_rank_offset(m: int, i: int, n_bins: int, tail: float = 1e-30) -> float:
    r"""HD_p(1, …, M) − c for ``genIntervals``' level p = i·fl(1/N), c = ⌊M i/N + ½⌋, accurate to
    ~1e-15 absolute (far below the spacing of doubles at c for c ≥ 8).

    With R's double inputs a = fl((M+1)p), b = fl((M+1)·fl(1 − p)) and grid x_k = fl(k/M),
    :math:`\mathrm{HD} = \sum_k k\,(F_k - F_{k-1}) = \sum_{k=0}^{M-1} (1 - F_k)`, F_k = I_{x_k}(a, b).
    Below the mean, 1 − F_k is taken as 1 minus the (small) F_k; above, as the regularised
    complement; only the window where neither is below ``tail`` is evaluated, and each side is
    summed exactly (``math.fsum``), so the difference to the integer c is not lost to the
    rounding of a sum of size c."""
    from scipy.special import betainc, betaincc, betainccinv, betaincinv

    p = i * (1.0 / n_bins)
    a, b = (m + 1) * p, (m + 1) * (1.0 - p)
    c = (2 * m * i + n_bins) // (2 * n_bins)
    lo, hi = betaincinv(a, b, tail), betainccinv(a, b, tail)
    k0 = max(int(math.floor(lo * m)) - 1, 0) if np.isfinite(lo) else 0
    k1 = min(int(math.ceil(hi * m)) + 1, m) if np.isfinite(hi) else m
    x = np.arange(k0, k1, dtype=np.float64) / m
    j = int(np.searchsorted(x, a / (a + b)))
    return float(k0 + j - c) - math.fsum(betainc(a, b, x[:j])) + math.fsum(betaincc(a, b, x[j:]))


def resolve_n_bins(m: int, n_bins: int, *, min_count: int = 30, shrink: bool = False) -> int:
    """Check the ``min_count`` rule (docs/methods.md, "Binning") and return the bin count to use.

    Raises ``ValueError`` when ``m / n_bins < min_count``, unless ``shrink`` is true, in
    which case ``floor(m / min_count)`` bins are used (ErrViewLib's behaviour) with a
    :class:`ShrunkBinsWarning`.
    """
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    min_count = check_int(min_count, "min_count", minimum=1)
    if m < min_count:
        raise ValueError(
            f"M={m} points cannot fill a single bin of `min_count`={min_count} points: binned "
            f"statistics (ENCE, ZMSE, UCE) need at least {min_count} points; lower `min_count` "
            "or leave them out"
        )
    if m < n_bins * min_count:
        if not shrink:
            raise ValueError(
                f"`n_bins`={n_bins} leaves fewer than `min_count`={min_count} points per bin "
                f"for M={m} points (M/n_bins = {m / n_bins:.1f}); use at most "
                f"{m // min_count} bins, lower `min_count`, or pass shrink=True"
            )
        new = m // min_count
        warnings.warn(
            ShrunkBinsWarning(f"n_bins reduced from {n_bins} to {new} to keep >= {min_count} points per bin"),
            stacklevel=3,
        )
        n_bins = new
    return n_bins


def equal_count_bins(u, n_bins: int = 20, *, min_count: int = 30, shrink: bool = False,
                     cuts: str = "mcref") -> Binning:
    r"""Equal-count bins of ``u`` (docs/methods.md, "Binning"; ErrViewLib ``genIntervals``).

    The points are ordered by ``u`` with a stable sort (tied values keep their input
    order) and bin :math:`i` (0-based) starts at :math:`\lfloor M i / N + 1/2 \rfloor`.

    Parameters
    ----------
    u : array_like, shape (M,)
        Binning variable (the uncertainties).
    n_bins : int, default: 20
        Number of bins N.
    min_count : int, default: 30
        Smallest acceptable M/N.
    shrink : bool, default: False
        Reduce N to ``floor(M/min_count)`` instead of raising when M/N < min_count.
    cuts : {"mcref", "errviewlib"}, default: "mcref"
        The cut rule (:func:`bin_starts`): ⌊M i/N + ½⌋, or ErrViewLib's Harrell–Davis cuts
        (``genIntervals``' cuts but where R's own rounding decides; see there).

    Returns
    -------
    Binning

    Examples
    --------
    >>> b = equal_count_bins([3.0, 1.0, 2.0, 1.0, 5.0, 4.0], n_bins=2, min_count=3)
    >>> b.order.tolist(), b.starts.tolist()
    ([1, 3, 2, 0, 5, 4], [0, 3, 6])
    """
    u = as_float_array(u, "u")
    n_bins = resolve_n_bins(u.size, n_bins, min_count=min_count, shrink=shrink)
    order = np.argsort(u, kind="stable").astype(np.int64)
    return Binning(order=order, starts=bin_starts(u.size, n_bins, cuts=cuts), n_bins=n_bins)


def adaptive_starts(xs: np.ndarray, n_bins: int, *, min_count: int = 30, log: bool = True) -> np.ndarray:
    """Starts of the adaptive bins of the sorted sample ``xs`` (ErrViewLib ``genIntervals``
    with ``equiPop = FALSE``; docs/methods.md, "Binning").

    1. A grid of ``n_bins`` equal-width intervals over ln x (``log``) or x; bin i starts at
       the first point ≥ its lower limit.
    2. Merge: while a bin has fewer than ``min_count`` points, the first such bin from the
       left (not the last) absorbs its right neighbour; then the last bin, if too small,
       joins its left neighbour.
    3. Split: while a bin holds more than max(⌊M/n_bins⌋, 2·min_count) points, the first
       such bin is cut after ⌊count/2⌋ + 1 points.

    ``n_bins`` is first reduced to ⌊M/min_count⌋ when M/n_bins < min_count, as ErrViewLib.

    Examples
    --------
    >>> xs = np.sort(np.r_[np.linspace(1, 2, 90), np.linspace(9, 10, 10)])
    >>> adaptive_starts(xs, 4, min_count=10, log=False).tolist()
    [0, 24, 46, 69, 90, 100]

    (grid bins of 90, 0, 0 and 10 points; the empty ones are merged away; the bin of 90 is
    split while above max(⌊100/4⌋, 20) = 25 points: 90 → 46 + 44 → 24 + 22 + 23 + 21.)
    """
    m = xs.size
    if m < min_count:
        raise ValueError(f"M={m} points cannot fill a single bin of `min_count`={min_count} points")
    if log and not xs[0] > 0:
        raise ValueError("log binning needs a strictly positive binning variable (pass log=False)")
    out = np.empty(m + 1, dtype=np.int64)
    nb = adaptive_starts_kernel(np.ascontiguousarray(xs, dtype=np.float64), int(n_bins), int(min_count), bool(log), out)
    return out[:nb + 1].copy()


def adaptive_bins(x, n_bins: int = 20, *, min_count: int = 30, log: bool | None = None) -> Binning:
    """Adaptive bins of ``x`` (see :func:`adaptive_starts`); ``log`` defaults to True for a
    positive ``x``.

    Examples
    --------
    >>> b = adaptive_bins(np.r_[np.linspace(1, 2, 90), np.linspace(9, 10, 10)], 4, min_count=10, log=False)
    >>> b.counts.tolist()
    [24, 22, 23, 21, 10]
    """
    x = as_float_array(x, "x")
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    min_count = check_int(min_count, "min_count", minimum=1)
    if log is None:
        log = bool(np.all(x > 0))
    order = np.argsort(x, kind="stable").astype(np.int64)
    starts = adaptive_starts(x[order], n_bins, min_count=min_count, log=log)
    return Binning(order=order, starts=starts, n_bins=starts.size - 1)


def strata_bins(x, *, min_count: int = 50) -> Binning:
    """Strata of a discrete variable ``x`` (one bin per distinct value), small strata merged
    (ErrViewLib ``stratAgg(greedy = TRUE)``, used by ``plotStratZV``, ``plotStratZM``,
    ``plotStratZMS`` and ``plotStratRCE``; docs/methods.md, "Diagnostics").

    While a stratum has fewer than ``min_count`` points, the first such one (in increasing x)
    is merged with its smaller neighbour (the next one on a tie; the only neighbour at either
    end). Merged strata are contiguous in the sorted order, so the result is a
    :class:`Binning` like the others.

    Examples
    --------
    >>> b = strata_bins([1, 1, 2, 3, 3, 3, 4, 4, 4, 4], min_count=3)
    >>> b.counts.tolist()
    [3, 3, 4]

    (counts 2, 1, 3, 4: stratum 1 joins 2 (its only neighbour) → 3, 3, 4.)
    """
    x = as_float_array(x, "x")
    min_count = check_int(min_count, "min_count", minimum=1)
    if x.size < min_count:
        raise ValueError(f"M={x.size} points cannot fill a single stratum of `min_count`={min_count} points")
    order = np.argsort(x, kind="stable").astype(np.int64)
    xs = x[order]
    starts = np.r_[0, np.flatnonzero(xs[1:] != xs[:-1]) + 1]
    counts = list(np.diff(np.r_[starts, x.size]))
    starts = list(starts)
    while min(counts) < min_count:
        i = next(k for k, c in enumerate(counts) if c < min_count)
        if i == 0:
            j = 1
        elif i == len(counts) - 1:
            j = i - 1
        else:
            j = i - 1 if counts[i - 1] < counts[i + 1] else i + 1
        lo = min(i, j)
        counts[lo] = counts[i] + counts[j]
        del counts[lo + 1], starts[lo + 1]
    st = np.array(starts + [x.size], dtype=np.int64)
    return Binning(order=order, starts=st, n_bins=st.size - 1)


def pooled_level_bins(codes, *, min_count: int = 30, first_seen=None) -> tuple[Binning, np.ndarray]:
    """One bin per level of a nominal variable, the small levels pooled into one bin
    (docs/methods.md, "Adaptivity"). The rule reads the levels' counts only, never their
    names or their order, so a feature binned from strings, integers or a pandas category
    gets the same bins.

    1. Every level with at least ``min_count`` points is a bin of its own.
    2. The levels below ``min_count`` are pooled into one bin.
    3. While the pool has fewer than ``min_count`` points, the smallest remaining levels (all
       the levels of that count at once: no tie to break) join it.

    Bins are numbered by their first point along ``first_seen`` (row indices; default the
    input order): :func:`mcref.validate` passes the rows in ascending u, so the numbering,
    and with it the order in which bin terms are summed, does not depend on the labels.

    Returns
    -------
    (Binning, pooled) : the bins (``order`` groups each bin's points, input order inside),
        and the distinct codes pooled into one bin (empty when no level was small).

    Examples
    --------
    >>> b, pooled = pooled_level_bins(["a"] * 5 + ["b"] * 2 + ["c"] * 4 + ["d"] * 1, min_count=3)
    >>> b.counts.tolist(), pooled.tolist()  # a: 5; the pool b + d: 3; c: 4 (numbered as first seen)
    ([5, 3, 4], ['b', 'd'])
    """
    min_count = check_int(min_count, "min_count", minimum=1)
    levels, inv, counts = np.unique(np.asarray(codes), return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    pool = counts < min_count
    while pool.any() and counts[pool].sum() < min_count and not pool.all():
        pool |= counts == counts[~pool].min()
    group = np.empty(levels.size, dtype=np.int64)  # level → provisional bin: the pool first
    group[pool] = 0
    group[~pool] = np.arange(1, int((~pool).sum()) + 1)
    lab = group[inv]
    seen = np.arange(lab.size) if first_seen is None else np.asarray(first_seen, dtype=np.int64)
    first = np.full(int(group.max()) + 1, lab.size, dtype=np.int64)
    np.minimum.at(first, lab[seen], np.arange(seen.size))
    present = np.flatnonzero(first < lab.size)
    rank = np.empty(first.size, dtype=np.int64)
    rank[present[np.argsort(first[present], kind="stable")]] = np.arange(present.size)
    lab = rank[lab]
    order = np.argsort(lab, kind="stable").astype(np.int64)
    starts = np.r_[0, np.cumsum(np.bincount(lab))].astype(np.int64)
    return Binning(order=order, starts=starts, n_bins=starts.size - 1), levels[pool]


def whole_runs(xs: np.ndarray, starts: np.ndarray, *, min_count: int = 1) -> np.ndarray:
    """The bin starts ``starts`` over the sorted values ``xs`` with no run of equal values cut:
    each cut inside a run moves to the nearer end of the run (its start on a draw), bins
    that became empty vanish, and a bin left below ``min_count`` points is merged into its
    smaller neighbour (the right one on a draw). The result depends on the sorted values
    only, not on the order of the tied rows (used for the bins of a feature x).

    Examples
    --------
    >>> whole_runs(np.array([1., 2, 2, 2, 2, 3, 4, 5]), np.array([0, 2, 4, 6, 8])).tolist()
    [0, 1, 5, 6, 8]
    """
    m = xs.size
    cuts = []
    for c in starts[1:-1]:
        if 0 < c < m and xs[c - 1] == xs[c]:  # inside a run [s, e)
            s = int(np.searchsorted(xs, xs[c], side="left"))
            e = int(np.searchsorted(xs, xs[c], side="right"))
            c = s if c - s <= e - c else e
        cuts.append(int(c))
    st = sorted({0, m, *cuts})
    sizes = np.diff(st)
    while len(st) > 2 and sizes.min() < min_count:
        b = int(np.argmin(sizes))  # the first smallest bin
        if b == 0:
            drop = 1
        elif b == len(sizes) - 1:
            drop = b
        else:
            drop = b if sizes[b - 1] < sizes[b + 1] else b + 1  # merge into the smaller neighbour
        del st[drop]
        sizes = np.diff(st)
    return np.array(st, dtype=np.int64)


def make_bins(x, n_bins: int = 20, *, binning: str = "equal", min_count: int = 30, shrink: bool = False,
              log: bool | None = None, cuts: str = "mcref") -> Binning:
    """Bins of ``x`` by the rule ``binning``: ``"equal"`` (equal counts, :func:`equal_count_bins`,
    cut by the rule ``cuts``) or ``"adaptive"`` (:func:`adaptive_bins`; ``log`` applies to it
    only)."""
    from .core._checks import check_choice

    binning = check_choice(binning, "binning", ("equal", "adaptive"))
    if binning == "equal":
        return equal_count_bins(x, n_bins, min_count=min_count, shrink=shrink, cuts=cuts)
    return adaptive_bins(x, n_bins, min_count=min_count, log=log)


def segment_layout(m: int, n_bins_list) -> tuple[np.ndarray, np.ndarray]:
    """Union of the equal-count boundaries of every N in ``n_bins_list`` for ``m`` points.

    Returns ``(cuts, bin_seg)``: ``cuts`` (int64, S+1) the sorted distinct boundaries
    (0 … m), and ``bin_seg`` (int64, G × (max N + 1)) with ``bin_seg[g, b]`` the segment
    index where bin ``b`` of grid ``g`` starts (``bin_seg[g, N_g]`` = S).

    Examples
    --------
    >>> cuts, seg = segment_layout(10, [2, 3])
    >>> cuts.tolist(), seg.tolist()
    ([0, 3, 5, 7, 10], [[0, 2, 4, 0], [0, 1, 3, 4]])
    """
    starts = [bin_starts(m, int(n)) for n in n_bins_list]
    cuts = np.unique(np.concatenate(starts)).astype(np.int64)
    bin_seg = np.zeros((len(starts), max(int(n) for n in n_bins_list) + 1), dtype=np.int64)
    for g, s in enumerate(starts):
        bin_seg[g, :s.size] = np.searchsorted(cuts, s)
    return cuts, bin_seg
