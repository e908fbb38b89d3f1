"""Sequential Monte Carlo tests (mcref._sequential; docs/methods.md, "Sequential Monte Carlo tests")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from mcref._sequential import SequentialTest, csm_stops


def test_csm_boundary_is_robbins_confidence_sequence():
    """The stopping rule is (n + 1)·Binom(S_n; n, α) ≤ ε, checked against scipy's pmf."""
    rng = np.random.default_rng(0)
    n = rng.integers(1, 5000, 400)
    s = (rng.random(400) * (n + 1)).astype(int)
    for alpha, eps in ((0.05, 1e-3), (0.025, 5e-4), (0.2, 0.05)):
        direct = (n + 1) * sps.binom.pmf(s, n, alpha) <= eps
        np.testing.assert_array_equal(csm_stops(n, s, alpha, eps), direct)


def _run(p: float, alternative: str, alpha: float, eps: float, n_max: int, rng, batch: int = 32):
    """One sequential test on a Bernoulli stream: θ_k ≥ θ̂ with probability p (and, for the
    two-sided test, θ_k ≤ θ̂ otherwise)."""
    t = SequentialTest(alternative, alpha, n_max, eps)
    while not t.decided:
        ge = int((rng.random(batch) < p).sum())
        t.update(ge, batch - ge, batch)
    return t


@pytest.mark.parametrize("p", [0.03, 0.045, 0.055, 0.08])
def test_resampling_risk_is_bounded_near_alpha(p):
    """Where p is near α (the hardest case), an early decision is wrong (p ≤ α decided when
    p > α, or the reverse) with probability at most ε: measured over 300 streams with ε = 0.05
    (a large ε, so that the bound can be checked with a few hundred streams), the wrong fraction
    is below ε + 3 binomial standard errors."""
    rng = np.random.default_rng(int(p * 1000))
    alpha, eps, trials = 0.05, 0.05, 300
    wrong = 0
    for _ in range(trials):
        t = _run(p, "greater", alpha, eps, 10**7, rng)
        assert t.early
        wrong += t.reject != (p <= alpha)
    assert wrong / trials <= eps + 3 * math.sqrt(eps * (1 - eps) / trials)


def test_far_from_alpha_stops_early():
    """p = 0.5 stops after the first batch; p = 0.001 well before the cap; both decide right."""
    rng = np.random.default_rng(1)
    t = _run(0.5, "greater", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is False and t.n == 32
    t = _run(0.001, "greater", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is True and t.n < 500
    t = _run(0.5, "two-sided", 0.05, 1e-3, 2000, rng)
    assert t.early and t.reject is False and t.n <= 64


def test_the_cap_takes_the_fixed_n_decision():
    """At p = α the CSM seldom stops; at the cap the decision is the fixed-N Monte Carlo test,
    (1 + S)/(1 + N) ≤ α, on the counts of exactly N repeats."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        t = _run(0.05, "greater", 0.05, 1e-3, 640, rng)
        if not t.early:
            assert t.n == 640
            assert t.reject == ((1 + t.n_ge) / 641 <= 0.05)
            assert t.p == (1 + t.n_ge) / 641 and t.se == pytest.approx(math.sqrt(t.p * (1 - t.p) / 640))


def test_two_sided_uses_both_sides_at_half_alpha():
    """A two-sided test rejects when one side is surely below α/2 (p_≤ small here), and its p is
    twice the smaller side."""
    rng = np.random.default_rng(3)
    t = _run(0.995, "two-sided", 0.05, 1e-3, 10**6, rng)  # θ_k ≥ θ̂ nearly always: θ̂ in the lower tail
    assert t.reject is True and t.p == min(1.0, 2 * (1 + t.n_le) / (1 + t.n))
    t = SequentialTest("two-sided", 0.05, 100)
    t.update(0, 0, 0)
    assert not t.decided


def test_a_decided_test_keeps_its_counts():
    t = SequentialTest("greater", 0.05, 10_000)
    t.update(16, 16, 32)
    assert t.decided and t.reject is False
    t.update(0, 32, 32)
    assert (t.n, t.n_ge) == (32, 16)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`alternative` must be one of"):
        SequentialTest("both", 0.05, 100)
    with pytest.raises(ValueError, match="`alpha` and `eps` must lie in"):
        SequentialTest("greater", 1.5, 100)
