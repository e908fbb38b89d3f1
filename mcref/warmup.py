"""Compile ``validate``'s numba kernels in parallel processes when numba's on-disk cache is cold
(docs/methods.md, "Numba options and caching").

A first ``mcref.validate`` on a fresh install spends most of its minute compiling, and numba
compiles on one thread per process. Its kernels fall into groups that share few callees: the
bootstrap's (resampling, jackknives, point estimates) and the Monte Carlo references' (every D's
kernel, the sequential rounds, the scale tests and the t fit). :func:`precompile` compiles each
group in its own worker process (joblib's loky pool), which writes it to the on-disk cache; the
caller's validations then load every kernel from there. Measured on the 2-core VM, cold cache,
``mcref demo``: 76.0 s plain, 56.6 s with the two groups compiled side by side first (35.2 s for
the groups, 21.4 s for the demo, which then runs as on a warm cache;
``benchmarks/bench_first_run.py``). On a warm cache, with the cache switched off
(``MCREF_NUMBA_CACHE=0``: nothing to share between processes), on one core or with
``MCREF_PRECOMPILE=0`` it does nothing.

The command line does this for ``mcref demo``, ``validate``, ``report --html`` and ``bench``; in Python call
:func:`precompile` once before the first ``validate`` of a fresh install.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Callable

import numpy as np

__all__ = ["GROUPS", "cache_is_cold", "compile_group", "enabled", "n_workers", "needed", "precompile"]

#: the kernel groups compiled side by side, in about equal compile time (2-core VM: 28 s and 34 s)
GROUPS = ("bootstrap", "references")
#: the rows of the small set the groups are compiled on (enough for 20 bins of 30 points and more)
_M = 2000


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    u = rng.lognormal(-1.0, 0.4, _M)
    return u * rng.standard_normal(_M), u


def _bootstrap_group() -> None:
    """The BCa bootstrap of validate's default statistics (resampling, jackknives, estimates)."""
    from ._bootstrap import bootstrap_many

    E, u = _data()
    bootstrap_many(["ZMS", "RCE", "CC", "ENCE", "ZMSE"], E, u, n_boot=200, seed=0)


def _references_group() -> None:
    """The simulated references under validate's four D, the scale tests and the t fit."""
    from .generative import get_distribution
    from .reference import simulate
    from .verdict._scale_test import rce_test, scale_test

    E, u = _data()
    Z = E / u
    dists = ["normal", "t6", get_distribution("empirical", Z=Z), get_distribution("permutation", Z=Z)]
    simulate(["ZMS", "RCE", "CC", "ENCE", "ZMSE"], u, dists=dists, n_mc=64, seed=0)
    scale_test(Z, ["ZMS"], n_boot=64, seed=0)
    rce_test(E, u, n_boot=64, seed=0)


_RUN: dict[str, Callable[[], None]] = {"bootstrap": _bootstrap_group, "references": _references_group}


def compile_group(name: str) -> float:
    """Compile (or load from the cache) the kernels of group ``name`` (one of :data:`GROUPS`) by
    running them once on a small set; returns the seconds it took.

    Examples
    --------
    >>> compile_group("bootstrap") >= 0.0
    True
    """
    if name not in _RUN:
        raise ValueError(f"`name` must be one of {', '.join(GROUPS)}, got {name!r}")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _RUN[name]()
    return time.perf_counter() - t0


def n_workers(n_jobs: int = -1) -> int:
    """The worker processes :func:`precompile` would start for ``n_jobs`` (joblib's convention: -1
    every core, -2 all but one, …): at most one per group and one per core.

    Examples
    --------
    >>> n_workers(1)
    1
    """
    cpus = os.cpu_count() or 1
    n = int(n_jobs) if n_jobs >= 0 else cpus + 1 + int(n_jobs)
    return max(0, min(n, len(GROUPS), cpus))


def enabled() -> bool:
    """False when the environment sets ``MCREF_PRECOMPILE`` to 0, false, no or off."""
    return os.environ.get("MCREF_PRECOMPILE", "1").strip().lower() not in {"0", "false", "no", "off", ""}


def cache_is_cold() -> bool:
    """Whether numba's on-disk cache lacks the bootstrap's or the references' main kernel (their
    index files), i.e. a first ``validate`` would compile them. False when the cache is off."""
    from .kernels._config import CACHE

    if not CACHE:
        return False
    from .kernels.bootstrap import boot_kernel
    from .kernels.reference import mc_chunk_kernel

    try:
        return not all(os.path.exists(k._cache._cache_file._index_path) for k in (boot_kernel, mc_chunk_kernel))
    except AttributeError:  # another numba's cache internals: do not guess
        return False


def needed(n_jobs: int = -1, *, force: bool = False) -> bool:
    """Whether :func:`precompile` would start workers: the cache is on and cold (or ``force``),
    ``MCREF_PRECOMPILE`` does not turn it off, and ``n_jobs`` gives two workers or more."""
    from .kernels._config import CACHE

    return bool(CACHE) and enabled() and n_workers(n_jobs) >= 2 and (force or cache_is_cold())


def precompile(n_jobs: int = -1, *, force: bool = False) -> float | None:
    """Compile validate's kernel groups (:data:`GROUPS`) side by side in worker processes, each
    writing numba's on-disk cache, when the cache is cold (:func:`cache_is_cold`) or ``force``;
    returns the seconds spent, or None when there was nothing to do (:func:`needed`: warm cache,
    cache off, one worker, or ``MCREF_PRECOMPILE=0`` in the environment). The results of mcref do
    not depend on it: it only moves the compiling.

    ``n_jobs``: the worker processes (joblib's convention, :func:`n_workers`: -1 one per core, at
    most one per group).
    """
    if not needed(n_jobs, force=force):
        return None
    from joblib import Parallel, delayed

    t0 = time.perf_counter()
    Parallel(n_jobs=n_workers(n_jobs), backend="loky")(delayed(compile_group)(g) for g in GROUPS)
    return time.perf_counter() - t0
