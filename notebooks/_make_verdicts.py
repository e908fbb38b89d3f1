"""Builds notebooks/verdicts.ipynb: size and power of mcref's validation rules (the default Monte
Carlo test against the published ζ_Sim rule), read from the stores of benchmarks/study_verdicts.py.

Run: ``python notebooks/_make_verdicts.py`` (writes notebooks/verdicts.ipynb with QUICK = False,
not executed); then, once ``python benchmarks/study_verdicts.py`` has written the stores, execute it
with ``jupyter nbconvert --execute --to notebook --inplace notebooks/verdicts.ipynb``.

``--quick`` writes a copy with QUICK = True (the small settings of ``settings(True)`` and the
``_quick`` stores written by ``python benchmarks/study_verdicts.py --quick``; under a minute when
they exist) to ``--output`` (default: <tmpdir>/verdicts_quick.ipynb), for testing the notebook.
"""

import argparse
import tempfile
from pathlib import Path

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell

INTRO = r"""# Verdicts that hold: size and power of mcref's validation rules

### The problem

`mcref.validate` used to decide the statistics with a *simulated* reference (CC, ENCE, ZMSE, UCE)
with the published rule of P. Pernot (2024): the ζ-score of the data's BCa bootstrap interval
against the mean θ_ref of the statistic simulated on calibrated datasets under a generative
distribution D (ζ_Sim), and |ζ_Sim| ≤ 1 validates. The issue measured this rule on *perfectly
calibrated* synthetic data: at M = 2000 it rejected about 40 % of the datasets for ENCE, ZMSE
and UCE, where a 95 % test should reject 5 %. The reason: at finite M these binned statistics
are biased upwards (their expectation on calibrated data is > 0). BCa corrects the *interval* for
that bias, while θ_ref, the mean of the same biased statistic, keeps it, so the two are offset.

### The new default rule (`rule="mc"`)

* statistics with a predefined reference (ZMS = 1, RCE = 0): unchanged, ζ_BS (BCa interval
  against the reference);
* statistics with a simulated reference: a **Monte Carlo test**. The p-value of θ̂ is computed
  against the simulated distribution of the statistic on calibrated datasets with the same u
  (one-sided, large values, for the binned ENCE, ZMSE, UCE; two-sided for CC). The verdict is
  the D of the test is the **empirical D** (the data's own standardized Z, one of `validate`'s
  default D normal, t(6), empirical): *valid* when p > 0.05, else *invalid*. (Without the empirical
  D among the D: valid/invalid when every D agrees, *not testable* when they disagree.);
* in both rules the shape screen comes first (*unreliable*: heavy tails make the bootstrap
  interval of ZMS or RCE untrustworthy).

The published rule stays available as `mcref.validate(..., rule="paper")`, and every table row
carries both verdicts (`verdict`, `verdict_paper`).

### What this notebook measures

`mcref.studies.verdicts` draws `n_rep` datasets per cell (u source, M, scenario, true D) and
applies every score to each. The rejection rate of a score on calibrated data is its **size**
(false-rejection rate, nominal 5 %); on miscalibrated data it is its **power**.
`benchmarks/study_verdicts.py` runs it in four parts:

* **A** size of every score and of both rules, every statistic, u² ~ IG(3, 3), true D normal
  and t(6), including the Monte Carlo test under the data's own *empirical* D;
* **B** size of the default rule over u shapes and sizes (IG(ν/2, ν/2) with several ν, and the
  built-in datasets' own u), true D normal;
* **C** power against miscalibrations: E scaled by s, reported u ∝ u^γ, upper half of u scaled;
* **D** the distribution-free extrapolation test of App. C (ZMSE extrapolated to zero bin size)
  with the published OLS standard error and with mcref's bootstrap standard error.

### How to re-run

```bash
python benchmarks/study_verdicts.py            # writes benchmarks/results/verdicts_{A,B,C}.sqlite and
                                               # verdicts_D.csv, prints every table (about 10-20 min on 2 cores)
python benchmarks/study_verdicts.py --fresh    # deletes the stores first and recomputes
python benchmarks/study_verdicts.py --quick    # the small settings, verdicts_*_quick stores (about a minute)
```

The notebook calls `mcref.studies.verdicts` with exactly the script's arguments (settings, seed 2024,
store path), so a finished store is read back at once. **If a store is absent, the notebook
computes it** (the same minutes as the script) and writes it. Part D is not stored by the script
as a study: it prints the table and writes `verdicts_D.csv`, which the notebook reads.

Set `QUICK = True` in the next cell to use `settings(True)` and the `_quick` stores: the figures
are then based on a few dozen datasets per cell and are noisy. The text below describes what the
code computes; every number is printed by the code."""

SETUP = r"""import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
from scipy.stats import binom, binomtest

import mcref

QUICK = __QUICK__


def _repo_root() -> Path:
    # the repository root, whether the notebook runs from the root, from notebooks/ or elsewhere
    cands = [Path.cwd(), *Path.cwd().parents, Path(mcref.__file__).resolve().parents[1]]
    for p in cands:
        if (p / "benchmarks").is_dir() and (p / "mcref").is_dir():
            return p
    return Path.cwd().parent


ROOT = _repo_root()
RESULTS = ROOT / "benchmarks" / "results"
RESULTS.mkdir(parents=True, exist_ok=True)
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
from study_verdicts import STATS, extrapolation_size, settings  # noqa: E402

S = settings(QUICK)
tag = "_quick" if QUICK else ""
ALPHA = 0.05
BINNED = [s for s in STATS if mcref.stats.info(s).binned]

plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "font.size": 10, "axes.titlesize": 11,
                     "axes.labelsize": 10, "legend.fontsize": 8.5, "axes.grid": True, "grid.alpha": 0.3})
pd.set_option("display.width", 180)
pd.set_option("display.max_columns", 40)
pd.set_option("display.max_rows", 300)
print(f"mcref {mcref.__version__}; QUICK = {QUICK}; stores in {RESULTS}")
for part in "ABC":
    p = RESULTS / f"verdicts_{part}{tag}.sqlite"
    print(f"  {p.name:26s} {'present: read back' if p.exists() else 'absent: will be computed (minutes)'}")
print(f"statistics {STATS}; binned: {BINNED}")"""

RUN = r"""res = {}
for part in "ABC":
    res[part] = mcref.studies.verdicts(**S[part], stats=STATS, n_jobs=2, threads_per_cell=1, progress=False,
                                       store=RESULTS / f"verdicts_{part}{tag}.sqlite", seed=2024)
    print(f"part {part}: {res[part].n_loaded} cells read back, {res[part].n_computed} computed "
          f"({res[part].seconds:.1f} s); settings {S[part]}")
A, B, C = (res[p].table for p in "ABC")


def sel(t, stat, score, dist):
    # rows of one (statistic, score, dist) from a study table
    return t[(t["stat"] == stat) & (t["score"] == score) & (t["dist"] == dist)]"""

ISSUE_MD = r"""### The issue's measurement, repeated

Part A on calibrated data with true D normal, at the M of the study closest to 2000: the rejection
rate of the published score ζ_Sim (|ζ_Sim| > 1) under the true D and under t(6), the published
verdict (not valid), and the default verdict (not valid, and invalid). The Monte Carlo test under
the true D alone (`p normal`) is printed beside them. "—" marks a score that does not apply to the
statistic (ZMS and RCE are decided by ζ_BS in both rules)."""

ISSUE = r"""M0 = min(S["A"]["M"], key=lambda m: abs(m - 2000))
a0 = A[(A["D"] == "normal") & (A["M"] == M0)]
cols = {("Sim", "normal"): "ζ_Sim normal", ("Sim", "t(6)"): "ζ_Sim t(6)", ("BS", ""): "ζ_BS",
        ("verdict", "paper"): "paper: not valid", ("verdict", "mc"): "mc: not valid",
        ("invalid", "mc"): "mc: invalid", ("p", "normal"): "p normal"}
issue = pd.DataFrame({lab: a0[(a0["score"] == sc) & (a0["dist"] == d)].set_index("stat")["reject"]
                      for (sc, d), lab in cols.items()}).reindex(STATS)
print(f"calibrated data, u^2 ~ IG(3,3), M = {M0}, true D normal, n_rep = {S['A']['n_rep']} per cell: rejection rates")
print(issue.to_string(float_format=lambda v: f"{v:.3f}", na_rep="—"))"""

SIZE_MD = r"""## 1. Size: false rejections on calibrated data

### Part A: every score, true D normal and t(6)

One panel per statistic, the rejection rate against M (log axis) on calibrated data with u² ~ IG(3, 3).
The y axis is a square-root scale, so that rates near 5 % and near 100 % are both readable.

* **ζ_Sim (true D)**: |ζ_Sim| > 1, the published score, with the simulated reference under the
  true D;
* **ζ_Sim2 (true D)**: θ̂ against the simulated 95 % interval I_D under the true D;
* **ζ_BS** (ZMS, RCE only): the BCa interval against the predefined reference;
* **p (true D)**: the Monte Carlo test alone, p ≤ 0.05, with the reference under the true D;
* **p (empirical D)**: the same test with the data's own standardized errors as D (simulated per
  dataset);
* **paper: not valid** / **mc: not valid**: the fraction of datasets that the published rule / the
  default rule does not declare valid (invalid or unreliable; the binned statistics and CC are decided by
  the empirical D), references also under normal and t(6);
* **mc: invalid**: the fraction that the default rule declares invalid.

The green band is the Wilson 95 % interval of the default verdict's rate (columns `low`, `high` of the
table). The grey band is the target 5 % ± 2 %. The Wilson interval treats the `n_rep` datasets of a
cell as independent; they share one reference simulation per cell, which adds a small correlation."""

SIZE_HELPERS = r"""STYLE = [  # (score, dist or "TRUE", label, style)
    ("Sim", "TRUE", "ζ_Sim (true D)", dict(color="tab:red", marker="o", ls="-")),
    ("Sim2", "TRUE", "ζ_Sim2 (true D)", dict(color="tab:orange", marker="v", ls="--")),
    ("BS", "", "ζ_BS", dict(color="k", marker="s", ls="--", mfc="none")),
    ("p", "TRUE", "p (true D)", dict(color="tab:blue", marker="^", ls=":")),
    ("p", "empirical", "p (empirical D)", dict(color="tab:cyan", marker="D", ls=":", ms=4)),
    ("verdict", "paper", "paper: not valid", dict(color="tab:purple", marker="x", ls="-.")),
    ("verdict", "mc", "mc: not valid", dict(color="tab:green", marker="o", ls="-", lw=2.2)),
    ("invalid", "mc", "mc: invalid", dict(color="darkgreen", marker="*", ls="--", ms=9)),
]
RATE_TICKS = [0, 0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]


def rate_axis(ax):
    # square-root y axis for rates in [0, 1]
    ax.set_yscale("function", functions=(lambda y: np.sqrt(np.clip(y, 0, None)), lambda y: np.square(y)))
    ax.yaxis.set_major_locator(FixedLocator(RATE_TICKS))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylim(0, 1.02)


def m_axis(ax, Ms):
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(list(Ms)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(min(Ms) / 1.4, max(Ms) * 1.4)


def size_figure(true_d):
    a = A[A["D"] == true_d]
    Ms = sorted(set(a["M"]))
    fig, axes = plt.subplots(2, 3, figsize=(13.5, 7.6), sharex=True, sharey=True)
    handles = {}
    for ax, stat in zip(axes.flat, STATS):
        ax.axhspan(0.03, 0.07, color="0.82", zorder=0)
        ax.axhline(ALPHA, color="0.45", lw=0.8, zorder=0)
        for score, dist, label, st in STYLE:
            r = sel(a, stat, score, true_d if dist == "TRUE" else dist).sort_values("M")
            if r.empty:
                continue
            if (score, dist) == ("verdict", "mc"):
                ax.fill_between(r["M"], r["low"], r["high"], color="tab:green", alpha=0.2, lw=0)
            (h,) = ax.plot(r["M"], r["reject"], label=label, **st)
            handles.setdefault(label, h)
        ref = "predefined reference" if mcref.stats.info(stat).reference is not None else "simulated reference"
        ax.set_title(f"{stat} ({ref})")
        rate_axis(ax)
        m_axis(ax, Ms)
    for ax in axes[-1]:
        ax.set_xlabel("M (dataset size)")
    for ax in axes[:, 0]:
        ax.set_ylabel("rejection rate (sqrt scale)")
    extra = {"mc: not valid, Wilson 95 %": Patch(color="tab:green", alpha=0.2),
             "target 5 % ± 2 %": Patch(color="0.82")}
    labels = [s[2] for s in STYLE if s[2] in handles] + list(extra)
    fig.suptitle(f"Size on calibrated data: u² ~ IG(3,3), true D = {true_d}, test D = (normal, t(6)), "
                 f"n_rep = {int(a['n_rep'].iloc[0])} per point", y=0.995, fontsize=11)
    fig.legend([handles.get(l, extra.get(l)) for l in labels], labels, loc="upper center", ncol=5,
               fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.962))
    fig.tight_layout(rect=(0, 0, 1, 0.885))
    return fig"""

SIZE_FIG_N = r"""size_figure("normal");"""

SIZE_FIG_T = r"""size_figure("t(6)");"""

SIZE_TABLE_MD = r"""The numbers behind both figures (part A, rejection rate per score, test D or rule, M):"""

SIZE_TABLE = r"""for true_d in ("normal", "t(6)"):
    a = A[A["D"] == true_d]
    print(f"\ntrue D = {true_d}")
    print(a.pivot_table(index=["score", "dist", "M"], columns="stat", values="reject", sort=False)
          .reindex(columns=STATS).to_string(float_format=lambda v: f"{v:.3f}", na_rep="—"))"""

B_MD = r"""### Part B: the default rule over u shapes and dataset sizes (true D normal)

Calibrated data with true D normal; D = (normal, t(6), empirical) as in `mcref.validate`, the
empirical D deciding CC, ENCE, ZMSE and UCE. For each cell,
the default rule's rate of "not valid" and of "invalid". The difference between the two is
*unreliable* for ZMS and RCE (the shape screen; their verdict is ζ_BS otherwise); for the others
the two rates coincide (the empirical D gives valid or invalid). For the built-in datasets, u is
the dataset's own u and M its size."""

B_TABLE = r"""def rates(res_, score, dist):
    return res_.rates(score, dist).droplevel(["scenario", "D"]).reindex(columns=STATS)


b_nv, b_inv = rates(res["B"], "verdict", "mc"), rates(res["B"], "invalid", "mc")
display(pd.concat({"not valid (mc)": b_nv, "invalid (mc)": b_inv}, axis=1).round(3))

n_b = int(B["n_rep"].iloc[0])
sd5 = np.sqrt(ALPHA * (1 - ALPHA) / n_b)
p_tail = binom.sf(np.floor(0.07 * n_b), n_b, ALPHA)  # P(rate > 7 %) for a cell whose true rate is 5 %
print(f"n_rep = {n_b} per cell: binomial sd of a 5 % rate = {sd5:.3f}; "
      f"P(observed rate > 7 % | true rate 5 %) = {p_tail:.3f} per cell; {b_inv.size} (cell, statistic) pairs")
print("\ninvalid (mc): max |rate - 0.05| per statistic, and the cell where it is reached")
for s in STATS:
    dev = (b_inv[s] - ALPHA).abs()
    i = dev.idxmax()
    print(f"  {s:5s} max |rate - 0.05| = {dev.max():.3f} at u = {i[0]}, M = {i[1]} (rate {b_inv[s][i]:.3f}); "
          f"mean rate over the cells {b_inv[s].mean():.3f}")
bt = B[(B["score"] == "invalid") & (B["dist"] == "mc")]
over = bt[bt["reject"] > 0.07]
print(f"\ncells with invalid (mc) > 7 %: {len(over)} of {len(bt)}")
if len(over):
    print(over[["u", "M", "stat", "reject", "low", "high"]].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
nv = B[(B["score"] == "verdict") & (B["dist"] == "mc")]
print(f"\ncells with not valid (mc) > 7 %: {int((nv['reject'] > 0.07).sum())} of {len(nv)}, by statistic: "
      f"{nv[nv['reject'] > 0.07].groupby('stat').size().reindex(STATS, fill_value=0).to_dict()}")"""

POWER_MD = r"""## 2. Power: rejections on miscalibrated data (part C)

u² ~ IG(3, 3), true D normal, D = (normal, t(6), empirical), the empirical D deciding the binned
statistics and CC. Scenarios (E errors, u the reported
uncertainties, ε ~ D): `scale=s`, E = s·u·ε (u too small for s > 1, too large for s < 1);
`gamma=g`, E = u·ε but the reported uncertainties are c·u^g with the same mean square
(calibrated on average, not consistent); `break=s`, the upper half of u has E = s·u·ε.
The heatmaps show the default verdict's rate of "not valid"; the first row, `calibrated (A)`,
is the same rate on calibrated data from part A (same u source, same M, true D normal), i.e. its size.
Note that "not valid" includes *unreliable* (ZMS, RCE), so it is not the rate of "invalid"; both are tabulated
below."""

POWER_FIG = r"""def with_calibrated(score):
    a = A[(A["D"] == "normal") & (A["M"].isin(S["C"]["M"]))].assign(scenario="calibrated (A)")
    t = pd.concat([a, C])
    t = t[(t["score"] == score) & (t["dist"] == "mc")]
    return t.pivot_table(index=["scenario", "M"], columns="stat", values="reject", sort=False).reindex(columns=STATS)


pw_nv, pw_inv = with_calibrated("verdict"), with_calibrated("invalid")
scen = list(dict.fromkeys(pw_nv.index.get_level_values(0)))
Ms_C = sorted(S["C"]["M"])
fig, axes = plt.subplots(1, len(STATS), figsize=(2.6 * len(STATS) + 1.5, 0.42 * len(scen) + 2.2), sharey=True)
for ax, stat in zip(axes, STATS):
    grid = pw_nv[stat].unstack("M").reindex(index=scen, columns=Ms_C)
    im = ax.imshow(grid.values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = grid.values[i, j]
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="w" if v < 0.6 else "k")
    ax.set_xticks(range(len(Ms_C)), [str(m) for m in Ms_C])
    ax.set_xlabel("M")
    ax.set_title(stat)
    ax.grid(False)
    ax.axhline(0.5, color="w", lw=2)  # separates the calibrated row
axes[0].set_yticks(range(len(scen)), scen)
fig.colorbar(im, ax=axes, shrink=0.85, pad=0.01, label="rate of 'not valid' (default rule)")
fig.suptitle(f"Power of the default rule (u² ~ IG(3,3), true D normal, n_rep = {int(C['n_rep'].iloc[0])} per cell; "
             f"first row: size from part A)", fontsize=11)
plt.show()"""

POWER_TABLE = r"""display(pd.concat({"not valid (mc)": pw_nv, "invalid (mc)": pw_inv}, axis=1).round(3))
print("Monte Carlo test under the true D (normal) alone, p <= 0.05:")
cp = C[(C["score"] == "p") & (C["dist"] == "normal")]
print(cp.pivot_table(index=["scenario", "M"], columns="stat", values="reject", sort=False).reindex(columns=STATS)
      .to_string(float_format=lambda v: f"{v:.3f}", na_rep="—"))"""

POWER_NOTE = r"""For CC and the binned statistics the default rule is the Monte Carlo test under the empirical D,
so "not valid" and "invalid" coincide; for ZMS and RCE they differ by the shape screen
(*unreliable*). The last table is the Monte Carlo test under the true D alone, which the default
rule cannot use since the true D is unknown: compare it with the default rule's rates to see what
estimating D from the data costs in power."""

CC_MD = r"""**CC and a pure scale miscalibration.** CC is the rank correlation between |E| and u. Under
`scale=s` the errors are s·u·ε with the same reported u: multiplying E by a constant leaves the ranks
unchanged, so the distribution of CC is exactly the calibrated one and its rejection rate must equal
its size, whatever s. CC is blind to this miscalibration by construction (ZMS, RCE and the binned
statistics see it). The next cell compares CC's rates under the scale scenarios with the calibrated
row from part A."""

CC_CHECK = r"""rows = []
for M in Ms_C:
    cal = sel(A[(A["D"] == "normal") & (A["M"] == M)], "CC", "verdict", "mc")
    rows.append({"M": M, "scenario": "calibrated (A)", **cal[["reject", "low", "high"]].iloc[0].to_dict()})
    for sc in [s for s in S["C"]["scenario"] if s.startswith("scale")]:
        r = sel(C[(C["M"] == M) & (C["scenario"] == sc)], "CC", "verdict", "mc")
        rows.append({"M": M, "scenario": sc, **r[["reject", "low", "high"]].iloc[0].to_dict()})
print("CC, default rule, rate of 'not valid' with its Wilson 95 % interval")
print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))"""

DSENS_MD = r"""## 3. D-sensitivity: calibrated data with heavy-tailed errors (part A, true D = t(6))

The reference distributions of ENCE, ZMSE and UCE depend on D: on calibrated data with t(6)
errors these statistics are larger than with normal errors. Under true D = t(6), the Monte Carlo test
with the *normal* reference therefore rejects often (p normal below), while the test with the t(6)
reference (the true D) keeps its size. Neither can be chosen without knowing D, which is why the
default rule decides by the data's own **empirical D** (`p empirical`). The table and the figure
(square-root y axis, as in section 1) split the default rule's "not valid" into *invalid* and *not
testable* (zero now that the empirical D decides), for both true D, beside the tests under each D.
The empirical D is estimated from the data being tested, so the exchangeability argument behind the
exact size of the parametric test does not apply to it; its size is what the table measures."""

DSENS = r"""rows = []
for true_d in ("normal", "t(6)"):
    for M in sorted(S["A"]["M"]):
        a = A[(A["D"] == true_d) & (A["M"] == M)]
        for s in BINNED:
            g = lambda sc, d: float(sel(a, s, sc, d)["reject"].iloc[0]) if len(sel(a, s, sc, d)) else np.nan
            nv, inv = g("verdict", "mc"), g("invalid", "mc")
            rows.append({"true D": true_d, "M": M, "stat": s, "not valid": nv, "invalid": inv,
                         "not testable": nv - inv, "p normal": g("p", "normal"), "p t(6)": g("p", "t(6)"),
                         "p empirical": g("p", "empirical"), "paper: not valid": g("verdict", "paper")})
ds = pd.DataFrame(rows)
print("calibrated data (part A), default rule with test D = (normal, t(6)); rates over n_rep datasets")
print(ds.pivot_table(index=["true D", "M"], columns="stat", sort=False,
                     values=["invalid", "not testable", "p empirical"]).to_string(float_format=lambda v: f"{v:.3f}"))
print()
print(ds.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

Ms_A = sorted(S["A"]["M"])
fig, axes = plt.subplots(1, len(BINNED), figsize=(4.4 * len(BINNED), 4.9), sharey=True)
w = 0.38
for ax, s in zip(axes, BINNED):
    for k, (true_d, hatch) in enumerate((("normal", ""), ("t(6)", "//"))):
        d = ds[(ds["stat"] == s) & (ds["true D"] == true_d)].set_index("M").reindex(Ms_A)
        x = np.arange(len(Ms_A)) + (k - 0.5) * w
        ax.bar(x, d["invalid"], w, color="tab:red", hatch=hatch, edgecolor="k", lw=0.5)
        ax.bar(x, d["not testable"], w, bottom=d["invalid"], color="tab:orange", hatch=hatch, edgecolor="k", lw=0.5)
        ax.plot(x, d["p empirical"], "D", color="tab:cyan", mec="k", ms=7, zorder=3)
    ax.axhline(ALPHA, color="0.3", ls="--", lw=1)
    ax.set_xticks(range(len(Ms_A)), [str(m) for m in Ms_A])
    ax.set_xlabel("M (dataset size)")
    ax.set_title(s)
    rate_axis(ax)
    ax.grid(False, axis="x")
axes[0].set_ylabel("rate on calibrated data (sqrt scale)")
handles = [Patch(facecolor="tab:red", edgecolor="k", label="mc: invalid"),
           Patch(facecolor="tab:orange", edgecolor="k", label="mc: not testable (stacked)"),
           Patch(facecolor="w", edgecolor="k", label="left bar: true D normal"),
           Patch(facecolor="w", edgecolor="k", hatch="//", label="right bar: true D t(6)"),
           Line2D([], [], marker="D", color="tab:cyan", mec="k", ls="", label="p (empirical D) ≤ 0.05"),
           Line2D([], [], color="0.3", ls="--", label="5 %")]
fig.legend(handles=handles, loc="upper center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0, 1, 0.85))
plt.show()"""

EXT_MD = r"""## 4. The extrapolation test of App. C (part D)

ZMSE computed for N = 10, 20, … equal-count bins, fitted as a + b·√(N/M), and the data called
consistent when |a| ≤ 2·se(a) (`mcref.studies.extrapolation`). On calibrated datasets (u lognormal,
D normal; `extrapolation_size` in the script) the table gives the rejection rate with the published
OLS standard error (which treats the ZMSE values at different N of one dataset as independent) and
with the bootstrap standard error that mcref uses by default. A 2-se test has a nominal rate of about
4.6 %. The script prints this table and writes it to `benchmarks/results/verdicts_D.csv`; with
`QUICK = True` the notebook computes the quick setting itself (a few seconds)."""

EXT = r"""ext = None
if QUICK:
    ext = pd.DataFrame([extrapolation_size(M, S["D"]["n_sets"], S["D"]["n_boot"]) for M in S["D"]["M"]])
else:
    p = RESULTS / "verdicts_D.csv"
    if p.exists():
        ext = pd.read_csv(p)
    else:
        print(f"NOTE: {p} is absent: run `python benchmarks/study_verdicts.py` (it prints part D and writes the CSV).")
if ext is not None:
    for col in ("ols", "bootstrap"):
        ci = [binomtest(int(round(r * n)), int(n)).proportion_ci(0.95, method="wilson")
              for r, n in zip(ext[f"reject_{col}"], ext["sets"])]
        ext[f"{col} Wilson 95 %"] = [f"[{c.low:.3f}, {c.high:.3f}]" for c in ci]
    print("App. C extrapolation test on calibrated data: rejection rate (|a| > 2 se(a))")
    print(ext.to_string(index=False, float_format=lambda v: f"{v:.3f}"))"""

RULE_MD = r"""## Which rule is default and why

**Default: the Monte Carlo test** (`mcref.validate(..., rule="mc")`) for the statistics with a
simulated reference, and ζ_BS for those with a predefined reference (ZMS = 1, RCE = 0).

* Under the null hypothesis (the data are calibrated, with these u and this D), θ̂ and the
  simulated θ_k are exchangeable draws of the same statistic. The Monte Carlo p-value
  (1 + #{θ_k ≥ θ̂}) / (1 + n_MC) therefore rejects with probability at most α, for any M and any
  n_MC (Besag & Clifford 1989). The finite-M bias of ENCE, ZMSE and UCE affects θ̂ and the θ_k
  alike and cancels. ζ_Sim, in contrast, compares a bias-corrected interval with a biased mean.
  Section 1 measures both.
* This holds under the *true* D. D is unknown: under a wrong D the test has no power (t(6)
  reference for normal data) or rejects most calibrated datasets (normal reference for t(6) data).
  The **empirical D** (the data's own standardized Z) kept the size near 5 % under both normal and
  t(6) data, with the power of the true-D test to within a few per cent (sections 1–3), so the
  default rule decides by it; normal and t(6) stay in the table. Section 3
  shows what this costs with heavy-tailed errors.
* For ZMS and RCE the reference is known exactly, and ζ_BS has no such bias problem. It is kept,
  behind the shape screen that marks it *unreliable* on heavy-tailed data.
* The published rule is still available (`rule="paper"`) and every validation row carries both
  verdicts: `verdict` (the table's rule) and `verdict_paper`. In the study tables it is the rule
  `paper` beside `mc`.

The numbers behind these statements are the outputs above."""

END = r"""print("study sources: " + "; ".join(f"{p}: {r.n_loaded} cells read back / {r.n_computed} computed"
                                      for p, r in res.items()))
print(f"QUICK = {QUICK}; stores {[str(RESULTS / f'verdicts_{p}{tag}.sqlite') for p in 'ABC']}")"""


def build(quick: bool) -> nbf.NotebookNode:
    nb = nbf.v4.new_notebook()
    nb.cells = [
        md(INTRO),
        code(SETUP.replace("__QUICK__", "True" if quick else "False")),
        code(RUN),
        md(ISSUE_MD), code(ISSUE),
        md(SIZE_MD), code(SIZE_HELPERS), code(SIZE_FIG_N), code(SIZE_FIG_T), md(SIZE_TABLE_MD), code(SIZE_TABLE),
        md(B_MD), code(B_TABLE),
        md(POWER_MD), code(POWER_FIG), code(POWER_TABLE), md(POWER_NOTE), md(CC_MD), code(CC_CHECK),
        md(DSENS_MD), code(DSENS),
        md(EXT_MD), code(EXT),
        md(RULE_MD),
        code(END),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="QUICK = True in the notebook (settings(True), _quick stores)")
    ap.add_argument("--output", "-o", help="output path (default: notebooks/verdicts.ipynb; "
                    "with --quick <tmpdir>/verdicts_quick.ipynb)")
    args = ap.parse_args(argv)
    if args.output:
        out = Path(args.output)
    elif args.quick:
        out = Path(tempfile.gettempdir()) / "verdicts_quick.ipynb"
    else:
        out = Path(__file__).resolve().parent / "verdicts.ipynb"
    nbf.write(build(args.quick), str(out))
    print(f"wrote {out} (QUICK = {args.quick})")


if __name__ == "__main__":
    main()
