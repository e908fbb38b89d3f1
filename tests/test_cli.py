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
