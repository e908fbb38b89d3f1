"""Precision, recall, density and coverage (mcref.samples._knn) against prdc 0.2, against the
exact expectations under one law, and on every labelling of a pooled sample."""

from __future__ import annotations

import contextlib
import io

import numba
import numpy as np
import pytest

from mcref.samples._knn import neighbour_lists, prdc, prdc_permuted, prdc_values

prdc_pkg = pytest.importorskip("prdc")

STATS = ("precision", "recall", "density", "coverage")


def _peer(X, Y, k):
    with contextlib.redirect_stdout(io.StringIO()):  # prdc prints the set sizes
        out = prdc_pkg.compute_prdc(X, Y, k)
    return {s: float(out[s]) for s in STATS}


def _close(ours, theirs):
    for s in STATS:
        assert ours[s] == pytest.approx(theirs[s], rel=1e-10, abs=1e-15), s


@pytest.mark.parametrize("k", [1, 5, 10])
@pytest.mark.parametrize("shape", [(300, 200, 3), (120, 180, 2), (60, 400, 6)])
def test_prdc_equals_the_prdc_package(k, shape):
    n, m, d = shape
    rng = np.random.default_rng(k * 100 + n)
    X = rng.normal(size=(n, d))
    Y = 1.3 * rng.normal(size=(m, d)) + 0.4
    r = prdc(X, Y, k=k)
    _close(r.to_dict(), _peer(X, Y, k))
    assert r.k == k
    _close(prdc_values(X, Y, k=k), _peer(X, Y, k))


@pytest.mark.parametrize("k", [1, 5, 10])
def test_prdc_on_ties_equals_the_prdc_package(k):
    # small integers: every squared distance is an exact integer in both codes, so each strict
    # comparison (a copy at distance 0, a fake exactly on a ball's edge) is decided the same way
    rng = np.random.default_rng(k)
    X = rng.integers(0, 4, size=(90, 2)).astype(float)
    Y = rng.integers(0, 4, size=(70, 2)).astype(float)
    _close(prdc(X, Y, k=k).to_dict(), _peer(X, Y, k))


def test_identical_constant_sets_give_zero_as_prdc():
    X = np.full((20, 3), 0.25)
    ours = prdc(X, X.copy(), k=3).to_dict()
    assert ours == {s: 0.0 for s in STATS}
    assert _peer(X, X.copy(), 3) == ours  # radii 0 and strict "<": no ball holds anything


def test_a_point_on_the_ball_edge_is_outside():
    # real 0, 1, 3 on a line, k = 1: radii 1, 1, 2; fake at 2 is at distance 1 from 1 (radius 1,
    # outside: strict) and 1 from 3 (radius 2: inside); prdc needs k ≤ m − 2, so three fakes
    X = np.array([[0.0], [1.0], [3.0]])
    Y = np.array([[2.0], [10.0], [11.0]])
    r = prdc(X, Y, k=1)
    assert r.precision == pytest.approx(1 / 3) and r.density == pytest.approx(1 / 3)
    assert r.to_dict() == _peer(X, Y, 1)


def _labellings(rng, N, n, B):
    return np.array([rng.permutation(N) < n for _ in range(B)])


@pytest.mark.parametrize("k", [1, 4])
def test_prdc_permuted_equals_prdc_on_each_labelling(k):
    rng = np.random.default_rng(5)
    Z = np.vstack([rng.normal(size=(70, 3)), rng.normal(size=(50, 3)) + 0.7])
    labels = _labellings(rng, 120, 55, 12)
    labels[0] = np.arange(120) < 70  # the observed split
    out = prdc_permuted(Z, labels, k=k)
    for b in range(labels.shape[0]):
        X, Y = Z[labels[b]], Z[~labels[b]]
        ref = _peer(X, Y, k)
        _close({s: out[s][b] for s in STATS}, ref)
        _close(prdc(X, Y, k=k).to_dict(), ref)


def test_short_lists_fall_back_to_the_exact_search():
    # lists of 2 entries: nearly every point needs the exact search; and heavy copies (ties)
    rng = np.random.default_rng(7)
    Z = rng.integers(0, 3, size=(100, 2)).astype(float)
    labels = _labellings(rng, 100, 40, 6)
    full = prdc_permuted(Z, labels, k=3)
    short = prdc_permuted(Z, labels, k=3, lists=neighbour_lists(Z, 2))
    for b in range(6):
        ref = _peer(Z[labels[b]], Z[~labels[b]], 3)
        _close({s: full[s][b] for s in STATS}, ref)
        _close({s: short[s][b] for s in STATS}, ref)


def test_expectations_under_one_law():
    # for a fixed pooled sample with no ties and a random labelling, real row i's ball holds a
    # fake iff not all of its k nearest other rows are real: E coverage = 1 − ∏_{t<k}(n−1−t)/(n+m−1−t)
    # exactly, and the fakes before the k-th real are negative-hypergeometric: E density = 1
    rng = np.random.default_rng(11)
    n, m, k, B = 150, 100, 5, 400
    Z = rng.normal(size=(n + m, 3))
    out = prdc_permuted(Z, _labellings(rng, n + m, n, B), k=k)
    expect_cov = 1.0 - np.prod([(n - 1 - t) / (n + m - 1 - t) for t in range(k)])
    for s, expect in (("coverage", expect_cov), ("density", 1.0)):
        v = out[s]
        se = v.std(ddof=1) / np.sqrt(B)
        assert abs(v.mean() - expect) < 4 * se, (s, v.mean(), expect, se)
    # and the limit n = m → ∞, 1 − 2^−k, is the formula's
    assert 1.0 - np.prod([(10**6 - 1 - t) / (2 * 10**6 - 1 - t) for t in range(k)]) == pytest.approx(1 - 0.5**k, rel=1e-5)


def test_same_bits_one_and_two_threads():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(300, 4))
    labels = _labellings(rng, 300, 150, 40)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = prdc_permuted(Z, labels, k=5)
        numba.set_num_threads(max(1, min(2, numba.config.NUMBA_NUM_THREADS)))
        b = prdc_permuted(Z, labels, k=5)
    finally:
        numba.set_num_threads(old)
    for s in STATS:
        assert np.array_equal(a[s], b[s])


def test_bad_inputs():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(10, 2)), rng.normal(size=(8, 2))
    with pytest.raises(ValueError, match=r"`k` must be smaller than the number of rows .*\(8\), got 8"):
        prdc(X, Y, k=8)
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1, got 0"):
        prdc(X, Y, k=0)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"`real` must contain only finite values \(1 NaN or infinite, first at row 3, column 1\)"):
        prdc(bad, Y)
    with pytest.raises(ValueError, match=r"`real` and `fake` must have the same number of features \(columns\): 2 and 3"):
        prdc(X, rng.normal(size=(8, 3)))
    with pytest.raises(ValueError, match=r"`fake` must have at least 2 rows, got 1"):
        prdc(X, Y[:1], k=1)
    with pytest.raises(ValueError, match=r"`real` must be a 2-D array \(rows × features\), got shape \(2, 2, 2\)"):
        prdc(np.zeros((2, 2, 2)), Y)
    Z = np.vstack([X, Y])
    with pytest.raises(ValueError, match=r"`labels` must be a boolean array"):
        prdc_permuted(Z, np.ones((2, 18), dtype=int))
    with pytest.raises(ValueError, match=r"`labels` must have shape \(B, 18\)"):
        prdc_permuted(Z, np.ones((2, 17), dtype=bool))
    with pytest.raises(ValueError, match=r"`k` must be smaller than the number of rows of each set of every labelling \(3\)"):
        prdc_permuted(Z, np.arange(18)[None, :] < 3, k=5)


def test_the_lists_of_one_pooled_sample_are_made_once(monkeypatch):
    import mcref.samples._knn as knn

    made = []
    real = knn.neighbour_lists
    monkeypatch.setattr(knn, "neighbour_lists", lambda Z, K: made.append(K) or real(Z, K))
    monkeypatch.setattr(knn, "_LAST", {})
    rng = np.random.default_rng(8)
    Z = rng.normal(size=(80, 2))
    a = prdc_permuted(Z, _labellings(rng, 80, 40, 3), k=3)
    labels = _labellings(rng, 80, 40, 3)
    b = prdc_permuted(Z.copy(), labels, k=3)  # same rows: the kept lists
    assert len(made) == 1 and a["coverage"].shape == (3,)
    Z2 = Z.copy()
    Z2[0, 0] += 1e-9  # other rows: new lists
    c = prdc_permuted(Z2, labels, k=3)
    assert len(made) == 2
    for i, lab in enumerate(labels):
        _close({s: b[s][i] for s in STATS}, _peer(Z[lab], Z[~lab], 3))
        _close({s: c[s][i] for s in STATS}, _peer(Z2[lab], Z2[~lab], 3))
