"""Ask the CUDA driver which TMA descriptors it encodes, to calibrate ``check_tma_descriptor``.

Runs on a machine with an NVIDIA GPU and its driver (``libcuda.so.1``), with nothing else installed:
the driver is called through ctypes, and the enum tables are read from the one smemviz file that holds
them, so the driver is handed exactly the values the check reasons about. Every case (edge cases
around each documented rule, then random ones from a fixed seed) is encoded with
``cuTensorMapEncodeTiled`` and written with the driver's ``CUresult`` to a CSV that
``tests/analysis/test_tma_descriptor_replay.py`` replays on the CPU.

    python3 -m benchmarks.tma_descriptor_h200 --out results/   # tma_descriptor_h200.csv + .json

The global address needs no memory behind it for encoding (only its alignment is judged), but the
cases use a real allocation's address plus an offset, so that nothing hangs on that.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import importlib.util
import itertools
import json
import platform
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
ENUMS_FILE = ROOT / "smemviz" / "analysis" / "tma" / "_enums.py"
CSV_NAME = "tma_descriptor_h200.csv"
META_NAME = "tma_descriptor_h200.json"
SEED = 29
RANDOM_CASES = 1500
NEAR_CASES = 2000
CUDA_SUCCESS = 0


def load_enums() -> ModuleType:
    """The enum tables, loaded from their file alone (the package's __init__ is not needed)."""
    spec = importlib.util.spec_from_file_location("_tma_enums", ENUMS_FILE)
    assert spec is not None and spec.loader is not None, ENUMS_FILE
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


E = load_enums()


@dataclass(frozen=True)
class Case:
    """One call of cuTensorMapEncodeTiled, in check_tma_descriptor's terms."""

    family: str
    data_type: str
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str = "none"
    swizzle: str = "none"
    global_address: int = 0
    l2_promotion: str = "none"
    oob_fill: str = "none"


CSV_FIELDS = ("case", *(f.name for f in fields(Case)), "result", "result_name")
LIST_FIELDS = ("global_dims", "global_strides", "box_dims", "element_strides")


def _bytes(data_type: str, count: int) -> int:
    return count * E.ELEMENT_BITS[data_type] // 8


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def packed_strides(data_type: str, dims: Sequence[int], align: int = 16) -> tuple[int, ...]:
    """Strides of a dense tensor of ``dims`` whose rows are padded to ``align`` bytes."""
    strides: list[int] = []
    row = -(-_bytes(data_type, dims[0]) // align) * align
    for dim in dims[1:]:
        strides.append(row)
        row *= dim
    return tuple(strides)


def base_case(family: str, data_type: str, rank: int, address: int, **changes: object) -> Case:
    """A descriptor the documentation allows: 64-byte inner box, 8 rows, no swizzle."""
    inner = max(1, 64 * 8 // E.ELEMENT_BITS[data_type])
    if data_type in ("16u4_align16b", "16u6_align16b"):
        inner = 128
    dims = (256,) * rank
    box = (inner,) + (8,) * (rank - 1)
    case = Case(
        family,
        data_type,
        dims,
        packed_strides(data_type, dims, 32),
        box,
        (1,) * rank,
        global_address=address,
    )
    return _replace(case, **changes)


def _replace(case: Case, **changes: object) -> Case:
    values = {f.name: getattr(case, f.name) for f in fields(Case)}
    values.update(changes)
    return Case(**values)


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return values[:index] + (value,) + values[index + 1 :]


ALL_TYPES = tuple(E.DATA_TYPES)
PLAIN_TYPES = tuple(t for t in ALL_TYPES if t not in E.PACKED_TYPES)


def edge_cases(address: int) -> Iterator[Case]:
    """Cases on both sides of every documented rule, one parameter moved at a time."""
    yield from _rank_cases(address)
    yield from _dim_cases(address)
    yield from _stride_cases(address)
    yield from _box_cases(address)
    yield from _swizzle_cases(address)
    yield from _element_stride_cases(address)
    yield from _interleave_cases(address)
    yield from _address_cases(address)
    yield from _option_cases(address)
    yield from _packed_cases(address)


def _rank_cases(address: int) -> Iterator[Case]:
    for data_type in ALL_TYPES:
        for rank in range(1, 6):
            yield base_case("rank", data_type, rank, address)


def _dim_cases(address: int) -> Iterator[Case]:
    values = (0, 1, 2, 127, 128, 2**16, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**33)
    for data_type in ("uint8", "float16", "float32", "float64"):
        for rank in (1, 2, 3, 5):
            for index in range(rank):
                for value in values:
                    case = base_case("global_dims", data_type, rank, address)
                    dims = _set(case.global_dims, index, value)
                    # keep the strides dense where they can be, so only the dimension is judged
                    strides = packed_strides(data_type, dims) if 0 < value <= 2**16 else case.global_strides
                    yield _replace(case, global_dims=dims, global_strides=strides)


def _stride_cases(address: int) -> Iterator[Case]:
    values = (0, 1, 8, 15, 16, 24, 32, 48, 64, 96, 2**20 + 16, 2**39, 2**40 - 32, 2**40 - 16, 2**40, 2**40 + 16, 2**41)
    for data_type in ("uint8", "float16", "float64"):
        for rank in (2, 3, 5):
            for index in range(rank - 1):
                for value in values:
                    case = base_case("global_strides", data_type, rank, address, global_dims=(16,) * rank)
                    case = _replace(
                        case,
                        global_strides=packed_strides(data_type, case.global_dims),
                        box_dims=(case.box_dims[0] if _bytes(data_type, 16) >= 64 else 16,) + (4,) * (rank - 1),
                    )
                    yield _replace(case, global_strides=_set(case.global_strides, index, value))
    # the documentation's padding relations: strides below the tensor's own row or plane
    for data_type in ("uint8", "float16", "float32"):
        dims = (64, 32, 8)
        for s0 in (16, 32, _bytes(data_type, 64) - 16, _bytes(data_type, 64), _bytes(data_type, 64) + 16):
            for s1 in (16, 32, s0, s0 * 31, s0 * 32, s0 * 32 + 16, 2**20):
                if s0 <= 0:
                    continue
                box = (16 * 8 // E.ELEMENT_BITS[data_type], 4, 4)
                yield Case("stride_order", data_type, dims, (s0, s1), box, (1, 1, 1), global_address=address)
    # strides that run backwards (outer smaller than inner)
    for data_type in ("float16", "float32"):
        yield Case("stride_order", data_type, (64, 64, 64), (2**16, 128), (8, 8, 8), (1, 1, 1), global_address=address)
        yield Case("stride_order", data_type, (64, 64, 64), (128, 128), (8, 8, 8), (1, 1, 1), global_address=address)


def _box_cases(address: int) -> Iterator[Case]:
    values = (0, 1, 2, 3, 4, 8, 16, 17, 32, 64, 128, 255, 256, 257, 512, 2**16)
    for data_type in PLAIN_TYPES:
        for rank in (1, 2, 3):
            for index in range(rank):
                for value in values:
                    case = base_case("box_dims", data_type, rank, address)
                    yield _replace(case, box_dims=_set(case.box_dims, index, value))
    # a box larger than the tensor it reads from
    for data_type in ("uint8", "float16"):
        yield base_case("box_dims", data_type, 2, address, global_dims=(16, 4), global_strides=(32,), box_dims=(32, 8))


def _swizzle_cases(address: int) -> Iterator[Case]:
    inner_bytes = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 192, 256, 512, 1024)
    for data_type in PLAIN_TYPES:
        bits = E.ELEMENT_BITS[data_type]
        for swizzle in E.SWIZZLES:
            for nbytes in inner_bytes:
                box0 = nbytes * 8 // bits
                if box0 < 1:
                    continue
                yield base_case(
                    "swizzle_span",
                    data_type,
                    2,
                    address,
                    box_dims=(box0, 8),
                    swizzle=swizzle,
                    global_dims=(2048, 64),
                    global_strides=(_bytes(data_type, 2048),),
                )


def _element_stride_cases(address: int) -> Iterator[Case]:
    for data_type in ("uint8", "float16", "float32"):
        for interleave in ("none", "16B"):
            rank = 3
            for index in range(rank):
                for value in range(10):
                    case = base_case("element_strides", data_type, rank, address, interleave=interleave)
                    if interleave != "none":
                        case = _replace(case, box_dims=(16 * 8 // E.ELEMENT_BITS[data_type], 8, 8))
                    yield _replace(case, element_strides=_set(case.element_strides, index, value))
        # strides larger than the box along that dimension
        yield base_case("element_strides", data_type, 2, address, box_dims=(64, 4), element_strides=(1, 8))
        yield base_case("element_strides", data_type, 2, address, box_dims=(64, 2), element_strides=(1, 3))


def _interleave_cases(address: int) -> Iterator[Case]:
    for data_type in ("uint8", "float16", "float32", "float64", "bfloat16", "int64"):
        bits = E.ELEMENT_BITS[data_type]
        for interleave in E.INTERLEAVES:
            for swizzle in E.SWIZZLES:
                for rank in (2, 3, 4):
                    for nbytes in (8, 16, 32, 48, 64, 128, 256):
                        box0 = max(1, nbytes * 8 // bits)
                        dims = (64,) * rank
                        yield Case(
                            "interleave",
                            data_type,
                            dims,
                            packed_strides(data_type, dims, 32),
                            (box0,) + (8,) * (rank - 1),
                            (1,) * rank,
                            interleave,
                            swizzle,
                            address,
                        )
        # interleaved strides a multiple of 16 but not of 32
        for interleave in ("16B", "32B"):
            yield Case(
                "interleave",
                data_type,
                (16, 8, 8),
                (48, 48 * 8),
                (8 * 8 // bits or 1, 8, 8),
                (1, 1, 1),
                interleave,
                "32B",
                address,
            )


def _address_cases(address: int) -> Iterator[Case]:
    offsets = (0, 1, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256)
    for data_type in ("uint8", "float16", "float32"):
        for interleave in E.INTERLEAVES:
            swizzle = "32B" if interleave == "32B" else "none"
            for offset in offsets:
                case = base_case(
                    "global_address", data_type, 3, address + offset, interleave=interleave, swizzle=swizzle
                )
                if interleave != "none":
                    case = _replace(case, box_dims=(16 * 8 // E.ELEMENT_BITS[data_type], 8, 8))
                yield case


def _option_cases(address: int) -> Iterator[Case]:
    for data_type in PLAIN_TYPES:
        for l2 in E.L2_PROMOTIONS:
            for oob in E.OOB_FILLS:
                yield base_case("l2_oob", data_type, 2, address, l2_promotion=l2, oob_fill=oob)


def _packed_cases(address: int) -> Iterator[Case]:
    for data_type in sorted(E.PACKED_TYPES):
        for swizzle in E.SWIZZLES:
            for box0 in (16, 32, 64, 128, 256):
                for offset in (0, 16):
                    yield base_case(
                        "packed",
                        data_type,
                        2,
                        address + offset,
                        box_dims=(box0, 4),
                        global_dims=(256, 16),
                        global_strides=(256,),
                        swizzle=swizzle,
                    )
        for dim0 in (2, 3, 64, 128, 129, 256):
            yield base_case("packed", data_type, 2, address, global_dims=(dim0, 16), global_strides=(256,))
        for stride in (16, 48, 64, 272):
            yield base_case("packed", data_type, 2, address, global_dims=(128, 16), global_strides=(stride,))
        for oob in E.OOB_FILLS:
            for interleave in E.INTERLEAVES:
                yield base_case("packed", data_type, 3, address, oob_fill=oob, interleave=interleave)


def random_cases(address: int, count: int = RANDOM_CASES, seed: int = SEED) -> Iterator[Case]:
    """Descriptors drawn near the rules' edges: mostly well-formed, each part sometimes broken."""
    rng = random.Random(seed)
    for _ in range(count):
        data_type = rng.choice(ALL_TYPES)
        rank = rng.choice((1, 2, 2, 3, 3, 4, 5))
        dims = tuple(_pick_dim(rng) for _ in range(rank))
        align = rng.choice((16, 16, 32, 1, 8))
        strides = packed_strides(data_type, [d if d < 2**20 else 64 for d in dims], max(align, 1))
        if rng.random() < 0.15 and strides:
            strides = _set(strides, rng.randrange(len(strides)), rng.choice((0, 8, 24, 2**40, 2**40 - 16, 2**39)))
        box = tuple(rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 256, 257, 0, 3, 24, 96)) for _ in range(rank))
        estrides = tuple(rng.choice((1,) * 12 + tuple(range(10))) for _ in range(rank))
        interleave = rng.choice(("none",) * 6 + ("16B", "32B"))
        swizzle = rng.choice(tuple(E.SWIZZLES) + ("none", "128B", "64B"))
        offset = rng.choice((0,) * 6 + (8, 16, 32, 48, 4))
        yield Case(
            "random",
            data_type,
            dims,
            strides,
            box,
            estrides,
            interleave,
            swizzle,
            address + offset + rng.choice((0, 0, 0, 256)),
            rng.choice(tuple(E.L2_PROMOTIONS)),
            rng.choice(tuple(E.OOB_FILLS)),
        )


def _pick_dim(rng: random.Random) -> int:
    return rng.choice((1, 2, 8, 16, 64, 100, 128, 256, 1000, 4096, 2**20, 2**32, 2**32 + 1, 0))


def probe_cases(address: int) -> Iterator[Case]:
    """Denser sweeps where the driver was seen to answer otherwise than its documentation."""
    yield from _rank5_cases(address)
    yield from _interleave_sweep(address)
    yield from _high_address_cases(address)


def _rank5_cases(address: int) -> Iterator[Case]:
    sizes = (1, 2, 4, 8)
    dims = (256,) * 5
    for data_type in ("uint8", "float16", "float64"):
        box0 = 16 * 8 // E.ELEMENT_BITS[data_type]
        strides = packed_strides(data_type, dims)
        for outer in itertools.product(sizes, repeat=4):
            if data_type != "uint8" and len(set(outer)) > 2:
                continue
            yield Case("rank5_box", data_type, dims, strides, (box0, *outer), (1,) * 5, global_address=address)
        for inner in (16, 32, 64, 128, 256):
            for k in (1, 2, 4, 8, 16, 32):
                yield Case(
                    "rank5_box",
                    data_type,
                    dims,
                    strides,
                    (inner * 8 // E.ELEMENT_BITS[data_type], k, k, k, k),
                    (1,) * 5,
                    global_address=address,
                )
    for picks in itertools.product((16, 256), repeat=5):
        for box in ((16, 4, 4, 4, 4), (16, 8, 8, 8, 8)):
            yield Case(
                "rank5_dims", "uint8", picks, packed_strides("uint8", picks), box, (1,) * 5, global_address=address
            )
    for estrides in ((1, 2, 2, 2, 2), (1, 8, 8, 8, 8), (8, 1, 1, 1, 1), (1, 1, 1, 1, 8), (2, 2, 2, 2, 2)):
        for box in ((16, 8, 8, 8, 8), (16, 16, 16, 16, 16), (64, 8, 8, 8, 8)):
            yield Case(
                "rank5_estrides", "uint8", dims, packed_strides("uint8", dims), box, estrides, global_address=address
            )
    for data_type in ("uint8", "float32"):
        for outer in ((8, 8, 8), (64, 64, 64), (256, 256, 256), (256, 1, 256), (16, 16, 16)):
            for inner in (16, 128, 256):
                d4 = (256,) * 4
                yield Case(
                    "rank4_box",
                    data_type,
                    d4,
                    packed_strides(data_type, d4),
                    (inner * 8 // E.ELEMENT_BITS[data_type], *outer),
                    (1,) * 4,
                    global_address=address,
                )


def _interleave_sweep(address: int) -> Iterator[Case]:
    small = (1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64, 80, 96, 112)
    inner_bytes = small + (128, 144, 160, 192, 224, 256, 272, 384, 512, 1024, 2048)
    for data_type in ("uint8", "float16", "float32", "float64"):
        bits = E.ELEMENT_BITS[data_type]
        for interleave in ("16B", "32B"):
            for swizzle in ("none", "32B", "64B", "128B"):
                for nbytes in inner_bytes:
                    if nbytes * 8 % bits or not 1 <= nbytes * 8 // bits <= 256:
                        continue
                    dims = (256, 64, 64)
                    yield Case(
                        "interleave_inner",
                        data_type,
                        dims,
                        packed_strides(data_type, dims, 32),
                        (nbytes * 8 // bits, 8, 8),
                        (1, 1, 1),
                        interleave,
                        swizzle,
                        address,
                    )
    for interleave in ("16B", "32B"):
        for nbytes in (16, 32, 64, 96, 128, 256):
            for outer in ((8, 8), (64, 64), (256, 8), (256, 256), (1, 256)):
                dims = (256, 256, 256)
                yield Case(
                    "interleave_outer",
                    "uint8",
                    dims,
                    packed_strides("uint8", dims, 32),
                    (nbytes, *outer),
                    (1, 1, 1),
                    interleave,
                    "none",
                    address,
                )
        for stride in (16, 32, 48, 64, 80, 96, 128, 256, 4096):
            yield Case(
                "interleave_stride",
                "uint8",
                (16, 64, 64),
                (stride, stride * 64),
                (16, 8, 8),
                (1, 1, 1),
                interleave,
                "none",
                address,
            )
        for dim0 in (1, 8, 16, 24, 32, 48, 64, 4096):
            dims = (dim0, 64, 64)
            yield Case(
                "interleave_dims",
                "uint8",
                dims,
                packed_strides("uint8", dims, 32),
                (16, 8, 8),
                (1, 1, 1),
                interleave,
                "none",
                address,
            )


def _high_address_cases(address: int) -> Iterator[Case]:
    for bit in range(40, 64):
        for below in (0, 16):
            yield base_case("global_address_high", "float16", 2, 2**bit - below)
    yield base_case("global_address_high", "float16", 2, 2**64 - 16)


def near_cases(address: int, count: int = NEAR_CASES, seed: int = SEED + 1) -> Iterator[Case]:
    """Descriptors well-formed by the documentation, half of them then moved across one rule."""
    rng = random.Random(seed)
    plain = tuple(t for t in PLAIN_TYPES)
    swizzles = ("none", "32B", "64B", "128B")
    for _ in range(count):
        data_type = rng.choice(plain)
        bits = E.ELEMENT_BITS[data_type]
        rank = rng.choice((1, 2, 2, 3, 3, 4, 5))
        interleave = rng.choice(("none",) * 5 + ("16B", "32B")) if rank >= 3 else "none"
        swizzle = rng.choice(swizzles)
        span = E.SWIZZLE_SPAN_BYTES[swizzle] if interleave == "none" and swizzle != "none" else 256
        inner = rng.choice([n for n in (16, 32, 48, 64, 96, 128, 192, 256) if n <= span])
        box0 = max(1, min(256, inner * 8 // bits))
        outer = tuple(rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 256)) for _ in range(rank - 1))
        dims = (rng.choice((box0, 64, 256, 1000, 4096, 2**20)),) + tuple(
            rng.choice((1, 3, 8, 64, 100, 256, 4096, 2**16)) for _ in range(rank - 1)
        )
        strides = packed_strides(data_type, dims, 32)
        estrides = tuple(rng.choice((1, 1, 1, 2, 3, 8)) for _ in range(rank))
        case = Case(
            "random_near",
            data_type,
            dims,
            strides,
            (box0, *outer),
            estrides,
            interleave,
            swizzle,
            address + rng.choice((0, 32, 64, 256)),
            rng.choice(tuple(E.L2_PROMOTIONS)),
            rng.choice(("none", "nan_request_zero_fma")) if data_type in E.FLOAT_TYPES else "none",
        )
        if rng.random() < 0.5:
            case = _perturb(rng, case)
        yield case


def _perturb(rng: random.Random, case: Case) -> Case:
    """Move one parameter of ``case`` to a value some rule may refuse."""
    rank = len(case.global_dims)
    which = rng.choice(("dims", "strides", "box", "estrides", "swizzle", "address", "oob", "interleave"))
    i = rng.randrange(rank)
    if which == "dims":
        return _replace(case, global_dims=_set(case.global_dims, i, rng.choice((0, 2**32, 2**32 + 1))))
    if which == "strides" and rank > 1:
        j = rng.randrange(rank - 1)
        value = case.global_strides[j] + rng.choice((8, 16, -8, 2**40))
        return _replace(case, global_strides=_set(case.global_strides, j, max(value, 0)))
    if which == "box":
        return _replace(case, box_dims=_set(case.box_dims, i, rng.choice((0, 257, case.box_dims[i] + 1, 512))))
    if which == "estrides":
        return _replace(case, element_strides=_set(case.element_strides, i, rng.choice((0, 9, 16))))
    if which == "swizzle":
        return _replace(case, swizzle=rng.choice(tuple(E.SWIZZLES)))
    if which == "address":
        return _replace(case, global_address=case.global_address + rng.choice((4, 8, 16, 24)))
    if which == "oob":
        return _replace(case, oob_fill="nan_request_zero_fma")
    return _replace(case, interleave=rng.choice(tuple(E.INTERLEAVES)))


def outside_cases(address: int) -> Iterator[Case]:
    """Ranks outside 1..5 and addresses with no allocation behind them: last, in case one upsets the driver."""
    for rank in (0, 6):
        for data_type in ("float16", "uint8"):
            dims = (256,) * rank
            strides = packed_strides(data_type, dims) if rank else ()
            yield Case("rank", data_type, dims, strides, (32,) * rank, (1,) * rank, global_address=address)
    for fake in (0, 16, 32, 2**12, 2**40, 2**47 - 256, 2**48, 2**63, 2**64 - 16):
        yield base_case("global_address_fake", "float16", 2, fake)


def all_cases(address: int) -> list[Case]:
    return [
        *edge_cases(address),
        *probe_cases(address),
        *random_cases(address),
        *near_cases(address),
        *outside_cases(address),
    ]


# ---------------------------------------------------------------- the driver


class Driver:
    """cuTensorMapEncodeTiled and the few calls around it, through ctypes on libcuda."""

    def __init__(self, library: str = "libcuda.so.1") -> None:
        self.lib = ctypes.CDLL(library)
        encode = self.lib.cuTensorMapEncodeTiled
        encode.restype = ctypes.c_int
        u64p = ctypes.POINTER(ctypes.c_uint64)
        u32p = ctypes.POINTER(ctypes.c_uint32)
        encode.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_uint32,
            ctypes.c_void_p,
            u64p,
            u64p,
            u32p,
            u32p,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
        ]
        self._encode = encode
        self._map = (ctypes.c_uint8 * 256)()
        self._map_address = (ctypes.addressof(self._map) + 63) // 64 * 64  # CUtensorMap: 128 B, 64-aligned

    def call(self, name: str, *args: object) -> int:
        return int(getattr(self.lib, name)(*args))

    def check(self, name: str, *args: object) -> None:
        result = self.call(name, *args)
        if result != CUDA_SUCCESS:
            raise RuntimeError(f"{name} returned {result} ({self.error_name(result)})")

    def error_name(self, result: int) -> str:
        text = ctypes.c_char_p()
        self.lib.cuGetErrorName(ctypes.c_int(result), ctypes.byref(text))
        return text.value.decode() if text.value else str(result)

    def encode(self, case: Case) -> int:
        def u64(values: Sequence[int]) -> ctypes.Array[ctypes.c_uint64]:
            return (ctypes.c_uint64 * max(len(values), 1))(*values)

        def u32(values: Sequence[int]) -> ctypes.Array[ctypes.c_uint32]:
            return (ctypes.c_uint32 * max(len(values), 1))(*values)

        return int(
            self._encode(
                ctypes.c_void_p(self._map_address),
                E.DATA_TYPES[case.data_type],
                len(case.global_dims),
                ctypes.c_void_p(case.global_address),
                u64(case.global_dims),
                u64(case.global_strides),
                u32(case.box_dims),
                u32(case.element_strides),
                E.INTERLEAVES[case.interleave],
                E.SWIZZLES[case.swizzle],
                E.L2_PROMOTIONS[case.l2_promotion],
                E.OOB_FILLS[case.oob_fill],
            )
        )


def open_device(driver: Driver) -> tuple[dict[str, object], int]:
    """Initialise the driver, make device 0's primary context current, allocate 1 MiB: facts, address."""
    driver.check("cuInit", ctypes.c_uint(0))
    device = ctypes.c_int()
    driver.check("cuDeviceGet", ctypes.byref(device), ctypes.c_int(0))
    name = ctypes.create_string_buffer(256)
    driver.check("cuDeviceGetName", name, ctypes.c_int(256), device)
    major, minor, version = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    driver.check("cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(75), device)  # CC major
    driver.check("cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(76), device)  # CC minor
    driver.check("cuDriverGetVersion", ctypes.byref(version))
    facts: dict[str, object] = {
        "gpu": name.value.decode(),
        "compute_capability": f"{major.value}.{minor.value}",
        "cuda_driver_api_version": version.value,
    }
    return facts, _context_and_allocation(driver, device)


def _context_and_allocation(driver: Driver, device: ctypes.c_int) -> int:
    context = ctypes.c_void_p()
    driver.check("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    driver.check("cuCtxSetCurrent", context)
    pointer = ctypes.c_uint64()
    driver.lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    driver.check("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(1 << 20))
    return pointer.value


# ---------------------------------------------------------------- the record


def row_of(index: int, case: Case, result: int, result_name: str) -> dict[str, object]:
    row: dict[str, object] = {"case": index}
    for field, value in zip(fields(Case), astuple(case)):
        row[field.name] = " ".join(str(v) for v in value) if field.name in LIST_FIELDS else value
    row["result"] = result
    row["result_name"] = result_name
    return row


def write_csv(path: Path, rows: Iterable[dict[str, object]]) -> int:
    """Write the recorded cases as they come (a driver crash keeps those before it); returns how many."""
    count = 0
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            handle.flush()
            count += 1
    return count


def read_csv(path: Path) -> list[tuple[Case, int]]:
    """The recorded cases and the driver's answer to each."""
    out: list[tuple[Case, int]] = []
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            values: dict[str, object] = {}
            for field in fields(Case):
                text = row[field.name]
                if field.name in LIST_FIELDS:
                    values[field.name] = tuple(int(v) for v in text.split())
                elif field.name == "global_address":
                    values[field.name] = int(text)
                else:
                    values[field.name] = text
            out.append((Case(**values), int(row["result"])))  # type: ignore[arg-type]
    return out


def record(
    cases: Iterable[Case], encode: Callable[[Case], int], name_of: Callable[[int], str]
) -> Iterator[dict[str, object]]:
    """Each case with the encoder's answer, in order."""
    names: dict[int, str] = {}
    for index, case in enumerate(cases):
        result = encode(case)
        if result not in names:
            names[result] = name_of(result)
        yield row_of(index, case, result, names[result])


def tally(rows: Iterable[tuple[Case, int]]) -> dict[str, dict[str, int]]:
    """Accepted and refused cases per family."""
    out: dict[str, dict[str, int]] = {}
    for case, result in rows:
        counts = out.setdefault(case.family, {"accepted": 0, "refused": 0})
        counts["accepted" if result == CUDA_SUCCESS else "refused"] += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "results", help="folder for the CSV and the JSON")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    driver = Driver()
    # does encoding need a context? one well-formed case before there is one
    early = driver.call("cuInit", ctypes.c_uint(0))
    probe = base_case("probe", "float16", 2, 1 << 40)
    before_context = driver.encode(probe) if early == CUDA_SUCCESS else early
    facts, address = open_device(driver)
    cases = all_cases(address)
    start = time.perf_counter()
    count = write_csv(args.out / CSV_NAME, record(cases, driver.encode, driver.error_name))
    seconds = time.perf_counter() - start
    recorded = read_csv(args.out / CSV_NAME)
    results: dict[str, int] = {}
    for _, result in recorded:
        key = f"{result} {driver.error_name(result)}"
        results[key] = results.get(key, 0) + 1
    meta = {
        **facts,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "python": platform.python_version(),
        "cases": count,
        "results": results,
        "families": tally(recorded),
        "seed": SEED,
        "encode_seconds_total": round(seconds, 4),
        "encode_before_context": f"{before_context} {driver.error_name(before_context)}",
        "allocation_base": address,
    }
    (args.out / META_NAME).write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
