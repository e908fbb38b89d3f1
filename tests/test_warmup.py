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
    assert [warmup.n_workers(n) for n in (-1, -2, -7, -8, 0, 1, 2, 5)] == [2, 2, 2, 1, 0, 1, 2, 2]
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert warmup.n_workers(-1) == 1 and mcref.precompile(force=True) is None  # one core: nothing side by side


def test_groups_and_bad_name():
    assert set(warmup.GROUPS) == {"bootstrap", "references"}
    with pytest.raises(ValueError, match="`name` must be one of bootstrap, references, got 'x'"):
        warmup.compile_group("x")


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
    monkeypatch.setattr(warmup, "precompile", lambda n_jobs=-1: calls.append(n_jobs) or 12.0)
    monkeypatch.setattr(warmup, "cache_is_cold", lambda: False)
    _common.precompile_if_cold()
    assert calls == [] and capsys.readouterr().err == ""
    monkeypatch.setattr(warmup, "cache_is_cold", lambda: True)
    _common.precompile_if_cold(backend="dask")  # the workers are elsewhere: nothing to share
    _common.precompile_if_cold(1)  # one process: nothing to do side by side (and nothing printed)
    assert calls == [] and capsys.readouterr().err == ""
    _common.precompile_if_cold(3)
    err = capsys.readouterr().err
    assert calls == [3] and "compiling the kernels in parallel processes" in err and "compiled in 12 s" in err
    monkeypatch.setenv("MCREF_PRECOMPILE", "0")
    _common.precompile_if_cold()
    assert calls == [3]


@needs_cache
def test_after_precompile_a_first_validate_loads_its_main_kernels(tmp_path):
    """On a cold cache (a new NUMBA_CACHE_DIR), precompile compiles the groups in worker processes;
    a first validate in the calling process then loads the bootstrap's and the references' kernels
    from the cache instead of compiling them (numba's compile events: a cache load fires none)."""
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
        seconds = mcref.precompile(2)
        event.register("numba:compile", L())
        rng = np.random.default_rng(0)
        u = rng.lognormal(-1.0, 0.4, 2000)
        warnings.simplefilter("ignore")
        mcref.validate(u * rng.normal(size=2000), u, seed=1, n_boot=1000, n_mc=1000)
        print(seconds is not None, len(names), ",".join(sorted(set(names))))
    """
    r = _run(code, tmp_path / "cold")
    assert r.returncode == 0, r.stderr[-3000:]
    ran, n, compiled = r.stdout.split(" ", 2)
    compiled = set(compiled.strip().split(",")) - {""}
    assert ran == "True"
    main = {"boot_kernel", "mc_chunk_kernel", "jack_binned_kernel", "jack_mean_kernel", "resampled_sums",
            "t_power_sums", "t_loglik_sums"}
    assert not main & compiled, compiled
    assert int(n) < 40, compiled  # a cold validate compiles ~156 signatures
