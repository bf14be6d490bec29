"""A browser kept warm between ``smemviz`` commands, for their static images.

Starting Chromium takes most of a command-line render (about 2.8 s of 4-5 s
measured, plus 0.5 s closing it; results/cli_render.md). The first ``smemviz
render -o x.svg`` (or ``capture --out x.png``) therefore starts a small
service in the background: one process holding a warm kaleido browser
(:class:`._static._Renderer`), reached over a Unix socket in a folder only the
user can enter. Later commands send it the figure and get the image back. The
service leaves after :data:`IDLE_EXIT_S` without a request.

Only the command line uses it (a notebook keeps its own warm browser);
``SMEMVIZ_RENDER_SERVICE=0`` turns it off. One service per user, browser,
smemviz and kaleido version: an upgrade or ``BROWSER_PATH`` starts a fresh one.

Protocol: one request per connection; the client sends a 4-byte big-endian
length and that many bytes of JSON (``fig``, ``format``, ``width``,
``height``, ``scale``, ``timeout``); the service answers one status byte (0
image, 1 render timeout, 2 other error, 3 plans it cannot read back), a 4-byte
length and the image or the error's message (UTF-8). A request carries either the
figure's plotly JSON (``fig``) or the plans themselves (``pair``), which the
service draws with plotly already warm: most of what is left of a render.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["enabled", "in_use", "render", "render_request", "socket_path", "stop", "use_render_service", "IDLE_EXIT_S"]

IDLE_EXIT_S = 600.0  # the service leaves after this long without a request
_OK, _TIMEOUT, _ERROR, _UNREADABLE = 0, 1, 2, 3
_MAX_REQUEST = 512 * 1024 * 1024


_in_use = False


def use_render_service() -> bool:
    """Render this process's static images through the service, as the command line does;
    returns whether it will (``SMEMVIZ_RENDER_SERVICE=0`` or no Unix sockets: no)."""
    global _in_use
    _in_use = enabled()
    return _in_use


def in_use() -> bool:
    """Whether this process's static images come from the service."""
    return _in_use


def enabled() -> bool:
    """Whether command-line renders go through the service (``SMEMVIZ_RENDER_SERVICE=0``: no;
    no Unix sockets: no)."""
    return os.environ.get("SMEMVIZ_RENDER_SERVICE", "1") != "0" and hasattr(socket, "AF_UNIX")


def _folder() -> Path:
    """A folder only this user can enter (made so, and checked, before any socket goes in it)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    folder = base / f"smemviz-{uid}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if not folder.is_dir() or folder.is_symlink() or info.st_uid != uid or info.st_mode & 0o077:
        raise OSError(f"{folder} is not a private folder of this user; the render service will not use it")
    return folder


def socket_path(browser: str) -> Path:
    """The service's socket for ``browser`` (with this smemviz and kaleido)."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__

    try:
        kaleido = version("kaleido")
    except PackageNotFoundError:
        kaleido = "?"
    # this file's own state too, so that a changed service (a development checkout) is not asked by a newer client
    here = Path(__file__).stat()
    text = f"{browser}\0{__version__}\0{kaleido}\0{here.st_mtime_ns}\0{here.st_size}"
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    return _folder() / f"render-{key}.sock"


# -- client ------------------------------------------------------------------------


def _send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack(">I", len(data)) + data)


def _receive_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the render service closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _connect(path: Path, timeout: float) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def _start_service(path: Path, browser: str, timeout: float, startup_timeout: float) -> None:
    """Start the service and wait for the line it prints once it listens (or says why it cannot)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "smemviz._export._render_server", str(path), browser, str(timeout)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives this command; no terminal signal reaches it
        close_fds=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + startup_timeout
    line = b""
    with proc.stdout:
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, left))
            if not ready:
                proc.kill()
                from ._static import ExportTimeoutError

                raise ExportTimeoutError(f"the browser ({browser}) did not start within {startup_timeout:g} s")
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    text = line.decode("utf-8", "replace").strip()
    if text != "ready":
        proc.wait()
        raise RuntimeError(text.removeprefix("error: ") or f"the render service exited ({proc.returncode})")


def render(fig_json: str, fmt: str, width: int, height: int, scale: float, timeout: float, browser: str) -> bytes:
    """The image of a figure (its plotly JSON), from the service for ``browser``."""
    data = render_request({"fig": fig_json}, fmt, width, height, scale, timeout, browser)
    assert data is not None
    return data


def render_request(
    what: dict[str, Any], fmt: str, width: int | None, height: int | None, scale: float, timeout: float, browser: str
) -> bytes | None:
    """The image of ``what`` (``{"fig": plotly JSON}``, or ``{"pair": the plans' dicts, title
    and arch, "banks": bool}``, which the service draws as :func:`export` would), from the
    service for ``browser`` (started when none is running); ``None`` when the service cannot
    read the plans back."""
    from ._static import STARTUP_TIMEOUT_S, ExportTimeoutError

    path = socket_path(browser)
    sock = _connect(path, timeout + 10.0)
    if sock is None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        _start_service(path, browser, timeout, STARTUP_TIMEOUT_S)
        sock = _connect(path, timeout + 10.0)
        pause = 0.01
        while sock is None:  # another command's service, started a moment before, is still opening its socket
            if time.monotonic() > deadline:
                raise ExportTimeoutError(f"the render service did not open {path} within {STARTUP_TIMEOUT_S:g} s")
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
            sock = _connect(path, timeout + 10.0)
    request = {**what, "format": fmt, "width": width, "height": height, "scale": scale, "timeout": timeout}
    with sock:
        try:
            _send(sock, json.dumps(request).encode())
            status = _receive_exactly(sock, 1)[0]
            (n,) = struct.unpack(">I", _receive_exactly(sock, 4))
            body = _receive_exactly(sock, n)
        except TimeoutError:
            raise ExportTimeoutError(
                f"the render service did not render a {fmt.upper()} within {timeout:g} s"
            ) from None
    if status == _OK:
        return body
    if status == _UNREADABLE:
        return None
    message = body.decode("utf-8", "replace")
    raise ExportTimeoutError(message) if status == _TIMEOUT else RuntimeError(message)


def stop(browser: str) -> bool:
    """Ask the service for ``browser`` to leave now; whether one was running."""
    sock = _connect(socket_path(browser), 15.0)
    if sock is None:
        return False
    with sock:
        _send(sock, json.dumps({"stop": True}).encode())
        with contextlib.suppress(OSError, ConnectionError):
            _receive_exactly(sock, 5)
    return True
