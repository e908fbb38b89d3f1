"""Inputs of :func:`mcref.posterior.from_posterior`: the truth (N, d) and the draws (N, S, d) from a
long table (CSV, Parquet, Feather, NPZ or a DataFrame), NumPy arrays (``.npy`` files or in
memory), or ArviZ ``InferenceData`` (optional: ``pip install arviz``).

A *long table* of draws has one row per (case, draw): a case column (any labels), an optional
draw column (numbers, the order of the draws within a case) and one numeric column per
parameter. The truth table has one row per case: the case column and the same parameter
columns. Cases are taken in the truth table's order; each case's draws in the order of the
draw column (file order without one).
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

import numpy as np

from ..core._input import NeedsTextReader, Table, frame_table, match_column, numeric_column, open_table, text_column

__all__ = ["read_posterior"]

_WHERE_T, _WHERE_D = "`truth`", "`draws`"


def _open(source: Any, where: str, delimiter: str | None, text: Sequence[str], fast: bool = True) -> Table:
    if isinstance(source, (str, os.PathLike)):
        try:
            return open_table(source, delimiter, fast=fast, text_columns=text)[1]
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return frame_table(source)


def _labels(table: Table, col: str, arg: str, where: str) -> np.ndarray:
    """Case labels as str; whole numbers of a numeric column without ``.0`` (so that a Parquet
    column of ints and a CSV column of the same ints give the same labels)."""
    name = match_column(table, col, arg, where)
    if table.arrays is not None:
        raw = np.asarray(table.arrays[name])
        if raw.dtype.kind in "biuf" and raw.ndim == 1 and np.all(np.isfinite(raw)):
            v = raw.astype(np.float64)
            if np.all(v == np.round(v)):
                return np.array([str(int(x)) for x in v], dtype=object)
            return np.array([repr(float(x)) for x in v], dtype=object)
    return text_column(table, col, arg, where)


def _param_names(table: Table, params: Sequence[str] | None, skip: Sequence[str | None], where: str) -> list[str]:
    if params is not None:
        if isinstance(params, str):
            params = [p.strip() for p in params.split(",") if p.strip()]
        names = [match_column(table, p, "params", where) for p in params]
        if not names:
            raise ValueError("`params` is empty: give the parameter columns, e.g. ['mu', 'sigma'], or None for "
                             "every column but the case and draw columns")
        return names
    drop = {s.lower() for s in skip if s is not None}
    names = [n for n in table.names if n.lower() not in drop]
    if not names:
        raise ValueError(f"{where}: no parameter column besides the case and draw columns; columns: "
                         f"{', '.join(map(repr, table.names))}")
    return names


def _matrix(table: Table, names: Sequence[str], where: str) -> np.ndarray:
    return np.column_stack([numeric_column(table, n, "params", where) for n in names])


def _long_tables(truth: Any, draws: Any, case: str, draw: str | None, params, delimiter, fast: bool):
    td = _open(draws, _WHERE_D, delimiter, (case,), fast)
    tt = _open(truth, _WHERE_T, delimiter, (case,), fast)
    d_case = match_column(td, case, "case", _WHERE_D)
    d_draw = None if draw is None else match_column(td, draw, "draw", _WHERE_D + " (pass draw=None to take "
                                                                              "each case's rows in file order)")
    names = _param_names(td, params, (d_case, d_draw), _WHERE_D)
    names_t = [match_column(tt, n, "params", _WHERE_T + " (the parameter columns of the draws)") for n in names]
    t_cases = _labels(tt, case, "case", _WHERE_T)
    d_cases = _labels(td, case, "case", _WHERE_D)
    index: dict[str, int] = {}
    for i, c in enumerate(t_cases.tolist()):
        if c in index:
            raise ValueError(f"{_WHERE_T}: case {c!r} appears twice (rows {index[c]} and {i}); one row per case")
        index[c] = i
    pos = np.array([index.get(c, -1) for c in d_cases.tolist()], dtype=np.int64)
    if np.any(pos < 0):
        extra = sorted({c for c, p in zip(d_cases.tolist(), pos) if p < 0})
        raise ValueError(f"{_WHERE_D}: {len(extra)} case(s) have no row in the truth, e.g. {extra[0]!r}")
    counts = np.bincount(pos, minlength=len(t_cases))
    if np.any(counts == 0):
        lack = [t_cases[i] for i in np.flatnonzero(counts == 0)]
        raise ValueError(f"{_WHERE_T}: {len(lack)} case(s) have no draws, e.g. {lack[0]!r}")
    if np.any(counts != counts[0]):
        j = int(np.argmax(counts != counts[0]))
        raise ValueError(f"{_WHERE_D}: ragged draws: case {t_cases[0]!r} has {counts[0]} draws, case "
                         f"{t_cases[j]!r} has {counts[j]}; every case needs the same number S")
    order = np.argsort(pos, kind="stable")
    if d_draw is not None:
        dv = numeric_column(td, d_draw, "draw", _WHERE_D)
        order = np.lexsort((dv, pos))
        sd, sp = dv[order], pos[order]
        same = (sd[1:] == sd[:-1]) & (sp[1:] == sp[:-1])
        if np.any(same):
            k = int(np.argmax(same))
            raise ValueError(f"{_WHERE_D}: case {t_cases[sp[k]]!r} has draw {sd[k]:g} twice; the draw column "
                             "numbers each case's draws once")
    S = int(counts[0])
    values = _matrix(td, names, _WHERE_D)[order].reshape(len(t_cases), S, len(names))
    return _matrix(tt, names_t, _WHERE_T), values, list(names)


def _is_table(x: Any) -> bool:
    if isinstance(x, (str, os.PathLike)):
        return os.path.splitext(os.fspath(x))[1].lower() != ".npy"
    return isinstance(x, Mapping) or (hasattr(x, "columns") and hasattr(x, "iloc"))


def _is_idata(x: Any) -> bool:
    if isinstance(x, (list, tuple)) and x:
        return all(hasattr(v, "posterior") for v in x)
    return hasattr(x, "posterior") and hasattr(x, "groups")


def _array(x: Any, where: str, ndim: int) -> np.ndarray:
    if isinstance(x, (str, os.PathLike)):
        try:
            x = np.load(os.fspath(x), allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{where}: cannot read {os.fspath(x)!r} as a .npy file ({exc})") from None
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a table, a path or an array of numbers, got {type(x).__name__}") from None
    if ndim == 3 and a.ndim == 2:  # one parameter: (N, S)
        a = a[:, :, None]
    if ndim == 2 and a.ndim == 1:
        a = a[:, None]
    if a.ndim != ndim:
        shape = "(N, d)" if ndim == 2 else "(N, S, d)"
        raise ValueError(f"{where} must be an array of shape {shape}, got shape {a.shape}")
    return a


def _posterior_matrix(post: Any, params, where: str, case_dim: str | None) -> tuple[np.ndarray, list[str]]:
    """An xarray posterior group as (S, d) (no case dim) or (N, S, d) (``case_dim`` given); vector
    variables flattened to ``name[i]`` columns."""
    names = list(post.data_vars) if params is None else (
        [p.strip() for p in params.split(",")] if isinstance(params, str) else list(params))
    missing = [n for n in names if n not in post.data_vars]
    if missing:
        raise ValueError(f"{where}: the posterior has no variable {missing[0]!r}; variables: "
                         f"{', '.join(map(repr, post.data_vars))}")
    cols, labels = [], []
    for n in names:
        var = post[n]
        lead = ("chain", "draw") if case_dim is None else (case_dim, "chain", "draw")
        absent = [dim for dim in lead if dim not in var.dims]
        if absent:
            raise ValueError(f"{where}: variable {n!r} has dims {var.dims}, without {absent[0]!r}")
        rest = [dim for dim in var.dims if dim not in lead]
        a = np.asarray(var.transpose(*lead, *rest).values, dtype=np.float64)
        k = len(lead)
        a = a.reshape(*a.shape[:k - 2], a.shape[k - 2] * a.shape[k - 1], -1)  # chains and draws pooled
        cols.append(a)
        labels += [n] if a.shape[-1] == 1 else [f"{n}[{i}]" for i in range(a.shape[-1])]
    return np.concatenate(cols, axis=-1), labels


def _idata(truth: Any, draws: Any, case: str, params, delimiter) -> tuple[np.ndarray, np.ndarray, list[str]]:
    if isinstance(draws, (list, tuple)):
        mats = [_posterior_matrix(v.posterior, params, f"{_WHERE_D}[{i}]", None) for i, v in enumerate(draws)]
        names = mats[0][1]
        shapes = {m.shape for m, _ in mats}
        if len(shapes) > 1:
            raise ValueError(f"{_WHERE_D}: ragged draws: the InferenceData hold posteriors of shapes "
                             f"{sorted(shapes)} (chains × draws, parameters); every case needs the same")
        values = np.stack([m for m, _ in mats])
        case_labels = None
    else:
        post = draws.posterior
        if case not in post.dims:
            raise ValueError(f"{_WHERE_D}: the posterior has no case dimension {case!r} (dims: "
                             f"{', '.join(map(str, post.dims))}); pass case=DIM or a list of InferenceData")
        values, names = _posterior_matrix(post, params, _WHERE_D, case)
        case_labels = [str(c) for c in post[case].values.tolist()] if case in post.coords else None
    if _is_table(truth):
        tt = _open(truth, _WHERE_T, delimiter, (case,))
        t = _matrix(tt, [match_column(tt, n, "params", _WHERE_T) for n in names], _WHERE_T)
        if case_labels is not None and any(c.lower() == case.lower() for c in tt.names):
            labels = _labels(tt, case, "case", _WHERE_T).tolist()
            where = {c: i for i, c in enumerate(case_labels)}
            lack = [c for c in labels if c not in where]
            if lack:
                raise ValueError(f"{_WHERE_T}: {len(lack)} case(s) have no draws, e.g. {lack[0]!r}")
            values = values[[where[c] for c in labels]]
    else:
        t = _array(truth, _WHERE_T, 2)
    return t, values, names


def read_posterior(truth: Any, draws: Any, *, case: str = "case", draw: str | None = "draw",
                   params: Sequence[str] | str | None = None, delimiter: str | None = None
                   ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The truth, the draws and the parameter names for :func:`mcref.posterior.from_posterior`.

    Parameters
    ----------
    truth : path, DataFrame, mapping or array
        A table with one row per case (the ``case`` column and one column per parameter:
        ``.csv``, ``.tsv``, ``.txt``, ``.parquet``, ``.feather``, ``.npz``, a pandas DataFrame or
        a mapping of column to array), or an (N, d) array (a ``.npy`` path or in memory).
    draws : path, DataFrame, mapping, array or InferenceData
        A long table with one row per (case, draw) and the same parameter columns; an (N, S, d)
        array (``.npy`` or in memory; (N, S) for one parameter); or ArviZ: one ``InferenceData``
        whose posterior has the dimension ``case`` beside ``chain`` and ``draw``, or a list of
        them, one per case in the truth's order (chains and draws pooled, S = chains × draws;
        a vector variable gives the columns ``name[0]``, ``name[1]``, ...).
    case : str, default: "case"
        The case column of both tables (the case dimension of an InferenceData).
    draw : str or None, default: "draw"
        The column numbering the draws within a case (their order); None: file order.
    params : list of str or str, optional
        The parameter columns (or variables), in order; a string is split at commas. Default:
        every column of the draws but ``case`` and ``draw`` (every posterior variable).
    delimiter : str, optional
        Field delimiter of a text file (default: by extension, sniffed for ``.txt``).

    Returns
    -------
    truth : ndarray, shape (N, d)
    draws : ndarray, shape (N, S, d)
    names : list of str
        The parameter names (``theta_0``, ... for arrays).

    Raises
    ------
    ValueError
        A missing file or column (naming it and listing those there are), a case twice in the
        truth, cases of the truth without draws or draws without a truth, ragged draws (cases
        with different S), a draw number twice in a case, arrays whose shapes disagree.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"case": ["a", "b"], "mu": [0.1, -0.3]})
    >>> d = pd.DataFrame({"case": ["b", "a", "a", "b"], "draw": [0, 1, 0, 1], "mu": [1.0, 2.0, 3.0, 4.0]})
    >>> truth, draws, names = read_posterior(t, d)
    >>> truth.shape, draws[:, :, 0].tolist(), names
    ((2, 1), [[3.0, 2.0], [1.0, 4.0]], ['mu'])
    """
    if not isinstance(case, str) or not case:
        raise ValueError(f"`case` must be a column name, got {case!r}")
    if draw is not None and (not isinstance(draw, str) or not draw):
        raise ValueError(f"`draw` must be a column name or None, got {draw!r}")
    if _is_idata(draws):
        t, v, names = _idata(truth, draws, case, params, delimiter)
    elif _is_table(draws):
        if not _is_table(truth):
            raise ValueError("`truth` must be a table (one row per case) when `draws` is a long table: the case "
                             "column matches them")
        try:
            t, v, names = _long_tables(truth, draws, case, draw, params, delimiter, True)
        except NeedsTextReader:  # a fast-read column pyarrow cannot read as the text reader would
            t, v, names = _long_tables(truth, draws, case, draw, params, delimiter, False)
    else:
        v = _array(draws, _WHERE_D, 3)
        t = _array(truth, _WHERE_T, 2) if not _is_table(truth) else None
        if t is None:
            raise ValueError("`truth` must be an (N, d) array when `draws` is an array (no case column to match)")
        names = [f"theta_{j}" for j in range(v.shape[2])] if params is None else (
            [p.strip() for p in params.split(",")] if isinstance(params, str) else [str(p) for p in params])
        if len(names) != v.shape[2]:
            raise ValueError(f"`params` names {len(names)} parameters; the draws have d = {v.shape[2]}")
    if t.shape[0] != v.shape[0] or t.shape[1] != v.shape[2]:
        raise ValueError(f"`truth` of shape {t.shape} and `draws` of shape {v.shape} disagree: the truth must be "
                         "(N, d) for draws (N, S, d)")
    return t, v, names
