r"""Reliability of validation tests on calibrated data (Pernot 2024, heavy-tails paper).

Draw ``n_rep`` calibrated synthetic datasets per cell, validate each one as
:func:`mcref.validate` does, and report the validation probability

.. math::

    P_\mathrm{val} = \frac{1}{n_\mathrm{rep}}\sum_{i} \mathbf{1}\bigl(|\zeta_i| \le 1\bigr)

per statistic and ζ-score, with its binomial 95 % interval (Wilson with continuity
correction, as the paper's figures). On
calibrated data a sound test at the 95 % level gives :math:`P_\mathrm{val} \approx
0.95`; the paper shows how heavy tails of u² and of E (small ν) lower it for ZMS and RCE.

Models (one per call; ``nu`` is the grid axis):

* ``"NIG"``: :math:`u^2 \sim \mathrm{IG}(\nu/2, \nu/2)`, D normal (:func:`mcref.synthetic.nig`);
* ``"TIG"``: :math:`u^2 \sim \mathrm{IG}(3, 3)`, D = unit-variance t(ν) (:func:`mcref.synthetic.tig`).
  As in the paper's code, u is drawn **once** (``fixed_u=True``, from ``u_seed``) and
  shared by every repeat and every ν; only E is redrawn.

Scores: ``"BS"`` (ζ of the estimate against the predefined reference with the BCa
interval: ZMS = 1, RCE = 0, …), and, with a reference simulated under the true D for
each dataset, ``"Sim"`` (BCa interval against the simulated mean) and ``"Sim2"`` (the
estimate against the simulated 95 % interval). A cell also reports the mean estimate
and the mean shape screen (β_GM and κ_CS of u², E², Z²) of its datasets.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from scipy.stats import binomtest

from ..core._checks import check_int, check_values
from ..core._warnings import BiasedIntervalWarning, DegenerateBootstrapWarning
from ..resampling._bootstrap import bootstrap_many
from ..generative import get_distribution
from ..reference import simulate
from ..shape import shape_screen
from ..stats import info
from ..synthetic import draw, ig_dataset, stream
from ..resampling._zeta import zeta, zeta_sim2
from ._result import StudyResult, run_as
from ._runner import RunOptions, StudySpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["reliability", "ReliabilityResult", "PAPER", "SCORES"]

PAPER = {
    "NIG": dict(nu=(2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20)),
    "TIG": dict(nu=(2.5, 3, 4, 5, 6, 7, 8, 9, 10, 20)),
    "common": dict(M=5000, n_rep=1000, n_boot=5000, stats=("ZMS", "RCE")),
}
SCORES = ("BS", "Sim", "Sim2")
_SHAPE = ("beta_u2", "beta_E2", "beta_Z2", "kappa_u2", "kappa_E2", "kappa_Z2")


def _model(model: str, nu: float):
    """(inverse-gamma shape a, D) of a reliability model at ν."""
    if model == "NIG":
        return 0.5 * nu, get_distribution("normal")
    return 3.0, get_distribution(("t", nu))


def _reliability_cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """One (model, ν) cell: n_rep calibrated datasets, each validated; P_val per statistic and score."""
    a, dist = _model(key["model"], float(key["nu"]))
    stats, scores = params["stats"], params["scores"]
    M, n_rep, B, n_mc, n_bins = params["M"], params["n_rep"], params["n_boot"], params["n_mc"], params["n_bins"]
    need_sim = any(s in scores for s in ("Sim", "Sim2"))
    z = {(s, sc): np.full(n_rep, np.nan) for s in stats for sc in scores}
    est = {s: np.empty(n_rep) for s in stats}
    excl = {s: np.zeros(n_rep, dtype=bool) for s in stats}
    shape = np.empty((n_rep, len(_SHAPE)))
    u_fixed = None
    if params["fixed_u"]:
        u_fixed = np.sqrt(draw(stream(params["u_seed"]), a, dist, M)[0])
    for i, child in enumerate(ss.spawn(n_rep)):
        s_data, s_boot, s_sim = child.spawn(3)
        if u_fixed is None:
            E, u = ig_dataset(M, a, dist, s_data)
        else:
            u = u_fixed
            E = u * draw(stream(s_data), a, dist, M)[1]
        with warnings.catch_warnings():  # counted in `excludes_estimate`; degenerate cases are expected
            warnings.simplefilter("ignore", BiasedIntervalWarning)
            warnings.simplefilter("ignore", DegenerateBootstrapWarning)
            boots = bootstrap_many(stats, E, u, n_boot=B, n_bins=n_bins, seed=s_boot)
        sim = simulate(stats, u, dists=[dist], n_mc=n_mc, n_bins=n_bins, seed=s_sim, n_threads=n_threads) \
            if need_sim else None
        for s in stats:
            b = boots[s]
            est[s][i] = b.estimate
            excl[s][i] = not (b.low <= b.estimate <= b.high)
            ref_fn = info(s).reference
            if "BS" in scores and ref_fn is not None:
                z[s, "BS"][i] = zeta(b.estimate, ref_fn(E, u), b.low, b.high)
            if sim is not None:
                r = sim.reference(s, dist)
                if "Sim" in scores:
                    z[s, "Sim"][i] = zeta(b.estimate, r.mean, b.low, b.high, u_ref=r.se)
                if "Sim2" in scores:
                    z[s, "Sim2"][i] = zeta_sim2(b.estimate, r.mean, r.low, r.high)
        sh = shape_screen(E, u)
        shape[i] = [getattr(sh, f) for f in _SHAPE]
    shape_means = dict(zip(_SHAPE, (float(x) for x in shape.mean(axis=0))))
    rows = []
    for s in stats:
        for sc in scores:
            v = z[s, sc]
            if np.all(np.isnan(v)):
                continue  # BS of a statistic without a predefined reference
            k = int(np.sum(np.abs(v) <= 1.0))
            ci = binomtest(k, n_rep).proportion_ci(0.95, method="wilsoncc")
            rows.append({"stat": s, "zeta": sc, "p_val": k / n_rep, "low": float(ci.low), "high": float(ci.high),
                         "n_rep": n_rep, "mean_zeta": float(np.mean(v)), "mean_estimate": float(np.mean(est[s])),
                         "excludes_estimate": float(np.mean(excl[s])), **shape_means})
    return rows


@dataclass(frozen=True, repr=False)
class ReliabilityResult(StudyResult):
    """Result of :func:`reliability`.

    ``.table`` columns: ``model, nu, stat, zeta, p_val, low, high, n_rep, mean_zeta,
    mean_estimate, excludes_estimate`` (fraction of BCa intervals that exclude their own
    estimate) and the mean shape screen ``beta_u2, beta_E2, beta_Z2, kappa_u2, kappa_E2,
    kappa_Z2``.
    """


def reliability(
    *,
    model: str = "NIG",
    nu: Sequence[float] | None = None,
    M: int = PAPER["common"]["M"],
    n_rep: int = PAPER["common"]["n_rep"],
    n_boot: int = PAPER["common"]["n_boot"],
    stats: Sequence[str] = PAPER["common"]["stats"],
    scores: Sequence[str] | None = None,
    n_mc: int = 1000,
    n_bins: int = 20,
    fixed_u: bool | None = None,
    u_seed: int = 0,
    **run: Unpack[RunOptions],
) -> ReliabilityResult:
    r"""Validation probability of calibration tests on calibrated synthetic data.

    Parameters
    ----------
    model : {"NIG", "TIG"}, default: "NIG"
    nu : sequence of float, optional
        Grid of ν (NIG: shape of u²; TIG: ν of D, > 2). Default: the paper's grid,
        NIG (2, 3, …, 10, 15, 20), TIG (2.5, 3, 4, …, 10, 20).
    M : int, default: 5000
        Dataset size.
    n_rep : int, default: 1000
        Datasets per cell.
    n_boot : int, default: 5000
        Bootstrap replicates of each BCa interval.
    stats : sequence of str, default: ("ZMS", "RCE")
        Any statistic of :func:`mcref.validate`.
    scores : sequence of {"BS", "Sim", "Sim2"}, optional
        Default: ``("BS",)`` when every statistic has a predefined reference, else all
        three. "Sim"/"Sim2" simulate a reference under the true D for each dataset
        (``n_mc`` repeats).
    n_mc : int, default: 1000
    n_bins : int, default: 20
        Bins of the binned statistics.
    fixed_u : bool, optional
        Draw u once and keep it for every dataset of the study (default: True for TIG,
        False for NIG, as the paper).
    u_seed : int, default: 0
        Seed of the fixed u sample.
    **run : RunOptions
        The runner's keywords (:class:`RunOptions`: seed, n_jobs, backend, scheduler, store, …).

    Returns
    -------
    ReliabilityResult

    References
    ----------
    .. [1] P. Pernot, "Negative impact of heavy-tailed uncertainty and error distributions
       on the reliability of calibration statistics for machine learning regression
       tasks" (2024), arXiv:2402.10043.

    Examples
    --------
    >>> res = reliability(model="NIG", nu=(6,), M=500, n_rep=20, n_boot=200, n_jobs=1, progress=False)
    >>> bool(res.table["p_val"].between(0, 1).all())
    True
    >>> res.table[["model", "nu", "stat", "zeta"]].values.tolist()
    [['NIG', 6, 'ZMS', 'BS'], ['NIG', 6, 'RCE', 'BS']]
    """
    if model not in ("NIG", "TIG"):
        raise ValueError(f"`model` must be 'NIG' or 'TIG', got {model!r}")
    nus = check_values(PAPER[model]["nu"] if nu is None else nu, "nu", kind=float)
    if model == "TIG" and any(not x > 2 for x in nus):
        raise ValueError(f"`nu`: the TIG model needs ν > 2 (unit-variance t), got {min(nus)}")
    M = check_int(M, "M", minimum=3)
    n_rep = check_int(n_rep, "n_rep", minimum=1)
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    n_mc = check_int(n_mc, "n_mc", minimum=2)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    stats = [info(s).name for s in check_values(stats, "stats", kind=str)]
    if scores is None:
        scores = ("BS",) if all(info(s).reference is not None for s in stats) else SCORES
    scores = check_values(scores, "scores", kind=str)
    for sc in scores:
        if sc not in SCORES:
            raise ValueError(f"`scores`: unknown score {sc!r}; accepted: {', '.join(SCORES)}")
    fixed_u = (model == "TIG") if fixed_u is None else bool(fixed_u)
    if fixed_u and model == "NIG":
        raise ValueError("`fixed_u`: the NIG model varies the shape of u with ν, so u cannot be fixed across cells")
    u_seed = check_int(u_seed, "u_seed", minimum=0)
    params = {"model": model, "nu": list(nus), "M": M, "n_rep": n_rep, "n_boot": n_boot, "stats": stats,
              "scores": list(scores), "n_mc": n_mc, "n_bins": n_bins, "fixed_u": fixed_u,
              "u_seed": u_seed if fixed_u else None}
    keys = [{"model": model, "nu": x} for x in nus]
    spec = StudySpec(name="reliability", params=params, keys=keys, cell=_reliability_cell)
    return run_as(ReliabilityResult, spec, run)
