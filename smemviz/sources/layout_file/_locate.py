"""Where a key path sits in the file's text, for error messages.

JSON positions are exact (one pass over the text); TOML positions are found
from table headers and ``key =`` lines, which covers the layout schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._error import KeyPath

__all__ = ["line_col", "TomlLocator", "JsonLocator", "Locator"]


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


class TomlLocator:
    """Best-effort line/column of a key path in TOML text (tables and arrays of tables)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def _headers(self) -> list[tuple[int, str]]:
        out = []
        for i, line in enumerate(self.lines):
            m = re.match(r"\s*\[\[?\s*([A-Za-z0-9_\-\"' .]+?)\s*\]\]?", line)
            if m:
                out.append((i, m.group(1).strip("\"' ")))
        return out

    def _find_key(self, key: str, start: int, stop: int) -> tuple[int, int] | None:
        pattern = re.compile(r"\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
        for i in range(start, min(stop, len(self.lines))):
            if pattern.match(self.lines[i]):
                return i + 1, self.lines[i].index(key) + 1
        return None

    def __call__(self, path: KeyPath) -> tuple[int, int] | None:
        if not path:
            return None
        headers = self._headers()
        first_header = headers[0][0] if headers else len(self.lines)
        if len(path) == 1 or not isinstance(path[1], int):
            return self._find_key(str(path[0]), 0, first_header)
        section, index = str(path[0]), path[1]
        own = [i for i, name in headers if name == section]
        if index >= len(own):
            return self._find_key(section, 0, first_header)  # inline array
        start = own[index]
        stop = next((i for i, _ in headers if i > start), len(self.lines))
        if len(path) > 3 and isinstance(path[3], int):  # [[smem.access]] tables under the entry
            found = self._nested(headers, section, start, path[2:])
            if found:
                return found
        if len(path) > 2:
            found = self._find_key(str(path[2]), start + 1, stop)
            if found:
                return found
        return start + 1, self.lines[start].index("[") + 1

    def _nested(
        self, headers: list[tuple[int, str]], section: str, start: int, rest: KeyPath
    ) -> tuple[int, int] | None:
        """``[[section.key]]`` number ``rest[1]`` after the entry at line ``start``, and ``rest[2]`` in it."""
        sub = f"{section}.{rest[0]}"
        end = next((i for i, name in headers if name == section and i > start), len(self.lines))
        subs = [i for i, name in headers if name == sub and start < i < end]
        index = rest[1]
        if not isinstance(index, int) or index >= len(subs):
            return None
        s0 = subs[index]
        s1 = next((i for i, _ in headers if i > s0), len(self.lines))
        if len(rest) > 2:
            found = self._find_key(str(rest[2]), s0 + 1, s1)
            if found:
                return found
        return s0 + 1, self.lines[s0].index("[") + 1


class JsonLocator:
    """Line/column of every key and array element of (valid) JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._positions: dict[KeyPath, int] | None = None

    def __call__(self, path: KeyPath) -> tuple[int, int] | None:
        if self._positions is None:
            self._positions = _json_positions(self.text)
        while path:
            if path in self._positions:
                return line_col(self.text, self._positions[path])
            path = path[:-1]
        return None


def _json_positions(text: str) -> dict[KeyPath, int]:
    positions: dict[KeyPath, int] = {}
    stack: list[list[Any]] = []  # [kind, path, key or index, expecting_key]
    i, n = 0, len(text)
    string_re = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)

    def value_starts(at: int) -> tuple[Any, ...] | None:
        if not stack:
            return ()
        frame = stack[-1]
        if frame[0] == "array":
            frame[2] += 1
            path = (*frame[1], frame[2])
            positions[path] = at
            return path
        return (*frame[1], frame[2])

    while i < n:
        c = text[i]
        if c in " \t\r\n,:":
            i += 1
            continue
        if c == '"':
            m = string_re.match(text, i)
            end = m.end() if m else n
            if stack and stack[-1][0] == "object" and stack[-1][3]:
                key = json.loads(text[i:end])
                stack[-1][2] = key
                stack[-1][3] = False
                positions[tuple(stack[-1][1]) + (key,)] = i
            else:
                value_starts(i)
                if stack and stack[-1][0] == "object":
                    stack[-1][3] = True
            i = end
            continue
        if c in "{[":
            path = value_starts(i)
            stack.append(["object" if c == "{" else "array", path or (), -1, c == "{"])
            i += 1
            continue
        if c in "}]":
            stack.pop()
            if stack and stack[-1][0] == "object":
                stack[-1][3] = True
            i += 1
            continue
        j = i
        while j < n and text[j] not in " \t\r\n,:]}":
            j += 1
        value_starts(i)
        if stack and stack[-1][0] == "object":
            stack[-1][3] = True
        i = j
    return positions


Locator = TomlLocator | JsonLocator
