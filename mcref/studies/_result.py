"""Result object shared by the built-in studies (docs/methods.md, "Studies")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StudyResult"]


@dataclass(frozen=True)
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

    def __str__(self) -> str:
        origin = f", store {self.store}" if self.store else ""
        return (f"study '{self.name}' (seed {self.seed}{origin}): {len(self.table)} rows, "
                f"{self.n_computed} cells computed, {self.n_loaded} read back, {self.seconds:.1f} s")
