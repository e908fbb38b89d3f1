"""Shared helpers for the side-by-side benchmarks: medians of repeated timings and the
peak resident-memory increase of a call (sampled from /proc every millisecond)."""

from __future__ import annotations

import os
import statistics
import threading
import time
from typing import Callable


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_increase(fn: Callable[[], object]) -> tuple[object, float]:
    """Run ``fn`` once; return its result and the peak RSS increase in MiB over the RSS
    just before the call (a background thread samples /proc/self/statm every 1 ms)."""
    base = _rss_bytes()
    peak = [base]
    done = threading.Event()

    def sampler():
        while not done.is_set():
            peak[0] = max(peak[0], _rss_bytes())
            time.sleep(0.001)

    t = threading.Thread(target=sampler, daemon=True)
    t.start()
    try:
        out = fn()
    finally:
        done.set()
        t.join()
    peak[0] = max(peak[0], _rss_bytes())
    return out, (peak[0] - base) / 2**20


def median_time(fn: Callable[[], object], repeats: int) -> tuple[float, list[float]]:
    """Median wall time of ``repeats`` calls of ``fn`` (seconds) and all the times."""
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), ts


def machine() -> str:
    import numba
    import numpy as np
    import scipy

    return (f"{os.cpu_count()} CPUs, numba {numba.__version__} ({numba.get_num_threads()} threads), "
            f"numpy {np.__version__}, scipy {scipy.__version__}")


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds per call of each function, timing them in turn in every repeat (so that
    load on the machine hits all of them alike)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def show(title: str, df, width: int = 250) -> None:
    """Print a study table (a DataFrame) under ``title``, rates with 3 decimals, all rows."""
    import pandas as pd

    print(f"\n{title}")
    with pd.option_context("display.width", width, "display.max_rows", 300, "display.max_columns", 40):
        print(df.to_string(float_format=lambda x: f"{x:.3f}"))
