"""Bank conflicts: how one warp's shared-memory access hits the 32 banks, as the H200 counts it.

``bank_conflicts(instruction, addresses)`` is the model (pure Python, calibrated
with Nsight Compute on an H200); ``analyze_access`` derives a CTA's accesses of a
plan region from its tile layout, swizzle and access atom; ``advise`` finds the
swizzle and alignment that remove the conflicts. The accesses a plan carries
(``plan.accesses``, declared with ``SmemAllocation(..., access=...)``) are analysed
by ``analyse_declared`` / ``analyse_plan``, and lint's ``bank-conflict`` rule reports them.
``wgmma_reads`` gives WGMMA's descriptor-driven operand reads (measured conflict-free in
every canonical layout).
"""

import warnings
from typing import Any

from ..._smem_instructions import INSTRUCTIONS, InstructionSpec, instruction_names
from ._access import (
    AnalysedAccess,
    access_from_dict,
    advise_declared,
    analyse_declared,
    analyse_plan,
    bank_findings,
)
from ._advice import Advice, advise
from ._captured import CapturedTotals, analyse_captured
from ._layout import SWIZZLE_ALIGNMENT, SWIZZLE_MODES, CuteLayout, Swizzle, parse_cute_layout, parse_swizzle
from ._model import BankConflicts, LaneWord, bank_conflicts
from ._patterns import (
    AccessAtom,
    AccessReport,
    analyze_access,
    cp_async_atom,
    ldmatrix_atom,
    stmatrix_atom,
    vector_atom,
)
from ._tables import StripSegment, bank_report_html, bank_report_text, bank_table, conflict_strip
from ._wgmma import WGMMA_LAYOUTS, WgmmaReads, wgmma_reads

__all__ = [
    "StripSegment",
    "bank_report_html",
    "bank_report_text",
    "bank_table",
    "conflict_strip",
    "AccessAtom",
    "AccessReport",
    "Advice",
    "AnalysedAccess",
    "CapturedTotals",
    "analyse_captured",
    "advise_declared",
    "analyse_plan",
    "analyse_declared",
    "BankConflicts",
    "INSTRUCTIONS",
    "InstructionSpec",
    "LaneWord",
    "CuteLayout",
    "SWIZZLE_ALIGNMENT",
    "SWIZZLE_MODES",
    "Swizzle",
    "access_from_dict",
    "advise",
    "analyze_access",
    "bank_conflicts",
    "bank_findings",
    "cp_async_atom",
    "instruction_names",
    "ldmatrix_atom",
    "parse_cute_layout",
    "parse_swizzle",
    "stmatrix_atom",
    "vector_atom",
    "WGMMA_LAYOUTS",
    "WgmmaReads",
    "wgmma_reads",
]


# renamed: old name -> (new name, why); each works for one release and warns
_RENAMED = {
    "Layout": ("CuteLayout", "a CuTe layout, not a memory layout"),
    "parse_layout": ("parse_cute_layout", "a layout file is read by smemviz.sources.layout_file.parse_layout_text"),
    "analyze_declared": ("analyse_declared", "one spelling beside analyse_plan"),
}


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        new, why = _RENAMED[name]
        warnings.warn(
            f"smemviz.analysis.banks.{name} is deprecated and will be removed in the next release; use {new} ({why})",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    if name == "AccessSpec":  # the record is the model's: smemviz.SmemAccess
        warnings.warn(
            "smemviz.analysis.banks.AccessSpec is deprecated and will be removed in the next release; "
            "use smemviz.SmemAccess (the same class)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ...layout._access import SmemAccess

        return SmemAccess
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
