"""Which rows of a validation table the data and the permutation D can test (docs/methods.md,
"Verdicts" and "Dependent test sets").

A row is ``not testable``, with its reason, when

* the data cannot define it: one u for every point (CC and the rows binned on u), one |E| (CC);
* it is a function of u alone (MV): every simulated set has the data's own value;
* its permutation reference cannot vary, so a Monte Carlo p-value would only rank rounding noise.
  Two checks: **by construction** (:func:`fixed_by_permutation`: the permutation by units of
  ``groups=`` leaves the statistic unchanged, decided from the units before any repeat is run)
  and **by measurement** (:func:`degenerate`: the simulated values span no more than a relative
  1e-9 of their size, a safety net for what the first check does not foresee).

A row that is not testable gets no p-value and leaves the joint verdict.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._joint import row_feature, untestable

__all__ = ["U_ONLY_REASON", "CONSTANT_U_REASON", "CONSTANT_ABS_E_REASON", "NO_Z_MOVES_REASON", "X_FIXED_REASON",
           "DEGENERATE_TOLERANCE", "untestable_data", "fixed_by_permutation", "degenerate", "degenerate_rows",
           "invariant_reference", "untestable_row", "not_testable"]

U_ONLY_REASON = ("a function of u alone (MV = <u^2>): every simulated dataset has the data's own value, so no "
                 "test can reject it; the errors enter through MSE and RCE")
CONSTANT_U_REASON = ("all u are equal (one sigma for every point), so there are no ranks of u to correlate and "
                     "no bins of u to compare; ZMS, RCE and the rows of features x test this model")
CONSTANT_ABS_E_REASON = ("all |E| are equal, so there are no ranks of |E| to correlate with u; the other rows test "
                         "this model")
#: groups whose sizes are all different, permuted by whole Z-vectors within sizes: nothing moves
NO_Z_MOVES_REASON = ("every group has a size of its own and the groups' u-levels follow their sizes, so the "
                     "permutation by whole groups (Z-vectors among groups of equal size) has nothing to permute: "
                     "its reference would be the data's own value")
#: groups of unequal sizes, each size held by one group: only u-levels move, each row keeps its Z and its x
X_FIXED_REASON = ("every group has a size of its own, so the permutation by groups can only exchange the groups' "
                  "u-levels: each row keeps its Z and its x, the pairing of Z with x is the data's own in every "
                  "repeat (a ZMSE over bins of x would not vary at all) and adaptivity cannot be tested; groups "
                  "with sizes in common, or no groups, make these rows testable")
#: the relative spread of a permutation reference at or below which it does not vary (:func:`degenerate`)
DEGENERATE_TOLERANCE = 1e-9


def untestable_data(infos, E: np.ndarray, u: np.ndarray) -> dict[str, str]:
    """The rows the data cannot define, each with its reason: with one u, CC and the rows binned on
    u; with one |E|, CC (its ranks of |E| are all tied)."""
    out = {}
    for i in infos:
        if (i.binned or i.kind == "rank") and np.all(u == u[0]):
            out[i.name] = CONSTANT_U_REASON
        elif i.kind == "rank" and np.all(np.abs(E) == abs(E[0])):
            out[i.name] = CONSTANT_ABS_E_REASON
    return out


def fixed_by_permutation(names, units) -> dict[str, str]:
    """The pairing rows among ``names`` that the permutation by ``units``
    (:class:`mcref.core._dependence.Units`; None: independent rows) leaves unchanged, each with its
    reason, decided from the units alone (docs/methods.md, "Dependent test sets"):

    * groups permuted by whole Z-vectors among groups of equal size (no u-levels), every group of
      a size of its own: no Z moves, every pairing row (:data:`NO_Z_MOVES_REASON`);
    * groups of unequal sizes with u-levels exchanged, every group of a size of its own: u moves, Z
      and x do not, so the rows over bins of a feature (:data:`X_FIXED_REASON`).

    Independent rows and blocks along an order (at least two full blocks) always move Z."""
    if units is None or units.kind != "groups" or units.n_classes < units.n_perm_units:
        return {}
    rows = [n for n in names if not untestable(n, "permutation")]
    if units.levels is None:
        return {n: NO_Z_MOVES_REASON for n in rows}
    return {n: X_FIXED_REASON for n in rows if row_feature(n) is not None}


def degenerate(x: np.ndarray, tol: float = DEGENERATE_TOLERANCE) -> bool:
    """Whether the simulated values ``x`` of one statistic do not vary: their range is at most
    ``tol`` times their largest magnitude (0 when all are 0), so they differ only by the rounding
    of their sums."""
    x = np.asarray(x, dtype=np.float64)
    return bool(x.size and np.ptp(x) <= tol * np.max(np.abs(x)))


def degenerate_rows(sim, names, n_of=None) -> dict[str, str]:
    """The pairing rows among ``names`` whose permutation reference in ``sim`` (a
    :class:`mcref.Simulation` with the permutation D) does not vary (:func:`degenerate`), each with
    its reason; ``n_of(name)``: the row's own repeats (the sequential rounds, :meth:`Rounds.n_info`),
    all of them when None."""
    labels = [d.label for d in sim.dists]
    if "permutation" not in labels:
        return {}
    s = sim.samples[labels.index("permutation")]
    out = {}
    for n in names:
        if untestable(n, "permutation") or n not in sim.names:
            continue
        x = s[sim.names.index(n)]
        if n_of is not None:
            x = x[:n_of(n)]
        if degenerate(x):
            out[n] = (f"its permutation reference does not vary (range {np.ptp(x):.1g} over {x.size} repeats, at "
                      f"most {DEGENERATE_TOLERANCE:g} of its size): the permutation leaves the statistic unchanged, "
                      "so a p-value would rank rounding noise")
    return out


def invariant_reference(ref, estimate: float):
    """The reference of a statistic under a D that leaves it unchanged (ZMS under the permutation D,
    :func:`mcref.verdict._joint.untestable`): the estimate itself, with no spread. The simulated values equal
    it up to the rounding of their sums, and ζ-scores of that rounding noise against an interval of
    zero width are noise (ζ_Sim2 printed −0.333 where it is 0); its p-value is 1 by the same rule."""
    return replace(ref, mean=estimate, se=0.0, low=estimate, high=estimate, sd=0.0)


def untestable_row(name: str, labels, reason: str, alternative: str):
    """The row of a statistic the data cannot define: NaN everywhere, ``not testable`` with ``reason``."""
    from ._table import ValidationRow

    nan = float("nan")
    return ValidationRow(
        name=name, estimate=nan, bias=nan, low=nan, high=nan, interval_method="none", reference=None, zeta_bs=None,
        sim={}, zeta_sim={d: nan for d in labels}, zeta_sim2={d: nan for d in labels}, sensitivity=[],
        d_sensitive=False, shape_flag=False, verdict="not testable", test="none", p_test=None, p_sim={}, p_se={},
        alternative=alternative, verdict_paper="not testable", excludes_estimate=False, reason=reason,
    )


def not_testable(row, reason: str):
    """``row`` whose permutation reference cannot vary (:func:`fixed_by_permutation`,
    :func:`degenerate_rows`): a row decided by the permutation test becomes ``not testable`` with
    ``reason`` (its estimate and the other D's columns stay); a row decided by another test (RCE by
    its bootstrap-t) keeps its verdict. Either way the permutation D's p-value is NaN."""
    nan = float("nan")
    p_sim = {**row.p_sim, "permutation": nan} if "permutation" in row.p_sim else row.p_sim
    p_se = {**row.p_se, "permutation": nan} if "permutation" in row.p_se else row.p_se
    if row.test != "permutation":
        return replace(row, p_sim=p_sim, p_se=p_se)
    return replace(row, verdict="not testable", test="none", p_test=None, n_test=None, p_sim=p_sim, p_se=p_se,
                   reason=reason, verdict_paper="not testable" if row_feature(row.name) else row.verdict_paper)
