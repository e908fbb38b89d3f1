"""Builds notebooks/adaptivity.ipynb: calibration, consistency and adaptivity in one
validation table and one verdict, on the primer's six synthetic cases (P. Pernot,
*Validation of uncertainty quantification metrics: a primer based on the consistency and
adaptivity concepts*, arXiv:2303.07170).

Run: ``python notebooks/_make_adaptivity.py`` (writes the notebook, not executed), then
``cd notebooks && jupyter nbconvert --execute --ExecutePreprocessor.timeout=1800 --to notebook
--inplace adaptivity.ipynb`` (a few minutes on 2 cores). ``--quick`` writes a copy with small
settings to ``--output`` for testing.
"""

import nbformat as nbf
from _nbgen import code, main, md, notebook

INTRO = r"""# Adaptivity: the primer's three targets in one verdict

The primer asks three questions of a UQ method: is it **calibrated** on average (⟨Z²⟩ = 1),
**consistent** (⟨Z²⟩ = 1 at every level of u) and **adaptive** (⟨Z²⟩ = 1 along the input
features x)? `mcref.validate(E, u, x=x)` answers all three: the ZMS row (scale test), the rows
binned on u and CC (consistency), and the rows binned on each feature, `ENCE|x`, `ZMSE|x`
(adaptivity), decided by the permutation test (Z shuffled across rows, exact under any error
distribution) and joined in one joint verdict. docs/methods.md, "Adaptivity", gives the test.

The six cases (`mcref.synthetic.case`, M = 5000), with the flags of the primer's code:

| case | u and E | calibrated | consistent | adaptive |
|---|---|---|---|---|
| A | u_A = 0.1(0.1 + x²), E = u_A·N(0, 1) | yes | yes | yes |
| B | u ≈ RMS(u_A)·N(1, 0.1), errors of A | yes | no | no |
| C | a permutation of u_A, errors of A | no | no | no |
| D | 2·u_A, errors of A | no | no | no |
| E | u_A, E = u_A·t(4)/√2 | yes | yes | yes |
| F | u constant = RMS(u_A), E = u·N(0, 1) | yes | – | yes |

Case F is homoscedastic: one σ for every point. The primer's text calls it consistent; with no
variation in u there is nothing to be consistent *with*, and mcref says so: its u rows are
`not testable`, while ZMS and the x rows decide."""


def build(quick: bool) -> nbf.NotebookNode:
    n_seeds = 6 if quick else 30
    B, NMC = (200, 299) if quick else (1000, 2000)
    cells = [
        md(INTRO),
        code(
            "import warnings\n"
            "import numpy as np\n"
            "import pandas as pd\n"
            "import matplotlib.pyplot as plt\n"
            "import matplotlib.ticker as mticker\n"
            "import mcref\n"
            "from mcref import synthetic\n"
            "warnings.simplefilter('ignore', mcref.MCRefWarning)\n"
            f"B, NMC = {B}, {NMC}"
        ),
        md("## One table per case\n\nCase C: the uncertainties are shuffled, so calibration is off in "
           "some bins of u *and* of x. Every binned row sees it, the rows of x included:"),
        code("ds = synthetic.case('C', M=5000, seed=3)\n"
             "tab = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=B, n_mc=NMC, seed=3)\n"
             "print(tab)"),
        md("Case F, one σ for every point: CC and the rows binned on u are `not testable` (the reason is "
           "in the row and the notes); ZMS, RCE, the x rows and the joint verdict stand:"),
        code("ds = synthetic.case('F', M=5000, seed=3)\n"
             "tab = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=B, n_mc=NMC, seed=3)\n"
             "print(tab)"),
        md("## The six cases side by side\n\nPer target, the verdict of its part of the joint verdict "
           "(one exact test each: `p_scale`, `p_consistency`, `p_adaptivity`), and the joint verdict:"),
        code(
            "def targets(tab):\n"
            "    j = tab.joint\n"
            "    word = lambda p: '-' if p is None else ('valid' if p > 0.05 else 'invalid')\n"
            "    return {'calibrated (scale)': word(j.p_scale), 'consistent (u)': word(j.p_consistency),\n"
            "            'adaptive (x)': word(j.p_adaptivity), 'joint': j.verdict, 'driver': j.driver}\n"
            "rows = {}\n"
            "for c in 'ABCDEF':\n"
            "    ds = synthetic.case(c, M=5000, seed=3)\n"
            "    rows[c] = targets(mcref.validate(ds.E, ds.u, x=ds.x, n_boot=B, n_mc=NMC, seed=3))\n"
            "pd.DataFrame(rows).T"
        ),
        md("## Where the calibration goes wrong along x\n\n⟨Z²⟩ per bin of x (20 equal-count bins), "
           "against the band that 200 shuffles of Z across the rows give (the permutation test's null, "
           "each shuffle measured against the set's own scale ZMS as the test does):"),
        code(
            "def zms_bins(z, lab, nb):\n"
            "    return np.bincount(lab, z * z, nb) / np.bincount(lab, minlength=nb)\n"
            "fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), sharex=True)\n"
            "for ax, c in zip(axes.flat, 'ABCDEF'):\n"
            "    ds = synthetic.case(c, M=5000, seed=3)\n"
            "    z = ds.E / ds.u\n"
            "    order = np.argsort(ds.x, kind='stable')\n"
            "    lab = np.empty(z.size, int); lab[order] = np.arange(z.size) * 20 // z.size\n"
            "    mid = np.array([np.median(ds.x[lab == b]) for b in range(20)])\n"
            "    zms = np.mean(z * z)\n"
            "    rng = np.random.default_rng(0)\n"
            "    perm = np.array([zms_bins(rng.permutation(z), lab, 20) for _ in range(200)]) / zms\n"
            "    lo, hi = np.quantile(perm, [0.025, 0.975], axis=0)\n"
            "    ax.fill_between(mid, lo, hi, color='0.85', label='shuffles, 95 %')\n"
            "    ax.plot(mid, zms_bins(z, lab, 20) / zms, 'o-', ms=3, label='data')\n"
            "    ax.axhline(1, color='k', lw=0.8)\n"
            "    ax.set_title(f'case {c}: ZMS = {zms:.3g}')\n"
            "    y = zms_bins(z, lab, 20) / zms\n"
            "    if max(y.max(), hi.max()) / min(y.min(), lo.min()) > 5:  # a log axis only for a wide range\n"
            "        ax.set_yscale('log')\n"
            "        ax.yaxis.set_major_formatter(mticker.FormatStrFormatter('%g'))\n"
            "for ax in axes[1]: ax.set_xlabel('x (bin median)')\n"
            "for ax in axes[:, 0]: ax.set_ylabel('ZMS per bin / ZMS')\n"
            "axes[0, 1].legend(fontsize=8, loc='upper center')\n"
            "fig.tight_layout()"
        ),
        md("A, E and F stay in the band: adaptive. B and C leave it (too small near x = 0, too large in "
           "the tails): not adaptive. D leaves ZMS = 0.25 for the scale test but stays in the band: its "
           "calibration is off by one factor everywhere, which is a scale error, not a lack of adaptivity."),
        md(f"## Verdict rates over {n_seeds} seeds per case\n\nThe fraction of sets judged invalid, per "
           "target (its part of the joint verdict) and jointly, beside the primer's Table 1 flags. "
           "`benchmarks/study_adaptivity.py` runs the same with 50 seeds and the size study."),
        code(
            "rates = {}\n"
            f"for c in 'ABCDEF':\n"
            f"    ss = np.random.SeedSequence(2026, spawn_key=(1, 'ABCDEF'.index(c))).spawn({n_seeds})\n"
            "    out = []\n"
            "    for s in ss:\n"
            "        ds = synthetic.case(c, M=5000, seed=s)\n"
            "        j = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=200, n_mc=499, seed=s.spawn(1)[0]).joint\n"
            "        out.append([(j.p_scale or 1) <= 0.05, (j.p_consistency or 1) <= 0.05,\n"
            "                    (j.p_adaptivity or 1) <= 0.05, j.verdict == 'invalid'])\n"
            "    rates[c] = np.mean(out, axis=0)\n"
            "primer = {'A': 'yes/yes/yes', 'B': 'yes/no/no', 'C': 'no/no/no', 'D': 'no/no/no', 'E': 'yes/yes/yes',\n"
            "          'F': 'yes/-/yes'}\n"
            "df = pd.DataFrame(rates, index=['invalid: scale', 'invalid: consistency', 'invalid: adaptivity',\n"
            "                                'invalid: joint']).T\n"
            "df['primer: calibrated/consistent/adaptive'] = pd.Series(primer)\n"
            "df"
        ),
        md("Reading: on the calibrated cases (A, E, F) each part is invalid at about its size, 5 %, within "
           "the binomial noise of this many sets (sd 4 % at 30 sets), and the joint verdict too; B and C are "
           "invalid on adaptivity in every set and on consistency in (nearly) every set; D, a pure scale "
           "error, on scale in every set and elsewhere at about the size. B and C get no scale "
           "verdict ('-' above): their Z² is so skewed that the shape screen calls ZMS unreliable, and the "
           "consistency and adaptivity parts decide them. Case F's consistency is not testable (constant u)."),
    ]
    return notebook(cells)


if __name__ == "__main__":
    main(build, "adaptivity", __doc__)
