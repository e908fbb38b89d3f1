"""Studies on a real Dask cluster: a `dask scheduler` and `dask worker` processes over TCP.

Not a LocalCluster: the scheduler and the workers are separate processes started the way
a user starts them (docs/guide/studies.md, "Beyond one machine"), on the loopback interface, and the
study connects by address — the path that used to fail with "No clients found".
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

import _toy_study as toy  # noqa: E402  (tests/ is on sys.path, see conftest)
from mcref.studies import StudySpec, run_study  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DASK = shutil.which("dask")
pytestmark = pytest.mark.skipif(DASK is None, reason="the `dask` command (dask[distributed]) is not installed")


def _same_table(a, b):
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    for col in a.columns:
        x, y = a[col].to_numpy(), b[col].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), col
        else:
            assert np.array_equal(x, y), col


class Cluster:
    """A scheduler and ``n_workers`` single-threaded workers, each in its own process group."""

    def __init__(self, tmp: Path, n_workers: int = 2):
        self.tmp = tmp
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
                    "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        sched_file = tmp / "scheduler.json"
        self.procs: list[subprocess.Popen] = []
        self.scheduler = self._start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                      "--scheduler-file", str(sched_file)], "scheduler")
        t_end = time.monotonic() + 60
        while not sched_file.exists():
            if time.monotonic() > t_end or self.scheduler.poll() is not None:
                self.close()
                pytest.fail(f"dask scheduler did not start: {(tmp / 'scheduler.log').read_text()}")
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written in one go, but give the writer a moment
        self.address = json.loads(sched_file.read_text())["address"]
        self.workers = [self._start([DASK, "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1",
                                     "--no-dashboard", "--name", f"w{i}"], f"worker{i}") for i in range(n_workers)]
        with distributed.Client(self.address, set_as_default=False, timeout="60s") as c:
            c.wait_for_workers(n_workers, timeout=120)

    def _start(self, cmd: list[str], name: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.tmp,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def kill(self, p: subprocess.Popen) -> None:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the worker's nanny and its worker process
        except ProcessLookupError:
            pass
        p.wait(10)

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                self.kill(p)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.close()


def _toy(n_cells: int, sleep: float = 0.0) -> StudySpec:
    return StudySpec(toy.STUDY, {"n": 5, "sleep": sleep}, toy.toy_keys(n_cells), toy.toy_cell)


def test_study_by_scheduler_address_is_bit_identical(cluster, tmp_path):
    assert distributed.client._get_global_client() is None  # no default client to fall back on
    local = run_study(_toy(8), seed=11, backend="sequential", progress=False)
    remote = run_study(_toy(8), seed=11, backend="dask", scheduler=cluster.address, progress=False,
                       store=tmp_path / "remote.sqlite")
    assert remote.n_computed == 8
    _same_table(local.table, remote.table)
    # a Client object, and the current client, reach the same cluster with the same result
    with distributed.Client(cluster.address, timeout="60s") as client:
        by_client = run_study(_toy(8), seed=11, backend="dask", scheduler=client, progress=False)
        by_default = run_study(_toy(8), seed=11, backend="dask", progress=False)
    _same_table(local.table, by_client.table)
    _same_table(local.table, by_default.table)
    assert distributed.client._get_global_client() is None  # the runner's own client was closed


def test_per_cell_data_reach_remote_workers(cluster):
    from mcref.store import canonical_json

    keys = [{"i": i} for i in range(4)]
    arrays = [np.linspace(0, 1, 1000 * (i + 1)) for i in range(4)]
    s = StudySpec("data", {}, keys, _sum_cell, data={canonical_json(k): a for k, a in zip(keys, arrays)})
    info = run_study(s, seed=0, backend="dask", scheduler=cluster.address, progress=False)
    assert info.table["total"].tolist() == [float(a.sum()) for a in arrays]


def _sum_cell(key, params, seed_seq, n_threads, data=None):
    return [{"total": float(np.sum(data)), "pid": os.getpid()}]


def test_cli_study_on_the_cluster_equals_the_local_run(cluster, tmp_path):
    # the recipe of docs/guide/studies.md: `mcref study ... --backend dask --scheduler ADDRESS`
    base = [sys.executable, "-m", "mcref.cli", "study", "scaling", "--small", "--seed", "5", "--no-progress"]
    env = {**os.environ}
    remote = subprocess.run(base + ["--backend", "dask", "--scheduler", cluster.address, "--csv",
                                    str(tmp_path / "remote.csv")], capture_output=True, text=True, env=env,
                            timeout=600)
    assert remote.returncode == 0, remote.stderr
    local = subprocess.run(base + ["--n-jobs", "1", "--csv", str(tmp_path / "local.csv")], capture_output=True,
                           text=True, env=env, timeout=600)
    assert local.returncode == 0, local.stderr
    a, b = (tmp_path / "remote.csv").read_text(), (tmp_path / "local.csv").read_text()
    assert a == b and a.count("\n") > 10


def test_a_worker_killed_mid_study_loses_nothing(tmp_path):
    # a worker dies in the middle of the study: the scheduler reruns its cell elsewhere,
    # every cell is stored exactly once and the table equals the local run's
    cluster = Cluster(tmp_path, n_workers=2)
    try:
        n_cells = 12
        path = tmp_path / "killed.sqlite"
        killed = threading.Event()

        def kill_when_two_cells_are_stored():
            t_end = time.monotonic() + 120
            while time.monotonic() < t_end:
                try:
                    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
                    n = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
                    con.close()
                except sqlite3.Error:
                    n = 0
                if n >= 2:
                    cluster.kill(cluster.workers[0])  # busy in its next 0.6 s cell
                    killed.set()
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_when_two_cells_are_stored, daemon=True)
        killer.start()
        remote = run_study(_toy(n_cells, sleep=0.6), seed=2, backend="dask", scheduler=cluster.address,
                           store=path, progress=False)
        killer.join(5)
        assert killed.is_set() and cluster.workers[0].poll() is not None  # it really died mid-run
        assert remote.n_computed == n_cells
        con = sqlite3.connect(path)
        keys = [k for (k,) in con.execute("SELECT key FROM cells")]
        con.close()
        assert len(keys) == len(set(keys)) == n_cells
        local = run_study(_toy(n_cells), seed=2, backend="sequential", progress=False)
        _same_table(local.table, remote.table)
    finally:
        cluster.close()
