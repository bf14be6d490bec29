"""Hardware facts live in smemviz.hardware alone: an arch added there is seen everywhere."""

from __future__ import annotations

import pytest

import smemviz
from smemviz import SmemAllocation, SmemAllocator, hardware

FUTURE = hardware.Arch("sm_130", "Future", 300 * 1024, has_tmem=True, arch_specific=True)


@pytest.fixture
def future_arch(monkeypatch):
    monkeypatch.setitem(hardware.ARCHS, FUTURE.name, FUTURE)
    return FUTURE


def test_names_and_compile_targets():
    assert hardware.get_arch("H200").name == "sm_90"
    assert hardware.compile_target("sm90") == "sm_90a"
    assert hardware.compile_target("hopper") == "sm_90a"
    assert hardware.compile_target("sm_100f") == "sm_100f"
    assert hardware.compile_target(80) == "sm_80"
    assert hardware.compile_target("ada") == "sm_89"
    assert hardware.default_arch("smem").name == "sm_90"
    assert hardware.default_arch("tmem").has_tmem
    with pytest.raises(ValueError, match="unknown architecture"):
        hardware.compile_target("sm_77")


def test_a_new_arch_is_one_table_entry(future_arch, tmp_path):
    assert hardware.get_arch("sm_130a") is future_arch
    assert hardware.compile_target("sm130") == "sm_130a"
    assert hardware.arch_of_capability(13, 0) is future_arch

    # the allocator's capacity check and the plan's
    big = SmemAllocator(arch="sm_130")
    big.add(SmemAllocation("tile", 260 * 1024, 1024))
    big.compute_layout()
    assert big.plan.fits("sm_130") and not big.plan.fits("sm_90")
    assert big.plan.capacity("sm_130").limit == future_arch.smem_per_block

    # the kernel bridge's view of a GPU and its compile target
    pytest.importorskip("cutlass")
    from smemviz.kernel import GpuInfo, normalise_arch

    gpu = GpuInfo("Future GPU", 13, 0)
    assert gpu.arch == "sm_130a" and gpu.has_tmem
    assert normalise_arch("130") == "sm_130a"


def test_a_new_arch_reaches_the_explorer_and_the_command_line(future_arch, tmp_path, capsys):
    pytest.importorskip("ipywidgets")
    s = SmemAllocator()
    s.add(SmemAllocation("tile", 260 * 1024, 1024))
    s.compute_layout()
    ex = smemviz.explore(s, arch="sm_130")
    assert "sm_130" in ex.arch_selector.options and ex.arch == "sm_130"
    (tmp_path / "big.toml").write_text('[[smem]]\nname = "tile"\nsize = 266240\nalign = 1024\n')
    from smemviz.cli import main

    assert main(["check", str(tmp_path / "big.toml"), "--arch", "sm_130"]) == 0
    assert main(["check", str(tmp_path / "big.toml"), "--arch", "sm_90"]) == 1
    capsys.readouterr()


def test_unknown_gpus_have_no_tmem():
    pytest.importorskip("cutlass")
    from smemviz.kernel import GpuInfo

    assert not GpuInfo("Hopper", 9, 0).has_tmem and GpuInfo("Hopper", 9, 0).arch == "sm_90a"
    assert not GpuInfo("Someday", 42, 0).has_tmem
