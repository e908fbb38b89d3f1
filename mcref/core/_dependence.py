r"""Dependent test sets: the units of ``groups=`` and ``order=``, the automatic block length, and
the diagnostics of dependence (docs/methods.md, "Dependent test sets").

Every test of mcref assumes by default that the M rows are independent. Rows whose errors share a
component — the conformers of one molecule, the frames of one trajectory, a forecast's consecutive
days — break that: the statistics vary more than independent rows let them, and a calibrated
model is called invalid far more often than α. Two labels describe the dependence:

* ``groups`` (one label per row): rows of one group may be correlated, rows of different groups
  are independent. The bootstrap resamples whole groups (cluster bootstrap), the jackknife of
  the BCa acceleration leaves one group out, the scale tests studentize cluster sums
  (Cameron, Gelbach & Miller 2008), and the permutation test moves whole groups' Z-vectors
  among the groups of equal size (and, with groups of unequal sizes, also exchanges the groups'
  u-levels).
* ``order`` (a time or sequence value per row): serial dependence. The bootstrap resamples
  blocks of consecutive rows (circular, moving or stationary; Künsch 1989, Politis & Romano
  1992, 1994; Davison & Hinkley 1997, §8.2) of the automatic length of Politis & White (2004)
  with the correction of Patton, Politis & White (2009) (:func:`optimal_block_length`), the
  jackknife and the scale tests use non-overlapping blocks of that length as clusters, and the
  permutation test moves whole blocks.

:class:`Units` holds what the kernels (:mod:`mcref.kernels.units`) need, over the data sorted by
u (:class:`mcref.core._prepared.Prepared`); :func:`dependence_diagnostics` measures how far the
independent-rows rule would be off (:class:`DependenceDiagnostics`).

References
----------
.. [1] D. N. Politis and H. White, "Automatic block-length selection for the dependent
   bootstrap", Econometric Reviews 23, 53–70 (2004). https://doi.org/10.1081/ETC-120028836
.. [2] A. Patton, D. N. Politis and H. White, "Correction to 'Automatic block-length selection
   for the dependent bootstrap'", Econometric Reviews 28, 372–375 (2009).
   https://doi.org/10.1080/07474930802459016
.. [3] A. C. Cameron, J. B. Gelbach and D. L. Miller, "Bootstrap-based improvements for
   inference with clustered errors", Rev. Econ. Stat. 90, 414–427 (2008).
   https://doi.org/10.1162/rest.90.3.414
.. [4] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*, Cambridge
   University Press (1997), §8.2 (block resampling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import ndtri

from ._checks import (BLOCK_METHODS, check_block_length, check_choice, check_E_u, check_groups, check_order,
                          dataset_args)
from ._dot import fixed_dot
from ..kernels.units import BLOCKS, GROUPS
from ..parallel import serial_blas

if TYPE_CHECKING:
    from ._prepared import Prepared

__all__ = ["Units", "units_for", "unit_df", "few_units_note", "SMALL_G_STATS", "optimal_block_length", "order_block_length", "DependenceDiagnostics", "dependence",
           "dependence_diagnostics", "icc", "design_effect"]


def optimal_block_length(x) -> tuple[float, float]:
    r"""Automatic block length of the stationary and the circular bootstrap for a series ``x``
    (Politis & White 2004 with the correction of Patton, Politis & White 2009), as
    ``arch.bootstrap.optimal_block_length``.

    With :math:`\hat\gamma_k = n^{-1}\sum_{t=k+1}^{n}(x_t - \bar x)(x_{t-k} - \bar x)`, the
    flat-top window :math:`h(s) = \min(1, 2(1 - |s|))` and the bandwidth m below:

    .. math::

        G = \sum_{k=-m}^{m} h(k/m)\,|k|\,\hat\gamma_k,\quad
        \hat\sigma^2 = \sum_{k=-m}^{m} h(k/m)\,\hat\gamma_k,\quad
        b_\mathrm{opt} = \Big(\frac{2 G^2}{c\,\hat\sigma^4}\,n\Big)^{1/3}

    with c = 2 (stationary) and c = 4/3 (circular), each capped at ⌈min(3√n, n/3)⌉. m is twice
    the first lag m̂ after which :math:`k_n = \max(5, \lfloor\log_{10} n\rfloor)` consecutive
    autocorrelations lie inside :math:`\pm 2\sqrt{\log_{10}(n)/n}` (at least 2, at most
    :math:`\lceil\sqrt n\rceil + k_n`). The autocorrelations that choose m are arch's own
    (the cross product at lag k over the sums of squares of the two series shifted by k + 1),
    so the lengths equal arch's to rounding.

    Parameters
    ----------
    x : array_like, shape (n,)
        The series, in its order (mcref uses Z² along ``order``).

    Returns
    -------
    (b_stationary, b_circular) : tuple of float
        Real-valued lengths; mcref rounds them up.

    References
    ----------
    .. [1] D. N. Politis and H. White, Econometric Reviews 23, 53–70 (2004),
       doi:10.1081/ETC-120028836.
    .. [2] A. Patton, D. N. Politis and H. White, Econometric Reviews 28, 372–375 (2009),
       doi:10.1080/07474930802459016.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> e = rng.normal(size=2000); x = np.empty(2000); x[0] = e[0]
    >>> for t in range(1, 2000): x[t] = 0.8 * x[t - 1] + e[t]
    >>> b_sb, b_cb = optimal_block_length(x)
    >>> 5 < b_cb < 60
    True
    """
    return _pw_lengths(*_pw_terms(x))


def _pw_lengths(g: float, lr: float, b_max: int, n: int) -> tuple[float, float]:
    """Politis & White's (stationary, circular) lengths from :func:`_pw_terms`, capped at ``b_max``."""
    b_sb = ((2.0 * g * g) / (2.0 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
    b_cb = ((2.0 * g * g) / (4 / 3 * lr * lr)) ** (1 / 3) * n ** (1 / 3)
    return float(min(b_sb, b_max)), float(min(b_cb, b_max))


@serial_blas()  # its ~3·√n dot products of n values: BLAS on one thread gives the same bits on any machine
def _flat_top(x) -> tuple[np.ndarray, int, int]:
    """(γ̂_0 … γ̂_{m_max}, m, the cap) of Politis & White's flat-top rule: the autocovariances (sums
    over n) and the bandwidth m = 2·m̂, m̂ the first lag after which ``kn`` autocorrelations in a row
    stay below 2·√(log₁₀ n/n). The one home of the bandwidth of :func:`optimal_block_length`,
    :func:`order_block_length` and the design effect along an order (:func:`_long_run_ratio`)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    eps = x - x.mean()
    b_max = math.ceil(min(3 * math.sqrt(n), n / 3))
    kn = max(5, int(np.log10(n)))
    m_max = int(math.ceil(math.sqrt(n))) + kn
    cv = 2 * math.sqrt(np.log10(n) / n)
    acv = np.zeros(m_max + 1)
    if not eps @ eps > 0:  # a constant series: no autocorrelation to cut at
        return acv, 1, int(b_max)
    abs_acorr = np.zeros(m_max + 1)
    opt_m = None
    for i in range(m_max + 1):
        v1 = eps[i + 1:] @ eps[i + 1:]
        v2 = eps[:-(i + 1)] @ eps[:-(i + 1)]
        cross = eps[i:] @ eps[:n - i]
        acv[i] = cross / n
        abs_acorr[i] = abs(cross) / math.sqrt(v1 * v2)
        if i >= kn and opt_m is None and np.all(abs_acorr[i - kn:i] < cv):
            opt_m = i - kn
    m = 2 * max(opt_m, 1) if opt_m is not None else m_max
    return acv, min(m, m_max), int(b_max)


def _flat_top_weights(m: int) -> np.ndarray:
    """The flat-top window λ(k/m), k = 1 … m: 1 up to m/2, then 2(1 − k/m)."""
    return np.array([1.0 if k / m <= 0.5 else 2.0 * (1.0 - k / m) for k in range(1, m + 1)])


def _pw_terms(x) -> tuple[float, float, int, int]:
    """(G, σ̂², the cap, n) of :func:`optimal_block_length`: the flat-top sums of |k|·γ̂_k and of
    γ̂_k over |k| ≤ m (:func:`_flat_top`)."""
    acv, m, b_max = _flat_top(x)
    g = 0.0
    lr = acv[0]
    for k, lam in enumerate(_flat_top_weights(m), start=1):
        g += 2.0 * lam * k * acv[k]
        lr += 2.0 * lam * acv[k]
    return float(g), float(lr), b_max, int(np.size(x))


#: the largest share of the long-run variance of a block's sum that the blocks of ``order=`` may
#: miss: ℓ ≥ κ̂/BLOCK_MISS (:func:`order_block_length`; docs/methods.md, "Dependent test sets")
BLOCK_MISS = 0.02
#: the fewest blocks the automatic ℓ leaves (a longer dependence is said so on the table)
MIN_BLOCKS = 10


def order_block_length(x, method: str = "circular") -> tuple[int, float]:
    r"""The automatic block length of ``order=`` for a series ``x`` (Z² along the order), and the
    share of the long-run variance its blocks miss: (ℓ, κ̂/ℓ).

    A non-overlapping block of ℓ rows has Var(Σ) = ℓ·Σ_{|k|<ℓ}(1 − |k|/ℓ)γ_k ≈ ℓ(σ²_LR − G), so
    the blocks miss the share κ/ℓ of the long-run variance, κ = G/σ²_LR = Σ|k|γ_k/Σγ_k (the
    mean lag of the dependence; G and σ̂² as in :func:`optimal_block_length`, κ̂ = max(G, 0)/σ̂²).
    Politis & White's ℓ minimizes the mean squared error of a variance estimate, which lets the
    blocks miss 10 % of it at φ = 0.8 (ℓ ≈ 21 at M = 1800): enough to make the block
    permutation and the block-studentized tests liberal (ENCE and ZMSE 13 % at α = 5 % with u
    cycling along the order, docs/methods.md). A test wants that bias small, so

    .. math:: \ell = \min\Big(\maxig(\lceil b_{PW}
ceil, \lceil \hat\kappa/\epsilon
ceilig), \lfloor M/10
floor\Big),
              \quad \epsilon = 0.02 \ (	ext{BLOCK\_MISS})

    (at least the Politis–White length, at least 10 blocks; at most M // 2). The second value
    is κ̂/ℓ: above ε only when the dependence is too long for 10 blocks.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> e = rng.normal(size=2000); x = np.empty(2000); x[0] = e[0]
    >>> for t in range(1, 2000): x[t] = 0.8 * x[t - 1] + 0.6 * e[t]
    >>> ell, missed = order_block_length(x * x)
    >>> 60 < ell < 200 and missed <= 0.02
    True
    """
    g, lr, b_max, n = _pw_terms(x)
    b_sb, b_cb = _pw_lengths(g, lr, b_max, n)
    b_pw = math.ceil(b_sb if method == "stationary" else b_cb)
    kappa = max(g, 0.0) / lr if lr > 0 else 0.0
    ell = max(b_pw, math.ceil(kappa / BLOCK_MISS))
    ell = int(min(max(1, min(ell, max(b_pw, n // MIN_BLOCKS))), n // 2))
    return ell, kappa / ell


def _long_run_ratio(x: np.ndarray) -> tuple[float, np.ndarray]:
    """(σ²_LR/γ̂₀, ρ̂_1 … ρ̂_m): the long-run variance of the mean of ``x`` over its variance, with
    the flat-top window and the bandwidth of :func:`optimal_block_length` (:func:`_flat_top`), and
    the autocorrelations up to that bandwidth."""
    acv, m, _ = _flat_top(x)
    if acv[0] == 0:
        return 1.0, np.zeros(0)
    rho = acv[1:m + 1] / acv[0]
    return float(max(1.0 + 2.0 * np.sum(_flat_top_weights(m) * rho), 1e-12)), rho


@dataclass(frozen=True)
class Units:
    """The units of a dependent test set over its u-sorted points (:func:`units_for`).

    Attributes
    ----------
    kind : str
        ``"groups"`` or ``"order"``.
    gid : ndarray of int64, shape (M,)
        Each u-sorted point's unit for the jackknife, the scale tests and the diagnostics: its
        group (numbered by the group's first point in ascending u), or its non-overlapping block
        ⌊t/ℓ⌋ along the order.
    sizes : ndarray of int64
        The rows of each of those units.
    opos : ndarray of int64, shape (M,)
        Each u-sorted point's position along ``order`` (its input position for groups).
    block_length : int
        ℓ (0 for groups).
    block_method : str
        ``"circular"``, ``"moving"`` or ``"stationary"`` ("" for groups).
    auto : bool
        ℓ chosen by :func:`optimal_block_length` (not given).
    levels, ratios : ndarray or None
        Groups of unequal sizes (given the sorted u): the u-level of each group and each
        point's u over its group's level, for the permutation by exchange of u-levels (composed
        with the permutation of Z-vectors among the groups of equal size).
    members, ustart, cstart : ndarray of int64
        The permutation units (:func:`mcref.kernels.units.permute_units_into`): unit j's points
        are ``members[ustart[j]:ustart[j+1]]`` (u-sorted positions, in ascending u for a group,
        along the order for a block), the units numbered class by class of equal size
        (``cstart``).
    """

    kind: str
    gid: np.ndarray
    sizes: np.ndarray
    opos: np.ndarray
    block_length: int = 0
    block_method: str = ""
    auto: bool = False
    members: np.ndarray = field(default=None, repr=False)
    ustart: np.ndarray = field(default=None, repr=False)
    cstart: np.ndarray = field(default=None, repr=False)
    #: groups of unequal sizes: the permutation test also exchanges the groups' u-levels
    #: (:func:`mcref.kernels.units.exchange_levels`, after the Z-vectors are permuted among the
    #: groups of equal size): ``levels[g]`` = ū_g, the geometric mean of the group's u, and
    #: ``ratios[i]`` = u_i/ū_{g(i)} per u-sorted point; None otherwise
    levels: np.ndarray | None = field(default=None, repr=False)
    ratios: np.ndarray | None = field(default=None, repr=False)
    #: groups of unequal sizes: the p-value of Spearman's test of the levels against the sizes
    #: (:data:`LEVEL_SIZE_ALPHA`); NaN for equal sizes or blocks
    level_size_p: float = math.nan
    #: automatic ℓ: the share of the long-run variance of Z² its blocks miss (κ̂/ℓ,
    #: :func:`order_block_length`); NaN for groups or a given ℓ
    block_missed: float = math.nan

    @property
    def n_units(self) -> int:
        return int(self.sizes.size)

    @property
    def kernel_kind(self) -> int:
        return GROUPS if self.kind == "groups" else BLOCKS

    @property
    def scheme(self) -> int:
        return BLOCK_METHODS.index(self.block_method) if self.kind == "order" else 0

    @property
    def n_perm_units(self) -> int:
        """Permutation units (groups, or blocks along the order, the last one shorter)."""
        return int(self.ustart.size - 1)

    @property
    def n_classes(self) -> int:
        """Classes of equal-size permutation units."""
        return int(self.cstart.size - 1)

    def describe(self) -> str:
        """One line: what is resampled and permuted."""
        if self.kind == "groups":
            s = self.sizes
            if self.levels is not None:
                shared = int(np.sum(np.diff(self.cstart)[np.diff(self.cstart) > 1]))
                perm = ("groups of unequal sizes: the groups' u-levels exchanged (each keeps its pattern of u) and "
                        f"whole groups' Z-vectors permuted among the groups of equal size ({shared} of {s.size} "
                        "groups share their size with another" + ("" if shared else
                                                                  ": Z never moves against a feature x") + ")")
            elif self.level_size_p == self.level_size_p:  # unequal sizes whose u-levels follow their sizes
                perm = (f"the groups' u-levels follow their sizes (Spearman p = {self.level_size_p:.2g}), so whole "
                        f"groups' Z-vectors are permuted only among the groups of equal size ({self.n_classes} "
                        "sizes): exact, but with few groups per size the consistency rows have little power")
            else:
                perm = "whole groups' Z-vectors permuted among the groups"
            sizes = (f"{int(s.min())} rows" if s.min() == s.max() else
                     f"{int(s.min())}-{int(s.max())} rows (median {float(np.median(s)):g})")
            return (f"groups: {s.size} groups of {sizes}; "
                    f"cluster bootstrap, delete-one-group jackknife, cluster-studentized scale tests; {perm}")
        how = ("automatic: long enough to keep at least 98 % of the variance the errors' correlation adds"
               if self.auto else "given")
        if self.auto and self.block_missed > BLOCK_MISS:
            how = (f"automatic, but the errors stay correlated over more rows than {MIN_BLOCKS} blocks allow: "
                   f"the blocks miss {100 * self.block_missed:.0f} % of the variance that correlation adds, so the "
                   "tests may call a calibrated set invalid too often")
        return (f"order: {self.block_method} block bootstrap with blocks of {self.block_length} rows ({how}); "
                f"jackknife and scale tests on {self.n_units} non-overlapping blocks; whole blocks permuted")


#: the level of Spearman's test of the groups' u-levels against their sizes at or below which the
#: permutation test of groups of unequal sizes does not exchange u-levels (they are not exchangeable)
#: but permutes Z-vectors within sizes (docs/methods.md, "Dependent test sets")
LEVEL_SIZE_ALPHA = 0.05


def _level_size_p(levels: np.ndarray, sizes: np.ndarray) -> float:
    """Two-sided p-value of Spearman's ρ between the groups' u-levels and their sizes (a function of
    u and the labels alone, never of Z: choosing the permutation by it keeps the test conditional on
    the design)."""
    from scipy.stats import spearmanr

    p = float(spearmanr(levels, sizes).pvalue)
    return p if p == p else 1.0


def _perm_units(point_lists: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(members, ustart, cstart) of the permutation units: the units sorted by size (stable), so
    that each class of equal size holds consecutive unit ids."""
    sizes = np.array([p.size for p in point_lists], dtype=np.int64)
    order = np.argsort(sizes, kind="stable")
    members = np.concatenate([point_lists[j] for j in order]).astype(np.int64)
    ustart = np.concatenate(([0], np.cumsum(sizes[order]))).astype(np.int64)
    ss = sizes[order]
    brk = np.flatnonzero(ss[1:] != ss[:-1]) + 1
    cstart = np.concatenate(([0], brk, [ss.size])).astype(np.int64)
    return members, ustart, cstart


def units_for(prep_order: np.ndarray, *, groups=None, order=None, block_length=None,
              block_method: str = "circular", z2: np.ndarray | None = None,
              us: np.ndarray | None = None) -> Units | None:
    """The :class:`Units` of a dataset whose rows ``prep_order`` sorts by u (``Prepared.order``):
    None without ``groups`` and ``order``. ``groups`` and ``order`` are checked here
    (:func:`mcref.core._checks.check_groups`, :func:`~mcref.core._checks.check_order`); giving
    both is refused. ``z2`` (Z² in u-sorted order) sets the automatic block length of ``order``
    (:func:`order_block_length` of Z² along the order: at least Politis & White's, long enough
    to miss at most 2 % of the long-run variance).
    ``us`` (u sorted): with groups of unequal sizes, the levels and ratios of the permutation by
    exchange of u-levels (:attr:`Units.levels`). With ``us``, the groups are numbered by their first
    point in ascending (u, Z²) and ties in ``order`` are broken by (u, Z²): the units do not depend
    on the row order (unless rows tie in both u and Z²) nor on how the labels are spelled."""
    m = prep_order.size
    if groups is not None and order is not None:
        raise ValueError("give `groups` or `order`, not both: mcref resamples either whole groups (clustered rows) "
                         "or blocks along the order (serial dependence), not both at once")
    method = check_choice(block_method, "block_method", BLOCK_METHODS)
    if groups is None and order is None and block_length is None:  # independent rows: no sort (0.45 s at 10⁶)
        return None
    # the u-sorted points in a canonical order: ascending u, ties in u by ascending Z² (then by
    # position): it numbers the groups and breaks ties in ``order`` whatever the row order
    canon = np.lexsort((np.zeros(m) if z2 is None else z2, us)) if us is not None else np.arange(m)
    if groups is not None:
        codes = check_groups(groups, m)[prep_order]  # per u-sorted point
        first = np.full(int(codes.max()) + 1, m, dtype=np.int64)
        np.minimum.at(first, codes[canon], np.arange(m))
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        # numbered by the group's first point in ascending (u, Z²): no dependence on the labels' spelling, nor
        # on the row order unless two groups' first points tie in both u and Z²
        gid = rank[codes]
        sizes = np.bincount(gid).astype(np.int64)
        pts = np.argsort(gid, kind="stable")  # each group's points in ascending u
        lists = np.split(pts, np.cumsum(sizes)[:-1])
        members, ustart, cstart = _perm_units(lists)
        levels = ratios = None
        p_ls = math.nan
        if us is not None and np.unique(sizes).size > 1:
            levels = np.exp(np.bincount(gid, np.log(us)) / sizes)
            ratios = us / levels[gid]
            p_ls = _level_size_p(levels, sizes)
            if p_ls <= LEVEL_SIZE_ALPHA:  # the levels are not exchangeable: permute within sizes (exact)
                levels = ratios = None
        return Units(kind="groups", gid=gid, sizes=sizes, opos=prep_order.astype(np.int64), members=members,
                     ustart=ustart, cstart=cstart, levels=levels, ratios=ratios, level_size_p=p_ls)
    if order is None:
        if block_length is not None:
            raise ValueError("`block_length` goes with `order` (the blocks are cut along it)")
        return None
    t = check_order(order, m)[prep_order]  # per u-sorted point
    along = canon[np.argsort(t[canon], kind="stable")]  # the u-sorted points along the order, ties by (u, Z²)
    opos = np.empty(m, dtype=np.int64)
    opos[along] = np.arange(m)  # each u-sorted point's position along the order
    ell = check_block_length(block_length, m)
    auto = ell is None
    missed = math.nan
    if auto:
        if z2 is None:
            raise ValueError("an automatic block length needs the data's Z")
        ordinv = np.empty(m, dtype=np.int64)
        ordinv[opos] = np.arange(m)
        ell, missed = order_block_length(z2[ordinv], method)
    gid = (opos // ell).astype(np.int64)
    sizes = np.bincount(gid).astype(np.int64)
    ordinv = np.empty(m, dtype=np.int64)
    ordinv[opos] = np.arange(m)  # the u-sorted point at each order position
    lists = [ordinv[a:a + ell] for a in range(0, m, ell)]
    members, ustart, cstart = _perm_units(lists)
    return Units(kind="order", gid=gid, sizes=sizes, opos=opos, block_length=ell, block_method=method, auto=auto,
                 members=members, ustart=ustart, cstart=cstart, block_missed=missed)


#: effective number of units (Bell–McCaffrey degrees of freedom + 1) below which the 95 % intervals of ZMS
#: and RCE are not promised their coverage (docs/methods.md, "Dependent test sets": 82–92 % measured at
#: 5–30 clusters with an intra-group correlation of 0.5; 93.3–96.2 % at 40–60)
FEW_UNITS = 35


def bm_df(weights: np.ndarray) -> float:
    r"""Bell & McCaffrey (2002) degrees of freedom of the cluster-robust (CR2) variance of a ratio of
    unit totals :math:`\hat\theta = \sum_g a_g / \sum_g b_g` with unit weights :math:`b_g` (ZMS: the
    sizes n_g; RCE's R = ΣE²/Σu²: the units' Σu²), under the working model of independent rows:

    .. math::

        h_g = \frac{b_g}{\sum_k b_k},\quad s_g = (1 - h_g)^{-1},\quad
        \nu = \Big[\sum_g h_g^2 + \Big(\sum_g s_g h_g^2\Big)^2 - \sum_g s_g^2 h_g^4\Big]^{-1}

    (the Satterthwaite ν = (tr W)²/tr W² of W = D(√s)(diag h − hhᵀ)D(√s), tr W = 1, in O(G)). Equal
    weights give ν = G − 1; unequal weights fewer (MacKinnon & Webb 2017: a few large units carry
    the variance). ``weights`` > 0, at least two."""
    b = np.asarray(weights, dtype=np.float64)
    h = b / b.sum()
    s = 1.0 / (1.0 - h)
    sh2 = s * h * h
    return float(1.0 / (np.sum(h * h) + np.sum(sh2) ** 2 - np.sum(sh2 * sh2)))


#: the statistics whose BCa interval by units (``groups``/``order``) takes the expanded t critical values
#: (:func:`mcref.resampling._bootstrap.unit_crit`; docs/methods.md, "Dependent test sets")
SMALL_G_STATS = ("ZMS", "RCE")


def unit_df(name: str, prep: Prepared, units: Units | None) -> tuple[int, float]:
    """(G, ν) of the small-G BCa interval of statistic ``name`` by ``units`` (:func:`mcref.resampling._bootstrap.unit_crit`;
    docs/methods.md, "Dependent test sets"), (0, inf) where it does not apply (no units, or a
    statistic other than :data:`SMALL_G_STATS`). ν = :func:`bm_df` of the units'
    weights in the statistic's ratio of totals: their sizes (ZMS = ΣZ²/M), their Σu² (RCE = 1 − √R,
    R = ΣE²/Σu²)."""
    if units is None or name not in SMALL_G_STATS:
        return 0, math.inf
    w = units.sizes.astype(np.float64) if name == "ZMS" else np.bincount(units.gid, prep.u2, minlength=units.n_units)
    return int(units.n_units), bm_df(w)


def few_units_note(name: str, units: Units | None, g: int, nu: float) -> str:
    """The row note of an interval whose coverage few units cannot promise: ν + 1 <
    :data:`FEW_UNITS` effective units (docs/methods.md, "Dependent test sets"), or ""."""
    if not g or round(nu + 1.0, 6) >= FEW_UNITS:  # rounded: equal sizes give ν = G − 1 up to the last bits
        return ""
    what = "clusters" if units.kind == "groups" else "blocks along order"
    return (f"{name}: few {what} (G = {g}, effective {nu + 1:.1f}): interval coverage not assured (measured 82-92 % "
            f"for a 95 % interval at 5-30 clusters with intra-group correlation 0.5)")


def icc(y: np.ndarray, gid: np.ndarray) -> float:
    r"""Intra-group correlation of ``y`` (one-way ANOVA estimator, unequal sizes):

    .. math::

        \hat\rho = \frac{MSB - MSW}{MSB + (n_0 - 1)\,MSW},\quad
        n_0 = \frac{M - \sum_g n_g^2/M}{G - 1}

    with MSB = Σ_g n_g(ȳ_g − ȳ)²/(G − 1), MSW = Σ_g Σ_{i∈g}(y_i − ȳ_g)²/(M − G) (Searle, Casella
    & McCulloch, *Variance Components*, 1992, §3.6). NaN when MSW is undefined (M = G)."""
    y = np.asarray(y, dtype=np.float64)
    n = np.bincount(gid).astype(np.float64)
    G, M = n.size, float(y.size)
    if M <= G or G < 2:
        return math.nan
    mg = np.bincount(gid, y) / n
    msb = float(np.sum(n * (mg - y.mean()) ** 2)) / (G - 1)
    msw = float(np.sum((y - mg[gid]) ** 2)) / (M - G)
    n0 = (M - float(np.sum(n * n)) / M) / (G - 1)
    den = msb + (n0 - 1.0) * msw
    return float((msb - msw) / den) if den > 0 else math.nan


def design_effect(y: np.ndarray, gid: np.ndarray) -> float:
    r"""Design effect of the mean of ``y`` under clusters ``gid``: the cluster-robust variance of
    the mean over its independent-rows variance,
    :math:`d = \sum_g ig(\sum_{i\in g}(y_i - ar y)ig)^2 / \sum_i (y_i - ar y)^2`
    (Kish 1965; 1 for independent rows, 1 + (n − 1)ρ for clusters of n with intra-group
    correlation ρ). M/d is the effective number of independent rows."""
    e = np.asarray(y, dtype=np.float64) - np.mean(y)
    den = float(fixed_dot(e, e))
    return float(np.sum(np.bincount(gid, e) ** 2) / den) if den > 0 else 1.0


def deff_limit(alpha: float = 0.05) -> float:
    r"""The design effect above which an independent-rows test at level α rejects at least 2α of
    the true hypotheses: a studentized mean whose variance is underestimated by d has size
    :math:`2\Phi(-z_{1-\alpha/2}/\sqrt d)`, which reaches 2α at
    :math:`d = (z_{1-\alpha/2}/z_{1-\alpha})^2` (1.42 at α = 0.05)."""
    return float((ndtri(1 - alpha / 2) / ndtri(1 - alpha)) ** 2)


@dataclass(frozen=True)
class DependenceDiagnostics:
    """What the labels say about the dependence of a test set (:func:`dependence`,
    :attr:`mcref.ValidationTable.dependence`; docs/methods.md, "Dependent test sets").

    Attributes
    ----------
    kind : str
        ``"groups"`` or ``"order"``.
    M : int
        Rows.
    n_units : int
        Groups, or non-overlapping blocks along the order.
    icc_z, icc_z2 : float
        Intra-group correlation of Z and of Z² (:func:`icc`; NaN for ``order``).
    acf_z, acf_z2 : ndarray
        Autocorrelations of Z and of Z² along the order at lags 1 … m (the bandwidth of
        :func:`optimal_block_length`; empty for ``groups``).
    design_effect : float
        d, the variance of ⟨Z²⟩ over its independent-rows variance: cluster sums for
        ``groups`` (:func:`design_effect`), the long-run variance of Z² along the order (flat-top
        window) for ``order``.
    m_eff : float
        M/d, the effective number of independent rows.
    block_length : int
        ℓ of ``order`` (0 for ``groups``).
    units : str
        What is resampled and permuted (:meth:`Units.describe`).
    alpha : float
        The level the warning is read at.
    """

    kind: str
    M: int
    n_units: int
    icc_z: float
    icc_z2: float
    acf_z: np.ndarray
    acf_z2: np.ndarray
    design_effect: float
    m_eff: float
    block_length: int
    units: str
    alpha: float = 0.05

    @property
    def iid_size(self) -> float:
        """The size an independent-rows test of ⟨Z²⟩ at level α would have: 2Φ(−z_{1−α/2}/√d)."""
        from scipy.special import ndtr

        return float(2.0 * ndtr(-ndtri(1 - self.alpha / 2) / math.sqrt(max(self.design_effect, 1e-12))))

    @property
    def independent_rows_wrong(self) -> bool:
        """d > :func:`deff_limit` (α): the independent-rows rule would reject at least 2α of
        calibrated sets like this one."""
        return bool(self.design_effect > deff_limit(self.alpha))

    def line(self) -> str:
        """The diagnostics line under the table."""
        if self.kind == "groups":
            what = (f"{self.n_units} groups; intra-group correlation of Z {self.icc_z:.3f}, of Z2 "
                    f"{self.icc_z2:.3f}")
        else:
            lag = lambda a: f"{a[0]:.3f}" if a.size else "nan"  # noqa: E731
            what = f"lag-1 autocorrelation of Z {lag(self.acf_z)}, of Z2 {lag(self.acf_z2)} along order"
        return (f"dependence ({self.kind}): {what}; design effect of <Z2> {self.design_effect:.2f}, "
                f"effective rows {self.m_eff:.0f} of {self.M}")

    def warning_line(self) -> str:
        """The legend line when the independent-rows rule would have been wrong ("" otherwise)."""
        if not self.independent_rows_wrong:
            return ""
        return (f"dependent rows: design effect {self.design_effect:.2f} > {deff_limit(self.alpha):.2f}, so tests "
                f"that take the {self.M} rows as independent would reject about {100 * self.iid_size:.0f} % of "
                f"calibrated sets like this one at alpha = {self.alpha:g}; this table resamples and permutes by "
                f"{'groups' if self.kind == 'groups' else 'blocks along order'}")

    def flat(self) -> dict[str, Any]:
        """The diagnostics as a flat dict (JSON/CSV export)."""
        return {"kind": self.kind, "n_units": self.n_units, "icc_z": self.icc_z, "icc_z2": self.icc_z2,
                "acf1_z": float(self.acf_z[0]) if self.acf_z.size else math.nan,
                "acf1_z2": float(self.acf_z2[0]) if self.acf_z2.size else math.nan,
                "design_effect": self.design_effect, "m_eff": self.m_eff, "block_length": self.block_length,
                "independent_rows_wrong": self.independent_rows_wrong, "units": self.units}


def _acf(x: np.ndarray, lags: int) -> np.ndarray:
    e = x - x.mean()
    g0 = float(fixed_dot(e, e))
    return np.array([float(fixed_dot(e[k:], e[:x.size - k])) / g0 if g0 > 0 else 0.0 for k in range(1, lags + 1)])


def dependence_diagnostics(z: np.ndarray, units: Units, alpha: float = 0.05) -> DependenceDiagnostics:
    """:class:`DependenceDiagnostics` of the Z (u-sorted order) of a dataset with ``units``."""
    z2 = z * z
    m = z.size
    if units.kind == "groups":
        d = design_effect(z2, units.gid)
        return DependenceDiagnostics(kind="groups", M=m, n_units=units.n_units, icc_z=icc(z, units.gid),
                                     icc_z2=icc(z2, units.gid), acf_z=np.zeros(0), acf_z2=np.zeros(0),
                                     design_effect=d, m_eff=m / d, block_length=0, units=units.describe(),
                                     alpha=alpha)
    ordinv = np.empty(m, dtype=np.int64)
    ordinv[units.opos] = np.arange(m)
    zt, z2t = z[ordinv], z2[ordinv]
    d, acf2 = _long_run_ratio(z2t)
    return DependenceDiagnostics(kind="order", M=m, n_units=units.n_units, icc_z=math.nan, icc_z2=math.nan,
                                 acf_z=_acf(zt, max(acf2.size, 1)), acf_z2=acf2 if acf2.size else _acf(z2t, 1),
                                 design_effect=d, m_eff=m / d, block_length=units.block_length,
                                 units=units.describe(), alpha=alpha)


@dataset_args
def dependence(E, u, *, groups=None, order=None, block_length: int | None = None, block_method: str = "circular",
               alpha: float = 0.05) -> DependenceDiagnostics:
    """Diagnostics of dependent rows (docs/methods.md, "Dependent test sets"): the intra-group
    correlation of Z and of Z² (``groups``), the autocorrelation of Z and Z² along ``order``, the
    design effect d of ⟨Z²⟩ and the effective number of independent rows M/d; the same as
    :attr:`mcref.ValidationTable.dependence` of :func:`mcref.validate` with these labels.

    Parameters
    ----------
    E, u : array_like, shape (M,)
    groups : array_like, shape (M,), optional
        A label per row: rows of one group may be correlated.
    order : array_like, shape (M,), optional
        A time or sequence value per row (serial dependence).
    block_length : int, optional
        Blocks along ``order`` (default: automatic, :func:`optimal_block_length`).
    block_method : {"circular", "moving", "stationary"}, default: "circular"
    alpha : float, default: 0.05
        Level at which :attr:`DependenceDiagnostics.independent_rows_wrong` is read.

    Returns
    -------
    DependenceDiagnostics

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(np.arange(100), 20); shared = rng.normal(size=100)[g]
    >>> eps = np.sqrt(0.6) * shared + np.sqrt(0.4) * rng.normal(size=2000)
    >>> d = dependence(eps, np.ones(2000), groups=g)
    >>> d.design_effect > 3, d.independent_rows_wrong
    (True, True)
    """
    from ._checks import check_probability

    E, u = check_E_u(E, u, min_size=3)
    alpha = check_probability(alpha, "alpha")
    if groups is None and order is None:
        raise ValueError("`dependence` needs `groups` or `order`")
    srt = np.argsort(u, kind="stable")
    z = (E / u)[srt]
    units = units_for(srt, groups=groups, order=order, block_length=block_length, block_method=block_method,
                      z2=z * z, us=u[srt])
    return dependence_diagnostics(z, units, alpha)


def dependence_args(m: int, groups, order, block_length, block_method) -> dict:
    """The dependence keywords of :func:`mcref.validate`, checked before any work (the units are cut
    once the data are sorted: :func:`units_for`)."""
    from ._checks import BLOCK_METHODS, check_block_length, check_choice, check_groups, check_order

    if groups is not None and order is not None:
        raise ValueError("give `groups` or `order`, not both: mcref resamples either whole groups (clustered rows) "
                         "or blocks along the order (serial dependence), not both at once")
    if groups is not None:
        check_groups(groups, m)
    if order is not None:
        check_order(order, m)
        check_block_length(block_length, m)
    elif block_length is not None:
        raise ValueError("`block_length` goes with `order` (the blocks are cut along it)")
    check_choice(block_method, "block_method", BLOCK_METHODS)
    return dict(groups=groups, order=order, block_length=block_length, block_method=block_method)
