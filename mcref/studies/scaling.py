r"""Scaling laws of the ENCE and ZMSE reference values (appendix B of Pernot 2024, sensitivity paper).

For calibrated synthetic datasets the expected ENCE and ZMSE are not zero: each bin's
statistic carries sampling noise of order :math:`n_b^{-1/2}` with :math:`n_b = M/N`.
The study maps :math:`\theta_\mathrm{ref}(M, N)` for two models and fits

.. math::

    \theta_\mathrm{ref} = a + b\,\sqrt{N/M}

per model and statistic (the paper: ordinary least squares over all cells of a model,
k pooled). To first order in :math:`1/n_b` (docs/methods.md, "Exact and
asymptotic references"), with :math:`\kappa` the kurtosis of D,

.. math::

    \mathrm{E}\,\mathrm{ZMSE} \approx \sqrt{2(\kappa-1)/\pi}\,\sqrt{N/M},\qquad
    \mathrm{E}\,\mathrm{ENCE} \approx \tfrac12\sqrt{2(\kappa-1)/\pi}\,\sqrt{N/M}

(u nearly constant inside a bin), so :math:`a \approx 0` and :math:`b` ≈ 1.128 (ZMSE) and
0.564 (ENCE) for normal D, 1.784 and 0.892 for t(6). :attr:`ScalingResult.fits` reports
these values beside the fitted ones. The paper's fits (from its saved cells) are NIG:
ENCE ≈ 0.56·x, ZMSE ≈ 1.14·x; T6IG: ENCE ≈ 0.004 + 0.779·x, ZMSE ≈ 0.006 + 1.577·x
(x = √(N/M)): for t(6) the first-order slope overshoots, the kurtosis correction is
slow to converge at these bin sizes.

Cells
-----
One cell per (model, M, k): ``n_mc`` repeats, each a fresh dataset
:math:`u^2 \sim \mathrm{IG}(k, k)` (:mod:`mcref.kernels.synthetic`, chunks of 16 repeats
per xoshiro256** stream), sorted with NumPy's sort, and
:math:`E = u\varepsilon`, :math:`\varepsilon \sim D`; every bin count N of the grid is
evaluated on the same dataset (:mod:`mcref.kernels.multibin`), which costs one draw and
one sort for all N instead of one per N (5× less work) but correlates the cells of one
(model, M, k) across N: the fit's standard errors, which treat cells as independent,
are then somewhat optimistic (see Notes of :attr:`ScalingResult.fits`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core._checks import check_int, check_values
from ..generative import Distribution, get_distribution
from ..binning import segment_layout
from ..kernels.multibin import multibin_kernel
from ..parallel import map_chunks
from ..kernels.rng import chunk_states
from ..kernels.synthetic import draw_ig_dataset
from ._result import StudyResult, run_as
from ._runner import RunOptions, StudySpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["scaling", "ScalingResult", "model_distribution", "PAPER"]

#: the paper's grid (appendix B)
PAPER = dict(models=("NIG", "T6IG"), M=(2000, 4000, 8000, 12000, 16000), N=(10, 20, 30, 40, 50),
             k=(3, 4, 5, 6, 12, 24), n_mc=5000)
#: repeats per random stream (fixed: results do not depend on threads or workers)
CHUNK = 16
_MODEL_RE = re.compile(r"^T(\d+(?:\.\d+)?)IG$", re.IGNORECASE)


def model_distribution(model: str) -> Distribution:
    """D of a scaling model: ``"NIG"`` → normal, ``"T<ν>IG"`` (e.g. ``"T6IG"``) → unit-variance t(ν).

    Examples
    --------
    >>> model_distribution("T6IG").label
    't(6)'
    """
    if not isinstance(model, str):
        raise ValueError(f"`models`: a model is a name such as 'NIG' or 'T6IG', got {model!r}")
    if model.upper() == "NIG":
        return get_distribution("normal")
    m = _MODEL_RE.match(model)
    if m is None:
        raise ValueError(f"`models`: unknown model {model!r}; use 'NIG' (normal D) or 'T<nu>IG' such as 'T6IG'")
    return get_distribution(("t", float(m.group(1))))


def _scaling_cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """One (model, M, k) cell: mean, se, sd of ENCE and ZMSE for every N of the grid."""
    dist = model_distribution(key["model"])
    M, k = int(key["M"]), float(key["k"])
    Ns = np.asarray(params["N"], dtype=np.int64)
    n_mc = int(params["n_mc"])
    cuts, bin_seg = segment_layout(M, Ns)
    n_chunks = -(-n_mc // CHUNK)
    states = chunk_states(ss, n_chunks)
    out = np.empty((n_mc, Ns.size, 2))
    nu = dist.param
    scratch = [None] * max(1, n_threads)

    def work(c: int, t: int) -> None:
        r0 = c * CHUNK
        R = min(CHUNK, n_mc - r0)
        if scratch[t] is None:
            scratch[t] = (np.empty((CHUNK, M)), np.empty((CHUNK, M)), np.empty((CHUNK, M)), np.empty(M),
                          np.empty((cuts.size - 1, 4)), np.empty((int(Ns.max()), 4)))
        u2b, zb, vb, eps, seg, acc = scratch[t]
        u2, z, v = u2b[:R], zb[:R], vb[:R]
        draw_ig_dataset(states[c], k, 1.0, dist.code, nu, u2, z, v)
        u2.sort(axis=1)  # ε is independent of u: pairing sorted u with ε in draw order is exact
        multibin_kernel(dist.code, nu, u2, z, v, cuts, bin_seg, Ns, eps, seg, acc, out[r0:r0 + R])

    map_chunks(work, n_chunks, n_threads)
    rows = []
    for g, N in enumerate(Ns):
        for s, stat in enumerate(("ENCE", "ZMSE")):
            x = out[:, g, s]
            sd = float(np.std(x, ddof=1)) if n_mc > 1 else float("nan")
            rows.append({"N": int(N), "stat": stat, "mean": float(np.mean(x)), "se": sd / math.sqrt(n_mc), "sd": sd})
    return rows


@dataclass(frozen=True, repr=False)
class ScalingResult(StudyResult):
    """Result of :func:`scaling`: :attr:`table` (``model, M, N, k, stat, mean, se, sd``),
    :attr:`fits` (the paper's OLS fit) and :meth:`fit` (OLS or weighted)."""

    @cached_property
    def fits(self):
        r"""The paper's fit: ordinary least squares :math:`\theta = a + b\sqrt{N/M}` over all
        cells of each (model, stat) (``lm(y ~ x)`` in the paper's code), see :meth:`fit`."""
        return self.fit(weighted=False)

    def fit(self, *, weighted: bool = False):
        r"""Least-squares fit :math:`\theta = a + b\sqrt{N/M}` per (model, stat), pooling M, N and k.

        Parameters
        ----------
        weighted : bool, default: False
            False: ordinary least squares, standard errors from the residual variance (as
            the paper). True: weights :math:`1/se^2` (the cells' Monte Carlo standard
            errors), standard errors scaled by :math:`\sqrt{\max(1, \chi^2_\mathrm{red})}`:
            the straight line is an approximation, and a :math:`\chi^2_\mathrm{red}` above 1
            measures its lack of fit (k-dependence and curvature included).

        Returns
        -------
        pandas.DataFrame
            ``model, stat, a, b, se_a, se_b, chi2_red, n_cells, b_asymptotic``;
            ``chi2_red`` is Σ((y − fit)/se)²/(n − 2) in both cases and ``b_asymptotic`` the
            first-order slope of the module docstring.

        Notes
        -----
        The N of one (model, M, k) share their datasets, so their errors are positively
        correlated and any independent-cells standard error is somewhat optimistic.
        """
        import pandas as pd

        rows = []
        for (model, stat), g in self.table.groupby(["model", "stat"], sort=False):
            x = np.sqrt(g["N"].to_numpy(float) / g["M"].to_numpy(float))
            y = g["mean"].to_numpy(float)
            se = g["se"].to_numpy(float)
            w = 1.0 / se**2 if weighted else np.ones_like(y)
            X = np.column_stack([np.ones_like(x), x])
            A = X.T @ (w[:, None] * X)
            beta = np.linalg.solve(A, X.T @ (w * y))
            resid = y - X @ beta
            dof = max(len(y) - 2, 1)
            chi2_red = float(np.sum((resid / se) ** 2) / dof)
            if weighted:
                cov = np.linalg.inv(A) * max(1.0, chi2_red)
            else:
                cov = np.linalg.inv(A) * float(resid @ resid) / dof
            kappa = model_distribution(model).kurtosis
            b_asym = math.sqrt(2.0 * (kappa - 1.0) / math.pi) * (0.5 if stat == "ENCE" else 1.0)
            rows.append({"model": model, "stat": stat, "a": float(beta[0]), "b": float(beta[1]),
                         "se_a": float(math.sqrt(cov[0, 0])), "se_b": float(math.sqrt(cov[1, 1])),
                         "chi2_red": chi2_red, "n_cells": int(len(y)), "b_asymptotic": b_asym})
        return pd.DataFrame(rows)


def scaling(
    *,
    models: Sequence[str] = PAPER["models"],
    M: Sequence[int] = PAPER["M"],
    N: Sequence[int] = PAPER["N"],
    k: Sequence[float] = PAPER["k"],
    n_mc: int = PAPER["n_mc"],
    min_count: int = 30,
    **run: Unpack[RunOptions],
) -> ScalingResult:
    r"""Reference values of ENCE and ZMSE over a grid of dataset sizes and bin counts.

    .. math::

        \theta_\mathrm{ref}(M, N, k) = \mathrm{E}\,f\bigl(u\,\varepsilon, u; N\bigr),\quad
        u^2 \sim \mathrm{IG}(k, k),\ \varepsilon \sim D,\qquad
        f \in \{\mathrm{ENCE}, \mathrm{ZMSE}\}

    Parameters
    ----------
    models : sequence of str, default: ("NIG", "T6IG")
        ``"NIG"`` (normal D) and/or ``"T<ν>IG"`` (unit-variance t(ν) D).
    M : sequence of int, default: (2000, 4000, 8000, 12000, 16000)
        Dataset sizes.
    N : sequence of int, default: (10, 20, 30, 40, 50)
        Bin counts (equal-count bins of u).
    k : sequence of float, default: (3, 4, 5, 6, 12, 24)
        Shape = scale of the inverse gamma of u².
    n_mc : int, default: 5000
        Repeats per cell, each a new dataset.
    min_count : int, default: 30
        Smallest accepted M/N.
    **run : RunOptions
        The runner's keywords (:class:`RunOptions`: seed, n_jobs, backend, scheduler, store, …).

    Returns
    -------
    ScalingResult
        ``.table`` (``model, M, N, k, stat, mean, se, sd``) and ``.fits``.

    References
    ----------
    .. [1] P. Pernot (2024), the sensitivity paper ([P24b] of docs/methods.md), appendix B.

    Examples
    --------
    >>> res = scaling(models=("NIG",), M=(600,), N=(10, 20), k=(4,), n_mc=64, n_jobs=1, progress=False)
    >>> res.table.columns.tolist()
    ['model', 'M', 'N', 'k', 'stat', 'mean', 'se', 'sd']
    >>> len(res.table)
    4
    """
    models = check_values(models, "models", kind=str)
    for m in models:
        model_distribution(m)
    Ms = check_values(M, "M")
    Ns = check_values(N, "N")
    ks = check_values(k, "k", kind=float)
    n_mc = check_int(n_mc, "n_mc", minimum=2)
    min_count = check_int(min_count, "min_count", minimum=1)
    bad = [(m, n) for m in Ms for n in Ns if m < n * min_count]
    if bad:
        m, n = bad[0]
        raise ValueError(f"`M`={m} with `N`={n} leaves fewer than `min_count`={min_count} points per bin; "
                         f"drop that pair or lower `min_count`")
    params = {"models": list(models), "M": list(Ms), "N": list(Ns), "k": list(ks), "n_mc": n_mc,
              "min_count": min_count}
    keys = [{"model": mo, "M": m, "k": kk} for mo in models for m in Ms for kk in ks]
    spec = StudySpec(name="scaling", params=params, keys=keys, cell=_scaling_cell)
    return run_as(ScalingResult, spec, run,
                  columns=("model", "M", "N", "k", "stat", "mean", "se", "sd"))
