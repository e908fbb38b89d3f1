"""Numba kernels of mcref: pure functions of arrays, no validation (STYLE.md §1, conventions 2)."""
