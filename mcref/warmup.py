"""Compile ``validate``'s numba kernels in parallel processes when numba's on-disk cache is cold
(docs/methods.md, "Numba options and caching").

A first ``mcref.validate`` on a fresh install spends most of its minute compiling, and numba
compiles on one thread per process. Its kernels fall into two families that share few callees,
the bootstrap's and the Monte Carlo references', each of two groups (:data:`GROUPS`): the
bootstrap's resampling and point estimates, and its jackknives; every D's kernel, and the scale
tests with the t fit. :func:`precompile` compiles them side by side: the longest share in the
calling process, the others in worker processes (loky's reusable pool, joblib's), which write
the on-disk cache; the caller's validations then load those kernels from there and have the
rest in memory. Each process compiles its share of the groups: one group each when there are
cores enough, whole families on two. Measured on the 2-core VM, cold cache,
``mcref demo``: 76.0 s plain, 56.6 s with the two families compiled side by side first (35.2 s for
them, 21.4 s for the demo, which then runs as on a warm cache; ``benchmarks/bench_first_run.py``).
Each group alone in a fresh process (same VM, 2026-11-28): references 25.4 s, bootstrap 20.7 s,
jackknife 11.5 s, scale 9.4 s, so on four cores or more the longest is the references' 25 s, where
the two families took 34 and 30 s. Since a small set's references no longer compile the bucketed
ranks of sets of ``BUCKET_MIN_M`` rows or more (issue 41), the references take 22.8 s (27.0 before,
the same process and load); a large set's variant is a group of its own, ``references-large``
(``precompile(large=True)``; the command line passes it for such a set). On a warm cache, with the cache switched off
(``MCREF_NUMBA_CACHE=0``: nothing to share between processes), on one core or with
``MCREF_PRECOMPILE=0`` it does nothing.

The command line does this for ``mcref demo``, ``validate``, ``report --html`` and ``bench``; in Python call
:func:`precompile` once before the first ``validate`` of a fresh install.

Dependent rows (``validate(groups=...)`` or ``order=...``) run kernels of their own: the unit
bootstrap and jackknife, the exchange of u-levels between groups of unequal sizes and the clustered
scale tests (:data:`DEPENDENT_GROUPS`, about 20 s more on the 2-core VM). ``precompile(dependent=True)``
compiles them besides, in the same workers: on two workers each joins its family (the kernels it
shares with the family compile once). The command
line passes it for ``--groups``/``--order``. Measured: ``precompile()`` then a first
``validate(E, u, groups=...)`` 54.8 s cold, ``precompile(dependent=True)`` then the same 47.0 s
(the validate compiles nothing).
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Callable, Sequence

import numpy as np

__all__ = ["DEPENDENT_GROUPS", "GROUPS", "cache_is_cold", "cold_groups", "compile_group", "enabled", "n_workers",
           "needed", "precompile"]

#: the kernel groups compiled side by side (2-core VM, each alone in a fresh process: 21, 12, 23 and 9 s)
GROUPS = ("bootstrap", "jackknife", "references", "scale")
#: the kernels of dependent rows (``validate(groups=...)`` or ``order=...``), compiled besides when the
#: call has them: the unit bootstrap and jackknife, and the u-level exchange of unequal groups with the
#: clustered t(ν̂) references (2-core VM, one after the other in one process: 13 s and 8 s)
DEPENDENT_GROUPS = ("bootstrap-units", "references-units")
#: the rows of the small set the groups are compiled on (enough for 20 bins of 30 points and more)
_M = 2000


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    u = rng.lognormal(-1.0, 0.4, _M)
    return u * rng.standard_normal(_M), u


def _stats() -> list[str]:
    """validate's default statistics (:data:`mcref.verdict._validate.DEFAULT_STATS`), whose kernels
    every group compiles."""
    from .verdict._validate import DEFAULT_STATS

    return list(DEFAULT_STATS)


def _bootstrap_group() -> None:
    """The bootstrap's resampling of validate's default statistics and their point estimates."""
    from .resampling._bootstrap import bootstrap_many

    E, u = _data()
    bootstrap_many(_stats(), E, u, n_boot=200, seed=0, method="percentile")


def _jackknife_group() -> None:
    """The jackknives of validate's default statistics (BCa's acceleration), as the bootstrap takes them."""
    from .resampling._jackknife import Jackknives
    from .core._prepared import prepare_for
    from .stats import info

    E, u = _data()
    infos = [info(n) for n in _stats()]
    jacks = Jackknives(infos, prepare_for(infos, E, u, n_bins=20))
    for inf in infos:
        jacks.take(inf)


def _references_group(large: bool = False) -> None:
    """The simulated references under validate's four D; ``large``: those of a set of
    ``BUCKET_MIN_M`` points or more, whose CC ranks by buckets (a specialization of its own, which
    the small set's kernels do not compile: :func:`mcref.kernels.reference._repeat_stats`), on a
    set of that size and two repeats (about a second)."""
    from .generative import get_distribution
    from .reference import simulate

    E, u = _large_data() if large else _data()
    Z = E / u
    dists = ["normal", "t6", get_distribution("empirical", Z=Z), get_distribution("permutation", Z=Z)]
    simulate(_stats(), u, dists=dists, n_mc=2 if large else 64, seed=0)


def _large_data() -> tuple[np.ndarray, np.ndarray]:
    """A set of ``BUCKET_MIN_M`` rows (CC's references rank it by buckets)."""
    from .kernels.fastrank import BUCKET_MIN_M

    rng = np.random.default_rng(0)
    u = rng.lognormal(-1.0, 0.4, BUCKET_MIN_M)
    return u * rng.standard_normal(BUCKET_MIN_M), u


def _scale_group() -> None:
    """The scale tests of ZMS and RCE (bootstrap-t, the t(ν̂) references) and the t fit."""
    from .verdict._scale_test import rce_test, scale_test

    E, u = _data()
    scale_test(E / u, ["ZMS"], n_boot=64, seed=0)
    rce_test(E, u, n_boot=64, seed=0)


def _dependent_data(large: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The small set in groups of unequal sizes (100 of 10 rows, 200 of 5): the u-level exchange runs;
    ``large``: the set of :func:`_large_data` in groups of 10 and 5 rows alike."""
    if not large:
        E, u = _data()
        return E, u, np.repeat(np.arange(300), np.r_[np.full(100, 10), np.full(200, 5)])
    E, u = _large_data()
    n10 = E.size // 20  # half the rows in groups of 10, the rest in groups of 5 (the last one shorter)
    sizes = np.r_[np.full(n10, 10), np.full(-(-(E.size - 10 * n10) // 5), 5)]
    return E, u, np.repeat(np.arange(sizes.size), sizes)[:E.size]


def _bootstrap_units_group() -> None:
    """The BCa bootstrap of validate's default statistics by resampling whole groups."""
    from .resampling._bootstrap import bootstrap_many

    E, u, g = _dependent_data()
    bootstrap_many(_stats(), E, u, n_boot=200, seed=0, groups=g)


def _references_units_group(large: bool = False) -> None:
    """The permutation D by units with the exchange of u-levels, and the clustered scale tests;
    ``large``: on a set of ``BUCKET_MIN_M`` rows (two repeats), as :func:`_references_group`."""
    from .core._dependence import units_for
    from .core._prepared import prepare_for
    from .generative import get_distribution
    from .reference import simulate_prepared
    from .stats import info
    from .verdict._scale_test import scale_tests

    E, u, g = _dependent_data(large)
    infos = [info(n) for n in _stats()]
    prep = prepare_for(infos, E, u, n_bins=20)
    units = units_for(prep.order, groups=g, z2=prep.z2, us=prep.u)
    simulate_prepared(infos, prep, [get_distribution("permutation", Z=prep.z)], n_mc=2 if large else 64, seed=0,
                      perm_scale=float(np.mean(prep.z2)), units=units)
    scale_tests(["ZMS", "RCE"], E, u, n_boot=64, seed=0, prep=prep, units=units)


_RUN: dict[str, Callable[[], None]] = {"bootstrap": _bootstrap_group, "references": _references_group,
                                       "references-large": lambda: _references_group(large=True),
                                       "jackknife": _jackknife_group, "scale": _scale_group,
                                       "bootstrap-units": _bootstrap_units_group,
                                       "references-units": _references_units_group,
                                       "references-units-large": lambda: _references_units_group(large=True)}
#: each group's main kernel (module, name): its index file in the cache says the group was compiled
_MAIN = {"bootstrap": ("bootstrap", "boot_kernel"), "jackknife": ("jackknife_cc", "cc_finish"),
         "references": ("reference", "mc_chunk_kernel"), "references-large": ("reference", "mc_chunk_kernel"),
         "scale": ("resample", "resampled_sums"),
         "bootstrap-units": ("units", "boot_units_kernel"), "references-units": ("reference", "mc_levels_kernel"),
         "references-units-large": ("reference", "mc_levels_kernel")}
#: each group's compile seconds alone in a fresh process (2-core VM), the longest first
_SECONDS = {"references-large": 27.0, "references": 22.0, "bootstrap": 21.0, "bootstrap-units": 13.0,
            "jackknife": 12.0, "scale": 9.0, "references-units-large": 9.0, "references-units": 8.0}
_ORDER = tuple(_SECONDS)
#: groups of one family share many callees (the statistics' kernels; the variates, permutations and ranks)
_FAMILY = {"bootstrap": 0, "jackknife": 0, "bootstrap-units": 0, "references": 1, "references-large": 1, "scale": 1,
           "references-units": 1, "references-units-large": 1}


def _lpt(items: Sequence, seconds, n: int) -> list[list]:
    """``items`` dealt to ``n`` workers, longest first, each to the least loaded one so far (longest
    processing time first)."""
    shares: list[list] = [[] for _ in range(max(1, n))]
    load = [0.0] * len(shares)
    for it in sorted(items, key=lambda it: -seconds(it)):
        k = load.index(min(load))
        shares[k].append(it)
        load[k] += seconds(it)
    return [s for s in shares if s]


def _shares(groups: Sequence[str], n: int) -> list[list[str]]:
    """``groups`` dealt to ``n`` workers, each worker's share compiled in one process. As many workers
    as groups: one each. As few as the families among them (or fewer): whole families, so that the
    kernels a family's groups share compile once (on two workers, the bootstrap's and the
    references' side, each about half the work). In between: the groups, longest first to the least
    loaded worker."""
    if n >= len(groups):
        return [[g] for g in sorted(groups, key=lambda g: -_SECONDS[g])]
    fams = sorted({_FAMILY[g] for g in groups})
    if n <= len(fams):
        members = [[g for g in sorted(groups, key=lambda g: -_SECONDS[g]) if _FAMILY[g] == f] for f in fams]
        return [[g for fam in share for g in fam]
                for share in _lpt(members, lambda fam: sum(_SECONDS[g] for g in fam), n)]
    return _lpt(list(groups), lambda g: _SECONDS[g], n)


def _compile_share(names: Sequence[str]) -> float:
    """:func:`compile_group` of each of ``names`` in turn (one worker's share); total seconds."""
    return sum(compile_group(g) for g in names)


def compile_group(name: str) -> float:
    """Compile (or load from the cache) the kernels of group ``name`` (one of :data:`GROUPS` or
    :data:`DEPENDENT_GROUPS`) by
    running them once on a small set; returns the seconds it took.

    Examples
    --------
    >>> compile_group("bootstrap") >= 0.0
    True
    """
    if name not in _RUN:
        raise ValueError(f"`name` must be one of {', '.join(GROUPS + DEPENDENT_GROUPS)}, got {name!r}")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _RUN[name]()
    return time.perf_counter() - t0


def n_workers(n_jobs: int = -1, n_groups: int = len(GROUPS)) -> int:
    """The processes :func:`precompile` would compile in for ``n_jobs`` (joblib's convention: -1
    every core, -2 all but one, …) and ``n_groups`` groups, the caller included (it starts one worker
    fewer): at most one per group and one per core.

    Examples
    --------
    >>> n_workers(1)
    1
    """
    cpus = os.cpu_count() or 1
    n = int(n_jobs) if n_jobs >= 0 else cpus + 1 + int(n_jobs)
    return max(0, min(n, int(n_groups), cpus))


def enabled() -> bool:
    """False when the environment sets ``MCREF_PRECOMPILE`` to 0, false, no or off."""
    return os.environ.get("MCREF_PRECOMPILE", "1").strip().lower() not in {"0", "false", "no", "off", ""}


def _groups(dependent: bool, large: bool = False) -> tuple[str, ...]:
    """The groups a call needs, longest first: :data:`GROUPS`, and :data:`DEPENDENT_GROUPS` with
    ``dependent``; with ``large`` (a set of ``BUCKET_MIN_M`` points or more) the references' on a
    set of that size."""
    wanted = GROUPS + (DEPENDENT_GROUPS if dependent else ())
    if large:
        wanted = tuple(g + "-large" if g in ("references", "references-units") else g for g in wanted)
    return tuple(g for g in _ORDER if g in wanted)


def cold_groups(dependent: bool = False, large: bool = False) -> tuple[str, ...]:
    """The groups of :data:`GROUPS` (and :data:`DEPENDENT_GROUPS` with ``dependent``) whose main
    kernel numba's on-disk cache lacks (its index file), i.e. that a first ``validate`` would
    compile; longest first. Empty when the cache is off, or with another numba's cache internals
    (nothing is guessed)."""
    from .kernels._config import CACHE

    if not CACHE:
        return ()
    import importlib

    out = []
    for g in _groups(dependent, large):
        module, name = _MAIN[g]
        kernel = getattr(importlib.import_module(f"{__package__}.kernels.{module}"), name)
        try:
            if not os.path.exists(kernel._cache._cache_file._index_path):
                out.append(g)
        except AttributeError:  # another numba's cache internals: do not guess
            return ()
    return tuple(out)


def cache_is_cold(dependent: bool = False, large: bool = False) -> bool:
    """Whether numba's on-disk cache lacks the main kernel of a group a first ``validate`` runs
    (:func:`cold_groups`: the bootstrap's and the references'; with ``dependent`` those of
    ``groups=``/``order=`` too). False when the cache is off."""
    return bool(cold_groups(dependent, large))


def needed(n_jobs: int = -1, *, force: bool = False, dependent: bool = False, large: bool = False) -> bool:
    """Whether :func:`precompile` would start workers: the cache is on, ``MCREF_PRECOMPILE`` does
    not turn it off, and two groups or more are cold (all of them with ``force``), given two
    workers or more by ``n_jobs``. (A single cold group compiles as fast in the calling process.)"""
    from .kernels._config import CACHE

    if not (CACHE and enabled()):
        return False
    n = len(_groups(dependent, large)) if force else len(cold_groups(dependent, large))
    return n >= 2 and n_workers(n_jobs, n) >= 2


def precompile(n_jobs: int = -1, *, force: bool = False, dependent: bool = False, large: bool = False) -> float | None:
    """Compile validate's kernel groups (:data:`GROUPS`; with ``dependent`` also
    :data:`DEPENDENT_GROUPS`, the kernels of ``groups=`` and ``order=``) side by side: the longest
    share in the calling process (no process to start, nothing to load afterwards), the others in
    worker processes, each writing numba's on-disk cache: the cold ones (:func:`cold_groups`), or all of
    them with ``force``. Returns the seconds spent, or None when there was nothing to do
    (:func:`needed`: warm cache, cache off, fewer than two cold groups or workers, or
    ``MCREF_PRECOMPILE=0`` in the environment). The results of mcref do not depend on it: it only
    moves the compiling.

    ``n_jobs``: the processes, the caller included (joblib's convention, :func:`n_workers`: -1 one
    per core, at most one per group). ``dependent``: the call to come has dependent rows (``validate(groups=...)``
    or ``order=...``); without it, their kernels (about 20 s on the 2-core VM) compile in that call.
    ``large``: the call to come has ``BUCKET_MIN_M`` (393 216) rows or more, whose CC ranks by buckets:
    the references' kernels compile for that path (``"references-large"``, and
    ``"references-units-large"`` with ``dependent``) instead of the small sets' ones. The on-disk cache keeps both; a cache that already holds either is not cold, and the
    other then compiles in the call that needs it (about 25 s, once).
    """
    if not needed(n_jobs, force=force, dependent=dependent, large=large):
        return None
    from joblib.externals.loky import get_reusable_executor

    todo = _groups(dependent, large) if force else cold_groups(dependent, large)
    shares = sorted(_shares(todo, n_workers(n_jobs, len(todo))), key=lambda sh: -sum(_SECONDS[g] for g in sh))
    t0 = time.perf_counter()
    futures = []
    if len(shares) > 1:
        executor = get_reusable_executor(max_workers=len(shares) - 1)
        futures = [executor.submit(_compile_share, share) for share in shares[1:]]
    _compile_share(shares[0])  # the longest share here: no process to start, nothing to load afterwards
    for f in futures:
        f.result()
    return time.perf_counter() - t0
