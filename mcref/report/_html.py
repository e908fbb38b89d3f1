"""Static HTML reports: of a benchmark run (:meth:`mcref.BenchmarkResult.to_html`) and of one
dataset (``mcref report --html``): the one home of mcref's HTML.

One directory that opens offline: ``index.html`` (the stylesheet and scripts inline, no
network), ``summary.png`` (:func:`mcref.plots.plot_benchmark`) and ``diagnostics/NNN.png``
(one :func:`mcref.plots.plot_report` per dataset). The pages are rendered by Jinja2 from the
template files of ``mcref/report/templates/`` (``benchmark.html.j2``, ``dataset.html.j2`` on
``_base.html.j2``, the stylesheet ``report.css``, the scripts ``report.js`` and ``errors.js``)
with autoescape on: every user-provided text (dataset names, sources) is escaped. This module
turns the results into plain cells (text, sort key, colour class); the templates lay them out.

What a reader sees first is the answer: the joint verdict of each dataset and what each
property found (docs/methods.md, "Words of the reports"); every row is worded by the property
it tested, coloured by :func:`mcref.report._words.finding_class`; the page ends with the words
(:data:`mcref.report._words.GLOSSARY`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from .. import _version
from ._render import EXCLUDES_NOTE, n_boot_text, n_mc_text, p_text
from ._words import GLOSSARY, PROPERTIES, finding_class, findings_by_property, glossary_link

__all__ = ["write_report", "write_dataset_report", "check_report_target", "MARKER", "SUMMARY_DPI"]

#: file that marks a directory as an mcref report (only such a directory is replaced)
MARKER = ".mcref-report"
#: the resolution of the benchmark page's summary figure (its text size on the page follows from it)
SUMMARY_DPI = 100


@functools.lru_cache(maxsize=1)
def _env():
    """The Jinja2 environment of the templates (autoescape on, undefined names an error)."""
    import jinja2
    import markupsafe

    env = jinja2.Environment(loader=jinja2.PackageLoader("mcref.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    # the stylesheet and the scripts go into the page as they are (files, not templates)
    for name in ("css", "errors_js", "report_js"):
        file = {"css": "report.css", "errors_js": "errors.js", "report_js": "report.js"}[name]
        env.globals[name] = markupsafe.Markup(env.loader.get_source(env, file)[0])
    env.globals["excludes_note"] = EXCLUDES_NOTE
    env.globals["words"] = [{"term": term, "sentence": sentence, "where": glossary_link(term)}
                            for term, (sentence, _) in GLOSSARY.items()]
    return env


def _render(template: str, **context: Any) -> str:
    return _env().get_template(template).render(**context)


def _rule_note(rule: str) -> str:
    """How the table's rule decides a row, in one sentence (the report's note)."""
    if rule == "conditional":
        return ("ZMS and RCE pass when the p-value of their scale test (studentized bootstrap-t; docs/methods.md, "
                "\"Scale test\") exceeds α; a statistic with a simulated reference, and every row binned on a "
                "feature x (ENCE|x, …), passes when its permutation p-value (the data's Z shuffled across rows, u and "
                "x kept) exceeds α.")
    return ("with a predefined reference (ZMS 1, RCE 0) a row passes when the reference lies in the BCa 95 % "
            "interval; with a simulated reference when the Monte Carlo p-value under the empirical D exceeds α.")


def _num(x: Any, nd: int = 4) -> tuple[str, str]:
    """(shown text, sort key) of a number."""
    if x is None:
        return "–", ""
    if isinstance(x, bool):
        return ("yes" if x else "no"), ("1" if x else "0")
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x), str(x)
    if math.isnan(v):
        return "–", ""
    if math.isinf(v):
        return ("∞" if v > 0 else "−∞"), repr(v)
    if isinstance(x, numbers.Integral):
        return str(int(x)), repr(v)
    return f"{v:.{nd}g}", repr(v)


def _float(x: Any) -> float | None:
    """A table cell as a float (None for a missing value or text)."""
    try:
        return None if x is None else float(x)
    except (TypeError, ValueError):
        return None


def _n_mc(x: Any) -> int | None:
    """A row's N_MC (None when unknown: a table stored before the column existed)."""
    v = _float(x)
    return int(v) if v is not None and math.isfinite(v) else None


def _text(x: Any) -> str | None:
    """A text cell of a stored table: None for a missing value (NaN in a column an older store lacks)."""
    return x if isinstance(x, str) and x else None


def _fclass(word: str) -> str:
    """The colour class of a word (a finding, a verdict): ``f-pass``, ``f-fail``, ``f-unreliable``,
    ``f-not-testable``."""
    return "f-" + finding_class(word).replace(" ", "-")


# ---------------------------------------------------------------------- cells and tables
def _cell(text: str, key: str | None = None, cls: str = "", **more: Any) -> dict[str, Any]:
    return {"text": text, "key": key, "cls": cls, "href": None, "mark": False, "title": None, **more}


def _txt(text: Any, cls: str = "", **more: Any) -> dict[str, Any]:
    return _cell(str(text), str(text), ("txt " + cls).strip(), **more)


def _word(word: Any) -> dict[str, Any]:
    """A finding or a verdict, coloured (``–`` for none)."""
    return _txt(word, _fclass(word)) if _text(word) else _txt("–")


def _number(x: Any, nd: int = 4, **more: Any) -> dict[str, Any]:
    shown, key = _num(x, nd)
    return _cell(shown, key, **more)


def _p(p: Any, n: int | None) -> dict[str, Any]:
    """A p-value as the command line writes it ("< 0.0001" at the Monte Carlo floor of ``n`` repeats)."""
    return _cell(p_text(_float(p), n), _num(p)[1])


def _col(name: str, head: str, txt: bool = False, term: str | None = None) -> dict[str, Any]:
    """A column: its name (``data-col``), header, alignment and, for a jargon header, the glossary's sentence."""
    return {"name": name, "head": head, "cls": "txt" if txt else "", "title": GLOSSARY[term][0] if term else None}


def _table(cols, rows, *, table_id: str | None = None, sortable: bool = True, marked: bool = False):
    return {"cols": cols, "rows": rows, "id": table_id, "sortable": sortable, "marked": marked}


def _deciding_p(r: Mapping[str, Any]) -> dict[str, Any]:
    """The p-value of the test that decided a benchmark row, at the floor of its own repeats."""
    n = _n_mc(r.get("n_test")) or _n_mc(r.get("n_mc"))
    return _p(r.get("p_test"), n)


def _results_table(result, rows: Sequence[Mapping[str, Any]], *, table_id: str | None, link: bool):
    """The rows of a benchmark, worded: the compact columns (every D's in :func:`_every_d_table`)."""
    anchors = {d.name: f"ds-{i + 1:03d}" for i, d in enumerate(result.datasets)}
    cols = [_col("dataset", "dataset", True), _col("M", "M")] if link else []
    cols += [_col("stat", "stat", True), _col("tested", "tested", True), _col("finding", "finding", True),
             _col("estimate", "estimate"), _col("low", "BCa low", term="BCa"), _col("high", "BCa high", term="BCa"),
             _col("reference", "reference"), _col("test", "test", True), _col("p_test", "p"),
             _col("verdict_paper", "paper rule", True, term="zeta_Sim")]
    dependence = "design_effect" in getattr(result.table, "columns", ())
    if dependence:  # benchmark(groups=...): the dependence
        cols += [_col("n_groups", "groups"), _col("icc_Z2", "ICC of Z²"), _col("design_effect", "design effect"),
                 _col("M_eff", "effective rows")]
    body = []
    for r in rows:
        word = _text(r.get("finding")) or r["verdict"]  # a store written before the words: the verdict
        cells = [_txt(r["dataset"], href=f"#{anchors[r['dataset']]}"), _number(r["M"])] if link else []
        high = _number(r["high"], mark=bool(r.get("excludes_estimate")))
        test = _text(r.get("test"))
        cells += [_txt(r["stat"]), _txt(_text(r.get("tested")) or "–"), _word(word), _number(r["estimate"]),
                  _number(r["low"]), high, _number(r["reference"]),
                  _txt("–" if test in (None, "none") else test), _deciding_p(r), _word(r["verdict_paper"])]
        if dependence:
            cells += [_number(r.get(c)) for c in ("n_groups", "icc_Z2", "design_effect", "M_eff")]
        body.append(cells)
    return _table(cols, body, table_id=table_id, marked=any(r.get("excludes_estimate") for r in rows))


def _every_d_table(dists: Sequence[str], rows: Sequence[Mapping[str, Any]], *, dataset: bool,
                   zeta: bool = False):
    """The simulated reference (± its Monte Carlo se), the Monte Carlo p-value and (``zeta``) ζ_Sim
    of each row under every D: the columns the compact tables leave out."""
    cols = [_col("dataset", "dataset", True)] if dataset else []
    cols.append(_col("stat", "stat", True))
    for d in dists:
        cols += [_col(f"ref_{d}", f"ref [{d}]"), _col(f"p_{d}", f"p [{d}]", term="permutation test"
                                                     if d == "permutation" else None)]
        if zeta:
            cols.append(_col(f"zeta_Sim_{d}", f"ζ_Sim [{d}]", term="zeta_Sim"))
    body = []
    for r in rows:
        cells = [_txt(r["dataset"])] if dataset else []
        cells.append(_txt(r["stat"]))
        for d in dists:
            ref, se = _float(r.get(f"ref_{d}")), _float(r.get(f"u_ref_{d}"))
            shown = _num(ref)[0] + (f" ± {se:.1g}" if ref is not None and se is not None and math.isfinite(se)
                                    and math.isfinite(ref) else "")
            cells += [_cell(shown, _num(ref)[1]), _p(r.get(f"p_{d}"), _n_mc(r.get("n_mc")))]
            if zeta:
                cells.append(_number(r.get(f"zeta_Sim_{d}"), 3))
        body.append(cells)
    return _table(cols, body)


def _property_cell(parts: list[str] | None) -> dict[str, Any]:
    """What one property's rows found (a summary cell), coloured by its first word."""
    if not parts:
        return _txt("–")
    first = parts[0].split(" (", 1)[0].replace(" up to scale", "")
    return _txt("; ".join(parts), _fclass(first))


def _joint_table(result, records: Sequence[Mapping[str, Any]]):
    """The benchmark page's first table: per dataset, its joint verdict, its p-value and what each
    property found."""
    by_set: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        by_set.setdefault(r["dataset"], []).append(r)
    found = {name: findings_by_property([(r["stat"], _text(r.get("tested")) or "", _text(r.get("finding")) or "",
                                          _text(r.get("test"))) for r in rows]) for name, rows in by_set.items()}
    props = [p for p in PROPERTIES if any(p in f for f in found.values())]
    cols = [_col("dataset", "dataset", True), _col("joint", "joint verdict", True, term="joint verdict"),
            _col("joint_p", "p")]
    cols += [_col(p, p, True, term={"calibration": "calibrated", "consistency": "consistent",
                                    "adaptivity": "adaptive"}[p]) for p in props]
    body = []
    for i, d in enumerate(result.datasets):
        rows = by_set.get(d.name, [])
        first = rows[0] if rows else {}
        verdict = _text(first.get("joint_verdict"))
        cells = [_txt(d.name, href=f"#ds-{i + 1:03d}"),
                 _word(verdict) if verdict else _txt("not stored" if rows and "joint_verdict" not in first
                                                     else "none"),
                 _p(first.get("joint_p"), _n_mc(first.get("n_mc")))]
        cells += [_property_cell(found.get(d.name, {}).get(p)) for p in props]
        body.append(cells)
    return _table(cols, body, table_id="joint-verdicts")


def _matrix(result):
    """Findings, datasets × statistics, with estimates."""
    t = result.table
    cell = {(r["dataset"], r["stat"]): r for r in t.to_dict(orient="records")}
    cols = [_col("dataset", "dataset", True)] + [_col(s, s) for s in result.stats]
    body = []
    for i, d in enumerate(result.datasets):
        cells = [_txt(d.name, href=f"#ds-{i + 1:03d}")]
        for s in result.stats:
            r = cell.get((d.name, s))
            if r is None:
                cells.append(_cell("–"))
                continue
            word = _text(r.get("finding")) or r["verdict"]
            cells.append(_cell(f"{_num(r['estimate'])[0]} {word}", _num(r["estimate"])[1], f"{_fclass(word)} wrap",
                               title=word))
        body.append(cells)
    return _table(cols, body, table_id="matrix", sortable=False)


def _headline(text: str | None, verdict: str | None) -> dict[str, str]:
    return {"text": text or "joint verdict: not stored (a store written before the joint column)",
            "cls": finding_class(verdict) if verdict else "none"}


def check_report_target(target: str | os.PathLike, what: str = "`directory`") -> None:
    """Refuse a report directory that would not be replaced: an existing file, or a directory
    that is neither empty nor an earlier mcref report (``what`` names the argument or option)."""
    target = Path(target)
    if target.exists():
        if not target.is_dir():
            raise ValueError(f"{what}: {str(target)!r} exists and is not a directory")
        if any(target.iterdir()) and not (target / MARKER).is_file():
            raise ValueError(f"{what}: {str(target)!r} exists, is not empty and is not an mcref report; "
                             "choose a new directory (an earlier mcref report would be replaced)")


@contextlib.contextmanager
def _atomic_directory(directory: str | os.PathLike) -> Iterator[Path]:
    """A temporary directory next to ``directory`` (marked as an mcref report) to write a report
    into; on success it replaces ``directory`` (only an mcref report or an empty directory is
    replaced), on any error it is removed: an interrupted run leaves the old report or none."""
    target = Path(directory)
    check_report_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 is for the temporary name only
        (tmp / MARKER).write_text("mcref report\n", encoding="utf-8")
        yield tmp
        check_report_target(target)  # again: it may have appeared meanwhile
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.replace(target, old / "report")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_dataset_report(table, E, u, x, directory: str | os.PathLike, *, seed=None) -> str:
    """The report of one dataset (``mcref report --html``): ``index.html`` with its joint verdict
    first (wrapped text), its validation table (each row's finding coloured as in the benchmark
    report), the notes, every D's references in a details element, the words, and ``report.png``
    (:func:`mcref.plots.plot_report`); written atomically. Returns the path of ``index.html``."""
    import matplotlib.pyplot as plt

    from .plots import plot_report

    with _atomic_directory(directory) as tmp:
        fig = plot_report(E, u, x, name=table.name, seed=seed, path=tmp / "report.png")
        plt.close(fig)
        cols = [_col("stat", "stat", True), _col("tested", "tested", True), _col("finding", "finding", True),
                _col("test", "test", True), _col("estimate", "estimate"), _col("low", "BCa low", term="BCa"),
                _col("high", "BCa high", term="BCa"), _col("reference", "reference"), _col("p", "p"),
                _col("paper", "paper rule", True, term="zeta_Sim")]
        body = []
        for r in table.rows:
            p = r.p_test if r.test else r.p_sim.get(table.decisive_dist)  # the p-value of the deciding test
            n = r.n_test if r.test and r.n_test else table.n_mc
            body.append([_txt(r.name), _txt(r.tested), _word(r.finding),
                         _txt("–" if r.test in ("", "none") else r.test),  # "–": a row the data cannot test
                         _number(r.estimate), _number(r.low), _number(r.high, mark=r.excludes_estimate),
                         _number(r.reference), _p(p, n), _word(r.verdict_paper) if r.verdict_paper else _txt("–")])
        records = [{**rec, "n_mc": table.n_mc} for rec in table.records()]
        sh = table.shape
        notes = [_rule_note(table.rule)]
        if table.joint is not None:
            notes.append(table.joint.line(table.n_mc).replace("joint verdict: ", "joint verdict, how: ", 1))
        notes.append(f"shape screen (β_GM, docs/methods.md, \"Shape screen\"): u² {sh.beta_u2:.3f} (threshold "
                     f"{sh.threshold_u2:g}), E² {sh.beta_E2:.3f} (threshold {sh.threshold_E2:g}), Z² {sh.beta_Z2:.3f} "
                     f"(threshold {sh.threshold_Z2:g}); above its threshold the statistics that average it are "
                     "unreliable.")
        notes += list(table.notes)
        bins = f"{table.n_bins} bins of u, " if table.binned else ""
        page = _render(
            "dataset.html.j2", name=table.name or "data", head=_headline(table.headline(),
                                                                        table.joint.verdict if table.joint else None),
            meta=f"M = {table.M}, {bins}B = {table.n_boot} bootstrap replicates, N_MC = {table.n_mc} Monte Carlo "
                 f"repeats, D = {', '.join(table.dists)}, rule = {table.rule}, α = {table.alpha:g}, seed = {table.seed}; "
                 f"mcref {_version.VERSION}.",
            rows=_table(cols, body, marked=any(r.excludes_estimate for r in table.rows)), notes=notes,
            every_d=_every_d_table(table.dists, records, dataset=False, zeta=True))
        (tmp / "index.html").write_text(page, encoding="utf-8")
    return str(Path(directory) / "index.html")


def _section(result, i: int, ds, rows: list[Mapping[str, Any]], tmp: Path, diagnostics: bool) -> dict[str, Any]:
    """One dataset's section of the benchmark page (its diagnostics figure written into ``tmp``)."""
    import matplotlib.pyplot as plt

    from .plots import plot_report

    img = no_img = None
    if diagnostics and ds.M >= 100:
        img = f"diagnostics/{i + 1:03d}.png"
        plt.close(plot_report(ds.E, ds.u, ds.x, name=ds.name, seed=result.seed, path=tmp / img))
    elif diagnostics:
        no_img = f"No diagnostics figure: M = {ds.M} < 100 points."
    sh = rows[0] if rows else {}
    meta = [f"M = {ds.M}"]
    if rows:
        meta.append(f"shape screen β_GM: u² {sh['beta_u2']:.3f}, E² {sh['beta_E2']:.3f}, Z² {sh['beta_Z2']:.3f}")
        meta.append(f"validate seed = {sh['seed']}; sha256 = {str(sh['sha256'])[:16]}…")
    if ds.source:
        meta.append(f"source: {ds.source}")
    return {"anchor": f"ds-{i + 1:03d}", "number": i + 1, "name": ds.name, "meta": "; ".join(meta),
            "headline": _headline(_text(sh.get("headline")), _text(sh.get("joint_verdict"))),
            "table": _results_table(result, rows, table_id=None, link=False), "img": img, "no_img": no_img}


def write_report(result, directory: str | os.PathLike, *, diagnostics: bool = True) -> str:
    """Write the report of ``result`` to ``directory`` (see the module docstring): first the joint
    verdict of every dataset and what each property found, then the findings, the summary figure
    (at :data:`SUMMARY_DPI`; its dpi and smallest font size are data attributes of its image,
    from which a browser test computes the text's size on the page), all the rows, and one
    section per dataset that starts with its joint verdict; return the path of its
    ``index.html``."""
    import matplotlib.pyplot as plt

    from ._forest import min_font_pt
    from .plots import plot_benchmark

    with _atomic_directory(directory) as tmp:
        fig = plot_benchmark(result)[0].figure
        smallest = min_font_pt(fig)
        fig.savefig(tmp / "summary.png", dpi=SUMMARY_DPI)
        plt.close(fig)
        records = result.table.to_dict(orient="records")
        o = result.options
        if diagnostics:
            (tmp / "diagnostics").mkdir()
        sections = [_section(result, i, ds, [r for r in records if r["dataset"] == ds.name], tmp, diagnostics)
                    for i, ds in enumerate(result.datasets)]
        bins = o["n_bins"] if o["n_bins"] is not None else "default"
        page = _render(
            "benchmark.html.j2", n_sets=len(result.datasets), n_stats=len(result.stats),
            joint=_joint_table(result, records), matrix=_matrix(result),
            meta=f"B = {n_boot_text(o['n_boot'])} bootstrap replicates, N_MC = {n_mc_text(o['n_mc'])} Monte Carlo "
                 f"repeats, D = {', '.join(result.dists)}, {bins} bins, rule = {o['rule']}, α = {o['alpha']:g}, "
                 f"seed = {result.seed}; mcref {_version.VERSION}.",
            rule_note=_rule_note(o["rule"]), figure={"dpi": SUMMARY_DPI, "min_font_pt": f"{smallest:g}"},
            results=_results_table(result, records, table_id="results", link=True),
            every_d=_every_d_table(result.dists, records, dataset=True), sections=sections)
        (tmp / "index.html").write_text(page, encoding="utf-8")
    return str(Path(directory) / "index.html")
