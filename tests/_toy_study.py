"""Toy study cells for the runner and store tests (module level: importable by workers).

``toy_cell`` draws from ``default_rng(seed_seq)`` and returns three rows of mixed
types (NumPy scalars, NaN, infinities, bools, strings). Parameters steer it:

- ``n``: draws per row;
- ``sleep``: seconds per cell, slept in 0.05 s steps (so Ctrl-C is seen promptly);
- ``fail_i`` and ``marker``: cell ``i == fail_i`` raises ``RuntimeError`` while the
  file ``marker`` exists.
"""

from __future__ import annotations

import os
import time

import numpy as np

STUDY = "toy"


def toy_keys(n_cells: int) -> list[dict]:
    return [{"i": i, "group": "ab"[i % 2], "w": 0.5 * i} for i in range(n_cells)]


def toy_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int) -> list[dict]:
    sleep = float(params.get("sleep", 0.0))
    t_end = time.monotonic() + sleep
    while time.monotonic() < t_end:
        time.sleep(min(0.05, max(0.0, t_end - time.monotonic())))
    marker = params.get("marker")
    if key["i"] == params.get("fail_i") and marker and os.path.exists(marker):
        raise RuntimeError(f"toy failure in cell {key['i']}")
    rng = np.random.default_rng(seed_seq)
    x = rng.normal(size=int(params.get("n", 5)))
    rows = [
        {"stat": "mean", "value": x.mean(), "count": np.int64(x.size), "flag": bool(x.mean() > 0)},
        {"stat": "sd", "value": np.float32(0.25) if key["i"] == 1 else float(x.std(ddof=1)),
         "count": x.size, "flag": False},
        {"stat": "odd", "value": [np.nan, np.inf, -np.inf, -0.0][key["i"] % 4], "count": 0, "flag": True},
    ]
    return rows


def threads_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """Reports the thread count it was given and numba's thread count inside the cell."""
    import numba

    return [{"n_threads": n_threads, "numba_threads": numba.get_num_threads()}]


def bad_rows_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int):
    """Returns invalid rows, chosen by ``params["kind"]``."""
    kind = params["kind"]
    if kind == "array":
        return [{"x": np.arange(3)}]
    if kind == "not_list":
        return {"x": 1.0}
    if kind == "not_dict":
        return [1.0]
    if kind == "key_clash":
        return [{"i": key["i"] + 100}]
    return [{"x": object()}]


def main(store: str, n_cells: int, sleep: float, n_jobs: int, backend: str = "loky", seed: int = 0) -> None:
    """Entry point of the subprocess tests (Ctrl-C, SIGKILL)."""
    from mcref.studies._runner import StudySpec, run_study

    spec = StudySpec(STUDY, {"n": 5, "sleep": sleep}, toy_keys(n_cells), toy_cell)
    info = run_study(spec, seed=seed, n_jobs=n_jobs, backend=backend, store=store, progress=False)
    print("DONE", info.n_computed, info.n_loaded, flush=True)


def user_stat_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """A cell that evaluates a statistic by name: a user statistic registered in the runner's
    process must reach the worker (mcref.register_statistic)."""
    import mcref

    rng = np.random.default_rng(seed_seq)
    u = rng.uniform(0.5, 2.0, 200)
    E = u * rng.normal(size=200)
    return [{"stat": params["stat"], "value": mcref.statistic(params["stat"], E, u),
             "numpy": float(np.mean(np.abs(E / u)))}]
