"""Registry of calibration statistics and their evaluation on a dataset
(docs/methods.md, "Statistics").

Every statistic is a numba kernel in :mod:`mcref.kernels.stats`; this module maps
names to kernel codes, knows each statistic's predefined reference (ZMS 1, RCE 0, …)
or that it has none (CC, ENCE, ZMSE, UCE: simulate it, see :mod:`mcref.reference`),
and prepares a dataset once (stable sort by u, bins, tie groups) for the kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .core._checks import dataset_args, check_E_u
from .core._prepared import Prepared, prepare, prepare_for, rank_slots, tie_starts  # noqa: F401 - their home is _prepared
from .kernels import stats as K

__all__ = ["StatInfo", "STATISTICS", "names", "info", "statistic", "statistics", "predefined_reference",
           "register_statistic", "unregister_statistic", "TieSpread", "tie_spread", "straddling_ties"]


def _const(value: float) -> Callable[[np.ndarray, np.ndarray], float]:
    return lambda E, u: value


def _nll_ref(E: np.ndarray, u: np.ndarray) -> float:
    return 0.5 * (1.0 + float(np.mean(np.log(u * u))) + float(np.log(2.0 * np.pi)))


@dataclass(frozen=True)
class StatInfo:
    """Registry entry of one statistic: everything mcref knows about it, in one place.

    Attributes
    ----------
    name : str
        Registry name (``"ZMS"``, …).
    code : int
        Kernel code in :mod:`mcref.kernels.stats`; -1 for a user statistic.
    kind : {"mean", "binned", "rank", "user"}
        Which evaluation pass computes it; binned statistics need ``n_bins``; ``"user"``:
        a statistic registered with :func:`register_statistic`, computed by ``func``.
    formula : str
        Definition, as in docs/methods.md, "Statistics".
    reference : callable or None
        ``reference(E, u) -> float`` for a predefined reference value, or None when the
        reference must be simulated.
    alternative : {"two-sided", "greater", "less"}
        Direction of its Monte Carlo test (docs/methods.md, "Verdicts"): ``"greater"`` for
        the non-negative binned discrepancies (larger is worse whichever way u is off).
    screens : tuple of str
        The squared variables (``"Z2"``, ``"u2"``, ``"E2"``) whose shape screen must pass for
        the statistic to be trusted (docs/methods.md, "Shape screen").
    exact : tuple of str
        The methods of :func:`mcref.exact_reference` available for it
        (``"exact"``, ``"asymptotic"``).
    func : callable or None
        A user statistic's numba function ``func(E, u) -> float``.
    pairing : bool
        It depends on which Z goes with which u (False: a function of the multiset of Z and
        of u alone, as ZMS: constant under the permutation D, and the *scale* part of the
        conditional verdict; docs/methods.md, "Joint verdict").
    errors : bool
        It depends on the errors E (False: a function of u alone, as MV = ⟨u²⟩: every
        simulated dataset has the data's value under every D, so no test can reject it;
        :func:`mcref.validate` reports its estimate and interval and calls it ``not testable``).
    """

    name: str
    code: int
    kind: str
    formula: str
    reference: Callable[[np.ndarray, np.ndarray], float] | None
    alternative: str = "two-sided"
    screens: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    func: Callable | None = None
    pairing: bool = True
    errors: bool = True

    @property
    def binned(self) -> bool:
        return self.kind == "binned"

    @property
    def user(self) -> bool:
        """Registered with :func:`register_statistic` (computed by ``func``, not a kernel code)."""
        return self.kind == "user"


_Z2, _UE2 = ("Z2",), ("u2", "E2")
_BOTH, _ASYM = ("exact", "asymptotic"), ("asymptotic",)
_BUILTIN: tuple[StatInfo, ...] = (
    StatInfo("ZMS", K.ZMS, "mean", "<Z^2>", _const(1.0), screens=_Z2, exact=_BOTH, pairing=False),
    StatInfo("MZ", K.MZ, "mean", "<Z>", _const(0.0), screens=_Z2, pairing=False),
    StatInfo("VarZ", K.VARZ, "mean", "Var(Z) (n-1 denominator)", _const(1.0), screens=_Z2, pairing=False),
    StatInfo("MSE", K.MSE, "mean", "<E^2>", None, screens=_UE2),
    StatInfo("MV", K.MV, "mean", "<u^2>", None, screens=_UE2, errors=False),
    StatInfo("RCE", K.RCE, "mean", "(RMV - RMSE)/RMV", _const(0.0), screens=_UE2),
    StatInfo("RCE2", K.RCE2, "mean", "(MV - MSE)/MV", _const(0.0), screens=_UE2),
    StatInfo("NLL", K.NLL, "mean", "(<Z^2> + <ln u^2> + ln 2pi)/2", _nll_ref, screens=_Z2, pairing=False),
    StatInfo("CC", K.CC, "rank", "Spearman rho(|E|, u), average ranks", None),
    StatInfo("ENCE", K.ENCE, "binned", "(1/N) sum_b |RMV_b - RMSE_b|/RMV_b", None, "greater", exact=_ASYM),
    StatInfo("ZMSE", K.ZMSE, "binned", "(1/N) sum_b |ln ZMS_b|", None, "greater", exact=_BOTH),
    StatInfo("UCE", K.UCE, "binned", "sum_b (n_b/M) |MV_b - MSE_b|", None, "greater", exact=_ASYM),
)
#: The registry: every statistic mcref knows, built-in and registered (:func:`register_statistic`).
STATISTICS: dict[str, StatInfo] = {s.name: s for s in _BUILTIN}
_LOWER = {k.lower(): k for k in STATISTICS}
_USER_KERNELS: dict = {}  # user function -> kernels.user.UserKernels, compiled once per process


def register_statistic(name: str, func: Callable, *, alternative: str = "two-sided", reference=None,
                       screens: Sequence[str] = (), pairing: bool = True, formula: str = "",
                       replace: bool = False) -> StatInfo:
    r"""Register a user statistic: from then on it works like a built-in one.

    The statistic is any function of the dataset ``func(E, u) -> float`` that numba can
    compile (``numba.njit``; a plain Python function is compiled with ``njit`` here). It must
    depend on the set of pairs (E_i, u_i) only, not on their order: mcref hands it the data
    sorted by u. Once registered, its name is accepted by :func:`statistic`,
    :func:`mcref.bootstrap` (BCa, with its jackknife), :func:`mcref.simulate` and
    :func:`mcref.simulated_reference` (every D, on the same resamples and simulated datasets
    as the built-in statistics), :func:`mcref.validate` (its row, its Monte Carlo test and
    the joint verdict) and the studies (docs/methods.md, "Statistics").

    Parameters
    ----------
    name : str
        Its name (case-insensitive; must not be a built-in statistic's).
    func : callable
        ``func(E, u) -> float`` on two float64 arrays of the same length.
    alternative : {"two-sided", "greater", "less"}, default: "two-sided"
        Direction of its Monte Carlo test: ``"greater"`` when large values mean
        miscalibration (a non-negative discrepancy), ``"two-sided"`` for a statistic with a
        central calibrated value.
    reference : float or callable, optional
        Its predefined reference under calibration (a number, or ``reference(E, u) ->
        float``); ``validate`` then tests it with ζ_BS against the BCa interval, as ZMS = 1.
        None (default): simulated, as CC or ENCE.
    screens : sequence of {"Z2", "u2", "E2"}, default: ()
        The shape screens that must pass for its verdict to be trusted
        (docs/methods.md, "Shape screen"); e.g. ``("Z2",)`` for a mean of Z².
    pairing : bool, default: True
        Whether it depends on which Z goes with which u. False for a function of the
        multiset of Z (and of u alone), as ZMS = ⟨Z²⟩: the permutation D cannot test it, and
        the conditional verdict tests it for scale under the Student t fitted to Z
        (docs/methods.md, "Joint verdict").
    formula : str, optional
        Its definition, shown by :func:`info`.
    replace : bool, default: False
        Replace a user statistic of the same name (a built-in one cannot be replaced).

    Returns
    -------
    StatInfo
        The registry entry.

    Notes
    -----
    The bootstrap draws the same resamples as for the built-in statistics (the same seed
    gives the same resamples), but evaluates ``func`` on each resample gathered into arrays:
    O(M) per replicate, a few times the cost of a built-in moment statistic. The BCa
    jackknife calls ``func`` M times on M − 1 points: O(M²) in all (about a second at
    M = 10⁴ for a moment statistic); use ``method="percentile"`` beyond ~10⁵ points.
    The kernels built around ``func`` are compiled on first use in each process (not cached
    on disk).

    Examples
    --------
    >>> import numba
    >>> @numba.njit
    ... def mean_abs_z(E, u):
    ...     return np.mean(np.abs(E / u))
    >>> _ = register_statistic("MAZ", mean_abs_z, reference=np.sqrt(2 / np.pi), screens=("Z2",))
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 1000); E = u * rng.normal(size=1000)
    >>> bool(np.isclose(statistic("MAZ", E, u), np.mean(np.abs(E / u))))
    True
    >>> unregister_statistic("MAZ")
    """
    from .core._checks import check_choice

    if not isinstance(name, str) or not name.strip() or not name.strip().replace("_", "").isalnum():
        raise ValueError(f"`name` must be a non-empty string of letters, digits and '_', got {name!r}")
    name = name.strip()
    old = _LOWER.get(name.lower())
    if old is not None and not STATISTICS[old].user:
        raise ValueError(f"`name`={name!r} is a built-in statistic ({old}); choose another name")
    if old is not None and not replace:
        raise ValueError(f"statistic {old!r} is already registered; pass replace=True to replace it")
    alternative = check_choice(alternative, "alternative", ("two-sided", "greater", "less"))
    spelled = {"z2": "Z2", "u2": "u2", "e2": "E2"}
    screens = tuple(spelled[check_choice(v, "screens", tuple(spelled))]
                    for v in ((screens,) if isinstance(screens, str) else screens))
    if reference is not None and not callable(reference):
        try:
            value = float(reference)
        except (TypeError, ValueError):
            raise ValueError(f"`reference` must be None, a number or a function reference(E, u) -> float, "
                             f"got {reference!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"`reference` must be finite, got {value}")
        reference = _const(value)
    func = _user_func(name, func)
    inf = StatInfo(name, -1, "user", formula or f"user statistic {name}", reference, alternative, screens, (), func,
                   bool(pairing))
    if old is not None:
        del STATISTICS[old], _LOWER[old.lower()]
    STATISTICS[name] = inf
    _LOWER[name.lower()] = name
    return inf


def _user_func(name: str, func: Callable) -> Callable:
    """``func`` as a numba dispatcher, checked on a small dataset (a clear error now rather
    than deep inside a bootstrap)."""
    import numba
    from numba.core.registry import CPUDispatcher

    if not callable(func):
        raise ValueError(f"`func` must be a function func(E, u) -> float, got {type(func).__name__}")
    if not isinstance(func, CPUDispatcher):
        func = numba.njit(func)
    E = np.array([0.3, -1.2, 0.8, -0.1, 2.1])
    u = np.array([0.5, 1.0, 1.5, 2.0, 0.7])
    try:
        value = func(E, u)
    except Exception as exc:  # noqa: BLE001 - any compile or run error is the user's function's
        raise ValueError(f"statistic {name!r}: `func(E, u)` must compile with numba and run on two float64 "
                         f"arrays; it failed: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from exc
    if not isinstance(value, (float, int, np.floating, np.integer)) or isinstance(value, bool):
        raise ValueError(f"statistic {name!r}: `func(E, u)` must return a float, got {type(value).__name__}")
    return func


def unregister_statistic(name: str) -> None:
    """Remove a statistic registered with :func:`register_statistic` (built-in ones stay)."""
    inf = info(name)
    if not inf.user:
        raise ValueError(f"{inf.name} is a built-in statistic; only registered ones can be removed")
    del STATISTICS[inf.name], _LOWER[inf.name.lower()]


def user_statistics() -> tuple[StatInfo, ...]:
    """The registered user statistics (shipped with a study's cells to worker processes)."""
    return tuple(i for i in STATISTICS.values() if i.user)


def install_user_statistics(entries: Sequence[StatInfo]) -> None:
    """Register ``entries`` (from :func:`user_statistics` of another process) where their
    names are not registered yet: a study's worker process gets the runner's statistics."""
    for inf in entries:
        if inf.name.lower() not in _LOWER:
            STATISTICS[inf.name] = inf
            _LOWER[inf.name.lower()] = inf.name


def user_kernels(inf: StatInfo):
    """The bootstrap, jackknife and reference kernels of user statistic ``inf``
    (:func:`mcref.kernels.user.make_user_kernels`), built once per process."""
    from .kernels.user import make_user_kernels

    k = _USER_KERNELS.get(inf.func)
    if k is None:
        k = _USER_KERNELS[inf.func] = make_user_kernels(inf.func)
    return k


def evaluate_user(inf: StatInfo, E: np.ndarray, u: np.ndarray) -> float:
    """User statistic ``inf`` on (E, u)."""
    return float(inf.func(E, u))


def names() -> list[str]:
    """Names of the registered statistics."""
    return list(STATISTICS)


def info(name: str) -> StatInfo:
    """Registry entry of statistic ``name`` (case-insensitive)."""
    if isinstance(name, str) and name.lower() in _LOWER:
        return STATISTICS[_LOWER[name.lower()]]
    raise ValueError(f"unknown statistic {name!r}; known statistics: {', '.join(STATISTICS)}")


@dataset_args
def predefined_reference(name: str, E, u) -> float | None:
    """The predefined reference value of ``name`` for data (E, u), or None (simulate)."""
    ref = info(name).reference
    return None if ref is None else float(ref(np.asarray(E, float), np.asarray(u, float)))


_TINY = float(np.finfo(np.float64).tiny)
_HUGE = float(np.finfo(np.float64).max)


def check_E_u_once(E, u, *, min_size: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """:func:`mcref.core._checks.check_E_u` in one pass over the data.

    A numba scan (:func:`mcref.kernels.stats.scan_E_u`) gets the non-finite count and the
    extremes of |E|, u and |E/u|; the same rules as ``check_E_u`` are applied to them. Only
    when a rule fails does ``check_E_u`` itself run, to raise its exact message.
    """
    try:
        E1 = np.ascontiguousarray(E, dtype=np.float64)
        u1 = np.ascontiguousarray(u, dtype=np.float64)
    except (TypeError, ValueError):
        return check_E_u(E, u, min_size=min_size)
    if E1.ndim != 1 or u1.ndim != 1 or E1.shape != u1.shape or E1.size < max(min_size, 1):
        return check_E_u(E, u, min_size=min_size)
    scan = np.empty(5)
    K.scan_E_u(E1, u1, scan)
    bad, emax, umin, umax, zmax = scan.tolist()
    n = E1.size
    ok = bad == 0 and umin > 0 and umin * umin >= _TINY and not (0 < emax and emax * emax < _TINY) \
        and not (0 < zmax and zmax * zmax < _TINY)
    for big in (umax, emax, zmax):  # the sum of n squares up to big² stays finite
        t = big * big * n
        ok = ok and t <= _HUGE and math.isfinite(t)
    if not ok:
        return check_E_u(E, u, min_size=min_size)
    return E1, u1


def evaluate(prep: Prepared, codes: np.ndarray) -> np.ndarray:
    """Statistics ``codes`` on the prepared data (all weights 1)."""
    out = np.empty(codes.size)
    w = np.ones(prep.M, dtype=K.COUNT)
    acc = np.empty((prep.n_bins, 4))
    corr = np.zeros((prep.n_bins + 1, 2))
    buf = K.rank_scratch(prep.M if (codes == K.CC).any() else 0)
    K.eval_weighted(codes, w, *prep.kernel_args(), np.empty(K.N_RAW), np.empty(K.N_SUMS), acc, corr, buf, out)
    return out


def check_defined(infos: Sequence[StatInfo], values: np.ndarray, prep: Prepared) -> None:
    """Raise a clear ValueError when a statistic is undefined on the data (no silent NaN)."""
    for inf, v in zip(infos, values):
        if not np.isfinite(v):
            why = {
                "rank": "u or |E| takes a single value, so the rank correlation is undefined",
                "binned": "a bin has only zero errors (ln ZMS_b = -inf) or is empty",
                "mean": "it needs at least two points and a non-zero MV",
                "user": f"its function returned {v}",
            }[inf.kind]
            raise ValueError(f"statistic {inf.name} is undefined for this dataset: {why}")


def straddling_ties(prep: Prepared) -> int:
    """Number of runs of equal u that straddle a bin cut of ``prep`` (their points are put
    in bins by input order: the binned statistics then depend on the row order)."""
    groups = prep.tie_groups
    if groups.size == 0 or prep.n_bins < 2:
        return 0
    cuts = prep.starts[1:-1]
    # a run [s, e) straddles when some cut c has s < c < e
    k = np.searchsorted(cuts, groups[:, 0], side="right")
    inside = (k < cuts.size) & (cuts[np.minimum(k, cuts.size - 1)] < groups[:, 1])
    return int(inside.sum())


def _warn_ties(infos, prep: Prepared) -> None:
    if not any(i.binned for i in infos):
        return
    n = straddling_ties(prep)
    if n:
        import warnings

        from .core._warnings import TieOrderWarning

        names_ = ", ".join(i.name for i in infos if i.binned)
        warnings.warn(TieOrderWarning(
            f"{names_}: {n} run(s) of equal u straddle a bin cut, so the value depends on the row order of the "
            "tied points (they are binned in input order); mcref.tie_spread(name, E, u) gives the range over "
            "random tie orders and their mean"), stacklevel=4)


@dataset_args
def statistics(names_: Sequence[str], E, u, *, n_bins: int = 20, min_count: int = 30, shrink: bool = False,
               binning: str = "equal", log: bool | None = None) -> dict[str, float]:
    """Several statistics of one dataset in one pass; see :func:`statistic`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 1000); E = u * rng.normal(size=1000)
    >>> sorted(statistics(["ZMS", "CC"], E, u))
    ['CC', 'ZMS']
    """
    from .core._checks import check_choice

    E, u = check_E_u_once(E, u)
    infos = [info(n) for n in names_]
    binning = check_choice(binning, "binning", ("equal", "adaptive"))
    res = _builtin_values([i for i in infos if not i.user], E, u, n_bins=n_bins, min_count=min_count,
                          shrink=shrink, binning=binning, log=log)
    for i in infos:
        if i.user:
            res[i.name] = evaluate_user(i, E, u)
            if not math.isfinite(res[i.name]):
                raise ValueError(f"statistic {i.name} is undefined for this dataset: its function returned "
                                 f"{res[i.name]}")
    return {i.name: res[i.name] for i in infos}


def _builtin_values(infos: list[StatInfo], E, u, *, n_bins, min_count, shrink, binning, log) -> dict[str, float]:
    """The built-in statistics ``infos`` of validated data: moments without a sort, the
    binned statistics and CC from one shared sort."""
    codes = np.array([i.code for i in infos], dtype=np.int64)
    vals = np.empty(codes.size)
    if all(i.kind == "mean" for i in infos):  # the common small call: one kernel, no sort
        K.moments_kernel(codes, E, u, vals)
        check_defined(infos, vals, None)
        return {i.name: float(v) for i, v in zip(infos, vals)}
    mean = np.array([i.kind == "mean" for i in infos], dtype=bool)
    if mean.any():  # moments of the unsorted data: no sort, no prepared arrays
        mvals = np.empty(int(mean.sum()))
        K.moments_kernel(codes[mean], E, u, mvals)
        vals[mean] = mvals
        check_defined([i for i, k in zip(infos, mean) if k], mvals, None)
    if not mean.all():  # one shared sort for the binned statistics and CC
        binned = any(i.binned for i in infos)
        ranks = any(i.kind == "rank" for i in infos)
        prep = prepare(E, u, n_bins if binned else None, min_count=min_count, shrink=shrink, binning=binning,
                       log=log, ranks=ranks)
        rest = [i for i, k in zip(infos, mean) if not k]
        rvals = evaluate(prep, codes[~mean])
        vals[~mean] = rvals
        check_defined(rest, rvals, prep)
        _warn_ties(infos, prep)
    return {i.name: float(v) for i, v in zip(infos, vals)}


@dataset_args
def statistic(name: str, E, u, *, n_bins: int = 20, min_count: int = 30, shrink: bool = False,
              binning: str = "equal", log: bool | None = None) -> float:
    r"""Calibration statistic ``name`` of the dataset (E, u).

    .. math::

        Z = E/u,\quad \mathrm{ZMS} = \langle Z^2\rangle,\quad
        \mathrm{RCE} = \frac{\mathrm{RMV} - \mathrm{RMSE}}{\mathrm{RMV}},\quad
        \mathrm{ENCE} = \frac1N\sum_b \frac{|\mathrm{RMV}_b - \mathrm{RMSE}_b|}{\mathrm{RMV}_b},\quad
        \mathrm{ZMSE} = \frac1N\sum_b |\ln \mathrm{ZMS}_b|

    and the others of docs/methods.md, "Statistics" (``mcref.stats.STATISTICS`` lists them all).

    Parameters
    ----------
    name : str
        One of ``ZMS, MZ, VarZ, MSE, MV, RCE, RCE2, NLL, CC, ENCE, ZMSE, UCE``.
    E, u : array_like, shape (M,)
        Errors and standard uncertainties (finite, u > 0).
    n_bins : int, default: 20
        Number of equal-count bins of u (ENCE, ZMSE, UCE only).
    min_count : int, default: 30
        Smallest accepted M / n_bins.
    shrink : bool, default: False
        Reduce ``n_bins`` instead of raising when M / n_bins < ``min_count``.
    binning : {"equal", "adaptive"}, default: "equal"
        Equal-count bins, or the adaptive bins of ErrViewLib (equal-width cells of ln u, or
        of u with ``log=False``, merged below ``min_count`` and split above
        max(M/n_bins, 2·min_count) points; docs/methods.md, "Diagnostics").
    log : bool, optional
        Log grid of the adaptive bins (default True).

    Returns
    -------
    float

    Notes
    -----
    Binned statistics order the points by u with a stable sort and cut equal-count bins
    at :math:`\lfloor M i/N + 1/2\rfloor` (docs/methods.md, "Binning"). CC is Spearman's
    ρ between ``|E|`` and u with average ranks for ties (as ``scipy.stats.spearmanr``).

    References
    ----------
    .. [1] P. Pernot, "Calibration in machine learning uncertainty quantification:
       beyond consistency to target adaptivity", APL Mach. Learn. 1, 046121 (2023),
       doi:10.1063/5.0174943.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.uniform(0.5, 2.0, 1000)
    >>> E = u * rng.normal(size=1000)
    >>> round(statistic("ZMS", E, u), 3) == round(float(np.mean((E / u) ** 2)), 3)
    True
    """
    return statistics([name], E, u, n_bins=n_bins, min_count=min_count, shrink=shrink, binning=binning,
                      log=log)[info(name).name]


@dataclass(frozen=True)
class TieSpread:
    """A binned statistic over random orders of the tied u values (:func:`tie_spread`).

    Attributes
    ----------
    name : str
    estimate : float
        The value for the input row order.
    mean, sd, low, high : float
        Mean (the tie-averaged value), standard deviation, minimum and maximum over the
        random tie orders.
    n_orders : int
    n_straddling : int
        Runs of equal u that straddle a bin cut (0: the value does not depend on the order).
    """

    name: str
    estimate: float
    mean: float
    sd: float
    low: float
    high: float
    n_orders: int
    n_straddling: int


@dataset_args
def tie_spread(name: str, E, u, *, n_orders: int = 100, seed=None, n_bins: int = 20, min_count: int = 30,
               shrink: bool = False) -> TieSpread:
    """The spread of a binned statistic over random orders of the tied u values.

    Binned statistics sort the points by u with a stable sort (docs/methods.md, "Binning"),
    so a run of equal u that straddles a bin cut is split between the bins by row order.
    This evaluates the statistic for ``n_orders`` uniformly random row orders (each a
    random order of every tie run) and reports the range and the mean, the tie-averaged
    value. Only the runs that straddle a cut matter: each order draws and moves those alone
    (:func:`mcref.kernels.bootstrap.tie_orders_kernel`), so the orders cost about what one
    evaluation does, whatever M.

    Examples
    --------
    >>> u = np.repeat([1.0, 2.0, 3.0], 200)            # 3 values of u, 10 bins: ties straddle cuts
    >>> E = u * np.random.default_rng(1).normal(size=u.size)
    >>> ts = tie_spread("ENCE", E, u, n_bins=10, seed=0)
    >>> ts.n_straddling > 0 and ts.low < ts.high
    True
    """
    from .core._checks import check_int

    E, u = check_E_u(E, u)
    inf = info(name)
    if not inf.binned:
        raise ValueError(f"tie_spread is for the binned statistics (ENCE, ZMSE, UCE), got {inf.name}")
    n_orders = check_int(n_orders, "n_orders", minimum=2)
    return tie_spread_prepared(inf, prepare(E, u, n_bins, min_count=min_count, shrink=shrink), n_orders=n_orders,
                               seed=seed)


def tie_spread_prepared(inf: StatInfo, prep: Prepared, *, n_orders: int, seed) -> TieSpread:
    """:func:`tie_spread` of a dataset checked and prepared (equal-count bins) by the caller: order
    k puts the runs of tied u in the random order of the k-th child of ``seed``'s ``SeedSequence``
    (:func:`mcref.kernels.bootstrap.tie_orders_kernel`; only the runs that straddle a cut are
    drawn and moved)."""
    from .core._checks import check_seed
    from .kernels.bootstrap import tie_orders_kernel
    from .kernels.rng import chunk_states

    codes = np.array([inf.code], dtype=np.int64)
    est = float(evaluate(prep, codes)[0])
    n_str = straddling_ties(prep)
    if n_str == 0:
        return TieSpread(inf.name, est, est, 0.0, est, est, n_orders, 0)
    vals = np.empty(n_orders)
    tie_orders_kernel(inf.code, chunk_states(check_seed(seed), n_orders), prep.tie_groups, prep.starts, prep.u2,
                      prep.E2, prep.z2, vals)
    return TieSpread(inf.name, est, float(vals.mean()), float(vals.std(ddof=1)), float(vals.min()),
                     float(vals.max()), n_orders, n_str)
