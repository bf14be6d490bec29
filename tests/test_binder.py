"""The Binder configuration alone gives an environment that runs every notebook.

mybinder.org builds with repo2docker. With a ``binder/`` folder present,
repo2docker reads only that folder (the root ``pyproject.toml`` is ignored),
runs ``pip install -r binder/requirements.txt`` from the repository root and
then ``binder/postBuild`` if there is one. The slow test below does the same
in a fresh virtual environment and executes the notebooks with that
environment's own Jupyter kernel.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .helpers import NOTEBOOKS
from .test_notebooks import check_executed

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


# -- the slow, end-to-end check ----------------------------------------------------------

RUNNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import nbformat
    from nbclient import NotebookClient

    src, dst, work = (Path(p) for p in sys.argv[1:4])
    for path in sorted(src.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        # a last cell that tells which Python and which smemviz the kernel used
        nb.cells.append(nbformat.v4.new_code_cell(
            "import sys, smemviz\\nprint('KERNEL-PREFIX', sys.prefix)\\nprint('SMEMVIZ-FILE', smemviz.__file__)"
        ))
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(work)}}).execute()
        nbformat.write(nb, dst / path.name)
        print("executed", path.name, flush=True)
    """
)


def _repository_files() -> list[Path]:
    """The files a clone would hold (tracked plus new, unignored ones)."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        return [Path(p) for p in out.split("\0") if p and (ROOT / p).is_file()]
    skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis"}
    return [p.relative_to(ROOT) for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]


def _clean_env(venv: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "PIP_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("IPYTHONDIR", "ipython"),
    ):
        env[var] = str(home / sub)
    return env


@pytest.fixture(scope="session")
def binder_build(tmp_path_factory):
    """A copy of the repository and a fresh venv built from binder/ only, once per session."""
    base = tmp_path_factory.mktemp("binder")
    repo, venv = base / "repo", base / "venv"
    for rel in _repository_files():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, repo / rel)
    env = _clean_env(venv, base / "home")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"

    def run(cmd: list[str]) -> None:
        done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            if "Could not find a version" in done.stderr or "Network is unreachable" in done.stderr:
                pytest.skip(f"no package index reachable: {done.stderr.strip().splitlines()[-1]}")
            raise AssertionError(
                f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )

    # what repo2docker does, from the repository root
    run([str(python), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"])
    if (repo / "binder" / "postBuild").exists():
        run(["bash", "binder/postBuild"])
    return repo, venv, env


@pytest.mark.slow
@pytest.mark.notebook
def test_binder_environment_runs_every_notebook(binder_build, tmp_path):
    pytest.importorskip("nbformat")
    import nbformat

    repo, venv, env = binder_build
    python = venv / "bin" / "python"
    runner = tmp_path / "run_notebooks.py"
    runner.write_text(RUNNER, encoding="utf-8")
    (tmp_path / "executed").mkdir()
    (tmp_path / "work").mkdir()
    done = subprocess.run(
        [str(python), str(runner), str(repo / "notebooks"), str(tmp_path / "executed"), str(tmp_path / "work")],
        cwd=tmp_path / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    for name in NOTEBOOKS:
        nb = nbformat.read(tmp_path / "executed" / name, as_version=4)
        check_executed(name, nb)
        last = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
        prefix = re.search(r"KERNEL-PREFIX (.+)", last).group(1).strip()
        module = re.search(r"SMEMVIZ-FILE (.+)", last).group(1).strip()
        assert Path(prefix).resolve() == venv.resolve(), f"{name} ran in {prefix}, not the binder venv"
        # installed from binder/requirements.txt, not imported from a source tree
        assert "site-packages" in module and str(repo) not in module, module
