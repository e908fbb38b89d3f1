"""The command-line interface: tables, JSON, bad input exits non-zero with a clear message."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mcref.cli import main


def test_stats_dataset_json(capsys):
    assert main(["stats", "--dataset", "Diffusion_RF", "--stat", "ZMS,CC", "--boot", "200", "--seed", "1",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["stat"] for r in rows] == ["ZMS", "CC"]
    assert rows[0]["low"] <= rows[0]["estimate"] <= rows[0]["high"]


def test_stats_file_table(tmp_path, capsys):
    rng = np.random.default_rng(0)
    u = rng.uniform(1, 2, 500)
    E = u * rng.normal(size=500)
    f = tmp_path / "d.csv"
    np.savetxt(f, np.c_[E, u], delimiter=",", header="E,u", comments="")
    assert main(["stats", str(f), "--stat", "ZMS,ENCE", "--bins", "5", "--boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "ZMS" in out and "ENCE" in out and "bca" in out


def test_validate_csv(capsys):
    assert main(["validate", "--dataset", "Diffusion_LR", "--boot", "200", "--mc", "200", "--seed", "0",
                 "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dataset,seed,stat,") and len(lines) == 6
    assert lines[1].startswith("Diffusion_LR,0,ZMS,")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["stats", "--dataset", "NoSuchSet"], "NoSuchSet"),
        (["stats"], "FILE or --dataset"),
        (["stats", "/nonexistent.csv"], "nonexistent"),
        (["stats", "--dataset", "Diffusion_RF", "--stat", "FOO"], "unknown statistic"),
        (["stats", "--dataset", "Diffusion_RF", "--bins", "1000"], "--min-count"),
        (["validate", "--dataset", "Diffusion_RF", "--dists", "t2", "--boot", "10", "--mc", "10"], "ν > 2"),
    ],
)
def test_bad_input_exits_2(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error:") and match in err


def test_demo_stats_only_small(capsys):
    assert main(["demo", "--stats-only", "--boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "QM9_E" in out and "logP_150k_LS-GCN" in out


def test_version(capsys):
    from mcref._version import VERSION

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mcref {VERSION}"


def test_python_dash_m(tmp_path):
    """``python -m mcref`` is the ``mcref`` command."""
    import os
    import subprocess
    import sys

    import mcref
    from mcref._version import VERSION

    root = os.path.dirname(os.path.dirname(os.path.abspath(mcref.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "mcref", "--version"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, check=True)
    assert out.stdout.strip() == f"mcref {VERSION}"
    out = subprocess.run([sys.executable, "-m", "mcref", "datasets"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0 and "QM9_E" in out.stdout


def _long_table(tmp_path):
    """A long table of three models (rows of one model in a block, shuffled), as Parquet."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(5)
    frames = []
    for name, scale in (("good", 1.0), ("small_u", 0.6), ("big_u", 1.5)):
        sigma = rng.uniform(0.5, 2.0, 300)
        y = rng.normal(size=300)
        frames.append(pd.DataFrame({"model": name, "y": y, "pred": y - sigma * rng.normal(size=300),
                                    "sigma": sigma * scale}))
    df = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=1)
    f = tmp_path / "preds.parquet"
    df.to_parquet(f)
    return df, f


BENCH_SMALL = ["--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200", "--bins", "5", "--seed", "7",
               "--backend", "sequential", "--no-progress"]


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_bench_by_equals_python(tmp_path, capsys):
    """``mcref bench FILE --by model`` gives the rows of ``benchmark(FILE, by="model")`` under the same seed."""
    import pandas as pd

    import mcref

    df, f = _long_table(tmp_path)
    out = tmp_path / "cli.csv"
    assert main(["bench", str(f), "--by", "model", "--pred", "pred", "--ref", "y", "--u", "sigma",
                 "--csv", str(out), *BENCH_SMALL]) == 0
    printed = capsys.readouterr().out
    assert "small_u" in printed and "big_u" in printed
    res = mcref.benchmark(f, by="model", pred="pred", ref="y", u="sigma", stats=["ZMS", "ENCE"], n_boot=200,
                          n_mc=200, n_bins=5, seed=7, backend="sequential", progress=False)
    cli = pd.read_csv(out)
    api = res.table.reset_index(drop=True)
    assert sorted(set(cli["dataset"])) == ["big_u", "good", "small_u"]
    key = ["dataset", "stat"]
    cli, api = cli.sort_values(key).reset_index(drop=True), api.sort_values(key).reset_index(drop=True)
    assert cli["verdict"].tolist() == api["verdict"].tolist()
    np.testing.assert_allclose(cli["estimate"], api["estimate"], rtol=1e-12)
    np.testing.assert_allclose(cli["p_test"], api["p_test"], rtol=1e-12)
    assert cli["seed"].tolist() == api["seed"].tolist()


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_bench_pairs(tmp_path, capsys):
    """``--pairs 'A=pred_A:sigma_A,...' --ref y``: one data set per column pair."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    sigma = rng.uniform(0.5, 2.0, 300)
    y = rng.normal(size=300)
    df = pd.DataFrame({"y": y, "pa": y - sigma * rng.normal(size=300), "sa": sigma,
                       "pb": y - sigma * rng.normal(size=300), "sb": 0.5 * sigma})
    f = tmp_path / "wide.csv"
    df.to_csv(f, index=False)
    out = tmp_path / "pairs.csv"
    assert main(["bench", str(f), "--pairs", "A=pa:sa,B=pb:sb", "--ref", "y", "--csv", str(out), *BENCH_SMALL]) == 0
    capsys.readouterr()
    table = pd.read_csv(out)
    assert sorted(set(table["dataset"])) == ["A", "B"]
    assert main(["bench", str(f), "--pairs", "A=pa:sa", "--u", "sa", *BENCH_SMALL]) == 2
    assert "--pairs" in capsys.readouterr().err
    assert main(["bench", str(f), "--by", "nosuch", "--u", "sa", "--E", "pa", *BENCH_SMALL]) == 2
    assert "nosuch" in capsys.readouterr().err


def _predictive_file(tmp_path, suffix=".csv"):
    """A calibrated Gaussian ensemble (10 members s_0..s_9) and its exact quantiles q05, q50, q95."""
    pd = pytest.importorskip("pandas")
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    M = 400
    mu, sd = rng.normal(size=M), rng.uniform(0.5, 2.0, M)
    df = pd.DataFrame({"y": mu + sd * rng.normal(size=M)})
    for j in range(10):
        df[f"s_{j}"] = mu + sd * rng.normal(size=M)
    for t in (0.05, 0.5, 0.95):
        df[f"q{round(t * 100):02d}"] = mu + sd * norm.ppf(t)
    for p in (0.5, 0.9):  # central intervals, 0.9 a little too narrow
        half = sd * norm.ppf(0.5 + p / 2) * (0.8 if p == 0.9 else 1.0)
        df[f"lo{round(p * 100)}"], df[f"hi{round(p * 100)}"] = mu - half, mu + half
    f = tmp_path / f"preds{suffix}"
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
        df.to_parquet(f)
    else:
        df.to_csv(f, index=False)
    return df, f


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_validate_samples_equals_from_samples(tmp_path, capsys):
    """``validate FILE --samples 's_*' --ref y`` prints :func:`mcref.from_samples` of those columns."""
    import mcref

    df, f = _predictive_file(tmp_path, ".parquet")
    opts = ["--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200", "--bins", "5", "--seed", "1", "--swaps", "99"]
    assert main(["validate", str(f), "--samples", "s_*", "--ref", "y", *opts]) == 0
    out = capsys.readouterr().out
    check = mcref.from_samples(df["y"].to_numpy(), df[[f"s_{j}" for j in range(10)]].to_numpy(), name="preds",
                               seed=1, stats=["ZMS", "ENCE"], n_boot=200, n_mc=200, n_bins=5, n_swaps=99)
    assert out.startswith(str(check))
    assert "samples check of preds" in out and "seed: 1" in out
    assert "combined verdict" in out and "99 swapped sets" in out


def test_validate_quantiles(tmp_path, capsys):
    """``--quantiles q05,q50,q95``: levels read from the names, or given by --levels; the same check."""
    import mcref

    df, f = _predictive_file(tmp_path)
    assert main(["validate", str(f), "--quantiles", "q05,q50,q95", "--ref", "y"]) == 0
    out = capsys.readouterr().out
    check = mcref.from_quantiles(df["y"].to_numpy(), df[["q05", "q50", "q95"]].to_numpy(), [0.05, 0.5, 0.95],
                                 name="preds")
    assert out.strip() == str(check)
    assert main(["validate", str(f), "--quantiles", "q05,q50,q95", "--levels", "0.05,0.5,0.95", "--ref", "y"]) == 0
    assert capsys.readouterr().out.strip() == str(check)


def test_validate_intervals_equals_from_intervals(tmp_path, capsys):
    """``--intervals lo50:hi50,lo90:hi90`` (issue 34): levels read from the names or given by
    --levels; the text, JSON and CSV of :func:`mcref.from_intervals` of those columns."""
    import mcref

    df, f = _predictive_file(tmp_path)
    y = df["y"].to_numpy()
    check = mcref.from_intervals(y, df[["lo50", "lo90"]].to_numpy(), df[["hi50", "hi90"]].to_numpy(), [0.5, 0.9],
                                 name="preds")
    assert main(["validate", str(f), "--intervals", "lo50:hi50,lo90:hi90", "--ref", "y"]) == 0
    assert capsys.readouterr().out.strip() == str(check)
    argv = ["validate", str(f), "--intervals", "lo50:hi50, lo90:hi90", "--levels", "0.5,0.9", "--ref", "y", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["form"] == "intervals" and doc["verdict"] == check.verdict and doc["seed"] is None
    assert [r["observed"] for r in doc["coverage"]] == [r.observed for r in check.coverage]
    assert main(["validate", str(f), "--intervals", "lo50:hi50,lo90:hi90", "--ref", "y", "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dataset,seed,form,M,verdict,coverage_verdict,kind,level,")
    assert [ln.split(",")[7] for ln in lines[1:]] == ["0.5", "0.9"]


@pytest.mark.filterwarnings("ignore::mcref.core._warnings.FewReplicatesWarning")
def test_validate_samples_and_quantiles_give_json_and_csv(tmp_path, capsys):
    """--samples and --quantiles print JSON and CSV like validate (issue 34): the seed, the
    check's verdicts and rows, and for --samples the validation table of (E, u) inside the JSON."""
    import mcref

    df, f = _predictive_file(tmp_path)
    opts = ["--stat", "ZMS,ENCE", "--boot", "200", "--mc", "200", "--bins", "5", "--seed", "3"]
    assert main(["validate", str(f), "--samples", "s_*", "--ref", "y", *opts, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    check = mcref.from_samples(df["y"].to_numpy(), df[[f"s_{j}" for j in range(10)]].to_numpy(), name="preds",
                               seed=3, stats=["ZMS", "ENCE"], n_boot=200, n_mc=200, n_bins=5)
    assert doc["seed"] == 3 and doc["verdict"] == check.verdict and doc["ks_pvalue"] == check.ks_pvalue
    assert [r["stat"] for r in doc["validation"]["rows"]] == ["ZMS", "ENCE"]
    assert doc["validation"]["rows"][1]["estimate"] == check.validation["ENCE"].estimate
    assert main(["validate", str(f), "--samples", "s_*", "--ref", "y", *opts, "--csv"]) == 0
    out = capsys.readouterr().out
    assert out == check.to_csv() and out.splitlines()[1].startswith("preds,3,samples,400,")
    assert main(["validate", str(f), "--quantiles", "q05,q50,q95", "--ref", "y", "--csv"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 3 + 1  # header, three levels, one central pair


def test_interval_level_from_name():
    from mcref.cli._predictive import name_level

    assert [name_level(n) for n in ("lo90", "hi_95", "upper0.5", "lower_0.9", "lo5", "lo", "sigma2x")] == \
        [0.9, 0.95, 0.5, 0.9, 0.5, None, None]


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--intervals", "lo50,hi50", "--ref", "y"], "LOWER:UPPER column pairs"),
        (["--intervals", "lo50:hi90", "--ref", "y"], "give --levels"),
        (["--intervals", "lo50:hi50,lo90:nohi", "--ref", "y"], "--intervals: no column 'nohi'"),
        (["--intervals", "hi50:lo50", "--ref", "y"], "must not exceed"),
        (["--intervals", "lo50:hi50", "--levels", "0.5,0.9", "--ref", "y"], "--levels: 2 levels for 1"),
        (["--samples", "z_*", "--ref", "y"], "--samples: no column"),
        (["--samples", "s_0", "--ref", "y"], "2 or more"),
        (["--samples", "s_*"], "--ref"),
        (["--samples", "s_*", "--ref", "nosuch"], "--ref: no column 'nosuch'"),
        (["--samples", "s_*", "--ref", "y", "--u", "s_0"], "--u is not used"),
        (["--samples", "s_*", "--ref", "y", "--swaps", "5"], "`n_swaps` must be an integer >= 19, got 5"),
        (["--quantiles", "q05,q50,q95", "--ref", "y", "--swaps", "99"], "--swaps goes with --samples"),
        (["--quantiles", "q95,q50,q05", "--levels", "0.05,0.5,0.95", "--ref", "y"], "non-decreasing"),
        (["--quantiles", "q05,q50,q95", "--levels", "0.05,0.5,1.5", "--ref", "y"], "(0, 1)"),
        (["--quantiles", "q05,q50", "--levels", "0.05,0.5,0.95", "--ref", "y"], "--levels: 3 levels for 2"),
        (["--quantiles", "q05,y", "--ref", "y"], "give --levels"),
        (["--quantiles", "q05,q99", "--ref", "y"], "--quantiles: no column 'q99'"),
    ],
)
def test_validate_predictive_bad_input(tmp_path, capsys, extra, match):
    _, f = _predictive_file(tmp_path)
    assert main(["validate", str(f), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcref: error:") and match in err, err


def test_quantile_level_from_name():
    from mcref.cli._predictive import quantile_level

    assert [quantile_level(n) for n in ("q05", "q5", "q50", "q975", "q_0.9", "Q95", "sigma")] == \
        [0.05, 0.5, 0.5, 0.975, 0.9, 0.95, None]
