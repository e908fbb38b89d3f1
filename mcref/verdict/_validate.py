"""The validation workflow: estimates, BCa intervals, references, tests, verdict (docs/methods.md, "Verdicts").

For every statistic of the table:

1. θ̂ and its BCa interval I_BS (all statistics on the same bootstrap resamples);
2. the predefined reference when one exists (ZMS 1, RCE 0, …) → ζ_BS = ζ(θ̂, θ_ref, I_BS);
3. the simulated θ_k under each D (common random numbers; the permutation D shuffles the
   data's Z across u) → the Monte Carlo p-value of θ̂
   (one-sided, large values, for ENCE, ZMSE, UCE; two-sided otherwise), and the
   published scores ζ_Sim (BCa interval against the simulated mean, with the Monte Carlo
   uncertainty term) and ζ_Sim2 (θ̂ against the simulated 95 % interval I_D);
4. the D-sensitivity check: |θ_ref(D1) − θ_ref(D2)| > k·√(u₁² + u₂²) for some pair of the
   listed generative D (not the permutation D, nor a D the rule added);
5. the shape screen of u², E², Z² (robust skewness β_GM, Crow–Siddiqui κ_CS);
6. the verdict, first rule that applies (``rule="conditional"``, the default):

   * ``unreliable`` — the shape screen flags the statistic (heavy tails make its
     bootstrap interval untrustworthy);
   * with a predefined reference: ``valid`` if |ζ_BS| ≤ 1 else ``invalid`` (ZMS: the scale,
     E[Z²] = 1; RCE: RMV = RMSE);
   * simulated reference (CC, ENCE, ZMSE, UCE): the **permutation test** — the statistic on
     the data's own Z shuffled across u: ``valid`` when p > α, else ``invalid``. It tests
     "Z independent of u" (consistency, whatever the common scale) and is exact under any
     D, heavy tails included.

   ``rule="mc"`` (the default before) decides the simulated-reference statistics by the
   Monte Carlo test under the **empirical D** (the data's own standardized Z) instead:
   exact only under the true D, 3–6 % under normal and t(6) D, too liberal under t(3)
   (ZMSE 19 %). Without the empirical D among ``dists`` it asks every D to agree (``not
   testable`` otherwise). ``rule="paper"`` (Pernot 2024) decides by |ζ_Sim| ≤ 1 and calls a
   disagreement between D ``not testable`` only when the statistic is D-sensitive. The
   published verdict is in every row (``verdict_paper``), and ``test`` names the test that
   decided ``verdict``.

7. the **joint verdict** (:attr:`ValidationTable.joint`), one test of all the statistics at
   once. Conditional rule: the Šidák combination p = 1 − (1 − min(p_cons, p_scale))² of the
   permutation joint test of every statistic that depends on the pairing of Z with u
   (p_cons: exact under any D) and the joint test of the scale statistics (ZMS,
   MZ, VarZ, NLL) that the scale test's screen leaves, by their studentized bootstrap-t on
   Z (docs/methods.md, "Scale test"; p_scale, a function of the multiset of Z: independent of p_cons under the null
   hypothesis, so the combination is exact when p_scale is). ``rule="mc"``/``"paper"``: the joint Monte Carlo
   test of the statistics the screen leaves under the empirical D. Either way a calibrated
   model is called invalid about 5 % of the time in all, not 5 % per statistic; the
   per-statistic verdicts stay as the diagnosis.

Why the Monte Carlo test replaced ζ_Sim: on calibrated data ENCE, ZMSE and UCE are biased
upwards at finite M; BCa corrects the interval for that bias while θ_ref is the mean of the
same biased statistic, so ζ_Sim rejects ~40 % of perfectly calibrated datasets under the
true D. Why the permutation test replaced the empirical D: under heavy tails (t(3), t(4)) a
resample of the data's Z misrepresents the law of the binned mean squares, and the test
under the empirical D rejects up to 21.5 % of calibrated sets, while the permutation test
keeps 5 % under any D; a pure scale error, which it cannot see, is the job of ZMS (its row
and the scale part of the joint verdict). Measured size and power: docs/methods.md,
"Verdicts" and "Joint verdict" (``benchmarks/study_joint.py``).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Sequence

import numpy as np  # noqa: F401 - the docstring examples use np

from ..core import _progress
from ..features import Feature, as_features, feature_bins
from ..kernels.stats import finish_binned
from ._kernel_row import kernel_row, split_kernel_rows
from ._joint import (is_scale, row_feature, row_statistic, DEFAULT_COMBINE, JointVerdict, check_combine, conditional_joint_verdict, joint_verdict,
                     untestable)
from ._scale_test import scale_tests
from ._testable import (CONSTANT_ABS_E_REASON, CONSTANT_U_REASON, U_ONLY_REASON, degenerate_rows,  # noqa: F401
                        fixed_by_permutation, invariant_reference, not_testable, untestable_data, untestable_row)
from ..core._checks import dataset_args, check_choice, check_E_u, check_int, check_probability, check_progress
from ..core._warnings import BiasedIntervalWarning, FewReplicatesWarning, SmallSampleWarning
from ..binning import DEFAULT_N_BINS, default_n_bins, resolve_n_bins
from ..resampling._bootstrap import BootstrapResult, bootstrap_prepared, check_units_support
from ..core._dependence import dependence_args, dependence_diagnostics, units_for
from ._equivalence import check_tolerance, margin_sampler, with_margins
from ..generative import get_distribution
from ..kernels.rng import fresh
from ._rounds import row_simulation, sequential_work
from ..reference import simulate_prepared
from ..shape import shape_screen_prepared
from ..core._prepared import prepare_for
from ..stats import info, tie_spread_prepared
from ._table import (MIN_RELIABLE_M, MIN_VERDICT_REPLICATES, MIN_VERDICT_REPLICATES_HARD,
                     ValidationRow, ValidationTable, paper_note)
from ..resampling._zeta import zeta, zeta_sim2

from ._budget import (COMPARISON_MAX_M, MIN_DEFAULT_N_BOOT, MIN_DEFAULT_N_MC, N_BOOT_BUDGET, N_MC_BUDGET,  # noqa: F401
                      PAPER_N_BOOT, PAPER_N_MC, default_n_boot, default_n_mc)

__all__ = ["ValidationRow", "ValidationTable", "validate", "default_n_mc", "DEFAULT_STATS", "VALIDATE_DISTS", "RULES",
           "alternative_for", "JointVerdict"]

DEFAULT_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE")
#: the D of validate: the papers' normal and t(6), the data's own standardized Z, and the data's Z
#: shuffled across u (docs/methods.md, "Verdicts")
VALIDATE_DISTS = ("normal", "t6", "empirical", "permutation")
VERDICTS = ("valid", "invalid", "not testable", "unreliable")
#: the verdict rules: the conditional rule (default), the Monte Carlo test under the empirical D, the paper's
RULES = ("conditional", "mc", "paper")
#: the D the conditional rule decides by (added to ``dists`` when missing): the permutation D alone (its
#: scale rows are decided by the bootstrap-t of :mod:`mcref.verdict._scale_test`, which simulates no D)
CONDITIONAL_DISTS = ("permutation",)
#: the D drawn from the data's own Z (their Z must vary)
DATA_DISTS = ("empirical", "permutation")


def alternative_for(name: str) -> str:
    """Direction of the Monte Carlo test of a statistic (its registry entry,
    :attr:`mcref.stats.StatInfo.alternative`): ``"greater"`` for the binned discrepancies
    ENCE, ZMSE, UCE (non-negative, larger is worse, whichever way u is off), ``"two-sided"``
    for the other built-in ones."""
    return info(row_statistic(name)).alternative


def verdict_mc(*, zeta_bs: float | None, p_sim: dict[str, float], shape_flag: bool, alpha: float = 0.05) -> str:
    """The default rule (module docstring): ζ_BS for a predefined reference; else the Monte
    Carlo test under the empirical D when it is among the D (p > α: valid, else invalid);
    else under every D (all p > α: valid; all p ≤ α: invalid; otherwise not testable)."""
    if shape_flag:
        return "unreliable"
    if zeta_bs is not None:
        return "valid" if abs(zeta_bs) <= 1 else "invalid"
    if "empirical" in p_sim:
        return "valid" if p_sim["empirical"] > alpha else "invalid"
    ok = [p > alpha for p in p_sim.values()]
    if all(ok):
        return "valid"
    if not any(ok):
        return "invalid"
    return "not testable"


def verdict_conditional(*, zeta_bs: float | None, p_perm: float | None, shape_flag: bool, alpha: float = 0.05,
                        p_scale: float | None = None) -> str:
    """The conditional rule (the default; docs/methods.md, "Verdicts"): ``unreliable`` when the shape
    screen flags the statistic; a scale statistic (ZMS, MZ, VarZ, NLL, RCE: ``p_scale`` given) by its
    studentized bootstrap-t (docs/methods.md, "Scale test"; p_scale > α: valid); another predefined reference by ζ_BS
    (|ζ_BS| ≤ 1: valid); else the permutation test (p_perm > α: valid, else invalid)."""
    if shape_flag:
        return "unreliable"
    if p_scale is not None:
        return "valid" if p_scale > alpha else "invalid"
    if zeta_bs is not None:
        return "valid" if abs(zeta_bs) <= 1 else "invalid"
    if p_perm is None:
        raise ValueError("the conditional rule needs the permutation p-value of a statistic without a predefined "
                         "reference")
    return "valid" if p_perm > alpha else "invalid"


def decided_by(rule: str, *, zeta_bs: float | None, shape_flag: bool, dists: Sequence[str],
               scale: bool = False) -> str:
    """Name of the test that decides a row under ``rule`` (:attr:`ValidationRow.test`); ``scale``: a
    statistic with a bootstrap-t scale test (ZMS, MZ, VarZ, NLL, RCE)."""
    if shape_flag:
        return "shape screen"
    if rule == "conditional" and scale:
        return "bootstrap-t"
    if zeta_bs is not None:
        return "zeta_BS"
    if rule == "conditional":
        return "permutation"
    if rule == "paper":
        return "zeta_Sim"
    return "empirical" if "empirical" in dists else "every D"


def verdict_for(*, zeta_bs: float | None, zeta_sim: dict[str, float], d_sensitive: bool, shape_flag: bool) -> str:
    """The published rule (``rule="paper"``): the flowchart of the module docstring on ζ-scores."""
    if shape_flag:
        return "unreliable"
    if zeta_bs is not None:
        return "valid" if abs(zeta_bs) <= 1 else "invalid"
    ok = [abs(z) <= 1 for z in zeta_sim.values()]
    if all(ok):
        return "valid"
    if not any(ok):
        return "invalid"
    if d_sensitive:
        return "not testable"
    return "valid" if ok[0] else "invalid"


@dataset_args(x=False)  # a Dataset's x enters the verdict only when passed: validate(ds, x=ds.x)
def validate(
    E,
    u,
    *,
    x=None,
    stats: Sequence[str] = DEFAULT_STATS,
    dists: Sequence | None = None,
    n_bins: int | None = None,
    n_boot: int | None = None,
    n_mc: int | None = None,
    min_count: int = 30,
    shrink: bool = False,
    binning: str = "equal",
    log: bool | None = None,
    k_sensitivity: float = 2.0,
    rule: str = "conditional",
    alpha: float = 0.05,
    combine: str = DEFAULT_COMBINE,
    seed=None,
    name: str = "",
    progress: bool | None = None,
    groups=None,
    order=None,
    block_length: int | None = None,
    block_method: str = "circular",
    sequential: bool | None = None,
    tolerance=None,
) -> ValidationTable:
    """Validate the calibration of a dataset (E, u): the workflow of docs/methods.md, "Verdicts".

    Parameters
    ----------
    E, u : array_like, shape (M,)
        Errors and uncertainties. A constant u (one σ for every point: homoscedastic) is
        valid: the rows that need variation in u (CC, the binned statistics over bins of
        u) are ``not testable`` with the reason, the others and the joint verdict stand.
    x : array_like, dict or DataFrame, optional
        Input features (or the predicted value V) for the **adaptivity** rows: for each
        feature, each binned statistic of ``stats`` (ENCE, ZMSE, UCE) over bins of that
        feature, named ``"ENCE|<feature>"``, decided by the permutation test (Z shuffled
        across rows: exact for "Z independent of (u, x)" under any D) and part of the
        joint verdict. One array of M values (named ``x``), an (M, k) array (``x0``, ``x1``,
        …), a dict or a DataFrame of named columns (:func:`mcref.features.as_features`).
        Numeric features get ``n_bins`` equal-count bins (``binning``, shrunk to keep
        ``min_count`` points per bin); strings, booleans and integers with few levels one
        bin per level, small levels merged; so are numbers with at most 20 distinct values
        (docs/methods.md, "Adaptivity"). A :class:`mcref.datasets.Dataset` given as ``E``
        brings its u and name, not its x: ``validate(ds, x=ds.x)`` adds the rows of its
        covariate.
    stats : sequence of str, default: ("ZMS", "RCE", "CC", "ENCE", "ZMSE")
        Statistics of the registry (:data:`mcref.stats.STATISTICS`), and optionally ``"SKCE"``:
        the kernel calibration error of (E, u) read as the predictions N(0, u²), a row that tests
        the whole predictive law by :func:`mcref.skce_test` (its consistency test up to 20 000
        rows, the block test beyond; its own seed), reported beside the joint verdict, not part
        of it, and ``not testable`` with ``groups``/``order`` (docs/methods.md, "Kernel
        calibration error (SKCE)").
    dists : sequence, optional
        Generative distributions for the simulated references (at least one). Default:
        ("normal", "t6", "empirical", "permutation") up to M = 10⁵ points, the permutation D
        alone beyond (the others decide no verdict of the conditional rule; the notes say so
        and the ``paper`` column reads ``-``; docs/methods.md, "Large test sets").
        ``"empirical"`` resamples the data's own standardized Z; ``"permutation"`` shuffles
        the data's own Z across u: an exact test of consistency ("Z independent of u")
        under any D, blind to a scale error (ZMS, MZ, VarZ, NLL are constant under it,
        p = 1); docs/methods.md, "Joint verdict". The default rule decides by the permutation D
        and adds it when it is missing (the table's notes say so); ``dists=("permutation",)``
        gives the same verdicts, bit for bit, without the comparison columns' cost (the ``paper``
        column then reads ``-``: the published rule reads generative D only).
    n_bins : int, optional
        Bins of u for ENCE, ZMSE, UCE. Default: the papers' 20, or fewer when M/20 <
        ``min_count`` (:func:`mcref.binning.default_n_bins`; the table's notes say so). An
        explicit count is kept, or refused when it leaves bins below ``min_count`` (unless
        ``shrink``).
    n_boot : int, optional
        Bootstrap replicates. Default: :func:`default_n_boot` of M, the papers' 5000 up to
        M = 2·10⁵ points, fewer beyond (2000 at 5·10⁵, at least 1000 from 10⁶ on; the notes say so).
    n_mc : int, optional
        Monte Carlo repeats of the simulated references: the fixed test of ``n_mc`` repeats
        (``n_mc=10_000``: the papers' setting). Default: under the conditional rule, sequential
        tests capped at :func:`default_n_mc` of M (the papers' 10 000 up to M = 20 000 points,
        fewer for larger sets, 2000 from M = 100 000 on), see ``sequential``; under the other
        rules the fixed test of :func:`default_n_mc` repeats.
    min_count : int, default: 30
    shrink : bool, default: False
    binning : {"equal", "adaptive"}, default: "equal"
        Bins of the binned statistics, for the estimate, the bootstrap and the simulated
        references alike (adaptive: see :func:`mcref.statistic`).
    log : bool, optional
        Log grid of the adaptive bins (default True).
    k_sensitivity : float, default: 2
        A statistic is D-sensitive when two simulated references differ by more than
        ``k_sensitivity`` combined standard uncertainties (reported; the ``"paper"`` rule
        uses it).
    rule : {"conditional", "mc", "paper"}, default: "conditional"
        Verdict of the simulated-reference statistics and of the joint verdict:
        ``"conditional"`` decides CC, ENCE, ZMSE, UCE by the permutation test (exact
        under any D), ZMS (MZ, VarZ, NLL) and RCE by their studentized bootstrap-t scale
        tests, and the joint verdict by the Šidák combination of the permutation test of
        every pairing-dependent statistic with the scale test of ZMS; ``"mc"`` (the default before) by the Monte Carlo test under the
        empirical D (too liberal under heavy tails); ``"paper"`` by the published ζ_Sim
        rule (see the module docstring and docs/methods.md, "Verdicts"). The published
        verdict is reported in every row, and the row's ``test`` says which test decided.
    alpha : float, default: 0.05
        Level of the Monte Carlo test.
    combine : {"minp", "fisher", "cauchy"}, default: "minp"
        Combination of the per-statistic p-values in the joint verdict
        (:attr:`ValidationTable.joint`, docs/methods.md "Joint verdict"): the smallest p
        (ties broken by Fisher's statistic; the most powerful in the measurements there),
        Fisher's −2 Σ ln p, or the Cauchy combination.
    seed : None, int or SeedSequence
        One seed for the whole table: the bootstrap and the simulation get spawned children.
    name : str
        Dataset name shown in the table.
    progress : bool, optional
        Progress bars on stderr, one per phase: "bootstrap", "jackknife CC" (the O(M²)
        jackknife of CC's BCa interval) and "references <D, …>". None (default): only when
        stderr is a terminal and the whole table is expected to take more than about 2 s;
        True: always (also into a pipe or a log, refreshed sparsely); False: never. The
        table does not depend on it.
    groups : array_like, shape (M,), optional
        A label per row for **dependent test sets** (docs/methods.md, "Dependent test sets"):
        rows of one group (the conformers of a molecule, the frames of a trajectory, a
        patient's repeated measures) may have correlated errors, rows of different groups not.
        The intervals resample whole groups (cluster bootstrap, BCa acceleration from the
        delete-one-group jackknife), the scale tests studentize cluster sums (cluster
        bootstrap-t and a t(ν̂) reference laid out in the same clusters), and the permutation
        test moves whole groups' Z-vectors among the groups of equal size (groups of unequal
        sizes: it also exchanges the groups' u-levels, each group keeping its pattern of u,
        unless the levels follow the sizes; the rows of features ``x`` are ``not testable`` when
        no two groups share a size, since then Z never moves against x). The table reports
        the dependence (:attr:`ValidationTable.dependence`: intra-group correlation of Z and
        Z², design effect, effective rows) and says when the independent-rows rule would have
        been wrong. At least two groups, not one row per group. Without it (and without
        ``order``) the table is the same, bit for bit, as before these options existed.
    order : array_like, shape (M,), optional
        A time or sequence value per row (serial dependence): the intervals resample blocks of
        consecutive rows along it (``block_method``), the jackknife and the scale tests use
        non-overlapping blocks as clusters, and the permutation test moves whole blocks.
        Not with ``groups``.
    block_length : int, optional
        Rows per block along ``order``, 1 to M // 2 (default: automatic, Politis & White 2004
        with the 2009 correction, on Z² along ``order``; :func:`mcref.optimal_block_length`).
    block_method : {"circular", "moving", "stationary"}, default: "circular"
        The block bootstrap of ``order``.
    sequential : bool, optional
        Sequential Monte Carlo tests (docs/methods.md, "Sequential Monte Carlo tests"): each
        row's test (permutation, bootstrap-t) and the joint verdict's two parts stop as soon as
        the confidence sequence method decides p ≤ α or p > α with resampling risk 10⁻³, in
        rounds of 64, 128, 256, … repeats up to the cap ``n_mc`` (whose fixed decision a test
        still open there takes). A row's p is that of its own repeats (``n_test``), bit for bit
        the fixed test of those repeats. Default: True when ``n_mc`` is not given under the
        conditional rule, else False. Only the conditional rule.
    tolerance : float or dict, optional
        **Equivalence margins** (docs/methods.md, "Equivalence margins"): a number δ in (0, 1)
        is the relative error of the scale of u that the user accepts (the errors' spread
        σ = c·u with c ∈ [1 − δ, 1 + δ]): ZMS and VarZ in [(1 − δ)², (1 + δ)²], RCE in [−δ, δ],
        RCE2 in [1 − (1 + δ)², 1 − (1 − δ)²], ENCE ≤ δ and ZMSE ≤ 2 ln(1 + δ) (those of
        ``stats``). A dict ``{statistic: margin}`` sets them one by one: δ for those, an absolute
        margin m for the other statistics with a calibrated value (MZ, NLL: reference ± m; UCE:
        ≤ m); CC, MSE, MV have none. Each row with a margin gets an equivalence test at level
        ``alpha``: ``within`` when its BCa interval at level 1 − 2α (the same bootstrap
        replicates as its 95 % interval) lies inside the margin — the two one-sided tests
        (TOST) by interval inclusion, one-sided (non-inferiority) for ENCE, ZMSE, UCE — else
        ``not shown`` (:attr:`ValidationRow.equivalence`, ``p_equiv``; the column ``equiv`` and
        a note under the table; :attr:`ValidationTable.calibrated_within` for the model). The
        verdicts are unchanged: at large M a small miscalibration is ``invalid`` and yet
        ``within``. None (default): no equivalence test, the table as before, bit for bit.

    Returns
    -------
    ValidationTable

    Notes
    -----
    Every long phase returns to Python at least every ~0.1 s of work (bootstrap and
    jackknife in batches, references in chunks), so Ctrl-C stops the call within about a
    second (docs/methods.md, "Parallelism").

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = rng.lognormal(-1, 0.3, 1000); E = u * rng.normal(size=1000)
    >>> tab = validate(E, u, stats=["ZMS", "CC"], n_boot=1000, n_mc=1000, seed=0)
    >>> tab["ZMS"].verdict
    'valid'
    >>> tab.joint.verdict, tab.joint.stats  # one test of both rows at once: CC permuted, ZMS by its bootstrap-t
    ('valid', ('CC', 'ZMS'))
    >>> tab["CC"].test, tab["ZMS"].test  # the test that decided each row
    ('permutation', 'bootstrap-t')

    Equivalence margins: u 2 % too small at M = 10⁵ is shown (``invalid``), and yet within a
    5 % tolerance on the scale of u:

    >>> u = rng.lognormal(-1, 0.3, 100_000); E = 1.02 * u * rng.normal(size=u.size)
    >>> tab = validate(E, u, stats=["ZMS", "RCE"], n_boot=1000, n_mc=1000, seed=0, tolerance=0.05)
    >>> tab["ZMS"].verdict, tab["ZMS"].equivalence, tab["ZMS"].margin
    ('invalid', 'within', (0.9025, 1.1025))
    >>> tab.calibrated_within
    True
    """
    from ..core._checks import check_seed

    E, u = check_E_u(E, u, min_size=3)
    features = as_features(x, E.size)
    dep = dependence_args(E.size, groups, order, block_length, block_method)
    auto_notes = []
    if n_boot is None:
        n_boot = default_n_boot(E.size)
        if n_boot < PAPER_N_BOOT:
            auto_notes.append(f"B={n_boot}: the default for M={E.size} (default_n_boot: {PAPER_N_BOOT} up to "
                              f"M={N_BOOT_BUDGET // PAPER_N_BOOT}, then about {N_BOOT_BUDGET:.0e}/M, at least "
                              f"{MIN_DEFAULT_N_BOOT}); n_boot={PAPER_N_BOOT} for the papers' setting")
    n_boot = check_int(n_boot, "n_boot", minimum=1)
    rule = check_choice(rule, "rule", RULES)
    if sequential is None:  # the default: sequential tests up to the default N_MC; a given n_mc is the fixed test
        sequential = n_mc is None and rule == "conditional"
    elif sequential and rule != "conditional":
        raise ValueError(f"`sequential=True` goes with rule='conditional' (its tests stop early); rule={rule!r} "
                         "decides by the fixed-N_MC references")
    skipped = dists is None and E.size > COMPARISON_MAX_M
    if dists is None:
        dists = VALIDATE_DISTS if not skipped else ("permutation",)
        if skipped:
            auto_notes.append(f"dists: the comparison D ({', '.join(d for d in VALIDATE_DISTS if d != 'permutation')}"
                              f") are not simulated by default beyond M={COMPARISON_MAX_M} (they do not decide "
                              "the verdict; the paper column needs them): dists=(...) to add them")
    if n_mc is None:
        n_mc = default_n_mc(E.size)
        if n_mc < PAPER_N_MC:
            auto_notes.append(f"N_MC={n_mc}: the default for M={E.size} (default_n_mc: {PAPER_N_MC} up to M=20000, "
                              f"then about 2e8/M, at least {MIN_DEFAULT_N_MC}); n_mc={PAPER_N_MC} for the papers' "
                              "setting")
    n_mc = check_int(n_mc, "n_mc", minimum=2)
    if not k_sensitivity > 0:
        raise ValueError(f"`k_sensitivity` must be > 0, got {k_sensitivity}")
    alpha = check_probability(alpha, "alpha")
    progress = check_progress(progress)
    combine = check_combine(combine)
    if isinstance(stats, str):
        stats = [stats]
    stats, kernel = split_kernel_rows(stats)  # "SKCE": a row beside the statistics (verdict/_kernel_row.py)
    infos = [info(s) for s in stats]
    if not infos:
        raise ValueError("`stats` must name at least one statistic" + (
            " of the registry beside SKCE (e.g. ZMS; the SKCE row is reported beside the joint verdict of "
            "those), or call mcref.skce_test(E, 0, u) alone" if kernel else ""))
    names = [i.name for i in infos]
    margins = check_tolerance(tolerance, names, alpha)
    dists = [dists] if isinstance(dists, str) else list(dists)
    if not dists:
        raise ValueError("`dists` must list at least one distribution")
    # fail fast, before any work: a misspelt D first, then errors that leave the data-based D nothing to draw
    given = {i: get_distribution(d, Z=E / u) for i, d in enumerate(dists) if not _data_based(d)}
    _check_errors_vary(E, u, dists, rule)
    dists = [given[i] if i in given else get_distribution(d, Z=E / u) for i, d in enumerate(dists)]
    added = []
    if rule == "conditional":  # the D the rule decides by are always simulated
        for need in CONDITIONAL_DISTS:
            if need not in [d.label for d in dists]:
                dists.append(get_distribution(need, Z=E / u))
                added.append(need)
    few = [f"`{k}`={v}" for k, v in (("n_boot", n_boot), ("n_mc", n_mc)) if v < MIN_VERDICT_REPLICATES_HARD]
    if few:
        raise ValueError(
            f"{' and '.join(few)}: too few for a verdict. A BCa interval needs about 1000 bootstrap replicates "
            "or more for stable limits, and a Monte Carlo p-value near 0.05 about 1000 repeats to be resolved; "
            f"validate refuses fewer than {MIN_VERDICT_REPLICATES_HARD} (the defaults are 5000 and "
            f"default_n_mc(M) ≥ {MIN_DEFAULT_N_MC})"
        )
    if n_boot < MIN_VERDICT_REPLICATES or n_mc < MIN_VERDICT_REPLICATES:
        warnings.warn(FewReplicatesWarning(
            f"n_boot={n_boot}, n_mc={n_mc}: the verdicts are indicative only (stable verdicts need 1000 or more "
            "of each; defaults 5000 and default_n_mc(M) ≥ 2000)"), stacklevel=2)
    if n_bins is None:
        n_bins = DEFAULT_N_BINS
        if binning == "equal" and any(i.binned for i in infos):
            n_bins = default_n_bins(E.size, check_int(min_count, "min_count", minimum=1))
            if n_bins < DEFAULT_N_BINS:
                auto_notes.insert(0, f"bins: N={n_bins}, fewer than the default {DEFAULT_N_BINS}, so that every "
                                     f"bin keeps min_count={min_count} points (M={E.size})")
    if binning == "equal" and any(i.binned for i in infos) and not np.all(u == u[0]):
        # the bins are decided once here (a --shrink warning is said once), then passed down as is
        n_bins = resolve_n_bins(E.size, check_int(n_bins, "n_bins", minimum=1),
                                min_count=check_int(min_count, "min_count", minimum=1), shrink=shrink)
    if E.size < MIN_RELIABLE_M:
        warnings.warn(SmallSampleWarning(
            f"M={E.size} points: bootstrap intervals and Monte Carlo p-values of fewer than {MIN_RELIABLE_M} points "
            "say little; the verdicts are indicative only"), stacklevel=2)
    seed_seq = check_seed(seed)
    seed_used = seed_seq.entropy  # drawn from the OS when seed is None: recorded so the table can be reproduced
    ss_boot, ss_sim, ss_ties = seed_seq.spawn(3)  # the first two as before a third child existed
    ss_fit = seed_seq.spawn(1)[0]  # the fourth child: the conditional rule's scale test
    ss_margin = seed_seq.spawn(1)[0] if margins is not None else None  # the fifth: sets at the margins
    ss_kernel = seed_seq.spawn(1)[0] if kernel else None  # the last: the SKCE row (no other row's bits change)
    with _progress.session(progress, seconds=_validate_seconds(infos, E.size, n_boot, n_mc, len(dists), binning)):
        tab = _validate_run(E, u, infos, names, dists, n_bins, n_boot, n_mc, min_count, shrink, binning, log,
                            k_sensitivity, rule, alpha, name, seed_used, ss_boot, ss_sim, ss_ties, combine,
                            auto_notes, added, ss_fit, features, dep, margins, sequential=bool(sequential),
                            ss_margin=ss_margin)
    if kernel:  # beside the joint verdict, not in it (docs/methods.md, "Kernel calibration error (SKCE)")
        row, note = kernel_row(E, u, ss_kernel, alpha=alpha,
                               dependent=groups is not None or order is not None)
        tab = replace(tab, rows=[*tab.rows, row], notes=(*tab.notes, note))
    return tab if margins is None else replace(tab, tolerance=margins)


def _data_based(d) -> bool:
    """Whether a ``dists`` entry is a D drawn from the data's own Z (empirical, permutation)."""
    return isinstance(d, str) and d.strip().lower() in DATA_DISTS


def _check_errors_vary(E: np.ndarray, u: np.ndarray, dists, rule: str) -> None:
    """Refuse errors that are all 0, and Z = E/u of one value when a D built from the data's Z
    (empirical, permutation; the default rule always adds them) is asked for: a clear reason
    about the data, not about a `dists` entry the caller may never have written."""
    if not np.any(E):
        raise ValueError(f"the errors E are 0 for all {E.size} points: there is nothing to compare the "
                         "uncertainties with (check the error column, or the ref and pred columns)")
    z = E / u
    if (rule == "conditional" or any(map(_data_based, dists))) and np.all(z == z[0]):
        raise ValueError(f"every Z = E/u equals {z[0]:.6g}: the errors are exactly proportional to u, so the "
                         "data's own distribution of Z (the empirical and permutation D, which the default rule "
                         "decides by) has a single value; check the E and u columns")


def _starts_labels(starts: np.ndarray) -> np.ndarray:
    """Each sorted position's bin, from the bin starts."""
    return np.repeat(np.arange(starts.size - 1, dtype=np.int64), np.diff(starts))


def _binned_value(code: int, lab: np.ndarray, u: np.ndarray, E: np.ndarray, c2: float) -> float:
    """Binned statistic ``code`` of (E, u·√c2) over the bins given by each point's label ``lab``
    (the kernels' :func:`mcref.kernels.stats.finish_binned` on the bin sums, added in the order
    of the points as the Monte Carlo kernel adds them)."""
    nb = int(lab.max()) + 1
    z = E / u
    acc = np.empty((nb, 4))
    acc[:, 0] = np.bincount(lab, minlength=nb)
    acc[:, 1] = np.bincount(lab, u * u, minlength=nb) * c2
    acc[:, 2] = np.bincount(lab, E * E, minlength=nb)
    acc[:, 3] = np.bincount(lab, z * z, minlength=nb) / c2
    return float(finish_binned(code, acc, float(E.size)))


def _feature_rows(infos, features: Sequence[Feature], *, n_bins, min_count, binning, log, first_seen=None):
    """The adaptivity rows, feature by feature: ``(bins, rows)`` with ``bins[g] = (each point's
    bin of feature g (input order), how the feature was binned)`` and ``rows`` the pairs
    ``(info named "ENCE|x", g)`` for every binned statistic of ``infos`` and every feature g.
    A row reads the bins of its own feature ``bins[g]``, never another row's."""
    binned = [i for i in infos if i.binned]
    if features and not binned:
        raise ValueError("`x` is given but `stats` has no binned statistic (ENCE, ZMSE, UCE) to bin on it")
    bins, rows = [], []
    for g, f in enumerate(features):
        b = feature_bins(f, n_bins, min_count=min_count, binning=binning, log=log, first_seen=first_seen)
        bins.append((b.labels(), b.how))
        rows.extend((replace(inf, name=f"{inf.name}|{f.name}"), g) for inf in binned)
    return bins, rows


def _feature_row(xi, f: Feature, est: float, tested: float, sim, labels, flag: bool, alpha: float,
                 how: str, rounds=None) -> "ValidationRow":
    """An adaptivity row: the estimate over bins of the feature and its permutation test
    (tested against the set's own scale, one-sided), with the references of every D."""
    nan = float("nan")
    sim = row_simulation(sim, rounds, xi.name)  # the row's own permutation repeats: not its company's
    refs = {d: sim.reference(xi.name, d) for d in labels}
    pv = {d: sim.p_value(xi.name, d, tested if d == "permutation" else est, alternative=xi.alternative)
          for d in labels}
    n_test = rounds.n_test(xi.name) if rounds is not None else None
    if n_test is not None:  # decided sequentially: the p of the repeats it was decided on
        t = rounds.tests[xi.name]
        pv["permutation"] = (t.p, t.se)
    p = pv["permutation"][0]
    verdict = "valid" if p > alpha else "invalid"
    return ValidationRow(
        name=xi.name, estimate=est, bias=nan, low=nan, high=nan, interval_method="none", reference=None,
        zeta_bs=None, sim=refs, zeta_sim={d: nan for d in labels}, zeta_sim2={d: nan for d in labels},
        sensitivity=[], d_sensitive=False, shape_flag=flag, verdict=verdict, test="permutation", p_test=p,
        p_sim={d: q for d, (q, _) in pv.items()}, p_se={d: se for d, (_, se) in pv.items()},
        alternative=xi.alternative, verdict_paper=verdict, excludes_estimate=False, reason=how, n_test=n_test,
    )


def _validate_seconds(infos, m: int, n_boot: int, n_mc: int, n_dists: int, binning: str) -> float:
    """Expected duration of :func:`validate` (:func:`mcref.core._progress.estimate_seconds`)."""
    adaptive = binning == "adaptive" and any(i.binned for i in infos)
    return _progress.estimate_seconds(**{"bootstrap_adaptive" if adaptive else "bootstrap": float(n_boot) * m},
                                      jackknife_adaptive=float(m) ** 2 * sum(i.binned for i in infos) * adaptive,
                                      references=float(n_mc) * m * n_dists)


def _joint_of(rows, untest, tested_names, sim, fit, perm_estimates, *, rule, combine, alpha, fixed=()):
    """The model-level verdict: the statistics the rule decides (not unreliable), each by its
    simulated law (docs/methods.md, "Joint verdict"); conditional rule: Šidák of the permutation
    test of consistency and adaptivity and the bootstrap-t scale test. ``untest``: the rows that are
    not testable; ``fixed``: the rows the permutation cannot change (RCE with one u, the rows of
    :func:`mcref.verdict._testable.fixed_by_permutation`): neither enters."""
    tested_names = [n for n in tested_names if info(row_statistic(n)).errors]  # MV: not a test of the errors
    rows_t = [r for r in rows if r.name not in untest]
    estimates, alternatives = {r.name: r.estimate for r in rows_t}, {r.name: r.alternative for r in rows_t}
    flagged = [r.name for r in rows_t if r.shape_flag and row_feature(r.name) is None]
    tested_names = [n for n in tested_names if n not in untest and n not in fixed]
    if rule == "conditional":
        return conditional_joint_verdict(sim, estimates, alternatives, stats=tested_names, flagged=flagged,
                                         scale_sim=fit, combine=combine, alpha=alpha, perm_estimates=perm_estimates)
    return joint_verdict(sim, estimates, alternatives, stats=[s for s in tested_names if s not in flagged],
                         combine=combine, alpha=alpha, excluded=flagged, perm_estimates=perm_estimates)


def _run_notes(auto_notes, untest, feature_hows, fit, added) -> list[str]:
    """The table's notes: the defaults validate chose for this M (bins, N_MC), the rows not
    testable, each feature's bins, the scale test's note, the D the rule added."""
    notes = list(auto_notes)
    for reason in dict.fromkeys(untest.values()):
        notes.append(f"{', '.join(n for n, r in untest.items() if r == reason)}: not testable: {reason}")
    for fname, how in dict(feature_hows).items():
        notes.append(f"feature {fname}: {how}")
    if fit is not None and fit.note:
        notes.append(fit.note)
    if added:
        them = "them" if len(added) > 1 else "it"
        notes.append(f"dists: {' and '.join(added)} added (the conditional rule decides by {them}; rule='mc' or "
                     f"'paper' to leave {them} out)")
    return notes


def _stat_row(inf, b: BootstrapResult, prep, sim, labels, gen, centred, fit, screen, ties, *, rule: str,
              alpha: float, k_sensitivity: float, rounds=None) -> ValidationRow:
    """The row of statistic ``inf``: its interval ``b``, references and p under every D of ``sim``,
    ζ-scores, D-sensitivity, shape flag and the verdict of ``rule`` (docs/methods.md, "Verdicts")."""
    sim = row_simulation(sim, rounds, inf.name)  # the row's own permutation repeats: not its company's
    ref = inf.reference(prep.E, prep.u) if inf.reference is not None else None  # u order: any row order
    zbs = zeta(b.estimate, ref, b.low, b.high) if ref is not None else None
    refs = {d: invariant_reference(sim.reference(inf.name, d), b.estimate) if untestable(inf.name, d)
            else sim.reference(inf.name, d) for d in labels}
    zsim = {d: zeta(b.estimate, r.mean, b.low, b.high, u_ref=r.se) for d, r in refs.items()}
    zsim2 = {d: zeta_sim2(b.estimate, r.mean, r.low, r.high) for d, r in refs.items()}
    alt = alternative_for(inf.name)
    pv = {d: (1.0, 0.0) if untestable(inf.name, d) else
          sim.p_value(inf.name, d, centred.get(inf.name, b.estimate) if d == "permutation" else b.estimate,
                      alternative=alt)
          for d in labels}
    n_test = rounds.n_test(inf.name) if rounds is not None else None
    if n_test is not None and inf.name not in (fit.p if fit is not None else {}):  # decided sequentially
        t = rounds.tests[inf.name]
        pv["permutation"] = (t.p, t.se)
    sens = [sim.paired_difference(inf.name, gen[0], d) for d in gen[1:]]
    d_sens = any(p.sensitive(k_sensitivity) for p in sens)
    flag = screen.unreliable(inf.name)
    if fit is not None and inf.name in fit.unreliable:  # the scale test's own screen (tails, not skewness)
        flag = fit.unreliable[inf.name]
    v_paper = verdict_for(zeta_bs=zbs, zeta_sim={d: zsim[d] for d in gen}, d_sensitive=d_sens, shape_flag=flag)
    scale = fit is not None and inf.name in fit.p
    p_test = None
    if scale:  # NaN: the scale test could not run (fitted ν̂ ≤ 2), the row is unreliable
        p_test = fit.p[inf.name] if fit.p[inf.name] == fit.p[inf.name] else None
    elif rule == "conditional" and not scale and ref is None:
        p_test = pv["permutation"][0]
    elif rule == "mc" and ref is None and "empirical" in pv:
        p_test = pv["empirical"][0]
    if rule == "conditional":
        v_rule = verdict_conditional(zeta_bs=zbs, p_perm=pv["permutation"][0], shape_flag=flag, alpha=alpha,
                                     p_scale=p_test if scale else None)
    elif rule == "mc":
        v_rule = verdict_mc(zeta_bs=zbs, p_sim={d: p for d, (p, _) in pv.items()}, shape_flag=flag, alpha=alpha)
    else:
        v_rule = v_paper
    if not inf.errors:  # MV: u alone, the data's value in every simulated set: nothing can reject it
        v_rule = v_paper = "not testable"
        p_test = None
    return ValidationRow(
        name=inf.name, estimate=b.estimate, bias=b.bias, low=b.low, high=b.high, interval_method=b.method,
        reference=ref, zeta_bs=zbs, sim=refs, zeta_sim=zsim, zeta_sim2=zsim2, sensitivity=sens,
        d_sensitive=d_sens, shape_flag=flag, verdict=v_rule,
        test="none" if not inf.errors else "t(fit)" if scale and not flag and inf.name in fit.estimates else
        decided_by(rule, zeta_bs=zbs, shape_flag=flag, dists=labels, scale=scale), p_test=p_test,
        p_sim={d: p for d, (p, _) in pv.items()}, p_se={d: se for d, (_, se) in pv.items()}, alternative=alt,
        verdict_paper=v_paper, excludes_estimate=not (b.low <= b.estimate <= b.high), interval_note=b.note,
        tie_range=ties.get(inf.name), reason="" if inf.errors else U_ONLY_REASON, n_test=n_test if p_test is not None
        else None,
    )


def _validate_run(E, u, infos, names, dists, n_bins, n_boot, n_mc, min_count, shrink, binning, log, k_sensitivity,
                  rule, alpha, name, seed_used, ss_boot, ss_sim, ss_ties, combine, auto_notes=(),
                  added=(), ss_fit=None, features=(), dep=None, margins=None, sequential=False,
                  ss_margin=None) -> ValidationTable:
    """The work of :func:`validate`, inside its progress session (arguments checked)."""
    all_infos, all_names = infos, names
    # constant u: the rows that need variation in u are not testable (the others stand)
    untest = untestable_data(infos, E, u)
    infos = [i for i in infos if i.name not in untest]
    names = [i.name for i in infos]
    # checked once (validate), prepared once: every step below reads the same sorted data
    prep = prepare_for(infos, E, u, n_bins=n_bins, min_count=min_count, shrink=shrink, binning=binning, log=log)
    units = units_for(prep.order, **(dep or {}), z2=prep.z2, us=prep.u)  # None without groups and order
    check_units_support(infos, prep, units)
    # a categorical feature's bins are numbered along ascending u, not by their labels' spelling
    fbins, xrows = _feature_rows(all_infos, features, n_bins=n_bins, min_count=min_count, binning=binning, log=log,
                                 first_seen=prep.order)
    if not infos and not xrows:
        raise ValueError(f"{', '.join(untest)} cannot be tested: {'; '.join(sorted(set(untest.values())))}. "
                         "Ask for ZMS or RCE too, or give features `x` for the adaptivity rows")
    with warnings.catch_warnings():
        # the table marks an interval that excludes its estimate ("!" and excludes_estimate)
        warnings.simplefilter("ignore", BiasedIntervalWarning)
        boots: dict[str, BootstrapResult] = bootstrap_prepared(infos, prep, E, u, n_boot=n_boot, method="bca",
                                                               level=0.95, seed=ss_boot, units=units) if infos else {}
    # one shuffle per repeat serves the rows of u and of every feature; under the permutation D the
    # binned rows are measured against the set's own scale u·√ZMS (docs/methods.md, "Adaptivity")
    c2 = float(np.mean(prep.z2))
    labs = [lab[prep.order] for lab, _ in fbins]  # feature g: each u-sorted position's bin
    sim_infos = infos + [xi for xi, _ in xrows]
    grp = [-1] * len(infos) + [g for _, g in xrows]
    # the rows the permutation by units cannot change, known before any repeat (docs/methods.md, "Dependent test sets")
    fixed = fixed_by_permutation([i.name for i in sim_infos], units)
    centred = {i.name: _binned_value(i.code, _starts_labels(prep.starts), prep.u, prep.u * prep.z, c2)
               for i in infos if i.binned}
    # feature rows: tested against the set's own scale, summed in u order (any input row order)
    tested = {xi.name: _binned_value(xi.code, labs[g], prep.u, prep.u * prep.z, c2) for xi, g in xrows}
    screen = shape_screen_prepared(prep)

    fitted: dict = {}  # ν̂ of Z, fitted once for every round

    def fit_run(b: int, only=None):  # the conditional rule's scale tests (docs/methods.md, "Scale test"), B = N_MC
        return scale_tests(names, E, u, n_boot=b, seed=fresh(ss_fit), estimates={n: boots[n].estimate for n in names},
                           prep=prep, units=units, cache=fitted, only=only)

    rounds = None
    if sequential and not untest:  # docs/methods.md, "Sequential Monte Carlo tests"
        sim, sim_joint, fit, fit_joint, rounds = sequential_work(
            sim_infos, prep, dists, n_mc, ss_sim, {**centred, **tested}, boots, screen, fit_run, alpha,
            features=labs, grp=grp, perm_scale=c2, units=units, fixed=fixed)
    else:
        sim = sim_joint = simulate_prepared(sim_infos, prep, dists, n_mc=n_mc, seed=ss_sim, features=labs, grp=grp,
                                            perm_scale=c2, units=units)
        fit = fit_joint = fit_run(n_mc) if rule == "conditional" else None
    labels = [d.label for d in sim.dists]
    # the generative D (the user's, not the permutation D nor the D the rule added) enter the published rule
    # and the D-sensitivity flag, as before the permutation D existed
    gen = [d for d in labels if d != "permutation" and d not in added] or [d for d in labels if d not in added]
    binned = any(i.binned for i in infos)
    ties: dict[str, tuple[float, float]] = {}
    for inf in infos:
        if inf.binned and binning == "equal":
            ts = tie_spread_prepared(inf, prep, n_orders=100, seed=ss_ties)
            if ts.n_straddling:
                ties[inf.name] = (ts.low, ts.high)
    rows = [_stat_row(inf, boots[inf.name], prep, sim, labels, gen, centred, fit, screen, ties, rule=rule, alpha=alpha,
                      k_sensitivity=k_sensitivity, rounds=rounds) for inf in infos]
    # validate(tolerance=...): the equivalence tests, ENCE and ZMSE against sets simulated at the margin
    rows = with_margins(rows, boots, margins, alpha, at_margin=margin_sampler(infos, prep, E, u, n_mc, ss_margin))
    for xi, g in xrows:
        # summed in u order, as every other row: the same bits whatever the order of the input rows
        est = _binned_value(xi.code, labs[g], prep.u, prep.E, 1.0)
        rows.append(_feature_row(xi, features[g], est, tested[xi.name], sim, labels,
                                 screen.unreliable(row_statistic(xi.name)), alpha, fbins[g][1], rounds))
    # a permutation reference that cannot vary gives no p: known by construction, or measured (a safety net)
    fixed = {**fixed, **degenerate_rows(sim, [n for n in sim.names if n not in fixed],
                                            n_of=rounds.n_info if rounds is not None else None)}
    gone = {r.name: fixed[r.name] for r in rows if r.name in fixed and r.test == "permutation"}
    rows = [not_testable(r, fixed[r.name]) if r.name in fixed else r for r in rows]
    if rule == "conditional" and gen == ["permutation"]:  # no generative D: the published rule has nothing to read
        rows = [replace(r, verdict_paper="-") for r in rows]  # (its ζ_Sim under the permutation D is no paper's)
    for nm, reason in untest.items():
        rows.append(untestable_row(nm, labels, reason, alternative_for(nm)))
    rows.sort(key=lambda r: (row_feature(r.name) is not None, all_names.index(row_statistic(r.name))))
    joint = _joint_of(rows, {**untest, **gone}, names + [xi.name for xi, _ in xrows], sim_joint, fit_joint,
                      {**centred, **tested}, rule=rule, combine=combine, alpha=alpha, fixed=fixed)
    notes = _run_notes(auto_notes, {**untest, **gone}, [(f.name, how) for f, (_, how) in zip(features, fbins)], fit,
                       added)
    if rounds is not None:
        notes.append(rounds.note())
    paper = paper_note(rows, gen, k_sensitivity)
    if paper:
        notes.append(paper)
    diag = dependence_diagnostics(prep.z, units, alpha) if units is not None else None
    return ValidationTable(rows=rows, shape=screen, M=E.size, n_bins=sim.n_bins, n_boot=n_boot, n_mc=n_mc,
                           dists=tuple(labels), name=name, rule=rule, alpha=alpha, seed=seed_used, binned=binned,
                           joint=joint, notes=tuple(notes), dependence=diag, rounds=rounds)

