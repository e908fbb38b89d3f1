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
(:func:`mcref.kernels.posterior.rank_table`), the observed randomized ranks
(:func:`mcref.rank_calibration`) and every swapped set's counts
(:func:`mcref.kernels.posterior.swap_block`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..calibration import rank_calibration
from ..kernels import posterior as KP
from ..kernels.rng import chunk_states
from ..parallel import parallel_kernel

__all__ = ["Layout", "SwapRun", "layout", "run_swaps", "count_ranks", "uniformity_stats", "chi2_bins",
           "energy_score", "block_size"]

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


def pooled_box(truth: np.ndarray, draws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per parameter the min, max and sd of the N(S + 1) pooled values (truths and draws: a function
    of each case's multiset of vectors, the same for every swapped set)."""
    n = truth.shape[0] * (draws.shape[1] + 1)
    lo = np.minimum(draws.min(axis=(0, 1)), truth.min(axis=0))
    hi = np.maximum(draws.max(axis=(0, 1)), truth.max(axis=0))
    sd = np.empty(truth.shape[1])
    for k in range(truth.shape[1]):
        m = (draws[:, :, k].sum() + truth[:, k].sum()) / n
        sd[k] = np.sqrt((((draws[:, :, k] - m) ** 2).sum() + ((truth[:, k] - m) ** 2).sum()) / n)
    return lo, hi, np.where(sd > 0, sd, 1.0)


def _pooled(truth: np.ndarray, draws: np.ndarray, i0: int, i1: int) -> np.ndarray:
    return np.concatenate([truth[i0:i1, None, :], draws[i0:i1]], axis=1)


def choose_pairs(truth: np.ndarray, draws: np.ndarray, max_pairs: int) -> np.ndarray:
    """All pairs a < b when d(d − 1)/2 ≤ ``max_pairs``; else the ``max_pairs`` pairs of largest
    mean absolute correlation of the cases' S + 1 pooled vectors (symmetric in them: the choice
    is the same for every swapped set), ties by index."""
    d = truth.shape[1]
    a, b = np.triu_indices(d, 1)
    if a.size <= max_pairs:
        return np.stack([a, b], axis=1).astype(np.int64)
    acc = np.zeros((d, d))
    step = block_size(truth.shape[0], draws.shape[1] + 1, d)
    for i0 in range(0, truth.shape[0], step):
        P = _pooled(truth, draws, i0, min(truth.shape[0], i0 + step))
        C = P - P.mean(axis=1, keepdims=True)
        cov = np.einsum("isk,isl->ikl", C, C)
        sd = np.sqrt(np.einsum("ikk->ik", cov))
        sd = np.where(sd > 0, sd, 1.0)
        acc += np.abs(cov / (sd[:, :, None] * sd[:, None, :])).sum(axis=0)
    score = acc[a, b]
    order = np.lexsort((np.arange(a.size), -score))[:max_pairs]
    order.sort()
    return np.stack([a[order], b[order]], axis=1).astype(np.int64)


def layout(truth, draws, names, *, references, with_surprisal: bool, max_pairs: int, seed_seq) -> Layout:
    """The functions of the check; ``references`` None draws them uniform in the box of the pooled
    values (:func:`pooled_box`) from ``seed_seq``."""
    lo, hi, sd = pooled_box(truth, draws)
    if references is None:
        rng = np.random.default_rng(seed_seq)
        references = lo + (hi - lo) * rng.uniform(size=truth.shape)
    d = truth.shape[1]
    pairs = choose_pairs(truth, draws, max_pairs) if d > 1 else np.empty((0, 2), dtype=np.int64)
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
    return Layout(tuple(labels), tuple(kinds), pairs, sd, np.asarray(references, dtype=np.float64))


def _depth(Z: np.ndarray) -> np.ndarray:
    """Mahalanobis distances of each case's S + 1 vectors (nb, S + 1, d) to their mean, with their
    covariance (pseudo-inverse where it is singular)."""
    C = Z - Z.mean(axis=1, keepdims=True)
    cov = np.einsum("isk,isl->ikl", C, C) / (Z.shape[1] - 1)
    try:
        inv = np.linalg.inv(cov)
        if not np.all(np.isfinite(inv)):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        inv = np.linalg.pinv(cov, hermitian=True)
    return np.einsum("isk,ikl,isl->is", C, inv, C)


def block_values(P: np.ndarray, lay: Layout, ref: np.ndarray, scores: np.ndarray | None) -> np.ndarray:
    """The functions of one block of cases, ``P`` (nb, S + 1, d) pooled: array (nb, F, S + 1)."""
    nb, s1, d = P.shape
    V = np.empty((nb, len(lay.kinds), s1))
    V[:, :d, :] = P.transpose(0, 2, 1)
    Z = P / lay.sd
    col = d
    for a, b in lay.pairs:
        V[:, col, :] = Z[:, :, a] + Z[:, :, b]
        V[:, col + 1, :] = Z[:, :, a] - Z[:, :, b]
        col += 2
    V[:, col, :] = np.sqrt(((Z - (ref / lay.sd)[:, None, :]) ** 2).sum(axis=2))
    col += 1
    if d > 1:
        V[:, col, :] = _depth(Z)
        col += 1
    if scores is not None:
        V[:, col, :] = scores
    return V


def count_ranks(u: np.ndarray, n_fine: int = KP.N_FINE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The accumulators of the swap kernel for observed ranks ``u`` (N, F): counts (F, G) on the
    fine bins (bin min(⌊uG⌋, G − 1)), Σu (F,) and Σ|u − ½| (F,)."""
    g = np.minimum((u * n_fine).astype(np.int64), n_fine - 1)
    F = u.shape[1]
    counts = np.bincount((g + n_fine * np.arange(F)).ravel(), minlength=F * n_fine).reshape(F, n_fine)
    return counts, u.sum(axis=0), np.abs(u - 0.5).sum(axis=0)


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
    """The observed ranks ``u`` (N, F), TARP's unrandomized fractions ``f`` (N,), the swapped sets'
    accumulators (``counts`` (B, F, G), ``s1``, ``s2`` (B, F)) and each case's posterior mean and
    variance (N, d)."""

    u: np.ndarray
    f: np.ndarray
    counts: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    post_mean: np.ndarray
    post_var: np.ndarray


def run_swaps(truth: np.ndarray, draws: np.ndarray, lay: Layout, scores: np.ndarray | None, n_swaps: int,
              seeds: list) -> SwapRun:
    """Observed ranks and the ``n_swaps`` swapped sets of every function, block by block.

    ``seeds``: the SeedSequences of the parameters' ranks (one child each), of the other functions'
    ranks (one Generator each, advanced block by block) and of the swapped sets (their chunk
    states), in this order."""
    N, S, d = draws.shape
    F = len(lay.kinds)
    u = np.empty((N, F))
    ss_par, ss_fun, ss_swap = seeds
    for k, kid in enumerate(ss_par.spawn(d)):
        u[:, k] = rank_calibration(truth[:, k], draws[:, :, k], seed=kid)
    sur = lay.index("surprisal")
    if sur.size:
        u[:, sur[0]] = rank_calibration(scores[:, 0], scores[:, 1:], seed=ss_fun.spawn(1)[0])
    gens = [np.random.default_rng(c) for c in ss_fun.spawn(F)]
    derived = [f for f in range(d, F) if lay.kinds[f] != "surprisal"]
    tarp = int(lay.index("tarp")[0])
    f_tarp = np.empty(N)
    states = chunk_states(ss_swap, -(-n_swaps // KP.CHUNK))
    counts = np.zeros((n_swaps, F, KP.N_FINE), dtype=np.int32)
    s1 = np.zeros((n_swaps, F))
    s2 = np.zeros((n_swaps, F))
    post_mean = np.empty((N, d))
    post_var = np.empty((N, d))
    step = block_size(N, S + 1, F)
    rank_table = parallel_kernel(KP.rank_table)
    swap_block = parallel_kernel(KP.swap_block)
    for i0 in range(0, N, step):
        i1 = min(N, i0 + step)
        P = _pooled(truth, draws, i0, i1)
        V = block_values(P, lay, lay.references[i0:i1], None if scores is None else scores[i0:i1])
        lo = np.empty((i1 - i0, S + 1, F), dtype=np.int32)
        cnt = np.empty_like(lo)
        rank_table(V, lo, cnt)
        for f in derived:
            u[i0:i1, f] = rank_calibration(V[:, f, 0], V[:, f, 1:], seed=gens[f])
        f_tarp[i0:i1] = lo[:, 0, tarp] / S
        swap_block(lo, cnt, states, n_swaps, counts, s1, s2)
        post_mean[i0:i1] = P[:, 1:].mean(axis=1)
        post_var[i0:i1] = P[:, 1:].var(axis=1, ddof=1)
    return SwapRun(u, f_tarp, counts, s1, s2, post_mean, post_var)


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
