"""Numba kernels of mcref: pure functions of arrays, no validation
(docs/methods.md, "Code conventions")."""
