"""Issue 63: the block permutation of ``order=`` with u cycling along the order is the textbook
block permutation (docs/methods.md, "Dependent test sets", re-measured 2026-12-08)."""

import math
import warnings

import numpy as np

import mcref


def _cycling_set(m: int, phi: float, seed: int):
    rng = np.random.default_rng(seed)
    e = rng.normal(size=m)
    eps = np.empty(m)
    eps[0] = e[0]
    for t in range(1, m):
        eps[t] = phi * eps[t - 1] + math.sqrt(1 - phi * phi) * e[t]
    t = np.arange(m)
    u = np.exp(0.5 * np.cos(2 * np.pi * t / 300) + 0.05 * rng.normal(size=m))
    perm = rng.permutation(m)
    return (u * eps)[perm], u[perm], t[perm], eps, u


def _numpy_block_p(eps, u, ell, n_bins, n_perm, seed):
    """p of ENCE and ZMSE (against the set's own scale, as validate's permutation D) under a
    permutation of the non-overlapping blocks of ``ell`` rows along the order (the last, shorter
    block stays), written out in NumPy."""
    rng = np.random.default_rng(seed)
    m = eps.size
    srt = np.argsort(u, kind="stable")
    u2 = (u * u)[srt]
    c2 = np.mean(eps * eps)
    nfull = m // ell
    Z = np.empty((n_perm + 1, m))
    Z[0] = eps
    for b in range(n_perm):
        z = eps.copy()
        z[:nfull * ell] = eps[:nfull * ell].reshape(nfull, ell)[rng.permutation(nfull)].ravel()
        Z[b + 1] = z
    z2 = (Z[:, srt] ** 2).reshape(n_perm + 1, n_bins, m // n_bins)
    mv = u2.reshape(n_bins, m // n_bins).mean(1)
    mse = (z2 * u2.reshape(n_bins, m // n_bins)).mean(2)
    ence = np.abs(1 - np.sqrt(mse / (c2 * mv))).mean(1)
    zmse = np.abs(np.log(z2.mean(2) / c2)).mean(1)
    return {n: (1 + np.sum(v[1:] >= v[0])) / (1 + n_perm) for n, v in (("ENCE", ence), ("ZMSE", zmse))}


def test_block_permutation_p_equals_numpy_block_permutation_with_u_cycling():
    m, ell, n_mc, n_np = 900, 30, 2000, 4000
    E, u, t, eps, u_t = _cycling_set(m, 0.8, 63)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tab = mcref.validate(E, u, order=t, block_length=ell, stats=["ZMS", "ENCE", "ZMSE"], dists=["permutation"],
                             n_boot=200, n_mc=n_mc, sequential=False, progress=False, seed=5)
    ref = _numpy_block_p(eps, u_t, ell, tab.n_bins, n_np, 7)
    for name in ("ENCE", "ZMSE"):
        p_mc = tab[name].p_sim["permutation"]
        p_np = ref[name]
        pbar = 0.5 * (p_mc + p_np)
        se = math.sqrt(max(pbar * (1 - pbar), 0.01) * (1 / n_mc + 1 / n_np))
        assert abs(p_mc - p_np) <= 4 * se, (name, p_mc, p_np, se)
