"""The verdict table of :func:`mcref.validate`: its rows, and how it is written (text, JSON, CSV).

:class:`ValidationTable` is the result; this module owns its rendering (the compact and the
wide text views, the notes under the table, the legend), while ``_validate.py`` owns the
workflow that fills it (docs/architecture.md).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Sequence

from ..core._dependence import DependenceDiagnostics
from ._joint import JointVerdict
from ..report._render import csv_text, EXCLUDES_NOTE, json_text, p_text
from ..reference import PairedDifference, ReferenceResult
from ..shape import ShapeScreen
from ._equivalence import SIMULATED_MARGINS
from ..report._words import GLOSSARY, finding, glossary_link, headline_parts, row_property
from ..stats import info

__all__ = ["ValidationRow", "ValidationTable", "paper_note", "KERNEL_ROWS",
           "LEGEND", "MIN_RELIABLE_M", "MIN_VERDICT_REPLICATES",
           "MIN_VERDICT_REPLICATES_HARD"]

#: fewest bootstrap replicates / Monte Carlo repeats from which validate gives a verdict at all
MIN_VERDICT_REPLICATES_HARD = 100
#: below this, verdicts are reported as indicative (FewReplicatesWarning)
MIN_VERDICT_REPLICATES = 1000
#: the rows of validate that are not statistics of the registry: {name: the property they test}
#: (docs/methods.md, "Kernel calibration error (SKCE)"; :mod:`mcref.verdict._kernel_row`)
KERNEL_ROWS = {"SKCE": "calibration"}
#: below this many points, validate warns that its verdicts are indicative only (SmallSampleWarning)
MIN_RELIABLE_M = 30

#: the legend's words: one plain sentence per name of a test or a method, and where it is explained
GLOSSARY_LEGEND = ("words:", *(f"  {term}: {sentence} ({glossary_link(term)})" for term, (sentence, _) in GLOSSARY.items()))

LEGEND = (
    "legend:",
    "  estimate      the statistic on the data; BCa 95% CI its bootstrap interval ('!': excludes the estimate)",
    "  ref, zeta_BS  predefined reference (ZMS 1, RCE 0, ...) and zeta = (estimate - ref) / half-width of the CI on",
    "                the side of ref; |zeta| <= 1 means ref is inside the CI",
    "  ref[D]        mean of the statistic over N_MC calibrated datasets E* = u*eps, eps ~ D (± its Monte Carlo se)",
    "  p[D]          Monte Carlo p-value of the estimate against those simulated values (one-sided for ENCE,",
    "                ZMSE, UCE: large is bad; two-sided otherwise)",
    "  zSim[D]       the published zeta of the CI against ref[D] (with its se); zSim2[D] uses the 95% range of",
    "                the simulated values instead of the CI",
    "  D-sens        the references of two D differ by more than 2 combined standard uncertainties",
    "  p[permutation] the permutation test: p-value of the estimate among the statistic on the data's Z",
    "                shuffled across rows, u and features x kept (exact for 'Z independent of (u, x)' under any",
    "                D; 1 for ZMS-type statistics, which do not depend on the pairing); p[emp] (compact view):",
    "                p[empirical]",
    "  ENCE|x, ...   adaptivity rows: the statistic over bins of the feature x (validate(x=...)); no bootstrap",
    "                interval ('-'), decided by the permutation test with the rows of u",
    "  test, p       the test that decided the verdict, and its p-value: perm (permutation), boot-t (studentized",
    "                bootstrap-t: ZMS, RCE), zeta_BS, emp (empirical D), every D, zeta_Sim",
    "                (rule='paper') or shape (the shape screen: unreliable)",
    "  SKCE          validate(stats=[..., 'SKCE']): the kernel calibration error of N(0, u^2), tested by consist",
    "                (its consistency test: errors redrawn as u*eps) or block (M > 20000); beside the joint verdict",
    "  finding       the row's answer in the words of the property it tested (docs/methods.md, 'Words of the",
    "                reports'): calibrated / miscalibrated (the set's scale: ZMS, RCE), consistent / inconsistent",
    "                (u's pattern along u, up to the set's scale: CC, ENCE, ZMSE), adaptive / not adaptive (along",
    "                a feature x, up to scale: ENCE|x, ZMSE|x); not testable (reason in the notes) / unreliable",
    "                (shape screen); paper: the published rule's valid / invalid, for comparison",
    "  joint verdict one Monte Carlo test of all the statistics at once (their p-values combined and ranked",
    "                among the simulated sets'; docs/methods.md, 'Joint verdict'): the model-level verdict,",
    "                valid / invalid, printed first",
    *GLOSSARY_LEGEND,
)


#: the legend's line of a table with equivalence margins (validate(tolerance=...))
EQUIVALENCE_LEGEND = (
    "  equiv         within = the BCa interval at level 1 - 2 alpha (the same replicates) lies inside the",
    "                statistic's equivalence margin (TOST); not shown; unreliable (shape screen); '-' no margin",
    "                (docs/methods.md, 'Equivalence margins')",
)


#: the legend's lines of a table with dependent rows (validate(groups=...) or order=...)
DEPENDENCE_LEGEND = (
    "  groups/order  dependent rows: the BCa intervals resample whole groups (or blocks along order) and take",
    "                their acceleration from the delete-one-group (block) jackknife; boot-t studentizes cluster",
    "                sums; perm moves whole groups' Z-vectors (unequal sizes: exchanges the groups' u-levels;",
    "                order: whole blocks); p[normal], p[t(6)], p[emp] still simulate independent rows",
    "  design effect the variance of <Z2> over its independent-rows variance; effective rows = M / design effect;",
    "                above 1.42 an independent-rows test at alpha = 0.05 would reject 10 % or more of calibrated",
    "                sets (docs/methods.md, 'Dependent test sets')",
    "  bca-t         the BCa interval of ZMS and RCE with groups/order, with expanded t(nu) critical values",
    "                (few units); below 35 effective units the notes say its coverage is not assured",
)


@dataclass(frozen=True)
class ValidationRow:
    """One statistic of a validation table.

    Attributes
    ----------
    name : str
    estimate, bias, low, high : float
        θ̂, bootstrap bias and the BCa interval I_BS.
    interval_method : str
        ``"bca"``, ``"bca-t"`` (ZMS and RCE with ``groups``/``order``: the small-G BCa of
        docs/methods.md, "Dependent test sets") or the fallback used.
    reference : float or None
        Predefined reference (None when the statistic has none).
    zeta_bs : float or None
        ζ against the predefined reference.
    sim : dict[str, ReferenceResult]
        Simulated reference per D label.
    zeta_sim, zeta_sim2 : dict[str, float]
        ζ_Sim and ζ_Sim2 per D label.
    p_sim, p_se : dict[str, float]
        Monte Carlo p-value of θ̂ per D label and its Monte Carlo standard error.
    alternative : str
        Direction of the Monte Carlo test (:func:`alternative_for`).
    sensitivity : list[PairedDifference]
        θ_ref(D_first) − θ_ref(D) for the other D, with paired and unpaired se.
    d_sensitive : bool
        The D-sensitivity flag.
    shape_flag : bool
        The shape screen flags this statistic.
    verdict : str
        Verdict of the table's rule: ``valid``, ``invalid``, ``not testable``, ``unreliable``.
    test : str
        The test that decided :attr:`verdict`: ``"zeta_BS"`` (predefined reference),
        ``"permutation"`` and ``"bootstrap-t"`` (conditional rule: consistency statistics, and
        the scale statistics ZMS, MZ, VarZ, NLL and RCE by their studentized bootstrap-t),
        ``"empirical"`` (``rule="mc"``), ``"every D"`` (``rule="mc"`` without the
        empirical D), ``"zeta_Sim"`` (``rule="paper"``) or ``"shape screen"``
        (``unreliable``).
    p_test : float or None
        The p-value of that test when it is a Monte Carlo or permutation test.
    verdict_paper : str
        Verdict of the published rule (``rule="paper"``), for comparison.
    excludes_estimate : bool
        The bootstrap interval does not contain θ̂ (strong finite-sample bias).
    tie_range : (float, float) or None
        For a binned statistic whose tied u straddle a bin cut: its range over 100 random
        orders of the ties (:func:`mcref.tie_spread`); None otherwise.
    margin : (float, float) or None
        The equivalence region [L, U] of ``validate(tolerance=...)`` (L = −inf: an upper margin
        only; docs/methods.md, "Equivalence margins"); None without a margin.
    equiv_low, equiv_high : float or None
        The BCa interval at level 1 − 2α, from the same replicates as [low, high].
    p_equiv : float or None
        The TOST p-value: the larger of the two one-sided p-values (the upper one alone for an
        upper margin), from the bootstrap distribution.
    equivalence : str or None
        ``"within"`` (the 1 − 2α interval lies inside the margin: equivalence shown at level α),
        ``"not shown"`` or ``"unreliable"`` (the shape screen flags the row); None without a margin.
    """

    name: str
    estimate: float
    bias: float
    low: float
    high: float
    interval_method: str
    reference: float | None
    zeta_bs: float | None
    sim: dict[str, ReferenceResult]
    zeta_sim: dict[str, float]
    zeta_sim2: dict[str, float]
    sensitivity: list[PairedDifference]
    d_sensitive: bool
    shape_flag: bool
    verdict: str
    p_sim: dict[str, float] = field(default_factory=dict)
    p_se: dict[str, float] = field(default_factory=dict)
    alternative: str = "two-sided"
    verdict_paper: str = ""
    excludes_estimate: bool = False
    tie_range: tuple[float, float] | None = None
    #: why a row is ``not testable`` (constant u), or how an adaptivity row was binned
    reason: str = ""
    test: str = ""
    p_test: float | None = None
    #: the repeats behind ``p_test`` when a sequential test decided the row (None: the table's N_MC)
    n_test: int | None = None
    margin: tuple[float, float] | None = None
    equiv_low: float | None = None
    equiv_high: float | None = None
    p_equiv: float | None = None
    equivalence: str | None = None
    #: why the interval's coverage is not assured (few clusters or blocks), or "" (BootstrapResult.note)
    interval_note: str = ""

    @property
    def tested(self) -> str:
        """The property the row tested: ``"calibration"`` (the set's scale: ZMS, RCE, ...),
        ``"consistency"`` (u's pattern along u, up to scale: CC, ENCE, ZMSE) or ``"adaptivity"``
        (along a feature x: ``ENCE|x``); ``"calibration"`` for the SKCE row (the whole predictive
        law N(0, u²)) (docs/methods.md, "Words of the reports")."""
        if self.name in KERNEL_ROWS:
            return KERNEL_ROWS[self.name]
        return row_property(self.name, info(self.name.split("|", 1)[0]).kind)

    @property
    def finding(self) -> str:
        """:attr:`verdict` in the words of the property tested: calibrated / miscalibrated,
        consistent / inconsistent, adaptive / not adaptive; ``not testable`` and ``unreliable``
        as they are."""
        return finding(self.tested, self.verdict)

    def flat(self, equivalence: bool | None = None) -> dict[str, Any]:
        """The row as a flat dict (one column per D for the per-D quantities); the equivalence
        columns (``margin_low`` … ``equivalence``) when ``equivalence`` (default: when the row has a
        margin; a table with a ``tolerance`` gives them to every row)."""
        out: dict[str, Any] = {
            "stat": self.name, "estimate": self.estimate, "bias": self.bias, "low": self.low, "high": self.high,
            "interval": self.interval_method, "ref": self.reference, "zeta_BS": self.zeta_bs,
            "interval_note": self.interval_note,
        }
        half = 0.5 * (self.high - self.low)
        for d, r in self.sim.items():
            out[f"ref_{d}"] = r.mean
            out[f"u_ref_{d}"] = r.se
            # the Monte Carlo term should be negligible, 2·u(θ_ref) ≪ half-width of I_BS
            # (docs/methods.md, "Simulated references")
            out[f"mc_ratio_{d}"] = 2.0 * r.se / half if half > 0 else float("inf")
            out[f"p_{d}"] = self.p_sim.get(d)
            out[f"p_se_{d}"] = self.p_se.get(d)
            out[f"zeta_Sim_{d}"] = self.zeta_sim[d]
            out[f"zeta_Sim2_{d}"] = self.zeta_sim2[d]
        out["alternative"] = self.alternative
        out["excludes_estimate"] = self.excludes_estimate
        out["tie_low"], out["tie_high"] = self.tie_range if self.tie_range else (None, None)
        out["D_sensitive"] = self.d_sensitive
        out["shape_flag"] = self.shape_flag
        out["tested"] = self.tested
        out["finding"] = self.finding
        out["verdict"] = self.verdict
        out["test"] = self.test
        out["p_test"] = self.p_test
        out["n_test"] = self.n_test
        out["verdict_paper"] = self.verdict_paper
        if self.margin is not None if equivalence is None else equivalence:
            out["margin_low"], out["margin_high"] = self.margin if self.margin else (None, None)
            out["equiv_low"], out["equiv_high"] = self.equiv_low, self.equiv_high
            out["p_equiv"], out["equivalence"] = self.p_equiv, self.equivalence
        return out


@dataclass(frozen=True)
class ValidationTable:
    """Result of :func:`validate`: one :class:`ValidationRow` per statistic, the shape screen,
    and the model-level :class:`~mcref.JointVerdict` ``joint`` (docs/methods.md,
    "Joint verdict"; printed under the table, ``"joint"`` in JSON, ``joint_*`` columns in CSV)."""

    rows: list[ValidationRow]
    shape: ShapeScreen
    M: int
    n_bins: int
    n_boot: int
    n_mc: int
    dists: tuple[str, ...]
    name: str = ""
    rule: str = "conditional"
    alpha: float = 0.05
    seed: int | None = None
    binned: bool = True
    explain: bool = False
    #: the model-level verdict (docs/methods.md, "Joint verdict"); None when no statistic is left to test
    joint: JointVerdict | None = None
    #: notes on how the table was computed (e.g. fewer bins than the default), printed under it
    notes: tuple[str, ...] = ()
    #: print every column (references, p-values and ζ-scores per D) instead of the compact view
    wide: bool = False
    #: dependent rows (``validate(groups=...)`` or ``order=...``): what the labels say about the
    #: dependence (intra-group correlation, design effect, effective rows; docs/methods.md,
    #: "Dependent test sets"); None without labels
    dependence: DependenceDiagnostics | None = None
    #: the sequential Monte Carlo tests (:class:`mcref.verdict._rounds.Rounds`: each test's repeats, the
    #: repeats run; docs/methods.md, "Sequential Monte Carlo tests"); None for the fixed-N_MC table
    rounds: Any = field(default=None, repr=False, compare=False)
    #: the equivalence margins of ``validate(tolerance=...)``, {statistic: margin} (docs/methods.md,
    #: "Equivalence margins"); None without
    tolerance: dict[str, float] | None = None

    @property
    def calibrated_within(self) -> bool | None:
        """Whether every row with a margin is ``within`` it (the model is calibrated within the
        margins, each shown at level α); None without ``tolerance``."""
        if self.tolerance is None:
            return None
        marked = [r for r in self.rows if r.margin is not None]
        return bool(marked) and all(r.equivalence == "within" for r in marked)

    def __getitem__(self, stat: str) -> ValidationRow:
        # "ENCE|x": an adaptivity row; "SKCE": the kernel row
        nm = stat if "|" in stat else stat.upper() if stat.upper() in KERNEL_ROWS else info(stat).name
        for r in self.rows:
            if r.name == nm:
                return r
        raise KeyError(stat)

    def records(self) -> list[dict[str, Any]]:
        return [r.flat(self.tolerance is not None) for r in self.rows]

    def to_frame(self):
        """A pandas DataFrame, one row per statistic (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("ValidationTable.to_frame() needs pandas: pip install pandas") from None
        return pd.DataFrame.from_records(self.records()).set_index("stat")

    @property
    def decisive_dist(self) -> str:
        """The D whose reference and p-value the short table shows: the empirical D when it
        decides the verdicts (``rule="mc"``), else the first D."""
        return "empirical" if (self.rule == "mc" and "empirical" in self.dists) else self.dists[0]

    def to_json(self) -> str:
        """JSON: the run's settings, the shape screen, one record per statistic and the joint
        verdict (NaN as null, infinities as "inf"/"-inf": :func:`mcref.report._render.json_text`)."""
        return json_text({
            "dataset": self.name, "seed": self.seed, "M": self.M, "n_bins": self.n_bins if self.binned else None,
            "n_boot": self.n_boot, "n_mc": self.n_mc, "dists": list(self.dists), "rule": self.rule,
            "alpha": self.alpha, "shape": asdict(self.shape), "rows": self.records(),
            "joint": self.joint.flat() if self.joint else None,
            **({"dependence": self.dependence.flat()} if self.dependence is not None else {}),
            **({"sequential": {"n_permutation": self.rounds.n_perm, "n_scale": self.rounds.n_scale,
                               "risk": self.rounds.eps}} if self.rounds is not None else {}),
            **({"tolerance": self.tolerance, "calibrated_within": self.calibrated_within}
               if self.tolerance is not None else {}),
        })

    def to_csv(self) -> str:
        """CSV, one row per statistic; the dataset name and the seed are the first columns (so
        that every row says how to reproduce it)."""
        # the joint verdict is one per table: repeated on every row, as the dataset and the seed
        jv = {f"joint_{k}": v for k, v in self.joint.flat().items()} if self.joint else {}
        if self.dependence is not None:
            jv.update({f"dependence_{k}": v for k, v in self.dependence.flat().items()})
        if self.tolerance is not None:
            jv["calibrated_within"] = self.calibrated_within
        return csv_text([{"dataset": self.name, "seed": self.seed, **r, **jv} for r in self.records()])

    def __str__(self) -> str:
        wide = self.wide or self.explain
        head, lines = _columns(self, wide)
        widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        joint = (self.joint.line(self.n_mc) if self.joint
                 else "joint verdict: none (no statistic left to test: the shape screen calls every statistic "
                      "unreliable, or the table holds only statistics no test can reject, such as MV, or "
                      "ZMS-type statistics under the permutation D)")
        tail = [joint.replace("joint verdict: ", "joint verdict, how: ", 1) if self.joint else joint,
                _screen_line(self.shape), *_notes(self, wide)]
        top = [self.headline()]
        if not wide:  # the compact view fits 100 columns: wrap the lines under the table
            tail = [textwrap.fill(t, width=100, subsequent_indent="    ") if not t.startswith(" ") else t for t in tail]
            top = [textwrap.fill(t, width=100, subsequent_indent="    ") for t in top]
        return "\n".join([_title(self), *top, *(fmt.format(*l).rstrip() for l in [head, *lines]), *tail])

    def headline(self) -> str:
        """The answer first: the joint verdict and what the rows found, property by property
        ("joint verdict: invalid (p = 0.004 <= 0.05): miscalibrated (ZMS, RCE); consistent up to
        scale (CC, ENCE, ZMSE)")."""
        found = headline_parts([(r.name, r.tested, r.finding, r.test) for r in self.rows if r.name not in KERNEL_ROWS])
        # the SKCE row is beside the joint verdict: said apart, so that it does not read as a scale error
        found += [f"{r.name} (beside the joint verdict): {r.finding}" for r in self.rows if r.name in KERNEL_ROWS]
        if self.joint is None:
            head = "joint verdict: none (no statistic left to test)"
        else:
            j = self.joint
            p = p_text(j.p, self.n_mc)
            p_is = f"p {p}" if p.startswith("<") else f"p = {p} {'>' if j.p > j.alpha else '<='} {j.alpha:g}"
            head = f"joint verdict: {j.verdict} ({p_is})"
        return head + (": " + "; ".join(found) if found else "")

    def explained(self) -> str:
        """The table with every column and the legend of its columns."""
        return str(replace(self, explain=True))

    def wide_table(self) -> str:
        """The table with every column: references, p-values, ζ_Sim and ζ_Sim2 per D, D-sensitivity."""
        return str(replace(self, wide=True))

    def _repr_html_(self) -> str:  # pragma: no cover - notebook display
        try:
            return self.to_frame()._repr_html_()
        except ImportError:
            return "<pre>" + str(self) + "</pre>"


#: the short names of the deciding tests in the text table's ``test`` column
_SHORT_TEST = {"zeta_BS": "zeta_BS", "permutation": "perm", "shape screen": "shape", "empirical": "emp",
               "every D": "every D", "zeta_Sim": "zeta_Sim", "bootstrap-t": "boot-t", "consistency": "consist",
               "asymptotic_block": "block"}


def _num(x, nd=4) -> str:
    """A cell of the text table: ``-`` for None, ``nd`` significant digits for a finite float."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}g}" if math.isfinite(x) else str(x)
    return str(x)


def _columns(tab: ValidationTable, wide: bool) -> tuple[list[str], list[list[str]]]:
    """The header and the cells of the text table: every column (``wide``), the conditional
    rule's compact view, or the compact view under the deciding D."""
    dv = tab.decisive_dist
    cond = tab.rule == "conditional"
    if wide:
        head = ["stat", "estimate", "BCa 95% CI", "ref", "zeta_BS"]
        for d in tab.dists:
            head += [f"ref[{d}]", f"p[{d}]", f"zSim[{d}]", f"zSim2[{d}]"]
        head += ["D-sens", "test", "finding", "paper"]
    elif cond:
        head = ["stat", "estimate", "BCa 95% CI", "zeta_BS", "p", "test", "p[emp]", "finding", "paper"]
    else:
        head = ["stat", "estimate", "BCa 95% CI", "ref", f"ref[{dv}]", f"p[{dv}]", "finding", "paper"]
    f = _num

    def ptxt(p, n=None):
        return p_text(p, n or tab.n_mc)

    lines = []
    for r in tab.rows:
        # no interval: an adaptivity row (decided by permutation only) or a row that is not testable
        ci = (f"[{f(r.low)}, {f(r.high)}]" + ("!" if r.excludes_estimate else "")
              if math.isfinite(r.low) or math.isfinite(r.high) else "-")
        est = "-" if r.verdict == "not testable" and not math.isfinite(r.estimate) else f(r.estimate)
        if cond and not wide:
            lines.append([r.name, est, ci, f(r.zeta_bs, 3), ptxt(r.p_test, r.n_test), _SHORT_TEST.get(r.test, r.test),
                          ptxt(r.p_sim.get("empirical")), r.finding, r.verdict_paper])
            continue
        if not wide:
            s = r.sim.get(dv)  # none: a row with no simulated reference (SKCE, not testable)
            lines.append([r.name, est, ci, f(r.reference), f"{s.mean:.4g}±{s.se:.1g}" if s else "-",
                          ptxt(r.p_sim.get(dv)), r.finding, r.verdict_paper])
            continue
        row = [r.name, est, ci, f(r.reference), f(r.zeta_bs, 3)]
        for d in tab.dists:
            s = r.sim.get(d)  # none: a row with no simulated reference (SKCE, not testable)
            row += [f"{s.mean:.4g}±{s.se:.1g}" if s else "-", ptxt(r.p_sim.get(d)), f(r.zeta_sim.get(d), 3),
                    f(r.zeta_sim2.get(d), 3)]
        row += ["yes" if r.d_sensitive else "no", _SHORT_TEST.get(r.test, r.test), r.finding, r.verdict_paper]
        lines.append(row)
    if tab.tolerance is not None:  # the equivalence column: within the margin, not shown, or no margin
        head = head + ["equiv"]
        lines = [l + [r.equivalence or "-"] for l, r in zip(lines, tab.rows)]
    return head, lines


def _title(tab: ValidationTable) -> str:
    """The first line: dataset, M, bins, B, N_MC, seed."""
    bins = f"N={tab.n_bins} bins, " if tab.binned else ""
    return (f"{tab.name + ': ' if tab.name else ''}M={tab.M}, {bins}B={tab.n_boot}, "
            f"N_MC={tab.n_mc}, seed={tab.seed}")


def _screen_line(sh: ShapeScreen) -> str:
    """The shape screen's line under the table (β_GM against its thresholds, κ_CS)."""

    def scr(v, b, t):
        return f"{v}={b:.3f} ({'fails' if b > t else 'ok'}, threshold {t:g})"

    return (f"shape screen (beta_GM): {scr('u2', sh.beta_u2, sh.threshold_u2)}, "
            f"{scr('E2', sh.beta_E2, sh.threshold_E2)}, {scr('Z2', sh.beta_Z2, sh.threshold_Z2)}; "
            f"kappa_CS u2={sh.kappa_u2:.2f}, E2={sh.kappa_E2:.2f}, Z2={sh.kappa_Z2:.2f}")


def _rule_note(tab: ValidationTable) -> str:
    """What decided the verdict column, by rule."""
    if tab.rule == "conditional":
        how = ("the data's Z shuffled across rows, u and any feature x kept; exact for 'Z independent of (u, x)' "
               "under any D" if tab.dependence is None else
               "by whole groups or blocks, below, u and any feature x kept")
        return (f"finding (column test; p: its p-value; the row passes when p > {tab.alpha:g}): perm, the permutation "
                f"test of consistency and adaptivity ({how}); boot-t, the scale tests of ZMS and RCE "
                "(studentized bootstrap-t of E[Z^2] = 1 and of <E^2> = <u^2>); zeta_BS, |zeta_BS| <= 1 against "
                "another predefined reference; shape: the screen says unreliable. p[emp]: the Monte Carlo test "
                "under the empirical D (rule='mc'); paper: the published zeta_Sim rule, for comparison")
    if tab.rule == "mc" and "empirical" in tab.dists:
        return (f"finding: Monte Carlo test under the empirical D, the row passes when p[empirical] > {tab.alpha:g} "
                "(zeta_BS for a predefined reference); paper: the published zeta_Sim rule, for comparison")
    if tab.rule == "mc":
        return (f"finding: Monte Carlo test, the row passes when p > {tab.alpha:g} under every D (p = Monte Carlo "
                "p-value); paper: the published zeta_Sim rule, for comparison")
    return "finding: the published zeta_Sim rule (rule='paper'); p = Monte Carlo p-value, for comparison"


def _equivalence_note(tab: ValidationTable) -> str:
    """The margins of ``tolerance``, how the column ``equiv`` decides, and the model's result."""
    level = 100 * (1 - 2 * tab.alpha)
    regions, simulated = [], []
    for r in tab.rows:
        if r.margin is not None:
            lo, hi = r.margin
            if r.name in SIMULATED_MARGINS:
                simulated.append(f"{r.name} <= {hi:.4g}")
            else:
                regions.append(f"{r.name} <= {hi:.4g}" if not math.isfinite(lo) else f"{r.name} in [{lo:.4g}, {hi:.4g}]")
    if simulated:
        regions.append(f"{', '.join(simulated)}: below what sets with u off by the margin give at this M, u and bins "
                       f"(errors (1 +- delta) u eps, eps the data's own standardized Z; Monte Carlo p <= {tab.alpha:g}, "
                       "the limit shown is that test's critical value)")
    marked = [r for r in tab.rows if r.margin is not None]
    if tab.calibrated_within:
        out = f"calibrated within the margins ({', '.join(r.name for r in marked)} all within)"
    else:
        out = ("not shown calibrated within the margins (" +
               ", ".join(f"{r.name}: {r.equivalence}" for r in marked if r.equivalence != "within") + ")")
    return (f"equiv (tolerance {_tolerance_text(tab.tolerance)}): within when the {level:g}% BCa interval (the same "
            f"replicates as the 95% one) lies inside the margin, {'; '.join(regions)}: equivalence (TOST, "
            f"Schuirmann 1987) at alpha={tab.alpha:g}; 'not shown' is not evidence of a larger miscalibration. "
            f"Model: {out}")


def _tolerance_text(tol: dict[str, float]) -> str:
    vals = set(tol.values())
    return f"{vals.pop():g}" if len(vals) == 1 else ", ".join(f"{k}={v:g}" for k, v in tol.items())


def _notes(tab: ValidationTable, wide: bool) -> list[str]:
    """The notes under the table: the rule, the run's own notes, the warnings worth
    repeating (few points or replicates, biased intervals, the shape screen, ties) and a
    pointer to the other views (or the legend)."""
    notes = [_rule_note(tab), *([_equivalence_note(tab)] if tab.tolerance is not None else []), *tab.notes]
    if tab.dependence is not None:  # the permutation test moves units, not rows  # what the labels changed, what they measure, and the warning
        notes.extend(x for x in (tab.dependence.units, tab.dependence.line(), tab.dependence.warning_line()) if x)
    rows = tab.rows
    few: dict[str, list[str]] = {}  # rows whose interval few units cannot promise, one line per reason
    for r in rows:
        if r.interval_note:
            few.setdefault(r.interval_note.split(": ", 1)[1], []).append(r.name)
    notes.extend(f"{', '.join(names)}: {why}" for why, names in few.items())
    if tab.M < MIN_RELIABLE_M:
        notes.append(f"indicative only: M={tab.M} points (bootstrap intervals and Monte Carlo p-values of fewer "
                     f"than {MIN_RELIABLE_M} points say little)")
    if any(r.excludes_estimate for r in rows):
        notes.append(EXCLUDES_NOTE)
    if any(r.shape_flag for r in rows):
        flagged = ", ".join(r.name for r in rows if r.shape_flag)
        notes.append(f"unreliable ({flagged}): the shape screen fails for a variable the statistic averages "
                     "(ZMS: Z2; RCE: u2 or E2), so its bootstrap interval cannot be trusted")
    for r in rows:
        if r.tie_range:
            notes.append(f"{r.name}: tied u straddle bin cuts; over 100 random orders of the ties it ranges "
                         f"{r.tie_range[0]:.4g} to {r.tie_range[1]:.4g} (this row order: {r.estimate:.4g})")
    if tab.n_boot < MIN_VERDICT_REPLICATES or tab.n_mc < MIN_VERDICT_REPLICATES:
        notes.append(f"indicative only: B={tab.n_boot}, N_MC={tab.n_mc} (stable verdicts need 1000 or more each)")
    if tab.explain:
        notes.extend(LEGEND)
        if tab.dependence is not None:
            notes.extend(DEPENDENCE_LEGEND)
        if tab.tolerance is not None:
            notes.extend(EQUIVALENCE_LEGEND)
    elif wide:
        notes.append("(print with explain=True, or `mcref validate --explain`, for a legend of the columns)")
    elif tab.rule == "conditional":
        notes.append("(every D, references, p[permutation] of every row, zeta-scores and D-sensitivity: "
                     "tab.wide_table(), `mcref validate --wide`; a legend: --explain)")
    else:
        notes.append(f"(ref/p: under {tab.decisive_dist}; every D, zeta-scores and D-sensitivity: tab.wide_table(), "
                     "`mcref validate --wide`; a legend: --explain)")
    return notes


def paper_note(rows, gen: Sequence[str], k: float) -> str | None:
    """Why the published rule calls rows ``not testable`` (the ``paper`` column), or None: their
    |ζ_Sim| ≤ 1 holds under some of the generative D and not under the others, and their
    references differ between those D (D-sensitive), so the rule cannot decide without
    knowing the true D (Pernot 2024). Rows grouped by the D under which ζ_Sim fails."""
    failing: dict[tuple[str, ...], list[str]] = {}
    for r in rows:
        if r.verdict_paper == "not testable" and r.d_sensitive:
            bad = tuple(d for d in gen if not abs(r.zeta_sim[d]) <= 1)
            failing.setdefault(bad, []).append(r.name)
    if not failing:
        return None
    where = "; ".join(f"{', '.join(n)}: outside under {', '.join(b)}" for b, n in failing.items())
    return (f"paper: not testable = the published rule (|zeta_Sim| <= 1 under every D of {', '.join(gen)}) "
            f"holds under some D and not under others ({where}), and the references of these D differ by more "
            f"than {k:g} combined standard uncertainties (D-sensitive: D-sens in the wide table), so the rule "
            "cannot decide without knowing the true D")
