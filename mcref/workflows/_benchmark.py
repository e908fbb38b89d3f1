"""Benchmark runs: :func:`mcref.validate` on many datasets at once, in parallel, stored, resumable.

One dataset is one cell of a study (``docs/methods.md``, sections "Studies" and "Verdicts"),
run by :func:`mcref.studies._runner.run_study`: the cell's key is the dataset's name and the
SHA-256 of its E and u, its arrays travel with its task (``StudySpec.data``), and the study
parameters are the statistics and the options of :func:`mcref.validate`, never the list of
datasets, so a store can be extended with new datasets without recomputing the old ones.
"""

from __future__ import annotations

import glob as _glob
import hashlib
import inspect
import math
import numbers
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

import numpy as np

from .. import datasets as _datasets
from ..core._checks import check_choice, check_int, check_probability
from ..core._warnings import FewReplicatesWarning, TieOrderWarning
from ..binning import DEFAULT_N_BINS, default_n_bins, resolve_n_bins
from ..datasets import Dataset
from ..stats import info
from ..studies._runner import DASK_CONNECT_TIMEOUT, RunInfo, StudySpec, run_study
from ..report._render import n_boot_text, n_mc_text
from ..verdict._validate import DEFAULT_STATS, MIN_VERDICT_REPLICATES, MIN_VERDICT_REPLICATES_HARD, RULES, validate

__all__ = ["BenchmarkResult", "benchmark", "STUDY_NAME", "content_hash", "validate_seed"]

#: name of the benchmark study in a store and in :func:`mcref.studies._runner.cell_seed`
STUDY_NAME = "benchmark"
#: options of :func:`mcref.validate` that :func:`benchmark` passes on (all but the data, stats, seed, name;
#: and the features ``x`` and the labels ``groups``/``order``, which are data: benchmark's ``x`` and ``groups``
#: name file columns; ``order`` is not offered)
_VALIDATE_OPTIONS = tuple(n for n in inspect.signature(validate).parameters
                          if n not in ("E", "u", "x", "stats", "seed", "name", "groups", "order", "block_length",
                                       "block_method"))
_VALIDATE_DEFAULTS = {n: p.default for n, p in inspect.signature(validate).parameters.items()
                      if n in _VALIDATE_OPTIONS}
_GLOB_CHARS = frozenset("*?[")
VERDICT_ORDER = ("valid", "invalid", "not testable", "unreliable")


def content_hash(E: np.ndarray, u: np.ndarray, x: np.ndarray | None = None, groups: np.ndarray | None = None) -> str:
    """SHA-256 (hex) of a dataset's content: the bytes of E then u (then x, for a run with
    adaptivity rows) as little-endian float64 (the labels of a categorical x as JSON text).

    Two datasets with the same values in the same order have the same hash, whatever their
    name or file; one changed value gives another hash (another cell of a benchmark).

    Examples
    --------
    >>> content_hash(np.array([0.1, -0.2]), np.array([1.0, 2.0]))[:12]
    'b59435a807e9'
    """
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(E, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(u, dtype="<f8").tobytes())
    if x is not None and np.asarray(x).dtype.kind in "biuf":
        h.update(b"x")
        h.update(np.ascontiguousarray(x, dtype="<f8").tobytes())
    elif x is not None:  # labels: one JSON list, so that no two label lists share their bytes
        import json

        h.update(b"x-labels")
        h.update(json.dumps(np.asarray(x).tolist()).encode("utf-8"))
    if groups is not None:  # the group codes of a run with groups= (dense, by first appearance)
        h.update(b"groups")
        h.update(np.ascontiguousarray(groups, dtype="<i8").tobytes())
    return h.hexdigest()


def validate_seed(seed_seq: np.random.SeedSequence) -> int:
    """The seed that a benchmark cell passes to :func:`mcref.validate`: the first 64-bit word
    of the cell's :class:`~numpy.random.SeedSequence`, shifted right by one bit (a
    non-negative int64, so that it fits a table column)."""
    return int(seed_seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


# ---------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class BenchmarkResult:
    """Outcome of :func:`benchmark`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (dataset, statistic), datasets in the order of the sources and
        statistics in the order of ``stats``. Columns: ``dataset``, ``M``, ``stat``,
        ``estimate``, ``bias``, ``low``, ``high`` (BCa 95 % interval), ``interval`` (its
        method), ``reference`` (predefined reference, NaN if none), ``zeta_BS`` (NaN if
        none); per generative distribution D (labels as in :func:`mcref.validate`:
        ``normal``, ``t(6)``, ``empirical``): ``ref_<D>`` (simulated reference), ``u_ref_<D>``
        (its Monte Carlo standard uncertainty), ``ref_low_<D>``, ``ref_high_<D>`` (2.5 and
        97.5 % quantiles of the simulated statistic), ``p_<D>`` (Monte Carlo p-value),
        ``zeta_Sim_<D>``; then ``D_sensitive``, ``excludes_estimate``, ``shape_flag``,
        ``verdict``, ``verdict_paper``, ``beta_u2``, ``beta_E2``, ``beta_Z2`` (the
        dataset's shape screen), ``n_bins`` (the dataset's bins of u, validate's default of its
        M unless ``n_bins`` was given; None without a binned statistic), ``n_mc`` (the
        dataset's Monte Carlo repeats: its p-values are at least 1/(n_mc + 1)), ``seed`` (the seed passed to :func:`mcref.validate`) and
        ``sha256`` (:func:`content_hash` of the dataset).
    seed : int
        The benchmark's seed.
    store : str or None
        Path of the results store, if any.
    run : RunInfo
        How the run went: cells computed now (``n_computed``) and read back from the
        store (``n_loaded``), wall time.
    datasets : tuple of Dataset
        The datasets, in table order (their ``x`` is used by the report's diagnostics).
    stats : tuple of str
        The statistics, canonical names.
    options : dict
        The options of :func:`mcref.validate`, every default filled in.
    """

    table: Any
    seed: int
    store: str | None
    run: RunInfo
    datasets: tuple[Dataset, ...] = field(repr=False)
    stats: tuple[str, ...]
    options: Mapping[str, Any]

    @property
    def dists(self) -> tuple[str, ...]:
        """Labels of the generative distributions D, in table order."""
        return tuple(c[4:] for c in self.table.columns if c.startswith("ref_") and not c.startswith("ref_low_")
                     and not c.startswith("ref_high_"))

    def verdicts(self):
        """Verdicts as a DataFrame, one row per dataset and one column per statistic."""
        t = self.table
        wide = t.pivot(index="dataset", columns="stat", values="verdict")
        return wide.loc[[d.name for d in self.datasets], list(self.stats)]

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write :attr:`table` to a CSV file (no index; floats at full precision)."""
        self.table.to_csv(path, index=False)

    def plot(self, ax=None):
        """The summary figure, :func:`mcref.plots.plot_benchmark` (needs matplotlib)."""
        from ..report.plots import plot_benchmark

        return plot_benchmark(self, ax=ax)

    def to_html(self, directory: str | os.PathLike, *, diagnostics: bool = True) -> str:
        """Write a static report (opens offline) to ``directory``: ``index.html`` with the
        sortable table, the summary figure and one section per dataset (its diagnostics
        figure, :func:`mcref.plots.plot_report`, and its rows). The report is written to a
        temporary directory next to ``directory`` and moved into place at the end; an
        existing ``directory`` is replaced only if it is an earlier mcref report (or empty).
        ``diagnostics=False`` leaves out the per-dataset figures (faster). Returns the path
        of ``index.html``."""
        from ..report._html import write_report

        return write_report(self, directory, diagnostics=diagnostics)

    def __str__(self) -> str:
        o = self.options
        r = self.run
        head = (f"benchmark: {len(self.datasets)} dataset(s) x {len(self.stats)} statistic(s), "
                f"B={n_boot_text(o['n_boot'])}, N_MC={n_mc_text(o['n_mc'])}, seed={self.seed}"
                + (f", store={self.store}" if self.store else "")
                + f" ({r.n_computed} computed, {r.n_loaded} loaded, {r.seconds:.1f} s)")
        t = self.table
        words = t["finding"] if "finding" in t else t["verdict"]  # a store written before the words
        cells: dict[tuple[str, str], str] = {}
        for name, stat, est, v in zip(t["dataset"], t["stat"], t["estimate"], words):
            e = f"{est:.4g}" if math.isfinite(est) else str(est)
            cells[(name, stat)] = v if v == "not testable" and not math.isfinite(est) else f"{e} {v}"
        names = [d.name for d in self.datasets]
        heads = self.headlines()
        first = [f"{n}: {heads.get(n) or 'joint verdict: not stored (a store written before the joint column)'}"
                 for n in names]
        cols = [["dataset", *names]]
        for s in self.stats:
            cols.append([s, *(cells.get((n, s), "-") for n in names)])
        widths = [max(len(x) for x in c) for c in cols]
        lines = ["  ".join(c[i].ljust(w) for c, w in zip(cols, widths)).rstrip() for i in range(len(names) + 1)]
        counts = words.value_counts()
        tally = ", ".join(f"{int(counts[v])} {v}" for v in counts.index)
        notes = [f"rows: {tally} (estimate and finding per cell, in the words of the property each row tested; "
                 "docs/methods.md, 'Words of the reports')"]
        notes += _fewer_bins_notes(t, o)
        if _indicative(o):
            notes.append(f"indicative only: B={n_boot_text(o['n_boot'])}, N_MC={n_mc_text(o['n_mc'])} (stable verdicts need 1000 "
                         "or more each)")
        return "\n".join([head, *first, *lines, *notes])

    def headlines(self) -> dict[str, str]:
        """Each dataset's joint verdict and what its rows found (:meth:`ValidationTable.headline`),
        by dataset name; empty for a store written before the column existed."""
        t = self.table
        if "headline" not in t:
            return {}
        return {n: h for n, h in zip(t["dataset"], t["headline"]) if isinstance(h, str)}

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        return "<pre>" + __import__("html").escape(str(self)) + "</pre>"


def _fewer_bins_notes(table, options: Mapping[str, Any]) -> list[str]:
    """The note of the datasets that got fewer bins than the default (n_bins left to validate's
    default, :func:`mcref.binning.default_n_bins`), as validate's own table says it."""
    if options["n_bins"] is not None or "n_bins" not in table:
        return []
    per = table.drop_duplicates("dataset").set_index("dataset")["n_bins"]
    few = [(d, int(n)) for d, n in per.items() if n == n and n is not None and int(n) < DEFAULT_N_BINS]
    if not few:
        return []
    import textwrap

    sets = ", ".join(f"{d} {n}" for d, n in few)
    return [textwrap.fill(f"bins: fewer than the default {DEFAULT_N_BINS} so that every bin keeps "
                          f"min_count={options['min_count']} points: {sets}", width=100, subsequent_indent="    ")]


# ---------------------------------------------------------------------- sources
def _is_frame(src: Any) -> bool:
    return hasattr(src, "columns") and hasattr(src, "iloc")


def _describe(src: Any) -> str:
    if isinstance(src, Dataset):
        return f"Dataset {src.name!r}"
    if _is_frame(src):
        return "DataFrame"
    if isinstance(src, tuple):
        return f"tuple {src[0]!r}" if src and isinstance(src[0], str) else "tuple"
    return repr(os.fspath(src)) if isinstance(src, (str, os.PathLike)) else type(src).__name__


def _is_triple(src: Any) -> bool:
    return (isinstance(src, tuple) and len(src) == 3 and isinstance(src[0], str)
            and not isinstance(src[1], (str, os.PathLike)) and not isinstance(src[2], (str, os.PathLike)))


def _from_path(path: str, where: str, file_options: Mapping[str, Any]) -> Dataset:
    try:
        return _datasets.from_file(path, **file_options)
    except ValueError as exc:
        raise ValueError(f"`sources`: {where}: {exc}") from None


def _split(src: Any, where: str, file_options: Mapping[str, Any], by: str | None,
           pairs: Any) -> list[tuple[Dataset, str]]:
    """The datasets of one table (a file or a DataFrame): its groups (``by``), its column pairs
    (``pairs``), or the table as one dataset (a DataFrame)."""
    opts = dict(file_options)
    try:
        if by is not None:
            sets = _datasets.from_groups(src, by, **opts)
            return [(d, f"{where}, group {d.name!r} (by={by!r})") for d in sets]
        if pairs is not None:
            extra = sorted(k for k in ("E", "u", "pred") if opts[k] is not None)
            if extra:
                raise ValueError(f"with `pairs`, the columns come from `pairs` (errors or predictions : "
                                 f"uncertainties) and `ref`; `{extra[0]}` is not used")
            sets = _datasets.from_pairs(src, pairs, x=opts["x"], ref=opts["ref"],
                                        u_is_variance=opts["u_is_variance"], delimiter=opts["delimiter"])
            return [(d, f"{where}, pair {d.name!r}") for d in sets]
        opts.pop("delimiter")
        return [(_datasets.from_frame(src, **opts), where)]
    except ValueError as exc:
        raise ValueError(f"`sources`: {where}: {exc}") from None


def _expand(src: Any, file_options: Mapping[str, Any], by: str | None = None,
            pairs: Any = None) -> list[tuple[Dataset, str]]:
    """One source → [(dataset, description of where it came from)]."""
    where = _describe(src)
    if _is_frame(src):
        return _split(src, where, file_options, by, pairs)
    if by is not None or pairs is not None:
        p = Path(os.fspath(src)) if isinstance(src, (str, os.PathLike)) else None
        if p is None or not p.is_file():
            what = "`by`" if by is not None else "`pairs`"
            raise ValueError(f"`sources`: {what} splits a table (a data file or a DataFrame) into datasets; "
                             f"{where} is not one")
        return _split(os.fspath(src), where, file_options, by, pairs)
    if isinstance(src, Dataset):
        return [(src, where)]
    if isinstance(src, tuple):
        if not _is_triple(src):
            raise ValueError(f"`sources`: a tuple must be (name, E, u) with a string name, got a "
                             f"{len(src)}-tuple {where}")
        try:
            return [(Dataset(src[0], src[1], src[2], source="(name, E, u) tuple"), where)]
        except ValueError as exc:
            raise ValueError(f"`sources`: {where}: {exc}") from None
    if not isinstance(src, (str, os.PathLike)):
        raise ValueError(f"`sources`: each source must be a file path, a glob, a directory, a built-in dataset "
                         f"name, a Dataset, a DataFrame or a (name, E, u) tuple; got {type(src).__name__}")
    text = os.fspath(src)
    if not isinstance(text, str):
        raise ValueError(f"`sources`: paths must be text, got {text!r}")
    builtin = {n.lower(): n for n in _datasets.names()}
    p = Path(text)
    if p.is_dir():
        files = sorted(str(f) for f in p.iterdir() if f.is_file() and f.suffix.lower() == ".csv")
        if not files:
            raise ValueError(f"`sources`: directory {text!r} holds no *.csv file")
        return [(_from_path(f, repr(f), file_options), repr(f)) for f in files]
    if p.is_file():
        return [(_from_path(text, where, file_options), where)]
    if text.lower() == "all":
        return [(_datasets.load(n), f"built-in {n!r}") for n in _datasets.names()]
    if text.lower() in builtin:
        n = builtin[text.lower()]
        return [(_datasets.load(n), f"built-in {n!r}")]
    if _GLOB_CHARS & set(text):
        files = sorted(f for f in _glob.glob(text) if os.path.isfile(f))
        if not files:
            raise ValueError(f"`sources`: the glob {text!r} matches no file")
        return [(_from_path(f, repr(f), file_options), repr(f)) for f in files]
    raise ValueError(f"`sources`: {where} is not a file, a directory, a glob or a built-in dataset "
                     f"('all' or one of {', '.join(_datasets.names())})")


def _resolve_sources(sources: Any, file_options: Mapping[str, Any], by: str | None = None,
                     pairs: Any = None) -> list[tuple[Dataset, str]]:
    if isinstance(sources, (str, os.PathLike, Dataset)) or _is_triple(sources) or _is_frame(sources):
        sources = [sources]
    if isinstance(sources, Mapping) or not isinstance(sources, (list, tuple)) and not hasattr(sources, "__iter__"):
        raise ValueError(f"`sources` must be a source or a list of sources, got {type(sources).__name__}")
    items: list[tuple[Dataset, str]] = []
    for src in list(sources):
        items += _expand(src, file_options, by, pairs)
    if not items:
        raise ValueError("`sources` is empty: give at least one dataset")
    seen: dict[str, str] = {}
    for ds, where in items:
        if not ds.name:
            raise ValueError(f"`sources`: {where} has an empty dataset name")
        if ds.name in seen:
            raise ValueError(f"`sources`: two datasets are named {ds.name!r}: {seen[ds.name]} and {where} "
                             "(rename one: the name identifies a dataset in the table and the store)")
        seen[ds.name] = where
    return items


# ---------------------------------------------------------------------- options
def _indicative(opts: Mapping[str, Any]) -> bool:
    """B or N_MC below what stable verdicts need (N_MC None: validate's default, never below)."""
    return any(opts[n] is not None and opts[n] < MIN_VERDICT_REPLICATES for n in ("n_boot", "n_mc"))


def _check_options(stats: Any, options: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Canonical stats and every validate option (defaults filled in), or ValueError."""
    unknown = sorted(set(options) - set(_VALIDATE_OPTIONS))
    if unknown:
        raise ValueError(f"`{unknown[0]}` is not an option of benchmark; options of validate: "
                         f"{', '.join(_VALIDATE_OPTIONS)}")
    if isinstance(stats, str):
        stats = [stats]
    if any(isinstance(s, str) and s.upper() == "SKCE" for s in stats):
        raise ValueError("`stats`: SKCE is a row of validate (mcref.validate(E, u, stats=[..., 'SKCE']), `mcref "
                         "validate --stats ...,SKCE`), not of the benchmark yet; leave it out here")
    try:
        names = [info(s).name for s in stats]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"`stats`: {exc}") from None
    if not names:
        raise ValueError("`stats` must name at least one statistic")
    if len(set(names)) != len(names):
        raise ValueError(f"`stats` names a statistic twice: {names}")
    opts = {n: options.get(n, _VALIDATE_DEFAULTS[n]) for n in _VALIDATE_OPTIONS}
    dists = opts["dists"]
    if dists is not None:  # None: validate's default for each dataset's M
        dists = [dists] if isinstance(dists, str) else list(dists)
        if not dists or not all(isinstance(d, str) for d in dists):
            raise ValueError(f"`dists` must be a non-empty list of distribution names (strings), got "
                             f"{opts['dists']!r}")
    opts["dists"] = dists
    for n in ("n_boot", "n_mc"):
        if opts[n] is None:  # validate's default_n_boot / default_n_mc of each dataset's M
            continue
        opts[n] = check_int(opts[n], n, minimum=1)
        if opts[n] < MIN_VERDICT_REPLICATES_HARD:
            raise ValueError(f"`{n}`={opts[n]}: too few for a verdict; validate refuses fewer than "
                             f"{MIN_VERDICT_REPLICATES_HARD} (stable verdicts need 1000 or more; the defaults are "
                             "5000 and default_n_mc(M) ≥ 2000)")
    if opts["n_bins"] is not None:  # None: validate's default, 20 or fewer for a small dataset
        opts["n_bins"] = check_int(opts["n_bins"], "n_bins", minimum=1)
    opts["min_count"] = check_int(opts["min_count"], "min_count", minimum=1)
    opts["rule"] = check_choice(opts["rule"], "rule", RULES)
    opts["binning"] = check_choice(opts["binning"], "binning", ("equal", "adaptive"))
    opts["alpha"] = check_probability(opts["alpha"], "alpha")
    for n in ("shrink",):
        if not isinstance(opts[n], (bool, np.bool_)):
            raise ValueError(f"`{n}` must be True or False, got {opts[n]!r}")
        opts[n] = bool(opts[n])
    if opts["log"] is not None and not isinstance(opts["log"], (bool, np.bool_)):
        raise ValueError(f"`log` must be None, True or False, got {opts['log']!r}")
    k = opts["k_sensitivity"]
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not k > 0:
        raise ValueError(f"`k_sensitivity` must be a number > 0, got {k!r}")
    opts["k_sensitivity"] = float(k)
    return names, opts


def _group_codes(ds: Dataset, where: str, column: str, by: str | None, delimiter: str | None) -> np.ndarray:
    """The dense group codes of the column ``column`` of the file a dataset was read from
    (``benchmark(groups=...)``), checked by :func:`mcref.core._checks.check_groups`."""
    from ..core._checks import check_groups

    if by is not None:
        raise ValueError("`groups` reads a column of each data file, which `by` splits: give one file per dataset")
    if not (ds.source and os.path.isfile(ds.source)):
        raise ValueError(f"`groups`: {where} is not read from a file; groups= names a column of the data files "
                         "(validate(E, u, groups=...) takes labels directly)")
    cols = _datasets.read_columns(ds.source, delimiter=delimiter)
    if column not in cols:
        raise ValueError(f"`groups`: no column {column!r} in {where}; columns: {', '.join(cols)}")
    try:
        return check_groups(cols[column], ds.M)
    except ValueError as exc:
        raise ValueError(f"`sources`: {where}: {exc}") from None


# ---------------------------------------------------------------------- cell
def _bench_cell(key: dict, params: dict, seed_seq: np.random.SeedSequence, n_threads: int, *,
                data: Any = None) -> list[dict]:
    """One dataset: :func:`mcref.validate` with the cell's seed; one flat row per statistic."""
    if data is None:
        raise ValueError(f"benchmark cell {key['dataset']!r}: its data did not reach the worker")
    E, u, *rest = data
    x = rest[0] if rest else None  # the feature x of an adaptivity run: numbers or labels
    g = rest[1] if len(rest) > 1 else None  # the group codes of a run with groups=
    if content_hash(E, u, x, g) != key["sha256"]:  # the data that travelled are the data of the key
        raise ValueError(f"benchmark cell {key['dataset']!r}: the data do not match their content hash")
    seed = validate_seed(seed_seq)
    with warnings.catch_warnings():  # said once by benchmark(); ties are in tie columns of validate's own table
        warnings.simplefilter("ignore", FewReplicatesWarning)
        warnings.simplefilter("ignore", TieOrderWarning)
        features = None if x is None else {params.get("x_name", "x"): x}  # named as validate names them
        tab = validate(E, u, x=features, stats=params["stats"], seed=seed, name=key["dataset"], groups=g,
                       **params["options"])
    return _rows(tab, seed)


def _f(x: Any) -> float:
    return float("nan") if x is None else float(x)


def _rows(tab, seed: int) -> list[dict]:
    rows = []
    sh = tab.shape
    for r in tab.rows:
        row: dict[str, Any] = {
            "M": int(tab.M), "stat": r.name, "estimate": float(r.estimate), "bias": float(r.bias),
            "low": float(r.low), "high": float(r.high), "interval": r.interval_method,
            "reference": _f(r.reference), "zeta_BS": _f(r.zeta_bs),
        }
        for d, ref in r.sim.items():
            row[f"ref_{d}"] = float(ref.mean)
            row[f"u_ref_{d}"] = float(ref.se)
            row[f"ref_low_{d}"] = float(ref.low)
            row[f"ref_high_{d}"] = float(ref.high)
            row[f"p_{d}"] = _f(r.p_sim.get(d))
            row[f"zeta_Sim_{d}"] = float(r.zeta_sim[d])
        row.update({
            "D_sensitive": bool(r.d_sensitive), "excludes_estimate": bool(r.excludes_estimate),
            "shape_flag": bool(r.shape_flag), "tested": r.tested, "finding": r.finding, "verdict": r.verdict,
            "test": r.test, "p_test": _f(r.p_test),
            "n_test": int(r.n_test) if r.n_test is not None else None, "verdict_paper": r.verdict_paper,
            "beta_u2": float(sh.beta_u2), "beta_E2": float(sh.beta_E2), "beta_Z2": float(sh.beta_Z2),
            "n_bins": int(tab.n_bins) if tab.binned else None, "n_mc": int(tab.n_mc), "seed": int(seed),
            # the dataset's joint verdict, repeated on each of its rows (as validate's CSV does)
            "joint_verdict": tab.joint.verdict if tab.joint else None,
            "joint_p": _f(tab.joint.p if tab.joint else None), "headline": tab.headline(),
        })
        if tab.dependence is not None:  # groups=: what the labels say (docs/methods.md, "Dependent test sets")
            d = tab.dependence
            row.update({"n_groups": int(d.n_units), "icc_Z": float(d.icc_z), "icc_Z2": float(d.icc_z2),
                        "design_effect": float(d.design_effect), "M_eff": float(d.m_eff),
                        "independent_rows_wrong": bool(d.independent_rows_wrong)})
        rows.append(row)
    return rows


# ---------------------------------------------------------------------- API
def benchmark(
    sources: Any,
    *,
    stats: Sequence[str] = DEFAULT_STATS,
    store: str | os.PathLike | None = None,
    # datasets.from_file's column keywords, forwarded: listed here so that help() and the docs show them
    E: str | None = None,
    u: str | None = None,
    x: str | None = None,
    pred: str | None = None,
    ref: str | None = None,
    u_is_variance: bool = False,
    delimiter: str | None = None,
    by: str | None = None,
    pairs: Any = None,
    n_jobs: int = -1,
    backend: Literal["loky", "threading", "sequential", "dask"] = "loky",
    scheduler: Any = None,
    connect_timeout: float = DASK_CONNECT_TIMEOUT,
    seed: int | None = None,
    progress: bool = True,
    adaptivity: bool = False,
    groups: str | None = None,
    **validate_options: Any,
) -> BenchmarkResult:
    """Validate many datasets at once: :func:`mcref.validate` per dataset, in parallel, stored.

    Each dataset is one cell of a study (``docs/methods.md``, "Studies"): all its statistics
    share the bootstrap resamples and the simulated datasets of one :func:`mcref.validate`
    call, whose seed derives from the benchmark seed and the dataset's name and content only.

    Parameters
    ----------
    sources : source or list of sources
        Each source is a CSV file path (read with :func:`mcref.datasets.from_file`; ``.txt``,
        ``.tsv`` and ``.npz`` files too), a glob (``"runs/*.csv"``, sorted), a directory (every
        ``*.csv`` inside, sorted), a built-in dataset name (:func:`mcref.datasets.names`;
        ``"all"``: the nine), a :class:`~mcref.datasets.Dataset`, a ``(name, E, u)`` tuple or
        a pandas DataFrame (:func:`mcref.datasets.from_frame`). Files may also be Parquet or
        Feather. Sources may be mixed; dataset names must be unique.
    stats : sequence of str, default: ("ZMS", "RCE", "CC", "ENCE", "ZMSE")
        Statistics of every dataset.
    store : str or os.PathLike, optional
        SQLite results store (:class:`mcref.store.StudyStore`): every finished dataset is
        committed at once; a rerun computes only the datasets missing from it, so an
        interrupted run resumes and a run with more datasets computes only the new ones.
    E, u, x, pred, ref : str, optional
        Column names of the files (as :func:`mcref.datasets.from_file`); not used for the
        other kinds of source.
    u_is_variance : bool, default: False
        The files' ``u`` column holds variances.
    delimiter : str, optional
        Field delimiter of the text files (default: guessed).
    by : str, optional
        Many models in one long table: each file or DataFrame of ``sources`` is split by the
        values of this column (:func:`mcref.datasets.from_groups`), each group a dataset
        named by its value, with the column options above. A group's row in the table
        (seed included) is the row of that group run alone under that name.
    pairs : str or list of tuples, optional
        Many models in one wide table: one dataset per (errors or predictions, uncertainties)
        column pair, ``"pred_A:sigma_A,pred_B:sigma_B"`` (``"A=pred_A:sigma_A"`` names it) or
        ``[("pred_A", "sigma_A"), ...]`` (:func:`mcref.datasets.from_pairs`); with ``ref`` the
        first column holds predictions (E = ref − pred), else errors; ``x`` is shared.
    n_jobs : int, default: -1
        Worker processes (-1: every core), as :func:`mcref.studies._runner.run_study`.
    backend : {"loky", "threading", "sequential", "dask"}, default: "loky"
        Where the datasets run; ``"dask"`` sends each (with its arrays) to a Dask cluster.
    scheduler : None, str or distributed.Client, optional
        Dask scheduler address or client, for ``backend="dask"``.
    connect_timeout : float, default: 5
        Seconds to wait for the scheduler at a ``scheduler`` address (a clear error after).
    seed : int, optional
        Benchmark seed (non-negative). None: the store's seed if it holds the benchmark
        already, else one drawn from the OS (in :attr:`BenchmarkResult.seed`).
    progress : bool, default: True
        Progress bar (cells) on a terminal.
    adaptivity : bool, default: False
        Validate each dataset with its feature x too (``validate(E, u, x={name: x})``: rows
        ``ENCE|<name>``, ``ZMSE|<name>`` and x in the joint verdict; docs/guide/toolbox.md,
        "Adaptivity"): every dataset must have an x (the column ``x`` names, or the file's ``x``), read by the
        one rule of feature columns (numbers, else labels: a categorical feature), and its rows
        are named after that column (``ENCE|x`` without ``x``), as ``mcref validate
        --x-column`` names them. x enters each cell's content hash, so a run with adaptivity is
        another benchmark than one without.
    groups : str, optional
        A column of the data files holding a group label per row (dependent test sets:
        ``validate(E, u, groups=...)``, docs/methods.md "Dependent test sets"); every source must
        then be a file (or a glob or directory of files), not split by ``by``. The labels enter
        each cell's content hash.
    **validate_options
        Options of :func:`mcref.validate`: ``dists``, ``n_bins``, ``n_boot``, ``n_mc``,
        ``min_count``, ``shrink``, ``binning``, ``log``, ``k_sensitivity``, ``rule``,
        ``alpha``. With ``stats`` they identify the benchmark in a store.

    Returns
    -------
    BenchmarkResult
        The tidy table (one row per dataset and statistic) and how it was obtained.

    Raises
    ------
    ValueError
        A source that cannot be read (the message names it and says what is wrong), two
        datasets with the same name (both sources named), an unknown option or an invalid
        value of one, fewer than 100 bootstrap replicates or Monte Carlo repeats.
    mcref.store.StoreMismatchError
        ``store`` holds a benchmark with other statistics, options or seed.

    Warns
    -----
    FewReplicatesWarning
        Once, when ``n_boot`` or ``n_mc`` is below 1000 (the verdicts are indicative).

    See Also
    --------
    validate : the validation of one dataset.
    mcref.plots.plot_benchmark : the summary figure.

    Notes
    -----
    A cell's key is ``{"dataset": name, "sha256": content_hash(E, u)}``: a file whose
    content changed is a new cell, computed anew. The cell passes
    ``validate_seed(cell_seed(seed, "benchmark", key))`` to :func:`mcref.validate`, so
    the table is bit-identical for any ``n_jobs``, backend, order of the sources, and
    whether the rows were computed now or read back from the store; the seed is in the
    table's ``seed`` column, and ``mcref.validate(E, u, seed=that, ...)`` reproduces a row.
    Verdicts are those of :func:`mcref.validate` (``docs/methods.md``, "Verdicts").

    Examples
    --------
    >>> import warnings
    >>> rng = np.random.default_rng(0)
    >>> u1 = rng.lognormal(-1, 0.3, 1000)
    >>> sets = [("calibrated", u1 * rng.normal(size=1000), u1), ("too small u", 2 * u1 * rng.normal(size=1000), u1)]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FewReplicatesWarning)
    ...     res = benchmark(sets, stats=["ZMS", "ENCE"], n_boot=200, n_mc=200, seed=0, n_jobs=1, progress=False)
    >>> res.table["dataset"].tolist(), res.table["verdict"].tolist()
    (['calibrated', 'calibrated', 'too small u', 'too small u'], ['valid', 'valid', 'invalid', 'valid'])
    >>> res.table["test"].tolist()  # ZMS tests the scale, ENCE the consistency (blind to a pure scale error)
    ['bootstrap-t', 'permutation', 'bootstrap-t', 'permutation']
    """
    file_options = {"E": E, "u": u, "x": x, "pred": pred, "ref": ref, "u_is_variance": u_is_variance,
                    "delimiter": delimiter}
    names, opts = _check_options(stats, validate_options)
    if by is not None and pairs is not None:
        raise ValueError("give `by` (a long table: one group column) or `pairs` (a wide table: column pairs), "
                         "not both")
    items = _resolve_sources(sources, file_options, by, pairs)
    binned = any(info(s).binned for s in names)
    for ds, where in items:  # fail before any work, naming the source
        if ds.M < 3:
            raise ValueError(f"`sources`: {where}: a dataset needs at least 3 points, got {ds.M}")
        n_bins = default_n_bins(ds.M, opts["min_count"]) if opts["n_bins"] is None else opts["n_bins"]
        if binned and opts["binning"] == "equal" and ds.M < n_bins * opts["min_count"] and not opts["shrink"]:
            try:
                resolve_n_bins(ds.M, n_bins, min_count=opts["min_count"], shrink=False)
            except ValueError as exc:
                raise ValueError(f"`sources`: {where}: {exc}") from None
    if _indicative(opts):
        warnings.warn(FewReplicatesWarning(
            f"n_boot={opts['n_boot']}, n_mc={opts['n_mc']}: the verdicts are indicative only (stable verdicts "
            "need 1000 or more of each; defaults 5000 and default_n_mc(M) ≥ 2000)"), stacklevel=2)
    from ..store import canonical_json

    keys, data = [], {}
    for ds, where in items:
        if adaptivity and ds.x is None:
            raise ValueError(f"`sources`: {where}: adaptivity=True needs a feature x (a column named by `x`, "
                             "or x in the file), and this dataset has none")
        xs = None if not adaptivity else (np.ascontiguousarray(ds.x, dtype=np.float64) if ds.x.dtype.kind == "f"
                                          else ds.x)
        g = _group_codes(ds, where, groups, by, delimiter) if groups is not None else None
        key = {"dataset": ds.name, "sha256": content_hash(ds.E, ds.u, xs, g)}
        keys.append(key)
        data[canonical_json(key)] = (np.ascontiguousarray(ds.E), np.ascontiguousarray(ds.u)) + (
            (xs,) if adaptivity or g is not None else ()) + ((g,) if g is not None else ())
    # the adaptivity rows are named by the feature, as validate names them: ENCE|x, or ENCE|<x column>
    x_name = x if x is not None else "x"
    params = {"stats": names, "options": opts, **({"adaptivity": True} if adaptivity else {}),
              **({"x_name": x_name} if adaptivity and x_name != "x" else {}),
              **({"groups": str(groups)} if groups is not None else {})}
    spec = StudySpec(STUDY_NAME, params, keys, _bench_cell, data=data)
    info_ = run_study(spec, seed=seed, n_jobs=n_jobs, backend=backend, scheduler=scheduler, store=store,
                      progress=progress, connect_timeout=connect_timeout)
    table = info_.table
    cols = [c for c in table.columns if c != "sha256"] + ["sha256"]
    table = table[cols]
    rows = tuple(names) + (tuple(f"{n}|{x_name}" for n in names if info(n).binned) if adaptivity else ())
    return BenchmarkResult(table=table, seed=info_.seed, store=info_.store, run=info_,
                           datasets=tuple(ds for ds, _ in items), stats=rows, options=opts)
