"""The forest plot of a benchmark run (:func:`plot_benchmark`, re-exported by :mod:`mcref.plots`;
matplotlib, the ``plot`` extra)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._mpl import pyplot
from ._render import n_boot_text, n_mc_text

__all__ = ["plot_benchmark", "VERDICT_STYLE", "FINDING_LABELS", "min_font_pt"]

#: colour and marker of each verdict in the benchmark figure and report (colour-blind safe pairs)
VERDICT_STYLE = {
    "valid": ("#2166ac", "o"),
    "invalid": ("#b2182b", "X"),
    "unreliable": ("#e08214", "D"),
    "not testable": ("#6f6f6f", "s"),
}


def _band_dist(dists: Sequence[str], rule: str = "conditional") -> str:
    """The D whose simulated band is drawn: the one that decides the consistency rows."""
    if rule == "conditional" and "permutation" in dists:
        return "permutation"
    return "empirical" if "empirical" in dists else dists[0]


def plot_benchmark(result, *, ax=None):
    """Forest plot of a :class:`mcref.BenchmarkResult`: one panel per statistic (three to a row of
    panels, the figure 11 in wide whatever their number, so that its smallest text, 8.5 pt, stays
    readable where a page shows it), one line per dataset.

    Each row shows the estimate with its BCa 95 % interval, coloured (and shaped) by its
    verdict, against its reference: the predefined value (dashed line, or a black tick when
    it differs between datasets), or for a simulated reference its mean (black tick) and
    the central 95 % (2.5–97.5 %) of the statistic simulated on calibrated data (grey band)
    under the D that decides it: the permutation D (the data's Z shuffled across u) under
    the default conditional rule, else the empirical D (the first D when neither was run).
    The verdict of a simulated-reference statistic is its Monte Carlo or permutation test
    (``docs/methods.md``, "Verdicts"): two-sided for CC, so an estimate outside the band is invalid; one-sided
    for ENCE, ZMSE, UCE (large is bad), so an estimate above the 95th percentile, the top
    sliver of the band, is invalid too. The colour always shows the verdict, which the legend
    words as the finding of the property each panel tested (its title): passes (calibrated,
    consistent, adaptive) or fails (docs/methods.md, "Words of the reports").

    Parameters
    ----------
    result : BenchmarkResult
    ax : sequence of matplotlib Axes, optional
        One Axes per statistic (a single Axes for one statistic). Default: a new figure
        sized for the number of datasets.

    Returns
    -------
    numpy.ndarray of Axes
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    plt = pyplot()
    t = result.table
    stats = list(result.stats)
    names = [d.name for d in result.datasets]
    n = len(names)
    band_d = _band_dist(result.dists, result.options.get("rule", "mc"))
    if ax is None:
        fig, axes = _grid(plt, len(stats), n)
        own = True
    else:
        axes = np.atleast_1d(np.asarray(ax, dtype=object))
        if axes.size != len(stats):
            raise ValueError(f"`ax` must hold one Axes per statistic ({len(stats)}), got {axes.size}")
        fig = axes[0].figure
        own = False
    ypos = {name: n - 1 - i for i, name in enumerate(names)}
    label_size = 9 if n <= 30 else 8
    ncols = min(len(stats), PANELS_PER_ROW) if own else len(stats)
    for k, (a, s) in enumerate(zip(axes, stats)):
        sub = t[t["stat"] == s]
        for i in range(n):
            if i % 2 == 0:
                a.axhspan(n - 1 - i - 0.5, n - 1 - i + 0.5, color="0.95", lw=0, zorder=0)
        refs = sub["reference"].to_numpy(dtype=float)
        predefined = np.isfinite(refs)
        common = predefined.all() and np.all(refs == refs[0]) if refs.size else False
        tested = f", {sub['tested'].iloc[0]}" if "tested" in sub and len(sub) else ""  # the property it tested
        # two lines, so that a title stays within its panel when three share a row
        if common:
            a.axvline(refs[0], color="0.25", ls="--", lw=1, zorder=1)
            title = f"{s}{tested}\n(reference {refs[0]:g})"
        else:
            title = f"{s}{tested}\n(simulated reference)" if not predefined.any() else f"{s}{tested}"
        for _, r in sub.iterrows():
            y = ypos[r["dataset"]]
            if not np.isfinite(r["reference"]):
                lo, hi = r[f"ref_low_{band_d}"], r[f"ref_high_{band_d}"]
                if np.isfinite(lo) and np.isfinite(hi):
                    a.barh(y, hi - lo, left=lo, height=0.62, color="0.78", lw=0, zorder=1)
                a.plot([r[f"ref_{band_d}"]] * 2, [y - 0.31, y + 0.31], color="0.1", lw=1.4, zorder=2)
            elif not common:
                a.plot([r["reference"]] * 2, [y - 0.31, y + 0.31], color="0.1", lw=1.4, zorder=2)
            color, marker = VERDICT_STYLE.get(r["verdict"], ("k", "o"))
            est, low, high = r["estimate"], r["low"], r["high"]
            a.plot([low, high], [y, y], color=color, lw=1.8, solid_capstyle="butt", zorder=3)
            a.plot([est], [y], marker=marker, color=color, ms=6.5 if marker != "X" else 7.5,
                   mec="white", mew=0.6, ls="none", zorder=4)
        a.set_title(title, fontsize=10)
        a.set_ylim(-0.6, n - 0.4)
        a.grid(axis="x", alpha=0.35)
        a.tick_params(axis="x", labelsize=MIN_FONT_PT)
        a.tick_params(axis="y", length=0)
        a.set_yticks(range(n))
        if k % ncols == 0:  # the datasets' names on the first panel of each row
            a.set_yticklabels([names[n - 1 - j] for j in range(n)], fontsize=label_size)
        else:
            a.tick_params(axis="y", labelleft=False)
        for side in ("top", "right"):
            a.spines[side].set_visible(False)
    if own:
        handles = [Line2D([], [], color=c, marker=m, lw=1.8, mec="white", label=FINDING_LABELS[v])
                   for v, (c, m) in VERDICT_STYLE.items() if v in set(t["verdict"])]
        handles += [Patch(color="0.78", label=f"central 95 % of the statistic on calibrated data (D = {band_d})"),
                    Line2D([], [], color="0.1", lw=1.4, label="reference")]
        o = result.options
        fig.suptitle(f"mcref benchmark: {n} dataset{'s' if n != 1 else ''}; estimate with BCa 95 % interval, "
                     f"colour = finding\n(B = {n_boot_text(o['n_boot'])}, N_MC = {n_mc_text(o['n_mc'])}, "
                     f"seed = {result.seed})", fontsize=11)
        fig.legend(handles=handles, loc="outside lower center", ncol=min(3, len(handles)), fontsize=9, frameon=False)
    return axes


#: panels per row of the benchmark figure: the figure stays FIGURE_WIDTH_IN wide whatever the number of
#: statistics, so that its text keeps its size on a page (the HTML report shows it at its natural width)
PANELS_PER_ROW = 3
FIGURE_WIDTH_IN = 11.0
#: the smallest font of the benchmark figure, in points (tick labels)
MIN_FONT_PT = 8.5

#: the legend's words for each verdict colour: what a passing or failing row found, by property
FINDING_LABELS = {
    "valid": "passes: calibrated, consistent, adaptive",
    "invalid": "fails: miscalibrated, inconsistent, not adaptive",
    "unreliable": "unreliable (shape screen)",
    "not testable": "not testable",
}


def _grid(plt, n_stats: int, n_sets: int):
    """A figure of ``n_stats`` panels, :data:`PANELS_PER_ROW` to a row, one row of each per
    dataset, :data:`FIGURE_WIDTH_IN` wide; the slots left over are removed."""
    ncols = min(n_stats, PANELS_PER_ROW)
    nrows = -(-n_stats // ncols)
    row_h = 0.75 + 0.26 * max(n_sets, 4)
    fig, grid = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, nrows * row_h + 1.2), sharey=True,
                             squeeze=False, layout="constrained")
    flat = list(grid.ravel())
    for extra in flat[n_stats:]:
        fig.delaxes(extra)
    return fig, np.asarray(flat[:n_stats], dtype=object)


def min_font_pt(fig) -> float:
    """The smallest font size (points) of the visible, non-empty texts of ``fig`` (tick labels,
    titles, legend): with the dpi it is saved at and the width it is shown at, what says
    whether a reader can read it (the HTML report writes both into the page)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return float(min(sizes))
