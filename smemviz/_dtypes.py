"""Element types: widths in bits and readable names, without importing cutlass.

A dtype can be a CuTe DSL numeric type (anything with an integer ``.width`` in
bits), a NumPy/PyTorch dtype (``.itemsize`` in bytes) or one of the short names
below. Sub-byte types are sized exactly: ``ceil(count * width / 8)`` bytes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DTYPE_NAMES", "dtype_width", "dtype_name", "dtype_bytes", "cutlass_type_name"]

# short name -> (width in bits, CuTe DSL type name)
DTYPE_NAMES: dict[str, tuple[int, str]] = {
    "f64": (64, "Float64"),
    "f32": (32, "Float32"),
    "tf32": (32, "TFloat32"),
    "f16": (16, "Float16"),
    "bf16": (16, "BFloat16"),
    "f8e4m3": (8, "Float8E4M3FN"),
    "f8e5m2": (8, "Float8E5M2"),
    "f8e8m0": (8, "Float8E8M0FNU"),
    "f6e2m3": (6, "Float6E2M3FN"),
    "f6e3m2": (6, "Float6E3M2FN"),
    "f4e2m1": (4, "Float4E2M1FN"),
    "i64": (64, "Int64"),
    "i32": (32, "Int32"),
    "i16": (16, "Int16"),
    "i8": (8, "Int8"),
    "i4": (4, "Int4"),
    "u64": (64, "Uint64"),
    "u32": (32, "Uint32"),
    "u16": (16, "Uint16"),
    "u8": (8, "Uint8"),
}

_SYNONYMS = {
    "float64": "f64",
    "fp64": "f64",
    "double": "f64",
    "float32": "f32",
    "fp32": "f32",
    "float": "f32",
    "tfloat32": "tf32",
    "float16": "f16",
    "fp16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "float8e4m3fn": "f8e4m3",
    "float8_e4m3fn": "f8e4m3",
    "fp8e4m3": "f8e4m3",
    "e4m3": "f8e4m3",
    "float8e5m2": "f8e5m2",
    "float8_e5m2": "f8e5m2",
    "fp8e5m2": "f8e5m2",
    "e5m2": "f8e5m2",
    "float8e8m0fnu": "f8e8m0",
    "float6e2m3fn": "f6e2m3",
    "float6e3m2fn": "f6e3m2",
    "float4e2m1fn": "f4e2m1",
    "fp4": "f4e2m1",
    "nvfp4": "f4e2m1",
    "e2m1": "f4e2m1",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "int4": "i4",
    "uint64": "u64",
    "uint32": "u32",
    "uint16": "u16",
    "uint8": "u8",
}

# CuTe DSL type name (lower case) -> short name, so cutlass types get short labels.
_BY_CUTLASS_NAME = {cut.lower(): short for short, (_, cut) in DTYPE_NAMES.items()}


def _canonical(name: str) -> str | None:
    key = name.strip().lower()
    if key in DTYPE_NAMES:
        return key
    if key in _SYNONYMS:
        return _SYNONYMS[key]
    key = key.replace("torch.", "").replace("numpy.", "")
    return _SYNONYMS.get(key) or _BY_CUTLASS_NAME.get(key) or (key if key in DTYPE_NAMES else None)


def dtype_width(dtype: Any) -> int:
    """Width of one element in bits; ``TypeError``/``ValueError`` for what is not a dtype."""
    if isinstance(dtype, str):
        short = _canonical(dtype)
        if short is None:
            known = ", ".join(DTYPE_NAMES)
            raise ValueError(f"unknown dtype name {dtype!r}; known names: {known}")
        return DTYPE_NAMES[short][0]
    width = getattr(dtype, "width", None)
    if isinstance(width, int) and not isinstance(width, bool):
        if width <= 0:
            raise ValueError(f"dtype {dtype!r} has a non-positive width {width}")
        return width
    itemsize = getattr(dtype, "itemsize", None)
    if isinstance(itemsize, int) and not isinstance(itemsize, bool) and itemsize > 0:
        return itemsize * 8
    raise TypeError(
        f"dtype must be a CuTe DSL numeric type (with .width), a NumPy/PyTorch dtype or a "
        f"name such as 'bf16'; got {dtype!r}"
    )


def dtype_name(dtype: Any) -> str | None:
    """A short readable name ("bf16", "f8e4m3", ...) for display and JSON."""
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return _canonical(dtype) or dtype
    for cand in (getattr(dtype, "__name__", None), str(dtype)):
        if cand:
            short = _canonical(cand)
            if short:
                return short
    return str(dtype)


def dtype_bytes(dtype: Any, count: int) -> int:
    """Bytes that ``count`` elements occupy, rounded up to whole bytes."""
    return -(-count * dtype_width(dtype) // 8)


def cutlass_type_name(dtype: Any) -> str | None:
    """The CuTe DSL type name for a short dtype name (``"bf16"`` -> ``"BFloat16"``)."""
    if not isinstance(dtype, str):
        return None
    short = _canonical(dtype)
    return DTYPE_NAMES[short][1] if short else None
