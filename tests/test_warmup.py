"""mcref.warmup: validate's kernel groups compiled side by side in worker processes on a cold
numba cache (docs/methods.md, "Numba options and caching")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mcref
from mcref import warmup
from mcref.kernels.fastrank import BUCKET_MIN_M
from mcref.kernels._config import CACHE

ROOT = Path(__file__).resolve().parents[1]
needs_cache = pytest.mark.skipif(not CACHE, reason="numba's on-disk cache is off (MCREF_NUMBA_CACHE=0)")


def _run(code: str, cache_dir: Path, **env) -> subprocess.CompletedProcess:
    e = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT), **env}
    e.pop("MCREF_NUMBA_CACHE", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                          timeout=600)


def test_n_workers_follows_joblib(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert [warmup.n_workers(n) for n in (-1, -2, -7, -8, 0, 1, 2, 5)] == [4, 4, 2, 1, 0, 1, 2, 4]
    assert warmup.n_workers(-1, 6) == 6 and warmup.n_workers(3, 6) == 3
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert warmup.n_workers(-1) == 1 and mcref.precompile(force=True) is None  # one core: nothing side by side


def test_groups_and_bad_name():
    assert set(warmup.GROUPS) == {"bootstrap", "jackknife", "references", "scale"}
    assert set(warmup.DEPENDENT_GROUPS) == {"bootstrap-units", "references-units"}
    with pytest.raises(ValueError, match="`name` must be one of bootstrap, jackknife, references, scale, "
                                         "bootstrap-units, references-units, got 'x'"):
        warmup.compile_group("x")


def test_shares_keep_families_together_on_few_workers():
    """One group a worker when there are workers enough; on as few workers as families, whole
    families (the kernels a family's groups share compile once); in between, longest processing
    time first."""
    main = list(warmup.GROUPS)
    every = main + list(warmup.DEPENDENT_GROUPS)
    boot, refs = {"bootstrap", "jackknife", "bootstrap-units"}, {"references", "scale", "references-units"}
    assert warmup._shares(main, 4) == [["references"], ["bootstrap"], ["jackknife"], ["scale"]]
    assert warmup._shares(main, 2) == [["bootstrap", "jackknife"], ["references", "scale"]]  # longest first
    assert [set(s) for s in warmup._shares(every, 2)] == [boot, refs]
    assert len(warmup._shares(every, 8)) == 6 and len(warmup._shares(every, 3)) == 3
    for n in (1, 2, 3, 4, 5, 6):
        shares = warmup._shares(every, n)
        assert sorted(g for share in shares for g in share) == sorted(every) and len(shares) == min(n, 6)
    loads = [sum(warmup._SECONDS[g] for g in share) for share in warmup._shares(every, 3)]
    assert max(loads) <= 0.5 * sum(warmup._SECONDS[g] for g in every)  # three workers: no worse than two families


def test_needed_counts_the_cold_groups_a_call_runs(monkeypatch):
    """Workers start for two cold groups or more (one compiles as fast in the calling process);
    ``force`` counts every group of the call, ``dependent`` adds the unit groups."""
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.delenv("MCREF_PRECOMPILE", raising=False)
    monkeypatch.setattr("mcref.kernels._config.CACHE", True)
    cold = {"bootstrap-units"}
    monkeypatch.setattr(warmup, "cold_groups", lambda dependent=False, large=False: tuple(
        g for g in warmup._groups(dependent) if g in cold))
    assert not warmup.needed() and not warmup.needed(dependent=True)  # one cold group: in the caller
    assert warmup.needed(force=True) and warmup.needed(dependent=True, force=True)
    cold.add("references-units")
    assert not warmup.needed() and warmup.needed(dependent=True) and not warmup.needed(1, dependent=True)
    assert set(warmup._groups(True)) == set(warmup.GROUPS + warmup.DEPENDENT_GROUPS)
    assert warmup._groups(False) == ("references", "bootstrap", "jackknife", "scale")  # the longest first


def test_the_caller_compiles_the_longest_share_and_workers_the_rest(monkeypatch):
    """precompile: every share compiles once, the longest (by the groups' measured seconds) in the
    calling process, the others submitted to as many workers as there are other shares."""
    import threading

    import joblib.externals.loky as loky

    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    monkeypatch.delenv("MCREF_PRECOMPILE", raising=False)
    monkeypatch.setattr("mcref.kernels._config.CACHE", True)
    monkeypatch.setattr(warmup, "cold_groups", lambda dependent=False, large=False: warmup._groups(dependent, large))
    ran, workers = [], []
    monkeypatch.setattr(warmup, "_compile_share", lambda share: ran.append(
        (tuple(share), threading.current_thread() is threading.main_thread())) or 0.0)

    class Done:
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    class Executor:  # runs a submitted share at once, off the main thread's record
        def submit(self, fn, share):
            t = threading.Thread(target=fn, args=(share,))
            t.start()
            t.join()
            return Done(None)

    monkeypatch.setattr(loky, "get_reusable_executor", lambda max_workers: workers.append(max_workers) or Executor())
    assert warmup.precompile() is not None
    shares = warmup._shares(warmup._groups(False), 3)
    assert workers == [len(shares) - 1] == [2]
    assert sorted(share for share, _ in ran) == sorted(tuple(s) for s in shares)  # each share once
    here = [share for share, main in ran if main]
    longest = max(shares, key=lambda s: sum(warmup._SECONDS[g] for g in s))
    assert here == [tuple(longest)] == [("references",)]


@needs_cache
def test_warm_cache_is_not_cold_and_precompile_does_nothing(monkeypatch):
    for g in warmup.GROUPS:  # loads (or compiles) both groups in this process: the cache now holds them
        assert warmup.compile_group(g) >= 0.0
    assert not warmup.cache_is_cold()
    assert mcref.precompile() is None
    monkeypatch.setenv("MCREF_PRECOMPILE", "0")
    assert mcref.precompile(force=True) is None


@needs_cache
def test_an_empty_cache_is_cold(tmp_path):
    r = _run("from mcref.warmup import cache_is_cold; print(cache_is_cold())", tmp_path / "empty")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"


@needs_cache
def test_the_cli_precompiles_only_a_cold_cache(monkeypatch, capsys):
    from mcref.cli import _common

    calls = []
    monkeypatch.setattr(warmup, "precompile", lambda n_jobs=-1, dependent=False, large=False:
                        calls.append((n_jobs, dependent) + (("large",) if large else ())) or 12.0)
    monkeypatch.setattr(warmup, "cold_groups", lambda dependent=False, large=False: ())
    _common.precompile_if_cold()
    _common.precompile_if_cold(dependent=True)
    assert calls == [] and capsys.readouterr().err == ""
    monkeypatch.setattr(warmup, "cold_groups", lambda dependent=False, large=False: warmup._groups(dependent, large))
    _common.precompile_if_cold(backend="dask")  # the workers are elsewhere: nothing to share
    _common.precompile_if_cold(1)  # one process: nothing to do side by side (and nothing printed)
    assert calls == [] and capsys.readouterr().err == ""
    _common.precompile_if_cold(3)
    err = capsys.readouterr().err
    assert calls == [(3, False)] and "compiling the kernels in parallel processes" in err and "compiled in 12 s" in err
    _common.precompile_if_cold(dependent=True)  # validate --groups/--order: their kernels too
    assert calls[-1] == (-1, True)
    _common.precompile_if_cold(m=BUCKET_MIN_M - 1)  # below the bucketed ranks: the small sets' kernels
    assert calls[-1] == (-1, False)
    _common.precompile_if_cold(m=BUCKET_MIN_M)  # from there on: the references' kernel for that path
    assert calls[-1] == (-1, False, "large")
    monkeypatch.setenv("MCREF_PRECOMPILE", "0")
    _common.precompile_if_cold()
    assert len(calls) == 4


def test_large_swaps_the_references_group_for_its_large_set_variant():
    """``large`` (BUCKET_MIN_M rows or more) compiles the references (and with ``dependent`` those
    of units) on a set of that size, in place of the small ones, in the same family (they share
    the references' callees)."""
    small, large = warmup._groups(True), warmup._groups(True, large=True)
    swapped = {"references", "references-units"}
    assert swapped <= set(small) and not {g + "-large" for g in swapped} & set(small)
    assert set(large) == set(small) - swapped | {g + "-large" for g in swapped}
    assert set(warmup._groups(False, large=True)) == set(warmup.GROUPS) - {"references"} | {"references-large"}
    for g in swapped:
        assert warmup._FAMILY[g + "-large"] == warmup._FAMILY[g]
        assert warmup._MAIN[g + "-large"] == warmup._MAIN[g]


@needs_cache
def test_after_precompile_a_first_validate_loads_its_main_kernels(tmp_path):
    """On a cold cache (a new NUMBA_CACHE_DIR), precompile compiles the groups in worker processes;
    a first validate in the calling process then loads the bootstrap's and the references' kernels
    from the cache instead of compiling them (numba's compile events: a cache load fires none).
    With ``dependent=True`` the groups of dependent rows compile too: a validate with groups of
    unequal sizes then compiles none of the unit kernels."""
    code = """
        import sys, warnings
        from numba.core import event
        names = []
        class L(event.Listener):
            def on_start(self, e):
                names.append(getattr(e.data["dispatcher"], "py_func", None).__qualname__)
            def on_end(self, e):
                pass
        import numpy as np
        import mcref
        seconds = mcref.precompile(2, dependent=True)
        event.register("numba:compile", L())
        rng = np.random.default_rng(0)
        u = rng.lognormal(-1.0, 0.4, 2000)
        warnings.simplefilter("ignore")
        E = u * rng.normal(size=2000)
        mcref.validate(E, u, seed=1, n_boot=1000, n_mc=1000)
        g = rng.permutation(np.repeat(np.arange(250), np.r_[np.full(150, 6), np.full(100, 11)]))
        mcref.validate(E, u, seed=1, n_boot=1000, n_mc=1000, groups=g)
        print(seconds is not None, len(names), ",".join(sorted(set(names))))
    """
    r = _run(code, tmp_path / "cold")
    assert r.returncode == 0, r.stderr[-3000:]
    ran, n, compiled = r.stdout.split(" ", 2)
    compiled = set(compiled.strip().split(",")) - {""}
    assert ran == "True"
    main = {"boot_kernel", "mc_chunk_kernel", "jack_kernel", "jack_mean_parts", "jack_bin_sums", "resampled_sums",
            "t_power_sums", "t_loglik_sums", "boot_units_kernel", "jack_units_kernel", "mc_levels_kernel",
            "t_cluster_sums", "t_rce_cluster_sums"}
    assert not main & compiled, compiled
    assert int(n) < 40, compiled  # a cold validate compiles ~156 signatures


def test_the_large_dependent_set_has_groups_of_unequal_sizes():
    """``references-units-large`` runs the u-level exchange (groups of unequal sizes) on a set of
    BUCKET_MIN_M rows, every row in a group."""
    import numpy as np

    E, u, g = warmup._dependent_data(large=True)
    assert E.size == u.size == g.size == BUCKET_MIN_M
    sizes = np.bincount(g)
    assert {5, 10} <= set(sizes.tolist()) and sizes.min() >= 1
    small = warmup._dependent_data()
    assert len(set(np.bincount(small[2]).tolist())) == 2  # the small set's groups: 10 and 5 rows
