"""The two-sample verdict (issue 61): size and power of ``mcref.samples.two_sample`` per statistic
and jointly, beside hyppo's MMD and dcor's energy test on the same pairs, and the coverage of the
FD and MMD² intervals.

Pairs (X, Y) of n = m = ``--n`` (default 200) rows:

* size (one law): ``gauss`` N(0, I₅); ``t3`` t(3) in d = 2; ``mix3`` a 3-mode mixture in d = 10
  (means 0, 3e₁, 3e₂, unit covariance); ``ties`` N(0, I₂) rounded to 0.5 (many tied rows);
* power (Y against X ~ N(0, I₂)): ``shift`` mean + 0.3 e₁; ``scale`` sd × 1.2; ``dropmode``
  X from the 3-mode mixture in d = 2, Y from two of its modes; ``corr`` both standard normal
  marginals, correlation 0 (X) against 0.4 (Y).

Every pair runs ``two_sample(X, Y, stats=[MMD, energy, FD, precision, recall, density, coverage],
n_perm=199, sequential=False, n_boot=100)``, hyppo 0.5.2's ``ksample.MMD().test(X, Y,
reps=199, auto=False)`` and dcor 0.7's ``energy_test(X, Y, num_resamples=199)``; each records its
rejections at α = 0.05. Coverage: the share of FD and MMD² (ℓ = 1) intervals that hold the law's
value where it is known in closed form (``gauss``: 0 is not coverable by a distance's interval, so
coverage is read on ``shift``: FD = 0.09, MMD² of N(0, I₂) and N(0.3e₁, I₂) at ℓ = 1).

Cells of 20 pairs, resumable in ``study_two_sample.sqlite`` (the runner of ``mcref.studies``).
Run: ``python benchmarks/study_two_sample.py [--pairs 1000] [--n 200] [--n-jobs 1]``; it prints the
tables with 95 % Clopper–Pearson intervals.
"""

from __future__ import annotations

import argparse
import math
import os
import warnings

import numpy as np

from mcref.studies._runner import StudySpec, run_study

HERE = os.path.dirname(os.path.abspath(__file__))
PER_CELL = 20
STATS = ("MMD", "energy", "FD", "precision", "recall", "density", "coverage")
DESIGNS = (("size", "gauss"), ("size", "t3"), ("size", "mix3"), ("size", "ties"),
           ("power", "shift"), ("power", "scale"), ("power", "dropmode"), ("power", "corr"))
SHIFT = 0.3


def _mix(rng, n, d, modes):
    means = np.zeros((3, d))
    means[1, 0] = 3.0
    means[2, 1] = 3.0
    return means[rng.choice(modes, size=n)] + rng.normal(size=(n, d))


def make_pair(design: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if design == "gauss":
        return rng.normal(size=(n, 5)), rng.normal(size=(n, 5))
    if design == "t3":
        return rng.standard_t(3, size=(n, 2)), rng.standard_t(3, size=(n, 2))
    if design == "mix3":
        return _mix(rng, n, 10, [0, 1, 2]), _mix(rng, n, 10, [0, 1, 2])
    if design == "ties":
        return np.round(2 * rng.normal(size=(n, 2))) / 2, np.round(2 * rng.normal(size=(n, 2))) / 2
    X = rng.normal(size=(n, 2))
    if design == "shift":
        return X, rng.normal(size=(n, 2)) + [SHIFT, 0.0]
    if design == "scale":
        return X, 1.2 * rng.normal(size=(n, 2))
    if design == "dropmode":
        return _mix(rng, n, 2, [0, 1, 2]), _mix(rng, n, 2, [0, 1])
    L = np.linalg.cholesky(np.array([[1.0, 0.4], [0.4, 1.0]]))
    return X, rng.normal(size=(n, 2)) @ L.T


def _true_mmd(shift: float, d: int = 2, ell: float = 1.0) -> float:
    """MMD² of N(0, I_d) and N(shift·e₁, I_d) with the Gaussian kernel of length ℓ."""
    c = (ell * ell / (ell * ell + 2.0)) ** (d / 2.0)
    return 2.0 * c * (1.0 - math.exp(-shift * shift / (2.0 * (ell * ell + 2.0))))


def cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """``key["pairs"]`` pairs of one design: each test's rejection and the intervals' coverage."""
    from mcref.samples import two_sample
    rows = []
    for child in ss.spawn(int(key["pairs"])):
        s_data, s_test = child.spawn(2)
        X, Y = make_pair(key["design"], int(params["n"]), np.random.default_rng(s_data))
        tab = two_sample(X, Y, stats=STATS, n_perm=params["B"], sequential=False, n_boot=params["n_boot"],
                         length_scale=1.0, seed=s_test)
        row = {f"rej_{s}": float(tab[s].p <= 0.05) for s in STATS}
        row["rej_joint"] = float(tab.joint.p <= 0.05)
        if key["design"] == "shift":
            row["cover_FD"] = float(tab["FD"].low <= SHIFT ** 2 <= tab["FD"].high)
            row["cover_MMD"] = float(tab["MMD"].low <= _true_mmd(SHIFT) <= tab["MMD"].high)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                from hyppo.ksample import MMD
                row["rej_hyppo"] = float(MMD().test(X, Y, reps=params["B"], auto=False)[1] <= 0.05)
            except ImportError:
                row["rej_hyppo"] = float("nan")
            try:
                import dcor
                row["rej_dcor"] = float(dcor.homogeneity.energy_test(X, Y, num_resamples=params["B"]).pvalue <= 0.05)
            except ImportError:
                row["rej_dcor"] = float("nan")
        rows.append(row)
    return rows


def spec(n_pairs: int, n: int) -> StudySpec:
    keys = [{"part": p, "design": d, "chunk": c, "pairs": PER_CELL}
            for p, d in DESIGNS for c in range(-(-n_pairs // PER_CELL))]
    return StudySpec(name="two_sample", params={"n": n, "B": 199, "n_boot": 100, "stats": list(STATS)}, keys=keys,
                     cell=cell)


def _rate(x) -> str:
    from scipy.stats import binomtest
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if not x.size:
        return "-"
    k = int(x.sum())
    ci = binomtest(k, x.size).proportion_ci(0.95)
    return f"{100 * k / x.size:.1f} [{100 * ci.low:.1f}, {100 * ci.high:.1f}]"


def summary(table) -> str:
    """The tables of the study, from the stored table only."""
    cols = [f"rej_{s}" for s in STATS] + ["rej_joint", "rej_hyppo", "rej_dcor"]
    lines = ["design | pairs | " + " | ".join(c[4:] for c in cols), "|".join(["---"] * (len(cols) + 2))]
    for (part, design), g in table.groupby(["part", "design"], sort=False):
        lines.append(f"{part}:{design} | {len(g)} | " + " | ".join(_rate(g[c]) for c in cols))
    sh = table[table["design"] == "shift"]
    if len(sh) and "cover_FD" in sh:
        lines += ["", f"coverage (shift, {len(sh)} pairs): FD {_rate(sh['cover_FD'])}, MMD² {_rate(sh['cover_MMD'])}"]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--store", default=os.path.join(HERE, "study_two_sample.sqlite"))
    a = ap.parse_args(argv)
    res = run_study(spec(a.pairs, a.n), seed=2061, n_jobs=a.n_jobs, store=a.store, progress=False)
    print(f"two_sample study: n = m = {a.n}, B = 199, {a.pairs} pairs a design (rejections at α = 0.05, %, "
          f"95 % Clopper–Pearson), {res.n_computed} cells computed, {res.n_loaded} loaded, {res.seconds:.0f} s")
    print(summary(res.table))


if __name__ == "__main__":
    main()
