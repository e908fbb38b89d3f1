"""Reading a large CSV of (E, u, x): mcref's readers side by side with pandas.

One file of ``--rows`` rows (default 10⁷; columns ``E``, ``u``, ``x``, 17 significant digits,
written once to ``--dir``, about 0.5 GB at 10⁷) is read by

  text          ``mcref.datasets.from_file`` with the fast reader switched off (the Python
                ``csv`` module and ``float``: mcref's reader before pyarrow);
  fast          ``mcref.datasets.from_file`` as shipped (``pyarrow.csv`` for files of 1 MiB or
                more when pyarrow is installed);
  pandas        ``pandas.read_csv`` with its defaults (C engine, ``float_precision="high"``),
                then ``mcref.datasets.from_frame``;
  pandas-rt     ``pandas.read_csv(float_precision="round_trip")`` (Python's strtod), then
                ``from_frame``;
  pandas-arrow  ``pandas.read_csv(engine="pyarrow")``, then ``from_frame``.

Each reader runs in its own Python process (``--repeats`` times, median wall time of the read,
imports excluded); the peak resident memory of the process (``ru_maxrss``) is printed next to
that of a process that only imports the same modules, so the difference is the read's own
peak. Every reader's E, u and x are compared bit for bit with the text reader's (correctly
rounded by construction): the count of values that differ is printed.

Run: ``python benchmarks/bench_read.py [--rows 10000000] [--repeats 3] [--dir /tmp]``.

Measured (2025-11, Python 3.11, pandas 3.1, pyarrow 26, 2 shared CPUs, 10⁷ rows, 550 MiB, one
run each; read peak = peak RSS − 342 MiB of imports):

  reader         read s   peak RSS MiB   read peak MiB   differing values
  text           105.4        6268           5927          0
  fast             5.1        1812           1470          0
  pandas           3.0        1239            897          0
  pandas-rt        5.4        1239            897          0
  pandas-arrow     7.6        1821           1480          0

The fast reader is 21x faster than the text reader and needs a quarter of its memory. pandas'
default C parser was faster still on these two busy cores (pyarrow's threads had little to
use), but it is not the fast path: its default converter ("high") is not correctly rounded
in every case (pandas issues 17154, 39514) and ``float_precision="round_trip"`` is deprecated
in pandas 3, while mcref promises the bits of Python's ``float`` (pyarrow parses with
fast_float, correctly rounded); all readers agreed on every bit of this file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
import numpy as np
import pandas as pd
import mcref.datasets as D
from mcref import _tables
method, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if method == "imports":
    ds = None
elif method == "text":
    _tables.FAST_CSV_BYTES = float("inf")
    ds = D.from_file(path)
elif method == "fast":
    ds = D.from_file(path)
elif method == "pandas":
    ds = D.from_frame(pd.read_csv(path))
elif method == "pandas-rt":
    ds = D.from_frame(pd.read_csv(path, float_precision="round_trip"))
elif method == "pandas-arrow":
    ds = D.from_frame(pd.read_csv(path, engine="pyarrow"))
seconds = time.perf_counter() - t0
if ds is not None and out != "-":
    np.savez(out, E=ds.E, u=ds.u, x=ds.x)
print(json.dumps({"seconds": seconds, "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

METHODS = ("text", "fast", "pandas", "pandas-rt", "pandas-arrow")


def write_file(path: Path, rows: int, seed: int = 0) -> None:
    """E ~ u·N(0, 1), u lognormal, x uniform, 17 significant digits (every bit matters)."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    rng = np.random.default_rng(seed)
    u = rng.lognormal(-1.0, 0.5, rows)
    table = pa.table({"E": u * rng.standard_normal(rows), "u": u, "x": rng.uniform(0, 10, rows)})
    pacsv.write_csv(table, path)


def run(method: str, path: Path, out: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", CHILD, method, str(path), out], capture_output=True, text=True,
                         env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{method}: {res.stderr.strip()[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--methods", default=",".join(METHODS))
    args = ap.parse_args()
    methods = [m for m in args.methods.split(",") if m]
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="mcref_bench_read_"))
    path = work / "big.csv"
    t0 = time.perf_counter()
    write_file(path, args.rows)
    print(f"{platform.python_version()}, {os.cpu_count()} CPUs; {args.rows:,} rows, "
          f"{path.stat().st_size / 2**20:.0f} MiB (written in {time.perf_counter() - t0:.1f} s)")
    base = run("imports", path, "-")
    print(f"imports only: peak RSS {base['maxrss_mib']:.0f} MiB")
    arrays = {}
    print(f"{'reader':<13} {'read s (median)':>16} {'peak RSS MiB':>13} {'read peak MiB':>14}  differing values")
    for m in methods:
        times, rss = [], []
        for r in range(args.repeats):
            res = run(m, path, str(work / f"{m}.npz") if r == 0 else "-")
            times.append(res["seconds"])
            rss.append(res["maxrss_mib"])
        with np.load(work / f"{m}.npz") as z:
            arrays[m] = {k: z[k] for k in ("E", "u", "x")}
        ref = arrays.get("text")
        diff = "-" if ref is None else str(sum(int(np.count_nonzero(arrays[m][k].view(np.int64) != ref[k].view(np.int64)))
                                               for k in ("E", "u", "x")))
        peak = max(rss)
        print(f"{m:<13} {statistics.median(times):>16.2f} {peak:>13.0f} {peak - base['maxrss_mib']:>14.0f}  {diff}")
    for f in work.iterdir():
        f.unlink()
    work.rmdir()


if __name__ == "__main__":
    main()
