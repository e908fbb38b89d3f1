r"""Precision, recall, density and coverage of two sample sets, on k-nearest-neighbour balls, and
their values on many labellings of a pooled sample (docs/methods.md, "Nearest-neighbour
statistics and diversity").

With real rows x_1, …, x_n, fake rows y_1, …, y_m and ρ(x_i) the distance from x_i to its k-th
nearest neighbour among the other real rows (ρ(y_j) likewise among the fake rows):

.. math::

    \text{precision} &= \frac1m \sum_j \mathbb 1\{\exists i: \|y_j - x_i\| < \rho(x_i)\},\qquad
    \text{recall} = \frac1n \sum_i \mathbb 1\{\exists j: \|x_i - y_j\| < \rho(y_j)\},\\
    \text{density} &= \frac1{km} \sum_j \#\{i: \|y_j - x_i\| < \rho(x_i)\},\qquad
    \text{coverage} = \frac1n \sum_i \mathbb 1\{\min_j \|x_i - y_j\| < \rho(x_i)\}

(Kynkäänniemi et al. 2019 for precision and recall, Naeem et al. 2020 for density and coverage),
with prdc 0.2's conventions: strict inequalities, and the k-th neighbour counted without the
point itself but with its copies (at distance 0).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from scipy.spatial import cKDTree

from ..core._checks import check_int
from ..kernels.knn import prdc_counts, sort_lists

#: the bytes the neighbour lists may take (indices and squared distances, 16 bytes an entry)
LIST_BYTES = 512 * 2**20
#: relative margin below the tree's largest listed squared distance: every point outside a list
#: is at least this far (the tree and the kernels sum the squares in different orders)
BOUND_MARGIN = 1e-8

STATS = ("precision", "recall", "density", "coverage")


def check_sample_set(x: Any, name: str, *, min_rows: int = 2) -> np.ndarray:
    """A sample set as a C-contiguous float64 (rows × features) array of finite values; a 1-D
    array is one feature. Raises ValueError naming ``name`` and the rule."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be an array of real numbers (rows × features) ({exc})") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be a 2-D array (rows × features), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"`{name}` must have at least {min_rows} rows, got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise ValueError(f"`{name}` must have at least one feature (column), got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        r, c = np.unravel_index(int(np.argmax(bad)), arr.shape)
        raise ValueError(f"`{name}` must contain only finite values ({int(bad.sum())} NaN or infinite, "
                         f"first at row {r}, column {c})")
    return np.ascontiguousarray(arr)


def check_same_features(X: np.ndarray, Y: np.ndarray, names: tuple[str, str]) -> None:
    """Two sets of the same number of features."""
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"`{names[0]}` and `{names[1]}` must have the same number of features (columns): "
                         f"{X.shape[1]} and {Y.shape[1]}")


def _check_k(k: Any, smallest: int, what: str) -> int:
    k = check_int(k, "k", minimum=1)
    if k >= smallest:
        raise ValueError(f"`k` must be smaller than the number of rows of {what} ({smallest}), got {k}")
    return k


@dataclass(frozen=True)
class PRDC:
    """Precision, recall, density and coverage of a fake set against a real set.

    Attributes
    ----------
    precision, recall, coverage : float
        Fractions in [0, 1].
    density : float
        ≥ 0; about 1 when both sets come from one law.
    k : int
        The neighbour that sets each ball's radius.
    """

    precision: float
    recall: float
    density: float
    coverage: float
    k: int

    def to_dict(self) -> dict[str, float]:
        """The four statistics by name."""
        return {s: float(getattr(self, s)) for s in STATS}

    def __str__(self) -> str:
        return (f"PRDC (k = {self.k}): precision {self.precision:.4f}, recall {self.recall:.4f}, "
                f"density {self.density:.4f}, coverage {self.coverage:.4f}")


@dataclass(frozen=True)
class NeighbourLists:
    """Each pooled point's K nearest other points, sorted by squared distance, and the bound
    below which each list is complete (see :func:`neighbour_lists`)."""

    idx: np.ndarray
    d2: np.ndarray
    bound: np.ndarray

    @property
    def K(self) -> int:
        return int(self.idx.shape[1])


def list_length(N: int, k: int, smallest: int) -> int:
    """K: about 1.5·k·N/smallest + 8 entries (the k-th same-set neighbour of a point of the
    smaller set sits near position k·N/smallest of the pooled list), at most N − 1 and at most
    what :data:`LIST_BYTES` allows."""
    want = math.ceil(1.5 * k * N / max(smallest, 1)) + 8
    cap = max(k + 1, LIST_BYTES // (16 * N))
    return int(min(N - 1, want, cap))


def neighbour_lists(Z: np.ndarray, K: int) -> NeighbourLists:
    """The K nearest other points of every row of Z (a k-d tree, :class:`scipy.spatial.cKDTree`),
    their squared distances recomputed by the kernels' own sum and sorted
    (:func:`mcref.kernels.knn.sort_lists`), and each list's bound S_p: every point outside p's
    list has squared distance ≥ S_p = (1 − BOUND_MARGIN)·(the tree's (K+1)-th distance)² (+∞
    when the list holds every other point). The point itself is dropped by its index (when more
    than K + 1 copies hide it, the last entry is dropped instead)."""
    N = Z.shape[0]
    # unbalanced, uncompacted, 64-point leaves: 1.8× faster queries than the defaults at d = 10
    tree = cKDTree(Z, leafsize=64, balanced_tree=False, compact_nodes=False)
    dist, ind = tree.query(Z, K + 1, workers=max(1, numba.get_num_threads()))
    keep = ind != np.arange(N)[:, None]
    keep[keep.all(axis=1), K] = False
    idx = np.ascontiguousarray(ind[keep].reshape(N, K), dtype=np.int64)
    del keep, ind
    if K >= N - 1:
        bound = np.full(N, np.inf)
    else:
        bound = dist[:, K] ** 2 * (1.0 - BOUND_MARGIN)
    d2 = np.empty((N, K))
    sort_lists(Z, idx, d2)
    return NeighbourLists(idx, d2, np.ascontiguousarray(bound))


def _counts_to_stats(counts: np.ndarray, n: np.ndarray, m: np.ndarray, k: int) -> dict[str, np.ndarray]:
    c = counts.astype(np.float64)
    return {"precision": c[:, 0] / m, "recall": c[:, 2] / n, "density": c[:, 1] / (k * m),
            "coverage": c[:, 3] / n}


def prdc(real: Any, fake: Any, *, k: int = 5) -> PRDC:
    r"""Precision, recall, density and coverage of ``fake`` against ``real`` (prdc 0.2's values).

    .. math::

        \text{precision} = \frac1m \sum_j \mathbb 1\{\exists i: \|y_j - x_i\| < \rho_k(x_i)\},\quad
        \text{density} = \frac1{km} \sum_j \#\{i: \|y_j - x_i\| < \rho_k(x_i)\},

    recall as precision with the roles swapped, coverage = (1/n) Σ_i 1{min_j ‖x_i − y_j‖ < ρ_k(x_i)};
    ρ_k(x_i) is the distance from x_i to its k-th nearest other real row.

    Parameters
    ----------
    real : array_like, shape (n, d)
        The reference rows (one feature: 1-D).
    fake : array_like, shape (m, d)
        The rows judged against them.
    k : int, default: 5
        The neighbour of each ball's radius, 1 ≤ k < min(n, m).

    Returns
    -------
    PRDC
        ``.precision``, ``.recall``, ``.density``, ``.coverage`` and ``.k``.

    Notes
    -----
    A k-d tree lists each pooled row's nearest rows; the balls are counted from those lists, with
    an exact search for the rows whose list is too short (docs/methods.md, "Nearest-neighbour
    statistics and diversity"): O((n + m)·K) memory, no (n + m)² array. The inequalities are
    strict, as prdc's, so two copies of one constant set give 0 for all four.

    References
    ----------
    .. [1] Kynkäänniemi, T. et al. (2019). Improved precision and recall metric for assessing
       generative models. NeurIPS. arXiv:1904.06991
    .. [2] Naeem, M. F. et al. (2020). Reliable fidelity and diversity metrics for generative
       models. ICML. arXiv:2002.09797

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r = prdc(rng.normal(size=(500, 3)), rng.normal(size=(500, 3)), k=5)
    >>> 0.8 < r.coverage <= 1.0 and 0.7 < r.density < 1.3
    True
    """
    X = check_sample_set(real, "real")
    Y = check_sample_set(fake, "fake")
    check_same_features(X, Y, ("real", "fake"))
    k = _check_k(k, min(X.shape[0], Y.shape[0]), "`real` and of `fake`")
    n, m = X.shape[0], Y.shape[0]
    labels = np.zeros((1, n + m), dtype=np.bool_)
    labels[0, :n] = True
    out = _permuted(np.vstack([X, Y]), labels, k, np.array([n]), np.array([m]), None)
    return PRDC(*(float(out[s][0]) for s in STATS), k=k)


def prdc_values(X: Any, Y: Any, *, k: int = 5) -> dict[str, float]:
    """:func:`prdc` as a dict {"precision", "recall", "density", "coverage"}, X the real set and
    Y the fake one."""
    return prdc(X, Y, k=k).to_dict()


#: the last pooled sample's lists (prdc_permuted): the rounds of a permutation test call it on one Z
_LAST: dict = {}
#: the largest lists kept there
CACHE_BYTES = 64 * 2**20


def _lists_of(Z: np.ndarray, K: int) -> NeighbourLists:
    """:func:`neighbour_lists` of Z, kept for the next call with the same Z (its bytes' SHA-1)
    and K when they take at most CACHE_BYTES; the values do not depend on it (exact for any
    lists)."""
    if Z.shape[0] * K * 16 > CACHE_BYTES:
        return neighbour_lists(Z, K)
    key = (Z.shape, K, hashlib.sha1(Z.view(np.uint8).ravel()).hexdigest())
    if _LAST.get("key") != key:
        lists = neighbour_lists(Z, K)
        _LAST.clear()
        _LAST.update(key=key, lists=lists)
    return _LAST["lists"]


def _permuted(Z, labels, k, n, m, lists, cache=False):
    if lists is None:
        K = list_length(Z.shape[0], k, int(min(n.min(), m.min())))
        lists = _lists_of(Z, K) if cache else neighbour_lists(Z, K)
    counts = np.zeros((labels.shape[0], 4), dtype=np.int64)
    prdc_counts(Z, lists.idx, lists.d2, lists.bound, labels, k, counts)
    return _counts_to_stats(counts, n, m, k)


def prdc_permuted(Z: Any, labels: Any, *, k: int = 5, lists: NeighbourLists | None = None) -> dict[str, np.ndarray]:
    """The four statistics of :func:`prdc` for many labellings of one pooled sample.

    Parameters
    ----------
    Z : array_like, shape (N, d)
        The pooled rows.
    labels : array_like of bool, shape (B, N)
        Row b is a labelling: True where the row is in the real set X, False in the fake set Y.
        Each labelling must put more than k rows in each set.
    k : int, default: 5
    lists : NeighbourLists, optional
        The pooled rows' neighbour lists from an earlier call (:func:`neighbour_lists` with
        :func:`list_length`), to serve several batches of labellings of the same Z.

    Returns
    -------
    dict
        "precision", "recall", "density", "coverage": float64 arrays of shape (B,), each equal to
        :func:`prdc` of the labelling's two sets.

    Notes
    -----
    The pooled rows' K nearest rows are listed once; a labelling's radii and balls are read from
    the lists, with an exact search where a list is too short, so the values are exact whatever K
    (docs/methods.md, "Nearest-neighbour statistics and diversity"). The lists of the last Z
    (up to 64 MiB) are kept for the next call on the same rows, as the rounds of a sequential
    permutation test make; ``lists=`` passes them explicitly. The labellings run in
    parallel in fixed chunks; the counts are integers: the same bits for any thread count.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 2))
    >>> labels = np.array([rng.permutation(200) < 100 for _ in range(3)])
    >>> out = prdc_permuted(Z, labels, k=3)
    >>> out["coverage"].shape
    (3,)
    """
    Zc = check_sample_set(Z, "Z")
    lab = np.asarray(labels)
    if lab.dtype != np.bool_:
        raise ValueError(f"`labels` must be a boolean array (True = row in the real set), got dtype {lab.dtype}")
    if lab.ndim == 1:
        lab = lab[None, :]
    if lab.ndim != 2 or lab.shape[1] != Zc.shape[0]:
        raise ValueError(f"`labels` must have shape (B, {Zc.shape[0]}) (one labelling of the rows of `Z` a row), "
                         f"got {lab.shape}")
    n = lab.sum(axis=1)
    m = Zc.shape[0] - n
    k = _check_k(k, int(min(n.min(), m.min())), "each set of every labelling")
    if lists is not None and lists.idx.shape[0] != Zc.shape[0]:
        raise ValueError(f"`lists` were made for {lists.idx.shape[0]} rows, `Z` has {Zc.shape[0]}")
    return _permuted(Zc, np.ascontiguousarray(lab), k, n, m, lists, cache=True)
