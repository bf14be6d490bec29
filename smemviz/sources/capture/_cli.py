"""``smemviz capture FILE.py:FUNCTION``: run a function that builds and compiles a kernel, under capture.

The function is the user's own (it makes the fake tensors and calls
``cute.compile``); capture only watches. Loading problems are the caller's
(a bad path or name, a file that does not parse or raises on import), what the function raises is the kernel's, and a kernel
that cannot be captured is refused: three different exits.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._session import Capture, CaptureError, capture

__all__ = ["CaptureTargetError", "load_function", "capture_call", "pick"]


class CaptureTargetError(ValueError):
    """``FILE.py:FUNCTION`` does not name a function that can be called."""


def load_function(target: str) -> Callable[[], Any]:
    """The function ``FILE.py:FUNCTION`` names (its file imported as a module, its folder importable)."""
    file, sep, name = target.rpartition(":")
    if not sep or not file or not name:
        raise CaptureTargetError(f"{target!r}: expected FILE.py:FUNCTION")
    path = Path(file)
    if path.suffix != ".py" or not path.is_file():
        raise CaptureTargetError(f"{target!r}: {file!r} is not a Python file")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"smemviz_capture_target_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CaptureTargetError(f"{target!r}: cannot import {file!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:  # the file is not Python: name the line, as the compiler does
        del sys.modules[module_name]
        where = f"{file}:{exc.lineno}" if exc.lineno else file
        raise CaptureTargetError(f"{where}: syntax error: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # importing the file failed before any kernel was built
        del sys.modules[module_name]
        raise CaptureTargetError(f"{file}: importing it raised {_one_line(exc)}") from None
    fn = module
    for part in name.split("."):
        if not hasattr(fn, part):
            raise CaptureTargetError(f"{target!r}: {file} has no {name!r}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise CaptureTargetError(f"{target!r}: {name!r} is a {type(fn).__name__}, not a function")
    return fn


def _one_line(exc: BaseException) -> str:
    """``Type: message`` with the message's first line, and the line of the file that raised it."""
    message = str(exc).strip().splitlines()
    text = type(exc).__name__ + (f": {message[0]}" if message else "")
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<"):
        text += f" (at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno})"
    return text


def capture_call(fn: Callable[[], Any], arch: Any = None) -> Capture:
    """Call ``fn()`` under a capture and return it (what ``fn`` raises propagates)."""
    with capture(arch) as cap:
        fn()
    return cap


def pick(cap: Capture, kernel: str | None) -> Any:
    """The layouts of the one kernel, or of the one named (a substring of its symbol)."""
    kernels = cap.kernels
    if kernel is None:
        return cap.layouts
    matches = [k for k in kernels if kernel in k]
    if len(matches) != 1:
        raise CaptureError(f"--kernel {kernel!r} matches {len(matches)} of the captured kernels: {', '.join(kernels)}")
    one = kernels[matches[0]]
    return (one.plan,) if one.tmem_plan is None else (one.plan, one.tmem_plan)
