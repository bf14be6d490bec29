"""The command line's static renders come from a browser kept warm between commands
(smemviz/_export/_render_service.py, _render_server.py): the first ``smemviz render -o x.svg`` starts it, later
ones reuse it, and the image is the one an in-process export draws."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .helpers import ROOT

pytest.importorskip("plotly")
pytest.importorskip("kaleido")
pytestmark = pytest.mark.browser

GEMM = str(ROOT / "examples" / "gemm_sm100.toml")
SCRIPT = str(Path(sys.executable).with_name("smemviz"))


@pytest.fixture
def runtime_dir():
    """A private runtime folder (short: a Unix socket's path is limited to ~100 bytes), and
    the service stopped, and its exit awaited, afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="sv"))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(folder)}
    env.pop("SMEMVIZ_RENDER_SERVICE", None)
    yield folder, env
    for lock in folder.glob("smemviz-*/render-*.lock"):
        sock = lock.with_suffix(".sock")
        if sock.exists():
            code = (
                "import sys; from smemviz._export import _render_service as s; "
                "from smemviz._export._static import find_browser; s.stop(find_browser())"
            )
            subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=False)
        with open(lock) as f:  # the service holds this lock until it has closed its browser
            fcntl.flock(f, fcntl.LOCK_EX)
    shutil.rmtree(folder, ignore_errors=True)


def smemviz(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True, timeout=180)


_ID = re.compile(r"[0-9a-f]*[a-f][0-9a-f]*(?:-[0-9a-f]+)*|[0-9a-f]{6}(?:-[0-9a-f]+)*")


def canonical_svg(path: Path) -> list:
    """The SVG's elements, attributes and text, with plotly.js's random ids blanked and
    attributes in order (the browser may write them in another)."""
    out = []
    for el in ET.parse(path).getroot().iter():
        attrs = {
            k: (_ID.sub("ID", v) if k in ("class", "id", "clip-path") or "url(" in v else v)
            for k, v in el.attrib.items()
        }
        out.append((el.tag, tuple(sorted(attrs.items())), (el.text or "").strip()))
    return out


def test_renders_reuse_one_warm_service_and_draw_what_export_draws(runtime_dir, tmp_path):
    folder, env = runtime_dir
    first = smemviz(env, "render", GEMM, "-o", str(tmp_path / "a.svg"))
    assert first.returncode == 0, first.stderr
    (sock,) = folder.glob("smemviz-*/render-*.sock")
    assert (sock.parent.stat().st_mode & 0o777) == 0o700  # no one else may reach it
    started = sock.stat().st_ino
    second = smemviz(env, "render", GEMM, "-o", str(tmp_path / "b.png"))
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "b.png").read_bytes().startswith(b"\x89PNG")
    assert sock.stat().st_ino == started  # the same service served it: no browser was started

    local_env = {**env, "SMEMVIZ_RENDER_SERVICE": "0"}
    local = smemviz(local_env, "render", GEMM, "-o", str(tmp_path / "local.svg"))
    assert local.returncode == 0, local.stderr
    assert canonical_svg(tmp_path / "a.svg") == canonical_svg(tmp_path / "local.svg")


def test_turned_off_no_service_is_started(runtime_dir, tmp_path):
    folder, env = runtime_dir
    done = smemviz({**env, "SMEMVIZ_RENDER_SERVICE": "0"}, "render", GEMM, "-o", str(tmp_path / "a.svg"))
    assert done.returncode == 0, done.stderr
    assert not list(folder.glob("smemviz-*/*.sock"))


def test_in_process_calls_keep_their_own_browser(runtime_dir, tmp_path, monkeypatch):
    """main(argv) from Python (tests, scripts) renders in its own process: no service outlives it."""
    from smemviz._export import _render_service
    from smemviz.cli import main

    folder, env = runtime_dir
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    assert main(["render", GEMM, "-o", str(tmp_path / "a.svg")]) == 0
    assert not _render_service.in_use()
    assert not list(folder.glob("smemviz-*/*.sock"))


def test_no_browser_is_exit_3_with_the_hint(runtime_dir, tmp_path):
    folder, env = runtime_dir
    done = smemviz({**env, "BROWSER_PATH": str(tmp_path / "no-chrome")}, "render", GEMM, "-o", str(tmp_path / "a.svg"))
    assert done.returncode == 3 and "is not an executable file" in done.stderr
    assert not list(tmp_path.glob("*.svg")) and not list(folder.glob("smemviz-*/*.sock"))


def test_a_browser_that_cannot_start_is_exit_3(runtime_dir, tmp_path):
    folder, env = runtime_dir
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    done = smemviz({**env, "BROWSER_PATH": str(fake)}, "render", GEMM, "-o", str(tmp_path / "a.svg"))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stderr.startswith("smemviz: error:") and len(done.stderr.splitlines()) == 1
    assert not list(tmp_path.glob("*.svg")) and not list(folder.glob("smemviz-*/*.sock"))
