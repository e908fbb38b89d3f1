r"""The two-sample verdict: every statistic of two sets judged against its values on permutations
of the pooled sample, with one joint verdict over the same permutations (docs/methods.md,
"Two-sample statistics and their permutation null").

Under "one law" the pooled rows z_1, …, z_{n+m} are exchangeable, so every relabelling of them
into n X-rows and m Y-rows is as likely as the observed one: the permuted statistics are draws
of the exact null at these n and m. The permutations are drawn in fixed batches of
``PERM_BATCH`` labellings, batch k from child k of ``SeedSequence(seed)`` (seeds per batch, not
per thread), and the same labellings serve every statistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..core._checks import check_int, check_probability, check_seed
from ..report._render import csv_text, json_text, p_text, text_table
from ..verdict._joint import joint_tests
from ..verdict._sequential import SequentialTest
from ..kernels import pairs as kp
from ..kernels.rng import seed_state
from . import _two_sample as ts

__all__ = ["two_sample", "TwoSampleTable", "TwoSampleRow", "TwoSampleJoint", "STATISTICS", "DEFAULT_STATS",
           "ALTERNATIVES"]

#: every statistic of :func:`two_sample`, and the defaults (C2ST refits a classifier per permutation: opt-in)
STATISTICS = ("MMD", "energy", "FD", "precision", "recall", "density", "coverage", "C2ST")
DEFAULT_STATS = ("MMD", "energy", "FD", "precision", "recall", "density", "coverage")
PRDC = ("precision", "recall", "density", "coverage")
#: the direction "different": large distances and accuracy, small fractions, density either way
ALTERNATIVES = {"MMD": "greater", "energy": "greater", "FD": "greater", "C2ST": "greater",
                "precision": "less", "recall": "less", "coverage": "less", "density": "two-sided"}
#: statistics with a bootstrap interval. Not the k-NN fractions: a resample's repeated rows are at
#: distance 0 from each other, which shrinks the k-NN radii (measured: precision 0.998 with a
#: percentile interval [0.961, 0.995], n = m = 1000, d = 2, one law); nor the energy distance, whose
#: within-set means the same zero distances pull down (0.00073 with [0.00106, 0.00499], the same
#: sets): both bootstraps are biased
INTERVALS = ("MMD", "FD")
#: labellings per seeded batch; the sequential checks fall after batches 1, 2, 4, 9 (111, 222, 444, 999)
PERM_BATCH = 111
CHECKS = (1, 2, 4)
DEFAULT_N_PERM = 999
DEFAULT_N_BOOT = 200
#: bootstrap resamples drawn and evaluated at a time
BOOT_CHUNK = 16
DEFAULT_N_PERM_C2ST = 99
#: above this many pooled rows the default MMD is the linear-time statistic and the default
#: statistics are MMD and FD: the exact quadratic test of 999 permutations took 26-33 s at
#: n + m = 2·10⁴ on the 2-core VM and grows as (n + m)² (so does the energy distance), and the
#: k-NN statistics' neighbour lists took 328 s at n = m = 10⁵ (docs/methods.md)
QUADRATIC_MAX = 30_000
LARGE_STATS = ("MMD", "FD")
#: scipy.stats.permutation_test's tie tolerance: values within 100·eps·|T| of T count as ties
TIE_EPS = 100.0 * np.finfo(np.float64).eps


@dataclass(frozen=True)
class TwoSampleRow:
    """One statistic of :func:`two_sample`.

    Attributes
    ----------
    name : str
    estimate : float
        The statistic of (X, Y).
    reference, reference_se : float
        Mean and standard error of its permuted values: its value under one law at these n, m.
    p, p_se : float
        The exact Monte Carlo p-value (1 + #{T_k at least as extreme})/(1 + B) and its standard
        error; ``alternative`` says which side is extreme.
    low, high : float
        The bootstrap percentile interval (NaN where the statistic has none).
    alternative : str
    n_perm : int
        B, the permutations that decided the p-value.
    finding : str
        The row's finding in plain words.
    permuted : ndarray
        All permuted values computed (the reference's sample).
    """

    name: str
    estimate: float
    reference: float
    reference_se: float
    p: float
    p_se: float
    low: float
    high: float
    alternative: str
    n_perm: int
    finding: str
    permuted: np.ndarray = field(repr=False)

    def flat(self) -> dict[str, Any]:
        return {"statistic": self.name, "estimate": self.estimate, "reference": self.reference,
                "reference_se": self.reference_se, "p": self.p, "p_se": self.p_se, "low": self.low,
                "high": self.high, "alternative": self.alternative, "n_perm": self.n_perm, "finding": self.finding}


@dataclass(frozen=True)
class TwoSampleJoint:
    """The joint verdict of :func:`two_sample`: min-p over the same permutations, leave-one-out
    ranks (:func:`mcref.verdict._joint.joint_tests`).

    Attributes
    ----------
    p : float
    verdict : {"different", "indistinguishable"}
        "different" when p ≤ α.
    stats : tuple of str
        The statistics it combines.
    n_perm : int
    alpha : float
    """

    p: float
    verdict: str
    stats: tuple[str, ...]
    n_perm: int
    alpha: float


@dataclass(frozen=True)
class TwoSampleTable:
    """Result of :func:`two_sample`: ``table["MMD"]`` a :class:`TwoSampleRow`, ``table.joint`` the
    joint verdict; ``str(table)`` a text table, :meth:`to_frame`, :meth:`to_json`, :meth:`to_csv`.

    Attributes
    ----------
    rows : dict of str to TwoSampleRow
    joint : TwoSampleJoint
    n, m, d : int
    alpha : float
    length_scale : float or None
        ℓ of the MMD kernel.
    kernel : str
    seed : int or None
        The entropy of the SeedSequence used (to reproduce the call).
    confidence_level : float
    n_boot : int
    """

    rows: dict[str, TwoSampleRow]
    joint: TwoSampleJoint
    n: int
    m: int
    d: int
    alpha: float
    length_scale: float | None
    kernel: str
    seed: Any
    confidence_level: float
    n_boot: int

    def __getitem__(self, name: str) -> TwoSampleRow:
        if name not in self.rows:
            raise KeyError(f"no statistic {name!r} in this table; it holds {', '.join(self.rows)}")
        return self.rows[name]

    def __iter__(self):
        return iter(self.rows.values())

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [r.flat() for r in self.rows.values()]

    def to_frame(self):
        """The rows as a pandas DataFrame indexed by statistic."""
        import pandas as pd
        return pd.DataFrame(self.records()).set_index("statistic")

    def to_json(self) -> str:
        return json_text({"n": self.n, "m": self.m, "d": self.d, "alpha": self.alpha, "kernel": self.kernel,
                          "length_scale": self.length_scale, "seed": self.seed, "n_boot": self.n_boot,
                          "confidence_level": self.confidence_level,
                          "joint": {"p": self.joint.p, "verdict": self.joint.verdict, "stats": list(self.joint.stats),
                                    "n_perm": self.joint.n_perm},
                          "rows": self.records()})

    def to_csv(self) -> str:
        return csv_text(self.records())

    def __str__(self) -> str:
        j = self.joint
        head = ["statistic", "estimate", "reference (one law)", "p", f"{self.confidence_level:.0%} interval", "finding"]
        body = []
        for r in self.rows.values():
            ref = f"{r.reference:.4g} ± {r.reference_se:.2g}"
            iv = "-" if math.isnan(r.low) else f"[{r.low:.4g}, {r.high:.4g}]"
            body.append([r.name, f"{r.estimate:.4g}", ref, p_text(r.p, r.n_perm), iv, r.finding])
        lines = [f"Two sets, one law? X: n = {self.n}, Y: m = {self.m}, d = {self.d}",
                 f"Joint verdict: {j.verdict} (p = {p_text(j.p, j.n_perm)}, min-p over {', '.join(j.stats)}, "
                 f"{j.n_perm} permutations, α = {self.alpha:g})", ""]
        lines += text_table(head, body)
        notes = ["reference: mean ± se of the statistic over permutations of the pooled sample (its value under one "
                 "law at these n, m); p: exact permutation p-value"]
        if self.length_scale is not None:
            notes.append(f"MMD: {self.kernel} kernel, ℓ = {self.length_scale:.4g}")
        return "\n".join(lines + [""] + notes)


# --------------------------------------------------------------------------- checks


def _check_stats(stats: Any) -> tuple[str, ...]:
    names = [stats] if isinstance(stats, str) else list(stats)
    lower = {s.lower(): s for s in STATISTICS}
    out = []
    for s in names:
        key = lower.get(str(s).lower()) if isinstance(s, str) else None
        if key is None:
            raise ValueError(f"`stats` must name statistics among {', '.join(STATISTICS)}; got {s!r}")
        if key not in out:
            out.append(key)
    if not out:
        raise ValueError("`stats` must name at least one statistic")
    return tuple(out)


# --------------------------------------------------------------------------- the permuted statistics


class _Evaluator:
    """The statistics of a batch of labellings (rows: True = X-set) of the pooled sample Z."""

    def __init__(self, Z, n, m, stats, kernel, ell, estimator, k, c2st_state):
        self.Z, self.n, self.m, self.stats = Z, n, m, stats
        self.family, self.c = (ts.KERNELS[kernel], 0.0) if ell is None else ts.family_of(kernel, ell)
        self.estimator, self.k, self.c2st_state = estimator, k, c2st_state

    def __call__(self, labels: np.ndarray, with_c2st: bool) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        n, m = self.n, self.m
        if "MMD" in self.stats and self.estimator == "linear":
            out["MMD"] = np.empty(labels.shape[0])
            kp.linear_mmd(self.family, self.c, self.Z, labels.view(np.uint8), out["MMD"])
        elif "MMD" in self.stats:
            sums = ts.kernel_values(self.Z, labels, self.family, self.c, n)
            out["MMD"] = ts.mmd_from_sums(sums, n, m, self.estimator, 1.0)
        if "energy" in self.stats:
            sums = ts.kernel_values(self.Z, labels, kp.DISTANCE, 0.0, n)
            out["energy"] = ts.energy_from_sums(sums, n, m, "V")
        if "FD" in self.stats:
            out["FD"] = ts.frechet_values(self.Z, labels.astype(np.float64))
        if any(s in self.stats for s in PRDC):
            from ._knn import prdc_permuted
            vals = prdc_permuted(self.Z, labels, k=self.k)
            for s in PRDC:
                if s in self.stats:
                    out[s] = np.asarray(vals[s], dtype=np.float64)
        if "C2ST" in self.stats and with_c2st:
            out["C2ST"] = np.array([ts.c2st_value(self.Z[lab], self.Z[~lab], None, 5, self.c2st_state)
                                    for lab in labels])
        return out


def _batch_labels(ss: np.random.SeedSequence, k0: int, k1: int, n: int, m: int, n_perm: int) -> np.ndarray:
    """The labellings of batches k0 … k1 − 1 (True = X-set): batch k holds labellings
    k·PERM_BATCH … (k + 1)·PERM_BATCH − 1 (at most ``n_perm`` in all), drawn from one xoshiro
    stream seeded by child k of ``ss`` (:func:`mcref.kernels.pairs.permuted_labels`)."""
    states = np.stack([seed_state(np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (k,)))
                       for k in range(k0, k1)])
    B = min(n_perm, k1 * PERM_BATCH) - k0 * PERM_BATCH
    out = np.empty((B, n + m), dtype=np.uint8)
    kp.permuted_labels(states, n, n + m, PERM_BATCH, out)
    return out.view(bool)


def _counts(t: float, T: np.ndarray) -> tuple[int, int]:
    """(#{T_k ≥ t}, #{T_k ≤ t}) with scipy's tie tolerance 100·eps·|t|."""
    gamma = TIE_EPS * abs(t)
    return int(np.count_nonzero(T >= t - gamma)), int(np.count_nonzero(T <= t + gamma))


def _rounds(n_perm: int, sequential: bool) -> list[int]:
    """The batch counts after which the tests are checked (the last: all batches)."""
    n_batches = -(-n_perm // PERM_BATCH)
    return sorted({b for b in CHECKS if b < n_batches} | {n_batches}) if sequential else [n_batches]


def _permute(evaluate: _Evaluator, ss, n: int, m: int, stats: Sequence[str], joint_stats: Sequence[str],
             n_perm: int, n_perm_c2st: int, sequential: bool, alpha: float):
    """Rounds of permuted statistics until every test and the joint test are decided (or the
    budget is spent): (observed, permuted values, per-statistic tests, joint test)."""
    tests = {s: SequentialTest(ALTERNATIVES[s], alpha, min(n_perm, n_perm_c2st) if s == "C2ST" else n_perm)
             for s in stats}
    joint = SequentialTest("greater", alpha, n_perm)
    observed: dict[str, float] = {}
    values: dict[str, list[np.ndarray]] = {s: [] for s in stats}
    done = 0  # batches evaluated
    drawn = 0  # labellings evaluated
    for upto in _rounds(n_perm, sequential):
        labels = _batch_labels(ss, done, upto, n, m, n_perm)
        first = not observed
        if first:
            ident = np.zeros((1, n + m), dtype=bool)
            ident[0, :n] = True
            labels = np.concatenate([ident, labels])
        c2st_rows = max(0, min(labels.shape[0], n_perm_c2st + (1 if first else 0) - drawn))
        vals = evaluate(labels, False)
        if "C2ST" in stats and c2st_rows:
            vals["C2ST"] = evaluate(labels[:c2st_rows], True)["C2ST"]
        for s in stats:
            v = vals[s]
            if first:
                observed[s] = float(v[0])
                v = v[1:]
            values[s].append(v)
        drawn += labels.shape[0] - (1 if first else 0)
        done = upto
        for s in stats:
            T = np.concatenate(values[s])
            if T.size:
                tests[s].observe(*_counts(observed[s], T), T.size)
        if joint_stats:
            B = drawn
            samples = np.stack([np.concatenate(values[s]) for s in joint_stats])
            jp = joint_tests(samples, [observed[s] for s in joint_stats], [ALTERNATIVES[s] for s in joint_stats],
                             combines=("minp",))["minp"].p
            count = max(0, int(round(jp * (1 + B) - 1)))
            joint.observe(count, B, B)
        if all(t.decided for t in tests.values()) and (joint.decided or not joint_stats):
            break
    return observed, {s: np.concatenate(values[s]) for s in stats}, tests, joint


def _bootstrap(X, Y, stats, evaluate: _Evaluator, n_boot: int, level: float, ss) -> dict[str, tuple[float, float]]:
    """Percentile intervals at ``level`` from ``n_boot`` resamples of X and of Y (each with
    replacement, separately), as multiplicities of the pooled rows; drawn and evaluated
    ``BOOT_CHUNK`` resamples at a time from one stream (the memory stays O(BOOT_CHUNK·(n + m)))."""
    want = [s for s in stats if s in INTERVALS]
    if not want or n_boot == 0:
        return {}
    n, m = X.shape[0], Y.shape[0]
    rng = np.random.default_rng(ss)
    Z = evaluate.Z
    boot: dict[str, list[np.ndarray]] = {s: [] for s in want}
    for b0 in range(0, n_boot, BOOT_CHUNK):
        size = min(BOOT_CHUNK, n_boot - b0)
        ix = rng.integers(0, n, size=(size, n))
        iy = rng.integers(0, m, size=(size, m))
        CX = np.zeros((size, n + m))
        CY = np.zeros((size, n + m))
        for b in range(size):
            CX[b, :n] = np.bincount(ix[b], minlength=n)
            CY[b, n:] = np.bincount(iy[b], minlength=m)
        if "MMD" in want and evaluate.estimator == "linear":  # O(n) a resample: the statistic of the resampled sets
            boot["MMD"].append(np.array([ts.mmd_linear(X[ix[b]], Y[iy[b]], evaluate.family, evaluate.c)
                                         for b in range(size)]))
        elif "MMD" in want:
            sums = ts.kernel_boot_values(Z, CX, CY, evaluate.family, evaluate.c, 1.0)
            boot["MMD"].append(ts.mmd_from_sums(sums, n, m, evaluate.estimator, 1.0))
        if "energy" in want:
            sums = ts.kernel_boot_values(Z, CX, CY, kp.DISTANCE, 0.0, 0.0)
            boot["energy"].append(ts.energy_from_sums(sums, n, m, "V"))
        if "FD" in want:
            boot["FD"].append(ts.frechet_values(Z, CX, CY))
    q = [(1.0 - level) / 2.0, (1.0 + level) / 2.0]
    return {s: tuple(float(v) for v in np.quantile(np.concatenate(b), q)) for s, b in boot.items()}


#: what a significant row says, by statistic (and by side for density)
_FINDINGS = {
    "MMD": "the laws differ (MMD² above its one-law reference)",
    "energy": "the laws differ (energy distance above its one-law reference)",
    "FD": "the fitted Gaussians differ (mean or covariance)",
    "C2ST": "a classifier tells the sets apart",
    "precision": "Y puts mass outside X's support (low precision)",
    "recall": "Y misses part of X's law: modes or tails (low recall)",
    "coverage": "Y misses modes of X (low coverage)",
}


def _finding(name: str, estimate: float, reference: float, p: float, alpha: float) -> str:
    if not p <= alpha:
        return "indistinguishable from one law at these sizes"
    if name == "density":
        if estimate > reference:
            return "Y is over-concentrated near X's points (density above its reference)"
        return "Y lies in X's sparser regions (density below its reference)"
    return _FINDINGS[name]


def two_sample(X: Any, Y: Any, *, stats: Sequence[str] | None = None, alpha: float = 0.05,
               n_perm: int | None = None, sequential: bool = True, seed: Any = None, n_boot: int | None = None,
               confidence_level: float = 0.95, kernel: str = "gaussian", length_scale: Any = None,
               estimator: str | None = None, k: int = 5, n_perm_c2st: int = DEFAULT_N_PERM_C2ST) -> TwoSampleTable:
    r"""Two sample sets, one law or two? Each statistic against its permutation null, and one
    joint verdict.

    For each statistic T of ``stats`` (``"MMD"``, ``"energy"``, ``"FD"``, ``"precision"``,
    ``"recall"``, ``"density"``, ``"coverage"``, ``"C2ST"``): the estimate T(X, Y); its reference,
    mean ± se of T over relabellings of the pooled sample (the exact null "one law" at these n,
    m); the Monte Carlo p-value

    .. math::

        p = \frac{1 + \#\{k \le B: T_k \text{ at least as extreme as } T\}}{1 + B}

    (large MMD, energy, FD and C2ST accuracy; small precision, recall and coverage; density
    either side, twice the smaller one-sided p); a bootstrap percentile interval (MMD and FD;
    not the energy distance nor the k-NN fractions, whose bootstrap the repeated rows of a
    resample bias); a finding in plain words. The joint verdict is min-p over the
    statistics (C2ST excepted) with leave-one-out ranks over the same permutations: "different"
    when its p ≤ α.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The reference set (the data, the "real" set of precision/recall/density/coverage).
    Y : array_like, shape (m, d)
        The set judged (the model's samples).
    stats : sequence of str, optional
        Default: all but "C2ST"; above n + m = 30 000, "MMD" (linear-time) and "FD" (the others
        cost minutes there; ask for them by name).
    alpha : float, default: 0.05
    n_perm : int, optional
        The budget B of permutations (default 999).
    sequential : bool, default: True
        Check after 111, 222 and 444 permutations and stop when every test (and the joint one) is
        decided (Ding, Gandy & Hahn's confidence-sequence rule, resampling risk 10⁻³); else all B.
    seed : None, int, SeedSequence or Generator
    n_boot : int, optional
        Bootstrap resamples of the intervals (default 200; 0: no intervals).
    confidence_level : float, default: 0.95
    kernel : {"gaussian", "laplace", "imq"}, default: "gaussian"
        The MMD's kernel.
    length_scale : float or {"median", "sbibm", "alibi"}, optional
        The MMD kernel's ℓ (default: the median heuristic on the pooled sample, fixed for all
        permutations).
    estimator : {"unbiased", "biased", "linear"}, optional
        The MMD's estimator: default "unbiased" up to n + m = 30 000, "linear" above (Gretton et
        al.'s linear-time statistic: O(n + m) a permutation; each set's rows paired in row order).
    k : int, default: 5
        Neighbours of precision/recall/density/coverage (k < n and k < m).
    n_perm_c2st : int, default: 99
        C2ST refits its classifier on each permutation: it uses the first ``n_perm_c2st``
        permutations only and stays out of the joint verdict.

    Returns
    -------
    TwoSampleTable

    Raises
    ------
    ValueError
        Before any work: sets that are not 2-D, of different d, of fewer than 2 rows, with NaN or
        inf; a constant set with the median heuristic; k ≥ n or k ≥ m; unknown statistics or options.

    Notes
    -----
    Exactness: the pooled rows are exchangeable under one law, so the observed labelling is one
    more draw among the permuted ones and P(p ≤ α) ≤ α (Besag & Clifford); stopping by the
    confidence-sequence rule keeps that bound within its resampling risk. The kernel statistics
    cost one pass over the pairs per 256 permutations (:mod:`mcref.kernels.pairs`); the same bits
    for any thread count. docs/methods.md, "Two-sample statistics and their permutation null".

    References
    ----------
    .. [1] A. Gretton et al., J. Mach. Learn. Res. 13, 723–773 (2012).
    .. [2] J. Besag and P. Clifford, "Sequential Monte Carlo p-values", Biometrika 78, 301–304 (1991).
       https://doi.org/10.1093/biomet/78.2.301
    .. [3] D. Ding, A. Gandy and G. Hahn, Computational Statistics 35, 1373–1392 (2020).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(100, 2)), rng.normal(0.0, 2.0, size=(100, 2))
    >>> table = two_sample(X, Y, stats=["MMD", "energy", "FD"], seed=1, n_boot=50)
    >>> table.joint.verdict
    'different'
    """
    X, Y = ts.check_two_sets(X, Y)
    big = X.shape[0] + Y.shape[0] > QUADRATIC_MAX
    stats = _check_stats((LARGE_STATS if big else DEFAULT_STATS) if stats is None else stats)
    alpha = check_probability(alpha, "alpha")
    n_perm = DEFAULT_N_PERM if n_perm is None else check_int(n_perm, "n_perm", minimum=19)
    n_boot = DEFAULT_N_BOOT if n_boot is None else check_int(n_boot, "n_boot", minimum=0)
    n_perm_c2st = check_int(n_perm_c2st, "n_perm_c2st", minimum=19)
    level = check_probability(confidence_level, "confidence_level")
    kernel = ts.check_choice(kernel, "kernel", tuple(ts.KERNELS))
    estimator = ("linear" if big else "unbiased") if estimator is None else estimator
    if estimator not in ts.MMD_ESTIMATORS:
        raise ValueError(f"`estimator` must be one of {', '.join(map(repr, ts.MMD_ESTIMATORS))}, got {estimator!r}")
    n, m = X.shape[0], Y.shape[0]
    if any(s in PRDC for s in stats):
        k = check_int(k, "k", minimum=1)
        if k >= min(n, m):
            raise ValueError(f"`k` must be smaller than both set sizes (n = {n}, m = {m}) for precision, recall, "
                             f"density and coverage, got k = {k}")
    ell = ts.resolve_length_scale(length_scale, X, Y) if "MMD" in stats else None
    ss = check_seed(seed)
    perm_ss, boot_ss, c2st_ss = ss.spawn(3)
    c2st_state = int(c2st_ss.generate_state(1)[0] >> 1)
    Z = np.concatenate([X, Y])
    evaluate = _Evaluator(Z, n, m, stats, kernel, ell, estimator, k, c2st_state)
    joint_stats = tuple(s for s in stats if s != "C2ST")
    observed, permuted, tests, jtest = _permute(evaluate, perm_ss, n, m, stats, joint_stats, n_perm, n_perm_c2st,
                                                bool(sequential), alpha)
    intervals = _bootstrap(X, Y, stats, evaluate, n_boot, level, boot_ss)
    rows = {}
    for s in stats:
        T, t = permuted[s], tests[s]
        ref, ref_se = float(np.mean(T)), float(np.std(T, ddof=1) / math.sqrt(T.size)) if T.size > 1 else math.nan
        low, high = intervals.get(s, (math.nan, math.nan))
        rows[s] = TwoSampleRow(name=s, estimate=observed[s], reference=ref, reference_se=ref_se, p=t.p, p_se=t.se,
                               low=low, high=high, alternative=ALTERNATIVES[s], n_perm=t.n,
                               finding=_finding(s, observed[s], ref, t.p, alpha), permuted=T)
    if joint_stats:
        jp = jtest.p
        joint = TwoSampleJoint(p=jp, verdict="different" if jp <= alpha else "indistinguishable", stats=joint_stats,
                               n_perm=jtest.n, alpha=alpha)
    else:
        r = rows["C2ST"]
        joint = TwoSampleJoint(p=r.p, verdict="different" if r.p <= alpha else "indistinguishable", stats=("C2ST",),
                               n_perm=r.n_perm, alpha=alpha)
    return TwoSampleTable(rows=rows, joint=joint, n=n, m=m, d=X.shape[1], alpha=alpha, length_scale=ell,
                          kernel=kernel, seed=ss.entropy, confidence_level=level, n_boot=n_boot)
