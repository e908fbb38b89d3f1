"""Input checks shared by every public function (docs/methods.md, "Data and notation",
"Code conventions").

Each helper returns a normalised value or raises :class:`ValueError` naming the
argument and the rule that it breaks.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


def as_float_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a contiguous 1-D float64 array of finite values."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a 1-D array of real numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"`{name}` must not be empty")
    bad = ~np.isfinite(arr)
    if bad.any():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.sum()) - n_nan
        raise ValueError(
            f"`{name}` must contain only finite values "
            f"({n_nan} NaN and {n_inf} infinite values, first at index {int(np.argmax(bad))})"
        )
    return np.ascontiguousarray(arr)


def as_feature_array(x: Any, name: str) -> np.ndarray:
    """Return a feature ``x`` (a conditioning variable of a dataset) as a 1-D array: finite
    float64 when it holds numbers (booleans as 0/1), else its labels as ``str`` (a categorical
    feature; a missing label, None, NaN or empty, is an error naming its count and first row)."""
    arr = np.asarray(x)
    if arr.dtype.kind in "biuf":
        return as_float_array(arr.astype(np.float64) if arr.dtype.kind == "b" else arr, name)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if arr.dtype.kind not in "OUS":
        raise ValueError(f"`{name}` must hold numbers or labels (text), got dtype {arr.dtype}")
    missing = np.array([v is None or (isinstance(v, float) and v != v) or str(v).strip() == ""
                        for v in arr.tolist()], dtype=bool)
    if missing.any():
        raise ValueError(f"`{name}` has {int(missing.sum())} missing label(s) (None, NaN or empty), first at "
                         f"index {int(np.argmax(missing))}")
    return np.array([str(v).strip() for v in arr.tolist()], dtype=str)


def as_finite_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array of any shape (scalars included), not empty, of finite
    values; the message of a non-finite value gives the counts and the first index."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be an array of real numbers ({exc})") from None
    if arr.size == 0:
        raise ValueError(f"`{name}` must not be empty")
    bad = ~np.isfinite(arr)
    if bad.any():
        if arr.ndim == 0:
            raise ValueError(f"`{name}` must be a finite number, got {float(arr)}")
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.sum()) - n_nan
        first = np.unravel_index(int(np.argmax(bad)), arr.shape)
        where = int(first[0]) if arr.ndim == 1 else tuple(int(k) for k in first)
        raise ValueError(
            f"`{name}` must contain only finite values "
            f"({n_nan} NaN and {n_inf} infinite values, first at index {where})"
        )
    return arr


_TINY = float(np.finfo(np.float64).tiny)  # smallest normal float64, 2.2e-308
_HUGE = float(np.finfo(np.float64).max)


def _check_squares(x: np.ndarray, name: str, *, zero_ok: bool) -> None:
    """The statistics square and sum ``x``: refuse values whose squares underflow (lose
    digits as subnormals, or become 0) or whose sum of squares overflows float64.
    ``zero_ok``: zeros allowed (errors), and only the largest square must be normal."""
    ax = np.abs(x)
    big = float(ax.max())
    if big * big * x.size > _HUGE or not np.isfinite(big * big * x.size):
        raise ValueError(
            f"`{name}` is too large for float64 arithmetic: the sum of squares of {x.size} values up to "
            f"{big:.3g} overflows; rescale E and u by the same factor (e.g. change their unit)"
        )
    # u: every u² enters ln u² and the bin means, so each must be a normal float. E and Z:
    # a tiny error adds ~0 to the sums whatever its precision; refuse only when the largest
    # square itself underflows (the sums would be made of subnormals)
    small = float(ax.min()) if not zero_ok else big
    if small > 0 and small * small < _TINY:
        raise ValueError(
            f"`{name}` has values too small for float64 arithmetic: {small:.3g}² = {small * small:.3g} is below "
            f"{_TINY:.3g} (its square loses digits or becomes 0); rescale E and u by the same factor "
            "(e.g. change their unit)"
        )


def check_u(u: Any, *, min_size: int = 1) -> np.ndarray:
    """Validate uncertainties: finite, > 0, at least ``min_size`` of them, squares
    representable in float64."""
    u = as_float_array(u, "u")
    nonpos = u <= 0
    if nonpos.any():
        raise ValueError(
            f"`u` must be > 0 ({int(nonpos.sum())} non-positive values, "
            f"first at index {int(np.argmax(nonpos))})"
        )
    if u.size < min_size:
        raise ValueError(f"`u` must have at least {min_size} points, got {u.size}")
    _check_squares(u, "u", zero_ok=False)
    return u


def check_E_u(E: Any, u: Any, *, min_size: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validate a dataset: finite errors ``E``, finite positive uncertainties ``u``,
    same length, at least ``min_size`` points."""
    E = as_float_array(E, "E")
    u = as_float_array(u, "u")
    if E.shape != u.shape:
        raise ValueError(
            f"`E` and `u` must have the same length, got {E.size} and {u.size}"
        )
    check_u(u)
    if E.size < min_size:
        raise ValueError(f"the dataset must have at least {min_size} points, got {E.size}")
    _check_squares(E, "E", zero_ok=True)
    _check_squares(E / u, "Z = E/u", zero_ok=True)
    return E, u


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` (bools refused), optionally ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"`{name}` must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value}")
    return value


def check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """Return the lower-cased ``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"`{name}` must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value.lower()


def check_probability(value: Any, name: str) -> float:
    """Return ``value`` as a float strictly between 0 and 1."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1), got {v}")
    return v


def fresh_seed() -> int:
    """A seed drawn from the operating system's entropy: a non-negative 63-bit integer.

    63 bits (at most 19 digits) keep the number short enough to copy from a table or a
    log and to store as an SQLite or pandas int64, with 2⁶³ possible seeds.
    """
    return int(np.random.SeedSequence().entropy) >> 65  # entropy is 128 random bits


def check_study_seed(seed: Any) -> int | None:
    """A study's seed: None (draw one later) or a non-negative integer."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise ValueError(f"`seed` must be None or a non-negative integer, got {seed!r}")
    return int(seed)


def check_n_jobs(value: Any, name: str = "n_jobs") -> int:
    """A worker count: a positive integer, or -1 for every core."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or \
            (int(value) < 1 and int(value) != -1):
        raise ValueError(f"`{name}` must be a positive integer or -1 (all cores), got {value!r}")
    return int(value)


def check_positive_number(value: Any, name: str, *, plural: bool = False) -> float:
    """Return ``value`` as a finite float > 0 (``plural``: the message speaks of the elements
    of a sequence ``name``)."""
    rule = "hold finite numbers > 0" if plural else "be a finite number > 0"
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must {rule}, got {value!r}") from None
    if not (math.isfinite(f) and f > 0):
        raise ValueError(f"`{name}` must {rule}, got {value!r}")
    return f


def check_values(x: Any, name: str, kind: type = int) -> tuple:
    """A grid axis: one value or a sequence of distinct values, as a tuple.

    ``kind=int``: integers >= 1; ``kind=float``: finite numbers > 0 (integral values
    become ints, so ``4.0`` and ``4`` are the same grid point); ``kind=str``: taken as
    given.
    """
    seq = (x,) if np.isscalar(x) or isinstance(x, str) else tuple(x)
    if not seq:
        raise ValueError(f"`{name}` must list at least one value")
    out = []
    for v in seq:
        if kind is int:
            out.append(check_int(v, name, minimum=1))
        elif kind is float:
            f = check_positive_number(v, name, plural=True)
            out.append(int(f) if f == int(f) else f)
        else:
            out.append(v)
    if len(set(out)) != len(out):
        raise ValueError(f"`{name}` lists a value twice: {list(out)}")
    return tuple(out)


def check_seed(seed: Any) -> np.random.SeedSequence:
    """Normalise ``seed`` (None, int, SeedSequence or Generator) into a SeedSequence.

    A SeedSequence is copied (same entropy and spawn key, no children spawned yet), so
    passing the same object twice gives the same streams: spawning never mutates the
    caller's object. ``None`` draws a :func:`fresh_seed`, which is the sequence's
    ``entropy``: record it to reproduce the call.
    """
    if seed is None:
        return np.random.SeedSequence(fresh_seed())
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size)
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(seed.integers(0, 2**63 - 1, size=4).tolist())
    if seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
        return np.random.SeedSequence(seed)
    raise ValueError(
        "`seed` must be None, a non-negative integer, a numpy SeedSequence or a Generator; "
        f"got {seed!r}"
    )


def check_progress(value: Any, name: str = "progress") -> bool | None:
    """Return a ``progress=`` setting: None (auto: a bar on a terminal for a long call),
    True (always) or False (never)."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    raise ValueError(
        f"`{name}` must be None (auto: a progress bar on a terminal when the call is expected to "
        f"take more than a few seconds), True (always) or False (never); got {value!r}"
    )


def renamed_keywords(**old_to_new: str):
    """Decorator: the old spelling ``old`` of a keyword is accepted for one release as ``new``,
    with an :class:`~mcref.core._warnings.MCRefDeprecationWarning` (one spelling per concept:
    docs/api.rst, "Conventions"). Passing both is an error."""
    import functools
    import warnings

    from ._warnings import MCRefDeprecationWarning

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            for old, new in old_to_new.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}() got `{old}` and `{new}`: pass `{new}` only "
                                        f"(`{old}` is its old spelling)")
                    warnings.warn(MCRefDeprecationWarning(
                        f"{fn.__name__}(): `{old}` is now spelled `{new}`; the old spelling will be removed in the "
                        "next release"), stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        inner.__renamed__ = dict(old_to_new)
        return inner

    return wrap


def signature_of(fn, *, first: str, first_annotation: str, returns: str):
    """The signature of ``fn`` with its first parameter renamed (``first``) and another return
    annotation: a single-statistic wrapper (``bootstrap(name, ...)``) shows the keywords of the
    function that defines them (``bootstrap_many(names, ...)``), which stay one definition."""
    import inspect

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    params[0] = params[0].replace(name=first, annotation=first_annotation)
    return sig.replace(parameters=params, return_annotation=returns)


def check_keywords(fn_name: str, options: dict, accepted) -> None:
    """The ``TypeError`` Python raises for an unknown keyword, for a function that forwards
    ``**options`` (named after the function the user called, not the one it forwards to)."""
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise TypeError(f"{fn_name}() got an unexpected keyword argument {unknown[0]!r}")


def merged_signature(own, base, *, drop: tuple[str, ...] = ()):
    """The signature of ``own`` (whose ``**options`` are ``base``'s keywords) with ``base``'s
    keyword-only parameters in place of ``**options``, less ``drop``: ``simulated_reference``
    shows ``simulate``'s keywords, which stay defined once, in ``simulate``."""
    import inspect

    sig = inspect.signature(own)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names = {p.name for p in params}
    params += [p for p in inspect.signature(base).parameters.values()
               if p.kind is p.KEYWORD_ONLY and p.name not in names and p.name not in drop]
    return sig.replace(parameters=params)


def check_finite_cases(a: np.ndarray, name: str) -> np.ndarray:
    """``a`` itself when every value is finite; else a ValueError naming the first case (row) with a NaN/inf."""
    if not np.all(np.isfinite(a)):
        bad = np.flatnonzero(~np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1))
        raise ValueError(f"`{name}` must be finite ({bad.size} case(s) with NaN/inf, first at index {bad[0]})")
    return a


def check_cases(y, mean, cov) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check and normalise multivariate cases to y (n, d), mean (n, d), cov (n, d, d); 1-D
    inputs are d = 1 with cov the variances; (n, d) covariances are diagonal variances
    (:mod:`mcref.calibration` and :mod:`mcref.scores`)."""
    try:
        y = np.asarray(y, dtype=float)
        mean = np.asarray(mean, dtype=float)
        cov = np.asarray(cov, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`y`, `mean` and `cov` must be numeric arrays ({exc})") from None
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] == 0:
        raise ValueError(f"`y` must have shape (n,) or (n, d), got {y.shape}")
    n, d = y.shape
    if mean.ndim == 0:
        mean = np.full((n, d), float(mean))
    elif mean.ndim == 1 and d == 1 and mean.size == n:
        mean = mean[:, None]
    elif mean.ndim == 1 and mean.size == d:
        mean = np.broadcast_to(mean, (n, d))
    if cov.ndim == 1 and d == 1:
        cov = cov[:, None, None]
    elif cov.ndim == 2 and cov.shape == (n, d):
        cov = np.einsum("ij,jk->ijk", cov, np.eye(d))
    elif cov.ndim == 2 and cov.shape == (d, d):
        cov = np.broadcast_to(cov, (n, d, d))
    if cov.shape != (n, d, d):
        raise ValueError(f"`cov` must have shape (n, d, d), (n, d) (variances) or (d, d) for y of shape {(n, d)}, "
                         f"got {cov.shape}")
    if mean.shape != (n, d):
        raise ValueError(f"`mean` must have the shape of `y` {(n, d)}, got {mean.shape}")
    y, mean, cov = (np.ascontiguousarray(check_finite_cases(a, nm))
                    for a, nm in ((y, "y"), (mean, "mean"), (cov, "cov")))
    if not np.allclose(cov, np.swapaxes(cov, 1, 2), rtol=1e-10, atol=0):
        i = int(np.flatnonzero(~np.isclose(cov, np.swapaxes(cov, 1, 2), rtol=1e-10, atol=0)
                               .reshape(n, -1).all(axis=1))[0])
        raise ValueError(f"`cov` must be symmetric; case {i} is not")
    return y, mean, cov


def is_dataset(obj: Any) -> bool:
    """Whether ``obj`` is a :class:`mcref.datasets.Dataset` (its class sets ``__mcref_dataset__``;
    read here, below the datasets module, so that every layer can take one)."""
    return bool(getattr(type(obj), "__mcref_dataset__", False))


def dataset_args(fn=None, *, x: bool = True):
    """Decorator: the data argument of ``fn`` may be a :class:`mcref.datasets.Dataset`.

    ``f(E, u, ...)``: a Dataset in place of ``E`` stands for ``E`` and ``u`` (the positional
    arguments after it are the parameters after ``u``); ``f(u, *, E=None)`` (the simulations):
    a Dataset in place of ``u`` gives ``u`` and ``E``. The Dataset's ``x`` fills the
    parameter ``x`` when ``fn`` has one, ``x=True`` and it is not given; its name fills
    ``name`` when ``fn`` has that parameter and it is not given. Passing ``u`` beside a
    Dataset is an error (the Dataset carries its own); a pandas DataFrame as the data gets a
    message pointing to :func:`mcref.datasets.from_frame`. One definition for every public
    function that takes (E, u).
    """
    import functools
    import inspect

    if fn is None:
        return lambda f: dataset_args(f, x=x)
    sig = inspect.signature(fn)
    names = list(sig.parameters)
    u_first = "E" not in names or ("u" in names and names.index("u") < names.index("E"))
    data_arg = "u" if u_first else "E"
    i_data = names.index(data_arg)
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    fill_x = x and "x" in names
    fill_name = "name" in names and sig.parameters["name"].kind is not inspect.Parameter.POSITIONAL_ONLY
    fill_E = u_first and "E" in names
    has_varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values())
    n_positional = sum(p.kind in positional for p in sig.parameters.values())

    def given(arg: str, args: tuple, kwargs: dict) -> bool:
        if arg in kwargs:
            return kwargs[arg] is not None
        i = names.index(arg)
        return sig.parameters[arg].kind in positional and i < len(args) and args[i] is not None

    @functools.wraps(fn)
    def inner(*args, **kwargs):
        in_args = len(args) > i_data
        data = args[i_data] if in_args else kwargs.get(data_arg)
        if not is_dataset(data):
            if hasattr(data, "columns") and hasattr(data, "iloc"):
                raise ValueError(f"{fn.__name__}(): `{data_arg}` is a DataFrame; make a Dataset of its columns "
                                 "with mcref.datasets.from_frame(df, E=..., u=...) (or pass the columns as arrays)")
            if not u_first and data is not None and not given("u", args, kwargs):
                raise TypeError(f"{fn.__name__}() missing the argument `u`: give E and u, or a Dataset "
                                "(mcref.datasets) as E alone")
            return fn(*args, **kwargs)
        if u_first:
            args = args[:i_data] + (data.u,) + args[i_data + 1:] if in_args else args
        else:
            if "u" in kwargs:
                if kwargs["u"] is not None:
                    raise ValueError(f"{fn.__name__}(): `E` is the Dataset {data.name!r}, which carries its own u; "
                                     "do not pass `u` too")
                del kwargs["u"]
            args = args[:i_data] + (data.E, data.u) + args[i_data + 1:] if in_args else args
            if not has_varargs and len(args) > n_positional:
                raise ValueError(f"{fn.__name__}(): `E` is the Dataset {data.name!r}, which carries its own u; "
                                 "do not pass `u` too")
        if not in_args:
            kwargs[data_arg] = data.u if u_first else data.E
            if not u_first:
                kwargs["u"] = data.u
        if fill_E and not given("E", args, kwargs):
            kwargs["E"] = data.E
        if fill_x and data.x is not None and not given("x", args, kwargs):
            kwargs.pop("x", None)
            kwargs["x"] = data.x
        if fill_name and not _has_value(kwargs.get("name")) and not (
                "name" not in kwargs and given("name", args, kwargs)):
            kwargs["name"] = data.name
        return fn(*args, **kwargs)

    # the data argument's u may be left out: show u=None where the signature allows it
    params = list(sig.parameters.values())
    if not u_first:
        i_u = names.index("u")
        later = params[i_u + 1:]
        if all(p.default is not p.empty or p.kind not in positional for p in later):
            params[i_u] = params[i_u].replace(default=None)
            inner.__signature__ = sig.replace(parameters=params)
    inner.__dataset_args__ = True
    return inner


def _has_value(v: Any) -> bool:
    return v is not None and v != ""


#: the block bootstraps of ``order=`` (docs/methods.md, "Dependent test sets")
BLOCK_METHODS = ("circular", "moving", "stationary")


def check_groups(groups: Any, m: int) -> np.ndarray:
    """``groups`` (one label per row: numbers, strings, a pandas Series or Categorical) as dense
    int64 codes 0 … G−1, or ValueError naming the argument and the rule: one label per row, no
    missing label, at least two groups, and not one row per group (that is the independent-rows
    rule: leave ``groups`` out)."""
    try:
        arr = np.asarray(groups)
    except (TypeError, ValueError) as exc:  # pragma: no cover - numpy takes almost anything
        raise ValueError(f"`groups` must be a 1-D array of labels, one per row ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"`groups` must be one-dimensional (one label per row), got shape {arr.shape}")
    if arr.size != m:
        raise ValueError(f"`groups` must give one label per row: {arr.size} labels for {m} rows")
    missing = np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in arr.tolist()]) \
        if arr.dtype.kind in "fO" else np.zeros(m, dtype=bool)
    if missing.any():
        raise ValueError(f"`groups` must label every row ({int(missing.sum())} missing labels, first at index "
                         f"{int(np.argmax(missing))})")
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError:  # labels of mixed types: compare their text
        _, codes = np.unique(arr.astype(str), return_inverse=True)
    codes = codes.astype(np.int64).reshape(-1)
    n_groups = int(codes.max()) + 1
    if n_groups < 2:
        raise ValueError("`groups` must hold at least two groups: with a single group every row is correlated "
                         "with every other, and no resampling of groups exists")
    if n_groups == m:
        raise ValueError("`groups` gives every row a group of its own: that is the independent-rows rule; leave "
                         "`groups` out")
    return codes


def check_order(order: Any, m: int) -> np.ndarray:
    """``order`` (a time or sequence value per row) as float64, or ValueError naming the argument
    and the rule: one finite number per row (rows tied in the order are taken in ascending (u, Z²):
    :func:`mcref.core._dependence.units_for`)."""
    arr = np.asarray(order)
    if arr.dtype.kind == "M":  # datetimes: their integer ticks
        arr = arr.astype("datetime64[ns]").astype(np.int64)
    out = as_float_array(arr, "order")
    if out.size != m:
        raise ValueError(f"`order` must give one value per row: {out.size} values for {m} rows")
    return out


def check_block_length(value: Any, m: int) -> int | None:
    """``block_length`` (None: automatic) as an int in [1, M // 2] (two blocks at least), or
    ValueError naming the argument and the rule."""
    if value is None:
        return None
    v = check_int(value, "block_length", minimum=1)
    if v > m // 2:
        raise ValueError(f"`block_length` must be at most M // 2 = {m // 2} (two blocks at least), got {v}")
    return v
