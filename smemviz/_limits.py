"""How much one input may make smemviz walk: the bounds of the bank analysis, in one place.

A layout file, a plan document or a call can describe work without end (a CTA of 2**62
warps, a zero-stride tile of 10**12 rows, a swizzle mask of 2**(10**11) bits). Each such
value is refused where it is read, naming the key or the parameter, before any work
starts. The bounds sit far above anything a kernel can ask for:

- ``MAX_WARPS``: 32 warps per CTA (a CTA holds at most 1024 threads on every
  architecture smemviz knows; a warp is 32 of them).
- ``MAX_INSTRUCTIONS``: 16,384 warp instructions per access. Reading the largest shared
  memory of any architecture smemviz knows (328 KiB) once with the narrowest instruction
  (32 lanes of 1 byte) takes 10,496.
- ``MAX_PLAN_INSTRUCTIONS``: 65,536 warp instructions for all the accesses of one plan
  together; accesses past it are reported as not analysed.
- ``MAX_SWIZZLE_BITS``: a swizzle ``S<B,M,S>`` with ``B + M + S <= 32``, what the CuTe DSL
  takes (it works on 32-bit offsets and makes a larger one the identity swizzle).
- ``MAX_NESTING``: 16 levels of parentheses in a layout; ``MAX_MODES``: 64 integers in
  a layout's shape; ``MAX_LAYOUT_TEXT``: 4,096 characters of layout text.
- Integers are 64-bit signed, as TOML requires of every reader.
- ``SHOWN_CHARS``: a message quotes at most this many characters of a value, and
  ``MAX_MESSAGE`` bounds a whole message (a layout file's or a plan's).
"""

from __future__ import annotations

from typing import Any

from . import hardware
from ._errors import DeclarationError, DeclarationTypeError

__all__ = [
    "CTA_THREADS",
    "MAX_WARPS",
    "MAX_INSTRUCTIONS",
    "MAX_PLAN_INSTRUCTIONS",
    "MIN_ELEMENTS_PER_INSTRUCTION",
    "MAX_TILE_ELEMENTS",
    "MAX_SWIZZLE_BITS",
    "MAX_NESTING",
    "MAX_MODES",
    "MAX_LAYOUT_TEXT",
    "MAX_DTYPE_TEXT",
    "INT64_MIN",
    "INT64_MAX",
    "INT64_DIGITS",
    "SHOWN_CHARS",
    "MAX_MESSAGE",
    "clip",
    "shorten",
    "int_size",
    "check_int64",
    "check_pair",
    "check_warps",
    "swizzle_problem",
    "digits_problem",
]

CTA_THREADS = 1024  # the most threads one CTA may hold, on every architecture since sm_20
MAX_WARPS = CTA_THREADS // hardware.WARP_THREADS
MAX_INSTRUCTIONS = 16384
MAX_PLAN_INSTRUCTIONS = 4 * MAX_INSTRUCTIONS
# no warp instruction covers fewer elements: 32 lanes of at least one element each
MIN_ELEMENTS_PER_INSTRUCTION = hardware.WARP_THREADS
MAX_TILE_ELEMENTS = MAX_INSTRUCTIONS * MIN_ELEMENTS_PER_INSTRUCTION
MAX_SWIZZLE_BITS = 32
MAX_NESTING = 16
MAX_MODES = 64
MAX_LAYOUT_TEXT = 4096
MAX_DTYPE_TEXT = 64  # far longer than any dtype name
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT64_DIGITS = len(str(INT64_MAX))  # 19
SHOWN_CHARS = 60
MAX_MESSAGE = 1000  # characters of one error message, whatever it quotes


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[: max(limit - 3, 1)]}... ({len(text)} characters)"


def int_size(value: int) -> str:
    """An integer for a message: itself when short, else its size (never Python's digit limit)."""
    if value.bit_length() <= 128:
        return str(value)
    return f"an integer of {value.bit_length()} bits"


def shorten(value: object, limit: int = SHOWN_CHARS) -> str:
    """A value for a message, cheap and short however large it is: text as ``repr`` cut to
    ``limit``, a large integer by its size, a large collection by its length."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return int_size(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else _cut_text(value, limit)
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        if len(value) <= 8 and all(_is_small(v) for v in (value.values() if isinstance(value, dict) else value)):
            return clip(repr(value), limit)
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, (float, bytes)):
        return clip(repr(value), limit)
    return f"a {type(value).__name__}"


def _cut_text(value: str, limit: int) -> str:
    return f"{value[: max(limit - 3, 1)]!r}... ({len(value)} characters)"


def _is_small(value: object) -> bool:
    if isinstance(value, int):
        return value.bit_length() <= 128
    return value is None or isinstance(value, (float, bool)) or (isinstance(value, str) and len(value) <= 40)


def digits_problem(digits: str) -> str | None:
    """Why an integer written as ``digits`` (an optional '-', then digits) is not a 64-bit one,
    found before converting it (a 5,000-digit literal would hit Python's own digit limit)."""
    body = digits.lstrip("-+")
    if len(body.lstrip("0")) > INT64_DIGITS:
        return f"an integer of {len(body)} digits does not fit in 64 bits"
    value = int(digits)
    if not INT64_MIN <= value <= INT64_MAX:
        return f"{value} does not fit in 64 bits"
    return None


def check_int64(value: Any, name: str, *, minimum: int = INT64_MIN, field: str | None = None) -> int:
    """``value`` as a 64-bit integer of at least ``minimum``, or the refusal naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DeclarationTypeError(
            f"{name} must be an integer, got {type(value).__name__} {shorten(value)}", field=field or name
        )
    if not INT64_MIN <= value <= INT64_MAX:
        raise DeclarationError(f"{name} must fit in 64 bits, got {int_size(value)}", field=field or name)
    if value < minimum:
        raise DeclarationError(f"{name} must be at least {minimum}, got {value}", field=field or name)
    return value


def check_pair(value: Any, name: str, *, field: str | None = None) -> tuple[int, int]:
    """``value`` = (rows, columns): two positive integers (warps of a CTA, lanes of a warp)."""
    if (
        not isinstance(value, (tuple, list))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise DeclarationTypeError(
            f"{name} must be two positive integers (rows, columns), got {shorten(value)}", field=field or name
        )
    rows, cols = value
    if rows < 1 or cols < 1:
        raise DeclarationError(
            f"{name} must be two positive integers (rows, columns), got {shorten(tuple(value))}", field=field or name
        )
    return rows, cols


def check_warps(warps: Any, name: str = "warps", *, field: str | None = None) -> tuple[int, int]:
    """``warps`` = (rows, columns): two positive integers whose product a CTA can hold."""
    rows, cols = check_pair(warps, name, field=field)
    if rows > MAX_WARPS or cols > MAX_WARPS or rows * cols > MAX_WARPS:
        raise DeclarationError(
            f"{name} {shorten(tuple(warps))} arranges {int_size(rows * cols)} warps; a CTA holds at most "
            f"{MAX_WARPS} ({CTA_THREADS} threads of {hardware.WARP_THREADS})",
            field=field or name,
        )
    return rows, cols


def swizzle_problem(bits: int, base: int, shift: int) -> str | None:
    """Why ``S<bits,base,shift>`` is not a swizzle CuTe takes, or ``None``."""
    if min(bits, base, shift) < 0:
        return "B, M and S must be non-negative"
    if bits + base + shift > MAX_SWIZZLE_BITS:
        return (
            f"B + M + S is {int_size(bits + base + shift)}; CuTe's swizzles work on {MAX_SWIZZLE_BITS}-bit offsets "
            f"(B + M + S at most {MAX_SWIZZLE_BITS})"
        )
    if bits and shift < bits:
        return "the shift S must be at least the bit count B, or the XOR reads the bits it writes"
    return None
