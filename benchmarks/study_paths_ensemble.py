"""Size and power of the combined verdict of ``mcref.from_samples`` (issue 38, part 3;
docs/methods.md, "Exact null of an ensemble").

Cells: M = 1000 cases, predictive law N(mu, sd²) or a unit-variance Laplace scaled by sd
(mu ~ N(0, 1), sd ~ U(0.3, 1.2)); y is drawn from the predictive law, the m members from the
same law with their spread multiplied by ``spread`` (1.0: calibrated and exchangeable; 0.7
and 0.9: under-dispersed, 1.4 and 1.1: over-dispersed ensembles). m = 5, 20, 100. Every set runs
``from_samples(y, draws, verdict=False, seed=..., n_swaps=499)`` (the size is exact for any
number of swaps; 499 halves the cost of the default 999) at α = 0.05;
the study prints, per cell, the combined verdict's rejection rate with its binomial (Clopper–
Pearson) 95 % interval, and beside it the rate at which at least one of the combined tests
has its own swap p ≤ α (the uncorrected "any test" reading) and the rank (PIT) verdict.

Results go to ``benchmarks/results/paths_ensemble.jsonl``, one line per finished set;
a rerun skips the sets already there (resumable, Ctrl-C safe). Each set's seed is
``SeedSequence([2026, law, m, spread·10, k])``, so a resumed run gives the same table.

The calibrated cells of m = 5 and 20 run first (``--sets``, 100 each), then m = 100
(``--sets-100``, 40) and the miscalibrated cells (``--power-sets`` 10 at spread 0.7 and 1.4,
``--near-sets`` 20 at 0.9 and 1.1), in rounds of 10 sets per cell.

Run: ``python benchmarks/study_paths_ensemble.py [--sets 100] [--minutes 30] [--n-swaps 499]``
(``--table`` prints the table of the stored sets only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's mcref

RESULTS = Path(__file__).resolve().parent / "results" / "paths_ensemble.jsonl"
LAWS = ("normal", "laplace")
MEMBERS = (5, 20, 100)
SPREADS = (1.0, 0.7, 1.4, 0.9, 1.1)
M = 1000
ALPHA = 0.05
#: swaps per check: the combined verdict is exact for any number (its size does not depend on
#: it); 499 halves the cost of the default 999 (p-values on a grid of 1/500)
N_SWAPS = 499


def ensemble(law: str, m: int, spread: float, ss: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """(y, draws) of one set of the cell: y from the predictive law, the members with ``spread``."""
    rng = np.random.default_rng(ss)
    mu = rng.normal(size=M)
    sd = rng.uniform(0.3, 1.2, M)
    if law == "normal":
        eps = rng.standard_normal((M, m + 1))
    else:
        eps = rng.laplace(size=(M, m + 1)) / np.sqrt(2.0)
    y = mu + sd * eps[:, 0]
    draws = mu[:, None] + spread * sd[:, None] * eps[:, 1:]
    return y, draws


def one_set(law: str, m: int, spread: float, k: int, n_swaps: int = N_SWAPS) -> dict:
    import mcref

    ss = np.random.SeedSequence([2026, LAWS.index(law), m, int(round(spread * 10)), k])
    y, draws = ensemble(law, m, spread, ss)
    t0 = time.perf_counter()
    chk = mcref.from_samples(y, draws, verdict=False, seed=ss.spawn(1)[0], alpha=ALPHA, n_swaps=n_swaps)
    c = chk.combined
    return {"law": law, "m": m, "spread": spread, "k": k, "n_swaps": n_swaps, "p": c.p, "verdict": c.verdict,
            "any": bool(min(t.p for t in c.tests) <= ALPHA), "driver": c.driver.name,
            "pit_verdict": chk.pit_verdict, "coverage_verdict": chk.coverage_verdict,
            "tests": {t.name: t.p for t in c.tests}, "seconds": time.perf_counter() - t0}


def load() -> list[dict]:
    if not RESULTS.exists():
        return []
    return [json.loads(line) for line in RESULTS.read_text().splitlines() if line.strip()]


def cp(k: int, n: int) -> tuple[float, float]:
    ci = st.binomtest(k, n).proportion_ci(0.95, method="exact")
    return 100 * ci.low, 100 * ci.high


def table(rows: list[dict]) -> str:
    out = ["| law | m | members' spread | sets | combined invalid % [95 % CI] | any test p ≤ α % | ranks invalid % "
           "| s/set |", "|---|---|---|---|---|---|---|---|"]
    for spread in SPREADS:
        for law in LAWS:
            for m in MEMBERS:
                r = [x for x in rows if x["law"] == law and x["m"] == m and x["spread"] == spread]
                if not r:
                    continue
                n = len(r)
                k = sum(x["verdict"] == "invalid" for x in r)
                lo, hi = cp(k, n)
                anyk = sum(x["any"] for x in r)
                pit = sum(x["pit_verdict"] == "invalid" for x in r)
                sec = np.median([x["seconds"] for x in r])
                out.append(f"| {law} | {m} | {spread:g} | {n} | {100 * k / n:.1f} [{lo:.1f}, {hi:.1f}] | "
                           f"{100 * anyk / n:.1f} | {100 * pit / n:.1f} | {sec:.2f} |")
    return "\n".join(out)


def plan(args) -> list[list[tuple[str, int, float, int]]]:
    """Phases of (law, m, spread, target sets): first the calibrated cells of m = 5 and 20,
    then m = 100 and the miscalibrated cells; within a phase, rounds of 10 sets per cell."""
    first = [(law, m, 1.0, args.sets) for m in (5, 20) for law in LAWS]
    second = [(law, 100, 1.0, args.sets_100) for law in LAWS]
    second += [(law, m, sp, args.power_sets if sp in (0.7, 1.4) else args.near_sets)
               for sp in SPREADS[1:] for m in MEMBERS for law in LAWS]
    return [first, second]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=100, help="sets per calibrated cell of m = 5, 20 (default 100)")
    ap.add_argument("--sets-100", type=int, default=40, help="sets per calibrated cell of m = 100 (default 40)")
    ap.add_argument("--power-sets", type=int, default=10, help="sets per cell of spread 0.7 and 1.4 (default 10)")
    ap.add_argument("--near-sets", type=int, default=20, help="sets per cell of spread 0.9 and 1.1 (default 20)")
    ap.add_argument("--n-swaps", type=int, default=N_SWAPS, help=f"swapped sets per check (default {N_SWAPS})")
    ap.add_argument("--minutes", type=float, default=30.0, help="stop starting new sets after this long")
    ap.add_argument("--table", action="store_true", help="print the table of the stored sets and stop")
    args = ap.parse_args()
    rows = load()
    if not args.table:
        done = {(x["law"], x["m"], x["spread"], x["k"]) for x in rows}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        stop = time.monotonic() + 60 * args.minutes
        with RESULTS.open("a") as f:
            for phase in plan(args):
                for k0 in range(0, max(t for *_, t in phase), 10):
                    for law, m, spread, target in phase:
                        for k in range(k0, min(k0 + 10, target)):
                            if (law, m, spread, k) in done or time.monotonic() > stop:
                                continue
                            row = one_set(law, m, spread, k, args.n_swaps)
                            f.write(json.dumps(row) + "\n")
                            f.flush()
                            rows.append(row)
        print(f"{len(rows)} sets stored in {RESULTS}")
    print(table(rows))


if __name__ == "__main__":
    main()
