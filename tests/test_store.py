"""The SQLite results store: creation, read back, refusals (mismatch, foreign or corrupt files)."""

from __future__ import annotations

import json
import math
import sqlite3
import warnings

import pytest

from mcref.store import (FORMAT, StoreFormatError, StoreMismatchError, StudyStore, canonical_json,
                         to_plain)

PARAMS = {"n_mc": 5000, "M": [2000, 4000], "model": "NIG"}


def _open(path, **kw):
    args = dict(study="scaling", params=PARAMS, seed=7, version="1.0")
    args.update(kw)
    return StudyStore.open(path, **args)


def test_canonical_json_sorted_and_exact():
    assert canonical_json({"b": 1, "a": (0.1, 2)}) == canonical_json({"a": [0.1, 2], "b": 1})
    x = 0.1 + 0.2
    assert json.loads(canonical_json([x, math.pi, -0.0]))[0] == x
    assert canonical_json([float("nan"), float("inf")]) == "[NaN,Infinity]"
    assert canonical_json({"k": 1}) != canonical_json({"k": 1.0})
    with pytest.raises(TypeError):
        canonical_json({"x": object()})


def test_to_plain_numpy():
    np = pytest.importorskip("numpy")
    out = to_plain({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True), "d": np.array(2.5)})
    assert out == {"a": 3, "b": 0.5, "c": True, "d": 2.5}
    assert [type(v) for v in out.values()] == [int, float, bool, float]


def test_create_commit_load_roundtrip(tmp_path):
    path = tmp_path / "sub" / "s.sqlite"  # parent folders are created
    rows = [{"stat": "ZMS", "value": 0.1 + 0.2, "nan": float("nan"), "inf": -float("inf"), "ok": True},
            {"z": -0.0, "stat": "CC", "n": 3, "none": None}]
    with _open(path) as st:
        assert st.created and st.seed == 7
        assert st.done_keys() == set()
        st.commit({"model": "NIG", "M": 2000}, rows, 0.25)
    with _open(path) as st:
        assert not st.created
        assert st.done_keys() == {canonical_json({"M": 2000, "model": "NIG"})}
        back = st.load({"M": 2000, "model": "NIG"})  # key order does not matter
        with pytest.raises(KeyError, match="not in store"):
            st.load({"M": 4000, "model": "NIG"})
    assert list(back[0]) == ["stat", "value", "nan", "inf", "ok"]  # column order kept
    assert list(back[1]) == ["z", "stat", "n", "none"]
    assert back[0]["value"] == 0.1 + 0.2 and math.isnan(back[0]["nan"]) and back[0]["inf"] == -math.inf
    assert math.copysign(1.0, back[1]["z"]) == -1.0 and type(back[1]["n"]) is int and back[1]["none"] is None


def test_file_layout(tmp_path):
    path = tmp_path / "s.sqlite"
    with _open(path) as st:
        st.commit({"i": 1}, [{"x": 1.5}], 0.5)  # 0.5: the cell's duration as given, stored as is
    con = sqlite3.connect(path)
    meta = dict(con.execute("SELECT key, value FROM mcref_meta"))
    assert meta["format"] == FORMAT and meta["format_version"] == "1"
    assert meta["study"] == "scaling" and json.loads(meta["params"]) == PARAMS
    assert meta["seed"] == "7" and meta["mcref_version"] == "1.0" and meta["created"].endswith("+00:00")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    key, rows, given_duration, finished, version = con.execute("SELECT * FROM cells").fetchone()
    con.close()
    assert (key, json.loads(rows), given_duration, version) == ('{"i":1}', [{"x": 1.5}], 0.5, "1.0")
    assert finished.endswith("+00:00")


def test_empty_file_is_created(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    with _open(path) as st:
        assert st.created


def test_seed_none_adopts_stored_or_draws(tmp_path):
    with _open(tmp_path / "a.sqlite", seed=None) as st:
        drawn = st.seed
    assert isinstance(drawn, int) and drawn >= 0
    with _open(tmp_path / "a.sqlite", seed=None) as st:
        assert st.seed == drawn
    with _open(tmp_path / "a.sqlite", seed=drawn) as st:
        assert st.seed == drawn


def test_params_mismatch_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    _open(path).close()
    with pytest.raises(StoreMismatchError, match=r"holds study 'scaling' with n_mc=5000, this call asks "
                                                 r"n_mc=100; use another store= path or the stored parameters"):
        _open(path, params={**PARAMS, "n_mc": 100})
    with pytest.raises(StoreMismatchError, match=r"M=\[2000,4000\]|M=\[2000, 4000\]"):
        _open(path, params={**PARAMS, "M": [2000]})
    with pytest.raises(StoreMismatchError, match=r"extra=<absent>, this call asks extra=1"):
        _open(path, params={**PARAMS, "extra": 1})
    with pytest.raises(StoreMismatchError, match=r"model=\"NIG\", this call asks model=<absent>"):
        _open(path, params={k: v for k, v in PARAMS.items() if k != "model"})
    assert issubclass(StoreMismatchError, ValueError)


def test_seed_and_study_mismatch_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    _open(path).close()
    with pytest.raises(StoreMismatchError, match=r"with seed=7, this call asks seed=8; .*seed=None"):
        _open(path, seed=8)
    with pytest.raises(StoreMismatchError, match=r"holds study 'scaling', this call asks study 'other'"):
        _open(path, study="other")
    with pytest.raises(StoreMismatchError, match=r"n_mc=5000, seed=7, this call asks n_mc=1, seed=8"):
        _open(path, params={**PARAMS, "n_mc": 1}, seed=8)


def test_text_file_refused_unchanged(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"precious notes\n" * 10)
    before = path.read_bytes()
    with pytest.raises(StoreFormatError, match=r"is not an mcref study store \(not an SQLite file\); "
                                               r"refusing to overwrite it: choose another store= path"):
        _open(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_foreign_sqlite_refused_unchanged(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    with con:
        con.execute("CREATE TABLE t(x)")
        con.execute("INSERT INTO t VALUES (1)")
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreFormatError, match="foreign SQLite file"):
        _open(path)
    assert path.read_bytes() == before
    # same table names, another format tag
    path2 = tmp_path / "other2.sqlite"
    con = sqlite3.connect(path2)
    with con:
        con.execute("CREATE TABLE mcref_meta(key TEXT PRIMARY KEY, value TEXT)")
        con.execute("CREATE TABLE cells(key TEXT)")
        con.execute("INSERT INTO mcref_meta VALUES ('format', 'something-else')")
    con.close()
    before = path2.read_bytes()
    with pytest.raises(StoreFormatError, match="foreign SQLite file"):
        _open(path2)
    assert path2.read_bytes() == before


def test_newer_format_version_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    _open(path).close()
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE mcref_meta SET value='2' WHERE key='format_version'")
    con.close()
    with pytest.raises(StoreFormatError, match="store format version '2'"):
        _open(path)


def test_truncated_store_refused_unchanged(tmp_path):
    path = tmp_path / "s.sqlite"
    with _open(path) as st:
        for i in range(300):
            st.commit({"i": i}, [{"x": float(j), "s": "y" * 50} for j in range(20)], 0.0)
    con = sqlite3.connect(path)  # move everything into the main file, then cut it
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    data = path.read_bytes()
    assert len(data) > 40_000
    path.write_bytes(data[: len(data) // 2])
    before = path.read_bytes()
    with pytest.raises(StoreFormatError, match="corrupt"):
        _open(path)
    assert path.read_bytes() == before


def test_garbled_store_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    with _open(path) as st:
        for i in range(50):
            st.commit({"i": i}, [{"x": float(i)}], 0.0)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[page + 8: 2 * page] = b"\xff" * (page - 8)  # garble the second page (a b-tree page)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreFormatError, match="corrupt"):
        _open(path)


def test_directory_refused(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        _open(tmp_path)


def test_params_not_json_refused(tmp_path):
    with pytest.raises(ValueError, match="not JSON-serialisable"):
        _open(tmp_path / "s.sqlite", params={"f": object()})


def test_version_mismatch(tmp_path):
    path = tmp_path / "s.sqlite"
    with _open(path, version="1.0") as st:
        st.commit({"i": 0}, [{"x": 1.0}], 0.1)
    with _open(path, version="2.0") as st:
        assert st.stored_version == "1.0"
        with pytest.raises(StoreMismatchError, match=r"written by mcref 1.0, this is mcref 2.0, and 3 cells "
                                                     r"remain: refusing to mix"):
            st.check_version(3)
        with pytest.raises(StoreMismatchError, match="refusing to mix"):
            st.commit({"i": 1}, [{"x": 2.0}], 0.1)
        with pytest.warns(UserWarning, match="written by mcref 1.0, this is mcref 2.0; its finished results"):
            st.check_version(0)
        assert st.load({"i": 0}) == [{"x": 1.0}]
        assert st.done_keys() == {'{"i":0}'}
    with _open(path, version="1.0") as st, warnings.catch_warnings():
        warnings.simplefilter("error")
        st.check_version(5)  # same version: no warning, no error


def test_commit_is_one_transaction_and_replaces(tmp_path):
    path = tmp_path / "s.sqlite"
    with _open(path) as st:
        st.commit({"i": 0}, [{"x": 1.0}], 0.1)
        st.commit({"i": 0}, [{"x": 2.0}], float("nan"))
        with pytest.raises(TypeError):
            st.commit({"i": 1}, [{"x": object()}], 0.1)
        assert st.done_keys() == {'{"i":0}'}
        assert st.load({"i": 0}) == [{"x": 2.0}]


def test_close_idempotent(tmp_path):
    st = _open(tmp_path / "s.sqlite")
    assert "open" in repr(st)
    st.close()
    st.close()
    assert "closed" in repr(st)
    with pytest.raises(ValueError, match="is closed"):
        st.done_keys()
