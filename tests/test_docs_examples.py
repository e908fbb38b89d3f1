"""The documentation runs as written.

Every Python block of docs/guide.md and of the guide pages docs/guide/*.md runs, blocks of
one file in order in one namespace (a later block may use names from an earlier one), in a
temporary directory. A block preceded by the line ``<!-- docs-test: slow (why) -->`` runs
only with ``-m slow``; one preceded by ``<!-- docs-test: skip (why) -->`` needs what a test
machine has not (a SLURM cluster).

README.md is the front door: its Python blocks *and* the ``mcref`` commands of its shell
blocks run, in the order of the file (the commands read the files the Python blocks wrote),
each command with small replicate counts appended (:data:`FAST`: the defaults take minutes);
its two quick-start commands are the demo and the command ``.ci/run`` runs.
"""

from __future__ import annotations

import glob
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"(?:<!-- docs-test: (slow|skip) \((.*?)\) -->\n)?```python\n(.*?)```", re.S)
_ANY_BLOCK = re.compile(r"```(python|bash)\n(.*?)```", re.S)
#: the guide pages with Python blocks (the README is run by test_readme_runs_as_written)
PAGES = ["docs/guide.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "guide").glob("*.md"))]
#: options appended to a README command so that it runs in seconds (a later option wins in argparse)
FAST = {
    "demo": ["--boot", "100", "--mc", "100", "--n-jobs", "1", "--no-progress"],
    "validate": ["--boot", "300", "--mc", "300"],
    "bench": ["--boot", "200", "--mc", "200", "--n-jobs", "1", "--no-progress"],
    "study": ["--n-jobs", "1", "--no-progress"],
}


def blocks(path: Path) -> list[tuple[int, str | None, str, str]]:
    """``(line, mark, why, code)`` of every Python block of ``path``."""
    text = path.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 1, m.group(1), m.group(2) or "", m.group(3))
            for m in _BLOCK.finditer(text)]


def readme_steps() -> list[tuple[int, str, str]]:
    """``(line, "python" or "mcref", code or command)`` of the README, in order: its Python
    blocks, and the ``mcref`` commands of its shell blocks (a comment and a ``pip`` step
    before ``&&`` left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    steps = []
    for m in _ANY_BLOCK.finditer(text):
        line = text[:m.start()].count("\n") + 1
        if m.group(1) == "python":
            steps.append((line, "python", m.group(2)))
            continue
        for cmd in m.group(2).splitlines():
            for part in cmd.split("#")[0].split("&&"):
                if part.strip().startswith("mcref "):
                    steps.append((line, "mcref", part.strip()))
    return steps


def test_blocks_are_found():
    assert len(blocks(ROOT / "docs" / "guide.md")) >= 8 and len(blocks(ROOT / "docs" / "guide" / "toolbox.md")) >= 8
    kinds = [k for _, k, _ in readme_steps()]
    assert kinds.count("python") >= 3 and kinds.count("mcref") >= 5


def _quiet_plots():
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    import matplotlib

    matplotlib.use("Agg")


def _exec(code: str, where: str, namespace: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # examples may show warnings on purpose (few replicates, ties)
        try:
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - our own docs
        except Exception as exc:  # pragma: no cover - the failure this test is for
            raise AssertionError(f"{where} fails: {type(exc).__name__}: {exc}") from exc


def _run(path: Path, tmp_path, monkeypatch, include_slow: bool) -> int:
    _quiet_plots()
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
        _exec(code, f"{path.name}:{line}", namespace)
        ran += 1
    return ran


@pytest.mark.parametrize("name", [p for p in PAGES if blocks(ROOT / p)])
def test_every_block_runs(name, tmp_path, monkeypatch):
    assert _run(ROOT / name, tmp_path, monkeypatch, include_slow=False) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["README.md", *[p for p in PAGES if blocks(ROOT / p)]])
def test_every_block_runs_slow_ones_too(name, tmp_path, monkeypatch):
    assert _run(ROOT / name, tmp_path, monkeypatch, include_slow=True) > 0


def test_readme_runs_as_written(tmp_path, monkeypatch, capsys):
    """Issue 34: every code block of the README runs: its Python as written, its ``mcref``
    commands (shell globs expanded as a shell would) with small replicate counts appended,
    each exiting 0; ``mcref bench runs/*.csv --html report/`` reads the README's own files.
    Issue 40: each Python block runs on its own, in a fresh namespace (a reader copies one
    block, not the page): no block needs a name an earlier block defined. The blocks share the
    folder, for the commands that read the files they write."""
    from mcref.cli import main

    _quiet_plots()
    monkeypatch.chdir(tmp_path)
    ran = []
    for line, kind, code in readme_steps():
        if kind == "python":
            _exec(code, f"README.md:{line}", {"__name__": "__docs__"})
            ran.append("python")
            continue
        argv = [a for tok in shlex.split(code)[1:] for a in (sorted(glob.glob(tok)) or [tok] if "*" in tok else [tok])]
        rc = main(argv + FAST.get(argv[0], []))
        out = capsys.readouterr()
        assert rc == 0, f"README.md:{line}: `{code}` exits {rc}: {out.err[-2000:]}"
        ran.append(argv[0])
    assert {"demo", "validate", "bench", "study"} <= set(ran)
    assert ran.count("python") == len(re.findall(r"^```python$", (ROOT / "README.md").read_text(), re.M))
    assert (tmp_path / "report" / "index.html").is_file()


def _quick_start() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [m.group(2).strip() for m in _ANY_BLOCK.finditer(section)]


def test_readme_is_a_front_door_and_ci_runs_its_test_command():
    """≤ 250 lines with a figure of the project; the quick start: the demo on a bare install,
    then the test command, which .ci/run calls exactly (after its other setup)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 250
    figures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert figures and all((ROOT / f).is_file() for f in figures)
    demo, tests = _quick_start()
    assert demo == "pip install -e . && mcref demo"
    assert tests == 'pip install -e ".[dev]" && python -m pytest'
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in [ln.strip() for ln in ci]
    for link in re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]+)", text):  # the pages it links exist
        assert (ROOT / link).is_file(), link


def test_demo_needs_only_what_pip_install_dot_installs(tmp_path):
    """``pip install -e .`` installs the core dependencies only: the demo runs with the
    optional ones (matplotlib, pyarrow, scikit-learn, Dask, the test tools) made unimportable."""
    import tomllib

    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    optional = ["matplotlib", "pyarrow", "sklearn", "dask", "distributed", "hypothesis"]
    assert not [d for d in core if re.split(r"[<>=\[ ]", d)[0] in optional]
    code = ("import sys\n"
            f"for m in {optional!r}: sys.modules[m] = None  # ImportError on import\n"
            "from mcref.cli import main\n"
            "sys.exit(main(['demo', '--boot', '100', '--mc', '100', '--n-jobs', '1', '--no-progress']))\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    import os

    env.update({k: v for k, v in os.environ.items() if k.startswith(("NUMBA", "HOME", "MCREF"))})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "9 data sets in" in r.stdout and "QM9_E" in r.stdout
