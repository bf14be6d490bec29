"""The bank accesses of a captured kernel: every shared-memory ld/st, ldmatrix/stmatrix and
cp.async copy the kernel makes, with the addresses each lane gives, read from the traced IR.

The ordering hooks record each ``cute.copy`` on a shared-memory tensor, and each
``tensor[i]`` load or store on one (its kind, the tensor's value, the ``if`` arms and loops
around it). From there this module reads, without adding anything to the kernel:

* the **copy atom** from the ``cute.copy`` op's first operand type
  (``!cute_nvgpu.atom.stsm<f16, ..., num_matrices = 4, n>``, ``universal_copy<f16, 128 b>``,
  ``simt_async_copy<f16, cache = always, 128 b>``): the instruction, the bits one lane moves,
  ``.trans`` and the number of matrices (a ``tensor[i]`` is one element per thread);
* the **per-thread layout and swizzle** from the copied tensor's own type
  (``!cute.memref<f16, smem, align<16>, S<2,4,3>, "(((2,4),1),(1,2)):..."``): its first
  mode holds the values one instruction moves, the other modes the instructions a thread
  issues;
* **where each thread's part starts**, by following the tensor back to the view it was made
  from (a ``make_tensor`` over SMEM or a struct field's ``get_tensor``): a TiledCopy's
  ``partition_D`` / ``partition_S`` places thread ``t`` at the tile coordinate its TV
  layout gives value 0 (``layout_dst_tv_tiled`` / ``layout_src_tv_tiled`` of the op's type,
  the thread index evaluated per thread), a slice moves it by the layout at the slice's
  coordinate, an ``add_offset`` by its offset;
* the **warps** that run it, from the traced ``if`` conditions evaluated per thread.

Each lane's byte address is then the view's place in shared memory plus that offset, under
the tensor's swizzle (which acts on the absolute address). The record keeps every warp
instruction's 32 addresses, so the bank analysis can count them as compiled
(``smemviz.analysis.banks.analyse_captured``). Where the view's tile, the instruction and
an arrangement of warps and lanes give exactly the same addresses (checked warp by warp,
else as a multiset of warp instructions; one access per group of warps that reaches its own
part of the view), the record also carries those :class:`~smemviz.layout.SmemAccess`
records, which the plan then holds, so ``lint``'s bank rule, the byte map's conflict strip
and the explorer's Banks tab see the kernel as compiled. When no tile of the view gives
them, the access is declared over a tile laid out from the addresses themselves (checked
the same way).

What cannot be read is named in ``unread`` and nothing is guessed: an index known only at
run time that is not the thread (other than a small mode, every value of which is then
taken: a stage buffer chosen at run time), an op on the way to the view that this module
does not know, an atom the bank model has no instruction for (``cp.async.cg``), a warp
only part of whose lanes run the copy.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..._smem_instructions import UNCALIBRATED, WARP, lookup
from ...layout._access import SmemAccess, read_layout_text
from . import _ordering_ir as _ir  # its names are looked up when used, so this module always imports

__all__ = ["CapturedCopy", "bank_records", "plan_accesses"]


def _compile(value: Any) -> Callable[[int, int], int]:
    return _ir._compile(value)


def _maybe_call(f: Callable[[int, int], int], tid: int, threads: int) -> int | None:
    return _ir._maybe_call(f, tid, threads)


def block_dim(op: Any) -> int | None:
    return _ir.block_dim(op)


def condition_threads(op: Any, threads: int) -> Any:
    return _ir.condition_threads(op, threads)


def defining_op(value: Any) -> Any:
    return _ir.defining_op(value)


def plain_values() -> Any:
    return _ir.plain_values()


def raw_value(value: Any) -> Any:
    return _ir.raw_value(value)


def same_value(a: Any, b: Any) -> bool:
    return bool(_ir.same_value(a, b))


# the ordering record's kinds whose copies touch banks lane by lane
BANK_KINDS = ("ld", "st", "ldmatrix", "stmatrix", "cp_async")
# ops that hand their first operand's iterator on unchanged (reshaping, dividing, viewing)
_SAME_ITERATOR = (
    "cute.group_modes",
    "cute.make_view",
    "cute.get_iter",
    "cute.recast_iter",
    "cute.assume",
    "cute.zipped_divide",
    "cute.logical_divide",
    "cute.tiled_divide",
    "cute.flat_divide",
    "cute.append_to_rank",
    "cute.coalesce",
    "builtin.unrealized_conversion_cast",
)
_MODE_BITS = {"32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3)}
_MODE_NAMES = {bits: mode for mode, bits in _MODE_BITS.items()}
_MAX_ENUMERATED = 8  # a run-time index over a mode this small has each of its values analysed
_WIDTH_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8}


@dataclass(frozen=True)
class CapturedCopy:
    """One shared-memory copy a captured kernel makes, as compiled.

    ``addresses`` holds one tuple of 32 byte addresses (``None``: a lane the instruction
    ignores) per warp instruction, warp by warp over every warp that runs the copy;
    ``accesses`` the declared accesses that give the same addresses, when there are; ``unread``
    what could not be read (then ``addresses`` may be empty) or why no declared access gives
    them."""

    kernel: str
    site: str  # "file.py:line" of the kernel's cute.copy
    kind: str  # the ordering record's kind: "stmatrix", "ldmatrix", "st", "ld", "cp_async"
    atom: str  # the copy atom's type as the DSL prints it
    instruction: str | None  # the bank model's PTX spelling ("stmatrix.x4"), None when it has none
    bits: int | None  # bits one lane moves per instruction
    trans: bool = False
    matrices: int | None = None
    view: str | None = None  # the tensor view the copy reaches
    region: str | None = None  # the plan region that holds it
    dtype: str | None = None
    # the per-thread tensor: "S<B,M,S> o OFFSET o shape:stride", OFFSET of warp 0's lane 0 in elements
    # from the start of ``region`` (of ``view`` when no region holds it)
    layout: str | None = None
    warps: tuple[int, ...] = ()
    stage: int | None = None  # the stage of a staged view the copy reaches (None: unstaged, or not read)
    addresses: tuple[tuple[int | None, ...], ...] = ()
    accesses: tuple[SmemAccess, ...] = ()  # declared accesses giving the same addresses (one per group of warps)
    unread: str = ""
    note: str = ""  # what was read but is worth saying (a run-time index whose every value is taken)
    alternatives: int = 1  # records standing for this one copy: one per value of a run-time index

    @property
    def instructions(self) -> int:
        return len(self.addresses)


# -- layout text -----------------------------------------------------------------------------


def _flat(t: Any) -> list[int]:
    return [t] if isinstance(t, int) else [x for sub in t for x in _flat(sub)]


def _size(t: Any) -> int:
    n = 1
    for x in _flat(t):
        n *= x
    return n


def _modes(t: Any) -> list[Any]:
    return [t] if isinstance(t, int) else list(t)


def _mode_at(shape: Any, stride: Any, index: int) -> int:
    """A layout mode at a linear index (split colexicographically over its leaves; an index past
    the mode's size runs on along its last leaf, as CuTe's does)."""
    leaves = list(zip(_flat(shape), _flat(stride)))
    total = 0
    for k, (s, d) in enumerate(leaves):
        if k == len(leaves) - 1:
            return total + index * d
        total += (index % s) * d
        index //= s
    return total


def _at(shape: Any, stride: Any, coord: Sequence[int]) -> int:
    """A layout at one linear index per top-level mode."""
    return sum(_mode_at(sh, st, c) for sh, st, c in zip(_modes(shape), _modes(stride), coord))


def _layout_of(type_text: str) -> tuple[tuple[int, int, int] | None, Any, Any] | None:
    """(swizzle, shape, stride) of a memref type's layout; None when it is not static, or is a
    composed layout with an offset (not read). The swizzle is the pointer's (``memref<f16, smem,
    align<16>, S<2,4,3>, "...">``) or the layout's own (``"S<3,4,3> o 0 o ..."``, a struct field's
    ``get_tensor`` with a composed layout): the DSL states both on byte addresses."""
    m = re.search(r'"([^"]*)"\s*>\s*$', type_text)
    if m is None or "?" in m.group(1):
        return None
    lt = read_layout_text(m.group(1))
    if lt.offset:
        return None
    sw = re.search(r"S<(\d+),(\d+),(\d+)>", type_text.split('"', 1)[0])
    swizzle = tuple(int(x) for x in sw.groups()) if sw else lt.swizzle
    if sw and lt.swizzle and lt.swizzle[0]:
        return None  # two swizzles, one on the pointer and one in the layout: not read
    return swizzle, lt.shape, lt.stride  # type: ignore[return-value]


def _dtype_of(type_text: str) -> str | None:
    m = re.search(r"memref<([a-z0-9]+),", type_text)
    return m.group(1) if m else None


def _element_bytes(dtype: str | None) -> int | None:
    if dtype is None:
        return None
    bits = _WIDTH_BITS.get(dtype)
    if bits is None:
        m = re.match(r"[a-z]+(\d+)", dtype)
        bits = int(m.group(1)) if m else None
    return bits // 8 if bits and bits % 8 == 0 else None


def _swizzle(bits: tuple[int, int, int] | None) -> Callable[[int], int]:
    if bits is None or bits[0] == 0:
        return lambda a: a
    b, base, shift = bits
    mask = ((1 << b) - 1) << base
    return lambda a: a ^ ((a >> shift) & mask)


def _read_layout(text: str) -> tuple[Any, Any]:
    lt = read_layout_text(text.strip())
    return lt.shape, lt.stride


def _tiler(text: str) -> list[tuple[Any, Any]] | None:
    """A tile's modes as layouts: ``[L0;L1]`` (by mode) or a shape ``(a,b)``."""
    m = re.search(r'tile<"(.*)">', text)
    body = m.group(1) if m else text
    if body.startswith("["):
        return [_read_layout(part) for part in body.strip("[]").split(";")]
    if ":" in body:
        return None
    from ...layout._access import read_int_tuple

    shape = read_int_tuple(body, "tile")
    return [(s, 1) for s in _modes(shape)]


# -- the atom --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Atom:
    text: str
    instruction: str | None
    bits: int | None  # per lane and instruction
    trans: bool = False
    matrices: int | None = None
    why: str = ""


def _atom(type_text: str, kind: str) -> _Atom:
    text = type_text
    m = re.search(r"atom\.(stsm|ldsm)<.*num_matrices = (\d+), ([nt])>", text)
    if m:
        op = "stmatrix" if m.group(1) == "stsm" else "ldmatrix"
        n, trans = int(m.group(2)), m.group(3) == "t"
        return _Atom(text, f"{op}.x{n}{'.trans' if trans else ''}", 128, trans, n)
    m = re.search(r"atom\.universal_copy<[^,]+, (\d+) b>", text)
    if m:
        bits = int(m.group(1))
        side = "st" if kind == "st" else "ld"
        spelled = {8: "b8", 16: "b16", 32: "b32", 64: "v2.b32", 128: "v4.b32"}.get(bits)
        if spelled is None:
            return _Atom(
                text, None, bits, why=f"a {bits}-bit shared-memory {side} is no instruction the bank model has"
            )
        return _Atom(text, f"{side}.shared.{spelled}", bits)
    if re.search(r"atom\.universal_copy<[^,<>]+>", text):
        return _Atom(
            text,
            None,
            None,
            why="a universal copy that states no width: the lowering picks its vector width, which is not read here",
        )
    m = re.search(r"atom\.simt_async_copy<[^,]+, cache = (\w+), (\d+) b>", text)
    if m:
        cache, bits = m.group(1), int(m.group(2))
        spelled = f"cp.async.{'ca' if cache == 'always' else 'cg'}.{bits // 8}"
        if lookup_or_none(spelled) is None:
            return _Atom(
                text,
                None,
                bits,
                why=f"{spelled} is not modelled: {UNCALIBRATED.get(spelled, 'no calibration')}",
            )
        return _Atom(text, spelled, bits)
    return _Atom(text, None, None, why=f"the copy atom {_short(text)} is no ld/st, ldmatrix/stmatrix or cp.async")


def lookup_or_none(instruction: str) -> Any:
    try:
        return lookup(instruction)
    except (KeyError, ValueError, TypeError):
        return None


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


# -- following a tensor back to its view -------------------------------------------------------------


class _Unread(Exception):
    """What could not be read, said in words."""


Offset = Callable[[int], int]  # thread -> bytes from the view's start


@dataclass
class _Walk:
    view: Any  # the RegionView reached
    steps: list[Offset]  # byte offsets, each a function of the thread
    choices: list[tuple[str, list[int]]]  # run-time indices over small modes: (what, byte offsets of each value)


def _coord_parts(text: str) -> Any:
    """A coordinate type's text (``(_,_,?,1)``) as nested tuples of int / "_" / "?"."""
    m = re.search(r'coord<"(.*)">', text)
    body = (m.group(1) if m else text).strip()
    tokens = re.findall(r"\(|\)|,|_|\?(?:\{[^}]*\})?|-?\d+", body)
    stack: list[list[Any]] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            done = tuple(stack.pop())
            stack[-1].append(done)
        elif tok == ",":
            continue
        elif tok == "_":
            stack[-1].append("_")
        elif tok.startswith("?"):
            stack[-1].append("?")
        else:
            stack[-1].append(int(tok))
    top = stack[0]
    return top[0] if len(top) == 1 else tuple(top)


def _coord_terms(
    shape: Any, stride: Any, coord: Any, dynamic: list[Callable[[int], int | None]]
) -> tuple[int, list[tuple[Callable[[int], int | None], Any, Any]]]:
    """The constant offset a coordinate gives, and each run-time component with its mode."""
    if coord == "_":
        return 0, []
    if isinstance(coord, int):
        return _mode_at(shape, stride, coord), []
    if coord == "?":
        return 0, [(dynamic.pop(0), shape, stride)]
    const, terms = 0, []
    for sh, st, c in zip(_modes(shape), _modes(stride), coord):
        k, t = _coord_terms(sh, st, c, dynamic)
        const += k
        terms += t
    return const, terms


class _Reader:
    def __init__(self, views: list[Any], threads: int) -> None:
        self.views = views
        self.threads = threads

    def walk(self, value: Any) -> _Walk:
        steps: list[Offset] = []
        choices: list[tuple[str, list[int]]] = []
        v = raw_value(value)
        for _ in range(200):
            for view in self.views:
                if same_value(view.value, v):
                    return _Walk(view, steps, choices)
            op = defining_op(v)
            name = getattr(op, "name", None)
            if name is None:
                raise _Unread("the tensor comes from a kernel argument or a loop value, not a view capture saw made")
            if name in ("cute.tiled.copy.partition_D", "cute.tiled.copy.partition_S"):
                steps.append(self.partition(op, name.endswith("_D")))
                v = raw_value(op.operands[1])
            elif name == "cute.slice":
                self.slice(op, steps, choices)
                v = raw_value(op.operands[0])
            elif name == "cute.add_offset":
                steps.append(self.add_offset(op))
                v = raw_value(op.operands[0])
            elif name in _SAME_ITERATOR:
                v = raw_value(op.operands[0])
            else:
                raise _Unread(f"the tensor passes through {name}, which this reading does not follow")
        raise _Unread("the tensor's chain of ops is too long to follow")

    def partition(self, op: Any, dst: bool) -> Offset:
        tc = op.operands[0].type
        tv_text = str(tc.layout_dst_tv_tiled if dst else tc.layout_src_tv_tiled)
        tv = _read_layout(re.search(r'layout<"(.*)">', tv_text).group(1))  # type: ignore[union-attr]
        tiler = _tiler(str(tc.tiler_mn))
        if tiler is None:
            raise _Unread(f"the TiledCopy's tiler {tc.tiler_mn} is not a tile of modes")
        tensor = _layout_of(str(op.operands[1].type))
        eb = _element_bytes(_dtype_of(str(op.operands[1].type)))
        if tensor is None or eb is None:
            raise _Unread(f"the partitioned tensor {_short(str(op.operands[1].type))} has no static layout")
        _, shape, stride = tensor
        coord = defining_op(op.operands[2])
        thr_value = coord.operands[0] if coord is not None and len(coord.operands) else None
        fixed = _coord_parts(str(op.operands[2].type))
        if thr_value is None and isinstance(fixed, int):
            thr: Callable[[int, int], int] = lambda tid, n: fixed  # noqa: E731
        elif thr_value is not None:
            thr = _compile(thr_value)
        else:
            raise _Unread("the thread index of a partition is not read")
        sizes = [_size(s) for s, _ in tiler]
        thr_shape, thr_stride = _modes(tv[0])[0], _modes(tv[1])[0]
        cache: dict[int, int] = {}

        def offset(tid: int) -> int:
            t = _maybe_call(thr, tid, self.threads)
            if t is None:
                raise _Unread("a partition's thread index depends on more than the thread")
            if t not in cache:
                idx = _mode_at(thr_shape, thr_stride, t)  # value 0 of thread t, in the tile
                tile = []
                for k, n in enumerate(sizes):
                    tile.append(_mode_at(*tiler[k], idx % n) if k < len(sizes) - 1 else _mode_at(*tiler[k], idx))
                    idx //= n
                full = tile + [0] * (len(_modes(shape)) - len(tile))
                cache[t] = _at(shape, stride, full) * eb
            return cache[t]

        return offset

    def index(self, op: Any, steps: list[Offset], choices: list[tuple[str, list[int]]]) -> None:
        """A ``cute.memref.load`` / ``store``: the element its coordinate picks, per thread."""
        self.slice(op, steps, choices)

    def slice(self, op: Any, steps: list[Offset], choices: list[tuple[str, list[int]]]) -> None:
        tensor = _layout_of(str(op.operands[0].type))
        eb = _element_bytes(_dtype_of(str(op.operands[0].type)))
        if tensor is None or eb is None:
            raise _Unread(f"a slice of {_short(str(op.operands[0].type))}, whose layout is not static")
        _, shape, stride = tensor
        coord_op = defining_op(op.operands[1])
        dynamic_values = list(coord_op.operands) if coord_op is not None else []
        parts = _coord_parts(str(op.operands[1].type))
        fns = [_per_thread(_compile(value), self.threads) for value in dynamic_values]
        const, terms = _coord_terms(shape, stride, parts, list(fns))
        steps.append(_constant(const * eb))
        for fn, sh, st in terms:
            if fn(0) is not None:
                steps.append(_indexed(fn, sh, st, eb))
                continue
            n = _size(sh)
            if n > _MAX_ENUMERATED:
                raise _Unread(f"a slice index known only at run time, over a mode of {n} values")
            choices.append((f"a slice index over a mode of {n} values", [_mode_at(sh, st, i) * eb for i in range(n)]))

    def add_offset(self, op: Any) -> Offset:
        m = re.search(r'int_tuple<"(-?\d+)">', str(op.operands[1].type))
        eb = _ptr_bytes(str(op.operands[0].type))
        if m is None or eb is None:
            raise _Unread("a pointer moved by an offset known only at run time")
        return _constant(int(m.group(1)) * eb)


def _constant(c: int) -> Offset:
    return lambda tid: c


def _per_thread(f: Callable[[int, int], int], threads: int) -> Callable[[int], int | None]:
    return lambda tid: _maybe_call(f, tid, threads)


def _indexed(fn: Callable[[int], int | None], shape: Any, stride: Any, eb: int) -> Offset:
    return lambda tid: _mode_at(shape, stride, _known(fn(tid))) * eb


def _known(x: int | None) -> int:
    if x is None:
        raise _Unread("a slice index depends on more than the thread")
    return x


def _ptr_bytes(type_text: str) -> int | None:
    m = re.search(r"ptr<([a-z0-9]+)", type_text)
    return _element_bytes(m.group(1)) if m else None


# -- the copy and its addresses -----------------------------------------------------------------------


_FORWARD = ("cute.get_iter", "cute.make_view", "cute.group_modes")


def _copy_op(value: Any) -> list[tuple[Any, Any]]:
    """The ``cute.copy`` ops that take ``value`` (the copied SMEM tensor), with the operand that
    is it: the DSL's ``copy`` regroups the tensor's modes (a view over the same iterator) first."""
    found: list[tuple[Any, Any]] = []
    stack = [(raw_value(value), 0)]
    while stack:
        v, depth = stack.pop()
        for use in v.uses:
            owner = getattr(use.owner, "operation", use.owner)
            if owner.name == "cute.copy" and use.operand_number > 0:
                found.append((owner, v))
            elif owner.name in _FORWARD and depth < 6 and (owner.name != "cute.make_view" or use.operand_number == 0):
                stack += [(raw_value(r), depth + 1) for r in owner.results]
    return found


def _element_op(value: Any, kind: str) -> Any:
    """The one ``cute.memref.load`` / ``store`` of ``value`` an element access made, or why not one."""
    name = "cute.memref.store" if kind == "st" else "cute.memref.load"
    ops = []
    for use in raw_value(value).uses:
        owner = getattr(use.owner, "operation", use.owner)
        if owner.name == name and use.operand_number == 0:
            ops.append(owner)
    if not ops:
        return f"an element-wise {kind} whose {name} op is not found"
    if any(not same_value(o.operands[1], ops[0].operands[1]) for o in ops[1:]):
        return f"one tensor indexed at several coordinates ({len(ops)} {name} ops): which this {kind} is, is not read"
    return ops[0]


def _element_atom(type_text: str, kind: str) -> _Atom:
    """One element per thread: ``ld.shared`` / ``st.shared`` of the element's width."""
    eb = _element_bytes(_dtype_of(type_text))
    bits = 8 * eb if eb else None
    spelled = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}.get(bits or 0)
    side = "st" if kind == "st" else "ld"
    if spelled is None:
        return _Atom(type_text, None, bits, why=f"a {bits}-bit element {side} is no instruction the bank model has")
    return _Atom(f"element {side} ({_dtype_of(type_text)})", f"{side}.shared.{spelled}", bits)


def _instruction_leaves(shape: Any, stride: Any, values: int) -> list[tuple[int, int]] | None:
    """The (extent, stride) leaves over which one thread's instructions run: all but the
    first leaves of the first mode that make up one instruction's ``values``."""
    first = _modes(shape)[0], _modes(stride)[0]
    leaves = list(zip(_flat(first[0]), _flat(first[1])))
    n, k = 1, 0
    while k < len(leaves) and n < values:
        n *= leaves[k][0]
        k += 1
    while k < len(leaves) and leaves[k][0] == 1:
        k += 1
    if n != values:
        return None
    rest = leaves[k:]
    for sh, st in zip(_modes(shape)[1:], _modes(stride)[1:]):
        rest += list(zip(_flat(sh), _flat(st)))
    return rest


def _instruction_offsets(leaves: list[tuple[int, int]]) -> list[int]:
    out = [0]
    for extent, stride in leaves:
        out = [o + i * stride for i in range(extent) for o in out]
    return out


class _Builder:
    def __init__(
        self,
        trace: Any,
        module: Any,
        kernel: str,
        alloca_offset: Callable[[Any], int | None],
        plan: Any,
    ) -> None:
        self.trace = trace
        self.kernel = kernel
        self.alloca_offset = alloca_offset
        self.plan = plan
        self.threads = _kernel_threads(module, kernel)
        self.conds: list[tuple[Any, Any]] = []

    def cond(self, op: Any) -> Any:
        for seen, c in self.conds:
            if seen == op:
                return c
        c = condition_threads(op, self.threads)
        self.conds.append((op, c))
        return c

    def event_threads(self, raw: Any) -> tuple[frozenset[int], str]:
        out = frozenset(range(self.threads))
        why = ""
        for op, arm in raw.ctx.ifs:
            c = self.cond(op)
            if c is None:
                why = "it runs under a branch on run-time values; taken as run by every thread the other branches admit"
                continue
            out &= c.arm(arm)
        return out, why

    def records(self) -> list[CapturedCopy]:
        out = []
        for raw in self.trace.events:
            a = raw.access
            if raw.kernel != self.kernel or a is None or a.kind not in BANK_KINDS or a.memory != "smem":
                continue
            site = f"{raw.event.site.file}:{raw.event.site.line}" if raw.event is not None else "?"
            with plain_values():
                out += self.record(raw, site)
        return out

    def atom(
        self, value: Any, kind: str, element: list[Offset], choices: list[tuple[str, list[int]]]
    ) -> tuple[_Atom, Any, bool]:
        """The copy's atom and the tensor as it takes it (a ``cute.copy``), or, for ``tensor[i]``,
        one element per thread with the element each thread indexes added to ``element``."""
        copies = _copy_op(value)
        if copies:
            atoms = {str(c.operands[0].type) for c, _ in copies}
            if len(atoms) > 1:
                raise _Unread("one tensor copied with several atoms: which copy this is is not read")
            # the tensor as the copy takes it (its modes regrouped)
            return _atom(next(iter(atoms)), kind), copies[0][1], True
        found = _element_op(value, kind)
        if isinstance(found, str):
            raise _Unread(found)
        try:
            _Reader(self.trace.regions, self.threads).index(found, element, choices)
        except _Unread as e:
            raise _Unread(f"tensor[i] {kind}: {e}") from None
        return _element_atom(str(value.type), kind), value, False

    def record(self, raw: Any, site: str) -> list[CapturedCopy]:
        a = raw.access
        base = CapturedCopy(self.kernel, site, a.kind, "", None, None)
        value = raw_value(a.value)
        if value is None:
            return [_replace(base, unread="the copied tensor is no IR value")]
        element: list[Offset] = []
        element_choices: list[tuple[str, list[int]]] = []
        try:
            atom, value, copied = self.atom(value, a.kind, element, element_choices)
        except _Unread as e:
            return [_replace(base, unread=str(e))]
        base = _replace(
            base,
            atom=atom.text,
            instruction=atom.instruction,
            bits=atom.bits,
            trans=atom.trans,
            matrices=atom.matrices,
        )
        type_text = str(value.type)
        dtype = _dtype_of(type_text)
        base = _replace(base, dtype=dtype)
        if atom.instruction is None:
            return [_replace(base, unread=atom.why)]
        lay = _layout_of(type_text)
        eb = _element_bytes(dtype)
        if lay is None or eb is None:
            return [_replace(base, unread=f"the copied tensor {_short(type_text)} has no static layout")]
        swz_bits, shape, stride = lay
        values = (atom.bits or 0) // (8 * eb)
        leaves = _instruction_leaves(shape, stride, values) if copied else []
        if values < 1 or leaves is None:
            return [_replace(base, unread=f"the tensor's first mode is no whole number of {values}-value instructions")]
        threads, why = self.event_threads(raw)
        warps = sorted({t // WARP for t in threads})
        partial = [w for w in warps if not all(t in threads for t in range(w * WARP, (w + 1) * WARP))]
        base = _replace(base, warps=tuple(warps))
        if partial:
            return [_replace(base, unread=f"warp {partial[0]} runs it with only some of its lanes")]
        try:
            walk = _Reader(self.trace.regions, self.threads).walk(value)
        except _Unread as e:
            return [_replace(base, unread=str(e))]
        walk.steps += element  # an element access: the element each thread indexes
        walk.choices += element_choices
        view = walk.view
        start = self.alloca_offset(view.alloca) if view.alloca is not None else None
        if start is None:
            return [_replace(base, view=view.name, unread=f"where {view.name!r} lies in shared memory is not constant")]
        start += view.offset or 0
        region = _region_at(self.plan, start, view.size or 0)
        base = _replace(base, view=view.name, region=region.name if region is not None else None)
        swz = _swizzle(swz_bits)
        per_instr = [o * eb for o in _instruction_offsets(leaves)]
        try:
            thread_off = {
                t: sum(step(t) for step in walk.steps) for t in range(warps[0] * WARP, (warps[-1] + 1) * WARP)
            }
        except _Unread as e:
            return [_replace(base, unread=str(e))]
        options = list(itertools.product(*(offs for _, offs in walk.choices))) or [()]
        out = []
        for chosen in options:
            extra = sum(chosen)
            addrs: list[tuple[int | None, ...]] = []
            for w in warps:
                for k in per_instr:
                    addrs.append(tuple(swz(start + thread_off[t] + extra + k) for t in range(w * WARP, (w + 1) * WARP)))
            lanes = _lanes_used(atom.instruction)
            addrs = [tuple(x if i < lanes else None for i, x in enumerate(row)) for row in addrs]
            # warp 0's lane 0, in elements from the start of the region holding the view
            first = thread_off[warps[0] * WARP] + extra + (start - region.offset if region is not None else 0)
            text = f"S<{','.join(map(str, swz_bits or (0, 4, 3)))}> o {first // eb} o {_layout_str(shape, stride)}"
            note = why
            if walk.choices:
                note = (note + "; " if note else "") + (
                    f"{walk.choices[0][0]} is known only at run time: each value is read as its own record "
                    f"({len(options)} records stand for this one access)"
                )
            rec = _replace(base, layout=text, addresses=tuple(addrs), note=note, alternatives=len(options))
            out.append(_declare(rec, view, start, region, eb, swz_bits))
        return out


def _declare(  # noqa: PLR0913 - the record and where its view lies
    rec: CapturedCopy, view: Any, start: int, region: Any, eb: int, swz_bits: tuple[int, int, int] | None
) -> CapturedCopy:
    """``rec`` with the declared accesses that give its addresses: over its view's tile, else
    over a tile laid out from the addresses; or with why there are none."""
    accesses, stage, miss = _declared(rec, view, start, region, eb)
    if not accesses and region is not None:
        made = _synthetic(rec, region, eb, swz_bits)
        if made is not None:
            accesses, miss = (made,), ""
            rec = _replace(rec, note=_join(rec.note, SYNTHETIC))
    return _replace(rec, accesses=accesses, stage=stage, unread=miss)


def _replace(rec: CapturedCopy, **kw: Any) -> CapturedCopy:
    from dataclasses import replace

    return replace(rec, **kw)


def _lanes_used(instruction: str) -> int:
    return int(lookup(instruction).lanes)


def _layout_str(shape: Any, stride: Any) -> str:
    def text(t: Any) -> str:
        return str(t) if isinstance(t, int) else "(" + ",".join(text(x) for x in t) + ")"

    return f"{text(shape)}:{text(stride)}"


def _region_at(plan: Any, byte: int, size: int) -> Any:
    """The smallest data region of the plan holding ``size`` bytes from ``byte``."""
    best = None
    for r in plan.regions:
        if r.kind == "data" and r.size and r.offset <= byte and byte + max(size, 1) <= r.offset + r.size:
            if best is None or r.size < best.size:
                best = r
    return best


def _kernel_threads(module: Any, kernel: str) -> int:
    from ._compiled import _ops

    for op in _ops(module.operation):
        if op.name in ("cuda.kernel", "gpu.func", "func.func") and "sym_name" in op.attributes:
            attr = op.attributes["sym_name"]
            if str(getattr(attr, "value", attr)).strip('"') == kernel:
                return block_dim(op) or WARP
    return WARP


# -- the declared access that gives the same addresses ------------------------------------------------


def _atom_coords(instruction: str, eb: int, threads: tuple[int, int] | None) -> tuple[int, int, list[Any]] | None:
    """(rows, cols, lane coordinates) of the bank analysis's atom for ``instruction``."""
    spec = lookup(instruction)
    if spec.kind in ("ldmatrix", "stmatrix"):
        if eb != 2:
            return None
        n = spec.lanes // 8
        coords = [
            None if lane // 8 >= n else (lane % 8 + 8 * ((lane // 8) % 2), 8 * ((lane // 8) // 2))
            for lane in range(WARP)
        ]
        return (8 if n == 1 else 16), (16 if n == 4 else 8), coords
    tr, tc = threads or (8, 4)
    if spec.width % eb:
        return None
    per = spec.width // eb
    return tr, tc * per, [(lane // tc, (lane % tc) * per) for lane in range(WARP)]


def _contiguous(stride: Any) -> int | None:
    for mode, st in enumerate(_modes(stride)):
        first = st
        while not isinstance(first, int):
            first = first[0]
        if first == 1:
            return mode
    return None


def _candidate(  # noqa: PLR0913 - the declared access's fields, and where its tile lies
    tile_shape: Any,
    tile_stride: Any,
    instruction: str,
    eb: int,
    region_start: int,
    elem_offset: int,
    swz: Callable[[int], int],
    warps: tuple[int, int],
    threads: tuple[int, int] | None,
    first_warps: int = 0,
) -> list[list[tuple[int | None, ...]]] | None:
    """The addresses the bank analysis gives a declared access over a two-mode tile
    (``analyze_access``'s walk: atom tiles dealt to the warps in turn), by warp; only the first
    ``first_warps`` warps' when given (a quick refusal before the whole tile is walked)."""
    contiguous = _contiguous(tile_stride)
    made = _atom_coords(instruction, eb, threads)
    if contiguous is None or made is None:
        return None
    rows, cols, coords = made
    shapes, strides = _modes(tile_shape), _modes(tile_stride)
    rows_total, cols_total = _size(shapes[1 - contiguous]), _size(shapes[contiguous])
    if rows_total % rows or cols_total % cols:
        return None
    tiles_r, tiles_c = rows_total // rows, cols_total // cols
    # a two-mode layout is the sum of its modes: each mode's offsets once, then two lookups an address
    row_at = _mode_table(shapes[1 - contiguous], strides[1 - contiguous], rows_total)
    col_at = _mode_table(shapes[contiguous], strides[contiguous], cols_total)
    base = region_start + elem_offset * eb
    wr, wc = warps
    out: list[list[tuple[int | None, ...]]] = []
    for w in range(first_warps or wr * wc):
        mine: list[tuple[int | None, ...]] = []
        for ti in range(w // wc, tiles_r, wr):
            for tj in range(w % wc, tiles_c, wc):
                row: list[int | None] = []
                for c in coords:
                    if c is None:
                        row.append(None)
                        continue
                    row.append(swz(base + (row_at[ti * rows + c[0]] + col_at[tj * cols + c[1]]) * eb))
                mine.append(tuple(row))
        out.append(mine)
    return out


@functools.lru_cache(maxsize=256)
def _mode_table(shape: Any, stride: Any, n: int) -> tuple[int, ...]:
    """A layout mode's offset at each of its first ``n`` linear indices."""
    return tuple(_mode_at(shape, stride, i) for i in range(n))


def _factor_pairs(n: int) -> list[tuple[int, int]]:
    return [(a, n // a) for a in range(1, n + 1) if n % a == 0]


_MAX_COMBOS = 256  # coordinates over a view's modes past its tile tried for one group of warps


@dataclass(frozen=True)
class _Fit:
    combo: tuple[int, ...]
    warps: tuple[int, int]
    threads: tuple[int, int] | None


def _fit(  # noqa: PLR0913 - what one group of warps is matched against
    want: list[list[tuple[int | None, ...]]],
    tile: tuple[Any, Any],
    extras: list[tuple[Any, Any]],
    instruction: str,
    eb: int,
    region_start: int,
    rel: int,
    swz: Callable[[int], int],
) -> _Fit | None:
    """The coordinate over the view's extra modes, arrangement of warps and lanes that give
    these warps' instructions: each warp its own first, else the same instructions among them."""
    matrix = lookup(instruction).kind in ("ldmatrix", "stmatrix")
    thread_options: list[tuple[int, int] | None] = (
        [None] if matrix else [None, (4, 8), (16, 2), (2, 16), (32, 1), (1, 32)]
    )
    flat = sorted((r for w in want for r in w), key=_key)
    rows_wanted = set(flat)
    combos = list(itertools.product(*(range(_size(sh)) for sh, _ in extras)))
    for strict in (True, False):
        for combo in combos:
            offset = rel + sum(_mode_at(sh, st, c) for (sh, st), c in zip(extras, combo))
            for pair in _factor_pairs(len(want))[::-1]:
                for threads in thread_options:
                    # warp 0's instructions first: most arrangements differ there already
                    first = _candidate(*tile, instruction, eb, region_start, offset, swz, pair, threads, 1)
                    if first is None:
                        continue
                    if strict and sorted(first[0], key=_key) != want[0]:
                        continue
                    if not strict and not all(row in rows_wanted for row in first[0]):
                        continue
                    got = _candidate(*tile, instruction, eb, region_start, offset, swz, pair, threads)
                    if got is None:
                        continue
                    if strict and [sorted(w, key=_key) for w in got] == want:
                        return _Fit(combo, pair, threads)
                    if not strict and sorted((r for w in got for r in w), key=_key) == flat:
                        return _Fit(combo, pair, threads)
    return None


def _declared(
    rec: CapturedCopy, view: Any, start: int, region: Any, eb: int
) -> tuple[tuple[SmemAccess, ...], int | None, str]:
    """The accesses a plan can carry that give exactly ``rec``'s addresses (one per group of
    warps that reaches its own part of the view), its stage, or why none do."""
    if region is None:
        return (), None, "no data region of the plan holds the tensor it reaches"
    assert rec.instruction is not None
    view_type = _view_layout(view)
    if view_type is None:
        return (), None, f"the view {view.name!r} has no static layout to declare the access on"
    swz_bits, shape, stride = view_type
    rel = start - region.offset
    if rel % eb:
        return (), None, f"the view {view.name!r} starts {rel} B into its region, no whole number of elements"
    # the tensor's own swizzle, stated as a hardware mode (the region's may differ: a tile laid over
    # another buffer); the layout then carries only the tile's offset in the region
    swizzle = "none" if not swz_bits or not swz_bits[0] else _MODE_NAMES.get(swz_bits)
    if swizzle is None and region.swizzle is not None and _MODE_BITS.get(region.swizzle) != swz_bits:
        why = (
            f"the tensor {view.name!r} is swizzled S<{','.join(map(str, swz_bits or ()))}>, no hardware mode, "
            f"and its region {region.name!r} states the {region.swizzle} swizzle"
        )
        return (), None, why
    written = ",".join(map(str, (0, 4, 3) if swizzle is not None else (swz_bits or (0, 4, 3))))
    shapes, strides = _modes(shape), _modes(stride)
    swz = _swizzle(swz_bits)
    n = len(rec.warps)
    per_warp = len(rec.addresses) // max(1, n)
    by_warp = [sorted(rec.addresses[i * per_warp : (i + 1) * per_warp], key=_key) for i in range(n)]
    # the tile: the view's first two modes, else its first mode alone (a row of a staged buffer)
    tiles = []
    if len(shapes) >= 2 and _contiguous(tuple(strides[:2])) is not None:
        tiles.append(((tuple(shapes[:2]), tuple(strides[:2])), list(zip(shapes[2:], strides[2:]))))
    if _contiguous((strides[0],)) is not None:
        tiles.append((((1, shapes[0]), (0, strides[0])), list(zip(shapes[1:], strides[1:]))))
    for tile, extras in tiles:
        combos = 1
        for sh, _ in extras:
            combos *= _size(sh)
        if combos > _MAX_COMBOS:
            continue
        for groups in [g for g in range(1, n + 1) if n % g == 0]:
            size = n // groups
            fits = []
            for g in range(groups):
                fit = _fit(
                    by_warp[g * size : (g + 1) * size], tile, extras, rec.instruction, eb, region.offset, rel // eb, swz
                )
                if fit is None:
                    break
                fits.append(fit)
            else:
                accesses = tuple(_access(rec, region, fit, tile, extras, rel // eb, written, swizzle) for fit in fits)
                stages = {fit.combo[0] for fit in fits} if len(extras) == 1 else set()
                return accesses, (stages.pop() if len(stages) == 1 else None), ""
    return (
        (),
        None,
        f"no tile of {view.name!r}, arrangement of warps and stage gives these addresses: "
        "they are counted as compiled, but the plan carries no declared access for them",
    )


def _access(  # noqa: PLR0913 - one group's fit, written as the plan's record
    rec: CapturedCopy,
    region: Any,
    fit: _Fit,
    tile: tuple[Any, Any],
    extras: list[tuple[Any, Any]],
    rel: int,
    written: str,
    swizzle: str | None,
) -> SmemAccess:
    """A view of three modes keeps its stage mode (the access names its stage); a view of more
    states its tile with the other modes' offset folded in."""
    if len(extras) == 1:
        full = (tile[0] + (extras[0][0],), tile[1] + (extras[0][1],))
        layout, stage = f"S<{written}> o {rel} o {_layout_str(*full)}", fit.combo[0]
    else:
        offset = rel + sum(_mode_at(sh, st, c) for (sh, st), c in zip(extras, fit.combo))
        layout, stage = f"S<{written}> o {offset} o {_layout_str(*tile)}", 0
    return SmemAccess(
        rec.instruction or "",
        layout=layout,
        dtype=rec.dtype,
        swizzle=swizzle or "region",
        warps=fit.warps,
        threads=fit.threads,
        stage=stage,
        region=region.name,
    )


SYNTHETIC = (
    "no tile of its view gives these addresses; it is declared over a tile laid out from the addresses "
    "themselves (each lane's, each instruction's), checked to give every one of them"
)


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def _bits(n: int) -> int | None:
    """log2 of a power of two, else None."""
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def _mode_text(leaves: list[tuple[int, int]]) -> tuple[str, str]:
    if not leaves:
        return "1", "0"
    if len(leaves) == 1:
        return str(leaves[0][0]), str(leaves[0][1])
    return "(" + ",".join(str(e) for e, _ in leaves) + ")", "(" + ",".join(str(d) for _, d in leaves) + ")"


def _synthetic(rec: CapturedCopy, region: Any, eb: int, swz_bits: tuple[int, int, int] | None) -> SmemAccess | None:
    """A declared access over a tile laid out from the addresses themselves: atom tiles down the
    rows, warp ``w`` taking rows ``w, w + W, ...`` as the analysis deals them, each coordinate bit
    the stride its lanes and instructions show. None when the addresses are no such layout
    (checked by walking it as the analysis will)."""
    assert rec.instruction is not None
    swizzle = "none" if not swz_bits or not swz_bits[0] else _MODE_NAMES.get(swz_bits)
    if swizzle is None or not rec.warps or not rec.addresses:
        return None
    spec = lookup(rec.instruction)
    matrix = spec.kind in ("ldmatrix", "stmatrix")
    threads = None if matrix else (1, WARP)
    made = _atom_coords(rec.instruction, eb, threads)
    if made is None:
        return None
    rows, cols, coords = made
    per = 8 if matrix else spec.width // eb
    swz = _swizzle(swz_bits)
    n = len(rec.warps)
    count = len(rec.addresses) // n
    tiles = n * count

    def element(tile: int, lane: int) -> int | None:
        a = rec.addresses[(tile % n) * count + tile // n][lane]
        if a is None:
            return None
        rel = swz(a) - region.offset  # the swizzle is its own inverse
        return rel // eb if rel >= 0 and rel % eb == 0 else None

    def lane_at(coord: tuple[int, int]) -> int | None:
        return next((lane for lane, c in enumerate(coords) if c == coord), None)

    first = lane_at((0, 0))
    base = element(0, first) if first is not None else None
    row_bits, col_bits = _bits(rows), _bits(cols // per)
    if first is None or base is None or row_bits is None or col_bits is None:
        return None
    row_leaves, col_leaves = [], [(per, 1)]
    for b in range(row_bits):
        lane = lane_at((1 << b, 0))
        value = element(0, lane) if lane is not None else None
        if value is None or value < base:
            return None
        row_leaves.append((2, value - base))
    tile_bits = _bits(tiles)
    steps = [1 << b for b in range(tile_bits)] if tile_bits is not None else ([1] if tiles > 1 else [])
    for step in steps:
        value = element(step, first)
        if value is None or value < base:
            return None
        row_leaves.append((2 if tile_bits is not None else tiles, value - base))
    for b in range(col_bits):
        lane = lane_at((0, per << b))
        value = element(0, lane) if lane is not None else None
        if value is None or value < base:
            return None
        col_leaves.append((2, value - base))
    (rs, rd), (cs, cd) = _mode_text(row_leaves), _mode_text(col_leaves)
    tile = ((_parse(rs), _parse(cs)), (_parse(rd), _parse(cd)))
    got = _candidate(tile[0], tile[1], rec.instruction, eb, region.offset, base, swz, (n, 1), threads)
    per_warp = [sorted(rec.addresses[i * count : (i + 1) * count], key=_key) for i in range(n)]
    if got is None or [sorted(w, key=_key) for w in got] != per_warp:
        return None
    try:
        return SmemAccess(
            rec.instruction,
            layout=f"S<0,4,3> o {base} o ({rs},{cs}):({rd},{cd})",
            dtype=rec.dtype,
            swizzle=swizzle,
            warps=(n, 1),
            threads=threads,
            region=region.name,
        )
    except ValueError:  # a layout the record refuses (past the bounds of what is analysed)
        return None


def _parse(text: str) -> Any:
    from ...layout._access import read_int_tuple

    return read_int_tuple(text, "mode")


def _key(row: tuple[int | None, ...]) -> tuple[int, ...]:
    return tuple(-1 if x is None else x for x in row)


def _view_layout(view: Any) -> tuple[tuple[int, int, int] | None, Any, Any] | None:
    try:
        with plain_values():
            return _layout_of(str(raw_value(view.value).type))
    except Exception:
        return None


def bank_records(
    trace: Any, module: Any, kernel: str, alloca_offset: Callable[[Any], int | None], plan: Any
) -> tuple[CapturedCopy, ...]:
    """Every shared-memory ld/st, ldmatrix/stmatrix and cp.async ``kernel`` makes, as compiled."""
    return tuple(_Builder(trace, module, kernel, alloca_offset, plan).records())


def plan_accesses(records: Sequence[CapturedCopy]) -> tuple[SmemAccess, ...]:
    """The distinct declared accesses of ``records``, in the order the kernel makes them."""
    return tuple(dict.fromkeys(a for r in records for a in r.accesses))
