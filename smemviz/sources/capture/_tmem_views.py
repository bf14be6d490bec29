"""Where each TMEM view a kernel makes lies: its columns, read from the IR.

A kernel asks the TMEM allocator for its base address at run time
(``retrieve_tmem_ptr``) and makes its TMEM tensors over that pointer moved by
constants (``tmem_ptr + 128``, a ``recast_ptr`` to f16, a ``make_tensor`` over
another view's iterator, a tiled copy's partition of a view). The pointer is
followed back to the allocator's base through those ops, adding the constant
offsets; a TMEM address holds the lane in its high 16 bits and the 32-bit column
in its low 16, so an offset in elements of ``w`` bits moves ``offset * w / 32``
columns. The columns a view spans come from its layout: each mode whose stride
stays below one lane adds ``(size - 1) * stride`` elements.

Views are then named by placement: views over the same columns are one region,
named after the kernel variable that only ever holds those columns (``tStS0``,
not ``tStS_vec``, which names column 0 in one warp role and 128 in another); a
view with no such name that lies inside a named one is that region, narrowed to
its own columns. The allocated block is laid out as a TMEM plan: the views that
no other view holds side by side, and the views inside one (P inside S, the
row statistics) as an alias group's later phase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...layout._plan import CAPTURE_SOURCE, LayoutPlan, Region
from ...layout.ordering import _model as m
from ._build import _branch_layout
from ._ordering_ir import compare, const_value, defining_op, plain_values, raw_value, same_value

__all__ = ["TmemPlace", "TmemRegions", "register_root", "tmem_regions", "tmem_view_plan"]

LANE_BITS = 16  # a TMEM address: lane << 16 | column
_ROOTS = ("cute_nvgpu.arch.sm100.retrieve_tmem_ptr",)
_MOVES = ("cute.recast_iter", "cute.assume", "builtin.unrealized_conversion_cast", "cute.get_iter", "cute.make_view")
_WIDTHS = {"f32": 32, "i32": 32, "u32": 32, "f16": 16, "bf16": 16, "i16": 16, "u16": 16, "i8": 8, "u8": 8, "f64": 64}


@dataclass(frozen=True)
class TmemPlace:
    """A TMEM view's place: the allocator's base it is made over, its first column, how many
    it spans, and its stages (a last mode that tiles the columns in equal slots, an
    accumulator's ``STAGE`` mode; 1 otherwise)."""

    root: Any
    start: int
    columns: int
    stages: int = 1
    index: Any = None  # the run-time value that picks the stage (a pipeline state's index), if one does


def _width(type_text: str) -> int | None:
    m_ = re.search(r"(?:ptr|memref)<([a-zA-Z0-9]+)", type_text)
    if m_ is None:
        return None
    name = m_.group(1).lower()
    if name in _WIDTHS:
        return _WIDTHS[name]
    digits = re.search(r"(\d+)", name)
    return int(digits.group(1)) if digits else None


def _is_tmem(value: Any) -> bool:
    try:
        text = str(raw_value(value).type)
    except Exception:
        return False
    return text.startswith(("!cute.memref<", "!cute.ptr<")) and ", tmem" in text  # not a TMEM copy atom


Pick = tuple[Any, list[int]]  # (the index value, the offset in elements it gives each stage 0, 1, ...)


def _offset_value(value: Any) -> int | None:
    """A run-time offset that is a constant after all (``tmem_base + cutlass.Int32(0)``)."""
    op = defining_op(value)
    if getattr(op, "name", None) == "cute.make_int_tuple" and len(op.operands) == 1:
        return const_value(op.operands[0])
    return None


def _picked(value: Any) -> Pick | None:
    """An offset chosen at run time among constants by comparing an index with a constant
    (``column = c0; if index == 1: column = c1``): the index and each stage's offset."""
    op = defining_op(value)
    if getattr(op, "name", None) == "cute.make_int_tuple" and len(op.operands) == 1:
        value, op = op.operands[0], defining_op(op.operands[0])
    name = getattr(op, "name", None)
    if name == "scf.if":
        k = next((i for i, r in enumerate(op.results) if same_value(r, value)), None)
        if k is None or len(op.regions) != 2:
            return None
        arms = []
        for region in op.regions:
            blocks = list(region.blocks)
            ops = list(blocks[0].operations) if blocks else []
            if not ops or ops[-1].name != "scf.yield":
                return None
            arms.append(const_value(ops[-1].operands[k]))
        cond = op.operands[0]
    elif name == "arith.select":
        cond, arms = op.operands[0], [const_value(op.operands[1]), const_value(op.operands[2])]
    else:
        return None
    then, other = arms
    cmp = defining_op(cond)
    if then is None or other is None or getattr(cmp, "name", None) != "arith.cmpi":
        return None
    a, b = cmp.operands[0], cmp.operands[1]
    fixed = const_value(b)
    index = a
    if fixed is None:
        fixed, index = const_value(a), b
    if fixed is None:
        return None
    try:
        test = compare(str(cmp.attributes["predicate"]))
    except Exception:
        return None
    if fixed is not const_value(b):  # the constant on the left: swap the comparison's sides
        return index, [then if test(fixed, s) else other for s in range(2)]
    return index, [then if test(s, fixed) else other for s in range(2)]


def _base_bits(value: Any) -> tuple[Any, int, Pick | None] | None:
    """(the allocator's base op, offset in bits, a run-time pick of the offset) of a TMEM pointer or tensor value."""
    bits = 0
    pick: tuple[Any, list[int]] | None = None
    value = raw_value(value)
    for _ in range(64):
        op = defining_op(value)
        name = getattr(op, "name", None)
        if name is None:
            return None
        if name in _ROOTS:
            return op, bits, pick
        if name == "cute.add_offset":
            found = re.search(r'int_tuple<"(-?\d+)">', str(op.operands[1].type))
            width = _width(str(op.operands[0].type))
            if width is None:
                return None
            fixed = _offset_value(op.operands[1]) if found is None else int(found.group(1))
            if fixed is not None:
                bits += fixed * width
            else:
                chosen = _picked(op.operands[1]) if pick is None else None
                if chosen is None:
                    return None
                pick = (chosen[0], [c * width for c in chosen[1]])
            value = op.operands[0]
        elif name in _MOVES:
            value = op.operands[0]
        elif name.startswith("cute.tiled.copy.partition"):
            # a partition keeps the columns of the tensor it is taken from (its own layout says
            # how many); the tensor is its TMEM operand. A slice moves them by its coordinate:
            # not read here (the view it is taken from has the place)
            tensors = [o for o in op.operands if _is_tmem(o)]
            if len(tensors) != 1:
                return None
            value = tensors[0]
        else:
            return None
    return None


def register_root(value: Any) -> Any:
    """The allocation a register tensor value is a view of (through slices and views), or None."""
    if value is None:
        return None
    with plain_values():
        value = raw_value(value)
        for _ in range(32):
            op = defining_op(value)
            if op is None:
                return None
            if op.name in ("cute.memref.alloca", "cute.make_fragment", "cute.memref.alloc"):
                return op
            views = [o for o in op.operands if str(o.type).startswith(("!cute.memref<", "!cute.ptr<"))]
            if not views or op.name.startswith("cute_nvgpu.atom"):
                return None
            value = views[0]  # the tensor a slice, view or retile is taken from
    return None


def _layout_pairs(type_text: str) -> list[tuple[int, int]] | None:
    """The (size, stride) of each mode of a memref's layout text, e.g. ``"(128,2):(65536,1)"``."""
    found = re.findall(r'"([^"]*)"', type_text)
    if not found:
        return None
    text = found[-1]
    if text.count(":") != 1 or any(c in text for c in "?oS"):
        return None  # a run-time size, or a composed / swizzled layout
    shape, stride = text.split(":")
    sizes = [int(n) for n in re.findall(r"-?\d+", shape)]
    strides = [int(n) for n in re.findall(r"-?\d+", stride)]
    if len(sizes) != len(strides):
        return None
    return list(zip(sizes, strides))


def _top_modes(text: str) -> list[str]:
    """The top-level modes of a shape or stride text: ``"((128,16),1,2)"`` -> ``["(128,16)", "1", "2"]``."""
    if not (text.startswith("(") and text.endswith(")")):
        return [text]
    out, depth, cur = [], 0, ""
    for ch in text[1:-1]:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return [*out, cur]


def _stages(type_text: str, width: int, columns: int) -> int:
    found = re.findall(r'"([^"]*)"', type_text)
    if not found or found[-1].count(":") != 1:
        return 1
    shape, stride = (_top_modes(t) for t in found[-1].split(":"))
    if len(shape) < 3 or len(shape) != len(stride) or not (shape[-1].isdigit() and stride[-1].isdigit()):
        return 1
    n, d = int(shape[-1]), int(stride[-1])
    return n if n > 1 and d * width * n == columns * 32 else 1


def tmem_place(value: Any) -> TmemPlace | None:
    """Where a TMEM tensor value lies, or None when it is not made over the allocator's base by constants."""
    with plain_values():
        based = _base_bits(value)
        if based is None:
            return None
        root, bits, pick = based
        text = str(raw_value(value).type)
    width = _width(text)
    pairs = _layout_pairs(text)
    if width is None or pairs is None or any(d < 0 for _, d in pairs):
        return None
    lane = 1 << LANE_BITS
    span_bits = width  # the last element's own bits
    for size, stride in pairs:
        if stride * width >= lane * 32:
            continue  # a lane mode
        span_bits += (size - 1) * stride * width
    start = (bits // 32) % lane
    columns = -(-span_bits // 32)
    if pick is None:
        return TmemPlace(root, start, columns, _stages(text, width, columns))
    # a view at one of several places, picked by an index: the places as one region's stages
    starts = [((bits + p) // 32) % lane for p in pick[1]]
    if len(set(starts)) != len(starts) or any(x != starts[0] + s * columns for s, x in enumerate(starts)):
        return None
    return TmemPlace(root, starts[0], columns * len(starts), len(starts), pick[0])


@dataclass(frozen=True)
class TmemRegions:
    """The TMEM views of one kernel by placement: ``spans`` the regions (``RegionSpan``,
    memory "tmem", columns) and ``of`` each view's key -> (region name, column offset in it, columns)."""

    spans: tuple[m.RegionSpan, ...]
    of: dict[int, tuple[str, int, int]]
    unplaced: tuple[str, ...]
    index_of: dict[int, Any] = field(default_factory=dict)  # view key -> the value picking its stage


def tmem_regions(views: list[Any], budget: int = 512) -> TmemRegions:
    """Name and place every TMEM view of ``views`` (``RegionView``s); see the module text."""
    placed: list[tuple[Any, TmemPlace]] = []
    unplaced: list[str] = []
    for v in views:
        if v.memory != "tmem":
            continue
        p = tmem_place(v.value)
        if p is None or p.start + p.columns > budget:
            unplaced.append(v.name)
            continue
        placed.append((v, p))
    keys: dict[tuple[int, int], dict[str, int]] = {}  # placement -> name -> views made with it
    where: dict[str, set[tuple[int, int]]] = {}
    for v, p in placed:
        key = (p.start, p.columns)
        names = keys.setdefault(key, {})
        names[v.name] = names.get(v.name, 0) + 1
        where.setdefault(v.name, set()).add(key)
    named: dict[tuple[int, int], str] = {}
    for key, names in keys.items():
        own = [n for n in names if len(where[n]) == 1 and not n.startswith("view@")]
        if own:  # the name the kernel gives these columns most often (then the most specific)
            named[key] = max(own, key=lambda n: (names[n], len(n)))
    stages: dict[str, int] = {}
    for _, p in placed:
        key = (p.start, p.columns)
        if key in named:
            stages[named[key]] = max(stages.get(named[key], 1), p.stages)
    spans = {name: m.RegionSpan(name, "tmem", key[0], key[1], stages[name]) for key, name in named.items()}
    of: dict[int, tuple[str, int, int]] = {}
    for v, p in placed:
        key = (p.start, p.columns)
        if key in named:
            of[id(v)] = (named[key], 0, p.columns)
            continue
        around = [s for s in spans.values() if s.start <= p.start and p.start + p.columns <= s.start + s.size]
        if around:
            inner = min(around, key=lambda s: s.size)
            of[id(v)] = (inner.name, p.start - inner.start, p.columns)
            continue
        name = f"{v.name}@{p.start}"
        if name not in spans:
            spans[name] = m.RegionSpan(name, "tmem", p.start, p.columns, 1)
        of[id(v)] = (name, 0, p.columns)
    ordered = tuple(sorted(spans.values(), key=lambda s: (s.start, -s.size, s.name)))
    index_of = {id(v): p.index for v, p in placed if p.index is not None}
    return TmemRegions(ordered, of, tuple(dict.fromkeys(unplaced)), index_of)


def tmem_view_plan(block: LayoutPlan | None, spans: list[m.RegionSpan], arch: str | None) -> LayoutPlan | None:
    """The captured TMEM plan with the allocated block shown as the views placed in it:
    the outermost views side by side, the views inside one as an alias group's later
    phases (``S1``, then ``P0`` and a statistics vector over it); columns no view holds
    stay the block's, as ``(unassigned)``."""
    tmem = sorted((s for s in spans if s.memory == "tmem"), key=lambda s: (s.start, -s.size, s.name))
    if block is None or not tmem or len(block.regions) != 1:
        return block
    alloc = block.regions[0]
    outer: list[m.RegionSpan] = []
    inside: dict[str, list[list[m.RegionSpan]]] = {}  # outer view -> phases after it
    for s in tmem:
        host = next((o for o in outer if o.start <= s.start and s.start + s.size <= o.start + o.size), None)
        if host is None:
            if any(o.start < s.start + s.size and s.start < o.start + o.size for o in outer):
                return block  # views that cross one another: no one layout shows them
            outer.append(s)
            continue
        phases = inside.setdefault(host.name, [])
        for layer in phases:
            if all(s.start >= t.start + t.size or t.start >= s.start + s.size for t in layer):
                layer.append(s)
                break
        else:
            phases.append([s])
    shown: list[tuple[m.RegionSpan, str]] = []
    end = alloc.offset
    for o in outer:
        shown.append((o, o.name))
        for layer in inside.get(o.name, []):
            shown += [(s, s.name) for s in layer]
        end = max(end, o.start + o.size)
    if end < alloc.offset + alloc.size:
        shown.append((m.RegionSpan(f"{alloc.name} (unassigned)", "tmem", end, alloc.offset + alloc.size - end), ""))
    shown.sort(key=lambda item: (item[0].start, -item[0].size))
    index = {s.name: k for k, (s, _) in enumerate(shown)}
    branches = []
    for o in outer:
        phases = inside.get(o.name, [])
        if phases:
            items = {index[o.name]: 0}
            for p, layer in enumerate(phases, start=1):
                items.update({index[s.name]: p for s in layer})
            branches.append(items)
    pads, groups, member = _branch_layout([(s.start, s.start + s.size, 1) for s, _ in shown], branches)
    regions = []
    for k, (s, _) in enumerate(shown):
        group, phase = member.get(k, (None, None))
        regions.append(
            Region(
                name=s.name,
                kind="data",
                offset=s.start,
                size=s.size,
                padding_before=pads[k],
                group=group,
                phase=phase,
                index=k,
                source=alloc.source,
            )
        )
    return LayoutPlan(
        memory="tmem",
        regions=tuple(regions),
        groups=tuple(groups),
        data_total=block.data_total,
        arch=arch or block.arch,
        source=CAPTURE_SOURCE,
    )
