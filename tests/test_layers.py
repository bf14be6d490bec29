"""The import graph points one way: no room imports a room that depends on it.

Read from the source (every import, also those inside functions), so a lazy
upward import is caught too. Imports under ``TYPE_CHECKING`` are left out: an
annotation names a type without depending on its module at run time. The
package's face is seen through: ``from .. import lint`` imports the room that
defines ``lint``, and ``import smemviz`` imports every room the face imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .helpers import ROOT
from .test_import_cycles import _imports, _module_name, fake_package, import_graph, resolve_through_face

PACKAGE = ROOT / "smemviz"

# room -> the rooms it may import (itself always); the data flow reads top to bottom:
# base facts -> solver -> layout (the model) -> sources -> analysis -> views -> kernel
BASE = {
    "hardware",
    "device",
    "_units",
    "_errors",
    "_dtypes",
    "_version",
    "_names",
    "_optional",
    "_limits",
    "_smem_instructions",
}
SOLVER = {"solver"}
MODEL = BASE | SOLVER | {"layout"}
SOURCES = MODEL | {"sources"}
ANALYSIS = SOURCES | {"analysis"}
ALLOWED: dict[str, set[str]] = {
    "hardware": {"device"},  # only the deprecated names that moved there, lazily
    **{m: {"hardware", "_units", "_errors", "_dtypes", "_limits"} for m in BASE - {"hardware"}},
    "solver": BASE,  # step names follow the name rule
    "layout": BASE | SOLVER,
    "sources": MODEL,
    "analysis": SOURCES,
    "_compat": {"_optional"},
    "figures": ANALYSIS | {"_compat"},
    "_export": ANALYSIS | {"_compat", "figures"},
    "explorer": ANALYSIS | {"_compat", "figures", "_export"},
    "cli": ANALYSIS | {"_compat", "figures", "_export"},
    "kernel": ANALYSIS | {"figures"},
    "__main__": {"cli"},
    "experimental": ANALYSIS | {"figures"},
    "__init__": ANALYSIS | {"figures", "explorer", "_export", "kernel", "experimental"},
}


# the arrows against the flow that are allowed, each lazy (inside a function) and with its reason;
# a listed arrow that no longer exists fails too, so the list cannot outlive its reason
LISTED_UPWARD: dict[str, dict[str, str]] = {
    "layout/_base.py": {
        "analysis": "the allocators' usage_report/print_usage_report (CUTLASS's allocator API) print the text report",
    },
    "layout/_plan.py": {
        "analysis": "LayoutPlan's deprecated lint/occupancy/diff/report shims, and _repr_html_ "
        "(Jupyter's display protocol lives on the object)",
    },
}


def _room(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imported_rooms(path: Path, package: Path = PACKAGE) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    depth = len(path.relative_to(package).parts) - 1  # 0 for smemviz/x.py, 1 for smemviz/pkg/x.py
    root = package.name
    found: set[str] = set()
    for node in _imports(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith(f"{root}."):
                    names = [node.module.split(".")[1]]
                elif node.module == root:
                    names = [_room_of(resolve_through_face(root, a.name, files)) for a in node.names]
            elif node.level - 1 == depth:  # relative to the package root
                if node.module:
                    names = [node.module.split(".")[0]]
                else:
                    names = [_room_of(resolve_through_face(root, a.name, files)) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(f"{root}."):
                    names.append(a.name.split(".")[1])
                elif a.name == root:  # the whole face: every room it imports
                    names += [_room_of(m) for m in import_graph(package).get(root, set())]
        found |= {n for n in names if any((p / n).is_dir() or (p / f"{n}.py").exists() for p in (package, PACKAGE))}
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_one_way(path):
    room = _room(path)
    assert room in ALLOWED, f"{room} has no place in the layer map; add it to tests/test_layers.py and the README"
    listed = LISTED_UPWARD.get(str(path.relative_to(PACKAGE)), {})
    upward = _imported_rooms(path) - ALLOWED[room] - {room} - set(listed)
    assert not upward, f"smemviz/{path.relative_to(PACKAGE)} ({room}) imports {sorted(upward)}"


def test_the_map_catches_an_upward_import(tmp_path):
    fake = PACKAGE / "layout" / "_plan.py"
    tree_src = fake.read_text(encoding="utf-8") + "\n\ndef _late():\n    from ..figures import smem_figure\n"
    probe = tmp_path / "smemviz" / "layout" / "_plan.py"
    probe.parent.mkdir(parents=True)
    probe.write_text(tree_src)
    assert "figures" in _imported_rooms(probe, package=probe.parent.parent)
    assert "figures" not in _imported_rooms(fake)


def test_the_map_sees_through_the_face(tmp_path):
    """A name taken from the face counts as an import of the room that defines it."""
    pkg = fake_package(
        tmp_path,
        {
            "__init__.py": "from .figures._smem import smem_figure\n",
            "figures/_smem.py": "def smem_figure():\n    pass\n",
            "layout/_plan.py": "def f():\n    from .. import smem_figure\n",
        },
    )
    probe = pkg / "layout" / "_plan.py"
    assert _imported_rooms(probe, package=pkg) == {"figures"}
    probe.write_text("def f():\n    import smemviz\n")
    assert _imported_rooms(probe, package=pkg) == {"figures"}


@pytest.mark.parametrize("module", sorted(LISTED_UPWARD))
def test_listed_arrows_exist_and_are_lazy(module):
    """Each listed upward arrow is still there, and only inside functions."""
    path = PACKAGE / module
    assert set(LISTED_UPWARD[module]) <= _imported_rooms(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = ast.Module(
        body=[n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef))], type_ignores=[]
    )
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        top_level.body += [n for n in cls.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    eager = {
        node.module.split(".")[0]
        for node in _imports(top_level)
        if isinstance(node, ast.ImportFrom) and node.level and node.module
    }
    assert not eager & set(LISTED_UPWARD[module]), f"{module} imports {eager & set(LISTED_UPWARD[module])} eagerly"


def test_benchmarks_and_scripts_share_tools_not_tests():
    """They run from the repository root (``python -m benchmarks.NAME``): no path of their own
    on ``sys.path``, and what they share with the tests is in ``tools/``, not imported from it."""
    for folder in ("benchmarks", "scripts", "tools"):
        for path in sorted((ROOT / folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            assert "sys.path" not in text or folder == "tools", f"{path.relative_to(ROOT)} changes sys.path"
            imported = _imports(ast.parse(text))
            modules = [n.module or "" for n in imported if isinstance(n, ast.ImportFrom)]
            modules += [a.name for n in imported if isinstance(n, ast.Import) for a in n.names]
            assert not [m for m in modules if m == "tests" or m.startswith("tests.")], path
