"""Resampling: the bootstrap and its BCa intervals, the leave-one-out jackknives of the BCa
acceleration, and the ζ-scores (docs/architecture.md, "Layers").

The public names (``mcref.bootstrap``, ``mcref.zeta``, …) are re-exported by the package face."""
