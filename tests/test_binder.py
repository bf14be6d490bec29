"""The Binder configuration alone gives an environment that runs every notebook.

mybinder.org builds with repo2docker. With a ``binder/`` folder present,
repo2docker reads only that folder (the root ``pyproject.toml`` is ignored),
runs ``pip install -r binder/requirements.txt`` from the repository root and
then ``binder/postBuild`` if there is one. ``tests/binder_env.py`` does the same
in a fresh virtual environment, and ``tests/test_notebooks.py`` executes every
notebook with that environment's own Jupyter kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"

# what repo2docker reads from binder/ for a pip-based Python environment
KNOWN_BINDER_FILES = {"requirements.txt", "runtime.txt", "postBuild", "apt.txt", "start"}


def _requirement_lines() -> list[str]:
    lines = []
    for raw in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def _project_extras() -> dict[str, list[str]]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["project"]["optional-dependencies"]


def _expand(extras: set[str], table: dict[str, list[str]]) -> set[str]:
    """Every extra reached from ``extras`` through self-references like smemviz[a,b]."""
    seen: set[str] = set()
    todo = list(extras)
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in table.get(extra, []):
            m = re.fullmatch(r"smemviz\[([\w,\s-]+)\]", req.strip())
            if m:
                todo += [e.strip() for e in m.group(1).split(",")]
    return seen


def test_binder_folder_holds_only_what_repo2docker_reads():
    names = {p.name for p in BINDER.iterdir()}
    assert "requirements.txt" in names
    assert names <= KNOWN_BINDER_FILES, names - KNOWN_BINDER_FILES


def test_binder_installs_the_project_with_every_extra():
    table = _project_extras()
    local = [line for line in _requirement_lines() if re.match(r"^(-e\s+)?\.(\[|$)", line)]
    # a line starting with "." makes repo2docker copy the whole repository
    # before installing, and pip resolves it from the repository root
    assert len(local) == 1, f"binder/requirements.txt must install the project once: {_requirement_lines()}"
    m = re.search(r"\[([^\]]*)\]", local[0])
    extras = {e.strip() for e in m.group(1).split(",")} if m else set()
    assert extras <= set(table), f"unknown extras {extras - set(table)}"
    reached = _expand(extras, table)
    for needed in ("viz", "export", "jupyter", "cutlass"):
        assert needed in reached, f"binder does not install smemviz[{needed}]"


def test_binder_python_matches_the_project():
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    m = re.fullmatch(r"python-(3)\.(\d+)", runtime)
    assert m, f"runtime.txt must read python-3.X, got {runtime!r}"
    try:
        import tomllib
    except ImportError:
        import tomli as tomllib
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    low = re.fullmatch(r">=\s*3\.(\d+)", requires)
    assert low and int(m.group(2)) >= int(low.group(1)), (runtime, requires)


# The end-to-end check, that binder/ alone gives an environment that runs every notebook,
# is tests/test_notebooks.py's: each notebook is executed once, with the kernel of the
# environment tests/binder_env.py builds the way repo2docker does.
