"""Tests of mcref.datasets: the packaged sets against their sources, and from_file.

Independent references used here (none is computed by mcref):

* set sizes and filter counts: the table of SOURCE.md / the papers (rows in file, M used);
* derivations: re-done with plain NumPy/csv on byte-exact excerpts of the original CSV
  files in ``tests/data`` (see ``tests/data/README.md``);
* golden values: ZMS and RCE (``Tabs/tabZMS.tex``, ``Tabs/tabRCE.tex``, 3 significant
  digits) and mean and standard deviation of E (``Tabs/tabData.tex``) from GitHub
  ppernot/2024_SimRef, computed here with plain NumPy.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import mcref

from mcref.datasets import Dataset, from_file, load, names

DATA = Path(__file__).parent / "data"

NAMES = [
    "Diffusion_RF",
    "Perovskite_RF",
    "Diffusion_LR",
    "Perovskite_LR",
    "Diffusion_GPR_Bayesian",
    "Perovskite_GPR_Bayesian",
    "QM9_E",
    "logP_10k_a_LS-GCN",
    "logP_150k_LS-GCN",
]
# SOURCE.md table: (rows in the original file, M used in the papers)
ROWS_AND_M = {
    "Diffusion_RF": (2040, 2040),
    "Perovskite_RF": (3836, 3834),
    "Diffusion_LR": (2040, 2040),
    "Perovskite_LR": (3836, 3836),
    "Diffusion_GPR_Bayesian": (2040, 2040),
    "Perovskite_GPR_Bayesian": (3836, 3818),
    "QM9_E": (13885, 13885),
    "logP_10k_a_LS-GCN": (5000, 5000),
    "logP_150k_LS-GCN": (5000, 5000),
}
# SOURCE.md text: rows removed by the uE > 1e-6 sd(E) filter
REMOVED = {"Perovskite_RF": 2, "Perovskite_GPR_Bayesian": 18}

# ppernot/2024_SimRef Tabs/tabZMS.tex and Tabs/tabRCE.tex ("stat" column), set #1..#9.
# Printed as signif(x, 3).
GOLDEN_ZMS = ["0.960", "0.885", "1.120", "1.230", "0.846", "0.984", "0.972", "0.926", "0.971"]
GOLDEN_RCE = [
    "0.0186", "-0.0387", "-0.00748", "0.0545", "0.0986", "0.0924", "-0.264", "0.0459", "-0.0131",
]
# ppernot/2024_SimRef Tabs/tabData.tex: mean and sd of E, rounded to the last printed digit
# (the papers' value(uncertainty) notation). The sign of the logP means checks E = logP - y_pred.
GOLDEN_MEAN_SD = [
    ("0.0033", "0.3678"),
    ("0.0034", "0.377"),
    ("0.008", "0.4810"),
    ("0.001", "0.637"),
    ("0.0019", "0.2713"),
    ("0.0044", "0.310"),
    ("0.00131", "0.0341"),
    ("0.0116", "0.2786"),
    ("-0.0424", "0.1533"),
]


def _bits(a: np.ndarray) -> bytes:
    """Bit pattern of a float64 array (distinguishes -0.0 from 0.0, unlike ==)."""
    return np.ascontiguousarray(a, dtype=np.float64).tobytes()


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _col(header: list[str], rows: list[list[str]], name: str) -> np.ndarray:
    j = header.index(name)
    return np.array([float(r[j]) for r in rows])


def _round_sig(v: float, sig: int) -> float:
    return round(v, sig - 1 - math.floor(math.log10(abs(v))))


def _decimals(s: str) -> int:
    return len(s.split(".")[1])


# --------------------------------------------------------------------------- packaged sets


def test_names_order_and_copy():
    assert names() == NAMES
    lst = names()
    lst.append("foo")
    assert names() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_load_each_set(name):
    ds = load(name)
    n_rows, m = ROWS_AND_M[name]
    assert isinstance(ds, Dataset)
    assert ds.name == name
    assert ds.M == m == ds.E.size == ds.u.size == ds.x.size
    assert n_rows - ds.M == REMOVED.get(name, 0)
    for a in (ds.E, ds.u, ds.x):
        assert a.dtype == np.float64 and a.ndim == 1
        assert np.isfinite(a).all()
    assert (ds.u > 0).all()
    assert "f73a3b0cba9af9f7f14e85a3eb162376428a5757" in ds.source
    assert repr(ds) == f"Dataset(name={name!r}, M={m})"
    np.testing.assert_array_equal(ds.Z, ds.E / ds.u)


@pytest.mark.parametrize("i,name", list(enumerate(NAMES)))
def test_golden_values_from_papers(i, name):
    ds = load(name)
    E, u = np.asarray(ds.E), np.asarray(ds.u)
    zms = np.mean((E / u) ** 2)
    assert np.isfinite(zms) and zms > 0
    assert _round_sig(zms, 3) == pytest.approx(float(GOLDEN_ZMS[i]), abs=1e-12)
    rmv, rmse = np.sqrt(np.mean(u**2)), np.sqrt(np.mean(E**2))
    assert _round_sig((rmv - rmse) / rmv, 3) == pytest.approx(float(GOLDEN_RCE[i]), abs=1e-12)
    mean_s, sd_s = GOLDEN_MEAN_SD[i]
    assert abs(E.mean() - float(mean_s)) <= 0.5 * 10.0 ** -_decimals(mean_s) + 1e-12
    assert abs(E.std(ddof=1) - float(sd_s)) <= 0.5 * 10.0 ** -_decimals(sd_s) + 1e-12


def test_load_case_insensitive_and_cached():
    a, b = load("qm9_e"), load("QM9_E")
    assert a.name == "QM9_E" and a.M == 13885
    assert _bits(a.E) == _bits(b.E)


def test_load_unknown_name():
    with pytest.raises(ValueError, match=r"`name` must be one of Diffusion_RF, .*logP_150k_LS-GCN"):
        load("QM9")
    with pytest.raises(ValueError, match=r"`name` must be a string"):
        load(7)


def test_packaged_arrays_are_read_only():
    ds = load("Diffusion_RF")
    with pytest.raises(ValueError, match="read-only"):
        ds.E[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.E = np.zeros(3)


def test_qm9_ties():
    ds = load("QM9_E")
    assert np.unique(ds.u).size == 135


def test_perovskite_gpr_excerpt_bit_exact():
    """PAL2022: E = E, u = uE, x = X; rows 13, 15, 280, 283 of the excerpt are filtered."""
    header, rows = _read_csv(DATA / "Perovskite_GPR_Bayesian_Test_cal_head300.csv")
    assert header == ["E", "X", "uE"] and len(rows) == 300
    E, X, uE = (_col(header, rows, c) for c in ("E", "X", "uE"))
    keep = uE > 1e-6 * np.std(E, ddof=1)
    # the filtered uE are <= 6e-9, all kept ones >= 1e-3: the sd of the excerpt gives the same cut
    assert np.flatnonzero(~keep).tolist() == [13, 15, 280, 283]
    n = int(keep.sum())
    ds = load("Perovskite_GPR_Bayesian")
    assert _bits(ds.E[:n]) == _bits(E[keep])
    assert _bits(ds.u[:n]) == _bits(uE[keep])
    assert _bits(ds.x[:n]) == _bits(X[keep])


def test_qm9_excerpt_bit_exact():
    """BUS2022: E = E_ - prediction, u = sqrt(uncertainty_total), x = prediction."""
    header, rows = _read_csv(DATA / "qm9_qm9_E_calibrated_isotonic_test_head200.csv")
    assert len(rows) == 200
    ref, pred, var = (_col(header, rows, c) for c in ("E_", "prediction", "uncertainty_total"))
    ds = load("QM9_E")
    assert _bits(ds.E[:200]) == _bits(ref - pred)
    assert _bits(ds.u[:200]) == _bits(np.sqrt(var))
    assert _bits(ds.x[:200]) == _bits(pred)


def test_logp_excerpt_bit_exact_and_sign():
    """RAS2023: E = logP - y_pred (= -error), u = uq, x = y_pred."""
    header, rows = _read_csv(DATA / "logP_150k_LS-GCN_test_head200.csv")
    assert header == ["", "smiles", "logP", "uq", "y_pred", "error"] and len(rows) == 200
    logp, uq, y_pred, error = (_col(header, rows, c) for c in ("logP", "uq", "y_pred", "error"))
    ds = load("logP_150k_LS-GCN")
    assert _bits(ds.E[:200]) == _bits(logp - y_pred)
    assert _bits(ds.u[:200]) == _bits(uq)
    assert _bits(ds.x[:200]) == _bits(y_pred)
    # the file's own error column has the opposite sign (equal up to rounding of the file)
    np.testing.assert_allclose(ds.E[:200], -error, rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- from_file


def test_from_file_excerpts_match_packaged():
    qm9 = from_file(
        DATA / "qm9_qm9_E_calibrated_isotonic_test_head200.csv",
        ref="E_", pred="prediction", u="uncertainty_total", u_is_variance=True, x="prediction",
    )
    full = load("QM9_E")
    assert qm9.name == "qm9_qm9_E_calibrated_isotonic_test_head200" and qm9.M == 200
    assert _bits(qm9.E) == _bits(full.E[:200])
    assert _bits(qm9.u) == _bits(full.u[:200])
    assert _bits(qm9.x) == _bits(full.x[:200])

    logp = from_file(DATA / "logP_150k_LS-GCN_test_head200.csv", ref="logP", pred="y_pred", u="uq")
    assert _bits(logp.E) == _bits(load("logP_150k_LS-GCN").E[:200])
    assert logp.x is None

    # defaults: "E", "uE", "X" (case-insensitive) are found without arguments
    pal = from_file(DATA / "Perovskite_GPR_Bayesian_Test_cal_head300.csv", name="pal")
    header, rows = _read_csv(DATA / "Perovskite_GPR_Bayesian_Test_cal_head300.csv")
    assert pal.name == "pal" and pal.M == 300
    assert _bits(pal.E) == _bits(_col(header, rows, "E"))
    assert _bits(pal.x) == _bits(_col(header, rows, "X"))


def test_from_file_csv_round_trip(tmp_path):
    ds = load("QM9_E")
    path = tmp_path / "qm9.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["E", "u", "x"])
        w.writerows(zip(*(map(repr, a.tolist()) for a in (ds.E, ds.u, ds.x))))
    back = from_file(path)
    assert back.name == "qm9" and back.source == str(path)
    for a, b in ((back.E, ds.E), (back.u, ds.u), (back.x, ds.x)):
        assert _bits(a) == _bits(b)


def test_from_file_savetxt_round_trip_other_delimiters(tmp_path):
    rng = np.random.default_rng(0)
    E, u = rng.normal(size=50), rng.uniform(0.1, 2.0, size=50)
    E[3] = -0.0
    for fname, delim in (("a.csv", ";"), ("b.tsv", "\t"), ("c.txt", ",")):
        path = tmp_path / fname
        np.savetxt(path, np.column_stack([E, u]), fmt="%.17g", delimiter=delim,
                   header=delim.join(["Error", "Uncertainty"]), comments="")
        back = from_file(path)  # delimiter guessed, names matched case-insensitively
        assert _bits(back.E) == _bits(E) and _bits(back.u) == _bits(u)
        assert back.x is None


def test_from_file_npz_round_trip(tmp_path):
    ds = load("Perovskite_RF")
    path = tmp_path / "set.npz"
    np.savez(path, E=ds.E, u=ds.u, x=ds.x, source=np.array(ds.source))
    back = from_file(path, name="again")
    assert back.name == "again" and back.source == ds.source
    for a, b in ((back.E, ds.E), (back.u, ds.u), (back.x, ds.x)):
        assert _bits(a) == _bits(b)
    # other key names, variance, no source
    np.savez(tmp_path / "v.npz", err=ds.E, var=ds.u**2)
    back = from_file(tmp_path / "v.npz", E="err", u="var", u_is_variance=True)
    assert _bits(back.E) == _bits(ds.E)
    assert _bits(back.u) == _bits(np.sqrt(ds.u**2))
    assert back.source == str(tmp_path / "v.npz")


def test_dataset_constructor_copies_and_validates():
    E = np.array([0.1, -0.2, 0.3])
    ds = Dataset("toy", E, [0.1, 0.2, 0.3])
    E[0] = 5.0
    assert ds.E[0] == 0.1 and E.flags.writeable  # the caller's array is neither shared nor frozen
    assert ds.x is None and ds.source == ""
    msg = r"`u` must be > 0 \(1 non-positive values, first at index 1\)"
    with pytest.raises(ValueError, match=msg):
        Dataset("bad", [1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match=r"`x` must have the same length as `E`, got 1 and 2"):
        Dataset("bad", [1.0, 2.0], [1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match=r"`E` and `u` must have the same length"):
        Dataset("bad", [1.0, 2.0], [1.0, 1.0, 1.0])


# ------------------------------------------------------------------------ from_file errors


def _write(tmp_path: Path, text: str, name: str = "d.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_error_missing_column_lists_available(tmp_path):
    p = _write(tmp_path, "a,b\n1,2\n3,4\n")
    with pytest.raises(ValueError, match=r"missing column for `E`.*available columns: 'a', 'b'"):
        from_file(p)
    p = _write(tmp_path, "E,b\n1,2\n3,4\n")
    with pytest.raises(ValueError, match=r"missing column for `u`.*available columns: 'E', 'b'"):
        from_file(p)
    msg = r"`u` names column 'sigma', which is missing; available columns: 'E', 'b'"
    with pytest.raises(ValueError, match=msg):
        from_file(p, u="sigma")
    with pytest.raises(ValueError, match=r"`x` names column 'feat', which is missing"):
        from_file(p, u="b", x="feat")
    np.savez(tmp_path / "k.npz", E=np.ones(3))
    with pytest.raises(ValueError, match=r"missing key for `u`.*available keys: 'E'"):
        from_file(tmp_path / "k.npz")


def test_error_ambiguous_default(tmp_path):
    p = _write(tmp_path, "E,error,u\n1,2,1\n3,4,1\n")
    msg = r"several columns could hold `E` \('E', 'error'\); pass `E=`"
    with pytest.raises(ValueError, match=msg):
        from_file(p)
    assert from_file(p, E="error").E.tolist() == [2.0, 4.0]


def test_error_non_numeric(tmp_path):
    p = _write(tmp_path, "E,u\n1,2\n3,abc\n")
    msg = r"column 'u' \(`u`\) holds a non-numeric value 'abc' at data row 1"
    with pytest.raises(ValueError, match=msg):
        from_file(p)
    np.savez(tmp_path / "s.npz", E=np.array(["a", "b"]), u=np.ones(2))
    with pytest.raises(ValueError, match=r"key 'E' \(`E`\) must hold numbers"):
        from_file(tmp_path / "s.npz")


def test_error_nan_inf(tmp_path):
    p = _write(tmp_path, "E,u\n1,1\nNA,1\n2,1\nnan,1\n")
    msg = (
        r"column 'E' \(`E`\): `E` must contain only finite values "
        r"\(2 NaN and 0 infinite values, first at index 1\)"
    )
    with pytest.raises(ValueError, match=msg):
        from_file(p)
    p = _write(tmp_path, "E,u,x\n1,1,1\n2,1,inf\n")
    msg = r"column 'x' \(`x`\).*\(0 NaN and 1 infinite values, first at index 1\)"
    with pytest.raises(ValueError, match=msg):
        from_file(p, x="x")  # asked for: an error
    with pytest.warns(UserWarning, match="loaded without x"):  # not asked for: E and u still load
        assert from_file(p).x is None
    p = _write(tmp_path, "E,u\n1,\n2,1\n")
    with pytest.raises(ValueError, match=r"`u` must contain only finite values \(1 NaN"):
        from_file(p)


def test_error_non_positive_u(tmp_path):
    p = _write(tmp_path, "E,u\n1,1\n2,0\n3,-1\n")
    msg = r"`u` must be > 0 \(2 non-positive values, first at index 1\) \[`u` is column 'u'\]"
    with pytest.raises(ValueError, match=msg):
        from_file(p)
    with pytest.raises(ValueError, match=r"`u` must be > 0 .*\[`u` is column 'u' \(variance\)\]"):
        from_file(p, u_is_variance=True)


def test_error_file_not_found_and_extension(tmp_path):
    with pytest.raises(ValueError, match=r"`path`: file not found"):
        from_file(tmp_path / "nope.csv")
    p = _write(tmp_path, "E,u\n1,1\n", name="d.xlsx")
    with pytest.raises(ValueError, match=r"unsupported extension"):
        from_file(p)
    p = _write(tmp_path, "not a zip", name="d.npz")
    with pytest.raises(ValueError, match=r"cannot read as a .npz file"):
        from_file(p)


def test_error_bad_layout(tmp_path):
    with pytest.raises(ValueError, match=r"the file is empty"):
        from_file(_write(tmp_path, "\n\n"))
    with pytest.raises(ValueError, match=r"`E` must not be empty"):
        from_file(_write(tmp_path, "E,u\n"))
    with pytest.raises(ValueError, match=r"line 3: 3 fields but the header has 2"):
        from_file(_write(tmp_path, "E,u\n1,1\n2,1,5\n"))
    assert from_file(_write(tmp_path, "E,u\n1,1\n")).M == 1  # a one-row file loads; each function asks what it needs
    with pytest.raises(ValueError, match=r"at least 2 points, got 1"):
        mcref.statistic("ZMS", [1.0], [1.0])
    np.savez(tmp_path / "m.npz", E=np.ones((2, 2)), u=np.ones(2))
    with pytest.raises(ValueError, match=r"`E` must be one-dimensional"):
        from_file(tmp_path / "m.npz")


def test_error_argument_conflicts(tmp_path):
    p = _write(tmp_path, "y,yhat,s\n1,0,1\n2,1,1\n")
    with pytest.raises(ValueError, match=r"give either `E` or both `ref` and `pred`"):
        from_file(p, E="y", ref="y", pred="yhat", u="s")
    with pytest.raises(ValueError, match=r"`ref` and `pred` must be given together"):
        from_file(p, ref="y", u="s")
    with pytest.raises(ValueError, match=r"`u` must be a string \(a column name\) or None"):
        from_file(p, ref="y", pred="yhat", u=2)
    with pytest.raises(ValueError, match=r"`delimiter` must be a single character"):
        from_file(p, ref="y", pred="yhat", u="s", delimiter=", ")
    with pytest.raises(ValueError, match=r"`u_is_variance` must be True or False"):
        from_file(p, ref="y", pred="yhat", u="s", u_is_variance="yes")
    ds = from_file(p, ref="y", pred="yhat", u="s")
    assert ds.E.tolist() == [1.0, 1.0]


def test_read_columns_rows_match_from_file(tmp_path):
    """read_columns gives every column, unconverted, row for row with from_file (comments and
    blank lines skipped alike); an npz file's 1-D arrays only."""
    f = tmp_path / "d.csv"
    f.write_text("# comment\nid; E ;u\n\na; 0.5;1.0\n# another\nb;-0.25 ;5e-1\n")
    cols = mcref.datasets.read_columns(f)
    ds = from_file(f)
    assert list(cols) == ["id", "E", "u"]
    assert cols["id"].tolist() == ["a", "b"] and cols["u"].tolist() == ["1.0", "5e-1"]
    np.testing.assert_array_equal([float(v) for v in cols["E"]], ds.E)
    g = tmp_path / "d.npz"
    np.savez(g, E=ds.E, u=ds.u, k=np.array([3, 4]), grid=np.zeros((2, 2)), source=np.array("somewhere"))
    cols = mcref.datasets.read_columns(g)
    assert list(cols) == ["E", "u", "k"] and cols["k"].dtype.kind == "i"
    with pytest.raises(ValueError, match="`path`: file not found"):
        mcref.datasets.read_columns(tmp_path / "none.csv")
    with pytest.raises(ValueError, match="`delimiter` must be a single character"):
        mcref.datasets.read_columns(f, delimiter=";;")
