"""Figures (matplotlib, the ``plot`` extra: ``pip install "mcref[plot]"``).

* :func:`plot_skewness_map` — β_GM(E²) and β_GM(Z²) against β_GM(u²), one point per
  dataset, with the NIG model curve and the problem regions (heavy-tails paper, Fig. 6);
* :func:`plot_decimation` — Δθ against the fraction of the largest u removed, with the
  zero-centred bootstrap intervals (same paper, Fig. 8);
* :func:`plot_fit_histograms` — histograms of ln u², ln E², ln Z² with the fitted densities
  of :func:`mcref.distfit` (same paper, Figs. 1–2).

Every function takes an optional ``ax`` (or ``axes``) and returns the axes it drew on.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ._validation import check_E_u

__all__ = ["plot_skewness_map", "plot_decimation", "plot_fit_histograms"]

#: Safety thresholds of the shape screen (docs/methods.md, "Shape screen").
_U2_LIMIT = 0.6
_E2_LIMIT = 0.8


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("mcref's plots need matplotlib: pip install 'mcref[plot]'") from None
    return plt


def _datasets(data) -> list[tuple[str, np.ndarray, np.ndarray]]:
    from . import datasets as ds

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
    from .shape import nig_skewness, skewness_gm

    plt = _plt()
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
    plt = _plt()
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

    from .distfit import distfit

    plt = _plt()
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
