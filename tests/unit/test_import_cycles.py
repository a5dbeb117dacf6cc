"""No import cycles among Askbase's own modules, counting every import the source contains.

Module-level imports, imports inside functions and imports under `if TYPE_CHECKING:` all count:
a function-level or type-only import that breaks a cycle at run time still ties the modules
together, so the layering it hides is exactly what this test is for. The modules are parsed,
not imported, so the test sees the code as written and needs nothing else.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.paths import ROOT

PACKAGES = ("core", "bot")


def modules(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Dotted module name → source file, for every .py file under the packages."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The known modules `name` imports anywhere in its source (the deepest known module of each
    imported name: `from core.values import fold` depends on core.values, `from core import x`
    on core.x when that is a module)."""

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            deps.update(r for alias in node.names if (r := resolve(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                target = resolve(f"{base}.{alias.name}") or resolve(base)
                if target:
                    deps.add(target)
    deps.discard(name)
    return deps


def import_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    known = modules(root, packages)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One concrete cycle (a → b → … → a) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_loop(graph, component) for component in components]


def _loop(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """The shortest way from the component's first module back to itself, inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no loop through {start}")  # a strongly connected component has one


def describe(found: list[list[str]]) -> str:
    return "\n".join(" → ".join(loop) for loop in found)


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """Askbase's own graph, parsed once for the tests that read it (none changes it)."""
    return import_graph(ROOT)


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles(package: str) -> None:
    graph = project_graph()
    assert any(name.startswith(f"{package}.") for name in graph)  # the walk found the package
    found = [loop for loop in cycles(graph) if any(m.split(".")[0] == package for m in loop)]
    assert not found, f"import cycles in {package}/:\n{describe(found)}"


def test_core_never_imports_the_adapters() -> None:
    graph = project_graph()
    into_bot = sorted(
        f"{m} imports {d}"
        for m, deps in graph.items()
        if m.split(".")[0] == "core"
        for d in deps
        if d.split(".")[0] == "bot"
    )
    assert not into_bot, "\n".join(into_bot)


def _package(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_cycle_hidden_in_a_function_or_under_type_checking_is_found_and_named(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/a.py": "from core.b import thing\n",
            "core/b.py": "def thing():\n    from core import c\n    return c\n",
            "core/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
            "core/d.py": "import core.a\n",  # imports into the cycle, is not part of it
            "bot/__init__.py": "",
            "bot/e.py": "from core.a import thing\n",
        },
    )
    found = cycles(import_graph(root))
    assert found == [["core.a", "core.b", "core.c", "core.a"]]
    assert describe(found) == "core.a → core.b → core.c → core.a"


def test_a_layered_package_has_no_cycle(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/values/__init__.py": "from core.values.lookup import find\n",
            "core/values/lookup.py": "from core.types import Match\n",
            "core/types.py": "",
            "core/database.py": "from core.values import find\n",
            "bot/__init__.py": "",
            "bot/cli.py": "from core.database import x\n",
        },
    )
    graph = import_graph(root)
    assert graph["core.database"] == {"core.values"}
    assert graph["core.values"] == {"core.values.lookup"}
    assert cycles(graph) == []
