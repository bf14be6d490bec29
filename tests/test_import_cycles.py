"""No import circle among smemviz's modules.

Every import counts, also those inside functions, except imports under
``TYPE_CHECKING``. A package's face is seen through: ``from .. import lint`` is an
import of the module the face re-exports ``lint`` from (``smemviz.analysis._lint``),
and ``import smemviz`` from inside the package is an import of the whole face."""

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


def _face_exports(face: str, files: dict[str, Path]) -> dict[str, str]:
    """name -> the module a package's ``__init__`` takes it from: its ``from X import name``
    lines and, at the root, its table of names imported on first use (``_LAZY``)."""
    path = files.get(face)
    if path is None:  # a package with no face file
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            base = _absolute(face, node, is_package=True)
            for a in node.names:
                sub = f"{base}.{a.name}"
                out[a.asname or a.name] = sub if sub in files else base
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id == "_LAZY":
                for k, v in zip(node.value.keys, node.value.values):
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
                        out[str(k.value)] = str(v.value)
    return out


def _absolute(name: str, node: ast.ImportFrom, *, is_package: bool) -> str:
    """The absolute module an ``ImportFrom`` in module ``name`` reads from."""
    if not node.level:
        return node.module or ""
    own = name if is_package else name.rsplit(".", 1)[0]
    parts = own.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def resolve_through_face(face: str, attr: str, files: dict[str, Path]) -> str:
    """The module that defines what ``from FACE import ATTR`` gives, followed through
    faces that re-export it from deeper faces; the face itself when it cannot tell."""
    seen: set[tuple[str, str]] = set()
    while (face, attr) not in seen:
        seen.add((face, attr))
        sub = f"{face}.{attr}"
        if sub in files:
            return sub
        target = _face_exports(face, files).get(attr)
        if target is None or target not in files:
            return face
        if not files[target].name == "__init__.py":
            return target
        face = target
    return face


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the smemviz modules it imports, faces seen through (see the module's docstring)."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        ancestors = {".".join(name.split(".")[:k]) for k in range(1, len(name.split(".")))}
        if path.name == "__init__.py":
            ancestors.add(name)
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                # ``import smemviz`` runs the whole face, also from inside the package
                mods = [a.name for a in node.names]
            else:
                base_mod = _absolute(name, node, is_package=path.name == "__init__.py")
                if base_mod in ancestors and base_mod in files:  # an own package's face: seen through
                    mods = [resolve_through_face(base_mod, a.name, files) for a in node.names]
                else:
                    mods = [base_mod] + [f"{base_mod}.{a.name}" for a in node.names]
            for mod in mods:
                if mod in files and mod != name:
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


# lazy arrows that close a circle and are allowed for now, each with its reason; a listed
# arrow that no longer exists fails too, so the list cannot outlive its reason
LISTED_EDGES: dict[tuple[str, str], str] = {
    ("smemviz.layout._plan", "smemviz.layout._plan_json"): "LayoutPlan.from_dict/from_json, deprecated",
    ("smemviz.kernel.gemm._config", "smemviz.kernel.gemm._layout"): "GemmConfig.resolved(), deprecated",
    ("smemviz.layout._plan", "smemviz.analysis._lint"): "LayoutPlan.lint(), deprecated",
    ("smemviz.layout._plan", "smemviz.analysis._occupancy"): "LayoutPlan.occupancy(), deprecated",
    ("smemviz.layout._plan", "smemviz.analysis._diff"): "LayoutPlan.diff(), deprecated",
    ("smemviz.layout._plan", "smemviz.analysis._report"): "LayoutPlan.report(), deprecated, and _repr_html_ "
    "(Jupyter's display protocol lives on the object)",
    ("smemviz.layout._base", "smemviz.analysis._report"): "the allocators' usage_report (CUTLASS's allocator API)",
    ("smemviz.hardware", "smemviz.device"): "hardware.query_gpu/detect_arch/default_arch, deprecated: moved to device",
}


def test_no_import_circle():
    graph = import_graph()
    for (source, target), reason in LISTED_EDGES.items():
        assert target in graph[source], f"listed arrow {source} -> {target} ({reason}) is gone: unlist it"
        graph[source].discard(target)
    found = cycles(graph)
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
    (pkg / "layout" / "_plan.py").write_text("def f():\n    from .. import hardware\n")  # a module through the face
    (pkg / "hardware.py").write_text("")
    assert cycles(import_graph(pkg)) == []


def fake_package(root: Path, files: dict[str, str]) -> Path:
    """A package ``smemviz`` under ``root`` with ``files`` (path -> source), each folder with a face."""
    pkg = root / "smemviz"
    for rel, source in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in [path.parent, *path.parent.parents]:
            if folder == pkg.parent:
                break
            if not (folder / "__init__.py").exists():
                (folder / "__init__.py").write_text("")
        path.write_text(source)
    return pkg


def test_a_circle_through_the_face_is_found(tmp_path):
    """``from .. import lint`` and ``import smemviz`` reach what the face re-exports."""
    pkg = fake_package(
        tmp_path,
        {
            "__init__.py": "from .analysis._lint import lint\n",
            "analysis/_lint.py": "from ..layout._plan import Plan\ndef lint(p):\n    return p\n",
            "layout/_plan.py": "class Plan:\n    def lint(self):\n        from .. import lint\n",
        },
    )
    assert cycles(import_graph(pkg)) == [["smemviz.analysis._lint", "smemviz.layout._plan"]]
    (pkg / "layout" / "_plan.py").write_text("class Plan:\n    def lint(self):\n        import smemviz\n")
    assert cycles(import_graph(pkg)) == [["smemviz", "smemviz.analysis._lint", "smemviz.layout._plan"]]
