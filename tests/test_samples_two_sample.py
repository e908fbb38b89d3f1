"""Two-sample statistics and the two-sample verdict (mcref.samples; docs/methods.md, "Two-sample
statistics and their permutation null"): oracles are plain NumPy, dcor 0.7, scipy's sqrtm,
closed forms, sbibm's, alibi-detect's and sbi's own rules transcribed, and the permutation null's
uniform p-values."""

from __future__ import annotations

import json

import numba
import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.distance import pdist, squareform
from scipy.stats import binomtest

from mcref.core._checks import check_seed
from mcref.samples import (c2st, energy_distance, frechet_distance, frechet_distance_inf, median_heuristic, mmd,
                           two_sample)
from mcref.samples._permutation import _batch_labels
from mcref.samples._two_sample import _fd_of_moments


def _sets(n=60, m=45, d=3, seed=0, shift=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = rng.normal(shift, 1.2, size=(m, d))
    X[5] = X[4]  # a tie
    return X, Y


def _kern(kernel, ell, D):
    return {"gaussian": np.exp(-D ** 2 / (2 * ell ** 2)), "laplace": np.exp(-D / ell),
            "imq": 1.0 / np.sqrt(1.0 + D ** 2 / ell ** 2)}[kernel]


def _naive_mmd(X, Y, kernel, ell, estimator):
    kxx = _kern(kernel, ell, squareform(pdist(X)))
    kyy = _kern(kernel, ell, squareform(pdist(Y)))
    kxy = _kern(kernel, ell, np.sqrt(((X[:, None] - Y[None]) ** 2).sum(-1)))
    n, m = len(X), len(Y)
    if estimator == "biased":
        return kxx.mean() + kyy.mean() - 2 * kxy.mean()
    return ((kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
            - 2 * kxy.mean())


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "imq"])
@pytest.mark.parametrize("estimator", ["unbiased", "biased"])
def test_mmd_matches_numpy(kernel, estimator):
    X, Y = _sets()
    got = mmd(X, Y, kernel=kernel, length_scale=0.8, estimator=estimator)
    assert got == pytest.approx(_naive_mmd(X, Y, kernel, 0.8, estimator), rel=1e-12, abs=1e-15)


def test_mmd_linear_matches_numpy():
    X, Y = _sets(n=41, m=50)
    h = 20  # floor(min(41, 50) / 2) pairs, the rest of the rows unused
    k = lambda a, b: np.exp(-((a - b) ** 2).sum(1) / (2 * 0.9 ** 2))  # noqa: E731
    x1, x2, y1, y2 = X[0:2 * h:2], X[1:2 * h:2], Y[0:2 * h:2], Y[1:2 * h:2]
    ref = np.mean(k(x1, x2) + k(y1, y2) - k(x1, y2) - k(x2, y1))
    assert mmd(X, Y, length_scale=0.9, estimator="linear") == pytest.approx(ref, rel=1e-12)


def test_mmd_default_length_is_the_pooled_median():
    X, Y = _sets()
    ell = float(np.median(pdist(np.concatenate([X, Y]))))
    assert median_heuristic(X, Y) == ell
    assert mmd(X, Y) == pytest.approx(_naive_mmd(X, Y, "gaussian", ell, "unbiased"), rel=1e-12)


def test_median_heuristic_subsample_rows_above_2000():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(1500, 2)), rng.normal(size=(1000, 2))
    Z = np.concatenate([X, Y])[np.round(np.linspace(0, 2499, 2000)).astype(int)]
    assert median_heuristic(X, Y) == float(np.median(pdist(Z)))


def test_sbibm_and_alibi_rules_as_their_code():
    X, Y = _sets(n=31)
    d = np.sort(pdist(X))
    assert median_heuristic(X, Y, "sbibm") == d[(d.size - 1) // 2]  # torch.median: the lower middle value
    n = X.shape[0]  # alibi-detect sigma_median on kernel(x_ref, x_ref), transcribed
    dist = squareform(pdist(X, "sqeuclidean"))
    n_median = n + (dist.size - n) // 2 - 1
    assert median_heuristic(X, Y, "alibi") == pytest.approx(np.sqrt(0.5 * np.sort(dist.ravel())[n_median]), rel=1e-15)


@pytest.mark.parametrize("estimator", ["V", "U"])
def test_energy_matches_dcor(estimator):
    dcor = pytest.importorskip("dcor")
    X, Y = _sets(n=80, m=57, d=4)
    ref = dcor.energy_distance(X, Y, estimation_stat=estimator)
    assert energy_distance(X, Y, estimator=estimator) == pytest.approx(ref, rel=1e-10)


def test_frechet_matches_sqrtm():
    X, Y = _sets(n=200, m=150, d=5)
    S1, S2 = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    ref = (((X.mean(0) - Y.mean(0)) ** 2).sum() + np.trace(S1) + np.trace(S2)
           - 2 * np.trace(scipy.linalg.sqrtm(S1 @ S2)).real)
    assert frechet_distance(X, Y) == pytest.approx(ref, rel=1e-10)


def test_frechet_diagonal_gaussians_closed_form():
    a, b = np.array([1.0, 4.0, 0.25]), np.array([2.0, 1.0, 9.0])
    mu1, mu2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    ref = ((mu1 - mu2) ** 2).sum() + ((np.sqrt(a) - np.sqrt(b)) ** 2).sum()
    assert float(_fd_of_moments(mu1, np.diag(a), mu2, np.diag(b))) == pytest.approx(ref, rel=1e-13)


def test_frechet_inf_removes_most_of_the_bias():
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(600, 8)), rng.normal(size=(600, 8))
    fd = frechet_distance(X, Y)
    inf = frechet_distance_inf(X, Y, seed=4)
    assert abs(inf) < 0.3 * fd  # FD of one law ~ d²/n·(…) > 0; its extrapolation near 0
    assert inf == frechet_distance_inf(X, Y, seed=4)


def test_c2st_is_sbis_rule():
    pytest.importorskip("sklearn")
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import KFold, cross_val_score
    X, Y = _sets(n=60, m=60, d=2, shift=2.5)
    state = int(check_seed(7).generate_state(1)[0] >> 1)
    mu, sd = X.mean(0), X.std(0, ddof=1)
    data = np.concatenate([(X - mu) / sd, (Y - mu) / sd])
    target = np.concatenate([np.zeros(60), np.ones(60)])
    ref = cross_val_score(RandomForestClassifier(random_state=state), data, target,
                          cv=KFold(n_splits=5, shuffle=True, random_state=state), scoring="accuracy").mean()
    assert c2st(X, Y, seed=7) == ref and ref > 0.6


# --------------------------------------------------------------------------- the verdict


def test_permuted_values_are_the_statistic_of_each_permuted_set():
    X, Y = _sets(n=30, m=25, d=2)
    tab = two_sample(X, Y, stats=["MMD", "energy", "FD"], n_perm=19, sequential=False, seed=3, n_boot=0,
                     length_scale=0.7)
    Z = np.concatenate([X, Y])
    labels = _batch_labels(check_seed(3).spawn(3)[0], 0, 1, 30, 25, 19)
    for b in (0, 7, 18):
        Xb, Yb = Z[labels[b]], Z[~labels[b]]
        assert tab["MMD"].permuted[b] == pytest.approx(mmd(Xb, Yb, length_scale=0.7), rel=1e-10, abs=1e-14)
        assert tab["energy"].permuted[b] == pytest.approx(energy_distance(Xb, Yb), rel=1e-10)
        assert tab["FD"].permuted[b] == pytest.approx(frechet_distance(Xb, Yb), rel=1e-9)
    assert tab["MMD"].estimate == pytest.approx(mmd(X, Y, length_scale=0.7), rel=1e-12)
    lin = two_sample(X, Y, stats=["MMD"], n_perm=19, sequential=False, seed=3, n_boot=0, length_scale=0.7,
                     estimator="linear")
    assert lin["MMD"].estimate == pytest.approx(mmd(X, Y, length_scale=0.7, estimator="linear"), rel=1e-12)
    for b in (0, 18):  # each set's rows in row order, paired
        Xb, Yb = Z[labels[b]], Z[~labels[b]]
        assert lin["MMD"].permuted[b] == pytest.approx(mmd(Xb, Yb, length_scale=0.7, estimator="linear"), rel=1e-12)
    T = tab["FD"].permuted
    assert tab["FD"].p == (1 + np.count_nonzero(T >= tab["FD"].estimate)) / 20
    assert tab["FD"].reference == pytest.approx(T.mean(), rel=1e-15)


def test_same_bits_one_and_two_threads():
    X, Y = _sets(n=150, m=140, d=3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = two_sample(X, Y, stats=["MMD", "energy", "FD"], n_perm=120, seed=5, n_boot=20)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        b = two_sample(X, Y, stats=["MMD", "energy", "FD"], n_perm=120, seed=5, n_boot=20)
    finally:
        numba.set_num_threads(before)
    for s in ("MMD", "energy", "FD"):
        assert np.array_equal(a[s].permuted, b[s].permuted)
        np.testing.assert_array_equal([a[s].estimate, a[s].p, a[s].low, a[s].high],
                                      [b[s].estimate, b[s].p, b[s].low, b[s].high])  # NaN (no interval) equal
    assert a.joint == b.joint


def test_a_scale_error_is_found_and_one_law_is_not():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(120, 2))
    wide = two_sample(X, rng.normal(0.0, 2.0, size=(120, 2)), stats=["MMD", "energy", "FD"], seed=1, n_boot=30)
    assert wide.joint.verdict == "different" and wide["FD"].p < 0.01
    assert wide["MMD"].low <= wide["MMD"].estimate <= wide["MMD"].high
    same = two_sample(X, rng.normal(size=(100, 2)), stats=["MMD", "energy", "FD"], seed=1, n_boot=0)
    assert same.joint.verdict in ("different", "indistinguishable")
    assert np.isnan(same["MMD"].low)


def _size_counts(n_pairs, seed):
    rng = np.random.default_rng(seed)
    rej = {"MMD": 0, "energy": 0, "FD": 0, "joint": 0}
    for i in range(n_pairs):
        X, Y = rng.standard_t(3, size=(30, 2)), rng.standard_t(3, size=(30, 2))
        tab = two_sample(X, Y, stats=["MMD", "energy", "FD"], n_perm=99, sequential=False, seed=i, n_boot=0)
        for s in ("MMD", "energy", "FD"):
            rej[s] += tab[s].p <= 0.05
        rej["joint"] += tab.joint.p <= 0.05
    return rej


def test_size_of_the_permutation_tests_quick():
    """60 pairs of one law (t(3), n = m = 30, B = 99): no test rejects far more or less often
    than 5 % (binomial test of the count)."""
    for s, r in _size_counts(60, 1).items():
        assert binomtest(int(r), 60, 0.05).pvalue > 0.01, (s, r)


@pytest.mark.slow
def test_size_of_the_permutation_tests():
    """200 pairs of one law, n = m = 30, B = 99: each p-value rejects at 5 % as often as it
    should (binomial test of the count), the joint verdict too (4.5 s unloaded, 30 s on a busy VM)."""
    for s, r in _size_counts(200, 0).items():
        assert binomtest(int(r), 200, 0.05).pvalue > 0.01, (s, r)


def test_table_renders():
    X, Y = _sets(n=40, m=40, d=2)
    tab = two_sample(X, Y, stats=["MMD", "FD"], n_perm=50, seed=2, n_boot=10)
    text = str(tab)
    assert "Joint verdict" in text and "MMD" in text and "reference (one law)" in text
    doc = json.loads(tab.to_json())
    assert doc["joint"]["verdict"] == tab.joint.verdict and [r["statistic"] for r in doc["rows"]] == ["MMD", "FD"]
    assert tab.to_csv().splitlines()[0].startswith("statistic,estimate,reference")
    assert list(tab.to_frame().index) == ["MMD", "FD"]
    with pytest.raises(KeyError, match="no statistic 'energy'"):
        tab["energy"]


def test_prdc_rows_use_the_knn_module():
    knn = pytest.importorskip("mcref.samples._knn")
    X, Y = _sets(n=60, m=60, d=2, shift=0.0)
    tab = two_sample(X, Y, stats=["precision", "coverage", "density"], n_perm=30, sequential=False, seed=1,
                     n_boot=10)
    ref = knn.prdc(X, Y, k=5)
    assert tab["precision"].estimate == pytest.approx(ref.precision) and tab["coverage"].estimate == ref.coverage
    assert tab["density"].alternative == "two-sided" and tab["coverage"].alternative == "less"
    assert np.isnan(tab["coverage"].low)  # no bootstrap interval for the k-NN fractions (repeated rows bias it)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("X,Y,match", [
    (np.zeros((10, 2)), np.zeros((10, 3)), "same number of columns"),
    (np.zeros((1, 2)), np.zeros((10, 2)), "at least 2 samples"),
    (np.full((10, 2), np.nan), np.zeros((10, 2)), "only finite values"),
    (np.zeros(10), np.zeros((10, 1)), "must be a 2-D array"),
])
def test_bad_sets(X, Y, match):
    for fn in (mmd, energy_distance, frechet_distance, two_sample):
        with pytest.raises(ValueError, match=match):
            fn(X, Y)


def test_bad_options():
    X, Y = _sets(n=20, m=20, d=2)
    with pytest.raises(ValueError, match="median heuristic .* is 0"):
        mmd(np.ones((10, 2)), np.ones((10, 2)))
    with pytest.raises(ValueError, match="median heuristic .* is 0"):
        two_sample(np.ones((10, 2)), np.ones((10, 2)), stats=["MMD"])
    with pytest.raises(ValueError, match="`k` must be smaller than both set sizes"):
        two_sample(X, Y, stats=["coverage"], k=20)
    with pytest.raises(ValueError, match="`stats` must name statistics among"):
        two_sample(X, Y, stats=["KS"])
    with pytest.raises(ValueError, match="`kernel` must be one of"):
        mmd(X, Y, kernel="cosine")
    with pytest.raises(ValueError, match="`estimator` must be one of"):
        mmd(X, Y, estimator="blocks")
    with pytest.raises(ValueError, match="`estimator` must be 'V' or 'U'"):
        energy_distance(X, Y, estimator="B")
    with pytest.raises(ValueError, match="`length_scale` must be a positive finite number"):
        mmd(X, Y, length_scale=-1.0)
    with pytest.raises(ValueError, match="`length_scale` must be one of"):
        mmd(X, Y, length_scale="scott")
    with pytest.raises(ValueError, match="`n_perm` must be an integer >= 19"):
        two_sample(X, Y, n_perm=5)
    with pytest.raises(ValueError, match="`alpha` must be in"):
        two_sample(X, Y, alpha=1.5)
    with pytest.raises(ValueError, match="`estimator` must be one of 'unbiased', 'biased', 'linear'"):
        two_sample(X, Y, estimator="blocks")
    with pytest.raises(ValueError, match="`folds` must be at most"):
        c2st(X, Y, folds=100)


# --------------------------------------------------------------------------- the command


def test_compare_command_equals_the_api(tmp_path, capsys):
    from mcref.cli import main
    X, Y = _sets(n=40, m=30, d=2)
    a, b = tmp_path / "a.csv", tmp_path / "b.npy"
    np.savetxt(a, np.column_stack([X, np.arange(40)]), delimiter=",", header="u,v,w", comments="", fmt="%.17g")
    np.save(b, Y)
    assert main(["compare", str(a), str(b), "--columns", "u,v", "--stat", "MMD,FD", "--perm", "40", "--boot", "10",
                 "--seed", "3", "--json", "--out", str(tmp_path / "t.csv")]) == 0
    doc = json.loads(capsys.readouterr().out)
    tab = two_sample(X, Y, stats=["MMD", "FD"], n_perm=40, n_boot=10, seed=3)
    assert [r["p"] for r in doc["rows"]] == [tab["MMD"].p, tab["FD"].p]
    assert doc["rows"][1]["estimate"] == tab["FD"].estimate and doc["joint"]["p"] == tab.joint.p
    assert (tmp_path / "t.csv").read_text().startswith("statistic,estimate")


def test_read_samples_errors(tmp_path):
    from mcref.samples import read_samples
    a = tmp_path / "a.csv"
    np.savetxt(a, np.zeros((3, 2)), delimiter=",", header="u,v", comments="")
    with pytest.raises(ValueError, match="names column 'z', which is missing"):
        read_samples(a, columns="u,z")
    with pytest.raises(ValueError, match="file not found"):
        read_samples(tmp_path / "none.npy")
    with pytest.raises(ValueError, match="`columns` is empty"):
        read_samples(a, columns=",")


def test_large_sets_default_to_the_linear_mmd_and_fd(monkeypatch):
    import mcref.samples._permutation as perm
    monkeypatch.setattr(perm, "QUADRATIC_MAX", 100)  # as if n + m = 120 were large
    X, Y = _sets(n=60, m=60, d=2)
    tab = two_sample(X, Y, seed=0, n_boot=5, n_perm=30)
    assert list(tab.rows) == ["MMD", "FD"]
    assert tab["MMD"].estimate == pytest.approx(mmd(X, Y, estimator="linear"), rel=1e-12)  # numba vs NumPy sums
    assert two_sample(X, Y, stats=["MMD"], estimator="unbiased", seed=0, n_boot=0, n_perm=30)["MMD"].estimate == \
        pytest.approx(mmd(X, Y), rel=1e-12)
