"""No import circle among smemviz's modules.

Every import counts, also those inside functions, except imports under
``TYPE_CHECKING`` and a module importing a package it lives in (its own
package's face, e.g. ``from .. import hardware`` resolved through ``smemviz``)."""

from __future__ import annotations

import ast
from pathlib import Path

from .helpers import ROOT

PACKAGE = ROOT / "smemviz"


def _module_name(path: Path, package: Path) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the smemviz modules it imports (faces of its own packages left out)."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        own = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        ancestors = {".".join(name.split(".")[:k]) for k in range(1, len(name.split(".")))}
        if path.name == "__init__.py":
            ancestors.add(name)
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                if node.level:
                    base = own.split(".")[: len(own.split(".")) - (node.level - 1)]
                    base_mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    base_mod = node.module or ""
                mods = [base_mod] + [f"{base_mod}.{a.name}" for a in node.names]
            for mod in mods:
                if mod in files and mod not in ancestors and mod != name:
                    targets.add(mod)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_circle():
    found = cycles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_a_circle_is_found(tmp_path):
    pkg = tmp_path / "smemviz"
    (pkg / "layout").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "layout" / "__init__.py").write_text("")
    (pkg / "layout" / "_plan.py").write_text("def f():\n    from ..analysis import _lint\n")
    (pkg / "analysis").mkdir()
    (pkg / "analysis" / "__init__.py").write_text("")
    (pkg / "analysis" / "_lint.py").write_text(
        "from typing import TYPE_CHECKING\nfrom ..layout._plan import f\nif TYPE_CHECKING:\n    from . import x\n"
    )
    assert cycles(import_graph(pkg)) == [["smemviz.analysis._lint", "smemviz.layout._plan"]]
    (pkg / "layout" / "_plan.py").write_text("def f():\n    from .. import lint\n")  # the package's face
    assert cycles(import_graph(pkg)) == []
