"""Shared-memory layouts made by the CuTe DSL itself, read at trace time (a file, so the DSL can
compile it). Each call traces one jit function on the CPU and returns the layouts as printed."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.utils import hopper_helpers as sm90_utils

_SEEN: dict[str, str] = {}
_REQUEST: dict[str, object] = {}


@cute.jit
def _trace():
    c_dtype = _REQUEST["c_dtype"]
    epi = sm90_utils.make_smem_layout_epi(
        c_dtype, cutlass.tensor_utils.LayoutEnum.ROW_MAJOR, _REQUEST["epi_tile"], _REQUEST["epi_stages"]
    )
    _SEEN["epi"] = str(epi)
    from smemviz.analysis.banks import parse_cute_layout

    _SEEN["parsed_object"] = str(parse_cute_layout(cute.slice_(epi, (None, None, 0))))  # the DSL object itself
    kind = getattr(cute.nvgpu.warpgroup.SmemLayoutAtomKind, _REQUEST["atom_kind"])
    atom = cute.nvgpu.warpgroup.make_smem_layout_atom(kind, _REQUEST["atom_dtype"])
    _SEEN["advised"] = str(cute.tile_to_shape(atom, _REQUEST["atom_shape"], (0, 1)))


def dsl_layouts(c_dtype, epi_tile, epi_stages, atom_kind, atom_dtype, atom_shape) -> dict[str, str]:
    _REQUEST.update(
        c_dtype=c_dtype,
        epi_tile=epi_tile,
        epi_stages=epi_stages,
        atom_kind=atom_kind,
        atom_dtype=atom_dtype,
        atom_shape=atom_shape,
    )
    _SEEN.clear()
    _trace()
    return dict(_SEEN)
