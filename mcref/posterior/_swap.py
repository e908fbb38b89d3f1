r"""The ranks of every scalar function of :func:`mcref.posterior.from_posterior` and their swap null
(docs/methods.md, "Posteriors of vector parameters").

The functions h_f of a case's S + 1 vectors (index 0 the truth, 1 … S the draws), each symmetric
in the S + 1 vectors, in this order:

* the d parameters θ_k;
* the projections z_a + z_b and z_a − z_b of standardized pairs (z_k = θ_k/s_k, s_k the sd of the
  N(S + 1) pooled values of parameter k);
* TARP's distance ‖z − z_ref,i‖ to the case's reference point (standardized the same way);
* the depth: the Mahalanobis distance (x − x̄_i)ᵀ C_i⁻¹ (x − x̄_i) to the mean x̄_i of the case's
  S + 1 vectors with their covariance C_i (pseudo-inverse when C_i is singular);
* the surprisal −ln p_i(x) when ``logpdf`` is given.

The cases are read in blocks of fixed size (:func:`block_size`: a function of N, S and the
number of functions only, not of the threads): per block one sort per case and function
(:func:`mcref.kernels.posterior.rank_table`) and every swapped set's counts
(:func:`mcref.kernels.posterior.swap_block`); the observed randomized ranks follow
(:func:`mcref.calibration.randomized_ranks`, the ranks of :func:`mcref.rank_calibration`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..calibration import randomized_ranks
from ..kernels import posterior as KP
from ..kernels.rng import chunk_states
from ..parallel import parallel_kernel

__all__ = ["Layout", "Moments", "SwapRun", "moments", "layout", "run_swaps", "count_ranks", "uniformity_stats",
           "chi2_bins", "energy_score", "block_size"]

#: values of one block's function table (nb·F·(S + 1)): 16 MB of float64
BLOCK_VALUES = 1 << 21
#: pair distances of the energy score's second term beyond which it uses lags (docs/methods.md)
ES_PAIRS = 50_000_000


@dataclass(frozen=True)
class Layout:
    """The functions of the check: ``labels`` and ``kinds`` (``"parameter"``, ``"projection"``,
    ``"tarp"``, ``"depth"``, ``"surprisal"``) in the order of the columns, the standardized
    ``pairs`` (P, 2) of the projections, the pooled sd ``sd`` (d,) and the TARP ``references``
    (N, d)."""

    labels: tuple[str, ...]
    kinds: tuple[str, ...]
    pairs: np.ndarray
    sd: np.ndarray
    references: np.ndarray

    def index(self, kind: str) -> np.ndarray:
        """Columns of the functions of one kind."""
        return np.array([k for k, x in enumerate(self.kinds) if x == kind], dtype=np.int64)


def block_size(n: int, s1: int, n_functions: int) -> int:
    """Cases per block: ⌊BLOCK_VALUES/(F·(S + 1))⌋, at least 1 and at most N."""
    return int(min(n, max(1, BLOCK_VALUES // (n_functions * s1))))


@dataclass(frozen=True)
class Moments:
    """Per case (:func:`mcref.kernels.posterior.case_moments`): the pooled S + 1 vectors' mean
    ``pmean`` (N, d) and covariance ``pcov`` (N, d, d), the draws' mean ``dmean`` and variance
    ``dvar`` (N, d); over all cases the pooled box ``lo``, ``hi`` and sd ``sd`` (d,) (functions of
    each case's multiset of vectors: the same for every swapped set)."""

    pmean: np.ndarray
    pcov: np.ndarray
    dmean: np.ndarray
    dvar: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    sd: np.ndarray


def moments(truth: np.ndarray, draws: np.ndarray, *, full: bool = True, draws_var: bool = True) -> Moments:
    """:class:`Moments` of the data; the pooled sd by the law of total variance over the cases
    (``full=False``: the cases' variances only, ``pcov`` diagonal; ``draws_var=False``: no
    ``dvar`` (0 rows), one pass over the draws less)."""
    N, S, d = draws.shape
    pm, dm, lo, hi = (np.empty((N, d)) for _ in range(4))
    dv = np.empty((N if draws_var else 0, d))
    pc = np.zeros((N, d, d))
    parallel_kernel(KP.case_moments)(truth, draws, full, pm, pc, dm, dv, lo, hi)
    within = np.einsum("ikk->ik", pc).mean(axis=0) * S / (S + 1)
    sd = np.sqrt(within + ((pm - pm.mean(axis=0)) ** 2).mean(axis=0))
    return Moments(pm, pc, dm, dv, lo.min(axis=0), hi.max(axis=0), np.where(sd > 0, sd, 1.0))


def choose_pairs(mom: Moments, max_pairs: int) -> np.ndarray:
    """All pairs a < b when d(d − 1)/2 ≤ ``max_pairs``; else the ``max_pairs`` pairs of largest
    mean absolute correlation of the cases' S + 1 pooled vectors (symmetric in them: the choice
    is the same for every swapped set), ties by index."""
    d = mom.sd.size
    a, b = np.triu_indices(d, 1)
    if a.size <= max_pairs:
        return np.stack([a, b], axis=1).astype(np.int64)
    sd = np.sqrt(np.einsum("ikk->ik", mom.pcov))
    sd = np.where(sd > 0, sd, 1.0)
    score = np.abs(mom.pcov / (sd[:, :, None] * sd[:, None, :])).mean(axis=0)[a, b]
    order = np.sort(np.lexsort((np.arange(a.size), -score))[:max_pairs])
    return np.stack([a[order], b[order]], axis=1).astype(np.int64)


def layout(mom: Moments, names, n: int, *, references, with_surprisal: bool, max_pairs: int, seed_seq) -> Layout:
    """The functions of the check; ``references`` None draws them uniform in the box of the pooled
    values from ``seed_seq``."""
    if references is None:
        rng = np.random.default_rng(seed_seq)
        references = mom.lo + (mom.hi - mom.lo) * rng.uniform(size=(n, mom.sd.size))
    d = mom.sd.size
    pairs = choose_pairs(mom, max_pairs) if d > 1 else np.empty((0, 2), dtype=np.int64)
    labels = list(names)
    kinds = ["parameter"] * d
    for a, b in pairs:
        labels += [f"{names[a]}+{names[b]}", f"{names[a]}-{names[b]}"]
        kinds += ["projection", "projection"]
    labels.append("TARP")
    kinds.append("tarp")
    if d > 1:
        labels.append("depth")
        kinds.append("depth")
    if with_surprisal:
        labels.append("surprisal")
        kinds.append("surprisal")
    return Layout(tuple(labels), tuple(kinds), pairs, mom.sd, np.ascontiguousarray(references, dtype=np.float64))


def precisions(pcov: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """The depth's precision matrices (nb, d, d) of the standardized vectors: the inverse of each
    case's pooled covariance, its pseudo-inverse where that is singular."""
    cz = pcov / (sd[:, None] * sd[None, :])
    try:
        out = np.linalg.inv(cz)
        if np.all(np.isfinite(out)):
            return out
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(cz)
    for t in range(cz.shape[0]):
        try:
            out[t] = np.linalg.inv(cz[t])
            if not np.all(np.isfinite(out[t])):
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            out[t] = np.linalg.pinv(cz[t], hermitian=True)
    return out


def count_ranks(u: np.ndarray, n_fine: int = KP.N_FINE) -> np.ndarray:
    """The swap kernel's counts for observed ranks ``u`` (N, F): (F, G) on the fine bins
    (bin min(⌊uG⌋, G − 1))."""
    g = np.minimum((u * n_fine).astype(np.int64), n_fine - 1)
    F = u.shape[1]
    counts = np.bincount((g + n_fine * np.arange(F)).ravel(), minlength=F * n_fine).reshape(F, n_fine)
    return counts


def chi2_bins(n: int) -> int:
    """The χ² bins: the largest of 20, 10, 5, 4, 2 (unions of the fine bins) at most ⌊N/10⌋, at least 2."""
    for b in (20, 10, 5, 4, 2):
        if b <= n // 10:
            return b
    return 2


def uniformity_stats(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""χ² and grid KS statistics of ranks from their fine counts (…, G):
    χ² = Σ_b (C_b − N/n_b)²/(N/n_b) over :func:`chi2_bins` bins, and
    D_G = max_{k=1…G−1} abs(#{u < k/G}/N − k/G) (the KS distance on the fine grid; integer
    arithmetic, so the observed and the swapped sets are computed alike, bit for bit)."""
    c = np.asarray(counts, dtype=np.int64)
    G = c.shape[-1]
    nb = chi2_bins(n)
    coarse = c.reshape(c.shape[:-1] + (nb, G // nb)).sum(axis=-1)
    e = n / nb
    chi2 = ((coarse - e) ** 2).sum(axis=-1) / e
    cum = np.cumsum(c, axis=-1)[..., :-1]
    ks = np.abs(cum * G - n * np.arange(1, G)).max(axis=-1) / float(n * G)
    return chi2, ks


@dataclass(frozen=True)
class SwapRun:
    """The observed ranks ``u`` (N, F), TARP's unrandomized fractions ``f`` (N,) and the swapped
    sets' counts (``counts`` (B, F, G)); ``swaps`` (B, N) which vector played the truth in each set
    and case (``record=True`` only)."""

    u: np.ndarray
    f: np.ndarray
    counts: np.ndarray
    swaps: np.ndarray | None = None


def run_swaps(truth: np.ndarray, draws: np.ndarray, lay: Layout, mom: Moments, scores: np.ndarray | None,
              n_swaps: int, rank_seed, swap_seed, record: bool = False) -> SwapRun:
    """Observed ranks and the ``n_swaps`` swapped sets of every function, block by block.

    Function f's observed ranks are :func:`mcref.calibration.randomized_ranks` of the truth's
    counts below and tied with ``numpy.random.default_rng(rank_seed.spawn(F)[f])``: the ranks
    :func:`mcref.rank_calibration` gives with that seed (tested); the swapped sets draw from
    :func:`mcref.kernels.rng.chunk_states` of ``swap_seed``."""
    N, S, d = draws.shape
    F = len(lay.kinds)
    depth = bool(lay.index("depth").size)
    sc = np.empty((0, S + 1)) if scores is None else scores
    below = np.empty((N, F), dtype=np.int64)
    ties = np.empty((N, F), dtype=np.int64)
    states = chunk_states(swap_seed, -(-n_swaps // KP.CHUNK))
    counts = np.zeros((n_swaps, F, KP.N_FINE), dtype=np.int32)
    jout = np.zeros((n_swaps, N) if record else (0, 0), dtype=np.int64)
    step = block_size(N, S + 1, F)
    rank_table = parallel_kernel(KP.rank_table)
    swap_block = parallel_kernel(KP.swap_block)
    for i0 in range(0, N, step):
        i1 = min(N, i0 + step)
        W = precisions(mom.pcov[i0:i1], lay.sd) if depth else np.zeros((i1 - i0, d, d))
        lo = np.empty((i1 - i0, S + 1, F), dtype=np.int32)
        cnt = np.empty_like(lo)
        rank_table(truth, draws, i0, lay.sd, lay.references, lay.pairs, W, depth, mom.pmean[i0:i1], sc, lo, cnt)
        below[i0:i1] = lo[:, 0, :] >> 1
        ties[i0:i1] = cnt[:, 0, :] - 1
        swap_block(lo, cnt, states, n_swaps, counts, i0, jout)
    u = np.empty((N, F))
    for f, kid in enumerate(rank_seed.spawn(F)):
        u[:, f] = randomized_ranks(below[:, f], ties[:, f], S, np.random.default_rng(kid))
    tarp = int(lay.index("tarp")[0])
    return SwapRun(u, below[:, tarp] / S, counts, jout if record else None)


def energy_score(truth: np.ndarray, draws: np.ndarray) -> tuple[float, str]:
    r"""Mean energy score over the cases, ES_i = (1/S) Σ_j ‖X_ij − y_i‖ − ½·mean‖X_ij − X_ij'‖
    (Gneiting & Raftery 2007; the fair, unbiased form of the second term: distinct pairs only), and
    how its pairs were taken: all S(S − 1)/2 when N·S(S − 1)/2 ≤ :data:`ES_PAIRS`, else the S pairs
    (j, j + l mod S) at L lags l spread evenly over [1, S − 1] (L = max(1, ⌊ES_PAIRS/(N·S)⌋):
    unbiased for exchangeable draws; draws far apart in a chain)."""
    N, S, d = draws.shape
    if N * S * (S - 1) // 2 <= ES_PAIRS:
        lags = np.empty(0, dtype=np.int64)
        how = "all pairs"
    else:
        L = int(min(S - 1, max(1, ES_PAIRS // (N * S))))
        lags = np.unique(np.clip(np.round(np.arange(1, L + 1) * S / (L + 1)), 1, S - 1).astype(np.int64))
        how = f"{lags.size} lags"
    near = np.empty(N)
    spread = np.empty(N)
    parallel_kernel(KP.energy_terms)(draws, truth, lags, near, spread)
    return float(np.mean(near - 0.5 * spread)), how
