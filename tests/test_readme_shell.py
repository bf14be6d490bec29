"""The README's shell snippets are true: its command-line block runs as written, its
pip lines name extras that exist, and its first block is what CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from .helpers import ROOT

BLOCKS = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M)


def _commands(block: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def test_the_first_block_is_what_ci_runs():
    first = _commands(BLOCKS[0])
    assert first == ["bash scripts/lab.sh", "bash scripts/test.sh"]
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_extra_the_readme_installs_exists():
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    )
    named = {m for block in BLOCKS for m in re.findall(r'pip install "smemviz\[(\w+)\]"', block)}
    assert named and named <= extras, sorted(named - extras)


CLI = [c for block in BLOCKS for c in _commands(block) if c.startswith("smemviz ")]


@pytest.mark.cutlass
@pytest.mark.parametrize("command", CLI)
def test_every_command_line_runs(command, tmp_path):
    if " capture " in f" {command} ":
        pytest.importorskip("cutlass")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert done.stdout.strip() or any(tmp_path.iterdir())
