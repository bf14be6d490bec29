"""What the traced IR says about an ordering event: its branches, its loops, its pointer.

An event is recorded while the DSL traces, at the insertion point its ops go to.
The ``scf.if`` ops around that point are the branches it sits under (warp roles
are ``if`` conditions on the thread index); the ``scf.for`` ops are its loops. A
condition is read by evaluating it for each thread of the block (thread index in,
``elect.sync`` true on lane 0); a condition on anything else is not a role split.
Pointers are followed back to the allocation through the ops that only move or
recast them, adding constant offsets. Only the MLIR bindings shipped with the DSL
are used, and the module is only read.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PASS_OPS",
    "Condition",
    "LoopBounds",
    "TraceContext",
    "block_dim",
    "capped_count",
    "compare",
    "condition_threads",
    "const_value",
    "count_value",
    "defining_op",
    "encloses",
    "guard_terms",
    "thread_trips",
    "thread_values",
    "raw_value",
    "same_value",
    "loop_bounds",
    "plain_values",
    "pointer_offset",
    "trace_context",
]

_KERNEL_OPS = ("cuda.kernel", "gpu.func", "func.func", "llvm.func", "lir.func", "builtin.module", "gpu.module")
_WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}


@dataclass(frozen=True)
class TraceContext:
    """Where an op is being inserted: the ``(if op, arm)`` pairs and ``for`` ops around it, outermost first."""

    ifs: tuple[tuple[Any, int], ...]
    loops: tuple[Any, ...]


def trace_context() -> TraceContext:
    """The branches and loops around the op the trace inserts next."""
    from cutlass._mlir import ir

    block = ir.InsertionPoint.current.block  # type: ignore[attr-defined]  # set while tracing
    ifs: list[tuple[Any, int]] = []
    loops: list[Any] = []
    while block is not None:
        owner = block.owner
        if owner is None:
            break
        owner = getattr(owner, "operation", owner)
        if owner.name in _KERNEL_OPS:
            break
        if owner.name == "scf.if":
            arm = next(i for i, region in enumerate(owner.regions) if any(b == block for b in region.blocks))
            ifs.append((owner, arm))
        elif owner.name in ("scf.for", "scf.while"):
            loops.append(owner)
        if owner.parent is None:  # a top-level op has no block around it
            break
        block = owner.block
    return TraceContext(tuple(reversed(ifs)), tuple(reversed(loops)))


@contextlib.contextmanager
def plain_values() -> Iterator[None]:
    """While walking the IR, operands come back as plain ``ir.Value``s: the DSL's own
    wrapper for a tensor value emits a ``cute.get_iter`` when it is made, and reading
    the kernel must add nothing to it. The DSL's wrappers are put back afterwards."""
    from cutlass._mlir import ir
    from cutlass._mlir.dialects import cute as cute_ir
    from cutlass._mlir.dialects import cute_nvgpu as nvgpu_ir
    from cutlass.cute.tensor import _Tensor

    ids = [
        cute_ir.MemRefType.get_static_typeid(),  # type: ignore[attr-defined]
        cute_ir.CoordTensorType.get_static_typeid(),  # type: ignore[attr-defined]
        nvgpu_ir.SmemDescViewType.get_static_typeid(),  # type: ignore[attr-defined]
    ]
    for typeid in ids:
        ir.register_value_caster(typeid, replace=True)(_plain)
    try:
        yield
    finally:
        for typeid in ids:
            ir.register_value_caster(typeid, replace=True)(_Tensor)


def _plain(value: Any) -> Any:
    return value


def raw_value(value: Any) -> Any:
    """The ``ir.Value`` itself: the DSL hands some values out wrapped (a tensor, a pointer)."""
    inner = getattr(value, "value", None)
    return inner if inner is not None and hasattr(inner, "owner") else value


def same_value(a: Any, b: Any) -> bool:
    """Whether two values are one SSA value. The IR's own comparison is used: the DSL's
    integer values overload ``==`` to emit a compare into the kernel."""
    from cutlass._mlir import ir

    a, b = raw_value(a), raw_value(b)
    if not isinstance(a, ir.Value) or not isinstance(b, ir.Value):  # type: ignore[attr-defined]
        return a is b
    return bool(ir.Value.__eq__(a, b))  # type: ignore[attr-defined]


def defining_op(value: Any) -> Any:
    """The op defining ``value``, or None (a block argument, or not an IR value)."""
    try:
        owner = raw_value(value).owner
    except Exception:
        return None
    op = getattr(owner, "operation", owner)
    return op if getattr(op, "name", None) is not None else None


# -- conditions -----------------------------------------------------------------------------


def _int_attr(op: Any) -> int | None:
    try:
        attr = op.attributes["value"]
    except (KeyError, Exception):
        return None
    text = str(attr)
    if text in ("true", "false"):
        return int(text == "true")
    m = re.match(r"(-?\d+)", text)
    return int(m.group(1)) if m else None


_CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: a < b,
    "sle": lambda a, b: a <= b,
    "sgt": lambda a, b: a > b,
    "sge": lambda a, b: a >= b,
    "ult": lambda a, b: a < b,
    "ule": lambda a, b: a <= b,
    "ugt": lambda a, b: a > b,
    "uge": lambda a, b: a >= b,
}
_BIN: dict[str, Callable[[int, int], int]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else 0,
    "arith.divui": lambda a, b: a // b if b else 0,
    "arith.floordivsi": lambda a, b: a // b if b else 0,
    "arith.remsi": lambda a, b: a - b * int(a / b) if b else 0,
    "arith.remui": lambda a, b: a % b if b else 0,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b,
    "arith.shrui": lambda a, b: a >> b,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.maxsi": max,
    "arith.minsi": min,
    "arith.maxui": max,
    "arith.minui": min,
}
_PASS = ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "cute_nvgpu.arch.make_warp_uniform")
PASS_OPS = _PASS  # ops that only cast or move a value


class _Unknown(Exception):
    """The value depends on something other than the thread index."""


Thread = Callable[[int, int], int]  # (thread index, block threads) -> value; raises _Unknown


def _unknown(tid: int, threads: int) -> int:
    raise _Unknown


def _leaf(name: str, op: Any) -> Thread | None:
    """The value of an op that reads no other value, as a function of the thread."""
    if name == "nvvm.read.ptx.sreg.tid.x":
        return lambda tid, threads: tid
    if name in ("nvvm.read.ptx.sreg.tid.y", "nvvm.read.ptx.sreg.tid.z"):
        return lambda tid, threads: 0
    if name == "nvvm.read.ptx.sreg.ntid.x":
        return lambda tid, threads: threads
    if name in ("nvvm.read.ptx.sreg.ntid.y", "nvvm.read.ptx.sreg.ntid.z"):
        return lambda tid, threads: 1
    if name == "nvvm.read.ptx.sreg.laneid":
        return lambda tid, threads: tid % 32
    if name == "nvvm.elect.sync" or name.endswith("elect_one") or name.endswith("elect.sync"):
        return lambda tid, threads: int(tid % 32 == 0)
    if name == "arith.constant":
        v = _int_attr(op)
        return _unknown if v is None else (lambda tid, threads: v)
    return None


def _compile(value: Any, depth: int = 0) -> Thread:  # noqa: C901 - one branch per op kind
    """``value`` as a function of the thread index, read from the IR once (evaluating it
    for every thread of the block is then cheap); a part it cannot read raises ``_Unknown``
    when called."""
    op = defining_op(value)
    name = getattr(op, "name", None)
    if name is None or depth > 64:
        return _unknown
    leaf = _leaf(name, op)
    if leaf is not None:
        return leaf
    if name in _PASS:
        return _compile(op.operands[0], depth + 1)
    if name in ("arith.andi", "arith.ori") and str(op.results[0].type) == "i1":
        x, y = _compile(op.operands[0], depth + 1), _compile(op.operands[1], depth + 1)
        decisive = 0 if name == "arith.andi" else 1  # false (true) whatever the other side is

        def either(tid: int, threads: int) -> int:
            a, b = _maybe_call(x, tid, threads), _maybe_call(y, tid, threads)
            if decisive in (a, b):
                return decisive
            if a is None or b is None:
                raise _Unknown
            return _BIN[name](a, b)

        return either
    if name in _BIN:
        f, x, y = _BIN[name], _compile(op.operands[0], depth + 1), _compile(op.operands[1], depth + 1)
        return lambda tid, threads: f(x(tid, threads), y(tid, threads))
    if name == "arith.cmpi":
        try:
            cmp = _CMP[_predicate_name(str(op.attributes["predicate"]))]
        except _Unknown:
            return _unknown
        x, y = _compile(op.operands[0], depth + 1), _compile(op.operands[1], depth + 1)
        return lambda tid, threads: int(cmp(x(tid, threads), y(tid, threads)))
    if name == "arith.select":
        c, x, y = (_compile(o, depth + 1) for o in op.operands[:3])
        return lambda tid, threads: x(tid, threads) if c(tid, threads) else y(tid, threads)
    return _unknown


def _maybe_call(f: Thread, tid: int, threads: int) -> int | None:
    try:
        return f(tid, threads)
    except _Unknown:
        return None


_PRED_CODES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def _predicate_name(text: str) -> str:
    m = re.match(r"(\d+)", text)
    if m:
        return _PRED_CODES[int(m.group(1))]
    for key in _CMP:
        if key in text:
            return key
    raise _Unknown


def compare(predicate: str) -> Callable[[int, int], bool]:
    """The comparison an ``arith.cmpi`` predicate attribute names (raises on one not read)."""
    return _CMP[_predicate_name(predicate)]


@dataclass(frozen=True)
class Condition:
    """An ``if`` condition read per thread: the threads it surely holds for, and surely
    fails for; any other thread's outcome is known only at run time."""

    holds: frozenset[int]
    fails: frozenset[int]
    threads: int

    @property
    def partial(self) -> bool:
        return len(self.holds) + len(self.fails) < self.threads

    def arm(self, arm: int) -> frozenset[int]:
        """The threads that may run ``arm`` (0: then, 1: else)."""
        return frozenset(range(self.threads)) - (self.fails if arm == 0 else self.holds)


def condition_threads(if_op: Any, threads: int) -> Condition | None:
    """How ``if_op``'s condition falls for each thread of a ``threads``-thread block, or
    None when it depends on nothing but run-time values for every thread."""
    try:
        with plain_values():
            f = _compile(if_op.operands[0])
        values = [_maybe_call(f, t, threads) for t in range(threads)]
    except Exception:
        return None
    if all(v is None for v in values):
        return None
    holds = frozenset(t for t, v in enumerate(values) if v)
    fails = frozenset(t for t, v in enumerate(values) if v == 0)
    return Condition(holds, fails, threads)


def block_dim(kernel_op: Any) -> int | None:
    """The block size a kernel is compiled for (``nvvm.reqntid``), if stated."""
    for key in ("nvvm.reqntid",):
        try:
            text = str(kernel_op.attributes[key])
        except (KeyError, Exception):
            continue
        nums = [int(n) for n in re.findall(r"\d+", text.split(":", 1)[-1])]
        if nums:
            total = 1
            for n in nums[:3]:
                total *= n
            return total
    return None


# -- loops ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoopBounds:
    """A loop's bounds: each a constant, or (for the upper bound) the value it is read from."""

    lower: int | None
    upper: int | None
    step: int | None
    upper_value: Any = None
    cap: int | None = None  # the upper bound is min(cap, upper_value)

    @property
    def trips(self) -> int | None:
        if self.lower is None or self.upper is None or not self.step:
            return None
        return max(0, -(-(self.upper - self.lower) // self.step))


def const_value(value: Any) -> int | None:
    """The integer a value holds when it is a constant (through casts), else None."""
    op = defining_op(value)
    if getattr(op, "name", None) in _PASS:
        return const_value(op.operands[0])
    if getattr(op, "name", None) == "arith.constant":
        return _int_attr(op)
    return None


def count_value(value: Any) -> tuple[int | None, Any]:
    """A loop bound as a count: ``(constant, None)`` or ``(None, the run-time value)``.
    ``max(x, 0)`` is ``x`` (a count is never negative) and ``min(c, x)`` with ``c`` at most 1
    is ``c`` (the check runs every loop at least once)."""
    fixed, value, _ = capped_count(value)
    return fixed, value


def capped_count(value: Any) -> tuple[int | None, Any, int | None]:
    """As :func:`count_value`, and ``min(c, x)`` with a larger constant ``c`` read as ``x``
    capped at ``c``: ``(None, x, c)``."""
    cap: int | None = None
    for _ in range(8):
        fixed = const_value(value)
        if fixed is not None:
            return fixed, None, None
        op = defining_op(value)
        name = getattr(op, "name", None)
        if name in _PASS:
            value = op.operands[0]
            continue
        if name in ("arith.maxsi", "arith.minsi") and len(op.operands) == 2:
            a, b = (const_value(o) for o in op.operands)
            if name == "arith.maxsi" and (a == 0 or b == 0):
                value = op.operands[1] if a == 0 else op.operands[0]
                continue
            if name == "arith.minsi" and ((a is not None and a <= 1) or (b is not None and b <= 1)):
                return (a if a is not None and a <= 1 else b), None, None
            if name == "arith.minsi" and cap is None and (a is None) != (b is None):
                cap = a if a is not None else b
                value = op.operands[1] if a is not None else op.operands[0]
                continue
        break
    return None, raw_value(value), cap


def _once(while_op: Any) -> bool:
    """Whether an ``scf.while`` runs its body exactly once: its condition is a flag it
    carries, entering true and yielded false by the body (a scheduler's first and only tile)."""
    from cutlass._mlir import ir

    try:
        before, after = while_op.regions[0].blocks[0], while_op.regions[1].blocks[0]
        cond = list(before.operations)[-1]
        flag = ir.BlockArgument(raw_value(cond.operands[0]))  # type: ignore[attr-defined]  # raises if it is none
        if flag.owner != before:
            return False
        j = flag.arg_number
        yielded = list(after.operations)[-1]
        return const_value(while_op.operands[j]) == 1 and const_value(yielded.operands[j]) == 0
    except Exception:
        return False


def loop_bounds(loop_op: Any) -> LoopBounds:
    if loop_op.name == "scf.while" and _once(loop_op):
        return LoopBounds(0, 1, 1)
    if loop_op.name != "scf.for":
        return LoopBounds(None, None, None)
    lb, ub, step = loop_op.operands[0], loop_op.operands[1], loop_op.operands[2]
    span = _span_from_lower(lb, ub)
    if span is not None:  # range(s, s + c, step): scf.for's step is positive
        fixed_step = const_value(step)
        if fixed_step is not None and fixed_step > 0:
            return LoopBounds(0, -(-span // fixed_step), 1)
        if span == 1:  # one trip whatever the step
            return LoopBounds(0, 1, 1)
    lower, _ = count_value(lb)
    upper, upper_value, cap = capped_count(ub)
    return LoopBounds(lower, upper, const_value(step), upper_value, cap)


def _then_value(value: Any) -> tuple[Any, Any] | None:
    """``(the scf.if, what its then-branch yields)`` when ``value`` is an ``scf.if`` result."""
    op = defining_op(value)
    if getattr(op, "name", None) != "scf.if":
        return None
    try:
        index = next(i for i, r in enumerate(op.results) if same_value(r, value))
        yielded = list(op.regions[0].blocks[0].operations)[-1]
        return op, yielded.operands[index]
    except Exception:  # not an scf.if of the shape the DSL writes
        return None


def _span_from_lower(lower: Any, upper: Any) -> int | None:
    """``c`` when a loop runs between ``x`` and ``x + c`` (a constant ``c`` of at least 1, ``x``
    a run-time value): ``range(bidx, bidx + 1, grid)``, one tile per CTA. The DSL hands
    ``scf.for`` the two ends from two ``scf.if`` on one condition (swapped when the step is
    negative): either way the loop spans ``c``."""
    lo, hi = _then_value(lower), _then_value(upper)
    if lo is not None and hi is not None and same_value(lo[0].operands[0], hi[0].operands[0]):
        return _span_from_lower(lo[1], hi[1]) or _span_from_lower(hi[1], lo[1])
    op = defining_op(upper)
    if getattr(op, "name", None) != "arith.addi" or len(op.operands) != 2:
        return None
    for this, other in ((0, 1), (1, 0)):
        c = const_value(op.operands[other])
        if c is not None and c >= 1 and same_value(op.operands[this], lower):
            return c
    return None


def thread_values(value: Any, threads: frozenset[int], block: int) -> set[int] | None:
    """The values ``value`` takes over ``threads`` when it depends on the thread index alone."""
    try:
        with plain_values():
            f = _compile(value)
            return {f(t, block) for t in threads}
    except Exception:  # _Unknown: a run-time value
        return None


def thread_trips(loop_op: Any, threads: frozenset[int], block: int) -> int | None:
    """An ``scf.for``'s trip count when its bounds depend on the thread index alone and come
    out the same for every thread of ``threads`` (``range(warp_group_idx - 1)``)."""
    if loop_op.name != "scf.for" or not threads:
        return None
    try:
        with plain_values():
            lo, hi, step = (_compile(loop_op.operands[i]) for i in range(3))
            seen = {(lo(t, block), hi(t, block), step(t, block)) for t in threads}
    except Exception:  # _Unknown: a run-time value
        return None
    if len(seen) != 1:
        return None
    a, b, c = seen.pop()
    return max(0, -(-(b - a) // c)) if c > 0 else None


def encloses(outer: Any, op: Any) -> bool:
    """Whether ``op`` sits (at any depth) inside ``outer``'s regions."""
    cur = getattr(op, "parent", None)
    for _ in range(256):
        if cur is None:
            return False
        cur = getattr(cur, "operation", cur)
        if cur == outer:
            return True
        cur = getattr(cur, "parent", None)
    return False


def guard_terms(if_op: Any, threads: int) -> list[tuple[str, Any, Any]] | None:
    """The parts of an ``if`` condition, a conjunction, that depend on more than the thread
    index: each ``("slt", a, b)`` for ``a < b`` (signed). None when a part is anything else.
    Parts on the thread index alone are left out: ``condition_threads`` reads them."""
    with plain_values():
        terms = [raw_value(if_op.operands[0])]
        out: list[tuple[str, Any, Any]] = []
        while terms:
            v = terms.pop()
            op = defining_op(v)
            name = getattr(op, "name", None)
            if name == "arith.andi" and str(op.results[0].type) == "i1":
                terms += [raw_value(o) for o in op.operands]
                continue
            f = _compile(v)
            if all(_maybe_call(f, t, threads) is not None for t in range(0, threads, 32)):
                continue  # read from the thread index
            if name != "arith.cmpi":
                return None
            try:
                pred = _predicate_name(str(op.attributes["predicate"]))
            except _Unknown:
                return None
            a, b = raw_value(op.operands[0]), raw_value(op.operands[1])
            if pred in ("slt", "ult"):
                out.append(("slt", a, b))
            elif pred in ("sgt", "ugt"):
                out.append(("slt", b, a))
            else:
                return None
        return out


# -- pointers ---------------------------------------------------------------------------------


def _elem_bytes(type_text: str) -> int | None:
    m = re.search(r"ptr<([a-z0-9]+)", type_text)
    if m is None:
        return None
    width = _WIDTHS.get(m.group(1))
    if width is None:
        m2 = re.match(r"[a-z]+(\d+)", m.group(1))
        width = int(m2.group(1)) if m2 else None
    return max(1, width // 8) if width else None


def pointer_offset(value: Any) -> tuple[Any, int] | None:
    """``(alloca op, constant byte offset)`` of an SMEM pointer value, when it is the
    allocation's start moved by constants only; None otherwise."""
    with plain_values():
        return _pointer_offset(value)


def _pointer_offset(value: Any) -> tuple[Any, int] | None:
    total = 0
    for _ in range(64):
        op = defining_op(value)
        name = getattr(op, "name", None)
        if name is None:
            return None
        if name == "cute.memref.alloca":
            return op, total
        if name == "llvm.getelementptr":
            try:
                raw = str(op.attributes["rawConstantIndices"])  # e.g. "array<i32: 65536>"
                idx = [int(i) for i in re.findall(r"-?\d+", raw.split(":", 1)[-1])]
                elem = str(op.attributes["elem_type"])
            except (KeyError, Exception):
                return None
            if len(op.operands) != 1 or len(idx) != 1:
                return None
            total += idx[0] * (_WIDTHS.get(elem, 8) // 8)
        elif name == "cute.add_offset":
            m = re.search(r'int_tuple<"(-?\d+)">', str(op.operands[1].type))
            size = _elem_bytes(str(op.operands[0].type))
            if m is None or size is None:
                return None
            total += int(m.group(1)) * size
        elif name not in (
            "cute.recast_iter",
            "cute.inttoptr",
            "cute.ptrtoint",
            "cute.assume",
            "llvm.ptrtoint",
            "llvm.inttoptr",
            "builtin.unrealized_conversion_cast",
            "cute.get_iter",
            "cute.make_view",
            "cute.make_ptr",
        ):
            return None
        value = op.operands[0]
    return None
