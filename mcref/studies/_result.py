"""Result object shared by the built-in studies (docs/methods.md, "Studies")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

__all__ = ["StudyResult", "run_as"]


@dataclass(frozen=True, repr=False)
class StudyResult:
    """Outcome of a study: the tidy table and how it was obtained.

    Study-specific summaries (fits, curves) are properties of the subclasses and are
    computed from :attr:`table` alone, so a study read back from its store summarises
    exactly like a freshly computed one.

    Attributes
    ----------
    name : str
        Study name (``"scaling"``, ``"sensitivity"``, ``"reliability"``).
    params : dict
        The study's parameters, as recorded in the store.
    seed : int
        Study seed (every cell's stream derives from it and the cell's key).
    table : pandas.DataFrame
        One row per cell × statistic (× score): the cell's keys, then the study's columns.
    store : str or None
        Path of the SQLite results store, if any.
    n_computed, n_loaded : int
        Cells computed by this call, and read back from the store.
    seconds : float
        Wall time of this call.
    """

    name: str
    params: dict[str, Any]
    seed: int
    table: Any = field(repr=False)
    store: str | None = None
    n_computed: int = 0
    n_loaded: int = 0
    seconds: float = 0.0

    def __repr__(self) -> str:
        """The summary line and the head of the table (what a notebook shows), not the fields."""
        import pandas as pd

        with pd.option_context("display.max_rows", 20, "display.width", 120):
            return f"{type(self).__name__}: {self}\n{self.table!r}"

    def __str__(self) -> str:
        origin = f", store {self.store}" if self.store else ""
        return (f"study '{self.name}' (seed {self.seed}{origin}): {len(self.table)} rows, "
                f"{self.n_computed} cells computed, {self.n_loaded} read back, {self.seconds:.1f} s")


def run_as(cls: type, spec, run_kwargs: dict, *, columns: Sequence[str] | None = None,
           params: dict | None = None) -> StudyResult:
    """Run ``spec`` with :func:`mcref.studies.run_study` (``run_kwargs``: seed, n_jobs, backend,
    scheduler, store, progress, threads_per_cell) and wrap its table in the result class ``cls``.

    ``columns`` selects and orders the table's columns; ``params`` replaces the parameters
    shown in the result (e.g. without a large array).
    """
    from ._runner import check_run_options, run_study

    run = run_study(spec, **check_run_options(run_kwargs, spec.name))
    table = run.table if columns is None else run.table[list(columns)]
    return cls(name=spec.name, params=dict(spec.params) if params is None else params, seed=run.seed,
               table=table.reset_index(drop=True), store=run.store, n_computed=run.n_computed,
               n_loaded=run.n_loaded, seconds=run.seconds)
