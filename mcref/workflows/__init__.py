"""Workflows that run verdicts over many sets: benchmark runs over data sets, recalibration,
and the decimation curves (docs/architecture.md, "Layers").

The public names (``mcref.benchmark``, ``mcref.recalibrate``, …) are re-exported by the package face."""
