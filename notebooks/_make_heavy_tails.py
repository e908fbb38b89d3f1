"""Builds notebooks/heavy_tails.ipynb: distribution fits of the nine benchmark sets, their
histograms with the fitted densities, the skewness map, the decimation experiment and the
simulated references under the fitted t, vs the heavy-tails paper (P. Pernot 2024).

Run: ``python notebooks/_make_heavy_tails.py`` (writes the notebook, not executed), then
``jupyter nbconvert --execute --to notebook --inplace notebooks/heavy_tails.ipynb``
(about 3 minutes on 2 cores). ``--quick`` writes a copy with small settings to ``--output``
(default <tmpdir>/heavy_tails_quick.ipynb) for testing.
"""

import nbformat as nbf
from _nbgen import code, main, md, notebook

INTRO = r"""# Heavy tails: what the nine benchmark sets look like, and what it does to the statistics

The heavy-tails paper (P. Pernot 2024, *Negative impact of heavy-tailed uncertainty and error
distributions on the reliability of calibration statistics for machine learning regression tasks*,
arXiv:2402.10043) characterises each data set before trusting a calibration statistic: how heavy are
the tails of u², E² and Z = E/u? This notebook reproduces that characterisation with mcref:

1. **Distribution fits** (`mcref.distfit`): u² by a scaled inverse gamma, E² and Z² by a scaled
   F(1, ν) (minimum Kolmogorov–Smirnov fits, as the paper's `fitdistrplus::mge(gof = "KS")`), Z by a
   shifted/scaled Student-t (maximum likelihood). Compared with R's fitdistrplus run with the paper's
   own code on the same data.
2. **Histograms** of ln u², ln E², ln Z² with the fitted densities (the paper's Figs. 1–2).
3. **The skewness map** β_GM(E²), β_GM(Z²) vs β_GM(u²) with the NIG model curve (Fig. 6).
4. **The decimation experiment** (`mcref.decimation`): remove up to 10 % of the largest u and watch
   ZMS and RCE (Fig. 8).
5. **References under the fitted t** (`dist="t(fit)"`) vs normal and t(6) for the statistics with a
   simulated reference.

Methods and formulas: `docs/methods.md`, sections "Distribution fits", "Decimation", "Skewness map",
"Generative distributions"."""

SETUP = r"""import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import mcref
from mcref.plots import plot_decimation, plot_fit_histograms, plot_skewness_map

QUICK = {quick}
N_BOOT_FIT = 30 if QUICK else 200        # bootstrap replicates of the fits
N_BOOT_CI = 500 if QUICK else 5000       # bootstrap replicates of the BCa intervals (decimation)
N_MC = 500 if QUICK else 10_000          # Monte Carlo repeats of the simulated references
SEED = 2024
names = mcref.datasets.names()
data = {{n: mcref.datasets.load(n) for n in names}}
pd.set_option("display.width", 200)
pd.set_option("display.max_columns", 40)
print(mcref.__version__, "QUICK =", QUICK)"""

FITS_MD = r"""## 1. Distribution fits

Every parameter comes with its standard uncertainty: bootstrap (pair bootstrap, robust sd of the
replicates) for the minimum-KS fits and the moments of Z, curvature (observed information) for the
Student-t fit. ν is confined to [0.2, 1000]; `*` marks a fit at a bound."""

FITS = r"""fits = {n: mcref.distfit(data[n].E, data[n].u, n_boot=N_BOOT_FIT, seed=SEED) for n in names}

def pm(f, p, digits=3):
    v, s = f.values[p], f.se[p]
    return f"{v:.{digits}g} ± {s:.2g}" if np.isfinite(s) else f"{v:.{digits}g}"

table = pd.DataFrame({
    n: {"M": f.n, "nu_u2": pm(f, "nu_u2"), "nu_E2": pm(f, "nu_E2"), "nu_Z2": pm(f, "nu_Z2"),
        "t_nu": pm(f, "t_nu") + ("*" if f.at_bound["t"] else ""), "t_loc": pm(f, "t_loc", 2),
        "t_scale": pm(f, "t_scale"), "mean_Z": pm(f, "mean_Z", 2), "sd_Z": pm(f, "sd_Z"),
        "bias_Z %": pm(f, "bias_Z", 2), "KS u2": f"{f.ks['u2']:.3f}", "KS E2": f"{f.ks['E2']:.4f}",
        "KS Z2": f"{f.ks['Z2']:.4f}"}
    for n, f in fits.items()}).T
table.index = [f"{i}. {n}" for i, n in enumerate(names, 1)]
table"""

R_MD = r"""### Compared with R's fitdistrplus (the paper's procedure)

`tests/data/fitdistrplus_fits.csv` holds the output of the paper's own fitting code (ppernot/2024_RCE,
`R/fitDist.R`: `fitdist(1/u^2, "gamma", method = "mge", gof = "KS")`, `fitdist(E^2, "f_s", ...)`,
`fitdist(Z^2, "f_s", ...)`, and `fitdist(Z, "t_ls")` of `R/altRCE.R`) run with R 4.2.2 and
fitdistrplus 1.1-8 on the same nine sets. The paper's tables (`tabParsFituE.tex`, `tabParsFitE2.tex`,
`tabParsFitZ2.tex`) are these numbers rounded to three significant digits (`signif(..., 3)`), so the
comparison below is a comparison with the published tables. The paper reports u² as IG(shape, scale);
mcref's ν_u2 is the shape and σ_u2 = scale/shape."""

R_CMP = r"""R = pd.read_csv(Path("..") / "tests" / "data" / "fitdistrplus_fits.csv").set_index("set")
rows = {}
for n, f in fits.items():
    r = R.loc[n]
    rows[n] = {
        "nu_u2 (R)": f"{r.ig_shape:.3g}", "nu_u2": f"{f.nu_u2:.3g}",
        "KS u2 R/mcref": f"{r.ks_u2 / f.ks['u2']:.4f}",
        "nu_E2 (R)": f"{r.E2_df:.3g}", "nu_E2": f"{f.nu_E2:.3g}",
        "nu_Z2 (R)": f"{r.Z2_df:.3g}", "nu_Z2": f"{f.nu_Z2:.3g}",
        "KS Z2 R/mcref": f"{r.ks_Z2 / f.ks['Z2']:.4f}",
        "t_nu (R)": f"{r.t_df:.3g}", "t_nu": f"{f.t_nu:.3g}",
        "se t_nu (R)": f"{r.t_se_df:.2g}", "se t_nu": f"{f.se['t_nu']:.2g}",
    }
cmp = pd.DataFrame(rows).T
cmp.index = [f"{i}. {n}" for i, n in enumerate(names, 1)]
cmp"""

R_READ = r"""**Reading.** On 26 of the 27 minimum-KS fits mcref and fitdistrplus reach the same minimum (KS ratio
1.0000: equal to better than 10⁻⁵, and the parameters to the three digits the paper prints). On set
5's u² (Diffusion_GPR_Bayesian) fitdistrplus's Nelder–Mead, started at (shape 10, scale 1), stops
early on the kinked KS objective: mcref's fit has an 18 % smaller KS distance (ν_u2 = 33.3 instead
of the published 30.8). The Student-t fits and their curvature standard errors agree to the printed
digits. The bootstrap uncertainties, which the paper does not give, show what the point values
hide: ν above ~10 is barely determined (ν_Z2 of sets 1, 3, 4, 9: the F(1, ν) family is nearly flat
in ν there, and set 3's replicates run up to the bound), while small ν (heavy tails: sets 2, 6, 7)
are determined to a few per cent. Set 6 (Perovskite_GPR_Bayesian) has t_nu = 1.41: under the t
model its Z has no finite variance, which is why `dist="t(fit)"` is refused for it (section 5).
Set 9 has a visible mean bias of Z (bias_Z = 27 %)."""

HIST_MD = r"""## 2. Histograms and fitted densities

Histograms of ln u², ln E², ln Z² with the densities of the fitted scaled IG / F laws (the density
of ln X is f_X(eˡ)·eˡ)."""

HIST = r"""fig, axes = plt.subplots(9, 3, figsize=(11, 24))
for i, n in enumerate(names):
    plot_fit_histograms(data[n].E, data[n].u, fits[n], axes=axes[i], title=f"Set {i + 1}: {n}")
fig.tight_layout()"""

HIST_READ = r"""**Reading.** The F(1, ν) laws describe ln E² and ln Z² closely on most sets (KS 0.003–0.02);
the inverse-gamma law of u² is the weakest fit (KS up to 0.08), because the u of several sets are
not IG-shaped at all: set 1's ln u² is bimodal, QM9_E's isotonic-calibrated u take a few dozen
distinct values, and set 6 has a separate cluster of ~40 points with u and E a thousand times
smaller than the rest (ln u² ≈ −9, ln E² ≈ −40). That cluster is what drives set 6's fits to
ν < 1. As the paper concludes, ν_u2 is a tail index, not a goodness-of-fit claim."""

SKEW_MD = r"""## 3. Skewness map

β_GM(E²) (triangles) and β_GM(Z²) (squares) against β_GM(u²), with the NIG model curve (u² ~ IG(ν/2,
ν/2), E²/σ² ~ F(1, ν), population values for ν from 1 to 100) and the regions where the shape
screen flags RCE (β_GM(u²) > 0.6 or β_GM(E²) > 0.8) and ZMS (β_GM(Z²) > 0.8)."""

SKEW = r"""ax = plot_skewness_map(names)
screen = pd.DataFrame({n: mcref.shape_screen(data[n].E, data[n].u).__dict__ for n in names}).T
screen[["beta_u2", "beta_E2", "beta_Z2"]].round(3)"""

SKEW_READ = r"""**Reading.** Five sets have β_GM(E²) > 0.8 (1, 2, 4, 6, 7; sets 2, 6, 7 above 0.94) and four
have β_GM(u²) > 0.6 (2, 3, 4, 7): RCE is flagged on seven of the nine sets. β_GM(Z²) is below
β_GM(E²) on eight sets and above 0.8 only for sets 2 and 6: dividing by u removes most of the tail
of E², which is why ZMS is the more robust statistic. The sets scatter on both sides of the NIG
curve: the NIG model (normal errors scaled by IG uncertainties) is a guide to where the problem
region starts, not a description of the data."""

DEC_MD = r"""## 4. Decimation: remove the largest uncertainties

`mcref.decimation` removes the fraction f (0 to 10 %, 21 steps) of the points with the largest u and
reports Δθ = θ(f) − θ(0) against the zero-centred 95 % BCa interval of θ(0) (bands)."""

DEC = r"""dec = {n: mcref.decimation(data[n].E, data[n].u, n_boot=N_BOOT_CI, seed=SEED) for n in names}
fig, axes = plt.subplots(3, 3, figsize=(12, 10))
for i, (n, ax) in enumerate(zip(names, axes.flat)):
    plot_decimation(dec[n], ax=ax, title=f"Set {i + 1}: {n}")
fig.tight_layout()
leave = pd.DataFrame({n: {**{f"{s} leaves": r.leaves[s] for s in r.stats},
                          **{f"{s} first exit (%)": 100 * r.first_exit[s] for s in r.stats}}
                      for n, r in dec.items()}).T
leave"""

DEC_PAPER_MD = r"""### As the paper's script computed it

The published script (ppernot/2024_RCE, `R/0_main.R`, Fig. 8) draws the curves of the full sets
but, by the order of its sections, the BCa intervals of the sets *with their top 5 % of u removed*
(its Fig. 7b overwrites the interval matrix before Fig. 8 reads it). The same check with those
intervals:"""

DEC_PAPER = r"""rows = {}
for i, n in enumerate(names):
    E, u = data[n].E, data[n].u
    order = np.lexsort((-E, -u))
    keep = order[int(round(0.05 * E.size)):]
    row = {}
    for k, s in enumerate(dec[n].stats):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcref.BiasedIntervalWarning)
            b = mcref.bootstrap(s, E[keep], u[keep], n_boot=N_BOOT_CI, seed=SEED + k)
        lo, hi = b.low - b.estimate, b.high - b.estimate
        d = dec[n].delta[s]
        row[f"{s} leaves (5%-trimmed CI)"] = bool(np.any((d < lo) | (d > hi)))
    rows[n] = row
pd.DataFrame(rows).T"""

DEC_READ = r"""**Reading.** With the intervals of the full sets, RCE leaves its interval for sets 3 and 4 within
the first 0.5–1.5 % removed and for set 7 (QM9_E) at 2 %, by up to +0.32 where its interval's upper
half-width is 0.27, and marginally for set 2 at 3.5 % (by 0.0004, an edge that moves with the
bootstrap draws). ZMS stays inside on eight sets; on QM9_E it crosses the lower edge of its
narrow interval (M = 13 885, half-width 0.036) at 6 % removed, by less than 0.001. With the
5 %-trimmed intervals of the paper's script, RCE leaves for sets 3, 4 and 7 and also for set 9
(its trimmed interval is narrower), not for the marginal set 2, and ZMS's verdicts are unchanged. The paper's finding holds: RCE is driven by the few
largest uncertainties and moves by several times its interval on the sets with skewed u², ZMS
moves by a fraction of its interval — with one marginal exception, QM9_E, the largest and most
u-skewed set (β_GM(u²) = 0.93)."""

REF_MD = r"""## 5. References under the fitted t

The statistics with a simulated reference (CC, ENCE, ZMSE) depend on the generative distribution D.
`dist="t(fit)"` uses the unit-variance t(ν̂) with ν̂ = t_nu of section 1. Below: the reference
values under normal, t(6), t(fit) and the empirical D, and the Monte Carlo p-values of the data."""

REF = r"""rows = []
for i, n in enumerate(names):
    E, u = data[n].E, data[n].u
    dists = ["normal", "t6", "empirical"]
    try:
        mcref.get_distribution("t(fit)", Z=E / u)
        dists.insert(2, "t(fit)")
    except ValueError as exc:
        print(f"set {i + 1} {n}: {exc}")
    sim = mcref.simulate(["CC", "ENCE", "ZMSE"], u, dists=dists, E=E, n_mc=N_MC, seed=SEED)
    est = mcref.statistics(["CC", "ENCE", "ZMSE"], E, u)
    kurt = {("t(fit)" if d.label.startswith("t(fit") else d.label): d.kurtosis for d in sim.dists}
    for s in ("CC", "ENCE", "ZMSE"):
        row = {"set": f"{i + 1}. {n}", "stat": s, "estimate": round(est[s], 4),
               "kurt t(fit)": round(kurt.get("t(fit)", np.nan), 1), "kurt empirical": round(kurt["empirical"], 1)}
        for d in sim.dists:
            ref = sim.reference(s, d)
            alt = "greater" if s != "CC" else "two-sided"
            p = sim.p_value(s, d, est[s], alternative=alt)[0]
            key = "t(fit)" if d.label.startswith("t(fit") else d.label
            row[f"ref {key}"] = round(ref.mean, 4)
            row[f"p {key}"] = round(p, 3)
        rows.append(row)
refs = pd.DataFrame(rows).set_index(["set", "stat"])
refs"""

REF_READ = r"""**Reading.** The references of ENCE and ZMSE grow with the tails of D, as the sensitivity paper
showed: normal < t(6), and t(fit) above t(6) wherever ν̂ < 6 (sets 2, 5, 7, 8, 9: ν̂ = 3.1–4.4).
There the fitted t has an infinite or very large fourth moment (kurtosis ∞ for ν̂ ≤ 4, 19 for
QM9_E), while the data's own standardized Z (the empirical D) have a kurtosis of 5–13: a t fitted by
maximum likelihood follows the core of Z and extrapolates a tail the finite data do not have. The
reference comes out larger, and verdicts change: under t(fit) ENCE and ZMSE would pass on sets 2, 5
and 9, and ENCE on sets 7 and 8 (ZMSE of set 7 sits at p = 0.05), where the empirical D (the test
of `rule="mc"`; `validate`'s default rule tests these rows by permutation) rejects them. For sets
3 and 4 (ν̂ = 20 and 9) t(fit) and the empirical D agree to 0.002. CC's reference moves less with D (0.01–0.05 between normal and the heavier D,
0.12 for set 6). For users: `t(fit)` answers "what if D had the fitted shape?" (a sensitivity
check); it is not a replacement for the empirical D when ν̂ is small."""


def build(quick: bool) -> nbf.NotebookNode:
    return notebook([
        md(INTRO), code(SETUP.format(quick=quick)),
        md(FITS_MD), code(FITS), md(R_MD), code(R_CMP), md(R_READ),
        md(HIST_MD), code(HIST), md(HIST_READ),
        md(SKEW_MD), code(SKEW), md(SKEW_READ),
        md(DEC_MD), code(DEC), md(DEC_PAPER_MD), code(DEC_PAPER), md(DEC_READ),
        md(REF_MD), code(REF), md(REF_READ),
    ])


if __name__ == "__main__":
    main(build, "heavy_tails", __doc__)
