"""The cluster model against the CUDA driver of the GPU present: ``cuOccupancyMaxActiveClusters``
on an empty kernel loaded from PTX, for every cluster size 1..16 (non-portable sizes allowed),
several shared-memory sizes and thread counts. The model's GPC layout is the H200's, so the
check runs on a GPU of that SM count and compute capability 9.0 only.

Needs only the NVIDIA driver (libcuda). Run it as a test
(``pytest -m gpu tests/analysis/test_cluster_occupancy_gpu.py``) or as a script
(``python -m tests.analysis.test_cluster_occupancy_gpu``), which prints the comparison.
"""

from __future__ import annotations

import ctypes

import pytest

from smemviz import hardware, occupancy
from tests.analysis.test_occupancy_gpu import _Driver

_PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dynamic_smem[];
.visible .entry empty_cluster_kernel()
{
    ret;
}
"""

_DEV_ATTR_CLUSTER_LAUNCH = 120
_DEV_ATTR_SM_COUNT = 16
_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4


class _LaunchAttribute(ctypes.Structure):  # CUlaunchAttribute: an id, padding, a 64-byte union
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint * 16)]


class _LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared_mem_bytes", ctypes.c_uint),
        ("stream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_LaunchAttribute)),
        ("num_attrs", ctypes.c_uint),
    ]


SMEM_SIZES = tuple(kib * 1024 for kib in (0, 30, 40, 50, 60, 100, 150, 227))
THREADS = (128, 256, 384)
CLUSTER_SIZES = tuple(range(1, 17))


class _ClusterDriver(_Driver):
    def __init__(self) -> None:
        super().__init__()
        module = ctypes.c_void_p()
        self.call("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(_PTX))
        self.cluster_fn = ctypes.c_void_p()
        self.call("cuModuleGetFunction", ctypes.byref(self.cluster_fn), module, b"empty_cluster_kernel")
        optin = self.attribute("smem_per_block_optin")
        self.call("cuFuncSetAttribute", self.cluster_fn, _FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(optin))
        self.call("cuFuncSetAttribute", self.cluster_fn, _FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, ctypes.c_int(1))

    def device_attribute(self, number: int) -> int:
        out = ctypes.c_int()
        self.call("cuDeviceGetAttribute", ctypes.byref(out), number, self.dev)
        return out.value

    def kernel_registers(self) -> int:
        out = ctypes.c_int()
        self.call("cuFuncGetAttribute", ctypes.byref(out), 4, self.cluster_fn)  # CU_FUNC_ATTRIBUTE_NUM_REGS
        return out.value

    def active_clusters(self, size: int, threads: int, smem: int) -> int:
        attr = _LaunchAttribute(id=_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        attr.value[0], attr.value[1], attr.value[2] = size, 1, 1
        config = _LaunchConfig()
        config.grid[:] = [size * 8, 1, 1]
        config.block[:] = [threads, 1, 1]
        config.shared_mem_bytes = smem
        config.attrs = ctypes.pointer(attr)
        config.num_attrs = 1
        out = ctypes.c_int()
        self.call("cuOccupancyMaxActiveClusters", ctypes.byref(out), self.cluster_fn, ctypes.byref(config))
        return out.value


def _driver_or_none() -> _ClusterDriver | None:
    try:
        return _ClusterDriver()
    except (OSError, RuntimeError, AttributeError):
        return None


DRIVER = _driver_or_none()
needs_gpu = pytest.mark.skipif(DRIVER is None, reason="needs the CUDA driver and a GPU")


def _is_h200_layout(driver: _ClusterDriver) -> bool:
    major = driver.attribute("compute_capability_major")
    minor = driver.attribute("compute_capability_minor")
    return (major, minor) == (9, 0) and driver.device_attribute(_DEV_ATTR_SM_COUNT) == hardware.sm_count("sm_90")


def comparisons(driver: _ClusterDriver) -> list[tuple[int, int, int, int, int]]:
    """(threads, smem, cluster size, the driver's max active clusters, smemviz's)."""
    regs = max(driver.kernel_registers(), 1)
    rows = []
    for threads in THREADS:
        for smem in SMEM_SIZES:
            for size in CLUSTER_SIZES:
                ours = occupancy(smem, "sm_90a", threads=threads, registers=regs, cluster=size).max_active_clusters
                assert ours is not None
                rows.append((threads, smem, size, driver.active_clusters(size, threads, smem), ours))
    return rows


def test_the_launch_structs_have_the_headers_sizes():
    assert ctypes.sizeof(_LaunchAttribute) == 72
    assert ctypes.sizeof(_LaunchConfig) == 56
    assert _LaunchConfig.attrs.offset == 40


@pytest.mark.gpu
@needs_gpu
def test_max_active_clusters_match_the_driver():
    assert DRIVER is not None
    if not _is_h200_layout(DRIVER):
        pytest.skip("the recorded GPC layout is the H200's (compute capability 9.0, 132 SMs)")
    assert DRIVER.device_attribute(_DEV_ATTR_CLUSTER_LAUNCH) == 1
    wrong = [row for row in comparisons(DRIVER) if row[3] != row[4]]
    assert not wrong, f"(threads, smem, cluster size, driver, smemviz): {wrong}"


def main() -> int:
    driver = _ClusterDriver()
    print(
        f"SMs {driver.device_attribute(_DEV_ATTR_SM_COUNT)}, cluster launch "
        f"{driver.device_attribute(_DEV_ATTR_CLUSTER_LAUNCH)}, kernel registers {driver.kernel_registers()}"
    )
    rows = comparisons(driver)
    print(f"{'threads':>7} {'smem':>7} {'size':>4} {'driver':>6} {'smemviz':>7}")
    for threads, smem, size, got, ours in rows:
        print(f"{threads:>7} {smem:>7} {size:>4} {got:>6} {ours:>7}{'' if got == ours else '  MISMATCH'}")
    bad = sum(got != ours for *_, got, ours in rows)
    print(f"{len(rows)} cases compared, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
