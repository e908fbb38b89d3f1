"""Whole-set calibration scores of bins of u and of x: ZMSE, ENCE and UCE (ErrViewLib's
``calibScores``).

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core._checks import dataset_args, as_float_array, check_choice, check_E_u
from ..binning import resolve_n_bins

__all__ = ["CalibScores", "calib_scores"]


@dataclass(frozen=True)
class CalibScores:
    """Calibration scores of ErrViewLib's ``calibScores`` (:func:`calib_scores`).

    Attributes
    ----------
    zmse_u, ence_u, uce_u : float
        ZMSE (ErrViewLib ``Su``), ENCE and UCE on the bins of u.
    zmse_x, ence_x, uce_x : float
        The same on the bins of x (NaN without x; ErrViewLib ``SX``, ``enceX``, ``uceX``).
    scal : float
        abs(ln ZMS) of the whole set.
    stot : float
        scal + zmse_u (+ zmse_x).
    nll, calib, sharp : float
        NLL = (calib + sharp + ln 2π)/2, calib = ⟨Z²⟩, sharp = ⟨ln u²⟩.
    n_bins : int
    uce : str
        UCE weighting used ("mean" or "counts").
    """

    zmse_u: float
    ence_u: float
    uce_u: float
    zmse_x: float
    ence_x: float
    uce_x: float
    scal: float
    stot: float
    nll: float
    calib: float
    sharp: float
    n_bins: int
    uce: str


def _ece_zce(E: np.ndarray, u: np.ndarray, starts: np.ndarray, uce: str) -> tuple[float, float, float]:
    n = np.diff(starts)
    mv = np.add.reduceat(u**2, starts[:-1]) / n
    mse = np.add.reduceat(E**2, starts[:-1]) / n
    zms = np.add.reduceat((E / u) ** 2, starts[:-1]) / n
    w = np.full(n.size, 1.0 / n.size) if uce == "mean" else n / n.sum()
    return (float(np.mean(np.abs(np.log(zms)))), float(np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv))),
            float(np.sum(w * np.abs(mv - mse))))


@dataset_args
def calib_scores(E, u, x=None, *, n_bins: int | str = 20, min_count: int = 30, cuts: str = "mcref",
                 uce: str = "mean") -> CalibScores:
    r"""ZMSE, ENCE and UCE on equal-count bins of u and of an input feature x, with the global
    scores (ErrViewLib ``calibScores``, ``eceFun``, ``zceFun``, ``nllFun``).

    .. math::

        \mathrm{ZMSE} = \frac1N\sum_b \lvert\ln \langle Z^2\rangle_b\rvert,\quad
        \mathrm{ENCE} = \frac1N\sum_b \frac{\lvert\mathrm{RMV}_b - \mathrm{RMSE}_b\rvert}{\mathrm{RMV}_b},\quad
        \mathrm{UCE} = \sum_b w_b \lvert\mathrm{MV}_b - \mathrm{MSE}_b\rvert

    with w_b = 1/N (``uce="mean"``, ErrViewLib's ``eceFun``, the default here) or n_b/M
    (``uce="counts"``, the weighting of :func:`mcref.statistic` and of Laves et al. 2020). The
    bins of x are the same index cuts applied to the points ordered by x (stable sort), as
    ErrViewLib. ``n_bins`` is reduced to ⌊M/min_count⌋ when M/n_bins < ``min_count``.
    ``n_bins="sqrt"`` is ``calibScores``' default ``nBin = sqrt(M)``, which is not an integer:
    ⌊√M⌋ bins cut on the grid of ⌈√M⌉ equal-count bins, the last bin holding the last two
    (:func:`mcref.binning.sqrt_starts`; with ``cuts="errviewlib"``, R's bins).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 2000); E = u * rng.normal(size=2000)
    >>> s = calib_scores(E, u, x=u)
    >>> s.ence_u == s.ence_x, s.ence_u < 0.2
    (True, True)
    """
    from ..binning import bin_starts, sqrt_starts

    E, u = check_E_u(E, u, min_size=4)
    uce = check_choice(uce, "uce", ("mean", "counts"))
    m = E.size
    if isinstance(n_bins, str):
        check_choice(n_bins, "n_bins", ("sqrt",))
        starts = sqrt_starts(m, min_count=min_count, cuts=cuts)
        n_bins = starts.size - 1
    else:
        n_bins = resolve_n_bins(m, n_bins, min_count=min_count, shrink=True)
        starts = bin_starts(m, n_bins, cuts=cuts)
    ou = np.argsort(u, kind="stable")
    zu, eu, uu = _ece_zce(E[ou], u[ou], starts, uce)
    zx = ex = ux = math.nan
    if x is not None:
        x = as_float_array(x, "x")
        if x.size != m:
            raise ValueError(f"`x` must have the same length as `E` ({m}), got {x.size}")
        ox = np.argsort(x, kind="stable")
        zx, ex, ux = _ece_zce(E[ox], u[ox], starts, uce)
    calib = float(np.mean((E / u) ** 2))
    sharp = float(np.mean(np.log(u**2)))
    scal = abs(math.log(calib))
    stot = scal + zu + (0.0 if x is None else zx)
    return CalibScores(zu, eu, uu, zx, ex, ux, scal, stot, 0.5 * (calib + sharp + math.log(2 * math.pi)), calib,
                       sharp, n_bins, uce)
