"""Figures (matplotlib, the ``plot`` extra: ``pip install "mcref[plot]"``).

The public name of :mod:`mcref.report.plots`, which holds them; see there for the list.
Every function takes an optional ``ax`` (or ``axes``) and returns the axes it drew on.
"""

from __future__ import annotations

from .report import plots as _impl
from .report.plots import *  # noqa: F401,F403 - the public figures
from .report.plots import VERDICT_STYLE, plot_benchmark  # noqa: F401 - mcref.plots.VERDICT_STYLE as before

__all__ = list(_impl.__all__)
