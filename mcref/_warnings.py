"""Warning classes of mcref (STYLE.md, conventions 8)."""

from __future__ import annotations


class DegenerateBootstrapWarning(RuntimeWarning):
    """BCa could not be computed (all replicates equal, infinite ``z0`` or undefined
    acceleration); the percentile interval is returned instead."""

    def __init__(self, msg: str | None = None):
        super().__init__(
            msg
            or "the BCa interval is undefined for this bootstrap distribution; "
            "falling back to the percentile interval"
        )


class ShrunkBinsWarning(UserWarning):
    """The requested number of bins was reduced to respect ``min_count`` (``shrink=True``)."""
