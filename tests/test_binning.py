"""Equal-count binning (docs/methods.md, "Binning") against the naive float formula."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import naive
from mcref.core._warnings import ShrunkBinsWarning

B = importlib.import_module("mcref.binning")

# many (M, N): M divisible by N, M = N, odd/even M and N, N = 1, half-way cases
# (M·i/N = k + 1/2 exactly: M odd, N even), and N > M (empty bins are legal here)
MN = sorted(
    {(m, n) for m in (1, 2, 3, 5, 10, 11, 30, 99, 100, 101, 599, 600, 601, 1000, 13885) for n in (1, 2, 3, 4, 7, 10, 20, 40)}
    | {(m, m) for m in (1, 2, 7, 20, 64)}
    | {(7, 2), (9, 6), (15, 10), (25, 10), (45, 30), (13885, 150), (10**6 + 1, 2), (10**6 + 3, 6)}
)


@pytest.mark.parametrize("m,n", MN)
def test_bin_starts_matches_float_formula(m, n):
    got = B.bin_starts(m, n)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, naive.bin_starts(m, n))
    assert got[0] == 0 and got[-1] == m
    sizes = np.diff(got)
    assert np.all(sizes >= 0)
    if n <= m:
        assert sizes.max() - sizes.min() <= 1
        assert sizes.min() >= m // n and sizes.max() <= -(-m // n)


def test_bin_starts_examples():
    assert B.bin_starts(10, 4).tolist() == [0, 3, 5, 8, 10]  # 2.5 -> 3, 7.5 -> 8: round half up
    assert B.bin_starts(7, 2).tolist() == [0, 4, 7]  # 3.5 -> 4
    assert B.bin_starts(6, 6).tolist() == list(range(7))
    assert B.bin_starts(600, 20).tolist() == list(range(0, 601, 30))


def test_equal_count_bins_stable_ties():
    b = B.equal_count_bins([3.0, 1.0, 2.0, 1.0, 5.0, 4.0], n_bins=2, min_count=3)
    assert b.order.tolist() == [1, 3, 2, 0, 5, 4]
    assert b.starts.tolist() == [0, 3, 6]
    assert b.n_bins == 2
    assert b.counts.tolist() == [3, 3]
    assert b.labels().tolist() == [1, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("m,n_distinct,n_bins", [(361, 7, 12), (1000, 3, 10), (300, 300, 10), (97, 1, 3)])
def test_equal_count_bins_vs_naive(m, n_distinct, n_bins):
    rng = np.random.default_rng(m + n_distinct)
    levels = rng.uniform(0.1, 5.0, n_distinct)
    u = rng.choice(levels, m) if n_distinct < m else levels
    b = B.equal_count_bins(u, n_bins=n_bins, min_count=1)
    np.testing.assert_array_equal(b.order, np.argsort(u, kind="stable"))
    np.testing.assert_array_equal(b.starts, naive.bin_starts(m, n_bins))
    np.testing.assert_array_equal(b.counts, np.diff(naive.bin_starts(m, n_bins)))
    ref = naive.bins(u, n_bins)
    lab = b.labels()
    assert lab.shape == (m,) and lab.dtype == np.int64
    for k, idx in enumerate(ref):
        np.testing.assert_array_equal(np.flatnonzero(lab == k), np.sort(idx))
    # within a tie run the input order is kept
    for val in np.unique(u):
        pos = np.flatnonzero(u[b.order] == val)
        assert np.all(np.diff(b.order[pos]) > 0)
    # bins are monotone in u
    for k in range(n_bins - 1):
        assert u[lab == k].max() <= u[lab == k + 1].min()


def test_min_count_rule_and_shrink():
    u = np.linspace(0.1, 1.0, 599)
    with pytest.raises(ValueError, match=r"`n_bins`=20 leaves fewer than `min_count`=30 points per bin for M=599 points \(M/n_bins = 29\.9\); use at most 19 bins"):
        B.equal_count_bins(u, n_bins=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert B.equal_count_bins(np.append(u, 2.0), n_bins=20).n_bins == 20  # M = 30·20 exactly
        assert B.equal_count_bins(u, n_bins=20, min_count=29).n_bins == 20
    with pytest.warns(ShrunkBinsWarning, match=r"n_bins reduced from 20 to 19 to keep >= 30 points per bin"):
        b = B.equal_count_bins(u, n_bins=20, shrink=True)
    assert b.n_bins == 19 and b.starts.tolist() == naive.bin_starts(599, 19).tolist()
    assert b.counts.min() >= 30
    with pytest.raises(ValueError, match=r"M=29 points cannot fill a single bin of `min_count`=30"):
        B.equal_count_bins(u[:29], n_bins=1, shrink=True)
    with pytest.raises(ValueError, match=r"M=29 points cannot fill a single bin of `min_count`=30 points: binned statistics"):
        B.equal_count_bins(u[:29], n_bins=1)


@pytest.mark.parametrize("m,n_bins,min_count", [(100, 7, 15), (1000, 50, 30), (31, 2, 30), (60, 3, 30)])
def test_resolve_n_bins(m, n_bins, min_count):
    if m >= n_bins * min_count:
        assert B.resolve_n_bins(m, n_bins, min_count=min_count) == n_bins
    else:
        with pytest.raises(ValueError, match=r"leaves fewer than `min_count`"):
            B.resolve_n_bins(m, n_bins, min_count=min_count)
        with pytest.warns(ShrunkBinsWarning):
            assert B.resolve_n_bins(m, n_bins, min_count=min_count, shrink=True) == m // min_count


@pytest.mark.parametrize("kw,match", [
    (dict(n_bins=0), r"`n_bins` must be an integer >= 1, got 0"),
    (dict(n_bins=1.5), r"`n_bins` must be an integer, got 1.5"),
    (dict(n_bins=2, min_count=0), r"`min_count` must be an integer >= 1, got 0"),
    (dict(n_bins=2, min_count="3"), r"`min_count` must be an integer, got '3'"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        B.equal_count_bins(np.linspace(1, 2, 100), **kw)


def test_bad_u():
    with pytest.raises(ValueError, match=r"`u` must contain only finite values \(1 NaN"):
        B.equal_count_bins([1.0, np.nan, 2.0], n_bins=1, min_count=1)
    with pytest.raises(ValueError, match=r"`u` must be one-dimensional"):
        B.equal_count_bins(np.ones((4, 4)), n_bins=1, min_count=1)


def test_qm9_bins(qm9):
    _, u = qm9
    b = B.equal_count_bins(u, n_bins=20)
    np.testing.assert_array_equal(b.order, np.argsort(u, kind="stable"))
    np.testing.assert_array_equal(b.starts, naive.bin_starts(u.size, 20))
    lab = b.labels()
    for k, idx in enumerate(naive.bins(u, 20)):
        assert np.all(lab[idx] == k)


def test_errviewlib_cuts_rule():
    """cuts="errviewlib" differs from round-half-up only at half-integer M·i/N, by one point, where
    the HD quantile of the ranks (computed here in 50-digit arithmetic on R's double inputs) is
    below the integer M·i/N + ½ by more than half a unit in its last place; the median of an odd M
    is never moved (tests/test_parity.py checks it against R's genIntervals on 30 121 pairs)."""
    import mpmath as mp

    assert B.bin_starts(10, 4, cuts="errviewlib").tolist() == [0, 2, 5, 8, 10]
    mp.mp.dps = 50
    for m, n in [(10, 4), (30, 4), (7, 2), (50, 6), (90, 4), (201, 2), (118, 8)]:
        a, b = B.bin_starts(m, n), B.bin_starts(m, n, cuts="errviewlib")
        for i in range(1, n):
            if (2 * m * i) % (2 * n) != n:
                assert a[i] == b[i]
                continue
            if 2 * i == n:
                assert a[i] == b[i] == (m + 1) // 2
                continue
            p = i * (1.0 / n)
            pa, pb = mp.mpf((m + 1) * p), mp.mpf((m + 1) * (1.0 - p))
            hd = mp.fsum(1 - mp.betainc(pa, pb, 0, mp.mpf(k / m), regularized=True) for k in range(m))
            c = int(a[i])
            ulp = c - np.nextafter(float(c), 0.0)
            assert b[i] == (c - 1 if hd - c < -ulp / 2 else c), (m, n, i, float(hd - c))
    with pytest.raises(ValueError, match="`cuts`"):
        B.equal_count_bins(np.linspace(1, 2, 100), n_bins=2, cuts="R")
