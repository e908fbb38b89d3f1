r"""Validate's Monte Carlo tests run sequentially, in rounds (docs/methods.md, "Sequential Monte
Carlo tests").

The conditional rule decides each row by one Monte Carlo test (the permutation test of a
pairing statistic; the studentized bootstrap-t of a scale statistic and of RCE), and the model
by the joint verdict. Each test only asks whether its p-value is at most α, and for most data
p is far from α after a few dozen repeats. Here the repeats are run in rounds, ending after
64, 128, 256, … repeats and at the cap N_MC; after each round every undecided test feeds its
counts to a :class:`mcref.verdict._sequential.SequentialTest` (the confidence sequence method, risk
ε = 10⁻³ per test), and the rounds stop when every test is decided. A test still undecided at
the cap takes the fixed-N_MC decision, so the sequential table never costs more than the fixed
one and, where a test runs to the cap, equals it.

A round runs only its own repeats: the chunks of the random streams are those of the full run
(:func:`mcref.kernels.rng.fresh`), so a table stopped after n repeats holds the first n
repeats of the fixed-N_MC table, bit for bit, whatever the thread count. Each row reports the
p-value of the repeats it was decided on (its ``n_test``), and its informational permutation
columns (ref, u_ref, p[permutation], ζ-scores) from its own repeats too (:meth:`Rounds.n_info`,
:func:`row_simulation`): the rounds run longer when a row beside it is undecided, and a row must
not depend on its company. The joint verdict's two parts (the permutation joint test of the pairing
statistics, at the Šidák level 1 − √(1 − α) when a scale part exists, and the scale part) are
sequential tests on their combined p (whose pool is recomputed as it grows: the confidence
sequence is then an approximation, checked by ``benchmarks/study_sequential.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Collection

import numpy as np

from ._sequential import RESAMPLING_RISK, SequentialTest

__all__ = ["FIRST_ROUND", "round_ends", "run_rounds", "Rounds", "sequential_work", "row_simulation"]

#: repeats of the first round; each later round doubles the repeats run (a multiple of every chunk size)
FIRST_ROUND = 64


def round_ends(n_max: int, first: int = FIRST_ROUND) -> list[int]:
    """The repeats run after each round: ``first``, 2·``first``, 4·``first``, … below ``n_max``, then ``n_max``.

    Examples
    --------
    >>> round_ends(2000)
    [64, 128, 256, 512, 1024, 2000]
    >>> round_ends(50)
    [50]
    """
    ends, n = [], int(first)
    while n < n_max:
        ends.append(n)
        n *= 2
    return ends + [int(n_max)]


def run_rounds(n_max: int, tests: dict[str, SequentialTest],
               advance: Callable[[int, int, list[str]], dict[str, object]],
               moot: Callable[[], Collection[str]] = tuple) -> int:
    """Run rounds until every test of ``tests`` is decided; returns the repeats run.

    ``advance(r0, r1, undecided)`` runs repeats r0 ≤ r < r1 and returns, for each key of
    ``undecided`` it can observe, the cumulative counts ``(n_ge, n_le)`` of its r1 repeats or
    their p-value (:meth:`SequentialTest.observe_p`). A key it does not return is decided as
    it stands (no observation: e.g. a test that could not run). ``moot()``, asked after each
    round, names the tests whose row's verdict does not depend on them (the rows the shape screen
    flags unreliable): they are settled on that round's repeats (:meth:`SequentialTest.settle`)
    and run no further repeats."""
    n = 0
    for end in round_ends(n_max):
        todo = [k for k, t in tests.items() if not t.decided]
        obs = advance(n, end, todo)
        stop = set(moot())
        for k in todo:
            o = obs.get(k)
            if o is None or (isinstance(o, float) and not math.isfinite(o)):
                tests[k].reject = False  # nothing to test: left to the caller's own rule
            elif k in stop:
                tests[k].settle(*(o if isinstance(o, tuple) else tests[k].counts_of_p(float(o), end)), end)
            elif isinstance(o, tuple):
                tests[k].observe(o[0], o[1], end)
            else:
                tests[k].observe_p(float(o), end)
        n = end
        if all(t.decided for t in tests.values()):
            break
    return n


@dataclass
class Rounds:
    """What the sequential rounds of a table did (:attr:`mcref.ValidationTable.rounds`).

    Attributes
    ----------
    tests : dict[str, SequentialTest]
        Each row's test (by row name) and the joint verdict's parts (``"joint: pairing"``,
        ``"joint: scale"``), frozen at their decision: ``n`` the repeats it was decided on,
        ``early`` whether before the cap.
    n_perm, n_scale : int
        Repeats of the permutation D and replicates of the scale tests run.
    n_max : int
        The cap (the fixed N_MC).
    eps : float
        The resampling risk of each test.
    perm_rows : tuple of str
        The rows decided by their own permutation test (their :attr:`tests` count permutation
        repeats; the other rows' tests, ZMS's and RCE's, count bootstrap-t replicates).
    """

    tests: dict[str, SequentialTest] = field(default_factory=dict)
    n_perm: int = 0
    n_scale: int = 0
    n_max: int = 0
    eps: float = RESAMPLING_RISK
    perm_rows: tuple[str, ...] = ()

    def n_info(self, name: str) -> int:
        """The permutation repeats of row ``name``'s informational permutation columns (ref, u_ref,
        p[permutation], ζ_Sim, ζ_Sim2): those its own permutation test was decided on, or, for a row
        decided by another test (RCE, ZMS), the first round's. Either is a function of the row alone,
        never of the rows beside it (which may keep the rounds running longer)."""
        if name in self.perm_rows:
            return self.tests[name].n
        return min(round_ends(self.n_max)[0], self.n_perm)

    def n_test(self, name: str) -> int | None:
        """The repeats row ``name``'s p-value was computed on (None: not a sequential test)."""
        t = self.tests.get(name)
        return t.n if t is not None else None

    def note(self) -> str:
        """The table's note: how many repeats the rounds used against the cap."""
        early = sum(t.early for t in self.tests.values())
        moot = sum(t.moot for t in self.tests.values())
        parts = []
        if self.n_perm:
            parts.append(f"permutation D {self.n_perm}")
        if self.n_scale:
            parts.append(f"scale tests {self.n_scale}")
        return (f"sequential Monte Carlo tests (risk {self.eps:g} each, docs/methods.md \"Sequential Monte Carlo "
                f"tests\"): {early} of {len(self.tests)} decided before the cap N_MC={self.n_max}"
                + (f", {moot} not run past the first round (the shape screen makes their rows unreliable "
                   "whatever their p)" if moot else "")
                + "; repeats run: "
                f"{', '.join(parts)}; n_mc=N for the fixed test")


def counts(x: np.ndarray, value: float) -> tuple[int, int]:
    """(#{x ≥ value}, #{x ≤ value}): the counts of a Monte Carlo p-value (:meth:`mcref.Simulation.p_value`)."""
    return int(np.count_nonzero(x >= value)), int(np.count_nonzero(x <= value))


def permutation_rounds(sim_infos, prep, perm, *, n_mc: int, seed: np.random.SeedSequence, tested: dict,
                       joint: tuple[list[int], list[float], list[str]] | None, joint_alpha: float, alpha: float,
                       features=(), grp=None, perm_scale: float = 1.0, units=None,
                       moot: Collection[str] = ()) -> tuple[np.ndarray, dict]:
    """The permutation D of :func:`mcref.validate` in rounds: returns ``(samples, tests)``,
    samples (K, n) of the n repeats run (after the first round only the rows an undecided test
    reads are simulated: a row's repeats past its own decision, and past the first round for a row
    no test reads, are NaN; :meth:`Rounds.n_info` gives each row's own) and the frozen :class:`SequentialTest` of each row of
    ``tested`` (row name → (index in ``sim_infos``, the data's value tested, alternative)) and of
    the joint test's pairing part (``joint``: the rows' indices, tested values and alternatives,
    tested at ``joint_alpha``; None when there is none); ``moot``: the rows of ``tested`` whose
    verdict the shape screen fixes (unreliable), settled on the first round (:func:`run_rounds`).
    The other arguments are those of :func:`mcref.reference.simulate_prepared`, ``seed`` unspawned."""
    from ._joint import joint_test
    from ..kernels.rng import fresh
    from ..reference import simulate_prepared

    samples = np.empty((len(sim_infos), n_mc))
    tests = {nm: SequentialTest(alt, alpha, n_mc) for nm, (_, _, alt) in tested.items()}
    if joint is not None:
        tests["joint: pairing"] = SequentialTest("greater", joint_alpha, n_mc)

    def advance(r0: int, r1: int, todo: list[str]) -> dict[str, object]:
        rows = range(len(sim_infos))  # the first round: every row (the informational columns read it)
        if r0 > 0:  # later rounds: only the rows an undecided test reads; the others' repeats stay NaN
            need = {tested[nm][0] for nm in todo if nm in tested}
            if "joint: pairing" in todo:
                need.update(joint[0])
            rows = sorted(need)
            samples[:, r0:r1] = np.nan
        s = simulate_prepared([sim_infos[k] for k in rows], prep, [perm], n_mc=n_mc, seed=fresh(seed),
                              features=features, grp=[grp[k] for k in rows] if grp is not None else None,
                              perm_scale=perm_scale, units=units, repeats=(r0, r1))
        samples[list(rows), r0:r1] = s.samples[0]
        obs: dict[str, object] = {nm: counts(samples[tested[nm][0], :r1], tested[nm][1])
                                  for nm in todo if nm in tested}
        if "joint: pairing" in todo:
            idx, values, alts = joint
            obs["joint: pairing"] = joint_test(samples[idx, :r1], values, alts).p
        return obs

    n = run_rounds(n_mc, tests, advance, moot=lambda: moot)
    return samples[:, :n], tests


def scale_rounds(run: Callable[[int, set], object], *, n_max: int, rows: list[str],
                 joint: Callable[[object], list[str]] | None, joint_alpha: float,
                 alpha: float, moot: Callable[[object], Collection[str]] | None = None) -> tuple[object, dict, object]:
    """The scale tests of :func:`mcref.validate` in rounds. ``run(B, names)`` gives the
    :class:`mcref.verdict._scale_test.ScaleTests` of the statistics ``names`` on their first B replicates
    (the same streams for every B and whatever else is run: the replicates of a smaller B are
    those of the larger one); ``rows`` the statistics it decides, ``joint(fit)`` those of the
    joint verdict's scale part (None: no scale part). A round runs only the statistics of the
    tests still undecided (RCE's stream stops once its row is decided, the Z statistics' once
    theirs and the scale part are). Returns the scale tests with each row's p replaced by the p
    it was decided with (the rest from the last round that ran the Z statistics), the frozen
    tests, and the :class:`ScaleTests` at the scale part's decision (for the joint verdict).
    ``moot(fit)``: the rows whose verdict the screens fix (unreliable), settled on the round that
    flags them (:func:`run_rounds`): a flagged RCE row runs no replicates past the first round."""
    tests = {nm: SequentialTest("two-sided", alpha, n_max) for nm in rows}
    if joint is not None:
        tests["joint: scale"] = SequentialTest("greater", joint_alpha, n_max)
    seen: dict[str, object] = {}
    latest: dict[str, float] = {}
    zrows = {nm for nm in rows if nm != "RCE"}

    def advance(r0: int, r1: int, todo: list[str]) -> dict[str, object]:
        want = {nm for nm in todo if nm != "joint: scale"}
        if "joint: scale" in todo:
            want |= {nm for nm in rows if nm != "RCE"}
        fit = run(r1, want)
        latest.update(fit.p)
        if "last" not in seen or not zrows or want & zrows:  # the last round of the Z statistics
            seen["last"] = fit
        obs: dict[str, object] = {}
        for nm in todo:
            if nm == "joint: scale":
                cover = joint(fit)
                if cover:
                    obs[nm] = fit.joint(cover).p
                    seen[nm] = fit
            elif fit.p.get(nm, math.nan) == fit.p.get(nm, math.nan):
                obs[nm] = float(fit.p[nm])
                seen[nm] = fit.p[nm]
        return obs

    run_rounds(n_max, tests, advance, moot=lambda: moot(seen["last"]) if moot is not None else ())
    last = seen["last"]
    p = {nm: (seen[nm] if nm in seen else v) for nm, v in latest.items()}
    from dataclasses import replace

    return replace(last, p=p), tests, seen.get("joint: scale", last)


def validate_rounds(sim_infos, prep, dists, *, n_mc: int, seed: np.random.SeedSequence, tested: dict,
                    pairing: list[str], alpha: float, scale_run: Callable[[int], object] | None,
                    scale_rows: list[str], scale_joint: Callable[[object], list[str]] | None,
                    features=(), grp=None, perm_scale: float = 1.0, units=None, moot_perm: Collection[str] = (),
                    scale_moot: Callable[[object], Collection[str]] | None = None):
    """The Monte Carlo work of :func:`mcref.validate` under the sequential rule: the D that do not
    decide (normal, t(6), empirical: the comparison columns) at the fixed ``n_mc``, the
    permutation D and the scale tests in rounds (:func:`permutation_rounds`,
    :func:`scale_rounds`). ``tested``: the pairing rows (name → (index in ``sim_infos``, value
    tested, alternative, whether the permutation test decides the row)); ``pairing``: the names
    of the joint test's pairing part; ``moot_perm``, ``scale_moot(fit)``: the rows whose verdict the
    shape screens fix (their tests stop after the first round: :func:`run_rounds`).

    Returns ``(sim, sim_joint, fit, fit_joint, rounds)``: the :class:`mcref.Simulation` of every
    D (its permutation D with the repeats run), the same with the permutation D cut at the
    joint test's decision, the scale tests with each row's p at its decision and at the scale
    part's decision, and the :class:`Rounds`."""
    from ..reference import Simulation, simulate_prepared

    labels = [d.label for d in dists]
    perm = dists[labels.index("permutation")]
    others = [d for d in dists if d.kind != "permutation"]
    kw = dict(features=features, grp=grp, perm_scale=perm_scale, units=units)
    comp = simulate_prepared(sim_infos, prep, others, n_mc=n_mc, seed=seed, **kw) if others else None
    joint_alpha = 1.0 - math.sqrt(1.0 - alpha) if scale_joint is not None else alpha
    names = [i.name for i in sim_infos]
    jspec = None
    if pairing:
        idx = [names.index(s) for s in pairing]
        jspec = (idx, [tested[s][1] for s in pairing],
                 [sim_infos[i].alternative for i in idx])
    ptested = {nm: v for nm, v in tested.items() if v[3]}
    psamples, ptests = permutation_rounds(sim_infos, prep, perm, n_mc=n_mc, seed=seed,
                                          tested={nm: v[:3] for nm, v in ptested.items()}, joint=jspec,
                                          joint_alpha=joint_alpha, alpha=alpha, moot=moot_perm, **kw)
    fit = fit_joint = None
    stests: dict[str, SequentialTest] = {}
    n_scale = 0
    if scale_run is not None:
        fit, stests, fit_joint = scale_rounds(scale_run, n_max=n_mc, rows=scale_rows, joint=scale_joint,
                                              joint_alpha=joint_alpha, alpha=alpha, moot=scale_moot)
        n_scale = max((t.n for t in stests.values()), default=0)
    n_bins = comp.n_bins if comp is not None else prep.n_bins

    def sim_of(x: np.ndarray) -> Simulation:
        per = [x if d.kind == "permutation" else comp.samples[[o.label for o in others].index(d.label)]
               for d in dists]
        return Simulation(names=tuple(names), dists=tuple(dists), samples=tuple(per), n_bins=n_bins)

    jt = ptests.get("joint: pairing")
    rounds = Rounds(tests={**ptests, **stests}, n_perm=psamples.shape[1], n_scale=n_scale, n_max=n_mc,
                    perm_rows=tuple(ptested))
    return sim_of(psamples), sim_of(psamples[:, :jt.n] if jt is not None else psamples), fit, fit_joint, rounds


def sequential_work(sim_infos, prep, dists, n_mc: int, ss_sim, values: dict, boots: dict, screen, fit_run, alpha: float,
                    fixed=(), **kw):
    """The sequential rule's Monte Carlo work (:func:`validate_rounds`): which row each
    test decides, the joint verdict's pairing rows, the scale rows and the scale part's statistics.
    ``fixed``: the rows the permutation cannot change (:func:`mcref.verdict._testable.fixed_by_permutation`),
    neither tested nor in the joint test."""
    from ._joint import is_scale, row_feature, untestable
    from ..stats import info

    names = [i.name for i in sim_infos]
    scale_rows = [n for n in names if row_feature(n) is None and info(n).errors and (is_scale(n) or n == "RCE")]
    tested = {}
    for k, inf in enumerate(sim_infos):
        if not inf.errors or untestable(inf.name, "permutation") or inf.name in fixed:
            continue
        value = values[inf.name] if inf.name in values else boots[inf.name].estimate
        decides = row_feature(inf.name) is not None or (inf.reference is None and inf.name not in scale_rows)
        tested[inf.name] = (k, value, inf.alternative, decides)
    zs = [n for n in scale_rows if is_scale(n)]

    def scale_joint(fit) -> list[str]:  # the scale statistics the screens leave (as _joint_of)
        return [n for n in zs if not fit.unreliable.get(n, screen.unreliable(n))]

    def scale_moot(fit) -> set[str]:  # the scale rows the screens flag: unreliable whatever their p
        return {n for n in scale_rows if fit.unreliable.get(n, screen.unreliable(n))}

    moot_perm = {n for n in tested if row_feature(n) is None and screen.unreliable(n)}
    return validate_rounds(sim_infos, prep, dists, n_mc=n_mc, seed=ss_sim, tested=tested, pairing=list(tested),
                           alpha=alpha, scale_run=fit_run if scale_rows else None, scale_rows=scale_rows,
                           scale_joint=scale_joint if zs else None, moot_perm=moot_perm, scale_moot=scale_moot, **kw)


def row_simulation(sim, rounds: Rounds | None, name: str):
    """``sim`` with the permutation D cut to row ``name``'s own repeats (:meth:`Rounds.n_info`), so
    that the row's informational permutation columns do not depend on the rows beside it; ``sim``
    itself without rounds (the fixed test: every row reads the same N_MC repeats)."""
    labels = [d.label for d in sim.dists]
    if rounds is None or "permutation" not in labels:
        return sim
    i = labels.index("permutation")
    n = rounds.n_info(name)
    if sim.samples[i].shape[-1] == n:
        return sim
    from ..reference import Simulation

    per = tuple(x[:, :n] if j == i else x for j, x in enumerate(sim.samples))
    return Simulation(names=sim.names, dists=sim.dists, samples=per, n_bins=sim.n_bins)
