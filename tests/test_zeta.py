"""ζ-scores (docs/methods.md, "ζ-scores"): closed forms on hand-made cases."""

from __future__ import annotations

import math

import pytest

from mcref.resampling._zeta import zeta, zeta_sim2


def test_reference_inside_interval_gives_abs_zeta_at_most_1():
    # θ=1.1 above ref 1.0 → lim = low = 0.95: ζ = 0.1/0.15
    assert zeta(1.1, 1.0, 0.95, 1.3) == pytest.approx(0.1 / 0.15)
    # θ below ref → lim = high
    assert zeta(0.9, 1.0, 0.8, 1.2) == pytest.approx(-0.1 / 0.3)


def test_equivalence_with_interval_membership():
    for ref in [0.5, 0.94, 0.95, 0.96, 1.29, 1.3, 1.31, 2.0]:
        z = zeta(1.1, ref, 0.95, 1.3)
        assert (abs(z) <= 1 + 1e-12) == (0.95 <= ref <= 1.3), ref


def test_u_ref_term():
    # ζ = (θ − ref)/sqrt((θ − lim)² + (2 u_ref)²)
    assert zeta(1.1, 1.0, 1.05, 1.3, u_ref=0.01) == pytest.approx(0.1 / math.sqrt(0.05**2 + 0.02**2))


def test_sim2_swaps_roles():
    # I_D = [0.9, 1.05] around ref = 1.0; estimate 1.1 above it: ζ = (1.1-1.0)/(1.05-1.0) = 2
    assert zeta_sim2(1.1, 1.0, 0.9, 1.05) == pytest.approx(2.0)
    assert zeta_sim2(0.95, 1.0, 0.9, 1.05) == pytest.approx(-0.5)


def test_zero_width_and_equal():
    assert zeta(1.0, 1.0, 1.0, 1.0) == 0.0
    assert zeta(1.1, 1.0, 1.1, 1.1) == math.inf
    assert zeta(0.9, 1.0, 0.9, 0.9) == -math.inf


@pytest.mark.parametrize("args, match", [((1, 1, 2, 1), "low"), ((math.nan, 1, 0, 2), "estimate"),
                                         ((1, "a", 0, 2), "reference")])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        zeta(*args)
    with pytest.raises(ValueError, match="u_ref"):
        zeta(1, 1, 0, 2, u_ref=-1)
