r"""Statistics of two sample sets X (n × d) and Y (m × d): MMD², the energy distance, the
Fréchet distance (and its 1/n extrapolation FD∞), the classifier two-sample test (C2ST), and
the median heuristic of the kernels' length (docs/methods.md, "Two-sample statistics and their
permutation null").

The kernel statistics are written through the sums of the kernel over the pairs of the pooled
sample Z = (X; Y) (:mod:`mcref.kernels.pairs`): with the indicator a of a labelling's X-set
(|I| = n) and the row sums r_i = Σ_{j≠i} k_ij,

A = Σ_{i<j ∈ I} k_ij (one quadratic form, :func:`mcref.kernels.pairs.pair_forms`),
S_XY = aᵀr − 2A, C = Σ_{i<j} k_ij − A − S_XY,

so a batch of labellings (the observed one and the permutations) costs one pass over the pairs.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from scipy.spatial.distance import pdist

from ..core._checks import as_finite_array, check_choice, check_int, check_seed
from ..kernels import pairs as kp
from ..parallel import serial_blas

__all__ = ["mmd", "energy_distance", "frechet_distance", "frechet_distance_inf", "c2st", "median_heuristic",
           "KERNELS", "MMD_ESTIMATORS", "check_two_sets", "resolve_length_scale", "kernel_values",
           "frechet_values", "family_of", "kernel_boot_values",
           "mmd_from_sums", "energy_from_sums", "c2st_value", "read_samples", "mmd_linear"]

#: kernel names and their family codes (:mod:`mcref.kernels.pairs`)
KERNELS = {"gaussian": kp.GAUSSIAN, "laplace": kp.LAPLACE, "imq": kp.IMQ}
MMD_ESTIMATORS = ("unbiased", "biased", "linear")
#: rules of ``length_scale=``
LENGTH_RULES = ("median", "sbibm", "alibi")
#: the median heuristic uses all pairs of at most this many rows of the pooled sample
MEDIAN_ROWS = 2000
#: weight columns per pass over the pairs: at least BATCH, more while the weights take at most
#: BATCH_BYTES (N × columns float64)
BATCH = 256
BATCH_BYTES = 64 << 20


# --------------------------------------------------------------------------- input checks


def check_two_sets(X: Any, Y: Any, names: tuple[str, str] = ("X", "Y"), *, min_rows: int = 2
                   ) -> tuple[np.ndarray, np.ndarray]:
    """X and Y as 2-D float64 arrays of finite values with the same number of columns and at
    least ``min_rows`` rows each, or one ValueError naming the argument and the rule."""
    out = []
    for a, name in zip((X, Y), names):
        arr = np.asarray(a)
        if arr.ndim != 2:
            raise ValueError(f"`{name}` must be a 2-D array (rows = samples, columns = dimensions), got shape "
                             f"{arr.shape}; a set of scalars is x.reshape(-1, 1)")
        arr = np.ascontiguousarray(as_finite_array(arr, name))
        if arr.shape[0] < min_rows:
            raise ValueError(f"`{name}` must hold at least {min_rows} samples (rows), got {arr.shape[0]}")
        if arr.shape[1] < 1:
            raise ValueError(f"`{name}` must have at least one column, got shape {arr.shape}")
        out.append(arr)
    if out[0].shape[1] != out[1].shape[1]:
        raise ValueError(f"`{names[0]}` and `{names[1]}` must have the same number of columns (dimension d), got "
                         f"{out[0].shape[1]} and {out[1].shape[1]}")
    return out[0], out[1]


# --------------------------------------------------------------------------- length scales


def _lower_median(x: np.ndarray) -> float:
    """The lower of the two middle values (torch.median's convention)."""
    return float(np.partition(x, (x.size - 1) // 2)[(x.size - 1) // 2])


def median_heuristic(X: Any, Y: Any, rule: Literal["median", "sbibm", "alibi"] = "median") -> float:
    r"""The kernel length ℓ of a median heuristic.

    * ``"median"`` (mcref's default): ℓ = the median (NumPy's: the mean of the two middle values
      for an even count) of the Euclidean distances ‖z_i − z_j‖ over all pairs i < j of the pooled
      sample Z = (X; Y) when N = n + m ≤ 2000; above, of the pairs of the 2000 rows at the evenly
      spaced positions ``round(linspace(0, N − 1, 2000))`` of Z (deterministic, no seed; X and Y
      in proportion to their sizes).
    * ``"sbibm"`` (sbibm ``metrics.mmd``, ``bandwidth="X"``): ℓ = torch.median(pdist(X)), the lower
      median of the distances within X alone.
    * ``"alibi"`` (alibi-detect ``sigma_median`` on the reference set X): ℓ = √(d²_med / 2), d²_med
      the lower median of the squared distances within X (the n zeros of the diagonal skipped).

    Each ℓ enters the Gaussian kernel as exp(−r²/(2ℓ²)).

    Raises
    ------
    ValueError
        A median of 0 (a constant set, or more than half the pairs tied at distance 0).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(50, 2)), rng.normal(size=(40, 2))
    >>> round(median_heuristic(X, Y), 3) > 0
    True
    """
    X, Y = check_two_sets(X, Y)
    rule = check_choice(rule, "length_scale", LENGTH_RULES)
    if rule == "median":
        Z = np.concatenate([X, Y])
        if Z.shape[0] > MEDIAN_ROWS:
            Z = Z[np.round(np.linspace(0, Z.shape[0] - 1, MEDIAN_ROWS)).astype(np.int64)]
        ell, where = float(np.median(pdist(Z))), "the pooled sample"
    elif rule == "sbibm":
        ell, where = _lower_median(pdist(X)), "`X`"
    else:
        ell, where = math.sqrt(0.5 * _lower_median(pdist(X, "sqeuclidean"))), "`X`"
    if not ell > 0.0:
        raise ValueError(f"`length_scale`: the median heuristic ({rule!r}) is 0 on {where}: more than half its pairs "
                         "are at distance 0 (a constant set?); give `length_scale` as a positive number")
    return ell


def resolve_length_scale(length_scale: Any, X: np.ndarray, Y: np.ndarray) -> float:
    """ℓ from ``length_scale``: None (the median heuristic on the pooled sample), a rule name
    (:func:`median_heuristic`) or a positive number."""
    if length_scale is None:
        return median_heuristic(X, Y, "median")
    if isinstance(length_scale, str):
        return median_heuristic(X, Y, length_scale)
    try:
        ell = float(length_scale)
    except (TypeError, ValueError):
        raise ValueError(f"`length_scale` must be None, a positive number or one of {', '.join(map(repr, LENGTH_RULES))}; "
                         f"got {length_scale!r}") from None
    if not (math.isfinite(ell) and ell > 0.0):
        raise ValueError(f"`length_scale` must be a positive finite number, got {length_scale!r}")
    return ell


def family_of(kernel: str, ell: float) -> tuple[int, float]:
    """(family code, its parameter c) of a kernel name and length (:mod:`mcref.kernels.pairs`)."""
    code = KERNELS[kernel]
    if code == kp.GAUSSIAN:
        return code, 1.0 / (2.0 * ell * ell)
    if code == kp.LAPLACE:
        return code, 1.0 / ell
    return code, 1.0 / (ell * ell)


# --------------------------------------------------------------------------- kernel sums of labellings


def kernel_values(Z: np.ndarray, labels: np.ndarray, family: int, c: float, n: int) -> dict[str, np.ndarray]:
    """For each labelling (row of ``labels``, B × N bool, True = in the X-set of n rows) of the
    pooled sample Z (N × d): the within-X sum A = Σ_{i<j∈I} k_ij, the within-Y sum C and the cross
    sum S = Σ_{i∈I, j∈J} k_ij, as ``{"A", "C", "S"}`` arrays of shape (B,), from one pass over
    the pairs per ``BATCH`` labellings and one pass for the row sums."""
    N, d = Z.shape
    tile = kp.TILE
    n_pad = -(-N // tile) * tile
    Zt = np.zeros((d, n_pad))
    Zt[:, :N] = Z.T
    B = labels.shape[0]
    A = np.empty(B)
    step = max(BATCH, BATCH_BYTES // (8 * n_pad))
    with serial_blas():
        r = kp.row_sums(family, c, Zt, N)
        for b0 in range(0, B, step):
            b1 = min(B, b0 + step)
            W = np.zeros((n_pad, b1 - b0))
            W[:N] = labels[b0:b1].T
            A[b0:b1] = kp.pair_forms(family, c, Zt, W)
        S = np.empty(B)
        for b0 in range(0, B, BATCH):  # aᵀr by blocks of labellings (no B × N float64 copy)
            S[b0:b0 + BATCH] = labels[b0:b0 + BATCH] @ r
    total = 0.5 * float(np.sum(r))
    S -= 2.0 * A
    return {"A": A, "C": total - A - S, "S": S}


def mmd_from_sums(sums: dict[str, np.ndarray], n: int, m: int, estimator: str, k0: float) -> np.ndarray:
    r"""MMD² of labellings from their pair sums: U: 2A/(n(n−1)) + 2C/(m(m−1)) − 2S/(nm);
    V: (2A + n·k(0))/n² + (2C + m·k(0))/m² − 2S/(nm)."""
    A, C, S = sums["A"], sums["C"], sums["S"]
    if estimator == "unbiased":
        return 2.0 * A / (n * (n - 1.0)) + 2.0 * C / (m * (m - 1.0)) - 2.0 * S / (n * float(m))
    return (2.0 * A + n * k0) / (n * float(n)) + (2.0 * C + m * k0) / (m * float(m)) - 2.0 * S / (n * float(m))


def energy_from_sums(sums: dict[str, np.ndarray], n: int, m: int, estimator: str) -> np.ndarray:
    r"""Energy distance of labellings from their distance sums: V: 2S/(nm) − 2A/n² − 2C/m²;
    U: 2S/(nm) − 2A/(n(n−1)) − 2C/(m(m−1))."""
    A, C, S = sums["A"], sums["C"], sums["S"]
    if estimator == "V":
        return 2.0 * S / (n * float(m)) - 2.0 * A / (n * float(n)) - 2.0 * C / (m * float(m))
    return 2.0 * S / (n * float(m)) - 2.0 * A / (n * (n - 1.0)) - 2.0 * C / (m * (m - 1.0))


def _identity(n: int, m: int) -> np.ndarray:
    lab = np.zeros((1, n + m), dtype=bool)
    lab[0, :n] = True
    return lab


# --------------------------------------------------------------------------- MMD, energy


def mmd_linear(X: np.ndarray, Y: np.ndarray, family: int, c: float) -> float:
    """Gretton et al.'s linear-time MMD² on the first 2⌊min(n, m)/2⌋ rows of each set."""
    h = min(X.shape[0], Y.shape[0]) // 2
    x1, x2, y1, y2 = X[0:2 * h:2], X[1:2 * h:2], Y[0:2 * h:2], Y[1:2 * h:2]

    def k(a, b):
        r2 = np.sum((a - b) ** 2, axis=1)
        if family == kp.GAUSSIAN:
            return np.exp(-c * r2)
        if family == kp.LAPLACE:
            return np.exp(-c * np.sqrt(r2))
        return 1.0 / np.sqrt(1.0 + c * r2)

    return float(np.mean(k(x1, x2) + k(y1, y2) - k(x1, y2) - k(x2, y1)))


def mmd(X: Any, Y: Any, *, kernel: Literal["gaussian", "laplace", "imq"] = "gaussian", length_scale: Any = None,
        estimator: Literal["unbiased", "biased", "linear"] = "unbiased") -> float:
    r"""Squared maximum mean discrepancy MMD² between the laws of two sample sets.

    .. math::

        \mathrm{MMD}^2_u = \frac{1}{n(n-1)}\sum_{i\ne i'} k(x_i, x_{i'})
          + \frac{1}{m(m-1)}\sum_{j\ne j'} k(y_j, y_{j'}) - \frac{2}{nm}\sum_{i,j} k(x_i, y_j)

    (the biased V-statistic keeps the diagonal terms and divides by n², m²), with the kernels
    gaussian exp(−r²/(2ℓ²)), laplace exp(−r/ℓ) and the inverse multiquadric (1 + r²/ℓ²)^(−1/2),
    r = ‖x − y‖. The linear-time estimator (Gretton et al. 2012, §6) averages
    h = k(x₁, x₂) + k(y₁, y₂) − k(x₁, y₂) − k(x₂, y₁) over the disjoint pairs
    (x_{2i−1}, x_{2i}), (y_{2i−1}, y_{2i}), i = 1..⌊min(n, m)/2⌋: rows beyond are not used.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (m, d)
    kernel : {"gaussian", "laplace", "imq"}, default: "gaussian"
    length_scale : float or {"median", "sbibm", "alibi"}, optional
        ℓ; default the median heuristic on the pooled sample (:func:`median_heuristic`).
    estimator : {"unbiased", "biased", "linear"}, default: "unbiased"

    Returns
    -------
    float
        MMD² (the unbiased and the linear estimates can be negative).

    Notes
    -----
    O((n + m)² d) time in tiles of pairs (no (n + m)² array), O(min(n, m)·d) for the linear
    estimator. docs/methods.md, "Two-sample statistics and their permutation null".

    References
    ----------
    .. [1] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schölkopf and A. Smola, "A kernel
       two-sample test", J. Mach. Learn. Res. 13, 723–773 (2012).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(200, 2)), rng.normal(1.0, 1.0, size=(200, 2))
    >>> mmd(X, Y, length_scale=1.0) > 0.1
    True
    """
    X, Y = check_two_sets(X, Y)
    kernel = check_choice(kernel, "kernel", tuple(KERNELS))
    estimator = check_choice(estimator, "estimator", MMD_ESTIMATORS)
    family, c = family_of(kernel, resolve_length_scale(length_scale, X, Y))
    if estimator == "linear":
        return mmd_linear(X, Y, family, c)
    n, m = X.shape[0], Y.shape[0]
    sums = kernel_values(np.concatenate([X, Y]), _identity(n, m), family, c, n)
    return float(mmd_from_sums(sums, n, m, estimator, 1.0)[0])


def energy_distance(X: Any, Y: Any, *, estimator: Literal["V", "U"] = "V") -> float:
    r"""Energy distance between the laws of two sample sets (Székely & Rizzo), as dcor's
    ``energy_distance`` (``estimation_stat="V"`` or ``"U"``).

    .. math::

        \mathcal{E} = \frac{2}{nm}\sum_{i,j}\|x_i - y_j\| - \frac{1}{n^2}\sum_{i,i'}\|x_i - x_{i'}\|
          - \frac{1}{m^2}\sum_{j,j'}\|y_j - y_{j'}\|

    (V); the U-statistic divides the within-set sums by n(n − 1) and m(m − 1). It is −2 × the
    cross term of the MMD V-statistic with the "kernel" ‖x − y‖.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (m, d)
    estimator : {"V", "U"}, default: "V"

    Returns
    -------
    float

    References
    ----------
    .. [1] G. J. Székely and M. L. Rizzo, "Energy statistics: a class of statistics based on
       distances", J. Stat. Plan. Inference 143, 1249–1272 (2013).
       https://doi.org/10.1016/j.jspi.2013.03.018

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(100, 3)), rng.normal(2.0, 1.0, size=(80, 3))
    >>> energy_distance(X, Y) > 1.0
    True
    """
    X, Y = check_two_sets(X, Y)
    if estimator not in ("V", "U"):
        raise ValueError(f"`estimator` must be 'V' or 'U', got {estimator!r}")
    n, m = X.shape[0], Y.shape[0]
    sums = kernel_values(np.concatenate([X, Y]), _identity(n, m), kp.DISTANCE, 0.0, n)
    return float(energy_from_sums(sums, n, m, estimator)[0])


# --------------------------------------------------------------------------- Fréchet distance


def _fd_of_moments(mu1, S1, mu2, S2) -> np.ndarray:
    """‖μ₁ − μ₂‖² + Tr Σ₁ + Tr Σ₂ − 2 Tr (Σ₁^½ Σ₂ Σ₁^½)^½ for stacks (…, d) and (…, d, d), by two
    symmetric eigendecompositions (eigenvalues below 0 from round-off clipped to 0)."""
    lam, V = np.linalg.eigh(0.5 * (S1 + np.swapaxes(S1, -1, -2)))
    R = (V * np.sqrt(np.clip(lam, 0.0, None))[..., None, :]) @ np.swapaxes(V, -1, -2)
    P = R @ S2 @ R
    mu = np.linalg.eigvalsh(0.5 * (P + np.swapaxes(P, -1, -2)))
    cross = np.sum(np.sqrt(np.clip(mu, 0.0, None)), axis=-1)
    dm = mu1 - mu2
    return np.sum(dm * dm, axis=-1) + np.trace(S1, axis1=-2, axis2=-1) + np.trace(S2, axis1=-2, axis2=-1) - 2.0 * cross


def frechet_distance(X: Any, Y: Any) -> float:
    r"""Fréchet distance between Gaussians fitted to two sample sets (FID's formula on the user's
    features; Heusel et al. 2017).

    .. math::

        \mathrm{FD} = \|\mu_1 - \mu_2\|^2 + \operatorname{Tr}\Sigma_1 + \operatorname{Tr}\Sigma_2
          - 2\operatorname{Tr}\bigl(\Sigma_1^{1/2}\Sigma_2\Sigma_1^{1/2}\bigr)^{1/2}

    with the sample means and covariances (divisor n − 1). The trace of the square root is
    computed from the eigenvalues of the symmetric matrix Σ₁^½ Σ₂ Σ₁^½ (Σ₁^½ from the
    eigendecomposition of Σ₁; round-off negative eigenvalues clipped to 0): real arithmetic, no
    complex ``sqrtm``. Tr (Σ₁Σ₂)^½ = Tr (Σ₁^½ Σ₂ Σ₁^½)^½ since both matrices are similar.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (m, d)

    Returns
    -------
    float

    Notes
    -----
    FD is biased upwards at finite n (Chong & Forsyth 2020): see :func:`frechet_distance_inf`
    and the permutation reference of :func:`mcref.samples.two_sample`.

    References
    ----------
    .. [1] M. Heusel, H. Ramsauer, T. Unterthiner, B. Nessler and S. Hochreiter, "GANs trained by
       a two time-scale update rule converge to a local Nash equilibrium", NeurIPS 30 (2017).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(500, 2)), rng.normal(size=(500, 2))
    >>> frechet_distance(X, Y) < 0.05
    True
    """
    X, Y = check_two_sets(X, Y)
    S1 = np.atleast_2d(np.cov(X, rowvar=False))
    S2 = np.atleast_2d(np.cov(Y, rowvar=False))
    return float(_fd_of_moments(X.mean(0), S1, Y.mean(0), S2))


def frechet_values(Z: np.ndarray, WX: np.ndarray, WY: np.ndarray | None = None) -> np.ndarray:
    """FD of weighted sets of the pooled sample Z (N × d): row b of ``WX`` (B × N) gives each
    row's multiplicity in the X-set (a labelling's indicator, or bootstrap counts), row b of
    ``WY`` that in the Y-set (default 1 − WX, the complement of a labelling); from the sums
    Σ w z and Σ w z zᵀ (Z centred on its mean first), in batches. A set's size is Σ w."""
    N, d = Z.shape
    Zc = Z - Z.mean(0)
    P = (Zc[:, :, None] * Zc[:, None, :]).reshape(N, d * d)  # z zᵀ of each row, flat
    out = np.empty(WX.shape[0])
    step = max(1, min(BATCH, (1 << 22) // max(1, d * d), (32 << 20) // (8 * N)))  # ≤ 32 MiB of weights
    with serial_blas():
        for b0 in range(0, WX.shape[0], step):
            moments = []
            for Wall in (WX, WY):
                L = (1.0 - WX[b0:b0 + step]) if Wall is None else np.asarray(Wall[b0:b0 + step], dtype=np.float64)
                n = L.sum(1)
                mu = (L @ Zc) / n[:, None]
                s2 = (L @ P).reshape(-1, d, d)
                S = (s2 - n[:, None, None] * mu[:, :, None] * mu[:, None, :]) / (n - 1.0)[:, None, None]
                moments += [mu, S]
            out[b0:b0 + step] = _fd_of_moments(*moments)
    return out


#: subsample fractions of :func:`frechet_distance_inf`
FD_INF_FRACTIONS = tuple(float(f) for f in np.linspace(0.2, 1.0, 15))


def frechet_distance_inf(X: Any, Y: Any, *, seed: Any = None) -> float:
    r"""FD∞: the Fréchet distance extrapolated to infinite sample sizes (Chong & Forsyth 2020).

    FD is computed on subsamples without replacement of ⌈f·n⌉ rows of X and ⌈f·m⌉ rows of Y for
    15 fractions f evenly spaced in [0.2, 1] (f = 1: the whole sets; at least d + 2 rows), and
    FD_f = FD∞ + b/⌈f·n⌉ is fitted by least squares; FD∞ is the intercept. Each fraction draws its
    rows from its own child of ``SeedSequence(seed)``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (m, d)
    seed : None, int, SeedSequence or Generator

    Returns
    -------
    float
        FD∞ (can be slightly negative for sets of one law).

    References
    ----------
    .. [1] M. J. Chong and D. Forsyth, "Effectively unbiased FID and Inception score and where to
       find them", CVPR (2020), 6070–6079.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(400, 5)), rng.normal(size=(400, 5)) + [1, 0, 0, 0, 0]  # FD of the laws: 1
    >>> round(frechet_distance(X, Y), 2), round(frechet_distance_inf(X, Y, seed=1), 2)
    (1.18, 0.97)
    """
    X, Y = check_two_sets(X, Y, min_rows=3)
    ss = check_seed(seed)
    n, m, d = X.shape[0], Y.shape[0], X.shape[1]
    sizes, fds = [], []
    for f, child in zip(FD_INF_FRACTIONS, ss.spawn(len(FD_INF_FRACTIONS))):
        rng = np.random.default_rng(child)
        a = min(n, max(d + 2, math.ceil(f * n)))
        b = min(m, max(d + 2, math.ceil(f * m)))
        xs = X if a == n else X[rng.choice(n, a, replace=False)]
        ys = Y if b == m else Y[rng.choice(m, b, replace=False)]
        sizes.append(a)
        fds.append(frechet_distance(xs, ys))
    A = np.column_stack([np.ones(len(sizes)), 1.0 / np.asarray(sizes, dtype=np.float64)])
    coef = np.linalg.lstsq(A, np.asarray(fds), rcond=None)[0]
    return float(coef[0])


# --------------------------------------------------------------------------- C2ST


def c2st(X: Any, Y: Any, *, classifier: Any = None, folds: int = 5, seed: Any = None) -> float:
    r"""Classifier two-sample test accuracy (Lopez-Paz & Oquab 2017), with sbi's defaults.

    Both sets are z-scored by X's mean and standard deviation (divisor n − 1; a deviation below
    1e-14 set to 1), labelled 0 (X) and 1 (Y), and a classifier is scored by ``folds``-fold
    cross-validation (``KFold(shuffle=True)``, as sbi's ``c2st``): the mean held-out accuracy.
    0.5 means the classifier cannot tell the sets apart.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (m, d)
    classifier : scikit-learn classifier, optional
        Default ``RandomForestClassifier(random_state=...)`` with scikit-learn's defaults.
    folds : int, default: 5
    seed : None, int, SeedSequence or Generator
        Seeds the folds and the default classifier (one 31-bit integer drawn from it).

    Returns
    -------
    float

    Raises
    ------
    ImportError
        scikit-learn is not installed (``pip install "mcref[sklearn]"``).

    References
    ----------
    .. [1] D. Lopez-Paz and M. Oquab, "Revisiting classifier two-sample tests", ICLR (2017).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.normal(size=(100, 2)), rng.normal(3.0, 1.0, size=(100, 2))
    >>> c2st(X, Y, seed=0) > 0.9
    True
    """
    X, Y = check_two_sets(X, Y)
    folds = check_int(folds, "folds", minimum=2)
    if folds > X.shape[0] + Y.shape[0]:
        raise ValueError(f"`folds` must be at most n + m = {X.shape[0] + Y.shape[0]}, got {folds}")
    state = int(check_seed(seed).generate_state(1)[0] >> 1)
    return float(c2st_value(X, Y, classifier, folds, state))


def c2st_value(X: np.ndarray, Y: np.ndarray, classifier: Any, folds: int, state: int) -> float:
    """:func:`c2st` on checked arrays with an integer ``state``."""
    try:
        from sklearn.base import clone
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import KFold, cross_val_score
    except ImportError:  # pragma: no cover - the extra is installed in CI
        raise ImportError("c2st needs scikit-learn: pip install \"mcref[sklearn]\"") from None
    mu = X.mean(0)
    sd = X.std(0, ddof=1)
    sd[sd < 1e-14] = 1.0
    data = np.concatenate([(X - mu) / sd, (Y - mu) / sd])
    target = np.concatenate([np.zeros(X.shape[0]), np.ones(Y.shape[0])])
    clf = RandomForestClassifier(random_state=state) if classifier is None else clone(classifier)
    cv = KFold(n_splits=folds, shuffle=True, random_state=state)
    return float(np.mean(cross_val_score(clf, data, target, cv=cv, scoring="accuracy")))


def kernel_boot_values(Z: np.ndarray, CX: np.ndarray, CY: np.ndarray, family: int, c: float, k0: float
                       ) -> dict[str, np.ndarray]:
    """The pair sums {"A", "C", "S"} of bootstrap resamples (row b of ``CX``, ``CY``: B × N counts
    of each pooled row in the resampled X-set and Y-set, disjoint supports), counted over
    distinct positions of the resampled sets (a row drawn twice forms a pair with itself, k(0)):
    A = Q(c_X) + k(0)·Σ c(c − 1)/2, C likewise, S = Q(c_X + c_Y) − Q(c_X) − Q(c_Y), Q the
    off-diagonal quadratic form of :func:`mcref.kernels.pairs.pair_forms`; so
    :func:`mmd_from_sums` and :func:`energy_from_sums` give the statistics of the resampled sets."""
    N, d = Z.shape
    tile = kp.TILE
    n_pad = -(-N // tile) * tile
    Zt = np.zeros((d, n_pad))
    Zt[:, :N] = Z.T
    B = CX.shape[0]
    cols = np.concatenate([CX, CY, CX + CY]).astype(np.float64)  # (3B, N)
    Q = np.empty(3 * B)
    with serial_blas():
        for b0 in range(0, 3 * B, BATCH):
            b1 = min(3 * B, b0 + BATCH)
            W = np.zeros((n_pad, b1 - b0))
            W[:N] = cols[b0:b1].T
            Q[b0:b1] = kp.pair_forms(family, c, Zt, W)
    qx, qy, qa = Q[:B], Q[B:2 * B], Q[2 * B:]
    dx = 0.5 * np.sum(CX * (CX - 1.0), axis=1) * k0
    dy = 0.5 * np.sum(CY * (CY - 1.0), axis=1) * k0
    return {"A": qx + dx, "C": qy + dy, "S": qa - qx - qy}


# --------------------------------------------------------------------------- reading a set


def read_samples(source: Any, *, columns: Any = None, delimiter: str | None = None) -> tuple[np.ndarray, list[str]]:
    """A sample set (rows = samples) from a file or an array: ``(array (n, d), column names)``.

    ``source``: a path to a table (CSV/TSV/text, Parquet, Feather, NPZ: the readers of
    :func:`mcref.datasets.from_file`) whose numeric ``columns`` (default: all) form the set, or to
    a ``.npy`` array ((n, d); a 1-D array is one column), or an array in memory.

    Examples
    --------
    >>> X, names = read_samples(np.zeros((3, 2)))
    >>> X.shape, names
    ((3, 2), ['x0', 'x1'])
    """
    from pathlib import Path

    from ..core._input import NeedsTextReader, match_column, numeric_column, open_table

    if isinstance(columns, str):
        columns = [c.strip() for c in columns.split(",") if c.strip()]
    if columns is not None and not list(columns):
        raise ValueError("`columns` is empty: name the columns of the set, or leave it out for all of them")
    if isinstance(source, (str, Path)) and str(source).lower().endswith(".npy"):
        if not Path(source).is_file():
            raise ValueError(f"`path`: file not found: {str(source)!r}")
        source = np.load(source, allow_pickle=False)
    if not isinstance(source, (str, Path)):
        arr = np.asarray(source, dtype=np.float64)
        arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
        if arr.ndim != 2:
            raise ValueError(f"a sample set must be a 2-D array (rows = samples), got shape {arr.shape}")
        names = [f"x{i}" for i in range(arr.shape[1])]
        if columns is not None:
            raise ValueError("`columns` selects columns of a table; an array's columns are taken as they are")
        return as_finite_array(arr, "samples"), names
    where = str(source)
    for fast in (True, False):
        table = open_table(source, delimiter, fast=fast)[1]
        names = list(table.names) if columns is None else [match_column(table, c, "columns", where) for c in columns]
        try:
            return np.column_stack([numeric_column(table, c, "columns", where) for c in names]), names
        except NeedsTextReader:
            continue
    raise AssertionError("unreachable")  # pragma: no cover
