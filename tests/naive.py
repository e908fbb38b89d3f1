"""Slow, obviously-correct reference implementations, written from docs/methods.md ("Statistics", "Binning", "Bootstrap") only.

Nothing here imports mcref: these functions are the independent reference that the
numba kernels are tested against. They favour readability over speed (Python loops,
``np.delete`` jackknife, float formula for the bin starts).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

BINNED = ("ENCE", "ZMSE", "UCE")
MEAN = ("ZMS", "MZ", "VarZ", "MSE", "MV", "RCE", "RCE2", "NLL")
ALL = MEAN + ("CC",) + BINNED


# --------------------------------------------------------------------------- binning


def bin_starts(m: int, n_bins: int) -> np.ndarray:
    """floor(M·i/N + 1/2) for i = 0..N, with plain float arithmetic (docs/methods.md, "Binning")."""
    return np.array([math.floor(m * i / n_bins + 0.5) for i in range(n_bins + 1)], dtype=np.int64)


def bins(u: np.ndarray, n_bins: int) -> list[np.ndarray]:
    """Input indices of each equal-count bin: stable sort of u, then cut at bin_starts."""
    order = np.argsort(u, kind="stable")
    s = bin_starts(u.size, n_bins)
    return [order[s[i]:s[i + 1]] for i in range(n_bins)]


# --------------------------------------------------------------------------- statistics


def zms(E, u):
    return float(np.mean((E / u) ** 2))


def mz(E, u):
    return float(np.mean(E / u))


def varz(E, u):
    return float(np.var(E / u, ddof=1))


def mse(E, u):
    return float(np.mean(E**2))


def mv(E, u):
    return float(np.mean(u**2))


def rce(E, u):
    rmv = math.sqrt(mv(E, u))
    rmse = math.sqrt(mse(E, u))
    return (rmv - rmse) / rmv


def rce2(E, u):
    return (mv(E, u) - mse(E, u)) / mv(E, u)


def nll(E, u):
    return 0.5 * (zms(E, u) + float(np.mean(np.log(u**2))) + math.log(2 * math.pi))


def cc(E, u):
    return float(sps.spearmanr(np.abs(E), u).statistic)


def ence(E, u, n_bins):
    tot = 0.0
    for b in bins(u, n_bins):
        rmv = math.sqrt(np.mean(u[b] ** 2))
        rmse = math.sqrt(np.mean(E[b] ** 2))
        tot += abs(rmv - rmse) / rmv
    return tot / n_bins


def zmse(E, u, n_bins):
    tot = 0.0
    for b in bins(u, n_bins):
        tot += abs(math.log(np.mean((E[b] / u[b]) ** 2)))
    return tot / n_bins


def uce(E, u, n_bins):
    tot = 0.0
    for b in bins(u, n_bins):
        tot += b.size / E.size * abs(np.mean(u[b] ** 2) - np.mean(E[b] ** 2))
    return tot


_FUNCS = {"ZMS": zms, "MZ": mz, "VarZ": varz, "MSE": mse, "MV": mv, "RCE": rce, "RCE2": rce2,
          "NLL": nll, "CC": cc, "ENCE": ence, "ZMSE": zmse, "UCE": uce}


def statistic(name: str, E, u, n_bins: int = 20) -> float:
    """Statistic ``name`` of (E, u); binned ones over ``n_bins`` equal-count bins."""
    E = np.asarray(E, dtype=float)
    u = np.asarray(u, dtype=float)
    if name in BINNED:
        return float(_FUNCS[name](E, u, n_bins))
    return float(_FUNCS[name](E, u))


def predefined_reference(name: str, E, u):
    """The predefined reference of docs/methods.md, "Statistics", or None (simulate)."""
    u = np.asarray(u, dtype=float)
    return {
        "ZMS": 1.0, "MZ": 0.0, "VarZ": 1.0, "RCE": 0.0, "RCE2": 0.0,
        "NLL": 0.5 * (1.0 + float(np.mean(np.log(u**2))) + math.log(2 * math.pi)),
    }.get(name)


# --------------------------------------------------------------------------- jackknife


def jackknife(name: str, E, u, n_bins: int = 20) -> np.ndarray:
    """θ₍ᵢ₎ = statistic on the data without point i, in the input order."""
    E = np.asarray(E, dtype=float)
    u = np.asarray(u, dtype=float)
    return np.array([statistic(name, np.delete(E, i), np.delete(u, i), n_bins) for i in range(E.size)])


# --------------------------------------------------------------------------- intervals


def bca(theta_hat: float, replicates, jack, confidence_level: float = 0.95) -> dict:
    """BCa interval of docs/methods.md, "Bootstrap" written out literally (R nptest ``np.boot``)."""
    dist = np.append(np.asarray(replicates, dtype=float), theta_hat)
    bias = np.mean(dist) - theta_hat
    se = np.std(dist, ddof=1)
    z0 = sps.norm.ppf(np.mean(dist < theta_hat))
    jack = np.asarray(jack, dtype=float)
    d = np.mean(jack) - jack
    a = np.sum(d**3) / (6.0 * np.sum(d**2) ** 1.5)
    alpha = 1.0 - confidence_level
    levels = []
    for za in (sps.norm.ppf(alpha / 2), sps.norm.ppf(1 - alpha / 2)):
        levels.append(sps.norm.cdf(z0 + (z0 + za) / (1.0 - a * (z0 + za))))
    low = np.quantile(dist, levels[0])
    high = np.quantile(dist, levels[1])
    return dict(low=float(low), high=float(high), bias=float(bias), se=float(se), z0=float(z0),
                a=float(a), levels=(float(levels[0]), float(levels[1])))


def percentile(theta_hat: float, replicates, confidence_level: float = 0.95) -> dict:
    dist = np.append(np.asarray(replicates, dtype=float), theta_hat)
    alpha = 1.0 - confidence_level
    return dict(low=float(np.quantile(dist, alpha / 2)), high=float(np.quantile(dist, 1 - alpha / 2)),
                bias=float(np.mean(dist) - theta_hat), se=float(np.std(dist, ddof=1)))


def basic(theta_hat: float, replicates, confidence_level: float = 0.95) -> dict:
    p = percentile(theta_hat, replicates, confidence_level)
    return dict(low=2 * theta_hat - p["high"], high=2 * theta_hat - p["low"], bias=p["bias"], se=p["se"])


def adaptive_starts(xs, n_bins, min_count, log):
    """The adaptive binning rule of ErrViewLib's genIntervals(equiPop = FALSE), step by step
    with NumPy (grid, merges one at a time from the left then the last bin, splits)."""
    m = xs.size
    if m / n_bins < min_count:
        n_bins = m // min_count
    n0 = n_bins
    xl = np.log(xs) if log else xs
    lims = xl[0] + np.arange(n_bins) * (xl[-1] - xl[0]) / n_bins
    starts = np.maximum.accumulate(np.r_[0, np.searchsorted(xl, lims[1:], side="left"), m]).astype(int)
    while True:
        pop = np.diff(starts)
        small = np.flatnonzero(pop[:-1] < min_count)
        if small.size:
            starts = np.delete(starts, small[0] + 1)
        elif pop.size > 1 and pop[-1] < min_count:
            starts = np.delete(starts, -2)
        else:
            break
    pop_max = max(m // n0, 2 * min_count)
    while True:
        pop = np.diff(starts)
        big = np.flatnonzero(pop > pop_max)
        if not big.size:
            return starts
        starts = np.insert(starts, big[0] + 1, starts[big[0]] + pop[big[0]] // 2 + 1)


# --------------------------------------------------------------------------- proper scores


def crps_ensemble_pairs(y: float, x, fair: bool = False) -> float:
    """CRPS of the ensemble x at y by the O(m²) double sum (docs/methods.md, "Proper scoring rules"):
    mean|x − y| − Σ_jk |x_j − x_k| / (2m²), or / (2m(m − 1)) for the fair estimator."""
    x = np.asarray(x, dtype=float)
    m = x.size
    pairs = np.abs(x[:, None] - x[None, :]).sum()
    return float(np.abs(x - y).mean() - pairs / (2.0 * (m * (m - 1) if fair else m * m)))


def crps_integral(y: float, mu: float, sigma: float) -> float:
    """CRPS of N(μ, σ²) at y as ∫ (F(x) − 1[x ≥ y])² dx, by scipy.integrate.quad on each side of y."""
    from scipy.integrate import quad

    d = sps.norm(mu, sigma)
    left = quad(lambda x: d.cdf(x) ** 2, -np.inf, y, epsabs=1e-14, epsrel=1e-13, limit=200)[0]
    right = quad(lambda x: d.sf(x) ** 2, y, np.inf, epsabs=1e-14, epsrel=1e-13, limit=200)[0]  # 1 − F
    return left + right


def interval_score(y: float, lower: float, upper: float, alpha: float) -> float:
    """(r − l) + (2/α)(l − y)·1[y < l] + (2/α)(y − r)·1[y > r], one case, plain Python."""
    s = upper - lower
    if y < lower:
        s += 2.0 / alpha * (lower - y)
    if y > upper:
        s += 2.0 / alpha * (y - upper)
    return s


def jack_cc_direct(u, ae, ru, re):
    """Leave-one-out Spearman ρ by the direct O(M) rank update per left-out point (O(M²)):
    the ranks above the left-out value drop by 1, the tied ones by ½ (centred at M/2)."""
    m = u.size
    mid = 0.5 * m
    out = np.empty(m)
    for j in range(m):
        x = ru - mid - np.where(u > u[j], 1.0, np.where(u == u[j], 0.5, 0.0))
        y = re - mid - np.where(ae > ae[j], 1.0, np.where(ae == ae[j], 0.5, 0.0))
        keep = np.arange(m) != j
        x, y = x[keep], y[keep]
        out[j] = np.sum(x * y) / np.sqrt(np.sum(x * x) * np.sum(y * y))
    return out


# --------------------------------------------------------------------------- dependent rows


def cluster_weights(counts, gid) -> np.ndarray:
    """Cluster bootstrap as multiplicities: each row taken as often as its group was drawn."""
    counts = np.asarray(counts)
    return np.array([counts[g] for g in gid], dtype=np.int64)


def block_rows(m: int, block: int, scheme: str, draw_int, draw_double) -> list[int]:
    """The order positions of a block bootstrap resample, written out block by block: blocks of
    ``block`` consecutive positions (``"moving"``: start in [0, M − ℓ]; ``"circular"``: start in
    [0, M), wrapping; ``"stationary"``: start in [0, M), length 1 + ⌊ln(1 − U)/ln(1 − 1/ℓ)⌋,
    wrapping) until M positions, the last block cut short. ``draw_int(n)`` and ``draw_double()``
    are the random source (uniform in [0, n) and in [0, 1))."""
    rows: list[int] = []
    while len(rows) < m:
        if scheme == "moving":
            s, length = draw_int(m - block + 1), block
        elif scheme == "circular":
            s, length = draw_int(m), block
        else:
            s = draw_int(m)
            length = 1 if block == 1 else 1 + math.floor(math.log(1.0 - draw_double()) / math.log(1.0 - 1.0 / block))
        for k in range(min(length, m - len(rows))):
            rows.append((s + k) % m)
    return rows


def group_jackknife(name: str, E, u, groups, n_bins: int = 20) -> dict:
    """θ₍g₎ = statistic on the data without the rows of group g, per group label."""
    E, u, groups = np.asarray(E, float), np.asarray(u, float), np.asarray(groups)
    return {g: statistic(name, E[groups != g], u[groups != g], n_bins) for g in np.unique(groups)}


def cluster_se_zms(z, groups) -> float:
    """Cluster-robust standard error of ⟨z²⟩: √(G/(G−1)·Σ_g (Σ_{i∈g}(z_i² − ⟨z²⟩))²)/M."""
    x = np.asarray(z, float) ** 2
    labels = np.unique(groups)
    sums = np.array([np.sum(x[groups == g] - x.mean()) for g in labels])
    return float(math.sqrt(labels.size / (labels.size - 1) * np.sum(sums ** 2)) / x.size)


def icc_anova(y, groups) -> float:
    """One-way ANOVA intra-class correlation for unequal group sizes, written out."""
    y = np.asarray(y, float)
    labels = np.unique(groups)
    G, M = labels.size, y.size
    means = {g: y[groups == g].mean() for g in labels}
    sizes = {g: np.sum(groups == g) for g in labels}
    msb = sum(sizes[g] * (means[g] - y.mean()) ** 2 for g in labels) / (G - 1)
    msw = sum(np.sum((y[groups == g] - means[g]) ** 2) for g in labels) / (M - G)
    n0 = (M - sum(n * n for n in sizes.values()) / M) / (G - 1)
    return float((msb - msw) / (msb + (n0 - 1) * msw))


# --------------------------------------------------------------------------- SKCE (kernel calibration error)


def skce_h_normal_gauss(yi, mi, si, yj, mj, sj, l_p=1.0, l_y=1.0):
    """The SKCE pair function for N(μ, σ²) predictions, k_P = exp(−W₂/ℓ_P), Gaussian k_Y of
    length ℓ_Y, from the Gaussian integrals written out (Widmann et al., ICLR 2021)."""
    kp = math.exp(-math.hypot(mi - mj, si - sj) / l_p)
    v = l_y * l_y

    def mean_k(m, s2, t):  # E exp(−(Z − t)²/(2ℓ²)), Z ~ N(m, s2)
        return math.sqrt(v / (v + s2)) * math.exp(-(m - t) ** 2 / (2.0 * (v + s2)))

    return kp * (math.exp(-(yi - yj) ** 2 / (2.0 * v)) - mean_k(mi, si * si, yj) - mean_k(mj, sj * sj, yi)
                 + mean_k(mi - mj, si * si + sj * sj, 0.0))


def skce_h_samples(yi, xi, yj, xj, kernel="gaussian", l_p=1.0, l_y=1.0):
    """The SKCE pair function for ensembles (members ``xi``, ``xj``): the expectations as plain
    averages over the members and member pairs, W₂ from the sorted members."""
    if kernel == "gaussian":
        def k(a, b):
            return math.exp(-(a - b) ** 2 / (2.0 * l_y * l_y))
    else:
        def k(a, b):
            return math.exp(-abs(a - b) / l_y)
    xs, zs = sorted(xi), sorted(xj)
    w2 = math.sqrt(sum((a - b) ** 2 for a, b in zip(xs, zs)) / len(xs))
    e1 = sum(k(a, yj) for a in xi) / len(xi)
    e2 = sum(k(yi, b) for b in xj) / len(xj)
    ee = sum(k(a, b) for a in xi for b in xj) / (len(xi) * len(xj))
    return math.exp(-w2 / l_p) * (k(yi, yj) - e1 - e2 + ee)


def skce_estimate(h, n, estimator="unbiased", block_size=2):
    """An SKCE estimator from its definition, with ``h(i, j)`` the pair function: the mean of
    h over i < j (unbiased), over i, j including i = j (biased), or the mean over the n // B
    blocks of B consecutive rows of the within-block means over i < j (block)."""
    if estimator == "unbiased":
        return sum(h(i, j) for i in range(n) for j in range(i + 1, n)) / (n * (n - 1) / 2)
    if estimator == "biased":
        return sum(h(i, j) for i in range(n) for j in range(n)) / (n * n)
    B = block_size
    blocks = [sum(h(i, j) for i in range(k * B, (k + 1) * B) for j in range(i + 1, (k + 1) * B)) / (B * (B - 1) / 2)
              for k in range(n // B)]
    return sum(blocks) / len(blocks)
