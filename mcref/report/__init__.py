"""The reports: tables as text, JSON and CSV (``_render``), the figures (``plots``, ``_forest``,
``_mpl``) and the HTML pages (``_html``) (docs/architecture.md).

They take result objects as they come and import no workflow. :mod:`mcref.plots` is the
public name of :mod:`mcref.report.plots`.
"""
