"""mcref.benchmark: sources, wiring to validate, store/resume/extension, determinism, CLI, HTML report."""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

from mcref.report._render import p_text
import pandas as pd
import pytest

import mcref
from mcref import FewReplicatesWarning, benchmark
from mcref.datasets import Dataset
from mcref.studies._runner import cell_seed

M = 300
SMALL = dict(n_boot=200, n_mc=200, n_bins=5, seed=7, progress=False)
STATS = ("ZMS", "CC", "ENCE")

pytestmark = pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")


def _set(seed: int, scale: float = 1.0, m: int = M) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    u = rng.lognormal(-1.0, 0.4, m)
    return scale * u * rng.normal(size=m), u


def _write_csv(path: Path, E: np.ndarray, u: np.ndarray, cols=("E", "u")) -> Path:
    lines = [",".join(cols)] + [f"{float(e)!r},{float(s)!r}" for e, s in zip(E, u)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture()
def files(tmp_path):
    """a directory with two CSV files (a.csv calibrated, b.csv miscalibrated) and a non-CSV file."""
    d = tmp_path / "runs"
    d.mkdir()
    _write_csv(d / "b.csv", *_set(2, scale=1.6))
    _write_csv(d / "a.csv", *_set(1))
    (d / "notes.txt.bak").write_text("not data")
    return d


# ------------------------------------------------------------------- sources
def test_every_kind_of_source_in_one_call(files):
    E3, u3 = _set(3)
    E4, u4 = _set(4)
    other = files.parent / "c.csv"
    _write_csv(other, *_set(5))
    res = benchmark([str(files), "Diffusion_RF", Dataset("ds", E3, u3), ("tup", E4, u4),
                     str(files.parent / "c*.csv")], stats=["ZMS"], n_jobs=1, **SMALL)
    t = res.table
    assert t["dataset"].tolist() == ["a", "b", "Diffusion_RF", "ds", "tup", "c"]  # directory sorted
    assert t["M"].tolist() == [M, M, 2040, M, M, M]
    assert [d.name for d in res.datasets] == t["dataset"].tolist()
    # the file's values are the written ones, bit for bit (repr round-trips)
    a = res.datasets[0]
    np.testing.assert_array_equal(a.E, _set(1)[0])
    np.testing.assert_array_equal(res.datasets[2].u, mcref.datasets.load("Diffusion_RF").u)


def test_all_and_single_sources(files):
    from mcref.workflows._benchmark import _resolve_sources

    opts = {}
    assert [d.name for d, _ in _resolve_sources("all", opts)] == mcref.datasets.names()
    assert [d.name for d, _ in _resolve_sources("qm9_e", opts)] == ["QM9_E"]
    assert [d.name for d, _ in _resolve_sources(files / "a.csv", opts)] == ["a"]
    E, u = _set(1)
    assert [d.name for d, _ in _resolve_sources(("one", E, u), opts)] == ["one"]
    assert [d.name for d, _ in _resolve_sources([("one", E, u)], opts)] == ["one"]


def test_csv_column_names(tmp_path):
    E, u = _set(1)
    p = _write_csv(tmp_path / "cols.csv", E, u, cols=("err", "sigma"))
    with pytest.raises(ValueError, match=r"`sources`: 'cols.csv'|`sources`: '.*cols.csv': .*column"):
        benchmark(p, stats=["ZMS"], **SMALL)
    res = benchmark(p, stats=["ZMS"], E="err", u="sigma", n_jobs=1, **SMALL)
    np.testing.assert_array_equal(res.datasets[0].u, u)


@pytest.mark.parametrize("make, match", [
    (lambda d: [str(d / "missing.csv")], r"`sources`: '.*missing.csv' is not a file, a directory, a glob or a "
                                         r"built-in dataset \('all' or one of Diffusion_RF"),
    (lambda d: [str(d / "*.nothing")], r"`sources`: the glob '.*\*.nothing' matches no file"),
    (lambda d: [str(d / "empty")], r"`sources`: directory '.*empty' holds no \*.csv file"),
    (lambda d: [("x", [1.0, 2.0])], r"`sources`: a tuple must be \(name, E, u\) with a string name, got a 2-tuple"),
    (lambda d: [("neg", [0.1, 0.2, 0.3], [1.0, -1.0, 1.0])], r"`sources`: tuple 'neg': `u` must be > 0"),
    (lambda d: [42], r"`sources`: each source must be a file path, a glob, a directory, .* got int"),
    (lambda d: [], r"`sources` is empty"),
    (lambda d: [str(d / "runs" / "a.csv"), ("a", *_set(9))],
     r"`sources`: two datasets are named 'a': '.*a.csv' and tuple 'a'"),
    (lambda d: [str(d / "bad.csv")], r"`sources`: '.*bad.csv': bad.csv: .*u"),
    (lambda d: [("tiny", *_set(1, m=40))], r"`sources`: tuple 'tiny': `n_bins`=5 leaves fewer than `min_count`=30"),
])
def test_bad_sources_are_named(files, make, match):
    d = files.parent
    (d / "empty").mkdir()
    (d / "bad.csv").write_text("E,u\n0.1,1\n0.2,-1\n0.3,1\n")
    with pytest.raises(ValueError, match=match):
        benchmark(make(d), stats=STATS, **SMALL)


@pytest.mark.parametrize("kw, match", [
    (dict(n_boot=50), r"`n_boot`=50: too few for a verdict; validate refuses fewer than 100"),
    (dict(bogus=1), r"`bogus` is not an option of benchmark; options of validate: dists, n_bins"),
    (dict(stats=["ZMS", "nope"]), r"`stats`: unknown statistic 'nope'"),
    (dict(stats=["ZMS", "zms"]), r"`stats` names a statistic twice"),
    (dict(dists=[]), r"`dists` must be a non-empty list of distribution names"),
    (dict(rule="vote"), r"`rule`"),
    (dict(backend="mpi"), r"`backend` must be one of"),
])
def test_bad_options(kw, match):
    args = {**SMALL, "stats": STATS, **kw}
    with pytest.raises(ValueError, match=match):
        benchmark(("a", *_set(1)), **args)


def test_few_replicates_warned_once_in_the_caller():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        benchmark([("a", *_set(1)), ("b", *_set(2))], stats=["ZMS"], n_jobs=1, **SMALL)
    few = [w for w in rec if issubclass(w.category, FewReplicatesWarning)]
    assert len(few) == 1 and few[0].filename == __file__


# ------------------------------------------------------------------- wiring
def _expected_seed(seed: int, name: str, E, u) -> int:
    """The cell's validate seed, derived here from the documented recipe."""
    sha = hashlib.sha256(np.asarray(E, "<f8").tobytes() + np.asarray(u, "<f8").tobytes()).hexdigest()
    ss = cell_seed(seed, "benchmark", {"dataset": name, "sha256": sha})
    return int(ss.generate_state(1, np.uint64)[0]) >> 1


def test_table_is_validate_with_the_cells_seed():
    sets = [("cal", *_set(1)), ("mis", *_set(2, scale=1.6))]
    res = benchmark(sets, stats=STATS, n_jobs=1, **SMALL)
    t = res.table.set_index(["dataset", "stat"])
    assert len(t) == len(sets) * len(STATS)
    for name, E, u in sets:
        seed = _expected_seed(7, name, E, u)
        tab = mcref.validate(E, u, stats=STATS, n_boot=200, n_mc=200, n_bins=5, seed=seed, name=name)
        for r in tab.rows:
            row = t.loc[(name, r.name)]
            assert row["seed"] == seed and row["M"] == len(E)
            assert row["sha256"] == hashlib.sha256(E.tobytes() + u.tobytes()).hexdigest()
            for col, want in (("estimate", r.estimate), ("bias", r.bias), ("low", r.low), ("high", r.high)):
                assert row[col] == want, col
            if r.reference is None:
                assert np.isnan(row["reference"]) and np.isnan(row["zeta_BS"])
            else:
                assert row["reference"] == r.reference and row["zeta_BS"] == r.zeta_bs
            for d, ref in r.sim.items():
                assert (row[f"ref_{d}"], row[f"u_ref_{d}"], row[f"ref_low_{d}"], row[f"ref_high_{d}"]) == \
                    (ref.mean, ref.se, ref.low, ref.high)
                assert row[f"p_{d}"] == r.p_sim[d] and row[f"zeta_Sim_{d}"] == r.zeta_sim[d]
            assert (row["verdict"], row["verdict_paper"], row["shape_flag"], row["D_sensitive"], row["test"]) == \
                (r.verdict, r.verdict_paper, r.shape_flag, r.d_sensitive, r.test)
            assert (np.isnan(row["p_test"]) and r.p_test is None) or row["p_test"] == r.p_test
            assert row["beta_u2"] == tab.shape.beta_u2 and row["beta_Z2"] == tab.shape.beta_Z2
    assert set(res.dists) == {"normal", "t(6)", "empirical", "permutation"}  # validate's default D
    # a miscalibrated set (errors 1.6 x u) is found: ZMS about 2.6, invalid
    assert t.loc[("mis", "ZMS"), "verdict"] == "invalid" and t.loc[("mis", "ZMS"), "estimate"] > 2


def test_options_reach_validate():
    E, u = _set(1)
    res = benchmark(("a", E, u), stats=["ENCE"], dists=["normal"], rule="paper", n_jobs=1, **SMALL)
    tab = mcref.validate(E, u, stats=["ENCE"], dists=["normal"], rule="paper", n_boot=200, n_mc=200, n_bins=5,
                         seed=_expected_seed(7, "a", E, u))
    assert res.dists == ("normal",)
    assert res.table["estimate"].iloc[0] == tab["ENCE"].estimate
    assert res.table["verdict"].iloc[0] == tab["ENCE"].verdict
    assert res.options["rule"] == "paper" and res.options["n_bins"] == 5


def test_n_jobs_and_order_do_not_change_the_table():
    sets = [("a", *_set(1)), ("b", *_set(2, 1.3)), ("c", *_set(3))]
    one = benchmark(sets, stats=STATS, n_jobs=1, **SMALL).table
    two = benchmark(sets, stats=STATS, n_jobs=2, backend="loky", **SMALL).table
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    rev = benchmark(sets[::-1], stats=STATS, n_jobs=2, backend="threading", **SMALL).table
    rev = rev.set_index(["dataset", "stat"]).loc[one.set_index(["dataset", "stat"]).index].reset_index()[one.columns]
    pd.testing.assert_frame_equal(one, rev, check_exact=True)


# ------------------------------------------------------------------- store
def _n_cells(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    finally:
        con.close()


def test_resume_after_an_interruption(tmp_path, monkeypatch):
    import mcref.workflows._benchmark as bm

    sets = [("a", *_set(1)), ("b", *_set(2)), ("c", *_set(3))]
    fresh = benchmark(sets, stats=STATS, n_jobs=1, **SMALL).table
    store = tmp_path / "run.sqlite"
    real = bm.validate
    calls = []

    def interrupted(E, u, **kw):
        calls.append(kw["name"])
        if kw["name"] == "b":
            raise KeyboardInterrupt
        return real(E, u, **kw)

    monkeypatch.setattr(bm, "validate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        benchmark(sets, stats=STATS, n_jobs=1, store=store, **SMALL)
    assert calls == ["a", "b"] and _n_cells(store) == 1
    calls.clear()
    monkeypatch.setattr(bm, "validate", lambda E, u, **kw: calls.append(kw["name"]) or real(E, u, **kw))
    res = benchmark(sets, stats=STATS, n_jobs=1, store=store, **SMALL)
    assert calls == ["b", "c"]  # a is read back, not recomputed
    assert (res.run.n_loaded, res.run.n_computed) == (1, 2)
    pd.testing.assert_frame_equal(res.table, fresh, check_exact=True)
    again = benchmark(sets, stats=STATS, n_jobs=1, store=store, **{**SMALL, "seed": None})  # adopts the seed
    assert (again.run.n_loaded, again.run.n_computed, again.seed) == (3, 0, 7)
    pd.testing.assert_frame_equal(again.table, fresh, check_exact=True)


def test_extension_computes_only_the_new_datasets(tmp_path):
    store = tmp_path / "run.sqlite"
    first = benchmark([("a", *_set(1)), ("b", *_set(2))], stats=STATS, n_jobs=1, store=store, **SMALL)
    assert (first.run.n_computed, first.run.n_loaded) == (2, 0)
    more = benchmark([("a", *_set(1)), ("b", *_set(2)), ("new", *_set(3))], stats=STATS, n_jobs=2, store=store,
                     **SMALL)
    assert (more.run.n_computed, more.run.n_loaded) == (1, 2)
    old = more.table[more.table["dataset"] != "new"].reset_index(drop=True)
    pd.testing.assert_frame_equal(old, first.table, check_exact=True)
    alone = benchmark(("new", *_set(3)), stats=STATS, n_jobs=1, **SMALL).table
    pd.testing.assert_frame_equal(more.table[more.table["dataset"] == "new"].reset_index(drop=True), alone,
                                  check_exact=True)
    # other options are another benchmark: refused, not mixed
    with pytest.raises(mcref.store.StoreMismatchError):
        benchmark(("a", *_set(1)), stats=STATS, n_jobs=1, store=store, **{**SMALL, "n_mc": 300})


def test_changed_file_is_a_new_cell(tmp_path):
    p = _write_csv(tmp_path / "m.csv", *_set(1))
    store = tmp_path / "run.sqlite"
    before = benchmark(p, stats=["ZMS"], n_jobs=1, store=store, **SMALL)
    E, u = _set(1)
    E2 = E.copy()
    E2[0] += 1.0
    _write_csv(p, E2, u)
    after = benchmark(p, stats=["ZMS"], n_jobs=1, store=store, **SMALL)
    assert (after.run.n_computed, after.run.n_loaded) == (1, 0)
    assert after.table["sha256"][0] != before.table["sha256"][0]
    assert after.table["estimate"][0] == pytest.approx(np.mean((E2 / u) ** 2), rel=1e-12)
    assert after.table["seed"][0] != before.table["seed"][0]
    _write_csv(p, E, u)  # back to the first content: read back
    back = benchmark(p, stats=["ZMS"], n_jobs=1, store=store, **SMALL)
    assert (back.run.n_computed, back.run.n_loaded) == (0, 1)
    pd.testing.assert_frame_equal(back.table, before.table, check_exact=True)


def test_dask_workers_get_the_data(tmp_path):
    distributed = pytest.importorskip("distributed")
    sets = [("a", *_set(1)), ("b", *_set(2))]
    ref = benchmark(sets, stats=["ZMS", "CC"], n_jobs=1, **SMALL).table
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:  # the worker is another process: the arrays travel
            res = benchmark(sets, stats=["ZMS", "CC"], backend="dask", scheduler=client, **SMALL)
    pd.testing.assert_frame_equal(res.table, ref, check_exact=True)


# ------------------------------------------------------------------- result
def test_str_csv_and_plot(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = benchmark([("cal", *_set(1)), ("mis", *_set(2, 1.6))], stats=STATS, n_jobs=1, **SMALL)
    text = str(res)
    lines = text.splitlines()
    assert lines[0].startswith("benchmark: 2 dataset(s) x 3 statistic(s), B=200, N_MC=200, seed=7")
    t = res.table
    # the answer first: each dataset's joint verdict, then the matrix of findings
    for i, name in enumerate(("cal", "mis")):
        joint = t.loc[t["dataset"] == name, "joint_verdict"].iloc[0]
        assert lines[1 + i].startswith(f"{name}: joint verdict: {joint} (")
    assert lines[3].split() == ["dataset", *STATS]
    for name in ("cal", "mis"):
        line = next(ln for ln in lines if ln.startswith(name + " "))
        want = [v for v in t.loc[t["dataset"] == name, "finding"]]
        assert [w for w in want if w != "not testable"] == [w for w in line.split()[1:] if not re.match(r"^-?[\d.]", w)]
    n = t["finding"].value_counts()
    assert f"{n.get('miscalibrated', 0)} miscalibrated" in text and "indicative only" in text
    assert "invalid" not in "\n".join(lines[3:6])  # rows carry words; valid/invalid is the joint verdict's
    assert res.verdicts().loc["mis", "ZMS"] == "invalid"
    res.to_csv(tmp_path / "t.csv")
    back = pd.read_csv(tmp_path / "t.csv")
    assert back.shape == t.shape and back["estimate"].tolist() == t["estimate"].tolist()
    axes = res.plot()
    assert len(axes) == 3 and [a.get_title().split(",")[0] for a in axes] == list(STATS)
    assert [x.get_text() for x in axes[0].get_yticklabels()] == ["mis", "cal"]  # first dataset on top
    # each panel names the property its rows tested
    assert axes[0].get_title() == "ZMS, calibration\n(reference 1)"
    assert axes[1].get_title() == "CC, consistency\n(simulated reference)"
    plt.close(axes[0].figure)
    _, one = plt.subplots()
    with pytest.raises(ValueError, match=r"`ax` must hold one Axes per statistic \(3\), got 1"):
        res.plot(ax=one)
    plt.close("all")


# ------------------------------------------------------------------- CLI
def _cli(*args, cwd):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "mcref.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_cli_bench_end_to_end(files, tmp_path):
    store, out = tmp_path / "run.sqlite", tmp_path / "t.csv"
    r = _cli("bench", str(files), "--dataset", "Diffusion_RF", "--stat", "ZMS,CC", "--boot", "200", "--mc", "200",
             "--bins", "5", "--seed", "3", "--store", str(store), "--csv", str(out), "--n-jobs", "2",
             "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "benchmark: 3 dataset(s) x 2 statistic(s), B=200, N_MC=200, seed=3" in r.stdout
    assert "(3 computed, 0 loaded" in r.stdout
    t = pd.read_csv(out)
    assert t["dataset"].tolist() == ["a", "a", "b", "b", "Diffusion_RF", "Diffusion_RF"]
    api = benchmark([str(files), "Diffusion_RF"], stats=["ZMS", "CC"], n_jobs=1,
                    **{**SMALL, "seed": 3}).table
    assert t["estimate"].tolist() == api["estimate"].tolist() and t["verdict"].tolist() == api["verdict"].tolist()
    r = _cli("bench", str(files), "--dataset", "Diffusion_RF", "--stat", "ZMS,CC", "--boot", "200", "--mc", "200",
             "--bins", "5", "--store", str(store), "--no-progress", cwd=tmp_path)
    assert r.returncode == 0 and "seed=3" in r.stdout and "(0 computed, 3 loaded" in r.stdout
    r = _cli("bench", str(files / "nope.csv"), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("mcref: error: PATH: '") and "is not a file" in r.stderr
    r = _cli("bench", "--dataset", "QM9_E", "--boot", "50", cwd=tmp_path)
    assert r.returncode == 2 and "--boot=50: too few for a verdict" in r.stderr
    r = _cli("bench", cwd=tmp_path)
    assert r.returncode == 2 and "give one or more PATHs" in r.stderr


def test_cli_demo_is_a_benchmark_of_the_nine_sets(capsys):
    from mcref.cli import main

    assert main(["demo", "--boot", "100", "--mc", "100", "--n-jobs", "1", "--no-progress", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("benchmark: 9 dataset(s) x 5 statistic(s), B=100, N_MC=100, seed=0")
    for name in mcref.datasets.names():
        assert re.search(rf"^{re.escape(name)}: joint verdict: (valid|invalid) \(p ", out, re.M)
        assert re.search(rf"^{re.escape(name)}\s+\S+ (calibrated|miscalibrated|unreliable|not testable)", out, re.M)
    assert "9 data sets in" in out


def test_cli_demo_prints_what_the_four_default_d_give(capsys):
    """``mcref demo`` simulates the permutation D alone, on threads of its process: what it prints
    (every joint verdict, estimate and finding) is what a benchmark of the nine sets under
    validate's four default D prints, on worker processes, with the same seed."""
    from mcref.cli import main
    from mcref.cli._common import DEMO_DISTS

    assert DEMO_DISTS == ("permutation",)
    assert main(["demo", "--boot", "100", "--mc", "100", "--no-progress", "--seed", "5"]) == 0
    demo = capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        full = benchmark("all", n_boot=100, n_mc=100, seed=5, n_jobs=2, backend="loky", progress=False)
    assert set(full.dists) >= {"normal", "empirical", "permutation"} and len(full.dists) == 4

    def body(text):  # the table without the timing of the header line
        return [re.sub(r", [0-9.]+ s\)$", ")", line) for line in text.splitlines()
                if not line.startswith("9 data sets in") and not line.startswith("(one data set")]

    assert [l for l in body(demo) if l] == [l for l in body(str(full)) if l]


# ------------------------------------------------------------------- HTML
EVIL = "<b>x&y</b>'\""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        res = benchmark([("cal", *_set(1)), (EVIL, *_set(2, 1.6)), ("small", *_set(4, m=60))], stats=STATS,
                        n_jobs=1, **{**SMALL, "n_bins": 2})
    path = res.to_html(d / "report")
    return res, Path(path)


def test_html_files_and_escaping(report):
    res, index = report
    d = index.parent
    assert sorted(p.name for p in d.iterdir()) == [".mcref-report", "diagnostics", "index.html", "summary.png"]
    assert sorted(p.name for p in (d / "diagnostics").iterdir()) == ["001.png", "002.png"]  # M = 60: none
    text = index.read_text(encoding="utf-8")
    from markupsafe import escape  # the templates' escaping (Jinja2 autoescape)

    assert EVIL not in text and str(escape(EVIL)) in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", text)  # nothing from the network
    assert "M = 60 &lt; 100 points" in text
    for rel in re.findall(r"<img src='([^']+)'|<img src=\"([^\"]+)\"", text):
        assert (d / (rel[0] or rel[1])).is_file()
    assert not [p for p in d.parent.iterdir() if p.name.startswith(".report.")]  # no temporary left


def test_html_answer_comes_first(report):
    """Issue 40: the benchmark page opens with every dataset's joint verdict (its p and what each
    property found), and each dataset's section opens with its joint verdict."""
    from mcref.report._words import findings_by_property

    res, index = report
    text = index.read_text(encoding="utf-8")
    t = res.table
    first = re.search(r"<h1>.*?</h1>\s*<h2 id=\"joint\">Joint verdicts</h2>.*?<tbody>(.*?)</tbody>", text, re.S)
    assert first, "the joint verdicts are not the page's first table"
    rows = re.findall(r"<tr>(.*?)</tr>", first.group(1), re.S)
    assert len(rows) == len(res.datasets)
    for d, row in zip(res.datasets, rows):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        mine = t[t.dataset == d.name]
        found = findings_by_property(list(zip(mine["stat"], mine["tested"], mine["finding"])))
        assert cells[0] == d.name and cells[1] == mine["joint_verdict"].iloc[0]
        assert cells[2] == p_text(mine["joint_p"].iloc[0], int(mine["n_mc"].iloc[0]))
        assert cells[3:] == ["; ".join(found[p]) for p in ("calibration", "consistency")]
    for i, d in enumerate(res.datasets):  # each section: its heading, then its headline
        sec = re.search(rf"<section id=\"ds-{i + 1:03d}\"><h2>[^<]*</h2>\s*<p class=\"headline f-(\w+)\">(.*?)</p>",
                        text, re.S)
        head = t[t.dataset == d.name]["headline"].iloc[0]
        assert sec and html.unescape(sec.group(2)) == head and head.startswith("joint verdict: ")
        assert sec.group(1) == {"valid": "pass", "invalid": "fail"}[t[t.dataset == d.name]["joint_verdict"].iloc[0]]


def test_html_replaces_only_reports(report, tmp_path, monkeypatch):
    res, _ = report
    other = tmp_path / "mine"
    other.mkdir()
    (other / "keep.txt").write_text("precious")
    with pytest.raises(ValueError, match=r"exists, is not empty and is not an mcref report"):
        res.to_html(other, diagnostics=False)
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    out = tmp_path / "rep"
    res.to_html(out, diagnostics=False)
    first = (out / "index.html").read_text()
    import mcref.report.plots

    def boom(*a, **k):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(mcref.report.plots, "plot_report", boom)
    with pytest.raises(RuntimeError, match="figure failed"):
        res.to_html(out)  # fails midway: the earlier report stays whole, no temporary is left
    assert (out / "index.html").read_text() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "rep"]
    with pytest.raises(RuntimeError):
        res.to_html(tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()


#: the names a headless Chromium goes by (Debian's chromium-headless-shell included)
BROWSERS = ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome", "google-chrome-stable")


def _chromium() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _browser() -> str:
    """The headless browser; without one the test skips with its reason locally and fails on CI
    (env CI=true), where .ci/run installs chromium-headless-shell: a silent skip there would
    leave the pages untested."""
    exe = _chromium()
    if exe is None:
        why = (f"no headless browser found (looked for {', '.join(BROWSERS)}; Debian: apt-get install "
               "chromium-headless-shell) for the headless-browser tests of the HTML reports")
        if _on_ci():
            pytest.fail(why + "; CI must run them")
        pytest.skip(why)
    return exe


def test_no_browser_fails_on_ci_and_skips_locally(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no headless browser found.*CI must run them"):
        _browser()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="chromium-headless-shell"):
        _browser()
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/x" if name == "chromium-headless-shell" else None)
    assert _browser() == "/usr/bin/x"


def _dump_dom(url: str, width: int = 1280) -> str:
    """The DOM of ``url`` after its scripts ran, in headless Chromium with a window ``width`` px wide."""
    exe = _browser()
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={profile}", f"--window-size={width},900", "--enable-logging=stderr",
                            "--v=0", "--virtual-time-budget=5000", "--dump-dom", url],
                           capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Uncaught" not in r.stderr, r.stderr[-2000:]
    return r.stdout


def test_html_in_a_headless_browser(report):
    res, index = report
    dom = _dump_dom(index.as_uri() + "#selftest")
    assert re.search(r"<pre id=\"js-errors\"></pre>", dom), "JavaScript errors on the page"
    n_img = 1 + 2  # the summary figure and two diagnostics figures
    assert f"images loaded: {n_img}/{n_img}" in dom
    assert f"selftest: ok ({len(res.datasets) * len(STATS)} rows)" in dom
    body = re.search(r"<table class=\"sortable\" id=\"results\">.*?<tbody>(.*?)</tbody>", dom, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == len(res.datasets) * len(STATS)
    pairs = {(html.unescape(re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[0])),
              re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)[2]) for r in rows}
    assert pairs == {(d.name, s) for d in res.datasets for s in STATS}
    # the finding cells carry the word of the row's property and its colour class
    from mcref.report._words import finding_class

    found = [re.findall(r"<td class=\"txt (f-[a-z-]+)\" data-v=\"([a-z ]+)\">", r)[0] for r in rows]
    assert {w for _, w in found} <= {"calibrated", "miscalibrated", "consistent", "inconsistent", "unreliable",
                                     "not testable"}
    assert all(c == "f-" + finding_class(w).replace(" ", "-") for c, w in found)
    t = res.table.set_index(["dataset", "stat"])
    for r, (_, word) in zip(rows, found):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)
        assert word == t.loc[(html.unescape(re.sub(r"<[^>]+>", "", cells[0])), cells[2]), "finding"]
    assert "<b>x&amp;y</b>" not in dom  # the name is text, not markup


def test_default_n_mc_is_validates_per_dataset(monkeypatch):
    """No n_mc: each dataset's validate takes its own default_n_mc(M) (the options keep None,
    so the cell keys do not depend on it); the summary says so."""
    import mcref.verdict._validate as V

    E, u = _set(1)
    monkeypatch.setattr(V, "default_n_mc", lambda m: 1100)
    res = benchmark(("a", E, u), stats=["ZMS", "ENCE"], n_boot=1000, n_bins=5, seed=7, n_jobs=1, progress=False)
    tab = mcref.validate(E, u, stats=["ZMS", "ENCE"], n_boot=1000, n_mc=1100, n_bins=5,
                         seed=_expected_seed(7, "a", E, u), sequential=True)  # the default: sequential tests
    assert res.options["n_mc"] is None and "N_MC=default_n_mc(M)" in str(res)
    t = res.table.set_index("stat")
    assert t.loc["ENCE", "ref_normal"] == tab["ENCE"].sim["normal"].mean
    assert t.loc["ENCE", "p_permutation"] == tab["ENCE"].p_sim["permutation"]


#: written into the page by the layout test: the page's width against the window's, after load
_MEASURE = ("<script>window.addEventListener('load',function(){var b=document.body;"
            "b.setAttribute('data-scroll-width',String(document.documentElement.scrollWidth));"
            "b.setAttribute('data-inner-width',String(window.innerWidth));});</script>")


def _visible_text(dom: str) -> str:
    """The text a reader sees: the body without scripts, styles and tags, entities decoded."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_html_report_layout_at_1280px(tmp_path):
    """Issue 34: at 1280 px the report does not scroll sideways (wide tables scroll in their own
    box), shows no "None" (N_MC left to validate's default reads as the header says), no
    status line of the self-test, p-values at the Monte Carlo floor as the command line
    writes them ("< 0.0001", not 9.999e-05), and a BCa interval that excludes its estimate
    marked "!" with its legend."""
    rng = np.random.default_rng(11)
    u = rng.uniform(0.2, 3.0, 600)
    calibrated = u * rng.normal(size=600)
    inconsistent = rng.normal(size=600) / u  # |E| falls as u grows: CC and ENCE at the floor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        res = benchmark([("calibrated", calibrated, u), ("inconsistent", inconsistent, u)], stats=STATS,
                        n_boot=300, seed=5, n_jobs=1, progress=False)  # n_mc: validate's default, 10^4 here
    assert res.options["n_mc"] is None and set(res.table["n_mc"]) == {10_000}
    ence = res.table[(res.table.dataset == "inconsistent") & (res.table.stat == "ENCE")]
    floor, n = ence["p_permutation"].item(), int(ence["n_test"].item())  # decided early: sequential test
    assert floor == 1 / (n + 1) and n < 10_000  # the data's ENCE beyond every shuffle's
    at_floor = p_text(floor, n)
    assert at_floor.startswith("< ")
    index = Path(res.to_html(tmp_path / "report"))
    page = index.with_name("measure.html")
    page.write_text(index.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
    dom = _dump_dom(page.as_uri(), width=1280)
    scroll = int(re.search(r'data-scroll-width="(\d+)"', dom).group(1))
    inner = int(re.search(r'data-inner-width="(\d+)"', dom).group(1))
    assert inner == 1280 and scroll <= inner, f"the page scrolls sideways: {scroll} px wide in a {inner} px window"
    text = _visible_text(dom)
    assert "None" not in text and "nan" not in text.split()
    assert "images loaded" not in text and "selftest" not in text  # the self-test writes only under #selftest
    assert "9.999e-05" not in text and at_floor in text and f"{floor:.3g}" not in text
    assert "N_MC = default_n_mc(M)" in text
    marked = bool(res.table["excludes_estimate"].any())
    assert ("!: the BCa interval excludes its own estimate" in text) == marked
    assert ("!" in re.sub(r"!: the BCa.*", "", text)) == marked
    import matplotlib

    matplotlib.use("Agg")
    title = res.plot()[0].figure.texts[0].get_text()  # the summary figure of the report
    assert "None" not in title and "N_MC = default_n_mc(M)" in title


#: written into a copy of a page by the layout test: with every details element open, the elements
#: whose content is cut (a table, pre or figure, or any box that scrolls, wider than it shows, or
#: one reaching past the window's right edge), the images that did not load, and the summary
#: figure's smallest text in CSS px at the width the page shows it (its font size in points, from
#: the page's data attributes, times dpi / 72 times shown width / natural width)
_LAYOUT = r"""<script>window.addEventListener('load',function(){
var out={cut:[],images:0,loaded:[],missing:[],min_px:null};var W=document.documentElement.clientWidth;
document.querySelectorAll('details').forEach(function(d){d.open=true;});
function name(el){return el.tagName.toLowerCase()+(el.id?'#'+el.id:'')+(el.className?'.'+el.className:'');}
document.querySelectorAll('body *').forEach(function(el){var cs=getComputedStyle(el);
 var box=/^(table|pre|figure|img)$/i.test(el.tagName)||(cs.overflowX!=='visible'&&cs.overflowX!=='');
 if(!box||cs.display==='none'){return;}
 if(el.scrollWidth>el.clientWidth+1||el.getBoundingClientRect().right>W+0.5){
  out.cut.push(name(el)+' '+el.scrollWidth+'>'+el.clientWidth+' right='+el.getBoundingClientRect().right);}});
for(var i=0;i<document.images.length;i++){var im=document.images[i];out.images++;
 (im.complete&&im.naturalWidth>0?out.loaded:out.missing).push(im.getAttribute('src'));}
var s=document.getElementById('summary');
if(s){out.min_px=Number(s.getAttribute('data-min-font-pt'))/72*Number(s.getAttribute('data-dpi'))*
 s.clientWidth/s.naturalWidth;out.shown=s.clientWidth;out.natural=s.naturalWidth;}
out.page=document.documentElement.scrollWidth;out.window=window.innerWidth;
document.body.setAttribute('data-layout',JSON.stringify(out));});</script>"""


def _layout(index: Path) -> dict:
    """What :data:`_LAYOUT` measures on the page ``index`` in the headless browser at 1280 px."""
    import json

    page = index.with_name("layout.html")
    page.write_text(index.read_text(encoding="utf-8").replace("</body>", _LAYOUT + "</body>"), encoding="utf-8")
    dom = _dump_dom(page.as_uri(), width=1280)
    return json.loads(html.unescape(re.search(r'data-layout="([^"]*)"', dom).group(1)))


def test_html_pages_show_everything_at_1280px(report, tmp_path):
    """Issue 40: at 1280 px, the benchmark page and the dataset page (``mcref report --html``) cut
    nothing (every table, pre, figure and box as wide as its content, none past the window's
    edge, the page not wider than the window), load every image, and show the summary figure's
    smallest text at 9 px or more."""
    pytest.importorskip("matplotlib")
    from mcref.report._html import write_dataset_report

    res, index = report
    bench = _layout(index)
    assert bench["window"] == 1280 and bench["page"] <= 1280, bench
    assert bench["cut"] == [], bench["cut"]
    assert bench["missing"] == [] and bench["images"] == 3, bench
    assert bench["min_px"] >= 9, f"the summary figure's smallest text is {bench['min_px']:.1f} px on the page"
    assert bench["shown"] > 0.8 * bench["natural"]  # shown near its natural size, not a strip scaled down
    # the dataset page: adaptivity rows (a feature x), every D, the notes
    rng = np.random.default_rng(3)
    u = rng.uniform(0.2, 3.0, 400)
    x = rng.normal(size=400)
    E = 1.3 * u * rng.normal(size=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewReplicatesWarning)
        tab = mcref.validate(E, u, x=x, n_boot=200, n_mc=200, n_bins=5, seed=1, name="a long name " * 6)
    page = Path(write_dataset_report(tab, E, u, x, tmp_path / "one", seed=1))
    one = _layout(page)
    assert one["cut"] == [] and one["page"] <= 1280, one
    assert one["missing"] == [] and one["loaded"] == ["report.png"], one
    text = page.read_text(encoding="utf-8")
    # the joint verdict first, as wrapped text (no monospace block), then the table worded by property
    first = re.search(r"<h1>.*?</h1>\s*<p class=\"headline f-(pass|fail)\">(.*?)</p>", text, re.S)
    assert first and html.unescape(first.group(2)) == tab.headline() and "<pre>" not in text
    assert tab.joint.verdict == {"pass": "valid", "fail": "invalid"}[first.group(1)]
    assert "adaptivity" in text and any(r.finding in ("adaptive", "not adaptive") for r in tab.rows)
    from markupsafe import Markup

    from mcref.report._words import GLOSSARY

    for term, (sentence, section) in GLOSSARY.items():  # the words, each with its sentence and its section
        assert Markup("<dt>{}</dt><dd>{} ({})").format(term, sentence, f'docs/methods.md, "{section}"') in text, term


def test_summary_figure_title_says_the_defaults(report):
    """Issue 40: the summary figure's title says the default used for B and N_MC, never "None"."""
    import dataclasses

    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res, _ = report
    defaults = dataclasses.replace(res, options={**res.options, "n_boot": None, "n_mc": None})
    fig = defaults.plot()[0].figure
    title = fig.texts[0].get_text()
    plt.close(fig)
    assert "None" not in title and "B = default_n_boot(M)" in title and "N_MC = default_n_mc(M)" in title
