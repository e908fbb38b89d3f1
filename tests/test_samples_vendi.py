"""The Vendi score (mcref.samples._vendi) against vendi-score 0.0.3, closed forms, round-off
eigenvalues, and the random-feature route's bound; the diversity table (mcref.samples._diversity)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from mcref.samples._vendi import gaussian_matrix, rff_gram, vendi_score

vendi = pytest.importorskip("vendi_score.vendi")
# vendi-score 0.0.3 reads scipy.sparse.csr (deprecated in SciPy)
pytestmark = pytest.mark.filterwarnings("ignore:Please import `csr_matrix`:DeprecationWarning")


def _gauss(X, ell):
    return np.exp(-cdist(X, X, "sqeuclidean") / (2 * ell * ell))


@pytest.mark.parametrize("q", [1, 0.5, 2])
def test_score_K_equals_vendi_score(q):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    K = _gauss(X, 0.5)  # every eigenvalue of K/n ≥ 3e-5: no round-off eigenvalue in the way
    assert vendi_score(K=K, q=q) == pytest.approx(vendi.score_K(K, q=q), rel=1e-10)
    assert vendi_score(X, length_scale=0.5, q=q) == pytest.approx(vendi.score_K(K, q=q), rel=1e-10)


@pytest.mark.parametrize("q", [1, 0.5, 2])
def test_dual_equals_vendi_score_dual(q):
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(300, 8)) + 0.3
    ours = vendi_score(Y, kernel="linear", q=q)
    assert ours == pytest.approx(vendi.score_dual(Y, q=q), rel=1e-10)
    assert vendi_score(Y, kernel="linear", q=q, method="exact") == pytest.approx(ours, rel=1e-10)


def test_q_infinity_is_one_over_the_largest_eigenvalue():
    rng = np.random.default_rng(3)
    K = _gauss(rng.normal(size=(80, 2)), 0.7)
    lam = np.linalg.eigvalsh(K / 80)
    assert vendi_score(K=K, q=np.inf) == pytest.approx(1 / lam[-1], rel=1e-12)
    assert vendi_score(K=K, q="inf") == vendi_score(K=K, q=np.inf)
    with np.errstate(all="ignore"):
        assert math.isnan(vendi.score_K(K, q=np.inf))  # the peer's departure (docs/methods.md)
    # and the orders approach it: VS_q decreases in q
    scores = [vendi_score(K=K, q=q) for q in (0, 0.5, 1, 2, 8, np.inf)]
    assert all(a >= b for a, b in zip(scores, scores[1:]))


@pytest.mark.parametrize("q", [0, 0.5, 1, 2, np.inf])
def test_closed_forms(q):
    n = 12
    assert vendi_score(K=np.eye(n), q=q) == pytest.approx(n, rel=1e-12)
    assert vendi_score(K=np.ones((n, n)), q=q) == pytest.approx(1.0, rel=1e-12)
    blocks = np.kron(np.eye(3), np.ones((4, 4)))  # 3 equal blocks: 3 eigenvalues 1/3
    assert vendi_score(K=blocks, q=q) == pytest.approx(3.0, rel=1e-12)


def test_round_off_eigenvalues_do_not_count():
    # K of rank 5 at n = 200: its 195 zero eigenvalues come back as ±1e-17
    rng = np.random.default_rng(4)
    U = rng.normal(size=(200, 5))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    K = U @ U.T
    assert vendi_score(K=K, q=0) == 5.0
    exact = vendi_score(U, kernel="linear", method="dual", q=0.5)  # the 5 non-zero eigenvalues alone
    assert vendi_score(K=K, q=0.5) == pytest.approx(exact, rel=1e-10)
    assert vendi.score_K(K, q=0) > 5  # the peer counts the positive round-off


def test_q2_by_blocks_equals_the_eigenvalues(monkeypatch):
    import mcref.samples._vendi as v

    monkeypatch.setattr(v, "BLOCK", 64)  # several blocks of rows, the last one short
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 2))
    lam = np.linalg.eigvalsh(_gauss(X, 0.4) / 300)
    assert vendi_score(X, length_scale=0.4, q=2) == pytest.approx(1 / np.sum(lam**2), rel=1e-10)
    assert np.abs(gaussian_matrix(X, 0.4) - _gauss(X, 0.4)).max() < 1e-14


def test_random_features_within_their_bound():
    # each eigenvalue of the random-feature matrix within t of the exact one (probability ≥ 1 − δ)
    rng = np.random.default_rng(6)
    n, D, delta = 100, 150, 0.01
    X = rng.normal(size=(n, 2))
    exact = np.sort(np.linalg.eigvalsh(_gauss(X, 0.6) / n))[::-1]
    approx = np.zeros(n)
    a = np.sort(np.linalg.eigvalsh(rff_gram(X, 0.6, D, 7) / n))[::-1]
    approx[: min(n, a.size)] = a[:n]
    L = math.log(2 * n / delta)
    t = math.sqrt(2 * exact[0] * L / D) + 2 * L / (3 * D)
    assert np.abs(approx - exact).max() <= t
    assert np.trace(rff_gram(X, 0.6, D, 7)) / n == pytest.approx(1.0, rel=1e-12)
    s1 = vendi_score(X, length_scale=0.6, method="rff", n_features=D, seed=7)
    assert s1 == vendi_score(X, length_scale=0.6, method="rff", n_features=D, seed=7)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"`K` must be symmetric: max \|K − Kᵀ\| = 0.1"):
        vendi_score(K=np.array([[1.0, 0.5], [0.4, 1.0]]))
    with pytest.raises(ValueError, match=r"`K` must be positive semi-definite: its smallest eigenvalue is -1"):
        vendi_score(K=np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match=r"`K` must contain only finite values \(1 NaN or infinite\)"):
        vendi_score(K=np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"`K` must have a unit diagonal"):
        vendi_score(K=2 * np.eye(3))
    with pytest.raises(ValueError, match=r"`K` must be a square matrix with at least 2 rows, got shape \(2, 3\)"):
        vendi_score(K=np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"give exactly one of `X` \(the rows\) and `K`"):
        vendi_score()
    with pytest.raises(ValueError, match=r"`q` must be a number in \[0, inf\], got -1"):
        vendi_score(K=np.eye(2), q=-1)
    with pytest.raises(ValueError, match=r"`X` must have at least 2 rows, got 1"):
        vendi_score(np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"`X` must contain only finite values"):
        vendi_score(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"`X`: the median distance between rows is 0"):
        vendi_score(np.zeros((5, 2)))
    with pytest.raises(ValueError, match=r"`method` 'dual' needs explicit features"):
        vendi_score(np.eye(3), method="dual")
    with pytest.raises(ValueError, match=r"`length_scale` must be a finite number > 0, got 0"):
        vendi_score(np.eye(3), length_scale=0)
    with pytest.raises(ValueError, match=r"`X` has a row of zeros \(row 1\)"):
        vendi_score(np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]), kernel="linear")


# --------------------------------------------------------------------------- diversity

from mcref.samples._diversity import diversity  # noqa: E402
from mcref.samples._vendi import median_length_scale  # noqa: E402


def _mixture(rng, n):
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])[rng.integers(0, 3, n)]
    return centres + 0.7 * rng.normal(size=(n, 2))


def test_diversity_scores_at_the_common_n():
    rng = np.random.default_rng(20)
    A, B, R = rng.normal(size=(40, 2)), rng.normal(size=(70, 2)), rng.normal(size=(90, 2))
    t = diversity({"A": A, "B": B}, reference=R, n_perm=0, n_groups=5, seed=3)
    assert t.n == 40 and t.length_scale == median_length_scale(R)
    # the set of n rows scores as itself (the score does not depend on the rows' order)
    assert t["A"].vendi == pytest.approx(vendi_score(A, length_scale=t.length_scale), rel=1e-10)
    # the larger ones: the mean over 5 subsamples of 40 rows, each a plain vendi_score
    assert 1 < t["B"].vendi < 40 and t["B"].rows == 70
    assert [d.a + "-" + d.b for d in t.differences] == ["A-reference", "B-reference", "A-B"]
    assert t.difference("B", "A").difference == pytest.approx(t["B"].vendi - t["A"].vendi)
    assert t.to_dict() == diversity({"A": A, "B": B}, reference=R, n_perm=0, n_groups=5, seed=3).to_dict()


def test_leave_one_out_jackknife_equals_a_plain_recomputation():
    # G = n groups of one row: the jackknife does not depend on the rows' order
    rng = np.random.default_rng(21)
    X = rng.normal(size=(25, 2))
    t = diversity({"X": X}, length_scale=0.8, n_groups=25, n_perm=0, seed=0)
    theta = np.array([vendi_score(np.delete(X, i, axis=0), length_scale=0.8) for i in range(25)])
    se = math.sqrt(24 / 25 * np.sum((theta - theta.mean()) ** 2))
    assert t["X"].se == pytest.approx(se, rel=1e-9)
    from scipy import stats

    half = stats.t.ppf(0.975, 24) * se
    assert (t["X"].low, t["X"].high) == pytest.approx((t["X"].vendi - half, t["X"].vendi + half), rel=1e-12)


def test_permutation_p_is_valid_under_one_law_and_has_power():
    from scipy.stats import binomtest

    rng = np.random.default_rng(22)
    small = 0
    reps = 150
    for i in range(reps):
        t = diversity({"A": _mixture(rng, 24), "B": _mixture(rng, 24)}, length_scale=1.0, n_perm=19,
                      n_groups=4, seed=i)
        small += t.differences[0].p <= 0.25  # P(p ≤ 5/20) ≤ 0.25 under one law, = 0.25 up to ties
    assert binomtest(small, reps, 0.25).pvalue > 0.01, small
    t = diversity({"wide": rng.normal(size=(40, 2)), "narrow": 0.3 * rng.normal(size=(40, 2))},
                  length_scale=1.0, n_perm=39, n_groups=5, seed=1)
    assert t.differences[0].p == pytest.approx(1 / 40)  # beyond every permutation


@pytest.mark.slow
def test_interval_coverage():
    # the 95 % interval covers E VS_n (by 1500 fresh sets) in ≥ 92.5 % of 300 sets
    from scipy.stats import binomtest

    rng = np.random.default_rng(23)
    n = 60
    truth = np.mean([vendi_score(_mixture(rng, n), length_scale=1.0) for _ in range(1500)])
    hits = 0
    for i in range(300):
        r = diversity({"A": _mixture(rng, n)}, length_scale=1.0, n_perm=0, seed=i)["A"]
        hits += r.low <= truth <= r.high
    assert hits / 300 >= 0.925 or binomtest(hits, 300, 0.95).pvalue > 0.01, hits


def test_diversity_text_json_frame():
    import json

    rng = np.random.default_rng(24)
    t = diversity({"A": rng.normal(size=(30, 2)), "B": rng.normal(size=(30, 2))}, n_perm=9, n_groups=5, seed=2)
    d = t.differences[0]  # sets of n rows: the tested subsamples are the sets themselves
    assert d.tested == pytest.approx(d.difference, rel=1e-10) and 0 < d.p <= 1
    s = str(t)
    assert "Vendi score (q = 1, gaussian kernel" in s and "A − B" in s and "at n = 30 rows" in s
    doc = json.loads(t.to_json())
    assert [r["name"] for r in doc["sets"]] == ["A", "B"] and doc["settings"]["seed"] == 2
    pd = pytest.importorskip("pandas")
    assert list(t.to_frame()["name"]) == ["A", "B"]
    assert isinstance(t.to_frame("differences"), pd.DataFrame)


def test_diversity_bad_inputs():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"`sets` must be a non-empty mapping"):
        diversity({})
    with pytest.raises(ValueError, match=r"`n` must be at most the smallest set's rows \(10\), got 11"):
        diversity({"A": A}, n=11)
    with pytest.raises(ValueError, match=r"`sets\['A'\]` and `sets\['B'\]` must have the same number of features"):
        diversity({"A": A, "B": rng.normal(size=(10, 3))})
    with pytest.raises(ValueError, match=r"`sets`: each name must be a non-empty string other than 'reference'"):
        diversity({"reference": A})
    with pytest.raises(ValueError, match=r"`sets\['A'\]` must contain only finite values"):
        diversity({"A": np.where(A > 1, np.nan, A)})
    with pytest.raises(ValueError, match=r"`reference`: the median distance between rows is 0"):
        diversity({"A": A}, reference=np.ones((10, 2)))


def test_diversity_command(tmp_path, capsys):
    from mcref.cli import main

    rng = np.random.default_rng(25)
    np.save(tmp_path / "wide.npy", rng.normal(size=(30, 2)))
    np.save(tmp_path / "narrow.npy", 0.3 * rng.normal(size=(40, 2)))
    out = tmp_path / "t.json"
    assert main(["diversity", str(tmp_path / "wide.npy"), str(tmp_path / "narrow.npy"), "--perm", "9",
                 "--seed", "4", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "wide − narrow" in text and "seed: 4" in text
    import json

    doc = json.loads(out.read_text())
    expect = diversity({"wide": np.load(tmp_path / "wide.npy"), "narrow": np.load(tmp_path / "narrow.npy")},
                       n_perm=9, seed=4)
    assert doc["sets"][0]["vendi"] == pytest.approx(expect["wide"].vendi, rel=1e-12)


def test_q_infinity_by_lanczos_equals_the_eigenvalues():
    rng = np.random.default_rng(26)
    X = rng.normal(size=(600, 3))  # above LANCZOS_MIN: λ_max by ARPACK
    lam = np.linalg.eigvalsh(_gauss(X, 0.5) / 600)
    assert vendi_score(X, length_scale=0.5, q=np.inf) == pytest.approx(1 / lam[-1], rel=1e-10)
