"""The explorer's browser modules (``smemviz/explorer/*.js``) pass ESLint with the
project's pinned config (``eslint.config.mjs``; versions in ``package-lock.json``,
installed by ``npm ci`` into ``node_modules/``)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ..helpers import ROOT

ESLINT = ROOT / "node_modules" / "eslint" / "bin" / "eslint.js"
JS_DIR = ROOT / "smemviz" / "explorer"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the explorer's JS cannot be linted here")
    return node


def test_the_explorer_js_is_linted_clean():
    node = _node()
    assert ESLINT.is_file(), f"ESLint is not installed: run `npm ci` in {ROOT} (package-lock.json pins it)"
    assert sorted(JS_DIR.glob("*.js")), "no JS modules found to lint"
    done = subprocess.run(
        [node, str(ESLINT), "--max-warnings", "0", str(JS_DIR)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"ESLint found problems:\n{done.stdout}{done.stderr}"


def test_the_lint_fails_on_a_lint_error(tmp_path):
    """The check can fail: a module with a loose comparison and an unused
    variable is refused under the same config."""
    node = _node()
    assert ESLINT.is_file(), f"ESLint is not installed: run `npm ci` in {ROOT}"
    bad = "export default { render() { const unused = 1; return 1 == 2; } };\n"
    done = subprocess.run(
        [node, str(ESLINT), "--stdin", "--stdin-filename", str(JS_DIR / "bad_example.js")],
        cwd=ROOT,
        input=bad,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "eqeqeq" in done.stdout and "no-unused-vars" in done.stdout
