"""Simulation-based calibration as a study: simulate → infer → rank (docs/methods.md, "SBC as a
study").

:func:`sbc` runs the loop of Talts et al. (2018, arXiv:1804.06788) on the study runner
(:func:`mcref.studies.run_study`): simulation ``i`` is the cell ``{"sim": i}`` of the study
``"sbc"``; it draws from its own stream ``cell_seed(seed, "sbc", {"sim": i})`` only,

    θ*_i = sample_prior(rng),  x_i = simulate(θ*_i, rng),  draws_i = sample_posterior(x_i, S, rng),

so the collected arrays are bit-identical for any number of workers, any backend (loky, threads,
Dask) and whether cells were computed now or read back from a ``store`` after an interrupt.
The arrays then go to :func:`mcref.posterior.from_posterior`. :func:`sbc_draws` returns the
arrays alone; :func:`gaussian_linear_sbc` is a ready toy (a conjugate Gaussian model with
knobs for the errors a posterior can have).
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, is_dataclass
from typing import Any, Callable

import numpy as np

from ..core._checks import check_int, check_study_seed
from ..store import canonical_json
from ..studies import StudySpec, cell_seed, run_study

__all__ = ["sbc", "sbc_draws", "SBCDraws", "GaussianLinearSBC", "gaussian_linear_sbc"]

#: the study's name in a store (and in the cells' seeds)
STUDY = "sbc"
#: the check's keywords that :func:`sbc` passes on to :func:`mcref.posterior.from_posterior`
CHECK_OPTIONS = ("names", "logpdf", "references", "prior_draws", "alpha", "n_swaps")
#: layout of a cell's row (stored): truth and draws as base64 of little-endian float64, C order
ROW_FORMAT = 1


@dataclass(frozen=True)
class SBCDraws:
    """The arrays of an SBC study (:func:`sbc_draws`).

    Attributes
    ----------
    truth : ndarray, shape (N, d)
        θ*_i, the parameters drawn from the prior, one row per simulation.
    draws : ndarray, shape (N, S, d)
        The S posterior draws of each simulation.
    prior_draws : ndarray, shape (n_prior, d) or None
        Draws of the prior from the study's own stream (for the check's contraction), None when
        ``n_prior=0``.
    seed : int
        The study's seed (the check's seed too).
    store : str or None
        The results store, if any.
    n_computed, n_loaded : int
        Simulations computed by this call, read back from the store.
    seconds : float
        Wall time of the study.
    """

    truth: np.ndarray
    draws: np.ndarray
    prior_draws: np.ndarray | None
    seed: int
    store: str | None
    n_computed: int
    n_loaded: int
    seconds: float


def _pack(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _unpack(text: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8").astype(np.float64).reshape(shape)


def _vector(value: Any, what: str) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must return a vector of numbers, got {type(value).__name__}") from None
    if v.ndim == 0:
        v = v.reshape(1)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{what} must return a vector of d >= 1 parameters, got an array of shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what} returned a NaN or infinite parameter: {v.tolist()}")
    return v


def _one_sim(functions: tuple, rng: np.random.Generator, n_draws: int) -> tuple[np.ndarray, np.ndarray]:
    """θ*, and the (S, d) draws of one simulation, drawn from ``rng`` in that order."""
    sample_prior, simulate, sample_posterior = functions
    theta = _vector(sample_prior(rng), "sample_prior(rng)")
    x = simulate(theta.copy(), rng)
    draws = np.asarray(sample_posterior(x, n_draws, rng), dtype=np.float64)
    d = theta.size
    if d == 1 and draws.shape == (n_draws,):
        draws = draws.reshape(n_draws, 1)
    if draws.shape != (n_draws, d):
        raise ValueError(f"sample_posterior(x, n_draws, rng) must return an array of shape (n_draws, d) = "
                         f"({n_draws}, {d}), got {draws.shape}")
    if not np.all(np.isfinite(draws)):
        raise ValueError("sample_posterior(x, n_draws, rng) returned NaN or infinite draws")
    return theta, draws


def _sbc_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int, data=None) -> list[dict]:
    """One simulation: its θ* and draws, packed in one row (``d``, ``truth``, ``draws``)."""
    rng = np.random.default_rng(seed_seq)
    theta, draws = _one_sim(data, rng, int(params["n_draws"]))
    return [{"d": int(theta.size), "truth": _pack(theta), "draws": _pack(draws)}]


def _name_of(f: Callable) -> str:
    owner = getattr(f, "__self__", None)
    name = getattr(f, "__qualname__", None) or type(f).__qualname__
    module = getattr(f, "__module__", None) or type(f).__module__
    if owner is not None and not isinstance(owner, type):  # a bound method: say its object's class
        name = f"{type(owner).__qualname__}.{getattr(f, '__name__', name)}"
        if is_dataclass(owner):  # and its fields (a toy's knobs): another toy is another study
            name += f" of {owner!r}"
    return f"{module}.{name}"


def _check_functions(sample_prior, simulate, sample_posterior) -> tuple:
    for name, f in (("sample_prior", sample_prior), ("simulate", simulate), ("sample_posterior", sample_posterior)):
        if not callable(f):
            raise ValueError(f"`{name}` must be a function, got {type(f).__name__}")
    return sample_prior, simulate, sample_posterior


def sbc_draws(sample_prior: Callable, simulate: Callable, sample_posterior: Callable, *, n_sims: int,
              n_draws: int, seed: int | None = None, store: str | os.PathLike | None = None,
              backend: str = "loky", n_jobs: int = -1, scheduler: Any = None, progress: bool = True,
              threads_per_cell: int | None = None, n_prior: int = 1000, params: dict | None = None) -> SBCDraws:
    """The truth and posterior draws of ``n_sims`` simulations, one seeded cell each, in parallel.

    Parameters are those of :func:`sbc` (without the check's options); ``params``: JSON
    scalars that identify the functions' settings in a store (for instance the knobs of a
    toy), beside their qualified names.

    Returns
    -------
    SBCDraws
        ``truth`` (N, d), ``draws`` (N, S, d), ``prior_draws`` (n_prior, d) and how they
        were obtained.

    Examples
    --------
    >>> toy = gaussian_linear_sbc(d=2)
    >>> out = sbc_draws(toy.sample_prior, toy.simulate, toy.sample_posterior, n_sims=5, n_draws=20,
    ...                 seed=1, backend="sequential", progress=False)
    >>> out.truth.shape, out.draws.shape, out.prior_draws.shape
    ((5, 2), (5, 20, 2), (1000, 2))
    """
    functions = _check_functions(sample_prior, simulate, sample_posterior)
    n_sims = check_int(n_sims, "n_sims", minimum=2)
    n_draws = check_int(n_draws, "n_draws", minimum=2)
    n_prior = check_int(n_prior, "n_prior", minimum=0)
    seed = check_study_seed(seed)
    extra = {} if params is None else dict(params)
    study_params = {"format": ROW_FORMAT, "n_draws": n_draws, "functions": [_name_of(f) for f in functions],
                    **({"params": extra} if extra else {})}
    keys = [{"sim": i} for i in range(n_sims)]
    spec = StudySpec(STUDY, study_params, keys, _sbc_cell, data={canonical_json(k): functions for k in keys})
    info = run_study(spec, seed=seed, n_jobs=n_jobs, backend=backend, scheduler=scheduler, store=store,
                     progress=progress, threads_per_cell=threads_per_cell)
    dims = info.table["d"].to_numpy()
    if not np.all(dims == dims[0]):
        i = int(np.argmax(dims != dims[0]))
        raise ValueError(f"sample_prior(rng) must return the same number of parameters in every simulation: "
                         f"simulation 0 has d = {dims[0]}, simulation {i} has d = {dims[i]}")
    d = int(dims[0])
    truth = np.stack([_unpack(t, (d,)) for t in info.table["truth"]])
    draws = np.stack([_unpack(t, (n_draws, d)) for t in info.table["draws"]])
    prior = None
    if n_prior:
        rng = np.random.default_rng(cell_seed(info.seed, STUDY, {"prior": n_prior}))
        prior = np.stack([_vector(sample_prior(rng), "sample_prior(rng)") for _ in range(n_prior)])
        if prior.shape[1] != d:
            raise ValueError(f"sample_prior(rng) returned {prior.shape[1]} parameters for the prior draws, "
                             f"{d} in the simulations")
    return SBCDraws(truth, draws, prior, int(info.seed), info.store, info.n_computed, info.n_loaded, info.seconds)


def sbc(sample_prior: Callable, simulate: Callable, sample_posterior: Callable, *, n_sims: int, n_draws: int,
        seed: int | None = None, store: str | os.PathLike | None = None, backend: str = "loky", n_jobs: int = -1,
        scheduler: Any = None, progress: bool = True, threads_per_cell: int | None = None, n_prior: int = 1000,
        params: dict | None = None, **check_options: Any):
    r"""Simulation-based calibration: simulate, infer, and check the posteriors (one exact verdict).

    For i = 1..N (one seeded cell of the study runner each, in parallel, resumable):
    θ*_i ~ prior (``sample_prior(rng)``), x_i ~ p(x | θ*_i) (``simulate(θ*_i, rng)``), and
    S draws of the posterior p(θ | x_i) (``sample_posterior(x_i, S, rng)``). Under a correct
    posterior, θ*_i is exchangeable with its S draws (Talts et al. 2018), which is what
    :func:`mcref.posterior.from_posterior` checks: per parameter, jointly (TARP, projections,
    depth) and in one verdict of exact size by the swap null.

    Parameters
    ----------
    sample_prior : callable ``(rng) -> (d,)``
        One draw of the prior from the :class:`numpy.random.Generator` ``rng``.
    simulate : callable ``(theta, rng) -> x``
        One data set simulated at ``theta`` (any object ``sample_posterior`` takes).
    sample_posterior : callable ``(x, n_draws, rng) -> (n_draws, d)``
        Draws of the posterior given ``x`` (the inference under test: MCMC, an amortized
        network, ...).
    n_sims : int
        Simulations N (>= 2).
    n_draws : int
        Posterior draws S per simulation (>= 2).
    seed : int or None, default: None
        Study seed: simulation i draws from ``cell_seed(seed, "sbc", {"sim": i})`` only; the
        check uses it too. None: the store's seed, else one drawn from the OS (the check's
        ``seed`` tells it).
    store : str or os.PathLike, optional
        SQLite store (:class:`mcref.store.StudyStore`): each finished simulation is committed at
        once, with its θ* and its S × d draws (8·S·d bytes, base64 in the row: 107 kB a
        simulation at S = 1000, d = 10); after Ctrl-C the same call computes only the
        missing ones. The store holds the study by ``n_draws``, the functions' qualified names
        (with the fields of a dataclass whose methods they are, e.g. the toy's knobs),
        ``params`` and the seed: a larger ``n_sims`` extends it.
    backend, n_jobs, scheduler, progress, threads_per_cell
        The runner's options (:func:`mcref.studies.run_study`): ``"loky"`` processes (the
        functions must pickle: module-level functions, or closures, which loky sends by value),
        ``"threading"``, ``"sequential"`` or ``"dask"``.
    n_prior : int, default: 1000
        Prior draws for the check's contraction (``prior_draws``), from the study's stream
        ``cell_seed(seed, "sbc", {"prior": n_prior})``; 0 for none. A ``prior_draws`` given
        in ``check_options`` wins.
    params : dict, optional
        JSON scalars that identify the functions' settings in a store.
    **check_options
        Keywords of :func:`mcref.posterior.from_posterior`: ``names``, ``logpdf``,
        ``references``, ``prior_draws``, ``alpha``, ``n_swaps``.

    Returns
    -------
    PosteriorCheck
        The check of the N simulations (:func:`mcref.posterior.from_posterior`).

    Raises
    ------
    ValueError
        A bad argument (before any simulation); a function that returns the wrong shape, NaN
        or infinity (naming the function and the cell).
    TypeError
        A keyword that is neither the study's nor the check's.

    Notes
    -----
    The same seed gives the same bits for any ``n_jobs``, backend and resume. A simulation
    failing raises at once; the simulations committed before stay in the store.

    Examples
    --------
    >>> toy = gaussian_linear_sbc(d=2)
    >>> check = sbc(toy.sample_prior, toy.simulate, toy.sample_posterior, n_sims=50, n_draws=50,
    ...             seed=2, backend="sequential", progress=False, n_swaps=99)
    >>> check.ranks.shape
    (50, 2)
    """
    unknown = [k for k in check_options if k not in CHECK_OPTIONS]
    if unknown:
        raise TypeError(f"sbc() got an unexpected keyword argument {unknown[0]!r}; besides the study's options it "
                        f"takes the check's keywords {', '.join(CHECK_OPTIONS)}")
    from ._check import from_posterior

    out = sbc_draws(sample_prior, simulate, sample_posterior, n_sims=n_sims, n_draws=n_draws, seed=seed,
                    store=store, backend=backend, n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                    threads_per_cell=threads_per_cell, n_prior=n_prior, params=params)
    options = dict(check_options)
    if out.prior_draws is not None and options.get("prior_draws") is None:
        options["prior_draws"] = out.prior_draws
    return from_posterior(out.truth, out.draws, seed=out.seed, **options)


# ---------------------------------------------------------------------- the toy
@dataclass(frozen=True)
class GaussianLinearSBC:
    r"""A conjugate Gaussian model for :func:`sbc`, with the errors a posterior can have.

    Prior θ ~ N(0, I_d); data x = θ + σ ε with ε ~ N(0, I_d) (``noise`` σ). The exact
    posterior is N(μ, v I_d) with v = σ²/(1 + σ²) and μ = x/(1 + σ²) (conjugacy). The
    posterior that :meth:`sample_posterior` returns is exact by default; the knobs make it
    wrong in one way each:

    * ``scale`` c: sd c·√v (c < 1 too narrow: ∪-shaped ranks; c > 1 too wide: ∩-shaped);
    * ``shift`` b: the mean of parameter 0 moved by b·√v (biased: skewed ranks);
    * ``corr`` ρ: correlation ρ between parameters 0 and 1 (0 in the exact posterior), marginals
      unchanged (only the joint parts of the check can see it), as
      :func:`mcref.synthetic.gaussian_linear_posterior`;
    * ``prior_as_posterior``: draws of the prior N(0, I_d), whatever x (calibrated, and
      uninformative: contraction 0).

    Examples
    --------
    >>> toy = gaussian_linear_sbc(d=3, scale=0.8)
    >>> rng = np.random.default_rng(0)
    >>> theta = toy.sample_prior(rng)
    >>> toy.sample_posterior(toy.simulate(theta, rng), 4, rng).shape
    (4, 3)
    """

    d: int = 2
    noise: float = 1.0
    scale: float = 1.0
    shift: float = 0.0
    corr: float | None = None
    prior_as_posterior: bool = False

    def sample_prior(self, rng: np.random.Generator) -> np.ndarray:
        """θ ~ N(0, I_d)."""
        return rng.standard_normal(self.d)

    def simulate(self, theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """x = θ + σ ε."""
        return theta + self.noise * rng.standard_normal(self.d)

    def sample_posterior(self, x: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        """``n_draws`` draws of the (possibly wrong) posterior given ``x``, shape (n_draws, d)."""
        z = rng.standard_normal((n_draws, self.d))
        if self.prior_as_posterior:
            return z
        if self.corr is not None:  # z_1 ← ρ z_0 + √(1 − ρ²) z_1: unit variances, correlation ρ
            z[:, 1] = self.corr * z[:, 0] + np.sqrt(1.0 - self.corr ** 2) * z[:, 1]
        v = self.noise ** 2 / (1.0 + self.noise ** 2)
        mean = np.asarray(x, dtype=np.float64) / (1.0 + self.noise ** 2)
        mean = mean + np.eye(self.d)[0] * self.shift * np.sqrt(v)
        return mean + self.scale * np.sqrt(v) * z

    def params(self) -> dict:
        """The knobs as JSON scalars (``sbc``'s ``params=``, which identifies them in a store)."""
        return {"d": self.d, "noise": self.noise, "scale": self.scale, "shift": self.shift,
                "corr": "none" if self.corr is None else float(self.corr),
                "prior_as_posterior": self.prior_as_posterior}


def gaussian_linear_sbc(d: int = 2, *, noise: float = 1.0, scale: float = 1.0, shift: float = 0.0,
                        corr: float | None = None, prior_as_posterior: bool = False) -> GaussianLinearSBC:
    """The toy of :class:`GaussianLinearSBC`, its arguments checked: its three methods are the
    functions of :func:`sbc` (``toy.sample_prior``, ``toy.simulate``, ``toy.sample_posterior``)."""
    d = check_int(d, "d", minimum=1)
    for name, v in (("noise", noise), ("scale", scale)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise ValueError(f"`{name}` must be a positive number, got {v!r}")
    if not (isinstance(shift, (int, float)) and np.isfinite(shift)):
        raise ValueError(f"`shift` must be a finite number, got {shift!r}")
    if corr is not None and (d < 2 or not (isinstance(corr, (int, float)) and -1 < corr < 1)):
        raise ValueError(f"`corr` needs d >= 2 and a value in (-1, 1), got corr={corr!r} with d={d}")
    return GaussianLinearSBC(d, float(noise), float(scale), float(shift), None if corr is None else float(corr),
                             bool(prior_as_posterior))
