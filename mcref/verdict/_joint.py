r"""Joint verdict: one Monte Carlo test of all the statistics of a table at once
(docs/methods.md, "Joint verdict").

Every simulated calibrated dataset gives every statistic at once (``Simulation.samples[d, :, k]``),
so the joint null distribution of the statistics is already simulated. The joint test

1. pools the data's estimates θ̂_s with the n simulated sets θ_{s,k} (N = n + 1 sets);
2. gives every set of the pool its per-statistic Monte Carlo p-value by its rank among the
   *other* N − 1 sets (leave-one-out; for the data this is exactly
   :meth:`mcref.Simulation.p_value`), with each statistic's direction
   (:func:`mcref.validate.alternative_for`);
3. combines the p-values of each set into one number T (``"minp"``, ``"fisher"``,
   ``"cauchy"``; larger T = stronger evidence against calibration);
4. ranks the data's T_0 among the simulated T_k:
   :math:`p_\mathrm{joint} = (1 + \#\{k \ge 1: T_k \ge T_0\})/(1 + n)`.

The N sets enter steps 2–3 through one symmetric rule, so under the null hypothesis (the
data are one more draw of the simulated model) T_0, …, T_n are exchangeable and
P(p_joint ≤ α) ≤ α exactly for any n (Besag & Clifford 1989). Ties (equal T, or equal
statistics in step 2) count as "at least as extreme": conservative.

Pure functions on arrays; O(S·N log N) for S statistics (one sort per statistic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

__all__ = ["COMBINATIONS", "DEFAULT_COMBINE", "JointTest", "JointVerdict", "loo_pvalues", "combine_pvalues",
           "joint_test", "joint_tests", "joint_verdict", "conditional_joint_verdict", "sidak", "scale_simulation",
           "untestable", "permutation_invariant", "is_scale"]

COMBINATIONS = ("minp", "fisher", "cauchy")
#: the default combination, chosen by measured power (docs/methods.md, "Joint verdict")
DEFAULT_COMBINE = "minp"
ALTERNATIVES = ("two-sided", "greater", "less")


def check_combine(combine: str) -> str:
    """``combine`` normalised, or ValueError naming the argument and the choices."""
    key = str(combine).strip().lower() if isinstance(combine, str) else combine
    if key not in COMBINATIONS:
        raise ValueError(f"`combine` must be one of {', '.join(repr(c) for c in COMBINATIONS)}, got {combine!r}")
    return key


def _alternatives(alternative, n_stats: int) -> list[str]:
    alts = [alternative] * n_stats if isinstance(alternative, str) else list(alternative)
    if len(alts) != n_stats:
        raise ValueError(f"`alternative` must give one direction per statistic ({n_stats}), got {len(alts)}")
    for a in alts:
        if a not in ALTERNATIVES:
            raise ValueError(f"`alternative` must be one of {', '.join(ALTERNATIVES)}, got {a!r}")
    return alts


def loo_pvalues(x, alternative="two-sided") -> np.ndarray:
    r"""Leave-one-out Monte Carlo p-values of every member of a pool of simulated statistics.

    For a pool :math:`x_1, …, x_N` of one statistic, member i is tested against the other
    N − 1, with :math:`n_{\ge,i} = \#\{j \ne i: x_j \ge x_i\}`,
    :math:`n_{\le,i} = \#\{j \ne i: x_j \le x_i\}`:

    .. math::

        p_{\mathrm{greater},i} = \frac{1 + n_{\ge,i}}{N},\quad
        p_{\mathrm{less},i} = \frac{1 + n_{\le,i}}{N},\quad
        p_{\mathrm{two\text{-}sided},i} = \min(1, 2\min(p_{\mathrm{greater},i}, p_{\mathrm{less},i}))

    the convention of :meth:`mcref.Simulation.p_value` with n = N − 1 references (ties
    count as at least as extreme).

    Parameters
    ----------
    x : array_like, shape (N,) or (S, N)
        One pool per row (statistic), N ≥ 2, no NaN.
    alternative : str or sequence of str, default: "two-sided"
        ``"two-sided"``, ``"greater"`` or ``"less"``, one for all rows or one per row.

    Returns
    -------
    ndarray, the shape of ``x``

    Notes
    -----
    One sort per row and two binary searches per member: O(N log N) per statistic
    instead of the O(N²) of the definition.

    Examples
    --------
    >>> loo_pvalues([3.0, 1.0, 2.0, 2.0], "greater")
    array([0.25, 1.  , 0.75, 0.75])
    """
    a = np.asarray(x, dtype=np.float64)
    one = a.ndim == 1
    a = np.atleast_2d(a)
    if a.ndim != 2 or a.shape[1] < 2:
        raise ValueError(f"`x` must be a pool of at least two values per statistic, got shape {np.shape(x)}")
    if np.isnan(a).any():
        raise ValueError("`x` contains NaN: a Monte Carlo p-value needs ordered values")
    alts = _alternatives(alternative, a.shape[0])
    N = a.shape[1]
    out = np.empty_like(a)
    for s in range(a.shape[0]):
        v = a[s]
        srt = np.sort(v)
        n_ge = (N - np.searchsorted(srt, v, side="left") - 1).astype(np.float64)
        n_le = (np.searchsorted(srt, v, side="right") - 1).astype(np.float64)
        pg = (1.0 + n_ge) / float(N)
        pl = (1.0 + n_le) / float(N)
        if alts[s] == "greater":
            out[s] = pg
        elif alts[s] == "less":
            out[s] = pl
        else:
            out[s] = np.minimum(1.0, 2.0 * np.minimum(pg, pl))
    return out[0] if one else out


def combine_pvalues(p, combine: str = DEFAULT_COMBINE, *, n_pool: int | None = None) -> np.ndarray:
    r"""Combined statistic T of per-statistic p-values; larger T = stronger evidence.

    With :math:`p_1, …, p_S` the p-values of one set:

    .. math::

        T_\mathrm{minp} = -\min_s p_s,\qquad
        T_\mathrm{fisher} = -2\sum_s \ln p_s,\qquad
        T_\mathrm{cauchy} = \frac{1}{S}\sum_s \tan\big((\tfrac12 - \tilde p_s)\pi\big)

    (Liu & Xie 2020), with :math:`\tilde p_s = \min(p_s, 1 - 1/N)` for a pool of N sets:
    the Monte Carlo p-values reach 1, where the tangent diverges; the cap makes the largest
    p-value mirror the smallest, 1/N. The null distribution of T is never taken from the
    χ² or Cauchy laws: T is calibrated against its own simulated values
    (:func:`joint_test`), which any fixed function of the p-values allows.

    Parameters
    ----------
    p : array_like, shape (S,) or (S, N)
        p-values, one row per statistic (and one column per set).
    combine : {"minp", "fisher", "cauchy"}, default: "minp"
    n_pool : int, optional
        N, the pool size of the Monte Carlo p-values (for the Cauchy cap; default: the
        number of columns of ``p``, or no cap for a 1-D ``p``).

    Returns
    -------
    ndarray, shape () or (N,)

    References
    ----------
    .. [1] Y. Liu and J. Xie, "Cauchy combination test: a powerful test with analytic
       p-value calculation under arbitrary dependency structures", J. Am. Stat. Assoc.
       115, 393–402 (2020). https://doi.org/10.1080/01621459.2018.1554485

    Examples
    --------
    >>> float(combine_pvalues([0.5, 0.25], "fisher"))  # -2 (ln 0.5 + ln 0.25)
    4.1588830833596715
    """
    combine = check_combine(combine)
    a = np.asarray(p, dtype=np.float64)
    if combine == "minp":
        return -np.min(a, axis=0)
    if combine == "fisher":
        return -2.0 * np.sum(np.log(a), axis=0)
    if n_pool is None and a.ndim == 2:
        n_pool = a.shape[1]
    if n_pool is not None:
        a = np.minimum(a, 1.0 - 1.0 / n_pool)
    return np.mean(np.tan((0.5 - a) * math.pi), axis=0)


@dataclass(frozen=True)
class JointTest:
    """Result of :func:`joint_test`.

    Attributes
    ----------
    p : float
        Joint Monte Carlo p-value :math:`(1 + \\#\\{T_k \\ge T_0\\})/(1 + n)`.
    se : float
        Its Monte Carlo standard error √(p(1 − p)/n).
    statistic : float
        T_0, the data's combined statistic.
    p_stats : ndarray, shape (S,)
        The data's per-statistic Monte Carlo p-values (as :meth:`mcref.Simulation.p_value`).
    n_mc : int
        n, the simulated sets.
    combine : str
    """

    p: float
    se: float
    statistic: float
    p_stats: np.ndarray = field(repr=False)
    n_mc: int
    combine: str


def joint_test(samples, observed, alternative="two-sided", *, combine: str = DEFAULT_COMBINE) -> JointTest:
    r"""Joint Monte Carlo test of several statistics against their simulated joint distribution.

    .. math::

        p_\mathrm{joint} = \frac{1 + \#\{k = 1..n: T_k \ge T_0\}}{1 + n}

    with T the combination (:func:`combine_pvalues`) of the leave-one-out per-statistic
    p-values (:func:`loo_pvalues`) of each set of the pool {data, simulated set 1..n};
    set 0 is the data. For ``"minp"``, sets with the same smallest p-value (frequent: the
    p-values lie on a grid of N values, and different statistics reach the same rank) are
    ordered by Fisher's T; only sets equal in both count as ties.

    Parameters
    ----------
    samples : array_like, shape (S, n)
        The statistics (rows) of n simulated calibrated datasets (columns), e.g.
        ``Simulation.samples[d]``.
    observed : array_like, shape (S,)
        The data's estimates, in the order of the rows.
    alternative : str or sequence of str, default: "two-sided"
        Direction per statistic (:func:`mcref.validate.alternative_for`).
    combine : {"minp", "fisher", "cauchy"}, default: "minp"

    Returns
    -------
    JointTest

    Raises
    ------
    ValueError
        Shapes that do not match, fewer than two simulated sets, NaN, or an unknown
        ``combine``/``alternative``.

    Notes
    -----
    Exactness (docs/methods.md, "Joint verdict"): every set's p-values are computed from
    the whole pool by the same rule, so under the null hypothesis the T_k are exchangeable
    and the rank of T_0 is uniform, ties broken against the data: P(p_joint ≤ α) ≤ α for
    any n (Besag & Clifford 1989), whatever the dependence between the statistics. Cost
    O(S·n log n).

    References
    ----------
    .. [1] J. Besag and P. Clifford, "Generalized Monte Carlo significance tests",
       Biometrika 76, 633–642 (1989). https://doi.org/10.1093/biomet/76.4.633
    .. [2] Y. Liu and J. Xie, J. Am. Stat. Assoc. 115, 393–402 (2020).
       https://doi.org/10.1080/01621459.2018.1554485

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sims = rng.normal(size=(3, 999))
    >>> res = joint_test(sims, [4.0, 0.0, 0.0], combine="minp")
    >>> res.p < 0.05
    True
    """
    return joint_tests(samples, observed, alternative, combines=(combine,))[check_combine(combine)]


def joint_tests(samples, observed, alternative="two-sided", *,
                combines: Sequence[str] = COMBINATIONS) -> dict[str, JointTest]:
    """:func:`joint_test` for several combinations at once (the leave-one-out p-values,
    the costly part, are shared): ``{combine: JointTest}``."""
    combines = [check_combine(c) for c in ([combines] if isinstance(combines, str) else combines)]
    if not combines:
        raise ValueError("`combines` must name at least one combination")
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    obs = np.atleast_1d(np.asarray(observed, dtype=np.float64))
    if x.ndim != 2 or obs.ndim != 1 or obs.size != x.shape[0]:
        raise ValueError(f"`observed` must hold one estimate per row of `samples`: shapes {np.shape(observed)} "
                         f"and {np.shape(samples)}")
    n = x.shape[1]
    if n < 2:
        raise ValueError(f"`samples` must hold at least two simulated sets, got {n}")
    if np.isnan(obs).any():
        raise ValueError("`observed` contains NaN")
    if np.isnan(x).any():
        raise ValueError("`samples` contains NaN")
    pool = np.concatenate([obs[:, None], x], axis=1)
    P = loo_pvalues(pool, alternative)
    out = {}
    fisher = combine_pvalues(P, "fisher") if "minp" in combines else None
    for c in combines:
        T = combine_pvalues(P, c, n_pool=n + 1)
        extreme = T[1:] >= T[0]
        if c == "minp":  # min p ties often (a grid of N values): ties broken by Fisher's T, ≥ still
            extreme = (T[1:] > T[0]) | ((T[1:] == T[0]) & (fisher[1:] >= fisher[0]))
        p = (1.0 + np.count_nonzero(extreme)) / (1.0 + n)
        out[c] = JointTest(p=float(p), se=float(math.sqrt(p * (1.0 - p) / n)), statistic=float(T[0]),
                           p_stats=P[:, 0].copy(), n_mc=n, combine=c)
    return out


@dataclass(frozen=True)
class JointVerdict:
    """The model-level verdict of a validation table (:attr:`mcref.ValidationTable.joint`).

    Attributes
    ----------
    p : float
        Joint Monte Carlo p-value under :attr:`dist`.
    se : float
        Its Monte Carlo standard error.
    dist : str
        The D whose simulation decides: ``"empirical"`` when it was simulated (as the
        per-statistic default rule), else the D with the largest joint p-value.
    combine : str
        ``"minp"``, ``"fisher"`` or ``"cauchy"``.
    stats : tuple of str
        The statistics combined: those the per-statistic rule decides, i.e. every
        statistic of the table but those the shape screen calls ``unreliable``, each by
        its simulated distribution (ZMS and RCE too, although their per-statistic verdict
        uses ζ_BS); under the permutation D, not ZMS (constant under it).
    verdict : str
        ``"valid"`` (p > α), ``"invalid"`` (p ≤ α); without the empirical D, ``"not
        testable"`` when the D disagree.
    driver : str
        The statistic with the smallest Monte Carlo p-value under :attr:`dist`.
    driver_p : float
        That p-value.
    alpha : float
    p_dist : dict[str, float]
        Joint p-value under every simulated D.
    excluded : tuple of str
        Statistics left out because the shape screen calls them ``unreliable``.
    """

    p: float
    se: float
    dist: str
    combine: str
    stats: tuple[str, ...]
    verdict: str
    driver: str
    driver_p: float
    alpha: float
    p_dist: dict[str, float] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    #: the rule of the verdict: ``"conditional"`` (:func:`conditional_joint_verdict`) or ``"mc"``
    #: (:func:`joint_verdict`)
    rule: str = "mc"
    #: conditional rule: joint p of the consistency part (permutation D) and of the scale part
    #: (empirical D), None when the part is empty; the statistics of each part
    p_consistency: float | None = None
    p_scale: float | None = None
    consistency_stats: tuple[str, ...] = ()
    scale_stats: tuple[str, ...] = ()
    #: the D of the scale part (the fitted t, e.g. ``"t(fit ν=4.12)"``)
    scale_dist: str = ""
    #: conditional rule with features: the joint p of the adaptivity rows (bins of the features)
    #: alone and of the consistency rows (u) alone, both under the same permutations; the
    #: pairing part that enters the Šidák combination is one test of both (``p_pairing``)
    p_adaptivity: float | None = None
    adaptivity_stats: tuple[str, ...] = ()
    p_pairing: float | None = None

    @property
    def driver_part(self) -> str:
        """Which part holds the smallest p: ``"scale"``, ``"consistency"`` or ``"adaptivity"``."""
        if self.driver in self.scale_stats:
            return "scale"
        return "adaptivity" if self.driver in self.adaptivity_stats else "consistency"

    def line(self, n_mc: int | None = None) -> str:
        """The one-line summary printed under the table."""
        from ..report._render import p_text

        def pt(p):  # as the table writes its p-values: "< 0.0001" at the Monte Carlo floor
            return p_text(p, n_mc)

        rel = ">" if self.p > self.alpha else "<="
        # "p < 0.0001 <= 0.05" at the floor, else "p = 0.123 ± 0.003 > 0.05"
        p_is = f"p {pt(self.p)}" if pt(self.p).startswith("<") else f"p = {pt(self.p)} ± {self.se:.1g}"
        smallest = f"smallest p: {self.driver} {pt(self.driver_p)}"
        if self.rule == "conditional":
            parts = []
            if self.p_adaptivity is not None:
                sub = [f"consistency {pt(self.p_consistency)} ({', '.join(self.consistency_stats)})"
                       if self.p_consistency is not None else "",
                       f"adaptivity {pt(self.p_adaptivity)} ({', '.join(self.adaptivity_stats)})"]
                parts.append(f"consistency+adaptivity {pt(self.p_pairing)} ({self.combine} under the permutation D; "
                             f"{'; '.join(x for x in sub if x)})")
            elif self.p_consistency is not None:
                parts.append(f"consistency {pt(self.p_consistency)} ({self.combine} of "
                             f"{', '.join(self.consistency_stats)} under the permutation D)")
            if self.p_scale is not None:
                parts.append(f"scale {pt(self.p_scale)} ({self.combine} of {', '.join(self.scale_stats)} under "
                             f"{self.scale_dist})")
            how = ("Sidak combination 1-(1-min p)^2 of " if len(parts) == 2 else "") + " and ".join(parts)
            out = f"joint verdict: {self.verdict} ({p_is} {rel} {self.alpha:g}; {how}; {smallest}, {self.driver_part})"
        else:
            out = (f"joint verdict: {self.verdict} ({p_is} {rel} {self.alpha:g}; {self.combine} combination of "
                   f"{', '.join(self.stats)} under the {self.dist} D; {smallest})")
        if self.excluded:
            out += f"; left out as unreliable: {', '.join(self.excluded)}"
        return out

    def flat(self) -> dict[str, Any]:
        """The verdict as a flat dict (JSON/CSV export; the statistics joined by ``+``)."""
        out = {"p": self.p, "se": self.se, "dist": self.dist, "combine": self.combine,
               "stats": "+".join(self.stats), "verdict": self.verdict, "driver": self.driver,
               "driver_p": self.driver_p, "alpha": self.alpha, "excluded": "+".join(self.excluded),
               **{f"p_{d}": v for d, v in self.p_dist.items()}}
        if self.rule == "conditional":
            out.update(rule=self.rule, p_consistency=self.p_consistency, p_scale=self.p_scale,
                       consistency_stats="+".join(self.consistency_stats), scale_stats="+".join(self.scale_stats),
                       scale_dist=self.scale_dist, p_adaptivity=self.p_adaptivity,
                       adaptivity_stats="+".join(self.adaptivity_stats), p_pairing=self.p_pairing,
                       driver_part=self.driver_part)
        return out


# Statistics that the permutation D cannot test are functions of the multiset of Z (and of u alone), so they
# do not depend on which Z goes with which u (ZMS = ⟨Z²⟩, MZ, VarZ, NLL = ½(⟨Z²⟩ + ⟨ln u²⟩ + ln 2π);
# their simulated values differ from the data's only by rounding). They are the *scale* part of the
# conditional joint verdict (:func:`conditional_joint_verdict`); the registry says which (StatInfo.pairing).
def permutation_invariant() -> tuple[str, ...]:
    """The registered statistics that do not depend on the pairing of Z with u
    (:attr:`mcref.stats.StatInfo.pairing` False: ZMS, MZ, VarZ, NLL and such user statistics)."""
    from ..stats import STATISTICS

    return tuple(n for n, s in STATISTICS.items() if not s.pairing)


def row_statistic(name: str) -> str:
    """The statistic of a table row: ``"ENCE"`` for ``"ENCE"`` and for ``"ENCE|x"`` (ENCE
    over bins of feature x, an adaptivity row)."""
    return name.split("|", 1)[0]


def row_feature(name: str) -> str | None:
    """The feature an adaptivity row is binned on (``"x"`` of ``"ENCE|x"``), else None."""
    return name.split("|", 1)[1] if "|" in name else None


def untestable(name: str, dist_label: str) -> bool:
    """Whether statistic ``name`` is constant under the D labelled ``dist_label`` (ZMS under
    ``"permutation"``; MV, a function of u alone, under every D): its p-value is 1 by
    definition and it leaves the joint test."""
    from ..stats import info

    inf = info(row_statistic(name))
    return not inf.errors or (dist_label == "permutation" and not inf.pairing)


def is_scale(name: str) -> bool:
    """Whether statistic ``name`` measures the set's scale alone: it depends on the errors but
    not on which Z goes with which u (ZMS, MZ, VarZ, NLL): the scale part of the conditional
    verdict (docs/methods.md, "Joint verdict")."""
    from ..stats import info

    inf = info(row_statistic(name))
    return inf.errors and not inf.pairing


def joint_verdict(sim, estimates: dict[str, float], alternatives: dict[str, str], *, stats: Sequence[str],
                  combine: str = DEFAULT_COMBINE, alpha: float = 0.05, excluded: Sequence[str] = (),
                  perm_estimates: dict[str, float] | None = None) -> JointVerdict | None:
    """The joint verdict of a table: :func:`joint_test` of ``stats`` under every D of ``sim``
    (a :class:`mcref.Simulation`); the empirical D decides when present, else every D must
    agree (as the per-statistic rule). None when no statistic is left to test (``stats``
    empty, or only ZMS under the permutation D). ``perm_estimates``: the values tested under
    the permutation D where they differ from ``estimates`` (:func:`conditional_joint_verdict`)."""
    combine = check_combine(combine)
    stats = tuple(stats)
    tests, covers = {}, {}
    for i, d in enumerate(d.label for d in sim.dists):
        cover = [s for s in stats if not untestable(s, d)]
        if not cover:
            continue
        covers[d] = cover
        est = {**estimates, **(perm_estimates or {})} if d == "permutation" else estimates
        tests[d] = joint_test(sim.samples[i][[sim.names.index(s) for s in cover]], [est[s] for s in cover],
                              [alternatives[s] for s in cover], combine=combine)
    if not tests:
        return None
    if "empirical" in tests:
        dist = "empirical"
        verdict = "valid" if tests[dist].p > alpha else "invalid"
    else:
        dist = max(tests, key=lambda d: tests[d].p)  # the first of the largest
        ok = [t.p > alpha for t in tests.values()]
        verdict = "valid" if all(ok) else "invalid" if not any(ok) else "not testable"
    t = tests[dist]
    j = int(np.argmin(t.p_stats))
    return JointVerdict(p=t.p, se=t.se, dist=dist, combine=combine, stats=tuple(covers[dist]), verdict=verdict,
                        driver=covers[dist][j], driver_p=float(t.p_stats[j]), alpha=alpha,
                        p_dist={d: r.p for d, r in tests.items()}, excluded=tuple(excluded))


def sidak(p_min, k: int):
    r"""Šidák's combination of k independent p-values by their minimum:

    .. math:: p = 1 - (1 - \min_j p_j)^k

    If the k p-values are independent and each is exact (P(p_j ≤ a) = a) then p is exact,
    P(p ≤ a) = 1 − P(min_j p_j > 1 − (1 − a)^{1/k}) = 1 − ((1 − a)^{1/k})^k = a; with
    conservative parts (P(p_j ≤ a) ≤ a) it is conservative (Z. Šidák, "Rectangular
    confidence regions for the means of multivariate normal distributions", J. Am. Stat.
    Assoc. 62, 626–633, 1967). ``p_min`` may be an array.

    Examples
    --------
    >>> round(sidak(0.025, 2), 12)  # 1 - 0.975**2
    0.049375
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"`k` must be an integer >= 1, got {k}")
    p = np.asarray(p_min, dtype=np.float64)
    if np.any((p < 0) | (p > 1)) or np.isnan(p).any():
        raise ValueError("`p_min` must lie in [0, 1]")
    with np.errstate(divide="ignore"):  # p = 1: log1p(−1) = −inf, and the result is 1
        out = p.copy() if k == 1 else -np.expm1(k * np.log1p(-p))  # 1 − (1 − p)^k without cancellation
    return float(out) if out.ndim == 0 else out


def conditional_joint_verdict(sim, estimates: dict[str, float], alternatives: dict[str, str], *,
                              stats: Sequence[str], flagged: Sequence[str] = (), scale_sim=None,
                              combine: str = DEFAULT_COMBINE, alpha: float = 0.05,
                              perm_estimates: dict[str, float] | None = None) -> JointVerdict | None:
    r"""The joint verdict of the conditional rule (docs/methods.md, "Joint verdict"):

    * **consistency part**: :func:`joint_test` of every statistic of ``stats`` that depends on
      the pairing of Z with u (all but :func:`permutation_invariant`) under the permutation
      D of ``sim``, p_cons; exact for "Z independent of u" under any D, whatever the shape
      screen says;
    * **scale part**: the permutation-invariant statistics (ZMS, MZ, VarZ, NLL) that the
      screen leaves (not in ``flagged``), p_scale: ``scale_sim`` a
      :class:`mcref.verdict._scale_test.ScaleTests` (validate's default: their studentized bootstrap-t,
      docs/methods.md "Scale test") or a :class:`mcref.Simulation` (:func:`scale_simulation`,
      the unit-variance t(ν̂) fitted to Z, the rule before: :func:`joint_test` in it); either
      way a function of the multiset of Z and of independent random numbers only; left out
      when ``scale_sim`` is None;
    * p_joint = :func:`sidak` (min(p_cons, p_scale), 2) when both parts are present, else
      the part that is.

    Under the null hypothesis (Z i.i.d., independent of u) p_cons is uniform given the
    multiset of Z, and p_scale is fixed by it (and by independent draws), so the two are
    independent and the Šidák combination is exact whenever p_scale is exact (under the
    true D; t(ν̂) approximates it). ``p_dist`` reports :func:`joint_verdict`'s joint p under
    every D of ``sim``, for comparison. None when no statistic is left to test.

    Rows binned on a feature (``"ENCE|x"``, adaptivity) are pairing rows: they join the
    consistency rows in the one permutation test (the same shuffles), which stays exact;
    the p of each group alone is reported (``p_consistency``, ``p_adaptivity``).
    ``perm_estimates`` are the data's values tested under the permutation D where they
    differ from ``estimates`` (binned rows against the set's own scale, docs/methods.md,
    "Adaptivity").
    """
    combine = check_combine(combine)
    stats = tuple(stats)
    labels = [d.label for d in sim.dists]
    if "permutation" not in labels:
        raise ValueError(f"the conditional joint verdict needs the permutation D among the simulated D, got "
                         f"{', '.join(labels)}")
    pairing = [s for s in stats if not untestable(s, "permutation")]
    cons = [s for s in pairing if row_feature(s) is None]
    adapt = [s for s in pairing if row_feature(s) is not None]
    scale = [s for s in stats if is_scale(s) and s not in flagged] if scale_sim is not None else []
    pest = {**estimates, **(perm_estimates or {})}

    def part(sm, d, cover, est=estimates):
        i = [x.label for x in sm.dists].index(d)
        return joint_test(sm.samples[i][[sm.names.index(s) for s in cover]], [est[s] for s in cover],
                          [alternatives[s] for s in cover], combine=combine)

    tc = part(sim, "permutation", pairing, pest) if pairing else None
    p_cons = p_adapt = None
    if adapt:
        p_adapt = part(sim, "permutation", adapt, pest).p
        p_cons = part(sim, "permutation", cons, pest).p if cons else None
    elif tc is not None:
        p_cons = tc.p
    label = scale_sim.label if hasattr(scale_sim, "joint") else scale_sim.dists[0].label if scale_sim else ""
    if scale and hasattr(scale_sim, "joint"):  # mcref.verdict._scale_test.ScaleTests: the bootstrap-t (default)
        ts = scale_sim.joint(scale)
    else:
        ts = part(scale_sim, label, scale) if scale else None
    if tc is None and ts is None:
        return None
    if tc is not None and ts is not None:
        t = min((tc, ts), key=lambda x: x.p)
        p = sidak(t.p, 2)
        se = 2.0 * (1.0 - t.p) * t.se  # delta method: dp/dp_min = 2(1 − p_min)
    else:
        t = tc if tc is not None else ts
        p, se = t.p, t.se
    per = {}
    for t, cover in ((tc, pairing), (ts, scale)):
        if t is not None:
            per.update(zip(cover, (float(x) for x in t.p_stats)))
    driver = min(per, key=per.get)
    other = joint_verdict(sim, estimates, alternatives, stats=[s for s in stats if s not in flagged],
                          combine=combine, alpha=alpha, excluded=flagged, perm_estimates=perm_estimates)
    left = tuple(s for s in stats if s not in pairing and s not in scale)
    return JointVerdict(p=float(p), se=float(se), dist="permutation" + (f"+{label}" if ts else ""),
                        combine=combine, stats=tuple(pairing + scale), verdict="valid" if p > alpha else "invalid",
                        driver=driver, driver_p=per[driver], alpha=alpha,
                        p_dist=other.p_dist if other is not None else {}, excluded=left, rule="conditional",
                        p_consistency=p_cons, p_scale=ts.p if ts is not None else None,
                        consistency_stats=tuple(cons), scale_stats=tuple(scale),
                        scale_dist=label if ts is not None else "",
                        p_adaptivity=p_adapt, adaptivity_stats=tuple(adapt), p_pairing=tc.p if tc is not None else None)


def scale_simulation(stats: Sequence[str], u, E, *, n_mc: int, seed=None, n_threads: int | None = None,
                     progress: bool | None = None, prep=None):
    """The scale test's simulation of the conditional rule (docs/methods.md, "Joint verdict"):
    the permutation-invariant statistics of ``stats`` (ZMS, MZ, VarZ, NLL) on ``n_mc``
    calibrated datasets E* = u·ε, ε ~ the unit-variance Student t(ν̂) fitted to the data's Z
    by maximum likelihood (``"t(fit)"`` of :func:`mcref.get_distribution`), a
    :class:`mcref.Simulation`. The fit and the draws depend on the multiset of Z only (and
    on independent random numbers), never on the pairing of Z with u. None when no such
    statistic is listed, or when the fitted ν̂ ≤ 2 (no unit-variance t exists: tails this
    heavy fail the shape screen). A small ν̂ makes Monte Carlo *means* converge slowly
    (:class:`mcref.SlowConvergenceWarning`); the Monte Carlo test is exact under t(ν̂) for
    any n_mc, so the warning is not raised here. ``prep``: the data prepared by the caller
    (:func:`mcref.stats.prepare_for`, as :func:`mcref.validate` does): the same simulation,
    without a second check and sort of u."""
    import warnings

    from ..core._warnings import SlowConvergenceWarning
    from ..reference import simulate

    names = [s for s in stats if is_scale(s)]
    if not names:
        return None
    z = np.asarray(E, dtype=np.float64) / np.asarray(u, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowConvergenceWarning)
        try:
            from ..generative import get_distribution

            d = get_distribution("t(fit)", Z=z)
        except ValueError:  # ν̂ ≤ 2
            return None
        if prep is not None:
            from ..reference import simulate_prepared
            from ..stats import info

            return simulate_prepared([info(n) for n in names], prep, [d], n_mc=n_mc, seed=seed,
                                     n_threads=n_threads, progress=progress)
        return simulate(names, u, dists=[d], n_mc=n_mc, n_bins=1, min_count=1, E=E, seed=seed,
                        n_threads=n_threads, progress=progress)
