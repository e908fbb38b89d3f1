"""Numba options come from mcref/kernels/_config.py only; cached kernels survive loky workers."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parents[1] / "mcref" / "kernels"


def test_no_hard_coded_numba_options():
    bad = []
    for f in KERNELS.glob("*.py"):
        if f.name == "_config.py":
            continue
        for i, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"@(njit|jit)\((?!\*\*NJIT)", line) or re.search(r"\b(fastmath|cache|parallel)\s*=", line):
                bad.append(f"{f.name}:{i}: {line.strip()}")
    assert not bad, "numba options must come from _config: " + "; ".join(bad)


def test_every_kernel_decorated_from_config():
    for f in KERNELS.glob("*.py"):
        text = f.read_text()
        for m in re.finditer(r"@njit(.*)\n", text):
            assert m.group(1).startswith("(**NJIT"), f"{f.name}: @njit{m.group(1)}"


def _work(seed):
    import mcref

    u = np.linspace(0.5, 2.0, 600)
    E = u * np.random.default_rng(seed).normal(size=600)
    b = mcref.bootstrap("ENCE", E, u, n_boot=128, n_bins=10, seed=seed)
    r = mcref.simulated_reference("CC", u, n_mc=64, seed=seed)
    return b.low, b.high, r.mean


def test_cached_kernels_under_loky_process_workers():
    # numba#4807: cached kernels once crashed process pools; the default cache must not
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=2, backend="loky")(delayed(_work)(s) for s in range(4))
    seq = [_work(s) for s in range(4)]
    assert par == seq


def test_no_public_name_shadows_a_module():
    # a public function named like its module hid the module (`import mcref.validate` gave the
    # function): such modules are private (_validate.py), as scipy.stats' _resampling.py
    import importlib
    import pkgutil
    import types

    import mcref

    known: set[str] = set()  # no exception left: every module whose function is public is private
    for info in pkgutil.iter_modules(mcref.__path__):
        module = importlib.import_module(f"mcref.{info.name}")
        assert isinstance(module, types.ModuleType)
        attr = getattr(mcref, info.name, None)
        if attr is not None and info.name not in known:
            assert isinstance(attr, types.ModuleType), f"mcref.{info.name} is a {type(attr).__name__}, not the module"


_CACHE_PROBE = """
import numpy as np
from mcref.kernels import rng
from mcref.kernels.rng import repeat_states
repeat_states(np.zeros((2, 4), dtype=np.uint64) + 1, 4, 0, 8)
s = rng.split_blocks.stats
print(rng.__file__, s.cache_hits.get(rng.split_blocks.signatures[0], 0), sum(s.cache_misses.values()))
"""


def test_kernels_cached_from_an_installed_wheel(tmp_path):
    """Issue 41: numba's on-disk cache works from a wheel installed outside the checkout, as it does
    from an editable install: the first process compiles a kernel and writes it, a second process
    loads it (a cache hit, no miss)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(root)]
    if subprocess.run([*build, "--no-build-isolation"], capture_output=True, timeout=300).returncode != 0:
        subprocess.run(build, check=True, capture_output=True, timeout=300)  # an isolated build (setuptools from PyPI)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(site),
                    *map(str, wheels.glob("mcref-*.whl"))], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "MCREF_NUMBA_CACHE", "NUMBA_DISABLE_JIT")}
    env["PYTHONPATH"] = str(site)

    def probe() -> tuple[str, int, int]:
        r = subprocess.run([sys.executable, "-c", _CACHE_PROBE], env=env, cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, check=True)
        path, hits, misses = r.stdout.split()
        return path, int(hits), int(misses)

    first, second = probe(), probe()
    assert first[0].startswith(str(site)) and second[0] == first[0]  # the installed copy, not the checkout
    assert first[1:] == (0, 1)  # compiled (and written) by the first process
    assert second[1:] == (1, 0)  # loaded from disk by the second
    assert any(site.rglob("rng.split_blocks-*.nbi"))  # beside the installed kernels (numba's __pycache__)
