"""Distribution fits of a dataset's uncertainties, errors and z-scores (docs/methods.md,
"Distribution fits").

:func:`distfit` characterises a dataset ``(E, u)`` as the heavy-tails and sensitivity
papers of P. Pernot (2024) do before trusting a calibration statistic:

========================  =================================================  ==============
parameters                model                                              method
========================  =================================================  ==============
``nu_u2, sigma_u2``       u²/σ_u2 ~ IG(ν, ν)  (inverse gamma)                 minimum KS
``nu_E2, sigma_E2``       E²/σ_E2 ~ F(1, ν)   (Fisher–Snedecor)               minimum KS
``nu_Z2, sigma_Z2``       Z²/σ_Z2 ~ F(1, ν)                                   minimum KS
``t_nu, t_loc, t_scale``  (Z − loc)/scale ~ t(ν)  (Student)                  maximum likelihood
``mean_Z, sd_Z``          sample mean and standard deviation of Z
``bias_Z``                ``100·|mean_Z|/sd_Z`` (%)
========================  =================================================  ==============

The minimum-KS ("maximum goodness-of-fit") fits minimise the Kolmogorov–Smirnov distance
sup|F_n − F| over (ν, σ), as R's ``fitdistrplus::mge(gof = "KS")`` (Delignette-Muller &
Dutang 2015) used in the papers, with a grid start and a restarted Nelder–Mead that does not
stop on the flat ridge at large ν (ν is confined to ``NU_BOUNDS``; a fit at a bound is
flagged). Their standard uncertainties come from the nonparametric pair bootstrap (as
``fitdistrplus::bootdist``); the Student-t fit's from the curvature of the log-likelihood
(observed information). ``DistFit.se_method`` says which for every parameter.

Why these models: for u² ~ IG(ν/2, ν/2)·σ² and E = u·N(0, 1) (the NIG model) the errors
follow E²/σ² ~ F(1, ν) exactly; so with the IG(ν, ν) parametrisation used here the NIG
model predicts ``nu_E2`` = 2·``nu_u2``. A calibrated dataset with a t(ν) generative
distribution has Z ~ t(ν)·√((ν−2)/ν), i.e. Z² ~ F(1, ν)·(ν−2)/ν.

References
----------
P. Pernot (2024), "Negative impact of heavy-tailed uncertainty and error distributions on
the reliability of calibration statistics for machine learning regression tasks",
arXiv:2402.10043 (code: github.com/ppernot/2024_RCE, ``R/fitDist.R``).
M. L. Delignette-Muller and C. Dutang (2015), "fitdistrplus: An R package for fitting
distributions", *J. Stat. Softw.* 64(4), doi:10.18637/jss.v064.i04.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
from scipy import optimize, special

from .core import _progress
from .core._checks import dataset_args, as_float_array, check_E_u, check_int, check_progress, check_seed
from .kernels import fit as KF
from .kernels.rng import chunk_states
from .kernels.special import FAMILY_F1, FAMILY_IG
from .parallel import map_chunks, over_tasks, run_region, serial_blas

__all__ = ["DistFit", "TFit", "distfit", "fit_scaled", "fit_t", "ks_distance", "NU_BOUNDS"]

#: Range of every fitted ν (shape parameters of the IG, F and t fits).
NU_BOUNDS = (0.2, 1000.0)
#: Default number of bootstrap replicates of :func:`distfit`.
DEFAULT_N_BOOT = 100
#: Bootstrap searches stop at this simplex size in (ln ν, ln σ): 0.1 % of each parameter,
#: far below its sampling uncertainty.
_BOOT_XTOL = 1e-3
_FIT_XTOL = 1e-7

_FAMILIES = {"ig": FAMILY_IG, "f1": FAMILY_F1}
_GRID_NU = np.geomspace(0.3, 500.0, 24)
_GRID_LOG_MED = {
    # ln median of Y_ν: IG(ν, ν): P(Y ≤ m) = Q(ν, ν/m) = 1/2; F(1, ν): F⁻¹(1/2)
    FAMILY_IG: np.log(_GRID_NU / special.gammainccinv(_GRID_NU, 0.5)),
    FAMILY_F1: np.log(special.fdtri(1.0, _GRID_NU, 0.5)),
}
_NO_GRID = np.empty(0)

_KS_VARS = ("u2", "E2", "Z2")
_PARAMS = ("nu_u2", "sigma_u2", "nu_E2", "sigma_E2", "nu_Z2", "sigma_Z2",
           "t_nu", "t_loc", "t_scale", "mean_Z", "sd_Z", "bias_Z")


def _block(m: int) -> int:
    return max(8, int(0.5 * math.sqrt(m)))


def _family_code(family: str) -> int:
    try:
        return _FAMILIES[str(family).lower()]
    except KeyError:
        raise ValueError(f"`family` must be 'ig' (scaled IG(ν, ν)) or 'f1' (scaled F(1, ν)), got {family!r}") from None


def _positive_sample(x: Any, name: str) -> np.ndarray:
    x = as_float_array(x, name)
    if x.size < 8:
        raise ValueError(f"`{name}` needs at least 8 values for a distribution fit, got {x.size}")
    if np.any(x <= 0):
        k = int(np.sum(x <= 0))
        raise ValueError(
            f"`{name}` must be strictly positive for a scaled IG/F fit (its logarithm is used); "
            f"{k} value(s) are ≤ 0 (an error of exactly 0 gives E² = 0: drop or jitter it)"
        )
    return x


def _compressed(x: np.ndarray, counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(x, kind="stable")
    counts = np.ones(x.size, dtype=np.int64) if counts is None else counts
    xs = np.empty(x.size)
    cum = np.empty(x.size, dtype=np.int64)
    m = KF.compress(x, order, counts, xs, cum)
    return xs[:m], cum[:m]


def ks_distance(x: Any, family: str, nu: float, scale: float) -> float:
    """Kolmogorov–Smirnov distance ``sup_x |F_n(x) − P(s·Y_ν ≤ x)|`` of a positive sample.

    ``family`` ``"ig"``: Y ~ IG(ν, ν); ``"f1"``: Y ~ F(1, ν); ``scale`` = s. The value is the
    exact two-sided statistic of ``scipy.stats.kstest`` (computed without evaluating the CDF
    at every point, see :mod:`mcref.kernels.fit`).

    Examples
    --------
    >>> import numpy as np, scipy.stats
    >>> x = scipy.stats.f(1, 5).rvs(size=2000, random_state=1) * 0.3
    >>> d = ks_distance(x, "f1", 5.0, 0.3)
    >>> bool(np.isclose(d, scipy.stats.kstest(x, scipy.stats.f(1, 5, scale=0.3).cdf).statistic))
    True
    """
    code = _family_code(family)
    x = _positive_sample(x, "x")
    if not (nu > 0 and scale > 0 and math.isfinite(nu) and math.isfinite(scale)):
        raise ValueError(f"`nu` and `scale` must be finite and > 0, got {nu!r} and {scale!r}")
    xs, cum = _compressed(x)
    return float(KF.ks_distance(xs, cum, code, float(nu), float(scale), _block(xs.size)))


def _fit_compressed(xs, cum, code) -> tuple[float, float, float]:
    lo, hi = math.log(NU_BOUNDS[0]), math.log(NU_BOUNDS[1])
    nu, s, d, _ = KF.ks_fit(xs, cum, code, np.log(_GRID_NU), _GRID_LOG_MED[code], lo, hi, _block(xs.size),
                            0.0, 0.0, 0.25, _FIT_XTOL)
    return float(nu), float(s), float(d)


def fit_scaled(x: Any, family: str) -> tuple[float, float, float]:
    """Minimum-KS fit of x = s·Y_ν, Y_ν ~ IG(ν, ν) (``"ig"``) or F(1, ν) (``"f1"``).

    Returns ``(nu, scale, ks)``: the fitted ν (in ``NU_BOUNDS``), the scale s and the
    minimised KS distance.

    Examples
    --------
    >>> import scipy.stats
    >>> x = scipy.stats.f(1, 6).rvs(size=20_000, random_state=2) * 0.5
    >>> nu, s, ks = fit_scaled(x, "f1")
    >>> bool(abs(nu - 6) < 1.5 and abs(s - 0.5) < 0.05)
    True
    """
    code = _family_code(family)
    xs, cum = _compressed(_positive_sample(x, "x"))
    return _fit_compressed(xs, cum, code)


# ----------------------------------------------------------------------------------
# Student-t by maximum likelihood
# ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TFit:
    """Maximum-likelihood fit of a shifted, scaled Student-t: (z − loc)/scale ~ t(ν).

    ``se_*`` are curvature standard uncertainties (the inverse observed information, the
    Hessian of the log-likelihood at the optimum by central differences of its analytic
    gradient); NaN for ν at its bound, where the likelihood is flat.
    """

    nu: float
    loc: float
    scale: float
    se_nu: float
    se_loc: float
    se_scale: float
    loglik: float
    at_bound: bool


def _t_loglik_grad(nu: float, mu: float, sigma: float, z: np.ndarray) -> tuple[float, np.ndarray]:
    """Log-likelihood and its gradient in (ν, μ, σ); the sums over z in one pass over blocks of
    values, one ``prange`` region (:func:`mcref.kernels.fit.t_loglik_all`) or, where numba's
    threading layer is not safe here (:func:`mcref.parallel.prange_safe`), tasks on mcref's threads
    (:func:`mcref.kernels.fit.t_loglik_sums`); no M-sized temporaries, the blocks' sums added in
    block order (the same bits on any thread count, either way)."""
    from .kernels.fit import LL_BLOCK, t_loglik_all, t_loglik_sums

    n = z.size
    nb = -(-n // LL_BLOCK)
    part = np.empty((nb, 3))
    nu, mu, sigma = float(nu), float(mu), float(sigma)
    if not run_region(lambda: t_loglik_all(z, nu, mu, sigma, part), nb, 10.0 * LL_BLOCK, phase="t fit"):
        over_tasks(lambda b0, b1: t_loglik_sums(z, nu, mu, sigma, b0, b1, part), nb, 10.0 * LL_BLOCK, phase="t fit")
    sq, sw, sr = (float(v) for v in part.sum(axis=0))  # axis 0: row after row, in block order
    ll = n * (special.gammaln(0.5 * (nu + 1)) - special.gammaln(0.5 * nu) - 0.5 * math.log(nu * math.pi)
              - math.log(sigma)) - 0.5 * (nu + 1) * sq
    g_nu = 0.5 * n * (special.digamma(0.5 * (nu + 1)) - special.digamma(0.5 * nu) - 1.0 / nu) \
        - 0.5 * sq + 0.5 * (nu + 1) / nu * sw
    g_mu = (nu + 1) / sigma * sr
    g_sigma = (-n + (nu + 1) * sw) / sigma
    return float(ll), np.array([g_nu, g_mu, g_sigma])


def _median_quartiles(z: np.ndarray, sorted_z: np.ndarray | None = None) -> tuple[float, float, float]:
    """``np.median(z)`` and ``np.percentile(z, [75, 25])`` (NumPy's linear method), bit for bit, from
    one partition instead of two (the fit's start: 8 of its 23 ms of serial NumPy at M = 10⁶), or
    read from ``sorted_z`` (z sorted, when the caller has it: the same order statistics, no
    partition; 1.5 of the t fit's 22 ms at M = 10⁵).

    The order statistics are those NumPy reads: the one or two middle values, and for each quartile
    q the values at ⌊q(n − 1)⌋ and the next, interpolated as NumPy's ``_lerp`` does
    (a + (b − a)·g, or b − (b − a)·(1 − g) when g ≥ ½)."""
    n = z.size
    quart = []
    for q in (0.75, 0.25):
        v = n * q + (1.0 - q) - 1.0  # NumPy's virtual index (alpha = beta = 1): exactly q·(n − 1)
        i = int(math.floor(v))
        quart.append((i, min(i + 1, n - 1), v - i))
    mid = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    part = sorted_z if sorted_z is not None else np.partition(z, sorted({*mid, *(k for i, j, _ in quart for k in (i, j))}))
    med = float(part[mid[0]]) if n % 2 else float((part[mid[0]] + part[mid[1]]) / 2.0)
    out = []
    for i, j, g in quart:
        a, b = float(part[i]), float(part[j])
        d = b - a
        out.append(b - d * (1.0 - g) if g >= 0.5 else a + d * g)
    return med, out[0], out[1]


def fit_t(z: Any, *, sorted_z: np.ndarray | None = None) -> TFit:
    """Maximum-likelihood Student-t fit of the sample ``z`` (location, scale and ν).

    L-BFGS-B on (ln ν, μ, ln σ) with the analytic gradient, started from the median, a
    robust scale and the best of a few ν; ν is confined to ``NU_BOUNDS``. ``sorted_z``: the same
    values sorted ascending, when the caller has them (the start's median and quartiles are read
    there instead of partitioning ``z``; the same fit, bit for bit). Each likelihood pass is one
    ``prange`` region where numba's threading layer allows (:func:`mcref.parallel.prange_safe`),
    else tasks on mcref's threads; the same bits either way and on any thread count.

    Examples
    --------
    >>> import scipy.stats
    >>> z = scipy.stats.t(5).rvs(size=20_000, random_state=3) * 0.8 + 0.1
    >>> f = fit_t(z)
    >>> bool(abs(f.nu - 5) < 4 * f.se_nu and abs(f.loc - 0.1) < 4 * f.se_loc)
    True
    """
    z = as_float_array(z, "z")
    if z.size < 8:
        raise ValueError(f"a Student-t fit needs at least 8 values, got {z.size}")
    if sorted_z is not None and np.shape(sorted_z) != z.shape:
        raise ValueError(f"`sorted_z` must be `z` sorted (shape {z.shape}), got shape {np.shape(sorted_z)}")
    mu0, q75, q25 = _median_quartiles(z, sorted_z)
    s0 = (q75 - q25) / 1.349 or float(np.std(z))
    if not s0 > 0:
        raise ValueError("a Student-t fit needs a sample with spread (all values are equal)")
    lo, hi = math.log(NU_BOUNDS[0]), math.log(NU_BOUNDS[1])

    def nll(th):
        nu, mu, sig = math.exp(th[0]), th[1], math.exp(th[2])
        ll, g = _t_loglik_grad(nu, mu, sig, z)
        return -ll / z.size, -np.array([g[0] * nu, g[1], g[2] * sig]) / z.size

    starts = [np.array([math.log(v), mu0, math.log(s0)]) for v in (1.5, 3.0, 6.0, 20.0, 100.0)]
    th0 = min(starts, key=lambda th: nll(th)[0])
    # BLAS on one thread: L-BFGS-B's steps between the threaded passes would wake OpenBLAS's threads,
    # which then spin on the cores the passes need (mcref.parallel.serial_blas)
    with serial_blas():
        return _fit_t_from(nll, th0, lo, hi, z)


def _fit_t_from(nll, th0, lo: float, hi: float, z: np.ndarray) -> TFit:
    """L-BFGS-B from ``th0``, then the observed information at the optimum (:func:`fit_t`)."""
    res = optimize.minimize(nll, th0, jac=True, method="L-BFGS-B",
                            bounds=[(lo, hi), (None, None), (None, None)],
                            options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 1000})
    nu, mu, sig = math.exp(res.x[0]), float(res.x[1]), math.exp(res.x[2])
    at_bound = bool(res.x[0] <= lo + 1e-6 or res.x[0] >= hi - 1e-6)
    ll, _ = _t_loglik_grad(nu, mu, sig, z)
    # observed information: central differences of the analytic gradient in (ν, μ, σ)
    p = np.array([nu, mu, sig])
    h = 1e-5 * np.maximum(np.abs(p), 1e-3)
    hess = np.empty((3, 3))
    for k in range(3):
        dp = np.zeros(3)
        dp[k] = h[k]
        gp = _t_loglik_grad(*(p + dp), z)[1]
        gm = _t_loglik_grad(*(p - dp), z)[1]
        hess[:, k] = (gp - gm) / (2 * h[k])
    hess = 0.5 * (hess + hess.T)
    se = np.full(3, np.nan)
    if not at_bound:
        try:
            cov = np.linalg.inv(-hess)
            d = np.diag(cov)
            se = np.where(d > 0, np.sqrt(np.abs(d)), np.nan)
        except np.linalg.LinAlgError:
            pass
    return TFit(nu, mu, sig, float(se[0]), float(se[1]), float(se[2]), ll, at_bound)


# ----------------------------------------------------------------------------------
# distfit
# ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DistFit:
    """The distribution fits of a dataset (see the module docstring for the models).

    Attributes
    ----------
    nu_u2, sigma_u2, nu_E2, sigma_E2, nu_Z2, sigma_Z2 : float
        Minimum-KS fits: u²/σ_u2 ~ IG(ν_u2, ν_u2), E²/σ_E2 ~ F(1, ν_E2), Z²/σ_Z2 ~ F(1, ν_Z2)
        (σ_u2, σ_E2, σ_Z2 are scales of the squared variables, in their units).
    t_nu, t_loc, t_scale : float
        Maximum-likelihood Student-t fit of Z.
    mean_Z, sd_Z, bias_Z : float
        Mean and standard deviation (n − 1) of Z, and ``100·|mean_Z|/sd_Z`` (%).
    se : dict
        Standard uncertainty of every parameter (NaN where undefined: ν at a bound for the
        curvature method, or no bootstrap).
    ci : dict
        95 % interval of every parameter: bootstrap percentile interval (bootstrap
        parameters) or estimate ± 1.96 se (curvature parameters).
    se_method : dict
        ``"bootstrap"`` (robust bootstrap standard deviation, half the 16–84 % range of the
        replicates, which ignores replicates stuck at a ν bound) or ``"curvature"``.
    ks : dict
        Minimised KS distance of the ``u2``, ``E2`` and ``Z2`` fits.
    at_bound : dict
        Whether the fitted ν of ``u2``, ``E2``, ``Z2``, ``t`` lies at a bound of ``NU_BOUNDS``.
    n, n_boot : int
    """

    nu_u2: float
    sigma_u2: float
    nu_E2: float
    sigma_E2: float
    nu_Z2: float
    sigma_Z2: float
    t_nu: float
    t_loc: float
    t_scale: float
    mean_Z: float
    sd_Z: float
    bias_Z: float
    se: dict = field(repr=False)
    ci: dict = field(repr=False)
    se_method: dict = field(repr=False)
    ks: dict = field(repr=False)
    at_bound: dict = field(repr=False)
    n: int = 0
    n_boot: int = 0
    t_loglik: float = field(default=float("nan"), repr=False)

    @property
    def values(self) -> dict[str, float]:
        """The twelve parameters, in table order."""
        return {p: getattr(self, p) for p in _PARAMS}

    def as_dict(self) -> dict[str, Any]:
        """Parameters, their ``<name>_se``, the KS distances (``ks_<var>``), n and n_boot."""
        row: dict[str, Any] = {}
        for p in _PARAMS:
            row[p] = getattr(self, p)
            row[p + "_se"] = self.se[p]
        for v in _KS_VARS:
            row["ks_" + v] = self.ks[v]
        row["n"] = self.n
        row["n_boot"] = self.n_boot
        return row

    def to_frame(self, name: str | None = None):
        """One row (index ``name``) of a :class:`pandas.DataFrame` (``as_dict`` columns)."""
        import pandas as pd

        return pd.DataFrame([self.as_dict()], index=[name if name is not None else 0])

    def __str__(self) -> str:
        lines = [f"Distribution fits (n = {self.n}, bootstrap replicates = {self.n_boot})",
                 f"{'parameter':<10} {'value':>12} {'se':>11}  {'95% interval':<27} method"]
        for p in _PARAMS:
            lo, hi = self.ci[p]
            flag = ""
            var = p.split("_")[-1] if p.startswith(("nu_", "sigma_")) else ("t" if p == "t_nu" else "")
            if p.startswith("nu_") or p == "t_nu":
                flag = "  (at bound)" if self.at_bound.get(var, False) else ""
            lines.append(f"{p:<10} {self.values[p]:>12.5g} {self.se[p]:>11.3g}  "
                         f"[{lo:>11.5g}, {hi:>11.5g}]  {self.se_method[p]}{flag}")
        lines.append("KS distance: " + ", ".join(f"{v} {self.ks[v]:.4f}" for v in _KS_VARS))
        return "\n".join(lines)


def _robust_se(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    if x.size < 2:
        return float("nan")
    q16, q84 = np.percentile(x, [15.865525393145708, 84.13447460685429])
    return float(0.5 * (q84 - q16))


@dataset_args
def distfit(E: Any, u: Any, *, n_boot: int = DEFAULT_N_BOOT, seed: Any = None,
            progress: bool | None = None) -> DistFit:
    """Fit the distributions of u², E², Z² and Z of a dataset (see the module docstring).

    Parameters
    ----------
    E, u : array_like, shape (M,)
        Errors and their standard uncertainties (finite, u > 0, no E exactly 0).
    n_boot : int, default 100
        Pair-bootstrap replicates for the uncertainties of the minimum-KS fits and of the
        moments of Z (0: no bootstrap, their ``se`` are NaN).
    seed : None, int, SeedSequence or Generator
        Seeds the bootstrap (replicate b has its own stream: results do not depend on the
        number of threads).
    progress : bool, optional
        A progress bar "distfit bootstrap" on stderr. None (default): only when stderr is a
        terminal and the bootstrap is expected to take more than about 2 s; True: always
        (also into a pipe, sparsely); False: never. The fit does not depend on it.

    Returns
    -------
    DistFit

    Examples
    --------
    >>> import mcref
    >>> E, u = mcref.synthetic.nig(20_000, nu=6, seed=1)   # u² ~ IG(3, 3), E = u·N(0, 1)
    >>> fit = mcref.distfit(E, u, n_boot=20, seed=2)
    >>> bool(abs(fit.nu_u2 - 3) < 4 * fit.se["nu_u2"]), bool(abs(fit.nu_E2 - 6) < 4 * fit.se["nu_E2"])
    (True, True)
    """
    E, u = check_E_u(E, u, min_size=8)
    n_boot = check_int(n_boot, "n_boot", minimum=0)
    progress = check_progress(progress)
    if n_boot == 1:
        raise ValueError("`n_boot` must be 0 (no bootstrap) or at least 2 (a standard deviation needs 2)")
    Z = E / u
    if np.any(E == 0):
        raise ValueError(
            f"`E` has {int(np.sum(E == 0))} error(s) exactly 0: E² = 0 has no logarithm, so the scaled-F "
            "fits of E² and Z² are undefined; drop these points or give them a tiny error"
        )
    X = np.vstack([u * u, E * E, Z * Z])
    if not np.all(np.isfinite(X)) or np.any(X <= 0):
        raise ValueError("u², E² or Z² overflows or underflows float64: rescale E and u (same unit) first")
    codes = np.array([FAMILY_IG, FAMILY_F1, FAMILY_F1], dtype=np.int64)
    fits = []
    for v in range(3):
        xs, cum = _compressed(X[v])
        fits.append(_fit_compressed(xs, cum, int(codes[v])))
    tf = fit_t(Z)
    mean_z, sd_z = float(Z.mean()), float(Z.std(ddof=1))
    est = {
        "nu_u2": fits[0][0], "sigma_u2": fits[0][1], "nu_E2": fits[1][0], "sigma_E2": fits[1][1],
        "nu_Z2": fits[2][0], "sigma_Z2": fits[2][1], "t_nu": tf.nu, "t_loc": tf.loc, "t_scale": tf.scale,
        "mean_Z": mean_z, "sd_Z": sd_z, "bias_Z": 100.0 * abs(mean_z) / sd_z,
    }
    se = {p: float("nan") for p in _PARAMS}
    ci = {p: (float("nan"), float("nan")) for p in _PARAMS}
    method = {p: "bootstrap" for p in _PARAMS}
    for p, s in (("t_nu", tf.se_nu), ("t_loc", tf.se_loc), ("t_scale", tf.se_scale)):
        se[p] = s
        ci[p] = (est[p] - 1.959963984540054 * s, est[p] + 1.959963984540054 * s)
        method[p] = "curvature"
    if n_boot:
        lo, hi = math.log(NU_BOUNDS[0]), math.log(NU_BOUNDS[1])
        orders = np.argsort(X, axis=1, kind="stable")
        theta = np.log(np.array([[f[0], f[1]] for f in fits]))
        states = chunk_states(check_seed(seed), n_boot)
        out = np.empty((n_boot, 8))
        blk = _block(E.size)

        def replicate(b: int, _thread: int) -> None:  # nogil kernel: the threads run in parallel
            KF.boot_fit_replicate(X, orders, codes, Z, states[b], theta, lo, hi, blk, 0.05, _BOOT_XTOL, out[b])

        seconds = _progress.estimate_seconds(distfit_bootstrap=float(n_boot) * E.size)
        with _progress.session(progress, seconds=seconds) as sess, \
                sess.phase("distfit bootstrap", n_boot, "replicate") as phase:
            # Ctrl-C stops it within a replicate
            map_chunks(replicate, n_boot, numba.get_num_threads(), progress=phase.chunks(1))
        boot = {"nu_u2": out[:, 0], "sigma_u2": out[:, 1], "nu_E2": out[:, 2], "sigma_E2": out[:, 3],
                "nu_Z2": out[:, 4], "sigma_Z2": out[:, 5], "mean_Z": out[:, 6], "sd_Z": out[:, 7],
                "bias_Z": 100.0 * np.abs(out[:, 6]) / out[:, 7]}
        for p, b in boot.items():
            se[p] = _robust_se(b)
            q = np.percentile(b, [2.5, 97.5])
            ci[p] = (float(q[0]), float(q[1]))
    nu_lo, nu_hi = NU_BOUNDS
    at_bound = {v: bool(f[0] <= nu_lo * (1 + 1e-6) or f[0] >= nu_hi * (1 - 1e-6)) for v, f in zip(_KS_VARS, fits)}
    at_bound["t"] = tf.at_bound
    return DistFit(**est, se=se, ci=ci, se_method=method, ks=dict(zip(_KS_VARS, (f[2] for f in fits))),
                   at_bound=at_bound, n=int(E.size), n_boot=n_boot, t_loglik=tf.loglik)
