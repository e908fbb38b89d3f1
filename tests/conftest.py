"""Shared fixtures: small calibrated data sets, tied-u / tied-|E| data sets, QM9_E."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

# Hypothesis (tests/test_invariants.py): "ci", the default, is fixed and fast (derandomized:
# the same examples on every run, so CI is reproducible); "thorough" draws many more
# (pytest --hypothesis-profile=thorough tests/test_invariants.py)
try:
    from hypothesis import HealthCheck, settings

    _SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
    settings.register_profile("ci", max_examples=12, derandomize=True, deadline=None, print_blob=True,
                              suppress_health_check=_SLOW_OK)
    settings.register_profile("thorough", max_examples=200, deadline=None, print_blob=True,
                              suppress_health_check=_SLOW_OK)
    settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is in the dev extra
    pass

# tests/naive.py is imported as ``naive`` by the test modules
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(autouse=True)
def _threads_at_any_size(monkeypatch):
    """The tests' sets are small: without this, every ``over_tasks`` phase would run below
    ``mcref.parallel.MIN_THREADED_WORK`` in the calling thread, and the tests that compare 1 and 2
    threads would compare one thread with itself. ``tests/test_parallel_threshold.py`` checks the
    threshold itself."""
    import mcref.parallel

    monkeypatch.setattr(mcref.parallel, "MIN_THREADED_WORK", 0)
    monkeypatch.delenv("MCREF_THREAD_MEMORY", raising=False)  # a bound set on the machine would hide threads


def calibrated(m: int, seed: int, u_dist: str = "uniform") -> tuple[np.ndarray, np.ndarray]:
    """Calibrated data E = u·N(0, 1) with u uniform on [0.5, 2] or lognormal(0, 0.5)."""
    rng = np.random.default_rng(seed)
    if u_dist == "uniform":
        u = rng.uniform(0.5, 2.0, m)
    elif u_dist == "lognormal":
        u = rng.lognormal(0.0, 0.5, m)
    else:  # pragma: no cover - test helper
        raise ValueError(u_dist)
    return u * rng.normal(size=m), u


def tied_u(m: int, seed: int, n_distinct: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """QM9-like: u takes only ``n_distinct`` values (long runs of ties in u)."""
    rng = np.random.default_rng(seed)
    levels = np.sort(rng.uniform(0.2, 3.0, n_distinct))
    u = rng.choice(levels, m)
    return u * rng.normal(size=m), u


def tied_E(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """|E| has many ties (E rounded to 0.1, both signs), u continuous."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.5, 2.0, m)
    E = np.round(u * rng.normal(size=m), 1)
    E[E == 0.0] = 0.1  # no exact zero errors (keeps every bin's ZMS_b > 0)
    return E, u


def tied_both(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ties in u and in |E| at once."""
    E, u = tied_u(m, seed, n_distinct=5)
    E = np.round(E, 1)
    E[E == 0.0] = -0.1
    return E, u


#: name -> (generator, M, seed); M covers divisible / non-divisible by the bin counts used
CASES = {
    "cal300": (calibrated, 300, 1),
    "cal457_lognormal": (lambda m, s: calibrated(m, s, "lognormal"), 457, 2),
    "tied_u": (tied_u, 361, 3),
    "tied_E": (tied_E, 330, 4),
    "tied_both": (tied_both, 403, 5),
}


def make_case(name: str) -> tuple[np.ndarray, np.ndarray]:
    gen, m, seed = CASES[name]
    return gen(m, seed)


@pytest.fixture(params=list(CASES))
def case(request):
    """(name, E, u) for each small data set of CASES."""
    E, u = make_case(request.param)
    return request.param, E, u


@pytest.fixture(scope="session")
def gen():
    """The data generators of this module, for tests that need their own sizes."""
    from types import SimpleNamespace

    return SimpleNamespace(calibrated=calibrated, tied_u=tied_u, tied_E=tied_E, tied_both=tied_both,
                           make_case=make_case, cases=tuple(CASES))


@pytest.fixture
def cal_data():
    """A calibrated data set, M = 500."""
    return calibrated(500, 11)


@pytest.fixture(scope="session")
def qm9():
    """The packaged QM9_E set (13 885 points, 135 distinct u), or skip if unavailable."""
    datasets = pytest.importorskip("mcref.datasets")
    try:
        ds = datasets.load("QM9_E")
    except (ValueError, OSError, KeyError) as exc:  # pragma: no cover - depends on packaging
        pytest.skip(f"QM9_E not loadable: {exc}")
    return np.asarray(ds.E, dtype=float), np.asarray(ds.u, dtype=float)


@pytest.fixture()
def small_csv(tmp_path):
    """A calibrated CSV file of 300 rows, columns E and u (the command line's tests)."""
    rng = np.random.default_rng(0)
    u = rng.uniform(0.5, 2.0, 300)
    E = u * rng.normal(size=300)
    p = tmp_path / "small.csv"
    p.write_text("E,u\n" + "".join(f"{a},{b}\n" for a, b in zip(E, u)))
    return p
