"""Builds notebooks/errviewlib_parity.ipynb: mcref beside P. Pernot's R package ErrViewLib,
function by function (docs/errviewlib.md), with the agreement measured live against R's numbers
in tests/data/errviewlib_parity.txt and tests/data/errviewlib_cuts.txt (R is not run).

Run: ``python notebooks/_make_errviewlib_parity.py`` (writes the notebook, not executed), then
``cd notebooks && jupyter nbconvert --execute --to notebook --inplace errviewlib_parity.ipynb``
(about 2 minutes on 2 cores). ``--quick`` writes a copy to ``--output`` that reads one cut
pair in ten of the 30 121-pair sweep.
"""

import nbformat as nbf
from _nbgen import code, main, md, notebook

INTRO = r"""# mcref beside ErrViewLib, function by function

[ErrViewLib](https://github.com/ppernot/ErrViewLib) (P. Pernot, commit `e87ed279`) is the R
package behind the validation papers that mcref reproduces. `tests/data/errviewlib_parity.R`
ran its functions (R 4.2.2) on two sets and wrote their outputs to
`tests/data/errviewlib_parity.txt`; `tests/data/errviewlib_cuts.R` wrote the bins of
`genIntervals` on 30 121 (M, N) pairs to `tests/data/errviewlib_cuts.txt`
(tests/data/README.md). This notebook does not run R: for each function it shows the R call
that made the numbers, runs the mcref call, and measures the agreement from those files.
The two sets:

* **QM9_E** (M = 13 885, packaged with mcref), and
* a **synthetic set** of 1200 points (`tests/data/errviewlib_parity_inputs.py`, fixed seed).

Two measures, collected in one table at the end:

* **deterministic** values: the largest relative difference `max |mcref − R| / |R|` ("rel. d");
* **Monte Carlo** values (bootstrap limits, simulated references): R was run 20 or 10 times;
  one mcref run is compared with the mean of R's runs in units of R's run-to-run sd σ_R,
  `d = (mcref − mean_R) / (σ_R·√(1 + 1/n_runs))`. The table gives max |d| and the mean signed d
  (mcref's bias against R, if any). Seeds are those of `tests/test_parity.py`.

Bins are R's (`cuts="errviewlib"`); docs/errviewlib.md lists every function of the package."""


def build(quick: bool) -> nbf.NotebookNode:
    every = 10 if quick else 1
    cells = [
        md(INTRO),
        code(
            "import importlib.util, math, time, warnings\n"
            "from pathlib import Path\n"
            "import numpy as np\n"
            "import pandas as pd\n"
            "import matplotlib.pyplot as plt\n"
            "import scipy.stats as sps\n"
            "import mcref\n"
            "from mcref import diagnostics as D\n"
            "from mcref.binning import bin_starts, sqrt_starts\n"
            "from mcref.datasets import load\n"
            "warnings.simplefilter('ignore', mcref.MCRefWarning)\n"
            "T0 = time.perf_counter()\n"
            "ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / 'tests' / 'data').is_dir())\n"
            "DATA = ROOT / 'tests' / 'data'\n"
            "REF = {}\n"
            "for line in (DATA / 'errviewlib_parity.txt').read_text().splitlines():\n"
            "    key, *vals = line.split()\n"
            "    if key != 'R':\n"
            "        REF[key] = np.array(vals, dtype=float)\n"
            "spec = importlib.util.spec_from_file_location('inputs', DATA / 'errviewlib_parity_inputs.py')\n"
            "inputs = importlib.util.module_from_spec(spec); spec.loader.exec_module(inputs)\n"
            "q = load('QM9_E')\n"
            "SETS = {'qm9': (q.E, q.u, q.x), 'synth': inputs.synth()}\n"
            "CASES = [(s, v) for s in SETS for v in 'ux']\n"
            "ROWS = []\n"
            "\n"
            "def ref(keys):\n"
            "    return np.concatenate([REF[k] for k in ([keys] if isinstance(keys, str) else keys)])\n"
            "\n"
            "def exact(fn, what, got, keys, absolute=False):\n"
            "    \"\"\"Deterministic values: max relative (or absolute) difference from R's.\"\"\"\n"
            "    got, r = np.concatenate([np.atleast_1d(np.asarray(g, float)) for g in got]), ref(keys)\n"
            "    assert got.shape == r.shape, (fn, got.shape, r.shape)\n"
            "    d = np.abs(got - r) if absolute else np.abs(got - r) / np.where(r == 0, 1.0, np.abs(r))\n"
            "    ROWS.append(dict(function=fn, compared=what, n=r.size, measure='abs. d' if absolute else 'rel. d',\n"
            "                     value=d.max(), mean_d=np.nan))\n"
            "    print(f'{fn}: {what}: {r.size} values, max {ROWS[-1][\"measure\"]} {d.max():.2g}')\n"
            "\n"
            "def mc(fn, what, got, key, n_runs, sel=slice(None)):\n"
            "    \"\"\"Monte Carlo values: d = (mcref − mean_R)/(σ_R·√(1 + 1/n_runs)); values that R finds\n"
            "    the same in every run (σ_R = 0) are compared as deterministic ones.\"\"\"\n"
            "    got = np.asarray(got, float).ravel()\n"
            "    mean, sd = REF[key + '_mean'][sel], REF[key + '_sd'][sel]\n"
            "    assert got.shape == mean.shape, (fn, got.shape, mean.shape)\n"
            "    fixed = sd <= 1e-12 * np.abs(mean)\n"
            "    d = (got - mean)[~fixed] / (sd[~fixed] * math.sqrt(1 + 1 / n_runs))\n"
            "    note = ''\n"
            "    if fixed.any():\n"
            "        g, r = got[fixed], mean[fixed]\n"
            "        note = f'; {fixed.sum()} values fixed in R: rel. d {np.max(np.abs(g - r) / np.where(r == 0, 1, np.abs(r))):.1g}'\n"
            "    ROWS.append(dict(function=fn, compared=what + note, n=int((~fixed).sum()),\n"
            "                     measure=f'max |d|/σ ({n_runs} R runs)', value=np.abs(d).max(), mean_d=d.mean()))\n"
            "    print(f'{fn}: {what}: {d.size} values, max |d| {np.abs(d).max():.2f}, mean d {d.mean():+.2f}{note}')\n"
            "    return d"
        ),
        md("## Equal-count bins: `genIntervals`\n\n"
           "```r\ngenIntervals(M, N, popMin = 1)$lwindx - 1        # 0-based bin starts\n```\n"
           "mcref: `bin_starts(M, N, cuts=\"errviewlib\")`. R places the cut of bin i at the Harrell–Davis "
           "quantile of the ranks, rounded; away from a half-integer M·i/N that is round-half-up and mcref "
           "must equal R. At a half-integer the HD quantile lies within R's own rounding error of the "
           "half-integer, and the side R lands on is decided by that rounding (docs/methods.md, "
           "\"Binning\"): there only the count of agreeing cuts is reported."),
        code(
            "pairs = same = 0\n"
            "for key, r in REF.items():\n"
            "    if key.startswith('cuts_'):\n"
            "        _, m, n = key.split('_')\n"
            "        pairs += 1\n"
            "        same += np.array_equal(bin_starts(int(m), int(n), cuts='errviewlib')[:-1], r)\n"
            "print(f'errviewlib_parity.txt: {same} of {pairs} (M, N) pairs identical (M <= 120 and five larger)')\n"
            "lines = [ln for ln in (DATA / 'errviewlib_cuts.txt').read_text().splitlines() if ln[0] != '#']\n"
            f"lines = lines[::{every}]\n"
            "n_pairs = half = differ = off_half_differ = rhu = 0\n"
            "for line in lines:\n"
            "    m, n, dev = line.split(); m, n = int(m), int(n)\n"
            "    i = np.arange(n + 1)\n"
            "    r = (2 * m * i + n) // (2 * n)              # round half up ...\n"
            "    if dev != '-':\n"
            "        r[[int(v) for v in dev.split(',')]] -= 1  # ... but where R puts the cut one point lower\n"
            "    got = bin_starts(m, n, cuts='errviewlib')\n"
            "    is_half = (2 * m * i) % (2 * n) == n\n"
            "    n_pairs += 1; half += is_half.sum()\n"
            "    differ += np.sum(got[is_half] != r[is_half]); off_half_differ += np.sum(got[~is_half] != r[~is_half])\n"
            "    rhu += np.sum((2 * m * i + n) // (2 * n) != r)\n"
            "print(f'errviewlib_cuts.txt: {n_pairs} pairs; cuts off a half-integer that differ: {off_half_differ}; '\n"
            "      f'half-integer cuts {half}, of which {differ} differ (round half up: {rhu})')\n"
            "ROWS.append(dict(function='genIntervals (equal counts)', n=int(half), measure='cuts that differ',\n"
            "                 value=int(differ), mean_d=np.nan,\n"
            "                 compared=f'{n_pairs} (M, N) pairs: every cut off a half-integer equal '\n"
            "                          f'({off_half_differ} differ); the count is of half-integer cuts, decided by R\\'s rounding'))\n"
            "ok = all(np.array_equal(sqrt_starts(m, cuts='errviewlib')[:-1], REF[f'sqrt_starts_{m}'])\n"
            "         for m in (1200, 2000, 2500, 901, 899, 500))\n"
            "ok &= all(np.array_equal(sqrt_starts(SETS[s][0].size, cuts='errviewlib')[:-1], REF[f'{s}_genIntervals_sqrt_starts'])\n"
            "          for s in SETS)\n"
            "print('genIntervals(M, sqrt(M)) identical for six M and both sets:', ok)\n"
            "ROWS.append(dict(function='genIntervals(M, sqrt(M))', compared='sqrt_starts: six M and both sets', n=8,\n"
            "                 measure='sets of starts that differ', value=0 if ok else 1, mean_d=np.nan))"
        ),
        md("## `calibScores`\n\n"
           "```r\ncalibScores(E, u, X = x, nBin = 20)   # and calibScores(E, u, X = x): nBin = sqrt(M)\n```\n"
           "mcref: `calib_scores(E, u, x, n_bins=20, cuts=\"errviewlib\")` and `n_bins=\"sqrt\"` (R's default: "
           "⌊√M⌋ bins on the grid of ⌈√M⌉, the last one doubled). ErrViewLib's NLL rounds ln 2π to 1.837877; "
           "mcref's `nll` is shifted by that rounding before the comparison."),
        code(
            "names = [('zmse_u', 'Su'), ('zmse_x', 'SX'), ('ence_u', 'enceu'), ('ence_x', 'enceX'), ('uce_u', 'uceu'),\n"
            "         ('uce_x', 'uceX'), ('scal', 'Scal'), ('stot', 'Stot'), ('calib', 'calib'), ('sharp', 'sharp')]\n"
            "got, keys, gs, ks = [], [], [], []\n"
            "for s, (E, u, x) in SETS.items():\n"
            "    c = D.calib_scores(E, u, x, n_bins=20, cuts='errviewlib')\n"
            "    got += [getattr(c, a) for a, _ in names] + [c.nll - 0.5 * (math.log(2 * math.pi) - 1.837877)]\n"
            "    keys += [f'{s}_calibScores_{b}' for _, b in names] + [f'{s}_calibScores_nll']\n"
            "    c = D.calib_scores(E, u, x, n_bins='sqrt', cuts='errviewlib')\n"
            "    gs += [getattr(c, a) for a, _ in names[:8]]\n"
            "    ks += [f'{s}_calibScores_sqrt_{b}' for _, b in names[:8]]\n"
            "exact('calibScores', '20 bins of u and x: ZMSE, ENCE, UCE, Scal, Stot, calib, sharp, NLL (both sets)', got, keys)\n"
            "exact('calibScores', 'default sqrt(M) bins (n_bins=\"sqrt\")', gs, ks)"
        ),
        md("## Local statistics with deterministic intervals: `plotLZV`, `plotLZM`, `plotLZISD`, `plotLZMS`\n\n"
           "```r\nplotLZV(X, Z, method = \"cho\", plot = FALSE, score = TRUE)    # X = u or x, Z = E/u\n"
           "plotLZM(X, Z, plot = FALSE)\nplotLZISD(X, Z, method = \"cho\", plot = FALSE, score = TRUE)\n"
           "plotLZMS(X, Z, method = \"stud\", plot = FALSE, score = TRUE)\ntestCovIntProb(plotLZV(...))\n```\n"
           "mcref: `lzv(E, u, x, method=\"cho\", cuts=\"errviewlib\")` and its `.scores()`, "
           "`.fraction_valid_interval()`, `.valid_test()`; `lzm`, `lzisd`, `lzms(method=\"stud\")` (with "
           "`.skew`, ErrViewLib's `skewgm` of Z² per bin). Compared: per-bin values, limits, bin centres, the "
           "whole-set value and the scores. `plotLZM`'s whole-set interval is R's ±1.96 se, mcref's Student "
           "one (left out here); its bins are compared in absolute terms (means near 0)."),
        code(
            "args = lambda s, v: (SETS[s][0], SETS[s][1], None if v == 'u' else SETS[s][2])\n"
            "def local(d, k, lim=True):\n"
            "    return [d.value, d.low, d.high], [f'{k}_pc', f'{k}_pcl', f'{k}_pcu']\n"
            "def scores(sc, k, e='ZVE', m='ZVM', f=True):\n"
            "    g = [sc.mean_deviation, sc.mean_deviation_up, sc.max_deviation, float(sc.max_significant)]\n"
            "    ks = [f'{k}_{e}', f'{k}_{e}Up', f'{k}_{m}', f'{k}_{m}s']\n"
            "    if f:\n"
            "        g += [sc.f_valid, sc.f_valid_low, sc.f_valid_high]; ks += [f'{k}_fVal', f'{k}_lofVal', f'{k}_upfVal']\n"
            "    return g, ks\n"
            "acc = {n: ([], []) for n in ('lzv', 'lzv_sc', 'lzm', 'lzm_c', 'lzisd', 'lzms', 'skew', 'test')}\n"
            "def add(n, g, k):\n"
            "    acc[n][0].extend(g); acc[n][1].extend(k)\n"
            "for s, v in CASES:\n"
            "    d = D.lzv(*args(s, v), method='cho', cuts='errviewlib'); k = f'{s}_LZVcho_{v}'\n"
            "    add('lzv', *local(d, k)); add('lzv', [d.centers, *d.overall], [f'{k}_mint', f'{k}_meanP', f'{k}_meanPl', f'{k}_meanPu'])\n"
            "    add('lzv_sc', *scores(d.scores(), k))\n"
            "    t = d.valid_test()\n"
            "    add('test', [[t.success, t.trials, t.estimate, t.low, t.high, t.p_value]], [f'{s}_testCovIntProb_{v}'])\n"
            "    d = D.lzm(*args(s, v), cuts='errviewlib'); k = f'{s}_LZM_{v}'\n"
            "    add('lzm', *local(d, k)); add('lzm_c', [d.centers, d.overall[0], *d.fraction_valid_interval()],\n"
            "                                  [f'{k}_mint', f'{k}_meanP', f'{k}_fVal', f'{k}_lofVal', f'{k}_upfVal'])\n"
            "    d = D.lzisd(*args(s, v), cuts='errviewlib'); k = f'{s}_LZISDcho_{v}'\n"
            "    add('lzisd', *local(d, k)); add('lzisd', *scores(d.scores(), k, 'ZISDE', 'ZISDM', f=False))\n"
            "    d = D.lzms(*args(s, v), method='stud', cuts='errviewlib'); k = f'{s}_LZMSstud_{v}'\n"
            "    add('lzms', *local(d, k)); add('lzms', *scores(d.scores(), k))\n"
            "    add('skew', [d.skew], [f'{s}_skewgm_{v}'])\n"
            "exact('plotLZV (cho)', 'values, limits, centres, whole set; bins of u and x, both sets', *acc['lzv'])\n"
            "exact('plotLZV (score = TRUE)', 'ZVE, ZVEUp, ZVM, ZVMs, fVal and its Wilson-cc limits', *acc['lzv_sc'])\n"
            "exact('testCovIntProb', 'successes, trials, estimate, Clopper-Pearson limits, p-value', *acc['test'])\n"
            "exact('plotLZM', 'per-bin means and limits', *acc['lzm'], absolute=True)\n"
            "exact('plotLZM', 'centres, whole-set mean, fVal and limits', *acc['lzm_c'])\n"
            "exact('plotLZISD (cho)', 'values, limits, ZISDE, ZISDEUp, ZISDM(s)', *acc['lzisd'])\n"
            "exact('plotLZMS (stud)', 'values, limits, ZVE, ZVEUp, ZVM(s), fVal', *acc['lzms'])\n"
            "exact('skewgm (plotLZMS flag)', 'skewness of Z² per bin', *acc['skew'])"
        ),
        md("## Intervals from user half-widths, strata, and `ZMSCI(\"studc\")`\n\n"
           "```r\nU <- cbind(u * qnorm(0.75), 1.8 * u + 0.3 * x)\n"
           "plotLCP(E, U, ordX = x, prob = c(0.5, 0.95), binomCI = m, plot = FALSE)   # five binomial intervals\n"
           "xd <- round(x * 20) / 20\nplotStratZV(xd, Z, method = \"cho\", popMin = 100, plot = FALSE)  # also ZM (popMin 30), ZMS (stud)\n"
           "ZMSCI(Z_bin, method = \"studc\")   # 8 bins of u\n```\n"
           "mcref: `lcp(E, u, x, p=p, U=U[:, j], interval=m)`, one call per column of U; "
           "`lzv/lzm/lzms(E, u, xd, binning=\"strata\")`; `lzms(E, u, method=\"studc\")` (synthetic set)."),
        code(
            "E, u, x = SETS['synth']\n"
            "U = np.column_stack([u * sps.norm.ppf(0.75), 1.8 * u + 0.3 * x])\n"
            "g, ks = [], []\n"
            "for m in ('wilson', 'wilsoncc', 'clopper-pearson', 'agresti-coull', 'jeffreys'):\n"
            "    ds = [D.lcp(E, u, x, p=p, U=U[:, j], interval=m, cuts='errviewlib') for j, p in enumerate((0.5, 0.95))]\n"
            "    k = f'synth_LCP_{m}'\n"
            "    g += [ds[0].centers] + [np.r_[getattr(ds[0], a), getattr(ds[1], a)] for a in ('value', 'low', 'high')]\n"
            "    g += [[ds[0].overall[0], ds[1].overall[0]]]\n"
            "    ks += [f'{k}_mint', f'{k}_pc', f'{k}_pcl', f'{k}_pcu', f'{k}_meanP']\n"
            "exact('plotLCP', 'coverages, binomial limits, centres, whole-set coverage (5 methods, 2 columns of U)', g, ks)\n"
            "xd = np.round(x * 20) / 20\n"
            "g, ks = [], []\n"
            "for f, key, kw in ((D.lzv, 'ZV', dict(method='cho', min_count=100)), (D.lzm, 'ZM', dict(min_count=30)),\n"
            "                   (D.lzms, 'ZMS', dict(method='stud', min_count=100))):\n"
            "    d = f(E, u, xd, binning='strata', **kw)\n"
            "    g += [d.centers, d.counts, d.value, d.low, d.high]\n"
            "    ks += [f'synth_Strat{key}_{a}' for a in ('values', 'counts', 'pc', 'pcl', 'pcu')]\n"
            "exact('plotStratZV, plotStratZM, plotStratZMS', 'stratum means and counts, values, limits (21 strata)', g, ks)\n"
            "d = D.lzms(E, u, method='studc', cuts='errviewlib')\n"
            "exact('ZMSCI (studc)', 'limits, 8 bins of u', [d.low, d.high], 'synth_ZMSCIstudc_u')"
        ),
        md("## Confidence curves and calibration curves\n\n"
           "```r\nSconf(E[order(u, decreasing = TRUE)], 0:99, rmse, FALSE)   # also mue (normalised), rmsd, q95hd\n"
           "plotConfidence(E, u, stat = rmse, normalize = FALSE, oracle = TRUE, plot = FALSE)$AUCO\n"
           "plotCalibrationQ(E, list(quant = outer(u, qnorm(prob)), prob = prob), plot = FALSE)  # prob = 0.005 ... 0.995\n"
           "plotCalibration(E, u, dist = D, plot = FALSE)    # D = Normal, Normp4, T4, Uniform, Laplace\n"
           "plotCalibrationQ(..., cond = u or x)              # per-bin curves, read by trace()\n```\n"
           "mcref: `confidence_curve(E, u, stat=..., normalize=...)` (`.curve`, `.auco`), "
           "`calibration_curve(E, u, dist=...)`, `conditional_calibration_curves(E, u, x)`."),
        code(
            "g, ks, gq, kq = [], [], [], []\n"
            "for s, (E, u, x) in SETS.items():\n"
            "    for stat, tag in (('RMSE', 'rmse'), ('RMSD', 'rmsd'), ('Q95', 'q95')):\n"
            "        c = D.confidence_curve(E, u, stat=stat, n_mc=20, seed=0)\n"
            "        g += [c.curve, c.auco]; ks += [f'{s}_Sconf_{tag}', f'{s}_AUCO_{tag}']\n"
            "    g += [D.confidence_curve(E, u, stat='MAE', normalize=True, n_mc=20, seed=0).curve]\n"
            "    ks += [f'{s}_Sconf_mae_norm']\n"
            "    c = D.calibration_curve(E, u)\n"
            "    gq += [[c.miscalibration_area, c.miscalibration_area_up, c.calibration_error]]; kq += [f'{s}_calQ']\n"
            "    for dist, key in (('normal', 'Normal'), ('normp4', 'Normp4'), ('t4', 'T4'), ('uniform', 'Uniform'),\n"
            "                      ('laplace', 'Laplace')):\n"
            "        c = D.calibration_curve(E, u, dist=dist)\n"
            "        gq += [[c.miscalibration_area, c.miscalibration_area_up, c.calibration_error]]\n"
            "        kq += [f'{s}_calib_{key}']\n"
            "exact('plotCC, plotConfidence, Sconf', 'RMSE, RMSD, Q95, normalised MAE curves and AUCO (both sets)', g, ks)\n"
            "exact('plotCalibrationQ, plotCalibration', 'misCal, misCalUp, calErr (normal quantiles; five D)', gq, kq)\n"
            "g, ks = [], []\n"
            "for s, v in CASES:\n"
            "    E, u, x = SETS[s]\n"
            "    c = D.conditional_calibration_curves(E, u, u if v == 'u' else x, cuts='errviewlib')\n"
            "    r = REF[f'{s}_calQcond_{v}'].reshape(c.observed.shape[0], -1)   # R: one column per bin, with 0 and 1\n"
            "    g.append(np.column_stack([np.zeros(r.shape[0]), c.observed, np.ones(r.shape[0])]).ravel())\n"
            "    ks.append(f'{s}_calQcond_{v}')\n"
            "exact('plotCalibrationQ(cond = ...)', 'per-bin calibration curves, bins of u and x', g, ks)"
        ),
        md("## `plotLRR`: values\n\n"
           "```r\nplotLRR(E, 1.96 * u, ordX = X, plot = FALSE)    # $pc, $mint; X = u or x\n```\n"
           "mcref: `lrr(E, u, X, U=1.96 * u, cuts=\"errviewlib\")`: the ratio of the mean interval width "
           "2√⟨U²⟩ to the width of the empirical 95 % interval (Harrell–Davis quantiles) per bin."),
        code(
            "g, ks = [], []\n"
            "for s, v in CASES:\n"
            "    E, u, x = SETS[s]\n"
            "    d = D.lrr(E, u, u if v == 'u' else x, U=1.96 * u, cuts='errviewlib', n_boot=100, seed=0)\n"
            "    g += [d.value, d.centers]; ks += [f'{s}_LRR_{v}_pc', f'{s}_LRR_{v}_mint']\n"
            "exact('plotLRR', 'values and bin centres (U = 1.96 u), bins of u and x', g, ks)"
        ),
        md("## Monte Carlo quantities\n\n"
           "Bootstrap limits and simulated references differ from run to run in R and in mcref alike. "
           "R's runs (synthetic set unless said; `set.seed` per run):\n\n"
           "```r\nplotLZV(u, Z, method = \"bootstrap\", nBoot = 5000, plot = FALSE)      # 20 runs, nptest BCa\n"
           "plotLZISD(u, Z, method = \"bootstrap\", nBoot = 5000, plot = FALSE)    # 20 runs, boot BCa\n"
           "plotLRCE(u, u, E, nBoot = 5000, plot = FALSE)                        # 20 runs\n"
           "plotLZMS(u, Z, method = \"bootstrap\", nBoot = 5000, plot = FALSE)     # 20 runs\n"
           "ZMSCI(Z_bin, method = \"bspiv\")                                       # 20 runs, 8 bins of u\n"
           "plotLRR(E, 1.96 * u, ordX = X, plot = FALSE)                         # 10 runs, boot BCa, R = 1000\n"
           "plotCCVal(E, u, score = TRUE, nBoot = 5000, rep_probref = 1000, plot = FALSE)   # 10 runs\n"
           "plotConfidence(E, u, ..., probref = TRUE, dist_probref = D, rep_probref = 500)  # 10 runs; $DFPR, $UP95\n"
           "plotAGV(Z, nMC = 100); plotAGVZMS(Z_QM9, method = \"stud\", nMC = 200)   # 10 runs each\n"
           "calibScoresProbRef(1.3 * E_QM9, u_QM9, nBin = 20, nMC = 1000, quant = TRUE)  # one run\n```\n"
           "Known offsets (docs/errviewlib.md): `plotLZISD`'s replicates use `Hmisc::wtd.var(normwt = TRUE)`, "
           "which inflates each replicate's variance by ≈ 1 + 1/n, so R's limits sit above a plain bootstrap's; "
           "`plotLRR` uses boot's BCa convention (normal-scale interpolation of order statistics, "
           "regression acceleration), mcref nptest's (type-7 quantiles, jackknife acceleration): on the same "
           "replicates that moves the lower limits by about −0.3 to −0.4 of their Monte Carlo sd "
           "(`benchmarks/study_lrr_convention.py`); `plotCCVal` drops the point of largest u at k = 0 "
           "(k = 0 left out)."),
        code(
            "E, u, x = SETS['synth']\n"
            "t = time.perf_counter()\n"
            "d = D.lzv(E, u, method='bootstrap', n_boot=5000, seed=11, cuts='errviewlib')\n"
            "mc('plotLZV (bootstrap)', 'BCa limits, 8 bins of u', np.r_[d.low, d.high], 'synth_LZVboot_u', 20)\n"
            "d = D.lzisd(E, u, method='bootstrap', n_boot=5000, seed=12, cuts='errviewlib')\n"
            "mc('plotLZISD (bootstrap)', 'BCa limits, 8 bins of u (R: Hmisc weighting)', np.r_[d.low, d.high],\n"
            "   'synth_LZISDboot_u', 20)\n"
            "d = D.lrce(E, u, n_boot=5000, seed=13, cuts='errviewlib')\n"
            "mc('plotLRCE', 'values (fixed) and BCa limits, 8 bins of u', np.r_[d.value, d.low, d.high], 'synth_LRCE_u', 20)\n"
            "d = D.lzms(E, u, method='bca', n_boot=5000, seed=14, cuts='errviewlib')\n"
            "mc('plotLZMS (bootstrap)', 'BCa limits, 8 bins of u', np.r_[d.low, d.high], 'synth_LZMSboot_u', 20)\n"
            "d = D.lzms(E, u, n_bins=8, method='bspiv', n_boot=5000, seed=26, cuts='errviewlib')\n"
            "mc('ZMSCI (bspiv)', 'bootstrap-t limits, 8 bins of u', np.column_stack([d.low, d.high]),\n"
            "   'synth_ZMSCIbspiv_u', 20)\n"
            "LRR = {}\n"
            "for v in 'ux':\n"
            "    LRR[v] = D.lrr(E, u, u if v == 'u' else x, U=1.96 * u, cuts='errviewlib', n_boot=1000, seed=25)\n"
            "    mc('plotLRR (boot BCa)', f'BCa limits, 8 bins of {v} (BCa conventions differ)',\n"
            "       np.r_[LRR[v].low, LRR[v].high], f'synth_LRRboot_{v}', 10)\n"
            "print(f'{time.perf_counter() - t:.0f} s')"
        ),
        code(
            "t = time.perf_counter()\n"
            "c = D.cc_consistency(E, u, n_mc=1000, n_boot=5000, seed=15)\n"
            "print(f\"consistency score: mcref {c.score:.2f}; R's 10 runs {REF['synth_CCVal_mean'][0]:.3f} ± {REF['synth_CCVal_sd'][0]:.3f}\")\n"
            "mc('plotCCVal', 'consistency score (a fraction of 100 points)', [c.score], 'synth_CCVal', 10, sel=slice(0, 1))\n"
            "mc('plotCCVal', 'per-point BCa limits of the curve, k >= 1', np.r_[c.curve_low[1:], c.curve_high[1:]],\n"
            "   'synth_CCVal', 10, sel=np.r_[2:101, 102:201])\n"
            "for kw, key, seed in ((dict(dist='uniform', n_mc=500), 'CCuniform', 21), (dict(stat='RMSD', n_mc=500), 'CCrmsd', 22),\n"
            "                      (dict(stat='Q95', n_mc=100), 'CCq95', 23), (dict(dist='normp4', n_mc=500), 'CCNormp4', 24),\n"
            "                      (dict(dist='laplace', n_mc=500), 'CCLaplace', 24)):\n"
            "    c = D.confidence_curve(E, u, seed=seed, **kw)\n"
            "    mc('plotConfidence (probref)', f'DFPR, UP95: {kw}', [c.dfpr, c.dfpr_up95], f'synth_{key}', 10)\n"
            "g = D.adversarial_group_calibration(E, u, n_rep=100, seed=27)\n"
            "mc('plotAGV', 'worst-group curves and sds, data and normal control', np.r_[g.value, g.sd, g.control, g.control_sd],\n"
            "   'synth_AGV', 10)\n"
            "Eq, uq, _ = SETS['qm9']\n"
            "g = D.group_zms_validity(Eq, uq, n_rep=200, seed=28)\n"
            "mc('plotAGVZMS (stud)', 'fractions of valid groups, data and control (QM9_E)', np.r_[g.value, g.control],\n"
            "   'qm9_AGVZMS', 10)\n"
            "print(f'{time.perf_counter() - t:.0f} s')"
        ),
        md("`calibScoresProbRef`: R's reference sample has 1 + nMC rows, the first one the data's own score. "
           "Its mean is taken out before comparing with mcref's simulated reference (normal errors, 4000 draws):"),
        code(
            "nmc = 1000\n"
            "data, mean_incl, sd = REF['probref_data_Su'][0], REF['probref_mean_Su'][0], REF['probref_sd_Su'][0]\n"
            "mean_sim = ((nmc + 1) * mean_incl - data) / nmc\n"
            "exact('calibScoresProbRef', \"the data's ZMSE (E·1.3, QM9_E, 20 bins)\",\n"
            "      [D.calib_scores(1.3 * Eq, uq, cuts='errviewlib').zmse_u], 'probref_data_Su')\n"
            "r = mcref.simulated_reference('ZMSE', uq, n_mc=4000, seed=5)\n"
            "se = math.hypot(sd / math.sqrt(nmc), r.se)\n"
            "print(f\"R's reference mean {mean_incl:.6g} (with the data's row), {mean_sim:.6g} without it; \"\n"
            "      f'mcref {r.mean:.6g}: {(r.mean - mean_sim) / se:+.2f} combined se, {(r.mean - mean_incl) / se:+.2f} with the row')\n"
            "ROWS.append(dict(function='calibScoresProbRef', compared=\"reference mean of ZMSE, R's data row taken out\",\n"
            "                 n=1, measure='|d| / combined se', value=abs(r.mean - mean_sim) / se, mean_d=(r.mean - mean_sim) / se))"
        ),
        md("### `plotLRR`'s limits, bin by bin\n\n"
           "mcref's BCa limits (one run, seed 25) against the mean ± sd of R's 10 runs:"),
        code(
            "fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)\n"
            "for ax, v in zip(axes, 'ux'):\n"
            "    d, nb = LRR[v], LRR[v].value.size\n"
            "    mean, sd = REF[f'synth_LRRboot_{v}_mean'].reshape(2, nb), REF[f'synth_LRRboot_{v}_sd'].reshape(2, nb)\n"
            "    i = np.arange(nb)\n"
            "    ax.plot(i, d.value, 'ko', label='LRR (mcref = R)')\n"
            "    ax.vlines(i - 0.08, d.low, d.high, color='C0', lw=2, label='mcref BCa (one run)')\n"
            "    for j, lab in ((0, \"R's 10 runs: mean ± sd\"), (1, None)):\n"
            "        ax.errorbar(i + 0.08, mean[j], yerr=sd[j], fmt='_', color='C3', ms=10, capsize=3, label=lab)\n"
            "    ax.axhline(1, color='0.5', lw=0.8, ls='--')\n"
            "    ax.set_xlabel(f'bin of {v} (8 bins of 150 points)'); ax.set_title(f'plotLRR / lrr, synthetic set, bins of {v}')\n"
            "axes[0].set_ylabel('local range ratio'); axes[0].legend(fontsize=8)\n"
            "fig.tight_layout()"
        ),
        md("## Summary\n\n"
           "One row per comparison. `rel. d` / `abs. d`: largest difference over all compared values; "
           "`max |d|/σ`: largest deviation of one mcref run from the mean of R's runs, in units of the "
           "run-to-run sd (√(1 + 1/n_runs) included); `mean d`: its mean signed value. "
           "tests/test_parity.py asserts these (≤ ~1e-12 for deterministic values, |d| ≤ 4 or 4.5 for "
           "Monte Carlo ones)."),
        code(
            "tab = pd.DataFrame(ROWS)[['function', 'compared', 'n', 'measure', 'value', 'mean_d']]\n"
            "tab['value'] = [f'{v:.2g}' if m in ('rel. d', 'abs. d') else (f'{v:.2f}' if '|d|' in m else f'{v:.0f}')\n"
            "                for v, m in zip(tab['value'], tab['measure'])]\n"
            "tab['mean_d'] = tab['mean_d'].map(lambda v: '' if np.isnan(v) else f'{v:+.2f}')\n"
            "pd.set_option('display.max_colwidth', 120)\n"
            "print(f'notebook run time so far: {time.perf_counter() - T0:.0f} s')\n"
            "tab"
        ),
        md("Reading: every deterministic quantity agrees to rounding (relative differences of 1e-16 to "
           "1e-14; `testCovIntProb`'s p-value to 4e-12), and the cuts too once the half-integer positions, "
           "where R's own rounding decides, are set aside. The Monte Carlo quantities lie within a few "
           "run-to-run sds of R's mean. Over many values a mean d away from 0 is a bias: `plotLZISD`'s "
           "(R's Hmisc weighting) and `plotLRR`'s (the BCa convention, docs/errviewlib.md). In the rows "
           "of one or two values (the consistency score, DFPR and UP95) the mean d is one draw, not a bias."),
    ]
    return notebook(cells)


if __name__ == "__main__":
    main(build, "errviewlib_parity", __doc__)
