"""The prepared dataset: a checked (E, u) sorted by u once, with its bins, tie runs and |E| order.

Every numerical step that reads the data in u order (the statistics, the bootstrap, the
references, the shape screen, the tie spread) takes one :class:`Prepared` from
:func:`prepare` or :func:`prepare_for` (docs/architecture.md, "Single definitions"): the
sort by u, the bin starts, the runs of tied u and |E| and the rank slots of CC are computed
here and nowhere else. The module knows the statistics only through the two attributes
``prepare_for`` reads (``binned``, ``kind``), so it sits below the registry (``stats.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ._checks import check_choice, check_int
from ..binning import adaptive_starts, bin_starts, resolve_n_bins
from ..kernels import stats as K

__all__ = ["Prepared", "prepare", "prepare_for", "rank_slots", "tie_starts", "u_then_E"]


def rank_slots(eord: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(slot, eslot)`` of :func:`mcref.kernels.stats.rank_corr` from ``eord`` (u-sorted
    positions in |E| order).

    Block b holds the |E| positions [b·B, (b + 1)·B), B = ``RANK_BLOCK``; ``slot[i]`` is
    the block of point i times B plus the rank of i, in u order, among that block's
    points; ``eslot[k] = slot[eord[k]]`` lies in the block of k. Once per kernel run (:meth:`Prepared.slots`).
    """
    m = eord.size
    slot = np.empty(m, dtype=np.int32)  # M < 2**31: half the index traffic of int64
    for b0 in range(0, m, K.RANK_BLOCK):  # block b's points are eord[b0:b1]; u order = position order
        b1 = min(b0 + K.RANK_BLOCK, m)
        slot[np.sort(eord[b0:b1])] = np.arange(b0, b1, dtype=np.int32)
    return slot, np.ascontiguousarray(slot[eord])


def tie_starts(sorted_values: np.ndarray) -> np.ndarray:
    """Starts of the runs of equal values in a sorted array, with the length appended; int32
    below 2**31 values (positions, read as indices and counts only: half the memory)."""
    m = sorted_values.size
    brk = np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1
    return np.concatenate(([0], brk, [m])).astype(np.int32 if m < 2**31 else np.int64)


@dataclass(frozen=True)
class Prepared:
    """A dataset sorted by u (stable) with everything the kernels need (computed once).

    ``order`` maps sorted positions to input indices (int32, as ``eord``: M < 2**31). ``eord``
    is the stable order of |E| over sorted positions and ``egs``/``ugs`` the starts of the tie
    groups of |E| and u (int32, :func:`tie_starts`). The slots of CC's rank pass are not kept:
    :meth:`slots` makes them from ``eord`` when a kernel reads them (0.5 s and 76 MiB at M = 10⁷,
    held only while the bootstrap or an evaluation runs, not through a whole validate).
    ``starts`` are the equal-count bin starts (None when no binned statistic).
    """

    order: np.ndarray
    E: np.ndarray
    u: np.ndarray
    z: np.ndarray
    z2: np.ndarray
    E2: np.ndarray
    u2: np.ndarray
    lnu2: np.ndarray
    zshift: float
    starts: np.ndarray
    ugs: np.ndarray
    eord: np.ndarray
    egs: np.ndarray
    n_bins: int
    binning: str = "equal"
    log: bool = True
    n_bins_requested: int = 0
    min_count: int = 30
    #: what later steps derive from the data alone and ask for again (the simulated references'
    #: view of u, :func:`mcref.reference._fixed_u_of`: 75 ms at M = 10⁷ per call), kept with it
    memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def M(self) -> int:
        return self.z.size

    @property
    def tie_groups(self) -> np.ndarray:
        """(start, end) of the runs of equal u holding two or more points, shape (G, 2)."""
        size = np.diff(self.ugs)
        multi = np.flatnonzero(size > 1)
        return np.ascontiguousarray(np.stack([self.ugs[multi], self.ugs[multi + 1]], axis=1)).astype(np.int64)

    def slots(self) -> tuple[np.ndarray, np.ndarray]:
        """``(slot, eslot)`` of CC's rank pass (:func:`rank_slots`), made from ``eord`` on each
        call; two empty arrays when the order of |E| was not prepared (no CC)."""
        if self.eord.size != self.M:
            return np.empty(0, np.int32), np.empty(0, np.int32)
        return rank_slots(self.eord)

    def kernel_args(self) -> tuple:
        """Arguments shared by :func:`eval_weighted` and the bootstrap kernel (the rank slots
        made here: call it once per kernel run, not once per batch)."""
        slot, eslot = self.slots()
        return (self.z, self.zshift, self.z2, self.E2, self.u2, self.lnu2,
                self.starts, self.ugs, slot, eslot, self.egs)


def stable_order(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(np.argsort(x, kind="stable"), tie_starts(x[order]))`` for finite ``x``, the same indices
    and runs: NumPy's default sort (on AVX-512 CPUs its vectorized quicksort) on the values, then,
    where values are tied, again on the unique keys run·M + index (run: of equal values), so that
    tied values keep their input order. The runs (:func:`tie_starts`) come out of the first sort,
    and the callers keep them. Against the stable sort (2026-11-28): 13 885 lognormal values 0.14
    against 0.74 ms, 10⁶ 30 against 100 ms; ties (QM9_E's u, 135 distinct values) 0.28 against
    0.36 ms, 10⁶ values rounded to 0.01 29 against 60 ms.

    Examples
    --------
    >>> x = np.array([2.0, 1.0, 2.0, 0.5, 1.0])
    >>> order, starts = stable_order(x)
    >>> order.tolist() == np.argsort(x, kind="stable").tolist(), starts.tolist()
    (True, [0, 1, 3, 5])
    """
    o = np.argsort(x)
    starts = tie_starts(x[o])
    if starts.size == x.size + 1:  # no ties (or fewer than 2 values)
        return o, starts
    run = np.repeat(np.arange(starts.size - 1, dtype=np.int64), np.diff(starts))
    m = np.int64(x.size)
    return np.sort(run * m + o) % m, starts  # (run, index) in one int64 key, unique: its sorted values


def u_then_E(E_sorted: np.ndarray, ugs: np.ndarray) -> np.ndarray:
    """Positions of a :class:`Prepared`'s rows (sorted by u, stable) in the order of (u, E), ties of
    both in input order: with ``E_sorted = prep.E`` and ``ugs = prep.ugs``,
    ``prep.order[u_then_E(prep.E, prep.ugs)]`` is ``np.lexsort((E, u))``. Within each run of tied u
    the rows are in input order already, so sorting E inside the runs is enough: E's stable order
    (:func:`stable_order`), then one sort of the unique keys run·M + rank by E. 41 against 206 ms
    for ``np.lexsort`` at M = 10⁶ with u to three decimals (2026-11-28); no ties: the identity.

    Examples
    --------
    >>> E, u = np.array([3.0, 1.0, 2.0, 1.0]), np.array([1.0, 1.0, 0.5, 1.0])
    >>> order, ugs = stable_order(u)
    >>> order[u_then_E(E[order], ugs)].tolist() == np.lexsort((E, u)).tolist()
    True
    """
    m = E_sorted.size
    if ugs.size == m + 1:
        return np.arange(m)
    eorder, _ = stable_order(E_sorted)
    erank = np.empty(m, dtype=np.int64)
    erank[eorder] = np.arange(m)
    run = np.repeat(np.arange(ugs.size - 1, dtype=np.int64), np.diff(ugs))
    return eorder[np.sort(run * np.int64(m) + erank) % m]


def prepare(E: np.ndarray, u: np.ndarray, n_bins: int | None, *, min_count: int = 30, shrink: bool = False,
            binning: str = "equal", log: bool | None = None, ranks: bool = True) -> Prepared:
    """Sort a validated dataset by u and precompute bins and tie groups.

    ``n_bins=None`` means that no binned statistic is evaluated (one dummy bin).
    ``ranks=False`` skips the order of |E| (only CC needs it): ``eord`` is then empty.
    ``binning="adaptive"`` cuts the bins of :func:`mcref.binning.adaptive_starts` (``log``
    grid by default) instead of equal counts.
    """
    binning = check_choice(binning, "binning", ("equal", "adaptive"))
    log = True if log is None else bool(log)
    m = E.size
    if m >= 2**31:
        raise ValueError("datasets above 2**31 points are not supported")
    order, ugs = stable_order(u)
    order = order.astype(np.int32)  # M < 2**31: indexes in Python only
    if n_bins is None:
        nb = 1
        starts = bin_starts(m, 1)
    elif binning == "adaptive":
        n_bins = check_int(n_bins, "n_bins", minimum=1)
        min_count = check_int(min_count, "min_count", minimum=1)
        if np.all(u == u[0]):
            raise ValueError(
                "all uncertainties are equal, so bins of u are arbitrary splits of the rows: the binned "
                "statistics (ENCE, ZMSE, UCE) are undefined for homoscedastic data; use ZMS or RCE"
            )
        starts = adaptive_starts(u[order], n_bins, min_count=min_count, log=log)
        nb = starts.size - 1
    else:
        nb = resolve_n_bins(m, n_bins, min_count=min_count, shrink=shrink)
        starts = bin_starts(m, nb)
        if nb > 1 and np.all(u == u[0]):
            raise ValueError(
                "all uncertainties are equal, so bins of u are arbitrary splits of the rows: the binned "
                "statistics (ENCE, ZMSE, UCE) are undefined for homoscedastic data; use ZMS or RCE"
            )
    Es = np.ascontiguousarray(E[order])
    us = np.ascontiguousarray(u[order])
    z = Es / us
    ae = np.abs(Es)
    # int32 (M < 2**31): read in Python only (rank slots, tie runs, the shape screen)
    if ranks:
        eord, egs = stable_order(ae)
        eord = eord.astype(np.int32)
    else:
        eord, egs = np.empty(0, dtype=np.int32), np.array([0, m], dtype=np.int32)
    return Prepared(
        order=order, E=Es, u=us, z=z, z2=z * z, E2=Es * Es, u2=us * us, lnu2=np.log(us * us),
        zshift=float(np.mean(z)), starts=starts, ugs=ugs, eord=eord, egs=egs, n_bins=nb, binning=binning, log=log,
        n_bins_requested=nb if n_bins is None else int(n_bins), min_count=int(min_count),
    )


def prepare_for(infos: Sequence, E: np.ndarray, u: np.ndarray, *, n_bins: int, min_count: int = 30,
                shrink: bool = False, binning: str = "equal", log: bool | None = None) -> Prepared:
    """The prepared data that every step on the statistics ``infos`` needs (checked ``E``, ``u``):
    the bins only for a binned statistic, the order of |E| only for CC. One call serves the
    estimate, the bootstrap, the references, the shape screen and the tie spread of a dataset
    (:func:`mcref.validate` prepares once)."""
    return prepare(E, u, n_bins if any(i.binned for i in infos) else None, min_count=min_count, shrink=shrink,
                   binning=binning, log=log, ranks=any(i.kind == "rank" for i in infos))
