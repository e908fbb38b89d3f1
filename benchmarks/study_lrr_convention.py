"""Why mcref's ``lrr`` BCa limits sit off ErrViewLib's ``plotLRR`` ones (docs/errviewlib.md).

plotLRR calls ``boot::boot(..., R = 1000)`` and ``boot::boot.ci(type = "bca")`` per bin;
``mcref.diagnostics.lrr`` uses mcref's BCa convention (``mcref.resampling._bootstrap.bca_levels``, as
nptest's ``np.boot``). On the SAME bootstrap replicates of each bin (drawn exactly as ``lrr``
draws them, so convention A reproduces ``lrr``'s limits to the last bit) the limits are computed
under five conventions, changing one ingredient at a time:

* ``A``  mcref: θ̂ appended to the B replicates, z0 = Φ⁻¹(#{θ* < θ̂}/(B+1)), type-7 quantiles of
  the B+1 values, jackknife acceleration;
* ``A1`` as A, z0 over the B replicates only (#{θ* < θ̂}/B);
* ``A2`` as A1, type-7 quantiles of the B replicates (θ̂ not appended);
* ``B``  boot's ``bca.ci`` with jackknife acceleration: z0 over B, ``norm.inter`` (order
  statistics (R+1)α interpolated on the normal scale);
* ``C``  boot's ``bca.ci`` as plotLRR runs it: B with the acceleration from ``empinf``'s default
  for a boot object, the regression of the replicates on the resample frequencies
  (``empinf.reg``: least squares of t on f/n without its first column, l centred).

Over ``n_seeds`` seeds, every limit (lower and upper, every bin) gets its Monte Carlo sd σ (the
sd across seeds of convention C, i.e. of R's own limits); the table gives the mean over seeds
of each step's paired shift in units of that σ, averaged over the bins (and its range over
bins), for the lower and the upper limits. On the synthetic set it also gives each
convention's signed offset from the mean of R's 10 runs in ``tests/data/errviewlib_parity.txt``
(``synth_LRRboot_*``), in units of R's run-to-run sd σ_R, and the parity test's statistic (the
largest |d|/(σ_R·√(1 + 1/10)) over the 32 limits) per seed.

``--check-r`` first checks the emulation of ``bca.ci`` (convention C) against R's
``boot.ci`` on replicates drawn in R (needs Rscript with boot and ErrViewLib's
``hdQuantiles.R`` in ``--evl``, default /tmp/evl).

Run: ``python benchmarks/study_lrr_convention.py [--seeds 40] [--qm9] [--check-r]``
(synthetic set, bins of u and of x, 40 seeds: about 1 min; ``--qm9`` adds QM9_E's 15 bins of
u of ~926 points over ``--qm9-seeds`` (10) seeds, about 1 min more).
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from scipy.special import ndtr, ndtri

from mcref.core._checks import check_seed
from mcref.diagnostics import _binned_halfwidths, _range_ratio
from mcref.shape import hd_weights

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
ALPHA = np.array([0.025, 0.975])
CONVS = ("A", "A1", "A2", "B", "C")


def synth():
    spec = importlib.util.spec_from_file_location("evl_inputs", DATA / "errviewlib_parity_inputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synth()


def ref():
    out = {}
    for line in (DATA / "errviewlib_parity.txt").read_text().splitlines():
        key, *v = line.split()
        if key != "R":
            out[key] = np.array([float(s) for s in v])
    return out


def norm_inter(t, alpha):
    """boot:::norm.inter: order statistic (R+1)α, interpolated on the normal scale."""
    t = np.sort(t)
    R = t.size
    out = np.empty(alpha.size)
    for j, al in enumerate(alpha):
        rk = (R + 1) * al
        k = int(math.trunc(rk))
        if k == rk:
            out[j] = t[k - 1]
        elif k == 0:
            out[j] = t[0]
        elif k == R:
            out[j] = t[-1]
        else:
            z, z1, z2 = ndtri(al), ndtri(k / (R + 1)), ndtri((k + 1) / (R + 1))
            out[j] = t[k - 1] + (z - z1) / (z2 - z1) * (t[k] - t[k - 1])
    return out


def levels(z0, a):
    za = ndtri(ALPHA)
    t = z0 + za
    return ndtr(z0 + t / (1.0 - a * t))


def accel(L):
    L = L - L.mean()
    return float(np.sum(L**3) / (6.0 * np.sum(L**2) ** 1.5))


def accel_reg(t, f):
    """boot:::empinf.reg for an unstratified boot object: t ~ f/n (first column dropped)."""
    n = f.shape[1]
    X = np.column_stack([np.ones(t.size), f[:, 1:] / n])
    beta = np.linalg.lstsq(X, t, rcond=None)[0][1:]
    return accel(np.r_[0.0, beta])


def limits(theta, t, jack, f):
    """The lower and upper limits of every convention on the replicates t (B,)."""
    B = t.size
    aj, ar = accel(-jack), accel_reg(t, f)  # jackknife influence ∝ mean(jack) − jack; accel() centres
    below = np.sum(t < theta)
    z0_b1, z0_b = ndtri(below / (B + 1)), ndtri(below / B)
    d = np.append(t, theta)
    return {
        "A": np.quantile(d, levels(z0_b1, aj)),
        "A1": np.quantile(d, levels(z0_b, aj)),
        "A2": np.quantile(t, levels(z0_b, aj)),
        "B": norm_inter(t, levels(z0_b, aj)),
        "C": norm_inter(t, levels(z0_b, ar)),
    }, (aj, ar)


def bin_limits(e, Ub, sd, n_boot=1000, p=0.95):
    """Replicates drawn exactly as mcref.diagnostics.lrr's inner function draws them."""
    probs = np.array([(1 - p) / 2, (1 + p) / 2])
    n = e.size
    w = hd_weights(n, probs)
    theta = _range_ratio(e, Ub, *w)
    rng = np.random.default_rng(sd)
    idx = rng.integers(0, n, (n_boot, n))
    f = np.zeros((n_boot, n))
    np.add.at(f, (np.repeat(np.arange(n_boot), n), idx.ravel()), 1.0)
    es, U2 = e[idx], Ub[idx] ** 2
    es.sort(axis=1)
    (i0, w0), (i1, w1) = w
    t = 2.0 * np.sqrt(U2.mean(axis=1)) / (es[:, i1:i1 + w1.size] @ w1 - es[:, i0:i0 + w0.size] @ w0)
    wj = hd_weights(n - 1, probs)
    jack = np.array([_range_ratio(np.delete(e, i), np.delete(Ub, i), *wj) for i in range(n)])
    return limits(theta, t, jack, f)


def run(E, u, v, seeds):
    """(seeds, conv, 2, nbins) limits; lrr(E, u, v, U=1.96u, cuts="errviewlib", seed=s)."""
    Es, _, segs, _, _, Us = _binned_halfwidths(E, u, v, 1.96 * u, 0.95, "normal", None, "equal", None, 30,
                                               "errviewlib", False, None)
    out = np.empty((len(seeds), len(CONVS), 2, len(segs)))
    acc = np.empty((len(seeds), 2, len(segs)))
    for i, s in enumerate(seeds):
        ss = check_seed(s).spawn(len(segs) + 1)
        for b, ((a, c), sd) in enumerate(zip(segs, ss)):
            lim, acc[i, :, b] = bin_limits(Es[a:c], Us[a:c], sd)
            for k, cv in enumerate(CONVS):
                out[i, k, :, b] = lim[cv]
    return out, acc


def table(name, lim, r=None):
    sd = lim[:, CONVS.index("C")].std(axis=0, ddof=1)  # (2, nbins): MC sd of R's convention
    print(f"\n{name}: {lim.shape[0]} seeds, {lim.shape[-1]} bins; shifts in units of the limit's MC sd σ "
          f"(sd across seeds of C; median σ lower {np.median(sd[0]):.4f}, upper {np.median(sd[1]):.4f})")
    print(f"{'step':<34}{'lower: mean [min, max] over bins':>36}{'upper: mean [min, max]':>32}")
    steps = [("A1 - A  z0 over B, not B+1", "A1", "A"), ("A2 - A1 theta-hat not appended", "A2", "A1"),
             ("B - A2  norm.inter, not type 7", "B", "A2"), ("B - A   boot's convention", "B", "A"),
             ("C - B   regression acceleration", "C", "B"), ("C - A   total", "C", "A")]
    for lab, x, y in steps:
        d = (lim[:, CONVS.index(x)] - lim[:, CONVS.index(y)]).mean(axis=0) / sd
        print(f"{lab:<34}" + "".join(f"{m:>+14.2f} [{lo:+.2f}, {hi:+.2f}]" + " " * 4
                                     for m, lo, hi in zip(d.mean(1), d.min(1), d.max(1))))
    if r is not None:
        mean, sdr = r
        print(f"offset from R's 10-run mean, units of σ_R (median σ_R lower {np.median(sdr[0]):.4f}, "
              f"upper {np.median(sdr[1]):.4f}); conv − R, mean [min, max] over bins:")
        for cv in CONVS:
            d = (lim[:, CONVS.index(cv)].mean(axis=0) - mean) / sdr
            per = np.abs(lim[:, CONVS.index(cv)] - mean) / (sdr * math.sqrt(1.1))  # the test's |d|/σ
            per = per.reshape(per.shape[0], -1).max(axis=1)
            print(f"  {cv:<32}" + "".join(f"{m:>+14.2f} [{lo:+.2f}, {hi:+.2f}]" + " " * 4
                                           for m, lo, hi in zip(d.mean(1), d.min(1), d.max(1)))
                  + f"  test's max|d|/σ per seed: median {np.median(per):.2f}, max {per.max():.2f}, "
                  f"> 4.5 in {np.sum(per > 4.5)}/{per.size}")


def accs(acc):
    """Jackknife and regression accelerations per bin: mean over seeds (sd of the regression's)."""
    print(f"  acceleration, jackknife:  {np.round(acc[:, 0].mean(0), 3)}")
    print(f"  regression (mean):        {np.round(acc[:, 1].mean(0), 3)}")
    print(f"  regression (sd, seeds):   {np.round(acc[:, 1].std(0, ddof=1), 3)}")


R_CHECK = r"""
library(boot)
src <- function(f) eval(parse(text = gsub("ErrViewLib::", "", suppressWarnings(readLines(f)))), envir = globalenv())
src(file.path(commandArgs(TRUE)[1], "hdQuantiles.R"))
d <- read.csv(commandArgs(TRUE)[2]); out <- commandArgs(TRUE)[3]
fRR <- function(X, ind = 1:NROW(X), p = 0.95) {
  empi <- diff(vhd(X[ind, 1], p = c((1 - p) / 2, (1 + p) / 2)))
  2 * sqrt(mean(X[ind, 2]^2)) / empi }
for (b in 1:3) {
  set.seed(b); sel <- ((b - 1) * 150 + 1):(b * 150)
  bst <- boot(cbind(d$E[sel], 1.96 * d$u[sel]), fRR, R = 1000)
  ci <- boot.ci(bst, conf = 0.95, type = "bca")$bca[1, 4:5]
  write.table(cbind(bst$t[, 1], boot.array(bst)), file.path(out, paste0("rep", b, ".txt")), row.names = FALSE, col.names = FALSE)
  cat(b, sprintf("%.17g", c(bst$t0, ci)), "\n", file = file.path(out, "ci.txt"), append = TRUE)
}
"""


def check_r(evl):
    """Convention C on replicates drawn by R's boot, against R's boot.ci (3 bins of the synthetic set)."""
    E, u, _ = synth()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        np.savetxt(tmp / "d.csv", np.c_[E, u], delimiter=",", header="E,u", comments="", fmt="%.17g")
        (tmp / "c.R").write_text(R_CHECK)
        subprocess.run(["Rscript", str(tmp / "c.R"), evl, str(tmp / "d.csv"), str(tmp)], check=True)
        worst = 0.0
        for line in (tmp / "ci.txt").read_text().splitlines():
            b, t0, lo, hi = line.split()
            rep = np.loadtxt(tmp / f"rep{b}.txt")
            sel = slice((int(b) - 1) * 150, int(b) * 150)
            e, Ub = E[sel], 1.96 * u[sel]
            wj = hd_weights(149, np.array([0.025, 0.975]))
            jack = np.array([_range_ratio(np.delete(e, i), np.delete(Ub, i), *wj) for i in range(150)])
            got = limits(float(t0), rep[:, 0], jack, rep[:, 1:])[0]["C"]
            rel = np.abs(got / np.array([float(lo), float(hi)]) - 1)
            worst = max(worst, rel.max())
            print(f"  R bin {b}: boot.ci {float(lo):.10f} {float(hi):.10f}   emulation {got[0]:.10f} {got[1]:.10f}")
        print(f"emulation of boot.ci (convention C) on R's replicates: max rel. d {worst:.1e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--qm9", action="store_true")
    ap.add_argument("--qm9-seeds", type=int, default=10)
    ap.add_argument("--check-r", action="store_true")
    ap.add_argument("--evl", default="/tmp/evl")
    a = ap.parse_args()
    if a.check_r:
        check_r(a.evl)
    R = ref()
    E, u, x = synth()
    seeds = list(range(1000, 1000 + a.seeds))
    for v, X in (("u", u), ("x", x)):
        lim, acc = run(E, u, X, seeds)
        nb = lim.shape[-1]
        r = R[f"synth_LRRboot_{v}_mean"].reshape(2, nb), R[f"synth_LRRboot_{v}_sd"].reshape(2, nb)
        table(f"synthetic set, bins of {v}", lim, r)
        accs(acc)
    if a.qm9:
        from mcref.datasets import load

        d = load("QM9_E")
        lim, acc = run(d.E, d.u, d.u, list(range(2000, 2000 + a.qm9_seeds)))
        table("QM9_E, bins of u", lim)
        accs(acc)


if __name__ == "__main__":
    main()
