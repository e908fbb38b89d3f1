"""Shared result types: the confidence interval tuple."""

from __future__ import annotations

from typing import NamedTuple


class ConfidenceInterval(NamedTuple):
    """A two-sided interval ``(low, high)`` (as ``scipy.stats``' ConfidenceInterval)."""

    low: float
    high: float
