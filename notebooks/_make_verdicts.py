"""Builds notebooks/verdicts.ipynb: size and power of mcref's validation rules (the default Monte
Carlo test against the published ζ_Sim rule), read from the stores of benchmarks/study_verdicts.py.

Run: ``python notebooks/_make_verdicts.py`` (writes notebooks/verdicts.ipynb with QUICK = False,
not executed); then, once ``python benchmarks/study_verdicts.py`` has written the stores, execute it
with ``jupyter nbconvert --execute --to notebook --inplace notebooks/verdicts.ipynb``.

``--quick`` writes a copy with QUICK = True (the small settings of ``settings(True)`` and the
``_quick`` stores written by ``python benchmarks/study_verdicts.py --quick``; under a minute when
they exist) to ``--output`` (default: <tmpdir>/verdicts_quick.ipynb), for testing the notebook.
The environment variable ``MCREF_VERDICTS_RESULTS`` points the notebook at another stores
directory (e.g. a temporary one for a quick test).
"""

import argparse
import tempfile
from pathlib import Path

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell

NOTE = '> **Note.** `validate`\'s default is now the conditional rule (`rule="conditional"`: consistency rows by the permutation test, scale rows under the Student t fitted to Z, a Šidák joint verdict; docs/methods.md, "Heavy tails: the conditional rule", measured by `benchmarks/study_joint.py`). This notebook studies `rule="mc"`, the empirical-D rule that was the default when it was written; `rule="mc"` still gives it. Where it says "the default rule", read `rule="mc"`.\n\n'

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

### The new default rule (`rule="mc"`, `mcref/validate.py`)

* statistics with a predefined reference (ZMS = 1, RCE = 0): unchanged, ζ_BS (BCa interval
  against the reference);
* statistics with a simulated reference (CC, ENCE, ZMSE, UCE): a **Monte Carlo test**. The p-value
  of θ̂ is computed against the simulated distribution of the statistic on calibrated datasets with
  the same u (one-sided, large values, for the binned ENCE, ZMSE, UCE; two-sided for CC).
  With the **empirical D** (the data's own standardized Z) among the D, as in `validate`'s default
  `dists=("normal", "t6", "empirical")`, the verdict is *valid* when p(empirical) > 0.05, else
  *invalid*. Without it, the verdict is *valid* when p > 0.05 under every D, *invalid* when
  p ≤ 0.05 under every D, and *not testable* when the D disagree. The p-values under normal and
  t(6) are reported in every case;
* in both rules the shape screen comes first (*unreliable*: heavy tails make the bootstrap
  interval of ZMS or RCE untrustworthy).

The published rule stays available as `mcref.validate(..., rule="paper")`, and every table row
carries both verdicts (`verdict`, `verdict_paper`).

### What this notebook measures

`mcref.studies.verdicts` draws `n_rep` datasets per cell (u source, M, scenario, true D) and
applies every score to each. The rejection rate of a score on calibrated data is its **size**
(false-rejection rate, nominal 5 %); on miscalibrated data it is its **power**.
`benchmarks/study_verdicts.py` runs it in parts:

* **A** size of every score and of both rules, every statistic, u² ~ IG(3, 3), true D normal
  and t(6), including the Monte Carlo test under the data's own *empirical* D;
* **B** (and **B20**: M = 20000, fewer repeats) size of the default rule over u shapes and sizes
  (IG(ν/2, ν/2) with several ν, and the built-in datasets' own u), true D normal;
* **C** power against miscalibrations: E scaled by s, reported u ∝ u^γ, upper half of u scaled;
* **D** the distribution-free extrapolation test of App. C (ZMSE extrapolated to zero bin size)
  with the published OLS standard error and with mcref's bootstrap standard error.

### How to re-run

```bash
python benchmarks/study_verdicts.py            # writes benchmarks/results/verdicts_{A,B,B20,C}.sqlite and
                                               # verdicts_D.csv, prints every table (about 10-20 min on 2 cores)
python benchmarks/study_verdicts.py --fresh    # deletes the stores first and recomputes
python benchmarks/study_verdicts.py --quick    # the small settings, verdicts_*_quick stores (about a minute)
```

The notebook calls `mcref.studies.verdicts` with exactly the script's arguments (settings, seed 2024,
store path), so a finished store is read back at once. **If a store is absent, the notebook
computes it** (the same minutes as the script) and writes it. A store written with other
parameters than the script's current `settings` is refused (`StoreMismatchError`): re-run the
script with `--fresh` to refresh it. Part D is not stored as a study: the script prints its table
and writes `verdicts_D.csv`, which the notebook reads.

Set `QUICK = True` in the next cell to use `settings(True)` and the `_quick` stores: the figures
are then based on a few dozen datasets per cell and are noisy. The environment variable
`MCREF_VERDICTS_RESULTS` points the notebook at another stores directory (for example a temporary
one for a quick test). The text below describes what the code computes; every number is printed by
the code."""

SETUP = r"""import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display
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
RESULTS = Path(os.environ.get("MCREF_VERDICTS_RESULTS") or ROOT / "benchmarks" / "results")
RESULTS.mkdir(parents=True, exist_ok=True)
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
from study_verdicts import STATS, extrapolation_size, settings  # noqa: E402

S = settings(QUICK)
tag = "_quick" if QUICK else ""
PARTS = [p for p in ("A", "B", "B20", "C") if p in S]  # the script's parts, in its order
ALPHA = 0.05
BINNED = [s for s in STATS if mcref.stats.info(s).binned]
SIMREF = [s for s in STATS if mcref.stats.info(s).reference is None]  # simulated reference only


def rule_of(part):
    # what the default verdict "mc" of a part decides CC/ENCE/ZMSE/UCE with (studies.verdicts, validate.verdict_mc)
    if S[part].get("n_mc_empirical", 0) > 0:
        return "empirical D"
    return "agreement over (" + ", ".join(S[part].get("test_dists", ("normal", "t6"))) + ")"


plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "font.size": 10, "axes.titlesize": 11,
                     "axes.labelsize": 10, "legend.fontsize": 8.5, "axes.grid": True, "grid.alpha": 0.3})
pd.set_option("display.width", 180)
pd.set_option("display.max_columns", 40)
pd.set_option("display.max_rows", 300)
print(f"mcref {mcref.__version__}; QUICK = {QUICK}; stores in {RESULTS}")
for part in PARTS:
    p = RESULTS / f"verdicts_{part}{tag}.sqlite"
    print(f"  {p.name:26s} {'present: read back' if p.exists() else 'absent: will be computed (minutes)'}; "
          f"default verdict of CC/ENCE/ZMSE/UCE by the {rule_of(part)}")
print(f"statistics {STATS}; binned: {BINNED}; simulated reference: {SIMREF}")"""

RUN = r"""res = {}
for part in PARTS:
    res[part] = mcref.studies.verdicts(**S[part], stats=STATS, n_jobs=2, threads_per_cell=1, progress=False,
                                       store=RESULTS / f"verdicts_{part}{tag}.sqlite", seed=2024)
    print(f"part {part}: {res[part].n_loaded} cells read back, {res[part].n_computed} computed "
          f"({res[part].seconds:.1f} s); settings {S[part]}")
A, C = res["A"].table, res["C"].table
B = pd.concat([res[p].table for p in ("B", "B20") if p in res], ignore_index=True)  # parts B and B20 together


def sel(t, stat, score, dist):
    # rows of one (statistic, score, dist) from a study table
    return t[(t["stat"] == stat) & (t["score"] == score) & (t["dist"] == dist)]


def pivot(t, score, dist, index):
    # rejection rate of one (score, dist): one row per cell, one column per statistic
    t = t[(t["score"] == score) & (t["dist"] == dist)]
    return t.pivot_table(index=index, columns="stat", values="reject", sort=False).reindex(columns=STATS)"""

ISSUE_MD = r"""### The issue's measurement, repeated

Part A on calibrated data with true D normal, at the M of the study closest to 2000: the rejection
rate of the published score ζ_Sim (|ζ_Sim| > 1) under the true D and under t(6), the published
verdict (not valid), and the default verdict (not valid, and invalid). The Monte Carlo test under
the true D (`p normal`) and under the empirical D (`p empirical`) are printed beside them. "—" marks
a score that does not apply to the statistic (ZMS and RCE are decided by ζ_BS in both rules)."""

ISSUE = r"""M0 = min(S["A"]["M"], key=lambda m: abs(m - 2000))
a0 = A[(A["D"] == "normal") & (A["M"] == M0)]
cols = {("Sim", "normal"): "ζ_Sim normal", ("Sim", "t(6)"): "ζ_Sim t(6)", ("BS", ""): "ζ_BS",
        ("verdict", "paper"): "paper: not valid", ("verdict", "mc"): "mc: not valid",
        ("invalid", "mc"): "mc: invalid", ("p", "normal"): "p normal", ("p", "empirical"): "p empirical"}
issue = pd.DataFrame({lab: a0[(a0["score"] == sc) & (a0["dist"] == d)].set_index("stat")["reject"]
                      for (sc, d), lab in cols.items()}).reindex(STATS)
print(f"calibrated data, u^2 ~ IG(3,3), M = {M0}, true D normal, n_rep = {S['A']['n_rep']} per cell: rejection "
      f"rates (default rule: zeta_BS for ZMS/RCE, the {rule_of('A')} for the others)")
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
* **paper: not valid** / **mc: not valid**: the fraction of datasets that the published rule (D =
  normal, t(6)) / the default rule does not declare valid (invalid, not testable or unreliable);
* **mc: invalid**: the fraction that the default rule declares invalid.

When part A simulates the empirical D (the setup cell prints which rule applies), the default verdict
of CC, ENCE, ZMSE and UCE *is* the test under the empirical D, so the lines `p (empirical D)`,
`mc: not valid` and `mc: invalid` coincide in those panels.

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
    fig.suptitle(f"Size on calibrated data: u² ~ IG(3,3), true D = {true_d}, n_rep = {int(a['n_rep'].iloc[0])} per "
                 f"point; default rule (mc): ζ_BS for ZMS/RCE, {rule_of('A')} for the others", y=0.995, fontsize=11)
    fig.legend([handles.get(l, extra.get(l)) for l in labels], labels, loc="upper center", ncol=5,
               fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.962))
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return fig"""

SIZE_FIG_N = r"""size_figure("normal");"""

SIZE_FIG_T = r"""size_figure("t(6)");"""

SIZE_TABLE_MD = r"""The numbers behind both figures (part A, rejection rate per score, test D or rule, M):"""

SIZE_TABLE = r"""for true_d in ("normal", "t(6)"):
    a = A[A["D"] == true_d]
    print(f"\ntrue D = {true_d}")
    print(a.pivot_table(index=["score", "dist", "M"], columns="stat", values="reject", sort=False)
          .reindex(columns=STATS).to_string(float_format=lambda v: f"{v:.3f}", na_rep="—"))"""

B_MD = r"""### Parts B and B20: the default rule over u shapes and dataset sizes (true D normal)

Calibrated data with true D normal. For each cell, the default rule's rate of "not valid" and of
"invalid". For ZMS and RCE the difference between the two is *unreliable* (the shape screen; their
verdict is ζ_BS otherwise). The screen never flags CC, ENCE, ZMSE and UCE: for them the difference
is *not testable*, which only the agreement rule returns, so it is zero when the part simulates
the empirical D (the code prints the largest difference). For the built-in datasets, u is the
dataset's own u and M its size. The summary compares the "invalid" rate with the nominal 5 %,
with the binomial noise of `n_rep` datasets per cell printed beside it."""

B_TABLE = r"""b_nv, b_inv = pivot(B, "verdict", "mc", ["u", "M"]), pivot(B, "invalid", "mc", ["u", "M"])
display(pd.concat({"not valid (mc)": b_nv, "invalid (mc)": b_inv}, axis=1).round(3))
print("largest (not valid - invalid) per statistic, i.e. unreliable (ZMS, RCE) or not testable (the others):",
      {s: round(float((b_nv[s] - b_inv[s]).max()), 3) for s in STATS})

bt = B[(B["score"] == "invalid") & (B["dist"] == "mc")]
for n in sorted(set(bt["n_rep"])):
    print(f"n_rep = {n}: binomial sd of a 5 % rate = {np.sqrt(ALPHA * (1 - ALPHA) / n):.3f}; "
          f"P(observed rate > 7 % | true rate 5 %) = {binom.sf(np.floor(0.07 * n), n, ALPHA):.3f} per cell "
          f"({int((bt['n_rep'] == n).sum())} (cell, statistic) pairs)")
print("\ninvalid (mc): max |rate - 0.05| per statistic, and the cell where it is reached")
for s in STATS:
    dev = (b_inv[s] - ALPHA).abs()
    i = dev.idxmax()
    print(f"  {s:5s} max |rate - 0.05| = {dev.max():.3f} at u = {i[0]}, M = {i[1]} (rate {b_inv[s][i]:.3f}); "
          f"mean rate over the cells {b_inv[s].mean():.3f}")
over = bt[bt["reject"] > 0.07]
expected = binom.sf(np.floor(0.07 * bt["n_rep"]), bt["n_rep"], ALPHA).sum()
print(f"\ncells with invalid (mc) > 7 %: {len(over)} of {len(bt)} "
      f"(expected by chance if every true rate were 5 %: {expected:.1f})")
if len(over):
    print(over[["u", "M", "n_rep", "stat", "reject", "low", "high"]].to_string(index=False,
                                                                               float_format=lambda v: f"{v:.3f}"))
nv = B[(B["score"] == "verdict") & (B["dist"] == "mc")]
print(f"\ncells with not valid (mc) > 7 %: {int((nv['reject'] > 0.07).sum())} of {len(nv)}, by statistic: "
      f"{nv[nv['reject'] > 0.07].groupby('stat').size().reindex(STATS, fill_value=0).to_dict()}")"""

POWER_MD = r"""## 2. Power: rejections on miscalibrated data (part C)

u² ~ IG(3, 3), true D normal. Scenarios (E errors, u the reported uncertainties, ε ~ D):
`scale=s`, E = s·u·ε (u too small for s > 1, too large for s < 1); `gamma=g`, E = u·ε but the
reported uncertainties are c·u^g with the same mean square (calibrated on average, not
consistent); `break=s`, the upper half of u has E = s·u·ε. The heatmaps show the default
verdict's rate of "not valid"; the first row, `calibrated (A)`, is the same rate on calibrated data
from part A (same u source, same M, true D normal), i.e. its size. "Not valid" also counts
*unreliable* (and *not testable* under the agreement rule), so it is not the rate of "invalid";
both are tabulated below."""

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
fig.subplots_adjust(top=0.83, bottom=0.1, left=0.08, right=0.93, wspace=0.15)
fig.colorbar(im, ax=axes, shrink=0.85, pad=0.01, label="rate of 'not valid' (default rule)")
fig.suptitle(f"Power of the default rule: u² ~ IG(3,3), true D normal, n_rep = {int(C['n_rep'].iloc[0])} per cell\n"
             f"(ZMS/RCE by ζ_BS, CC/ENCE/ZMSE/UCE by the {rule_of('C')}; first row: size from part A)", fontsize=11)
plt.show()"""

POWER_TABLE = r"""display(pd.concat({"not valid (mc)": pw_nv, "invalid (mc)": pw_inv}, axis=1).round(3))
p_true = pivot(C, "p", "normal", ["scenario", "M"])
p_emp = pivot(C, "p", "empirical", ["scenario", "M"])
if p_emp.notna().any().any():
    display(pd.concat({"p <= 0.05, true D (normal)": p_true, "p <= 0.05, empirical D": p_emp}, axis=1).round(3))
    diff = (p_true - p_emp)[SIMREF]
    print("power of the Monte Carlo test, true D minus empirical D, over the cells of part C:")
    for s in SIMREF:
        i = diff[s].idxmax()
        print(f"  {s:5s} mean {diff[s].mean():+.3f}; largest {diff[s].max():+.3f} ({i[0]}, M = {int(i[1])}); "
              f"smallest {diff[s].min():+.3f}")
else:
    print("Monte Carlo test under the true D (normal), p <= 0.05 (part C has no empirical D):")
    print(p_true.to_string(float_format=lambda v: f"{v:.3f}", na_rep="—"))"""

POWER_NOTE = r"""Where "not valid" and "invalid" differ for ZMS or RCE, the difference is the shape screen
(*unreliable*): the scenarios `gamma=g` change the reported u and hence the tails of u² and Z².
The second table compares, on the same datasets, the Monte Carlo test under the true D (normal
here; unknown in practice) with the test under the empirical D, which the default rule uses when it
is simulated; the printed differences are the power lost by estimating D from the data."""

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

DSENS_MD = r"""## 3. D-sensitivity: which D for the reference? (part A, true D normal and t(6))

The reference distributions of CC, ENCE, ZMSE and UCE depend on D. Part A runs the Monte Carlo
test on the same calibrated datasets with three references: normal, t(6), and the data's own
**empirical D**, for data drawn with true D normal and with true D t(6). A fixed reference D that
is not the true D gives the test a wrong size. For the binned statistics the t(6) reference lies
above the normal one, so the normal reference rejects t(6) data too often, and the t(6) reference
rejects normal data too rarely (which also costs power).

Without the empirical D, `validate` decides by agreement over the D: *invalid* when both reject,
*not testable* when exactly one does. The study stores the rejection rate of each test (r_normal,
r_t6), not their joint outcome, so the code prints bounds for that rule: rate of *invalid*
≤ min(r_normal, r_t6), rate of *not testable* ≥ |r_normal − r_t6|. The default verdict
(`mc: not valid`), which uses the empirical D when the part simulates it, and the published rule
are printed beside them.

The empirical D is estimated from the data being tested, so the exchangeability argument behind
the exact size of the parametric test does not apply to it exactly; its size is what the table and
the figure (square-root y axis, as in section 1) measure."""

DSENS = r"""rows = []
for true_d in ("normal", "t(6)"):
    for M in sorted(S["A"]["M"]):
        a = A[(A["D"] == true_d) & (A["M"] == M)]
        for s in SIMREF:
            g = lambda sc, d: float(sel(a, s, sc, d)["reject"].iloc[0]) if len(sel(a, s, sc, d)) else np.nan
            rn, rt = g("p", "normal"), g("p", "t(6)")
            rows.append({"true D": true_d, "M": M, "stat": s, "p normal": rn, "p t(6)": rt,
                         "p empirical": g("p", "empirical"), "agree: invalid <=": min(rn, rt),
                         "agree: not testable >=": abs(rn - rt), "mc: not valid": g("verdict", "mc"),
                         "paper: not valid": g("verdict", "paper")})
ds = pd.DataFrame(rows)
print(f"calibrated data (part A, u^2 ~ IG(3,3), n_rep = {S['A']['n_rep']}): rejection rates (p <= 0.05) of the "
      f"Monte Carlo test per reference D, bounds for the agreement rule over (normal, t(6)), and the verdicts "
      f"(mc: {rule_of('A')})")
print(ds.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

Ms_A = sorted(S["A"]["M"])
LINES = [("normal", "reference normal", dict(color="tab:blue", marker="o", ls="-")),
         ("t(6)", "reference t(6)", dict(color="tab:orange", marker="s", ls="-")),
         ("empirical", "reference empirical D", dict(color="tab:green", marker="D", ls="-", lw=2.2))]
fig, axes = plt.subplots(2, len(SIMREF), figsize=(3.6 * len(SIMREF), 7.4), sharex=True, sharey=True)
for r, true_d in enumerate(("normal", "t(6)")):
    a = A[A["D"] == true_d]
    for c, s in enumerate(SIMREF):
        ax = axes[r, c]
        ax.axhspan(0.03, 0.07, color="0.82", zorder=0)
        ax.axhline(ALPHA, color="0.45", lw=0.8, zorder=0)
        for d, label, st in LINES:
            t = sel(a, s, "p", d).sort_values("M")
            if t.empty:
                continue
            if d == "empirical":
                ax.fill_between(t["M"], t["low"], t["high"], color="tab:green", alpha=0.2, lw=0)
            ax.plot(t["M"], t["reject"], label=label, **st)
        b = ds[(ds["stat"] == s) & (ds["true D"] == true_d)].sort_values("M")
        ax.plot(b["M"], b["agree: not testable >="], color="k", ls=":", marker="x",
                label="agreement rule: not testable ≥")
        ax.set_title(f"{s}, true D = {true_d}")
        rate_axis(ax)
        m_axis(ax, Ms_A)
for ax in axes[-1]:
    ax.set_xlabel("M (dataset size)")
for ax in axes[:, 0]:
    ax.set_ylabel("rejection rate (sqrt scale)")
h, l = axes[0, -1].get_legend_handles_labels()
h += [Patch(color="tab:green", alpha=0.2), Patch(color="0.82")]
l += ["empirical D, Wilson 95 %", "target 5 % ± 2 %"]
fig.suptitle(f"Monte Carlo test on calibrated data (part A, u² ~ IG(3,3), n_rep = {S['A']['n_rep']} per point): "
             "rejection rate per reference D", y=0.995, fontsize=11)
fig.legend(h, l, loc="upper center", ncol=3, frameon=False, bbox_to_anchor=(0.5, 0.962))
fig.tight_layout(rect=(0, 0, 1, 0.905))
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
* The exactness holds under the *true* D, which is unknown. Under a wrong D the test has the
  wrong size, too high or too low (section 3), and requiring agreement over several D turns their
  disagreement into *not testable*. `validate`'s default D therefore include the **empirical D**
  (the data's own standardized Z), whose test decides the verdict; normal and t(6) stay in the
  table. The empirical D is estimated from the same data, so its test is not exact by the
  exchangeability argument: its size under normal and t(6) data is printed in sections 1 to 3, and
  its power against the test under the true D in section 2.
* For ZMS and RCE the reference is known exactly, and ζ_BS has no such bias problem. It is kept,
  behind the shape screen that marks it *unreliable* on heavy-tailed data.
* The published rule is still available (`rule="paper"`) and every validation row carries both
  verdicts: `verdict` (the table's rule) and `verdict_paper`. In the study tables it is the rule
  `paper` beside `mc`.

The numbers behind these statements are the outputs above."""

END = r"""print("study sources: " + "; ".join(f"{p}: {r.n_loaded} cells read back / {r.n_computed} computed"
                                      for p, r in res.items()))
print(f"QUICK = {QUICK}; stores {[str(RESULTS / f'verdicts_{p}{tag}.sqlite') for p in PARTS]}")"""


def build(quick: bool) -> nbf.NotebookNode:
    nb = nbf.v4.new_notebook()
    nb.cells = [
        md(NOTE + INTRO),
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
