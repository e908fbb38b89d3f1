"""Figures (matplotlib, the ``plot`` extra: ``pip install "mcref[plot]"``).

* :func:`plot_skewness_map` — β_GM(E²) and β_GM(Z²) against β_GM(u²), one point per
  dataset, with the NIG model curve and the problem regions (heavy-tails paper, Fig. 6);
* :func:`plot_decimation` — Δθ against the fraction of the largest u removed, with the
  zero-centred bootstrap intervals (same paper, Fig. 8);
* :func:`plot_fit_histograms` — histograms of ln u², ln E², ln Z² with the fitted densities
  of :func:`mcref.distfit` (same paper, Figs. 1–2);
* the conditional-calibration diagnostics of :mod:`mcref.diagnostics`, one function each
  (:func:`plot_lzms`, :func:`plot_lzisd`, :func:`plot_lcp`, :func:`plot_reliability`,
  :func:`plot_calibration_curve`, :func:`plot_confidence_curve`, :func:`plot_e_vs_u`,
  :func:`plot_z_vs_x`, :func:`plot_lzv`, :func:`plot_lzm`, :func:`plot_lrce`,
  :func:`plot_lorenz`, :func:`plot_pit`, :func:`plot_cc_consistency`), and
  :func:`plot_report`, all of them in one figure.

Every function takes an optional ``ax`` (or ``axes``) and returns the axes it drew on.
"""

from __future__ import annotations

import math

from typing import Any, Mapping, Sequence

import numpy as np

from ._forest import VERDICT_STYLE, plot_benchmark  # noqa: F401 - mcref.plots.VERDICT_STYLE as before
from ._mpl import pyplot
from ..core._checks import dataset_args, check_E_u, renamed_keywords

__all__ = ["plot_skewness_map", "plot_decimation", "plot_fit_histograms", "plot_lzms", "plot_lzisd", "plot_lcp",
           "plot_reliability", "plot_calibration_curve", "plot_confidence_curve", "plot_e_vs_u", "plot_z_vs_x",
           "plot_report", "plot_rank_calibration", "plot_qce", "plot_benchmark", "plot_lzv", "plot_lzm",
           "plot_lrce", "plot_lorenz", "plot_pit", "plot_cc_consistency", "plot_lrr", "plot_group_calibration",
           "plot_conditional_calibration"]

#: Safety thresholds of the shape screen (docs/methods.md, "Shape screen").
_U2_LIMIT = 0.6
_E2_LIMIT = 0.8


def _datasets(data) -> list[tuple[str, np.ndarray, np.ndarray]]:
    from .. import datasets as ds

    if data is None:
        data = ds.names()
    if isinstance(data, Mapping):
        items = list(data.items())
    else:
        items = [(str(d), None) for d in data]
    out = []
    for name, value in items:
        if value is None:
            d = ds.load(name)
            E, u = d.E, d.u
        else:
            E, u = value
        E, u = check_E_u(E, u, min_size=4)
        out.append((name, E, u))
    return out


def plot_skewness_map(data: Any = None, *, ax=None, nu: Sequence[float] | None = None, labels: str = "number"):
    """Skewness map: β_GM(E²) (triangles) and β_GM(Z²) (squares) vs β_GM(u²).

    Parameters
    ----------
    data : None, sequence of built-in set names, or mapping name → (E, u)
        The datasets (default: the nine built-in sets).
    ax : matplotlib Axes, optional
    nu : sequence of float, optional
        ν values of the NIG curve (default: 50 values from 1 to 100, as the paper).
    labels : {"number", "name"}
        Label the points by their position in ``data`` (1, 2, …, as the paper) or by name.

    The shaded regions are where the shape screen flags a statistic: β_GM(u²) > 0.6
    (statistics built on u²: RCE, MV) and β_GM(E²) or β_GM(Z²) > 0.8 (RCE, ZMS).
    """
    from ..shape import nig_skewness, skewness_gm

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5))
    nus = np.geomspace(1.0, 100.0, 50) if nu is None else np.asarray(nu, dtype=float)
    bu, be = nig_skewness(nus)
    ax.axvspan(_U2_LIMIT, 1.0, color="tab:red", alpha=0.12, lw=0)
    ax.axhspan(_E2_LIMIT, 1.0, color="tab:red", alpha=0.12, lw=0)
    ax.plot(bu, be, "-", color="0.3", lw=1.5, label="NIG model (ν = 1…100)")
    for lab_nu in (3.0, 6.0, 20.0):
        x, y = nig_skewness(lab_nu)
        ax.plot(x, y, "o", color="0.3", ms=3)
        ax.annotate(f"ν={lab_nu:g}", (x[0], y[0]), textcoords="offset points", xytext=(4, -10), fontsize=7,
                    color="0.3")
    for i, (name, E, u) in enumerate(_datasets(data), start=1):
        x = skewness_gm(u * u)
        y = skewness_gm(E * E)
        z = skewness_gm((E / u) ** 2)
        tag = str(i) if labels == "number" else name
        ax.plot(x, y, "^", color="tab:orange", ms=7, label=r"$\beta_{GM}(E^2)$" if i == 1 else None)
        ax.plot(x, z, "s", color="tab:blue", ms=6, label=r"$\beta_{GM}(Z^2)$" if i == 1 else None)
        ax.annotate(tag, (x, y), textcoords="offset points", xytext=(-8, 3), fontsize=8, color="tab:orange")
        ax.annotate(tag, (x, z), textcoords="offset points", xytext=(-8, -10), fontsize=8, color="tab:blue")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.5, 1.0)
    ax.set_xlabel(r"$\beta_{GM}(u^2)$")
    ax.set_ylabel(r"$\beta_{GM}(E^2)$, $\beta_{GM}(Z^2)$")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Skewness map (shaded: shape screen fails)", fontsize=10)
    return ax


def plot_decimation(result, *, ax=None, title: str | None = None):
    """Δθ(f) per statistic of a :class:`mcref.decimation.DecimationResult`, each with its
    zero-centred bootstrap interval as a band of the same colour."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    colors = ["tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange"]
    pc = 100 * result.fractions
    for k, s in enumerate(result.stats):
        c = colors[k % len(colors)]
        lo, hi = result.interval[s]
        ax.axhspan(lo, hi, color=c, alpha=0.12, lw=0)
        flag = " (leaves)" if result.leaves[s] else ""
        ax.plot(pc, result.delta[s], "o-", color=c, ms=3, lw=1.5, label=f"Δ{s}{flag}")
    ax.axhline(0.0, color="0.4", lw=0.8, ls="--")
    ax.set_xlabel("% of the largest u removed")
    ax.set_ylabel(r"$\Delta\theta$")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_fit_histograms(E: Any, u: Any, fit=None, *, axes=None, bins: int = 40, title: str | None = None):
    """Histograms of ln u², ln E², ln Z² with the densities of the fitted scaled IG / F
    (``fit``: a :class:`mcref.DistFit`; fitted without bootstrap when not given).

    The density of ln X for X = s·Y is f_Y(x/s)·x/s at x = eˡ.
    """
    from scipy import stats as st

    from .._distfit import distfit

    plt = pyplot()
    E, u = check_E_u(E, u, min_size=8)
    if fit is None:
        fit = distfit(E, u, n_boot=0)
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(10, 3))
    Z = E / u
    panels = [
        ("u2", u * u, st.invgamma(fit.nu_u2, scale=fit.nu_u2 * fit.sigma_u2), r"$\ln u^2$",
         f"IG fit ν={fit.nu_u2:.3g}"),
        ("E2", E * E, st.f(1, fit.nu_E2, scale=fit.sigma_E2), r"$\ln E^2$", f"F(1,ν) fit ν={fit.nu_E2:.3g}"),
        ("Z2", Z * Z, st.f(1, fit.nu_Z2, scale=fit.sigma_Z2), r"$\ln Z^2$", f"F(1,ν) fit ν={fit.nu_Z2:.3g}"),
    ]
    for ax, (_key, x, dist, xlabel, lab) in zip(axes, panels):
        lx = np.log(x)
        lo, hi = np.quantile(lx, [0.001, 0.999])
        ax.hist(lx, bins=bins, range=(lo, hi), density=True, histtype="step", color="0.3", label="data")
        grid = np.linspace(lo, hi, 400)
        xx = np.exp(grid)
        ax.plot(grid, dist.pdf(xx) * xx, color="tab:red", lw=1.8, label=lab)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=7, loc="upper left")
    if title:
        axes[0].set_title(title, fontsize=10, loc="left")
    return axes


# ----------------------------------------------------------------------------------
# conditional-calibration diagnostics (mcref.diagnostics)
# ----------------------------------------------------------------------------------


def _unit_square(ax, xlabel: str, ylabel: str) -> None:
    """Axes of a curve on [0, 1]² against the identity (calibration curves, Lorenz curves)."""
    ax.plot([0, 1], [0, 1], "--", color="0.3", lw=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")


def _log_axis(ax, which: str, values, log: bool) -> None:
    """Log scale only when the values span more than a factor 10 (else a linear axis reads
    better), with plain-number tick labels."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not log or v.size == 0 or v.max() / v.min() < 10:
        return
    from matplotlib.ticker import FuncFormatter

    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    decades = math.log10(v.max() / v.min())

    def minor(x, pos=None):  # plain numbers at 2 and 5 × 10ⁿ when under two decades, else none
        mant = x / 10 ** math.floor(math.log10(x) + 1e-9)
        return f"{x:g}" if decades < 2 and any(abs(mant - k) < 1e-6 for k in (2, 5)) else ""

    axis.set_major_formatter(FuncFormatter(lambda x, pos=None: f"{x:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))  # matplotlib's default labels many, in ×10ⁿ: they overlap


def _binned_panel(d, ax, *, ylabel: str, xlabel: str, logx: bool = False, logy: bool = False, color="tab:blue",
                  label=None):
    """A :class:`mcref.diagnostics.BinnedDiagnostic`: values with their intervals, the target,
    invalid bins (interval missing the target) in red."""
    valid = d.valid
    yerr = np.vstack([d.value - d.low, d.high - d.value])
    first = True
    for ok in (True, False):  # invalid bins (interval misses the target): hollow markers
        sel = valid == ok
        if sel.any():
            ax.errorbar(d.centers[sel], d.value[sel], yerr=yerr[:, sel], fmt="o", ms=4.5, color=color, capsize=2,
                        lw=1.2, mfc=color if ok else "white", mew=1.2, label=label if first else None)
            first = False
    flagged = getattr(d, "flagged", None)
    if flagged is not None and np.any(flagged):  # ErrViewLib plotLZMS/plotRelDiag: skewed, unreliable bins
        ax.plot(d.centers[flagged], d.value[flagged], "o", ms=7, color="0.6", alpha=0.6, zorder=3,
                label="skewed bin (interval unreliable)")
    t = np.broadcast_to(np.asarray(d.target, dtype=float), d.value.shape)
    if np.all(t == t[0]):
        ax.axhline(t[0], color="0.3", ls="--", lw=1)
    else:
        ax.plot(d.centers, t, "--", color="0.3", lw=1)
    _log_axis(ax, "x", d.centers, logx)
    _log_axis(ax, "y", np.r_[d.low, d.high], logy)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.set_title(f"{d.name}: {100 * d.fraction_valid:.0f} % of bins on target (hollow: off target)", fontsize=9)
    return ax


def plot_lzms(E, u, x=None, *, ax=None, xlabel=None, band: int = 0, seed=0, **kw):
    """⟨Z²⟩ per bin of u (consistency) or of x (adaptivity), target 1 (:func:`mcref.diagnostics.lzms`).

    ``band`` > 0 shades the 95 % range of ⟨Z²⟩ per bin over that many shuffles of Z across
    the rows (u and x kept): the null of the permutation test of :func:`mcref.validate`'s
    binned rows, around the set's own ⟨Z²⟩ (docs/methods.md, "Adaptivity"); ``seed`` seeds
    the shuffles (:func:`mcref.diagnostics.lzms_band`)."""
    from ..diagnostics import lzms, lzms_band

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    d = lzms(E, u, x, **kw)
    if band and not kw.get("slide"):
        lo, hi = lzms_band(E, u, x, n_shuffles=band, seed=seed, **{k: v for k, v in kw.items() if k not in
                                                                   ("method", "n_boot", "seed", "slide")})
        ax.fill_between(d.centers, lo, hi, color="0.85", lw=0, zorder=0,
                        label=f"Z shuffled across rows, 95 % ({int(band)})")
    _binned_panel(d, ax, ylabel=r"$\langle Z^2\rangle$ per bin", xlabel=xlabel or ("u" if x is None else "x"),
                  logx=x is None, logy=True)
    if band:
        ax.legend(fontsize=7, loc="best")
    return ax


def plot_lzisd(E, u, x=None, *, ax=None, xlabel=None, **kw):
    """1/sd(Z) per bin, target 1 (:func:`mcref.diagnostics.lzisd`)."""
    from ..diagnostics import lzisd

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    d = lzisd(E, u, x, **kw)
    return _binned_panel(d, ax, ylabel="1/sd(Z) per bin", xlabel=xlabel or ("u" if x is None else "x"),
                         logx=x is None, logy=True)


def plot_lcp(E, u, x=None, *, p=(0.25, 0.5, 0.75, 0.95), dist="normal", ax=None, xlabel=None, **kw):
    """Local coverage of the ±U_p intervals per bin, one series per p, targets p
    (:func:`mcref.diagnostics.lcp`)."""
    from ..diagnostics import lcp

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    colors = ["tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown"]
    fv = []
    for k, pk in enumerate(p):
        d = lcp(E, u, x, p=pk, dist=dist, **kw)
        _binned_panel(d, ax, ylabel="local coverage", xlabel=xlabel or ("u" if x is None else "x"),
                      logx=x is None, color=colors[k % len(colors)], label=f"p = {pk:g}")
        fv.append(d.fraction_valid)
    ax.set_title(f"LCP ({dist}): {100 * np.mean(fv):.0f} % of bins on target (hollow: off target)", fontsize=9)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def plot_reliability(E, u, *, ax=None, **kw):
    """Reliability diagram: RMSE vs RMV per bin of u, identity line (:func:`mcref.diagnostics.reliability_diagram`)."""
    from ..diagnostics import reliability_diagram

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4))
    d = reliability_diagram(E, u, **kw)
    _binned_panel(d, ax, ylabel="RMSE per bin", xlabel="RMV per bin", logx=True, logy=True)
    lim = [min(d.centers.min(), d.low.min()) * 0.9, max(d.centers.max(), d.high.max()) * 1.1]
    ax.plot(lim, lim, "--", color="0.3", lw=1)
    ax.set_title(f"Reliability diagram: ENCE = {d.overall[0]:.3f}", fontsize=9)
    return ax


def plot_calibration_curve(E, u, *, dist="normal", ax=None):
    """Observed vs expected cumulative probability with its band and the miscalibration area
    (:func:`mcref.diagnostics.calibration_curve`)."""
    from ..diagnostics import calibration_curve

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4))
    c = calibration_curve(E, u, dist=dist)
    ax.fill_between(c.expected, c.low, c.high, color="tab:blue", alpha=0.2, lw=0, label="95 % band")
    ax.plot(c.expected, c.observed, color="tab:blue", lw=1.8, label="observed")
    ax.plot([0, 1], [0, 1], "--", color="0.3", lw=1)
    ax.set_xlabel("expected cumulative probability")
    ax.set_ylabel("observed")
    ax.set_title(f"Calibration curve ({c.dist}): miscal. area {c.miscalibration_area:.3f}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    return ax


@renamed_keywords(n_draws="n_mc")
def plot_confidence_curve(E, u, *, stat="RMSE", dist="normal", n_mc=500, seed=None, ax=None, oracle=True):
    """Confidence curve with its probabilistic reference band and DFPR
    (:func:`mcref.diagnostics.confidence_curve`)."""
    from ..diagnostics import confidence_curve

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    cc = confidence_curve(E, u, stat=stat, dist=dist, n_mc=n_mc, seed=seed)
    ax.fill_between(cc.k, cc.ref_low, cc.ref_high, color="tab:green", alpha=0.2, lw=0, label=f"reference ({cc.dist})")
    ax.plot(cc.k, cc.reference, ":", color="tab:green", lw=1.5)
    ax.plot(cc.k, cc.curve, color="tab:blue", lw=1.8, label="data")
    if oracle:
        ax.plot(cc.k, cc.oracle, color="0.5", lw=1, label="oracle (not a reference)")
    ax.set_xlabel("% of the largest u removed")
    ax.set_ylabel("Q95 of abs(E) (HD)" if cc.stat == "Q95" else cc.stat)
    verdict = "within" if cc.passes else "outside"
    ax.set_title(f"Confidence curve: DFPR {cc.dfpr:.3g} ({verdict} 95 %: {cc.dfpr_up95:.3g})", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return ax


def plot_e_vs_u(E, u, *, ax=None, p=0.95):
    """E against u with the running 95 % quantiles and the ±k·u guide lines (k = 1, 2, 3)."""
    from ..diagnostics import running_quantiles

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    E, u = check_E_u(E, u, min_size=8)
    ax.plot(u, E, ".", ms=2, color="0.55", alpha=0.5)
    grid = np.geomspace(u.min(), u.max(), 50)
    for k in (1, 2, 3):
        ax.plot(grid, k * grid, "--", color="0.3", lw=0.7)
        ax.plot(grid, -k * grid, "--", color="0.3", lw=0.7)
    rq = running_quantiles(u, E, p=p)
    ax.plot(rq.x, rq.low, color="tab:red", lw=1.8, label=f"running {100 * p:g} % range")
    ax.plot(rq.x, rq.high, color="tab:red", lw=1.8)
    _log_axis(ax, "x", u, True)
    lim = np.quantile(np.abs(E), 0.999) * 1.2
    ax.set_ylim(-lim, lim)
    ax.set_xlabel("u")
    ax.set_ylabel("E")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("E vs u (dashed: ±u, ±2u, ±3u)", fontsize=9)
    return ax


def plot_z_vs_x(E, u, x, *, ax=None, p=0.95, xlabel="x"):
    """Z = E/u against x with the running 95 % quantiles and the lines ±1, ±2, ±3."""
    from ..diagnostics import running_quantiles

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    E, u = check_E_u(E, u, min_size=8)
    z = E / u
    ax.plot(x, z, ".", ms=2, color="0.55", alpha=0.5)
    for k in (1, 2, 3):
        ax.axhline(k, ls="--", color="0.3", lw=0.7)
        ax.axhline(-k, ls="--", color="0.3", lw=0.7)
    rq = running_quantiles(x, z, p=p)
    ax.plot(rq.x, rq.low, color="tab:red", lw=1.8, label=f"running {100 * p:g} % range")
    ax.plot(rq.x, rq.high, color="tab:red", lw=1.8)
    lim = max(np.quantile(np.abs(z), 0.999) * 1.2, 3.5)
    ax.set_ylim(-lim, lim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Z = E/u")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title("Z vs x (dashed: ±1, ±2, ±3)", fontsize=9)
    return ax


def plot_report(E, u, x=None, *, name: str = "", seed=None, dist="normal", path=None):
    """One figure with the whole toolbox: E vs u, calibration curve, reliability diagram,
    ⟨Z²⟩ and coverage per bin of u (consistency), confidence curve, and with ``x``: Z vs x,
    ⟨Z²⟩ and coverage per bin of x (adaptivity); plus the shape screen. Saved to ``path``
    when given. Returns the figure. A categorical ``x`` (labels, e.g. a text column) has no
    panels of x here: its adaptivity rows are :func:`mcref.validate`'s (``validate(E, u,
    x={"name": x})``)."""
    from ..shape import shape_screen

    plt = pyplot()
    E, u = check_E_u(E, u, min_size=100)
    has_x = x is not None and np.asarray(x).dtype.kind in "biuf"
    const_u = bool(np.all(u == u[0]))
    fig, axes = plt.subplots(3, 3, figsize=(15, 12.5))
    ax = iter(axes.flat)
    if not const_u:
        plot_e_vs_u(E, u, ax=next(ax))
    plot_calibration_curve(E, u, dist=dist, ax=next(ax))
    if not const_u:
        plot_reliability(E, u, ax=next(ax), seed=seed)
        plot_lzms(E, u, ax=next(ax), xlabel="u (consistency)", band=200, seed=seed)
        plot_lcp(E, u, ax=next(ax), dist=dist, xlabel="u (consistency)")
        plot_confidence_curve(E, u, dist=dist, seed=seed, ax=next(ax))
    if has_x:
        plot_z_vs_x(E, u, x, ax=next(ax))
        plot_lzms(E, u, x, ax=next(ax), xlabel="x (adaptivity)", log=False, band=200, seed=seed)
        plot_lcp(E, u, x, ax=next(ax), dist=dist, xlabel="x (adaptivity)", log=False)
    rest = list(ax)
    if rest:
        sc = shape_screen(E, u)
        t = rest[0]
        t.axis("off")
        lines = ["Shape screen (β_GM; threshold)",
                 f"u²: {sc.beta_u2:.3f} (0.6) {'fails' if sc.beta_u2 > 0.6 else 'ok'}",
                 f"E²: {sc.beta_E2:.3f} (0.8) {'fails' if sc.beta_E2 > 0.8 else 'ok'}",
                 f"Z²: {sc.beta_Z2:.3f} (0.8) {'fails' if sc.beta_Z2 > 0.8 else 'ok'}",
                 "", f"M = {E.size}", f"⟨Z²⟩ = {np.mean((E / u) ** 2):.3f}"]
        t.text(0.05, 0.95, "\n".join(lines), va="top", family="monospace", fontsize=11, transform=t.transAxes)
        for a in rest[1:]:
            a.axis("off")
    fig.suptitle(f"mcref report{': ' + name if name else ''}", fontsize=14)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    if path is not None:
        fig.savefig(path, dpi=90)
    return fig


# ----------------------------------------------------------------------------------
# quantile and rank calibration (mcref.calibration)
# ----------------------------------------------------------------------------------


@renamed_keywords(bins="n_bins")
def plot_rank_calibration(c, *, ax=None, n_bins: int = 20, seed=0, title: str | None = None):
    """ECDF(c) − t of the ranks c_i with the pointwise (dashed) and simultaneous (shaded) 95 %
    bands, and the rank histogram below it (:func:`mcref.calibration.uniformity`)."""
    from ..calibration import uniformity

    plt = pyplot()
    if ax is None:
        fig, (ax, axh) = plt.subplots(2, 1, figsize=(5, 5), height_ratios=(2, 1), sharex=True)
    else:
        axh = None
    r = uniformity(c, n_bins=n_bins, seed=seed)
    ax.fill_between(r.grid, -r.simultaneous, r.simultaneous, color="tab:green", alpha=0.2, lw=0,
                    label="simultaneous 95 %")
    ax.plot(r.grid, r.pointwise, "--", color="tab:green", lw=1, label="pointwise 95 %")
    ax.plot(r.grid, -r.pointwise, "--", color="tab:green", lw=1)
    ax.plot(r.grid, r.deviation, color="tab:blue", lw=1.8, label="ECDF(c) − t")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_ylabel("ECDF − t")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    verdict = "inside" if r.inside else "outside"
    ax.set_title(title or f"Rank calibration: {verdict} the band; χ² p = {r.chi2_pvalue:.2g}", fontsize=9)
    if axh is not None:
        axh.bar((np.arange(n_bins) + 0.5) / n_bins, r.counts, width=1 / n_bins, color="0.6", edgecolor="white")
        axh.axhline(r.n / n_bins, color="tab:red", lw=1)
        axh.set_xlabel("c (rank of the truth)")
        axh.set_ylabel("count")
        axh.set_xlim(0, 1)
        ax.figure.tight_layout()
    return ax


def plot_qce(result, *, ax=None):
    """Observed coverage against the quantile level τ of a :class:`mcref.calibration.QCEResult`
    (and, for C-QCE, one thin line per σ_G bin)."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4))
    if result.bin_coverage is not None:
        for b in range(result.bin_coverage.shape[1]):
            if result.bin_counts[b]:
                ax.plot(result.quantiles, result.bin_coverage[:, b], color="0.7", lw=0.8)
    ax.plot(result.quantiles, result.coverage, "o-", color="tab:blue", ms=3, label="all cases")
    ax.plot([0, 1], [0, 1], "--", color="0.3", lw=1)
    kind = "M-QCE" if result.marginal else "C-QCE"
    ax.set_title(f"{kind} = {result.value:.3f} (d = {result.dim})", fontsize=9)
    ax.set_xlabel("quantile level τ")
    ax.set_ylabel("observed P(NEES ≤ χ²_d(τ))")
    ax.grid(alpha=0.3)
    ax.figure.tight_layout()
    return ax


def _local_panel(fn, ylabel, logy, E, u, x, ax, xlabel, kw):
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.6))
    d = fn(E, u, x, **kw)
    return _binned_panel(d, ax, ylabel=ylabel, xlabel=xlabel or ("u" if x is None else "x"), logx=x is None,
                         logy=logy)


def plot_lzv(E, u, x=None, *, ax=None, xlabel=None, **kw):
    """var(Z) per bin of u (consistency) or of x (adaptivity), target 1
    (:func:`mcref.diagnostics.lzv`; ErrViewLib ``plotLZV``)."""
    from ..diagnostics import lzv

    return _local_panel(lzv, "var(Z) per bin", True, E, u, x, ax, xlabel, kw)


def plot_lzm(E, u, x=None, *, ax=None, xlabel=None, **kw):
    """⟨Z⟩ per bin with Student intervals, target 0 (:func:`mcref.diagnostics.lzm`; ErrViewLib
    ``plotLZM``)."""
    from ..diagnostics import lzm

    return _local_panel(lzm, r"$\langle Z\rangle$ per bin", False, E, u, x, ax, xlabel, kw)


def plot_lrce(E, u, x=None, *, ax=None, xlabel=None, **kw):
    """RCE per bin with BCa intervals, target 0 (:func:`mcref.diagnostics.lrce`; ErrViewLib
    ``plotLRCE``)."""
    from ..diagnostics import lrce

    return _local_panel(lrce, "RCE per bin", False, E, u, x, ax, xlabel, kw)


def plot_lorenz(*arrays, labels: Sequence[str] | None = None, ax=None):
    """Lorenz curves of abs(x) for one or more arrays (e.g. the uncertainties of several
    models), with the Gini coefficients in the legend and the identity (equal values)
    (:func:`mcref.diagnostics.lorenz_curve`, :func:`mcref.diagnostics.gini`; ErrViewLib
    ``plotLorenz``)."""
    from ..diagnostics import gini, lorenz_curve

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4))
    for k, a in enumerate(arrays):
        p, L = lorenz_curve(a)
        name = labels[k] if labels is not None else f"set {k + 1}"
        ax.plot(np.r_[0.0, p], np.r_[0.0, L], lw=1.5, label=f"{name}: Gini = {gini(a):.2f}")
    _unit_square(ax, "p", "L(p)")
    return ax


def plot_pit(E, u, *, dist="normal", shape=None, n_bins: int = 10, ax=None):
    """PIT histogram with the Poisson 95 % band of a uniform histogram
    (:func:`mcref.diagnostics.pit`; ErrViewLib ``plotPIT``)."""
    from ..diagnostics import pit

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.6))
    h = pit(E, u, dist=dist, shape=shape, n_bins=n_bins)
    ax.stairs(h.counts, h.edges, fill=True, color="tab:blue", alpha=0.35)
    ax.stairs(h.counts, h.edges, color="tab:blue")
    for y, ls in ((h.low, "--"), (h.expected, "-"), (h.high, "--")):
        ax.axhline(y, color="tab:red", ls=ls, lw=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.1 * max(h.high, h.counts.max()))
    ax.set_xlabel("PIT")
    ax.set_ylabel("count")
    ax.set_title(f"PIT ({h.dist}): {int(np.sum((h.counts >= h.low) & (h.counts <= h.high)))}/{n_bins} "
                 "cells in the 95 % band", fontsize=9)
    return ax


@renamed_keywords(n_draws="n_mc")
def plot_cc_consistency(E, u, *, stat="RMSE", dist="normal", n_mc=1000, n_boot=5000, seed=None, ax=None):
    """Confidence curve with the BCa band of each point and the probabilistic reference, the
    consistency score in the title (:func:`mcref.diagnostics.cc_consistency`; ErrViewLib
    ``plotCCVal``)."""
    from ..diagnostics import cc_consistency

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 3.8))
    r = cc_consistency(E, u, stat=stat, dist=dist, n_mc=n_mc, n_boot=n_boot, seed=seed)
    cc = r.curve
    ax.fill_between(cc.k, r.curve_low, r.curve_high, color="tab:blue", alpha=0.25, lw=0, label="data, 95 % BCa")
    ax.plot(cc.k, cc.curve, color="tab:blue", lw=1.5, label="data")
    ax.plot(cc.k, cc.reference, ":", color="tab:red", lw=2, label=f"reference ({cc.dist})")
    ax.set_xlabel("k % discarded")
    ax.set_ylabel(cc.stat)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title(f"Consistency score {r.score:.2f} [{r.low:.2f}, {r.high:.2f}]", fontsize=9)
    return ax


def plot_lrr(E, u, x=None, *, ax=None, xlabel=None, **kw):
    """Local range ratio per bin (mean interval width over the empirical p range of E) with BCa
    intervals, target 1 (:func:`mcref.diagnostics.lrr`; ErrViewLib ``plotLRR``)."""
    from ..diagnostics import lrr

    return _local_panel(lrr, "local range ratio", True, E, u, x, ax, xlabel, kw)


def plot_conditional_calibration(E, u, x=None, *, dist="normal", ax=None, xlabel=None, **kw):
    """Calibration curves per bin of u (or of x), coloured by the bin's rank (colour bar: bin
    centres), over ErrViewLib's
    band for a bin of M/B points and the whole-set curve
    (:func:`mcref.diagnostics.conditional_calibration_curves`; ErrViewLib
    ``plotCalibrationQ(cond = ...)``)."""
    from matplotlib import cm, colors

    from ..diagnostics import conditional_calibration_curves

    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    c = conditional_calibration_curves(E, u, x, dist=dist, **kw)
    p = c.expected
    ax.fill_between(p, c.band_low, c.band_high, color="0.5", alpha=0.2, lw=0,
                    label=f"95 % band ({int(round(c.counts.mean()))} points)")
    nb = c.centers.size
    norm = colors.Normalize(0, max(nb - 1, 1))  # colour by bin rank: skewed u would crowd one end
    cmap = plt.get_cmap("viridis")
    for b, o in enumerate(c.observed):
        ax.plot(p, o, color=cmap(norm(b)), lw=1, alpha=0.85)
    ax.plot(p, c.overall.observed, color="black", lw=1.8, label="whole set")
    _unit_square(ax, "expected cumulative probability", "observed")
    name = xlabel or c.variable
    cb = ax.figure.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label=f"bin centre ({name})")
    ticks = np.unique(np.linspace(0, nb - 1, min(nb, 6)).round().astype(int))
    cb.set_ticks(ticks)
    cb.set_ticklabels([f"{c.centers[t]:.3g}" for t in ticks])
    worst = int(np.argmax(c.miscalibration_area))
    ax.set_title(f"Calibration curves per bin of {name} ({c.overall.dist}): largest miscal. area "
                 f"{c.miscalibration_area[worst]:.3f}", fontsize=9)
    return ax


def plot_group_calibration(g, *, ax=None, title: str | None = None):
    """A :class:`mcref.diagnostics.GroupCalibration` against the relative group size n/M (log
    scale when it spans a decade): the data and the control with ±2 sd bands (:func:`adversarial_group_calibration`,
    ErrViewLib ``plotAGV``) or Wilson-cc intervals (:func:`group_zms_validity`, ErrViewLib
    ``plotAGVZMS``, with the nominal 0.95)."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4.8, 3.8))
    x = g.fraction
    for val, sd, lo, hi, color, lab in ((g.value, g.sd, g.low, g.high, "tab:purple", "data"),
                                        (g.control, g.control_sd, g.control_low, g.control_high, "tab:green",
                                         f"control ({g.dist})")):
        ax.plot(x, val, "o-", ms=4, color=color, lw=1.2, label=lab)
        if lo is None:
            ax.fill_between(x, val - 2 * sd, val + 2 * sd, color=color, alpha=0.2, lw=0)
        else:
            ax.vlines(x, lo, hi, color=color, lw=1.5)
    _log_axis(ax, "x", x, True)
    ax.set_xlabel("relative group size n/M")
    if g.low is None:
        ax.set_ylabel(f"{g.stat} of abs(ln⟨Z²⟩) over groups")
        ax.set_ylim(bottom=0)
    else:
        ax.axhline(0.95, color="0.3", ls="--", lw=1)
        ax.set_ylabel("fraction of valid ⟨Z²⟩ intervals")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title or (f"Worst-group calibration error ({g.n_rep} repeats)" if g.low is None
                           else f"Random groups: valid ⟨Z²⟩ intervals ({g.n_rep} per size)"), fontsize=9)
    return ax


for _name in [n for n in __all__ if {"E", "u"} <= set(__import__("inspect").signature(globals()[n]).parameters)]:
    globals()[_name] = dataset_args(globals()[_name])  # a Dataset in place of E (_checks.dataset_args)


__all__ += ["plot_posterior"]


def plot_posterior(check, *, axes=None, seed=0):
    """A :class:`mcref.posterior.PosteriorCheck` in three panels, each an ECDF − t curve with the
    simultaneous 95 % band of N uniform values (:func:`mcref.calibration.uniformity`; one band per
    panel, every curve has the same N): the ranks of each parameter (SBC); the joint ranks
    (projections on pair sums and differences, depth, surprisal: ``check.joint_ranks``, those
    outside the band named, the others grey); TARP's ECP(α) − α (ECP is the ECDF of the f_i:
    Lemos et al. 2023). ``axes``: three axes, or two (no joint panel). Returns the axes."""
    from ..calibration import uniformity

    plt = pyplot()
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(13.5, 3.9))
    colors = plt.get_cmap("tab10").colors
    ranks = np.asarray(check.ranks, dtype=float)
    n = ranks.shape[0]
    cols = [(name, ranks[:, j]) for j, name in enumerate(check.names)]
    _ecdf_panel(axes[0], [uniformity(c, seed=seed) for _, c in cols], [nm for nm, _ in cols], colors, True)
    axes[0].set_xlabel("t (normalized rank of the truth)")
    axes[0].set_title(f"SBC per parameter (N = {n})", fontsize=9)
    if len(axes) > 2:
        joint = [(k, np.asarray(v, dtype=float)) for k, v in check.joint_ranks.items() if k != "TARP"]
        _ecdf_panel(axes[1], [uniformity(c, seed=seed) for _, c in joint], [k for k, _ in joint], colors, False)
        axes[1].set_xlabel("t (normalized rank)")
        axes[1].set_title("Joint ranks: projections, depth" + (", surprisal" if "surprisal" in check.joint_ranks
                                                                 else ""), fontsize=9)
    at = axes[-1]
    tarp = check.tarp
    alpha, ecp = np.asarray(tarp.alpha, dtype=float), np.asarray(tarp.ecp, dtype=float)
    h = uniformity(np.clip(np.asarray(tarp.f, dtype=float), 0.0, 1.0), seed=seed).h
    band = h * np.sqrt(alpha * (1 - alpha) / n)
    at.fill_between(alpha, -band, band, color="0.6", alpha=0.3, lw=0, label="simultaneous 95 %")
    at.plot(alpha, ecp - alpha, color="tab:purple", lw=1.6, label="ECP(α) − α")
    _ecdf_axes(at, "ECP − α")
    at.set_xlabel("α (credibility level)")
    at.set_title("TARP: expected coverage, jointly", fontsize=9)
    at.figure.suptitle(f"Posterior check: {check.verdict} (p = {check.pvalue:.3g}, {check.n_swaps} swaps)", fontsize=10)
    at.figure.tight_layout()
    return axes


def _ecdf_axes(ax, ylabel: str) -> None:
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best", framealpha=0.7)


def _ecdf_panel(ax, bands, labels, colors, every: bool) -> None:
    """ECDF − t curves with the first one's simultaneous band; ``every``: a colour and a legend
    entry per curve, else only for the curves outside the band (the others thin and grey)."""
    if not bands:
        ax.text(0.5, 0.5, "no joint ranks", ha="center", va="center", transform=ax.transAxes)
        return
    r = bands[0]
    ax.fill_between(r.grid, -r.simultaneous, r.simultaneous, color="0.6", alpha=0.3, lw=0, label="simultaneous 95 %")
    k = 0
    for u, name in zip(bands, labels):
        if every or not u.inside:
            ax.plot(u.grid, u.deviation, color=colors[k % 10], lw=1.1 if u.inside else 1.7,
                    label=name + ("" if u.inside else " (outside)"))
            k += 1
        else:
            ax.plot(u.grid, u.deviation, color="0.45", lw=0.7)
    _ecdf_axes(ax, "ECDF − t")
