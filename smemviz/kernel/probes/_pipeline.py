"""The pipeline check: a staged producer/consumer copy whose mbarriers sit in
the allocator's barrier region, compiled anywhere and launched on a GPU."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...layout._allocation import SmemAllocation
from ...layout._allocator import SmemAllocator
from ...layout._emit import require_cutlass
from ...layout._pipelines import PipelineConfig
from .._compile import CompiledKernel, compile_host, plan_key
from .._device import require_gpu

__all__ = [
    "PipelineConfig",
    "StagedCopyResource",
    "pipeline_layout",
    "compile_pipeline",
    "run_pipeline",
    "PipelineResult",
]


class StagedCopyResource:
    """A kernel resource: ``stages`` Int32 tile buffers and one pipeline."""

    def __init__(self, stages: int, tile: int, name: str = "staged_copy") -> None:
        self.name = name
        self.tile = tile
        self.pipeline_config = PipelineConfig(num_stages=stages)
        self.pipeline_group = None
        self.buffers = SmemAllocation(f"{name}.buffers", dtype="i32", count=stages * tile, alignment=128)

    def get_smem_requirements(self) -> list[SmemAllocation]:
        return [self.buffers]


def pipeline_layout(
    stages: int = 4, tile: int = 256, *, extra: tuple[SmemAllocation, ...] = (), arch: str | None = None
) -> tuple[SmemAllocator, StagedCopyResource]:
    """An allocator holding the staged-copy resource (and ``extra`` allocations
    first, to move the buffers and barriers away from offset 0)."""
    allocator = SmemAllocator(arch)
    for a in extra:
        allocator.add(a)
    resource = StagedCopyResource(stages, tile)
    allocator.add_resource(resource)
    allocator.compute_layout()
    return allocator, resource


def compile_pipeline(
    allocator: SmemAllocator, resource: StagedCopyResource, n_tiles: int = 64, arch: str = "sm_90a"
) -> CompiledKernel:
    """Compile the staged-copy kernel for ``arch`` (no GPU needed); cached by layout."""
    require_cutlass()
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor

    from ._pipeline_kernel import StagedCopyKernel

    n = n_tiles * resource.tile
    args = (
        make_fake_tensor(cutlass.Int32, (n,), stride=(1,)),
        make_fake_tensor(cutlass.Int32, (n,), stride=(1,)),
        make_fake_tensor(cutlass.Int32, (2,), stride=(1,)),
    )
    key = (plan_key(allocator.plan), resource.tile, resource.pipeline_config.num_stages, n_tiles)
    return compile_host("staged_copy", StagedCopyKernel(allocator, resource, n_tiles), args, arch, key=key)


@dataclass(frozen=True)
class PipelineResult:
    gpu: str
    arch: str
    stages: int
    tile: int
    n_tiles: int
    wrong_elements: int
    barrier_offset_seen: int
    barrier_offset_planned: int
    buffers_offset_seen: int
    buffers_offset_planned: int
    requested_smem_bytes: int | None
    planned_smem_bytes: int
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return (
            self.wrong_elements == 0
            and self.barrier_offset_seen == self.barrier_offset_planned
            and self.buffers_offset_seen == self.buffers_offset_planned
            and self.requested_smem_bytes == self.planned_smem_bytes
        )

    def summary(self) -> str:
        return (
            f"pipeline {'PASS' if self.passed else 'FAIL'} on {self.gpu}: {self.n_tiles} tiles x {self.tile} "
            f"through {self.stages} stages, {self.wrong_elements} wrong elements; barriers at "
            f"{self.barrier_offset_seen} (planned {self.barrier_offset_planned}), buffers at "
            f"{self.buffers_offset_seen} (planned {self.buffers_offset_planned})"
        )


def run_pipeline(
    allocator: SmemAllocator, resource: StagedCopyResource, n_tiles: int = 64, *, seed: int = 0
) -> PipelineResult:
    """Compile (cached), launch on this GPU and check the staged copy."""
    gpu, torch = require_gpu("run_pipeline()")
    t0 = time.perf_counter()
    compiled = compile_pipeline(allocator, resource, n_tiles, gpu.arch)
    t1 = time.perf_counter()
    from .._compile import launch

    n = n_tiles * resource.tile
    gen = torch.Generator(device="cpu").manual_seed(seed)
    inp_host = torch.randint(-(2**30), 2**30, (n,), generator=gen, dtype=torch.int32)
    inp = inp_host.cuda()
    out = torch.full((n,), -7, dtype=torch.int32, device="cuda")
    info = torch.full((2,), -1, dtype=torch.int32, device="cuda")
    launch(compiled, inp, out, info)
    torch.cuda.synchronize()
    wrong = int((out.cpu() != inp_host + 1).sum())
    seen_barrier, seen_buffers = (int(v) for v in info.cpu().tolist())
    t2 = time.perf_counter()
    plan = allocator.plan
    return PipelineResult(
        gpu=gpu.name,
        arch=compiled.arch,
        stages=resource.pipeline_config.num_stages,
        tile=resource.tile,
        n_tiles=n_tiles,
        wrong_elements=wrong,
        barrier_offset_seen=seen_barrier,
        barrier_offset_planned=plan.barrier_regions[0].offset,
        buffers_offset_seen=seen_buffers,
        buffers_offset_planned=resource.buffers.offset,
        requested_smem_bytes=compiled.dynamic_smem_bytes,
        planned_smem_bytes=plan.unified_bytes,
        timings={"compile_s": t1 - t0, "launch_roundtrip_s": t2 - t1},
    )
