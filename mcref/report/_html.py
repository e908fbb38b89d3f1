"""Static HTML reports: of a benchmark run (:meth:`mcref.BenchmarkResult.to_html`) and of one
dataset (``mcref report --html``): the one home of mcref's HTML.

One directory that opens offline: ``index.html`` (inline CSS and JavaScript, no network),
``summary.png`` (:func:`mcref.plots.plot_benchmark`) and ``diagnostics/NNN.png`` (one
:func:`mcref.plots.plot_report` per dataset). Every user-provided text (dataset names,
sources) is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import contextlib
import html
import math
import numbers
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

from .. import _version
from ._render import EXCLUDES_NOTE, n_boot_text, n_mc_text, p_text

__all__ = ["write_report", "write_dataset_report", "check_report_target", "MARKER"]

#: file that marks a directory as an mcref report (only such a directory is replaced)
MARKER = ".mcref-report"

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em 2em;color:#222;max-width:1500px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0}
th,td{padding:3px 8px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{background:#f2f2f2;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th:hover{background:#e2e2e2}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td.txt,th.txt{text-align:left}
.v-valid{background:#d1e5f0;color:#053061}.v-invalid{background:#f4c6c1;color:#67001f}
.v-unreliable{background:#fde0b6;color:#6b3a00}.v-not-testable{background:#e0e0e0;color:#333}
img{max-width:100%;height:auto;border:1px solid #eee}
.meta{color:#555;font-size:13px}.note{color:#555;font-size:12px;max-width:70em}
.scroll{overflow-x:auto;max-height:80vh;overflow-y:auto}
.wide{overflow-x:auto;max-width:100%}
#js-errors{color:#b2182b}
#js-errors:empty,#img-status:empty,#selftest:empty{display:none}
"""

# window.onerror first: errors of the page are written into the DOM (read by the tests with
# --dump-dom); images record whether they loaded; "#selftest" sorts the table and checks it.
_HEAD_JS = """
window.mcrefErrors=[];
window.onerror=function(msg,src,line){window.mcrefErrors.push(msg+' ('+line+')');
 var e=document.getElementById('js-errors');if(e){e.textContent=window.mcrefErrors.join('\\n');}};
"""

_JS = r"""
(function(){
function key(td){var v=td.getAttribute('data-v');if(v===null){v=td.textContent;}
 if(v===''){return null;}var x=Number(v);return isNaN(x)?v.toLowerCase():x;}
function cmp(a,b){if(a===null&&b===null){return 0;}if(a===null){return 1;}if(b===null){return -1;}
 if(typeof a===typeof b){return a<b?-1:(a>b?1:0);}return typeof a==='number'?-1:1;}
function sortBy(table,col,dir){var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
 rows.forEach(function(r,i){r._i=i;});
 rows.sort(function(r1,r2){var a=key(r1.cells[col]),b=key(r2.cells[col]);
  var c=(a===null||b===null)?cmp(a,b):dir*cmp(a,b);return c!==0?c:r1._i-r2._i;});
 rows.forEach(function(r){body.appendChild(r);});
 var ths=table.tHead.rows[0].cells;for(var j=0;j<ths.length;j++){ths[j].removeAttribute('aria-sort');}
 ths[col].setAttribute('aria-sort',dir>0?'ascending':'descending');}
function init(table){var ths=table.tHead.rows[0].cells;
 for(var j=0;j<ths.length;j++){(function(j){ths[j].addEventListener('click',function(){
  var cur=ths[j].getAttribute('aria-sort');sortBy(table,j,cur==='ascending'?-1:1);});})(j);}}
var tables=document.querySelectorAll('table.sortable');for(var i=0;i<tables.length;i++){init(tables[i]);}
function column(table,name){var ths=table.tHead.rows[0].cells;
 for(var j=0;j<ths.length;j++){if(ths[j].getAttribute('data-col')===name){return j;}}return -1;}
function values(table,col){return Array.prototype.map.call(table.tBodies[0].rows,function(r){return key(r.cells[col]);});}
function selftest(){var t=document.getElementById('results');var out=[];var c=column(t,'estimate');
 var h=t.tHead.rows[0].cells[c];h.click();var v=values(t,c).filter(function(x){return x!==null;});
 for(var i=1;i<v.length;i++){if(v[i-1]>v[i]){out.push('ascending sort broken at row '+i);break;}}
 h.click();v=values(t,c).filter(function(x){return x!==null;});
 for(i=1;i<v.length;i++){if(v[i-1]<v[i]){out.push('descending sort broken at row '+i);break;}}
 var d=column(t,'dataset');t.tHead.rows[0].cells[d].click();var s=values(t,d);
 for(i=1;i<s.length;i++){if(cmp(s[i-1],s[i])>0){out.push('text sort broken at row '+i);break;}}
 document.getElementById('selftest').textContent='selftest: '+(out.length?out.join('; '):'ok')+
  ' ('+t.tBodies[0].rows.length+' rows)';}
window.addEventListener('load',function(){
 var imgs=document.images;var ok=0;var bad=[];
 for(var i=0;i<imgs.length;i++){var im=imgs[i];im.setAttribute('data-natural-width',String(im.naturalWidth));
  if(im.complete&&im.naturalWidth>0){ok++;}else{bad.push(im.getAttribute('src'));}}
 if(location.hash==='#selftest'){
  document.getElementById('img-status').textContent='images loaded: '+ok+'/'+imgs.length+
   (bad.length?' (missing: '+bad.join(', ')+')':'');
  selftest();}});
})();
"""


def _rule_note(rule: str) -> str:
    """How the table's rule decides a row, in one sentence (the report's note)."""
    if rule == "conditional":
        return ("ZMS and RCE valid when the p-value of their scale test (studentized bootstrap-t; docs/methods.md, "
                "\"Scale test\") exceeds α; a statistic with a simulated reference, and every row binned on a "
                "feature x (ENCE|x, …), valid when its permutation p-value (the data's Z shuffled across rows, u and "
                "x kept) exceeds α.")
    return ("with a predefined reference (ZMS 1, RCE 0) valid when the reference lies in the BCa 95 % interval; "
            "with a simulated reference valid when the Monte Carlo p-value under the empirical D exceeds α.")


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _num(x: Any, nd: int = 4) -> tuple[str, str]:
    """(shown text, sort key) of a number."""
    if x is None:
        return "–", ""
    if isinstance(x, bool):
        return ("yes" if x else "no"), ("1" if x else "0")
    try:
        v = float(x)
    except (TypeError, ValueError):
        return _e(x), _e(x)
    if math.isnan(v):
        return "–", ""
    if math.isinf(v):
        return ("∞" if v > 0 else "−∞"), repr(v)
    if isinstance(x, numbers.Integral):
        return str(int(x)), repr(v)
    return f"{v:.{nd}g}", repr(v)


#: the "!" after a BCa limit whose interval excludes its estimate (the text table's mark), with its legend
_MARK = "<span class='mark' title='the BCa interval excludes its own estimate'>!</span>"


def _excludes_legend(any_marked: bool) -> str:
    """The legend line of the "!" mark under a table, when a row carries it."""
    return f"<p class='note'>{_e(EXCLUDES_NOTE)}; docs/methods.md, \"Bootstrap\".</p>" if any_marked else ""


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


def _vclass(verdict: str) -> str:
    return "v-" + str(verdict).replace(" ", "-")


def _columns(result) -> list[tuple[str, str, str]]:
    """(table column, header, kind) of the results table."""
    cols = [("dataset", "dataset", "txt"), ("M", "M", "num"), ("stat", "stat", "txt"),
            ("verdict", "verdict", "verdict"), ("estimate", "estimate", "num"), ("low", "BCa low", "num"),
            ("high", "BCa high", "high"), ("reference", "reference", "num")]
    cols += [(f"ref_{d}", f"ref [{d}]", "num") for d in result.dists]
    cols += [(f"p_{d}", f"p [{d}]", "p") for d in result.dists]
    cols += [("shape_flag", "shape flag", "num"), ("verdict_paper", "paper rule", "verdict")]
    if "design_effect" in getattr(result.table, "columns", ()):  # benchmark(groups=...): the dependence
        cols += [("n_groups", "groups", "num"), ("icc_Z2", "ICC of Z²", "num"),
                 ("design_effect", "design effect", "num"), ("M_eff", "effective rows", "num")]
    return cols


def _results_table(result, rows, *, table_id: str | None, link: bool) -> str:
    cols = _columns(result)
    if not link:
        cols = [c for c in cols if c[0] not in ("dataset", "M")]
    anchors = {d.name: f"ds-{i + 1:03d}" for i, d in enumerate(result.datasets)}
    head = "".join(f"<th data-col='{_e(c)}' class='{'txt' if k == 'txt' else ''}'>{_e(h)}</th>" for c, h, k in cols)
    body = []
    for r in rows:
        tds = []
        for c, _h, kind in cols:
            v = r[c]
            if kind == "txt":
                text = _e(v)
                if link and c == "dataset":
                    text = f"<a href='#{anchors[v]}'>{text}</a>"
                tds.append(f"<td class='txt' data-v='{_e(v)}'>{text}</td>")
            elif kind == "verdict":
                tds.append(f"<td class='txt {_vclass(v)}' data-v='{_e(v)}'>{_e(v)}</td>")
            elif kind == "p":  # as the command line writes it: "< 0.0001" at the Monte Carlo floor
                n = _n_mc(r.get("n_test")) if c in ("p_test", "p_permutation") and _n_mc(r.get("n_test")) else \
                    _n_mc(r.get("n_mc"))  # a sequential test's p: the floor of its own repeats
                tds.append(f"<td data-v='{_num(v)[1]}'>{_e(p_text(_float(v), n))}</td>")
            else:
                shown, key = _num(v)
                if kind == "high" and r.get("excludes_estimate"):
                    shown += _MARK
                tds.append(f"<td data-v='{key}'>{shown}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    idattr = f" id='{table_id}'" if table_id else ""
    return (f"<table class='sortable'{idattr}><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body)
            + "\n</tbody></table>" + _excludes_legend(any(r.get("excludes_estimate") for r in rows)))


def _matrix(result) -> str:
    """Verdicts, datasets × statistics, with estimates."""
    t = result.table
    cell = {(r["dataset"], r["stat"]): r for r in t.to_dict(orient="records")}
    head = "<th class='txt'>dataset</th>" + "".join(f"<th>{_e(s)}</th>" for s in result.stats)
    lines = []
    for i, d in enumerate(result.datasets):
        tds = [f"<td class='txt'><a href='#ds-{i + 1:03d}'>{_e(d.name)}</a></td>"]
        for s in result.stats:
            r = cell.get((d.name, s))
            if r is None:
                tds.append("<td>–</td>")
            else:
                tds.append(f"<td class='{_vclass(r['verdict'])}' title='{_e(r['verdict'])}'>"
                           f"{_num(r['estimate'])[0]} {_e(r['verdict'])}</td>")
        lines.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table id='matrix'><thead><tr>{head}</tr></thead><tbody>" + "".join(lines) + "</tbody></table>"


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
    """The report of one dataset (``mcref report --html``): ``index.html`` with its validation
    table (verdicts coloured as in the benchmark report, and the table's legend) and
    ``report.png`` (:func:`mcref.plots.plot_report`); written atomically. Returns the path of
    ``index.html``."""
    import matplotlib.pyplot as plt

    from .plots import plot_report

    with _atomic_directory(directory) as tmp:
        fig = plot_report(E, u, x, name=table.name, seed=seed, path=tmp / "report.png")
        plt.close(fig)
        rows = []
        for r in table.rows:
            p = r.p_test if r.test else r.p_sim.get(table.decisive_dist)  # the p-value of the deciding test
            test = "–" if r.test in ("", "none") else _e(r.test)  # a row the data cannot test
            cells = [f"<td class='txt'>{_e(r.name)}</td>",
                     f"<td class='txt {_vclass(r.verdict)}'>{_e(r.verdict)}</td>", f"<td class='txt'>{test}</td>"]
            for v in (r.estimate, r.low, r.high, r.reference):
                shown, key = _num(v)
                cells.append(f"<td data-v='{key}'>{shown}{_MARK if v is r.high and r.excludes_estimate else ''}</td>")
            n = r.n_test if r.test and r.n_test else table.n_mc
            cells.append(f"<td data-v='{_num(p)[1]}'>{_e(p_text(p, n))}</td>")
            rows.append("<tr>" + "".join(cells) + "</tr>")
        head = "".join(f"<th class='{c}'>{h}</th>" for h, c in (("stat", "txt"), ("verdict", "txt"), ("test", "txt"),
                                                               ("estimate", ""),
                                                               ("BCa low", ""), ("BCa high", ""),
                                                               ("reference", ""), ("p", "")))
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcref report: {_e(table.name)}</title>
<style>{_CSS}</style>
</head><body>
<h1>mcref report: {_e(table.name)}</h1>
<p class="meta">M = {table.M}, seed = {_e(table.seed)}; mcref {_e(_version.VERSION)}.</p>
<h2>Validation</h2>
<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>
{_excludes_legend(any(r.excludes_estimate for r in table.rows))}
<div class="scroll"><pre>{_e(table.explained())}</pre></div>
<h2>Diagnostics</h2>
<img src='report.png' alt='diagnostics'>
</body></html>
"""
        (tmp / "index.html").write_text(page, encoding="utf-8")
    return str(Path(directory) / "index.html")


def write_report(result, directory: str | os.PathLike, *, diagnostics: bool = True) -> str:
    """Write the report of ``result`` to ``directory`` (see the module docstring); return the
    path of its ``index.html``."""
    import matplotlib.pyplot as plt

    from .plots import plot_benchmark, plot_report

    with _atomic_directory(directory) as tmp:
        axes = plot_benchmark(result)
        fig = axes[0].figure
        fig.savefig(tmp / "summary.png", dpi=90)
        plt.close(fig)
        records = result.table.to_dict(orient="records")
        o = result.options
        sections = []
        if diagnostics:
            (tmp / "diagnostics").mkdir()
        for i, ds in enumerate(result.datasets):
            anchor = f"ds-{i + 1:03d}"
            rows = [r for r in records if r["dataset"] == ds.name]
            img = ""
            if diagnostics and ds.M >= 100:
                rel = f"diagnostics/{i + 1:03d}.png"
                f = plot_report(ds.E, ds.u, ds.x, name=ds.name, seed=result.seed, path=tmp / rel)
                plt.close(f)
                img = f"<img src='{rel}' alt='diagnostics of {_e(ds.name)}' loading='eager'>"
            elif diagnostics:
                img = f"<p class='note'>No diagnostics figure: M = {ds.M} &lt; 100 points.</p>"
            sh = rows[0] if rows else {}
            shape = (f"shape screen β_GM: u² {sh['beta_u2']:.3f}, E² {sh['beta_E2']:.3f}, Z² {sh['beta_Z2']:.3f}"
                     if rows else "")
            src = f"; source: {_e(ds.source)}" if ds.source else ""
            sha = rows[0]["sha256"] if rows else ""
            seed = rows[0]["seed"] if rows else ""
            sections.append(
                f"<section id='{anchor}'><h2>{i + 1}. {_e(ds.name)}</h2>"
                f"<p class='meta'>M = {ds.M}; {shape}; validate seed = {seed}; sha256 = {_e(sha)[:16]}…{src}</p>"
                + f"<div class='wide'>{_results_table(result, rows, table_id=None, link=False)}</div>" + img
                + "</section>")
        dists = ", ".join(result.dists)
        page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcref benchmark: {len(result.datasets)} datasets</title>
<style>{_CSS}</style>
<script>{_HEAD_JS}</script>
</head><body>
<h1>mcref benchmark: {len(result.datasets)} datasets × {len(result.stats)} statistics</h1>
<p class="meta">B = {n_boot_text(o['n_boot'])} bootstrap replicates, N_MC = {n_mc_text(o['n_mc'])} Monte Carlo repeats, D = {_e(dists)},
{_e(o['n_bins'] if o['n_bins'] is not None else 'default')} bins, rule = {_e(o['rule'])}, α = {o['alpha']:g}, seed = {result.seed}; mcref {_e(_version.VERSION)}.</p>
<p class="note">Verdicts (docs/methods.md, "Verdicts"): <b>unreliable</b> when the shape screen flags the statistic;
{_e(_rule_note(o['rule']))} “paper rule”: the published ζ_Sim rule, for comparison. Click a column header to
sort.</p>
<pre id="js-errors"></pre><p id="img-status" class="meta"></p><p id="selftest" class="meta"></p>
<h2>Verdicts</h2>
<div class="wide">{_matrix(result)}</div>
<h2>Summary figure</h2>
<img src="summary.png" alt="estimates with BCa intervals against references, per dataset and statistic">
<h2>All results</h2>
<div class="scroll">{_results_table(result, records, table_id="results", link=True)}</div>
{''.join(sections)}
<script>{_JS}</script>
</body></html>
"""
        (tmp / "index.html").write_text(page, encoding="utf-8")
    return str(Path(directory) / "index.html")
