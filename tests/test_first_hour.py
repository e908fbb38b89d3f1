"""Issue 34, "the first hour, again": what a new user hit, each with its regression test.

Outputs that cannot be written are refused before any work, one line and exit status 2; a
Dask scheduler that does not answer is said within the connect timeout; messages speak of
the data, not of options the user never gave; p-values read the same in the table, the joint
line and the reports; one seed rule; ``from_frame`` takes a dict as documented.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import mcref
from mcref.report._render import p_text
from mcref.cli import main


# ------------------------------------------------------------------ outputs before work
def _forbid(monkeypatch, target: str) -> list:
    """Replace ``target`` (module.attr) by a function that records its calls: the work of a command."""
    import importlib

    calls = []
    mod, attr = target.rsplit(".", 1)

    def work(*a, **k):
        calls.append(target)
        raise AssertionError(f"{target} ran before the output was checked")

    monkeypatch.setattr(importlib.import_module(mod), attr, work)
    return calls


@pytest.mark.parametrize("argv, option, work", [
    (["report", "{f}", "--out", "{t}/missing_dir/x.png"], "--out", "mcref.plots.plot_report"),
    (["report", "{f}", "--html", "{t}/missing_dir/rep"], "--html", "mcref.verdict._validate.validate"),
    (["bench", "{f}", "--csv", "{t}/missing_dir/b.csv"], "--csv", "mcref.workflows._benchmark.benchmark"),
    (["bench", "{f}", "--html", "{t}/not_a_report"], "--html", "mcref.workflows._benchmark.benchmark"),
    (["bench", "{f}", "--store", "{t}/missing_dir/s.sqlite"], "--store", "mcref.workflows._benchmark.benchmark"),
    (["study", "scaling", "--small", "--csv", "{t}/missing_dir/s.csv"], "--csv", "mcref.studies._runner.run_study"),
    (["study", "scaling", "--small", "--store", "{t}"], "--store", "mcref.studies._runner.run_study"),
    (["recalibrate", "{f}", "--method", "zms", "--out", "{t}/missing_dir/r.csv"], "--out",
     "mcref.workflows._recalibrate.recalibrate"),
])
def test_unwritable_output_is_refused_before_any_work(argv, option, work, small_csv, tmp_path, capsys, monkeypatch):
    (tmp_path / "not_a_report").mkdir()
    (tmp_path / "not_a_report" / "mine.txt").write_text("keep")
    calls = _forbid(monkeypatch, work)
    argv = [a.format(f=small_csv, t=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mcref: error: {option}:") and err.count("\n") == 1, err
    assert "Traceback" not in err and calls == []
    assert (tmp_path / "not_a_report" / "mine.txt").read_text() == "keep"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc (a folder that takes no file)")
def test_report_out_into_proc_is_one_line(small_csv, capsys, monkeypatch):
    """The issue's case: /proc exists, so only creating a file there tells (root may 'write' anywhere)."""
    calls = _forbid(monkeypatch, "mcref.plots.plot_report")
    assert main(["report", str(small_csv), "--out", "/proc/x.png"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error: --out: cannot create a file in '/proc'") and calls == []
    # a true reason (issue 40): not "No such file or directory" for a folder that exists
    assert "takes no new files" in err and "No such file or directory" not in err
    assert main(["report", str(small_csv), "--html", "/proc/nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error: --html: cannot create a file in '/proc'") and "takes no new files" in err


def test_output_path_through_a_file_says_so(small_csv, tmp_path, capsys, monkeypatch):
    """Issue 40: a path through an existing file names that file, not "the directory ... does not exist"."""
    calls = _forbid(monkeypatch, "mcref.plots.plot_report")
    blocker = tmp_path / "a.txt"
    blocker.write_text("a file")
    for option, path in (("--out", blocker / "x.png"), ("--html", blocker / "deeper" / "rep")):
        assert main(["report", str(small_csv), option, str(path)]) == 2
        err = capsys.readouterr().err
        assert err == (f"mcref: error: {option}: {str(path)!r} goes through {str(blocker)!r}, which is a file, not a "
                       "directory (choose another path)\n"), err
    assert main(["report", str(small_csv), "--out", str(tmp_path / "no" / "x.png")]) == 2
    assert "the directory" in capsys.readouterr().err and calls == []  # a missing folder still says so


def test_write_error_while_writing_is_one_line(small_csv, capsys, monkeypatch):
    """An OSError raised by the work itself (a full disk, a file gone) is one line, exit 2."""
    def full(*a, **k):
        raise OSError(28, "No space left on device", "big.csv")

    monkeypatch.setattr(mcref.datasets, "from_file", full)
    assert main(["stats", str(small_csv), "--boot", "100"]) == 2
    assert capsys.readouterr().err == "mcref: error: No space left on device: big.csv\n"


def test_dask_scheduler_that_does_not_answer(small_csv, capsys):
    """A clear line naming --scheduler after --connect-timeout seconds (Dask's own message says
    after how long it gave up: the timeout reached the client), not a chained traceback."""
    pytest.importorskip("distributed")
    argv = ["bench", str(small_csv), "--stat", "ZMS", "--boot", "100", "--mc", "100", "--backend", "dask",
            "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error: --scheduler: no Dask scheduler answered at 'tcp://127.0.0.1:1' within 1 s")
    assert "after 1 s" in err and "--connect-timeout" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="`connect_timeout` must be a finite number > 0"):
        mcref.studies.scaling(backend="dask", scheduler="tcp://127.0.0.1:1", connect_timeout=0, progress=False)


# ------------------------------------------------------------------ messages about the data
def test_all_zero_errors_are_named_as_data_not_as_dists(tmp_path, capsys):
    u = np.linspace(0.5, 2.0, 200)
    f = tmp_path / "zero.csv"
    np.savetxt(f, np.c_[np.zeros(200), u], delimiter=",", header="E,u", comments="")
    assert main(["validate", str(f), "--boot", "200", "--mc", "200"]) == 2
    err = capsys.readouterr().err
    assert "the errors E are 0 for all 200 points" in err and "dists" not in err and "empirical'" not in err
    with pytest.raises(ValueError, match="exactly proportional to u") as exc:
        mcref.validate(2.0 * u, u, n_boot=200, n_mc=200)
    assert "dists" not in str(exc.value)
    with pytest.raises(ValueError, match="needs at least two distinct Z values"):  # given by the user: named
        mcref.simulate(["ZMS"], u, dists=["empirical"], E=2.0 * u, n_mc=100)


def test_constant_abs_E_makes_CC_not_testable_with_its_reason():
    """|E| of one value: CC has no ranks of |E| (as CC with one u): 'not testable' and why; the
    other rows, the shape screen and the joint verdict stand."""
    rng = np.random.default_rng(3)
    u = rng.uniform(0.5, 2.0, 600)
    E = np.where(rng.random(600) < 0.5, -1.0, 1.0)
    tab = mcref.validate(E, u, n_boot=1000, n_mc=1000, seed=1)
    cc = tab["CC"]
    assert cc.verdict == "not testable" and cc.verdict_paper == "not testable" and "|E|" in cc.reason
    assert all(tab[s].verdict in ("valid", "invalid") for s in ("ZMS", "RCE", "ENCE", "ZMSE"))
    assert tab.joint is not None and "CC" not in tab.joint.stats
    assert any(n.startswith("CC: not testable: all |E| are equal") for n in tab.notes)
    assert tab.shape.beta_E2 == 0.0 and np.isnan(tab.shape.kappa_E2)
    with pytest.raises(ValueError, match=r"CC cannot be tested: all \|E\| are equal"):
        mcref.validate(E, u, stats=["CC"], n_boot=1000, n_mc=1000, seed=1)


def test_p_text_is_a_true_bound_at_the_floor_and_plain_above():
    for n in (200, 500, 999, 1000, 2000, 10_000, 99_999):
        for k in (1, 2):  # the floors of a one-sided and a two-sided test
            p = k / (n + 1)
            text = p_text(p, n)
            assert text.startswith("< ") and float(text[2:]) > p and float(text[2:]) <= 10 * p
    assert p_text(1 / 10_001, 10_000) == "< 0.0001" and p_text(2 / 10_001, 10_000) == "< 0.0002"
    assert p_text(5 / 10_001, 10_000) == "0.0005"  # above the floor: not "< 0.0001" (was)
    assert p_text(0.04321, 10_000) == "0.043" and p_text(1.0, 100) == "1.000" and p_text(None) == "-"
    assert "e" not in p_text(3e-6, 10**7)


def _inconsistent(m: int = 1500, seed: int = 2):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    return np.sqrt(u) * rng.normal(size=m), u


def test_joint_line_writes_p_as_the_table_and_fits_100_columns():
    E, u = _inconsistent()
    x = {"grp": np.array(["a", "b", "c"])[np.arange(E.size) % 3], "feat": np.linspace(0, 1, E.size)}
    tab = mcref.validate(E, u, x=x, n_boot=1000, n_mc=2000, seed=4)
    text = str(tab)
    flat = " ".join(text.split())
    assert "p = <" not in text and "< 0.0005 ±" not in text
    line = next(ln for ln in text.splitlines() if ln.startswith(tab.joint.driver + " "))
    assert tab.joint.driver_p * 2001 <= 2 + 1e-9  # at the floor: the table shows the bound
    cell = "< 0.0005" if tab.joint.driver_p < 1 / 2000 else "< 0.001"
    assert cell in line and f"smallest p: {tab.joint.driver} {cell}" in flat
    assert "joint verdict: invalid (p < 0.001): " in flat  # the headline, first
    assert "joint verdict, how: invalid (p < 0.001 <= 0.05;" in flat  # the line under the table
    for t in (tab, mcref.validate(*_inconsistent(400, 5), n_boot=1000, n_mc=1000, seed=0),
              mcref.validate(E, np.full(E.size, 1.3), x=x["feat"], n_boot=1000, n_mc=1000, seed=0)):
        wide = [ln for ln in str(t).splitlines() if len(ln) > 100]
        assert not wide, wide


def test_paper_not_testable_says_why():
    """On a calibrated set the published rule calls D-sensitive rows 'not testable' (their
    zeta_Sim passes under normal and fails under t(6), whose reference is far above the normal
    one); the notes say so, per row."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 2000)
    ds = mcref.datasets.Dataset("calibrated", u * rng.normal(size=2000), u)
    tab = mcref.validate(ds, n_boot=1000, n_mc=1000, seed=2)
    rows = [r for r in tab.rows if r.verdict_paper == "not testable"]
    assert rows and all(r.d_sensitive for r in rows)
    note = next(n for n in tab.notes if n.startswith("paper: not testable"))
    for r in rows:
        bad = [d for d in ("normal", "t(6)", "empirical") if abs(r.zeta_sim[d]) > 1]
        assert bad and r.name in note and f"outside under {', '.join(bad)}" in note
    assert "paper: not testable" in " ".join(str(tab).split())
    one_d = mcref.validate(ds, dists=["normal"], n_boot=1000, n_mc=1000, seed=2)  # one D: nothing to disagree
    assert not any(r.verdict_paper == "not testable" for r in one_d.rows)
    assert not any(n.startswith("paper:") for n in one_d.notes)


# ------------------------------------------------------------------ one seed rule
def _seed_in(text: str) -> int:
    import re

    return int(re.search(r"seed[= ](\d+)", text).group(1))


def test_one_seed_rule_drawn_printed_and_repeatable(capsys, small_csv):
    """validate, bench, study and demo: without --seed a seed is drawn from the OS and printed;
    that seed given back repeats the output."""
    runs = {
        "validate": ["validate", str(small_csv), "--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200"],
        "bench": ["bench", str(small_csv), "--stat", "ZMS", "--boot", "200", "--mc", "200", "--backend",
                  "sequential", "--no-progress"],
        "study": ["study", "scaling", "--small", "--models", "NIG", "--M", "1000", "--k", "4", "--n-mc", "50",
                  "--backend", "sequential", "--no-progress"],
        "demo": ["demo", "--stats-only", "--boot", "100"],
    }
    import re

    def results(text: str) -> str:  # the output without the lines that say the seed and the run time
        return "\n".join(ln for ln in text.splitlines() if not re.search(r"seed|\d s\b|\d s\)", ln))

    for name, argv in runs.items():
        assert main(argv) == 0, name
        first = capsys.readouterr().out
        seed = _seed_in(first)
        assert main([*argv, "--seed", str(seed)]) == 0, name
        again = capsys.readouterr().out
        assert _seed_in(again) == seed and results(first) == results(again) and len(results(first)) > 100, name
        assert main(argv) == 0, name  # drawn, not a fixed default: another run, another seed
        assert _seed_in(capsys.readouterr().out) != seed, name
    a = mcref.studies.scaling(models=("NIG",), M=(1000,), N=(10,), k=(4,), n_mc=50, n_jobs=1, progress=False)
    b = mcref.studies.scaling(models=("NIG",), M=(1000,), N=(10,), k=(4,), n_mc=50, n_jobs=1, progress=False,
                              seed=a.seed)
    assert a.table.equals(b.table)
    ex = mcref.studies.extrapolation("Diffusion_RF", n_boot=20)
    assert isinstance(ex.seed, int) and f"seed={ex.seed}" in str(ex)
    assert mcref.studies.extrapolation("Diffusion_RF", n_boot=20, seed=ex.seed).se_a_boot == ex.se_a_boot


# ------------------------------------------------------------------ from_frame
def test_from_frame_takes_a_dict_as_documented():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    cols = {"y": rng.normal(size=50), "pred": rng.normal(size=50), "sigma": rng.uniform(0.5, 1, 50),
            "x": rng.normal(size=50)}
    a = mcref.datasets.from_frame(cols, ref="y", pred="pred", u="sigma")
    b = mcref.datasets.from_frame(pd.DataFrame(cols), ref="y", pred="pred", u="sigma")
    for k in ("E", "u", "x"):
        assert getattr(a, k).tobytes() == getattr(b, k).tobytes()
    assert (a.source, b.source) == ("mapping", "DataFrame")
    with pytest.raises(ValueError, match=r"`df`: the columns have different lengths \[49, 50\]"):
        mcref.datasets.from_frame({**cols, "sigma": cols["sigma"][:49]}, ref="y", pred="pred", u="sigma")
    with pytest.raises(ValueError, match="`df` must be a pandas DataFrame or a mapping"):
        mcref.datasets.from_frame([cols["y"], cols["sigma"]])
    assert json.loads(json.dumps({"source": a.source}))  # plain text, no object


# ------------------------------------------------------------------ issue 31: doors that disagreed
def _cat_csv(path, m: int = 450):
    """A calibrated set of 450 rows (too few for 20 bins of 30) with a text feature of three levels."""
    rng = np.random.default_rng(5)
    u = rng.uniform(0.5, 2.0, m)
    E = u * rng.normal(size=m)
    cat = np.array(["lo", "mid", "hi"])[rng.integers(0, 3, m)]
    path.write_text("E,u,cat\n" + "".join(f"{float(e)!r},{float(s)!r},{c}\n" for e, s, c in zip(E, u, cat)))
    return path


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_bench_bins_default_is_validates(tmp_path, capsys):
    """mcref bench, like mcref validate and benchmark(), takes 15 bins for 450 rows (it fixed
    --bins 20 and refused the file) and says so under the summary; an explicit --bins is kept."""
    f = _cat_csv(tmp_path / "m450.csv")
    opts = ["--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200", "--seed", "1", "--backend", "sequential",
            "--no-progress"]
    assert main(["bench", str(f), *opts, "--csv", str(tmp_path / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "bins: fewer than the default 20 so that every bin keeps min_count=30 points: m450 15" in out
    pd = pytest.importorskip("pandas")
    assert set(pd.read_csv(tmp_path / "b.csv")["n_bins"]) == {15}
    assert main(["bench", str(f), *opts, "--bins", "20"]) == 2
    assert "--bins" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_one_feature_rule_and_one_answer_through_four_doors(tmp_path, capsys):
    """A text column is one categorical feature through every door: mcref validate --x-column,
    mcref bench --x-column, mcref.validate and mcref.benchmark give the same rows, named
    ENCE|cat, with the same estimate, p and verdict, compared through the seed each door used
    (benchmark derives a dataset's validate seed from its own: the table's seed column)."""
    f = _cat_csv(tmp_path / "m450.csv")
    ds = mcref.datasets.from_file(f, x="cat")
    assert ds.x.dtype.kind == "U" and sorted(set(ds.x)) == ["hi", "lo", "mid"]
    assert mcref.datasets.read_features(f, "cat")["cat"].tolist() == ds.x.tolist()
    opts = dict(stats=["ZMS", "CC", "ENCE", "ZMSE"], n_boot=200, n_mc=200)
    cli = ["--stat", "ZMS,CC,ENCE,ZMSE", "--boot", "200", "--mc", "200"]

    res = mcref.benchmark(str(f), x="cat", adaptivity=True, seed=11, n_jobs=1, progress=False, **opts)
    seed = int(res.table["seed"].iloc[0])
    assert res.stats == ("ZMS", "CC", "ENCE", "ZMSE", "ENCE|cat", "ZMSE|cat")
    assert main(["bench", str(f), "--x-column", "cat", *cli, "--seed", "11", "--backend", "sequential",
                 "--no-progress", "--csv", str(tmp_path / "b.csv")]) == 0
    capsys.readouterr()
    pd = pytest.importorskip("pandas")
    bench_cli = pd.read_csv(tmp_path / "b.csv")
    tab = mcref.validate(ds.E, ds.u, x={"cat": ds.x}, seed=seed, **opts)
    assert main(["validate", str(f), "--x-column", "cat", *cli, "--seed", str(seed), "--json"]) == 0
    val_cli = json.loads(capsys.readouterr().out)

    def rows(stat, est, p, verdict):
        return {s: (e, p_, v) for s, e, p_, v in zip(stat, est, p, verdict)}

    doors = {
        "mcref.validate": {r.name: (r.estimate, r.p_test, r.verdict) for r in tab.rows},
        "mcref.benchmark": rows(res.table["stat"], res.table["estimate"], res.table["p_test"], res.table["verdict"]),
        "mcref bench": rows(bench_cli["stat"], bench_cli["estimate"], bench_cli["p_test"], bench_cli["verdict"]),
        "mcref validate": {r["stat"]: (r["estimate"], r["p_test"], r["verdict"]) for r in val_cli["rows"]},
    }
    want = doors["mcref.validate"]
    assert list(want) == ["ZMS", "CC", "ENCE", "ZMSE", "ENCE|cat", "ZMSE|cat"]
    for door, got in doors.items():
        assert list(got) == list(want), door
        for stat in want:
            (e0, p0, v0), (e1, p1, v1) = want[stat], got[stat]
            assert (e1, p1, v1) == (e0, p0, v0), (door, stat)  # the same bits (CSV and JSON keep every digit)
    assert bench_cli["seed"].iloc[0] == seed and val_cli["seed"] == seed


def test_categorical_x_in_a_dataset():
    """Dataset.x holds numbers or labels; a missing label is named; a label x enters the content
    hash by its labels; from_frame reads a text column as labels too."""
    from mcref.workflows._benchmark import content_hash

    E, u = np.array([0.1, -0.2, 0.3, 0.0]), np.array([1.0, 2.0, 1.0, 0.5])
    ds = mcref.datasets.Dataset("c", E, u, np.array(["a", "b", "a", "b"], dtype=object))
    assert ds.x.dtype.kind == "U" and not ds.x.flags.writeable
    with pytest.raises(ValueError, match=r"`x` has 1 missing label\(s\) \(None, NaN or empty\), first at index 2"):
        mcref.datasets.Dataset("c", E, u, np.array(["a", "b", None, "b"], dtype=object))
    assert content_hash(E, u, ds.x) != content_hash(E, u, np.array(["a", "b", "b", "a"]))
    assert content_hash(E, u, ds.x) != content_hash(E, u)
    f = mcref.datasets.from_frame({"E": E, "u": u, "g": ["x", "y", "x", "y"]}, x="g")
    assert f.x.tolist() == ["x", "y", "x", "y"]
