"""Adaptivity rows of validate (bins of features x), constant u, and the permutation test's
null for them (docs/methods.md, "Adaptivity")."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

import mcref
from mcref import synthetic
from mcref.features import as_features, feature_bins
from mcref.kernels.stats import ENCE
from mcref.reference import simulate_prepared
from mcref.generative import get_distribution
from mcref.stats import info, prepare_for

# small B and N_MC keep the suite fast; the verdicts' stability is not what these tests check
pytestmark = pytest.mark.filterwarnings("ignore::mcref.FewReplicatesWarning")


def _numpy_binned(name, E, u, lab):
    """ENCE, ZMSE, UCE over the bins ``lab`` by their definitions (plain NumPy)."""
    nb = lab.max() + 1
    out = []
    for b in range(nb):
        m = lab == b
        mv, mse, zms = np.mean(u[m] ** 2), np.mean(E[m] ** 2), np.mean((E[m] / u[m]) ** 2)
        out.append((m.sum(), mv, mse, zms))
    n, mv, mse, zms = map(np.array, zip(*out))
    if name == "ENCE":
        return np.mean(np.abs(np.sqrt(mv) - np.sqrt(mse)) / np.sqrt(mv))
    if name == "ZMSE":
        return np.mean(np.abs(np.log(zms)))
    return np.sum(n / n.sum() * np.abs(mv - mse))


def _equal_count_labels(x, nb):
    o = np.argsort(x, kind="stable")
    lab = np.empty(x.size, dtype=np.int64)
    lab[o] = np.repeat(np.arange(nb), np.diff(mcref.binning.bin_starts(x.size, nb)))
    return lab


def test_feature_rows_estimates_match_numpy():
    rng = np.random.default_rng(5)
    M = 1500
    x = rng.normal(size=M)
    u = rng.uniform(0.5, 2, M)
    E = u * rng.normal(size=M) * (1 + 0.3 * (x > 0))
    tab = mcref.validate(E, u, x={"a": x}, stats=["ZMS", "ENCE", "ZMSE", "UCE"], n_boot=500, n_mc=500,
                         n_bins=10, seed=1)
    lab = _equal_count_labels(x, 10)
    for nm in ("ENCE", "ZMSE", "UCE"):
        np.testing.assert_allclose(tab[f"{nm}|a"].estimate, _numpy_binned(nm, E, u, lab), rtol=1e-12)
        assert tab[f"{nm}|a"].test == "permutation"


def test_simulated_feature_rows_match_numpy_on_each_repeat():
    """The kernel's ENCE|x under the permutation D has the law of NumPy's ENCE over bins of x
    on shuffled Z (means within 4 combined standard errors)."""
    rng = np.random.default_rng(2)
    M = 400
    u = np.sort(rng.uniform(0.5, 2, M))
    x = rng.normal(size=M)
    E = u * rng.normal(size=M)
    infos = [info("ENCE"), info("ZMSE"), info("UCE")]
    prep = prepare_for(infos, E, u, n_bins=5)
    lab = _equal_count_labels(x, 8)
    xinfos = [mcref.stats.STATISTICS[n] for n in ("ENCE", "ZMSE", "UCE")]
    from dataclasses import replace

    xinfos = [replace(i, name=i.name + "|x") for i in xinfos]
    perm = get_distribution("permutation", Z=prep.z)
    sim = simulate_prepared(infos + xinfos, prep, [perm], n_mc=50, seed=3, features=[lab[prep.order]],
                            grp=[-1, -1, -1, 0, 0, 0])
    rs = np.random.default_rng(0)
    zs = prep.z
    ref = [_numpy_binned("ENCE", prep.u * zp, prep.u, lab[prep.order]) for zp in (rs.permutation(zs) for _ in range(400))]
    got = sim.samples[0, 3]
    se = np.sqrt(np.var(ref) / 400 + np.var(got) / 50)
    assert abs(np.mean(got) - np.mean(ref)) < 4 * se


def test_x_rows_do_not_change_the_u_rows():
    ds = synthetic.case("A", M=1000, seed=2)
    a = mcref.validate(ds.E, ds.u, n_boot=500, n_mc=500, seed=4)
    b = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=500, n_mc=500, seed=4)
    for r in a.rows:
        assert b[r.name].estimate == r.estimate and b[r.name].p_test == r.p_test and b[r.name].low == r.low


def test_permutation_null_of_x_rows_is_uniform():
    """Calibrated sets with a feature that determines u: the x rows' p-values are uniform (KS)."""
    ps = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        M = 300
        x = rng.uniform(-2, 2, M)
        u = 0.2 + x**2
        E = u * rng.standard_t(4, M) / np.sqrt(2)
        prep = prepare_for([info("ENCE")], E, u, n_bins=5)
        xi = __import__("dataclasses").replace(info("ENCE"), name="ENCE|x")
        lab = _equal_count_labels(x, 5)
        perm = get_distribution("permutation", Z=prep.z)
        c2 = float(np.mean(prep.z2))
        sim = simulate_prepared([xi], prep, [perm], n_mc=199, seed=seed, features=[lab[prep.order]], grp=[0],
                                perm_scale=c2)
        from mcref.verdict._validate import _binned_value

        obs = _binned_value(ENCE, lab[prep.order], prep.u, prep.u * prep.z, c2)
        ps.append(sim.p_value("ENCE|x", "permutation", obs, alternative="greater")[0])
    # discrete p on the grid k/200: compare with the uniform by KS at a generous level
    assert sps.kstest(ps, "uniform").pvalue > 0.01


def test_constant_u_end_to_end():
    ds = synthetic.case("F", M=2000, seed=1)
    tab = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=500, n_mc=500, seed=3)
    for nm in ("CC", "ENCE", "ZMSE"):
        assert tab[nm].verdict == "not testable" and "all u are equal" in tab[nm].reason
    assert tab["ZMS"].verdict in ("valid", "invalid") and tab["ENCE|x"].verdict in ("valid", "invalid")
    assert tab.joint is not None and "RCE" not in tab.joint.stats and "ENCE|x" in tab.joint.stats
    # without x too: ZMS and RCE stand
    t2 = mcref.validate(ds.E, ds.u, n_boot=500, n_mc=500, seed=3)
    assert t2["CC"].verdict == "not testable" and t2.joint.stats == ("ZMS",)
    with pytest.raises(ValueError, match="ENCE cannot be tested: all u are equal"):
        mcref.validate(ds.E, ds.u, stats=["ENCE"], n_boot=500, n_mc=500, seed=3)


def test_categorical_feature():
    rng = np.random.default_rng(1)
    M = 900
    g = rng.choice(np.array(["a", "b", "c", "rare"]), size=M, p=[0.4, 0.3, 0.28, 0.02])
    u = rng.uniform(0.5, 2, M)
    E = u * rng.normal(size=M) * np.where(g == "a", 1.6, 1.0)
    tab = mcref.validate(E, u, x={"group": g}, stats=["ZMS", "ZMSE"], n_boot=500, n_mc=500, seed=1)
    assert tab["ZMSE|group"].verdict == "invalid"
    f = as_features({"group": g}, M)[0]
    b = feature_bins(f, 20, min_count=30)
    assert f.categorical and b.n_bins == 3  # "rare" (about 18 points) merged into a neighbour
    codes = f.values
    lab = b.labels()
    for lv in np.unique(codes):  # a level never splits across bins
        assert np.unique(lab[codes == lv]).size == 1


def test_bad_x():
    with pytest.raises(ValueError, match="has 99 values"):
        as_features(np.arange(99.0), 100)
    x = np.arange(100.0)
    x[3] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        as_features(x, 100)
    with pytest.raises(ValueError, match="'c' of `x` is constant"):
        as_features({"c": np.zeros(100)}, 100)
    with pytest.raises(ValueError, match="no binned statistic"):
        mcref.validate(np.linspace(-1, 1, 100), np.linspace(1, 2, 100), x=np.arange(100.0), stats=["ZMS"],
                       n_boot=500, n_mc=500, seed=1)


def test_primer_case_c_fails_on_u_rows_and_x_rows():
    """The trap of the issue: case C's scale error concentrated in some bins; tested against the
    set's own scale the u rows and x rows see it (they did not before)."""
    ds = synthetic.case("C", M=5000, seed=3)
    tab = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=500, n_mc=500, seed=3)
    for nm in ("ENCE", "ZMSE", "ENCE|x", "ZMSE|x"):
        assert tab[nm].verdict == "invalid", nm


def test_determinism_across_threads():
    import numba

    ds = synthetic.case("B", M=2000, seed=3)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=500, n_mc=600, seed=9)
        numba.set_num_threads(max(1, min(2, numba.config.NUMBA_NUM_THREADS)))
        b = mcref.validate(ds.E, ds.u, x=ds.x, n_boot=500, n_mc=600, seed=9)
    finally:
        numba.set_num_threads(old)
    assert a.to_json() == b.to_json()


def test_cli_x_columns(tmp_path, capsys):
    import json

    from mcref.cli import main

    rng = np.random.default_rng(4)
    M = 1200
    a = rng.normal(size=M)
    grp = rng.choice(["p", "q", "r"], size=M)
    u = np.full(M, 0.8)  # constant u: CC and the u bins are not testable, the x rows decide
    E = u * rng.normal(size=M) * np.where(a > 0.5, 1.8, 1.0)
    path = tmp_path / "preds.csv"
    with open(path, "w") as f:
        f.write("E,u,a,grp\n")
        for row in zip(E, u, a, grp):
            f.write(",".join(map(str, row)) + "\n")
    assert main(["validate", str(path), "--x-column", "a,grp", "--boot", "500", "--mc", "500", "--seed", "1",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["stat"]: r for r in out["rows"]}
    assert rows["ENCE|a"]["verdict"] == "invalid" and rows["CC"]["verdict"] == "not testable"
    assert "ZMSE|grp" in rows and out["joint"]["verdict"] == "invalid"
    assert out["joint"]["driver_part"] == "adaptivity"
    assert main(["validate", str(path), "--x-column", "nope", "--boot", "500", "--mc", "500"]) != 0
    assert "no column 'nope'" in capsys.readouterr().err


def test_plot_lzms_permutation_band():
    """The band is the shuffles' 2.5–97.5 % of ZMS per bin: it brackets the set's own ZMS in
    every bin (a calibrated-by-construction null around that level)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    from mcref.plots import plot_lzms

    ds = synthetic.case("C", M=2000, seed=1)
    ax = plot_lzms(ds.E, ds.u, ds.x, band=100, log=False)
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 1
    y = polys[0].get_paths()[0].vertices[:, 1]
    zms = np.mean((ds.E / ds.u) ** 2)
    assert y.min() < zms < y.max()
    plt.close("all")


def test_benchmark_with_adaptivity_equals_validate(tmp_path):
    """A benchmark cell with adaptivity is validate(E, u, x=...) with the cell's seed; x enters
    the content hash; a dataset without x is refused."""
    from mcref.workflows._benchmark import content_hash

    ds = synthetic.case("B", M=1000, seed=2)
    res = mcref.benchmark([ds], adaptivity=True, n_boot=200, n_mc=200, n_jobs=1, seed=5, progress=False)
    t = res.table
    assert {"ENCE|x", "ZMSE|x"} <= set(t["stat"])
    seed = int(t["seed"].iloc[0])
    tab = mcref.validate(ds.E, ds.u, x={"x": ds.x}, n_boot=200, n_mc=200, seed=seed, name=ds.name)
    got = t.set_index("stat")
    for r in tab.rows:
        assert got.loc[r.name, "verdict"] == r.verdict
        assert got.loc[r.name, "p_test"] == pytest.approx(r.p_test if r.p_test is not None else np.nan, nan_ok=True)
    assert t["sha256"].iloc[0] == content_hash(ds.E, ds.u, ds.x) != content_hash(ds.E, ds.u)
    # constant u (case F) in a benchmark: its u rows are not testable, its x rows decide
    f = synthetic.case("F", M=1000, seed=2)
    tf = mcref.benchmark([f], adaptivity=True, n_boot=200, n_mc=200, n_jobs=1, seed=5, progress=False).table
    v = dict(zip(tf["stat"], tf["verdict"]))
    assert v["CC"] == v["ENCE"] == "not testable" and v["ENCE|x"] in ("valid", "invalid")
    with pytest.raises(ValueError, match="needs a feature x"):
        mcref.benchmark([mcref.datasets.Dataset("nox", ds.E, ds.u)], adaptivity=True, n_boot=200, n_mc=200,
                        n_jobs=1, progress=False)


def _row_numbers(row):
    """Every number of a row that a D column carries (references, their se and interval, p, se of p)."""
    out = {"estimate": row.estimate, "verdict": row.verdict, "p_test": row.p_test}
    for d, r in row.sim.items():
        out[f"ref_{d}"] = (r.mean, r.se, r.low, r.high)
    for d in row.p_sim:
        out[f"p_{d}"] = (row.p_sim[d], row.p_se[d])
    return out


# the rows' bits are the test, not their interval kind (B = 200: all of ENCE's replicates may fall above it)
@pytest.mark.filterwarnings("ignore::mcref.DegenerateBootstrapWarning")
def test_each_feature_row_gets_its_own_reference_and_p():
    """Issue 31's table: from the second feature on, a row carried the previous feature's bins
    in the simulation (references and p of every D shifted by one feature). Every feature row
    of a three-feature run must equal, bit for bit, the same feature validated alone."""
    rng = np.random.default_rng(1)
    m = 3000
    u = np.sqrt(1 / rng.gamma(4, 1 / 4, m))
    E = u * rng.normal(size=m)
    x = {"feat": rng.uniform(size=m), "grp": rng.integers(0, 4, m), "noise": rng.normal(size=m)}
    opts = dict(stats=["ZMS", "ENCE", "ZMSE", "UCE"], n_boot=200, n_mc=200, seed=2)
    together = mcref.validate(E, u, x=x, **opts)
    for f in x:
        alone = mcref.validate(E, u, x={f: x[f]}, **opts)
        for s in ("ENCE", "ZMSE", "UCE"):
            assert _row_numbers(together[f"{s}|{f}"]) == _row_numbers(alone[f"{s}|{f}"]), f"{s}|{f}"
    # and the references differ between features (a shift would make two features' rows equal)
    refs = {f: together[f"ENCE|{f}"].sim["permutation"].mean for f in x}
    assert len(set(refs.values())) == 3


def _feature_numbers(tab, feat):
    return {s: _row_numbers(tab[f"{s}|{feat}"]) for s in ("ENCE", "ZMSE")}


def test_nominal_feature_does_not_depend_on_the_spelling_of_its_levels():
    """Issue 31: small levels were merged with their neighbour in level order, which changes when
    integer codes become strings ("1", "10", "11", "2", "20"); the same feature gave ENCE 0.083
    (valid) and 0.183 (invalid). The pooled rule reads counts only: integers, strings and a
    pandas category give the same rows bit for bit, and the notes name the pooled levels."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    m = 1200
    codes = np.array([1, 2, 10, 11, 20, 3])
    g = rng.choice(codes, size=m, p=[0.3, 0.3, 0.25, 0.1, 0.02, 0.03])
    u = rng.uniform(0.5, 2, m)
    E = u * rng.normal(size=m)
    opts = dict(stats=["ENCE", "ZMSE"], n_boot=200, n_mc=300, seed=4)
    spellings = {"int": g, "str": g.astype(str), "padded": np.char.zfill(g.astype(str), 3),
                 "category": pd.Series(g.astype(str), dtype="category")}
    tabs = {k: mcref.validate(E, u, x={"g": v}, **opts) for k, v in spellings.items()}
    ref = _feature_numbers(tabs["int"], "g")
    for k, t in tabs.items():
        assert _feature_numbers(t, "g") == ref, k
    note = next(n for n in tabs["str"].notes if n.startswith("feature g"))
    assert "pooled" in note and "'20'" in note and "'3'" in note  # the two small levels (~24 and ~36 points)
    b = feature_bins(as_features({"g": g}, m)[0], 20, min_count=30)
    lab = b.labels()
    assert b.n_bins == 5 and np.unique(lab[np.isin(g, [20, 3])]).size == 1


def test_tied_numeric_feature_does_not_depend_on_row_order():
    """Issue 31: with tied values of a numeric x, which tied rows fell in which bin followed the
    row order (ENCE|x 0.075–0.097, p 0.09–0.57 over six shuffles of one set). No run of tied
    x is cut now: shuffling the rows gives the same feature rows, bit for bit (u has no ties)."""
    rng = np.random.default_rng(9)
    m = 1000
    x = np.round(rng.uniform(0, 3, m), 1)  # 31 distinct values: numeric, long runs of ties
    u = rng.uniform(0.5, 2, m)
    E = u * rng.normal(size=m) * (1 + 0.2 * x)
    opts = dict(stats=["ENCE", "ZMSE"], n_boot=200, n_mc=300, seed=6)
    base = mcref.validate(E, u, x={"x": x}, **opts)
    assert "cuts moved to the ends of runs of tied values" in " ".join(base.notes)
    for k in range(3):
        p = np.random.default_rng(k).permutation(m)
        assert _feature_numbers(mcref.validate(E[p], u[p], x={"x": x[p]}, **opts), "x") == \
            _feature_numbers(base, "x")
    b = feature_bins(as_features({"x": x}, m)[0], 20, min_count=30)
    lab = b.labels()
    for v in np.unique(x):  # a run of tied values never straddles a cut
        assert np.unique(lab[x == v]).size == 1
