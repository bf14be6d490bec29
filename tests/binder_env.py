"""The environment Binder builds, made once per test run and shared by the workers.

mybinder.org builds with repo2docker: with a ``binder/`` folder present it reads only
that folder, runs ``pip install -r binder/requirements.txt`` from the repository root
and then ``binder/postBuild``. :func:`binder_environment` does the same in a fresh
virtual environment over a copy of the repository. The notebooks are executed in it
(``tests/test_notebooks.py``), so one run of every notebook checks both that the
notebooks show what they should and that Binder's environment runs them.

Under pytest-xdist the first worker to need it builds it under a file lock in the
run's shared temporary folder; the others wait for it and reuse it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# runs in the Binder environment: executes one notebook with that environment's kernel, in a
# working folder, then a last cell that tells which Python and which smemviz the kernel used
RUNNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import nbformat
    from nbclient import NotebookClient

    src, dst, work, timeout = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
    nb = nbformat.read(src, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(
        "import sys, smemviz\\nprint('KERNEL-PREFIX', sys.prefix)\\nprint('SMEMVIZ-FILE', smemviz.__file__)"
    ))
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(work)}}).execute()
    nbformat.write(nb, dst)
    """
)


@dataclass(frozen=True)
class BinderEnv:
    repo: Path  # the copy of the repository it was installed from
    venv: Path
    env: dict[str, str]  # the environment its processes run with

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def repository_files() -> list[Path]:
    """The files a clone would hold (tracked plus new, unignored ones)."""
    if shutil.which("git") and (ROOT / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        return [Path(p) for p in out.split("\0") if p and (ROOT / p).is_file()]
    skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", "node_modules"}
    return [p.relative_to(ROOT) for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]


def clean_env(venv: Path, home: Path) -> dict[str, str]:
    """This process's environment without its Python, venv, Jupyter and pip settings."""
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


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's temporary folder, the one all xdist workers of this run share."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _build(base: Path) -> BinderEnv:
    repo, venv = base / "repo", base / "venv"
    for rel in repository_files():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, repo / rel)
    found = BinderEnv(repo, venv, clean_env(venv, base / "home"))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)

    def run(cmd: list[str]) -> None:
        done = subprocess.run(cmd, cwd=repo, env=found.env, capture_output=True, text=True)
        if done.returncode != 0:
            if "Could not find a version" in done.stderr or "Network is unreachable" in done.stderr:
                raise _NoIndex(done.stderr.strip().splitlines()[-1])
            raise AssertionError(
                f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )

    # what repo2docker does, from the repository root
    run([str(found.python), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"])
    if (repo / "binder" / "postBuild").exists():
        run(["bash", "binder/postBuild"])
    return found


class _NoIndex(Exception):
    """No package index could be reached to build the environment."""


def _ensure(base: Path) -> str:
    """Build the environment in ``base`` unless a worker did; what became of it."""
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        state = base / ".state"
        if not state.exists():
            try:
                _build(base)
                state.write_text("built")
            except _NoIndex as exc:
                state.write_text(f"skip: no package index reachable: {exc}")
            except BaseException as exc:  # recorded: the tests that need it fail with the reason
                state.write_text(f"failed: {type(exc).__name__}: {str(exc)[:4000]}")
        return state.read_text()


def start_building(tmp_path_factory: pytest.TempPathFactory) -> threading.Thread:
    """Build the environment in the background while other tests run (the notebooks wait for it)."""
    base = _shared_folder(tmp_path_factory) / "binder-env"
    thread = threading.Thread(target=_ensure, args=(base,), name="binder-env", daemon=True)
    thread.start()
    return thread


def binder_environment(tmp_path_factory: pytest.TempPathFactory) -> BinderEnv:
    """Binder's environment for this test run: built by the first worker that asks, reused after."""
    base = _shared_folder(tmp_path_factory) / "binder-env"
    result = _ensure(base)
    if result.startswith("skip: "):
        pytest.skip(result.removeprefix("skip: "))
    if result.startswith("failed: "):
        raise AssertionError(f"Binder's environment could not be built: {result.removeprefix('failed: ')}")
    return BinderEnv(base / "repo", base / "venv", clean_env(base / "venv", base / "home"))


def execute_in_binder(env: BinderEnv, notebook: Path, workdir: Path, scratch: Path, timeout: int):
    """Run ``notebook`` top to bottom with the Binder environment's kernel, ``workdir`` as its
    current folder; return the executed notebook (errors stay in it) and the folder and
    module its kernel reported."""
    import nbformat

    runner, out = scratch / "run_notebook.py", scratch / notebook.name
    runner.write_text(RUNNER, encoding="utf-8")
    done = subprocess.run(
        [str(env.python), str(runner), str(notebook), str(out), str(workdir), str(timeout)],
        cwd=workdir,
        env=env.env,
        capture_output=True,
        text=True,
        timeout=30 * 60,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    nb = nbformat.read(out, as_version=4)
    last = nb.cells.pop()  # the runner's own cell, out of what the notebook's checks read
    text = "".join(o.get("text", "") for o in last.outputs)
    return nb, text
