"""Where a kernel makes an allocation: the user's source line and the name it gives the result.

The DSL's own frames (the ``cutlass`` package) and capture's wrappers are
skipped, so the line is the kernel author's, even when the allocation is made
for them (a ``TmemAllocator`` reserving its SMEM slot). The name is the
one written on the call's line as ``# smemviz: NAME`` (a comment, so the kernel
is unchanged), else the variable the call's result is assigned to, read from
the source with ``ast`` (the call's own position, so a call spread over several
lines still finds it).
"""

from __future__ import annotations

import ast
import linecache
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from types import FrameType

__all__ = ["CallSite", "call_site"]

_HERE = os.path.dirname(os.path.abspath(__file__))


# a name written on the call's line, for calls that are not assigned or not named as wanted
_COMMENT_NAME = re.compile(r"#\s*smemviz:\s*([^\s#][^#]*?)\s*$")


@dataclass(frozen=True)
class CallSite:
    """One call of the DSL's allocator as the kernel's source has it."""

    file: str
    line: int
    assigned: str | None  # "# smemviz: NAME" on the call's line, else the variable the result goes to
    via: str | None  # the DSL module that made the call for the user (e.g. "cutlass.memory.tmem"), if any

    @property
    def source(self) -> str:
        """``file.py:line`` (the file's base name: what a map has room for)."""
        return f"{os.path.basename(self.file)}:{self.line}"


def _package_dirs() -> tuple[str, ...]:
    dirs = [_HERE]
    mod = sys.modules.get("cutlass")
    file = getattr(mod, "__file__", None)
    if isinstance(file, str):
        dirs.append(os.path.dirname(os.path.abspath(file)))
    return tuple(dirs)


def _inside(filename: str, dirs: tuple[str, ...]) -> bool:
    path = os.path.abspath(filename)
    return any(path.startswith(d + os.sep) for d in dirs)


def call_site(skip: int = 1) -> CallSite | None:
    """The innermost frame outside cutlass and capture, above ``skip`` frames of the caller."""
    dirs = _package_dirs()
    frame: FrameType | None = sys._getframe(skip)
    via: str | None = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<") and "cutlass" in (frame.f_globals.get("__name__") or ""):
            frame = frame.f_back  # code the DSL generated for itself
            continue
        if not _inside(filename, dirs):
            line = frame.f_lineno or 0
            return CallSite(filename, line, _commented_name(filename, line) or _assigned_name(frame), via)
        module = frame.f_globals.get("__name__") or ""
        if module.startswith("cutlass.") and not module.startswith(
            ("cutlass.cute", "cutlass.base_dsl", "cutlass.cutlass_dsl", "cutlass._mlir")
        ):
            via = via or module
        frame = frame.f_back
    return None


def _commented_name(filename: str, line: int) -> str | None:
    m = _COMMENT_NAME.search(linecache.getline(filename, line).rstrip("\n"))
    return m.group(1) if m else None


def _assigned_name(frame: FrameType) -> str | None:
    """The target of the assignment whose value holds the call the frame is making."""
    filename, line = frame.f_code.co_filename, frame.f_lineno or 0
    col: int | None = None
    positions_of = getattr(frame.f_code, "co_positions", None)  # the executing call's position (3.11+)
    if positions_of is not None:
        try:
            pos = list(positions_of())[frame.f_lasti // 2]
            if pos[0] is not None:
                line, col = pos[0], pos[2]
        except (IndexError, TypeError):
            pass
    tree = _parsed(filename)
    if tree is None:
        return None
    best: tuple[int, str] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        start, end = value.lineno, value.end_lineno or value.lineno
        if not start <= line <= end:
            continue
        if col is not None and line == start and col < value.col_offset:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        name = _target_name(targets[0])
        if name is None:
            continue
        span = end - start
        if best is None or span < best[0]:
            best = (span, name)
    return best[1] if best else None


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr  # self.sA -> "sA"
    if isinstance(target, ast.Subscript):
        return _target_name(target.value)
    return None


@lru_cache(maxsize=64)
def _parsed_cached(filename: str, text: str) -> ast.Module | None:
    try:
        return ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return None


def _parsed(filename: str) -> ast.Module | None:
    lines = linecache.getlines(filename)
    if not lines:
        return None
    return _parsed_cached(filename, "".join(lines))
