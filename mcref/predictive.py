r"""Predictive forms to a verdict in one call: ensembles or posterior draws, quantiles,
prediction intervals and fitted estimators (docs/methods.md, "Data and notation").

* :func:`from_samples` — M × m draws of each case's predictive distribution (deep ensemble,
  MC dropout, MCMC): E from the sample mean, u from the sample sd, randomized ranks (PIT) and
  their uniformity, coverage of the central rank intervals, ensemble CRPS, and
  :func:`mcref.validate` on (E, u);
* :func:`from_quantiles` — predicted quantiles at K levels: one-sided coverage per level,
  the central intervals of symmetric level pairs (coverage, interval score, local coverage
  along the interval width and along ``x``);
* :func:`from_intervals` — central prediction intervals [lo, hi] at one or more levels;
* :func:`from_estimator` — a fitted regressor with ``predict(X, return_std=True)``
  (scikit-learn's GaussianProcessRegressor, BayesianRidge, ARDRegression) or an
  NGBoost-style ``pred_dist(X)``: the Gaussian predictive N(mean, std²).

Every function returns a :class:`PredictiveCheck`, printable, with the verdict of each part.
Coverage counts are tested with exact binomial tests (``scipy.stats.binomtest``); the rank
(PIT) values with a χ² test on 20 bins and a Kolmogorov–Smirnov test.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import special
from scipy import stats as st

from . import diagnostics, scores
from ._skce import skce_test
from .verdict._ensemble import DEFAULT_N_SWAPS, MIN_N_SWAPS, ensemble_verdict
from .verdict._kernel_row import split_kernel_rows
from .verdict._validate import validate
from .core._checks import as_float_array, check_int, check_probability, check_seed
from .calibration import rank_calibration, uniformity
from .datasets import Dataset

__all__ = ["PredictiveCheck", "CoverageRow", "LocalCoverage", "from_samples", "from_quantiles", "from_intervals",
           "from_estimator", "DEFAULT_LEVELS", "MIN_SAMPLES"]

#: central coverage levels checked by default
DEFAULT_LEVELS = (0.5, 0.9, 0.95)
#: fewest draws per case that :func:`from_samples` accepts (a sample sd needs two)
MIN_SAMPLES = 2
#: fewest cases for the local coverage along the width and x (two bins of 30)
_MIN_LOCAL = 60


@dataclass(frozen=True)
class CoverageRow:
    """Coverage of one level: ``k`` of ``n`` cases inside (central interval) or below (quantile).

    ``p_value``: exact two-sided binomial test of ``k ~ Binomial(n, expected)``; ``low``,
    ``high``: Clopper–Pearson 95 % interval of ``k/n``; ``interval_score``: mean interval
    (Winkler) score of the central intervals (NaN for a one-sided quantile)."""

    kind: str  # "central" or "quantile"
    level: float
    expected: float
    n: int
    k: int
    observed: float
    p_value: float
    low: float
    high: float
    interval_score: float = float("nan")


@dataclass(frozen=True)
class LocalCoverage:
    """Local coverage probability of one level's central intervals per bin of the interval
    width (``along="width"``) or of ``x``: :func:`mcref.diagnostics.lcp`; ``n_off``: bins
    whose 95 % Wilson interval excludes the level."""

    level: float
    along: str
    diagnostic: Any = field(repr=False)
    n_off: int
    n_bins: int


@dataclass(frozen=True, eq=False)
class PredictiveCheck:
    """Calibration checks of one set of predictive distributions.

    Attributes
    ----------
    form : str
        ``"samples"``, ``"gaussian"`` (an estimator's mean and std), ``"quantiles"`` or
        ``"intervals"``.
    name : str
    M : int
        Number of cases.
    dataset : Dataset or None
        (E, u) of the Gaussian summary: E = y − mean (or − median / − interval midpoint) and
        u = sd (samples, estimator) or the Gaussian-equivalent sd of the widest central
        interval, half-width / Φ⁻¹((1 + p)/2) (quantiles, intervals: a u-proxy).
    coverage : tuple of CoverageRow
    pit : ndarray or None
        Randomized ranks (samples) or Φ(E/u) (Gaussian): U(0, 1) when calibrated.
    uniformity : mcref.Uniformity or None
        χ² test and simultaneous band of the PIT values.
    ks_pvalue : float
        Kolmogorov–Smirnov test of the PIT values against U(0, 1) (NaN without them).
    crps : float
        Mean CRPS: ensemble ("fair" estimator) or Gaussian closed form (NaN for quantiles
        and intervals).
    validation : mcref.ValidationTable or None
        :func:`mcref.validate` on ``dataset`` (samples and estimators, ``verdict=True``).
    local : tuple of LocalCoverage
    alpha : float
        Level of the tests.
    notes : tuple of str
    seed : int or None
        The seed of the randomized ranks and of the validation (samples, estimators; drawn from
        the OS when none was given): ``seed=check.seed`` repeats the check. None for quantiles
        and intervals, which draw nothing.
    combined : mcref.verdict._ensemble.EnsembleVerdict or None
        Samples only: the one combined verdict of size α against the exact swap null (y
        exchanged with a random one of its m + 1 values per row; docs/methods.md, "Exact null
        of an ensemble"), with every test's exact p-value; it is the headline :attr:`verdict`.
    skce : mcref.SKCETest or None
        Samples with ``skce=True``: :func:`mcref.skce_test` of y against the ensembles themselves
        (the members as the predictive laws; its consistency test, or the block test beyond
        20 000 rows), beside the verdict, not part of it (docs/methods.md, "Kernel calibration
        error (SKCE)").
    """

    form: str
    name: str
    M: int
    dataset: Dataset | None = field(repr=False)
    coverage: tuple[CoverageRow, ...]
    pit: np.ndarray | None = field(default=None, repr=False)
    uniformity: Any = field(default=None, repr=False)
    ks_pvalue: float = float("nan")
    crps: float = float("nan")
    validation: Any = field(default=None, repr=False)
    local: tuple[LocalCoverage, ...] = ()
    alpha: float = 0.05
    notes: tuple[str, ...] = ()
    seed: Any = None
    combined: Any = field(default=None, repr=False)
    skce: Any = field(default=None, repr=False)

    @property
    def coverage_verdict(self) -> str:
        """``"invalid"`` when a level's binomial p-value is below α/K (Bonferroni over the K
        rows), else ``"valid"``."""
        k = len(self.coverage)
        return "invalid" if k and min(r.p_value for r in self.coverage) < self.alpha / k else "valid"

    @property
    def pit_verdict(self) -> str | None:
        """``"invalid"`` when the χ² or the KS test of the PIT values rejects at α/2 each; None
        without PIT values."""
        if self.uniformity is None:
            return None
        p = min(self.uniformity.chi2_pvalue, self.ks_pvalue)
        return "invalid" if p < self.alpha / 2 else "valid"

    @property
    def part_pvalues(self) -> dict[str, float]:
        """Each part's own p-value, already adjusted within the part: coverage ``K·min p`` over
        its K rows (Bonferroni), PIT ``2·min(p_χ², p_KS)``, validation its joint p-value (the
        parts present only)."""
        out: dict[str, float] = {}
        if self.coverage:
            out["coverage"] = min(1.0, len(self.coverage) * min(r.p_value for r in self.coverage))
        if self.uniformity is not None:
            out["PIT"] = min(1.0, 2.0 * min(self.uniformity.chi2_pvalue, self.ks_pvalue))
        if self.validation is not None and self.validation.joint is not None:
            out["validate"] = float(self.validation.joint.p)
        return out

    @property
    def p(self) -> float:
        """p-value of the headline verdict. Samples with a swap null: the combined test's.
        Otherwise Bonferroni over the k parts present: ``min(1, k·min(part p))``, so that the
        headline keeps its size α whatever the dependence between the parts (docs/methods.md,
        "Predictive forms"); NaN with no part."""
        if self.combined is not None:
            return float(self.combined.p)
        parts = self.part_pvalues
        if not parts:
            return float("nan")
        return min(1.0, len(parts) * min(parts.values()))

    @property
    def verdict(self) -> str:
        """The headline verdict. Samples: the combined verdict (:attr:`combined`: one test of
        size α over the validation's statistics, the ranks, the coverage and the local coverage,
        exact under calibration). The other forms (and samples without a swap null):
        ``"invalid"`` when :attr:`p` ≤ α, Bonferroni over the parts present (coverage, PIT, the
        validation's joint verdict), so that its size is at most α; ``coverage_verdict``,
        ``pit_verdict`` and the validation keep their own verdicts, each at α."""
        if self.combined is not None:
            return self.combined.verdict
        p = self.p
        return "invalid" if math.isfinite(p) and p <= self.alpha else "valid"

    def __str__(self) -> str:
        head = f"{self.form} check{f' of {self.name}' if self.name else ''}: M={self.M}, verdict: {self.verdict}"
        if self.combined is None and len(self.part_pvalues) > 1:
            head += (f" (p = {self.p:.3g}: Bonferroni over {len(self.part_pvalues)} parts, "
                     + ", ".join(f"{k} {v:.3g}" for k, v in self.part_pvalues.items()) + ")")
        lines = [head]
        if self.combined is not None:
            lines += self.combined.lines()
            lines.append("the parts below, each at its own alpha against its usual reference (informational; "
                         "validate's references assume Z independent of u, false for a finite ensemble):")
        lines += [f"coverage (exact binomial tests, Bonferroni over {len(self.coverage)}): "
                       f"{self.coverage_verdict}"]
        lines.append(f"  {'kind':<9}{'level':>7}{'observed':>10}{'95% CI':>18}{'p':>10}{'int. score':>12}")
        for r in self.coverage:
            score = f"{r.interval_score:.4g}" if math.isfinite(r.interval_score) else "-"
            lines.append(f"  {r.kind:<9}{r.expected:>7.3g}{r.observed:>10.4f}{f'[{r.low:.3f}, {r.high:.3f}]':>18}"
                         f"{r.p_value:>10.3g}{score:>12}")
        if self.uniformity is not None:
            lines.append(f"PIT / ranks: chi2 p={self.uniformity.chi2_pvalue:.3g}, KS p={self.ks_pvalue:.3g}, "
                         f"in the 95% band: {'yes' if self.uniformity.inside else 'no'} -> {self.pit_verdict}")
        if math.isfinite(self.crps):
            lines.append(f"mean CRPS: {self.crps:.5g}")
        for loc in self.local:
            lines.append(f"local coverage {loc.level:g} along {loc.along}: {loc.n_off} of {loc.n_bins} bins off "
                         "(Wilson 95%)")
        if self.validation is not None:
            j = self.validation.joint
            rows = ", ".join(f"{r.name} {r.verdict}" for r in self.validation.rows)
            lines.append(f"validate (E, u): {rows}" + (f"; joint: {j.verdict} (p={j.p:.3g})" if j is not None else ""))
        if self.skce is not None:
            k = self.skce
            lines.append(f"SKCE of the ensembles ({k.method} test, beside the verdict, not part of it): "
                         f"{k.estimate:.4g}, p={k.pvalue:.3g} -> {'miscalibrated' if k.rejected else 'calibrated'}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def record(self) -> dict[str, Any]:
        """The check as plain data: its verdicts, tests, coverage and local-coverage rows, the
        validation of (E, u) as :meth:`mcref.ValidationTable.to_json` writes it (or None)."""
        import json
        from dataclasses import asdict

        return {
            "dataset": self.name, "seed": self.seed, "form": self.form, "M": self.M, "verdict": self.verdict,
            "p": self.p, "part_pvalues": self.part_pvalues,
            "coverage_verdict": self.coverage_verdict, "pit_verdict": self.pit_verdict, "alpha": self.alpha,
            "chi2_pvalue": None if self.uniformity is None else self.uniformity.chi2_pvalue,
            "ks_pvalue": self.ks_pvalue, "crps": self.crps, "coverage": [asdict(r) for r in self.coverage],
            "local": [{"level": c.level, "along": c.along, "n_off": c.n_off, "n_bins": c.n_bins} for c in self.local],
            "validation": None if self.validation is None else json.loads(self.validation.to_json()),
            "combined": None if self.combined is None else self.combined.record(),
            "skce": None if self.skce is None else {"estimate": self.skce.estimate, "pvalue": self.skce.pvalue,
                                                    "method": self.skce.method, "n_test": self.skce.n_test,
                                                    "rejected": self.skce.rejected},
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """:meth:`record` as valid JSON (NaN as null: :func:`mcref.report._render.json_text`)."""
        from .report._render import json_text

        return json_text(self.record())

    def to_csv(self) -> str:
        """CSV, one row per coverage row (level), led by the dataset, the seed, the form and the
        check's verdicts (``verdict``: the combined one for samples); the validation of (E, u) and
        the combined verdict's tests are in :meth:`to_json` (or ``validation.to_csv()``).
        ``interval_score`` is an empty cell where a row has none: the coverage rows of
        :func:`from_samples` test the central rank intervals, which have no end points to score."""
        from dataclasses import asdict

        from .report._render import csv_text

        head = {"dataset": self.name, "seed": self.seed, "form": self.form, "M": self.M, "verdict": self.verdict,
                "coverage_verdict": self.coverage_verdict}
        # no interval score (from_samples' rank intervals have no end points; a one-sided quantile): an
        # empty cell, as the JSON's null and the text's "-", not "nan"
        return csv_text([{**head, **asdict(r), **({} if math.isfinite(r.interval_score) else {"interval_score": None})}
                         for r in self.coverage])

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        import html

        return "<pre>" + html.escape(str(self)) + "</pre>"


# ------------------------------------------------------------------ checks
def _check_y(y: Any, name: str = "y") -> np.ndarray:
    return as_float_array(y, name)


def _check_levels(levels: Any, name: str = "levels") -> np.ndarray:
    lv = np.atleast_1d(np.asarray(levels, dtype=np.float64))
    if lv.ndim != 1 or lv.size == 0:
        raise ValueError(f"`{name}` must be a number or a 1-D list of numbers in (0, 1), got {levels!r}")
    bad = ~((lv > 0) & (lv < 1))
    if bad.any():
        raise ValueError(f"`{name}` must lie in (0, 1) (exclusive): got {lv[bad][0]!r} at position {int(np.argmax(bad))}")
    return lv


def _check_matrix(a: Any, name: str, m: int, k: int | None = None) -> np.ndarray:
    """``a`` as an (M, K) float array of finite values with M = ``m`` (and K = ``k``)."""
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be an array of real numbers ({exc})") from None
    if arr.ndim == 1 and k in (None, 1):
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != m or (k is not None and arr.shape[1] != k):
        want = f"({m}, {k})" if k is not None else f"({m}, m)"
        raise ValueError(f"`{name}` must have shape {want} (one row per case of `y`), got {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.unravel_index(int(np.argmax(bad)), arr.shape)
        raise ValueError(f"`{name}` must contain only finite values: {int(np.isnan(arr).sum())} NaN and "
                         f"{int(bad.sum() - np.isnan(arr).sum())} infinite, first at row {i}, column {j}")
    return arr


def _check_x(x: Any, m: int) -> np.ndarray | None:
    if x is None:
        return None
    x = as_float_array(x, "x")
    if x.size != m:
        raise ValueError(f"`x` must have one value per case of `y` ({m}), got {x.size}")
    return x


def _binom_row(kind: str, level: float, expected: float, k: int, n: int, score: float = float("nan")) -> CoverageRow:
    t = st.binomtest(int(k), int(n), float(expected))
    ci = t.proportion_ci(0.95, method="exact")
    return CoverageRow(kind, float(level), float(expected), int(n), int(k), k / n, float(t.pvalue),
                       float(ci.low), float(ci.high), float(score))


def _pit_parts(pit: np.ndarray, levels: np.ndarray) -> tuple[list[CoverageRow], Any, float]:
    """Coverage of the central PIT intervals (|c − ½| ≤ p/2) per level, the uniformity tests."""
    rows = [_binom_row("central", p, p, int(np.count_nonzero(np.abs(pit - 0.5) <= p / 2)), pit.size) for p in levels]
    return rows, uniformity(pit), float(st.kstest(pit, "uniform").pvalue)


def _local(E: np.ndarray, half: np.ndarray, x: np.ndarray | None, levels: np.ndarray,
           halves: np.ndarray | None = None) -> tuple[LocalCoverage, ...]:
    """LCP of each level's central intervals along the width (the u-proxy) and along x."""
    if E.size < _MIN_LOCAL:
        return ()
    out = []
    for j, p in enumerate(levels):
        U = half if halves is None else halves[:, j]
        if np.any(U <= 0):
            continue  # a zero-width interval: no width to bin on
        for along, xx in (("width", None), ("x", x)):
            if along == "x" and xx is None:
                continue
            d = diagnostics.lcp(E, U, xx, p=float(p), U=U)
            off = int(np.count_nonzero((d.low > p) | (d.high < p)))
            out.append(LocalCoverage(float(p), along, d, off, int(d.value.size)))
    return tuple(out)


def _validated(E, u, name, verdict, validate_options) -> Any:
    if not verdict:
        return None
    return validate(E, u, name=name, **validate_options)


# ------------------------------------------------------------------ forms
def from_samples(y, samples, *, x=None, levels: Sequence[float] = DEFAULT_LEVELS, verdict: bool = True,
                 seed=None, name: str = "", alpha: float = 0.05, n_swaps: int = DEFAULT_N_SWAPS,
                 skce: bool = False, **validate_options) -> PredictiveCheck:
    r"""Check M × m draws of each case's predictive distribution (ensemble, MC dropout, MCMC).

    E = y − x̄ (the sample mean) and u = s, the sample standard deviation with ``ddof=1``:
    the unbiased estimate of the predictive variance from m independent draws (``ddof=0``
    shrinks it by (m − 1)/m, 10 % in variance at m = 10).

    The headline verdict is one combined test of size α, exact for any m: under calibration y
    is exchangeable with the m draws of its row, so ``n_swaps`` sets that swap y with a
    random one of the row's m + 1 values, row by row, are draws of the data's own null. Every
    statistic of the check (validate's statistics of (E, u), the ranks' χ² and KS statistics,
    the coverage per level, the local coverage along the width and x) gets its exact Monte
    Carlo p-value from those sets, and their min-p is calibrated against the same sets by
    leave-one-out ranks (docs/methods.md, "Exact null of an ensemble").

    Parameters
    ----------
    y : array_like, shape (M,)
        Observed values.
    samples : array_like, shape (M, m)
        m ≥ 2 draws per case, finite.
    x : array_like, shape (M,), optional
        Input feature for the local coverage along x.
    levels : sequence of float, default: (0.5, 0.9, 0.95)
        Central coverage levels, in (0, 1).
    verdict : bool, default: True
        Also run :func:`mcref.validate` on (E, u) (the costly part; informational: its
        references assume Z = E/u independent of u, which a finite ensemble breaks).
    seed : None, int or SeedSequence
        Seed of the randomized ranks, of :func:`mcref.validate` and of the swaps (spawned
        children).
    name : str, optional
    alpha : float, default: 0.05
        Size of the combined verdict.
    n_swaps : int, default: 999
        Swapped sets of the combined verdict (≥ 19; 0: no combined verdict, the headline is
        then "invalid if any part says so", uncorrected). 999 cost 1 s at M = 1000, m = 20
        and 7 s at M = 10⁴, m = 100 (2-core VM).
    skce : bool, default: False
        Also test y against the ensembles by their kernel calibration error
        (:func:`mcref.skce_test` with ``samples``: the whole predictive law of the members, no
        Gaussian summary; its own seed, a child spawned after the others), reported in
        :attr:`PredictiveCheck.skce` beside the verdict, not in the combined verdict (its size
        there is not measured). O(n_mc·M²·m) at most: seconds at M = 1000, m = 20.
    **validate_options
        Options of :func:`mcref.validate` (``stats``, ``n_boot``, ``n_mc``, …); ``stats``,
        ``n_bins``, ``min_count``, ``shrink``, ``binning`` and ``log`` also choose the
        statistics of (E, u) in the combined verdict.

    Returns
    -------
    PredictiveCheck
        Coverage of the central rank intervals per level (exact for any m: under
        calibration y is exchangeable with the draws and the randomized rank
        c = (r + V)/(m + 1) is U(0, 1)), the ranks' uniformity (χ², KS), the mean ensemble
        CRPS (``"fair"``: unbiased for the distribution the draws come from), the local
        coverage of the Gaussian intervals ±q·u along u and x, the validation of (E, u) and
        the combined verdict (``combined``, the headline ``verdict``).

    Raises
    ------
    ValueError
        ``samples`` not (M, m), fewer than 2 draws per case, NaN or infinite draws (the first
        row and column named), a case whose draws are all equal (u = 0), ``levels`` outside
        (0, 1), ``n_swaps`` below 19 (and not 0).

    Notes
    -----
    The Gaussian summary (E, u) ignores the sampling noise of x̄ and s: for draws from a
    calibrated Gaussian, Z = E/u follows (1 + 1/m)^{1/2}·t_{m−1}, so E[Z²] =
    (1 + 1/m)(m − 1)/(m − 3) (1.41 at m = 10, 1.015 at m = 200), and a small s goes with a
    large \|Z\|: :func:`mcref.validate` tends to call a small ensemble invalid. The combined
    verdict recomputes the same statistics on the swapped sets, so this bias is in its
    reference. A note in the result gives the factor when it exceeds 1.02. Rows with m of
    their m + 1 values equal (a swap would leave zero spread) have no swap null: a note says
    so and the headline falls back to the uncorrected rule.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=2000); sd = rng.uniform(0.5, 2, 2000)
    >>> y = mu + sd * rng.normal(size=2000)
    >>> draws = mu[:, None] + sd[:, None] * rng.normal(size=(2000, 200))
    >>> res = from_samples(y, draws, verdict=False, seed=1, n_swaps=199)
    >>> res.coverage_verdict, res.pit_verdict, res.verdict, len(res.combined.tests)
    ('valid', 'valid', 'valid', 13)
    """
    y = _check_y(y)
    s = _check_matrix(samples, "samples", y.size)
    m = s.shape[1]
    if m < MIN_SAMPLES:
        raise ValueError(f"`samples` must hold at least {MIN_SAMPLES} draws per case (a standard deviation needs "
                         f"two), got {m}")
    levels = _check_levels(levels)
    alpha = check_probability(alpha, "alpha")
    x = _check_x(x, y.size)
    mean = s.mean(axis=1)
    u = s.std(axis=1, ddof=1)
    flat = u <= 0
    if flat.any():
        raise ValueError(f"`samples`: the draws of {int(flat.sum())} case(s) are all equal (u = 0), first at row "
                         f"{int(np.argmax(flat))}")
    E = y - mean
    n_swaps = 0 if n_swaps == 0 else check_int(n_swaps, "n_swaps", minimum=MIN_N_SWAPS)
    ss = check_seed(seed)
    s_rank, s_val, s_swap = ss.spawn(3)  # the first two as before the swaps existed
    pit = rank_calibration(y, s, seed=s_rank)
    rows, unif, ks = _pit_parts(pit, levels)
    crps = float(scores.crps_ensemble(y, s, estimator="fair").mean())
    notes = []
    factor = (1 + 1 / m) * (m - 1) / (m - 3) if m > 3 else math.inf
    if factor > 1.02:
        notes.append(f"m={m} draws per case: for a calibrated Gaussian E[Z²] = (1+1/m)(m-1)/(m-3) = {factor:.3g}, "
                     "not 1; validate's ZMS may call u too small (the rank test and the combined verdict are exact)")
    ds = Dataset(name or "samples", E, u, x, f"from_samples: E = y - mean of {m} draws, u = sd (ddof=1)")
    local = _local(E, u, x, levels, u[:, None] * special.ndtri(0.5 + levels / 2)[None, :])
    val = _validated(E, u, name, verdict, {"seed": s_val, **validate_options})
    combined = None
    if n_swaps:
        keys = ("stats", "n_bins", "min_count", "shrink", "binning", "log")
        opts = {k: validate_options[k] for k in keys if k in validate_options}
        if "stats" in opts:  # the SKCE row of validate is beside its joint verdict: not in the combined one either
            opts["stats"] = split_kernel_rows([opts["stats"]] if isinstance(opts["stats"], str) else opts["stats"])[0]
        try:
            combined = ensemble_verdict(y, s, E, u, pit, levels=levels, x=x, n_swaps=n_swaps, alpha=alpha,
                                        seed=s_swap, **opts)
        except ValueError as exc:
            if "zero spread" not in str(exc):
                raise
            notes.append(f"no combined verdict: {exc}; the verdict is Bonferroni over the parts")
    kernel = skce_test(y, samples=s, seed=ss.spawn(1)[0], alpha=alpha) if skce else None  # the 4th child
    return PredictiveCheck("samples", name, y.size, ds, tuple(rows), pit, unif, ks, crps, val, local, alpha,
                           tuple(notes), seed=ss.entropy, combined=combined, skce=kernel)


def from_intervals(y, lo, hi, level, *, x=None, name: str = "", alpha: float = 0.05) -> PredictiveCheck:
    r"""Check central prediction intervals [lo, hi] at one or more nominal levels.

    Parameters
    ----------
    y : array_like, shape (M,)
        Observed values.
    lo, hi : array_like, shape (M,) or (M, K)
        Interval bounds, lo ≤ hi, one column per level.
    level : float or sequence of K floats
        Nominal coverage of each column, in (0, 1).
    x : array_like, shape (M,), optional
        Input feature for the local coverage along x.
    name : str, optional
    alpha : float, default: 0.05

    Returns
    -------
    PredictiveCheck
        Per level: k of M inside, exact binomial test against the level, Clopper–Pearson
        interval, mean interval score (:func:`mcref.scores.interval_score`); the local
        coverage probability (:func:`mcref.diagnostics.lcp`) per bin of the interval width
        (the u-proxy) and of ``x``. ``dataset``: E = y − midpoint and u = half-width /
        Φ⁻¹((1 + p)/2) of the widest level.

    Raises
    ------
    ValueError
        Mismatched shapes, NaN bounds, lo > hi (first row named), levels outside (0, 1).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sd = rng.uniform(0.5, 2, 3000); y = sd * rng.normal(size=3000)
    >>> res = from_intervals(y, -1.96 * sd, 1.96 * sd, 0.95)
    >>> res.coverage_verdict, round(res.coverage[0].observed, 2)
    ('valid', 0.95)
    """
    y = _check_y(y)
    levels = _check_levels(level, "level")
    k = levels.size
    lo = _check_matrix(lo, "lo", y.size, k)
    hi = _check_matrix(hi, "hi", y.size, k)
    return _intervals_check("intervals", y, lo, hi, levels, [], _check_x(x, y.size), name,
                            check_probability(alpha, "alpha"))


def _intervals_check(form, y, lo, hi, levels, extra_rows, x, name, alpha, notes=()) -> PredictiveCheck:
    bad = lo > hi
    if bad.any():
        i, j = np.unravel_index(int(np.argmax(bad)), bad.shape)
        raise ValueError(f"`lo` must not exceed `hi`: {int(bad.sum())} case(s), first at row {i}, level "
                         f"{levels[j]:g}")
    rows = list(extra_rows)
    for j, p in enumerate(levels):
        inside = int(np.count_nonzero((lo[:, j] <= y) & (y <= hi[:, j])))
        score = float(scores.interval_score(y, lo[:, j], hi[:, j], 1 - p).mean())
        rows.append(_binom_row("central", p, p, inside, y.size, score))
    widest = int(np.argmax(levels))
    mid = 0.5 * (lo[:, widest] + hi[:, widest])
    halves = 0.5 * (hi - lo)
    E = y - mid
    u = halves[:, widest] / float(special.ndtri(0.5 + levels[widest] / 2))
    ds = None
    if np.all(u > 0):
        ds = Dataset(name or form, E, u, x, f"from_{form}: E = y - midpoint, u = half-width / z of level "
                                            f"{levels[widest]:g}")
    else:
        notes = (*notes, "some intervals have zero width: no (E, u) summary and no local coverage along the width")
    local: tuple[LocalCoverage, ...] = ()
    for j, p in enumerate(levels):
        if np.all(halves[:, j] > 0):
            local += _local(y - 0.5 * (lo[:, j] + hi[:, j]), halves[:, j], x, levels[j:j + 1])
    return PredictiveCheck(form, name, y.size, ds, tuple(rows), None, None, float("nan"), float("nan"), None,
                           local, alpha, tuple(notes))


def from_quantiles(y, quantiles, levels, *, x=None, name: str = "", alpha: float = 0.05) -> PredictiveCheck:
    r"""Check predicted quantiles q_τ at K levels τ (quantile regression, conformal methods).

    Parameters
    ----------
    y : array_like, shape (M,)
        Observed values.
    quantiles : array_like, shape (M, K)
        Predicted quantiles, one column per level, non-decreasing along each row.
    levels : sequence of K floats
        The levels τ, strictly increasing, in (0, 1).
    x, name, alpha
        As :func:`from_intervals`.

    Returns
    -------
    PredictiveCheck
        One row per level (``kind="quantile"``: the fraction of y ≤ q_τ, exact binomial
        test against τ), then one per symmetric pair (τ, 1 − τ), τ < ½ (``kind="central"``:
        coverage of [q_τ, q_{1−τ}] against 1 − 2τ, interval score, local coverage along the
        width and ``x``), as :func:`from_intervals`.

    Raises
    ------
    ValueError
        Mismatched shapes, NaN quantiles, levels outside (0, 1) or not increasing, a row
        whose quantiles decrease (crossing quantiles; the first row and levels named).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sd = rng.uniform(0.5, 2, 3000); y = sd * rng.normal(size=3000)
    >>> tau = [0.05, 0.5, 0.95]
    >>> q = sd[:, None] * np.array([-1.6449, 0.0, 1.6449])
    >>> res = from_quantiles(y, q, tau)
    >>> [r.kind for r in res.coverage], res.coverage_verdict
    (['quantile', 'quantile', 'quantile', 'central'], 'valid')
    """
    y = _check_y(y)
    tau = _check_levels(levels)
    if tau.size > 1 and np.any(np.diff(tau) <= 0):
        raise ValueError(f"`levels` must be strictly increasing, got {tau.tolist()}")
    q = _check_matrix(quantiles, "quantiles", y.size, tau.size)
    x = _check_x(x, y.size)
    alpha = check_probability(alpha, "alpha")
    dec = np.diff(q, axis=1) < 0
    if dec.any():
        i, j = np.unravel_index(int(np.argmax(dec)), dec.shape)
        raise ValueError(f"`quantiles` must be non-decreasing along each row (levels increase): {int(dec.any(1).sum())} "
                         f"row(s) cross, first at row {i}, between levels {tau[j]:g} and {tau[j + 1]:g}")
    rows = [_binom_row("quantile", t, t, int(np.count_nonzero(y <= q[:, j])), y.size) for j, t in enumerate(tau)]
    pairs = [(j, int(np.flatnonzero(np.isclose(tau, 1 - t))[0])) for j, t in enumerate(tau)
             if t < 0.5 and np.any(np.isclose(tau, 1 - t))][::-1]  # central levels increasing
    notes = []
    if not pairs:
        notes.append("no symmetric level pair (tau, 1 - tau): no central interval checked")
        return PredictiveCheck("quantiles", name, y.size, None, tuple(rows), alpha=alpha, notes=tuple(notes))
    lo = q[:, [a for a, _ in pairs]]
    hi = q[:, [b for _, b in pairs]]
    central = np.array([1 - 2 * tau[a] for a, _ in pairs])
    return _intervals_check("quantiles", y, lo, hi, central, rows, x, name, alpha, tuple(notes))


def from_estimator(model, X, y, *, x=None, levels: Sequence[float] = DEFAULT_LEVELS, verdict: bool = True,
                   seed=None, name: str = "", alpha: float = 0.05, **validate_options) -> PredictiveCheck:
    r"""Check a fitted regressor's Gaussian predictive distributions N(mean, std²) on (X, y).

    The mean and std come from ``model.predict(X, return_std=True)`` (scikit-learn's
    GaussianProcessRegressor, BayesianRidge, ARDRegression, or :class:`mcref.sklearn.RecalibratedRegressor`)
    or, duck-typed, from an NGBoost-style ``model.pred_dist(X)`` whose result has
    ``.params["loc"]``/``.params["scale"]`` or ``.loc``/``.scale``.

    Parameters
    ----------
    model : fitted estimator
    X : array_like, shape (M, n_features)
    y : array_like, shape (M,)
    x : array_like, shape (M,), optional
        Input feature for the local coverage along x.
    levels, verdict, seed, name, alpha, **validate_options
        As :func:`from_samples`.

    Returns
    -------
    PredictiveCheck
        ``form="gaussian"``: E = y − mean, u = std; PIT = Φ(E/u) and its uniformity; coverage
        of the intervals mean ± Φ⁻¹((1 + p)/2)·std; mean CRPS (closed form,
        :func:`mcref.scores.crps_normal`); local coverage along u and x; the validation of (E, u).

    Raises
    ------
    ValueError
        An estimator with neither ``predict(X, return_std=True)`` nor ``pred_dist``, a std
        that is not positive and finite, mismatched lengths.

    Examples
    --------
    >>> from sklearn.linear_model import BayesianRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)); y = X @ [1.0, -2.0, 0.5] + rng.normal(size=2000)
    >>> model = BayesianRidge().fit(X[:1000], y[:1000])
    >>> res = from_estimator(model, X[1000:], y[1000:], verdict=False)
    >>> res.coverage_verdict
    'valid'
    """
    y = _check_y(y)
    mean, std = predict_mean_std(model, X)
    if mean.shape != y.shape:
        raise ValueError(f"the model predicts {mean.size} values for `X`, but `y` has {y.size}")
    bad = ~(np.isfinite(std) & (std > 0))
    if bad.any():
        raise ValueError(f"the predicted std must be finite and > 0: {int(bad.sum())} value(s) are not, first at "
                         f"row {int(np.argmax(bad))}")
    levels = _check_levels(levels)
    x = _check_x(x, y.size)
    E = y - mean
    ss = check_seed(seed)
    pit = special.ndtr(E / std)
    rows, unif, ks = _pit_parts(pit, levels)
    crps = float(scores.crps_normal(y, mean, std).mean())
    ds = Dataset(name or type(model).__name__, E, std, x, f"from_estimator: {type(model).__name__}")
    local = _local(E, std, x, levels, std[:, None] * special.ndtri(0.5 + levels / 2)[None, :])
    val = _validated(E, std, name or type(model).__name__, verdict, {"seed": ss, **validate_options})
    return PredictiveCheck("gaussian", name or type(model).__name__, y.size, ds, tuple(rows), pit, unif, ks, crps,
                           val, local, check_probability(alpha, "alpha"), seed=ss.entropy)


def predict_mean_std(model, X) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std) of a fitted model's Gaussian predictions: ``predict(X, return_std=True)``, or
    NGBoost's ``pred_dist(X)`` (``.params['loc'/'scale']`` or ``.loc``/``.scale``)."""
    if hasattr(model, "pred_dist"):
        dist = model.pred_dist(X)
        params = getattr(dist, "params", None)
        if isinstance(params, dict) and "scale" in params:
            loc, scale = params.get("loc"), params["scale"]
        else:
            loc, scale = getattr(dist, "loc", None), getattr(dist, "scale", None)
        if scale is None:
            raise ValueError(f"`model`: {type(model).__name__}.pred_dist(X) gives no scale (.params['scale'] or "
                             ".scale)")
        if loc is None:
            loc = model.predict(X)
        return (as_float_array(np.ravel(loc), "predicted mean"), as_float_array(np.ravel(scale), "predicted std"))
    if not hasattr(model, "predict"):
        raise ValueError(f"`model` must be a fitted regressor with predict(X, return_std=True) or pred_dist(X); got "
                         f"{type(model).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # e.g. a GP's "predicted variances smaller than 0"
            out = model.predict(X, return_std=True)
    except TypeError:
        out = None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(f"`model`: {type(model).__name__} has no predict(X, return_std=True) (nor pred_dist): it "
                         "gives no uncertainty. Estimators with one: GaussianProcessRegressor, BayesianRidge, "
                         "ARDRegression, NGBoost, mcref.sklearn.RecalibratedRegressor")
    return as_float_array(np.ravel(out[0]), "predicted mean"), as_float_array(np.ravel(out[1]), "predicted std")
