"""read_posterior: long tables (CSV, Parquet, DataFrame), arrays and ArviZ against the arrays they
were written from; each error message; the ``mcref posterior`` command on a small file."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from mcref.posterior import read_posterior

pd = pytest.importorskip("pandas")

N, S, D = 6, 7, 3
NAMES = ["mu", "log_sigma", "beta"]


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    return rng.normal(size=(N, D)), rng.normal(size=(N, S, D))


def _frames(truth, draws, *, shuffle=True, cases=None):
    cases = cases or [f"sim{i}" for i in range(len(truth))]
    t = pd.DataFrame({"case": cases, **{n: truth[:, j] for j, n in enumerate(NAMES)}})
    rows = [(cases[i], s, *draws[i, s]) for i in range(draws.shape[0]) for s in range(draws.shape[1])]
    if shuffle:  # the reader orders by case (the truth's order) and draw, not by the file's rows
        random.Random(1).shuffle(rows)
    return t, pd.DataFrame(rows, columns=["case", "draw", *NAMES])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "frame", "mixed"])
def test_long_table_round_trip(tmp_path, arrays, fmt):
    truth, draws = arrays
    t, d = _frames(truth, draws)
    if fmt == "frame":
        a, b = t, d
    else:
        pytest.importorskip("pyarrow")
        t.to_csv(tmp_path / "t.csv", index=False)
        d.to_csv(tmp_path / "d.csv", index=False)
        t.to_parquet(tmp_path / "t.parquet")
        d.to_parquet(tmp_path / "d.parquet")
        a, b = {"csv": ("t.csv", "d.csv"), "parquet": ("t.parquet", "d.parquet"),
                "mixed": ("t.csv", "d.parquet")}[fmt]
        a, b = tmp_path / a, tmp_path / b
    got_t, got_d, names = read_posterior(a, b)
    assert names == NAMES
    np.testing.assert_array_equal(got_t, truth)  # CSV floats written by repr read back exactly
    np.testing.assert_array_equal(got_d, draws)


def test_integer_cases_and_params_subset_and_file_order(tmp_path, arrays):
    truth, draws = arrays
    t, d = _frames(truth, draws, shuffle=False, cases=list(range(10, 10 + N)))
    t = t.iloc[::-1]  # the truth's order is the order of the cases
    got_t, got_d, names = read_posterior(t, d.drop(columns="draw"), draw=None, params="beta,mu")
    assert names == ["beta", "mu"]
    np.testing.assert_array_equal(got_t, truth[::-1][:, [2, 0]])
    np.testing.assert_array_equal(got_d, draws[::-1][:, :, [2, 0]])


def test_arrays_and_npy(tmp_path, arrays):
    truth, draws = arrays
    np.save(tmp_path / "t.npy", truth)
    np.save(tmp_path / "d.npy", draws)
    got_t, got_d, names = read_posterior(tmp_path / "t.npy", tmp_path / "d.npy")
    assert names == ["theta_0", "theta_1", "theta_2"]
    np.testing.assert_array_equal(got_d, draws)
    one_t, one_d, _ = read_posterior(truth[:, 0], draws[:, :, 0])  # one parameter: (N,) and (N, S)
    assert one_t.shape == (N, 1) and one_d.shape == (N, S, 1)


def test_arviz(arrays):
    az = pytest.importorskip("arviz")
    truth, draws = arrays
    cases = [f"sim{i}" for i in range(N)]
    # chains × draws = 1 × S, the case dimension after them (ArviZ's layout: chain, draw, *shape)
    post = {n: draws[:, :, j].T.reshape(1, S, N) for j, n in enumerate(NAMES)}
    idata = az.from_dict(posterior=post, dims={n: ["case"] for n in NAMES}, coords={"case": cases})
    t, _ = _frames(truth, draws)
    got_t, got_d, names = read_posterior(t.iloc[::-1], idata)
    assert names == NAMES
    np.testing.assert_array_equal(got_t, truth[::-1])
    np.testing.assert_array_equal(got_d, draws[::-1])
    per_case = [az.from_dict(posterior={"theta": draws[i].reshape(1, S, D)}) for i in range(N)]
    got_t, got_d, names = read_posterior(truth, per_case)
    assert names == ["theta[0]", "theta[1]", "theta[2]"]
    np.testing.assert_array_equal(got_d, draws)
    with pytest.raises(ValueError, match="no case dimension 'sim'"):
        read_posterior(truth, idata, case="sim")


def test_errors(arrays):
    truth, draws = arrays
    t, d = _frames(truth, draws)
    with pytest.raises(ValueError, match=r"`draws`: `case` names column 'run', which is missing; available"):
        read_posterior(t, d, case="run")
    with pytest.raises(ValueError, match=r"`truth` \(the parameter columns of the draws\): `params` names column "
                                         r"'beta', which is missing"):
        read_posterior(t.drop(columns="beta"), d)
    with pytest.raises(ValueError, match=r"pass draw=None"):
        read_posterior(t, d.drop(columns="draw"))
    with pytest.raises(ValueError, match=r"ragged draws: case 'sim0' has 7 draws, case 'sim2' has 6"):
        read_posterior(t, d[~((d.case == "sim2") & (d.draw == 3))])
    with pytest.raises(ValueError, match=r"`truth`: 1 case\(s\) have no draws, e.g. 'sim4'"):
        read_posterior(t, d[d.case != "sim4"])
    with pytest.raises(ValueError, match=r"`draws`: 1 case\(s\) have no row in the truth, e.g. 'sim5'"):
        read_posterior(t[t.case != "sim5"], d)
    with pytest.raises(ValueError, match=r"`truth`: case 'sim1' appears twice"):
        read_posterior(pd.concat([t, t.iloc[[1]]]), d)
    dup = d.copy()
    dup.loc[(dup.case == "sim3") & (dup.draw == 2), "draw"] = 4
    with pytest.raises(ValueError, match=r"case 'sim3' has draw 4 twice"):
        read_posterior(t, dup)
    bad = d.copy()
    bad["mu"] = bad["mu"].where(bad.index != 5, np.nan)
    with pytest.raises(ValueError, match=r"`draws`: column 'mu'"):
        read_posterior(t, bad)
    with pytest.raises(ValueError, match=r"`draws` must be an array of shape \(N, S, d\), got shape \(6,\)"):
        read_posterior(truth, draws[:, 0, 0])
    with pytest.raises(ValueError, match=r"`truth` of shape \(5, 3\) and `draws` of shape \(6, 7, 3\) disagree"):
        read_posterior(truth[:5], draws)
    with pytest.raises(ValueError, match=r"`truth` must be a table \(one row per case\) when `draws` is a long"):
        read_posterior(truth, d)
    with pytest.raises(ValueError, match=r"`params` names 2 parameters; the draws have d = 3"):
        read_posterior(truth, draws, params=["a", "b"])
    with pytest.raises(ValueError, match=r"`draws`: `path`: file not found"):
        read_posterior(t, "no_such_file.csv")


def test_cli_posterior(tmp_path, capsys, arrays):
    from mcref.cli import main
    from mcref.posterior import from_posterior

    rng = np.random.default_rng(3)
    truth = rng.normal(size=(30, 2))
    draws = rng.normal(size=(30, 20, 2))
    t, d = _frames(np.column_stack([truth, truth[:, 0]]), np.concatenate([draws, draws[:, :, :1]], axis=2))
    t.to_csv(tmp_path / "t.csv", index=False)
    d.to_csv(tmp_path / "d.csv", index=False)
    args = [str(tmp_path / "t.csv"), str(tmp_path / "d.csv"), "--params", "mu,log_sigma", "--swaps", "19"]
    assert main(["posterior", *args, "--seed", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = json.loads(from_posterior(truth, draws, names=["mu", "log_sigma"], n_swaps=19, seed=5).to_json())
    assert out == want  # the command is the public API on the files' arrays, nothing more
    assert main(["posterior", *args, "--seed", "5"]) == 0
    text = capsys.readouterr().out
    assert "seed: 5 (--seed 5 repeats this run)" in text
    pytest.importorskip("matplotlib")
    assert main(["posterior", *args, "--seed", "5", "--out", str(tmp_path / "fig.png")]) == 0
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["posterior", str(tmp_path / "t.csv"), str(tmp_path / "d.csv"), "--params", "mu,nope"]) == 2
    assert "'nope', which is missing" in capsys.readouterr().err
    assert main(["posterior", *args[:4], "--swaps", "5"]) == 2  # the check's own rule: at least 19
    assert "must be an integer >= 19, got 5" in capsys.readouterr().err
