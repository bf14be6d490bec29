"""From a file's bytes to parsed data: encoding, TOML/JSON syntax, nesting
depth. Every failure is a :class:`LayoutFileError` naming the file and, where
the parser knows it, the line and column."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Literal

from ._error import HugeInt, KeyPath, LayoutFileError, key_text
from ._locate import JsonLocator, Locator, TomlLocator, line_col
from ._schema import MAX_DEPTH, LayoutSpec
from ._validate import Reader

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["load_layout", "parse_layout_text", "FileFormat"]

FileFormat = Literal["toml", "json"]


def load_layout(path: str | Path) -> LayoutSpec:
    """Read a ``.toml`` or ``.json`` layout file (:class:`LayoutFileError` if bad)."""
    p = Path(path)
    fmt = _format_of(p)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise LayoutFileError(f"cannot read the file: {exc.strerror or exc}", source=str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8", "replace")
        line, col = line_col(before, len(before))
        raise LayoutFileError(f"not UTF-8 text ({exc.reason})", source=str(p), line=line, column=col) from None
    return parse_layout_text(text, format=fmt, source=str(p))


def parse_layout_text(text: str, *, format: FileFormat = "toml", source: str = "<string>") -> LayoutSpec:
    """Parse layout-file text; ``source`` names it in error messages."""
    locate: Locator
    if format == "toml":
        data = _parse_toml(text, source)
        locate = TomlLocator(text)
    elif format == "json":
        data = _parse_json(text, source)
        locate = JsonLocator(text)
    else:
        raise ValueError(f"layout file format must be 'toml' or 'json', got {format!r}")
    too_deep = _path_deeper_than(data, MAX_DEPTH)
    if too_deep is not None:
        too_deep = too_deep[:4]  # where it starts is enough
        pos = locate(too_deep)
        raise LayoutFileError(
            f"nested more than {MAX_DEPTH} levels deep",
            source=source,
            line=pos[0] if pos else None,
            column=pos[1] if pos else None,
            key=key_text(too_deep) or None,
        )
    return Reader(data, source, locate).spec()


def _format_of(path: Path) -> FileFormat:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return "toml"
    if suffix == ".json":
        return "json"
    raise LayoutFileError(
        f"unsupported layout file extension {suffix or '(none)'!r}; use .toml or .json", source=str(path)
    )


# -- nesting depth ------------------------------------------------------------------


def _path_deeper_than(data: Any, limit: int) -> KeyPath | None:
    """The key path of the first value nested deeper than ``limit`` (the
    document itself is level 1), found without recursion; ``None`` if none."""
    stack: list[tuple[Any, KeyPath]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) >= limit:
            return path
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value) if isinstance(v, (dict, list)))
    return None


def _json_depth_error(text: str, source: str, limit: int) -> LayoutFileError | None:
    """An error at the first bracket that opens level ``limit + 1``, found by
    scanning the text, so the parser never recurses that deep."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
            if depth > limit:
                line, col = line_col(text, i)
                return LayoutFileError(f"nested more than {limit} levels deep", source=source, line=line, column=col)
        elif c in "]}":
            depth -= 1
        i += 1
    return None


# -- TOML ------------------------------------------------------------------------------

_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_TOML_END = re.compile(r"\s*\(at end of document\)$")


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if isinstance(getattr(exc, "lineno", None), int):  # Python 3.14+: the position as data
            raise LayoutFileError(
                f"TOML syntax error: {exc.msg}", source=source, line=exc.lineno, column=exc.colno
            ) from None
        # before 3.14 tomllib gives the position only inside its message
        msg = str(exc)
        line = col = None
        if m := _TOML_POS.search(msg):
            line, col = int(m.group(1)), int(m.group(2))
            msg = msg[: m.start()]
        elif m := _TOML_END.search(msg):
            line, col = line_col(text, len(text))
            msg = msg[: m.start()] + " at end of file"
        raise LayoutFileError(f"TOML syntax error: {msg}", source=source, line=line, column=col) from None
    except RecursionError:
        raise LayoutFileError(f"TOML nested more than {MAX_DEPTH} levels deep", source=source) from None
    except ValueError:  # tomllib's one plain ValueError: an integer beyond Python's digit limit
        raise LayoutFileError(
            f"TOML integer literal longer than {sys.get_int_max_str_digits()} digits; integers must fit in 64 bits",
            source=source,
        ) from None


# -- JSON ------------------------------------------------------------------------------


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(digits: str) -> int | HugeInt:
    return HugeInt(digits) if len(digits) > 20 else int(digits)


def _parse_json(text: str, source: str) -> Any:
    too_deep = _json_depth_error(text, source, MAX_DEPTH)
    if too_deep is not None:
        raise too_deep
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise LayoutFileError(
            f"JSON syntax error: {exc.msg}", source=source, line=exc.lineno, column=exc.colno
        ) from None
    except _DuplicateKey as exc:
        # JSON would keep the last value silently; TOML refuses, and so do we
        hits = list(re.finditer(re.escape(json.dumps(exc.key)) + r"\s*:", text))
        line, col = line_col(text, hits[1].start()) if len(hits) > 1 else (None, None)
        raise LayoutFileError(
            f"duplicate key {exc.key!r} in one object", source=source, line=line, column=col
        ) from None
    except RecursionError:
        raise LayoutFileError(f"JSON nested more than {MAX_DEPTH} levels deep", source=source) from None
    except ValueError as exc:
        raise LayoutFileError(f"JSON syntax error: {exc}", source=source) from None
