r"""The exact null of an exchangeable ensemble and the one combined verdict of
:func:`mcref.from_samples` (docs/methods.md, "Exact null of an ensemble").

With m members per case, the Gaussian summary E = y − x̄, u = s is not a pair whose Z = E/u
is independent of u: under calibration Z follows (1 + 1/m)^{1/2}·t_{m−1} for Gaussian
members, and a small s goes with a large |Z|. The references of :func:`mcref.validate`
assume otherwise, so a calibrated ensemble reads "invalid". The exact route: under
calibration y is exchangeable with the members row by row, so

1. n swapped sets draw, per row, which of the m + 1 values plays y
   (:mod:`mcref.kernels.ensemble`);
2. every statistic of the check is recomputed on each: validate's statistics of (E, u)
   (ZMS, RCE, CC, ENCE, ZMSE by default), the χ² and KS statistics of the randomized ranks,
   the coverage of each level's central rank interval and the local coverage of the Gaussian
   intervals ±q·u per bin of the width (and of x);
3. each statistic's Monte Carlo p-value is its rank among the swapped sets,
   p = (1 + #{T_k at least as extreme})/(1 + n), in validate's direction;
4. the combined verdict is the min-p over the tests calibrated against the same sets by
   leave-one-out ranks (:func:`mcref.verdict._joint.joint_tests`, docs/methods.md, "Joint
   verdict"): P(p ≤ α) ≤ α exactly, for any n and whatever the dependence between the tests.

The observed data are one draw of the same conditional law (the multiset of each row's
values fixed), so steps 3–4 are exact (Besag & Clifford 1989).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import special

from ..core._checks import check_int, check_probability, check_seed
from ..binning import bin_starts, default_n_bins, resolve_n_bins
from ..parallel import parallel_kernel
from ..kernels import ensemble as KE
from ..kernels.rng import chunk_states
from ..core._warnings import TieOrderWarning
from ..stats import info, statistics
from ._joint import joint_tests

__all__ = ["DEFAULT_N_SWAPS", "MIN_N_SWAPS", "SwapTest", "EnsembleVerdict", "ensemble_verdict", "swapped_sets",
           "rank_bins"]

#: swapped sets of the combined verdict by default: p-values on a grid of 1/1000 (se 0.007 at
#: p = 0.05); 0.5 s at M = 1000, m = 20 and 5 s at M = 10⁴, m = 100 (docs/methods.md)
DEFAULT_N_SWAPS = 999
#: fewest swapped sets accepted (a p-value of 1/20 needs 19)
MIN_N_SWAPS = 19
#: histogram bins of the ranks' χ² statistic (as :func:`mcref.uniformity`)
RANK_BINS = 20
#: fewest cases for the local coverage (two bins of 30; as ``mcref.predictive``)
MIN_LOCAL = 60
#: sets per batch are bounded by this many values held at once
_BATCH_VALUES = 4_000_000


@dataclass(frozen=True)
class SwapTest:
    """One test of the combined verdict: the observed statistic and its exact Monte Carlo
    p-value against the swapped sets (``alternative``: the direction, as validate's)."""

    name: str
    kind: str  # "validate", "ranks", "coverage", "local"
    observed: float
    p: float
    alternative: str


@dataclass(frozen=True, eq=False)
class EnsembleVerdict:
    """The combined verdict of an ensemble (:func:`ensemble_verdict`).

    Attributes
    ----------
    tests : tuple of SwapTest
        Every test combined, with its exact swap p-value.
    p : float
        Combined p-value: the min-p over ``tests`` ranked among the swapped sets' own min-p
        (leave-one-out), (1 + #{T_k ≤ T_0})/(1 + n).
    se : float
        Its Monte Carlo standard error √(p(1 − p)/n).
    n_swaps : int
    m : int
        Members per case.
    alpha : float
    combine : str
        ``"minp"``.
    samples : ndarray, shape (tests, n_swaps)
        The tests' statistics on every swapped set.
    """

    tests: tuple[SwapTest, ...]
    p: float
    se: float
    n_swaps: int
    m: int
    alpha: float
    combine: str = "minp"
    samples: np.ndarray | None = field(default=None, repr=False)

    @property
    def verdict(self) -> str:
        """``"invalid"`` when p ≤ α, else ``"valid"``: of size α exactly."""
        return "invalid" if self.p <= self.alpha else "valid"

    @property
    def driver(self) -> SwapTest:
        """The test with the smallest p-value."""
        return min(self.tests, key=lambda t: t.p)

    def lines(self) -> list[str]:
        """The combined verdict and its tests, as the printed check shows them."""
        d = self.driver
        out = [f"combined verdict: {self.verdict} (p={self.p:.3g} {'<=' if self.p <= self.alpha else '>'} "
               f"alpha={self.alpha:g}); smallest: {d.name} p={d.p:.3g}",
               f"  min-p over {len(self.tests)} tests, each against the same {self.n_swaps} swapped sets (y swapped "
               f"with a random one of its {self.m + 1} values per row: exact under calibration), the min-p "
               "calibrated by leave-one-out ranks",
               f"  {'test':<18}{'observed':>12}{'p (swap)':>10}  direction"]
        for t in self.tests:
            out.append(f"  {t.name:<18}{t.observed:>12.5g}{t.p:>10.3g}  {t.alternative}")
        return out

    def record(self) -> dict[str, Any]:
        """Plain data: the verdict, p, se, n_swaps, m, alpha, combine and every test."""
        return {"verdict": self.verdict, "p": self.p, "se": self.se, "n_swaps": self.n_swaps, "m": self.m,
                "alpha": self.alpha, "combine": self.combine,
                "tests": [{"name": t.name, "kind": t.kind, "observed": t.observed, "p": t.p,
                           "alternative": t.alternative} for t in self.tests]}


def rank_bins(n: int) -> np.ndarray:
    """Starts of the equal-count bins of the local coverage: those of :func:`mcref.diagnostics.lcp`
    with its default bins (:func:`mcref.binning.default_n_bins` with ``rule="local"``, max(min(⌊n/150⌋, 15), 2),
    cut at ⌊n i/N + ½⌋)."""
    return bin_starts(n, resolve_n_bins(n, default_n_bins(n, rule="local"), min_count=30, shrink=True))


def swapped_sets(y, samples, n_swaps: int, seed=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(E, u, c)``, each (n_swaps, M): the Gaussian summary and the randomized rank of
    ``n_swaps`` swapped sets (:mod:`mcref.kernels.ensemble`); ``seed`` as
    :func:`ensemble_verdict`'s. Holds all sets at once: for tests and small studies.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=5); s = rng.normal(size=(5, 3))
    >>> E, u, c = swapped_sets(y, s, 4, seed=1)
    >>> E.shape, bool(np.all(u > 0)), bool(np.all((0 < c) & (c < 1)))
    ((4, 5), True, True)
    """
    vs, S, Q = _rows(np.asarray(y, dtype=np.float64), np.asarray(samples, dtype=np.float64))
    ss = check_seed(seed)
    states = chunk_states(ss, -(-n_swaps // KE.CHUNK))
    out = [np.empty((n_swaps, vs.shape[0])) for _ in range(3)]
    parallel_kernel(KE.swap_sets)(vs, S, Q, states, 0, states.shape[0], n_swaps, *out)
    return out[0], out[1], out[2]


def _rows(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's m + 1 values sorted and centred on their mean; their sums and sums of squares
    (C order whatever the layout of ``s``: the row means are then summed in one order)."""
    vs = np.empty((s.shape[0], s.shape[1] + 1))
    vs[:, 0] = y
    vs[:, 1:] = s
    vs.sort(axis=1)
    vs -= vs.mean(axis=1, keepdims=True)
    return np.ascontiguousarray(vs), vs.sum(axis=1), (vs * vs).sum(axis=1)


@dataclass(frozen=True)
class _Plan:
    """What every set's statistics need (the same for the data and each swapped set)."""

    names: tuple[str, ...]
    stat_kw: dict
    levels: np.ndarray
    q: np.ndarray
    starts: np.ndarray | None
    x_order: np.ndarray | None

    def labels(self) -> list[tuple[str, str, str]]:
        """(name, kind, alternative) of every test, in the order of :meth:`values`."""
        out = [(n, "validate", info(n).alternative) for n in self.names]
        out += [("ranks chi2", "ranks", "greater"), ("ranks KS", "ranks", "greater")]
        out += [(f"coverage {p:g}", "coverage", "two-sided") for p in self.levels]
        if self.starts is not None:
            for along in ("width",) + (("x",) if self.x_order is not None else ()):
                out += [(f"LCP {p:g} | {along}", "local", "greater") for p in self.levels]
        return out

    def values(self, E: np.ndarray, u: np.ndarray, c: np.ndarray) -> np.ndarray:
        """The tests' statistics of a batch of sets (rows of E, u, c): shape (tests, sets)."""
        B, M = E.shape
        with warnings.catch_warnings():  # tied u' across a bin cut: said once for the data, not per set
            warnings.simplefilter("ignore", TieOrderWarning)
            vals = [statistics(self.names, E[k], u[k], **self.stat_kw) for k in range(B)]
        rows = [np.array([[v[n] for v in vals] for n in self.names]).reshape(len(self.names), B)]
        idx = np.minimum((c * RANK_BINS).astype(np.int64), RANK_BINS - 1) + RANK_BINS * np.arange(B)[:, None]
        counts = np.bincount(idx.ravel(), minlength=B * RANK_BINS).reshape(B, RANK_BINS)
        exp = M / RANK_BINS
        rows.append((((counts - exp) ** 2).sum(axis=1) / exp)[None, :])
        cs = np.sort(c, axis=1)
        grid = np.arange(1, M + 1) / M
        rows.append(np.maximum((grid - cs).max(axis=1), (cs - (grid - 1.0 / M)).max(axis=1))[None, :])
        rows.append(np.stack([(np.abs(c - 0.5) <= p / 2).mean(axis=1) for p in self.levels]))
        if self.starts is not None:
            orders = [np.argsort(u, axis=1)]
            if self.x_order is not None:
                orders.append(np.broadcast_to(self.x_order, (B, M)))
            n_b = np.diff(self.starts).astype(np.float64)
            for order in orders:
                Es = np.take_along_axis(np.abs(E), order, axis=1)
                us = np.take_along_axis(u, order, axis=1)
                for p, q in zip(self.levels, self.q):
                    cum = np.concatenate([np.zeros((B, 1)), np.cumsum(Es <= q * us, axis=1)], axis=1)
                    k_b = cum[:, self.starts[1:]] - cum[:, self.starts[:-1]]
                    rows.append((((k_b - n_b * p) ** 2) / (n_b * p * (1 - p))).sum(axis=1)[None, :])
        return np.concatenate(rows, axis=0)


def ensemble_verdict(y, samples, E, u, pit, *, levels: Sequence[float], x=None,
                     stats: Sequence[str] = ("ZMS", "RCE", "CC", "ENCE", "ZMSE"), n_bins: int | None = None,
                     min_count: int = 30, shrink: bool = False, binning: str = "equal", log: bool | None = None,
                     n_swaps: int = DEFAULT_N_SWAPS, alpha: float = 0.05, seed=None) -> EnsembleVerdict:
    r"""The combined verdict of an ensemble against its exact swap null (module docstring).

    .. math::

        p_s = \frac{1 + \#\{k: T_{s,k} \text{ at least as extreme as } T_{s,0}\}}{1 + n},\qquad
        p = \frac{1 + \#\{k: \min_s p_{s,k} \le \min_s p_{s,0}\}}{1 + n}

    with :math:`p_{s,k}` set k's p-value of test s by its rank among the other n sets.

    Parameters
    ----------
    y : ndarray, shape (M,)
    samples : ndarray, shape (M, m)
        Checked by :func:`mcref.from_samples`.
    E, u, pit : ndarray, shape (M,)
        The data's summary and randomized ranks (as :func:`mcref.from_samples` computed them).
    levels : sequence of float
        Central coverage levels.
    x : ndarray, shape (M,), optional
        Feature of the local coverage along x.
    stats, n_bins, min_count, shrink, binning, log
        validate's statistics of (E, u) and their bins (as :func:`mcref.validate`, bins decided
        once for all sets; statistics that do not depend on E, such as MV, are left out).
    n_swaps : int, default: :data:`DEFAULT_N_SWAPS`
    alpha : float, default: 0.05
    seed : None, int or SeedSequence

    Returns
    -------
    EnsembleVerdict

    Raises
    ------
    ValueError
        ``n_swaps`` below :data:`MIN_N_SWAPS`; a row with m of its m + 1 values equal (a swap
        would leave members of zero spread: u = 0).

    References
    ----------
    .. [1] J. Besag and P. Clifford, "Generalized Monte Carlo significance tests",
       Biometrika 76, 633–642 (1989). https://doi.org/10.1093/biomet/76.4.633
    """
    n_swaps = check_int(n_swaps, "n_swaps", minimum=MIN_N_SWAPS)
    alpha = check_probability(alpha, "alpha")
    y = np.asarray(y, dtype=np.float64)
    s = np.asarray(samples, dtype=np.float64)
    M, m = s.shape
    vs, S, Q = _rows(y, s)
    flat = (vs[:, 0] == vs[:, m - 1]) | (vs[:, 1] == vs[:, m])
    if flat.any():
        raise ValueError(f"`samples`: {int(flat.sum())} case(s) have m of their m + 1 values (members and y) equal, "
                         f"first at row {int(np.argmax(flat))}: a swap would leave members of zero spread")
    names = tuple(info(n).name for n in stats if info(n).errors)
    nb = n_bins
    if nb is None:
        nb = default_n_bins(M, min_count) if binning == "equal" else 20
    if binning == "equal" and any(info(n).binned for n in names):
        nb = resolve_n_bins(M, check_int(nb, "n_bins", minimum=1), min_count=min_count, shrink=shrink)
    lv = np.asarray(levels, dtype=np.float64)
    plan = _Plan(names, dict(n_bins=nb, min_count=min_count, binning=binning, log=log), lv,
                 special.ndtri(0.5 + lv / 2),
                 rank_bins(M) if M >= MIN_LOCAL else None,
                 None if x is None else np.argsort(np.asarray(x, dtype=np.float64), kind="stable"))
    obs = plan.values(np.asarray(E, dtype=np.float64)[None, :], np.asarray(u, dtype=np.float64)[None, :],
                      np.asarray(pit, dtype=np.float64)[None, :])[:, 0]
    n_chunks = -(-n_swaps // KE.CHUNK)
    states = chunk_states(check_seed(seed), n_chunks)
    per = max(1, _BATCH_VALUES // (3 * M * KE.CHUNK))  # chunks per batch
    sims = np.empty((obs.size, n_swaps))
    bufs = [np.empty((per * KE.CHUNK, M)) for _ in range(3)]
    for c0 in range(0, n_chunks, per):
        c1 = min(n_chunks, c0 + per)
        parallel_kernel(KE.swap_sets)(vs, S, Q, states, c0, c1, n_swaps, *bufs)
        k0, k1 = c0 * KE.CHUNK, min(n_swaps, c1 * KE.CHUNK)
        sims[:, k0:k1] = plan.values(*(b[:k1 - k0] for b in bufs))
    labels = plan.labels()
    res = joint_tests(sims, obs, [a for _, _, a in labels], combines=("minp",))["minp"]
    tests = tuple(SwapTest(n, k, float(o), float(p), a) for (n, k, a), o, p in zip(labels, obs, res.p_stats))
    return EnsembleVerdict(tests, res.p, res.se, n_swaps, m, alpha, samples=sims)
