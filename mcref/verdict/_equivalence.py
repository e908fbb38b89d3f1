"""Equivalence margins of :func:`mcref.validate` (``tolerance``; docs/methods.md, "Equivalence margins").

A verdict ``invalid`` says that the data show *some* miscalibration; at M = 10⁷ the intervals
are so narrow that any departure, however small, is shown. The equivalence question is the
other one: is the model calibrated **within a margin** δ that the user chose beforehand?

For a statistic θ with an equivalence region [L, U] around its calibrated value, the
hypotheses are H₀: θ ∉ (L, U) against H₁: θ ∈ (L, U) — two one-sided tests (TOST,
Schuirmann 1987), each at level α. By the interval-inclusion principle (Berger & Hsu 1996;
Wellek 2010, §3.1) TOST rejects H₀ at level α exactly when the 1 − 2α confidence interval
lies inside [L, U]; here that interval is the BCa interval of the row at level 1 − 2α,
computed from the **same** bootstrap replicates as its 95 % interval
(:func:`mcref.resampling._bootstrap.bca_interval_at`), and the TOST p-value is the larger of the two
one-sided p-values that the BCa intervals imply (:func:`mcref.resampling._bootstrap.bca_p_value`).
The binned discrepancies (ENCE, ZMSE, UCE: 0 when calibrated, ≥ 0) have only an upper
margin: a one-sided non-inferiority test (H₀: θ ≥ U), decided by the upper limit of the same
1 − 2α interval (the one-sided 1 − α bound).

δ is a relative error on the scale of u: the errors' actual spread σ = c·u with c ∈ [1 − δ,
1 + δ]. It maps to

* ZMS, VarZ (calibrated value 1; c²): [(1 − δ)², (1 + δ)²];
* RCE (0; 1 − c): [−δ, δ]; RCE2 (0; 1 − c²): [1 − (1 + δ)², 1 − (1 − δ)²];
* ENCE and ZMSE (binned discrepancies, biased upwards by the bins' noise: their calibrated
  value grows as √(N/M)): not an absolute bound on the statistic, which would mean something
  else at every M, but a Monte Carlo test against sets **at the margin**, simulated with the
  data's own M, u and bins and the data's error law (the empirical D): errors (1 + δ)·u·ε and
  (1 − δ)·u·ε. "Within" when θ̂ is below what such sets give, at level α: p = max over the two
  of (1 + #{θ*_k ≤ θ̂})/(1 + n) ≤ α (exact for each, Besag & Clifford 1989). Since E|RCE_b + a|
  is convex in a, a pure scale error of δ gives the smallest expected ENCE among the patterns
  whose mean per-bin error is δ: the least favourable configuration, so the test keeps its
  level against every such pattern (docs/methods.md, "Equivalence margins").

A dict ``{statistic: margin}`` gives per-statistic margins: the same δ for those statistics,
and an absolute margin m for the other statistics with a calibrated value: [ref − m, ref + m]
around the predefined reference (MZ, NLL, a registered statistic with a reference), ≤ m for
a discrepancy tested on its large side without one (UCE). CC, MSE, MV have no calibrated value
(CC's depends on the spread of u and on D): no margin.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ..resampling._bootstrap import BootstrapResult, bca_interval_at, bca_p_value
from ..stats import STATISTICS, info

__all__ = ["RELATIVE_MARGINS", "SIMULATED_MARGINS", "N_MARGIN", "n_margin", "check_tolerance", "margin_region",
           "margin_sampler", "with_margins", "WITHIN", "NOT_SHOWN"]

#: the statistics whose margin is the relative error δ of the scale of u, and their region of δ
RELATIVE_MARGINS = {
    "ZMS": lambda d: ((1 - d) ** 2, (1 + d) ** 2),
    "VarZ": lambda d: ((1 - d) ** 2, (1 + d) ** 2),
    "RCE": lambda d: (-d, d),
    "RCE2": lambda d: (1 - (1 + d) ** 2, 1 - (1 - d) ** 2),
    "ENCE": lambda d: (-math.inf, d),
    "ZMSE": lambda d: (-math.inf, 2 * math.log1p(d)),
}
#: the binned statistics whose margin is tested against sets simulated at the margin (not by their interval)
SIMULATED_MARGINS = ("ENCE", "ZMSE")
#: sets simulated per side of the margin (at most; fewer above 10⁵ points: :func:`n_margin`)
N_MARGIN = 1000
#: a row's equivalence: shown within its margin, or not shown (which is not "shown outside")
WITHIN, NOT_SHOWN = "within", "not shown"
ACCEPTED = ("a number delta in (0, 1) (the relative error of the scale of u allowed to ZMS, VarZ, RCE, RCE2, "
            "ENCE, ZMSE), or a dict {statistic: margin > 0}")


def _number(v: Any, what: str, *, below_one: bool) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
        raise ValueError(f"`tolerance`{what} must be a number, got {v!r}; accepted: {ACCEPTED}")
    x = float(v)
    if not (x > 0 and math.isfinite(x)) or (below_one and not x < 1):
        rng = "in (0, 1) (a relative error of the scale of u: 1 would allow u off by 100 %)" if below_one else "> 0"
        raise ValueError(f"`tolerance`{what} must be {rng}, got {x}; accepted: {ACCEPTED}")
    return x


def check_tolerance(tolerance, names: Sequence[str], alpha: float) -> dict[str, float] | None:
    """``tolerance`` of :func:`mcref.validate` as ``{statistic: margin}`` over the table's
    statistics ``names`` (None: no equivalence test), or a one-line ``ValueError`` naming what
    is wrong and what is accepted."""
    if tolerance is None:
        return None
    if not alpha < 0.5:
        raise ValueError(f"`tolerance` needs `alpha` < 0.5 (the equivalence test reads the 1 - 2*alpha "
                         f"interval), got alpha={alpha}")
    if isinstance(tolerance, dict):
        if not tolerance:
            raise ValueError(f"`tolerance` is an empty dict; accepted: {ACCEPTED}")
        out = {}
        for key, v in tolerance.items():
            try:
                nm = info(key).name
            except ValueError:
                raise ValueError(f"`tolerance`: unknown statistic {key!r}; known statistics: "
                                 f"{', '.join(STATISTICS)}") from None
            if nm not in names:
                raise ValueError(f"`tolerance`: {nm} is not among the table's statistics ({', '.join(names)}); "
                                 "add it to `stats` or leave it out of `tolerance`")
            inf = info(nm)
            if nm not in RELATIVE_MARGINS and inf.reference is None and inf.alternative != "greater":
                raise ValueError(f"`tolerance`: {nm} has no calibrated value (its value under calibration depends "
                                 "on u and on D), so no equivalence margin; margins go to ZMS, VarZ, RCE, RCE2, "
                                 "ENCE, ZMSE, UCE and statistics with a predefined reference")
            out[nm] = _number(v, f"[{key!r}]", below_one=nm in RELATIVE_MARGINS)
        return out
    delta = _number(tolerance, "", below_one=True)
    out = {n: delta for n in names if n in RELATIVE_MARGINS}
    if not out:
        raise ValueError(f"`tolerance`={delta:g} gives margins to ZMS, VarZ, RCE, RCE2, ENCE, ZMSE, and `stats` "
                         f"({', '.join(names)}) has none of them; pass a dict {{statistic: margin}} for the others")
    return out


def margin_region(name: str, margin: float, reference: float | None) -> tuple[float, float]:
    """The equivalence region [L, U] of statistic ``name`` (L = −inf: an upper margin only)."""
    if name in RELATIVE_MARGINS:
        return RELATIVE_MARGINS[name](margin)
    if reference is not None:
        return reference - margin, reference + margin
    return -math.inf, margin


def _equivalent(row, b: BootstrapResult, margin: float, alpha: float):
    """``row`` with its margin, its 1 − 2α interval, the TOST p-value and the result."""
    lo_m, hi_m = margin_region(row.name, margin, row.reference)
    lo, hi = bca_interval_at(b, 1.0 - 2.0 * alpha)
    p = bca_p_value(b, hi_m, "upper")
    if math.isfinite(lo_m):
        p = max(p, bca_p_value(b, lo_m, "lower"))
    ok = lo_m <= lo and hi <= hi_m if math.isfinite(lo_m) else hi <= hi_m
    # a row the shape screen flags: its bootstrap interval cannot be trusted, so neither can this
    res = "unreliable" if row.shape_flag else WITHIN if ok else NOT_SHOWN
    return replace(row, margin=(lo_m, hi_m), equiv_low=lo, equiv_high=hi, p_equiv=p, equivalence=res)


def n_margin(m: int, n_mc: int) -> int:
    """Sets simulated per side of a simulated margin: :data:`N_MARGIN` (or ``n_mc`` if fewer) up to
    10⁵ points, then 200 (the p-value's floor 1/201 stays well below α = 0.05)."""
    return max(1, min(n_mc, N_MARGIN if m <= 100_000 else 200))


def _simulated_equivalent(row, b: BootstrapResult, delta: float, alpha: float, at_margin):
    """``row`` with the Monte Carlo test of its margin: ``at_margin(name, c)`` gives the statistic on
    sets whose errors are c·u·ε (c = 1 ± δ, the data's M, u, bins and error law)."""
    p, crit = 0.0, math.inf
    for c in (1.0 + delta, 1.0 - delta):
        theta = np.asarray(at_margin(row.name, c), dtype=np.float64)
        p = max(p, (1.0 + np.count_nonzero(theta <= row.estimate)) / (1.0 + theta.size))
        crit = min(crit, float(np.quantile(theta, alpha)))
    lo, hi = bca_interval_at(b, 1.0 - 2.0 * alpha)  # shown beside, for reading; the test is the simulation's
    res = "unreliable" if row.shape_flag else WITHIN if p <= alpha else NOT_SHOWN
    return replace(row, margin=(-math.inf, crit), equiv_low=lo, equiv_high=hi, p_equiv=p, equivalence=res)


def margin_sampler(infos, prep, E: np.ndarray, u: np.ndarray, n_mc: int, ss_margin):
    """``at_margin(name, c)`` of :func:`with_margins`: statistic ``name`` on :func:`n_margin` sets
    with errors c·u·ε, ε from the data's own standardized Z (the empirical D), with the data's u
    and bins (``prep``); the two sides of a margin share their random numbers. None without
    ``ss_margin`` (no margins asked)."""
    if ss_margin is None:
        return None
    from ..generative import get_distribution
    from ..kernels.rng import fresh
    from ..reference import simulate_prepared

    by_name = {i.name: i for i in infos}
    seeds = dict(zip(sorted(by_name), ss_margin.spawn(len(by_name))))
    emp = get_distribution("empirical", Z=E / u)

    def at_margin(name: str, c: float) -> np.ndarray:
        sim = simulate_prepared([by_name[name]], prep, [emp], n_mc=n_margin(E.size, n_mc), seed=fresh(seeds[name]),
                                u_scale2=1.0 / (c * c))
        return sim.samples[0, 0]

    return at_margin


def with_margins(rows: list, boots: dict[str, BootstrapResult], margins: dict[str, float] | None,
                 alpha: float, at_margin=None) -> list:
    """The rows of :func:`mcref.validate`, each statistic of ``margins`` with its equivalence test
    (a no-op without margins: the table is the same, bit for bit). ``at_margin(name, c)``: the
    statistic on sets simulated at the margin (errors c·u·ε), for :data:`SIMULATED_MARGINS`; without
    it those rows fall back to their interval (the test of a user's statistic)."""
    if not margins:
        return rows
    out = []
    for r in rows:
        if r.name not in margins or r.name not in boots:
            out.append(r)
        elif r.name in SIMULATED_MARGINS and at_margin is not None:
            out.append(_simulated_equivalent(r, boots[r.name], margins[r.name], alpha, at_margin))
        else:
            out.append(_equivalent(r, boots[r.name], margins[r.name], alpha))
    return out
