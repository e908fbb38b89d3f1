"""plot_posterior draws what the check holds: each parameter's ECDF − t (mcref.uniformity on its
ranks), the joint ranks outside their band named, and TARP's ECP − α (matplotlib Agg)."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from mcref.calibration import uniformity  # noqa: E402
from mcref.plots import plot_posterior  # noqa: E402
from mcref.posterior import from_posterior  # noqa: E402
from mcref.synthetic import gaussian_linear_posterior  # noqa: E402


@pytest.fixture(scope="module")
def check():
    truth, draws, ex = gaussian_linear_posterior(400, 60, d=3, corr=0.8, seed=4)
    return from_posterior(truth, draws, names=["a", "b", "c"], prior_draws=ex["prior_draws"], n_swaps=19, seed=0)


def test_panels_hold_the_checks_curves(check):
    axes = plot_posterior(check)
    try:
        assert len(axes) == 3
        lines = {ln.get_label(): ln for ln in axes[0].get_lines()}
        for j, name in enumerate(check.names):
            u = uniformity(check.ranks[:, j], seed=0)
            key = name if u.inside else f"{name} (outside)"
            np.testing.assert_array_equal(lines[key].get_ydata(), u.deviation)
        named = [ln.get_label() for ln in axes[1].get_lines() if "(outside)" in ln.get_label()]
        outside = [k for k, v in check.joint_ranks.items() if k != "TARP" and not uniformity(v, seed=0).inside]
        assert named == [f"{k} (outside)" for k in outside] and outside  # ρ = 0.8 dropped: the pairs see it
        tarp = [ln for ln in axes[2].get_lines() if ln.get_label() == "ECP(α) − α"][0]
        np.testing.assert_array_equal(tarp.get_ydata(), check.tarp.ecp - check.tarp.alpha)
        assert check.verdict in axes[2].figure.texts[0].get_text()
    finally:
        plt.close("all")


def test_two_axes_skip_the_joint_panel(check):
    fig, axes = plt.subplots(1, 2)
    try:
        out = plot_posterior(check, axes=axes)
        assert out is axes and len(axes[1].get_lines()) == 2  # ECP − α and the zero line
    finally:
        plt.close(fig)
