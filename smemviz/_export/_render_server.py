"""The render service itself: the process :mod:`._render_service` starts, holding a warm
kaleido browser and answering the command line's requests over its Unix socket until it has
been idle for :data:`._render_service.IDLE_EXIT_S` (protocol: see that module)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import socket
import struct
import sys
from pathlib import Path
from typing import Any

from ._render_service import _ERROR, _MAX_REQUEST, _OK, _TIMEOUT, _UNREADABLE, IDLE_EXIT_S, _receive_exactly

__all__: list[str] = []


def _serve(path: Path, browser: str, timeout: float) -> int:
    import fcntl

    from ._static import ExportTimeoutError, _Renderer, image_size

    global _ready_fd
    # a plain `kill` closes the browser as the idle exit does (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    _ready_fd = os.dup(1)  # the line for the command that started it; the browser must not hold that pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    lock = open(path.with_suffix(".lock"), "w")  # noqa: SIM115 - held for the service's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):  # another service for this socket is starting or serving
            _say("ready")
            return 0
        raise
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by a service that died
    try:
        renderer: _Renderer | None = _Renderer(browser, timeout)
    except Exception as exc:  # noqa: BLE001 - said to the command that started it
        _say(f"error: {exc}")
        return 1
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    _say("ready")
    os.close(_ready_fd)
    try:
        while True:
            ready, _, _ = select.select([server], [], [], IDLE_EXIT_S)
            if not ready:
                return 0
            conn, _ = server.accept()
            with conn:
                conn.settimeout(timeout + 10.0)
                try:
                    (n,) = struct.unpack(">I", _receive_exactly(conn, 4))
                    if n > _MAX_REQUEST:
                        raise ValueError(f"a request of {n:,} bytes is too large")
                    req = json.loads(_receive_exactly(conn, n))
                except (OSError, ValueError, ConnectionError):
                    continue
                if req.get("stop"):
                    with contextlib.suppress(OSError):
                        conn.sendall(bytes([_OK]) + struct.pack(">I", 0))
                    return 0
                status, body = _OK, b""
                try:
                    fig = _figure_of(req)
                    if fig is None:
                        status = _UNREADABLE
                    else:
                        if renderer is None:
                            renderer = _Renderer(browser, timeout)
                        w, h = image_size(fig, req["width"], req["height"], req["scale"])
                        body = renderer.render(fig, req["format"], w, h, req["scale"], req["timeout"])
                except ExportTimeoutError as exc:
                    status, body = _TIMEOUT, str(exc).encode()
                except Exception as exc:  # noqa: BLE001 - the command reports it
                    status, body = _ERROR, f"{type(exc).__name__}: {exc}".encode()
                if (
                    status in (_TIMEOUT, _ERROR) and renderer is not None
                ):  # as in a notebook: a failed render discards the browser
                    renderer.close()
                    renderer = None
                with contextlib.suppress(OSError):
                    conn.sendall(bytes([status]) + struct.pack(">I", len(body)) + body)
    finally:
        server.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        if renderer is not None:
            renderer.close()


def _figure_of(req: dict[str, Any]) -> dict[str, Any] | None:
    """The plotly figure (as a dict) a request asks for; ``None`` when its plans do not read back."""
    if "fig" in req:
        return json.loads(req["fig"])
    from ..layout import plan_from_dict
    from ..sources._inputs import LayoutPair
    from ._analysed import analyse_pair
    from ._image import static_figure

    p = req["pair"]
    try:
        smem, tmem = (plan_from_dict(p[k]) if p[k] is not None else None for k in ("smem", "tmem"))
    except (ValueError, TypeError, KeyError):
        return None
    figure = static_figure(analyse_pair(LayoutPair(smem, tmem, p["title"], p["arch"])), banks=bool(req.get("banks")))
    return figure.to_plotly_json()


_ready_fd = 1


def _say(line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(_ready_fd, (line.replace("\n", " ") + "\n").encode())


if __name__ == "__main__":  # pragma: no cover - run by _render_service._start_service
    raise SystemExit(_serve(Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])))
