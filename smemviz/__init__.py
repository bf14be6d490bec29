"""smemviz: see, check and tune the shared-memory and tensor-memory layouts of
CuTe DSL kernels.

The stable face, by the rooms the data flows through:

* the model (:mod:`smemviz.layout`): ``SmemAllocation``, ``TmemAllocation``,
  ``SmemAllocator``, ``TmemAllocator`` and the frozen ``LayoutPlan`` of ``Region``s
  they compute, with ``CapacityCheck`` and the errors;
* sources (:mod:`smemviz.sources`): ``plan_from_cutlass``, ``plan_from_struct``,
  ``load_layout``, ``read_minimalloc`` (MiniMalloc's CSV files), and ``as_plan`` /
  ``as_layouts``, the one rule for what holds a layout;
* analyses (:mod:`smemviz.analysis`): functions of a plan (``lint``, ``occupancy``,
  ``diff``, reports) and bank conflicts (``bank_conflicts`` for one warp's access as
  the H200 counts it, ``analyze_access`` for a region's tile, ``advise`` for the fix);
* views: ``smem_figure``, ``tmem_figure``, ``bank_conflict_figure``, ``explore``, ``export``;
* the kernel bridge (:mod:`smemviz.kernel`): ``probe`` and the compile helpers.

Experimental names (their signatures may still change) are gathered in
:mod:`smemviz.experimental`: the lifetime solver's extras (``groups_to_lifetimes``,
``compare_layouts``, ``lifetime_figure``, ``compare_figure``), ``max_fit``, and
``capture`` (any CuTe DSL kernel's memory as compiled); they are importable from
here too.

The core needs nothing beyond Python. Figures (plotly), the notebook explorer
(ipywidgets), exports (kaleido) and the kernel bridge (CuTe DSL) load on first
use, and name the extra to install when they are missing.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import analysis, experimental, hardware, layout, sources
from ._errors import CapacityError, DeclarationError, DeclarationTypeError, DslUnavailableError, LayoutStateError
from ._optional import extra_for
from ._version import __version__
from .analysis._lint import Finding, Findings
from .analysis._max_fit import MaxFit, max_fit
from .analysis._occupancy import Occupancy, occupancy
from .analysis.banks import AccessReport, Advice, BankConflicts, advise, analyze_access, bank_conflicts
from .hardware import get_arch
from .layout._access import SmemAccess
from .layout._allocation import ResourceContext, SmemAllocation, TmemAllocation
from .layout._allocator import SmemAllocator, TmemAllocator, compare_layouts, groups_to_lifetimes
from .layout._plan import AliasGroup, CapacityCheck, LayoutPlan, Region
from .sources._cutlass import plan_from_cutlass
from .sources._inputs import LayoutPair, as_layouts, as_plan
from .sources._minimalloc import MiniMallocFormatError, read_minimalloc
from .sources._struct import plan_from_struct
from .sources.capture import Capture, CaptureError, capture

# public name -> module that defines it; imported on first access
_LAZY: dict[str, str] = {
    # figures (plotly)
    "smem_figure": "smemviz.figures",
    "tmem_figure": "smemviz.figures",
    "bank_figure": "smemviz.figures",
    "bank_conflict_figure": "smemviz.figures",
    "conflict_strip_figure": "smemviz.figures",
    "lifetime_figure": "smemviz.figures",
    "step_figure": "smemviz.figures",
    "compare_figure": "smemviz.figures",
    # notebook explorer (ipywidgets + plotly)
    "explore": "smemviz.explorer",
    "Explorer": "smemviz.explorer",
    # exports, layout files
    "export": "smemviz._export",
    "EXPORT_FORMATS": "smemviz._export",
    "read_plans": "smemviz._export",
    "BrowserNotFoundError": "smemviz._export",
    "ExportTimeoutError": "smemviz._export",
    "find_browser": "smemviz._export",
    "start_renderer": "smemviz._export",
    "stop_renderer": "smemviz._export",
    "load_layout": "smemviz.sources.layout_file",
    # kernel bridge (CuTe DSL)
    "probe": "smemviz.kernel",
    "ProbeResult": "smemviz.kernel",
}

__all__ = [
    "SmemAllocation",
    "SmemAccess",
    "TmemAllocation",
    "ResourceContext",
    "SmemAllocator",
    "TmemAllocator",
    "groups_to_lifetimes",
    "compare_layouts",
    "LayoutPlan",
    "Region",
    "AliasGroup",
    "CapacityCheck",
    "CapacityError",
    "LayoutStateError",
    "DslUnavailableError",
    "DeclarationError",
    "DeclarationTypeError",
    "plan_from_cutlass",
    "plan_from_struct",
    "read_minimalloc",
    "MiniMallocFormatError",
    "capture",
    "Capture",
    "CaptureError",
    "as_plan",
    "Finding",
    "Findings",
    "bank_conflicts",
    "BankConflicts",
    "analyze_access",
    "AccessReport",
    "advise",
    "Advice",
    "Occupancy",
    "occupancy",
    "as_layouts",
    "LayoutPair",
    "get_arch",
    "max_fit",
    "MaxFit",
    "hardware",
    "layout",
    "sources",
    "analysis",
    "experimental",
    "__version__",
]  # the lazy names stay out of __all__, so ``import *`` never needs the extras


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'smemviz' has no attribute {name!r}")
    try:
        imported = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"smemviz.{name} needs {exc.name or 'a missing package'}: pip install 'smemviz[{extra_for(exc.name or '')}]'",
            name=exc.name,
        ) from exc
    value = getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
