"""Invariants of the verdict table, checked as properties (Hypothesis draws the inputs).

Each test is one invariant, named by its first docstring line. Hypothesis draws the dataset
size, the law of u (continuous, heavy-tailed, tied, constant), the law of the errors
(normal, heavy tails, skewed, a scale error), the features (numeric, tied numeric,
categorical integers or strings), the statistics, the D, the rule and the seeds; the data
themselves come from a NumPy generator seeded by a drawn integer, so a failure shrinks to a
small reproducible case. Where the design makes an invariant hold only in distribution,
not bit for bit, the docstring says so and the test checks what does hold exactly.

Profiles (tests/conftest.py): "ci" (default, fixed and derandomized: the same examples on
every run) and "thorough" (``pytest --hypothesis-profile=thorough tests/test_invariants.py``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import assume, given, note, strategies as st  # noqa: E402

import mcref  # noqa: E402

# small B and N_MC: the invariants hold for any B and N_MC; "indicative only" is not what is checked
pytestmark = [pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning"),
              pytest.mark.filterwarnings("ignore::mcref.SmallSampleWarning"),
              pytest.mark.filterwarnings("ignore::mcref.BiasedIntervalWarning"),
              pytest.mark.filterwarnings("ignore::mcref.TieOrderWarning"),
              pytest.mark.filterwarnings("ignore::mcref.DegenerateBootstrapWarning"),
              pytest.mark.filterwarnings("ignore::mcref.MCRefWarning")]

FAST = dict(n_boot=120, n_mc=120)
ALL_STATS = ("ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE", "MZ", "VarZ", "NLL")
BINNED = ("ENCE", "ZMSE", "UCE")


# ---------------------------------------------------------------------------- strategies
@dataclasses.dataclass
class Data:
    E: np.ndarray
    u: np.ndarray
    what: str


def _u_of(law: str, m: int, rng: np.random.Generator) -> np.ndarray:
    if law == "uniform":
        return rng.uniform(0.5, 2.0, m)
    if law == "lognormal":
        return rng.lognormal(0.0, 0.6, m)
    if law == "ig4":  # u² ~ IG(4, 4): the papers' NIG model
        return np.sqrt(1.0 / rng.gamma(4.0, 0.25, m))
    if law == "tied":  # QM9-like: a few distinct u, long runs of ties straddling the bin cuts
        return rng.choice(np.sort(rng.uniform(0.2, 3.0, int(rng.integers(3, 9)))), m)
    return np.full(m, 0.7)  # constant u (homoscedastic)


def _eps_of(law: str, m: int, rng: np.random.Generator) -> np.ndarray:
    if law == "normal":
        return rng.normal(size=m)
    if law == "t4":
        return rng.standard_t(4, m) / math.sqrt(2.0)
    if law == "laplace":
        return rng.laplace(0.0, 2 ** -0.5, m)
    if law == "skew":
        return (rng.chisquare(3, m) - 3.0) / math.sqrt(6.0)
    return 1.4 * rng.normal(size=m)  # a scale error


@st.composite
def datasets(draw, u_laws=("uniform", "lognormal", "ig4", "tied", "constant"), min_m=120, max_m=600):
    m = draw(st.integers(min_m, max_m))
    ul = draw(st.sampled_from(u_laws))
    el = draw(st.sampled_from(("normal", "t4", "laplace", "skew", "scaled")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    u = _u_of(ul, m, rng)
    E = u * _eps_of(el, m, rng)
    what = f"M={m}, u {ul}, eps {el}"
    note(what)
    return Data(E, u, what)


def _feature(kind: str, m: int, rng: np.random.Generator):
    if kind == "numeric":
        return rng.normal(size=m)
    if kind == "tied":  # numeric with runs of ties (more than 20 distinct values)
        return np.round(rng.uniform(0, 4, m), 1)
    levels = rng.integers(2, 8)
    p = rng.dirichlet(np.full(levels, 0.7))  # some levels small: pooled
    codes = rng.choice(np.array([1, 2, 3, 10, 11, 20, 30, 100])[:levels], m, p=p)
    return codes if kind == "ints" else codes.astype(str)


@st.composite
def features(draw, m: int, min_k=1, max_k=3, kinds=("numeric", "tied", "ints", "strings")):
    k = draw(st.integers(min_k, max_k))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ks = [draw(st.sampled_from(kinds)) for _ in range(k)]
    note(f"features {ks}")
    return {f"f{j}_{kd}": _feature(kd, m, rng) for j, kd in enumerate(ks)}


stats_lists = st.lists(st.sampled_from(ALL_STATS), min_size=1, max_size=5, unique=True)
seeds = st.integers(0, 2**63 - 1)
rules = st.sampled_from(("conditional", "mc", "paper"))


# ---------------------------------------------------------------------------- comparison
def canon(obj, *, rtol: float | None = None):
    """A comparable form of a result: floats exactly (NaN equal to NaN), or rounded to ``rtol``
    relative digits; dataclasses, dicts, lists and arrays recursively."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return tuple((f.name, canon(getattr(obj, f.name), rtol=rtol)) for f in dataclasses.fields(obj))
    if isinstance(obj, dict):
        return tuple(sorted((str(k), canon(v, rtol=rtol)) for k, v in obj.items()))
    if isinstance(obj, (list, tuple)):
        return tuple(canon(v, rtol=rtol) for v in obj)
    if isinstance(obj, np.ndarray):
        return canon(obj.tolist(), rtol=rtol)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if rtol is not None and math.isfinite(x) and x != 0.0:
            return float(f"{x:.{max(1, int(-math.log10(rtol)))}e}")
        return x
    return obj


def row_fields(row, dists=None, *, drop=()):
    """A row's comparable content; ``dists``: keep only these D's columns (the D both tables share)."""
    d = {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.name not in drop}
    if "name" in drop:  # the references carry the row's name too
        d["sim"] = {k: dataclasses.replace(r, name="") for k, r in d["sim"].items()}
    if dists is not None:
        for k in ("sim", "zeta_sim", "zeta_sim2", "p_sim", "p_se"):
            d[k] = {dd: v for dd, v in d[k].items() if dd in dists}
        d.pop("sensitivity"), d.pop("d_sensitive"), d.pop("verdict_paper")
    return d


#: the clear errors of a drawn feature too small to bin (a categorical feature whose levels all pool into
#: one bin, or too few points for two bins): the input is refused as documented, not a property's failure
TOO_SMALL = ("leaves a single bin", "cannot fill two bins", "is constant")


def run(E, u=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return mcref.validate(E, **({} if u is None else {"u": u}), **{**FAST, **kw})
        except ValueError as exc:
            if kw.get("x") is not None and any(t in str(exc) for t in TOO_SMALL):
                assume(False)
            raise


def _testable(data: Data, stats) -> list[str]:
    const = bool(np.all(data.u == data.u[0]))
    return [s for s in stats if not (const and (s in BINNED or s == "CC"))]


# ---------------------------------------------------------------------------- invariants
@given(data=datasets(), stats=stats_lists, seed=seeds, rule=rules, pick=st.integers(0, 10**6))
def test_a_row_does_not_depend_on_the_other_statistics(data, stats, seed, rule, pick):
    """A row does not depend on its company of statistics: estimate, interval, references,
    p-values, tests and verdict of a statistic are the same, bit for bit, computed alone or
    beside other statistics (same seed). Not the joint verdict, which is about the company."""
    target = stats[pick % len(stats)]
    assume(_testable(data, [target]))
    full = run(data.E, data.u, stats=stats, seed=seed, rule=rule)
    alone = run(data.E, data.u, stats=[target], seed=seed, rule=rule)
    assert canon(row_fields(full[target])) == canon(row_fields(alone[target]))


@given(data=datasets(u_laws=("uniform", "lognormal", "tied")), seed=seeds, rule=rules,
       stat=st.sampled_from(("CC", "ENCE", "ZMSE", "RCE")),
       dsets=st.lists(st.sampled_from(("normal", "t6", "uniform", "laplace")), min_size=1, max_size=3, unique=True))
def test_a_row_does_not_depend_on_the_other_distributions(data, seed, rule, stat, dsets):
    """A row's columns under one D do not depend on the other D simulated beside it: each D's
    references and p-values are the same, bit for bit, whatever other D share the call (common
    random numbers come from per-chunk streams keyed by the D's name); under the conditional
    rule, which decides by the permutation D and the scale tests, so is the verdict."""
    wide = run(data.E, data.u, stats=[stat], dists=dsets, seed=seed, rule=rule)
    for d in dsets:
        one = run(data.E, data.u, stats=[stat], dists=[d], seed=seed, rule=rule)
        keep = set(one.dists)
        assert canon(row_fields(wide[stat], keep, drop=("verdict", "finding") if rule != "conditional" else ())) == \
            canon(row_fields(one[stat], keep, drop=("verdict", "finding") if rule != "conditional" else ()))


@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4", "tied")), seed=seeds,
       stats=st.lists(st.sampled_from(("ZMS", "ENCE", "ZMSE", "UCE", "CC")), min_size=1, max_size=4, unique=True))
def test_a_feature_row_does_not_depend_on_the_other_features(data, d, seed, stats):
    """A feature's rows do not depend on the other features nor on the u rows beside them: each
    ``ENCE|f`` row of a multi-feature table equals, bit for bit, the row of ``f`` validated alone
    (issue 31: from the second feature on, rows carried the previous feature's references)."""
    assume(any(s in BINNED for s in stats))
    feats = data.draw(features(d.E.size, min_k=2))
    full = run(d.E, d.u, x=feats, stats=stats, seed=seed)
    for f in feats:
        alone = run(d.E, d.u, x={f: feats[f]}, stats=[s for s in stats if s in BINNED], seed=seed)
        for s in stats:
            if s in BINNED:
                assert canon(row_fields(full[f"{s}|{f}"])) == canon(row_fields(alone[f"{s}|{f}"])), f"{s}|{f}"


def _recode(v: np.ndarray, how: str):
    """A categorical feature with other labels: strings, zero-padded strings, a pandas category."""
    if how == "str":
        return v.astype(str)
    if how == "padded":
        return np.char.zfill(v.astype(str), 4)
    pd = pytest.importorskip("pandas")
    return pd.Series(v.astype(str), dtype="category")


@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4")), seed=seeds,
       how=st.sampled_from(("str", "padded", "category")))
def test_features_do_not_depend_on_their_order_names_or_coding(data, d, seed, how):
    """Features are independent of their order, names and coding: reversing the features,
    renaming them, relabelling a categorical feature (integers → strings, zero-padded strings,
    a pandas category) or replacing a numeric feature by its ranks (any increasing recoding:
    equal-count bins read ranks only) leaves each feature's rows unchanged, bit for bit."""
    feats = data.draw(features(d.E.size, min_k=1, max_k=3, kinds=("numeric", "tied", "ints")))
    from scipy.stats import rankdata

    base = run(d.E, d.u, x=feats, stats=["ENCE", "ZMSE"], seed=seed)
    new, names = {}, {}
    for j, (f, v) in enumerate(reversed(list(feats.items()))):
        nm = f"renamed {j}"
        names[f] = nm
        new[nm] = _recode(v, how) if f.endswith("ints") else rankdata(v)
    other = run(d.E, d.u, x=new, stats=["ENCE", "ZMSE"], seed=seed)
    for f, nm in names.items():
        for s in ("ENCE", "ZMSE"):
            a, b = row_fields(base[f"{s}|{f}"], drop=("name", "reason")), row_fields(other[f"{s}|{nm}"],
                                                                                 drop=("name", "reason"))
            assert canon(a) == canon(b), f"{s}|{f}"


SCALE_FREE = ("ZMS", "RCE", "CC", "ENCE", "ZMSE", "MZ", "VarZ")


@given(d=datasets(u_laws=("uniform", "lognormal", "ig4", "tied")), seed=seeds, k=st.integers(-6, 6),
       c=st.floats(0.01, 100.0), rule=rules)
def test_scale_of_e_and_u(d, seed, k, c, rule):
    """Scale: multiplying E and u by c > 0 leaves every Z-based statistic, CC, ENCE, ZMSE and
    every verdict unchanged, and UCE, MSE and MV scale by c². For c a power of two every number
    is exact (bit for bit; UCE's by exactly c²); for any other c the numbers agree to rounding
    (relative 1e-9) and the verdicts are the same."""
    stats = list(SCALE_FREE) + ["UCE", "MSE", "MV"]
    base = run(d.E, d.u, stats=stats, seed=seed, rule=rule)
    p2 = 2.0 ** k
    exact = run(d.E * p2, d.u * p2, stats=stats, seed=seed, rule=rule)
    for s in SCALE_FREE:
        assert canon(row_fields(exact[s])) == canon(row_fields(base[s])), s
    for s in ("UCE", "MSE", "MV"):
        assert exact[s].estimate == base[s].estimate * p2 * p2
        assert (exact[s].low, exact[s].high) == (base[s].low * p2 * p2, base[s].high * p2 * p2)
        assert exact[s].verdict == base[s].verdict
    other = run(d.E * c, d.u * c, stats=stats, seed=seed, rule=rule)
    for s in stats:
        f = c * c if s in ("UCE", "MSE", "MV") else 1.0
        a, b = base[s], other[s]
        np.testing.assert_allclose([b.estimate, b.low, b.high], [f * a.estimate, f * a.low, f * a.high],
                                   rtol=1e-9, atol=1e-12)
        assert b.verdict == a.verdict, s
    assert other.joint.verdict == base.joint.verdict


@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4")), seed=seeds, rule=rules,
       stats=st.lists(st.sampled_from(ALL_STATS), min_size=1, max_size=6, unique=True))
def test_row_order_with_distinct_u(data, d, seed, rule, stats):
    """Row order: shuffling the rows (E, u, x together) leaves the whole table unchanged, bit for
    bit, when u has no ties: every step reads the data in ascending u, the D are built from the
    sorted Z, categorical bins are numbered along u and numeric feature bins never cut a run of
    tied x."""
    assume(np.unique(d.u).size == d.u.size)
    feats = data.draw(features(d.E.size, min_k=0, max_k=2)) if any(s in BINNED for s in stats) else {}
    perm = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(d.E.size)
    a = run(d.E, d.u, x=feats or None, stats=stats, seed=seed, rule=rule)
    b = run(d.E[perm], d.u[perm], x={f: v[perm] for f, v in feats.items()} or None, stats=stats, seed=seed,
            rule=rule)
    assert canon([row_fields(r) for r in a.rows]) == canon([row_fields(r) for r in b.rows])
    assert canon(a.joint) == canon(b.joint)
    assert a.notes == b.notes


@given(data=st.data(), d=datasets(u_laws=("tied",)), seed=seeds)
def test_row_order_with_tied_u(data, d, seed):
    """Row order with tied u holds in part, by design. The bins of u keep ErrViewLib's stable
    order, so which tied rows fall in which bin of u follows the row order (the table reports
    the range over random orders, ``tie_range``), and the bootstrap and the shuffles walk the
    rows in that order: intervals and p-values are equal in distribution only. What holds
    exactly: the estimates of ZMS, RCE and CC (to rounding: the sums run in another order) and
    every feature row's estimate (feature bins never cut a run of ties); and a binned row of u
    whose tied runs straddle a cut carries its tie range."""
    feats = data.draw(features(d.E.size, min_k=1, max_k=2))
    perm = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(d.E.size)
    stats = ["ZMS", "RCE", "CC", "ENCE", "ZMSE"]
    a = run(d.E, d.u, x=feats, stats=stats, seed=seed)
    b = run(d.E[perm], d.u[perm], x={f: v[perm] for f, v in feats.items()}, stats=stats, seed=seed)
    for r in a.rows:
        if r.name in ("ZMS", "RCE", "CC") or "|" in r.name:
            assert b[r.name].estimate == pytest.approx(r.estimate, rel=1e-12, abs=1e-15), r.name
    for s in ("ENCE", "ZMSE"):
        if a[s].tie_range is not None:
            lo, hi = a[s].tie_range
            assert lo <= hi


@given(d=datasets(u_laws=("uniform", "lognormal", "tied")), seed=seeds)
def test_sign_of_the_errors(d, seed):
    """Sign: E → −E leaves every statistic of E² or |E| (ZMS, RCE, CC, ENCE, ZMSE, UCE, VarZ) and
    its bootstrap interval unchanged bit for bit (the resamples are drawn over the same u-sorted
    rows), and MZ changes sign. The permutation and empirical D are built from the sorted Z,
    which the sign reverses: their p-values are equal in distribution only."""
    stats = ["ZMS", "RCE", "CC", "ENCE", "ZMSE", "UCE", "VarZ", "MZ"]
    a = run(d.E, d.u, stats=stats, dists=["normal"], rule="mc", seed=seed)
    b = run(-d.E, d.u, stats=stats, dists=["normal"], rule="mc", seed=seed)
    for s in stats:
        if s == "MZ":
            assert b[s].estimate == -a[s].estimate
            continue
        assert (b[s].estimate, b[s].low, b[s].high) == (a[s].estimate, a[s].low, a[s].high), s
        assert canon(b[s].sim["normal"]) == canon(a[s].sim["normal"]), s


@hypothesis.settings(max_examples=4)
@given(data=st.data(), d=datasets(u_laws=("uniform", "tied", "ig4")), seed=seeds, rule=rules)
def test_thread_count(data, d, seed, rule):
    """Determinism: the number of numba threads changes nothing, bit for bit: every row (the u
    rows, the feature rows, the scale tests' p) and the joint verdict (chunked streams, reduced
    in chunk order)."""
    import numba

    feats = data.draw(features(d.E.size, min_k=1, max_k=2))
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = run(d.E, d.u, x=feats, seed=seed, rule=rule, stats=["ZMS", "RCE", "CC", "ENCE", "ZMSE", "NLL"])
        numba.set_num_threads(max(2, n0))
        b = run(d.E, d.u, x=feats, seed=seed, rule=rule, stats=["ZMS", "RCE", "CC", "ENCE", "ZMSE", "NLL"])
    finally:
        numba.set_num_threads(n0)
    assert canon([row_fields(r) for r in a.rows]) == canon([row_fields(r) for r in b.rows])
    assert canon(a.joint) == canon(b.joint)


def _html_table_rows(page: str) -> list[dict]:
    """The rows of the table of all results of an HTML report: column name → the cell's data-v."""
    import re

    table = re.search(r"<table class=[\"']sortable[\"'] id=[\"']results[\"'].*?</table>", page, re.S).group(0)
    cols = re.findall(r"<th data-col=[\"']([^\"']*)[\"']", table)
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1], re.S):
        vals = re.findall(r"<td[^>]*data-v=[\"']([^\"']*)[\"']", tr)
        rows.append(dict(zip(cols, vals)))
    return rows


def _flat_rows(tab) -> dict:
    return {r["stat"]: r for r in tab.records()}


DOOR_KEYS = ("estimate", "low", "high", "verdict", "test", "p_test", "ref_permutation", "p_permutation",
             "ref_normal", "p_normal")


@hypothesis.settings(max_examples=3)
@given(d=datasets(u_laws=("uniform", "lognormal", "tied"), min_m=150, max_m=400), seed=st.integers(0, 2**62),
       stats=st.lists(st.sampled_from(("ZMS", "RCE", "CC", "ENCE", "ZMSE")), min_size=1, max_size=4, unique=True))
def test_one_dataset_one_answer_whatever_the_door(tmp_path_factory, d, seed, stats):
    """One dataset, one answer, whatever the door: the same (E, u) given as arrays, a ``Dataset``,
    a DataFrame (``from_frame``), a CSV file and a Parquet file (``from_file``), validated by
    ``validate``, by ``benchmark`` (with the seed it reports for the set), read back from the
    benchmark's store, shown in its HTML report, by ``mcref bench --csv`` and by ``mcref validate
    --json``/``--csv`` carry the same numbers: bit for bit, except the CLI's CSV, which writes 10
    significant digits (``_render.csv_text``), and the HTML, which shows 4 and keeps every digit
    in its sort key."""
    import json
    import subprocess
    import sys

    pd = pytest.importorskip("pandas")
    tmp = tmp_path_factory.mktemp("doors")
    opts = dict(stats=stats, n_boot=150, n_mc=150)
    base = run(d.E, d.u, seed=seed, **opts)
    frame = pd.DataFrame({"E": d.E, "u": d.u})
    frame.to_csv(tmp / "set.csv", index=False, float_format="%.17g")
    doors = {"Dataset": mcref.datasets.Dataset("set", d.E, d.u), "frame": mcref.datasets.from_frame(frame),
             "csv": mcref.datasets.from_file(tmp / "set.csv")}
    try:
        frame.to_parquet(tmp / "set.parquet")
        doors["parquet"] = mcref.datasets.from_file(tmp / "set.parquet")
    except ImportError:  # pyarrow is in the dev extra; without it the Parquet door is not open
        pass
    for door, ds in doors.items():
        np.testing.assert_array_equal(ds.E, d.E)
        np.testing.assert_array_equal(ds.u, d.u)
        assert canon([row_fields(r) for r in run(ds, seed=seed, **opts).rows]) == \
            canon([row_fields(r) for r in base.rows]), door
    # benchmark: each set's row is validate's row under the seed the table reports; the store reads it back
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = mcref.benchmark([doors["Dataset"]], store=tmp / "b.sqlite", seed=seed % 2**31, n_jobs=1, **opts)
        again = mcref.benchmark([doors["Dataset"]], store=tmp / "b.sqlite", seed=seed % 2**31, n_jobs=1, **opts)
    pd.testing.assert_frame_equal(bench.table, again.table)
    bseed = int(bench.table["seed"].iloc[0])
    via = _flat_rows(run(d.E, d.u, seed=bseed, **opts))
    for _, row in bench.table.iterrows():
        for k in DOOR_KEYS:
            if k in row and k in via[row["stat"]]:
                a, b = row[k], via[row["stat"]][k]
                assert canon(None if (isinstance(a, float) and math.isnan(a) and b is None) else a) == canon(b), \
                    (row["stat"], k)
    # the HTML report's table carries each number in full as its sort key (data-v)
    import re

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = open(bench.to_html(tmp / "report", diagnostics=False), encoding="utf-8").read()
    html_rows = _html_table_rows(index)
    for _, row in bench.table.iterrows():
        hr = next(h for h in html_rows if h.get("stat") == row["stat"])
        for k in ("estimate", "low", "high"):
            assert float(hr[k]) == row[k], (row["stat"], k)
        assert hr["finding"] == row["finding"] and hr["tested"] == row["tested"]
    # mcref bench on the CSV file: the table benchmark() gives, under the same benchmark seed
    subprocess.run([sys.executable, "-m", "mcref", "bench", str(tmp / "set.csv"), "--stat", ",".join(stats),
                    "--boot", "150", "--mc", "150", "--seed", str(seed % 2**31), "--n-jobs", "1",
                    "--csv", str(tmp / "bench.csv")], capture_output=True, text=True, check=True)
    cli_bench = pd.read_csv(tmp / "bench.csv")
    for _, row in bench.table.iterrows():
        cr = cli_bench[cli_bench["stat"] == row["stat"]].iloc[0]
        for k in ("estimate", "low", "high", "p_test", "seed"):
            assert canon(float(cr[k])) == canon(float(row[k])), (row["stat"], k)
        assert cr["verdict"] == row["verdict"]
    # the command line: JSON exact, CSV to its 10 significant digits
    cli = [sys.executable, "-m", "mcref", "validate", str(tmp / "set.csv"), "--stat", ",".join(stats),
           "--boot", "150", "--mc", "150", "--seed", str(seed)]
    out = subprocess.run(cli + ["--json"], capture_output=True, text=True, check=True).stdout
    js = {r["stat"]: r for r in json.loads(out)["rows"]}
    ref = _flat_rows(base)
    for s, r in ref.items():
        for k in DOOR_KEYS:
            if k in r:
                assert canon(js[s][k]) == canon(r[k]), (s, k)
    out = subprocess.run(cli + ["--csv"], capture_output=True, text=True, check=True).stdout
    import io

    table = pd.read_csv(io.StringIO(out))
    for _, row in table.iterrows():
        for k in ("estimate", "low", "high", "p_test"):
            if isinstance(ref[row["stat"]][k], float):
                assert row[k] == pytest.approx(ref[row["stat"]][k], rel=6e-10), (row["stat"], k)
        assert row["verdict"] == ref[row["stat"]]["verdict"]


# ---------------------------------------------------------------------------- dependent rows (issue 32)
@st.composite
def group_labels(draw, m: int):
    """Cluster labels for m rows: equal sizes (consecutive runs, then shuffled) or random sizes."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        k = draw(st.sampled_from((2, 4, 5, 10)))
        g = rng.permutation(np.arange(m) // k)
    else:
        g = rng.integers(0, draw(st.integers(3, m // 4)), m)
    assume(1 < np.unique(g).size < m)
    note(f"{np.unique(g).size} groups")
    return g


def _respell(g: np.ndarray, how: str, rng: np.random.Generator):
    """The same partition under other labels: permuted integers, strings, a pandas category."""
    levels = np.unique(g)
    new = rng.permutation(levels.size)[np.searchsorted(levels, g)]
    if how == "ints":
        return 1000 - 7 * new
    if how == "strings":
        return np.array([f"mol-{x}" for x in new])
    pd = pytest.importorskip("pandas")
    return pd.Categorical([f"c{x}" for x in new])


def _same_table(a, b):
    assert canon([row_fields(r) for r in a.rows]) == canon([row_fields(r) for r in b.rows])
    assert canon(a.joint) == canon(b.joint)
    assert canon(a.dependence) == canon(b.dependence)
    assert a.notes == b.notes


DEP_STATS = ["ZMS", "RCE", "CC", "ENCE", "ZMSE", "NLL"]


@hypothesis.settings(max_examples=4)
@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4"), max_m=400), seed=seeds,
       rule=st.sampled_from(("conditional", "mc")), how=st.sampled_from(("ints", "strings", "category")))
def test_groups_do_not_depend_on_row_order_or_label_spelling(data, d, seed, rule, how):
    """Groups: shuffling the rows (E, u and the labels together) and respelling the labels
    (permuted integers, strings, a pandas category) leave the whole table unchanged, bit for bit,
    when u has no ties: the groups are numbered by their first point in ascending u
    (:func:`mcref.core._dependence.units_for`), never by the labels or the row order. (With ties in u
    the numbering breaks them by Z²; the steps that read the rows in u order keep the tied rows'
    order, so that part holds in distribution: :func:`test_groups_with_tied_u`.)"""
    assume(np.unique(d.u).size == d.u.size)
    g = data.draw(group_labels(d.E.size))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    perm = rng.permutation(d.E.size)
    a = run(d.E, d.u, groups=g, stats=DEP_STATS, seed=seed, rule=rule)
    b = run(d.E[perm], d.u[perm], groups=_respell(g, how, rng)[perm], stats=DEP_STATS, seed=seed, rule=rule)
    _same_table(a, b)


@hypothesis.settings(max_examples=3)
@given(data=st.data(), d=datasets(u_laws=("tied",), max_m=400), seed=seeds,
       how=st.sampled_from(("ints", "strings", "category")))
def test_groups_with_tied_u(data, d, seed, how):
    """Groups with tied u: respelling the labels leaves the table unchanged bit for bit (the rows
    keep their order); shuffling the rows holds in distribution for the intervals and p-values
    (the bins of u and the resamples read tied rows in their order), and exactly: the estimates
    of ZMS, RCE and CC (to rounding), the number and sizes of the groups, and the dependence
    diagnostics (to rounding), the groups being numbered by their first point in ascending
    (u, Z²) whatever the row order."""
    g = data.draw(group_labels(d.E.size))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    stats = ["ZMS", "RCE", "CC", "ENCE"]
    a = run(d.E, d.u, groups=g, stats=stats, seed=seed)
    _same_table(a, run(d.E, d.u, groups=_respell(g, how, rng), stats=stats, seed=seed))
    perm = rng.permutation(d.E.size)
    b = run(d.E[perm], d.u[perm], groups=g[perm], stats=stats, seed=seed)
    for s in ("ZMS", "RCE", "CC"):
        assert b[s].estimate == pytest.approx(a[s].estimate, rel=1e-12, abs=1e-15), s
    da, db = a.dependence, b.dependence
    assert (da.kind, da.M, da.n_units) == (db.kind, db.M, db.n_units)
    for k in ("icc_z", "icc_z2", "design_effect"):
        assert getattr(db, k) == pytest.approx(getattr(da, k), rel=1e-9, abs=1e-12), k
    from mcref.core._dependence import units_for
    from mcref.core._prepared import prepare

    def sizes(E, u, g):
        p = prepare(E, u, n_bins=2, ranks=False)
        return units_for(p.order, groups=g, z2=p.z2, us=p.u).sizes.tolist()

    assert sizes(d.E, d.u, g) == sizes(d.E[perm], d.u[perm], g[perm])


@hypothesis.settings(max_examples=3)
@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4"), max_m=400), seed=seeds,
       ties=st.booleans(), block=st.sampled_from((None, 7)),
       method=st.sampled_from(("circular", "moving", "stationary")))
def test_order_does_not_depend_on_row_order(data, d, seed, ties, block, method):
    """Order: shuffling the rows (E, u and ``order`` together) or recoding the order by an
    increasing map (t → 3t − 5) leaves the whole table unchanged, bit for bit, when u has no
    ties, also with ties in the order values (rows tied in the order are taken in ascending
    (u, Z²), not in their input order), for an automatic or a given block length and every block
    scheme."""
    assume(np.unique(d.u).size == d.u.size)
    m = d.E.size
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    t = rng.integers(0, m // 3, m) if ties else rng.permutation(m)
    perm = rng.permutation(m)
    kw = dict(stats=DEP_STATS, seed=seed, block_length=block, block_method=method)
    a = run(d.E, d.u, order=t, **kw)
    b = run(d.E[perm], d.u[perm], order=3.0 * t[perm] - 5.0, **kw)
    _same_table(a, b)


@hypothesis.settings(max_examples=2)
@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal"), max_m=400), seed=seeds,
       kind=st.sampled_from(("groups", "order")), k=st.integers(-4, 4))
def test_margins_with_dependent_rows_are_free_of_scale_and_row_order(data, d, seed, kind, k):
    """Issue 38: the margins of ENCE and ZMSE with ``groups``/``order`` and the automatic block
    length of ``order`` (on Z²) do not depend on the unit of E and u (×2^k: bit for bit) nor on
    the order of the rows (u without ties: bit for bit)."""
    assume(np.unique(d.u).size == d.u.size)
    m = d.E.size
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lab = rng.integers(0, m // 6, m) if kind == "groups" else rng.permutation(m)
    kw = dict(stats=["ZMS", "ENCE", "ZMSE"], seed=seed, tolerance=0.2)
    a = run(d.E, d.u, **{kind: lab}, **kw)
    c = 2.0 ** k
    b = run(d.E * c, d.u * c, **{kind: lab}, **kw)
    perm = rng.permutation(m)
    e = run(d.E[perm], d.u[perm], **{kind: lab[perm]}, **kw)
    for s in ("ENCE", "ZMSE"):
        for other in (b, e):
            assert (other[s].p_equiv, other[s].equivalence, other[s].margin) == \
                (a[s].p_equiv, a[s].equivalence, a[s].margin), s
    if kind == "order":
        assert b.dependence.block_length == e.dependence.block_length == a.dependence.block_length

@hypothesis.settings(max_examples=2)
@given(data=st.data(), d=datasets(u_laws=("uniform", "tied", "ig4"), max_m=400), seed=seeds,
       kind=st.sampled_from(("groups", "order")))
def test_thread_count_with_dependent_rows(data, d, seed, kind):
    """Determinism with ``groups`` or ``order``: the number of numba threads changes nothing, bit
    for bit (the cluster and block resamples, the group-wise permutation, the cluster scale tests
    and the t(ν̂) draws in clusters run on chunked streams, reduced in chunk order)."""
    import numba

    lab = {"groups": data.draw(group_labels(d.E.size))} if kind == "groups" else \
        {"order": np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(d.E.size)}
    n0 = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = run(d.E, d.u, **lab, seed=seed, stats=DEP_STATS)
        numba.set_num_threads(max(2, n0))
        b = run(d.E, d.u, **lab, seed=seed, stats=DEP_STATS)
    finally:
        numba.set_num_threads(n0)
    _same_table(a, b)


# ---------------------------------------------------------------------------- ensembles (issue 38)
@st.composite
def ensembles(draw):
    """(y, members): M cases of m members, y and members from one predictive law (calibrated),
    continuous or on a grid of 0.5 (ties within rows)."""
    M = draw(st.sampled_from((60, 150)))  # two sizes: the ranks' uniformity band is simulated once per size
    m = draw(st.integers(2, 8))
    law = draw(st.sampled_from(("normal", "laplace", "grid")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mu = rng.normal(size=M)
    sd = rng.uniform(0.3, 1.2, M)
    eps = rng.laplace(0.0, 2 ** -0.5, (M, m + 1)) if law == "laplace" else rng.normal(size=(M, m + 1))
    v = mu[:, None] + sd[:, None] * eps
    if law == "grid":
        v = np.round(2 * v) / 2
        v[:, 1] = v[:, 2] + 0.5  # no case's members all equal
    note(f"M={M}, m={m}, {law}")
    return v[:, 0], v[:, 1:]


@given(ens=ensembles(), seed=seeds, k=st.integers(-4, 4), data=st.data())
def test_ensemble_verdict_units_and_member_order(ens, seed, k, data):
    """The combined verdict of from_samples: a power-of-two unit and any order of the members
    within each row give the same swapped sets bit for bit (the swap sorts each row's values)
    and the same p-values; the data's statistics agree to rounding (the members' mean is summed
    in another order)."""
    y, s = ens
    perm = np.array(data.draw(st.permutations(range(s.shape[1]))))
    a = mcref.from_samples(y, s, verdict=False, seed=seed, n_swaps=19)
    b = mcref.from_samples(y * 2.0 ** k, s[:, perm] * 2.0 ** k, verdict=False, seed=seed, n_swaps=19)
    assert (a.combined is None) == (b.combined is None)
    if a.combined is None:  # m of a row's m + 1 values equal: no swap null, said in a note
        assert any("no combined verdict" in n for n in a.notes)
        return
    assert np.array_equal(a.combined.samples, b.combined.samples)
    assert [t.p for t in a.combined.tests] == [t.p for t in b.combined.tests]
    assert a.combined.p == b.combined.p and a.verdict == b.verdict
    np.testing.assert_allclose([t.observed for t in b.combined.tests], [t.observed for t in a.combined.tests],
                               rtol=1e-9, atol=1e-12)


@hypothesis.settings(max_examples=4)
@given(data=st.data(), d=datasets(u_laws=("uniform", "lognormal", "ig4"), max_m=400), seed=seeds,
       distinct=st.booleans())
def test_groups_never_rank_a_reference_that_cannot_vary(data, d, seed, distinct):
    """Groups and a feature (issue 38): every pairing row either gets a p from a permutation
    reference that varies, or is ``not testable`` with its reason, without a p (none in
    p[permutation] either), and out of the joint verdict. Groups drawn with sizes in common, or each
    of a size of its own (then the permutation cannot move Z against x, or, when the u-levels follow
    the sizes, cannot move anything)."""
    m = d.E.size
    if distinct:  # sizes 1, 2, 3, … (the last group takes the rest): every size its own
        k = int((math.isqrt(8 * m + 1) - 1) // 2)
        g = np.minimum(np.repeat(np.arange(k), np.arange(1, k + 1))[:m], k - 1)
        g = np.concatenate([g, np.full(m - g.size, k - 1)])
        g = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(g)
    else:
        g = data.draw(group_labels(m))
    x = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).normal(size=m)
    tab = run(d.E, d.u, groups=g, x={"f": x}, stats=["CC", "ENCE", "ZMSE"], seed=seed, n_bins=4)
    for r in tab.rows:
        if r.verdict == "not testable":
            assert r.p_test is None and r.reason and math.isnan(r.p_sim.get("permutation", math.nan))
            assert r.name not in tab.joint.stats if tab.joint is not None else True
        else:
            ref = r.sim["permutation"]
            assert r.p_test is not None and ref.sd > 0, r.name  # a reference that varies
