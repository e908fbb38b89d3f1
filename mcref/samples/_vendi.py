r"""The Vendi score of a sample set: the exponential of the order-q Rényi entropy of the
eigenvalues of K/n (docs/methods.md, "Nearest-neighbour statistics and diversity").

For a similarity kernel with k(x, x) = 1 and the n × n matrix K_ij = k(x_i, x_j), the
eigenvalues λ_1, …, λ_n of K/n are ≥ 0 and sum to 1, and

.. math::

    \mathrm{VS}_q = \exp H_q(\lambda),\quad
    H_q = \frac{\log \sum_i \lambda_i^q}{1 - q}\ (q \ne 1),\quad
    H_1 = -\sum_i \lambda_i \log \lambda_i,\quad H_\infty = -\log \lambda_{\max},\quad
    H_0 = \log \#\{i: \lambda_i > 0\}

(Friedman & Dieng 2023; the orders q: Pasarkar & Dieng 2023). Eigenvalues at or below
τ = 10·n·ε·λ_max (ε the float64 epsilon, a bound on what a symmetric eigensolver returns for a
zero eigenvalue) are taken as 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg

from ..core._checks import check_choice, check_int, check_positive_number, check_seed
from ._knn import check_sample_set

KERNELS = ("gaussian", "linear")
METHODS = ("auto", "exact", "dual", "rff")
#: rows of the kernel matrix built at a time, and rows of features summed at a time
BLOCK = 2048
#: eigenvalues ≤ EIG_FACTOR·n·ε·λ_max count as zero
EIG_FACTOR = 10.0
#: the median heuristic's rows (evenly spaced) when the set is larger
MEDIAN_ROWS = 2000


def median_length_scale(X: np.ndarray, name: str = "X") -> float:
    """ℓ = the median distance ‖x_i − x_j‖ over the pairs i < j of X's rows (of the MEDIAN_ROWS
    rows at positions round(linspace(0, n − 1, MEDIAN_ROWS)) when X has more): the rule of
    :func:`mcref.samples.median_heuristic` ("median") for one set. A median of 0 (more than half
    the pairs are copies) is an error naming ``name``."""
    n = X.shape[0]
    rows = X if n <= MEDIAN_ROWS else X[np.round(np.linspace(0, n - 1, MEDIAN_ROWS)).astype(np.int64)]
    from scipy.spatial.distance import pdist

    ell = float(np.median(pdist(rows)))
    if not ell > 0:
        raise ValueError(f"`{name}`: the median distance between rows is 0 (more than half the pairs of rows are "
                         "copies, a constant set?); pass `length_scale` > 0")
    return ell


def check_q(q: Any) -> float:
    """The order q: a number in [0, ∞] (``np.inf`` or ``"inf"``)."""
    if isinstance(q, str) and q.strip().lower() in {"inf", "infinity"}:
        return math.inf
    try:
        v = float(q)
    except (TypeError, ValueError):
        raise ValueError(f"`q` must be a number in [0, inf], got {q!r}") from None
    if isinstance(q, bool) or not (v >= 0):
        raise ValueError(f"`q` must be a number in [0, inf], got {q!r}")
    return v


def entropy_score(lam: np.ndarray, q: float, n: int) -> float:
    """exp H_q of the eigenvalues ``lam`` of K/n (n rows), those ≤ EIG_FACTOR·n·ε·λ_max as 0."""
    lam = np.asarray(lam, dtype=np.float64)
    top = float(lam.max())
    lam = lam[lam > EIG_FACTOR * n * np.finfo(np.float64).eps * top]
    if q == 0:
        return float(lam.size)
    if q == 1:
        return float(np.exp(-np.sum(lam * np.log(lam))))
    if math.isinf(q):
        return 1.0 / top
    return float(np.exp(np.log(np.sum(lam**q)) / (1.0 - q)))


def check_kernel_matrix(K: Any) -> np.ndarray:
    """A similarity matrix: square, finite, symmetric (to 1e-12 of its largest entry), unit
    diagonal (to 1e-10) and PSD (no eigenvalue below −EIG_FACTOR·n·ε·λ_max); returned
    symmetrised, as float64."""
    try:
        A = np.array(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`K` must be a square array of real numbers ({exc})") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 2:
        raise ValueError(f"`K` must be a square matrix with at least 2 rows, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError(f"`K` must contain only finite values ({int((~np.isfinite(A)).sum())} NaN or infinite)")
    scale = float(np.abs(A).max())
    asym = float(np.abs(A - A.T).max())
    if asym > 1e-12 * scale:
        raise ValueError(f"`K` must be symmetric: max |K − Kᵀ| = {asym:.3g} (largest |K| {scale:.3g})")
    diag = np.diagonal(A)
    if np.abs(diag - 1.0).max() > 1e-10:
        raise ValueError(f"`K` must have a unit diagonal (a similarity, k(x, x) = 1), got diagonal entries from "
                         f"{diag.min():.6g} to {diag.max():.6g}; normalise it as K / sqrt(outer(diag, diag))")
    A = 0.5 * (A + A.T)
    return A


def _eigenvalues(A: np.ndarray, n: int) -> np.ndarray:
    """The eigenvalues of A/n (A overwritten), and the PSD check."""
    A /= n
    lam = scipy.linalg.eigh(A, eigvals_only=True, overwrite_a=True, check_finite=False, driver="evd")
    top = float(lam[-1])
    if lam[0] < -EIG_FACTOR * n * np.finfo(np.float64).eps * max(top, 0.0) or top <= 0:
        raise ValueError(f"`K` must be positive semi-definite: its smallest eigenvalue is {lam[0] * n:.3g} "
                         f"(largest {top * n:.3g})")
    return lam


def _gaussian_rows(X: np.ndarray, sq: np.ndarray, i0: int, i1: int, c: float, out: np.ndarray) -> np.ndarray:
    """``out`` = exp(c·‖x_i − x_j‖²) for the rows i0 ≤ i < i1 against every row (the squared
    distances from the Gram products, clipped at 0 against round-off; ``sq`` the rows' squared norms)."""
    np.matmul(X[i0:i1], X.T, out=out)
    out *= -2.0
    out += sq[i0:i1, None]
    out += sq[None, :]
    np.maximum(out, 0.0, out=out)
    out *= c
    np.exp(out, out=out)
    return out


def gaussian_matrix(X: np.ndarray, ell: float) -> np.ndarray:
    """K_ij = exp(−‖x_i − x_j‖²/(2ℓ²)), built BLOCK rows at a time (n² float64: the matrix that
    the eigensolver needs, and nothing else of that size); diagonal exactly 1."""
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    K = np.empty((n, n))
    c = -0.5 / (ell * ell)
    for i0 in range(0, n, BLOCK):
        i1 = min(n, i0 + BLOCK)
        _gaussian_rows(X, sq, i0, i1, c, K[i0:i1])
    np.fill_diagonal(K, 1.0)
    return K


def _unit_rows(X: np.ndarray) -> np.ndarray:
    norm = np.sqrt(np.einsum("ij,ij->i", X, X))
    if not (norm > 0).all():
        raise ValueError(f"`X` has a row of zeros (row {int(np.argmin(norm > 0))}): the linear (cosine) kernel "
                         "needs rows of non-zero length")
    return X / norm[:, None]


def _gram(F: np.ndarray) -> np.ndarray:
    """FᵀF summed over fixed blocks of BLOCK rows, in block order."""
    S = np.zeros((F.shape[1], F.shape[1]))
    for i0 in range(0, F.shape[0], BLOCK):
        blk = F[i0:i0 + BLOCK]
        S += blk.T @ blk
    return S


def rff_gram(X: np.ndarray, ell: float, n_features: int, seed) -> np.ndarray:
    """ΦᵀΦ of the random Fourier features Φ(x) = [cos(Wᵀx), sin(Wᵀx)]/√D, W's D columns
    N(0, I/ℓ²) (Rahimi & Recht 2007), by blocks of rows; Φ(x)·Φ(x) = 1 exactly."""
    rng = np.random.default_rng(check_seed(seed))
    W = rng.standard_normal((X.shape[1], n_features)) / ell
    S = np.zeros((2 * n_features, 2 * n_features))
    for i0 in range(0, X.shape[0], BLOCK):
        P = X[i0:i0 + BLOCK] @ W
        F = np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(n_features)
        S += F.T @ F
    return S


def vendi_score(X: Any = None, *, K: Any = None, kernel: str = "gaussian", length_scale: float | None = None,
                q: float = 1, method: str = "auto", n_features: int = 500, seed=None) -> float:
    r"""The Vendi score of a sample set: exp of the order-q entropy of the eigenvalues of K/n.

    .. math::

        \mathrm{VS}_q(X) = \exp\Bigl(\frac{1}{1-q}\log\sum_i \lambda_i^q\Bigr),\qquad
        \lambda = \mathrm{eig}(K/n),\ K_{ij} = k(x_i, x_j),

    with the limits q = 1 (Shannon: exp(−Σ λ log λ)), q = ∞ (1/λ_max) and q = 0 (the number of
    non-zero eigenvalues). VS_q lies in [1, n]: 1 when all rows are alike, n when no two are.

    Parameters
    ----------
    X : array_like, shape (n, d), optional
        The rows (one feature: 1-D). Give X or K.
    K : array_like, shape (n, n), optional
        A similarity matrix: symmetric, positive semi-definite, unit diagonal.
    kernel : {"gaussian", "linear"}, default: "gaussian"
        With X: exp(−‖x − y‖²/(2ℓ²)), or the cosine similarity xᵀy/(‖x‖‖y‖) (vendi-score's
        ``score_X``/``score_dual`` with ``normalize=True``).
    length_scale : float, optional
        ℓ of the Gaussian kernel; default the median distance between rows
        (:func:`median_length_scale`).
    q : float, default: 1
        The order, in [0, ∞] (``np.inf``).
    method : {"auto", "exact", "dual", "rff"}, default: "auto"
        "exact": the n × n matrix and its eigenvalues (O(n²) memory, O(n³) time; at q = 2 the
        sum of squared eigenvalues is ‖K/n‖²_F, summed by blocks of rows with no n × n array;
        at q = ∞ with n > 500 rows, λ_max alone by Lanczos iterations).
        "dual": the eigenvalues of FᵀF/n for explicit features F (linear kernel: the unit rows;
        O(n·d²)), which are the non-zero eigenvalues of K/n. "rff": the dual route on 2·``n_features``
        random Fourier features of the Gaussian kernel (approximate, error in the Notes). "auto":
        "dual" for the linear kernel when d < n, else "exact".
    n_features : int, default: 500
        Frequencies of the random features ("rff").
    seed : None, int, SeedSequence or Generator
        The random features' frequencies ("rff").

    Returns
    -------
    float

    Notes
    -----
    Eigenvalues ≤ 10·n·ε·λ_max are taken as 0 (a symmetric eigensolver returns zero eigenvalues
    within about n·ε·λ_max), so a rank-r matrix scores at most r at every q, and round-off
    eigenvalues do not count at q < 1. With random features, each eigenvalue is within
    t = √(2λ_max·log(2n/δ)/D) + 2 log(2n/δ)/(3D) of the exact one with probability ≥ 1 − δ
    (Weyl's inequality and the matrix Bernstein inequality for the mean of the D frequencies'
    rank-2 matrices, each of norm ≤ 1; docs/methods.md, "Nearest-neighbour statistics and
    diversity").

    References
    ----------
    .. [1] Friedman, D. & Dieng, A. B. (2023). The Vendi Score: a diversity evaluation metric for
       machine learning. TMLR. arXiv:2210.02410
    .. [2] Pasarkar, A. P. & Dieng, A. B. (2023). Cousins of the Vendi Score: a family of
       similarity-based diversity metrics for science and machine learning. arXiv:2310.12952

    Examples
    --------
    >>> import numpy as np
    >>> vendi_score(K=np.eye(4))
    4.0
    >>> rng = np.random.default_rng(0)
    >>> 1.0 < vendi_score(rng.normal(size=(200, 2)), q=2) < 200
    True
    """
    kernel = check_choice(kernel, "kernel", KERNELS)
    method = check_choice(method, "method", METHODS)
    q = check_q(q)
    if (X is None) == (K is None):
        raise ValueError("give exactly one of `X` (the rows) and `K` (their similarity matrix)")
    if K is not None:
        if method not in ("auto", "exact"):
            raise ValueError(f"`method` {method!r} needs the rows `X`; with `K` the method is 'exact'")
        A = check_kernel_matrix(K)
        n = A.shape[0]
        return entropy_score(_eigenvalues(A, n), q, n)
    Xc = check_sample_set(X, "X")
    n, d = Xc.shape
    if length_scale is not None and kernel == "linear":
        raise ValueError("`length_scale` applies to the Gaussian kernel only (kernel='gaussian')")
    if method == "auto":
        method = "dual" if kernel == "linear" and d < n else "exact"
    if method == "dual" and kernel != "linear":
        raise ValueError("`method` 'dual' needs explicit features: kernel='linear' (or method='rff' for the "
                         "Gaussian kernel's random features)")
    if method == "rff" and kernel != "gaussian":
        raise ValueError("`method` 'rff' approximates the Gaussian kernel: kernel='gaussian'")
    if kernel == "gaussian":
        ell = median_length_scale(Xc) if length_scale is None else check_length_scale(length_scale)
    if method == "dual":
        return entropy_score(_eigenvalues(_gram(_unit_rows(Xc)), n), q, n)
    if method == "rff":
        D = check_int(n_features, "n_features", minimum=1)
        return entropy_score(_eigenvalues(rff_gram(Xc, ell, D, seed), n), q, n)
    if q == 2 and kernel == "gaussian":
        return 1.0 / frobenius_gaussian(Xc, ell)
    A = similarity_matrix(Xc, kernel, ell if kernel == "gaussian" else None)
    if math.isinf(q) and n > LANCZOS_MIN:
        return 1.0 / largest_eigenvalue(A, n)
    return entropy_score(_eigenvalues(A, n), q, n)


#: from this n on, q = ∞ of a matrix built from X takes λ_max by Lanczos iterations
LANCZOS_MIN = 500


def largest_eigenvalue(A: np.ndarray, n: int) -> float:
    """λ_max(A/n) of a PSD matrix by implicitly restarted Lanczos iterations (ARPACK through
    :func:`scipy.sparse.linalg.eigsh`, to machine precision, a fixed start vector): O(n²) a
    matrix-vector product instead of the O(n³) of every eigenvalue."""
    from scipy.sparse.linalg import eigsh

    v0 = np.full(n, 1.0 / math.sqrt(n))
    lam = eigsh(A, k=1, which="LA", v0=v0, tol=0, return_eigenvectors=False)
    return float(lam[0]) / n


def check_length_scale(value: Any) -> float:
    """``length_scale`` as a finite float > 0 (:func:`mcref.core._checks.check_positive_number`)."""
    return check_positive_number(value, "length_scale")


def frobenius_gaussian(X: np.ndarray, ell: float) -> float:
    """Σ_i λ_i² = ‖K/n‖²_F of the Gaussian kernel matrix, by blocks of BLOCK rows (BLOCK × n
    memory), the blocks' sums added in order."""
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    c = -1.0 / (ell * ell)  # K² = exp(−D²/ℓ²)
    total = 0.0
    for i0 in range(0, n, BLOCK):
        i1 = min(n, i0 + BLOCK)
        blk = _gaussian_rows(X, sq, i0, i1, c, np.empty((i1 - i0, n)))
        blk[np.arange(i1 - i0), np.arange(i0, i1)] = 1.0
        total += float(blk.sum())
    return total / (n * n)


def similarity_matrix(X: np.ndarray, kernel: str, ell: float | None) -> np.ndarray:
    """The n × n similarity matrix of checked rows X: Gaussian of length ``ell`` or cosine."""
    if kernel == "gaussian":
        return gaussian_matrix(X, ell)
    U = _unit_rows(X)
    return U @ U.T


def vendi_of_matrix(A: np.ndarray, q: float) -> float:
    """VS_q of a similarity matrix already checked or built here (``A`` is left unchanged)."""
    n = A.shape[0]
    return entropy_score(_eigenvalues(np.array(A, dtype=np.float64), n), q, n)
