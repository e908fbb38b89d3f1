"""Leave-one-out values (the jackknife) of the statistics, for the BCa acceleration
(docs/methods.md, "Bootstrap"): O(M) for mean-type statistics, O(M·N) for binned ones (all of a
call's binned statistics in one pass), O(M log M) for CC, O(M) per left-out point for adaptive
bins and user statistics; by units for dependent sets. :class:`Jackknives` serves one BCa run.
Every pass runs on the threads (CC's in steps over blocks, :func:`cc_jackknife`)."""

from __future__ import annotations

from typing import Sequence

import numba
import numpy as np

from ..core import _progress
from ..binning import bin_starts
from ..kernels import jackknife as KJ
from ..kernels import stats as K
from ..kernels.units import jack_units_kernel
from ..parallel import batch_ranges, map_chunks, over_tasks
from ..core._dependence import Units
from ..core._prepared import Prepared, stable_order
from ..stats import StatInfo, info, user_kernels

__all__ = ["jackknife", "point_jackknives", "binned_jackknives", "mean_jackknives", "unit_jackknife", "Jackknives", "cc_jackknife", "cc_blocks", "run_blocks",
           "CC_JACK_BYTES_PER_POINT"]

#: CC's jackknife pass holds at most 40 bytes a point, its output included (:func:`cc_jackknife`): four
#: M-sized float64 arrays and the |E| run of each point (int32), then three, the joint counts' layout
#: (12 bytes) and their values; besides, tables of 4 bytes per block and bucket of the joint counts
#: (256 blocks × ~√M buckets: 1 MB at M = 10⁶, 3.2 MB at 10⁷)
CC_JACK_BYTES_PER_POINT = 40.0
#: points per block of CC's jackknife pass below M = 131 072 (at most 64 blocks; beyond, 64 blocks per
#: 131 072 points, at most 256: :func:`cc_blocks`)
CC_JACK_BLOCK_POINTS = 1024


def _jack_adaptive(name: str, prep: Prepared, out: np.ndarray, phase: _progress.Phase | None = None) -> None:
    """Leave-one-out values of a binned statistic under adaptive bins: the M − 1 points are
    re-binned by the same rule for every left-out point (numba kernel, O(M) each; called in
    batches of points, see :func:`_by_batches`)."""
    from ..kernels.binning import adaptive_jackknife_kernel

    def call(j0: int, part: np.ndarray) -> None:
        adaptive_jackknife_kernel(info(name).code, prep.u, prep.u2, prep.E2, prep.z2, prep.n_bins_requested,
                                  prep.min_count, prep.log, j0, part)

    _by_batches(call, out, 10.0 * prep.M, phase, min_per_batch=1)


def _by_batches(call, out: np.ndarray, work_per_point: float, phase: _progress.Phase | None,
                min_per_batch: int | None = None) -> None:
    """``call(j0, out[j0:j1])`` for consecutive batches of left-out points of about 0.1 s
    (:func:`mcref.parallel.batch_ranges`): an O(M²) jackknife returns to Python between
    batches, where Ctrl-C is raised and the bar advances. Every point owns its output slot,
    so the values are those of one call over all points."""
    cb = phase.chunks(1) if phase is not None else None
    for j0, j1 in batch_ranges(out.size, work_per_point, min_per_batch=min_per_batch, progress=cb):
        call(j0, out[j0:j1])


def _jackknife_quadratic(inf: StatInfo, prep: Prepared) -> bool:
    """The jackknife of ``inf`` costs O(M) per left-out point (adaptive bins, user statistics)."""
    return (inf.kind == "binned" and prep.binning == "adaptive") or inf.user


def jackknife(inf: StatInfo, prep: Prepared, *, progress: _progress.Session | None = None) -> np.ndarray:
    """Leave-one-out values of statistic ``inf`` (order: u-sorted positions).

    O(M) for mean-type statistics, O(M·N) for binned ones, O(M log M) for CC, O(M) per
    left-out point (parallel, in batches of points) for adaptive bins; the naive M-fold
    recomputation lives in ``tests/naive.py``.

    Parameters
    ----------
    inf : StatInfo
        The statistic.
    prep : Prepared
        The dataset, prepared by :func:`mcref.stats.prepare`.
    progress : mcref.core._progress.Session, optional
        The session of the calling public function: its bar "jackknife <stat>" follows the
        O(M²) cases (default: no bar). The values do not depend on it.

    Returns
    -------
    ndarray, shape (M,)
    """
    out = np.empty(prep.M)
    if inf.user:  # M calls of the user's function on M − 1 points, in batches (Ctrl-C)
        sess = progress if progress is not None else _progress.Session(False)
        jack = user_kernels(inf).jack
        n_threads = numba.get_num_threads()

        def call(j0: int, part: np.ndarray) -> None:  # the batch's points split between threads
            cuts = np.linspace(0, part.size, n_threads + 1).astype(np.int64)
            map_chunks(lambda c, t: jack(prep.E, prep.u, j0 + cuts[c], part[cuts[c]:cuts[c + 1]]), n_threads,
                       n_threads)

        with sess.phase(f"jackknife {inf.name}", prep.M, "point") as phase:
            _by_batches(call, out, 2.0 * prep.M, phase, min_per_batch=n_threads)
        return out
    if not _jackknife_quadratic(inf, prep):
        if inf.kind == "mean":  # threads over blocks, then ranges of points (mcref.parallel.over_tasks)
            out = mean_jackknives([inf], prep)[0]
        elif inf.kind == "rank":
            _cc_jackknife(prep, out)  # O(M log M), in steps over blocks on threads
        else:
            out = binned_jackknives([inf], prep)[0]
        return out
    sess = progress if progress is not None else _progress.Session(False)
    with sess.phase(f"jackknife {inf.name}", prep.M, "point") as phase:
        _jack_adaptive(inf.name, prep, out, phase)
    return out


def unit_jackknife(infos: Sequence[StatInfo], prep: Prepared, units: Units) -> np.ndarray:
    """Delete-one-unit jackknife (docs/methods.md, "Dependent test sets"): ``out[k, j]`` =
    statistic k on the data without group (or non-overlapping block) j, re-binned at
    ⌊(M − n_j)·b/N + ½⌋; O(M) per unit (:func:`mcref.kernels.units.jack_units_kernel`)."""
    codes = np.array([i.code for i in infos], dtype=np.int64)
    out = np.empty((codes.size, units.n_units))
    slot, eslot = prep.slots()
    over_tasks(lambda j0, j1: jack_units_kernel(codes, units.gid, units.sizes, prep.z, prep.zshift, prep.z2, prep.E2,
                                                prep.u2, prep.lnu2, prep.n_bins, prep.ugs, slot, eslot, prep.egs, j0,
                                                j1, out), units.n_units, 2.0 * prep.M, phase="jackknife")
    return out


#: points per block of the mean-type jackknives' totals (:func:`point_jackknives`): their number is a
#: function of M alone, so the totals, added in block order, have the same bits for any thread count
JACK_MEAN_BLOCK = 1 << 12


def point_jackknives(mean: Sequence[StatInfo], binned: Sequence[StatInfo], prep: Prepared) -> np.ndarray:
    """Leave-one-out values of the mean-type statistics ``mean`` (rows 0 … K − 1) and of the binned ones
    ``binned`` with equal-count bins (the rows after), in one pass over the points
    (:func:`mcref.kernels.jackknife.jack_kernel`): each row is bit for bit the row of that statistic
    alone, each left-out point's bin sums read once for every binned statistic (half the work for
    ENCE and ZMSE), and the threads called twice for all of them.

    First the sums that every left-out point's values start from, in one call on the threads: those
    over all points for the mean-type statistics, by blocks of :data:`JACK_MEAN_BLOCK` points added
    in block order (:func:`mcref.kernels.jackknife.jack_mean_parts`: until 2026-11-29 a serial pass
    per statistic, 40 ms each at M = 10⁷), and those between the M − 1 points' bin starts, bin by
    bin, for the binned ones (:func:`mcref.kernels.jackknife.jack_bin_sums`: until 2026-11-29
    differences of prefix sums, three M-sized arrays, 240 MB at 10⁷, made in a serial pass of
    110 ms). Both are a function of M alone: the same bits for any thread count."""
    mcodes = np.array([i.code for i in mean], dtype=np.int64)
    bcodes = np.array([i.code for i in binned], dtype=np.int64)
    out = np.empty((mcodes.size + bcodes.size, prep.M))
    nm = -(-prep.M // JACK_MEAN_BLOCK) if mcodes.size else 0
    nbin = prep.n_bins if bcodes.size else 0
    parts = np.zeros((max(nm, 1), K.N_RAW))
    starts_m1 = bin_starts(prep.M - 1, nbin) if nbin else np.zeros(1, dtype=np.int64)
    inner = np.empty((max(nbin, 1), 3))
    n = max(nm, nbin, 1)  # item c holds the c-th n-th of the blocks and of the bins

    def sums(c0: int, c1: int) -> None:
        if c1 * nm // n > c0 * nm // n:
            KJ.jack_mean_parts(c0 * nm // n, c1 * nm // n, JACK_MEAN_BLOCK, prep.z, prep.zshift, prep.z2, prep.E2,
                               prep.u2, prep.lnu2, parts)
        if c1 * nbin // n > c0 * nbin // n:
            KJ.jack_bin_sums(c0 * nbin // n, c1 * nbin // n, starts_m1, prep.u2, prep.E2, prep.z2, inner)

    over_tasks(sums, n, (8.0 * nm * JACK_MEAN_BLOCK + 3.0 * prep.M * (nbin > 0)) / n, phase="jackknife")
    raw = _in_block_order(parts)
    over_tasks(lambda p0, p1: KJ.jack_kernel(mcodes, bcodes, prep.z, prep.zshift, prep.z2, prep.E2, prep.u2,
                                             prep.lnu2, raw, starts_m1, inner, p0, p1, out),
               prep.M, KJ.JACK_MEAN_WORK * mcodes.size + 10.0 * nbin * bcodes.size, phase="jackknife")
    return out


def mean_jackknives(infos: Sequence[StatInfo], prep: Prepared) -> np.ndarray:
    """Leave-one-out values of the mean-type statistics ``infos``, row k for ``infos[k]``
    (:func:`point_jackknives`)."""
    return point_jackknives(infos, [], prep)


def binned_jackknives(infos: Sequence[StatInfo], prep: Prepared) -> np.ndarray:
    """Leave-one-out values of the binned statistics ``infos`` (equal-count bins), row k for
    ``infos[k]`` (:func:`point_jackknives`)."""
    return point_jackknives([], infos, prep)


def _in_block_order(parts: np.ndarray) -> np.ndarray:
    """Column sums of ``parts``, the rows added from the first to the last (one order for any threads)."""
    tot = parts[0].copy()
    for row in parts[1:]:
        tot += row
    return tot


def _cc_jackknife(prep: Prepared, out: np.ndarray) -> None:
    """CC's leave-one-out values into ``out`` (u-sorted positions), :func:`cc_jackknife`."""
    if prep.eord.size == prep.M:  # the order and tie runs of |E| are prepared: no sort
        cc_jackknife(prep.ugs, prep.eord, prep.egs, out)
    else:  # prepared without them (ranks=False): the order and runs that prepare makes
        ae = np.abs(prep.E)
        eord, egs = stable_order(ae)
        cc_jackknife(prep.ugs, eord.astype(np.int32), egs, out)


def cc_blocks(m: int) -> int:
    """The blocks of CC's jackknife pass at M = ``m`` (a function of M alone, so that the values do
    not depend on the threads): one below 2 048 points, then one per :data:`CC_JACK_BLOCK_POINTS`
    up to 64, 64 per 131 072 points up to 256 (tasks for 64 threads, four each, from M ≈ 5·10⁵).

    Examples
    --------
    >>> [cc_blocks(m) for m in (1000, 10_000, 100_000, 1_000_000, 10_000_000)]
    [1, 9, 64, 256, 256]
    """
    if m < 2 * CC_JACK_BLOCK_POINTS:
        return 1
    if m < 131_072:
        return min(64, m // CC_JACK_BLOCK_POINTS)
    return 64 * min(4, m // 131_072)


def run_blocks(gs: np.ndarray, n_blocks: int) -> np.ndarray:
    """Cuts of the runs of ``gs`` (starts of ``gs.size − 1`` runs, then the end) into at most
    ``n_blocks`` blocks of whole runs, of about equal points: block c holds the runs ``cuts[c] …
    cuts[c + 1] − 1`` (int64), each starting at the first run that starts at or after c·M/n.

    Examples
    --------
    >>> run_blocks(np.array([0, 1, 2, 6, 7, 8]), 4).tolist()  # a run of 4 points: 3 blocks, not 4
    [0, 2, 3, 5]
    """
    n_runs = gs.size - 1
    targets = (np.arange(max(1, n_blocks), dtype=np.int64) * int(gs[-1])) // max(1, n_blocks)
    cuts = np.unique(np.searchsorted(gs[:n_runs], targets, side="left"))
    return np.append(cuts[cuts < n_runs], n_runs).astype(np.int64) if n_runs > 0 else np.zeros(1, np.int64)


def _from_the_top(tot: np.ndarray, gs: np.ndarray, bl: np.ndarray) -> np.ndarray:
    """``top[c]`` = (Σ w, Σ v, points) over the blocks above block c (``tot[c]`` = (Σ w, Σ v) over
    block c): sums of half-integers, exact in any order below M ≈ 9·10⁷."""
    top = np.zeros((bl.size - 1, 3))
    top[:-1, :2] = np.cumsum(tot[::-1], axis=0)[::-1][1:]
    top[:, 2] = float(gs[-1]) - gs[bl[1:]].astype(np.float64)
    return top


def _in_order(col: np.ndarray) -> float:
    """The sum of ``col`` from the first to the last: one fixed order, whatever the threads."""
    s = 0.0
    for v in col.tolist():
        s += v
    return s


#: work per point of each step of CC's pass (ns of one thread at M = 10⁶, 2-core VM): the tasks'
#: sizes for :func:`mcref.parallel.over_tasks` and the parallel profile
_CC_STEP_WORK = {"ranks u": 5.0, "ranks |E|": 23.0, "sums": 5.0, "walk |E|": 80.0, "walk u": 12.0,
                 "layout": 55.0, "pass 2": 55.0, "finish": 10.0}


def cc_jackknife(ugs: np.ndarray, eord: np.ndarray, egs: np.ndarray, out: np.ndarray, *,
                 n_blocks: int | None = None, n_threads: int | None = None) -> None:
    """Leave-one-out Spearman ρ of (u, |E|) for every point into ``out``, in O(M log M) in all, on
    threads (docs/methods.md, "Bootstrap": the jackknife of CC).

    The points are the positions of u in ascending order, ``ugs`` the starts of its tie runs;
    ``eord`` is the stable order of |E| over the positions and ``egs`` the starts of the runs of
    equal |E| along it (:class:`mcref.core._prepared.Prepared`: ``ugs``, ``eord``, ``egs``).
    Leaving out point j lowers the average rank of every other point by a_i = 1 if its
    value is above the left-out one, ½ if tied (for u; b_i likewise for |E|). With the
    centred ranks x_i = r_i − M/2 (the M − 1 remaining ranks keep the mean M/2):

    Σ_{i≠j}(x_i − a_i)(y_i − b_i) = Σ_{i≠j} x_i y_i − Σ_{i≠j} x_i b_i − Σ_{i≠j} a_i y_i + Σ_{i≠j} a_i b_i,

    and likewise for the squares. The sums of x or y over the points above j (or tied with it)
    come from run sums in sorted order (:func:`mcref.kernels.jackknife_cc.cc_walk`); Σ a_i b_i
    needs the joint counts #{u_i > u_j, |E|_i > |E|_j} (Fenwick trees over cache-sized buckets of
    |E| runs), #{u_i > u_j, |E|_i = |E|_j}, #{u_i = u_j, |E|_i > |E|_j} and the exact duplicates.

    Every step runs over blocks of whole tie runs (``n_blocks`` of u's, default :func:`cc_blocks`: a
    function of M alone; along |E| from ``n_blocks`` to 2·``n_blocks`` blocks of 2**t runs, so
    that a point's block is its run >> t) on ``n_threads`` threads (default numba's; :func:`mcref.parallel.over_tasks`),
    and gives the same bits for any thread count: the sums across blocks are of half-integers
    (exact), integer counts, or Σx², Σy², Σxy summed block by block in block order. Below
    M ≈ 3·10⁵ those too are exact, so any split gives the same bits (tests/test_jackknife.py).
    Memory: at most :data:`CC_JACK_BYTES_PER_POINT` bytes a point, ``out`` included.
    """
    from ..kernels import jackknife_cc as KC

    m = out.size
    mid = 0.5 * m
    nb_req = cc_blocks(m) if n_blocks is None else int(n_blocks)
    ub = run_blocks(ugs, nb_req)
    ny = egs.size - 1
    t = 0  # the blocks along |E|: 2**t runs each (n_blocks to 2·n_blocks of them), so that a point's
    while (ny >> (t + 1)) >= nb_req:  # block is its run >> t, read in u order (cc_block_sums)
        t += 1
    eb = np.append(np.arange(0, ny, 1 << t, dtype=np.int64), ny)
    nu, ne = ub.size - 1, eb.size - 1

    def step(name: str, blocks: int, kernel, *args) -> None:  # kernel(c0, c1, *args) over the blocks
        over_tasks(lambda c0, c1: kernel(c0, c1, *args), blocks, _CC_STEP_WORK[name] * m / max(1, blocks),
                   phase="jackknife", n_threads=n_threads)

    s = 0  # the joint counts: buckets of 2**s |E| runs, about √n_y of them
    while (1 << (2 * s)) < ny:
        s += 1
    nbk = ((ny - 1) >> s) + 1 if ny > 0 else 1
    x, y, gy = np.empty(m), np.empty(m), np.empty(m, dtype=np.int32)
    utot, etot, usum, xe = np.empty(nu), np.empty(ne), np.empty((nu, 4)), np.empty((nu, ne))
    counts = np.empty((nu, nbk), dtype=np.int32)

    nr = max(nu, ne)  # the ranks of u and of |E| in one call: item c holds the c-th nr-th of each's blocks

    def ranks(c0: int, c1: int) -> None:
        if c1 * nu // nr > c0 * nu // nr:
            KC.cc_ranks(c0 * nu // nr, c1 * nu // nr, ugs, ub, None, mid, x, None, utot)
        if c1 * ne // nr > c0 * ne // nr:
            KC.cc_ranks(c0 * ne // nr, c1 * ne // nr, egs, eb, eord, mid, y, gy, etot)

    over_tasks(ranks, nr, (_CC_STEP_WORK["ranks u"] + _CC_STEP_WORK["ranks |E|"]) * m / nr, phase="jackknife",
               n_threads=n_threads)
    step("sums", nu, KC.cc_block_sums, ugs, ub, x, y, gy, t, usum, xe, s, counts)
    sxy, sxx, syy = (_in_order(usum[:, k]) for k in range(3))
    etop = _from_the_top(np.stack([xe.sum(axis=0), etot], axis=1), egs, eb)
    utop = _from_the_top(np.stack([usum[:, 3], utot], axis=1), ugs, ub)
    del xe
    ayy = np.empty(m)
    step("walk |E|", ne, KC.cc_walk, egs, eb, eord, mid, syy, sxy, etop, x, out, ayy, ayy)  # other: unread
    axx, x = x, None  # Σxx, then Σxx·Σyy, in x's memory (every point written): no fresh pages to fault in
    step("walk u", nu, KC.cc_walk, ugs, ub, None, mid, sxx, 0.0, utop, y, out, axx, ayy)
    rec, sab, y, ayy = y.view(np.int64), ayy, None, None  # the joint counts' layout and values, likewise
    start = np.zeros(nbk + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0, dtype=np.int64), out=start[1:])
    # the blocks above's, per bucket (< M < 2**31); C order: the reversed view is C only when nu == 1,
    # and cc_layout compiled once more for each layout (small data and large)
    fill0 = np.ascontiguousarray(np.cumsum(counts[::-1], axis=0, dtype=np.int32)[::-1])
    fill0 -= counts
    fill0 += start[:nbk].astype(np.int32)  # the first slot of each block's points in each bucket
    del counts
    lf = np.empty(m, dtype=np.int32)
    step("layout", nu, KC.cc_layout, ugs, ub, gy, s, start, fill0, rec, lf)
    bb = run_blocks(start, nb_req)
    step("pass 2", bb.size - 1, KC.cc_pass2, start, bb, s, rec, lf, sab)
    del rec, lf
    step("finish", nu, KC.cc_finish, ugs, ub, gy, axx, sab, out)


class Jackknives:
    """The jackknives of one BCa run of ``infos`` on ``prep``, each handed over once by :meth:`take`
    (and then released).

    The mean-type statistics and the binned ones with equal-count bins share one pass
    (:func:`point_jackknives`), made when the first of them is taken, just after CC's when CC is
    asked for too and has not run (its steps then allocate beside nothing else: at M = 10⁷ the
    phase took 3.75 s on one thread and 1.80 on two, against 4.7 and 2.6 with CC's pass beside the
    shared rows' 320 MB, median of 3 each); every other statistic's pass runs when it is taken, on the
    threads (CC's in steps over blocks: :func:`cc_jackknife`). CC's pass used to run on a thread of
    its own beside the others' passes, which bounded the phase near 3× at any thread count; run so
    now (its steps on all threads, beside the others), the phase on 2 threads took 0.044 s at
    M = 10⁵ and 0.44 s at 10⁶ against 0.047 and 0.44 s with the steps in turn (medians of 21 and 7):
    no gain, so no second thread. Every value is that of :func:`jackknife` of the statistic
    alone, bit for bit (the same kernels on the same inputs).
    """

    def __init__(self, infos: Sequence[StatInfo], prep: Prepared, progress: _progress.Session | None = None):
        self.infos, self.prep, self.progress = list(infos), prep, progress
        self._ready: dict[str, np.ndarray] = {}
        self._mean = [i for i in self.infos if i.kind == "mean" and not i.user]
        self._binned = [i for i in self.infos if i.kind == "binned" and not _jackknife_quadratic(i, prep)]
        self._rank = [i for i in self.infos if i.kind == "rank"]

    def take(self, inf: StatInfo) -> np.ndarray:
        """The leave-one-out values of ``inf`` (u-sorted positions), released here."""
        shared = self._mean + self._binned
        if inf.name not in self._ready and len(shared) > 1 and inf in shared:
            # CC's pass first, while the shared rows (one block: alive until the last is released) are
            # not: at M = 10⁷ it ran 20 % slower on one thread beside their 320 MB
            for c in self._rank:
                self._ready[c.name] = jackknife(c, self.prep, progress=self.progress)
            self._rank = []
            rows = point_jackknives(self._mean, self._binned, self.prep)
            self._ready.update({i.name: rows[k] for k, i in enumerate(shared)})
            self._mean = self._binned = []
        if inf in self._rank:
            self._rank.remove(inf)
        if inf.name in self._ready:
            return self._ready.pop(inf.name)
        return jackknife(inf, self.prep, progress=self.progress)
