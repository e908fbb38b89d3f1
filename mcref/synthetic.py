r"""Synthetic calibrated datasets: inverse-gamma uncertainties and unit-variance errors.

Every model draws :math:`u^2 = \sigma^2\,a/G` with :math:`G \sim \Gamma(a, 1)`, i.e.
:math:`u^2/\sigma^2 \sim \mathrm{IG}(a, a)` (shape :math:`a`, scale :math:`a`; R's
``rinvgamma(n, a, a)``), then :math:`E = u\,\varepsilon` with :math:`\varepsilon \sim
D(0, 1)` independent of :math:`u`. The datasets are therefore calibrated by
construction (docs/methods.md, "Synthetic models").

========  =====================================  ======================  ==============
function  :math:`u^2`                             :math:`D`                papers
========  =====================================  ======================  ==============
``nig``   IG(ν/2, ν/2)                           N(0, 1)                 heavy tails
``tig``   IG(ν_IG/2, ν_IG/2), ν_IG=6: IG(3, 3)   t(ν_D), unit variance   heavy tails
``ig``    IG(k, k)                               any D (normal, t6, …)   App. B scaling
========  =====================================  ======================  ==============

:func:`case` draws the six synthetic cases A–F of the primer (conditional calibration:
consistency along u, adaptivity along x), which are *not* all calibrated.

The studies (:mod:`mcref.studies`) draw millions of these datasets through the same
function, :func:`draw`, chunk by chunk, each chunk from its own xoshiro256** stream
(:func:`mcref.kernels.rng.chunk_states`); the draws are numba kernels
(:mod:`mcref.kernels.synthetic`: Marsaglia–Tsang gamma, ziggurat normal), the
statistics too.

References
----------
.. [1] P. Pernot, "Negative impact of heavy-tailed uncertainty and error distributions on
   the reliability of calibration statistics for machine learning regression tasks"
   (2024), arXiv:2402.10043.
.. [2] P. Pernot, "On the sensitivity of simulated reference values of calibration
   statistics to the generative distribution" (2024), appendix B.
"""

from __future__ import annotations

import math

import numpy as np

from .core._checks import check_int, check_positive_number, check_seed
from .generative import Distribution, get_distribution
from .kernels import generative as KG
from .kernels.rng import chunk_states
from .kernels.synthetic import draw_ig_dataset

__all__ = ["draw", "stream", "ig", "nig", "tig", "case", "CASES"]


def stream(seed) -> np.ndarray:
    """The xoshiro256** state (uint64[4]) of a dataset drawn from ``seed`` (None, int or SeedSequence)."""
    return chunk_states(check_seed(seed), 1)[0]


def draw(state: np.ndarray, a: float, dist: Distribution, shape, *, scale: float = 1.0):
    r"""Draw ``(u2, eps)`` of the given shape from the stream ``state`` (advanced in place).

    :math:`u^2 = \sigma^2 a/G`, :math:`G \sim \Gamma(a, 1)` (σ² = ``scale``), then
    :math:`\varepsilon \sim D`; ``dist`` must be parametric (normal, t(ν), normp(p), uniform,
    laplace). Rows of a 2-D shape are independent datasets.
    """
    u2 = np.empty(shape)
    z = np.empty(shape)
    v = np.empty(shape) if dist.needs_mixing else z
    nu = dist.param
    draw_ig_dataset(state, float(a), float(scale), dist.code, nu, u2, z, v)
    eps = np.empty(shape)
    for r in range(1 if u2.ndim == 1 else u2.shape[0]):
        zr, vr, er = (z, v, eps) if u2.ndim == 1 else (z[r], v[r], eps[r])
        KG.transform(dist.code, nu, zr, vr, er, er)
    return u2, eps


def ig_dataset(M: int, a: float, dist, seed, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    M = check_int(M, "M", minimum=1)
    d = dist if isinstance(dist, Distribution) else get_distribution(dist)
    if d.kind in ("empirical", "user"):
        raise ValueError(f"`dist` must be a parametric distribution (normal, t(nu), normp(p), uniform, laplace), got {d.label}")
    u2, eps = draw(stream(seed), a, d, M, scale=scale)
    u = np.sqrt(u2)
    return u * eps, u


def ig(M: int, k: float, dist="normal", seed=None, *, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Calibrated dataset with :math:`u^2/\sigma^2 \sim \mathrm{IG}(k, k)` and :math:`\varepsilon \sim D`.

    The parametrisation of the scaling study (appendix B of [2]): k ∈ {3, …, 24}.

    Parameters
    ----------
    M : int
        Dataset size.
    k : float
        Shape and scale of the inverse gamma (> 0; the mean of u² exists for k > 1).
    dist : str or Distribution, default: "normal"
        D (parametric: normal, t(ν), normp(p), uniform, laplace).
    seed : None, int or SeedSequence
    scale : float, default: 1
        σ².

    Returns
    -------
    E, u : ndarray, shape (M,)

    Examples
    --------
    >>> E, u = ig(100_000, 4, "t6", seed=0)
    >>> bool(abs(np.mean(u**2) - 4 / 3) < 0.02), bool(abs(np.mean((E / u)**2) - 1) < 0.03)
    (True, True)
    """
    return ig_dataset(M, check_positive_number(k, "k"), dist, seed, scale)


def nig(M: int, nu: float, seed=None, *, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""NIG model of [1]: :math:`u^2/\sigma^2 \sim \mathrm{IG}(\nu/2, \nu/2)`, :math:`\varepsilon \sim N(0, 1)`.

    Then :math:`E \sim` Student-t(ν) scaled by σ (a normal scale mixture).

    Examples
    --------
    >>> E, u = nig(5000, 4, seed=1)
    >>> E.shape, bool(np.all(u > 0))
    ((5000,), True)
    """
    return ig_dataset(M, 0.5 * check_positive_number(nu, "nu"), "normal", seed, scale)


def tig(M: int, nu_D: float, nu_IG: float = 6.0, seed=None, *, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""TIG model of [1]: :math:`u^2/\sigma^2 \sim \mathrm{IG}(\nu_{IG}/2, \nu_{IG}/2)` (IG(3, 3) by
    default), :math:`\varepsilon \sim t(\nu_D)` scaled to unit variance (ν_D > 2).

    Examples
    --------
    >>> E, u = tig(5000, 4, seed=1)
    >>> E.shape
    (5000,)
    """
    nu_D = check_positive_number(nu_D, "nu_D")
    if not nu_D > 2:
        raise ValueError(f"`nu_D` must be > 2 for a unit-variance Student-t, got {nu_D}")
    return ig_dataset(M, 0.5 * check_positive_number(nu_IG, "nu_IG"), ("t", nu_D), seed, scale)


#: The primer's six synthetic cases: (calibrated, consistent, adaptive), and what changes.
CASES = {
    "A": ((True, True, True), "u = 0.1·(0.1 + x²), E = u·N(0, 1)"),
    "B": ((True, False, False), "u = RMS(u_A)·N(1, 0.1), independent of x; errors of A"),
    "C": ((False, False, False), "u = a random permutation of u_A; errors of A (⟨Z²⟩ ≈ 50)"),
    "D": ((False, False, False), "u = 2·u_A; errors of A (⟨Z²⟩ ≈ 0.25)"),
    "E": ((True, True, True), "u = u_A, E = u·t(4)/√2 (unit variance, heavy tails)"),
    "F": ((True, True, True), "u constant = RMS(u_A), E = u·N(0, 1) (homoscedastic)"),
}


def case(name: str, M: int = 5000, seed=None):
    r"""One of the primer's synthetic cases A–F as a :class:`mcref.datasets.Dataset` with ``x``.

    x ~ N(0, 1) sorted, R = 0.1 + x², u_A = 0.1·R and E_A = u_A·ε, ε ~ N(0, 1); then

    ===  =========================================  ===========  ==========  ========
    c.   uncertainties u and errors E               calibrated   consistent  adaptive
    ===  =========================================  ===========  ==========  ========
    A    u_A, E_A                                   yes          yes         yes
    B    RMS(u_A)·N(1, 0.1), E_A                    yes          no          no
    C    random permutation of u_A, E_A             no           no          no
    D    2·u_A, E_A                                 no           no          no
    E    u_A, u_A·t(4)/√2                           yes          yes         yes
    F    RMS(u_A) (constant), RMS(u_A)·N(0, 1)      yes          yes         yes
    ===  =========================================  ===========  ==========  ========

    (P. Pernot, "Validation of uncertainty quantification metrics: a primer based on the
    consistency and adaptivity concepts", arXiv:2303.07170, code ppernot/2023_Primer,
    ``R/0_makeFigs_Synth.R``; the flags are the code's comments. The draws use NumPy's
    generator, not R's: the sets are the same model, not the same numbers.)

    Examples
    --------
    >>> ds = case("D", M=2000, seed=1)
    >>> ds.name, round(float((ds.Z ** 2).mean()), 1)
    ('case D', 0.2)
    """
    from .datasets import Dataset

    key = str(name).strip().upper()
    if key not in CASES:
        raise ValueError(f"`name` must be one of {', '.join(CASES)}, got {name!r}")
    M = check_int(M, "M", minimum=10)
    rng = np.random.default_rng(check_seed(seed))
    x = np.sort(rng.standard_normal(M))
    u_a = 0.1 * (0.1 + x**2)
    eps = rng.standard_normal(M)
    e_a = u_a * eps
    mue = math.sqrt(float(np.mean(u_a**2)))
    if key == "A":
        u, E = u_a, e_a
    elif key == "B":
        u, E = np.abs(mue * rng.normal(1.0, 0.1, M)), e_a
    elif key == "C":
        u, E = rng.permutation(u_a), e_a
    elif key == "D":
        u, E = 2.0 * u_a, e_a
    elif key == "E":
        u, E = u_a, u_a * rng.standard_t(4, M) / math.sqrt(2.0)
    else:
        u = np.full(M, mue)
        E = u * rng.standard_normal(M)
    return Dataset(f"case {key}", E, u, x, f"mcref.synthetic.case({key!r}): {CASES[key][1]}")


def gaussian_linear_posterior(n_sims: int, n_draws: int, *, d: int = 2, n_obs: int = 10, scale: float = 1.0,
                              shift: float = 0.0, corr: float | None = None, prior_as_posterior: bool = False,
                              seed=None) -> tuple[np.ndarray, np.ndarray, dict]:
    r"""Posterior draws of a Gaussian linear model with a conjugate prior, exact or with a chosen error
    (docs/methods.md, "Posteriors of vector parameters").

    Model: θ ~ N(0, I_d), y = Aθ + ε with ε ~ N(0, I_{n_obs}) and the fixed design
    A = √n_obs·Q (Q: n_obs × d with orthonormal columns, drawn once from the seed), so AᵀA = n_obs·I.
    The posterior is N(μ(y), Σ) with Σ = (I + AᵀA)⁻¹ = I/(1 + n_obs) and μ(y) = ΣAᵀy: the same
    diagonal Σ for every case (posterior correlation 0; contraction 1 − 1/(1 + n_obs)). Each of the
    ``n_sims`` cases draws θ* from the prior, y, and ``n_draws`` draws of

    * ``scale``: N(μ, scale²Σ) (0.8: too narrow, overconfident; 1.25: too wide);
    * ``shift``: the mean of parameter 0 moved by ``shift`` posterior sd (biased high for shift > 0);
    * ``corr``: the correlation of parameters 0 and 1 set to ``corr`` with the right marginals
      (needs d ≥ 2; the right value is 0);
    * ``prior_as_posterior``: N(0, I), the prior (calibrated, uninformative).

    Returns
    -------
    truth : ndarray (n_sims, d)
    draws : ndarray (n_sims, n_draws, d)
    extras : dict
        ``prior_draws`` (max(n_draws, 1000), d) prior draws; ``logpdf(x, i)`` the exact log density of
        the law the draws of case i come from, at points x (…, d) (for ``logpdf=``); ``mean`` (n_sims, d)
        and ``cov`` (d, d) of that law; ``posterior_mean``, ``posterior_cov`` the correct posterior's;
        ``y`` (n_sims, n_obs), ``design`` A.

    Examples
    --------
    >>> truth, draws, ex = gaussian_linear_posterior(200, 50, d=3, seed=0)
    >>> truth.shape, draws.shape, ex["prior_draws"].shape
    ((200, 3), (200, 50, 3), (1000, 3))
    >>> round(float(ex["posterior_cov"][0, 0]), 4)   # 1/(1 + n_obs)
    0.0909
    """
    n_sims = check_int(n_sims, "n_sims", minimum=1)
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    d = check_int(d, "d", minimum=1)
    n_obs = check_int(n_obs, "n_obs", minimum=d)
    scale = check_positive_number(scale, "scale")
    shift = float(shift)
    if not math.isfinite(shift):
        raise ValueError(f"`shift` must be a finite number, got {shift!r}")
    if corr is not None:
        corr = float(corr)
        if d < 2 or not -1.0 < corr < 1.0:
            raise ValueError(f"`corr` needs d >= 2 and a value in (-1, 1), got corr={corr!r} with d={d}")
    rng = np.random.default_rng(check_seed(seed))
    Q = np.linalg.qr(rng.standard_normal((n_obs, d)))[0]
    A = math.sqrt(n_obs) * Q
    post_cov = np.eye(d) / (1.0 + n_obs)
    theta = rng.standard_normal((n_sims, d))
    y = theta @ A.T + rng.standard_normal((n_sims, n_obs))
    post_mean = (y @ A) @ post_cov
    if prior_as_posterior:
        mean, cov = np.zeros((n_sims, d)), np.eye(d)
    else:
        sd = np.sqrt(np.diag(post_cov))
        mean = post_mean.copy()
        mean[:, 0] += shift * sd[0]
        R = np.eye(d)
        if corr is not None:
            R[0, 1] = R[1, 0] = corr
        cov = scale**2 * (sd[:, None] * R * sd[None, :])
    L = np.linalg.cholesky(cov)
    draws = mean[:, None, :] + rng.standard_normal((n_sims, n_draws, d)) @ L.T
    prior_draws = rng.standard_normal((max(n_draws, 1000), d))
    inv = np.linalg.inv(cov)
    log_norm = -0.5 * (d * math.log(2.0 * math.pi) + math.log(np.linalg.det(cov)))

    def logpdf(x, i):
        z = np.asarray(x, dtype=float) - mean[i]
        return log_norm - 0.5 * np.einsum("...k,kl,...l->...", z, inv, z)

    extras = {"prior_draws": prior_draws, "logpdf": logpdf, "mean": mean, "cov": cov, "posterior_mean": post_mean,
              "posterior_cov": post_cov, "y": y, "design": A}
    return theta, draws, extras
