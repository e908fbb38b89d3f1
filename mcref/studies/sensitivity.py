r"""Sensitivity of simulated reference values to the shape of D (Pernot 2024, sensitivity paper).

For a dataset's uncertainties u, :math:`\theta_\mathrm{ref}` of ZMS, CC, ENCE and ZMSE is
simulated under D = unit-variance t(ν) for a grid of ν and under the normal D. All the D
of one dataset are driven by the same normal deviates (common random numbers,
:func:`mcref.simulate`), so each difference to the normal reference carries a small
*paired* standard error and the curves θ_ref(ν) are smooth.

One cell per dataset; the table has one row per dataset × D × statistic.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .. import datasets as _datasets
from ..core._checks import check_int, check_u, check_values
from ..reference import K_SENSITIVITY, simulate
from ..stats import info
from ._result import StudyResult, run_as
from ._runner import RunOptions, StudySpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["sensitivity", "SensitivityResult", "PAPER"]

PAPER = dict(datasets=("QM9_E", "logP_10k_a_LS-GCN"), nu=(3, 4, 5, 7, 10, 15, 20), n_bins=50, n_mc=10_000,
             stats=("ZMS", "CC", "ENCE", "ZMSE"))


def _sensitivity_cell(key: dict, params: dict, ss: np.random.SeedSequence, n_threads: int) -> list[dict]:
    """One dataset: every statistic under normal D and t(ν) for every ν, from common random numbers."""
    name = key["dataset"]
    u = np.asarray(params["u"], dtype=np.float64) if params.get("u") is not None else _datasets.load(name).u
    dists = ["normal"] + [("t", float(nu)) for nu in params["nu"]]
    sim = simulate(params["stats"], u, dists=dists, n_mc=params["n_mc"], n_bins=params["n_bins"],
                   min_count=params["min_count"], seed=ss, n_threads=n_threads)
    rows = []
    for d, nu in zip(sim.dists, [math.inf] + [float(x) for x in params["nu"]]):
        for stat in sim.names:
            r = sim.reference(stat, d)
            if d.kind == "normal":
                diff, se_diff = 0.0, 0.0
            else:
                p = sim.paired_difference(stat, d, "normal")
                diff, se_diff = p.diff, p.se
            rows.append({"nu": nu, "dist": d.label, "stat": stat, "mean": r.mean, "se": r.se, "sd": r.sd,
                         "low": r.low, "high": r.high, "diff_normal": diff, "se_diff": se_diff})
    return rows


@dataclass(frozen=True, repr=False)
class SensitivityResult(StudyResult):
    """Result of :func:`sensitivity`.

    ``.table`` columns: ``dataset, nu, dist, stat, mean, se, sd, low, high, diff_normal,
    se_diff`` (ν = inf for the normal D; ``diff_normal`` = θ_ref(t(ν)) − θ_ref(normal) with
    its paired standard error).
    """

    @property
    def sensitive(self):
        """Per (dataset, stat): whether θ_ref under some t(ν) differs from the normal one.

        The rule of :meth:`mcref.reference.PairedDifference.sensitive` (the one used by
        :func:`mcref.validate`): ``|diff_normal| > k·√(se_ν² + se_normal²)`` with
        k = :data:`mcref.reference.K_SENSITIVITY`. Columns: ``max_z`` (largest
        ``|diff_normal|/√(se_ν² + se_normal²)`` over ν), ``max_z_paired`` (the same with the
        paired se, more precise: how surely the references differ) and ``sensitive``.
        """
        t = self.table
        normal = t[~np.isfinite(t["nu"])].set_index(["dataset", "stat"])["se"].rename("se_normal")
        t = t[np.isfinite(t["nu"])].join(normal, on=["dataset", "stat"])
        z = t["diff_normal"].abs() / np.sqrt(t["se"] ** 2 + t["se_normal"] ** 2)
        zp = t["diff_normal"].abs() / t["se_diff"]
        g = (t.assign(z=z, zp=zp).groupby(["dataset", "stat"], sort=False)
             .agg(max_z=("z", "max"), max_z_paired=("zp", "max")).reset_index())
        g["sensitive"] = g["max_z"] > K_SENSITIVITY
        return g


def sensitivity(
    *,
    datasets: Sequence[str] = PAPER["datasets"],
    u=None,
    name: str = "u",
    nu: Sequence[float] = PAPER["nu"],
    stats: Sequence[str] = PAPER["stats"],
    n_bins: int = PAPER["n_bins"],
    n_mc: int = PAPER["n_mc"],
    min_count: int = 30,
    **run: Unpack[RunOptions],
) -> SensitivityResult:
    r"""θ_ref under D = t(ν) for a grid of ν, beside the normal D, for given uncertainties.

    .. math::

        \theta_\mathrm{ref}(\nu) = \mathrm{E}\,f(u\,\varepsilon, u),\quad
        \varepsilon \sim t_\nu\sqrt{(\nu-2)/\nu}

    Parameters
    ----------
    datasets : sequence of str, default: ("QM9_E", "logP_10k_a_LS-GCN")
        Built-in datasets whose u are used (ignored when ``u`` is given).
    u : array_like, optional
        Uncertainties of your own dataset instead; labelled ``name`` in the table.
    name : str, default: "u"
    nu : sequence of float, default: (3, 4, 5, 7, 10, 15, 20)
        Degrees of freedom of t (each > 2).
    stats : sequence of str, default: ("ZMS", "CC", "ENCE", "ZMSE")
    n_bins : int, default: 50
    n_mc : int, default: 10 000
    min_count : int, default: 30
    **run : RunOptions
        The runner's keywords (:class:`RunOptions`: seed, n_jobs, backend, scheduler, store, …).

    Returns
    -------
    SensitivityResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> res = sensitivity(u=rng.lognormal(size=600), nu=(4, 10), stats=("ZMS", "ZMSE"), n_bins=10,
    ...                   n_mc=200, n_jobs=1, progress=False)
    >>> res.table[["dataset", "dist", "stat"]].head(3).values.tolist()
    [['u', 'normal', 'ZMS'], ['u', 'normal', 'ZMSE'], ['u', 't(4)', 'ZMS']]
    """
    nus = check_values(nu, "nu", kind=float)
    bad = [x for x in nus if not x > 2]
    if bad:
        raise ValueError(f"`nu` must hold values > 2 (a unit-variance t needs ν > 2), got {bad[0]}")
    stats = [info(s).name for s in check_values(stats, "stats", kind=str)]
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    n_mc = check_int(n_mc, "n_mc", minimum=2)
    min_count = check_int(min_count, "min_count", minimum=1)
    params = {"nu": list(nus), "stats": stats, "n_bins": n_bins, "n_mc": n_mc, "min_count": min_count, "u": None}
    if u is not None:
        uu = check_u(u, min_size=2)
        params["u"] = uu.tolist()
        params["u_sha256"] = hashlib.sha256(uu.tobytes()).hexdigest()
        names = [str(name)]
    else:
        names = list(check_values(datasets, "datasets", kind=str))
        known = _datasets.names()
        for d in names:
            if d not in known:
                raise ValueError(f"`datasets`: unknown dataset {d!r}; built-in: {', '.join(known)}")
    params["datasets"] = names
    keys = [{"dataset": d} for d in names]
    spec = StudySpec(name="sensitivity", params=params, keys=keys, cell=_sensitivity_cell)
    return run_as(SensitivityResult, spec, run,
                  params={k: v for k, v in params.items() if k != "u"})
