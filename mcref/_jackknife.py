"""Leave-one-out values (the jackknife) of the statistics, for the BCa acceleration
(docs/methods.md, "Bootstrap"): O(M) for mean-type statistics, O(M·N) for binned ones (all of a
call's binned statistics in one pass), O(M log M) for CC, O(M) per left-out point for adaptive
bins and user statistics; by units for dependent sets. :class:`Jackknives` serves one BCa run:
CC's serial pass runs on its own thread beside the other statistics' threaded passes."""

from __future__ import annotations

import threading
from typing import Sequence

import numba
import numpy as np

from . import _progress, parallel
from .binning import bin_starts
from .kernels import stats as K
from .kernels.jackknife_cc import jack_cc_fast_kernel
from .kernels.units import jack_units_kernel
from .parallel import batch_ranges, map_chunks, memory_threads, over_tasks, record_tasks
from ._dependence import Units
from ._prepared import Prepared, tie_starts
from .stats import StatInfo, info, user_kernels

__all__ = ["jackknife", "binned_jackknives", "unit_jackknife", "Jackknives", "CC_JACK_BYTES_PER_POINT"]

#: CC's jackknife pass holds at most 44 bytes a point, its output included: five M-sized float64 arrays,
#: then four and the joint counts' 12 bytes (:func:`mcref.kernels.jackknife_cc.jack_cc_fast_kernel`): its
#: scratch beside the other statistics' passes
CC_JACK_BYTES_PER_POINT = 44.0


def _record_jackknife(m: int) -> None:
    """The task of CC's linear-time jackknife, for the parallel profile
    (:func:`mcref.parallel.record_tasks`): one serial O(M log M) pass (a Fenwick tree), in element
    operations (10·log₂ M per point, as the other jackknives count theirs: a mean-type point 25, a
    binned one 10 per bin; they record their own tasks, :func:`mcref.parallel.over_tasks`)."""
    record_tasks("jackknife", [10.0 * m * max(1.0, np.log2(m))], numba.get_num_threads(), "blocks")


def _jack_adaptive(name: str, prep: Prepared, out: np.ndarray, phase: _progress.Phase | None = None) -> None:
    """Leave-one-out values of a binned statistic under adaptive bins: the M − 1 points are
    re-binned by the same rule for every left-out point (numba kernel, O(M) each; called in
    batches of points, see :func:`_by_batches`)."""
    from .kernels.binning import adaptive_jackknife_kernel

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
    progress : mcref._progress.Session, optional
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
        if inf.kind == "mean":  # threads over ranges of points (mcref.parallel.over_tasks)
            tot, szc, szc2 = K.jack_mean_totals(prep.z, prep.zshift, prep.z2, prep.E2, prep.u2, prep.lnu2)
            over_tasks(lambda j0, j1: K.jack_mean_kernel(inf.code, prep.z, prep.zshift, prep.z2, prep.E2, prep.u2,
                                                         prep.lnu2, tot, szc, szc2, j0, j1, out),
                       prep.M, K.JACK_MEAN_WORK, phase="jackknife")
        elif inf.kind == "rank":
            _record_jackknife(prep.M)  # O(M log M): sums over the prepared tie runs and a Fenwick tree
            _cc_jackknife(prep, out)
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


def binned_jackknives(infos: Sequence[StatInfo], prep: Prepared) -> np.ndarray:
    """Leave-one-out values of the binned statistics ``infos`` (equal-count bins), row k for
    ``infos[k]``, in one pass: each left-out point's bin sums are read once from the prefix sums
    and every statistic is finished from them (:func:`mcref.kernels.stats.jack_binned_kernel`), so
    each row is bit for bit the row of that statistic alone, at half the work for ENCE and ZMSE."""
    codes = np.array([i.code for i in infos], dtype=np.int64)
    out = np.empty((codes.size, prep.M))
    starts_m1 = bin_starts(prep.M - 1, prep.n_bins)
    pu, pe, pz = K.prefix_sums(prep.u2, prep.E2, prep.z2)
    over_tasks(lambda p0, p1: K.jack_binned_kernel(codes, starts_m1, prep.u2, prep.E2, prep.z2, pu, pe, pz, p0, p1,
                                                   out),
               prep.M, 10.0 * prep.n_bins * codes.size, phase="jackknife")
    return out


def _cc_jackknife(prep: Prepared, out: np.ndarray) -> None:
    """CC's leave-one-out values into ``out`` (u-sorted positions): one serial kernel call."""
    if prep.eord.size == prep.M:  # the order and tie runs of |E| are prepared: no sort
        jack_cc_fast_kernel(prep.ugs, prep.eord, prep.egs, out)
    else:  # prepared without them (ranks=False): the order and runs that prepare makes
        ae = np.abs(prep.E)
        eord = np.argsort(ae, kind="stable").astype(np.int32)
        jack_cc_fast_kernel(prep.ugs, eord, tie_starts(ae[eord]), out)


class Jackknives:
    """The jackknives of one BCa run of ``infos`` on ``prep``, each handed over once by :meth:`take`
    (and then released), in the order :meth:`order` gives.

    * The binned statistics with equal-count bins share one pass (:func:`binned_jackknives`),
      made when the first of them is taken.
    * CC's O(M log M) pass is one serial kernel call. With two threads or more, other statistics
      beside it, enough work (:data:`mcref.parallel.MIN_THREADED_WORK`) and room for its scratch
      beside the others' (:func:`mcref.parallel.memory_threads`, :data:`CC_JACK_BYTES_PER_POINT`), it starts on its
      own thread at once and :meth:`order` puts CC last, so that it runs while the other
      statistics' passes use the threads. Before, it ran alone: 30–50 % of the jackknife's time
      on one thread.

    Every value is that of :func:`jackknife` of the statistic alone, bit for bit (the same
    kernels on the same inputs); only when they run changes.
    """

    def __init__(self, infos: Sequence[StatInfo], prep: Prepared, progress: _progress.Session | None = None):
        self.infos, self.prep, self.progress = list(infos), prep, progress
        self._ready: dict[str, np.ndarray] = {}
        self._shared = [i for i in self.infos if i.kind == "binned" and not _jackknife_quadratic(i, prep)]
        cc = [i for i in self.infos if i.kind == "rank" and not _jackknife_quadratic(i, prep)]
        self._cc = cc[0].name if cc and len(self.infos) > 1 and self._overlap(prep.M) else None
        self._thread = None
        self._error: list[BaseException] = []
        if self._cc is not None:
            out = np.empty(prep.M)
            _record_jackknife(prep.M)

            def run() -> None:
                try:
                    _cc_jackknife(prep, out)
                    self._ready[self._cc] = out
                except BaseException as exc:  # noqa: BLE001 - raised by take() in the calling thread
                    self._error.append(exc)

            self._thread = threading.Thread(target=run, daemon=True, name="mcref-jackknife-cc")
            self._thread.start()

    @staticmethod
    def _overlap(m: int) -> bool:
        return (numba.get_num_threads() > 1 and 10.0 * m * max(1.0, np.log2(m)) >= parallel.MIN_THREADED_WORK
                and memory_threads(2, CC_JACK_BYTES_PER_POINT * m) >= 2)

    def order(self) -> list[int]:
        """The indices of ``infos`` in the order to take them: CC last when it runs on its own thread."""
        idx = list(range(len(self.infos)))
        return [k for k in idx if self.infos[k].name != self._cc] + [k for k in idx if self.infos[k].name == self._cc]

    def take(self, inf: StatInfo) -> np.ndarray:
        """The leave-one-out values of ``inf`` (u-sorted positions), released here."""
        if inf.name == self._cc:
            while self._thread.is_alive():  # in slices: a Ctrl-C is raised here (the pass ends on its own)
                self._thread.join(0.05)
            if self._error:
                raise self._error[0]
        elif inf.name not in self._ready and len(self._shared) > 1 and inf in self._shared:
            rows = binned_jackknives(self._shared, self.prep)
            self._ready.update({i.name: rows[k] for k, i in enumerate(self._shared)})
        if inf.name in self._ready:
            return self._ready.pop(inf.name)
        return jackknife(inf, self.prep, progress=self.progress)
