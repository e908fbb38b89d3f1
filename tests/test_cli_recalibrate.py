"""``mcref recalibrate``: the printed parameters are the API's, the written u_recalibrated
is the API's map applied to u (bit for bit), the input's columns come back verbatim, and bad
input exits with status 2 and a message naming the option."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

import mcref
from mcref.cli import main


def _data(M=1500, seed=0):
    rng = np.random.default_rng(seed)
    u = np.sqrt(1.0 / rng.gamma(4.0, 1.0 / 4.0, M))
    x = rng.uniform(0, 1, M)
    E = u * (1 + 0.5 * x) * rng.normal(size=M)
    return E, 1.3 * u, x


@pytest.fixture
def datafile(tmp_path):
    """A CSV with an id column, a text column and the numbers written at full precision."""
    E, u, x = _data()
    f = tmp_path / "pairs.csv"
    with open(f, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "E", "u", "feat", "note"])
        for i in range(E.size):
            w.writerow([f"m{i:04d}", repr(float(E[i])), repr(float(u[i])), repr(float(x[i])), "a,b" if i % 7 == 0 else "ok"])
    return f, E, u, x


def _read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


@pytest.mark.parametrize("method", ["zms", "rce", "poly", "isotonic"])
def test_printed_parameters_are_the_apis(datafile, method, capsys):
    f, E, u, _ = datafile
    rec = mcref.recalibrate(E, u, method)
    assert main(["recalibrate", str(f), "--method", method, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["params"] == rec.params and row["se"] == rec.se and row["M"] == E.size
    assert main(["recalibrate", str(f), "--method", method]) == 0
    out = capsys.readouterr().out
    for k, v in rec.params.items():
        if method != "isotonic":
            assert f"{k:>5} = {v:.6g} ± {rec.se[k]:.2g}" in out
    if method in ("zms", "rce"):  # the scale factor itself, closed form
        z2 = (E / u) ** 2
        s = np.sqrt(np.mean(z2)) if method == "zms" else np.sqrt(np.mean(E**2) / np.mean(u**2))
        assert row["params"]["s"] == pytest.approx(s, rel=1e-12)


@pytest.mark.parametrize("method, extra, kw", [("zms", [], {}), ("bvs", ["--bins", "10"], {"n_bins": 10}),
                                              ("poly", [], {}), ("poly", ["--degree", "2"], {"degree": 2}),
                                              ("isotonic", [], {})])
def test_out_csv_is_the_input_plus_the_apis_u(datafile, method, extra, kw, tmp_path, capsys):
    f, E, u, _ = datafile
    out = tmp_path / "sub" / "rec.csv"
    out.parent.mkdir()
    assert main(["recalibrate", str(f), "--method", method, *extra, "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    head, rows = _read(out)
    head_in, rows_in = _read(f)
    assert head == head_in + ["u_recalibrated"]
    assert [r[:-1] for r in rows] == rows_in  # every input cell verbatim, row order kept
    u_new = np.array([float(r[-1]) for r in rows])
    np.testing.assert_array_equal(u_new, mcref.recalibrate(E, u, method, **kw).apply(u))
    assert os.listdir(out.parent) == ["rec.csv"]  # no temporary file left behind


def test_bvs_on_a_covariate_column(datafile, tmp_path, capsys):
    f, E, u, x = datafile
    out = tmp_path / "rec.csv"
    assert main(["recalibrate", str(f), "--method", "bvs", "--x-column", "feat", "--bins", "5", "--json",
                 "--out", str(out)]) == 0
    row = json.loads(capsys.readouterr().out)
    rec = mcref.recalibrate(E, u, "bvs", x=x, n_bins=5)
    assert row["on_x"] and row["params"] == rec.params
    _, rows = _read(out)
    np.testing.assert_array_equal([float(r[-1]) for r in rows], rec.apply(u, x))


def test_builtin_dataset_and_variance_column(tmp_path, capsys):
    ds = mcref.datasets.load("Diffusion_LR")
    out = tmp_path / "d.csv"
    assert main(["recalibrate", "--dataset", "Diffusion_LR", "--method", "rce", "--out", str(out)]) == 0
    head, rows = _read(out)
    assert head == ["E", "u", "x", "u_recalibrated"]
    cols = np.array(rows, dtype=float).T
    np.testing.assert_array_equal(cols[0], ds.E)
    np.testing.assert_array_equal(cols[3], mcref.recalibrate(ds.E, ds.u, "rce").apply(ds.u))
    # a variance column: u_recalibrated is a standard uncertainty of the map fitted on sqrt(variance)
    f = tmp_path / "var.csv"
    f.write_text("err,var\n" + "".join(f"{float(e)!r},{float(v)!r}\n" for e, v in zip(ds.E, ds.u**2)))
    out2 = tmp_path / "v.csv"
    assert main(["recalibrate", str(f), "--E", "err", "--u", "var", "--u-is-variance", "--method", "zms",
                 "--out", str(out2)]) == 0
    _, rows = _read(out2)
    u = np.sqrt(ds.u**2)
    np.testing.assert_array_equal([float(r[-1]) for r in rows], mcref.recalibrate(ds.E, u, "zms").apply(u))


def test_cv_tables_are_the_apis(datafile, tmp_path, capsys):
    f, E, u, _ = datafile
    out = tmp_path / "rec.csv"
    argv = ["recalibrate", str(f), "--method", "zms", "--cv", "4", "--boot", "200", "--mc", "200", "--seed", "3",
            "--stat", "ZMS,CC", "--dists", "normal", "--out", str(out)]
    assert main(argv + ["--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    with pytest.warns(mcref.FewReplicatesWarning):  # small settings: the CLI prints the tables without it
        cv = mcref.recalibrate_cv(E, u, "zms", n_splits=4, n_boot=200, n_mc=200, seed=3, stats=["ZMS", "CC"],
                                  dists=["normal"], name="pairs")
    assert row["fold_params"] == cv.factors and row["seed"] == 3
    for side, tab in (("before", cv.before), ("after", cv.after)):
        assert row[side] == json.loads(tab.to_json()), side
    head, rows = _read(out)
    assert head[-2:] == ["u_recalibrated", "u_recalibrated_cv"]
    np.testing.assert_array_equal([float(r[-1]) for r in rows], cv.u_cv)
    np.testing.assert_array_equal([float(r[-2]) for r in rows], cv.recalibrator.apply(u))
    # the text output: the side-by-side table with the joint verdicts, and the seed
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "seed=3" in text and "before" in text and "after" in text and "joint" in text
    assert f"{cv.after['ZMS'].estimate:>10.4g} {cv.after['ZMS'].finding:>13}" in text


def test_out_replaces_an_existing_file(datafile, tmp_path):
    f, E, u, _ = datafile
    out = tmp_path / "rec.csv"
    out.write_text("old content\n")
    assert main(["recalibrate", str(f), "--method", "zms", "--out", str(out)]) == 0
    assert _read(out)[0][-1] == "u_recalibrated"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--method", "zms", "--out", "{tmp}/missing/r.csv"], "--out: the directory"),
        (["--method", "zms", "--out", "{tmp}"], "--out:"),
        (["--method", "zms", "--x-column", "feat"], "--x-column is used only by --method bvs"),
        (["--method", "bvs", "--x-column", "nope"], "--x-column names column 'nope', which is missing"),
        (["--method", "bvs", "--x-column", "note"], "--x-column: column 'note' holds text (a categorical feature)"),
        (["--method", "zms", "--bins", "5"], "--bins is used only by --method bvs"),
        (["--method", "isotonic", "--degree", "2"], "--degree is used only by --method poly"),
        (["--method", "bvs", "--bins", "100"], "--bins"),
        (["--method", "zms", "--cv", "1"], "--cv"),
        (["--method", "zms", "--cv", "2", "--seed", "-1"], "--seed"),
    ],
)
def test_bad_input_exits_2(datafile, tmp_path, argv, match, capsys):
    f = datafile[0]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["recalibrate", str(f)] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error:") and match in err, err
    assert sorted(os.listdir(tmp_path)) == ["pairs.csv"]  # nothing written, no temporary file


def test_bad_path_and_dataset_exit_2(tmp_path, capsys):
    assert main(["recalibrate", str(tmp_path / "nonexistent.csv"), "--method", "zms"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error: FILE: file not found") and "nonexistent.csv" in err
    assert main(["recalibrate", "--dataset", "QM9_E", "--method", "bvs", "--x-column", "feat"]) == 2
    assert "--x-column" in capsys.readouterr().err
    assert main(["recalibrate", "--method", "zms"]) == 2
    assert "FILE or --dataset" in capsys.readouterr().err


@pytest.mark.parametrize("argv, option", [(["--method", "platt"], "--method"), ([], "--method"),
                                          (["--method", "poly", "--degree", "3"], "--degree")])
def test_bad_choice_exits_2_naming_the_option(argv, option, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["recalibrate", "--dataset", "Diffusion_RF"] + argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert option in err and ("invalid choice" in err or "required" in err)
    if argv and argv[1] == "platt":
        assert "zms" in err and "isotonic" in err  # what is accepted


def test_csv_output_and_file_mode(datafile, tmp_path, capsys):
    f, E, u, _ = datafile
    out = tmp_path / "rec.csv"
    assert main(["recalibrate", str(f), "--method", "rce", "--csv", "--out", str(out)]) == 0
    cap = capsys.readouterr()
    rows = list(csv.reader(cap.out.splitlines()))
    rec = mcref.recalibrate(E, u, "rce")
    assert rows == [["dataset", "method", "param", "value", "se"], ["pairs", "rce", "s", repr(rec.params["s"]),
                                                                     repr(rec.se["s"])]]
    assert f"wrote {out}" in cap.err  # the table alone on stdout
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # as an ordinary new file, not mkstemp's 0600
