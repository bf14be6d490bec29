"""Hardware facts live in smemviz.hardware alone: an arch added there is seen everywhere."""

from __future__ import annotations

import pytest

import smemviz
from smemviz import SmemAllocation, SmemAllocator, device, hardware

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
    assert device.default_arch("tmem").has_tmem
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
    from smemviz.hardware import compile_target
    from smemviz.kernel import GpuInfo

    gpu = GpuInfo("Future GPU", 13, 0)
    assert gpu.arch == "sm_130a" and gpu.has_tmem
    assert compile_target("130") == "sm_130a"


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


def test_sm_107_as_the_dsl_gives_it():
    from smemviz import TmemAllocation, TmemAllocator

    rubin = hardware.get_arch("sm_107a")
    assert rubin.smem_per_block == 334848 and rubin.tmem_columns == 576 and rubin.tmem_shared_columns == 512
    wide = TmemAllocator(arch="sm_107")
    wide.add(TmemAllocation("acc", 544))
    wide.compute_layout()
    assert wide.tcgen05_alloc_columns == 576  # above 512 only as an exclusive allocation of all 576
    assert hardware.tmem_alloc_columns(300, "sm_107") == 512
    with pytest.raises(ValueError, match="exceed the 512 columns"):
        hardware.tmem_alloc_columns(544, "sm_100")


def test_kernel_facts_are_fields_of_arch():
    assert hardware.get_arch("sm_90a").mma == "wgmma" and hardware.get_arch("sm_100a").mma == "tcgen05"
    assert hardware.get_arch("sm_80").mma is None
    assert "sm_100a" in hardware.tmem_targets() and "sm_90a" not in hardware.tmem_targets()
    assert hardware.sm_count("sm_100") == hardware.get_arch("sm_100").sm_count == 148


def test_the_cutlass_dsl_agrees_on_sm_107():
    memory = pytest.importorskip("cutlass.memory")
    assert memory.get_smem_capacity_in_bytes("sm_107") == hardware.get_arch("sm_107").smem_per_block
    for name in ("sm_90", "sm_100", "sm_120"):
        assert memory.get_smem_capacity_in_bytes(name) == hardware.get_arch(name).smem_per_block


def test_query_gpu_reads_nvidia_smi_and_says_why_not(monkeypatch, tmp_path):
    import os
    import stat

    fake = tmp_path / "nvidia-smi"
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(device.GpuQueryError, match="not on PATH"):
        device.query_gpu(["name"])
    fake.write_text(
        "#!/bin/sh\ncase \"$1\" in --query-gpu=name,compute_cap) echo 'NVIDIA H200, 9.0';; *) exit 3;; esac\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert device.query_gpu(["name", "compute_cap"]) == ["NVIDIA H200", "9.0"]
    with pytest.raises(device.GpuQueryError, match="exited 3"):
        device.query_gpu(["power.draw"])
    fake.write_text("#!/bin/sh\necho 'NVIDIA H200'\n")
    with pytest.raises(device.GpuQueryError, match="1 values for 2 fields"):
        device.query_gpu(["name", "compute_cap"])


@pytest.mark.parametrize("name", ["GpuQueryError", "query_gpu", "detect_arch", "default_arch"])
def test_machine_queries_moved_out_of_the_facts_table_warn(name):
    """hardware is the facts table; what the machine says lives in smemviz.device."""
    with pytest.warns(DeprecationWarning, match=rf"smemviz\.device\.{name}"):
        old = getattr(hardware, name)
    assert old is getattr(device, name)
    assert name not in hardware.__all__ and name in device.__all__
