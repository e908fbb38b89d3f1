"""Numba options for every mcref kernel, in one place (STYLE.md, conventions 3).

``FASTMATH`` omits ``nnan`` and ``ninf`` on purpose: the kernels must keep IEEE
semantics for ``inf``/``nan`` so that degenerate cases are detected, not hidden.

``CACHE`` (numba's on-disk cache) is on by default and can be switched off with
``MCREF_NUMBA_CACHE=0``.  Cached kernels are known to crash some process pools
(numba#4807); ``tests/test_config.py`` runs the cached kernels under joblib's
loky workers to guard the default.
"""

from __future__ import annotations

import os

FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in {"0", "false", "no", "off", ""}


CACHE = _env_flag("MCREF_NUMBA_CACHE", True)

#: options for serial kernels (also released from the GIL so that threads can run them)
NJIT = dict(cache=CACHE, fastmath=FASTMATH, nogil=True, error_model="numpy")
#: options for ``prange`` kernels
NJIT_PARALLEL = dict(cache=CACHE, fastmath=FASTMATH, nogil=True, parallel=True, error_model="numpy")
#: exact IEEE arithmetic, for kernels whose results must match NumPy to the last bit
NJIT_EXACT = dict(cache=CACHE, nogil=True, error_model="numpy")
NJIT_EXACT_PARALLEL = dict(cache=CACHE, nogil=True, parallel=True, error_model="numpy")
