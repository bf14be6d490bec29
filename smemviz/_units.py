"""Offsets and sizes: the one align-up rule and the one way sizes are written."""

from __future__ import annotations

__all__ = ["align_up", "kib_label", "fmt_units"]


def align_up(value: int, alignment: int) -> int:
    """The smallest multiple of ``alignment`` that is ``>= value``."""
    return -(-value // alignment) * alignment


def kib_label(nbytes: int) -> str:
    """``"145 KiB"``, ``"0.5 KiB"``; ``"0"`` for nothing."""
    if nbytes == 0:
        return "0"
    text = f"{nbytes / 1024:.3f}".rstrip("0").rstrip(".")
    return f"{text} KiB"


def fmt_units(value: int, unit: str) -> str:
    """``"148,480 B (145 KiB)"`` for bytes; ``"256 cols"`` for columns."""
    if unit == "B":
        if value >= 1024:
            return f"{value:,} B ({kib_label(value)})"
        return f"{value:,} B"
    return f"{value:,} {unit}"
