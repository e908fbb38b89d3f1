"""Validate's budgets: how many Monte Carlo repeats and bootstrap replicates its defaults spend,
and from which M it leaves out the D that do not decide (docs/methods.md, "Large test sets")."""

from __future__ import annotations

from ..core._checks import check_int

__all__ = ["default_n_mc", "default_n_boot", "PAPER_N_MC", "PAPER_N_BOOT", "COMPARISON_MAX_M"]

#: N_MC of the papers (Pernot 2023, 2024), validate's default up to M = 2·10⁴ points (:func:`default_n_mc`)
PAPER_N_MC = 10_000
#: the least N_MC of validate's default, and its work budget M·N_MC per D beyond M = 2·10⁴
MIN_DEFAULT_N_MC, N_MC_BUDGET = 2_000, 200_000_000
#: B of the papers and validate's default up to M = 2·10⁵ points (:func:`default_n_boot`)
PAPER_N_BOOT = 5000
#: the least B of validate's default, and its work budget M·B beyond M = 2·10⁵
MIN_DEFAULT_N_BOOT, N_BOOT_BUDGET = 1000, 1_000_000_000
#: beyond this M, validate's default simulates only the D that decide (the permutation D)
COMPARISON_MAX_M = 100_000

def default_n_mc(m: int) -> int:
    r"""Validate's default number of Monte Carlo repeats N_MC for a dataset of ``m`` points.

    .. math::

        N_{MC}(M) = \min\left(10^4,\ \max\left(2000,\ 100\left\lfloor \frac{2\cdot 10^6}{M}
        \right\rfloor\right)\right)

    The papers' 10⁴ up to M = 2·10⁴ points (every published dataset: their tables are
    unchanged), then a budget of about 2·10⁸ element·repeats per D, and never fewer than
    2000. A cost decision, not a precision one: the Monte Carlo test is exact for any
    N_MC (Besag & Clifford 1989); at N_MC = 2000 a p-value near α = 0.05 has Monte Carlo
    standard error √(α(1 − α)/N_MC) = 0.0049, and u(θ_ref) = sd(θ_k)/√N_MC is 2.2 % of the
    statistic's own spread, whatever M (docs/methods.md, "Simulated references"). Pass
    ``n_mc=10_000`` for the papers' setting at any M.

    Examples
    --------
    >>> [default_n_mc(m) for m in (5_000, 20_000, 50_000, 100_000, 1_000_000)]
    [10000, 10000, 4000, 2000, 2000]
    """
    m = check_int(m, "m", minimum=1)
    return min(PAPER_N_MC, max(MIN_DEFAULT_N_MC, 100 * ((N_MC_BUDGET // 100) // m)))


def default_n_boot(m: int) -> int:
    r"""Validate's default number of bootstrap replicates B for a dataset of ``m`` points.

    .. math::

        B(M) = \min\left(5000,\ \max\left(1000,\ 100\left\lfloor \frac{2\cdot 10^7}{M}
        \right\rfloor\right)\right)

    The papers' 5000 up to M = 2·10⁵ points, then a budget of about 10⁹ element·replicates,
    and never fewer than 1000. The conditional rule decides no row by a BCa interval (the scale
    rows by their bootstrap-t, the others by permutation): B sets the precision of the reported
    interval ends, whose Monte Carlo standard deviation is about 2.7/√B of the statistic's own
    standard error at a 2.5 % end (normal case: √(0.025·0.975/B)/φ(1.96)), whatever M: 0.04 at
    B = 5000, 0.06 at 2000, 0.085 at 1000 (docs/methods.md, "Large test sets").

    Examples
    --------
    >>> [default_n_boot(m) for m in (10_000, 200_000, 500_000, 1_000_000, 10_000_000)]
    [5000, 5000, 2000, 1000, 1000]
    """
    m = check_int(m, "m", minimum=1)
    return min(PAPER_N_BOOT, max(MIN_DEFAULT_N_BOOT, 100 * ((N_BOOT_BUDGET // 100) // m)))
