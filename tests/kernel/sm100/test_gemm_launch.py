"""The Blackwell GEMM's launch path on a machine without a Blackwell GPU: a GPU of
another arch is named and refused before anything is compiled or allocated, the
Hopper path is unchanged, and the measuring/explorer runner still compiles and says
why it did not run."""

from __future__ import annotations

import pytest

from smemviz import as_layouts
from smemviz.kernel import GpuInfo, NoGpuError, WrongGpuError, _device, cache_info
from smemviz.kernel.gemm import GemmConfig, blackwell_gemm_allocators
from smemviz.kernel.gemm._host import gemm, gpu_mismatch, prepare_gemm
from smemviz.kernel.gemm._measure import why_not_run

from . import ARCH

H200 = GpuInfo("NVIDIA H200", 9, 0)
B200 = GpuInfo("NVIDIA B200", 10, 0)
BLACKWELL = GemmConfig(tile_n=128, alias_epilogue=False, acc_stages=2, arch=ARCH)


@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend PyTorch sees ``gpu`` (set by the test)."""
    seen: dict[str, GpuInfo | None] = {"gpu": H200}
    monkeypatch.setattr(_device, "torch_or_none", lambda: object())
    monkeypatch.setattr(_device, "current_gpu", lambda: seen["gpu"])
    return seen


def test_a_hopper_gpu_is_named_when_it_cannot_run_the_blackwell_kernel():
    why = gpu_mismatch(BLACKWELL, H200)
    assert why is not None
    assert "NVIDIA H200 (sm_90)" in why and "sm_100a" in why and "tensor memory" in why
    assert gpu_mismatch(BLACKWELL, B200) is None


def test_the_hopper_kernel_runs_on_hopper_only():
    assert gpu_mismatch(GemmConfig(), H200) is None
    why = gpu_mismatch(GemmConfig(), B200)
    assert why is not None and "NVIDIA B200 (sm_100)" in why and "WGMMA" in why


def test_a_gpu_newer_than_the_table_is_named_too():
    why = gpu_mismatch(BLACKWELL, GpuInfo("Future GPU", 13, 0))
    assert why is not None and "Future GPU (sm_130)" in why


def test_launching_on_the_wrong_gpu_is_refused_before_compiling(fake_gpu):
    before = cache_info()
    with pytest.raises(
        WrongGpuError, match=r"gemm\(\): GEMM f16 128x128 .* acc2 is compiled for sm_100a .*NVIDIA H200"
    ):
        gemm(None, None, BLACKWELL)
    with pytest.raises(WrongGpuError, match=r"prepare_gemm\(\): .*NVIDIA H200 \(sm_90\)"):
        prepare_gemm(None, None, BLACKWELL)
    assert cache_info() == before  # nothing traced or compiled


def test_no_gpu_is_its_own_error(fake_gpu):
    fake_gpu["gpu"] = None
    with pytest.raises(NoGpuError, match="none is visible"):
        gemm(None, None, BLACKWELL)


def test_why_not_run_names_the_gpu_per_config(fake_gpu):
    assert why_not_run(GemmConfig()) is None  # the H200 runs the Hopper kernel
    why = why_not_run(BLACKWELL)
    assert why is not None and "NVIDIA H200" in why
    fake_gpu["gpu"] = B200
    assert why_not_run(BLACKWELL) is None


def test_the_explorer_builder_gives_both_plans():
    smem, tmem = blackwell_gemm_allocators(tile_n=128, acc_stages=2)
    pair = as_layouts((tmem, smem))
    assert pair.smem is smem.plan and pair.tmem is tmem.plan
    assert [r.name for r in pair.tmem.regions] == ["gemm.acc0", "gemm.acc1"]
    assert any(r.kind == "tmem_ptr" for r in pair.smem.regions)


@pytest.mark.cutlass
def test_the_runner_compiles_and_says_which_gpu_it_lacks(fake_gpu):
    pytest.importorskip("cutlass")
    from smemviz.kernel import gemm_runner
    from smemviz.kernel.gemm import gemm_layout

    runner = gemm_runner(arch=ARCH)
    m = runner(dtype="f16", tile_n=128, stages=0, alias_epilogue=False, acc_stages=2, epi_stages=2)
    assert m.config.arch == ARCH and not m.ran
    assert m.smem_requested == gemm_layout(BLACKWELL).unified_bytes
    assert "NVIDIA H200" in m.reason and "sm_100a" in m.reason
    assert "not run" in m.summary()


@pytest.mark.cutlass
def test_a_blackwell_sweep_compiles_every_config_and_says_why_it_did_not_run(fake_gpu):
    pytest.importorskip("cutlass")
    from smemviz.kernel import GemmProblem, sweep
    from smemviz.kernel.gemm import gemm_layout

    configs = [BLACKWELL, GemmConfig(tile_n=128, alias_epilogue=True, arch=ARCH)]
    result = sweep(configs, GemmProblem(512, 512, 512), progress=False)
    assert not result.ran
    assert [r["smem_requested"] for r in result.rows] == [gemm_layout(c).unified_bytes for c in configs]
    assert all("NVIDIA H200" in r["reason"] for r in result.rows)


@pytest.mark.cutlass
def test_a_mixed_sweep_runs_what_this_gpu_can_and_says_why_not_for_the_rest(fake_gpu, monkeypatch):
    pytest.importorskip("cutlass")
    from dataclasses import replace

    from smemviz.kernel import GemmProblem, sweep
    from smemviz.kernel.gemm import _sweep

    handed: list[str] = []

    def fake_run(rows, *args, **kwargs):  # stands in for launching: records what would be launched
        handed.extend(m.config.arch for m in rows)
        return [replace(m, reason="launched (fake)") for m in rows]

    monkeypatch.setattr(_sweep, "_run_interleaved", fake_run)
    hopper = GemmConfig(tile_n=128)
    result = sweep([BLACKWELL, hopper], GemmProblem(512, 512, 512), progress=False)
    assert handed == [hopper.arch]  # only the Hopper config goes to the H200
    blackwell_row, hopper_row = result.rows
    assert "NVIDIA H200" in blackwell_row["reason"] and "sm_100a" in blackwell_row["reason"]
    assert hopper_row["reason"] == "launched (fake)"
