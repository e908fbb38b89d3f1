"""Simulated reference values of calibration statistics (docs/methods.md, "Simulated references",
"Exact and asymptotic references").

For a dataset's uncertainties u and a generative distribution D, repeat N_MC times:
draw ε ~ D(0, 1), E* = u·ε, θ_k = f(E*, u) (binned statistics keep the dataset's
bins: u does not change). Then θ_ref = mean θ_k, u(θ_ref) = sd(θ_k)/√N_MC and
I_D = the 2.5/97.5 % quantiles of θ_k.

Parallelism and randomness (docs/methods.md, "Random numbers", "Parallelism"): every
repeat owns its streams. Block c of ``CHUNK`` repeats is one ``SeedSequence`` child, and
repeat j of the block draws its standard normal deviates in the kernel (ziggurat,
:mod:`mcref.kernels.variates`) from the child's xoshiro256** state jumped j times
(:func:`mcref.kernels.rng.repeat_states`), and the t(ν) / normp mixing variates and the
shuffles of the permutation D from a further stream keyed by the block and the
distribution's label, jumped likewise. A pool of threads runs tasks of repeats (one repeat
each from ``TASK_WORK`` element·D on) through a nogil numba kernel; every repeat writes
its own column, so results are bit-identical for any thread count and any task size. Every D of
one call sees the same normal deviates (common random numbers), so differences between
D carry a small paired standard error: one kernel call draws each repeat's normal
deviates once and evaluates every D on them (a user statistic, which keeps each D's ε,
or a user-supplied D, gets a call per D instead). The chunk loop is the progress phase
"references <D, …>" (:mod:`mcref.core._progress`); a task checks for Ctrl-C between its
kernel calls (one per group of D).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Literal, Sequence

import numpy as np

from .core import _progress
from .core._checks import (dataset_args, as_float_array, check_choice, check_int, check_progress, check_seed, check_u,
                          check_keywords, merged_signature)
from .binning import bin_starts, resolve_n_bins
from .generative import DEFAULT_DISTS, Distribution, get_distribution, is_fitted_t
from .intervals import ConfidenceInterval
from .kernels.fastrank import make_rank_scratch, rank_scratch_bytes
from .kernels.rng import chunk_states, keyed_seed, repeat_states, seed_state
from .kernels.reference import mc_chunk_kernel, mc_levels_kernel
from .parallel import TASK_WORK, checkpoint, map_chunks, memory_threads, record_tasks  # TASK_WORK: element·D per task
from .core._prepared import Prepared, tie_starts
from .stats import StatInfo, info, user_kernels

__all__ = ["ReferenceResult", "PairedDifference", "Simulation", "simulate", "simulated_reference", "K_SENSITIVITY"]

#: default k of the D-sensitivity rule |θ_ref(D1) − θ_ref(D2)| > k·√(u₁² + u₂²) (docs/methods.md, "Sensitivity to D")
K_SENSITIVITY = 2.0

#: repeats per stream block: one ``SeedSequence`` child per block, each repeat of it a jump of the
#: block's state (its own stream: :func:`mcref.kernels.rng.repeat_states`); fixed, so results do not
#: depend on the thread count
CHUNK = 32
Method = Literal["mc", "exact", "asymptotic"]


@dataclass(frozen=True)
class ReferenceResult:
    """Reference value of one statistic under one generative distribution.

    Attributes
    ----------
    name : str
        Statistic.
    dist : str
        Label of D (``"normal"``, ``"t(6)"``, …).
    mean : float
        θ_ref.
    se : float
        Standard uncertainty of θ_ref: sd(θ_k)/√N_MC (Monte Carlo), or 0 for exact values.
    low, high : float
        2.5 / 97.5 % quantiles of θ_k (I_D); NaN where not available (asymptotic forms).
    sd : float
        sd(θ_k), the spread of the statistic itself under D.
    n_mc : int
        Number of repeats (0 for exact or asymptotic values).
    method : str
        ``"mc"``, ``"exact"`` or ``"asymptotic"``.
    samples : ndarray or None
        θ_k when requested with ``keep_samples=True``.
    """

    name: str
    dist: str
    mean: float
    se: float
    low: float
    high: float
    sd: float
    n_mc: int
    method: str = "mc"
    samples: np.ndarray | None = field(default=None, repr=False)

    @property
    def interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.low, self.high)


@dataclass(frozen=True)
class PairedDifference:
    """θ_ref(D1) − θ_ref(D2) from common random numbers.

    Attributes
    ----------
    name, dist1, dist2 : str
    diff : float
        Mean of the paired differences θ_k(D1) − θ_k(D2).
    se : float
        Paired standard error sd(θ_k(D1) − θ_k(D2))/√N_MC.
    se_unpaired : float
        √(se₁² + se₂²), what independent draws would give.
    """

    name: str
    dist1: str
    dist2: str
    diff: float
    se: float
    se_unpaired: float

    def sensitive(self, k: float = K_SENSITIVITY) -> bool:
        """The D-sensitivity rule, the one definition of mcref: :math:`|Δ| > k\\sqrt{u_1^2 + u_2^2}`.

        The *unpaired* combined uncertainty of the two references is used, as in the
        published rule (Pernot 2024): the question is whether the choice of D matters at
        the precision each reference is reported with (its own u(θ_ref)), not whether the
        common-random-number difference is detectable — the paired se is often several
        times smaller and would flag differences far below either reference's uncertainty.
        ``se`` (paired) stays available to measure the difference precisely.
        """
        return bool(abs(self.diff) > k * self.se_unpaired)


@dataclass(frozen=True)
class Simulation:
    """Raw Monte Carlo output: ``samples[d][k, r]`` = statistic k, distribution d, repeat r: an
    array (D, K, N_MC), or one (K, n_d) array per D when the D ran different numbers of repeats
    (a sequential test stops its D early: docs/methods.md, "Sequential Monte Carlo tests")."""

    names: tuple[str, ...]
    dists: tuple[Distribution, ...]
    samples: np.ndarray
    n_bins: int

    def _index(self, name: str, dist) -> tuple[int, int]:
        nm = name if name in self.names else info(name).name  # a row binned on a feature: "ENCE|x"
        if nm not in self.names:
            raise ValueError(f"statistic {nm} was not simulated; simulated: {', '.join(self.names)}")
        labels = [d.label for d in self.dists]
        if isinstance(dist, Distribution):
            label = dist.label
        elif isinstance(dist, str) and dist in labels:
            label = dist
        elif is_fitted_t(dist) and sum(lb.startswith("t(fit") for lb in labels) == 1:
            label = next(lb for lb in labels if lb.startswith("t(fit"))
        else:
            label = get_distribution(dist).label
        if label not in labels:
            raise ValueError(f"distribution {label} was not simulated; simulated: {', '.join(labels)}")
        return labels.index(label), self.names.index(nm)

    def reference(self, name: str, dist="normal", *, keep_samples: bool = False) -> ReferenceResult:
        """θ_ref, its standard uncertainty and I_D for one statistic and D."""
        d, k = self._index(name, dist)
        x = self.samples[d][k]
        n = x.size
        sd = float(np.std(x, ddof=1)) if n > 1 else float("nan")
        lo, hi = np.quantile(x, [0.025, 0.975])
        return ReferenceResult(
            name=self.names[k], dist=self.dists[d].label, mean=float(np.mean(x)), se=sd / math.sqrt(n),
            low=float(lo), high=float(hi), sd=sd, n_mc=n, samples=x.copy() if keep_samples else None,
        )

    def p_value(self, name: str, dist, estimate: float, *, alternative: str = "two-sided") -> tuple[float, float]:
        r"""Monte Carlo p-value of ``estimate`` against the simulated θ_k, and its standard error.

        With :math:`n` repeats, :math:`n_\ge = \#\{\theta_k \ge \hat\theta\}` and
        :math:`n_\le = \#\{\theta_k \le \hat\theta\}`:

        .. math::

            p_\mathrm{greater} = \frac{1 + n_\ge}{1 + n},\qquad
            p_\mathrm{less} = \frac{1 + n_\le}{1 + n},\qquad
            p_\mathrm{two\text{-}sided} = \min(1, 2\min(p_\mathrm{greater}, p_\mathrm{less}))

        Under the null (data generated with this u and D), θ̂ and the θ_k are exchangeable,
        so :math:`P(p \le \alpha) \le \alpha` exactly for any n (a Monte Carlo test,
        Besag & Clifford 1989). The standard error :math:`\sqrt{p(1-p)/n}` is the Monte
        Carlo uncertainty of p as an estimate of the p-value of an infinite simulation.

        Parameters
        ----------
        name : str
        dist : str or Distribution
        estimate : float
            θ̂ of the data.
        alternative : {"two-sided", "greater", "less"}, default: "two-sided"
            "greater": large values of the statistic are evidence against calibration
            (ENCE, ZMSE, UCE).

        Returns
        -------
        p, se : float
        """
        from .core._checks import check_choice

        alternative = check_choice(alternative, "alternative", ("two-sided", "greater", "less"))
        d, k = self._index(name, dist)
        x = self.samples[d][k]
        n = x.size
        pg = (1.0 + np.count_nonzero(x >= estimate)) / (1.0 + n)
        pl = (1.0 + np.count_nonzero(x <= estimate)) / (1.0 + n)
        p = pg if alternative == "greater" else pl if alternative == "less" else min(1.0, 2.0 * min(pg, pl))
        return float(p), float(math.sqrt(p * (1.0 - p) / n))

    def paired_difference(self, name: str, dist1, dist2) -> PairedDifference:
        """θ_ref(D1) − θ_ref(D2) with its paired (CRN) standard error."""
        d1, k = self._index(name, dist1)
        d2, _ = self._index(name, dist2)
        x, y = self.samples[d1][k], self.samples[d2][k]
        n = x.size
        return PairedDifference(
            name=self.names[k], dist1=self.dists[d1].label, dist2=self.dists[d2].label,
            diff=float(np.mean(x - y)), se=float(np.std(x - y, ddof=1) / math.sqrt(n)),
            se_unpaired=float(math.sqrt((np.var(x, ddof=1) + np.var(y, ddof=1)) / n)),
        )

    def d_sensitive(self, name: str, k: float = K_SENSITIVITY) -> tuple[bool, list[PairedDifference]]:
        """D-sensitivity of statistic ``name``: the first D against each other D.

        Returns ``(flag, pairs)``: ``flag`` is True when any pair is
        :meth:`PairedDifference.sensitive` at ``k``; ``pairs`` are θ_ref(D_first) − θ_ref(D).
        """
        labels = [d.label for d in self.dists]
        pairs = [self.paired_difference(name, labels[0], d) for d in labels[1:]]
        return any(p.sensitive(k) for p in pairs), pairs


@dataclass(frozen=True)
class _FixedU:
    """Everything about u that the Monte Carlo kernel needs, computed once."""

    u: np.ndarray
    starts: np.ndarray
    su2_bins: np.ndarray
    su2: float
    slnu2: float
    xu: np.ndarray
    sxx: float
    #: the features' bins: each sorted position's bin label (G, M), the bins' (n_b, Σu²)
    #: (G, max bins, 2) and bin counts (G,); G = 0 without features
    xlab: np.ndarray = None
    xacc0: np.ndarray = None
    xnb: np.ndarray = None

    def with_features(self, labels: Sequence[np.ndarray]) -> "_FixedU":
        """This u with the bins of features: ``labels[g]`` is each sorted position's bin of feature g."""
        m = self.u.size
        G = len(labels)
        nb = np.array([int(lab.max()) + 1 if lab.size else 0 for lab in labels], dtype=np.int64)
        xlab = np.zeros((G, m), dtype=np.int64)
        xacc0 = np.zeros((G, int(nb.max()) if G else 0, 2))
        u2 = self.u * self.u
        for g, lab in enumerate(labels):
            xlab[g] = lab
            xacc0[g, :nb[g], 0] = np.bincount(lab, minlength=nb[g])
            xacc0[g, :nb[g], 1] = np.bincount(lab, u2, minlength=nb[g])
        return _FixedU(u=self.u, starts=self.starts, su2_bins=self.su2_bins, su2=self.su2, slnu2=self.slnu2,
                       xu=self.xu, sxx=self.sxx, xlab=xlab, xacc0=xacc0, xnb=nb)


def _fixed_u(us: np.ndarray, u2: np.ndarray, lnu2: np.ndarray, starts: np.ndarray, ugs: np.ndarray) -> _FixedU:
    """:class:`_FixedU` of the sorted ``us`` (``u2``, ``lnu2`` its squares and their logs) with
    bins ``starts`` and tie runs ``ugs``: the average 1-based rank of a run [s, e) is
    (s + 1 + e)/2, exactly as ``scipy.stats.rankdata``, so no second sort."""
    rank = np.repeat(0.5 * (ugs[:-1] + 1.0 + ugs[1:]), np.diff(ugs))  # in float: int32 runs, no overflow
    xu = rank - 0.5 * (us.size + 1)
    return _FixedU(u=us, starts=starts, su2_bins=np.add.reduceat(u2, starts[:-1]), su2=float(u2.sum()),
                   slnu2=float(lnu2.sum()), xu=np.ascontiguousarray(xu), sxx=float(np.sum(xu * xu)))


def _fixed_u_of(prep: Prepared, *, single_bin: bool = False) -> _FixedU:
    """:class:`_FixedU` from a prepared dataset (its u sorted, its bins and tie runs cut);
    ``single_bin``: one bin, as :func:`simulate` uses when no binned statistic is simulated.
    Made once per dataset and kept in ``prep.memo``: each round of validate's sequential tests asks
    for it (a serial 75 ms at M = 10⁷, 0.6 ms at 10⁵)."""
    key = ("fixed_u", bool(single_bin))
    fx = prep.memo.get(key)
    if fx is None:
        starts = np.array([0, prep.M], dtype=np.int64) if single_bin else prep.starts
        fx = prep.memo[key] = _fixed_u(prep.u, prep.u2, prep.lnu2, starts, prep.ugs)
    return fx


def _prepare_u(u: np.ndarray, n_bins: int, binning: str = "equal", log: bool = True, min_count: int = 30) -> _FixedU:
    us = np.sort(u, kind="stable")
    if binning == "adaptive" and n_bins > 1:
        from .binning import adaptive_starts

        starts = adaptive_starts(us, n_bins, min_count=min_count, log=log)
    else:
        starts = bin_starts(us.size, n_bins)
    u2 = us * us
    return _fixed_u(us, u2, np.log(u2), starts, tie_starts(us))


def _mix_seed(ss: np.random.SeedSequence, chunk: int, dist: Distribution) -> np.random.SeedSequence:
    """The stream of chunk ``chunk``'s mixing variates under ``dist``: keyed by the chunk and
    the distribution's label (:meth:`Distribution.stream_key`), so it does not depend on which
    other D are simulated, or in which order."""
    return keyed_seed(ss, chunk, dist.stream_key())


def _mix_state(ss: np.random.SeedSequence, chunk: int, dist: Distribution) -> np.ndarray:
    return seed_state(_mix_seed(ss, chunk, dist))


def _mix_rng(ss: np.random.SeedSequence, chunk: int, dist: Distribution) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(_mix_seed(ss, chunk, dist)))


def _n_threads(n_threads: int | None) -> int:
    if n_threads is None:
        import numba

        return max(1, numba.get_num_threads())
    return check_int(n_threads, "n_threads", minimum=1)


@dataset_args
def simulate(
    names: Sequence[str] | str,
    u,
    *,
    dists: Iterable = DEFAULT_DISTS,
    n_mc: int = 10_000,
    n_bins: int = 20,
    min_count: int = 30,
    shrink: bool = False,
    binning: str = "equal",
    log: bool | None = None,
    E=None,
    seed=None,
    n_threads: int | None = None,
    progress: bool | None = None,
) -> Simulation:
    """Monte Carlo draws of several statistics under several D, from common random numbers.

    Parameters
    ----------
    names : str or sequence of str
        Statistics (any of :func:`mcref.stats.names`).
    u : array_like, shape (M,)
        Uncertainties of the dataset (finite, > 0).
    dists : iterable, default: ("normal", "t6")
        Generative distributions (see :func:`mcref.generative.get_distribution`).
    n_mc : int, default: 10 000
        Repeats N_MC.
    n_bins, min_count, shrink
        Equal-count bins of u for the binned statistics (docs/methods.md, "Binning").
    E : array_like, optional
        The dataset's errors; needed only for ``dist="empirical"``.
    seed : None, int, SeedSequence or Generator
        Same seed ⇒ bit-identical samples for any ``n_threads``.
    n_threads : int, optional
        Worker threads (default: numba's thread count).
    progress : bool, optional
        A progress bar "references <D, …>" on stderr. None (default): only when stderr is a
        terminal and the call is expected to take more than about 2 s; True: always (also
        into a pipe, sparsely); False: never. The samples do not depend on it.

    Returns
    -------
    Simulation
    """
    if isinstance(names, str):
        names = [names]
    infos: list[StatInfo] = [info(n) for n in names]
    if not infos:
        raise ValueError("`names` must list at least one statistic")
    u = check_u(u, min_size=2)
    n_mc = check_int(n_mc, "n_mc", minimum=2)  # a standard error needs two repeats
    progress = check_progress(progress)
    Z = None
    if E is not None:
        E = as_float_array(E, "E")
        if E.size != u.size:
            raise ValueError(f"`E` and `u` must have the same length, got {E.size} and {u.size}")
        Z = E / u
    if isinstance(dists, (str, Distribution)) or callable(dists):
        dists = [dists]
    dlist = tuple(get_distribution(d, Z=Z) for d in dists)
    if not dlist:
        raise ValueError("`dists` must list at least one distribution")
    labels = [d.label for d in dlist]
    if len(set(labels)) != len(labels):
        raise ValueError(f"`dists` lists a distribution twice: {labels}")
    binned = any(i.binned for i in infos)
    binning = check_choice(binning, "binning", ("equal", "adaptive"))
    if binned and binning == "adaptive":
        nb = check_int(n_bins, "n_bins", minimum=1)
        if np.all(u == u[0]):
            raise ValueError("all uncertainties are equal: the binned statistics are undefined for homoscedastic data")
    else:
        nb = resolve_n_bins(u.size, n_bins, min_count=min_count, shrink=shrink) if binned else 1
    fx = _prepare_u(u, nb, binning if binned else "equal", True if log is None else bool(log),
                    check_int(min_count, "min_count", minimum=1))
    return _simulate_run(infos, dlist, fx, n_mc, check_seed(seed), n_threads, progress)


def simulate_prepared(infos: Sequence[StatInfo], prep: Prepared, dists: Sequence[Distribution], *, n_mc: int,
                      seed, n_threads: int | None = None, progress: bool | None = None,
                      features: Sequence[np.ndarray] = (), grp: Sequence[int] | None = None,
                      perm_scale: float = 1.0, units=None, repeats: tuple[int, int] | None = None,
                      u_scale2: float = 1.0) -> Simulation:
    """:func:`simulate` on data checked and prepared by the caller (:func:`mcref.stats.prepare_for`
    ``infos``; ``dists`` resolved with the data's Z): the internal path of :func:`mcref.validate`.
    The sorted u, its bins and its ranks come from ``prep``: no second check, no second sort.

    ``features[g]`` gives each sorted position's bin of feature g and ``grp[k]`` the feature
    that binned statistic k is binned on (−1: the bins of u), so one ε per repeat serves the
    rows of u and of every feature. ``perm_scale`` = c²: under the permutation D the binned
    statistics are computed against u·c (the set's own scale, c² = ZMS: docs/methods.md,
    "Adaptivity"); the other D are unchanged. ``units`` (:class:`mcref.core._dependence.Units`): the
    permutation D moves whole groups' (or blocks') Z-vectors among the units of equal size, the
    data's Z in u-sorted order (docs/methods.md, "Dependent test sets"). ``repeats``: only those
    repeats of the ``n_mc`` (:func:`_simulate_run`). ``u_scale2`` = s²: under every other D the
    binned statistics are computed against u·s, that is on sets whose errors are 1/s times u
    (the equivalence margins' sets at the margin: docs/methods.md, "Equivalence margins")."""
    fx = _fixed_u_of(prep, single_bin=not any(i.binned for i, g in zip(infos, grp or [-1] * len(infos)) if g < 0))
    if units is not None:
        dists = [replace(d, values=prep.z) if d.kind == "permutation" else d for d in dists]
    return _simulate_run(infos, tuple(dists), fx.with_features(features), n_mc, check_seed(seed), n_threads,
                         progress, grp=grp, perm_scale=perm_scale, units=units, repeats=repeats, u_scale2=u_scale2)


def _simulate_run(infos: Sequence[StatInfo], dlist: tuple[Distribution, ...], fx: _FixedU, n_mc: int,
                  ss: np.random.SeedSequence, n_threads: int | None, progress: bool | None,
                  grp: Sequence[int] | None = None, perm_scale: float = 1.0, units=None,
                  repeats: tuple[int, int] | None = None, u_scale2: float = 1.0) -> Simulation:
    """The Monte Carlo repeats of :func:`simulate` (arguments checked, u prepared).

    ``repeats = (r0, r1)``: only repeats r0 ≤ r < r1 of an ``n_mc``-repeat run (every repeat
    owns its streams), bit for bit those of the whole run: the rounds of a
    sequential test (docs/methods.md, "Sequential Monte Carlo tests"). ``ss`` must not have
    spawned yet (:func:`mcref.kernels.rng.fresh`)."""
    if any(i.kind == "rank" for i in infos) and fx.sxx == 0.0:  # all u equal: no ranks to correlate
        raise ValueError("CC is undefined when all `u` are equal")
    if fx.xlab is None:
        fx = fx.with_features(())
    grp_all = list(grp) if grp is not None else [-1] * len(infos)
    grp_k = np.array([g for g, i in zip(grp_all, infos) if not i.user], dtype=np.int64)
    c2s = np.array([perm_scale if d.kind == "permutation" else u_scale2 for d in dlist])
    labels = [d.label for d in dlist]
    u = fx.u
    nb = fx.starts.size - 1
    codes = np.array([i.code for i in infos if not i.user], dtype=np.int64)
    bi = [k for k, i in enumerate(infos) if not i.user]
    user = [(k, user_kernels(i)) for k, i in enumerate(infos) if i.user]  # fed the kernel's ε (keep)
    r0, r1 = repeats if repeats is not None else (0, n_mc)
    if not 0 <= r0 < r1 <= n_mc:
        raise ValueError(f"`repeats` must be a range within {n_mc} repeats, got {repeats}")
    samples = np.empty((len(dlist), len(infos), r1 - r0))
    m = u.size
    b0, b1 = r0 // CHUNK, -(-r1 // CHUNK)  # the stream blocks the repeats lie in
    # one normal stream per repeat: common random numbers across D; each block of CHUNK repeats
    # is one SeedSequence child, its repeats the jumps of its state (kernels.rng.repeat_states)
    blocks = chunk_states(ss, -(-n_mc // CHUNK))[b0:b1]
    zstates = repeat_states(blocks, CHUNK, r0 - b0 * CHUNK, r1 - b0 * CHUNK)
    no_state = np.empty((0, 4), dtype=np.uint64)
    # the D drawn in the kernel share one normal draw per repeat (one kernel call for all of
    # them); a user statistic keeps ε per D, so then each D gets its own call (keep: per × M)
    drawn = [d for d, dist in enumerate(dlist) if dist.kind != "user"]
    # with u-levels the permutation D is its own group, run by its own kernel (mc_levels_kernel)
    levelled = {d for d in drawn if units is not None and units.levels is not None
                and dlist[d].kind == "permutation"}
    rest = [d for d in drawn if d not in levelled]
    groups = [[d] for d in drawn] if user else ([rest] if rest else []) + [[d] for d in sorted(levelled)]
    groups += [[d] for d, dist in enumerate(dlist) if dist.kind == "user"]
    vstates = np.zeros((len(dlist), r1 - r0, 4), dtype=np.uint64)  # a D's own stream (t mixing, shuffles)
    for d, dist in enumerate(dlist):
        if dist.kind != "user" and dist.own_stream:
            own = np.stack([_mix_state(ss, c, dist) for c in range(b0, b1)])
            vstates[d] = repeat_states(own, CHUNK, r0 - b0 * CHUNK, r1 - b0 * CHUNK)
    emp = next((dist.table for dist in dlist if dist.kind == "empirical"), fx.u[:1])
    perm = next((dist.values for dist in dlist if dist.kind == "permutation"), None)
    if perm is not None and perm.size != m:
        raise ValueError(f"the permutation D shuffles the data's {perm.size} Z values, but `u` has {m}")
    perm = fx.u[:1] if perm is None else perm
    none = np.empty(0, dtype=np.int64)
    pu = (units.members, units.ustart, units.cstart, np.arange(units.n_perm_units, dtype=np.int64)) \
        if units is not None else (none, none, none, none)
    lv = (units.levels, units.ratios, units.gid) if units is not None and units.levels is not None else \
        (np.empty(0), np.empty(0), none)
    # repeats per task: one from TASK_WORK element·D on (so the first round of 64 repeats is 64 tasks at
    # M ≥ 10⁵), more below, where a repeat is too small to pay for its Python call. Scheduling only: every
    # repeat owns its streams, so the bits do not depend on it (nor on the thread count)
    per = int(max(1, min(CHUNK, TASK_WORK // (m * len(dlist)))))
    n_tasks = -(-(r1 - r0) // per)
    # the rows of normals and of mixing variates only where a D reads them (8·M bytes each per thread)
    mz = m if any(d.kind not in ("permutation", "user") for d in dlist) else 0
    mv = m if any(d.kind != "user" and d.needs_mixing for d in dlist) else 0
    # a = |u·ε| and the rank buffers only where CC is asked (the kernel reads them for it alone)
    ma = m if any(i.kind == "rank" for i in infos) else 0
    # a thread's scratch: those rows, ε (8·M), a, the rank buffers, the user's kept draws; as many threads
    # as fit mcref.parallel.thread_memory (any count gives the same bits)
    per_thread = 8.0 * (mz + mv + m + ma + (per * m if user else 0)) + rank_scratch_bytes(ma, spearman_only=True)
    T = memory_threads(min(_n_threads(n_threads), n_tasks), per_thread)
    buffers = [None] * T  # per-thread scratch, allocated by the thread on its first task

    def work(c: int, t: int) -> None:
        if buffers[t] is None:
            buffers[t] = (np.empty((1, mz)), np.empty((1, mv)), np.empty(m), np.empty(max(ma, 1)),
                          make_rank_scratch(ma, spearman_only=True),
                          np.empty((1, per if user else 0, m)), np.empty(pu[3].size, dtype=np.int64))
        zrow, vrow, eps, a, scratch, keep, pscr = buffers[t]
        lo, hi = c * per, min(c * per + per, r1 - r0)  # the task's repeats, counted from r0
        for g, group in enumerate(groups):
            if g:
                checkpoint()  # a stopped run (Ctrl-C) does not wait for the task's other D
            dcodes = np.array([dlist[d].code for d in group], dtype=np.int64)
            nus = np.array([dlist[d].param for d in group], dtype=np.float64)  # ν of a t, p of a normp, else 0
            gi = np.array(group, dtype=np.int64)
            tmp = np.empty((len(group), codes.size, hi - lo))
            kept = keep[:, :hi - lo]
            dist = dlist[group[0]]
            if group[0] in levelled:  # the u-level exchange: its own stream, no normals
                mc_levels_kernel(codes, grp_k, c2s[group[0]], hi - lo, vstates[group[0], lo:hi].copy(), perm,
                                 fx.starts, fx.xlab, fx.xacc0, fx.xnb, a, scratch, tmp[0], *pu, pscr, *lv)
            elif dist.kind == "user":  # drawn by the user's Python function, one stream per repeat
                v = np.concatenate([np.ascontiguousarray(dist._user_draw(_mix_rng(ss, r0 + r, dist), (1, m)),
                                                         dtype=np.float64) for r in range(lo, hi)])
                mc_chunk_kernel(codes, grp_k, dcodes, nus, c2s[gi], hi - lo, no_state, no_state.reshape(1, 0, 4), v,
                                v, emp, perm, fx.u, fx.starts, fx.su2_bins, fx.su2, fx.slnu2, fx.xu, fx.sxx, fx.xlab,
                                fx.xacc0, fx.xnb, eps, a, scratch, kept, tmp, *pu, pscr)
            else:  # every D of the group transforms the repeat's one normal stream; a t(ν) D adds its own χ² stream
                mc_chunk_kernel(codes, grp_k, dcodes, nus, c2s[gi], hi - lo, zstates[lo:hi].copy(),
                                vstates[gi, lo:hi].copy(), zrow, vrow, emp, perm, fx.u, fx.starts, fx.su2_bins, fx.su2,
                                fx.slnu2, fx.xu, fx.sxx, fx.xlab, fx.xacc0, fx.xnb, eps, a, scratch, kept, tmp, *pu,
                                pscr)
            for j, d in enumerate(group):
                samples[d, bi, lo:hi] = tmp[j]
                for k, uk in user:
                    uk.sim(kept[j], fx.u, samples[d, k, lo:hi])

    # threads over tasks; Ctrl-C stops them between tasks (mcref.parallel)
    record_tasks("references", [float(min(per, r1 - r0 - c * per)) * m * len(dlist) for c in range(n_tasks)],
                 T, "round-robin", span=(r0, r1))
    seconds = _progress.estimate_seconds(references=float(r1 - r0) * m * len(dlist))
    with _progress.session(progress, seconds=seconds) as sess, \
            sess.phase("references " + ", ".join(labels), r1 - r0, "repeat") as phase:
        map_chunks(work, n_tasks, T, progress=phase.chunks(per))
    return Simulation(names=tuple(i.name for i in infos), dists=dlist, samples=samples, n_bins=nb)


@dataset_args
def simulated_reference(name: str | Sequence[str] | None, u, *, names: Sequence[str] | None = None, dist="normal",
                        method: Method = "mc", keep_samples: bool = False, **options):
    r"""Simulated reference value of a statistic for the uncertainties ``u``
    (docs/methods.md, "Simulated references").

    .. math::

        \theta_\mathrm{ref} = \frac{1}{N_{MC}}\sum_k f(u\cdot\varepsilon_k, u),\quad
        u(\theta_\mathrm{ref}) = \frac{\mathrm{sd}(\theta_k)}{\sqrt{N_{MC}}},\quad
        I_D = [q_{0.025}(\theta_k), q_{0.975}(\theta_k)],\quad \varepsilon_k \sim D(0, 1)

    Parameters
    ----------
    name : str or list of str
        Statistic, or several computed from the same draws (then a dict is returned).
    u : array_like, shape (M,)
        The dataset's uncertainties.
    names : list of str, optional
        Alternative spelling for several statistics from the same draws
        (``simulated_reference(None, u, names=["CC", "ENCE"])``); returns a dict.
    dist : str, tuple, callable or Distribution, default: "normal"
        Generative distribution D (``"normal"``, ``"t6"``, ``"uniform"``, ``"laplace"``,
        ``"empirical"`` (needs ``E``), or a unit-variance sampler ``f(rng, size)``).
    n_mc : int, default: 10 000
    n_bins, min_count, shrink
        Binning of u for ENCE, ZMSE, UCE.
    method : {"mc", "exact", "asymptotic"}, default: "mc"
        ``"exact"``: χ² law under normal D (ZMS, ZMSE); ``"asymptotic"``: large-n forms
        for any D of finite kurtosis (ZMS, ZMSE, ENCE, UCE); see :mod:`mcref.exact`.
    E : array_like, optional
        Errors of the dataset (for ``dist="empirical"``).
    seed : None, int, SeedSequence or Generator
    keep_samples : bool, default: False
        Keep the θ_k in the result.
    n_threads : int, optional
        Worker threads (default: numba's thread count).
    progress : bool, optional
        A progress bar of the Monte Carlo repeats on stderr (``method="mc"``). None
        (default): only when stderr is a terminal and the call is expected to take more
        than about 2 s; True: always; False: never. The result does not depend on it.

    Returns
    -------
    ReferenceResult, or dict of them when ``name`` is a list

    Notes
    -----
    u is fixed, so its bins, per-bin ⟨u²⟩ and ranks are computed once; a repeat is one
    O(M) pass plus a bucket-sort rank pass for CC. Aim for 2·u(θ_ref) ≪ the half-width
    of the bootstrap interval of the data (docs/methods.md, "Simulated references").

    References
    ----------
    .. [1] P. Pernot, "Calibration in machine learning uncertainty quantification: beyond
       consistency to target adaptivity", APL Mach. Learn. 1, 046121 (2023).
    .. [2] P. Pernot, "On the sensitivity of simulated reference values of calibration
       statistics to the generative distribution" (2024).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.lognormal(size=2000)
    >>> ref = simulated_reference("ZMS", u, n_mc=2000, seed=1)
    >>> abs(ref.mean - 1) < 4 * ref.se
    True
    """
    method = check_choice(method, "method", ("mc", "exact", "asymptotic"))
    check_keywords("simulated_reference", options, _SIMULATE_KEYWORDS)
    opts = {**_SIMULATE_KEYWORDS, **options}
    check_progress(opts["progress"])
    if names is not None:
        if name is not None:
            raise ValueError("give the statistics either as `name` or as `names`, not both")
        name = list(names)
    if name is None:
        raise ValueError("`name` (or `names`) must name at least one statistic")
    many = not isinstance(name, str)
    names = list(name) if many else [name]
    if method != "mc":
        from .exact import exact_reference

        E = opts["E"]
        d = get_distribution(dist, Z=None if E is None else as_float_array(E, "E") / u)
        res = {}
        for nm in names:
            kurt = d.kurtosis
            er = exact_reference(nm, u, n_bins=opts["n_bins"], method=method, kurtosis=kurt,
                                 min_count=opts["min_count"])
            res[info(nm).name] = ReferenceResult(
                name=info(nm).name, dist=d.label, mean=er.mean, se=0.0,
                low=er.low if er.low is not None else float("nan"),
                high=er.high if er.high is not None else float("nan"),
                sd=er.sd if er.sd is not None else float("nan"), n_mc=0, method=method,
            )
        return res if many else res[info(name).name]
    sim = simulate(names, u, dists=[dist], **options)
    res = {nm: sim.reference(nm, sim.dists[0], keep_samples=keep_samples) for nm in sim.names}
    return res if many else res[info(name).name]


#: simulate's keywords and defaults, which simulated_reference takes as its own (one definition)
_SIMULATE_KEYWORDS = {k: p.default for k, p in inspect.signature(simulate).parameters.items()
                      if p.kind is p.KEYWORD_ONLY and k != "dists"}
simulated_reference.__signature__ = merged_signature(simulated_reference, simulate, drop=("dists",))
