"""What a new user hit, round 2 (the study and runner parts): one test per item."""

from __future__ import annotations

import inspect
import json
import re
import warnings

import numpy as np
import pytest

import mcref
from mcref import cli, studies


def _help(capsys, *argv) -> str:
    with pytest.raises(SystemExit):
        cli.main([*argv, "--help"])
    return capsys.readouterr().out


@pytest.mark.parametrize("sub, option, func, keyword", [
    ("reliability", "--boot", studies.reliability, "n_boot"),
    ("reliability", "--M", studies.reliability, "M"),
    ("reliability", "--n-rep", studies.reliability, "n_rep"),
    ("reliability", "--n-mc", studies.reliability, "n_mc"),
    ("scaling", "--n-mc", studies.scaling, "n_mc"),
    ("sensitivity", "--bins", studies.sensitivity, "n_bins"),
    ("sensitivity", "--n-mc", studies.sensitivity, "n_mc"),
    ("verdicts", "--boot", studies.verdicts, "n_boot"),
    ("verdicts", "--n-rep", studies.verdicts, "n_rep"),
    ("verdicts", "--n-mc", studies.verdicts, "n_mc"),
    ("verdicts", "--bins", studies.verdicts, "n_bins"),
    ("extrapolation", "--boot", studies.extrapolation, "n_boot"),
])
def test_study_help_states_the_defaults_the_run_uses(capsys, sub, option, func, keyword):
    text = " ".join(_help(capsys, "study", sub).split("options:", 1)[1].split())  # not the usage line
    m = re.search(re.escape(option) + r" [A-Z_]+ [^()]*\(default (\d+)", text)
    assert m, f"{option} of 'study {sub}' states no default"
    assert int(m.group(1)) == inspect.signature(func).parameters[keyword].default


@pytest.mark.parametrize("sub", ["scaling", "sensitivity", "reliability", "verdicts", "extrapolation"])
def test_every_study_listed_in_help_accepts_small(capsys, sub):
    assert sub in _help(capsys, "study")
    assert "--small" in _help(capsys, "study", sub)


def test_study_extrapolation_small_runs(capsys):
    assert cli.main(["study", "extrapolation", "--small", "--dataset", "Diffusion_RF", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "Diffusion_RF" and np.isfinite(out["se_a_boot"])


def test_study_verdicts_on_the_command_line(capsys):
    assert cli.main(["study", "verdicts", "--small", "--n-jobs", "1", "--no-progress", "--stat", "ZMS",
                     "--n-rep", "12", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["study"] == "verdicts" and out["params"]["n_rep"] == 12
    rows = [r for r in out["table"] if r["score"] == "verdict" and r["dist"] == "mc"]
    assert len(rows) == 1 and 0.0 <= rows[0]["reject"] <= 1.0


def test_extrapolation_says_the_tie_order_once():
    # QM9_E: 135 distinct u, ties straddle the cuts at every bin count of the curve
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = studies.extrapolation("QM9_E", n_boot=20)
    ties = [w for w in caught if issubclass(w.category, mcref.TieOrderWarning)]
    assert len(ties) == 1
    assert f"for {res.N.size} of the {res.N.size} bin counts" in str(ties[0].message)


def test_study_results_print_as_tables():
    res = studies.scaling(models=("NIG",), M=(600,), N=(10, 20), k=(4,), n_mc=32, n_jobs=1, progress=False)
    text = repr(res)
    assert text.startswith("ScalingResult: study 'scaling'") and "stat" in text and "ZMSE" in text
    assert "table=" not in text and "params=" not in text  # not the dataclass fields
    ex = studies.extrapolation("Diffusion_RF", n_boot=20)
    assert "zmse" in repr(ex) and "array(" not in repr(ex)


def test_unknown_study_keyword_is_named():
    with pytest.raises(TypeError, match=r"scaling\(\) got an unexpected keyword argument 'njobs'.*n_jobs"):
        studies.scaling(models=("NIG",), M=(600,), N=(10,), k=(4,), n_mc=8, njobs=1)


# ----------------------------------------------------------------------------------
# files, directories and messages in CLI words
# ----------------------------------------------------------------------------------


def _error(capsys, argv) -> str:
    assert cli.main(argv) == 2
    return capsys.readouterr().err


def test_a_directory_is_not_called_missing(capsys, tmp_path):
    err = _error(capsys, ["validate", str(tmp_path)])
    assert "is a directory" in err and "not found" not in err


def test_ragged_row_names_its_line_and_the_cli_option(capsys, tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("E,u\n1,2\n3\n")
    err = _error(capsys, ["validate", str(p)])
    assert "line 3: 1 fields but the header has 2" in err and "--delimiter" in err
    q = tmp_path / "semi.csv"  # and the option exists: a ';' file read with --delimiter ';'
    q.write_text("E;u\n" + "".join(f"{0.1 * i};{1 + 0.01 * i}\n" for i in range(60)))
    assert cli.main(["stats", str(q), "--delimiter", ";", "--stat", "ZMS", "--boot", "200", "--seed", "1",
                     "--csv"]) == 0
    assert "ZMS" in capsys.readouterr().out


def test_empty_dists_is_an_error(capsys, small_csv):
    err = _error(capsys, ["validate", str(small_csv), "--dists", "", "--stat", "ZMS"])
    assert "--dists is empty" in err


def test_seed_message_in_cli_words(capsys, small_csv):
    err = _error(capsys, ["validate", str(small_csv), "--seed", "-3", "--stat", "ZMS"])
    assert "--seed must be a non-negative integer" in err and "SeedSequence" not in err and "None" not in err
    err = _error(capsys, ["study", "scaling", "--small", "--seed", "-1"])
    assert "--seed must be a non-negative integer" in err and "None" not in err


def test_report_into_a_missing_directory_is_a_clear_error(capsys, tmp_path):
    err = _error(capsys, ["report", "--dataset", "Diffusion_RF", "--out", str(tmp_path / "no" / "x.png")])
    assert "--out: the directory" in err and "does not exist" in err
    err = _error(capsys, ["report", "--dataset", "Diffusion_RF", "--html", str(tmp_path / "no" / "dir")])
    assert "--html: the directory" in err


def test_report_html_failure_leaves_no_partial_directory(capsys, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import sys

    vmod = sys.modules["mcref.verdict._validate"]  # the module (mcref.validate is also the function's name)

    def boom(*a, **k):
        raise RuntimeError("validation failed")

    monkeypatch.setattr(vmod, "validate", boom)  # fails after the figure was drawn
    with pytest.raises(RuntimeError, match="validation failed"):
        cli.main(["report", "--dataset", "Diffusion_RF", "--html", str(tmp_path / "rep"), "--seed", "1"])
    assert not (tmp_path / "rep").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary directory left either


@pytest.mark.parametrize("name", ["Perovskite_LR", "QM9_E", "Diffusion_RF"])
def test_log_axis_tick_labels_do_not_overlap(name):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mcref.plots import plot_lcp, plot_lzms

    ds = mcref.datasets.load(name)
    for plot in (plot_lzms, plot_lcp):
        fig, ax = plt.subplots(figsize=(4.5, 3.5))
        plot(ds.E, ds.u, ax=ax)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        labels = [t for t in ax.xaxis.get_majorticklabels() + ax.xaxis.get_minorticklabels()
                  if t.get_visible() and t.get_text() and ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
        assert labels, "no tick labels on the u axis"
        boxes = sorted((t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0)
        for a, b in zip(boxes, boxes[1:]):
            assert a.x1 <= b.x0 + 0.5, f"{plot.__name__}({name}): tick labels overlap: {[t.get_text() for t in labels]}"
        assert all("10^" not in t.get_text() and "times" not in t.get_text() for t in labels)
        plt.close(fig)


def test_cli_says_a_warning_once(capsys):
    # --shrink: the bins are shrunk for the statistic, the bootstrap and the references: one line
    assert cli.main(["validate", "--dataset", "Diffusion_RF", "--stat", "ENCE", "--bins", "100", "--shrink",
                     "--boot", "200", "--mc", "200", "--seed", "1"]) == 0
    err = capsys.readouterr().err
    assert err.count("n_bins reduced from 100 to 68") == 1, err


def test_cli_leaves_the_callers_warning_settings_alone():
    import warnings as w

    before = (w.showwarning, list(w.filters))
    cli.main(["datasets"])
    assert (w.showwarning, list(w.filters)) == before


# ----------------------------------------------------------------------------------
# validate on small data, and the table's width
# ----------------------------------------------------------------------------------
def _small(m, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    return u * rng.normal(size=m), u


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")  # small B and N_MC keep it fast
# ENCE's 200 bootstrap replicates can all sit above its estimate at M = 500 (its upward bias): the
# percentile fallback and its warning are not what this test is about
@pytest.mark.filterwarnings("ignore::mcref.DegenerateBootstrapWarning")
def test_default_bins_adapt_to_small_data_and_say_so():
    E, u = _small(500)
    tab = mcref.validate(E, u, n_boot=200, n_mc=200, seed=1)
    assert tab.n_bins == 500 // 30 == 16
    assert "bins: N=16, fewer than the default 20" in str(tab)
    ref = mcref.validate(E, u, n_boot=200, n_mc=200, seed=1, n_bins=16)  # the same as asking for 16
    assert [r.estimate for r in tab.rows] == [r.estimate for r in ref.rows]
    with pytest.raises(ValueError, match=r"`n_bins`=20 leaves fewer than `min_count`=30 points per bin"):
        mcref.validate(E, u, n_boot=200, n_mc=200, seed=1, n_bins=20)  # an explicit count may still refuse
    big = mcref.validate(*_small(3000), stats=("ENCE",), n_boot=200, n_mc=200, seed=1)
    assert big.n_bins == 20 and "fewer than the default" not in str(big)


def test_validate_on_tiny_data_warns_and_says_indicative(capsys):
    E, u = _small(5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tab = mcref.validate(E, u, stats=("ZMS", "RCE"), n_boot=200, n_mc=200, seed=1)
    small = [w for w in rec if issubclass(w.category, mcref.SmallSampleWarning)]
    assert len(small) == 1 and "M=5 points" in str(small[0].message)
    assert any(issubclass(w.category, mcref.FewReplicatesWarning) for w in rec)
    assert "indicative only: M=5 points" in str(tab)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="binned statistics .* need at least 30 points"):
        warnings.simplefilter("ignore", mcref.MCRefWarning)
        mcref.validate(E, u, stats=("ENCE",), n_boot=200, n_mc=200, seed=1)


@pytest.mark.parametrize("m", [1, 2])
def test_too_few_points_get_one_message(tmp_path, capsys, m):
    p = tmp_path / "few.csv"
    p.write_text("E,u\n" + "0.1,1.0\n" * m)
    assert cli.main(["validate", str(p), "--stat", "ZMS"]) == 2
    assert f"the dataset must have at least 3 points, got {m}" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")
def test_default_table_fits_100_columns_and_wide_has_every_column():
    ds = mcref.datasets.load("Diffusion_RF")
    tab = mcref.validate(ds.E, ds.u, n_boot=200, n_mc=200, seed=1)
    text = str(tab)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "p[emp]" in text and " test " in text and "finding" in text and "zSim[" not in text
    assert text.splitlines()[1].startswith("joint verdict: ")  # the answer first
    wide = tab.wide_table()
    for d in ("normal", "t(6)", "empirical"):
        assert f"p[{d}]" in wide and f"zSim[{d}]" in wide and f"zSim2[{d}]" in wide
    assert "D-sens" in wide


def test_cli_wide(capsys):
    args = ["validate", "--dataset", "Diffusion_RF", "--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200",
            "--seed", "1"]
    assert cli.main(args) == 0
    narrow = capsys.readouterr().out
    assert cli.main(args + ["--wide"]) == 0
    wide = capsys.readouterr().out
    assert "zSim[normal]" in wide and "zSim[normal]" not in narrow


def test_cli_combine_sets_the_joint_verdicts_combination(capsys):
    args = ["validate", "--dataset", "Diffusion_RF", "--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200",
            "--seed", "1", "--json"]
    assert cli.main(args + ["--combine", "fisher"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["joint"]["combine"] == "fisher"
    assert cli.main(args) == 0
    assert json.loads(capsys.readouterr().out)["joint"]["combine"] == "minp"


def test_validate_says_the_shrunk_bins_once():
    # the bins are resolved once in validate, not again by the bootstrap, the references and the tie check
    import warnings as w

    E, u = _small(900)
    with w.catch_warnings(record=True) as rec:
        w.simplefilter("always")
        tab = mcref.validate(E, u, stats=("ENCE",), n_bins=40, shrink=True, n_boot=200, n_mc=200, seed=1)
    shrunk = [r for r in rec if issubclass(r.category, mcref.ShrunkBinsWarning)]
    assert len(shrunk) == 1 and tab.n_bins == 30
