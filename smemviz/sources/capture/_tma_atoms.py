"""The TMA atoms a captured kernel builds, with the parameters their descriptors will be encoded with.

The CuTe DSL's ``make_tiled_tma_atom`` (and ``make_tiled_tma_atom_A/B/C``) end in one of the
``cute_nvgpu`` dialect's ``atom_make_non_exec_tiled_tma_{load,store,reduce}`` calls; capture wraps
those, as ``_hooks`` wraps the allocator, returning exactly what they return. What the wrapper reads:

* the global tensor's type (``!cute.memref<f16, gmem, "(M,K,L):(K,1,M*K)">``): the element type and
  the extents and strides, ``?`` where they are run-time values;
* the atom's type: ``tma_gbasis = <"(64,128,1):(1@1,1@0,1@2)">``, the box (innermost first) and which
  global mode each box dimension walks, and ``tma_format`` (the descriptor's data type);
* the SMEM layout's swizzle (``S<3,4,3> o 0 o ...``: 128B).

The DSL passes element strides of one, no interleave and no NaN fill; it picks the L2 promotion
itself at launch, so that one is left unread (``None``). A value that cannot be read is named in the
atom's ``unread`` and the capture goes on.
"""

from __future__ import annotations

import functools
import linecache
import re
import threading
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...layout._tma_atom import TmaAtom
from ._active import ACTIVE
from ._where import call_site

__all__ = ["tma_targets", "take_tma_atoms", "atom_from_types", "with_regions"]

_DIRECTIONS = {
    "atom_make_non_exec_tiled_tma_load": "load",
    "atom_make_non_exec_tiled_tma_store": "store",
    "atom_make_non_exec_tiled_tma_reduce": "reduce",
}

# what each recorder has seen, taken when its trace is read
_seen: weakref.WeakKeyDictionary[Any, list[TmaAtom]] = weakref.WeakKeyDictionary()
_seen_lock = threading.Lock()

# the descriptor's data type from the atom's tma_format (CUtensorMapDataType, as check_tma_descriptor names it)
_FORMATS = {
    "F16": "float16",
    "BF16": "bfloat16",
    "TF32": "tfloat32",
    "F32": "float32",
    "F64": "float64",
    "U8": "uint8",
    "U16": "uint16",
    "U32": "uint32",
    "S32": "int32",
    "U64": "uint64",
    "S64": "int64",
}
# element bits of the global tensor's MLIR element type
_ELEMENT_BITS = {
    "f16": 16,
    "bf16": 16,
    "i16": 16,
    "ui16": 16,
    "f32": 32,
    "tf32": 32,
    "i32": 32,
    "ui32": 32,
    "f64": 64,
    "i64": 64,
    "ui64": 64,
    "i8": 8,
    "ui8": 8,
    "i4": 4,
    "ui4": 4,
}
_ELEMENT_TYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i32": "int32"}
_SWIZZLE_BYTES = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


def _parse_tuple(text: str) -> Any:
    """CuTe's nested tuple text ``(4096,(2,?),1@0)`` as nested tuples of strings."""
    pos = 0

    def item() -> Any:
        nonlocal pos
        if text[pos] == "(":
            pos += 1
            out = []
            while text[pos] != ")":
                out.append(item())
                if text[pos] == ",":
                    pos += 1
            pos += 1
            return tuple(out)
        start = pos
        depth = 0
        while pos < len(text) and (depth or text[pos] not in ",)"):
            depth += {"{": 1, "}": -1}.get(text[pos], 0)
            pos += 1
        return text[start:pos]

    value = item()
    if pos != len(text):
        raise ValueError(f"trailing text in {text!r}")
    return value


def _split_layout(text: str) -> tuple[Any, Any]:
    """``shape:stride`` at the top-level colon."""
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ":" and depth == 0:
            return _parse_tuple(text[:i]), _parse_tuple(text[i + 1 :])
    raise ValueError(f"no ':' in layout {text!r}")


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def _static(token: Any) -> int | None:
    """A flat extent or stride: its int, or None for a run-time value (``?``, ``?{i64}``)."""
    if isinstance(token, tuple):
        raise ValueError(f"a nested mode {token!r}")
    token = token.strip()
    return None if token.startswith("?") else int(token)


_NOT_ONE = object()


def _mode(shape: tuple[Any, ...], stride: tuple[Any, ...], basis: Any) -> tuple[Any, int | None]:
    """The global extent and element stride a box dimension walks, from its basis ``1@m`` (mode m)
    or ``1@k@j@m`` (mode m, its sub-mode j, that one's sub-mode k: CuTe prints the innermost first);
    ``(_NOT_ONE, None)`` for a basis with another coefficient or a path that does not end on one mode."""
    parts = basis.strip().split("@") if isinstance(basis, str) else []
    if len(parts) < 2 or parts[0] != "1" or not all(p.isdigit() for p in parts[1:]):
        return _NOT_ONE, None
    s: Any = shape
    d: Any = stride
    for index in reversed([int(p) for p in parts[1:]]):
        if not isinstance(s, tuple) or index >= len(s):
            return _NOT_ONE, None
        s, d = s[index], d[index]
    if isinstance(s, tuple):
        return _NOT_ONE, None
    return _static(s), _static(d)


def atom_from_types(
    gmem_type: str, atom_type: str, smem_type: str, direction: str, name: str, site: str | None
) -> TmaAtom:
    """The atom's descriptor parameters from the three MLIR type texts (see the module's doc)."""
    unread: list[str] = []
    m = re.search(r"memref<\s*([\w]+)\s*,\s*gmem\b.*?\"([^\"]+)\"", gmem_type)
    if m is None:
        raise ValueError(f"not a global tensor type: {gmem_type!r}")
    element, (shape, stride) = m.group(1), _split_layout(m.group(2))
    shape, stride = _as_tuple(shape), _as_tuple(stride)
    bits = _ELEMENT_BITS.get(element) or (8 if element.startswith("f8") else None)
    fmt = re.search(r"tma_format\s*=\s*(\w+)", atom_type)
    data_type = _FORMATS.get(fmt.group(1).split("_")[0]) if fmt else None
    if data_type is None:
        data_type = _ELEMENT_TYPES.get(element) or ({8: "uint8", 16: "uint16"}.get(bits) if bits else None)
    if data_type is None:
        unread.append(f"data type ({element}, tma_format {fmt.group(1) if fmt else 'absent'})")
    g = re.search(r"tma_gbasis\s*=\s*<\s*\"([^\"]+)\"", atom_type)
    if g is None:
        raise ValueError(f"no tma_gbasis in the atom type {atom_type!r}")
    box_shape, basis = (_as_tuple(x) for x in _split_layout(g.group(1)))
    box: list[int] = []
    dims: list[int | None] = []
    strides: list[int | None] = []
    for i, (extent, b) in enumerate(zip(box_shape, basis, strict=True)):
        while isinstance(extent, tuple) and len(extent) == 1 and isinstance(b, tuple) and len(b) == 1:
            extent, b = extent[0], b[0]  # a one-mode group, "(1):(1@1@2)"
        if isinstance(extent, tuple):
            raise ValueError(f"box dimension {i} is a group of modes {extent!r}")
        box.append(int(extent))
        extent_of, stride_of = _mode(shape, stride, b)
        if extent_of is _NOT_ONE:
            raise ValueError(f"box dimension {i} walks {b!r}, not one global mode")
        dims.append(extent_of)
        if i:
            strides.append(None if stride_of is None or bits is None else stride_of * bits // 8)
    swizzle: str | None = "none"
    sw = re.search(r"S<(\d+),(\d+),(\d+)>", smem_type)
    if sw is not None:
        b_bits, m_base = int(sw.group(1)), int(sw.group(2))
        unit_ok = m_base == 4 or (bits is not None and (1 << m_base) * bits == 128)  # 16-byte units
        swizzle = _SWIZZLE_BYTES.get(b_bits) if unit_ok else None
        if swizzle is None:
            unread.append(f"swizzle ({sw.group(0)} does not name a TMA swizzle)")
    return TmaAtom(
        name=name,
        site=site,
        direction=direction,
        data_type=data_type,
        global_dims=tuple(dims),
        global_strides=tuple(strides),
        box_dims=tuple(box),
        element_strides=(1,) * len(box),
        swizzle=swizzle,
        unread=tuple(unread),
    )


_TUPLE_TARGET = re.compile(r"^\s*(?:self\.)?(\w+)\s*,[\w\s.,]*=[^=]")


def _first_target(file: str, line: int) -> str | None:
    """``tma_a`` of ``tma_a, gmem_a = make_tiled_tma_atom(...)`` (the atom is the first result)."""
    m = _TUPLE_TARGET.match(linecache.getline(file, line))
    return m.group(1) if m else None


def _type_text(value: Any) -> str:
    for candidate in (value, getattr(value, "value", None)):
        t = getattr(candidate, "type", None)
        if t is not None:
            return str(t)
    return str(value)


def _record(rec: Any, direction: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
    site = call_site(3)
    gmem = args[0] if args else kwargs.get("gmem_tensor")
    smem = args[1] if len(args) > 1 else kwargs.get("smem_layout")
    name = (site.assigned if site else None) or (_first_target(site.file, site.line) if site else None) or ""
    where = site.source if site else None
    try:
        atom = atom_from_types(_type_text(gmem), _type_text(result[0]), _type_text(smem), direction, name, where)
    except (ValueError, TypeError, IndexError) as e:
        atom = TmaAtom(name, where, direction, None, (), (), (), swizzle=None, unread=(f"the atom ({e})",))
    with _seen_lock:
        _seen.setdefault(rec, []).append(atom)


def _wrapper(orig: Callable[..., Any], direction: str) -> Callable[..., Any]:
    @functools.wraps(orig)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = orig(*args, **kwargs)
        rec = ACTIVE.get()
        if rec is not None:
            try:
                _record(rec, direction, args, kwargs, result)
            except Exception as e:  # never let recording break the kernel
                rec.fail(f"could not record a TMA atom: {type(e).__name__}: {e}")
        return result

    return wrapper


def tma_targets() -> list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    """The dialect functions to wrap: (module, name, wrapper maker), as ``_hooks.install`` takes them."""
    import cutlass._mlir.dialects.cute_nvgpu as dialect

    return [
        (dialect, name, functools.partial(_wrapper, direction=direction))
        for name, direction in _DIRECTIONS.items()
        if name in vars(dialect)
    ]


def take_tma_atoms(rec: Any) -> tuple[TmaAtom, ...]:
    """What ``rec``'s capture recorded since the last call, cleared."""
    with _seen_lock:
        return tuple(_seen.pop(rec, ()))


# bits of one element of each TMA data type capture names
_TMA_BITS = {
    "float16": 16,
    "bfloat16": 16,
    "uint16": 16,
    "uint8": 8,
    "float32": 32,
    "tfloat32": 32,
    "uint32": 32,
    "int32": 32,
    "float64": 64,
    "uint64": 64,
    "int64": 64,
}


def _tma_accesses(steps: Any) -> Any:
    """Every TMA load and store access in a role's program, loops and guarded blocks included."""
    for step in steps:
        body = getattr(step, "body", None)
        if body is not None:
            yield from _tma_accesses(body)
        elif getattr(step, "kind", "") in ("tma_load", "tma_store"):
            yield step


def with_regions(atoms: tuple[TmaAtom, ...], model: Any) -> tuple[TmaAtom, ...]:
    """``atoms`` with the SMEM region each fills or reads, where the kernel's ordering model shows
    exactly one region taking TMA copies of that direction and that many bytes (a box's bytes), or,
    for the only atom of its direction, exactly one region taking TMA copies of that direction."""
    if model is None:
        return atoms
    seen: dict[tuple[str, int | None], set[str]] = {}
    for program in getattr(model, "programs", ()):
        for access in _tma_accesses(program.body):
            if access.region:
                seen.setdefault((access.kind, access.bytes), set()).add(access.region)
    by_kind: dict[str, set[str]] = {}
    for (kind, _), names in seen.items():
        by_kind.setdefault(kind, set()).update(names)
    out = []
    for atom in atoms:
        kind = f"tma_{atom.direction}"
        bits = _TMA_BITS.get(atom.data_type or "")
        size = 1
        for extent in atom.box_dims:
            size *= extent
        regions = seen.get((kind, size * bits // 8 if bits else None), set())
        if not regions and sum(a.direction == atom.direction for a in atoms) == 1:
            regions = by_kind.get(kind, set())  # the one atom of its direction, the one region it reaches
        out.append(replace(atom, region=next(iter(regions))) if len(regions) == 1 and atom.region is None else atom)
    return tuple(out)
