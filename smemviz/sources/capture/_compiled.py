"""Where the compiler puts each SMEM allocation: its own layout pass, run on a copy.

In nvidia-cutlass-dsl 4.8.1 every allocation is a ``cute.memref.alloca`` tagged
``smem.partition_id``; the pass ``infer-kernel-smem-usage`` (the first step of
the DSL's lowering) replaces each with the dynamic SMEM base plus a constant
offset and resolves each launch's dynamic SMEM size. Capture runs that pass on
a textual copy of the traced module, with a marker location on each alloca so
its offset can be read back unambiguously; the module being compiled is never
touched, so the kernel is exactly what it would be without capture.

Only the MLIR bindings that ship with the DSL are used, inside functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AllocaSite",
    "LayoutPassResult",
    "walk_allocas",
    "raw_smem_ops",
    "run_layout_pass",
    "launch_requests",
    "experimental_buffers",
    "if_ops",
    "branch_indices",
    "branch_path",
    "merging_kernels",
    "LAYOUT_PASS",
]

LAYOUT_PASS = "infer-kernel-smem-usage"
_KERNEL_OPS = ("cuda.kernel", "gpu.func", "func.func", "llvm.func", "lir.func")
# ops that reach SMEM without the allocator: the dynamic array itself, or a raw SMEM alloc
_RAW_SMEM_OPS = ("cute_nvgpu.arch.get_dyn_smem", "cute_nvgpu.arch.alloc_smem", "cute.memref.alloc_smem")
_MARK = "smemviz.capture.alloca."
_EXPERIMENTAL_BUFFER = "lir.allocate_buffer"  # cute_ext.allocate: placed by the experimental front end's passes
_MERGE_BRANCHES = "smem.merge_branch_allocs"  # launch(smem_merge_branch_allocs=True)
_CONFIG_SMEM = "smem.config_smem_size"  # the kernel attribute holding a launch's stated smem=


@dataclass(frozen=True)
class AllocaSite:
    """One ``cute.memref.alloca`` of the traced module, in printing order."""

    index: int  # among all allocas (register ones too): the k-th one printed
    op: Any  # the ir.Operation
    kernel: str | None  # symbol of the function it lies in
    smem: bool
    partition: int | None
    type_text: str
    branch: tuple[tuple[int, int], ...] = ()  # (index of an scf.if among the module's, arm) it lies in, outermost first


@dataclass(frozen=True)
class LayoutPassResult:
    offsets: dict[int, int]  # alloca index -> byte offset
    totals: dict[str, int]  # kernel symbol -> dynamic SMEM bytes of its launch


def _ops(op: Any) -> Iterator[Any]:
    """Every operation nested in ``op``, in the order the printer prints them (pre-order)."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                yield child
                yield from _ops(child)


def _ops_in_branches(
    op: Any, path: tuple[tuple[int, int], ...] = (), ifs: list[int] | None = None
) -> Iterator[tuple[Any, tuple[tuple[int, int], ...]]]:
    """Like :func:`_ops`, each op with the ``(if index, arm)`` pairs it lies in, outermost first;
    an if's index is its place among the module's ifs in printing order (see :func:`if_ops`)."""
    ifs = [] if ifs is None else ifs  # one counter shared by the whole walk
    index = len(ifs) - 1  # this op's own index, when it is an if (counted as it was yielded)
    for arm, region in enumerate(op.regions):
        inner = (*path, (index, arm)) if op.name == "scf.if" else path
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name == "scf.if":
                    ifs.append(len(ifs))
                yield child, inner
                yield from _ops_in_branches(child, inner, ifs)


def if_ops(module: Any) -> list[Any]:
    """Every ``scf.if`` of the module, in printing order: an if's index names it in a branch path."""
    return [op for op in _ops(module.operation) if op.name == "scf.if"]


def branch_indices(path: Any, ifs: list[Any]) -> tuple[tuple[int, int], ...] | None:
    """A path of ``(if op, arm)`` pairs as ``(if index, arm)``; None when an if is not in ``ifs``."""
    out = []
    for op, arm in path:
        index = next((i for i, candidate in enumerate(ifs) if candidate == op), None)
        if index is None:
            return None
        out.append((index, arm))
    return tuple(out)


def branch_path(block: Any) -> tuple[tuple[Any, int], ...]:
    """The ``(if op, arm)`` pairs that ``block`` (where an op is being inserted) lies in, outermost first."""
    path: list[tuple[Any, int]] = []
    while block is not None:
        owner = block.owner
        if owner is None:
            break
        owner = getattr(owner, "operation", owner)
        if owner.name in _KERNEL_OPS:
            break
        if owner.name == "scf.if":
            arm = next(i for i, region in enumerate(owner.regions) if any(b == block for b in region.blocks))
            path.append((owner, arm))
        block = owner.block
    return tuple(reversed(path))


def merging_kernels(module: Any) -> set[str]:
    """Kernels launched with ``smem_merge_branch_allocs=True``: the compiler overlays exclusive arms' SMEM."""
    return {name for name, op in _kernel_ops(module) if _MERGE_BRANCHES in op.attributes}


def _kernel_of(op: Any) -> str | None:
    parent = op.parent
    while parent is not None:
        if parent.name in _KERNEL_OPS and "sym_name" in parent.attributes:
            return _string(parent.attributes["sym_name"])
        parent = parent.parent
    return None


def _string(attr: Any) -> str:
    value = getattr(attr, "value", None)
    if isinstance(value, str):
        return value
    text = str(attr)
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def walk_allocas(module: Any) -> list[AllocaSite]:
    out: list[AllocaSite] = []
    for op, branch in _ops_in_branches(module.operation):
        if op.name != "cute.memref.alloca":
            continue
        type_text = str(op.results[0].type)
        partition = None
        if "smem.partition_id" in op.attributes:
            partition = int(str(op.attributes["smem.partition_id"]).split(":")[0])
        out.append(AllocaSite(len(out), op, _kernel_of(op), ", smem" in type_text, partition, type_text, branch))
    return out


def raw_smem_ops(module: Any) -> list[tuple[str | None, str]]:
    """(kernel, op name) of each op that takes SMEM outside the allocator."""
    return [(_kernel_of(op), op.name) for op in _ops(module.operation) if op.name in _RAW_SMEM_OPS]


_ALLOCA_LINE = re.compile(r"^(\s*%[\w.$-]+ = cute\.memref\.alloca\(.*?)\s*$", re.M)
_LOC_ALIAS = re.compile(r'^(#loc\d*) = loc\("' + re.escape(_MARK) + r'(\d+)"\)', re.M)
_ADD_OFFSET = re.compile(
    r'cute\.add_offset\(.*!cute\.int_tuple<"(-?\d+)">.*loc\((#loc\d*|"' + re.escape(_MARK) + r'\d+")\)\s*$', re.M
)
_CONST = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (-?\d+) : i64", re.M)
_CFG = re.compile(r"^\s*(%[\w.$-]+) = cuda\.launch_cfg\.create.*?dynamicSmemBytes = (%[\w.$-]+)", re.M)
_LAUNCH = re.compile(r"cuda\.launch(?:_ex)? @[\w.$-]+::@([\w.$-]+)<(%[\w.$-]+)>")


def _marked_text(module: Any) -> tuple[str, int]:
    """The module printed without locations, each alloca given a marker location."""
    text = module.operation.get_asm(enable_debug_info=False)
    counter = iter(range(1 << 30))
    marked = _ALLOCA_LINE.sub(lambda m: f'{m.group(1)} loc("{_MARK}{next(counter)}")', text)
    return marked, next(counter)


def _definition(text: str, pattern: re.Pattern[str], name: str, before: int) -> re.Match[str] | None:
    """The last definition of SSA value ``name`` before position ``before``."""
    found = None
    for m in pattern.finditer(text, 0, before):
        if m.group(1) == name:
            found = m
    return found


def _kernel_ops(module: Any) -> Iterator[tuple[str, Any]]:
    """(symbol, op) of each kernel function in ``module`` (their bodies are not walked)."""
    stack = [module.operation]
    while stack:
        for region in stack.pop().regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    if child.name in _KERNEL_OPS and "sym_name" in child.attributes:
                        yield _string(child.attributes["sym_name"]), child
                    else:
                        stack.append(child)


def launch_requests(module: Any) -> dict[str, int]:
    """The dynamic SMEM each kernel's launch states (``launch(smem=N)``), by kernel symbol.

    The DSL writes a stated size on the kernel as ``smem.config_smem_size``; a
    launch without one gets what the allocations need, so it is absent here.
    """
    out: dict[str, int] = {}
    for name, op in _kernel_ops(module):
        if _CONFIG_SMEM in op.attributes:
            out[name] = int(str(op.attributes[_CONFIG_SMEM]).split(":")[0])
    return out


def experimental_buffers(module: Any) -> dict[str, dict[str, int]]:
    """SMEM and TMEM buffers the experimental front end's ``cute_ext.allocate`` makes
    (``lir.allocate_buffer``), counted by memory, by kernel symbol."""
    out: dict[str, dict[str, int]] = {}
    for op in _ops(module.operation):
        if op.name != _EXPERIMENTAL_BUFFER:
            continue
        type_text = str(op.results[0].type)
        for memory in ("smem", "tmem"):
            if f", {memory}" in type_text:
                counts = out.setdefault(_kernel_of(op) or "?", {})
                counts[memory] = counts.get(memory, 0) + 1
    return out


def run_layout_pass(module: Any, expected: int) -> LayoutPassResult:
    """Run the DSL's SMEM layout pass on a copy of ``module``; read every alloca's offset
    and every launch's dynamic SMEM. ``expected`` is the number of allocas walked."""
    from cutlass._mlir import ir, passmanager

    marked, count = _marked_text(module)
    if count != expected:
        raise RuntimeError(f"found {count} allocas in the printed module but walked {expected}")
    with module.context:
        copy = ir.Module.parse(marked)  # type: ignore[attr-defined]
        passmanager.PassManager.parse(f"builtin.module({LAYOUT_PASS})").run(copy.operation)  # type: ignore[attr-defined]
        out = copy.operation.get_asm(enable_debug_info=True)
    aliases = {alias: int(k) for alias, k in _LOC_ALIAS.findall(out)}
    offsets: dict[int, int] = {}
    for value, loc in _ADD_OFFSET.findall(out):
        k = aliases.get(loc) if loc.startswith("#") else int(loc.strip('"')[len(_MARK) :])
        if k is not None and k not in offsets:
            offsets[k] = int(value)
    totals: dict[str, int] = {}
    constants = {m.group(1): int(m.group(2)) for m in _CONST.finditer(out)}
    for launch in _LAUNCH.finditer(out):
        kernel, cfg_name = launch.group(1), launch.group(2)
        cfg = _definition(out, _CFG, cfg_name, launch.start())
        if cfg is None:
            continue
        const = _definition(out, _CONST, cfg.group(2), cfg.start())
        value = int(const.group(2)) if const is not None else constants.get(cfg.group(2))
        if value is not None:
            totals.setdefault(kernel, value)
    return LayoutPassResult(offsets, totals)
