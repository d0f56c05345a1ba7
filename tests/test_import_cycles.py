"""No two modules of the project import each other, directly or around a circle: a circle marks code in the wrong
place, whether it is closed at load (which of its modules imports first decides what the others see half-made) or
by an import inside a function that hides it. Imports for the type checker only (``TYPE_CHECKING``) do not count."""

import ast
import sys
from pathlib import Path

from conftest import ROOT

PACKAGES = ("firmware_bridge", "controller", "hal", "sim", "rfid_table")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules ``name`` imports, at load or inside a function (not those for the type checker)."""
    def project_module(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    class Imports(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
                self.generic_visit(ast.If(test=node.test, body=[], orelse=node.orelse))  # for the type checker only
            else:
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(filter(None, (project_module(alias.name) for alias in node.names)))

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") \
                if node.level else node.module
            for alias in node.names:  # ``from package import module`` imports the module
                found.add(project_module(f"{base}.{alias.name}") or project_module(base) or "")

    Imports().visit(ast.parse(path.read_text()))
    return found - {name, ""}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in graph:
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_a_circle_of_imports_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_modules_of_the_project_import_each_other():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    assert graph["firmware_bridge.messages"] >= {"firmware_bridge.codec", "firmware_bridge.message_types"}  # read
    assert cycles(graph) == []
