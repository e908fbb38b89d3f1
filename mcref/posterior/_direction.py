r"""The overall direction of :func:`mcref.posterior.from_posterior` (docs/methods.md, "Posteriors of
vector parameters", "The direction").

Directional statistics of the ranks, each computed from the fine counts of the check's functions
(the G bins of :mod:`mcref.kernels.posterior`, bin midpoints m_g = (g + ½)/G), so that the data and
the B swapped sets are computed alike and every p-value is exact against the same swapped sets:

* ``spread``: the mean over the d parameters of mean_i abs(m(u_ik) − ½) − ¼, pooled because a scale
  error is shared (> 0: ∪-shaped ranks, overconfident; < 0: ∩-shaped, underconfident);
* ``skew k``: the mean rank mean_i m(u_ik) − ½ of parameter k (> 0: biased low, < 0: biased high);
  per parameter because a bias is not shared;
* ``dependence`` (d ≥ 2, with projections): max over the pairs of abs(spread(z_a + z_b) − spread(z_a − z_b));
  a scale error moves the sum and the difference alike, a correlation error in opposite ways.

The two-sided p of a signed statistic is min(1, 2·min(p⁺, p⁻)) with p⁺ = (1 + #{T_b ≥ T_0})/(1 + B)
and p⁻ = (1 + #{T_b ≤ T_0})/(1 + B); ``dependence`` is one-sided (larger). The direction is read
only when the verdict rejects (the gate): among the statistics with p ≤ α, the one of largest
abs(z), z = (T_0 − mean_b T_b)/sd_b T_b decides; none: ``"wrong dependence"`` when the verdict's
non-parameter parts reject at α and its parameter parts do not, else ``"miscalibrated"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DirectionTest", "direction_tests", "grid_moments", "overall_direction"]


@dataclass(frozen=True)
class DirectionTest:
    """One directional statistic of the check: ``name``, observed ``statistic``, its ``z`` against the
    swapped sets' mean and sd, and its exact swap ``p`` (two-sided, one-sided for ``dependence``)."""

    name: str
    statistic: float
    z: float
    p: float


def grid_moments(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean rank − ½ and mean abs(u − ½) − ¼ from the fine counts (…, G), on the bins' midpoints."""
    G = counts.shape[-1]
    mid = (np.arange(G) + 0.5) / G
    c = counts.astype(np.float64)
    return c @ mid / n - 0.5, c @ np.abs(mid - 0.5) / n - 0.25


def _p_z(obs: float, sims: np.ndarray, two_sided: bool) -> tuple[float, float]:
    B = sims.size
    up = (1.0 + np.count_nonzero(sims >= obs)) / (1.0 + B)
    p = up
    if two_sided:
        p = min(1.0, 2.0 * min(up, (1.0 + np.count_nonzero(sims <= obs)) / (1.0 + B)))
    sd = float(sims.std())
    z = (obs - float(sims.mean())) / sd if sd > 0 else 0.0
    return float(p), float(z)


def direction_tests(lay, obs_counts: np.ndarray, sim_counts: np.ndarray, n: int) -> tuple[DirectionTest, ...]:
    """The directional statistics of the check (this module's docstring), observed counts (F, G)
    and the swapped sets' (B, F, G)."""
    so, po = grid_moments(obs_counts, n)
    ss, ps = grid_moments(sim_counts, n)
    par = lay.index("parameter")
    out = []
    t, s = float(po[par].mean()), ps[:, par].mean(axis=1)
    out.append(DirectionTest("spread", t, *_p_z(t, s, True)[::-1]))
    for k in par:
        t = float(so[k])
        out.append(DirectionTest(f"skew {lay.labels[k]}", t, *_p_z(t, ss[:, k], True)[::-1]))
    proj = lay.index("projection")
    if proj.size:
        t = float(np.abs(po[proj[0::2]] - po[proj[1::2]]).max())
        s = np.abs(ps[:, proj[0::2]] - ps[:, proj[1::2]]).max(axis=1)
        out.append(DirectionTest("dependence", t, *_p_z(t, s, False)[::-1]))
    return tuple(out)


def overall_direction(verdict: str, tests, joint, alpha: float) -> tuple[str, str | None]:
    """``(direction, parameter)``: ``"calibrated"`` when the verdict does not reject; else the
    significant directional test of largest abs(z) (``"overconfident"``, ``"underconfident"``,
    ``"biased high"`` or ``"biased low"`` with its parameter, ``"wrong dependence"``); else
    ``"wrong dependence"`` or ``"miscalibrated"`` from the verdict's parts."""
    if verdict != "invalid":
        return "calibrated", None
    sig = [t for t in tests if t.p <= alpha]
    if sig:
        best = max(sig, key=lambda t: abs(t.z))
        if best.name == "spread":
            return ("overconfident" if best.statistic > 0 else "underconfident"), None
        if best.name == "dependence":
            return "wrong dependence", None
        return ("biased low" if best.statistic > 0 else "biased high"), best.name[len("skew "):]
    par = any(p.p <= alpha for p in joint if p.kind == "parameter")
    other = any(p.p <= alpha for p in joint if p.kind != "parameter")
    return ("wrong dependence" if other and not par else "miscalibrated"), None
