"""Numba options for every mcref kernel, in one place (docs/methods.md, "Numba options
and caching").

``FASTMATH`` omits ``nnan`` and ``ninf`` on purpose: the kernels must keep IEEE
semantics for ``inf``/``nan`` so that degenerate cases are detected, not hidden.

``CACHE`` (numba's on-disk cache) is on by default and can be switched off with
``MCREF_NUMBA_CACHE=0``.  Cached kernels are known to crash some process pools
(numba#4807); ``tests/test_config.py`` runs the cached kernels under joblib's
loky workers to guard the default.
"""

from __future__ import annotations

import hashlib
import os

FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in {"0", "false", "no", "off", ""}


CACHE = _env_flag("MCREF_NUMBA_CACHE", True)


def _invalidate_stale_cache() -> None:
    """Drop cached kernels when any kernel source changed.

    numba keys a cached function on its own file's timestamp only: a kernel whose
    *callee* in another file changed would keep its stale machine code. So hash every
    kernel source together and clear the kernels' cache files when the hash moves.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    cache_dir = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(here, "__pycache__")
    h = hashlib.sha256()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    stamp = os.path.join(cache_dir, "mcref-kernels.sha256")
    try:
        with open(stamp) as f:
            if f.read() == h.hexdigest():
                return
    except OSError:
        pass
    try:
        os.makedirs(cache_dir, exist_ok=True)
        for root, _dirs, files in os.walk(cache_dir):
            if "mcref" not in root:  # a shared NUMBA_CACHE_DIR holds other packages too
                continue
            for name in files:
                if name.endswith((".nbi", ".nbc")):
                    os.remove(os.path.join(root, name))
        with open(stamp, "w") as f:
            f.write(h.hexdigest())
    except OSError:  # read-only install: numba falls back to its own cache directory
        pass


if CACHE:
    _invalidate_stale_cache()

#: options for serial kernels (also released from the GIL so that threads can run them)
NJIT = dict(cache=CACHE, no_cfunc_wrapper=True, fastmath=FASTMATH, nogil=True, error_model="numpy")
#: options for ``prange`` kernels
NJIT_PARALLEL = dict(cache=CACHE, no_cfunc_wrapper=True, fastmath=FASTMATH, nogil=True, parallel=True, error_model="numpy")
#: exact IEEE arithmetic, for kernels whose results must match NumPy to the last bit
NJIT_EXACT = dict(cache=CACHE, no_cfunc_wrapper=True, nogil=True, error_model="numpy")
#: per-bin ratios summed over bins (:func:`.stats.finish_binned`): reassociating that sum
#: was compiled differently by a fresh compilation and by a cache-loaded one (samples 1 ulp
#: apart between the main process and loky workers), so it keeps its order
NJIT_ORDERED = dict(cache=CACHE, no_cfunc_wrapper=True, fastmath=FASTMATH - {"reassoc"}, nogil=True, error_model="numpy")
NJIT_EXACT_PARALLEL = dict(cache=CACHE, no_cfunc_wrapper=True, nogil=True, parallel=True, error_model="numpy")
#: ``prange`` kernels whose per-chunk sums keep their order (:mod:`.resample`)
NJIT_ORDERED_PARALLEL = dict(NJIT_ORDERED, parallel=True)
#: kernels built around a user's function (:mod:`.user`): closures over a dispatcher of the
#: user's session cannot be cached on disk; exact arithmetic, the user's function keeps its own
NJIT_USER = dict(nogil=True, error_model="numpy")
