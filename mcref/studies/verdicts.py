r"""Size and power of every validation rule (docs/methods.md, "Verdicts").

Each cell fixes the uncertainties u (an inverse-gamma sample of size M, or a built-in
dataset's u), a scenario of (mis)calibration and the true generative distribution D of the
errors, draws ``n_rep`` datasets and applies every score of :func:`mcref.validate` to each:

* ``BS`` — |ζ_BS| > 1, the BCa interval against the predefined reference (ZMS, RCE, …);
* ``Sim`` / ``Sim2`` — the published ζ_Sim (BCa interval against the simulated mean) and
  ζ_Sim2 (θ̂ against the simulated 95 % interval), per test D;
* ``p`` — the Monte Carlo test, p ≤ α, per test D, and under ``"empirical"`` D (the data's
  own standardized Z; simulated for each dataset);
* ``verdict`` — ``mc`` (the default rule of :func:`mcref.validate`: with
  ``n_mc_empirical > 0`` it decides by the empirical D, as validate's default D do; else
  by agreement over the test D) and ``paper`` (the published flowchart), over the test D:
  the fraction of datasets *not* declared valid, split into ``invalid`` and no verdict
  (``not testable`` / ``unreliable``);
* ``joint`` — the joint verdict of :func:`mcref.validate` (docs/methods.md, "Joint
  verdict"), p_joint ≤ α, per test D, ``"empirical"`` and ``"permutation"``, for every
  combination (the ``stat`` column holds the combination: ``minp``, ``fisher``,
  ``cauchy``, over the statistics the shape screen leaves, as validate; ``minp:all``, …
  over all the statistics);
* ``stat="any"`` — the table read as a model verdict: score ``invalid``/``mc``, at least
  one statistic declared invalid by the default rule; score ``p``, at least one
  per-statistic p ≤ α under that D;
* ``"permutation"`` (``n_perm > 0``) — the Monte Carlo test against the data's own Z
  shuffled across the reported u (exact for "Z independent of u" under any D; ZMS is
  constant under it, p = 1, and a pure scale error is invisible to it);
* ``"conditional"`` (``n_mc_empirical > 0`` and ``n_perm > 0``) — validate's default rule:
  per statistic (scores ``p``, ``verdict``, ``invalid``) the permutation test for the
  statistics without a predefined reference, the Monte Carlo test under the Student t
  fitted to the data's Z for ZMS (``n_mc_empirical`` draws), ζ_BS for RCE; its joint verdict
  (score ``joint``, stat ``minp``) the Šidák combination of the permutation part and that
  scale part; beside it the alternatives it was chosen against: ``"switch"`` (the
  permutation test only when the shape screen flags Z²), and for the joint verdict
  ``"sidak-emp"`` (scale part under the empirical D), ``"sidak-rce"`` and ``"perm-cons"``
  (the permutation part alone).

On calibrated data (scenario ``"calibrated"``) the rejection rate of a score is its size
(false-rejection rate; a sound 95 % test has 5 %); on miscalibrated data it is its power.
Scenarios (E = errors, u = the reported uncertainties, ε ~ D):

==================  ==============================================================
``"calibrated"``    E = u·ε
``"scale=s"``       E = s·u·ε (average miscalibration: u too small for s > 1)
``"gamma=g"``       E = u·ε but the reported uncertainties are c·u^g, c such that their
                    mean square is ⟨u²⟩ (calibrated on average, not consistent)
``"break=s"``       E = s·u·ε for the upper half of u, u·ε below (a consistency break)
==================  ==============================================================

The reference distributions under the test D depend on the reported u only, which is
fixed in a cell: they are simulated once per cell (``n_mc`` repeats) and shared by its
datasets; ``"empirical"`` and ``"permutation"`` depend on each dataset's Z and are
simulated per dataset (``n_mc_empirical`` and ``n_perm`` repeats, 0 to skip).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy.stats import binomtest

from .. import datasets as _datasets
from ..verdict._joint import (is_scale, permutation_invariant, joint_tests, scale_simulation, sidak,
                      untestable)
from ..core._checks import check_int, check_probability, check_values
from ..core._warnings import BiasedIntervalWarning, DegenerateBootstrapWarning
from ..resampling._bootstrap import bootstrap_many
from ..generative import get_distribution, permutation_distribution
from ..reference import simulate
from ..shape import shape_screen
from ..stats import info, statistics
from ..synthetic import draw, stream
from ..verdict._validate import alternative_for, verdict_conditional, verdict_for, verdict_mc
from ..resampling._zeta import zeta, zeta_sim2
from ._result import StudyResult, run_as
from ._runner import RunOptions, StudySpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["verdicts", "VerdictsResult", "SCENARIOS"]

SCENARIOS = ("calibrated", "scale=0.8", "scale=0.9", "scale=1.1", "scale=1.25", "gamma=0.5", "gamma=1.5",
             "break=1.25")
_SCEN_RE = re.compile(r"^(calibrated|scale|gamma|break)(?:=([0-9]*\.?[0-9]+))?$")
_IG_RE = re.compile(r"^IG\(([0-9]*\.?[0-9]+)\)$")
ALL_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE")


def _parse_scenario(s: str) -> tuple[str, float]:
    m = _SCEN_RE.match(str(s).strip())
    if m is None or (m.group(1) != "calibrated" and m.group(2) is None):
        raise ValueError(f"`scenario`: unknown scenario {s!r}; use 'calibrated', 'scale=S', 'gamma=G' or 'break=S'")
    return m.group(1), float(m.group(2) or 1.0)


def _u_source(src: str, M: int, seed: np.random.SeedSequence) -> np.ndarray:
    m = _IG_RE.match(src)
    if m:  # u² ~ IG(ν/2, ν/2)
        nu = float(m.group(1))
        return np.sqrt(draw(stream(seed), 0.5 * nu, get_distribution("normal"), M)[0])
    return _datasets.load(src).u.copy()


def _scenario(kind: str, val: float, u: np.ndarray, eps: np.ndarray, u_rep: np.ndarray) -> np.ndarray:
    if kind == "scale":
        return val * u * eps
    if kind == "break":
        return np.where(u > np.median(u), val, 1.0) * u * eps
    return u * eps  # calibrated, gamma (miscalibration is in the reported u)


def _reported_u(kind: str, val: float, u: np.ndarray) -> np.ndarray:
    if kind != "gamma":
        return u
    ug = u**val
    return ug * math.sqrt(np.mean(u * u) / np.mean(ug * ug))


def _rate(flags: np.ndarray) -> tuple[float, float, float]:
    n = flags.size
    k = int(flags.sum())
    ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
    return k / n, float(ci.low), float(ci.high)


def _verdicts_cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """One (u, M, scenario, D) cell: rejection rates of every score over n_rep datasets."""
    s_u, s_sim, s_rep = ss.spawn(3)
    u = _u_source(key["u"], key["M"], s_u)
    M = u.size
    kind, val = _parse_scenario(key["scenario"])
    u_rep = _reported_u(kind, val, u)
    true_d = get_distribution(key["D"])
    stats, test = params["stats"], params["test_dists"]
    alpha, n_rep = params["alpha"], params["n_rep"]
    nb = min(params["n_bins"], M // params["min_count"])
    binned = any(info(s).binned for s in stats)
    if binned and nb < 2:
        raise ValueError(f"M={M} is too small for binned statistics with `min_count`={params['min_count']}")
    sim = simulate(stats, u_rep, dists=test, n_mc=params["n_mc"], n_bins=nb, min_count=1, seed=s_sim,
                   n_threads=n_threads)
    labels = [d.label for d in sim.dists]
    refs = {(s, d): sim.reference(s, d) for s in stats for d in labels}
    d_sens = {s: sim.d_sensitive(s)[0] for s in stats}
    bca = [s for s in stats if s in params["bca_stats"]] if params["n_boot"] > 0 else []
    n_emp = params["n_mc_empirical"]
    n_perm = params.get("n_perm", 0)  # absent from the parameters of studies stored before it existed
    flags: dict[tuple, np.ndarray] = {}

    def flag(stat, score, dist, i, value):
        arr = flags.setdefault((stat, score, dist), np.zeros(n_rep, dtype=bool))
        arr[i] = value

    for i, child in enumerate(s_rep.spawn(n_rep)):
        s_eps, s_boot, s_emp, s_perm = child.spawn(4)  # the first three as before s_perm existed
        eps = draw(stream(s_eps), 1.0, true_d, M)[1]
        E = _scenario(kind, val, u, eps, u_rep)
        est = statistics(stats, E, u_rep, n_bins=nb, min_count=1)
        boots = {}
        if bca:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BiasedIntervalWarning)
                warnings.simplefilter("ignore", DegenerateBootstrapWarning)
                boots = bootstrap_many(bca, E, u_rep, n_boot=params["n_boot"], n_bins=nb, min_count=1, seed=s_boot)
        emp = None
        if n_emp > 0:
            emp = simulate(stats, u_rep, dists=["empirical"], E=E, n_mc=n_emp, n_bins=nb, min_count=1, seed=s_emp,
                           n_threads=n_threads)
        perm = None
        if n_perm > 0:  # Z shuffled across the reported u: exact for "Z independent of u" under any D
            perm = simulate(stats, u_rep, dists=[permutation_distribution(E / u_rep)], n_mc=n_perm, n_bins=nb,
                            min_count=1, seed=s_perm, n_threads=n_threads)
        screen = shape_screen(E, u_rep)
        pooled = {d: (sim, d) for d in labels}
        if emp is not None:
            pooled["empirical"] = (emp, "empirical")
        if perm is not None:
            pooled["permutation"] = (perm, "permutation")
        pvals: dict[str, dict[str, float]] = {d: {} for d in pooled}
        invalid_any, n_verdicts = False, 0
        for s in stats:
            decided_mc = _stat_flags(flag, i, s, est[s], sim, labels, refs, d_sens[s], emp, perm, pvals, screen,
                                     boots, E, u_rep, alpha)
            if decided_mc is not None:
                invalid_any |= decided_mc
                n_verdicts += 1
        if n_verdicts:  # the table read as a model verdict: at least one statistic declared invalid ...
            flag("any", "invalid", "mc", i, invalid_any)
        # ... and the joint verdict of validate (docs/methods.md, "Joint verdict"): the statistics
        # the shape screen leaves (``comb``) and all of them (``comb:all``), under each D
        decided = [s for s in stats if not screen.unreliable(s)]
        if emp is not None and perm is not None:
            scale = [s for s in stats if is_scale(s)]
            fit = scale_simulation(scale, u_rep, E, n_mc=n_emp, seed=child.spawn(1)[0], n_threads=n_threads)
            _candidate_rules(flag, i, stats, est, pvals, screen, perm, emp, fit, boots, E, u_rep, alpha)
        _joint_flags(flag, i, pooled, pvals, stats, decided, est, alpha)
    rows = []
    for (s, score, d), arr in flags.items():
        rate, lo, hi = _rate(arr)
        rows.append({"M_eff": M, "stat": s, "score": score, "dist": d, "reject": rate, "low": lo, "high": hi,
                     "n_rep": n_rep})
    return rows


def _stat_flags(flag, i, s, th, sim, labels, refs, d_sens, emp, perm, pvals, screen, boots, E, u_rep,
                alpha) -> bool | None:
    """The flags of statistic ``s`` (estimate ``th``) on dataset ``i`` of a cell: its p-values
    under each D, its ζ scores and the paper's verdict (with a bootstrap), the verdict of
    ``rule="mc"``; fills ``pvals``. Returns whether that verdict is invalid, or None when the
    statistic gets none (a predefined reference without a bootstrap)."""
    alt = alternative_for(s)
    pv = {d: sim.p_value(s, d, th, alternative=alt)[0] for d in labels}
    for d in labels:
        flag(s, "p", d, i, pv[d] <= alpha)
    if emp is not None:  # the default rule of validate decides with the empirical D
        pv["empirical"] = emp.p_value(s, "empirical", th, alternative=alt)[0]
        flag(s, "p", "empirical", i, pv["empirical"] <= alpha)
    if perm is not None:  # ZMS is constant under permutations: p = 1, as validate reports it
        pvals["permutation"][s] = (1.0 if untestable(s, "permutation")
                                   else perm.p_value(s, "permutation", th, alternative=alt)[0])
        flag(s, "p", "permutation", i, pvals["permutation"][s] <= alpha)
    for d in pv:
        pvals[d][s] = pv[d]
    ref_fn = info(s).reference
    zbs = None
    shape_flag = screen.unreliable(s)
    if s in boots:
        b = boots[s]
        if ref_fn is not None:
            zbs = zeta(th, ref_fn(E, u_rep), b.low, b.high)
            flag(s, "BS", "", i, abs(zbs) > 1)
        zs = {}
        for d in labels:
            r = refs[s, d]
            zs[d] = zeta(th, r.mean, b.low, b.high, u_ref=r.se)
            flag(s, "Sim", d, i, abs(zs[d]) > 1)
            flag(s, "Sim2", d, i, abs(zeta_sim2(th, r.mean, r.low, r.high)) > 1)
        vp = verdict_for(zeta_bs=zbs, zeta_sim=zs, d_sensitive=d_sens, shape_flag=shape_flag)
        flag(s, "verdict", "paper", i, vp != "valid")
        flag(s, "invalid", "paper", i, vp == "invalid")
    if ref_fn is None or s in boots:
        vm = verdict_mc(zeta_bs=zbs, p_sim=pv, shape_flag=shape_flag, alpha=alpha)
        flag(s, "verdict", "mc", i, vm != "valid")
        flag(s, "invalid", "mc", i, vm == "invalid")
        return vm == "invalid"
    return None


def _joint_flags(flag, i, pooled, pvals, stats, decided, est, alpha) -> None:
    """The joint flags of dataset ``i``: any p-value ≤ α under each D, and the joint tests of
    validate on the statistics the shape screen leaves (``decided``) and on all of them
    (``:all``)."""
    for d, (sm, lab) in pooled.items():
        flag("any", "p", d, i, min(pvals[d].values()) <= alpha)
        dd = [x.label for x in sm.dists].index(lab)
        for cover, suffix in ((decided, ""), (stats, ":all")):
            cover = [s for s in cover if not untestable(s, d)]
            if not cover:  # validate gives no joint verdict: counted as not rejected
                continue
            x = sm.samples[dd][[sm.names.index(s) for s in cover]]
            jts = joint_tests(x, [est[s] for s in cover], [alternative_for(s) for s in cover])
            for comb, jt in jts.items():
                flag(comb + suffix, "joint", d, i, jt.p <= alpha)


def _candidate_rules(flag, i, stats, est, pvals, screen, perm, emp, fit, boots, E, u_rep, alpha) -> None:
    """The conditional rule (validate's default) and the alternatives it was chosen against
    (docs/methods.md, "Joint verdict", "Heavy tails"), from the per-dataset empirical and
    permutation simulations:

    * per statistic (scores ``p``, ``verdict``, ``invalid``), the statistics without a
      predefined reference (CC, ENCE, ZMSE, UCE) decided by the permutation test always
      (``dist="conditional"``, :func:`mcref.validate`'s ``rule="conditional"``) or only when
      the shape screen flags Z² (``"switch"``, the empirical D otherwise); the others by ζ_BS
      after the shape screen, as every rule;
    * joint (score ``joint``, stat ``minp``): ``"conditional"`` = the Šidák combination
      1 − (1 − min(p_cons, p_scale))² of the permutation joint minp over every statistic that
      depends on the pairing of Z with u (p_cons) and ZMS's Monte Carlo p under the empirical
      D (p_scale; p_joint = p_cons when the screen flags ZMS), as
      :func:`mcref.conditional_joint_verdict`; ``"perm-cons"`` p_cons alone; ``"sidak-rce"``
      the Šidák combination with RCE moved to the scale part (not exact: RCE depends on the
      pairing); ``"switch"`` the empirical-D joint when Z² passes the screen, p_cons when it
      fails; the stat ``any`` of score ``invalid``: at least one row declared invalid.
    """
    cons = [s for s in stats if not untestable(s, "permutation")]
    heavy = not screen.reliable_Z2

    def p_fit(s):  # the scale test of the conditional rule: Monte Carlo test under the fitted t(ν̂)
        if fit is None:
            return None
        return fit.p_value(s, fit.dists[0].label, est[s], alternative=alternative_for(s))[0]

    for rule in ("conditional", "switch"):
        inv = False
        nv = 0
        for s in stats:
            if info(s).reference is None:  # statistic with a simulated reference
                p = pvals["permutation"][s] if (rule == "conditional" or heavy) else pvals["empirical"][s]
                flag(s, "p", rule, i, p <= alpha)
                v = "invalid" if p <= alpha else "valid"
            elif rule == "conditional" and is_scale(s):
                p = p_fit(s)  # None: the fitted ν̂ ≤ 2, no scale test (as unreliable)
                v = "unreliable" if p is None else verdict_conditional(
                    zeta_bs=None, p_perm=None, p_scale=p, shape_flag=screen.unreliable(s), alpha=alpha)
                if p is not None:
                    flag(s, "p", rule, i, p <= alpha)
            elif s in boots:
                zbs = zeta(est[s], info(s).reference(E, u_rep), boots[s].low, boots[s].high)
                v = verdict_conditional(zeta_bs=zbs, p_perm=None, shape_flag=screen.unreliable(s), alpha=alpha)
            else:
                continue
            flag(s, "verdict", rule, i, v != "valid")
            flag(s, "invalid", rule, i, v == "invalid")
            inv |= v == "invalid"
            nv += 1
        if nv:
            flag("any", "invalid", rule, i, inv)
    if not cons:
        return

    def jp(sm, cover):
        x = sm.samples[0][[sm.names.index(s) for s in cover]]
        return joint_tests(x, [est[s] for s in cover], [alternative_for(s) for s in cover], combines=("minp",))[
            "minp"].p

    p_cons = jp(perm, cons)
    decided = [s for s in stats if not screen.unreliable(s)]
    p_emp = jp(emp, decided) if decided else None
    flag("minp", "joint", "perm-cons", i, p_cons <= alpha)
    flag("minp", "joint", "switch", i, (p_cons if heavy or p_emp is None else p_emp) <= alpha)
    inv = permutation_invariant()
    for label, scale, sm in (("conditional", inv, fit), ("sidak-emp", inv, emp), ("sidak-rce", (*inv, "RCE"), emp)):
        sc = [s for s in stats if s in scale and not screen.unreliable(s)] if sm is not None else []
        cc = [s for s in cons if s not in scale]
        pc = p_cons if cc == cons else (jp(perm, cc) if cc else None)
        ps = jp(sm, sc) if sc else None
        pj = sidak(min(pc, ps), 2) if (pc is not None and ps is not None) else (pc if pc is not None else ps)
        flag("minp", "joint", label, i, pj <= alpha)


@dataclass(frozen=True, repr=False)
class VerdictsResult(StudyResult):
    """Result of :func:`verdicts`.

    ``.table`` columns: ``u, M, scenario, D`` (the cell), ``M_eff`` (the dataset size used:
    M, or the built-in dataset's size), ``stat`` (a statistic, ``"any"``, or for the
    ``joint`` rows the combination), ``score`` (``BS``, ``Sim``, ``Sim2``, ``p``,
    ``verdict``, ``invalid``, ``joint``), ``dist`` (test D, ``"empirical"``,
    ``"permutation"``, or the rule ``mc``/``paper`` for the verdict rows), ``reject``
    (rate; for ``verdict``: not valid, for ``invalid``: declared invalid) with its Wilson
    95 % interval ``low, high``.
    """

    def rates(self, score: str = "verdict", dist: str = "mc"):
        """Pivot: one row per cell, one column per statistic, the rejection rate of one score."""
        t = self.table[(self.table["score"] == score) & (self.table["dist"] == dist)]
        return t.pivot_table(index=["u", "M", "scenario", "D"], columns="stat", values="reject", sort=False)


def verdicts(
    *,
    u: Sequence[str] = ("IG(6)",),
    M: Sequence[int] = (500, 2000, 5000, 20000),
    scenario: Sequence[str] = ("calibrated",),
    D: Sequence[str] = ("normal",),
    stats: Sequence[str] = ALL_STATS,
    test_dists: Sequence[str] = ("normal", "t6"),
    n_rep: int = 400,
    n_boot: int = 1000,
    bca_stats: Sequence[str] | None = None,
    n_mc: int = 2000,
    n_mc_empirical: int = 0,
    n_perm: int = 0,
    n_bins: int = 20,
    min_count: int = 30,
    alpha: float = 0.05,
    **run: Unpack[RunOptions],
) -> VerdictsResult:
    r"""Size and power of the validation scores and verdicts of :func:`mcref.validate`.

    Parameters
    ----------
    u : sequence of str, default: ("IG(6)",)
        Sources of the uncertainties: ``"IG(ν)"`` (u² ~ IG(ν/2, ν/2), M points drawn once
        per cell) or a built-in dataset name (its own u; then M is ignored and the
        cell's ``M`` is the dataset size).
    M : sequence of int, default: (500, 2000, 5000, 20000)
    scenario : sequence of str, default: ("calibrated",)
        See :data:`SCENARIOS` and the module docstring.
    D : sequence of str, default: ("normal",)
        True generative distribution(s) of the errors (parametric).
    stats : sequence of str, default: ("ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE")
    test_dists : sequence of str, default: ("normal", "t6")
        The D of the simulated references (as ``validate(dists=...)``).
    n_rep : int, default: 400
        Datasets per cell.
    n_boot : int, default: 1000
        BCa replicates (0: no BCa-based score).
    bca_stats : sequence of str, optional
        Statistics whose BCa scores are computed (default: all of ``stats``); the
        default verdict needs BCa only for the statistics with a predefined reference.
    n_mc : int, default: 2000
        Repeats of the per-cell reference simulation.
    n_mc_empirical : int, default: 0
        Repeats of the per-dataset simulation under ``"empirical"`` D (0: skipped).
    n_perm : int, default: 0
        Permutations of the per-dataset permutation test (Z shuffled across u; 0: skipped).
    n_bins, min_count : int
        Bins: ``min(n_bins, M // min_count)``.
    alpha : float, default: 0.05
    **run : RunOptions
        The runner's keywords (:class:`RunOptions`: seed, n_jobs, backend, scheduler, store, …).

    Returns
    -------
    VerdictsResult

    Examples
    --------
    >>> res = verdicts(M=(300,), stats=("ZMS", "ENCE"), n_rep=20, n_boot=200, n_mc=200, n_jobs=1,
    ...                progress=False)
    >>> sorted(set(res.table["score"]))
    ['BS', 'Sim', 'Sim2', 'invalid', 'joint', 'p', 'verdict']
    """
    us = check_values(u, "u", kind=str)
    known = _datasets.names()
    for src in us:
        if not _IG_RE.match(src) and src not in known:
            raise ValueError(f"`u`: unknown source {src!r}; use 'IG(nu)' or a built-in dataset ({', '.join(known)})")
    Ms = check_values(M, "M")
    scen = check_values(scenario, "scenario", kind=str)
    for s in scen:
        _parse_scenario(s)
    Ds = check_values(D, "D", kind=str)
    for d in Ds:
        dd = get_distribution(d)
        if dd.kind in ("empirical", "user"):
            raise ValueError(f"`D` must be parametric (normal, t(nu), normp(p), uniform, laplace), got {d!r}")
    stats = [info(s).name for s in check_values(stats, "stats", kind=str)]
    test = [get_distribution(d).label for d in check_values(test_dists, "test_dists", kind=str)]
    bca = stats if bca_stats is None else [info(s).name for s in check_values(bca_stats, "bca_stats", kind=str)]
    params = {"stats": stats, "test_dists": test, "n_rep": check_int(n_rep, "n_rep", minimum=2),
              "n_boot": check_int(n_boot, "n_boot", minimum=0), "bca_stats": bca,
              "n_mc": check_int(n_mc, "n_mc", minimum=2),
              "n_mc_empirical": check_int(n_mc_empirical, "n_mc_empirical", minimum=0),
              "n_bins": check_int(n_bins, "n_bins", minimum=1), "min_count": check_int(min_count, "min_count", minimum=1),
              "alpha": check_probability(alpha, "alpha")}
    n_perm = check_int(n_perm, "n_perm", minimum=0)
    if n_perm:  # recorded only when used: stores of studies made before it existed stay readable
        params["n_perm"] = n_perm
    keys = []
    for src in us:
        for m in (Ms if _IG_RE.match(src) else (_datasets.load(src).M,)):
            for sc in scen:
                for d in Ds:
                    keys.append({"u": src, "M": m, "scenario": sc, "D": get_distribution(d).label})
    spec = StudySpec(name="verdicts", params=params, keys=keys, cell=_verdicts_cell)
    return run_as(VerdictsResult, spec, run)
