"""The findings of :func:`mcref.posterior.from_posterior` in plain words (docs/methods.md,
"Posteriors of vector parameters": the directional tests)."""

from __future__ import annotations

import math

from scipy import special

__all__ = ["UNINFORMATIVE", "direction_of", "parameter_finding", "joint_findings"]

#: contraction below which a parameter's posterior reads "uninformative"
UNINFORMATIVE = 0.1


def _p_two_sided(z: float) -> float:
    return float(special.erfc(abs(z) / math.sqrt(2.0)))


def direction_of(skew_z: float, spread_z: float, level: float) -> str:
    """The direction of the ranks' departure, from the z-scores of the mean rank (skew) and of the
    mean |u − ½| (spread), each two-sided at ``level``: the larger significant |z| decides
    (``"calibrated"`` when neither is significant)."""
    sig = [(abs(z), name) for z, name in ((skew_z, "skew"), (spread_z, "spread")) if _p_two_sided(z) <= level]
    if not sig:
        return "calibrated"
    _, which = max(sig)
    if which == "spread":
        return "overconfident" if spread_z > 0 else "underconfident"
    return "biased low" if skew_z > 0 else "biased high"


_WORDS = {
    "overconfident": "overconfident: ∪-shaped ranks, the truth falls in the tails of the draws too often "
                     "(the posterior is too narrow)",
    "underconfident": "underconfident: ∩-shaped ranks, the truth falls near the middle of the draws too often "
                      "(the posterior is too wide)",
    "biased low": "biased low: the truth lies above the draws too often (mean rank {m:.3f} > 0.5)",
    "biased high": "biased high: the truth lies below the draws too often (mean rank {m:.3f} < 0.5)",
}


def parameter_finding(name: str, skew_z: float, spread_z: float, mean_u: float, swap_p: float,
                      level: float) -> tuple[str, str]:
    """``(direction, finding)`` of one parameter: the directional z-tests, each two-sided at ``level``
    (the check passes α once its verdict has rejected, the gate, else α/(2d): two tests per
    parameter, Bonferroni over the d parameters); without a direction, ``"miscalibrated"`` when
    its smaller swap p-value (KS, χ²) is ≤ ``level``, else ``"calibrated"``."""
    direction = direction_of(skew_z, spread_z, level)
    if direction != "calibrated":
        return direction, f"{name}: " + _WORDS[direction].format(m=mean_u)
    if swap_p <= level:
        return "miscalibrated", (f"{name}: miscalibrated without a clear direction (KS/chi2 swap p={swap_p:.3g}; "
                                 "see the ECDF curve)")
    return "calibrated", f"{name}: no departure found (at {level:.3g} per test)"


def joint_findings(verdict: str, rows, joint, projection, contraction, names, alpha: float,
                   dependence: bool = False) -> list[str]:
    """The check's findings: the directional parameters, the joint parts that reject (at α) while
    no parameter has a finding or the overall direction is a wrong dependence (``dependence``),
    and the uninformative parameters (contraction below ``UNINFORMATIVE``, with ``contraction``
    None when no prior was given)."""
    out = [r.finding for r in rows if r.direction != "calibrated"]
    bad = [p for p in joint if p.kind != "parameter" and p.p <= alpha]
    if bad and (dependence or not out):
        out = []
        what = ", ".join(f"{p.name} p={p.p:.3g}" for p in bad)
        out.append(f"the marginals look calibrated but the joint parts reject ({what}): the dependence between the "
                   "parameters is wrong" + (f"; most off along {projection}" if projection else ""))
    elif bad:
        out.append("joint parts that reject: " + ", ".join(f"{p.name} p={p.p:.3g}" for p in bad))
    if contraction is not None:
        low = [n for n, c in zip(names, contraction) if c < UNINFORMATIVE]
        if low and len(low) == len(names):
            out.append(("calibrated but uninformative" if verdict == "valid" else "uninformative")
                       + ": the posterior is about as wide as the prior (contraction "
                       + ", ".join(f"{c:.2f}" for c in contraction) + f" < {UNINFORMATIVE:g})")
        elif low:
            out.append("uninformative parameters (the posterior about as wide as the prior, contraction < "
                       f"{UNINFORMATIVE:g}): " + ", ".join(low))
    if not out:
        out.append("calibrated: no part rejects" if verdict == "valid" else "the verdict rejects (see the tests)")
    return out
