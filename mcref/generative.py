"""Generative distributions D(0, 1) of the synthetic errors E* = u·ε
(docs/methods.md, "Generative distributions").

``get_distribution`` turns a specification into a :class:`Distribution`:

================  =========================================================  ====================
spec              D                                                          kurtosis
================  =========================================================  ====================
``"normal"``      N(0, 1)                                                    3
``"t6"``,         Student-t scaled to unit variance, t(ν)·√((ν−2)/ν)         3 + 6/(ν−4)
``"t(6)"``,       (ν > 2 required)
``("t", 6)``
``"normp4"``,     exponential power (normal-power) distribution of           Γ(5/p)Γ(1/p)/Γ(3/p)²
``"normp(4)"``,   shape p, density ∝ exp(−abs(ε/s)^p), s = √(Γ(1/p)/Γ(3/p))  (2.1884 at p = 4)
``("normp", 4)``  (unit variance); p = 2 normal, p = 1 Laplace
                  (ErrViewLib's ``Normp4``: p = 4)
``"uniform"``     U(−√3, √3)                                                 1.8
``"laplace"``     Laplace(0, 1/√2)                                           6
``"empirical"``   the dataset's own Z, standardized, resampled               sample
``"permutation"`` the dataset's own Z (not standardized) shuffled across     —
                  u: the permutation test of "Z independent of u"
``"t(fit)"``      unit-variance t(ν̂), ν̂ the maximum-likelihood             3 + 6/(ν̂−4)
                  Student-t ν of the dataset's Z (ν̂ > 2 required;
                  see :func:`mcref.fit_t`)
callable          ``f(rng, size) -> ndarray``: a user sampler,               sample
                  checked numerically for zero mean, unit variance
================  =========================================================  ====================

All of them but the user sampler and the permutation D are driven by the same standard
normal deviates (common random numbers, see :mod:`mcref.kernels.generative`).
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable

import numpy as np

from .core._checks import as_float_array
from .kernels import generative as KG

__all__ = ["Distribution", "get_distribution", "permutation_distribution", "is_fitted_t", "DEFAULT_DISTS"]

DEFAULT_DISTS = ("normal", "t6")
_TFIT_KEYS = ("t(fit)", "tfit", "t_fit", "t(fitted)")
_NORMP_RE = re.compile(r"^normp\s*\(?\s*(?:p\s*=\s*)?([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*\)?$", re.IGNORECASE)
_T_RE = re.compile(r"^t\s*\(?\s*(?:nu\s*=\s*)?([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*\)?$", re.IGNORECASE)


@dataclass(frozen=True)
class Distribution:
    """A unit-variance generative distribution D.

    Attributes
    ----------
    kind : str
        ``normal``, ``t``, ``normp``, ``uniform``, ``laplace``, ``empirical``, ``permutation``
        (the data's own Z shuffled across u, :func:`permutation_distribution`) or ``user``.
    label : str
        Display name (``"t(6)"``, …); also keys the distribution's own random stream.
    nu : float
        Degrees of freedom for ``t``, shape p for ``normp`` (NaN otherwise).
    values : ndarray or None
        Sorted standardized sample of an ``empirical`` D; the data's Z of a ``permutation`` D.
    sampler : callable or None
        User sampler ``f(rng, size)``.
    """

    kind: str
    label: str
    nu: float = float("nan")
    values: np.ndarray | None = field(default=None, repr=False)
    sampler: Callable[[np.random.Generator, Any], np.ndarray] | None = field(default=None, repr=False)

    @property
    def code(self) -> int:
        return {"normal": KG.NORMAL, "t": KG.STUDENT_T, "uniform": KG.UNIFORM, "laplace": KG.LAPLACE,
                "empirical": KG.EMPIRICAL, "user": KG.USER, "normp": KG.NORMP,
                "permutation": KG.PERMUTATION}[self.kind]

    @property
    def param(self) -> float:
        """The parameter the kernels take with :attr:`code`: ν of t, p of normp, 0 otherwise."""
        return float(self.nu) if self.kind in ("t", "normp") else 0.0

    @property
    def mixing_df(self) -> float:
        """Degrees of freedom k of the second stream's χ²_k variates (ν for t(ν), 2/p for
        normp(p); 0 when there is none), :func:`mcref.kernels.generative.mixing_df`."""
        return float(KG.mixing_df(self.code, self.param))

    @property
    def needs_mixing(self) -> bool:
        """True when a second stream (χ² variates of the t mixture, the magnitudes of normp) is needed."""
        return self.mixing_df > 0

    @cached_property
    def table(self) -> np.ndarray:
        """The empirical D's inverse-CDF table (:func:`empirical_table`), built once."""
        if self.kind != "empirical":
            raise ValueError(f"only the empirical D has a table, not {self.label}")
        return empirical_table(self.values)

    @property
    def own_stream(self) -> bool:
        """True when the Monte Carlo kernel gives this D a random stream of its own, keyed by its
        label: the mixing variates (:attr:`needs_mixing`) or the shuffles of the permutation D."""
        return self.needs_mixing or self.kind == "permutation"

    @property
    def kurtosis(self) -> float:
        """E[ε⁴] (infinite for t with ν ≤ 4)."""
        if self.kind == "normal":
            return 3.0
        if self.kind == "t":
            return 3.0 + 6.0 / (self.nu - 4.0) if self.nu > 4 else math.inf
        if self.kind == "uniform":
            return 1.8
        if self.kind == "laplace":
            return 6.0
        if self.kind == "normp":
            p = self.nu
            return math.exp(math.lgamma(5 / p) + math.lgamma(1 / p) - 2 * math.lgamma(3 / p))
        if self.kind == "empirical":
            return float(np.mean(self.values**4))
        return float("nan")

    def stream_key(self) -> int:
        """A stable integer derived from the label, keying the mixing stream."""
        return zlib.crc32(self.label.encode())

    def draw(self, z: np.ndarray, rng_mix: np.random.Generator | None, rng: np.random.Generator | None = None) -> np.ndarray:
        """ε for the standard normal deviates ``z`` (1-D), as the Monte Carlo engine draws it."""
        out = np.empty_like(z)
        if self.kind == "user":
            return self._user_draw(rng, z.shape)
        if self.kind == "permutation":
            if z.shape != self.values.shape:
                raise ValueError(f"the permutation D draws {self.values.size} values (the data's Z), not {z.size}")
            return rng_mix.permutation(self.values)
        v = 2.0 * rng_mix.standard_gamma(0.5 * self.mixing_df, size=z.shape) if self.needs_mixing else z
        emp = self.table if self.kind == "empirical" else z[:1]
        KG.transform(self.code, self.param, z, v, emp, out)
        return out

    def _user_draw(self, rng, shape) -> np.ndarray:
        x = np.asarray(self.sampler(rng, shape), dtype=np.float64)
        if x.shape != tuple(shape) or not np.all(np.isfinite(x)):
            raise ValueError(
                f"the user sampler must return finite values of shape {tuple(shape)}, got shape {x.shape}"
            )
        return x

    def sample(self, size: int, seed=None) -> np.ndarray:
        """``size`` i.i.d. draws of ε (for inspection and tests).

        Examples
        --------
        >>> eps = get_distribution("t6").sample(100_000, seed=0)
        >>> bool(abs(eps.var() - 1) < 0.05)
        True
        """
        ss = np.random.SeedSequence(seed)
        g_z, g_mix = (np.random.default_rng(s) for s in ss.spawn(2))
        if self.kind == "user":
            return self._user_draw(g_z, (size,))
        return self.draw(g_z.standard_normal(size), g_mix)


@lru_cache(maxsize=1)
def _phi_grid(n: int = 4096, z0: float = -8.0, z1: float = 8.0) -> tuple[int, float, float, np.ndarray]:
    """(n, z0, h, pairs (Φ, h·φ) at z0 + c·h, c = 0 … n): the same for every empirical table."""
    from scipy.special import ndtr

    h = (z1 - z0) / n
    zg = z0 + h * np.arange(n + 1)
    grid = np.column_stack([ndtr(zg), h * np.exp(-0.5 * zg * zg) / np.sqrt(2.0 * np.pi)]).ravel()
    grid.flags.writeable = False
    return n, z0, h, grid


def empirical_table(values: np.ndarray) -> np.ndarray:
    r"""The empirical D's inverse CDF as one float64 array, read by the kernels' ``transform``.

    ε = F̂⁻¹(Φ(z)) = values[⌊Φ(z)·k⌋] for the k sorted standardized values, the index being
    the number of normal quantiles :math:`t_j = \Phi^{-1}(j/k)`, 0 < j < k, that are ≤ z
    (:func:`mcref.kernels.generative.empirical_index`): the same map as ⌊Φ(z)·k⌋ up to
    rounding at the k − 1 boundaries, without an erfc per draw. Layout:
    ``[k, z0, 1/h, n | (Φ(z0 + c·h), h·φ(z0 + c·h)), c = 0 … n | values (k) | t_0 … t_k]``
    with the grid z0 = −8, h = 16/n, n = 4096 (64 KB, for the cubic Hermite interpolation of
    Φ) and the sentinels t_0 = −∞, t_k = +∞.
    """
    from scipy.special import ndtri

    v = np.ascontiguousarray(values, dtype=np.float64)
    k = v.size
    if k < 2:
        raise ValueError("the empirical D needs at least two values")
    n, z0, h, grid = _phi_grid()
    # written in place (one array of 2k + O(1) words, no M-sized temporaries beyond j/k): the
    # same bits as concatenate([[k, z0, 1/h, n], grid, v, thr]) with thr[1:k] = ndtri(arange(1, k)/k)
    g = 4 + grid.size
    out = np.empty(g + 2 * k + 1)
    out[:4] = (k, z0, 1.0 / h, n)
    out[4:g] = grid
    out[g:g + k] = v
    thr = out[g + k:]
    thr[0], thr[k] = -np.inf, np.inf
    q = np.arange(1, k, dtype=np.float64)
    q /= k
    ndtri(q, out=thr[1:k])
    return out


def permutation_distribution(Z) -> Distribution:
    """The D that assigns the data's own Z to u at random (without replacement): the
    permutation test of "Z independent of u" (docs/methods.md, "Joint verdict";
    ``"permutation"`` in ``dists``). Exact under any D, but it keeps the data's average
    calibration, so it tests consistency only (CC, ENCE, ZMSE, UCE, and RCE through the
    pairing of Z with u), not ZMS. The Monte Carlo kernel shuffles Z from the D's own
    stream (:func:`mcref.kernels.rng.permute_into`).

    The D is a function of the multiset of Z alone, so it keeps Z sorted: a shuffle starts
    from the same array whatever the order of the rows, and a table does not change when
    the rows are shuffled."""
    z = np.sort(as_float_array(Z, "Z"))
    return Distribution("permutation", "permutation", values=z)


def _check_user_sampler(f: Callable, n: int = 200_000) -> None:
    rng = np.random.default_rng(12345)
    try:
        x = np.asarray(f(rng, (n,)), dtype=np.float64)
    except Exception as exc:  # noqa: BLE001 - report what the sampler raised
        raise ValueError(f"`dist`: the user sampler failed when called as f(rng, size): {exc!r}") from None
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise ValueError("`dist`: the user sampler must return finite float values of the requested shape")
    m, v = x.mean(), x.var()
    # standard errors of the mean (1/√n) and of the variance (√((κ−1)/n), κ from the sample)
    k = float(np.mean((x - m) ** 4) / v**2) if v > 0 else 3.0
    if abs(m) > 5.0 / math.sqrt(n) or abs(v - 1.0) > 5.0 * math.sqrt(max(k - 1.0, 0.1) / n):
        raise ValueError(
            f"`dist`: a user sampler must draw from a zero-mean, unit-variance distribution; "
            f"a check on {n} draws gave mean {m:.4f} and variance {v:.4f}"
        )


def is_fitted_t(spec: Any) -> bool:
    """Whether ``spec`` asks for the fitted Student-t, ``"t(fit)"``."""
    return isinstance(spec, str) and spec.strip().lower().replace(" ", "") in _TFIT_KEYS


def _fitted_t(Z) -> Distribution:
    """Unit-variance t(ν̂) with ν̂ the maximum-likelihood ν of the dataset's Z."""
    if Z is None:
        raise ValueError("`dist`='t(fit)' fits a Student-t to the dataset's Z: it needs E (pass E to the function)")
    from ._distfit import fit_t  # local: _distfit does not depend on this module

    nu = fit_t(as_float_array(Z, "Z")).nu
    if not nu > 2:
        raise ValueError(
            f"`dist`='t(fit)': the Student-t fitted to this dataset's Z has ν̂ = {nu:.3g} ≤ 2, so no "
            "unit-variance t(ν̂) exists (its variance is infinite); use dist='empirical' to resample "
            "the dataset's own Z instead"
        )
    _warn_if_slow(nu, f"'t(fit)' (ν̂ = {nu:.3g})")
    return Distribution("t", f"t(fit ν={nu:.3g})", nu=nu)


def get_distribution(spec: Any, *, Z: np.ndarray | None = None) -> Distribution:
    """Normalise a distribution specification (see the module docstring).

    Parameters
    ----------
    spec : str, tuple, Distribution or callable
    Z : ndarray, optional
        The dataset's Z = E/u, required by ``"empirical"`` and ``"t(fit)"``.

    Raises
    ------
    ValueError
        Unknown name, ν ≤ 2 for t (no unit-variance scaling exists; for ``"t(fit)"``, a
        fitted ν̂ ≤ 2), missing ``Z`` for ``empirical`` or ``t(fit)``, or a user sampler
        that is not zero-mean unit-variance.

    Examples
    --------
    >>> import mcref
    >>> E, u = mcref.synthetic.tig(20_000, nu_D=5, seed=4)
    >>> d = get_distribution("t(fit)", Z=E / u)
    >>> d.kind, d.label.startswith("t(fit ν=")
    ('t', True)
    """
    if isinstance(spec, Distribution):
        return spec
    if callable(spec):
        _check_user_sampler(spec)
        return Distribution("user", getattr(spec, "__name__", "user"), sampler=spec)
    nu = None
    if isinstance(spec, tuple) and len(spec) == 2 and str(spec[0]).lower() == "normp":
        return _normp(spec[1])
    if isinstance(spec, tuple) and len(spec) == 2 and str(spec[0]).lower() == "t":
        nu = spec[1]
    elif isinstance(spec, str):
        key = spec.strip().lower()
        if key in ("normal", "gauss", "gaussian", "n"):
            return Distribution("normal", "normal")
        if key == "uniform":
            return Distribution("uniform", "uniform")
        if key == "laplace":
            return Distribution("laplace", "laplace")
        if key == "empirical":
            if Z is None:
                raise ValueError("`dist`='empirical' needs the dataset's Z (pass E to the function)")
            z = np.sort(as_float_array(Z, "Z"))  # a function of the multiset of Z: the same bits in any row order
            sd = z.std()
            if z.size < 2 or sd == 0:
                raise ValueError("`dist`='empirical' needs at least two distinct Z values")
            return Distribution("empirical", "empirical", values=(z - z.mean()) / sd)
        if key == "permutation":
            if Z is None:
                raise ValueError("`dist`='permutation' shuffles the dataset's Z across u: it needs E (pass E to the "
                                 "function)")
            return permutation_distribution(Z)
        if key.replace(" ", "") in _TFIT_KEYS:
            return _fitted_t(Z)
        m = _NORMP_RE.match(key.replace(" ", ""))
        if m:
            return _normp(m.group(1))
        m = _T_RE.match(key)
        if m:
            nu = float(m.group(1))
    if nu is None:
        raise ValueError(
            f"unknown distribution {spec!r}: use 'normal', 't(nu)' (e.g. 't6', 't(4.5)', ('t', 6)), "
            "'t(fit)', 'normp(p)' (e.g. 'normp4', ('normp', 4)), 'uniform', 'laplace', 'empirical', "
            "or a callable f(rng, size) with unit variance"
        )
    try:
        nu = float(nu)
    except (TypeError, ValueError):
        raise ValueError(f"`dist`: ν of the t distribution must be a number, got {nu!r}") from None
    if not nu > 2 or not math.isfinite(nu):
        raise ValueError(
            f"`dist`: a unit-variance Student-t needs finite ν > 2 (its variance ν/(ν−2)), got ν={nu:g}"
        )
    _warn_if_slow(nu, f"t({nu:g})")
    return Distribution("t", f"t({nu:g})", nu=nu)


def _normp(p) -> Distribution:
    """Unit-variance exponential power distribution of shape p (``"normp(p)"``)."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"`dist`: the shape p of 'normp(p)' must be a number, got {p!r}") from None
    if not (math.isfinite(p) and 0.25 <= p <= 100):
        raise ValueError(f"`dist`: the shape p of 'normp(p)' must be in [0.25, 100] (4 is ErrViewLib's Normp4, "
                         f"2 the normal, 1 Laplace), got {p:g}")
    return Distribution("normp", f"normp({p:g})", nu=p)


#: below this ν, Monte Carlo means of ε² converge too slowly to be trusted
SLOW_NU = 3.0


def _warn_if_slow(nu: float, label: str) -> None:
    if nu < SLOW_NU:
        import warnings

        from .core._warnings import SlowConvergenceWarning

        warnings.warn(SlowConvergenceWarning(
            f"`dist`={label}: with ν = {nu:.6g} < {SLOW_NU:g} the squared unit-variance t has a tail of index "
            f"ν/2 = {nu / 2:.3g}, so Monte Carlo means (ZMS, ENCE, ZMSE, … references) converge extremely "
            "slowly and come out biased low for any practical n_mc; prefer ν ≥ 3 or 'empirical'"), stacklevel=3)
