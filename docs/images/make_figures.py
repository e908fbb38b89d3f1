"""Regenerate the figure of the README and the docs' front page (``benchmark_nine_sets.png``).

It is the summary figure of ``mcref demo`` / ``mcref bench --dataset all --html DIR``: the
nine built-in data sets of Pernot's papers, validated with the defaults (B = 5000 bootstrap
replicates, N_MC = 10 000 Monte Carlo repeats) under seed 0::

    python docs/images/make_figures.py          # about a minute on 2 cores
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import mcref  # noqa: E402


def main() -> None:
    res = mcref.benchmark("all", seed=0, progress=False)
    fig = res.plot()[0].figure
    out = Path(__file__).with_name("benchmark_nine_sets.png")
    fig.savefig(out, dpi=72)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
