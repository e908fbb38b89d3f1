"""Argument checks of :func:`mcref.posterior.from_posterior`: every bad input gets one
ValueError naming the argument before any work."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core._checks import check_finite_cases

__all__ = ["check_posterior", "check_names", "check_references", "check_prior_draws", "surprisal_scores"]


def check_posterior(truth: Any, draws: Any, *, finite: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``truth`` (N, d) and ``draws`` (N, S, d) as C-ordered float64 (d = 1: (N,) and (N, S)
    accepted), with S ≥ 2 and N ≥ 2, finite (``finite=False``: the caller checks, e.g. from sums
    that any NaN or inf makes non-finite, with :func:`mcref.core._checks.check_finite_cases` for the
    message)."""
    t = np.asarray(truth, dtype=np.float64)
    x = np.asarray(draws, dtype=np.float64)
    if t.ndim == 1 and x.ndim == 2:
        t, x = t[:, None], x[:, :, None]
    if t.ndim != 2:
        raise ValueError(f"`truth` must have shape (N, d) (or (N,) for one parameter), got {t.shape}")
    if x.ndim != 3:
        raise ValueError(f"`draws` must have shape (N, S, d) (or (N, S) for one parameter), got {x.shape}")
    if x.shape[0] != t.shape[0]:
        raise ValueError(f"`draws` must hold one row per case of `truth`: N = {t.shape[0]} in `truth`, "
                         f"{x.shape[0]} in `draws` (shape {x.shape})")
    if x.shape[2] != t.shape[1]:
        raise ValueError(f"`draws` must have the d = {t.shape[1]} parameters of `truth` in its last axis, got "
                         f"d = {x.shape[2]} (shape {x.shape})")
    if x.shape[1] < 2:
        raise ValueError(f"`draws` must hold at least 2 draws per case (S >= 2), got S = {x.shape[1]}")
    if t.shape[0] < 2:
        raise ValueError(f"`truth` must hold at least 2 cases (N >= 2), got N = {t.shape[0]}")
    if finite:
        check_finite_cases(t, "truth")
        check_finite_cases(x, "draws")
    return np.ascontiguousarray(t), np.ascontiguousarray(x)


def check_names(names: Any, d: int) -> tuple[str, ...]:
    """``names``: d distinct strings, or None for ``theta_0`` … ``theta_{d-1}``."""
    if names is None:
        return tuple(f"theta_{k}" for k in range(d))
    out = (names,) if isinstance(names, str) else tuple(str(n) for n in names)
    if len(out) != d or len(set(out)) != d:
        raise ValueError(f"`names` must give {d} distinct parameter names, got {names!r}")
    return out


def check_references(references: Any, n: int, d: int) -> np.ndarray | None:
    """``references``: None, or finite (N, d) (d = 1: (N,) accepted)."""
    if references is None:
        return None
    r = np.asarray(references, dtype=np.float64)
    if r.ndim == 1 and d == 1:
        r = r[:, None]
    if r.shape != (n, d):
        raise ValueError(f"`references` must have shape (N, d) = ({n}, {d}): one reference point per case, "
                         f"got {r.shape}")
    return check_finite_cases(np.ascontiguousarray(r), "references")


def check_scale(scale: Any, d: int) -> np.ndarray | None:
    """``scale``: None, or d finite positive values (the sd of each parameter)."""
    if scale is None:
        return None
    s = np.atleast_1d(np.asarray(scale, dtype=np.float64))
    if s.shape != (d,) or not np.all(np.isfinite(s)) or not np.all(s > 0):
        raise ValueError(f"`scale` must hold d = {d} finite positive values (one sd per parameter), got "
                         f"{np.asarray(scale).ravel()[:5]} of shape {np.shape(scale)}")
    return np.ascontiguousarray(s)


def check_prior_draws(prior_draws: Any, d: int) -> np.ndarray | None:
    """``prior_draws``: None, or finite (K, d) with K ≥ 2 (d = 1: (K,) accepted)."""
    if prior_draws is None:
        return None
    p = np.asarray(prior_draws, dtype=np.float64)
    if p.ndim == 1 and d == 1:
        p = p[:, None]
    if p.ndim != 2 or p.shape[1] != d or p.shape[0] < 2:
        raise ValueError(f"`prior_draws` must have shape (K, d) with K >= 2 draws and d = {d} columns (one per "
                         f"parameter), got {p.shape}")
    check_finite_cases(p, "prior_draws")
    if np.any(p.var(axis=0) == 0):
        raise ValueError("`prior_draws` must vary in every parameter (a prior variance of 0 has no contraction)")
    return p


def surprisal_scores(logpdf: Callable | None, truth: np.ndarray, draws: np.ndarray) -> np.ndarray | None:
    """−ln p_i at the truth and the draws of every case, (N, S + 1), column 0 the truth: the scores of
    :func:`mcref.rank_calibration`'s surprisal mode (``logpdf(x, i)`` at points x (…, d))."""
    if logpdf is None:
        return None
    if not callable(logpdf):
        raise ValueError(f"`logpdf` must be a callable logpdf(x, i), got {type(logpdf).__name__}")
    N, S, _ = draws.shape
    out = np.empty((N, S + 1))
    for i in range(N):
        a = np.asarray(logpdf(truth[i][None, :], i), dtype=np.float64)
        b = np.asarray(logpdf(draws[i], i), dtype=np.float64)
        if a.size != 1 or b.shape not in ((S,), (S, 1)):
            raise ValueError(f"`logpdf(x, i)` must return one log density per point of x: for case {i} it returned "
                             f"shape {a.shape} for x of shape (1, d) and {b.shape} for x of shape ({S}, d)")
        out[i, 0] = -a.ravel()[0]
        out[i, 1:] = -b.ravel()
        if not np.all(np.isfinite(out[i])):
            raise ValueError(f"`logpdf(x, i)` must return finite log densities: case {i} has NaN/inf")
    return out
