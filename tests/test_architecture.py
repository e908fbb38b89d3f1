"""The shape of the package, measured on its source (docs/architecture.md, "Layers").

Every module of mcref/ is parsed with :mod:`ast` (nothing is imported), and its imports —
those at the top and those inside functions alike — are checked against the rules of the
architecture page:

- no import cycle between modules;
- no module imports the package face ``mcref`` (``mcref/__init__.py``);
- no private name (``_x``, not a dunder) imported from another module: a private *module*
  (``from ._validate import validate``, ``from . import _progress``) is fine, a private
  *symbol* of another module (``from .calibration import _as_cases``) is not; a name that
  two modules share gets a non-underscore name in the lower one;
- no upward import: each module imports only from its own layer or the layers below
  (:data:`LAYERS`, the table of docs/architecture.md);
- no module over :data:`MAX_MODULE_LINES` lines, no function body over
  :data:`MAX_BODY_LINES` lines (its docstring aside).

Each test lists the offenders, so a failure says where to look.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "mcref"
PACKAGE = "mcref"
MAX_MODULE_LINES = 800
MAX_BODY_LINES = 110

#: the layers of docs/architecture.md, bottom up: a module is in the layer of the longest entry
#: that names it or a package holding it (``mcref.kernels`` holds ``mcref.kernels.stats``)
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("conventions", ("mcref.core", "mcref.core._checks", "mcref.core._warnings", "mcref.core._dot",
                     "mcref._version", "mcref.kernels._config")),
    ("kernels", ("mcref.kernels",)),
    ("numerical API", ("mcref.core._hd", "mcref.binning", "mcref.core._prepared", "mcref.core._dependence",
                       "mcref.stats", "mcref.shape", "mcref.resampling", "mcref.generative", "mcref.reference",
                       "mcref.exact", "mcref.intervals", "mcref.calibration", "mcref.scores", "mcref.diagnostics",
                       "mcref._distfit", "mcref.parallel", "mcref.core._progress", "mcref.synthetic",
                       "mcref.core._input", "mcref.datasets", "mcref.data", "mcref.features", "mcref._skce")),
    ("reports", ("mcref.report", "mcref.plots")),
    ("verdict", ("mcref.verdict",)),
    ("workflows", ("mcref.workflows", "mcref.store", "mcref.studies", "mcref.predictive", "mcref.sklearn",
                   "mcref.samples", "mcref.posterior")),
    ("interfaces", ("mcref.cli", "mcref", "mcref.__main__")),
)


@lru_cache(maxsize=None)
def modules() -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the package: dotted name -> (path, syntax tree)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = (path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return out


def _owner(name: str) -> str | None:
    """The module of the package that defines the dotted ``name`` (the longest known prefix)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, str | None, int]]:
    """``(target module, imported name or None, line)`` for every import of ``module`` that
    lands inside the package; ``from pkg import sub`` of a submodule gives the submodule."""
    mods = modules()
    path, tree = mods[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    out.append((_owner(alias.name), None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not (source == PACKAGE or source.startswith(PACKAGE + ".")):
                continue
            if source not in mods:
                raise AssertionError(f"{module}:{node.lineno} imports from {source}, which is not a module")
            for alias in node.names:
                if f"{source}.{alias.name}" in mods:  # a submodule
                    out.append((f"{source}.{alias.name}", None, node.lineno))
                else:
                    out.append((_owner(source), alias.name, node.lineno))
    return [(t, n, ln) for t, n, ln in out if t is not None and t != module]


def layer_of(module: str) -> int:
    best, level = -1, None
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if (module == n or module.startswith(n + ".")) and len(n) > best:
                best, level = len(n), i
    if level is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and to docs/architecture.md")
    return level


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_every_module_has_a_layer():
    for m in modules():
        layer_of(m)


def test_no_import_of_the_package_face():
    bad = [f"{m}:{ln}" for m in modules() if m != PACKAGE for t, _, ln in imports(m) if t == PACKAGE]
    assert not bad, f"modules importing the package face `mcref`: {bad}"


def test_no_private_name_imported_across_modules():
    bad = [f"{m}:{ln} imports {t}.{n}" for m in modules() for t, n, ln in imports(m) if n and _is_private(n)]
    assert not bad, f"private names imported from another module: {bad}"


def test_no_upward_import():
    bad = []
    for m in modules():
        for t, n, ln in imports(m):
            if layer_of(t) > layer_of(m):
                bad.append(f"{m}:{ln} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})")
    assert not bad, f"upward imports: {bad}"


def cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), the package face
    left out (it imports everything, and nothing may import it)."""
    graph = {m: sorted({t for t, _, _ in imports(m) if t != PACKAGE}) for m in modules() if m != PACKAGE}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    assert not cycles(), f"import cycles: {cycles()}"


def test_no_module_over_the_line_limit():
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, (p, _) in modules().items()}
    bad = {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not bad, f"modules over {MAX_MODULE_LINES} lines: {bad}"


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body from its first statement after the docstring to its end."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return 0
    return body[-1].end_lineno - body[0].lineno + 1


def test_no_function_body_over_the_line_limit():
    bad = {}
    for m, (_, tree) in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > MAX_BODY_LINES:
                bad[f"{m}.{node.name}:{node.lineno}"] = body_lines(node)
    assert not bad, f"function bodies over {MAX_BODY_LINES} lines: {bad}"


@pytest.mark.parametrize("source,expect", [
    ("from .calibration import _as_cases\n", "private"),
    ("import mcref\n", "face"),
    ("from .. import plots\n", "upward"),
])
def test_the_checks_can_fail(source, expect, monkeypatch):
    """The rules catch what they forbid: a fake module of the numerical layer that imports a
    private name, the package face, or a figure module."""
    fake = dict(modules())
    fake_name = "mcref.kernels.fake_offender" if expect == "upward" else "mcref.fake_offender"
    fake[fake_name] = (ROOT / "fake_offender.py", ast.parse(source))
    monkeypatch.setitem(globals(), "modules", lambda: fake)
    check = {"private": test_no_private_name_imported_across_modules, "face": test_no_import_of_the_package_face,
             "upward": test_no_upward_import}[expect]
    with pytest.raises(AssertionError, match=fake_name.replace(".", r"\.")):
        check()


def test_the_public_plots_name_holds_every_figure():
    """``mcref.plots`` (the public name of ``mcref.report.plots``) offers every ``plot_*`` function
    of the module that holds them."""
    import mcref.plots
    import mcref.report.plots as impl

    figures = {n for n in dir(impl) if n.startswith("plot_") and callable(getattr(impl, n))}
    assert figures <= set(mcref.plots.__all__) and all(getattr(mcref.plots, n) is getattr(impl, n) for n in figures)
