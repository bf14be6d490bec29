"""Sources: where layouts come from when they are not written against smemviz's allocator.

CUTLASS's own allocators (``plan_from_cutlass``), a ``@cute.struct``
(``plan_from_struct``), a declarative layout file (``load_layout``), MiniMalloc's
CSV files (``read_minimalloc``), a compiled kernel (``capture``), and the one rule
for what holds a layout (``as_plan`` / ``as_layouts``).
"""

from ._cutlass import plan_from_cutlass
from ._inputs import LayoutPair, as_layouts, as_plan
from ._minimalloc import MiniMallocFormatError, read_minimalloc
from ._struct import plan_from_struct
from .capture import Capture, CaptureError, capture
from .layout_file import LayoutFileError, load_layout

__all__ = [
    "plan_from_cutlass",
    "plan_from_struct",
    "load_layout",
    "LayoutFileError",
    "read_minimalloc",
    "MiniMallocFormatError",
    "capture",
    "Capture",
    "CaptureError",
    "as_plan",
    "as_layouts",
    "LayoutPair",
]
