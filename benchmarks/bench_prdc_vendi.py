"""Precision/recall/density/coverage and the Vendi score: mcref beside prdc 0.2 and vendi-score
0.0.3, side by side in one run (medians of interleaved repeats, ratios, peak RSS increase).

    python benchmarks/bench_prdc_vendi.py            # the sizes of the targets (minutes)
    python benchmarks/bench_prdc_vendi.py --quick    # small sizes (about a minute)
    python benchmarks/bench_prdc_vendi.py --coverage # the coverage of diversity's interval

Rows:
* prdc at n = m (d = 10): mcref.samples._knn.prdc against prdc.compute_prdc, which forms three
  dense distance matrices (n² + m² + nm float64);
* prdc at n = m = 10⁵ alone (prdc would need 3·n²·8 bytes = 240 GB there);
* prdc_permuted: B labellings of one pooled sample against prdc on each labelling;
* Vendi, exact: mcref against vendi.score_K (given the same kernel matrix), and mcref alone at
  the target n (q = 1: the eigenvalues; q = 2: ‖K/n‖_F by blocks);
* Vendi, dual (cosine kernel, p features): mcref against vendi.score_dual.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved_medians, machine, peak_rss_increase  # noqa: E402

from mcref.samples._knn import prdc, prdc_permuted  # noqa: E402
from mcref.samples._vendi import gaussian_matrix, vendi_score  # noqa: E402


def _peer_prdc(X, Y, k):
    from prdc import compute_prdc

    with contextlib.redirect_stdout(io.StringIO()):
        return compute_prdc(X, Y, k)


def _row(name, ours, theirs=None, extra=""):
    ratio = f"{theirs / ours:8.1f}×" if theirs else "         "
    th = f"{theirs:9.3f} s" if theirs else "          -"
    print(f"{name:<44} {ours:9.3f} s  {th}  {ratio}  {extra}")


def bench_prdc(n, repeats, rng):
    X, Y = rng.normal(size=(n, 10)), rng.normal(size=(n, 10)) + 0.1
    prdc(X[:50], Y[:50], k=5)  # compile
    t = interleaved_medians({"ours": lambda: prdc(X, Y, k=5), "peer": lambda: _peer_prdc(X, Y, 5)}, repeats)
    _, mem_o = peak_rss_increase(lambda: prdc(X, Y, k=5))
    _, mem_p = peak_rss_increase(lambda: _peer_prdc(X, Y, 5))
    _row(f"prdc n = m = {n}, d = 10, k = 5", t["ours"], t["peer"],
         f"peak RSS +{mem_o:.0f} MiB vs +{mem_p:.0f} MiB (prdc's 3 matrices: {3 * n * n * 8 / 2**20:.0f} MiB)")


def bench_prdc_large(n, rng):
    X, Y = rng.normal(size=(n, 10)), rng.normal(size=(n, 10)) + 0.1
    t0 = time.perf_counter()
    r, mem = peak_rss_increase(lambda: prdc(X, Y, k=5))
    dt = time.perf_counter() - t0
    _row(f"prdc n = m = {n}, d = 10, k = 5 (alone)", dt, None,
         f"peak RSS +{mem:.0f} MiB; prdc would need {3 * n * n * 8 / 1e9:.0f} GB; {r}")


def bench_permuted(n, B, repeats, rng):
    Z = rng.normal(size=(2 * n, 10))
    labels = np.array([rng.permutation(2 * n) < n for _ in range(B)])
    prdc_permuted(Z[:100], labels[:2, :100] if n >= 50 else labels[:2], k=5)
    n_peer = 3
    import mcref.samples._knn as knn

    def ours():
        knn._LAST.clear()  # a cold call: the neighbour lists made again (kept lists would skip the tree)
        return prdc_permuted(Z, labels, k=5)

    t = interleaved_medians({"ours": ours,
                             "peer": lambda: [_peer_prdc(Z[lab], Z[~lab], 5) for lab in labels[:n_peer]]}, repeats)
    peer = t["peer"] / n_peer * B
    _row(f"prdc_permuted n = m = {n}, B = {B}", t["ours"], peer,
         f"(prdc: {n_peer} labellings timed, ×{B / n_peer:.0f})")


def bench_vendi_exact(n, n_big, repeats, rng, q1=True):
    from vendi_score import vendi

    X = rng.normal(size=(n, 10))
    ell = 3.0
    K = gaussian_matrix(X, ell)
    t = interleaved_medians({"ours": lambda: vendi_score(X, length_scale=ell),
                             "peer": lambda: vendi.score_K(gaussian_matrix(X, ell))}, repeats)
    _row(f"vendi exact n = {n}, q = 1 (peer given K)", t["ours"], t["peer"],
         f"values {vendi_score(K=K):.6g} and {vendi.score_K(K):.6g}")
    if n_big:
        Xb = rng.normal(size=(n_big, 10))
        for q in ((2, 1) if q1 else (2,)):
            t0 = time.perf_counter()
            v, mem = peak_rss_increase(lambda: vendi_score(Xb, length_scale=ell, q=q))
            _row(f"vendi exact n = {n_big}, q = {q} (alone)", time.perf_counter() - t0, None,
                 f"peak RSS +{mem:.0f} MiB, VS = {v:.6g}")


def bench_dual(n, p, repeats, rng):
    from vendi_score import vendi

    X = rng.normal(size=(n, p)) + 0.2
    t = interleaved_medians({"ours": lambda: vendi_score(X, kernel="linear"),
                             "peer": lambda: vendi.score_dual(X)}, repeats)
    _, mem = peak_rss_increase(lambda: vendi_score(X, kernel="linear"))
    _row(f"vendi dual n = {n}, p = {p}", t["ours"], t["peer"], f"peak RSS +{mem:.0f} MiB (X itself "
         f"{X.nbytes / 2**20:.0f} MiB)")


def coverage_study(n, q, reps, rng):
    """Coverage of diversity's interval: E VS_n of a 3-mode mixture in d = 2 (ℓ = 1) by 2000 fresh
    sets, then the share of ``reps`` fresh sets whose interval holds it (binomial se)."""
    from mcref.samples._diversity import diversity

    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])

    def draw():
        return centres[rng.integers(0, 3, n)] + 0.7 * rng.normal(size=(n, 2))

    truth = float(np.mean([vendi_score(draw(), length_scale=1.0, q=q) for _ in range(2000)]))
    hits, widths = 0, []
    for i in range(reps):
        r = diversity({"A": draw()}, length_scale=1.0, q=q, n_perm=0, seed=i)["A"]
        hits += r.low <= truth <= r.high
        widths.append(r.high - r.low)
    c = hits / reps
    print(f"diversity interval, n = {n}, q = {q:g}: E VS = {truth:.4g}, coverage {c:.3f} ± {np.sqrt(c * (1 - c) / reps):.3f} "
          f"over {reps} sets (95 % nominal), mean width {np.mean(widths):.3g}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--prdc-n", type=int, default=100_000, help="n = m of the large prdc row")
    ap.add_argument("--vendi-n", type=int, default=20_000, help="n of the large exact Vendi rows")
    ap.add_argument("--vendi-q1", action=argparse.BooleanOptionalAction, default=True,
                    help="time q = 1 (the n × n eigenvalues) at --vendi-n, not only q = 2")
    ap.add_argument("--coverage", action="store_true",
                    help="only the coverage study of diversity's interval (n = 100, q = 1 and 2, 400 sets)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    if args.coverage:
        for q in (1, 2):
            coverage_study(100, q, 400, np.random.default_rng(123))
        return
    print(machine())
    print(f"{'':<44} {'mcref':>11}  {'peer':>11}  {'ratio':>9}")
    r = args.repeats
    if args.quick:
        bench_prdc(2000, r, rng)
        bench_prdc_large(20_000, rng)
        bench_permuted(1000, 99, r, rng)
        bench_vendi_exact(1500, 0, r, rng)
        bench_dual(100_000, 64, r, rng)
    else:
        bench_prdc(2000, r, rng)
        bench_prdc(5000, r, rng)
        bench_prdc_large(args.prdc_n, rng)
        bench_permuted(2000, 199, r, rng)
        bench_vendi_exact(3000, args.vendi_n, r, rng, q1=args.vendi_q1)
        bench_dual(1_000_000, 64, r, rng)


if __name__ == "__main__":
    main()
