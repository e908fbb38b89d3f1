"""Sphinx configuration of the mcref documentation.

Build from the repository root (CI runs the same command with ``-q``)::

    pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API reference (``api.rst``) is written from the numpydoc docstrings by autodoc and
numpydoc; ``methods.md``, ``guide.md``, the guide pages ``guide/*.md`` and ``changelog.md``
(the repository's CHANGELOG.md) are Markdown, read by MyST. Theme: Furo.
"""

from __future__ import annotations

import importlib
import types

from sphinx.util import logging

import mcref

logger = logging.getLogger(__name__)

project = "mcref"
author = "mcref contributors"
copyright = "mcref contributors (BSD-3-Clause)"
release = mcref.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "images/*.py"]

# -- autodoc / autosummary ---------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters/Returns sections carry the types
autosummary_generate = False  # api.rst is hand-written: no generated stub files

# -- numpydoc ----------------------------------------------------------------------------
numpydoc_show_class_members = False  # autodoc's :members: lists them (once)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False  # types are plain text ("array_like, shape (M,)")

# Module docstrings (mcref.synthetic, mcref.exact) carry bibliographies whose entries are
# cited from the functions' docstrings, not from the module text; numpydoc makes every
# docstring's citations private to it, so Sphinx reports them as "not referenced".
suppress_warnings = ["ref.citation"]

# -- MyST (guide.md, methods.md) ---------------------------------------------------------
myst_heading_anchors = 3  # [text](methods.md#bootstrap) links to section anchors

# -- HTML --------------------------------------------------------------------------------
html_theme = "furo"  # a maintained theme (pip install furo; the docs and dev extras have it)
html_title = f"mcref {release}"
html_static_path: list[str] = []
html_theme_options = {"navigation_with_keys": True, "top_of_page_buttons": []}


# -- Completeness of the API reference ---------------------------------------------------
# Every name of mcref.__all__ and of the __all__ of these modules must be documented in
# api.rst, under its own module or (for a re-export) under mcref; a new public name that
# is missing there fails the build.
API_MODULES = [
    "mcref.datasets", "mcref.synthetic", "mcref.studies", "mcref.exact", "mcref.shape",
    "mcref.plots", "mcref.store", "mcref.parallel",
    "mcref.diagnostics", "mcref.binning", "mcref.calibration", "mcref.scores", "mcref.samples", "mcref.posterior",
]


def _check_api_complete(app, env) -> None:
    py = env.get_domain("py")
    documented = set(py.objects)
    missing = []
    for modname in ["mcref", *API_MODULES]:
        module = importlib.import_module(modname)
        for attr in module.__all__:
            value = getattr(module, attr)
            if isinstance(value, types.ModuleType):
                ok = value.__name__ in documented
            else:
                ok = f"{modname}.{attr}" in documented or (
                    getattr(mcref, attr, None) is value and f"mcref.{attr}" in documented
                )
            if not ok:
                missing.append(f"{modname}.{attr}")
    if missing:
        logger.warning(
            "public names missing from docs/api.rst: %s", ", ".join(missing),
            type="mcref", subtype="api",
        )


def setup(app):
    app.connect("env-check-consistency", _check_api_complete)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
