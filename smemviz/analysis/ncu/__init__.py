"""Nsight Compute's shared-memory counters on smemviz's map of a captured kernel.

``read_ncu(report, plan)`` reads ncu's source page (``ncu --page source --csv --print-source
cuda,sass``, or an ``.ncu-rep`` through ``ncu_report``), attributes every shared-memory SASS row
to the access capture recorded for it (by call site, by address, or by the one access that issues
that instruction), and puts ncu's instructions, wavefronts, ideal and excessive wavefronts beside
what the bank model predicts, per row, per access and per region (docs/ncu.md); ``measured_segments`` is what the byte map, the
explorer and the reports draw of it (``analyse(plan, measured=...)``).
"""

from ._attribute import NcuAttribution, NcuRow, NcuTotals, attribute, read_ncu
from ._overlay import MeasuredSegment, measured_segments
from ._report import NcuSource, SassRow, read_ncu_rep, read_report, read_source_csv

__all__ = [
    "read_ncu",
    "attribute",
    "NcuAttribution",
    "NcuRow",
    "NcuTotals",
    "MeasuredSegment",
    "measured_segments",
    "NcuSource",
    "SassRow",
    "read_source_csv",
    "read_ncu_rep",
    "read_report",
]
