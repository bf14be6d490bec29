"""The occupancy model and the per-SM facts in hardware.py against the CUDA
driver of the GPU present (``cuOccupancyMaxActiveBlocksPerMultiprocessor`` on
an empty kernel loaded from PTX, and ``cuDeviceGetAttribute``).

Needs only the NVIDIA driver (libcuda): no CuTe DSL, no PyTorch. Run it as a
test (``pytest -m gpu tests/analysis/test_occupancy_gpu.py``) or as a script
(``python -m tests.analysis.test_occupancy_gpu``), which prints the comparison.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

import pytest

from smemviz import hardware, occupancy

# CUdevice_attribute values (cuda.h)
_ATTRS = {
    "compute_capability_major": 75,
    "compute_capability_minor": 76,
    "max_threads_per_sm": 39,
    "smem_per_sm": 81,
    "registers_per_sm": 82,
    "smem_per_block_optin": 97,
    "max_blocks_per_sm": 106,
    "reserved_smem_per_block": 111,
}
_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # CUfunction_attribute
_FUNC_NUM_REGS = 4

_PTX = b"""
.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dynamic_smem[];
.visible .entry empty_kernel()
{
    ret;
}
"""

SMEM_SIZES = (
    0,
    1,
    1024,
    7 * 1024,
    48 * 1024,
    99 * 1024 + 1,
    100_000,
    115_712,
    115_713,
    116_736,
    150_000,
    200_000,
    230_400,
    232_448,
)
THREADS = (32, 128, 384, 1024)


class _Driver:
    """The few driver calls this check needs, through ctypes."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("cuda") or "libcuda.so.1"
        self.lib = ctypes.CDLL(name)
        self.call("cuInit", 0)
        self.dev = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(self.dev), 0)
        ctx = ctypes.c_void_p()
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), self.dev)
        self.call("cuCtxSetCurrent", ctx)
        module = ctypes.c_void_p()
        self.call("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(_PTX))
        self.fn = ctypes.c_void_p()
        self.call("cuModuleGetFunction", ctypes.byref(self.fn), module, b"empty_kernel")

    def call(self, name: str, *args: Any) -> None:
        rc = getattr(self.lib, name)(*args)
        if rc != 0:
            raise RuntimeError(f"{name} failed with CUresult {rc}")

    def attribute(self, key: str) -> int:
        out = ctypes.c_int()
        self.call("cuDeviceGetAttribute", ctypes.byref(out), _ATTRS[key], self.dev)
        return out.value

    def registers(self) -> int:
        out = ctypes.c_int()
        self.call("cuFuncGetAttribute", ctypes.byref(out), _FUNC_NUM_REGS, self.fn)
        return out.value

    def ctas_per_sm(self, threads: int, smem: int) -> int:
        self.call("cuFuncSetAttribute", self.fn, _FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(max(smem, 1)))
        out = ctypes.c_int()
        self.call(
            "cuOccupancyMaxActiveBlocksPerMultiprocessor",
            ctypes.byref(out),
            self.fn,
            ctypes.c_int(threads),
            ctypes.c_size_t(smem),
        )
        return out.value


def _driver_or_none() -> _Driver | None:
    try:
        return _Driver()
    except (OSError, RuntimeError, AttributeError):
        return None


DRIVER = _driver_or_none()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(DRIVER is None, reason="needs the CUDA driver and a GPU")]


def _arch(driver: _Driver) -> hardware.Arch:
    return hardware.arch_of_capability(
        driver.attribute("compute_capability_major"), driver.attribute("compute_capability_minor")
    )


def facts(driver: _Driver) -> list[tuple[str, int, int]]:
    """(fact, the driver's value, hardware.py's value)."""
    a = _arch(driver)
    return [
        ("smem per SM", driver.attribute("smem_per_sm"), a.smem_per_sm),
        ("smem per block (opt-in)", driver.attribute("smem_per_block_optin"), a.smem_per_block),
        ("reserved smem per block", driver.attribute("reserved_smem_per_block"), hardware.SMEM_RESERVED_PER_CTA),
        ("max blocks per SM", driver.attribute("max_blocks_per_sm"), a.max_ctas_per_sm),
        ("max threads per SM", driver.attribute("max_threads_per_sm"), a.max_warps_per_sm * hardware.WARP_THREADS),
        ("registers per SM", driver.attribute("registers_per_sm"), hardware.REGISTERS_PER_SM),
    ]


def comparisons(driver: _Driver) -> list[tuple[int, int, int, int]]:
    """(threads, smem, the driver's CTAs/SM, smemviz's) over a sweep."""
    a = _arch(driver)
    regs = max(driver.registers(), 1)
    rows = []
    for threads in THREADS:
        for smem in SMEM_SIZES:
            if smem > a.smem_per_block:
                continue
            ours = occupancy(smem, a, threads=threads, registers=regs).ctas
            rows.append((threads, smem, driver.ctas_per_sm(threads, smem), ours))
    return rows


def test_per_sm_facts_match_the_driver():
    assert DRIVER is not None
    wrong = [(name, got, ours) for name, got, ours in facts(DRIVER) if got != ours]
    assert not wrong, wrong


def test_ctas_per_sm_match_the_driver():
    assert DRIVER is not None
    wrong = [row for row in comparisons(DRIVER) if row[2] != row[3]]
    assert not wrong, f"(threads, smem, driver, smemviz): {wrong}"


def main() -> int:
    driver = _Driver()
    print(
        f"compute capability {driver.attribute('compute_capability_major')}."
        f"{driver.attribute('compute_capability_minor')}, empty kernel uses {driver.registers()} registers"
    )
    print(f"{'fact':<26} {'driver':>8} {'smemviz':>8}")
    for name, got, ours in facts(driver):
        print(f"{name:<26} {got:>8} {ours:>8}{'' if got == ours else '  MISMATCH'}")
    rows = comparisons(driver)
    print(f"{'threads':>7} {'smem':>7} {'driver':>6} {'smemviz':>7}")
    for threads, smem, got, ours in rows:
        print(f"{threads:>7} {smem:>7} {got:>6} {ours:>7}{'' if got == ours else '  MISMATCH'}")
    bad = sum(got != ours for _, _, got, ours in rows)
    print(f"{len(rows)} sizes compared, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
