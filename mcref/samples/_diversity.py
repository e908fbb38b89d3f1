r"""The diversity of several sample sets, each set's Vendi score at one common size, with
intervals, differences and their p-values (docs/methods.md, "Nearest-neighbour statistics and
diversity").

The Vendi score grows with the number of rows n, so sets are compared at one n (the smallest
set's size by default): a larger set's score is the mean over ``n_sub`` subsamples of n rows
drawn without replacement. One kernel serves every set (one length ℓ: the reference's median
distance when a reference is given, else the pooled sets'), so that the scores measure the sets
on one scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Mapping

import numpy as np
from scipy import stats as sps

from ..core._checks import check_choice, check_int, check_probability, check_seed
from ..report._render import json_text, p_text, text_table
from ._knn import check_same_features, check_sample_set
from ._vendi import KERNELS, check_length_scale, check_q, median_length_scale, similarity_matrix, vendi_of_matrix

REFERENCE = "reference"


@dataclass(frozen=True)
class DiversityRow:
    """One set's Vendi score at the common n.

    Attributes
    ----------
    name : str
    rows : int
        The set's own number of rows.
    vendi : float
        The mean Vendi score over the subsamples of n rows (the set itself when it has n rows).
    se : float
        Its standard error by the delete-a-group jackknife of one subsample.
    low, high : float
        The interval vendi ± t_{G−1}·se at the table's level.
    """

    name: str
    rows: int
    vendi: float
    se: float
    low: float
    high: float


@dataclass(frozen=True)
class DiversityDifference:
    """vendi(a) − vendi(b), its standard error, and the permutation p-value of "one law".

    ``tested`` is the difference of the two subsamples that the permutation test pools (the
    statistic whose p is ``p``); ``difference`` is that of the sets' mean scores."""

    a: str
    b: str
    difference: float
    se: float
    p: float
    tested: float = math.nan


@dataclass(frozen=True)
class Diversity:
    """Each set's Vendi score at a common n, with intervals, and the differences between sets.

    Attributes
    ----------
    rows : tuple of DiversityRow
        The sets in the order given, the reference (if any) last; ``table[name]`` picks one.
    differences : tuple of DiversityDifference
        Each set against the reference (if given), then every pair of sets.
    n, q, kernel, length_scale, level, n_perm, n_sub, n_groups : the settings used.
    """

    rows: tuple
    differences: tuple
    n: int
    q: float
    kernel: str
    length_scale: float | None
    level: float
    n_perm: int
    n_sub: int
    n_groups: int
    seed_entropy: Any = field(default=None, repr=False)

    def __getitem__(self, name: str) -> DiversityRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no set named {name!r}; the sets are {', '.join(r.name for r in self.rows)}")

    def difference(self, a: str, b: str) -> DiversityDifference:
        """The row of vendi(a) − vendi(b) (either order)."""
        for d in self.differences:
            if (d.a, d.b) == (a, b):
                return d
            if (d.a, d.b) == (b, a):
                return DiversityDifference(a, b, -d.difference, d.se, d.p, -d.tested)
        raise KeyError(f"no difference between {a!r} and {b!r}")

    def _settings(self) -> str:
        ell = "" if self.length_scale is None else f", ℓ = {self.length_scale:.4g}"
        return (f"Vendi score (q = {self.q:g}, {self.kernel} kernel{ell}) at n = {self.n} rows a set; "
                f"{self.level:.0%} intervals (jackknife, {self.n_groups} groups); p: {self.n_perm} permutations")

    def __str__(self) -> str:
        lines = ["Diversity", self._settings(), ""]
        body = [[r.name, str(r.rows), f"{r.vendi:.4g}", f"[{r.low:.4g}, {r.high:.4g}]"] for r in self.rows]
        lines += text_table(["set", "rows", "vendi", "interval"], body)
        if self.differences:
            lines.append("")
            body = [[f"{d.a} − {d.b}", f"{d.difference:+.4g}", f"{d.se:.2g}", f"{d.tested:+.4g}",
                     p_text(d.p, self.n_perm)] for d in self.differences]
            lines += text_table(["difference", "value", "se", "tested", "p"], body)
            lines.append("p: permutations of the pooled rows of the two subsamples whose difference is 'tested' "
                         "(exact under one law for both)")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The table as plain data (sets, differences, settings)."""
        return {"settings": {"n": self.n, "q": self.q, "kernel": self.kernel, "length_scale": self.length_scale,
                             "level": self.level, "n_perm": self.n_perm, "n_sub": self.n_sub,
                             "n_groups": self.n_groups, "seed": self.seed_entropy},
                "sets": [vars(r).copy() for r in self.rows],
                "differences": [vars(d).copy() for d in self.differences]}

    def to_json(self) -> str:
        """The table as JSON text."""
        return json_text(self.to_dict())

    def to_frame(self, what: str = "sets"):
        """A pandas DataFrame of the sets (``what="sets"``) or of the differences."""
        import pandas as pd

        what = check_choice(what, "what", ("sets", "differences"))
        return pd.DataFrame(self.to_dict()[what])


def _jackknife_se(A: np.ndarray, q: float, G: int) -> float:
    """Delete-a-group jackknife se of VS_q of the rows of A (already in random order): G groups
    of consecutive rows, se² = (G − 1)/G·Σ_g (θ_(g) − θ̄)²."""
    n = A.shape[0]
    edges = np.linspace(0, n, G + 1).astype(np.int64)
    theta = np.empty(G)
    for g in range(G):
        keep = np.r_[0:edges[g], edges[g + 1]:n]
        theta[g] = vendi_of_matrix(A[np.ix_(keep, keep)], q)
    return float(math.sqrt((G - 1) / G * np.sum((theta - theta.mean()) ** 2)))


def _perm_p(A: np.ndarray, observed: float, q: float, n: int, n_perm: int, rng) -> float:
    """p of |VS(first n) − VS(last n)| over random splits of the 2n pooled rows of A (+1)."""
    N = A.shape[0]
    hits = 0
    tol = 1e-12 * max(1.0, abs(observed))
    for _ in range(n_perm):
        perm = rng.permutation(N)
        a, b = np.sort(perm[:n]), np.sort(perm[n:])
        d = vendi_of_matrix(A[np.ix_(a, a)], q) - vendi_of_matrix(A[np.ix_(b, b)], q)
        hits += abs(d) >= abs(observed) - tol
    return (1 + hits) / (1 + n_perm)


def _check_sets(sets: Any, reference: Any) -> dict[str, np.ndarray]:
    if not isinstance(sets, Mapping) or len(sets) == 0:
        raise ValueError("`sets` must be a non-empty mapping {name: rows (n × d)}")
    out = {}
    for name, x in sets.items():
        if not isinstance(name, str) or not name or name == REFERENCE:
            raise ValueError(f"`sets`: each name must be a non-empty string other than {REFERENCE!r}, got {name!r}")
        out[name] = check_sample_set(x, f"sets[{name!r}]")
    if reference is not None:
        out[REFERENCE] = check_sample_set(reference, "reference")
    first = next(iter(out))
    for name in out:
        check_same_features(out[first], out[name], (f"sets[{first!r}]", name if name == REFERENCE else f"sets[{name!r}]"))
    return out


def diversity(sets: Mapping[str, Any], *, reference: Any = None, n: int | None = None, q: float = 1,
              kernel: str = "gaussian", length_scale: float | None = None, n_sub: int = 5, n_groups: int = 20,
              n_perm: int = 99, level: float = 0.95, seed=None) -> Diversity:
    r"""The Vendi score of each set at one common size, with intervals, and the differences.

    For every set, VS_q (:func:`vendi_score`) of n of its rows, averaged over ``n_sub``
    subsamples of n rows (without replacement) when the set is larger; its standard error by the
    delete-a-group jackknife of one subsample, se² = (G − 1)/G·Σ_g (θ_(g) − θ̄)², and the interval
    VS ± t_{G−1}·se. Each difference vendi(a) − vendi(b) gets its se (√(se_a² + se_b²)) and the
    p-value of the permutation test: the two sets' subsamples pooled (2n rows), split at random
    into two halves of n, a hit when the absolute difference of the halves' Vendi scores is ≥ the
    observed one; p = (1 + hits)/(1 + n_perm).

    Parameters
    ----------
    sets : mapping of str to array_like (rows × d)
        The sets to compare, by name.
    reference : array_like, optional
        The ground truth's rows, reported as the set "reference" and compared with every set.
    n : int, optional
        The common size; default the smallest set's rows.
    q : float, default: 1
        The order of the Vendi score.
    kernel : {"gaussian", "linear"}, default: "gaussian"
    length_scale : float, optional
        The Gaussian kernel's ℓ, one for all sets; default the median distance between rows of the
        reference when given, else of the pooled sets.
    n_sub : int, default: 5
        Subsamples of a set with more than n rows.
    n_groups : int, default: 20
        The jackknife's groups G (at most n).
    n_perm : int, default: 99
        Permutations of each difference's test (0: no p).
    level : float, default: 0.95
        The intervals' confidence level.
    seed : None, int, SeedSequence or Generator

    Returns
    -------
    Diversity

    Notes
    -----
    The permutation test is exact (its p is uniform or conservative) when both sets are samples of
    one law; it is a test of "same law" made sensitive to diversity by its statistic, so two laws
    of equal Vendi score but different places may still differ in it little. Cost: one n × n
    eigenvalue problem per subsample, G per interval and 2 per permutation (docs/methods.md,
    "Nearest-neighbour statistics and diversity").

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> t = diversity({"wide": rng.normal(size=(60, 2)), "narrow": 0.2 * rng.normal(size=(80, 2))},
    ...               n_perm=19, n_groups=10, seed=1)
    >>> t["wide"].vendi > t["narrow"].vendi
    True
    """
    data = _check_sets(sets, reference)
    kernel = check_choice(kernel, "kernel", KERNELS)
    q = check_q(q)
    smallest = min(x.shape[0] for x in data.values())
    n = smallest if n is None else check_int(n, "n", minimum=2)
    if n > smallest:
        raise ValueError(f"`n` must be at most the smallest set's rows ({smallest}), got {n}")
    n_sub = check_int(n_sub, "n_sub", minimum=1)
    G = min(check_int(n_groups, "n_groups", minimum=2), n)
    n_perm = check_int(n_perm, "n_perm", minimum=0)
    level = check_probability(level, "level")
    ss = check_seed(seed)
    ell = None
    if kernel == "gaussian":
        if length_scale is None:
            base = data[REFERENCE] if REFERENCE in data else np.vstack(list(data.values()))
            ell = median_length_scale(base, "reference" if REFERENCE in data else "sets (pooled)")
        else:
            ell = check_length_scale(length_scale)
    names = list(data)
    pairs = [(a, REFERENCE) for a in names if a != REFERENCE] if REFERENCE in data else []
    pairs += list(combinations([a for a in names if a != REFERENCE], 2))
    streams = ss.spawn(len(names) + len(pairs))
    t = float(sps.t.ppf(0.5 + level / 2, G - 1))
    rows, first = [], {}
    for i, name in enumerate(names):
        X = data[name]
        rng = np.random.default_rng(streams[i])
        reps = 1 if X.shape[0] == n else n_sub
        scores = []
        for r in range(reps):
            pick = rng.permutation(X.shape[0])[:n] if X.shape[0] > n else rng.permutation(n)
            A = similarity_matrix(X[pick], kernel, ell)
            if r == 0:
                first[name] = X[pick]
                se = _jackknife_se(A, q, G)
            scores.append(vendi_of_matrix(A, q))
        v = float(np.mean(scores))
        rows.append(DiversityRow(name, int(X.shape[0]), v, se, v - t * se, v + t * se))
    by = {r.name: r for r in rows}
    diffs = []
    for j, (a, b) in enumerate(pairs):
        p = obs = math.nan
        if n_perm > 0:
            A = similarity_matrix(np.vstack([first[a], first[b]]), kernel, ell)
            obs = vendi_of_matrix(A[:n, :n], q) - vendi_of_matrix(A[n:, n:], q)
            p = _perm_p(A, obs, q, n, n_perm, np.random.default_rng(streams[len(names) + j]))
        diffs.append(DiversityDifference(a, b, by[a].vendi - by[b].vendi, math.hypot(by[a].se, by[b].se), p, obs))
    return Diversity(tuple(rows), tuple(diffs), n, q, kernel, ell, level, n_perm, n_sub, G, seed_entropy=ss.entropy)
