"""Layout files: SMEM and TMEM layouts declared in TOML or JSON, next to kernels.

A layout file holds the same declarations a kernel makes in Python, so the
layout can be reviewed, rendered and checked in CI without running the
kernel. TOML and JSON files share one schema; sizes are bytes, TMEM spans
are columns::

    version = 1              # optional: the schema version (1)
    name = "gemm_sm100"      # optional: a title for reports and diagrams
    arch = "sm_100a"         # optional: default architecture for checks
    tmem_ptr = "tmem_slot"   # optional: the [[smem]] entry tcgen05.alloc writes to
    steps = ["load", "mma", "epilogue"]  # optional: program steps, for live below

    [[smem]]                 # one SMEM allocation per entry
    name = "smem_a"          # required, unique among [[smem]] entries
    dtype = "bf16"           # optional element type ("bf16", "f8e4m3", "f4e2m1", ...)
    count = 32768            # optional element count (default 1)
    size = 65536             # bytes; optional when dtype is given
    align = 1024             # power of two (default 128, what TMA needs)
    live = ["load", "mma"]   # optional: the steps it is live in (a name, a number
                             # or a list); entries live in no common step may
                             # share bytes, and the layout is solved smallest

    [[pipeline]]             # a pipeline that owns its mbarriers
    name = "load"
    stages = 4               # 16 B of mbarriers (full + empty) per stage

    [[pipeline_group]]       # pipelines that share one set of barriers
    name = "mma"
    stages = 2
    members = 2              # N members: (N + 1) x stages barrier pairs
                             # (or barriers_per_stage = N + 1)

    [[smem_alias]]           # phases that reuse one region in turn
    phases = [["smem_a", "smem_b"], ["epi_c"]]

    [[tmem]]
    name = "acc"
    columns = 256

    [[tmem_alias]]
    phases = [["acc0"], ["acc1"]]

In TOML the top-level keys (``arch``, ``tmem_ptr`` ...) come before the first
``[[table]]``. Unknown keys, wrong types, duplicate names and values the core
allocators refuse are reported as :class:`LayoutFileError` with the file, the
line and column where they can be found, and the key path (``smem[2].align``).
Names and other strings must be printable text; integers fit in 64 bits, as
TOML requires; nothing nests deeper than the schema could use.

The package is split by concern: ``_schema`` (the declarations and the
:class:`LayoutSpec` they make), ``_read`` (bytes to parsed data, syntax
errors), ``_locate`` (key path to line and column), ``_validate`` (parsed data
checked against the schema and the core allocators' own rules).
"""

from __future__ import annotations

import warnings
from typing import Any

from ._error import LayoutFileError
from ._read import load_layout, parse_layout_text
from ._schema import SCHEMA_VERSION, LayoutSpec, PipelineEntry, PipelineGroupEntry, SmemEntry, TmemEntry

__all__ = [
    "LayoutFileError",
    "LayoutSpec",
    "SmemEntry",
    "TmemEntry",
    "PipelineEntry",
    "PipelineGroupEntry",
    "load_layout",
    "parse_layout_text",
    "SCHEMA_VERSION",
]


def __getattr__(name: str) -> Any:
    if name == "parse_layout":  # renamed: "layout" alone also names a CuTe layout and a memory layout
        warnings.warn(
            "smemviz.sources.layout_file.parse_layout is deprecated and will be removed in the next release; "
            "use parse_layout_text (a CuTe layout is read by smemviz.analysis.banks.parse_cute_layout)",
            DeprecationWarning,
            stacklevel=2,
        )
        return parse_layout_text
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
