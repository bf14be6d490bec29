"""The smemviz GEMM's epilogue: its C staging buffer at its real plan offset, with the layout the
CuTe DSL builds for it (traced on the CPU), stored by the warps' stmatrix.x4; and the advice's DSL
line, run through the DSL, gives the conflict-free layout the advice promised."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytest.importorskip("cutlass.cute")

from smemviz.analysis.banks import advise, analyze_access, parse_cute_layout, stmatrix_atom  # noqa: E402
from smemviz.kernel.gemm import GemmConfig, gemm_layout  # noqa: E402

pytestmark = pytest.mark.cutlass


def test_gemm_epilogue_from_the_dsl_layout():
    import cutlass

    from .dsl_layouts import dsl_layouts

    cfg = GemmConfig(dtype="bf16")
    plan = gemm_layout(cfg).plan
    region = plan.region("gemm.c_staging")
    seen = dsl_layouts(cutlass.BFloat16, cfg.epi_tile, cfg.epi_stages, "K_SW64", cutlass.BFloat16, cfg.epi_tile)
    epi = parse_cute_layout(seen["epi"])
    assert seen["epi"].startswith("S<2,4,3>")  # 32 bf16 columns: 64-byte rows, the 64B mode
    # notebook 06 shows this text as recorded, so that it runs without the DSL
    assert seen["epi"] == "S<2,4,3> o 0 o ((8,16),(32,1),(1,2)):((32,256),(1,0),(0,4096))"
    assert epi.modes == 3 and epi.extent(2) == cfg.epi_stages
    # a DSL layout object (one stage of it, sliced in the DSL) is read as well as its text
    assert seen["parsed_object"] == "S<2,4,3> o 0 o ((8,16),(32,1)):((32,256),(1,0))"
    atom = stmatrix_atom(4)
    warps = (8, 1)  # two consumer warpgroups, each warp 16 rows of the 128-row epilogue tile
    for stage in range(cfg.epi_stages):
        rep = analyze_access(plan, "gemm.c_staging", atom, layout=epi, dtype="bf16", warps=warps, stage=stage)
        assert rep.conflict_free, rep.summary()
        assert rep.instructions == 16 and rep.base == region.offset
        assert all(region.offset <= a < region.end for a in rep.worst.addresses if a is not None)
    plain = f"({cfg.epi_tile[0]},{cfg.epi_tile[1]}):({cfg.epi_tile[1]},1)"
    bad = analyze_access(plan, "gemm.c_staging", atom, layout=plain, dtype="bf16", warps=warps, swizzle=None)
    assert bad.n_way == 4 and bad.wavefronts == 4 * bad.ideal
    adv = advise(plan, "gemm.c_staging", atom, layout=plain, dtype="bf16", warps=warps, swizzle=None)
    assert adv.fixes and adv.swizzle == "64B" and adv.alignment == 512
    assert "SmemLayoutAtomKind.K_SW64, cutlass.BFloat16), (128, 32)" in adv.dsl_line
    advised = parse_cute_layout(seen["advised"])  # what the advice's line builds in the DSL
    rep = analyze_access(plan, "gemm.c_staging", atom, layout=advised, dtype="bf16", warps=warps)
    assert rep.conflict_free and rep.wavefronts == adv.best.wavefronts
