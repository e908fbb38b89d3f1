"""Progress bars (mcref.core._progress): when they are shown, what they say, and that they change
nothing in the results; the batch loops of mcref.parallel that drive them. Ctrl-C in every
phase is tested in tests/test_interrupts.py."""

from __future__ import annotations

import importlib
import os
import select
import subprocess
import sys
import threading

import numpy as np
import pytest

import mcref
from mcref import parallel
from mcref.core import _progress
from mcref.stats import info, prepare

from conftest import calibrated

BS = importlib.import_module("mcref.resampling._bootstrap")  # the module (mcref.bootstrap is also the function)

# the default rule (conditional) simulates the permutation D and the fitted t besides the listed D
PHASES = ("bootstrap", "references normal, t(6), empirical, permutation")


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN (bit-identical floats compare equal)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.ndarray)):
        return np.array_equal(a, b, equal_nan=True)
    return a == b


@pytest.fixture(scope="module")
def data():
    return calibrated(600, 3, "lognormal")


# ----------------------------------------------------------------------------------
# arguments
# ----------------------------------------------------------------------------------

CALLS = {
    "validate": lambda E, u, p: mcref.validate(E, u, n_boot=100, n_mc=100, progress=p),
    "bootstrap": lambda E, u, p: mcref.bootstrap("ZMS", E, u, progress=p),
    "bootstrap_many": lambda E, u, p: mcref.bootstrap_many(["ZMS"], E, u, progress=p),
    "simulate": lambda E, u, p: mcref.simulate(["ZMS"], u, progress=p),
    "simulated_reference": lambda E, u, p: mcref.simulated_reference("ZMS", u, progress=p),
    "distfit": lambda E, u, p: mcref.distfit(E, u, progress=p),
}


@pytest.mark.parametrize("func", list(CALLS))
@pytest.mark.parametrize("bad", ["yes", 1, 0.5, "auto"])
def test_bad_progress_is_refused(func, bad, data):
    with pytest.raises(ValueError, match=r"^`progress` must be None \(auto: a progress bar on a terminal when the "
                                         r"call is expected to take more than a few seconds\), True \(always\) or "
                                         r"False \(never\); got "):
        CALLS[func](*data, bad)


def test_check_progress_normalises():
    from mcref.core._checks import check_progress

    assert check_progress(None) is None
    assert check_progress(True) is True and check_progress(np.bool_(False)) is False


# ----------------------------------------------------------------------------------
# the decision
# ----------------------------------------------------------------------------------


def test_auto_is_off_without_a_terminal_and_forced_on_or_off():
    # pytest captures stderr: not a terminal
    with _progress.session(None, seconds=1e6) as s:
        assert not s.show
    with _progress.session(True, seconds=0.0) as s:
        assert s.show
    with _progress.session(False, seconds=1e6) as s:
        assert not s.show


def test_auto_needs_a_terminal_a_long_call_the_main_thread_and_no_other_bar(monkeypatch):
    from tqdm import tqdm

    monkeypatch.setattr(_progress, "_stderr_is_terminal", lambda: True)
    assert _progress._auto(2.0 * _progress.AUTO_SECONDS)
    assert not _progress._auto(0.5 * _progress.AUTO_SECONDS)
    shown = []
    th = threading.Thread(target=lambda: shown.append(_progress._auto(1e6)))
    th.start()
    th.join()
    assert shown == [False]  # e.g. a study cell on the threading backend
    with tqdm(total=1, disable=False, file=open(os.devnull, "w")):  # the caller's (or a study's) bar
        assert not _progress._auto(1e6)


def test_nested_calls_join_the_open_session_and_default_sets_the_setting():
    with _progress.session(True) as outer:
        with _progress.session(False) as inner:  # validate -> bootstrap_many: the outer call decided
            assert inner is outer and inner.show
    with _progress.default(True):
        with _progress.session(None, seconds=0.0) as s:
            assert s.show
        with _progress.session(False) as s:  # an explicit argument wins over the default
            assert not s.show
    with _progress.default(False):
        with _progress.session(None, seconds=1e6) as s:
            assert not s.show
    with pytest.raises(ValueError, match="`progress` must be None"):
        with _progress.default("on"):
            pass


def test_estimate_seconds_sums_the_work():
    t = _progress.estimate_seconds(bootstrap=1e9, references=1e8)
    assert t == pytest.approx((_progress.COST_NS["bootstrap"] * 1e9 + _progress.COST_NS["references"] * 1e8) * 1e-9)


# ----------------------------------------------------------------------------------
# what is shown, and that it changes nothing
# ----------------------------------------------------------------------------------


def test_validate_names_its_phases_and_gives_the_same_table(data, capsys):
    E, u = data
    kw = dict(n_boot=200, n_mc=200, seed=5)
    with pytest.warns(mcref.FewReplicatesWarning):
        off = mcref.validate(E, u, progress=False, **kw)
    assert capsys.readouterr().err == ""
    with pytest.warns(mcref.FewReplicatesWarning):
        on = mcref.validate(E, u, progress=True, **kw)
    err = capsys.readouterr().err
    for phase in PHASES:
        assert f"{phase}: 100%" in err, err
    assert on.to_json() == off.to_json()
    for a, b in zip(on.rows, off.rows):
        assert _same(a.flat(), b.flat())


@pytest.mark.filterwarnings("ignore::mcref.MCRefWarning")  # small B on calibrated data: BCa warnings are expected
def test_bootstrap_and_simulation_are_bit_identical_with_and_without_bars(data, capsys):
    E, u = data
    names = ["ZMS", "CC", "ENCE"]
    for binning in ("equal", "adaptive"):  # the kernel in batches; the re-binned NumPy loop
        off = mcref.bootstrap_many(names, E, u, n_boot=130, n_bins=5, seed=2, binning=binning, progress=False)
        on = mcref.bootstrap_many(names, E, u, n_boot=130, n_bins=5, seed=2, binning=binning, progress=True)
        for n in names:
            assert np.array_equal(on[n].distribution, off[n].distribution)
            assert _same(on[n].confidence_interval, off[n].confidence_interval)
            assert on[n].acceleration == off[n].acceleration
    err = capsys.readouterr().err
    assert "bootstrap: 100%" in err and "jackknife ENCE: 100%" in err and "jackknife CC" not in err  # CC: O(M log M)
    for n_threads in (1, 3):
        on = mcref.simulate(["CC", "ZMSE"], u, dists=["normal", "t6"], n_mc=100, n_bins=5, seed=4,
                            n_threads=n_threads, progress=True)
        off = mcref.simulate(["CC", "ZMSE"], u, dists=["normal", "t6"], n_mc=100, n_bins=5, seed=4, progress=False)
        assert np.array_equal(on.samples, off.samples)
    assert "references normal, t(6): 100%" in capsys.readouterr().err
    on = mcref.simulated_reference("ZMS", u, n_mc=64, seed=1, keep_samples=True, progress=True)
    off = mcref.simulated_reference("ZMS", u, n_mc=64, seed=1, keep_samples=True)
    assert np.array_equal(on.samples, off.samples)


def test_distfit_bar_and_same_fit(data, capsys):
    E, u = data
    on = mcref.distfit(E, u, n_boot=6, seed=1, progress=True)
    assert "distfit bootstrap: 100%" in capsys.readouterr().err
    off = mcref.distfit(E, u, n_boot=6, seed=1, progress=False)
    assert _same(on.as_dict(), off.as_dict()) and _same(on.ci, off.ci)


@pytest.mark.parametrize("name, binning", [("CC", "equal"), ("ENCE", "adaptive")])
def test_quadratic_jackknife_in_batches_equals_one_call(name, binning, monkeypatch):
    """Cut into many batches (tiny BATCH_WORK) or run as one, the O(M²) jackknife gives the same bits."""
    E, u = calibrated(500, 7, "lognormal")
    prep = prepare(E, u, 5, min_count=30, binning=binning)
    monkeypatch.setattr(parallel, "BATCH_WORK", 1e15)
    one = BS.jackknife(info(name), prep)
    monkeypatch.setattr(parallel, "BATCH_WORK", 1.0)
    calls = []
    many = BS.jackknife(info(name), prep, progress=_progress.Session(False))
    assert np.array_equal(one, many)
    batches = list(parallel.batch_ranges(500, 500.0, progress=calls.append))
    assert len(batches) > 10 and calls == [b[1] for b in batches]


# ----------------------------------------------------------------------------------
# the loops that drive the bars
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n_threads", [1, 3])
def test_map_chunks_reports_done_chunks_in_the_calling_thread(n_threads):
    seen, where = [], set()

    def progress(done):
        seen.append(done)
        where.add(threading.current_thread() is threading.main_thread())

    out = np.zeros(40)

    def work(c, t):
        out[c] = c

    parallel.map_chunks(work, 40, n_threads, progress=progress)
    assert seen and seen[-1] == 40 and seen == sorted(seen) and where == {True}
    assert np.array_equal(out, np.arange(40))


def test_checkpoint_ends_a_stopped_chunk_early():
    steps = []

    def work(c, t):
        if c == 1:
            raise RuntimeError("boom")
        for k in range(200):  # a long chunk made of steps
            parallel.checkpoint()
            steps.append(k)
            threading.Event().wait(0.005)

    with pytest.raises(RuntimeError, match="boom"):
        parallel.map_chunks(work, 2, 2)
    assert len(steps) < 200  # chunk 0 stopped at a checkpoint after chunk 1 failed
    parallel.checkpoint()  # outside a run: a no-op


# ----------------------------------------------------------------------------------
# the command line: a terminal shows the bar, a pipe does not (auto)
# ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_csv(tmp_path_factory):
    """A file whose `stats --stat ZMS` bootstrap is estimated above the auto threshold."""
    rng = np.random.default_rng(1)
    u = rng.lognormal(0.0, 0.5, 20_000)
    path = tmp_path_factory.mktemp("prog") / "long.csv"
    np.savetxt(path, np.c_[u * rng.standard_normal(u.size), u], delimiter=",", header="E,u", comments="",
               fmt="%.10g")
    return str(path)


STATS_ARGS = ["--stat", "ZMS", "--boot", "20000", "--method", "percentile", "--seed", "1"]


def test_the_pty_workload_is_priced_above_the_auto_threshold():
    """The cost model (a price list, no clock): the workload of the pty tests below (B = 20 000 on
    M = 20 000) is priced above AUTO_SECONDS, so auto mode must draw a bar for it; the price is
    linear in the elements and additive over kinds, and an underscore names a kind's space."""
    work = 20_000 * 20_000
    est = _progress.estimate_seconds
    assert est(bootstrap=work) > _progress.AUTO_SECONDS
    assert est(bootstrap=2 * work) == pytest.approx(2 * est(bootstrap=work), rel=1e-15)
    both = est(bootstrap=work, jackknife_adaptive=work)
    assert both == pytest.approx(est(bootstrap=work) + est(jackknife_adaptive=work), rel=1e-15)
    assert est(jackknife_adaptive=work) != est(bootstrap=work)  # its own price, not bootstrap's
    with pytest.raises(KeyError):
        est(no_such_phase=work)


def _run_on_pty(args):
    """Run ``mcref ARGS`` with stderr on a pseudo-terminal; return (status, stdout, stderr)."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mcref.cli", *args], stdout=subprocess.PIPE, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    err = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 600)
            if not ready:
                pytest.fail("no output for 600 s")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        out = proc.stdout.read()
        return proc.wait(timeout=60), out.decode(), err.decode(errors="replace")
    finally:
        if proc.poll() is None:  # pragma: no cover
            proc.kill()
            proc.wait()
        proc.stdout.close()
        os.close(master)


def test_cli_bar_on_a_terminal_not_in_a_pipe(long_csv):
    rc, out, err = _run_on_pty(["stats", long_csv, *STATS_ARGS])
    assert rc == 0, err
    assert "bootstrap:" in err and "100%" in err and "20000/20000" in err, err
    piped = subprocess.run([sys.executable, "-m", "mcref.cli", "stats", long_csv, *STATS_ARGS],
                           capture_output=True, text=True, timeout=600)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and piped.stdout == out.replace("\r\n", "\n")
    rc, out2, err = _run_on_pty(["stats", long_csv, *STATS_ARGS, "--no-progress"])
    assert rc == 0 and "bootstrap" not in err and out2 == out


def test_cli_progress_forced_into_a_pipe_is_sparse(long_csv):
    proc = subprocess.run([sys.executable, "-m", "mcref.cli", "fit", long_csv, "--boot", "4", "--seed", "1",
                           "--progress"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    bars = proc.stderr.replace("\r", "\n").strip().splitlines()
    assert bars[0].startswith("distfit bootstrap:   0%") and bars[-1].startswith("distfit bootstrap: 100%")
    assert len(bars) <= 4, proc.stderr  # drawn at the start and the end, plus at most every PIPE_INTERVAL s


def test_cli_flag_reaches_calls_made_below_the_command(long_csv):
    """decimate calls mcref.bootstrap itself: --progress/--no-progress set the default of every call."""
    base = [sys.executable, "-m", "mcref.cli", "decimate", long_csv, "--stat", "ZMS", "--boot", "200", "--steps", "3",
            "--seed", "1"]
    on = subprocess.run([*base, "--progress"], capture_output=True, text=True, timeout=600)
    assert on.returncode == 0 and "bootstrap: 100%" in on.stderr, on.stderr
    off = subprocess.run([*base, "--no-progress"], capture_output=True, text=True, timeout=600)
    assert off.returncode == 0 and off.stderr == "" and off.stdout == on.stdout
    from mcref.cli import build_parser

    parser = build_parser()
    for cmd in ("stats", "validate", "report", "fit", "decimate", "demo"):
        assert parser.parse_args([cmd, "--progress"]).progress is True
        assert parser.parse_args([cmd, "--no-progress"]).progress is False
        assert parser.parse_args([cmd]).progress is None, cmd
