"""The generic study runner: seeding, backends, store resume, crash and Ctrl-C behaviour."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import _toy_study as toy  # noqa: E402  (tests/ is on sys.path, see conftest)
from mcref.store import StoreFormatError, StoreMismatchError, canonical_json  # noqa: E402
from mcref.studies import StudySpec, cell_seed, run_study  # noqa: E402
from mcref.studies._runner import RunInfo, _execute  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
N_CELLS = 6


def spec(n_cells=N_CELLS, **params):
    return StudySpec(toy.STUDY, {"n": 5, **params}, toy.toy_keys(n_cells), toy.toy_cell)


def assert_same_table(a, b):
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for col in a.columns:
        x, y = a[col].to_numpy(), b[col].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), col  # bit-identical, NaN and -0.0 too
        else:
            assert np.array_equal(x, y), col


@pytest.fixture(scope="module")
def reference():
    """The toy study computed in this process, one cell after the other."""
    return run_study(spec(), seed=3, backend="sequential", progress=False)


# ---------------------------------------------------------------------------- seeds
def test_cell_seed_depends_on_values_not_order():
    a = cell_seed(5, "s", {"M": 2000, "model": "NIG"})
    b = cell_seed(5, "s", {"model": "NIG", "M": 2000})
    assert a.entropy == 5 and a.spawn_key == b.spawn_key and len(a.spawn_key) == 8
    assert all(0 <= w < 2**32 for w in a.spawn_key)
    assert cell_seed(5, "s", {"M": np.int64(2000), "model": "NIG"}).spawn_key == a.spawn_key
    draw = lambda ss: np.random.default_rng(ss).random(4)  # noqa: E731
    assert np.array_equal(draw(a), draw(b))
    others = [cell_seed(5, "s", {"M": 4000, "model": "NIG"}), cell_seed(5, "t", {"M": 2000, "model": "NIG"}),
              cell_seed(6, "s", {"M": 2000, "model": "NIG"}), cell_seed(5, "s", {"M": 2000.0, "model": "NIG"})]
    for o in others:
        assert not np.array_equal(draw(o), draw(a))


def test_cell_seed_fixed_value():
    # the derivation is part of the store format: a change would silently change results
    ss = cell_seed(0, "toy", {"i": 0})
    assert ss.spawn_key[:2] == tuple(
        int.from_bytes(__import__("hashlib").sha256(b'["toy",{"i":0}]').digest()[i:i + 4], "big") for i in (0, 4)
    )


# ---------------------------------------------------------------------------- table
def test_table_layout(reference):
    t = reference.table
    assert isinstance(reference, RunInfo)
    assert list(t.columns) == ["i", "group", "w", "stat", "value", "count", "flag"]
    assert len(t) == 3 * N_CELLS
    assert t["i"].tolist() == [i for i in range(N_CELLS) for _ in range(3)]
    assert t["stat"].tolist()[:3] == ["mean", "sd", "odd"]
    assert t["count"].dtype == np.int64 and t["flag"].dtype == bool and t["w"].dtype == np.float64
    odd = t.loc[t["stat"] == "odd", "value"].to_numpy()
    assert np.isnan(odd[0]) and odd[1] == np.inf and odd[2] == -np.inf and np.signbit(odd[3])
    assert t.loc[(t["i"] == 1) & (t["stat"] == "sd"), "value"].item() == 0.25  # np.float32 -> float
    assert (reference.seed, reference.store, reference.n_cells) == (3, None, N_CELLS)
    assert (reference.n_computed, reference.n_loaded) == (N_CELLS, 0)
    assert isinstance(reference.seconds, float)  # the field is recorded (its value is a wall time: not asserted)


def test_table_values_follow_cell_seed(reference):
    x = np.random.default_rng(cell_seed(3, toy.STUDY, toy.toy_keys(N_CELLS)[4])).normal(size=5)
    assert reference.table.loc[(reference.table["i"] == 4) & (reference.table["stat"] == "mean"),
                               "value"].item() == x.mean()


def test_seed_changes_results(reference):
    other = run_study(spec(), seed=4, backend="sequential", progress=False)
    assert not np.array_equal(other.table["value"].to_numpy()[:2], reference.table["value"].to_numpy()[:2])


@pytest.mark.parametrize("kw", [dict(n_jobs=1), dict(n_jobs=2), dict(n_jobs=-1), dict(n_jobs=2, backend="threading"),
                                dict(n_jobs=3, backend="sequential"), dict(n_jobs=50, backend="threading")])
def test_backends_bit_identical(reference, kw):
    info = run_study(spec(), seed=3, progress=False, **kw)
    assert_same_table(info.table, reference.table)


def test_empty_rows_and_zero_cells():
    info = run_study(StudySpec("e", {}, [], toy.toy_cell), progress=False)
    assert info.table.empty and info.n_cells == 0
    info = run_study(StudySpec("e", {}, [{"i": 0}], toy.threads_cell), n_jobs=1, progress=False)
    assert list(info.table.columns) == ["i", "n_threads", "numba_threads"]


def test_seed_none_draws_from_os():
    a = run_study(spec(2), seed=None, backend="sequential", progress=False)
    b = run_study(spec(2), seed=None, backend="sequential", progress=False)
    assert a.seed != b.seed and a.seed >= 0
    again = run_study(spec(2), seed=a.seed, backend="sequential", progress=False)
    assert_same_table(again.table, a.table)


# ---------------------------------------------------------------------------- threads
def test_threads_per_cell_and_numba_restored():
    import numba

    before = numba.get_num_threads()
    s = StudySpec("thr", {}, [{"i": i} for i in range(2)], toy.threads_cell)
    t = run_study(s, n_jobs=1, progress=False).table
    cores = len(os.sched_getaffinity(0))
    assert t["n_threads"].tolist() == [cores] * 2
    assert t["numba_threads"].tolist() == [min(cores, numba.config.NUMBA_NUM_THREADS)] * 2
    t = run_study(s, n_jobs=1, threads_per_cell=1, progress=False).table
    assert t["n_threads"].tolist() == [1, 1] and t["numba_threads"].tolist() == [1, 1]
    assert numba.get_num_threads() == before
    t = run_study(s, n_jobs=2, progress=False).table  # 2 workers share the cores
    assert t["n_threads"].tolist() == [max(1, cores // 2)] * 2
    big = run_study(s, n_jobs=1, threads_per_cell=10_000, progress=False).table
    assert big["n_threads"].tolist() == [10_000] * 2
    assert big["numba_threads"].tolist() == [numba.config.NUMBA_NUM_THREADS] * 2  # clamped


def test_execute_restores_numba_threads_on_error():
    import numba

    before = numba.get_num_threads()
    with pytest.raises(RuntimeError, match="toy failure") as exc:
        _execute(toy.toy_cell, {"i": 0, "group": "a", "w": 0.0}, {"fail_i": 0, "marker": __file__}, 0, "toy", 1)
    assert numba.get_num_threads() == before
    if sys.version_info >= (3, 11):
        assert any("""cell {"group":"a","i":0,"w":0.0} failed""" in n for n in exc.value.__notes__)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kw, match", [
    (dict(seed=-1), r"`seed` must be None or a non-negative integer, got -1"),
    (dict(seed=1.5), r"`seed` must be None or a non-negative integer, got 1.5"),
    (dict(seed=True), r"`seed` must be None or a non-negative integer, got True"),
    (dict(n_jobs=0), r"`n_jobs` must be a positive integer or -1 \(all cores\), got 0"),
    (dict(n_jobs=-2), r"`n_jobs` must be a positive integer or -1 \(all cores\), got -2"),
    (dict(n_jobs=2.0), r"`n_jobs` must be a positive integer or -1 \(all cores\), got 2.0"),
    (dict(threads_per_cell=0), r"`threads_per_cell` must be an integer >= 1, got 0"),
    (dict(backend="mpi"), r"`backend` must be one of 'loky', 'threading', 'sequential', 'dask'; got 'mpi'"),
    (dict(backend="loky", scheduler="tcp://x:1"), r"`scheduler` is used by backend='dask' only"),
])
def test_argument_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        run_study(spec(1), progress=False, **kw)


@pytest.mark.parametrize("s, match", [
    (StudySpec("", {}, [], toy.toy_cell), r"`spec.name` must be a non-empty string"),
    (StudySpec("x", [], [], toy.toy_cell), r"`spec.params` must be a mapping"),
    (StudySpec("x", {"f": object()}, [], toy.toy_cell), r"`spec.params` must be JSON-serialisable"),
    (StudySpec("x", {}, [{"i": 1}], None), r"`spec.cell` must be a function"),
    (StudySpec("x", {}, {"i": 1}, toy.toy_cell), r"`spec.keys` must be a list of dicts"),
    (StudySpec("x", {}, [3], toy.toy_cell), r"`spec.keys\[0\]` must be a dict of JSON scalars"),
    (StudySpec("x", {}, [{"i": [1, 2]}], toy.toy_cell), r"`spec.keys\[0\]`: field 'i' must be a JSON scalar"),
    (StudySpec("x", {}, [{1: 2}], toy.toy_cell), r"`spec.keys\[0\]`: field names must be strings"),
    (StudySpec("x", {}, [{"i": 1}, {"i": 2}, {"i": 1}], toy.toy_cell),
     r'`spec.keys` has the cell key \{"i":1\} twice \(at 0 and 2\)'),
])
def test_spec_errors(s, match):
    with pytest.raises(ValueError, match=match):
        run_study(s, progress=False)
    with pytest.raises(ValueError, match=r"`spec` must be a StudySpec"):
        run_study({"name": "x"}, progress=False)


@pytest.mark.parametrize("kind, match", [
    ("array", r'cell \{"i":0\}: row 0: column \'x\' must be a JSON scalar'),
    ("object", r'cell \{"i":0\}: row 0: column \'x\' must be a JSON scalar'),
    ("not_list", r'cell \{"i":0\} must return a list of dicts, got dict'),
    ("not_dict", r'cell \{"i":0\}: row 0 must be a dict, got float'),
    ("key_clash", r'cell \{"i":0\}: row 0, column \'i\' = 100 clashes with the key field'),
])
def test_bad_rows_name_the_cell(kind, match, tmp_path):
    s = StudySpec("bad", {"kind": kind}, [{"i": 0}], toy.bad_rows_cell)
    with pytest.raises(ValueError, match=match):
        run_study(s, n_jobs=1, progress=False, store=tmp_path / "bad.sqlite")
    # (the same check runs in worker processes: test_resume_after_exception[2] covers errors raised there)


def test_key_field_repeated_with_same_value_is_fine():
    def same(key, params, ss, n):  # noqa: ARG001 - threading/sequential only: need not be importable
        return [{"i": key["i"], "x": 1.0}]

    t = run_study(StudySpec("same", {}, [{"i": 0}, {"i": 1}], same), n_jobs=1, progress=False).table
    assert list(t.columns) == ["i", "x"] and t["i"].tolist() == [0, 1]


# ---------------------------------------------------------------------------- store
def test_store_fresh_then_read_back(tmp_path, reference):
    path = tmp_path / "toy.sqlite"
    first = run_study(spec(), seed=3, n_jobs=1, store=path, progress=False)
    assert (first.n_computed, first.n_loaded, first.store) == (N_CELLS, 0, str(path))
    assert_same_table(first.table, reference.table)
    again = run_study(spec(), seed=3, store=str(path), progress=False)
    assert (again.n_computed, again.n_loaded) == (0, N_CELLS)
    assert_same_table(again.table, reference.table)
    adopted = run_study(spec(), seed=None, store=path, progress=False)
    assert adopted.seed == 3 and adopted.n_computed == 0


def test_store_seed_none_recorded(tmp_path):
    path = tmp_path / "toy.sqlite"
    first = run_study(spec(2), seed=None, n_jobs=1, store=path, progress=False)
    again = run_study(spec(2), seed=None, n_jobs=1, store=path, progress=False)
    assert again.seed == first.seed and again.n_loaded == 2
    assert_same_table(again.table, first.table)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_resume_after_exception(tmp_path, reference, n_jobs):
    marker = tmp_path / "fail-now"
    marker.touch()
    path = tmp_path / "toy.sqlite"
    s = spec(fail_i=4, marker=str(marker), sleep=0.05)
    with pytest.raises(RuntimeError, match="toy failure in cell 4") as exc:
        run_study(s, seed=3, store=path, progress=False, n_jobs=n_jobs)
    if sys.version_info >= (3, 11):
        notes = "\n".join(exc.value.__notes__)
        assert "cell {\"group\":\"a\",\"i\":4,\"w\":2.0} failed" in notes
        assert f"cells of study 'toy' are stored in {path}; run the same call again to resume" in notes
    con = sqlite3.connect(path)
    n_done = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    con.close()
    assert 1 <= n_done < N_CELLS
    marker.unlink()
    # resumed in this process (a failure in a loky worker kills the pool: a new one would cost seconds)
    info = run_study(s, seed=3, store=path, progress=False, n_jobs=1)
    assert (info.n_computed, info.n_loaded) == (N_CELLS - n_done, n_done)
    # the parameters differ from the reference's (fail_i, marker) but the streams do not
    assert_same_table(info.table, reference.table)
    fin = run_study(s, seed=3, store=path, progress=False, n_jobs=n_jobs)
    assert (fin.n_computed, fin.n_loaded) == (0, N_CELLS)


def test_store_mismatch_refused(tmp_path):
    path = tmp_path / "toy.sqlite"
    run_study(spec(2), seed=3, n_jobs=1, store=path, progress=False)
    with pytest.raises(StoreMismatchError, match=r"holds study 'toy' with n=5, this call asks n=6; use another "
                                                 r"store= path or the stored parameters"):
        run_study(StudySpec("toy", {"n": 6}, toy.toy_keys(2), toy.toy_cell), seed=3, store=path, progress=False)
    with pytest.raises(StoreMismatchError, match=r"with seed=3, this call asks seed=4"):
        run_study(spec(2), seed=4, store=path, progress=False)
    with pytest.raises(StoreMismatchError, match=r"holds study 'toy', this call asks study 'toy2'"):
        run_study(StudySpec("toy2", {"n": 5}, toy.toy_keys(2), toy.toy_cell), seed=3, store=path, progress=False)


def test_store_not_a_store_refused(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(StoreFormatError, match="not an SQLite file"):
        run_study(spec(2), store=path, progress=False)
    assert path.read_text() == "a,b\n1,2\n"


def test_extra_cells_in_store_are_ignored(tmp_path, reference):
    path = tmp_path / "toy.sqlite"
    run_study(spec(), seed=3, n_jobs=1, store=path, progress=False)
    sub = StudySpec(toy.STUDY, {"n": 5}, toy.toy_keys(N_CELLS)[1:3], toy.toy_cell)
    info = run_study(sub, seed=3, store=path, progress=False)
    assert (info.n_cells, info.n_loaded, info.n_computed) == (2, 2, 0)
    assert_same_table(info.table.reset_index(drop=True),
                      reference.table[reference.table["i"].isin([1, 2])].reset_index(drop=True))


def test_version_mismatch(tmp_path, monkeypatch):
    import mcref

    path = tmp_path / "toy.sqlite"
    run_study(spec(3), seed=3, n_jobs=1, store=path, progress=False)
    partial = tmp_path / "partial.sqlite"
    run_study(spec(2), seed=3, n_jobs=1, store=partial, progress=False)  # same params, fewer keys
    monkeypatch.setattr(mcref._version, "VERSION", "999.0")  # the version's home (mcref.__version__ shows it)
    with pytest.warns(UserWarning, match=r"written by mcref .*, this is mcref 999.0; its finished results"):
        info = run_study(spec(3), seed=3, store=path, progress=False)
    assert info.n_loaded == 3
    with pytest.raises(StoreMismatchError, match=r"this is mcref 999.0, and 1 cells remain: refusing to mix"):
        run_study(spec(3), seed=3, store=partial, progress=False)


# ---------------------------------------------------------------------------- dask
def test_dask_without_client():
    distributed = pytest.importorskip("distributed")
    try:
        distributed.get_client()
    except ValueError:
        pass
    else:  # pragma: no cover - a default client is still registered
        pytest.skip("a dask client is active in this process")
    with pytest.raises(ValueError, match=r"backend='dask' needs a running client or scheduler='tcp://HOST:PORT'"):
        run_study(spec(1), backend="dask", progress=False)
    with pytest.raises(ValueError, match=r"`scheduler` must be None, an address"):
        run_study(spec(1), backend="dask", scheduler=42, progress=False)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            client.run(sys.path.insert, 0, str(HERE))  # workers import _toy_study
            yield client


def test_dask_backend(dask_client, reference, tmp_path):
    info = run_study(spec(), seed=3, backend="dask", progress=False)  # the current client
    assert_same_table(info.table, reference.table)
    info = run_study(spec(), seed=3, backend="dask", scheduler=dask_client.scheduler.address, progress=False,
                     store=tmp_path / "d.sqlite")
    assert_same_table(info.table, reference.table)
    assert info.n_computed == N_CELLS
    info = run_study(spec(), seed=3, backend="dask", scheduler=dask_client, progress=False,
                     store=tmp_path / "d.sqlite")
    assert (info.n_computed, info.n_loaded) == (0, N_CELLS)


def test_dask_cell_error_resumes(dask_client, reference, tmp_path):
    marker = tmp_path / "fail-now"
    marker.touch()
    path = tmp_path / "d.sqlite"
    s = spec(fail_i=2, marker=str(marker))
    with pytest.raises(RuntimeError, match="toy failure in cell 2"):
        run_study(s, seed=3, backend="dask", scheduler=dask_client, store=path, progress=False)
    marker.unlink()
    info = run_study(s, seed=3, backend="dask", scheduler=dask_client, store=path, progress=False)
    assert info.n_loaded < N_CELLS
    assert_same_table(info.table, reference.table)


# ---------------------------------------------------------------------------- crash and Ctrl-C
def _child(store, n_cells, sleep, n_jobs, **popen):
    # Python's SIGINT handler, as in a program started from a terminal: a shell without job control
    # (a CI script run with `&`) starts its background commands with SIGINT ignored, and Python keeps
    # an ignored SIGINT (the runner rightly does too), so the child would never see the Ctrl-C sent
    code = (f"import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.path.insert(0, {str(HERE)!r}); import _toy_study; "
            f"_toy_study.main({str(store)!r}, {n_cells}, {sleep}, {n_jobs})")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def _n_committed(path) -> int:
    if not Path(path).exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
        try:
            return con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _live_in_group(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are not zombies (Linux /proc; [] elsewhere)."""
    live = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pg = fields[0], int(fields[2])
        if pg == pgid and state not in ("Z", "X"):
            live.append(int(entry.name))
    return live


def _wait_for_cells(proc, path, n, timeout=60.0):
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if _n_committed(path) >= n:
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"child exited early ({proc.returncode}):\n{out}\n{err}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"child did not store {n} cells in {timeout} s")


def test_sigkill_then_resume(tmp_path):
    path = tmp_path / "killed.sqlite"
    n_cells = 10
    proc = _child(path, n_cells, 0.2, 1)
    try:
        _wait_for_cells(proc, path, 3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:  # pragma: no cover
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    s = StudySpec(toy.STUDY, {"n": 5, "sleep": 0.2}, toy.toy_keys(n_cells), toy.toy_cell)
    resumed = run_study(s, seed=0, n_jobs=1, store=path, progress=False)
    assert resumed.n_loaded >= 3 and resumed.n_computed == n_cells - resumed.n_loaded
    fresh = run_study(StudySpec(toy.STUDY, {"n": 5, "sleep": 0.0}, toy.toy_keys(n_cells), toy.toy_cell),
                      seed=0, n_jobs=1, store=tmp_path / "fresh.sqlite", progress=False)
    assert_same_table(resumed.table, fresh.table)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_stops_promptly_and_keeps_cells(tmp_path, n_jobs):
    path = tmp_path / "interrupted.sqlite"
    n_cells = 40
    proc = _child(path, n_cells, 0.4, n_jobs, start_new_session=True)
    try:
        _wait_for_cells(proc, path, 2)
        os.killpg(proc.pid, signal.SIGINT)  # like Ctrl-C in a terminal: the whole process group
        try:
            out, err = proc.communicate(timeout=120)  # a hang guard, not a timing: 40 cells take 8-16 s
        except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test guards against
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("child did not stop after SIGINT")
    finally:
        if proc.poll() is None:  # pragma: no cover
            os.killpg(proc.pid, signal.SIGKILL)
    for _ in range(60):  # the pool's workers are gone too (dead or zombies awaiting reaping)
        if not _live_in_group(proc.pid):
            break
        time.sleep(0.05)
    else:  # pragma: no cover
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"worker processes survived the interrupt: {_live_in_group(proc.pid)}")
    assert proc.returncode != 0 and "DONE" not in out
    assert "KeyboardInterrupt" in err
    lines = [ln for ln in err.splitlines() if ln.startswith("mcref:")]
    assert len(lines) == 1, err
    assert lines[0].startswith("mcref: study 'toy' interrupted: ")
    assert lines[0].endswith(f"/{n_cells} cells stored in {path}; run the same call again to resume")
    k = int(lines[0].split("interrupted: ")[1].split("/")[0])
    assert 2 <= k < n_cells and _n_committed(path) == k  # stopped by the interrupt, not run to the end
    # the committed cells read back (with n_jobs=2 not necessarily the first k), identical to a fresh computation
    con = sqlite3.connect(path)
    done = {row[0] for row in con.execute("SELECT key FROM cells")}
    con.close()
    keys = [key for key in toy.toy_keys(n_cells) if canonical_json(key) in done]
    assert len(keys) == k
    back = run_study(StudySpec(toy.STUDY, {"n": 5, "sleep": 0.4}, keys, toy.toy_cell), store=path, progress=False)
    assert (back.n_loaded, back.n_computed) == (k, 0)
    fresh = run_study(StudySpec(toy.STUDY, {"n": 5}, keys, toy.toy_cell), seed=0, n_jobs=1, progress=False)
    assert_same_table(back.table, fresh.table)


def test_keyboard_interrupt_in_process_without_store(capsys):
    calls = []

    def interrupting(key, params, ss, n):  # noqa: ARG001
        calls.append(key["i"])
        if key["i"] == 2:
            raise KeyboardInterrupt
        return [{"x": 1.0}]

    s = StudySpec("ki", {}, [{"i": i} for i in range(5)], interrupting)
    with pytest.raises(KeyboardInterrupt):
        run_study(s, n_jobs=1, progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["mcref: study 'ki' interrupted: 2/5 cells done; no store was given, so nothing is kept "
                   "(a store makes the study resumable: store=... in Python, --store FILE on the command line)"]
    assert calls == [0, 1, 2]


def test_keyboard_interrupt_in_process_with_store(tmp_path, capsys):
    def interrupting(key, params, ss, n):  # noqa: ARG001
        if key["i"] == 3:
            raise KeyboardInterrupt
        return [{"x": float(key["i"])}]

    path = tmp_path / "ki.sqlite"
    s = StudySpec("ki", {}, [{"i": i} for i in range(5)], interrupting)
    with pytest.raises(KeyboardInterrupt):
        run_study(s, n_jobs=1, progress=False, store=path)
    assert capsys.readouterr().err.strip() == (
        f"mcref: study 'ki' interrupted: 3/5 cells stored in {path}; run the same call again to resume")
    assert _n_committed(path) == 3


def test_progress_bar_on_a_terminal(monkeypatch):
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    pytest.importorskip("tqdm")
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    run_study(spec(3), n_jobs=1, progress=True)
    assert "study toy" in err.getvalue() and "3/3" in err.getvalue()
    err2 = Tty()
    monkeypatch.setattr(sys, "stderr", err2)
    run_study(spec(3), n_jobs=1, progress=False)
    assert err2.getvalue() == ""


@pytest.mark.parametrize("backend", ["threading", "dask"])
def test_keyboard_interrupt_while_waiting(backend, request, tmp_path, capsys):
    # Ctrl-C while the main thread waits for a pool of threads or a dask cluster
    import _thread
    import signal
    import threading

    # interrupt_main() does nothing while SIGINT is ignored, as it is in a pytest started in the
    # background by a shell without job control (see _child): Python's handler, as in a terminal
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, old))
    kw = {}
    if backend == "dask":
        kw["scheduler"] = request.getfixturevalue("dask_client")
    path = tmp_path / "ki.sqlite"
    n_cells = 12
    s = StudySpec(toy.STUDY, {"n": 5, "sleep": 0.3}, toy.toy_keys(n_cells), toy.toy_cell)
    sent = []
    stop = threading.Event()

    def interrupt_after_first_cell():
        while not stop.is_set():
            if _n_committed(path) >= 1:
                sent.append(time.monotonic())
                _thread.interrupt_main()
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=interrupt_after_first_cell, daemon=True)
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_study(s, n_jobs=2, backend=backend, store=path, progress=False, **kw)
    finally:
        stop.set()
        watcher.join()
    assert sent and time.monotonic() - sent[0] < 2.0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(f"/{n_cells} cells stored in {path}; run the same call again to resume")
    k = int(err[0].split("interrupted: ")[1].split("/")[0])
    assert 1 <= k < n_cells and _n_committed(path) == k
    if backend == "dask":  # outstanding cells were cancelled: the cluster empties (running cells finish)
        client = kw["scheduler"]
        def n_tasks():  # tasks waiting or running (other tests' finished futures may linger in memory)
            return client.run_on_scheduler(lambda dask_scheduler: sum(
                ts.state in ("released", "waiting", "queued", "processing", "no-worker")
                for ts in dask_scheduler.tasks.values()))

        t_end = time.monotonic() + 5
        while n_tasks() and time.monotonic() < t_end:
            time.sleep(0.05)
        assert n_tasks() == 0
    else:
        time.sleep(0.4)  # the two running threads finish their cells in the background


# ---------------------------------------------------------------------------- per-cell data
def _data_cell(key, params, seed_seq, n_threads, data=None):
    return [{"total": float(np.sum(data)), "size": int(np.size(data))}]


@pytest.mark.parametrize("backend", ["sequential", "loky", "threading"])
def test_per_cell_data_travels_with_its_cell(backend):
    from mcref.store import canonical_json

    keys = [{"i": i} for i in range(3)]
    arrays = [np.arange(10 * (i + 1), dtype=float) for i in range(3)]
    s = StudySpec("data", {}, keys, _data_cell, data={canonical_json(k): a for k, a in zip(keys, arrays)})
    info = run_study(s, seed=1, n_jobs=2, backend=backend, progress=False)
    assert info.table["total"].tolist() == [a.sum() for a in arrays]
    assert info.table["size"].tolist() == [10, 20, 30]


def test_per_cell_data_checked():
    with pytest.raises(ValueError, match=r"`spec.data` has entries for 1 key\(s\) that are not cells"):
        run_study(StudySpec("data", {}, [{"i": 0}], _data_cell, data={'{"i":5}': 1}), progress=False,
                  backend="sequential")
    with pytest.raises(ValueError, match=r"`spec.data` must be None or a mapping"):
        run_study(StudySpec("data", {}, [{"i": 0}], _data_cell, data=[1]), progress=False, backend="sequential")


def test_sigkill_of_the_parent_leaves_no_orphan_workers(tmp_path):
    # `kill -9` of a study: its loky workers (busy in long cells) must not run on for minutes
    psutil = pytest.importorskip("psutil")
    path = tmp_path / "orphans.sqlite"
    proc = _child(path, 40, 3.0, 2, start_new_session=True)  # 3 s cells: the workers are busy when killed
    try:
        t_end = time.monotonic() + 90
        workers: list = []
        while time.monotonic() < t_end and len(workers) < 2:  # both workers started and in a cell
            if proc.poll() is not None:
                pytest.fail(f"child exited early ({proc.returncode}): {proc.communicate()}")
            workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                       if "loky" in " ".join(p.cmdline()) and "resource_tracker" not in " ".join(p.cmdline())]
            time.sleep(0.1)
        assert len(workers) == 2, f"expected 2 loky workers, found {workers}"
        time.sleep(1.0)  # inside their first cells
        descendants = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)  # the parent only, as the OOM killer or `kill -9 PID` would
        proc.wait(10)
        t_end = time.monotonic() + 15.0  # the watchdog checks every 0.5 s: ~10 s is the promise
        alive = descendants
        while time.monotonic() < t_end:
            alive = [p for p in descendants if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
            if not alive:
                break
            time.sleep(0.1)
        assert not alive, f"processes still running 15 s after the parent was killed: {alive}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert _n_committed(path) < 40  # it really was killed mid-study


def test_a_drawn_seed_is_short_enough_to_copy():
    # seeds drawn from the OS are 63-bit (≤ 19 digits): recorded in tables, stores and logs
    info = run_study(spec(2), seed=None, backend="sequential", progress=False)
    assert 0 <= info.seed < 2**63
    from mcref.core._checks import check_seed, fresh_seed

    seeds = {fresh_seed() for _ in range(200)}
    assert len(seeds) == 200 and max(seeds) < 2**63 and max(seeds) > 2**60  # uses the whole range
    assert check_seed(None).entropy < 2**63
