r"""Sequential Monte Carlo tests with a uniformly bounded resampling risk (docs/methods.md,
"Sequential Monte Carlo tests").

A Monte Carlo test compares the data's statistic θ̂ with simulated θ_1, θ_2, … and its verdict
asks one question: is the p-value p = P(θ* at least as extreme as θ̂) at most α? For most
datasets p is far from α after a few dozen repeats. The **confidence sequence method** (CSM;
Ding, Gandy & Hahn 2020, on Robbins' 1970 confidence sequence for a binomial proportion)
stops at the first n at which

.. math::

    (n + 1)\binom{n}{S_n}\alpha^{S_n}(1 - \alpha)^{n - S_n} \le \varepsilon,
    \qquad S_n = \#\{k \le n: \theta_k \text{ at least as extreme as } \hat\theta\},

i.e. as soon as α has left the confidence sequence
:math:`\{q: (n+1)\binom{n}{S_n}q^{S_n}(1-q)^{n-S_n} > \varepsilon\}`, which holds p at every n
at once with probability ≥ 1 − ε; it then decides p ≤ α when S_n/n < α, else p > α. Whatever
p is, the decision differs from the one an infinite simulation would take with probability at
most ε (the *resampling risk*), and the check may be made after any batch of repeats, not
only after each one (the confidence sequence is uniform in n).

mcref caps the repeats at the fixed N_MC of the test (``n_max``): a test not decided by then
takes the fixed-N Monte Carlo decision (1 + S)/(1 + N) ≤ α, so the sequential test never costs
more than the fixed one and, where it does not stop early, equals it. A two-sided test
(p = min(1, 2·min(p_≥, p_≤))) runs one CSM per side at α/2, each with risk ε/2.

Pure Python on counts: the Monte Carlo kernels stay as they are; the caller runs the repeats
in fixed chunks (so a stopped run is the first chunks of a full one) and feeds the counts.

References
----------
.. [1] D. Ding, A. Gandy and G. Hahn, "A simple method for implementing Monte Carlo tests",
   Computational Statistics 35, 1373–1392 (2020). https://doi.org/10.1007/s00180-019-00927-6
.. [2] H. Robbins, "Statistical methods related to the law of the iterated logarithm",
   Ann. Math. Statist. 41, 1397–1409 (1970).
.. [3] A. Gandy, "Sequential implementation of Monte Carlo tests with uniformly bounded
   resampling risk", J. Am. Stat. Assoc. 104, 1504–1511 (2009).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

__all__ = ["RESAMPLING_RISK", "csm_stops", "SequentialTest"]

#: ε, the default bound on the probability that a sequential decision differs from the ideal one
RESAMPLING_RISK = 1e-3
ALTERNATIVES = ("two-sided", "greater", "less")


def csm_stops(n, s, alpha: float, eps: float = RESAMPLING_RISK) -> np.ndarray:
    r"""Whether the CSM stops after ``n`` repeats with ``s`` exceedances:
    :math:`\ln(n+1) + \ln\binom{n}{s} + s\ln\alpha + (n-s)\ln(1-\alpha) \le \ln\varepsilon`.

    Examples
    --------
    >>> bool(csm_stops(32, 16, 0.05)), bool(csm_stops(32, 2, 0.05))   # p near 0.5 decided; near α not
    (True, False)
    """
    n = np.asarray(n, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    log_pmf = gammaln(n + 1) - gammaln(s + 1) - gammaln(n - s + 1) + s * math.log(alpha) + (n - s) * math.log1p(-alpha)
    return (n > 0) & (np.log1p(n) + log_pmf <= math.log(eps))


@dataclass
class SequentialTest:
    """One Monte Carlo test run sequentially: feed the counts of each batch of repeats with
    :meth:`update` until :attr:`decided`.

    Attributes
    ----------
    alternative : {"greater", "less", "two-sided"}
        Which simulated values count as at least as extreme as θ̂: ``θ_k ≥ θ̂`` (greater),
        ``θ_k ≤ θ̂`` (less), either side at α/2 (two-sided).
    alpha : float
        The level of the verdict.
    n_max : int
        The cap: the fixed N_MC whose decision is taken when the CSM has not stopped by then.
    eps : float
        The resampling risk ε.
    n, n_ge, n_le : int
        Repeats counted so far and, among them, those ≥ θ̂ and ≤ θ̂ (frozen at the decision).
    reject : bool or None
        The decision p ≤ α, None while undecided.
    early : bool
        The CSM stopped before ``n_max`` (False: the fixed-N decision at ``n_max``).
    moot : bool
        Stopped by :meth:`settle`: the row's verdict does not depend on this test, which was
        not run to a decision of its own (``reject`` is then the Monte Carlo decision of the
        repeats run, for information).
    """

    alternative: str
    alpha: float
    n_max: int
    eps: float = RESAMPLING_RISK
    n: int = 0
    n_ge: int = 0
    n_le: int = 0
    reject: bool | None = None
    early: bool = False
    moot: bool = False

    def __post_init__(self) -> None:
        if self.alternative not in ALTERNATIVES:
            raise ValueError(f"`alternative` must be one of {', '.join(ALTERNATIVES)}, got {self.alternative!r}")
        if not 0.0 < self.alpha < 1.0 or not 0.0 < self.eps < 1.0:
            raise ValueError(f"`alpha` and `eps` must lie in (0, 1), got {self.alpha} and {self.eps}")

    @property
    def decided(self) -> bool:
        return self.reject is not None

    def _sides(self) -> list[tuple[int, float, float]]:
        """(count, level, risk) of each one-sided CSM the test runs."""
        if self.alternative == "greater":
            return [(self.n_ge, self.alpha, self.eps)]
        if self.alternative == "less":
            return [(self.n_le, self.alpha, self.eps)]
        return [(self.n_ge, self.alpha / 2, self.eps / 2), (self.n_le, self.alpha / 2, self.eps / 2)]

    def update(self, n_ge: int, n_le: int, n: int) -> bool:
        """Add a batch of ``n`` repeats, ``n_ge`` of them ≥ θ̂ and ``n_le`` ≤ θ̂ (cumulative
        counts are kept here), and decide if the CSM stops or ``n_max`` is reached. Returns
        :attr:`decided`; a decided test ignores later batches (its p is that of its decision)."""
        return self.observe(self.n_ge + int(n_ge), self.n_le + int(n_le), self.n + int(n))

    def observe(self, n_ge: int, n_le: int, n: int) -> bool:
        """Set the cumulative counts after ``n`` repeats (:meth:`update` adds a batch) and decide
        as :meth:`update` does; for a statistic whose pool is recomputed as it grows (a joint
        test's combination), the counts of the whole pool at ``n``."""
        if self.decided:
            return True
        self.n, self.n_ge, self.n_le = int(n), int(n_ge), int(n_le)
        stops = [bool(csm_stops(self.n, s, a, e)) for s, a, e in self._sides()]
        below = [s < a * self.n for s, a, _ in self._sides()]  # the sequence lies below that side's level
        if any(st and b for st, b in zip(stops, below)):  # one side surely at most its level: p <= alpha
            self.reject, self.early = True, self.n < self.n_max
        elif all(st and not b for st, b in zip(stops, below)):  # every side surely above: p > alpha
            self.reject, self.early = False, self.n < self.n_max
        elif self.n >= self.n_max:  # the cap: the fixed-N Monte Carlo decision
            self.reject = self.p <= self.alpha
        return self.decided

    def observe_p(self, p: float, n: int) -> bool:
        """:meth:`observe` from a p-value of ``n`` repeats written as :meth:`p` writes it (a test
        that gives its p, not its counts; :meth:`counts_of_p`)."""
        return self.observe(*self.counts_of_p(p, n), n)

    def counts_of_p(self, p: float, n: int) -> tuple[int, int]:
        """The counts ``(n_ge, n_le)`` of a p-value of ``n`` repeats written as :meth:`p` writes it:
        the count of the side that p reads, S = p(1 + n) − 1 (two-sided: p/2 for the smaller side,
        both sides at least that)."""
        half = p / 2.0 if self.alternative == "two-sided" else p
        s = max(0, int(round(half * (1.0 + n) - 1.0)))
        big = int(n)  # the other side(s), when p tells only the smaller one
        return (s if self.alternative != "less" else big), (s if self.alternative != "greater" else big)

    def settle(self, n_ge: int, n_le: int, n: int) -> None:
        """Stop at the cumulative counts of ``n`` repeats without a sequential decision: the row's
        verdict does not depend on this test (a row the shape screen flags unreliable), so no
        further repeats are run for it. ``reject`` is the Monte Carlo decision p ≤ α of those
        repeats, :attr:`moot` True; a decided test is left as it is."""
        if self.decided:
            return
        self.n, self.n_ge, self.n_le = int(n), int(n_ge), int(n_le)
        self.reject, self.moot = self.p <= self.alpha, True

    @property
    def p(self) -> float:
        r"""The Monte Carlo p-value of the repeats counted, :math:`(1 + S)/(1 + n)` (two-sided:
        twice the smaller side, at most 1): the convention of :meth:`mcref.Simulation.p_value`."""
        pg = (1.0 + self.n_ge) / (1.0 + self.n)
        pl = (1.0 + self.n_le) / (1.0 + self.n)
        if self.alternative == "greater":
            return pg
        if self.alternative == "less":
            return pl
        return min(1.0, 2.0 * min(pg, pl))

    @property
    def se(self) -> float:
        """Monte Carlo standard error of :attr:`p`, √(p(1 − p)/n)."""
        p = self.p
        return math.sqrt(p * (1.0 - p) / self.n) if self.n else float("nan")
