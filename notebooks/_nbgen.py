"""Shared command line of the notebook generators (``notebooks/_make_*.py``): each builds its
notebook with ``build(quick)`` and calls :func:`main`."""

import argparse
import tempfile
from pathlib import Path
from typing import Callable

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell


def notebook(cells: list) -> nbf.NotebookNode:
    """A notebook of ``cells`` with the python3 kernel."""
    nb = nbf.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def main(build: Callable[[bool], nbf.NotebookNode], stem: str, doc: str | None = None) -> None:
    """``--quick`` writes the small-settings notebook to ``--output`` (default
    <tmpdir>/STEM_quick.ipynb); otherwise notebooks/STEM.ipynb (or ``--output``)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--quick", action="store_true", help="small settings, written to a temporary path")
    ap.add_argument("--output", default=None, help="where to write the notebook")
    args = ap.parse_args()
    if args.quick:
        out = Path(args.output or Path(tempfile.gettempdir()) / f"{stem}_quick.ipynb")
    else:
        out = Path(args.output or Path(__file__).resolve().parent / f"{stem}.ipynb")
    nbf.write(build(args.quick), out)
    print(f"wrote {out}")
