"""The one error a layout file raises, and how a key path is written in it."""

from __future__ import annotations

from ..._limits import MAX_MESSAGE, clip
from ..._names import shown

__all__ = ["LayoutFileError", "KeyPath", "key_text", "HugeInt"]

KeyPath = tuple["str | int", ...]


class LayoutFileError(ValueError):
    """A layout file that cannot be read: syntax, unknown key, bad value.

    ``str()`` gives ``FILE:LINE:COL: KEY: message`` with the parts that are
    known, on one line, with unprintable characters escaped.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = clip(message, MAX_MESSAGE)  # a message that quotes a huge value stays one short line
        self.source = source
        self.line = line
        self.column = column
        self.key = None if key is None else clip(key, MAX_MESSAGE // 4)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = shown(self.source)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        key = f"{shown(self.key)}: " if self.key else ""
        return f"{where}: {key}{shown(self.message)}"


class HugeInt:
    """A JSON integer literal too long to be a 64-bit integer, kept as its digits
    so that the schema check refuses it at its key."""

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<integer of {len(self.digits.lstrip('-'))} digits>"


def key_text(path: KeyPath) -> str:
    """``("smem", 2, "align")`` -> ``smem[2].align``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
