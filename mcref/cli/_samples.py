"""Commands for sample sets: ``mcref compare A B`` (two sets, one law or two?) and
``mcref diversity A B ...`` (the Vendi score of each set at a common size)."""

from __future__ import annotations


def parser_compare(sub) -> None:
    """``mcref compare A B``: the two-sample verdict of :func:`mcref.samples.two_sample`."""
    sub.add_parser("compare", help="two sample sets: one law or two? (MMD, energy, FD, PRDC, C2ST)")


def parser_diversity(sub) -> None:
    """``mcref diversity A B ...``: the Vendi scores of :func:`mcref.samples.diversity`."""
    sub.add_parser("diversity", help="the diversity (Vendi score) of sample sets at a common size")
