"""Where users' predictions live: DataFrames, Parquet, Feather, large CSV files, and a Dataset
wherever (E, u) is asked for (mcref.datasets.from_frame, from_groups, from_pairs,
_checks.dataset_args)."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

import mcref
from mcref import datasets, diagnostics
from mcref.core import _input

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


def _bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _same(a: datasets.Dataset, b: datasets.Dataset) -> bool:
    same_x = (a.x is None and b.x is None) or (a.x is not None and b.x is not None
                                                and np.array_equal(_bits(a.x), _bits(b.x)))
    return np.array_equal(_bits(a.E), _bits(b.E)) and np.array_equal(_bits(a.u), _bits(b.u)) and same_x


@pytest.fixture
def frame():
    """Values whose decimal text needs all 17 digits, powers of ten, tiny and huge magnitudes."""
    rng = np.random.default_rng(20251125)
    n = 3000
    y = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n)
    y[:4] = [0.1, 1e-300 * 3, 123456789012345678.0, -2.5]
    pred = y + rng.normal(size=n)
    sigma = rng.lognormal(size=n)
    sigma[:3] = [3.3e-100 / 7, 1e100 / 7, 0.3]  # every bit matters
    return pd.DataFrame({"model": rng.choice(["gp", "ens", "nn"], n), "y": y, "yhat": pred, "sigma": sigma,
                         "x": rng.uniform(size=n)})


def test_frame_parquet_feather_equal_the_csv_path_bit_for_bit(frame, tmp_path):
    frame.to_csv(tmp_path / "p.csv", index=False)
    frame.to_parquet(tmp_path / "p.parquet")
    frame.reset_index(drop=True).to_feather(tmp_path / "p.feather")
    cols = dict(ref="y", pred="yhat", u="sigma")
    via_csv = datasets.from_file(tmp_path / "p.csv", **cols)
    assert via_csv.M == len(frame)
    for other in (datasets.from_frame(frame, **cols), datasets.from_file(tmp_path / "p.parquet", **cols),
                  datasets.from_file(tmp_path / "p.feather", **cols)):
        assert _same(other, via_csv)
    # E = ref - pred, the convention of from_file, computed in float64 from the stored values
    assert np.array_equal(via_csv.E, frame["y"].to_numpy() - frame["yhat"].to_numpy())
    assert datasets.from_file(tmp_path / "p.parquet", **cols).name == "p"


def test_parquet_columns_are_read_when_asked_for(frame, tmp_path, monkeypatch):
    """A Parquet file's columns are read one by one when first asked for, batch by batch into
    float64 (issue 33: a file of 10⁷ rows reads E and u, not every column): the same bits as
    the whole file read at once, nulls and non-numeric columns as before."""
    pq = pytest.importorskip("pyarrow.parquet")
    n = len(frame)
    table = pa.table({"model": frame["model"], "y": frame["y"], "yhat": frame["yhat"],
                      "sigma": pa.array(frame["x"].to_numpy() + 0.5, pa.float32()),
                      "k": np.arange(1, n + 1, dtype=np.int64), "x": frame["x"]})
    path = tmp_path / "p.parquet"
    pq.write_table(table, path, row_group_size=700)  # several row groups and batches
    monkeypatch.setattr(_input.ArrowColumns, "BATCH_ROWS", 512)
    read = []
    orig = _input.ArrowColumns._read
    monkeypatch.setattr(_input.ArrowColumns, "_read", lambda self, name: read.append(name) or orig(self, name))
    ds = datasets.from_file(path, ref="y", pred="yhat", u="k")
    assert sorted(read) == ["k", "x", "y", "yhat"]  # not "model", not "sigma"
    whole = pq.read_table(path)
    assert np.array_equal(ds.E, whole["y"].to_numpy() - whole["yhat"].to_numpy())
    assert np.array_equal(ds.u, np.arange(1, n + 1, dtype=np.float64))
    assert np.array_equal(_bits(datasets.from_file(path, E="y", u="sigma").u),
                          _bits(np.asarray(whole["sigma"].to_numpy(), dtype=np.float64)))
    # a missing value: NaN, refused with its count, as when the file was read at once
    bad = table.set_column(1, "y", pa.array([None] + frame["y"].tolist()[1:], pa.float64()))
    pq.write_table(bad, path, row_group_size=700)
    with pytest.raises(ValueError, match=r"1 NaN and 0 infinite values, first at index 0"):
        datasets.from_file(path, E="y", u="k")
    with pytest.raises(ValueError, match=r"must hold numbers"):
        datasets.from_file(path, E="model", u="k")


def test_fast_csv_reader_gives_the_text_readers_bits(frame, tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    slow = datasets.from_file(path, ref="y", pred="yhat", u="sigma")
    monkeypatch.setattr(_input, "FAST_CSV_BYTES", 0)
    table = _input.read_text_fast(path, None)
    assert table is not None and table.arrays is not None  # the fast reader did read it
    assert _same(datasets.from_file(path, ref="y", pred="yhat", u="sigma"), slow)
    assert [d.name for d in datasets.from_groups(path, "model", ref="y", pred="yhat", u="sigma")] == \
        list(dict.fromkeys(frame["model"]))


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("\n", "\n# a comment\n", 1), None),  # comment line: the text reader reads it
    (lambda t: t.replace("\n", "\n , , , , \n", 2), None),    # a blank row (spaces only): skipped
    (lambda t: t + "x,1,NA,1,1\n", "non-numeric value|finite"),
    (lambda t: t + "x,1,oops,1,1\n", "non-numeric value 'oops' at data row"),
    (lambda t: t + "x,1,2\n", "fields but the header has"),
])
def test_fast_csv_reader_falls_back_with_the_text_readers_rules(frame, tmp_path, monkeypatch, edit, message):
    text = frame.to_csv(index=False)
    path = tmp_path / "f.csv"
    path.write_text(edit(text))
    outcomes = []
    for limit in (float("inf"), 0):
        monkeypatch.setattr(_input, "FAST_CSV_BYTES", limit)
        try:
            outcomes.append(datasets.from_file(path, ref="y", pred="yhat", u="sigma"))
        except ValueError as exc:
            outcomes.append(str(exc))
    slow, fast = outcomes
    if message is None:
        assert _same(fast, slow)
    else:
        assert isinstance(slow, str) and fast == slow
        import re
        assert re.search(message, slow)


def test_missing_pyarrow_names_the_extra(frame, tmp_path, monkeypatch):
    frame.to_parquet(tmp_path / "p.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r'mcref\[parquet\]'):
        datasets.from_file(tmp_path / "p.parquet", ref="y", pred="yhat", u="sigma")
    # CSV still reads (the fast reader is optional)
    frame.to_csv(tmp_path / "p.csv", index=False)
    monkeypatch.setattr(_input, "FAST_CSV_BYTES", 0)
    assert datasets.from_file(tmp_path / "p.csv", ref="y", pred="yhat", u="sigma").M == len(frame)


def test_from_frame_errors_name_the_column():
    df = pd.DataFrame({"E": [0.1, np.nan, 0.2], "u": [1.0, 1.0, 1.0], "s": ["a", "b", "c"]})
    with pytest.raises(ValueError, match=r"column 'E' \(`E`\).*1 NaN.*first at index 1"):
        datasets.from_frame(df)
    with pytest.raises(ValueError, match=r"`u` names column 'sigma', which is missing; available columns: 'E', 'u', 's'"):
        datasets.from_frame(df.fillna(0.0), u="sigma")
    with pytest.raises(ValueError, match=r"column 's' \(`u`\) must hold numbers"):
        datasets.from_frame(df.fillna(0.0), u="s")
    nullable = pd.DataFrame({"E": pd.array([0.5, None], dtype="Float64"), "u": [1.0, 2.0]})
    with pytest.raises(ValueError, match="1 NaN"):
        datasets.from_frame(nullable)
    assert datasets.from_frame({"E": [0.5, -1.0], "u": [1, 2]}).u.tolist() == [1.0, 2.0]


def test_groups_and_pairs(frame):
    groups = datasets.from_groups(frame, "model", ref="y", pred="yhat", u="sigma")
    assert [g.name for g in groups] == list(dict.fromkeys(frame["model"]))  # order of first rows
    for g in groups:
        alone = datasets.from_frame(frame[frame["model"] == g.name], ref="y", pred="yhat", u="sigma", name=g.name)
        assert _same(g, alone)
    with pytest.raises(ValueError, match=r"`by` names column 'method', which is missing; available columns: 'model'"):
        datasets.from_groups(frame, "method", ref="y", pred="yhat", u="sigma")
    bad = frame.assign(model=frame["model"].where(frame.index != 7, None))
    with pytest.raises(ValueError, match=r"1 missing value\(s\), first at data row 7"):
        datasets.from_groups(bad, "model", ref="y", pred="yhat", u="sigma")
    wide = pd.DataFrame({"y": frame["y"], "p_A": frame["yhat"], "s_A": frame["sigma"],
                         "p_B": frame["yhat"] * 2, "s_B": frame["sigma"] * 3})
    a, b = datasets.from_pairs(wide, "A=p_A:s_A, B=p_B:s_B", ref="y")
    assert (a.name, b.name) == ("A", "B")
    assert np.array_equal(b.E, wide["y"].to_numpy() - 2 * frame["yhat"].to_numpy())
    assert np.array_equal(b.u, 3 * frame["sigma"].to_numpy())
    assert [d.name for d in datasets.from_pairs(wide, [("p_A", "s_A")], ref="y")] == ["p_A"]
    for bad_pairs in ("p_A", "A=p_A:", [("p_A",)], "A=p_A:s_A,A=p_B:s_B", ""):
        with pytest.raises(ValueError, match="`pairs`"):
            datasets.from_pairs(wide, bad_pairs, ref="y")


# ------------------------------------------------------------------ a Dataset in place of (E, u)
@pytest.fixture(scope="module")
def ds():
    rng = np.random.default_rng(7)
    u = rng.lognormal(-1, 0.4, 600)
    x = rng.uniform(0, 1, 600)
    return datasets.Dataset("toy", u * rng.normal(size=600) * (1 + x), u, x)


def test_dataset_in_place_of_E_and_u(ds):
    assert mcref.statistic("ZMS", ds) == mcref.statistic("ZMS", ds.E, ds.u)
    assert mcref.statistics(["ZMS", "RCE"], ds) == mcref.statistics(["ZMS", "RCE"], ds.E, ds.u)
    b1 = mcref.bootstrap("ZMS", ds, n_boot=200, seed=3)
    b2 = mcref.bootstrap("ZMS", ds.E, ds.u, n_boot=200, seed=3)
    assert (b1.low, b1.high) == (b2.low, b2.high)
    s1 = mcref.simulate("ZMS", ds, n_mc=200, seed=1, dists=["empirical"])  # u-first: E taken too
    s2 = mcref.simulate("ZMS", ds.u, E=ds.E, n_mc=200, seed=1, dists=["empirical"])
    assert np.array_equal(s1.samples, s2.samples)
    # x of the Dataset fills the diagnostics' x; recalibrate keeps x for "bvs" only (not filled)
    assert np.array_equal(diagnostics.lzms(ds).value, diagnostics.lzms(ds.E, ds.u, ds.x).value)
    assert not diagnostics.lzms(ds).variable == diagnostics.lzms(ds.E, ds.u).variable
    assert mcref.recalibrate(ds).params == mcref.recalibrate(ds.E, ds.u).params
    assert mcref.recalibrate(ds, "bvs", x=ds.x).on_x


def test_validate_takes_a_dataset_and_its_name(ds):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.FewReplicatesWarning)
        t1 = mcref.validate(ds, stats=["ZMS"], n_boot=200, n_mc=200, seed=5)
        t2 = mcref.validate(ds.E, ds.u, stats=["ZMS"], n_boot=200, n_mc=200, seed=5, name="toy")
    assert t1.to_json() == t2.to_json() and t1.name == "toy"


def test_dataset_argument_errors(ds):
    with pytest.raises(ValueError, match=r"statistic\(\): `E` is the Dataset 'toy', which carries its own u"):
        mcref.statistic("ZMS", ds, ds.u)
    with pytest.raises(ValueError, match="carries its own u"):
        mcref.validate(ds, u=ds.u)
    with pytest.raises(ValueError, match=r"`E` is a DataFrame; make a Dataset.*from_frame"):
        mcref.statistic("ZMS", pd.DataFrame({"E": ds.E, "u": ds.u}))
    with pytest.raises(TypeError, match=r"missing the argument `u`"):
        mcref.statistic("ZMS", ds.E)


# ------------------------------------------------------------------ many models in one table
BENCH = dict(stats=["ZMS", "RCE"], n_boot=200, n_mc=200, seed=11, n_jobs=1, progress=False)


@pytest.fixture(scope="module")
def long_frame():
    rng = np.random.default_rng(99)
    m = 600
    parts = []
    for model, scale in (("gp", 1.0), ("ens", 1.7), ("nn", 0.8)):
        s = rng.lognormal(-1, 0.3, m)
        y = rng.normal(size=m)
        parts.append(pd.DataFrame({"model": model, "y": y, "yhat": y - scale * s * rng.normal(size=m), "s": s}))
    return pd.concat(parts, ignore_index=True).sample(frac=1.0, random_state=3).reset_index(drop=True)


def _bench(*args, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcref.FewReplicatesWarning)
        return mcref.benchmark(*args, **kw)


def test_by_model_equals_separate_runs_bit_for_bit(long_frame, tmp_path):
    cols = dict(ref="y", pred="yhat", u="s")
    long_frame.to_parquet(tmp_path / "preds.parquet")
    together = _bench(tmp_path / "preds.parquet", by="model", **cols, **BENCH)
    assert [d.name for d in together.datasets] == list(dict.fromkeys(long_frame["model"]))  # first-row order
    alone = [_bench(datasets.from_frame(long_frame[long_frame["model"] == g], name=g, **cols), **BENCH).table
             for g in dict.fromkeys(long_frame["model"])]
    pd.testing.assert_frame_equal(together.table.reset_index(drop=True),
                                  pd.concat(alone, ignore_index=True), check_exact=True)
    # the in-memory frame and the Parquet file give the same table
    pd.testing.assert_frame_equal(_bench(long_frame, by="model", **cols, **BENCH).table, together.table,
                                  check_exact=True)
    # the verdicts see the miscalibrated model
    v = together.verdicts()
    assert v.loc["ens", "ZMS"] == "invalid" and v.loc["gp", "ZMS"] == "valid"


def test_pairs_equal_separate_runs_and_resume_from_the_store(long_frame, tmp_path):
    g = {k: d.reset_index(drop=True) for k, d in long_frame.groupby("model", sort=False)}
    wide = pd.DataFrame({"y": g["gp"]["y"], "p_gp": g["gp"]["yhat"], "s_gp": g["gp"]["s"],
                         "p_nn": g["nn"]["yhat"], "s_nn": g["nn"]["s"]})
    store = tmp_path / "bench.sqlite"
    first = _bench(wide, pairs="gp=p_gp:s_gp", ref="y", store=store, **BENCH)
    both = _bench(wide, pairs="gp=p_gp:s_gp,nn=p_nn:s_nn", ref="y", store=store, **BENCH)
    assert (both.run.n_loaded, both.run.n_computed) == (1, 1)
    pd.testing.assert_frame_equal(both.table[both.table["dataset"] == "gp"].reset_index(drop=True), first.table,
                                  check_exact=True)
    nn_alone = _bench(datasets.Dataset("nn", wide["y"] - wide["p_nn"], wide["s_nn"]), **BENCH)  # E = y - pred
    pd.testing.assert_frame_equal(both.table[both.table["dataset"] == "nn"].reset_index(drop=True),
                                  nn_alone.table, check_exact=True)


def test_group_errors_name_the_group(long_frame):
    cols = dict(ref="y", pred="yhat", u="s")
    with pytest.raises(ValueError, match=r"DataFrame: .*`by` names column 'method', which is missing"):
        _bench(long_frame, by="method", **cols, **BENCH)
    tiny = pd.concat([long_frame, long_frame.iloc[:2].assign(model="tiny")], ignore_index=True)
    with pytest.raises(ValueError, match=r"group 'tiny' \(by='model'\): a dataset needs at least 3 points, got 2"):
        _bench(tiny, by="model", **cols, **BENCH)
    with pytest.raises(ValueError, match=r"`by` splits a table .*built-in|`by` splits a table"):
        _bench("QM9_E", by="model", **BENCH)
    with pytest.raises(ValueError, match="not both"):
        _bench(long_frame, by="model", pairs="yhat:s", **BENCH)
    with pytest.raises(ValueError, match=r"with `pairs`, the columns come from `pairs`"):
        _bench(long_frame, pairs="yhat:s", u="s", **BENCH)


# ------------------------------------------------------------------ a large CSV read by columns (issue 41)
def _wide_csv(path, n=2500, seed=41, junk=True):
    """A CSV whose cells take every form a number's text takes (17 digits, integers past 2⁵³,
    exponents, signs, '.5', '5.', '-0', spaces), plus columns never asked for: text, a missing
    cell, a number with a comma decimal. Returns the cells as written."""
    rng = np.random.default_rng(seed)
    forms = [lambda v: repr(float(v)), lambda v: f"{v:.17g}", lambda v: f"{v:.3e}", lambda v: f"{v:+.6f}",
             lambda v: f" {v:.5g} ", lambda v: str(int(v * 1e6))]
    E = [forms[k](v) for k, v in zip(rng.integers(0, len(forms), n), rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n))]
    E[:6] = ["9007199254740993", ".5", "5.", "-0", "1E-300", "123456789012345678901234567890"]
    u = [f"{v:.17g}" for v in rng.lognormal(size=n)]
    u[:2] = ["3", "0.1"]
    cols = {"id": [f"row {i}" for i in range(n)], " E ": E, "u": u,
            "junk": ["oops" if i % 7 == 0 else "1.5" for i in range(n)],
            "gap": ["" if i == n - 1 else "2" for i in range(n)], "comma": ["1,5"] * n}
    with open(path, "w", newline="") as fh:
        import csv
        w = csv.writer(fh)
        w.writerow(list(cols))
        w.writerows(zip(*cols.values()))
    return cols


def _independent(path, name):
    """Column ``name`` of a CSV by Python's csv and float (the header cells stripped)."""
    import csv
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    j = [h.strip() for h in rows[0]].index(name)
    return np.array([float(r[j]) for r in rows[1:]], dtype=np.float64)


@pytest.fixture
def by_columns(monkeypatch):
    """The fast reader on any file, the columns it parses and the passes it makes recorded."""
    monkeypatch.setattr(_input, "FAST_CSV_BYTES", 0)
    passes = []
    orig = _input.CsvColumns._read
    monkeypatch.setattr(_input.CsvColumns, "_read", lambda self, names: passes.append(list(names)) or orig(self, names))
    return passes


def test_csv_columns_are_parsed_when_asked_for_with_pythons_bits(tmp_path, by_columns, monkeypatch):
    path = tmp_path / "wide.csv"
    _wide_csv(path)
    text_reads = []
    orig_text = _input.read_text
    monkeypatch.setattr(_input, "read_text", lambda *a: text_reads.append(a) or orig_text(*a))
    from pyarrow import csv as pacsv

    converted = []
    orig_open = pacsv.open_csv
    monkeypatch.setattr(pacsv, "open_csv", lambda *a, **kw: converted.append(
        kw["convert_options"].include_columns if "convert_options" in kw else "schema") or orig_open(*a, **kw))
    ds = datasets.from_file(path)  # E (header ' E ': stripped), u; 'junk', 'gap', 'comma' never parsed
    assert text_reads == [] and by_columns == [["E", "u"]]  # one pass, the two asked columns only
    assert converted == ["schema", [" E ", "u"]]  # the header, then E and u converted (pyarrow's names)
    assert np.array_equal(_bits(ds.E), _bits(_independent(path, "E")))
    assert np.array_equal(_bits(ds.u), _bits(_independent(path, "u")))
    assert ds.E[0] == 9007199254740992.0 and ds.E[3] == 0.0 and np.signbit(ds.E[3])
    # the text reader, forced, gives the same bits
    monkeypatch.setattr(_input, "FAST_CSV_BYTES", float("inf"))
    assert _same(datasets.from_file(path), ds)
    # a column asked for alone is parsed alone; a label column as text
    monkeypatch.setattr(_input, "FAST_CSV_BYTES", 0)
    table = _input.read_text_fast(path, None, text_columns=("id",))
    assert isinstance(table.arrays, _input.CsvColumns) and table.names == ["id", "E", "u", "junk", "gap", "comma"]
    by_columns.clear()
    assert table.arrays["id"][:2].tolist() == ["row 0", "row 1"] and by_columns == [["id"]]
    assert table.n_rows == 2500


def test_csv_columns_grow_past_a_short_guess(tmp_path, by_columns, monkeypatch):
    path = tmp_path / "wide.csv"
    _wide_csv(path)
    monkeypatch.setattr(_input.CsvColumns, "BLOCK_BYTES", 1 << 12)  # many batches
    monkeypatch.setattr(_input.CsvColumns, "_guess_rows", lambda self: 3)
    ds = datasets.from_file(path, E="u", u="u")
    assert np.array_equal(_bits(ds.u), _bits(_independent(path, "u"))) and ds.M == 2500


def test_csv_columns_in_groups_and_pairs_parse_only_theirs(tmp_path, by_columns):
    path = tmp_path / "wide.csv"
    cols = _wide_csv(path)
    groups = datasets.from_groups(path, "comma", E="E", u="u")  # one group ('1,5'), labels and numbers in one pass
    assert by_columns == [["comma", "E", "u"]] and [g.name for g in groups] == ["1,5"]
    assert np.array_equal(_bits(groups[0].E), _bits(_independent(path, "E")))
    by_columns.clear()
    a, = datasets.from_pairs(path, "A=u:u", ref="E")
    assert by_columns == [["E", "u"]]
    assert np.array_equal(_bits(a.E), _bits(_independent(path, "E") - _independent(path, "u")))
    assert len(cols["id"]) == a.M


@pytest.mark.parametrize("edit, message", [
    (lambda t: t + "row x, 1 ,oops,1.5,2,\"1,5\"\n", "non-numeric value 'oops' at data row 2500"),
    (lambda t: t + "row x, 1 ,,1.5,2,\"1,5\"\n", "1 NaN and 0 infinite values"),
    (lambda t: t + "row x, 1 ,2\n", "line 2502: 3 fields but the header has 6"),
    (lambda t: t + "row x, 1 ,2,1.5,2,\"1,5\"\n# a comment\n", None),
])
def test_csv_columns_fall_back_past_the_first_block(tmp_path, by_columns, monkeypatch, edit, message):
    """A bad cell or line far into the file (after pyarrow's first block): the text reader's
    message, exactly; a comment line anywhere: the text reader's values."""
    path = tmp_path / "wide.csv"
    _wide_csv(path)
    path.write_text(edit(path.read_text()))
    monkeypatch.setattr(_input.CsvColumns, "BLOCK_BYTES", 1 << 12)
    outcomes = []
    for limit in (float("inf"), 0):
        monkeypatch.setattr(_input, "FAST_CSV_BYTES", limit)
        try:
            outcomes.append(datasets.from_file(path, E="u", u="u"))
        except ValueError as exc:
            outcomes.append(str(exc))
    slow, fast = outcomes
    if message is None:
        assert _same(fast, slow)
    else:
        assert isinstance(fast, str) and fast == slow and message in fast


def test_csv_columns_keep_the_text_readers_refusals(tmp_path, by_columns, monkeypatch):
    """A byte that is not UTF-8 in a column never asked for, a header whose names repeat:
    what the text reader says."""
    path = tmp_path / "wide.csv"
    _wide_csv(path)
    path.write_bytes(path.read_bytes().replace(b"row 7,", b"row \xff7,"))
    with pytest.raises(ValueError, match="cannot read as UTF-8 text"):
        datasets.from_file(path)
    assert not _input._plain_utf8(path, chunk=mmap.PAGESIZE)
    utf8 = "é€" * mmap.PAGESIZE + "\n"  # multi-byte characters straddle the chunks
    (tmp_path / "ok.csv").write_text(utf8, encoding="utf-8")
    assert _input._plain_utf8(tmp_path / "ok.csv", chunk=mmap.PAGESIZE)
    (tmp_path / "dup.csv").write_text("E,u,E\n" + "1,2,3\n" * 50)
    assert not isinstance(_input.read_text_fast(tmp_path / "dup.csv", None).arrays, _input.CsvColumns)
    outcomes = []
    for limit in (float("inf"), 0):
        monkeypatch.setattr(_input, "FAST_CSV_BYTES", limit)
        with pytest.raises(ValueError, match="several columns could hold `E`") as exc:
            datasets.from_file(tmp_path / "dup.csv")
        outcomes.append(str(exc.value))
    assert outcomes[0] == outcomes[1]


def test_csv_columns_default_x_not_numeric_warns_as_the_text_reader(tmp_path, by_columns, monkeypatch):
    """A default-named x column of text: E and u loaded, x left out with the text reader's warning."""
    path = tmp_path / "wide.csv"
    cols = _wide_csv(path)
    path.write_text(path.read_text().replace("junk", "X", 1))  # 'X' holds 'oops' every 7th row
    outcomes = []
    for limit in (float("inf"), 0):
        monkeypatch.setattr(_input, "FAST_CSV_BYTES", limit)
        with pytest.warns(UserWarning, match=r"the column 'X' \(conditioning variable x\) is empty or not numeric"):
            outcomes.append(datasets.from_file(path))
    assert outcomes[1].x is None and _same(outcomes[0], outcomes[1]) and outcomes[1].M == len(cols["id"])
