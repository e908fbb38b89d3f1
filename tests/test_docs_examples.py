"""Every Python block of README.md and docs/guide.md runs as written.

Blocks of one file run in order in one namespace (a later block may use names from an
earlier one), in a temporary directory. A block preceded by the line
``<!-- docs-test: slow (why) -->`` runs only with ``-m slow``; one preceded by
``<!-- docs-test: skip (why) -->`` needs what a test machine has not (a SLURM cluster).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"(?:<!-- docs-test: (slow|skip) \((.*?)\) -->\n)?```python\n(.*?)```", re.S)


def blocks(path: Path) -> list[tuple[int, str | None, str, str]]:
    """``(line, mark, why, code)`` of every Python block of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 1, m.group(1), m.group(2) or "", m.group(3))
            for m in _BLOCK.finditer(text)]


def test_blocks_are_found():
    assert len(blocks(ROOT / "README.md")) >= 5 and len(blocks(ROOT / "docs" / "guide.md")) >= 8


def _run(path: Path, tmp_path, monkeypatch, include_slow: bool) -> int:
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    if path.name == "guide.md":  # the guide reads a CSV of the user's: write one
        import numpy as np

        rng = np.random.default_rng(0)
        y = rng.normal(size=300)
        sigma = rng.uniform(0.5, 2.0, 300)
        pred = y + sigma * rng.normal(size=300)
        (tmp_path / "preds.csv").write_text("y,y_pred,error,sigma,var\n" + "".join(
            f"{a},{b},{a - b},{s},{s * s}\n" for a, b, s in zip(y, pred, sigma)))
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for line, mark, why, code in blocks(path):
        if mark == "skip" or (mark == "slow" and not include_slow):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # examples may show warnings on purpose (few replicates, ties)
            try:
                exec(compile(code, f"{path.name}:{line}", "exec"), namespace)  # noqa: S102 - our own docs
            except Exception as exc:  # pragma: no cover - the failure this test is for
                raise AssertionError(f"{path.name}, block at line {line} fails: {type(exc).__name__}: {exc}") from exc
        ran += 1
    return ran


@pytest.mark.parametrize("name", ["README.md", "docs/guide.md"])
def test_every_block_runs(name, tmp_path, monkeypatch):
    assert _run(ROOT / name, tmp_path, monkeypatch, include_slow=False) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["README.md", "docs/guide.md"])
def test_every_block_runs_slow_ones_too(name, tmp_path, monkeypatch):
    assert _run(ROOT / name, tmp_path, monkeypatch, include_slow=True) > 0
