"""Ctrl-C stops every long phase promptly (docs/methods.md, "Parallelism"): the bootstrap
(numba prange kernel, called in batches), the Monte Carlo references (thread pool) and the
distribution-fit bootstrap. The CLI then exits with status 130 and one line, no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

# M = 200 000 points: each phase below is tens of seconds of compiled-kernel work, reached
# within a second or two of the start (few chunks, so little Python set-up).
LONG_RUNS = {
    "bootstrap": ["stats", "--stat", "ZMS,ENCE", "--boot", "20000", "--seed", "1"],
    "monte-carlo": ["validate", "--stat", "ENCE", "--boot", "100", "--mc", "20000", "--dists", "normal",
                    "--seed", "1"],
    "distfit": ["fit", "--boot", "2000", "--seed", "1"],
}


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    u = rng.lognormal(0.0, 0.5, 200_000)
    E = u * rng.standard_normal(u.size)
    path = tmp_path_factory.mktemp("big") / "big.csv"
    np.savetxt(path, np.c_[E, u], delimiter=",", header="E,u", comments="", fmt="%.10g")
    return str(path)


def _sigint_after_start(args, wait_s: float):
    proc = subprocess.Popen([sys.executable, "-m", "mcref.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(wait_s)  # imports, cached kernels, then well into the long phase
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does on Ctrl-C
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:  # pragma: no cover - the failure guarded against
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("did not stop within 15 s of SIGINT")
        return proc.returncode, time.monotonic() - t0, out, err
    finally:
        if proc.poll() is None:  # pragma: no cover
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("phase", list(LONG_RUNS))
def test_ctrl_c_exits_130_promptly(phase, big_csv):
    cmd, *rest = LONG_RUNS[phase]
    rc, elapsed, out, err = _sigint_after_start([cmd, big_csv, *rest], 8.0)
    assert rc == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "mcref: interrupted"
    assert elapsed < 3.0, f"{phase}: {elapsed:.1f} s from SIGINT to exit"  # ~0.1 s batches; generous for CI
