r"""Studentized bootstrap-t tests of the scale statistics and of RCE (docs/methods.md, "Scale test").

The conditional rule of :func:`mcref.validate` tests the average calibration (the scale) by

* **ZMS, NLL** — H0: E[Z²] = 1, with x = Z², :math:`\bar x` its mean and
  :math:`s_x^2 = \overline{x^2} - \bar x^2`:
  :math:`T = (\bar x - 1)/\sqrt{s_x^2/M}`;
* **MZ** — H0: E[Z] = 0, :math:`T = \bar z/\sqrt{s_z^2/M}`;
* **VarZ** — H0: Var Z = 1, with central moments m₂, m₄ of Z and V = M·m₂/(M − 1):
  :math:`T = (V - 1)/(\tfrac{M}{M-1}\sqrt{(m_4 - m_2^2)/M})`;
* **RCE** — H0: E[E²] = E[u²] (RMV = RMSE), with e = E², v = u², R = Σe/Σv (RCE = 1 − √R)
  and the delta-method standard error :math:`se_R = \sqrt{\sum_i (e_i - R v_i)^2}/\sum_i v_i`:
  :math:`T = (R - 1)/se_R`.

For RCE, T is referred to its **studentized bootstrap** distribution (bootstrap-t; Efron &
Tibshirani 1993, ch. 12; Hall 1992, §3.5): for B resamples of the (E, u) pairs
:math:`T^*_b = (\hat\theta^*_b - \hat\theta)/se^*_b`, the same studentization on the resample,
centred at the data's estimate, and the equal-tailed p-value

.. math:: p = \min\Big(1, 2\min\Big(\frac{1 + \#\{T^*_b \ge T\}}{1 + B},
          \frac{1 + \#\{T^*_b \le T\}}{1 + B}\Big)\Big).

For the scale statistics of Z, T is referred to two laws, and the test rejects only when both
reject (an **intersection test**, p = max(p_boot, p_t)):

* the bootstrap-t above (resamples of the Z), right whenever Z² has a finite variance and
  the studentized mean is smooth enough (Laplace, skewed, uniform, normal errors);
* the same T on B draws of M unit-variance t(ν̂), ν̂ the maximum-likelihood ν of Z
  (:func:`mcref.fit_t`), θ against its true value: right when the errors are t-like, where
  the bootstrap of a mean of Z² with infinite or barely finite variance (t(4)) is liberal.

With clusters (dependent rows, docs/methods.md "Dependent test sets") RCE is referred to both laws
too: its cluster bootstrap-t alone is liberal when a few heavy-tailed cluster sums carry the
variance (7–9 % at α = 0.05 in ``benchmarks/study_dependence_rce.py``), and the second law is its
T on B draws of E = u·z on the data's u and clusters, with random-intercept errors
z_i = √ρ̂·η_g + √(1 − ρ̂)·t_i (η_g normal per cluster, t_i unit-variance t(ν̂), ρ̂ the larger of
the intra-group correlation of Z and the root of that of Z²;
:func:`mcref.kernels.units.t_rce_cluster_sums`): independent t(ν̂) rows alone (ρ = 0) miss the
extra variance of correlated cluster sums of E² and were as liberal as the bootstrap. Without
clusters RCE keeps the bootstrap-t alone.

If either reference is the true null law of T, P(max(p_boot, p_t) ≤ α) ≤ α: the intersection
keeps the size of the better of the two in every cell. Unlike the Monte Carlo test of ZMS
itself under t(ν̂) (the rule before), T is studentized by the data's own fourth moment, so a
scale error cannot hide in ν̂: a Laplace Z is fitted by ν̂ ≈ 3, whose ZMS law is wide enough
to hide a 25 % error, but whose law of T is not. The measured size and power are in
docs/methods.md ("Scale test", ``benchmarks/study_scale.py``).

Several scale statistics are combined (the scale part of the joint verdict) by
:func:`mcref.verdict._joint.joint_test` on each pool of T (two-sided; the minp rule of the
consistency part, the dependence between the statistics taken from the pool), and the
maximum of the two joint p-values.

The resampling is one serial numba kernel (:func:`mcref.kernels.resample.resampled_sums`) run
by threads over ranges of replicates, each replicate with its own xoshiro256** stream (the state of its block of
:data:`CHUNK`, spawned from ``seed``, jumped: :func:`_streams`): the result depends on the seed
only, never on the number of threads.

References
----------
.. [1] P. Hall, *The Bootstrap and Edgeworth Expansion*, Springer (1992), §3.5–3.6.
.. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall
   (1993), ch. 12 (bootstrap-t) and ch. 16 (hypothesis tests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..core._prepared import u_then_E
from ..kernels.resample import PAIRS, PLAIN, POWERS

__all__ = ["ScaleTest", "bootstrap_sums", "scale_test", "rce_test", "tail_ratio", "scale_unreliable", "SCALE_TESTED",
           "ALPHA_SIDAK", "TAIL_RATIO_LIMIT"]

#: the statistics with a bootstrap-t scale test (the null value of each)
SCALE_TESTED = {"ZMS": 1.0, "NLL": 1.0, "MZ": 0.0, "VarZ": 1.0}
#: per-part level of the Šidák combination of two parts at α = 0.05: 1 − √0.95
ALPHA_SIDAK = 1.0 - math.sqrt(0.95)
#: replicates per stream block of the resampling kernels: one ``SeedSequence`` child per block, and
#: each replicate of a block its own stream (the block's state jumped: :func:`_streams`), so that every
#: replicate is a task for the threads (the sequential rounds' first 64 replicates are 64 tasks)
CHUNK = 8
#: a fitted ν̂ beyond this is the normal D
T_NORMAL_NU = 1e6


@dataclass(frozen=True)
class ScaleTest:
    """Result of :func:`scale_test` or :func:`rce_test`.

    Attributes
    ----------
    t : dict[str, float]
        The data's studentized statistic T per statistic.
    p : dict[str, float]
        Its p-value: max(p_boot, p_t) for the scale statistics and for RCE with clusters, the
        bootstrap-t p for RCE without.
    p_joint : float
        The minp combination of the statistics' tests (the larger of
        :func:`mcref.verdict._joint.joint_test` on each pool of T); ``p`` for a single statistic.
    n_boot : int
    tstar : ndarray, shape (S, B)
        The bootstrap T*, one row per statistic.
    """

    t: dict[str, float]
    p: dict[str, float]
    p_joint: float
    n_boot: int
    tstar: np.ndarray = field(repr=False)
    #: the two tests apart: bootstrap-t and t(ν̂) p-values (p = their maximum), and ν̂
    p_boot: dict[str, float] = field(default_factory=dict)
    p_t: dict[str, float] = field(default_factory=dict)
    nu: float = math.nan
    #: T of the t(ν̂) draws, one row per statistic (None for RCE)
    tsim: np.ndarray | None = field(default=None, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.t)


def bootstrap_sums(X, n_boot: int, seed) -> np.ndarray:
    """Column sums of ``n_boot`` bootstrap resamples of the rows of X (shape (M, K)):
    array (n_boot, K); ``seed`` an int or SeedSequence (one child per block of :data:`CHUNK`
    replicates, one stream per replicate: :func:`_streams`)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"`X` must be a 2-D array of rows to resample, got shape {X.shape}")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return _resampled(X, ss, 0, int(n_boot))


def _z_columns(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the scale test as the resampling reads them (z itself, one column: it makes
    z², z³, z⁴ as it reads, :data:`mcref.kernels.resample.POWERS`) and the column sums of
    (z, z², z³, z⁴), x = z·z, x·z, x·x (the same bits as ``np.column_stack([z, x, x * z, x * x])``'s),
    on numba's threads (:func:`mcref.kernels.resample.z_power_sums`: sums by blocks of rows, added
    in block order, the same bits for any thread count; its serial twin where they may not run,
    :func:`mcref.parallel.parallel_kernel`)."""
    from ..kernels.resample import COLUMN_ROWS, z_power_sums
    from ..parallel import parallel_kernel

    part = np.empty((-(-z.size // COLUMN_ROWS), 4))
    parallel_kernel(z_power_sums)(z, part)
    return np.ascontiguousarray(z, dtype=np.float64).reshape(-1, 1), _block_sums(part)


def _block_sums(part: np.ndarray) -> np.ndarray:
    """Column sums of the blocks' sums ``part``, added in block order."""
    obs = part[0].copy()
    for row in part[1:]:
        obs += row
    return obs


def _z_stat(name: str, sums: np.ndarray, m: int, null):
    """(θ, se) of a Z statistic from the power sums Σz, Σz², Σz³, Σz⁴ (rows of ``sums``)."""
    a1, a2, a3, a4 = (sums[..., j] / m for j in range(4))
    if name in ("ZMS", "NLL"):
        return a2, np.sqrt(np.maximum(a4 - a2 * a2, 0.0) / m)
    if name == "MZ":
        return a1, np.sqrt(np.maximum(a2 - a1 * a1, 0.0) / m)
    m2 = a2 - a1 * a1
    m4 = a4 - 4.0 * a1 * a3 + 6.0 * a1 * a1 * a2 - 3.0 * a1 ** 4
    c = m / (m - 1.0)
    return c * m2, c * np.sqrt(np.maximum(m4 - m2 * m2, 0.0) / m)


def _studentize(theta, se, centre):
    """(θ − centre)/se, with 0/0 → 0 and x/0 → ±inf (a degenerate resample)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (theta - centre) / se
    return np.where(theta == centre, 0.0, t)


def _check(n_boot, names=None):
    from ..core._checks import check_int

    n_boot = check_int(n_boot, "n_boot", minimum=2)
    if names is not None:
        bad = [n for n in names if n not in SCALE_TESTED]
        if bad or not names:
            raise ValueError(f"`stats` must list statistics among {', '.join(SCALE_TESTED)}, got {list(names)!r}")
    return n_boot


def _cluster_columns(z: np.ndarray, gid: np.ndarray) -> np.ndarray:
    """Cluster-level rows (n_g, S1_g, S2_g, n_g², S1_g², S2_g², n_g S1_g, n_g S2_g, S1_g S2_g),
    S_p = Σ z^p over cluster g: their column sums are every moment the cluster-studentized
    scale statistics need (:func:`_cluster_z_stat`), and a cluster bootstrap resamples these rows."""
    n = np.bincount(gid).astype(np.float64)
    s1 = np.bincount(gid, z)
    s2 = np.bincount(gid, z * z)
    return np.column_stack([n, s1, s2, n * n, s1 * s1, s2 * s2, n * s1, n * s2, s1 * s2])


def _cluster_z_stat(name: str, sums: np.ndarray, n_clusters: int):
    r"""(θ, se) of a Z statistic from the cluster moments of :func:`_cluster_columns` (rows of
    ``sums``), with the cluster-robust (sandwich) standard error: for the influence ψ_i of θ
    (ZMS: z² − θ; MZ: z − θ; VarZ: (z − z̄)² − m₂) and its cluster sums Ψ_g,
    :math:`se^2 = \frac{G}{G-1}\sum_g \Psi_g^2 / M^2` (Cameron, Gelbach & Miller 2008)."""
    M, S1, S2, nn, q11, q22, n1, n2, q12 = (sums[..., j] for j in range(9))
    c = n_clusters / (n_clusters - 1.0)
    a1, a2 = S1 / M, S2 / M
    if name in ("ZMS", "NLL"):
        th, psi = a2, q22 - 2.0 * a2 * n2 + a2 * a2 * nn
    elif name == "MZ":
        th, psi = a1, q11 - 2.0 * a1 * n1 + a1 * a1 * nn
    else:  # VarZ: Ψ_g = S2 − 2 z̄ S1 + (z̄² − m₂) n_g
        m2 = a2 - a1 * a1
        a, b = -2.0 * a1, a1 * a1 - m2
        psi = q22 + a * a * q11 + b * b * nn + 2.0 * a * q12 + 2.0 * b * n2 + 2.0 * a * b * n1
        return M / (M - 1.0) * m2, M / (M - 1.0) * np.sqrt(np.maximum(c * psi, 0.0)) / M
    return th, np.sqrt(np.maximum(c * psi, 0.0)) / M


def scale_test(Z, stats: Sequence[str] = ("ZMS",), *, n_boot: int = 5000, seed=None, clusters=None,
               nu: float | None = None, cache: dict | None = None) -> ScaleTest:
    r"""Scale test of Z = E/u (module docstring): the intersection of the studentized
    bootstrap-t and of the studentized Monte Carlo test under the unit-variance t(ν̂).

    Parameters
    ----------
    Z : array_like, shape (M,)
        Finite z-scores, M ≥ 3, not all equal.
    stats : sequence of {"ZMS", "NLL", "MZ", "VarZ"}
        The statistics to test (NLL = ½(ZMS + ⟨ln u²⟩ + ln 2π) has the T of ZMS).
    n_boot : int, default: 5000
        Bootstrap resamples B, and draws of the t(ν̂) reference.
    seed : None, int or SeedSequence
    clusters : array_like of int, shape (M,), optional
        Each Z's cluster (dependent rows, docs/methods.md "Dependent test sets"): T is
        studentized by the cluster-robust standard error (cluster sums of the influence,
        :func:`_cluster_z_stat`), the bootstrap-t resamples whole clusters (Cameron, Gelbach &
        Miller 2008), and the t(ν̂) reference lays independent t(ν̂) rows out in the same
        clusters and studentizes them the same way.

    Returns
    -------
    ScaleTest

    Raises
    ------
    ValueError
        Bad Z or ``stats``; a fitted ν̂ ≤ 2 (no unit-variance t: :func:`scale_tests` calls
        the statistics unreliable instead).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> res = scale_test(1.25 * rng.laplace(0, 2 ** -0.5, 2000), n_boot=999, seed=0)
    >>> res.p["ZMS"] < 0.01  # a 25 % scale error with Laplace errors
    True
    """
    from .._distfit import fit_t
    from ..core._checks import as_float_array
    from ..kernels.resample import t_power_sums, t_power_sums_all
    from ..kernels.variates import t_ziggurat

    stats = [stats] if isinstance(stats, str) else list(stats)
    n_boot = _check(n_boot, stats)
    z = as_float_array(Z, "Z")
    if z.ndim != 1 or z.size < 3:
        raise ValueError(f"`Z` must be a 1-D array of at least 3 values, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("`Z` must be finite")
    if np.all(z == z[0]):
        raise ValueError("`Z` is constant: no studentized test exists")
    zs = np.sort(z) if clusters is None else None  # resampled in sorted order (below); the fit's start reads it
    nu = float(fit_t(z, sorted_z=zs).nu) if nu is None else float(nu)  # nu: the fit of these Z, already made
    if not nu > 2.0:
        raise ValueError(f"the Student t fitted to Z has nu = {nu:.3g} <= 2: no unit-variance t exists")
    m = z.size
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    ss_boot, ss_t = ss.spawn(2)
    if clusters is not None:
        from ..kernels.units import t_cluster_sums

        gid = np.asarray(clusters, dtype=np.int64)
        X = _cluster_columns(z, gid)
        G = X.shape[0]
        sizes, tab = np.bincount(gid).astype(np.int64), t_ziggurat(nu if nu < T_NORMAL_NU else np.inf)
        tsums = _tasks(lambda states, c0, c1, out: t_cluster_sums(sizes, *tab, states, 1, c0, c1, out),
                       _streams(ss_t, 0, n_boot), 9, m, (0, n_boot))
        return _finish(stats, lambda n, s: _cluster_z_stat(n, s, G), X.sum(axis=0), bootstrap_sums(X, n_boot, ss_boot),
                       {n: SCALE_TESTED[n] for n in stats}, n_boot, tsums=tsums, nu=nu)
    # resampled in sorted order: the test is a function of the multiset of Z (the same p in any row order)
    X, obs = _z_columns(zs)
    sums = _round_sums(cache, "z", n_boot, lambda b, n: _resampled(X, ss_boot, b, n, POWERS))
    nu_t = nu if nu < T_NORMAL_NU else np.inf
    tab = t_ziggurat(nu_t)
    tsums = _round_sums(cache, "t", n_boot, lambda b, n: _tasks(
        lambda states, c0, c1, out: t_power_sums(m, *tab, states, 1, c0, c1, out), _streams(ss_t, b, n), 4, m, (b, n),
        lambda states, out: t_power_sums_all(m, *tab, states, 1, out)))
    return _finish(stats, lambda n, s: _z_stat(n, s, m, SCALE_TESTED[n]), obs, sums,
                   {n: SCALE_TESTED[n] for n in stats}, n_boot, tsums=tsums, nu=nu)


def _finish(names, stat, obs, sums, nulls, n_boot, tsums=None, nu=math.nan) -> ScaleTest:
    from ._joint import joint_test

    t, tstar, tsim = {}, [], []
    for n in names:
        th, se = stat(n, obs)
        t[n] = float(_studentize(th, se, nulls[n]))
        ths, ses = stat(n, sums)
        tstar.append(_studentize(ths, ses, th))
        if tsums is not None:
            thn, sen = stat(n, tsums)
            tsim.append(_studentize(thn, sen, nulls[n]))
    tstar = np.asarray(tstar)
    obs_t = [t[n] for n in names]
    jb = joint_test(tstar, obs_t, "two-sided")
    p_boot = {n: float(jb.p_stats[i]) for i, n in enumerate(names)}
    p_joint = jb.p if len(names) > 1 else p_boot[names[0]]
    p_t = {}
    if tsums is not None:
        tsim = np.asarray(tsim)
        jt = joint_test(tsim, obs_t, "two-sided")
        p_t = {n: float(jt.p_stats[i]) for i, n in enumerate(names)}
        p_joint = max(p_joint, jt.p if len(names) > 1 else p_t[names[0]])
    p = {n: max(p_boot[n], p_t.get(n, 0.0)) for n in names}
    return ScaleTest(t=t, p=p, p_joint=float(p_joint), n_boot=n_boot, tstar=tstar, p_boot=p_boot, p_t=p_t, nu=nu,
                     tsim=np.asarray(tsim) if tsums is not None else None)


def _streams(ss: np.random.SeedSequence, b: int, n: int) -> np.ndarray:
    """The streams of replicates b ≤ r < n: one per replicate, the jumps of the state of its block
    of :data:`CHUNK` (:func:`mcref.kernels.rng.repeat_states`), ``ss`` not spawned yet. The kernels
    take them with ``chunk`` = 1: a replicate is one task, whatever the thread count."""
    from ..kernels.rng import chunk_states, repeat_states

    b0 = b // CHUNK
    return repeat_states(chunk_states(ss, -(-n // CHUNK))[b0:], CHUNK, b - b0 * CHUNK, n - b0 * CHUNK)


def _tasks(kernel, states: np.ndarray, k: int, m: int, span: tuple[int, int], region=None) -> np.ndarray:
    """The rows (one per replicate, ``k`` sums each) of ``kernel(states, c0, c1, out)`` over the
    replicates' ``states``: one ``prange`` region ``region(states, out)`` when given and the round is
    short (:func:`mcref.parallel.run_region`), else threads over ranges of replicates
    (:func:`mcref.parallel.over_tasks`); a replicate is ``m`` elements of work, recorded for the
    parallel profile with ``span``. The same rows, bit for bit, either way."""
    from ..parallel import over_tasks, run_region

    n = states.shape[0]
    out = np.empty((n, k))
    if region is None or not run_region(lambda: region(states, out), n, float(m), phase="scale tests", span=span):
        over_tasks(lambda c0, c1: kernel(states, c0, c1, out), n, float(m), phase="scale tests", span=span)
    return out


def _resampled(X: np.ndarray, ss: np.random.SeedSequence, b: int, n: int, expand: int = PLAIN) -> np.ndarray:
    """Replicates b ≤ r < n of :func:`bootstrap_sums` (X, n, ss), ``ss`` not spawned yet; the columns
    of X as ``expand`` makes them (:data:`mcref.kernels.resample.PLAIN`, ``POWERS``, ``PAIRS``)."""
    from ..kernels.resample import resampled_sums, resampled_sums_all

    X = np.ascontiguousarray(X, dtype=np.float64)
    k = {PLAIN: X.shape[1], POWERS: 4, PAIRS: 5}[expand]
    return _tasks(lambda states, c0, c1, out: resampled_sums(X, expand, states, 1, c0, c1, out), _streams(ss, b, n),
                  k, X.shape[0], (b, n), lambda states, out: resampled_sums_all(X, expand, states, 1, out))


def _round_sums(cache: dict | None, key: str, n: int, compute) -> np.ndarray:
    """The sums of replicates 0 ≤ r < n: those an earlier call kept in ``cache[key]`` (the first b)
    and ``compute(b, n)`` for the rest (validate's sequential rounds: each round adds replicates
    to the same streams instead of rerunning them; the same bits as one call of n)."""
    old = cache.get(key) if cache is not None else None
    b = 0 if old is None or old.shape[0] > n else old.shape[0]
    new = compute(b, n)
    out = new if b == 0 else np.concatenate([old, new])
    if cache is not None:
        cache[key] = out
    return out


def _rce_stat(sums: np.ndarray):
    se_, sv, see, svv, sev = (sums[..., j] for j in range(5))
    r = se_ / sv
    return r, np.sqrt(np.maximum(see - 2.0 * r * sev + r * r * svv, 0.0)) / sv


def rce_test(E, u, *, n_boot: int = 5000, seed=None) -> ScaleTest:
    r"""Studentized pair-bootstrap-t test of RCE = 0, i.e. R = ΣE²/Σu² = 1 (module docstring).

    Parameters
    ----------
    E, u : array_like, shape (M,)
        Errors and uncertainties (u > 0), M ≥ 3.
    n_boot : int, default: 5000
    seed : None, int or SeedSequence

    Returns
    -------
    ScaleTest
        With the single statistic ``"RCE"`` (T of R − 1: RCE = 1 − √R, so T > 0 when RCE < 0).

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> u = np.sqrt(1 / rng.gamma(4, 0.25, 2000)); E = u * rng.standard_normal(2000)
    >>> rce_test(E, u, n_boot=999, seed=0).p["RCE"] > 0.05
    True
    """
    from ..core._checks import check_E_u

    E, u = check_E_u(E, u, min_size=3)
    return _rce_test(E, u, _check(n_boot), seed)


def _rce_rho(z: np.ndarray, gid: np.ndarray) -> float:
    """The within-cluster correlation of the RCE reference's random-intercept errors: the larger of
    the intra-group correlation of Z and the square root of that of Z² (for correlated normal
    errors corr(z_i², z_j²) = ρ²), in [0, 0.95]."""
    from ..core._dependence import icc

    r1, r2 = icc(z, gid), icc(z * z, gid)
    r = max(r1 if r1 == r1 else 0.0, math.sqrt(r2) if r2 == r2 and r2 > 0 else 0.0)
    return float(min(max(r, 0.0), 0.95))


def _rce_columns(E: np.ndarray, v: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The rows (e, v) of the RCE scale test as the resampling reads them (it makes e², v², e·v as
    it reads, :data:`mcref.kernels.resample.PAIRS`), e = E²/``scale`` (``v``: u² already divided by
    ``scale``; the same bits as the column stack of :func:`_rce_test`'s clustered branch, no M-sized
    temporaries), and the column sums of (e, v, e², v², e·v) as :func:`_z_columns`'s, on numba's
    threads (:func:`mcref.kernels.resample.rce_columns_all`; its serial twin where they may not run,
    :func:`mcref.parallel.parallel_kernel`)."""
    from ..kernels.resample import COLUMN_ROWS, rce_columns_all
    from ..parallel import parallel_kernel

    X = np.empty((v.size, 2))
    part = np.empty((-(-v.size // COLUMN_ROWS), 5))
    parallel_kernel(rce_columns_all)(E, v, scale, X, part)
    return X, _block_sums(part)


def _rce_test(E: np.ndarray, u: np.ndarray, n_boot: int, seed, clusters=None, sorted_pairs=None,
              cache: dict | None = None) -> ScaleTest:
    """:func:`rce_test` on arrays checked by the caller (``validate`` checks once). The pairs are
    resampled in the order of (u, E): the test is a function of the multiset of pairs (the same p
    in any row order). ``clusters`` (each row's cluster): the rows of the bootstrap and of the
    delta-method se are the clusters' sums of E² and u² (the cluster-robust se, cluster
    bootstrap-t; Cameron, Gelbach & Miller 2008), and p = max(p_boot, p_t) with the random-intercept
    t(ν̂) reference in the same clusters (module docstring, :func:`_rce_rho`; its draws come from a
    child of ``seed`` spawned after the bootstrap's, which are those of the bootstrap-t alone).
    ``sorted_pairs``: (E, u) already in that order (a :class:`~mcref.core._prepared.Prepared` whose u
    has no ties), used instead of a sort and two copies of M values."""
    if sorted_pairs is not None:
        E, u = sorted_pairs
    elif clusters is None:
        o = np.lexsort((E, u))
        E, u = E[o], u[o]
        del o
    v = u * u
    scale = v.mean()
    v /= scale  # in place: the same bits as v / scale
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    tsums, nu = None, math.nan
    if clusters is not None:
        from .._distfit import fit_t
        from ..kernels.units import t_rce_cluster_sums
        from ..kernels.variates import t_ziggurat

        e = E * E / scale
        gid = np.asarray(clusters, dtype=np.int64)
        pts = np.argsort(gid, kind="stable")  # each cluster's points consecutive
        cstart = np.concatenate(([0], np.cumsum(np.bincount(gid)))).astype(np.int64)
        vpts = np.ascontiguousarray(v[pts])
        z = E / u
        nu = float(fit_t(z).nu)
        rho = _rce_rho(z, gid)
        e, v = np.bincount(gid, e), np.bincount(gid, v)
        obs = np.column_stack([e, v, e * e, v * v, e * v]).sum(axis=0)  # G rows
        X = np.column_stack([e, v])  # resampled as the unclustered rows are (PAIRS)
    else:
        X, obs = _rce_columns(E, v, scale)
        del E, u, v
    sums = _round_sums(cache if clusters is None else None, "rce", n_boot, lambda b, n: _resampled(X, ss, b, n, PAIRS))
    if clusters is not None and nu > 2.0:  # the t(ν̂) reference in the same clusters (after the bootstrap's streams)
        tab = t_ziggurat(nu if nu < T_NORMAL_NU else np.inf)
        tsums = _tasks(lambda states, c0, c1, out: t_rce_cluster_sums(vpts, cstart, *tab, rho, states, 1, c0, c1, out),
                       _streams(ss.spawn(1)[0], 0, n_boot), 5, vpts.size, (0, n_boot))
    return _finish(["RCE"], lambda n, s: _rce_stat(s), obs, sums, {"RCE": 1.0}, n_boot, tsums=tsums, nu=nu)


#: the scale test's tail screen (docs/methods.md, "Scale test"): Z² fails the shape screen
#: (β_GM > 0.8) *and* the tail ratio of |Z| exceeds this (power-law rather than exponential tails)
TAIL_RATIO_LIMIT = 1.75


def tail_ratio(Z) -> float:
    r"""Tail ratio of |Z|: :math:`r = (q_{0.995} - q_{0.95})/(q_{0.95} - q_{0.5})` (NumPy's
    type-7 quantiles of |Z|). Exponential tails (Laplace) give r ≈ 1 for any scale, a normal
    Z 0.66, power-law tails |Z|^{-α} r → 10^{1/α} (t(4) ≈ 1.4, t(3) ≈ 1.8 at M = 10⁴): the
    quantity that separates a Laplace Z (finite moments: the bootstrap-t holds) from a t(3)
    (infinite Var Z²: it does not), which β_GM of Z² cannot (0.81 against 0.84)."""
    a = np.abs(np.asarray(Z, dtype=np.float64))
    q = np.quantile(a, [0.5, 0.95, 0.995])
    den = q[1] - q[0]
    return float((q[2] - q[1]) / den) if den > 0 else math.inf


def scale_unreliable(Z, beta_z2: float) -> bool:
    """The scale test's screen: ``True`` (the scale statistics are ``unreliable``) when Z² fails
    the shape screen (``beta_z2`` > 0.8, :class:`mcref.shape.ShapeScreen`) and |Z| has power-law
    tails (:func:`tail_ratio` > :data:`TAIL_RATIO_LIMIT`)."""
    return bool(beta_z2 > 0.8 and tail_ratio(Z) > TAIL_RATIO_LIMIT)


@dataclass(frozen=True)
class ScaleTests:
    """The conditional rule's scale tests of one table (:func:`scale_tests`), what
    :func:`mcref.validate` and :func:`mcref.verdict._joint.conditional_joint_verdict` read.

    Attributes
    ----------
    p : dict[str, float]
        Bootstrap-t p-value per tested statistic (the scale statistics and RCE of the table).
    unreliable : dict[str, bool]
        The scale test's screen per scale statistic (:func:`scale_unreliable`).
    scale : ScaleTest or None
        The test of the scale statistics (their joint p for the scale part).
    label : str
        The scale part's D as the joint verdict names it.
    note : str
        A note for the table ("" when none).
    """

    p: dict[str, float]
    unreliable: dict[str, bool]
    scale: ScaleTest | None
    label: str
    note: str = ""
    #: registered permutation-invariant statistics without a studentized form: the rule before,
    #: their Monte Carlo test under t(ν̂) (:func:`mcref.verdict._joint.scale_simulation`), and their estimates
    user: Any = None
    estimates: dict[str, float] = field(default_factory=dict)

    def joint(self, names: Sequence[str]):
        """The scale part as a :class:`mcref.verdict._joint.JointTest` of ``names`` (scale statistics)."""
        from ._joint import JointTest, joint_test
        from ..stats import info

        res = self.scale
        own = [n for n in names if res is not None and n in res.names]
        ps = []
        if own:
            idx = [res.names.index(n) for n in own]
            if len(idx) == len(res.names):
                ps.append(res.p_joint)
            elif len(idx) == 1:
                ps.append(res.p[own[0]])
            else:
                obs = [res.t[n] for n in own]
                ps.append(max(joint_test(res.tstar[idx], obs).p, joint_test(res.tsim[idx], obs).p))
        other = [n for n in names if n not in own]
        if other:  # the registered ones, under t(ν̂) as before
            sm = self.user
            ps.append(joint_test(sm.samples[0][[sm.names.index(n) for n in other]],
                                 [self.estimates[n] for n in other], [info(n).alternative for n in other]).p)
        p = min(1.0, len(ps) * min(ps))  # Bonferroni over the two kinds (dependent: both read Z)
        n = res.n_boot if res is not None else self.user.n_mc
        return JointTest(p=float(p), se=float(math.sqrt(p * (1.0 - p) / n)), statistic=float(-p),
                         p_stats=np.array([self.p[x] for x in names]), n_mc=n, combine="minp")


def scale_tests(names: Sequence[str], E, u, *, n_boot: int, seed=None, estimates=None,
                prep=None, units=None, cache: dict | None = None, only=None) -> ScaleTests | None:
    """The bootstrap-t tests of the conditional rule for the statistics ``names`` of a table:
    the scale statistics (ZMS, MZ, VarZ, NLL) by :func:`scale_test` on Z = E/u (with
    :func:`scale_unreliable`, β_GM of Z² by :func:`mcref.shape.skewness_gm`), RCE by
    :func:`rce_test`; ``seed`` (a SeedSequence) gives one child to each. None when no such
    statistic is listed. Registered permutation-invariant statistics (no studentized form)
    keep the rule before, the Monte Carlo test under t(ν̂) (``estimates``: their values on the
    data; ``prep`` as :func:`mcref.verdict._joint.scale_simulation`). Arrays checked by the caller.
    ``units`` (:class:`mcref.core._dependence.Units`, with ``prep``): dependent rows, the tests on
    cluster sums over its groups or non-overlapping blocks (docs/methods.md, "Dependent test sets").
    ``cache``: a dict kept between calls on the same data (validate's sequential rounds), holding
    the fitted ν̂ and the screen's result so that each is computed once; ``only``: a set of
    names, test only those of ``names`` (the rounds' undecided statistics; each statistic's
    streams do not depend on the others run)."""
    from ._joint import is_scale, scale_simulation
    from ..shape import skewness_gm

    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    ss_z, ss_r = ss.spawn(2)
    names = [n for n in names if only is None or n in only]
    zn = [n for n in names if n in SCALE_TESTED]
    un = [n for n in names if n not in SCALE_TESTED and is_scale(n)]
    if not zn and not un and "RCE" not in names:
        return None
    user, est = None, {}
    if un:
        from ..stats import info

        user = scale_simulation(un, u, E, n_mc=n_boot, seed=ss.spawn(1)[0], prep=prep)
        est = {n: float(estimates[n]) for n in un}
    E = np.asarray(E, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    clusters = None
    if units is not None:  # the same values in u-sorted order, beside each point's unit
        E, u, clusters = prep.E, prep.u, units.gid
    p, flags, res, note = {}, {}, None, ""
    if zn:
        z = E / u
        if cache is not None and "screen" in cache:  # the same Z every round: screened once
            bad, note = cache["screen"]
        else:
            bad = scale_unreliable(z, skewness_gm(z * z))
            if bad:
                note = (f"scale test: Z2 fails the shape screen and |Z| has power-law tails (tail ratio "
                        f"{tail_ratio(z):.2f} > {TAIL_RATIO_LIMIT:g}): {', '.join(zn)} unreliable")
            if cache is not None:
                cache["screen"] = (bad, note)
        try:
            res = scale_test(z, zn, n_boot=n_boot, seed=ss_z, clusters=clusters, cache=cache,
                             nu=None if cache is None else cache.get("nu"))
            if cache is not None:  # the sequential rounds rerun the test on more replicates of the same Z
                cache["nu"] = res.nu
            p.update(res.p)
        except ValueError:  # ν̂ ≤ 2: no unit-variance t
            bad = True
            note = (f"scale test: the Student t fitted to Z has nu <= 2 (no unit variance exists): {', '.join(zn)} "
                    "unreliable")
            p.update({n: math.nan for n in zn})  # no test: the rows say unreliable, with no p
        flags = {n: bad for n in zn}
    if "RCE" in names:
        # the pairs in (u, E) order: prep's rows (sorted by u) are that order already when u has no ties, and
        # need E sorted inside the runs of tied u otherwise (u_then_E: np.lexsort's order, a quarter of its time)
        pairs = None
        if clusters is None and prep is not None:
            o = u_then_E(prep.E, prep.ugs) if prep.ugs.size != prep.M + 1 else None
            pairs = (prep.E, prep.u) if o is None else (prep.E[o], prep.u[o])
        p["RCE"] = _rce_test(E, u, _check(n_boot), ss_r, clusters, sorted_pairs=pairs, cache=cache).p["RCE"]
    if un:
        for n in un:
            if user is None:  # ν̂ ≤ 2
                p[n], flags[n] = math.nan, True
            else:
                p[n] = user.p_value(n, user.dists[0].label, est[n], alternative=info(n).alternative)[0]
    # the resampled units: whole groups (groups=) or non-overlapping blocks along the order (order=)
    kind = ("bootstrap-t" if clusters is None else
            "block bootstrap-t" if getattr(units, "kind", "groups") == "order" else "cluster bootstrap-t")
    label = (f"{kind} and t(fit nu={res.nu:.3g})" if res is not None else
             user.dists[0].label if user is not None else "bootstrap-t") + f", B={int(n_boot)}"
    return ScaleTests(p=p, unreliable=flags, scale=res, label=label, user=user, estimates=est,
                      note=note)
