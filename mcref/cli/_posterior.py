"""The command ``mcref posterior truth draws``: the check of :func:`mcref.posterior.from_posterior`."""

from __future__ import annotations


def parser_posterior(sub) -> None:
    """``mcref posterior TRUTH DRAWS``: SBC per parameter and jointly, TARP, one exact verdict."""
    sub.add_parser("posterior", help="posterior draws of vector parameters: SBC, TARP, one exact verdict")
