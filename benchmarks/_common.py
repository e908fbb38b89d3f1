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


def thread_ceiling(threads=(1, 2), n: int = 100_000_000, reps: int = 3) -> dict[str, dict[int, float]]:
    """What the machine itself allows from 1 to T threads, for two kernels with no memory traffic
    and no synchronisation, run on T Python threads (numba, GIL released), each doing the same
    ``n`` iterations: the speedup T·t(1)/t(T) (medians of ``reps``).

    - ``integer throughput``: a xoshiro256** loop (mcref's generator), bound by the ALUs' issue rate,
      as the resampling, the rank passes and the t fit are;
    - ``FP latency chain``: ``x = x·a + b``, bound by one add's latency, leaving the core's ports idle.

    On separate physical cores both give T. When the T vCPUs share a core's ports (SMT siblings
    on the host, or a host that co-schedules them) the throughput loop gets much less while the
    latency chain still gets T: the bound the phases of ``validate`` meet on that machine.
    """
    import numpy as np
    from numba import njit, uint64

    from mcref.kernels.rng import chunk_states, load_state, step

    @njit(nogil=True)
    def xoshiro(s, n):
        st = load_state(s)
        acc = uint64(0)
        for _ in range(n):
            r, st = step(st)
            acc ^= r
        return acc

    @njit(nogil=True)
    def chain(s, n):
        x = 1.0
        for _ in range(n):
            x = x * 1.0000001 + 1e-9
        return x

    states = chunk_states(np.random.SeedSequence(0), max(threads))
    out = {}
    for name, fn in (("integer throughput", xoshiro), ("FP latency chain", chain)):
        fn(states[0], 10)  # compile

        def run(t):
            th = [threading.Thread(target=fn, args=(states[i], n)) for i in range(t)]
            t0 = time.perf_counter()
            for x in th:
                x.start()
            for x in th:
                x.join()
            return time.perf_counter() - t0

        secs = {t: [] for t in threads}
        for _ in range(reps):
            for t in threads:
                secs[t].append(run(t))
        t1 = statistics.median(secs[threads[0]])
        out[name] = {t: t * t1 / statistics.median(secs[t]) for t in threads}
    return out
