"""smemviz: see, check and tune the shared-memory and tensor-memory layouts of
CuTe DSL kernels.

The stable face, by the rooms the data flows through:

* the model (:mod:`smemviz.layout`): ``SmemAllocation``, ``SmemAccess``,
  ``TmemAllocation``, ``SmemAllocator``, ``TmemAllocator`` and the frozen
  ``LayoutPlan`` of ``Region``s they compute, with ``CapacityCheck`` and the errors;
* sources (:mod:`smemviz.sources`): ``plan_from_cutlass``, ``plan_from_struct``,
  ``load_layout``, ``read_minimalloc`` (MiniMalloc's CSV files), ``capture`` (any CuTe
  DSL kernel's memory as compiled), and ``as_plan`` / ``as_layouts``, the one rule for
  what holds a layout;
* analyses (:mod:`smemviz.analysis`): functions of a plan (``analyse`` for everything a
  view shows, computed once; ``lint``, ``occupancy``), bank conflicts (``bank_conflicts``
  for one warp's access as the H200 counts it, ``analyze_access`` for a region's tile,
  ``advise`` for the fix; their result types in :mod:`smemviz.analysis.banks`),
  ``check_tma_descriptor`` (a TMA descriptor as the driver will judge it) and ``read_ncu``
  (Nsight Compute's shared-memory counters of a launch on a captured kernel's map);
* views: ``smem_figure``, ``tmem_figure``, ``bank_conflict_figure``, ``explore``,
  ``export`` (the other figures are in :mod:`smemviz.figures`);
* the kernel bridge (:mod:`smemviz.kernel`): ``probe`` and the compile helpers.

Experimental names (their signatures may still change) live in
:mod:`smemviz.experimental`: the lifetime solver's extras (``groups_to_lifetimes``,
``compare_layouts``, ``lifetime_figure``, ``compare_figure``) and ``max_fit``. Names
the face offered before it was trimmed still work from here for one release, with a
``DeprecationWarning`` that says where they live now.

The core needs nothing beyond Python. Figures (plotly), the notebook explorer
(ipywidgets), exports (kaleido) and the kernel bridge (CuTe DSL) load on first
use, and name the extra to install when they are missing.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from . import analysis, device, experimental, hardware, layout, sources
from ._errors import CapacityError, DeclarationError, DeclarationTypeError, DslUnavailableError, LayoutStateError
from ._optional import extra_for
from ._version import __version__
from .analysis._analysed import analyse
from .analysis._finding import Finding, Findings
from .analysis._lint import lint
from .analysis._occupancy import Occupancy, occupancy
from .analysis.banks import advise, analyze_access, bank_conflicts
from .analysis.ncu import read_ncu
from .analysis.tma import check_tma_descriptor
from .hardware import get_arch
from .layout._access import SmemAccess
from .layout._allocation import ResourceContext, SmemAllocation, TmemAllocation
from .layout._allocator import SmemAllocator, TmemAllocator
from .layout._plan import AliasGroup, CapacityCheck, LayoutPlan, Region
from .sources._cutlass import plan_from_cutlass
from .sources._inputs import as_layouts, as_plan
from .sources._minimalloc import read_minimalloc
from .sources._struct import plan_from_struct
from .sources.capture import capture

# public name -> module that defines it; imported on first access
_LAZY: dict[str, str] = {
    # figures (plotly)
    "smem_figure": "smemviz.figures",
    "tmem_figure": "smemviz.figures",
    "bank_conflict_figure": "smemviz.figures",
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

# names the face offered before it was trimmed: old name -> (home module, where to import it from now);
# each still works for one release and warns
_DEPRECATED: dict[str, tuple[str, str]] = {
    # experimental: only in smemviz.experimental
    "groups_to_lifetimes": ("smemviz.experimental", "smemviz.experimental"),
    "compare_layouts": ("smemviz.experimental", "smemviz.experimental"),
    "max_fit": ("smemviz.experimental", "smemviz.experimental"),
    "MaxFit": ("smemviz.experimental", "smemviz.experimental"),
    "lifetime_figure": ("smemviz.experimental", "smemviz.experimental"),
    "compare_figure": ("smemviz.experimental", "smemviz.experimental"),
    # result types: reached through their room
    "Capture": ("smemviz.sources", "smemviz.sources"),
    "CaptureError": ("smemviz.sources", "smemviz.sources"),
    "LayoutPair": ("smemviz.sources", "smemviz.sources"),
    "MiniMallocFormatError": ("smemviz.sources", "smemviz.sources"),
    "BankConflicts": ("smemviz.analysis.banks", "smemviz.analysis.banks"),
    "AccessReport": ("smemviz.analysis.banks", "smemviz.analysis.banks"),
    "Advice": ("smemviz.analysis.banks", "smemviz.analysis.banks"),
    # figures beyond the three maps: in smemviz.figures
    "bank_figure": ("smemviz.figures._bank", "nowhere: bank_conflict_figure and the Banks tab replace it"),
    "conflict_strip_figure": ("smemviz.figures", "smemviz.figures"),
    "step_figure": ("smemviz.figures", "smemviz.figures"),
}

__all__ = [
    # the model
    "SmemAllocation",
    "SmemAccess",
    "TmemAllocation",
    "ResourceContext",
    "SmemAllocator",
    "TmemAllocator",
    "LayoutPlan",
    "Region",
    "AliasGroup",
    "CapacityCheck",
    "CapacityError",
    "LayoutStateError",
    "DslUnavailableError",
    "DeclarationError",
    "DeclarationTypeError",
    # sources
    "plan_from_cutlass",
    "plan_from_struct",
    "read_minimalloc",
    "capture",
    "as_plan",
    "as_layouts",
    # analyses
    "analyse",
    "lint",
    "occupancy",
    "Occupancy",
    "Finding",
    "Findings",
    "bank_conflicts",
    "analyze_access",
    "advise",
    "check_tma_descriptor",
    "read_ncu",
    "get_arch",
    # rooms
    "hardware",
    "device",
    "layout",
    "sources",
    "analysis",
    "experimental",
    "__version__",
]  # the lazy names stay out of __all__, so ``import *`` never needs the extras


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        home, where = _DEPRECATED[name]
        warnings.warn(
            f"smemviz.{name} is deprecated and will be removed from the package's face in the next release; "
            f"import it from {where}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'smemviz' has no attribute {name!r}")
    try:  # a room may load its own heavy part on first access too
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"smemviz.{name} needs {exc.name or 'a missing package'}: pip install 'smemviz[{extra_for(exc.name or '')}]'",
            name=exc.name,
        ) from exc
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
