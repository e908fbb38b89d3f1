"""Group calibration: ⟨Z²⟩ of random groups of points against the group size (the
adversarial group calibration and the validity of group ZMS).

Part of :mod:`mcref.diagnostics` (its names are imported from there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as st

from ..core._checks import dataset_args, check_choice, check_E_u, check_int, check_seed
from ..kernels.rng import chunk_states
from ._coverage import wilson_interval

__all__ = ["group_sizes", "GroupCalibration", "adversarial_group_calibration", "group_zms_validity"]


def group_sizes(m: int, min_size: int, max_size: float | None = None, *, start: int = 0) -> np.ndarray:
    """The group sizes of ErrViewLib's ``plotAGV`` (``start`` = 0) and ``plotAGVZMS`` (1):
    M/2^k, k = start … 20, kept between ``min_size`` and ``max_size`` (default M) and rounded half
    to even (R's ``round``)."""
    s = m / 2.0 ** np.arange(start, 21)
    hi = m if max_size is None else max_size
    return np.round(s[(s >= min_size) & (s <= hi)]).astype(np.int64)


def _group_means(values: np.ndarray, other: np.ndarray, n: int, count: int, state: np.ndarray):
    from ..kernels.subsets import subset_means

    a, b = np.empty(count), np.empty(count)
    subset_means(values, other, int(n), state, np.arange(values.size, dtype=np.int64), a, b)
    return a, b


@dataclass(frozen=True)
class GroupCalibration:
    """Calibration of random groups against their size (:func:`adversarial_group_calibration`,
    :func:`group_zms_validity`).

    Attributes
    ----------
    sizes : ndarray of int
        Group sizes n.
    fraction : ndarray
        n/M (the abscissa of ErrViewLib's plots).
    value, sd : ndarray
        The data's statistic per size and its standard deviation over the repeats.
    control, control_sd : ndarray
        The same for the control set ε ~ D (same groups).
    low, high, control_low, control_high : ndarray or None
        Wilson-cc 95 % intervals of fractions (:func:`group_zms_validity`), else None.
    stat : str
    dist : str
    n_rep : int
    """

    sizes: np.ndarray
    fraction: np.ndarray
    value: np.ndarray
    sd: np.ndarray
    control: np.ndarray
    control_sd: np.ndarray
    stat: str
    dist: str
    n_rep: int
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    control_low: np.ndarray | None = None
    control_high: np.ndarray | None = None


def _control_z(m: int, dist, rng_seed) -> tuple[np.ndarray, str]:
    from ..generative import get_distribution

    d = get_distribution(dist)
    return d.sample(m, seed=[int(v) for v in rng_seed.generate_state(4)]), d.label


@dataset_args
def adversarial_group_calibration(E, u, *, min_size: int = 50, n_groups: int = 100, n_rep: int = 500,
                                  stat: str = "max", dist: Any = "normal", seed=None) -> GroupCalibration:
    r"""Calibration error of the worst of random groups, against the group size (ErrViewLib
    ``plotAGV``, after the adversarial group calibration of Y. Chung et al., NeurIPS 2021).

    For each size n = M/2^k ≥ ``min_size`` (:func:`group_sizes`): ``n_rep`` times, draw
    ``n_groups`` groups of n points (without replacement) and take the statistic ``stat``
    (``"max"``, ``"mean"``, ``"median"`` or ``"q95"``, R's type-7 quantile) of their
    calibration errors abs(ln⟨Z²⟩_group); ``value`` and ``sd`` are the mean and standard
    deviation of that over the repeats. The control is the same on one draw Z_c ~ D of M points
    with the same groups: a calibrated set follows the control at every size; a gap opening at
    small n flags groups of points less calibrated than the average.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0); u = rng.uniform(0.5, 2, 1000); E = u * rng.normal(size=1000)
    >>> g = adversarial_group_calibration(E, u, n_rep=50, seed=1)
    >>> g.sizes.tolist(), bool(np.all(np.abs(g.value - g.control) < 4 * g.control_sd + 0.05))
    ([1000, 500, 250, 125, 62], True)
    """
    E, u = check_E_u(E, u, min_size=4)
    stat = check_choice(stat, "stat", ("max", "mean", "median", "q95"))
    n_groups = check_int(n_groups, "n_groups", minimum=1)
    n_rep = check_int(n_rep, "n_rep", minimum=2)
    min_size = check_int(min_size, "min_size", minimum=1)
    m = E.size
    sizes = group_sizes(m, min_size)
    if sizes.size == 0:
        raise ValueError(f"`min_size` ({min_size}) must not exceed the number of points ({m})")
    s_ctrl, s_groups = check_seed(seed).spawn(2)
    zc, label = _control_z(m, dist, s_ctrl)
    z2, zc2 = (E / u) ** 2, zc**2
    red = {"max": np.max, "mean": np.mean, "median": np.median,
           "q95": lambda a, axis: np.quantile(a, 0.95, axis=axis)}[stat]
    states = chunk_states(s_groups, sizes.size)
    out = np.empty((4, sizes.size))
    for i, n in enumerate(sizes):
        a, b = _group_means(z2, zc2, n, n_rep * n_groups, states[i])
        ta = red(np.abs(np.log(a)).reshape(n_rep, n_groups), axis=1)
        tb = red(np.abs(np.log(b)).reshape(n_rep, n_groups), axis=1)
        out[:, i] = ta.mean(), ta.std(ddof=1), tb.mean(), tb.std(ddof=1)
    return GroupCalibration(sizes, sizes / m, out[0], out[1], out[2], out[3], stat, label, n_rep)


@dataset_args
def group_zms_validity(E, u, *, min_size: int = 100, max_size: float | None = None, n_rep: int = 1000,
                       dist: Any = "normal", seed=None) -> GroupCalibration:
    r"""Fraction of random groups whose ⟨Z²⟩ interval contains 1, against the group size
    (ErrViewLib ``plotAGVZMS(method = "stud")``).

    For each size n = M/2^k, k ≥ 1, between ``min_size`` and ``max_size`` (default M/10;
    :func:`group_sizes`): ``n_rep`` groups of n points (without replacement), each with its
    Student 95 % interval ⟨Z²⟩ ± t_{0.975, n−1}·sd(Z²)/√n (:func:`lzms`, ``method="stud"``);
    ``value`` is the fraction that contains 1, with its Wilson-cc interval (``low``, ``high``).
    The control does the same on one draw Z_c ~ D (same groups); its fraction is ≈ 0.95 for
    n large enough. ``sd`` holds the binomial standard deviation √(f(1 − f)/n_rep).
    """
    E, u = check_E_u(E, u, min_size=4)
    n_rep = check_int(n_rep, "n_rep", minimum=2)
    min_size = check_int(min_size, "min_size", minimum=2)
    m = E.size
    sizes = group_sizes(m, min_size, m / 10 if max_size is None else float(max_size), start=1)
    if sizes.size == 0:
        raise ValueError(f"no group size M/2^k lies between `min_size` ({min_size}) and `max_size` "
                         f"({m / 10 if max_size is None else max_size}) for M = {m}")
    s_ctrl, s_groups = check_seed(seed).spawn(2)
    zc, label = _control_z(m, dist, s_ctrl)
    states = chunk_states(s_groups, sizes.size)
    res = []
    for i, n in enumerate(sizes):
        tq = st.t.ppf(0.975, n - 1)
        fr = []
        for z2 in ((E / u) ** 2, zc**2):
            st_i = states[i].copy()  # data and control: the same groups
            mu, m2 = _group_means(z2, z2 * z2, n, n_rep, st_i)
            h = tq * np.sqrt(np.maximum(m2 - mu * mu, 0.0) * n / (n - 1) / n)
            fr.append(np.mean((mu - h <= 1.0) & (1.0 <= mu + h)))
        res.append(fr)
    f = np.array(res)
    lo, hi = wilson_interval(f * n_rep, n_rep, correction=True)
    sd = np.sqrt(f * (1 - f) / n_rep)
    return GroupCalibration(sizes, sizes / m, f[:, 0], sd[:, 0], f[:, 1], sd[:, 1], "ZMS valid", label, n_rep,
                            lo[:, 0], hi[:, 0], lo[:, 1], hi[:, 1])
