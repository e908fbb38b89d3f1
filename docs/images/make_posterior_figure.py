"""Regenerate ``posterior_check.png`` (docs/guide/posterior.md): :func:`mcref.plots.plot_posterior`
of two toy posteriors of :func:`mcref.synthetic.gaussian_linear_posterior` (N = 500 simulations,
S = 200 draws, d = 3, seed 0): the exact posterior (top) and one with the right marginals and a
correlation of 0.6 between parameters 0 and 1 (bottom)::

    python docs/images/make_posterior_figure.py          # a few seconds
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from mcref.plots import plot_posterior  # noqa: E402
from mcref.posterior import from_posterior  # noqa: E402
from mcref.synthetic import gaussian_linear_posterior  # noqa: E402


def main() -> None:
    fig, axes = plt.subplots(2, 3, figsize=(13.5, 7.8))
    for row, (label, corr) in zip(axes, (("exact posterior", None), ("right marginals, correlation 0.6", 0.6))):
        truth, draws, ex = gaussian_linear_posterior(500, 200, d=3, corr=corr, seed=0)
        check = from_posterior(truth, draws, names=["θ0", "θ1", "θ2"], prior_draws=ex["prior_draws"], seed=0)
        plot_posterior(check, axes=row)
        row[0].set_title(f"{label}: {check.verdict} (p = {check.pvalue:.3g})\nSBC per parameter (N = 500, S = 200)",
                         fontsize=9)
    fig.suptitle("")
    fig.tight_layout()
    out = Path(__file__).with_name("posterior_check.png")
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
