"""The Hopper GEMM traced and compiled on the CPU for every supported config:
the dynamic SMEM its launch requests is the plan's, and the shared-memory
addresses in its PTX are the plan's offsets."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("cutlass")

from smemviz.kernel.gemm import GemmConfig, gemm_layout, supported_configs  # noqa: E402
from smemviz.kernel.gemm._host import compile_gemm  # noqa: E402

pytestmark = pytest.mark.cutlass

_REG = r"%r\d+"


def smem_constants(ptx: str) -> tuple[set[int], list[int]]:
    """Constant byte offsets from the dynamic SMEM array's base found in the PTX, and the
    resolved addresses of every ``mbarrier.init``.

    Follows registers that hold ``base + constant`` (``mov``/``shfl`` of the base,
    ``add.s32`` of an immediate) into ``[reg+imm]`` operands.
    """
    known: dict[str, int] = {}
    for line in ptx.splitlines():
        line = line.strip()
        if m := re.match(rf"mov\.b32\s+({_REG}), __dynamic_shmem__0;", line):
            known[m.group(1)] = 0
        elif (m := re.match(rf"shfl\.sync\.idx\.b32\s+({_REG}), ({_REG}), 0, 31, -1;", line)) and m.group(2) in known:
            known[m.group(1)] = known[m.group(2)]
        elif (m := re.match(rf"add\.s32\s+({_REG}), ({_REG}), (\d+);", line)) and m.group(2) in known:
            known[m.group(1)] = known[m.group(2)] + int(m.group(3))
    constants = set(known.values())
    for reg, imm in re.findall(rf"\[({_REG})\+(\d+)\]", ptx):
        if reg in known:
            constants.add(known[reg] + int(imm))
    inits = []
    for reg, imm in re.findall(rf"mbarrier\.init\.shared\.b64\s+\[({_REG})(?:\+(\d+))?\]", ptx):
        assert reg in known, f"mbarrier.init through {reg}, which is not base + constant"
        inits.append(known[reg] + int(imm or 0))
    return constants, inits


@pytest.mark.parametrize("config", supported_configs(), ids=lambda c: c.label().replace(" ", "-"))
def test_gemm_compiles_with_the_plans_smem(config):
    layout = gemm_layout(config)
    compiled = compile_gemm(config)
    ptx = compiled.ptx
    assert compiled.dynamic_smem_bytes == layout.unified_bytes
    assert compiled.smem_alignment() >= 1024
    assert ".target sm_90a" in ptx and compiled.cubin[:4] == b"\x7fELF"
    # the Hopper machinery is there: WGMMA, TMA loads and stores, register hand-off
    assert "wgmma.mma_async.sync.aligned.m64n" in ptx
    assert (
        "cp.async.bulk.tensor.3d.shared::cluster.global" in ptx or "cp.async.bulk.tensor.3d.shared::cta.global" in ptx
    )
    assert "cp.async.bulk.tensor.3d.global.shared::cta" in ptx
    assert ("multicast::cluster" in ptx) == (config.cluster_m > 1)
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", ptx)
    assert "stmatrix.sync.aligned" in ptx

    constants, inits = smem_constants(ptx)
    offsets = layout.offsets()
    # every mbarrier is the plan's: 2 per stage, 8 B apart, in its barrier region
    assert sorted(inits) == [offsets["barriers"] + 8 * i for i in range(2 * layout.stages)]
    for name in ("a", "b", "c"):
        if offsets[name]:
            assert offsets[name] in constants, f"{name} at {offsets[name]} not addressed in the PTX"


def test_aliasing_moves_the_c_staging_buffer_in_the_code():
    """The check above can fail: the unaliased layout's C offset is absent from the aliased kernel."""
    apart = gemm_layout(GemmConfig(tile_n=128, alias_epilogue=False))
    shared = gemm_layout(GemmConfig(tile_n=128, alias_epilogue=True))
    assert apart.offsets()["c"] != shared.offsets()["c"]
    constants_shared, _ = smem_constants(compile_gemm(shared.config).ptx)
    constants_apart, _ = smem_constants(compile_gemm(apart.config).ptx)
    assert apart.offsets()["c"] in constants_apart
    assert apart.offsets()["c"] not in constants_shared


def test_explicit_stages_change_the_requested_smem():
    few = compile_gemm(GemmConfig(tile_n=128, stages=3))
    assert few.dynamic_smem_bytes == gemm_layout(GemmConfig(tile_n=128, stages=3)).unified_bytes
    assert few.dynamic_smem_bytes < compile_gemm(GemmConfig(tile_n=128)).dynamic_smem_bytes


def test_only_hopper_and_blackwell_have_a_gemm_kernel_here():
    with pytest.raises(ValueError, match="Hopper"):
        compile_gemm(GemmConfig(arch="sm_80"))
