"""What a new user hit (issue: interrupts, small files, silent nonsense, unexplained output):
one test per item. The Ctrl-C tests are in tests/test_interrupts.py."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import mcref
from mcref import cli
from mcref.stats import prepare, straddling_ties, tie_spread


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 3000)
    return u * rng.standard_normal(u.size), u


# ----------------------------------------------------------------------------------
# silent nonsense
# ----------------------------------------------------------------------------------


def test_tiny_n_boot_refused_for_bca_and_for_verdicts(data):
    E, u = data
    with pytest.raises(ValueError, match=r"`n_boot`=2 is too few for a BCa interval.*1000"):
        mcref.bootstrap("ZMS", E, u, n_boot=2)
    r = mcref.bootstrap("ZMS", E, u, n_boot=2, method="percentile", seed=1)  # exploration stays possible
    assert r.n_boot == 2
    with pytest.raises(ValueError, match=r"`n_boot`=1 and `n_mc`=10: too few for a verdict"):
        mcref.validate(E, u, n_boot=1, n_mc=10)
    with pytest.warns(mcref.FewReplicatesWarning, match="indicative"):
        tab = mcref.validate(E, u, stats="ZMS", n_boot=300, n_mc=300, seed=1)
    assert "indicative only: B=300, N_MC=300" in str(tab)


def test_n_mc_of_one_refused(data):
    _, u = data
    with pytest.raises(ValueError, match="`n_mc` must be an integer >= 2"):
        mcref.simulated_reference("ZMS", u, n_mc=1)


def test_validate_accepts_a_single_statistic_name(data):
    E, u = data
    tab = mcref.validate(E, u, stats="ZMS", n_boot=1000, n_mc=1000, seed=2)
    assert [r.name for r in tab.rows] == ["ZMS"]
    assert "bins" not in str(tab).splitlines()[0]  # no binned statistic: no "N=… bins"


def _tied(seed=0):
    """u with 6 values, 500 points each: with 20 equal-count bins of 150, tie runs straddle cuts."""
    rng = np.random.default_rng(seed)
    u = np.repeat([0.5, 0.8, 1.0, 1.3, 1.7, 2.0], 500)
    return u * rng.standard_normal(u.size), u


def test_straddling_ties_counted_exactly():
    E, u = _tied()
    prep = prepare(E, u, 20)
    # cuts at 150, 300, …, 2850; runs [0,500), [500,1000), …: every run holds cuts strictly inside
    # ([0,500) holds 150, 300, 450; [500,1000) holds 600, 750, 900; …): all 6 runs straddle
    assert straddling_ties(prep) == 6
    prep10 = prepare(E, u, 6)  # cuts at 500, 1000, …: on the run boundaries, none inside
    assert straddling_ties(prep10) == 0


def test_tie_order_warning_and_spread():
    E, u = _tied()
    with pytest.warns(mcref.TieOrderWarning, match="6 run\\(s\\) of equal u straddle a bin cut"):
        est = mcref.statistic("ENCE", E, u)
    ts = tie_spread("ENCE", E, u, n_orders=200, seed=1)
    assert ts.estimate == est and ts.n_straddling == 6 and ts.low < ts.high
    # the tie-averaged value: the mean over independent random row orders, within 4 standard errors
    rng = np.random.default_rng(9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.TieOrderWarning)
        vals = [mcref.statistic("ENCE", E[p], u[p]) for p in (rng.permutation(u.size) for _ in range(200))]
    se = np.hypot(np.std(vals) / np.sqrt(200), ts.sd / np.sqrt(200))
    assert abs(np.mean(vals) - ts.mean) < 4 * se
    # no straddling run: no warning, no spread
    with warnings.catch_warnings():
        warnings.simplefilter("error", mcref.TieOrderWarning)
        mcref.statistic("ENCE", E, u, n_bins=6, min_count=30)
    flat = tie_spread("ENCE", E, u, n_bins=6)
    assert flat.n_straddling == 0 and flat.low == flat.high == flat.estimate



@pytest.mark.parametrize("name, n_bins", [("ENCE", 20), ("ZMSE", 7), ("UCE", 13)])
def test_tie_spread_orders_are_the_statistic_on_those_orders(name, n_bins):
    """Each order of tie_spread is the statistic on the rows put in that order: the order that the
    same state emits (split_ties, emit=True; all multiplicities 1, so the walk is the u-sorted
    rows), evaluated by mcref.statistic on the reordered arrays (its stable sort keeps the order)."""
    from mcref.kernels.bootstrap import split_ties, tie_orders_kernel
    from mcref.kernels.rng import chunk_states

    E, u = _tied(2)
    E = E * np.random.default_rng(3).uniform(0.5, 2.0, E.size)  # not the same E² in every run
    prep = prepare(E, u, n_bins)
    n, m = 25, u.size
    states = chunk_states(np.random.SeedSequence(5), n)
    vals = np.empty(n)
    tie_orders_kernel(mcref.stats.info(name).code, states, prep.tie_groups, prep.starts, prep.u2, prep.E2, prep.z2,
                      vals)
    ones, dummy = np.ones(m, dtype=np.uint32), np.empty(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.TieOrderWarning)
        for k in range(n):
            row = np.arange(m + 1)
            split_ties(states[k].copy(), ones, np.arange(m + 1), prep.tie_groups, prep.starts, dummy, dummy,
                       np.empty(n_bins + 1, dtype=np.int64), np.zeros((n_bins + 1, 2)), True, row)
            order = prep.order[row[:m]]
            assert sorted(order) == list(range(m)) and np.all(np.diff(u[order]) >= 0)
            assert vals[k] == pytest.approx(mcref.statistic(name, E[order], u[order], n_bins=n_bins), rel=1e-12)
    if name != "UCE":  # UCE, Σ n_b|MV_b − MSE_b|/n, is linear in the bin sums here (no bin changes sign)
        assert np.unique(vals).size > n // 2  # the orders differ
    ts = tie_spread(name, E, u, n_orders=n, n_bins=n_bins, seed=np.random.SeedSequence(5))
    assert (ts.low, ts.high, ts.mean) == (vals.min(), vals.max(), vals.mean())

def test_validate_reports_the_tie_range():
    E, u = _tied(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.TieOrderWarning)
        tab = mcref.validate(E, u, stats=["ZMS", "ENCE"], dists=["normal"], n_boot=1000, n_mc=1000, seed=3)
    lo, hi = tab["ENCE"].tie_range
    assert lo <= tab["ENCE"].estimate <= hi and lo < hi
    assert tab["ZMS"].tie_range is None
    assert "ENCE: tied u straddle bin cuts" in str(tab)
    assert tab.to_frame().loc["ENCE", "tie_low"] == lo


def test_constant_u_refused_for_binned_statistics(data):
    E, _ = data
    u = np.ones_like(E)
    with pytest.raises(ValueError, match="all uncertainties are equal.*homoscedastic"):
        mcref.statistic("ENCE", E, u)
    assert mcref.statistic("ZMS", E, u) == pytest.approx(np.mean(E**2))


@pytest.mark.parametrize("scale, what", [(1e-300, "too small"), (1e300, "too large"), (1e-160, "too small"),
                                         (1e160, "too large")])
def test_overflow_and_underflow_say_rescale(data, scale, what):
    E, u = data
    with pytest.raises(ValueError, match=f"{what}.*rescale E and u by the same factor"):
        mcref.statistic("RCE", E * scale, u * scale)


def test_rescaled_data_within_range_give_the_same_statistics(data):
    E, u = data
    for scale in (1e-150, 1e150):
        assert mcref.statistic("RCE", E * scale, u * scale) == pytest.approx(mcref.statistic("RCE", E, u),
                                                                             rel=1e-12)


def test_t_close_to_two_warns():
    with pytest.warns(mcref.SlowConvergenceWarning, match="ν = 2.0001 < 3"):
        mcref.get_distribution("t(2.0001)")
    with warnings.catch_warnings():
        warnings.simplefilter("error", mcref.SlowConvergenceWarning)
        mcref.get_distribution("t(3)")


# ----------------------------------------------------------------------------------
# the CLI
# ----------------------------------------------------------------------------------


def test_cli_min_count_and_shrink(capsys):
    assert cli.main(["stats", "--dataset", "Diffusion_RF", "--stat", "ENCE", "--bins", "100", "--boot", "200"]) == 2
    err = capsys.readouterr().err
    assert "pass --shrink" in err and "--min-count" in err and "`" not in err
    assert cli.main(["stats", "--dataset", "Diffusion_RF", "--stat", "ENCE", "--bins", "100", "--shrink",
                     "--boot", "200", "--seed", "1", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)[0]["stat"] == "ENCE"
    assert "mcref: warning: n_bins reduced from 100 to 68" in out.err
    assert cli.main(["stats", "--dataset", "Diffusion_RF", "--stat", "ENCE", "--bins", "100", "--min-count",
                     "20", "--boot", "200", "--seed", "1", "--json"]) == 0


def test_cli_errors_in_cli_words(capsys, tmp_path):
    assert cli.main(["stats", "--dataset", "NOPE"]) == 2
    assert "--dataset must be one of" in capsys.readouterr().err
    f = tmp_path / "x.csv"
    f.write_text("err,sig\n1,2\n3,4\n")
    assert cli.main(["stats", str(f)]) == 2
    err = capsys.readouterr().err
    assert "pass --E COLUMN" in err and "`E=`" not in err


def test_cli_csv_json_and_conflict(capsys):
    assert cli.main(["stats", "--dataset", "Diffusion_RF", "--stat", "ZMS,RCE", "--boot", "200", "--seed", "4",
                     "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dataset,stat,estimate") and lines[0].endswith(",seed") and len(lines) == 3
    with pytest.raises(SystemExit) as exc:
        cli.main(["stats", "--dataset", "Diffusion_RF", "--json", "--csv"])
    assert exc.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_cli_records_an_os_drawn_seed_that_reproduces_the_run(capsys):
    args = ["stats", "--dataset", "Diffusion_RF", "--stat", "ZMS", "--boot", "200", "--json"]
    assert cli.main(args) == 0
    first = json.loads(capsys.readouterr().out)
    seed = first[0]["seed"]
    assert isinstance(seed, int) and seed > 2**32  # drawn from the OS, 128 bits
    assert cli.main([*args, "--seed", str(seed)]) == 0
    assert json.loads(capsys.readouterr().out) == first
    assert cli.main(["validate", "--dataset", "Diffusion_RF", "--stat", "ZMS", "--boot", "200", "--mc", "200",
                     "--dists", "normal"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "seed=" in head and "bins" not in head


def test_cli_table_is_explained(capsys):
    assert cli.main(["validate", "--dataset", "QM9_E", "--stat", "ZMS,RCE,ENCE", "--boot", "200", "--mc", "200",
                     "--dists", "normal", "--seed", "1", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "legend:" in out and "zSim2[D]" in out and "D-sens" in out
    assert "u2=0.933 (fails, threshold 0.6)" in out and "(<= 0.6)" not in out
    assert "unreliable (RCE): the shape screen fails" in out
    assert "ENCE: tied u straddle bin cuts" in out
    assert all(line == line.rstrip() for line in out.splitlines())


def test_demo_help_describes_every_flag(capsys):
    with pytest.raises(SystemExit):
        cli.main(["demo", "--help"])
    out = capsys.readouterr().out
    for flag, words in (("--boot", "bootstrap replicates"), ("--mc", "Monte Carlo repeats"), ("--seed", "seed")):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(flag))
        assert words in line


def test_cli_broken_pipe_is_quiet():
    cmd = (f"{sys.executable} -m mcref.cli validate --dataset Diffusion_RF --stat ZMS,ENCE --boot 200 --mc 200 "
           "--dists normal --seed 1 --explain | head -n 1")
    res = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert res.stdout.startswith("Diffusion_RF: M=2040")
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr


# ----------------------------------------------------------------------------------
# CSV files
# ----------------------------------------------------------------------------------


def test_csv_comment_lines_are_skipped(tmp_path):
    f = tmp_path / "c.csv"
    f.write_text("# exported by a tool\n# units: eV\nE,u\n0.1,0.2\n# a note\n-0.3,0.4\n")
    ds = mcref.datasets.from_file(f)
    assert ds.E.tolist() == [0.1, -0.3] and ds.u.tolist() == [0.2, 0.4]


def test_empty_optional_x_column_does_not_abort(tmp_path):
    f = tmp_path / "x.csv"
    f.write_text("E,u,x\n0.1,0.2,\n-0.3,0.4,\n")
    with pytest.warns(UserWarning, match="loaded without x"):
        ds = mcref.datasets.from_file(f)
    assert ds.x is None and ds.M == 2
    with pytest.raises(ValueError):
        mcref.datasets.from_file(f, x="x")  # asked for: an error
