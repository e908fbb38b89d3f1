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
imports excluded); the peak resident memory of the process (``ru_maxrss``) is printed, and the
read's own peak: on Linux the high-water mark (VmHWM) is reset after the imports and read
after the read, less the resident memory before it (elsewhere: the peak less that of a
process that only imports the same modules, which the imports' own transients can hide).
Every reader's E, u and x are compared bit for bit with the text reader's (correctly rounded
by construction): the count of values that differ is printed.

Run: ``python benchmarks/bench_read.py [--rows 10000000] [--repeats 3] [--dir /tmp] [--wide K]
[--before DIR]``.

``--format parquet`` writes a Parquet file instead (columns E, u, x and ``--extra-columns K``
more float64 columns, which a reader that takes only the columns it needs never reads) and
compares ``fast`` (``from_file``: pyarrow, the columns read when asked for, batch by batch into
float64 arrays) with ``pandas`` (``pandas.read_parquet``, then ``from_frame``).
``--wide K`` (issue 41) writes a CSV of ``--rows`` rows and K columns (E, u and K − 2 uniform
columns c0, c1, ..., 17 significant digits) and reads it for E and u only
(``from_file(path, E="E", u="u")``), each reader in a fresh process:

  whole           the fast reader before issue 41 (``_input.read_text_whole``: ``pyarrow.csv.read_csv``
                  parses and converts every column, then E and u are taken);
  fast            ``from_file`` as shipped (``_input.CsvColumns``: ``pyarrow.csv.open_csv`` with
                  ``include_columns``, E and u in one pass, batch by batch into float64 arrays);
  pandas-usecols  ``pandas.read_csv(usecols=["E", "u"])``, then ``from_frame`` (the baseline);
  fast@DIR        with ``--before DIR``: ``from_file`` of the mcref checkout DIR (e.g. the main
                  branch: the reader as shipped before, including its whole-file scan).

It prints the median read time and the median peaks over ``--repeats`` runs, their ratios to the
first row, and the values that differ from the first row's (bits).

Measured (2026-11-27, Python 3.11.7, pyarrow 26.0.1, pandas 3.1.1, 2 CPUs shared with other
jobs, load average 12.7–13.5 during the runs; 3 runs each, medians; read peak = VmHWM reset after
the imports, less the RSS then):

  python benchmarks/bench_read.py --wide 20 --rows 1000000 --before /work/main   (368 MiB)

  reader            read s   peak RSS MiB   read peak MiB   s ratio   peak ratio   differing
  whole               6.49        988            760          1.00       1.00         0
  fast                1.20        307             80          0.18       0.11         0
  pandas-usecols      0.97        267             35          0.15       0.05         0
  fast@main           7.37       1033            805          1.14       1.06         0

  python benchmarks/bench_read.py --wide 3 --rows 10000000 --before /work/main   (559 MiB)

  reader            read s   peak RSS MiB   read peak MiB   s ratio   peak ratio   differing
  whole              12.51       1382           1154          1.00       1.00         0
  fast                7.15        592            365          0.57       0.32         0
  pandas-usecols      4.82        547            319          0.38       0.28         0
  fast@main           9.81       1505           1277          0.78       1.11         0

On the wide file, reading by columns is 5.4x faster than the whole-file read with a tenth of its
read peak (the E and u arrays, 16 MB, pyarrow's buffers and one 4 MiB scan chunk); pandas'
C parser with ``usecols`` was still a little faster (0.97 s) on these loaded cores, but is not
correctly rounded in every case (see above). With 3 columns, the read peak at 10⁷ rows is the
arrays and the Dataset's checks, as for pandas (+46 MiB); the time is the parse of every line.
Times on this loaded VM vary by ±30 % between runs (an earlier run: 1.34 s / 5.13 s for
``fast``); the ratios and peaks are stable.

``--root DIR`` reads with the mcref of another checkout (e.g. the main branch, for a before/after
on the same file in one run: ``--root /work/main``; both: ``--roots A,B``).

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
from mcref.core import _input
method, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
cols = dict(E="E", u="u") if len(sys.argv) > 4 and sys.argv[4] == "Eu" else {}  # --wide: E and u only
def status(key):
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) / 1024 for ln in f if ln.startswith(key + ":"))
try:  # the read's own peak: the high-water mark reset after the imports (Linux)
    rss0 = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    rss0 = None
t0 = time.perf_counter()
if method == "imports":
    ds = None
elif method == "text":
    _input.FAST_CSV_BYTES = float("inf")
    ds = D.from_file(path)
elif method == "fast":
    ds = D.from_file(path, **cols)
elif method == "whole":  # the fast reader before issue 41: pyarrow.csv.read_csv converts every column
    _input.read_text_fast = _input.read_text_whole
    ds = D.from_file(path, **cols)
elif method == "pandas-usecols":
    ds = D.from_frame(pd.read_csv(path, usecols=list(cols.values())), **cols)
elif method == "pandas":
    ds = D.from_frame(pd.read_csv(path))
elif method == "pandas-rt":
    ds = D.from_frame(pd.read_csv(path, float_precision="round_trip"))
elif method == "pandas-arrow":
    ds = D.from_frame(pd.read_csv(path, engine="pyarrow"))
elif method == "pandas-parquet":
    ds = D.from_frame(pd.read_parquet(path))
seconds = time.perf_counter() - t0
if ds is not None and out != "-":
    np.savez(out, E=ds.E, u=ds.u, **({} if ds.x is None else {"x": ds.x}))
read_peak = None if rss0 is None else status("VmHWM") - rss0
print(json.dumps({"module": D.__file__, "seconds": seconds, "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "read_peak_mib": read_peak}))
"""

METHODS = ("text", "fast", "pandas", "pandas-rt", "pandas-arrow")
PARQUET_METHODS = ("fast", "pandas-parquet")
WIDE_METHODS = ("whole", "fast", "pandas-usecols")


def write_file(path: Path, rows: int, seed: int = 0, extra: int = 0) -> None:
    """E ~ u·N(0, 1), u lognormal, x uniform, 17 significant digits (every bit matters);
    ``extra`` more uniform columns c0, c1, ...; ``extra < 0``: E and u, then ``-extra - 2``
    uniform columns (the --wide CSV)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    u = rng.lognormal(-1.0, 0.5, rows)
    cols = {"E": u * rng.standard_normal(rows), "u": u, "x": rng.uniform(0, 10, rows)}
    if extra < 0:
        del cols["x"]
    cols.update({f"c{j}": rng.uniform(0, 1, rows) for j in range(abs(extra) if extra > 0 else -extra - 2)})
    if path.suffix == ".parquet":
        from pyarrow import parquet as pq

        pq.write_table(pa.table(cols), path)
    else:
        from pyarrow import csv as pacsv

        pacsv.write_csv(pa.table(cols), path)


def run(method: str, path: Path, out: str, root: Path = ROOT, cols: str = "") -> dict:
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # cwd: the file's folder, so that `python -c` (which puts the cwd first on sys.path) imports the mcref of
    # `root`, not of a checkout it happens to be started in
    res = subprocess.run([sys.executable, "-c", CHILD, method, str(path), out, cols], capture_output=True, text=True,
                         env=env, check=False, cwd=str(path.parent))
    if res.returncode != 0:
        raise RuntimeError(f"{method}: {res.stderr.strip()[-2000:]}")
    got = json.loads(res.stdout.strip().splitlines()[-1])
    if not Path(got["module"]).resolve().is_relative_to(root.resolve()):
        raise RuntimeError(f"{method}: read with {got['module']}, not the mcref of {root}")
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--methods", default=None, help="default: every reader of the format")
    ap.add_argument("--format", default="csv", choices=["csv", "parquet"])
    ap.add_argument("--extra-columns", type=int, default=0, help="Parquet: more columns that no reader needs")
    ap.add_argument("--wide", type=int, default=0, metavar="K",
                    help="CSV of K columns (E, u and K - 2 others), read for E and u: whole vs by columns vs pandas")
    ap.add_argument("--roots", default=str(ROOT), help="comma-separated checkouts of mcref to read with")
    ap.add_argument("--before", default=None, metavar="DIR",
                    help="also read with `fast` of the mcref checkout DIR (e.g. /work/main: the reader as shipped)")
    args = ap.parse_args()
    if args.wide and (args.format != "csv" or args.wide < 2):
        ap.error("--wide K needs --format csv and K >= 2")
    default = WIDE_METHODS if args.wide else PARQUET_METHODS if args.format == "parquet" else METHODS
    methods = [m for m in (args.methods or ",".join(default)).split(",") if m]
    roots = [Path(r).resolve() for r in args.roots.split(",") if r]
    work = Path(tempfile.mkdtemp(dir=args.dir, prefix="mcref_bench_read_"))
    path = work / f"big.{args.format}"
    t0 = time.perf_counter()
    write_file(path, args.rows, extra=-args.wide if args.wide else args.extra_columns)
    n_cols = args.wide or 3 + (args.extra_columns if args.format == "parquet" else 0)
    print(f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{args.rows:,} rows, {args.format}, {n_cols} columns, {path.stat().st_size / 2**20:.0f} MiB "
          f"(written in {time.perf_counter() - t0:.1f} s){'; read for E and u' if args.wide else ''}")
    cols = "Eu" if args.wide else ""
    base = run("imports", path, "-")
    print(f"imports only: peak RSS {base['maxrss_mib']:.0f} MiB")
    arrays = {}
    print(f"{'reader':<28} {'read s (median)':>16} {'peak RSS MiB':>13} {'read peak MiB':>14} "
          f"{'s ratio':>8} {'peak ratio':>10}  differing values")
    ref, first = None, None
    runs = [(m, root) for root in roots for m in methods]
    if args.before:
        runs.append(("fast", Path(args.before).resolve()))
    for m, root in runs:
        key = f"{m}@{root.name}" if len(roots) > 1 or root not in roots else m
        times, rss, own = [], [], []
        for r in range(args.repeats):
            res = run(m, path, str(work / f"{len(arrays)}.npz") if r == 0 else "-", root, cols)
            times.append(res["seconds"])
            rss.append(res["maxrss_mib"])
            own.append(res["read_peak_mib"])
        with np.load(work / f"{len(arrays)}.npz") as z:
            arrays[key] = {k: z[k] for k in z.files}
        if ref is None and (m == "text" or args.format == "parquet" or args.wide):
            ref = arrays[key]  # the text reader (CSV), else the first reader (Parquet: no parsing; --wide)
        diff = "-" if ref is None else str(sum(int(np.count_nonzero(arrays[key][k].view(np.int64)
                                                                    != ref[k].view(np.int64)))
                                               for k in ref))
        peak = statistics.median(rss)
        # the read's own peak: VmHWM over VmRSS after the imports (reset there); else against the imports' process
        read_peak = statistics.median(own) if None not in own else peak - base["maxrss_mib"]
        sec = statistics.median(times)
        first = first or (sec, read_peak)
        print(f"{key:<28} {sec:>16.2f} {peak:>13.0f} {read_peak:>14.0f} {sec / first[0]:>8.2f} "
              f"{read_peak / first[1]:>10.2f}  {diff}", flush=True)
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    for f in work.iterdir():
        f.unlink()
    work.rmdir()


if __name__ == "__main__":
    main()
