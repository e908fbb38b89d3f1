r"""The check of posteriors of vector parameters (docs/methods.md, "Posteriors of vector parameters").

:func:`from_posterior` ranks N truths θ*_i ∈ R^d among their S posterior draws, per parameter
(simulation-based calibration, Talts et al. 2018) and jointly (TARP, Lemos et al. 2023;
projections on standardized pair sums and differences; a depth rank; the surprisal rank when a
density is known), reports sharpness beside calibration (contraction, RMSE, energy score), and
gives one verdict of exact size α against the swap null: under calibration θ*_i is exchangeable
with its S draws, so sets that swap it with a random one of its S + 1 vectors per case are draws
of the data's own null, for every statistic at once (:mod:`mcref.kernels.posterior`). The
verdict is the min-p over the parts, calibrated by leave-one-out ranks
(:func:`mcref.verdict._joint.joint_tests`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from scipy import stats as st

from ..calibration import uniformity
from ..core._checks import check_finite_cases, check_int, check_probability, check_seed
from ..verdict._ensemble import MIN_N_SWAPS
from ..kernels import posterior as KP
from ..parallel import parallel_kernel
from ..verdict._joint import joint_tests
from ._swap import Layout, chi2_bins, count_ranks, energy_score, layout, moments, run_swaps, uniformity_stats
from ._args import check_names, check_posterior, check_prior_draws, check_references, check_scale, surprisal_scores
from ._direction import DirectionTest, direction_tests, grid_moments, overall_direction
from ._words import UNINFORMATIVE, joint_findings, parameter_finding

__all__ = ["ParameterRow", "TarpResult", "JointPart", "Sharpness", "PosteriorCheck", "from_posterior",
           "tarp_coverage", "LEVELS", "UNINFORMATIVE"]

#: central coverage levels of the per-parameter table
LEVELS = (0.5, 0.9, 0.95)
#: the α grid of TARP's ECP curve
TARP_GRID = np.linspace(0.0, 1.0, 101)


@dataclass(frozen=True)
class ParameterRow:
    """One parameter's ranks: χ² (``chi2_p``, :func:`mcref.uniformity`'s bins) and KS
    (``ks_p``, ``scipy.stats.kstest``) p-values against U(0, 1); the swap-null p-values of the
    grid KS and χ² statistics (``ks_swap_p``, ``chi2_swap_p``); the ECDF inside the simultaneous
    95 % band (``in_band``); the coverage of the central rank intervals at :data:`LEVELS`
    (``coverage``); the mean rank − ½ (``skew``: > 0 when the truth lies above the draws) and the
    mean |u − ½| − ¼ (``spread``: > 0 ∪-shaped, < 0 ∩-shaped) with their z-scores; the
    ``direction`` (``"calibrated"``, ``"overconfident"``, ``"underconfident"``, ``"biased high"``,
    ``"biased low"``, ``"miscalibrated"``) and the ``finding`` in words."""

    name: str
    chi2_p: float
    ks_p: float
    ks_swap_p: float
    chi2_swap_p: float
    in_band: bool
    coverage: tuple[float, ...]
    skew: float
    skew_z: float
    spread: float
    spread_z: float
    direction: str
    finding: str


@dataclass(frozen=True, eq=False)
class TarpResult:
    """TARP (Lemos et al. 2023): ``f`` (N,) the fraction of each case's draws strictly closer to
    its reference point than the truth (distances of the standardized vectors θ/``scale``, before
    any randomization), the ECP curve ``ecp`` = mean(f < α) on the grid ``alpha`` of [0, 1], the
    ``references`` (N, d), the randomized ranks' grid KS ``statistic`` and its swap-null ``p``;
    ``scale`` (d,) the pooled sd of each parameter."""

    f: np.ndarray = field(repr=False)
    alpha: np.ndarray = field(repr=False)
    ecp: np.ndarray = field(repr=False)
    references: np.ndarray = field(repr=False)
    statistic: float = float("nan")
    p: float = float("nan")
    scale: np.ndarray | None = field(default=None, repr=False)

    def ecp_at(self, alpha) -> np.ndarray:
        """ECP(α) = mean(f < α) at any α."""
        a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
        return np.searchsorted(np.sort(self.f), a, side="left") / self.f.size


@dataclass(frozen=True)
class JointPart:
    """One test of the verdict: its ``name``, ``kind`` (``"parameter"``, ``"projections"``,
    ``"tarp"``, ``"depth"``, ``"surprisal"``), the observed ``statistic`` (grid KS or χ² of the
    ranks; projections: the largest over the projections) and its swap-null ``p``."""

    name: str
    kind: str
    statistic: float
    p: float


@dataclass(frozen=True)
class Sharpness:
    """Sharpness beside calibration: ``contraction`` 1 − mean_i var_post,i/var_prior per parameter
    (None without ``prior_draws``), ``rmse`` of the posterior mean per parameter, the mean
    ``energy_score`` and how its pairs were taken (``energy_pairs``)."""

    contraction: tuple[float, ...] | None
    rmse: tuple[float, ...]
    energy_score: float
    energy_pairs: str


@dataclass(frozen=True, eq=False)
class PosteriorCheck:
    """The check of N posteriors of d parameters (:func:`from_posterior`).

    Attributes
    ----------
    verdict : str
        ``"invalid"`` when :attr:`pvalue` ≤ α, else ``"valid"``: of size α exactly.
    pvalue : float
        The min-p over :attr:`joint`'s tests, ranked among the swapped sets' own (leave-one-out).
    names : tuple of str
    ranks : ndarray (N, d)
        Randomized normalized ranks u = (r + V)/(S + 1) per parameter (:func:`mcref.rank_calibration`).
    parameters : tuple of ParameterRow
    tarp : TarpResult
    joint : tuple of JointPart
        Every test the verdict combines, with its swap-null p-value.
    sharpness : Sharpness
    n_swaps, N, S, d : int
    alpha : float
    findings : tuple of str
    joint_ranks : dict of str to ndarray (N,)
        The randomized ranks of the other functions (projections, TARP, depth, surprisal).
    seed : int or None
        The seed's entropy (``seed=check.seed`` repeats the check).
    projections : tuple of str
    direction : str
        The check's overall direction, read only when the verdict rejects (``"calibrated"`` else):
        ``"overconfident"``, ``"underconfident"``, ``"biased high"``, ``"biased low"`` (in
        :attr:`direction_parameter`), ``"wrong dependence"`` or ``"miscalibrated"``, from the
        directional statistics :attr:`direction_tests` (the spread pooled over the parameters, the
        mean rank per parameter, the sum-against-difference spread of the projections), each with
        its exact p against the verdict's swapped sets (docs/methods.md, "The direction").
    direction_parameter : str or None
    direction_tests : tuple of DirectionTest
    """

    verdict: str
    pvalue: float
    names: tuple[str, ...]
    ranks: np.ndarray = field(repr=False)
    parameters: tuple[ParameterRow, ...]
    tarp: TarpResult
    joint: tuple[JointPart, ...]
    sharpness: Sharpness
    n_swaps: int
    N: int
    S: int
    d: int
    alpha: float
    findings: tuple[str, ...]
    joint_ranks: dict = field(default_factory=dict, repr=False)
    seed: Any = None
    projections: tuple[str, ...] = ()
    direction: str = "calibrated"
    direction_parameter: str | None = None
    direction_tests: tuple[DirectionTest, ...] = ()

    @property
    def direction_text(self) -> str:
        """:attr:`direction` with its parameter (``"biased high in theta0"``)."""
        return self.direction + ("" if self.direction_parameter is None else f" in {self.direction_parameter}")

    @property
    def contraction(self) -> np.ndarray | None:
        """Posterior contraction per parameter (None without ``prior_draws``)."""
        c = self.sharpness.contraction
        return None if c is None else np.array(c)

    def parts_text(self) -> str:
        """Which parts the verdict combines, in words."""
        kinds = [p.kind for p in self.joint]
        out = [f"per parameter: KS and chi2 of the ranks ({self.d} parameters)"]
        if "projections" in kinds:
            out.append(f"projections: largest KS and chi2 over {len(self.projections)} standardized pair sums "
                       "and differences")
        if "direction" in kinds:
            out[0] += "; |mean rank - 1/2| and |mean |u - 1/2| - 1/4| per parameter"
        out.append("TARP: KS of the randomized f")
        if "depth" in kinds:
            out.append("depth: KS of the Mahalanobis-distance ranks")
        if "surprisal" in kinds:
            out.append("surprisal: KS of the -log p ranks")
        return "; ".join(out)

    def __str__(self) -> str:
        sign = "<=" if self.pvalue <= self.alpha else ">"
        lines = [f"posterior check: N={self.N}, S={self.S}, d={self.d}, verdict: {self.verdict} "
                 f"(p={self.pvalue:.3g} {sign} alpha={self.alpha:g})",
                 f"  min-p over {len(self.joint)} tests, each against the same {self.n_swaps} swapped sets (the truth "
                 f"swapped with a random one of its {self.S + 1} vectors per case: exact under calibration), the "
                 "min-p calibrated by leave-one-out ranks",
                 f"  parts: {self.parts_text()}",
                 "parameters (ranks of the truth among the draws):",
                 f"  {'name':<12}{'chi2 p':>9}{'KS p':>9}{'swap p':>9}{'band':>6}"
                 + "".join(f"{f'cov{round(100 * p)}':>7}" for p in LEVELS) + f"{'mean u':>8}  finding"]
        for r in self.parameters:
            lines.append(f"  {r.name:<12}{r.chi2_p:>9.3g}{r.ks_p:>9.3g}{min(r.ks_swap_p, r.chi2_swap_p):>9.3g}"
                         f"{'in' if r.in_band else 'out':>6}" + "".join(f"{c:>7.3f}" for c in r.coverage)
                         + f"{0.5 + r.skew:>8.3f}  {r.direction}")
        lines.append(f"  {'test':<24}{'statistic':>11}{'p (swap)':>10}")
        for p in self.joint:
            lines.append(f"  {p.name:<24}{p.statistic:>11.4g}{p.p:>10.3g}")
        sh = self.sharpness
        lines.append("sharpness (beside calibration):")
        lines.append(f"  {'name':<12}{'contraction':>12}{'RMSE':>11}")
        for k, name in enumerate(self.names):
            c = "-" if sh.contraction is None else f"{sh.contraction[k]:.3f}"
            lines.append(f"  {name:<12}{c:>12}{sh.rmse[k]:>11.4g}")
        lines.append(f"  energy score: {sh.energy_score:.5g} ({sh.energy_pairs})")
        if self.direction_tests:
            lines.append("direction (read when the verdict rejects; exact p against the same swapped sets):")
            lines.append("  " + "; ".join(f"{t.name} z={t.z:.2f} p={t.p:.3g}" for t in self.direction_tests))
            lines.append(f"  direction: {self.direction_text}")
        lines += [f"finding: {f}" for f in self.findings]
        return "\n".join(lines)

    def record(self) -> dict[str, Any]:
        """The check as plain data."""
        from dataclasses import asdict

        sh = self.sharpness
        return {"verdict": self.verdict, "pvalue": self.pvalue, "alpha": self.alpha, "n_swaps": self.n_swaps,
                "N": self.N, "S": self.S, "d": self.d, "seed": self.seed, "names": list(self.names),
                "parameters": [asdict(r) for r in self.parameters],
                "joint": [asdict(p) for p in self.joint],
                "tarp": {"statistic": self.tarp.statistic, "p": self.tarp.p, "alpha": self.tarp.alpha.tolist(),
                         "ecp": self.tarp.ecp.tolist()},
                "sharpness": {"contraction": None if sh.contraction is None else list(sh.contraction),
                              "rmse": list(sh.rmse), "energy_score": sh.energy_score,
                              "energy_pairs": sh.energy_pairs},
                "projections": list(self.projections), "findings": list(self.findings),
                "direction": self.direction, "direction_parameter": self.direction_parameter,
                "direction_tests": [asdict(t) for t in self.direction_tests]}

    def to_json(self) -> str:
        """:meth:`record` as valid JSON (NaN as null)."""
        from ..report._render import json_text

        return json_text(self.record())

    def to_frame(self):
        """The per-parameter table as a pandas DataFrame (one row per parameter, sharpness included)."""
        import pandas as pd

        rows = []
        sh = self.sharpness
        for k, r in enumerate(self.parameters):
            row = {"name": r.name, "chi2_p": r.chi2_p, "ks_p": r.ks_p, "ks_swap_p": r.ks_swap_p,
                   "chi2_swap_p": r.chi2_swap_p, "in_band": r.in_band}
            row.update({f"coverage_{p:g}": c for p, c in zip(LEVELS, r.coverage)})
            row.update({"mean_rank": 0.5 + r.skew, "skew_z": r.skew_z, "spread_z": r.spread_z,
                        "direction": r.direction, "contraction": None if sh.contraction is None else sh.contraction[k],
                        "rmse": sh.rmse[k], "finding": r.finding})
            rows.append(row)
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        import html

        return "<pre>" + html.escape(str(self)) + "</pre>"


def _tests(lay: Layout, obs: tuple[np.ndarray, np.ndarray], sims: tuple[np.ndarray, np.ndarray], moves=None):
    """The verdict's tests: (name, kind, observed, swapped (B,)) per test, all one-sided (larger is
    further from uniform); the projections part takes the largest statistic over its columns.
    ``moves`` (observed, swapped): the grid mean rank − ½ and mean abs(u − ½) − ¼,
    whose absolute values per parameter join the tests (``directional=True``)."""
    chi_o, ks_o = obs
    chi_s, ks_s = sims
    out = []
    for k in lay.index("parameter"):
        out.append((f"{lay.labels[k]} KS", "parameter", ks_o[k], ks_s[:, k]))
        out.append((f"{lay.labels[k]} chi2", "parameter", chi_o[k], chi_s[:, k]))
        if moves is not None:
            mo, ms = moves
            out.append((f"{lay.labels[k]} |skew|", "direction", abs(mo[0][k]), np.abs(ms[0][:, k])))
            out.append((f"{lay.labels[k]} |spread|", "direction", abs(mo[1][k]), np.abs(ms[1][:, k])))
    proj = lay.index("projection")
    if proj.size:
        out.append(("projections KS (max)", "projections", ks_o[proj].max(), ks_s[:, proj].max(axis=1)))
        out.append(("projections chi2 (max)", "projections", chi_o[proj].max(), chi_s[:, proj].max(axis=1)))
    for kind, name in (("tarp", "TARP KS"), ("depth", "depth KS"), ("surprisal", "surprisal KS")):
        cols = lay.index(kind)
        if cols.size:
            out.append((name, kind, ks_o[cols[0]], ks_s[:, cols[0]]))
    return out


def _z(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean rank − ½ and mean |u − ½| − ¼ per column with their z-scores (exact moments of U(0, 1):
    variances 1/(12N) and 1/(48N))."""
    n = u.shape[0]
    skew = u.mean(axis=0) - 0.5
    spread = np.abs(u - 0.5).mean(axis=0) - 0.25
    return skew, skew / math.sqrt(1.0 / (12.0 * n)), spread, spread / math.sqrt(1.0 / (48.0 * n))


def _rows(names, u, ks_p_swap, chi_p_swap, level: float) -> tuple[ParameterRow, ...]:
    n, d = u.shape
    skew, skew_z, spread, spread_z = _z(u)
    rows = []
    for k in range(d):
        un = uniformity(u[:, k], n_bins=chi2_bins(n))
        swap_p = min(ks_p_swap[k], chi_p_swap[k])
        direction, finding = parameter_finding(names[k], float(skew_z[k]), float(spread_z[k]), 0.5 + float(skew[k]),
                                               swap_p, level)
        cov = tuple(float(np.mean(np.abs(u[:, k] - 0.5) <= p / 2)) for p in LEVELS)
        rows.append(ParameterRow(names[k], float(un.chi2_pvalue), float(st.kstest(u[:, k], "uniform").pvalue),
                                 float(ks_p_swap[k]), float(chi_p_swap[k]), bool(un.inside), cov, float(skew[k]),
                                 float(skew_z[k]), float(spread[k]), float(spread_z[k]), direction, finding))
    return tuple(rows)


def _sharpness(truth, draws, mom, prior) -> Sharpness:
    contraction = None
    if prior is not None:
        contraction = tuple(float(c) for c in 1.0 - mom.dvar.mean(axis=0) / prior.var(axis=0, ddof=1))
    rmse = tuple(float(r) for r in np.sqrt(((mom.dmean - truth) ** 2).mean(axis=0)))
    es, how = energy_score(truth, draws)
    return Sharpness(contraction, rmse, es, how)


def _most_off(lay: Layout, u: np.ndarray, ks: np.ndarray) -> str:
    """The projection of largest grid KS, with its direction in words."""
    proj = lay.index("projection")
    if not proj.size:
        return ""
    f = int(proj[np.argmax(ks[proj])])
    _, _, _, spread_z = _z(u[:, [f]])
    how = "too narrow" if spread_z[0] > 0 else "too wide"
    return f"{lay.labels[f]} (the posterior {how} along it)"


def from_posterior(truth, draws, *, names: Sequence[str] | None = None,
                   logpdf: Callable[[np.ndarray, int], np.ndarray] | None = None, references=None, prior_draws=None,
                   alpha: float = 0.05, n_swaps: int = 999, seed=None, max_pairs: int = 10,
                   directional: bool = True) -> PosteriorCheck:
    r"""Check N posteriors of d parameters: per parameter, jointly, sharpness, one exact verdict.

    For case i with truth θ*_i and draws θ_i1 … θ_iS (docs/methods.md, "Posteriors of vector
    parameters"):

    * **per parameter** k: the randomized rank u_ik = (#{j: θ_ijk < θ*_ik} + T + V)/(S + 1)
      (:func:`mcref.rank_calibration`), its χ² and KS tests, the ECDF's simultaneous band
      (:func:`mcref.uniformity`), the coverage of the central rank intervals at 50/90/95 %, and the
      directional z-tests of the mean rank (skew) and of the mean absolute distance of the ranks from ½ (∪ or ∩ shape);
    * **jointly**: TARP's f_i = #{j: ‖z_ij − z_ref,i‖ < ‖z*_i − z_ref,i‖}/S and its ECP(α) = mean(f < α)
      (Lemos et al. 2023; z standardized by the pooled sd of each parameter, references uniform in the
      box of the pooled values unless given); ranks of the projections z_a ± z_b of pairs (all pairs
      up to ``max_pairs``, else the ``max_pairs`` of largest mean absolute correlation of the pooled
      vectors); the rank of the Mahalanobis distance to the case's mean of its S + 1 vectors (their
      covariance); the surprisal −ln p_i when ``logpdf`` is given;
    * **sharpness**: contraction 1 − mean_i var(θ_i·k)/var_prior,k (with ``prior_draws``), RMSE of the
      posterior mean, the energy score (Gneiting & Raftery 2007);
    * **verdict**: every test's statistic on ``n_swaps`` swapped sets (the truth swapped with a
      random one of its S + 1 vectors per case: exact under calibration), p = (1 + #{T_k ≥ T_0})/(1 + B),
      and the min-p over the tests calibrated by leave-one-out ranks (size α exactly).

    Parameters
    ----------
    truth : array_like (N, d), or (N,) for one parameter
    draws : array_like (N, S, d), or (N, S)
    names : sequence of d str, optional
    logpdf : callable, optional
        ``logpdf(x, i)``: case i's posterior log density at points x (…, d) (as
        :func:`mcref.rank_calibration`'s).
    references : array_like (N, d), optional
        TARP's reference points (drawn independently of the truths).
    prior_draws : array_like (K, d), optional
        Draws of the prior, for the contraction.
    alpha : float, default: 0.05
    n_swaps : int, default: 999
    seed : None, int, SeedSequence or Generator
    max_pairs : int, default: 10
        Pairs of parameters projected (0: none).
    directional : bool, default: True
        Add each parameter's grid mean rank − ½ and mean absolute distance of the ranks from ½
        minus ¼, in absolute value, to the verdict's tests (2d more tests, the same swapped sets).

    Returns
    -------
    PosteriorCheck

    Raises
    ------
    ValueError
        Shapes that disagree (N, S or d), S < 2, NaN or inf, a ``logpdf`` of the wrong shape,
        ``references`` or ``prior_draws`` with another d: one line before any work.

    References
    ----------
    .. [1] S. Talts et al., "Validating Bayesian inference algorithms with simulation-based
       calibration" (2018), arXiv:1804.06788.
    .. [2] P. Lemos, A. Coogan, Y. Hezaveh, L. Perreault-Levasseur, "Sampling-based accuracy
       testing of posterior estimators for general inference", ICML 2023, arXiv:2302.03026.
    .. [3] T. Gneiting and A. E. Raftery, "Strictly proper scoring rules, prediction, and
       estimation", J. Am. Stat. Assoc. 102, 359–378 (2007).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(300, 2))                      # each case's posterior: N(mu_i, I)
    >>> truth = mu + rng.normal(size=(300, 2))              # the truth drawn from it: calibrated
    >>> check = from_posterior(truth, mu[:, None, :] + rng.normal(size=(300, 50, 2)), n_swaps=99, seed=1)
    >>> check.verdict, check.ranks.shape, check.tarp.f.shape
    ('valid', (300, 2), (300,))
    >>> narrow = from_posterior(truth, mu[:, None, :] + 0.5 * rng.normal(size=(300, 50, 2)), n_swaps=99, seed=1)
    >>> narrow.verdict, narrow.parameters[0].direction
    ('invalid', 'overconfident')
    """
    t, x = check_posterior(truth, draws)
    N, S, d = x.shape
    nm = check_names(names, d)
    refs = check_references(references, N, d)
    prior = check_prior_draws(prior_draws, d)
    alpha = check_probability(alpha, "alpha")
    n_swaps = check_int(n_swaps, "n_swaps", minimum=MIN_N_SWAPS)
    max_pairs = check_int(max_pairs, "max_pairs", minimum=0)
    ss = check_seed(seed)
    scores = surprisal_scores(logpdf, t, x)
    s_rank, s_ref, s_swap = ss.spawn(3)
    mom = moments(t, x)
    lay = layout(mom, nm, N, references=refs, with_surprisal=scores is not None, max_pairs=max_pairs, seed_seq=s_ref)
    run = run_swaps(t, x, lay, mom, scores, n_swaps, s_rank, s_swap)
    obs_counts = count_ranks(run.u)
    obs = uniformity_stats(obs_counts, N)
    sims = uniformity_stats(run.counts, N)
    moves = (grid_moments(obs_counts, N), grid_moments(run.counts, N)) if directional else None
    tests = _tests(lay, obs, sims, moves)
    res = joint_tests(np.stack([s for *_, s in tests]), np.array([o for _, _, o, _ in tests]), "greater",
                      combines=("minp",))["minp"]
    joint = tuple(JointPart(n, k, float(o), float(p)) for (n, k, o, _), p in zip(tests, res.p_stats))
    pk = {p.name: p.p for p in joint}
    verdict = "invalid" if res.p <= alpha else "valid"
    level = alpha if verdict == "invalid" else alpha / (2 * d)  # the gate: rows at α once the verdict rejects
    rows = _rows(nm, run.u[:, :d], [pk[f"{n} KS"] for n in nm], [pk[f"{n} chi2"] for n in nm], level)
    dtests = direction_tests(lay, obs_counts, run.counts, N)
    direction, dpar = overall_direction(verdict, dtests, joint, alpha)
    tcol = int(lay.index("tarp")[0])
    tarp = TarpResult(run.f, TARP_GRID.copy(), np.mean(run.f[:, None] < TARP_GRID[None, :], axis=0), lay.references,
                      float(obs[1][tcol]), float(pk["TARP KS"]), lay.sd)
    sharp = _sharpness(t, x, mom, prior)
    findings = joint_findings(verdict, rows, joint, _most_off(lay, run.u, obs[1]), sharp.contraction, nm, alpha,
                              direction == "wrong dependence")
    if verdict == "invalid":
        findings.insert(0, "overall direction: " + direction + ("" if dpar is None else f" in {dpar}"))
    extra = {lay.labels[f]: run.u[:, f].copy() for f in range(d, len(lay.kinds))}
    return PosteriorCheck(verdict, float(res.p), nm, run.u[:, :d].copy(), rows, tarp, joint, sharp, n_swaps, N, S, d,
                          alpha, tuple(findings), extra, ss.entropy,
                          tuple(lay.labels[f] for f in lay.index("projection")), direction, dpar, dtests)


def tarp_coverage(truth, draws, *, references=None, seed=None, scale=None) -> TarpResult:
    r"""TARP's f and ECP alone (Lemos et al. 2023), as :func:`from_posterior` computes them, without
    the swap null: f_i = #{j: ‖z_ij − z_ref,i‖ < ‖z*_i − z_ref,i‖}/S with z = θ·(1/s) (s the pooled sd
    of each parameter over the N(S + 1) vectors, or ``scale``) and ECP(α) = mean(f < α) on
    α = 0, 0.01, …, 1. ``references`` (N, d) or None (uniform in the box of the pooled values, drawn
    from ``seed`` as :func:`from_posterior` draws them with the same seed). One pass over the draws
    for the moments (none when ``references`` and ``scale`` are given) and one for the counts,
    O(N·S·d), no array of the draws' size (docs/methods.md, "Posteriors of vector parameters").

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=(400, 2)); truth = mu + rng.normal(size=(400, 2))
    >>> res = tarp_coverage(truth, mu[:, None, :] + rng.normal(size=(400, 200, 2)), seed=1)
    >>> res.f.shape, bool(abs(res.ecp_at(0.5)[0] - 0.5) < 0.1)
    ((400,), True)
    """
    t, x = check_posterior(truth, draws, finite=False)
    N, S, d = x.shape
    refs = check_references(references, N, d)
    sd = check_scale(scale, d)
    if refs is None or sd is None:
        mom = moments(t, x, full=False, draws_var=False)
        if not (np.all(np.isfinite(mom.pmean)) and np.all(np.isfinite(mom.pcov))):  # a NaN or inf in the data
            check_finite_cases(t, "truth")
            check_finite_cases(x, "draws")
        sd = mom.sd if sd is None else sd
        if refs is None:
            s_ref = check_seed(seed).spawn(3)[1]
            refs = mom.lo + (mom.hi - mom.lo) * np.random.default_rng(s_ref).uniform(size=(N, d))
    counts = np.empty(N, dtype=np.int64)
    qsum = np.empty(N)
    parallel_kernel(KP.tarp_counts)(t, x, refs, sd, counts, qsum)
    if not np.all(np.isfinite(qsum)):  # a NaN or inf in the data (or distances beyond float64)
        check_finite_cases(t, "truth")
        check_finite_cases(x, "draws")
    f = counts / S
    return TarpResult(f, TARP_GRID.copy(), np.mean(f[:, None] < TARP_GRID[None, :], axis=0), refs, scale=sd)
