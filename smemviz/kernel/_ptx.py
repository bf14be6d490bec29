"""What a compiled kernel's PTX says about where it reads and writes: shared-memory
byte offsets and tensor-memory column offsets, recovered by following registers back
to the dynamic SMEM array (``__dynamic_shmem__0``) and to the TMEM base address that
``tcgen05.alloc`` left in the TMEM-pointer slot.

Pure text analysis (no CuTe DSL): a register's value is a base (SMEM array, TMEM base or
none), the set of constant offsets it can carry (``selp`` chooses between two), and
whether a run-time term (a stage index, a warp's lanes) is added. Only a register's
first definition is followed, which is its value on entry to any loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Value", "PtxAddresses", "read_addresses", "PlanFact", "gemm_plan_facts"]

_R = r"%r\d+"
_IMM = r"-?\d+"


@dataclass(frozen=True)
class Value:
    """A register's value: ``base`` ("smem", "tmem" or None) + one of ``offsets`` (+ a run-time term)."""

    base: str | None
    offsets: frozenset[int]
    dynamic: bool = False

    def plus(self, other: Value) -> Value:
        if self.base is not None and other.base is not None:
            return _UNKNOWN
        sums = frozenset(a + b for a in self.offsets for b in other.offsets)
        return Value(self.base or other.base, sums, self.dynamic or other.dynamic)

    def shifted(self, imm: int) -> Value:
        return Value(self.base, frozenset(o + imm for o in self.offsets), self.dynamic)


_UNKNOWN = Value(None, frozenset({0}), dynamic=True)


def _const(*values: int) -> Value:
    return Value(None, frozenset(values))


@dataclass(frozen=True)
class PtxAddresses:
    """Offsets a kernel's PTX uses, by instruction kind. SMEM entries are byte offsets from the
    dynamic array's start; TMEM entries are column offsets from the allocated base."""

    mbarrier_inits: tuple[int, ...]
    tmem_slot: tuple[int, ...]  # SMEM offsets tcgen05.alloc writes the TMEM base to
    tmem_slot_reads: tuple[int, ...]  # SMEM offsets the TMEM base is read back from
    tcgen05_alloc_columns: tuple[int, ...]  # -1 where the count is not a constant
    tcgen05_dealloc_columns: tuple[int, ...]
    mma_accumulator_columns: frozenset[int]  # TMEM columns tcgen05.mma writes its D tile from
    epilogue_load_columns: frozenset[int]  # first TMEM columns tcgen05.ld reads from
    mma_descriptor_offsets: frozenset[int]  # SMEM start addresses encoded in UMMA descriptors
    tma_load_offsets: frozenset[int]  # SMEM destinations of TMA loads (stage 0)
    tma_store_offsets: frozenset[int]  # SMEM sources of TMA stores (buffer 0)
    unresolved: tuple[str, ...] = ()  # instructions whose address could not be followed

    def as_rows(self) -> list[tuple[str, str]]:
        """(fact, value) pairs for a table."""
        fmt = _fmt
        return [
            ("mbarrier.init at SMEM bytes", fmt(self.mbarrier_inits)),
            ("tcgen05.alloc writes the TMEM base to SMEM byte", fmt(self.tmem_slot)),
            ("TMEM base read back from SMEM byte", fmt(set(self.tmem_slot_reads))),
            ("tcgen05.alloc columns", fmt(self.tcgen05_alloc_columns)),
            ("tcgen05.dealloc columns", fmt(self.tcgen05_dealloc_columns)),
            ("tcgen05.mma accumulator at TMEM column", fmt(self.mma_accumulator_columns)),
            ("tcgen05.ld (epilogue) starts at TMEM column", fmt(self.epilogue_load_columns)),
            ("UMMA SMEM descriptors start at byte", fmt(self.mma_descriptor_offsets)),
            ("TMA loads write SMEM byte (stage 0)", fmt(self.tma_load_offsets)),
            ("TMA stores read SMEM byte (buffer 0)", fmt(self.tma_store_offsets)),
        ]


def _definitions(ptx: str, slots: frozenset[int] = frozenset()) -> tuple[dict[str, Value], list[int]]:
    """Each register's first value; a 32-bit load from a TMEM-pointer slot (``slots``)
    yields the TMEM base. Also returns the slot offsets such loads read."""
    values: dict[str, Value] = {}
    slot_reads: list[int] = []

    def get(reg: str) -> Value:
        return values.get(reg, _UNKNOWN)

    def define(reg: str, value: Value) -> None:
        values.setdefault(reg, value)  # the first definition: the value entering any loop

    for raw in ptx.splitlines():
        line = raw.strip()
        if m := re.match(rf"mov\.b32\s+({_R}), __dynamic_shmem__0;", line):
            define(m.group(1), Value("smem", frozenset({0})))
        elif m := re.match(rf"mov\.[bu]32\s+({_R}), ({_IMM});", line):
            define(m.group(1), _const(int(m.group(2))))
        elif m := re.match(rf"mov\.b32\s+({_R}), ({_R});", line):
            define(m.group(1), get(m.group(2)))
        elif m := re.match(rf"shfl\.sync\.idx\.b32\s+({_R}), ({_R}), 0, 31, -1;", line):
            define(m.group(1), get(m.group(2)))
        elif m := re.match(rf"add\.s32\s+({_R}), ({_R}), ({_IMM});", line):
            define(m.group(1), get(m.group(2)).shifted(int(m.group(3))))
        elif m := re.match(rf"add\.s32\s+({_R}), ({_R}), ({_R});", line):
            define(m.group(1), get(m.group(2)).plus(get(m.group(3))))
        elif m := re.match(rf"selp\.b32\s+({_R}), ({_IMM}), ({_IMM}), %p\d+;", line):
            define(m.group(1), _const(int(m.group(2)), int(m.group(3))))
        elif m := re.match(rf"ld\.shared\.b32\s+({_R}), \[({_R})(?:\+({_IMM}))?\];", line):
            addr = get(m.group(2)).shifted(int(m.group(3) or 0))
            if addr.base == "smem" and not addr.dynamic and addr.offsets <= slots:
                define(m.group(1), Value("tmem", frozenset({0})))
                slot_reads.extend(addr.offsets)
            else:
                define(m.group(1), _UNKNOWN)
        elif m := re.match(rf"[a-z]+(?:\.[a-z0-9]+)*\s+({_R}),", line):
            define(m.group(1), _UNKNOWN)
    return values, slot_reads


def _address(values: dict[str, Value], reg: str, imm: str | None) -> Value:
    return values.get(reg, _UNKNOWN).shifted(int(imm or 0))


def read_addresses(ptx: str) -> PtxAddresses:
    """Follow the addresses of ``ptx``'s mbarrier, tcgen05 and TMA instructions."""
    values, _ = _definitions(ptx)
    unresolved: list[str] = []

    def smem(reg: str, imm: str | None, what: str) -> frozenset[int]:
        v = _address(values, reg, imm)
        if v.base != "smem":
            unresolved.append(f"{what} [{reg}{'+' + imm if imm else ''}]")
            return frozenset()
        return v.offsets

    def tmem(reg: str, what: str) -> frozenset[int]:
        v = values.get(reg, _UNKNOWN)
        if v.base != "tmem":
            unresolved.append(f"{what} [{reg}]")
            return frozenset()
        return v.offsets

    inits = [
        o
        for reg, imm in re.findall(rf"mbarrier\.init\.shared\.b64\s+\[({_R})(?:\+(\d+))?\]", ptx)
        for o in smem(reg, imm, "mbarrier.init")
    ]
    slot = [
        o
        for reg, imm in re.findall(rf"tcgen05\.alloc\.[\w:.]+\s+\[({_R})(?:\+(\d+))?\]", ptx)
        for o in smem(reg, imm, "tcgen05.alloc")
    ]
    # second pass: loads from the slot now read as the TMEM base
    values, slot_reads = _definitions(ptx, frozenset(slot))

    def column_counts(pattern: str) -> tuple[int, ...]:
        counts = []
        for operand in re.findall(pattern, ptx):
            v = values.get(operand, _UNKNOWN) if operand.startswith("%") else _const(int(operand))
            counts.extend(sorted(v.offsets) if v.base is None and not v.dynamic else [-1])
        return tuple(counts)

    alloc_cols = column_counts(rf"tcgen05\.alloc\.[\w:.]+\s+\[[^\]]+\],\s*({_R}|\d+);")
    dealloc_cols = column_counts(rf"tcgen05\.dealloc\.[\w:.]+\s+{_R},\s*({_R}|\d+);")
    mma_cols = frozenset(
        o for reg in re.findall(rf"tcgen05\.mma\.[\w:.]+\s+\[({_R})\]", ptx) for o in tmem(reg, "tcgen05.mma")
    )
    ld_cols = frozenset(
        o
        for reg in re.findall(rf"tcgen05\.ld\.[\w:.]+\s+\{{[^}}]*\}},\s*\[({_R})\]", ptx)
        for o in tmem(reg, "tcgen05.ld")
    )
    # UMMA descriptors carry (SMEM address >> 4) in their low 14 bits
    shifted = dict(re.findall(rf"shr\.u32\s+({_R}), ({_R}), 4;", ptx))
    descriptors = frozenset(
        o
        for reg, src in re.findall(rf"and\.b32\s+({_R}), ({_R}), 163\d\d;", ptx)
        if src in shifted
        for o in smem(shifted[src], None, "UMMA descriptor")
    )
    loads = frozenset(
        o
        for reg, imm in re.findall(
            rf"cp\.async\.bulk\.tensor\.\dd\.shared::\w+\.global[\w:.]*\s+\[({_R})(?:\+(\d+))?\]", ptx
        )
        for o in smem(reg, imm, "TMA load")
    )
    stores = frozenset(
        o
        for reg, imm in re.findall(
            rf"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta[\w:.]*\s+\[[^\]]+\],\s*\[({_R})(?:\+(\d+))?\]", ptx
        )
        for o in smem(reg, imm, "TMA store")
    )
    return PtxAddresses(
        mbarrier_inits=tuple(sorted(inits)),
        tmem_slot=tuple(slot),
        tmem_slot_reads=tuple(slot_reads),
        tcgen05_alloc_columns=alloc_cols,
        tcgen05_dealloc_columns=dealloc_cols,
        mma_accumulator_columns=mma_cols,
        epilogue_load_columns=ld_cols,
        mma_descriptor_offsets=descriptors,
        tma_load_offsets=loads,
        tma_store_offsets=stores,
        unresolved=tuple(unresolved),
    )


@dataclass(frozen=True)
class PlanFact:
    """One thing the plan decides, what the PTX does, and whether they agree."""

    fact: str
    plan: str
    ptx: str

    @property
    def agrees(self) -> bool:
        return self.plan == self.ptx


def _fmt(values) -> str:
    return ", ".join(str(v) for v in sorted(values)) or "-"


def gemm_plan_facts(layout, ptx: str) -> list[PlanFact]:
    """The Blackwell GEMM's PTX read against its plans (a ``GemmLayout`` with TMEM):
    barriers, TMEM slot and columns, operand and C staging offsets."""
    if layout.tmem_ptr is None:
        raise ValueError(f"GEMM {layout.config.label()}: not a TMEM layout; these facts are Blackwell's")
    found = read_addresses(ptx)
    offsets = layout.offsets()
    barriers = [offsets["barriers"] + 8 * i for i in range(2 * layout.stages)]
    barriers += [offsets["acc_barriers"] + 8 * i for i in range(2 * layout.config.acc_stages)]
    columns = layout.tmem_plan.tmem_alloc_columns
    operands = {offsets["a"], offsets["b"]}
    return [
        PlanFact("mbarrier.init (SMEM bytes)", _fmt(barriers), _fmt(found.mbarrier_inits)),
        PlanFact("tcgen05.alloc writes the TMEM base to (SMEM byte)", str(offsets["tmem_ptr"]), _fmt(found.tmem_slot)),
        PlanFact("TMEM base read back from (SMEM byte)", str(offsets["tmem_ptr"]), _fmt(set(found.tmem_slot_reads))),
        PlanFact("tcgen05.alloc columns", str(columns), _fmt(found.tcgen05_alloc_columns)),
        PlanFact("tcgen05.dealloc columns", str(columns), _fmt(found.tcgen05_dealloc_columns)),
        PlanFact(
            "tcgen05.mma accumulators (TMEM columns)", _fmt(layout.acc_columns()), _fmt(found.mma_accumulator_columns)
        ),
        PlanFact(
            "tcgen05.ld epilogue reads (TMEM columns)", _fmt(layout.acc_columns()), _fmt(found.epilogue_load_columns)
        ),
        PlanFact("UMMA SMEM descriptors (A, B bytes)", _fmt(operands), _fmt(found.mma_descriptor_offsets)),
        PlanFact("TMA loads into (A, B bytes)", _fmt(operands), _fmt(found.tma_load_offsets)),
        PlanFact("TMA stores from (C staging byte)", str(offsets["c"]), _fmt(found.tma_store_offsets)),
        PlanFact("addresses not followed", "-", _fmt(found.unresolved)),
    ]
