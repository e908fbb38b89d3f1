"""Recalibration factors of the nine built-in data sets, beside their heavy-tail indicators
(docs/methods.md, "Recalibration", "The nine sets").

For each set (``mcref.datasets``), fitted on the whole set with ``mcref.recalibrate``:

* ``s_zms``  σ-scaling factor, s² = ZMS = ⟨z²⟩, ± its delta-method se;
* ``s_rce``  the MSE/MV factor, s² = ⟨E²⟩/⟨u²⟩, ± its delta-method se;
* ``zms/rce`` their ratio ± its pair-bootstrap se (``--boot`` resamples, the two factors
  recomputed on the same resample), and ``z_ratio`` = ln(ratio)/se(ln ratio);
* ``bvs``    the range of the binwise factors s_b (``--bins`` equal-count bins of u) and
  ``p_het``, the χ² test that they are all equal: χ² = Σ_b ((s_b − s̄)/se_b)², s̄ the
  inverse-variance weighted mean, N − 1 degrees of freedom. A small p says the
  miscalibration depends on u, the condition under which ZMS and MSE/MV factors differ;
* ``poly``   slope b ± se (HC0) and intercept a/⟨u²⟩ ± se of u'² = a + b·u²: b ≠ s² or
  a ≠ 0 is the same u-dependence seen as a line;
* heavy tails: ``nu_u2`` (shape ν of the minimum-KS fit u² ~ IG(ν, ν), ``mcref.distfit``;
  ν ≤ 2: ⟨u⁴⟩ infinite, so ⟨u²E²⟩ and the se of MSE/MV are not finite either),
  ``t_nu`` (ML Student-t fit of Z) and ``kurt_Z`` (excess kurtosis of Z).

With ``--libraries`` a second table compares with netcal and uncertainty-toolbox where they
are installed (docs/methods.md, "Against netcal and uncertainty-toolbox"): netcal's
VarianceScaling factor (relative difference from s_zms) and uncertainty-toolbox's
coverage-based std ratio (criterion ``ma_cal``, another criterion).

Run: ``python benchmarks/recal_factors.py [--boot 2000] [--bins 20] [--seed 2024] [--libraries]``
(about 15 s on 2 cores, numba compilation included; with --libraries about 100 s, most of it uncertainty-toolbox's search).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

import mcref  # noqa: E402


def ratio_se(E: np.ndarray, u: np.ndarray, n_boot: int, seed) -> float:
    """Pair-bootstrap se of s_zms/s_rce = √(⟨z²⟩⟨u²⟩/⟨E²⟩), both recomputed on each resample."""
    rng = np.random.default_rng(seed)
    z2, E2, u2 = (E / u) ** 2, E * E, u * u
    M = E.size
    chunk = max(1, 4_000_000 // M)
    out = []
    for start in range(0, n_boot, chunk):
        idx = rng.integers(0, M, size=(min(chunk, n_boot - start), M))
        out.append(np.sqrt(z2[idx].mean(1) * u2[idx].mean(1) / E2[idx].mean(1)))
    return float(np.std(np.concatenate(out), ddof=1))


def heterogeneity(rec: mcref.Recalibrator) -> tuple[float, float, float]:
    """(min s_b, max s_b, p of the χ² test that every s_b is equal) of a ``"bvs"`` fit."""
    s = np.array(list(rec.params.values()))
    se = np.array(list(rec.se.values()))
    w = 1.0 / se**2
    chi2 = float(np.sum(w * (s - np.sum(w * s) / np.sum(w)) ** 2))
    return float(s.min()), float(s.max()), float(sps.chi2.sf(chi2, s.size - 1))


def factor_table(n_boot: int = 2000, n_bins: int = 20, seed: int = 2024, fit_boot: int = 100) -> pd.DataFrame:
    """One row per built-in set: the factors of every scaling method and the heavy-tail indicators."""
    rows = []
    children = np.random.SeedSequence(seed).spawn(2 * len(mcref.datasets.names()))
    for k, name in enumerate(mcref.datasets.names()):
        ds = mcref.datasets.load(name)
        E, u = ds.E, ds.u
        zms = mcref.recalibrate(E, u, "zms")
        rce = mcref.recalibrate(E, u, "rce")
        bvs = mcref.recalibrate(E, u, "bvs", n_bins=n_bins)
        poly = mcref.recalibrate(E, u, "poly")
        fit = mcref.distfit(E, u, n_boot=fit_boot, seed=children[2 * k])
        ratio = zms.params["s"] / rce.params["s"]
        se_ratio = ratio_se(E, u, n_boot, children[2 * k + 1])
        lo, hi, p_het = heterogeneity(bvs)
        mu2 = float(np.mean(u * u))
        rows.append({
            "dataset": name, "M": ds.M,
            "s_zms": zms.params["s"], "se_zms": zms.se["s"], "s_rce": rce.params["s"], "se_rce": rce.se["s"],
            "zms/rce": ratio, "se_ratio": se_ratio, "z_ratio": math.log(ratio) / (se_ratio / ratio),
            "bvs_min": lo, "bvs_max": hi, "p_het": p_het,
            "poly_b": poly.params["b"], "se_b": poly.se["b"],
            "poly_a_rel": poly.params["a"] / mu2, "se_a_rel": poly.se["a"] / mu2,
            "nu_u2": fit.nu_u2, "se_nu_u2": fit.se["nu_u2"], "t_nu": fit.t_nu,
            "kurt_Z": float(sps.kurtosis(ds.Z)),
        })
    return pd.DataFrame(rows).set_index("dataset")


def markdown(df: pd.DataFrame) -> str:
    """The table as printed into docs/methods.md."""
    head = ("| set | M | s_zms | s_rce | zms/rce | bvs s_b range | p_het | poly b | poly a/⟨u²⟩ | ν(u²) | ν_t(Z) "
            "| kurt(Z) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, r in df.iterrows():
        lines.append(
            f"| {name} | {int(r.M)} | {r.s_zms:.3f} ± {r.se_zms:.3f} | {r.s_rce:.3f} ± {r.se_rce:.3f} "
            f"| {r['zms/rce']:.3f} ± {r.se_ratio:.3f} | {r.bvs_min:.2f}–{r.bvs_max:.2f} | {r.p_het:.2g} "
            f"| {r.poly_b:.2f} ± {r.se_b:.2f} | {r.poly_a_rel:.2f} ± {r.se_a_rel:.2f} "
            f"| {r.nu_u2:.2g} ± {r.se_nu_u2:.1g} | {r.t_nu:.3g} | {r.kurt_Z:.3g} |")
    return "\n".join(lines)


def library_table(seed: int = 2024) -> pd.DataFrame:
    """netcal's VarianceScaling and uncertainty-toolbox's coverage ratio on the nine sets (NaN
    where a package is missing)."""
    try:
        from netcal.regression import VarianceScaling
    except ImportError:
        VarianceScaling = None
    try:
        import uncertainty_toolbox as uct
    except ImportError:
        uct = None
    try:
        from sklearn.isotonic import IsotonicRegression
    except ImportError:
        IsotonicRegression = None
    rows = []
    for name in mcref.datasets.names():
        ds = mcref.datasets.load(name)
        E, u, zero = ds.E, ds.u, np.zeros(ds.M)
        s = mcref.recalibrate(E, u, "zms").params["s"]
        row = {"dataset": name, "s_zms": s, "netcal_rel_diff": np.nan, "uct_ma_cal": np.nan,
               "sklearn_iso_rel_diff": np.nan}
        if VarianceScaling is not None:
            row["netcal_rel_diff"] = abs(float(VarianceScaling().fit((zero, u), E)._weight[0, 0]) / s - 1)
        if uct is not None:
            row["uct_ma_cal"] = float(uct.recalibration.optimize_recalibration_ratio(zero, u, E, criterion="ma_cal"))
        if IsotonicRegression is not None:
            rec = mcref.recalibrate(E, u, "isotonic")
            ref = np.maximum(IsotonicRegression(out_of_bounds="clip").fit(u * u, E * E).predict(u * u), rec.floor)
            row["sklearn_iso_rel_diff"] = float(np.max(np.abs(rec.variance(u) / ref - 1)))
        rows.append(row)
    return pd.DataFrame(rows).set_index("dataset")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boot", type=int, default=2000, help="bootstrap resamples of the ratio's se (default 2000)")
    ap.add_argument("--fit-boot", type=int, default=100, help="bootstrap replicates of distfit (default 100)")
    ap.add_argument("--bins", type=int, default=20, help="bins of bvs (default 20)")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--libraries", action="store_true", help="also compare with netcal / uncertainty-toolbox")
    args = ap.parse_args()
    t0 = time.perf_counter()
    df = factor_table(args.boot, args.bins, args.seed, args.fit_boot)
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.precision", 4):
        print(df.to_string())
    print()
    print(markdown(df))
    if args.libraries:
        lib = library_table(args.seed)
        with pd.option_context("display.width", 200, "display.precision", 4):
            print()
            print(lib.to_string())
    print(f"\n{time.perf_counter() - t0:.1f} s; B = {args.boot}, distfit B = {args.fit_boot}, bins = {args.bins}, "
          f"seed = {args.seed}; {machine()}")


if __name__ == "__main__":
    main()
