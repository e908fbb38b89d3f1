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


@pytest.mark.filterwarnings("ignore::mcref._warnings.FewReplicatesWarning")
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


@pytest.mark.filterwarnings("ignore::mcref._warnings.FewReplicatesWarning")
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
