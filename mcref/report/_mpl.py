"""matplotlib, imported when a figure is drawn (the ``plot`` extra), with the message that says
how to get it."""

from __future__ import annotations

__all__ = ["pyplot"]


def pyplot():
    """``matplotlib.pyplot``, or an ImportError naming the extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("mcref's plots need matplotlib: pip install 'mcref[plot]'") from None
    return plt
