"""The names ``check_tma_descriptor`` takes and the driver's enum values behind them.

Kept free of imports (not even the rest of smemviz), so that the calibration script can load
this one file on a GPU machine and hand the driver exactly the values the check reasons about.
The values are ``cuda.h``'s: ``CUtensorMapDataType``, ``CUtensorMapInterleave``,
``CUtensorMapSwizzle``, ``CUtensorMapL2promotion`` and ``CUtensorMapFloatOOBfill``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "DATA_TYPES",
    "ELEMENT_BITS",
    "FLOAT_TYPES",
    "PACKED_TYPES",
    "INTERLEAVES",
    "SWIZZLES",
    "SWIZZLE_SPAN_BYTES",
    "L2_PROMOTIONS",
    "OOB_FILLS",
    "MAX_RANK",
]

MAX_RANK = 5  # cuTensorMapEncodeTiled: "the maximum supported dimensionality of 5"

DATA_TYPES: Mapping[str, int] = MappingProxyType(
    {
        "uint8": 0,
        "uint16": 1,
        "uint32": 2,
        "int32": 3,
        "uint64": 4,
        "int64": 5,
        "float16": 6,
        "float32": 7,
        "float64": 8,
        "bfloat16": 9,
        "float32_ftz": 10,
        "tfloat32": 11,
        "tfloat32_ftz": 12,
        # 16 packed 4- or 6-bit values; dimensions count the single values
        "16u4_align8b": 13,
        "16u4_align16b": 14,
        "16u6_align16b": 15,
    }
)

# bits one element (one packed value) takes in memory: a box's inner bytes are box_dims[0] of them.
# 16U4_ALIGN8B packs 16 values into 8 bytes; the two ALIGN16B types spread 16 values over 16 bytes.
ELEMENT_BITS: Mapping[str, int] = MappingProxyType(
    {
        "uint8": 8,
        "uint16": 16,
        "uint32": 32,
        "int32": 32,
        "uint64": 64,
        "int64": 64,
        "float16": 16,
        "float32": 32,
        "float64": 64,
        "bfloat16": 16,
        "float32_ftz": 32,
        "tfloat32": 32,
        "tfloat32_ftz": 32,
        "16u4_align8b": 4,
        "16u4_align16b": 8,
        "16u6_align16b": 8,
    }
)

FLOAT_TYPES = frozenset({"float16", "float32", "float64", "bfloat16", "float32_ftz", "tfloat32", "tfloat32_ftz"})
PACKED_TYPES = frozenset({"16u4_align8b", "16u4_align16b", "16u6_align16b"})

INTERLEAVES: Mapping[str, int] = MappingProxyType({"none": 0, "16B": 1, "32B": 2})

SWIZZLES: Mapping[str, int] = MappingProxyType(
    {
        "none": 0,
        "32B": 1,
        "64B": 2,
        "128B": 3,
        "128B_atom_32B": 4,
        "128B_atom_32B_flip_8B": 5,
        "128B_atom_64B": 6,
    }
)

# the span (bytes) each swizzle permutes within: a box's inner bytes may not exceed it
SWIZZLE_SPAN_BYTES: Mapping[str, int] = MappingProxyType(
    {
        "none": 0,
        "32B": 32,
        "64B": 64,
        "128B": 128,
        "128B_atom_32B": 128,
        "128B_atom_32B_flip_8B": 128,
        "128B_atom_64B": 128,
    }
)

L2_PROMOTIONS: Mapping[str, int] = MappingProxyType({"none": 0, "64B": 1, "128B": 2, "256B": 3})

OOB_FILLS: Mapping[str, int] = MappingProxyType({"none": 0, "nan_request_zero_fma": 1})
