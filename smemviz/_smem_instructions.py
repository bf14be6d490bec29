"""The shared-memory instructions the bank model knows, and how the H200 serves each.

Every rule here was read off Nsight Compute's counters on an H200 (1,182 probe
cases in ``results/bank_calibration.csv``), not taken from a textbook:

- The warp's lanes are served in *phases*: the whole warp for accesses of at most
  4 bytes per lane, half-warps for 8 bytes, quarter-warps for 16 bytes, one phase
  per 8x8 matrix for ldmatrix/stmatrix (its 8 row addresses), quarter-warps for
  cp.async.ca.16.
- A phase takes as many wavefronts as the most distinct 4-byte words any one bank
  holds for it (at least one). Lanes reading the same word share it (broadcast);
  stores to one word too (one write wins). cp.async does not merge: every lane's
  word is its own write, so lanes writing the same word serialise.
- Loads of 8 and 16 bytes can serve two phases (the two half-warps of an 8-byte
  load; the two quarter-warps of each half-warp of a 16-byte load) in one wavefront
  when together they need only one, and the lanes come in matching pairs: every
  lane reads what lane ``i ^ 1`` reads, or every lane what lane ``i ^ 2`` reads.
  Stores never merge phases.
- That is ncu's per-instruction wavefront count. The L1TEX unit's own counter merges
  only when every lane of the warp pairs up, and then serves each unit as one phase
  whatever its conflicts; ncu's conflict counter is the L1TEX's wavefronts less the
  phases it serves. For cp.async it is wavefronts minus the warp's bytes over 128.
- cp.async.ca.16 lanes writing one word serialise within their quarter-warp (all 79
  recorded cases, overlaps included). cp.async.ca.4 fits no rule tried: 368 patterns
  with 32 distinct destination words (``results/bank_calibration_cpasync4.csv``) took
  up to 21 wavefronts fewer or 3 more than the quarter-warp rule, and overlapping
  writes fit none either; 8-byte cp.async missed one case by a wavefront. Both are
  refused rather than guessed.

They are hardware facts (sm_90's), kept on the base floor beside
:mod:`smemviz.hardware`: the model room reads the table to refuse an unknown
instruction when an access is declared, and the bank analysis reads it to
serve one; this is the table's one home.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import hardware
from ._limits import shorten

__all__ = ["InstructionSpec", "INSTRUCTIONS", "lookup", "instruction_names", "canonical_instruction", "UNCALIBRATED"]

WARP = hardware.WARP_THREADS
WORD = hardware.SMEM_BANK_BYTES  # bytes per bank word
MATRIX_ROW_BYTES = hardware.MATRIX_ROW_BYTES


@dataclass(frozen=True)
class InstructionSpec:
    """How one instruction's warp access is served: its phases and their merging."""

    name: str  # canonical spelling
    kind: str  # "ld", "st", "ldmatrix", "stmatrix", "cp.async"
    width: int  # bytes one lane's address covers (a matrix row: 16)
    lanes: int  # lanes whose address the instruction reads (32, or 8 per matrix)
    phase_lanes: int  # lanes served together in one phase
    merge_lanes: int  # lanes of a unit whose two phases may share a wavefront (0: never)
    words_merge: bool  # lanes on the same word share it (False: cp.async serialises them)

    @property
    def alignment(self) -> int:
        """Byte alignment every address needs (the access width; a matrix row's 16 B)."""
        return self.width

    @property
    def phases(self) -> int:
        return self.lanes // self.phase_lanes

    @property
    def bytes_per_warp(self) -> int:
        return self.lanes * self.width


def _ld_st(kind: str, width: int) -> tuple[int, int]:
    phase = WARP if width <= WORD else 128 // width
    merge = 2 * phase if kind == "ld" and width > WORD else 0
    return phase, merge


def _build() -> dict[str, InstructionSpec]:
    table: dict[str, InstructionSpec] = {}
    for kind in ("ld", "st"):
        for width, suffixes in (
            (1, ("b8", "u8", "s8")),
            (2, ("b16", "u16", "s16", "f16")),
            (4, ("b32", "u32", "s32", "f32")),
            (8, ("b64", "u64", "s64", "f64")),
            (8, ("v2.b32", "v2.u32", "v2.s32", "v2.f32")),
            (16, ("v4.b32", "v4.u32", "v4.s32", "v4.f32")),
        ):
            phase, merge = _ld_st(kind, width)
            canonical = f"{kind}.shared.{suffixes[0]}"
            spec = InstructionSpec(canonical, kind, width, WARP, phase, merge, True)
            for s in suffixes:
                table[f"{kind}.shared.{s}"] = spec
    for kind in ("ldmatrix", "stmatrix"):
        for n in (1, 2, 4):
            for trans in ("", ".trans"):
                canonical = f"{kind}.x{n}{trans}"
                spec = InstructionSpec(canonical, kind, MATRIX_ROW_BYTES, 8 * n, 8, 0, True)
                table[canonical] = spec
                table[f"{kind}.sync.aligned.m8n8.x{n}{trans}.shared.b16"] = spec
    spec = InstructionSpec("cp.async.ca.16", "cp.async", 16, WARP, 8, 0, False)
    table[spec.name] = spec
    table["cp.async.ca.shared.global.16"] = spec
    return table


INSTRUCTIONS: dict[str, InstructionSpec] = _build()

# spellings that exist but whose counters did not calibrate: refused with the reason
UNCALIBRATED = {
    "cp.async.cg.16": "its ncu counters on the H200 do not describe bank traffic (the per-instruction "
    "wavefront counter reads 32 for conflict-free patterns and 1 for a broadcast, the "
    "conflict counters 0); see docs/bank-conflicts.md",
    "cp.async.cg.shared.global.16": "see cp.async.cg.16",
    "cp.async.ca.8": "one of its 12 recorded cases without overlapping destinations took a wavefront "
    "more on the H200 than the quarter-warp rule that fits cp.async.ca.16; "
    "see docs/bank-conflicts.md",
    "cp.async.ca.shared.global.8": "see cp.async.ca.8",
    "cp.async.ca.4": "its wavefronts on the H200 fit no rule tried: of 368 recorded patterns with 32 "
    "distinct destination words, 195 differ from the quarter-warp rule that fits cp.async.ca.16 "
    "(results/bank_calibration_cpasync4.md); see docs/bank-conflicts.md",
    "cp.async.ca.shared.global.4": "see cp.async.ca.4",
}


def instruction_names() -> tuple[str, ...]:
    """The canonical spellings, in a stable order."""
    seen: dict[str, None] = {}
    for spec in INSTRUCTIONS.values():
        seen.setdefault(spec.name, None)
    return tuple(seen)


def lookup(instruction: object) -> InstructionSpec:
    """The spec of a PTX spelling; TypeError for a non-string, ValueError for an unknown name."""
    if not isinstance(instruction, str):
        raise TypeError(
            f"instruction must be a PTX spelling such as 'ld.shared.v4.b32', "
            f"not {type(instruction).__name__} {shorten(instruction)}"
        )
    key = instruction.strip().lower()
    spec = INSTRUCTIONS.get(key)
    if spec is not None:
        return spec
    if key in UNCALIBRATED:
        raise ValueError(f"instruction {shorten(instruction)} is not modelled: {UNCALIBRATED[key]}")
    raise ValueError(f"unknown instruction {shorten(instruction)}; known: {', '.join(instruction_names())}")


def canonical_instruction(instruction: str) -> str | None:
    """The short spelling of ``instruction`` (``"stmatrix.x4"``), ``None`` when the table lacks it."""
    spec = INSTRUCTIONS.get(instruction.strip().lower())
    return spec.name if spec is not None else None
