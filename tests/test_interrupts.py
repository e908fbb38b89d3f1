"""Ctrl-C stops every long phase promptly (docs/methods.md, "Parallelism"): the bootstrap
(numba prange kernel, called in batches), the O(M²) jackknife of CC (called in batches of
left-out points), the Monte Carlo references (thread pool; a chunk checks between its D)
and the distribution-fit bootstrap. The CLI then exits with status 130 and one line, no
traceback.

The signal is sent when the phase's name first appears on the child's stderr (its progress
bar, forced on with ``--progress``), never after a fixed delay: the test does not depend on
the speed of the machine, only the exit is timed, with a generous deadline (the target is
about 1 s).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

#: a hang guard only (not a speed check): a child still running this long after SIGINT is stuck
HANG_S = 120.0
#: how long a child may take to reach the phase (imports, cached kernels, earlier phases)
REACH_S = 600.0

# M = 200 000 points: each phase below is seconds to minutes of compiled-kernel work
LONG_RUNS = {
    "bootstrap": (["stats", "--stat", "ZMS,ENCE", "--boot", "20000", "--seed", "1"], b"bootstrap:"),
    # a long validate with the default statistics and D (fewer replicates, to reach the later phases sooner)
    "validate-bootstrap": (["validate", "--boot", "5000", "--seed", "1"], b"bootstrap:"),
    "validate-jackknife": (["validate", "--boot", "200", "--binning", "adaptive", "--seed", "1"], b"jackknife ENCE:"),
    # beyond 1e5 rows the default simulates the permutation D alone, in short rounds: the comparison D
    # asked for run the fixed N_MC, a long phase
    "validate-references": (["validate", "--boot", "200", "--seed", "1", "--dists", "normal,t6,empirical,permutation"],
                            b"references normal"),
    "distfit": (["fit", "--boot", "2000", "--seed", "1"], b"distfit bootstrap:"),
}


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    u = np.sqrt(1.0 / rng.gamma(3.0, 1.0 / 3.0, 200_000))  # u² ~ IG(3, 3)
    E = u * rng.standard_normal(u.size)
    path = tmp_path_factory.mktemp("big") / "big.csv"
    np.savetxt(path, np.c_[E, u], delimiter=",", header="E,sigma", comments="", fmt="%.10g")
    return str(path)


def _read_some(fd: int, timeout: float) -> bytes | None:
    """Bytes from ``fd`` within ``timeout`` (b"" if none came), None at end of file."""
    ready, _, _ = select.select([fd], [], [], max(timeout, 0.0))
    if not ready:
        return b""
    return os.read(fd, 65536) or None


def sigint_on_marker(args: list[str], marker: bytes):
    """Run ``mcref ARGS --progress``, send SIGINT to its process group (as a terminal does on
    Ctrl-C) when ``marker`` first appears on its stderr; return (exit status, seconds from
    the signal to the exit, seconds from the signal to the line ``mcref: interrupted``,
    stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "mcref.cli", *args, "--progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    fd = proc.stderr.fileno()
    err = b""
    try:
        reach = time.monotonic() + REACH_S
        while marker not in err:
            chunk = _read_some(fd, reach - time.monotonic())
            if chunk is None or time.monotonic() > reach:
                pytest.fail(f"{marker!r} never appeared (status {proc.poll()}): {err.decode(errors='replace')}")
            err += chunk
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        end, t_msg = t0 + HANG_S, float("nan")
        while (chunk := _read_some(fd, end - time.monotonic())) is not None:  # stderr closes at exit
            if time.monotonic() > end:
                pytest.fail(f"still running {HANG_S:g} s after SIGINT: {err.decode(errors='replace')}")
            err += chunk
            if b"mcref: interrupted" in chunk:
                t_msg = time.monotonic() - t0
        rc = proc.wait(timeout=max(end - time.monotonic(), 1.0))
        return rc, time.monotonic() - t0, t_msg, err.decode(errors="replace")
    finally:
        if proc.poll() is None:  # pragma: no cover - the failure guarded against
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stderr.close()


@pytest.mark.parametrize("phase", list(LONG_RUNS))
def test_ctrl_c_exits_130_promptly(phase, big_csv):
    args, marker = LONG_RUNS[phase]
    rc, elapsed, t_msg, err = sigint_on_marker([args[0], big_csv, "--u", "sigma", *args[1:]], marker)
    assert rc == 130, err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines[-1] == "mcref: interrupted", err
    assert sum("mcref: interrupted" in line for line in lines) == 1
    # prompt means within the phase: the signal came when its bar first appeared, and the
    # phase (seconds to minutes of work at M = 200 000) never reached 100 % (no timing asserted)
    bars = err.replace("\r", "\n").splitlines()
    name = marker.decode()
    assert not any(line.startswith(name) and "100%" in line for line in bars), f"{phase} ran to the end:\n{err}"


def test_a_swallowed_ctrl_c_is_raised_at_the_next_progress_update():
    """A KeyboardInterrupt that Python swallowed where it landed (inside a ``__del__``, as
    llvmlite's during a numba compile: "Exception ignored in ...") is not lost: the CLI's
    handler notes it and the next progress update raises it; main() restores the handler."""
    from mcref.core import _progress
    from mcref.cli import main

    with pytest.raises(KeyboardInterrupt):
        _progress.sigint_handler(signal.SIGINT, None)
    try:
        phase = _progress.Phase("x", 10, "it", show=False)
        with pytest.raises(KeyboardInterrupt):
            phase.update_to(1)
    finally:
        _progress._SIGINT[0] = False
    phase.update_to(2)  # no pending Ctrl-C: nothing raised
    before = signal.getsignal(signal.SIGINT)
    assert main(["validate", "/nonexistent/big.csv", "--no-progress"]) == 2  # an error: exit 2
    assert signal.getsignal(signal.SIGINT) is before and not _progress._SIGINT[0]
