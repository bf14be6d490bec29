"""Names people read: the one rule for what a name may hold, and the one way
any text from outside is shown.

A name is printable text (``str.isprintable()``): no control characters
(NUL, ESC, newlines), no invisible format characters (bidi overrides, zero
widths), no lone surrogates, no spaces other than the ASCII one. Such
characters would drive a terminal, hide text in a review or break an SVG, so
smemviz's allocations refuse them when made. Names can still reach a view by
other roads (CUTLASS's allocators, a plan read back from JSON, a pipeline
object's ``name``), so every renderer also passes text through
:func:`shown`, which writes those characters as visible escapes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_name", "shown", "first_unprintable"]


def first_unprintable(text: str) -> int | None:
    """Index of the first character a name may not hold, or ``None``."""
    if text.isprintable():
        return None
    return next(i for i, c in enumerate(text) if not c.isprintable())


def check_name(name: Any, what: str) -> None:
    """Refuse a name that is not a non-empty printable ``str``.

    Raises :class:`~smemviz.DeclarationTypeError` / :class:`~smemviz.DeclarationError`
    with ``field="name"``.
    """
    from ._errors import DeclarationError, DeclarationTypeError

    if not isinstance(name, str):
        raise DeclarationTypeError(f"{what} name must be a str, got {type(name).__name__} {name!r}", field="name")
    if not name:
        raise DeclarationError(f"{what} name must not be empty", allocation=name, field="name")
    bad = first_unprintable(name)
    if bad is not None:
        raise DeclarationError(
            f"{what} name {name!r} holds the unprintable character {name[bad]!r} at index {bad}; "
            "names must be printable text (no control, format or line-break characters)",
            allocation=name,
            field="name",
        )


def shown(text: Any) -> str:
    """``text`` as a person may see it: unprintable characters become escapes
    such as ``\\x1b`` or ``\\u202e``; printable text is returned unchanged."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
