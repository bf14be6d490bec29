"""The GEMM's swizzle experiments on the CPU: the layout the plan states for C staging is the
one the kernel builds (traced through the CuTe DSL), every mode compiles for sm_90a, and the
bank model's predictions for the epilogue (recorded against the H200 in results/bank_gemm_h200.md)."""

from __future__ import annotations

import pytest

from smemviz.kernel.gemm import GemmConfig, GemmProblem

C_MODES = ("auto", "none", "interleaved", "32B", "64B")
AB_MODES = ("auto", "interleaved", "32B", "64B", "128B")


def _swizzle_prefix(mode):
    bits = {None: 0, "32B": 1, "64B": 2, "128B": 3}[mode]
    return f"S<{bits},4,3> o 0 o "


@pytest.mark.cutlass
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f8e4m3"])
@pytest.mark.parametrize("mode", C_MODES)
def test_the_plans_c_staging_layout_is_the_kernels(mode, dtype):
    pytest.importorskip("cutlass.cute")
    from .dsl_staged import staged_layouts

    config = GemmConfig(dtype=dtype, c_swizzle=mode)
    seen = staged_layouts(config)
    assert seen["c"] == _swizzle_prefix(config.c_swizzle_mode) + config.c_staging_layout


@pytest.mark.cutlass
@pytest.mark.parametrize("dtype", ["bf16", "f8e4m3"])
@pytest.mark.parametrize("mode", AB_MODES)
def test_operand_modes_are_the_dsl_atoms(mode, dtype):
    pytest.importorskip("cutlass.cute")
    from .dsl_staged import staged_layouts

    config = GemmConfig(dtype=dtype, ab_swizzle=mode)
    seen = staged_layouts(config)
    for role in ("a", "b"):
        assert seen[role].startswith(_swizzle_prefix(config.ab_swizzle_mode)), seen[role]
    if mode == "auto":  # the DSL's own pick for 128-byte K rows
        assert config.ab_atom == "128B"


@pytest.mark.cutlass
@pytest.mark.parametrize(
    "config",
    [GemmConfig(dtype="bf16", c_swizzle=m) for m in C_MODES]
    + [GemmConfig(dtype="f8e4m3", tile_n=128, cluster_m=2, ab_swizzle=m, c_swizzle="none") for m in AB_MODES],
    ids=lambda c: c.label().replace(" ", "-"),
)
def test_every_mode_compiles_for_hopper(config):
    pytest.importorskip("cutlass.cute")
    from smemviz.kernel.gemm._host import compile_gemm

    compiled = compile_gemm(config)
    assert compiled.dynamic_smem_bytes >= config.c_staging_bytes


def test_epilogue_predictions():
    from smemviz.kernel.gemm import predict_epilogue

    problem = GemmProblem(1024, 1024, 1024)
    # 32 CTAs x 8 sub-tiles x 8 warps x 2 stmatrix.x4, 4 wavefronts each when conflict-free
    for mode in ("auto", "interleaved", "32B", "64B"):
        p = predict_epilogue(GemmConfig(dtype="bf16", c_swizzle=mode), problem)
        assert (p.instructions, p.wavefronts, p.conflicts) == (4096, 16384, 0), mode
    plain = predict_epilogue(GemmConfig(dtype="bf16", c_swizzle="none"), problem)
    assert (plain.instructions, plain.wavefronts, plain.conflicts) == (4096, 65536, 49152)  # 4-way


def test_swizzle_modes_are_checked_by_name():
    with pytest.raises(ValueError, match="c_swizzle='128B'.*64 B"):
        GemmConfig(c_swizzle="128B")
    with pytest.raises(ValueError, match="ab_swizzle='none'.*interleaved"):
        GemmConfig(ab_swizzle="none")
    with pytest.raises(ValueError, match="one of"):
        GemmConfig(c_swizzle="16B")
    with pytest.raises(ValueError, match="sm_90a"):
        GemmConfig(c_swizzle="none", arch="sm_100a")
    assert GemmConfig(c_swizzle="none").label().endswith(" c:none")
    assert GemmConfig().label() == GemmConfig(ab_swizzle="auto", c_swizzle="auto").label()


@pytest.mark.cutlass
@pytest.mark.filterwarnings("ignore:This static loop")  # 256 threads, unrolled at trace time on purpose
@pytest.mark.parametrize("mode", C_MODES)
def test_the_kernels_tiled_copy_issues_the_predicted_stores(mode):
    # the epilogue's lane addresses, read from the kernel's own TiledCopy, through the bank model,
    # give exactly the per-stage totals predicted from the plan's access (stmatrix.x4, warps (8, 1))
    pytest.importorskip("cutlass.cute")
    from smemviz.analysis.banks import bank_conflicts, parse_cute_layout, parse_swizzle, stmatrix_atom
    from smemviz.kernel.gemm import epilogue_reports, gemm_layout

    from .dsl_epilogue_lanes import epilogue_lane_rows

    config = GemmConfig(dtype="bf16", c_swizzle=mode)
    lanes = epilogue_lane_rows(config)
    copies = sorted({(i, j) for _, i, j in lanes})
    region = gemm_layout(config).plan.region("gemm.c_staging")
    layout = parse_cute_layout(config.c_staging_layout)
    swizzle = parse_swizzle(config.c_swizzle_mode)
    atom = stmatrix_atom(4)
    for stage, predicted in enumerate(epilogue_reports(config)):
        wavefronts = conflicts = instructions = 0
        for warp in range(8):
            for i, j in copies:
                coords = [lanes[(32 * warp + lane, i, j)] for lane in range(32)]
                # each instruction is one 16x16 atom tile, its lanes in the model's order, warp w on rows 16w..
                top, left = coords[0]
                assert [(r - top, c - left) for r, c in coords] == list(atom.lane_coords)
                assert 16 * warp <= top < 16 * (warp + 1)
                addresses = [region.offset + 2 * layout(r, c, stage) for r, c in coords]
                if swizzle is not None:
                    addresses = [swizzle(a) for a in addresses]
                got = bank_conflicts("stmatrix.x4", addresses)
                wavefronts += got.wavefronts
                conflicts += got.conflicts
                instructions += 1
        assert (instructions, wavefronts, conflicts) == (
            predicted.instructions,
            predicted.wavefronts,
            predicted.conflicts,
        )


@pytest.mark.cutlass
@pytest.mark.parametrize(
    "config",
    [GemmConfig(dtype="bf16"), GemmConfig(dtype="f16", tile_n=128), GemmConfig(dtype="f8e4m3", tile_n=128)],
    ids=lambda c: c.label().replace(" ", "-"),
)
def test_the_compiled_kernel_issues_the_modelled_instructions(config):
    # the prediction's WGMMA shape and counts, and the epilogue's stmatrix.x4, are what the PTX holds
    import re

    pytest.importorskip("cutlass.cute")
    from smemviz.analysis.banks import wgmma_reads
    from smemviz.kernel.gemm import epilogue_reports
    from smemviz.kernel.gemm._host import compile_gemm

    ptx = compile_gemm(config).ptx
    m, n, k = wgmma_reads(config.tile_n, config.dtype).shape
    wgmma = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)
    k_steps = config.tile_k * config.elem_bytes // 32
    # the first k-tile's steps, peeled, and the loop body's: one instruction per 32-byte K step
    assert wgmma == [f"m{m}n{n}k{k}"] * (2 * k_steps)
    stores = re.findall(r"stmatrix\.sync\.aligned\.m8n8\.(x\d)\.shared\.b16", ptx)
    per_thread = epilogue_reports(config)[0].instructions // 8 * (config.tile_n // config.epi_tile[1])
    assert stores == ["x4"] * per_thread  # unrolled over the sub-tiles: each warp's stmatrix.x4, all of them
