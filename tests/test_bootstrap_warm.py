"""A warm scripts/bootstrap.sh (run by lab.sh and test.sh) reinstalls nothing
when nothing changed (issue 23, point 7), and still installs on a fresh
machine or after pyproject.toml changes. Run against a copy of the script
with a stand-in for .venv's Python that records what it was asked to do."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .helpers import ROOT

FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$BOOTSTRAP_LOG"
case "$*" in
  *"sys.version"*) echo 3.11.9 ;;
  *"-m venv"*) mkdir -p .venv/bin && cp "$0" .venv/bin/python ;;
esac
exit 0
"""


@pytest.fixture
def checkout(tmp_path):
    if shutil.which("sha256sum") is None:
        pytest.skip("needs sha256sum")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", repo / "scripts" / "bootstrap.sh")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    (repo / "smemviz" / "solver").mkdir(parents=True)
    (repo / "smemviz" / "solver" / "_core.py").write_text("# the search kernel\n")
    base = tmp_path / "base-python"
    base.write_text(FAKE_PYTHON)
    base.chmod(0o755)
    return repo, base, tmp_path / "calls.log"


def bootstrap(repo, base, log) -> list[str]:
    """The commands a run of scripts/bootstrap.sh made (what a warm one skips is what makes it quick)."""
    log.write_text("")
    env = {**os.environ, "PYTHON": str(base), "BOOTSTRAP_LOG": str(log)}
    env.pop("SMEMVIZ_REINSTALL", None)
    done = subprocess.run(
        ["bash", "scripts/bootstrap.sh"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def installs(calls: list[str]) -> list[str]:
    return [c for c in calls if "pip install" in c or "core_kind" in c]


def test_a_fresh_checkout_installs_and_a_warm_one_does_not(checkout):
    repo, base, log = checkout
    calls = bootstrap(repo, base, log)
    assert any("-m venv" in c for c in calls)
    assert any("install -q -e .[dev]" in c for c in calls) and any("core_kind" in c for c in calls)
    calls = bootstrap(repo, base, log)
    assert installs(calls) == [], calls


@pytest.mark.parametrize("change", ["pyproject", "kernel", "stamp", "forced"])
def test_a_change_that_matters_installs_again(checkout, change, monkeypatch):
    repo, base, log = checkout
    bootstrap(repo, base, log)
    if change == "pyproject":
        with open(repo / "pyproject.toml", "a") as f:
            f.write("\n# a new dependency\n")
    elif change == "kernel":
        (repo / "smemviz" / "solver" / "_core.py").write_text("# the search kernel, changed\n")
    elif change == "stamp":
        (repo / ".venv" / ".smemviz-bootstrap").unlink()
    else:
        monkeypatch.setenv("SMEMVIZ_REINSTALL", "1")
        log.write_text("")
        env = {**os.environ, "PYTHON": str(base), "BOOTSTRAP_LOG": str(log)}
        subprocess.run(["bash", "scripts/bootstrap.sh"], cwd=repo, env=env, check=True, capture_output=True)
        assert installs(log.read_text().splitlines())
        return
    calls = bootstrap(repo, base, log)
    assert installs(calls), calls
