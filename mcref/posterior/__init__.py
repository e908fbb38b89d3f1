"""Posteriors of vector parameters: simulation-based calibration per parameter and jointly,
TARP, sharpness, and one verdict of exact size by the swap null (docs/methods.md, "Posteriors
of vector parameters")."""
