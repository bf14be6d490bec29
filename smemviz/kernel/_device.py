"""Which GPU is here, and device buffers for launches (through PyTorch).

Compiling never comes here; only launching does. Every failure says what is
missing and what still works (compile-only mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import hardware
from .._optional import installed

__all__ = [
    "GpuInfo",
    "NoGpuError",
    "WrongGpuError",
    "current_gpu",
    "require_gpu",
    "torch_or_none",
    "nvidia_device_visible",
    "no_gpu_reason",
]


class NoGpuError(RuntimeError):
    """Launching needs a CUDA GPU (and PyTorch for device buffers)."""


class WrongGpuError(RuntimeError):
    """The GPU here cannot run this kernel (e.g. a tcgen05 kernel on a Hopper GPU)."""


@dataclass(frozen=True)
class GpuInfo:
    name: str
    major: int
    minor: int

    @property
    def arch(self) -> str:
        """The arch to compile for: ``sm_90a`` on Hopper, ``sm_100a`` on B200/GB200, ..."""
        return hardware.arch_of_capability(self.major, self.minor).compile_target

    @property
    def has_tmem(self) -> bool:
        try:
            return hardware.arch_of_capability(self.major, self.minor).has_tmem
        except ValueError:  # a GPU newer than smemviz's table
            return False


def torch_or_none() -> Any:
    return installed("torch")


def nvidia_device_visible() -> bool:
    """Whether this machine shows an NVIDIA GPU at all, asked of the driver's
    files rather than of PyTorch: so "no GPU" and "no PyTorch" are told apart."""
    import glob
    import os

    if glob.glob("/dev/nvidia[0-9]*") or (
        os.path.isdir("/proc/driver/nvidia/gpus") and os.listdir("/proc/driver/nvidia/gpus")
    ):
        return True
    import shutil

    return shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidiactl")


def no_gpu_reason() -> str | None:
    """Why nothing can be launched here, the first missing piece first (a GPU,
    then PyTorch for device buffers, then CUDA in PyTorch), or ``None``."""
    if current_gpu() is not None:
        return None
    if not nvidia_device_visible():
        return "no CUDA GPU is visible on this machine"
    if torch_or_none() is None:
        return "a GPU is here, but PyTorch (needed for device buffers) is not installed"
    return "a GPU is here, but PyTorch sees no CUDA device (torch.cuda.is_available() is False)"


def current_gpu() -> GpuInfo | None:
    """The first visible CUDA GPU, or ``None`` (no PyTorch, no driver, no device)."""
    torch = torch_or_none()
    if torch is None:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        major, minor = torch.cuda.get_device_capability(0)
        return GpuInfo(torch.cuda.get_device_name(0), major, minor)
    except Exception:  # a broken driver reads as "no GPU"
        return None


def require_gpu(what: str) -> tuple[GpuInfo, Any]:
    """The GPU and the ``torch`` module, or a :class:`NoGpuError` that says why not."""
    torch = torch_or_none()
    if torch is None:
        raise NoGpuError(
            f"{what} launches a kernel and needs PyTorch with CUDA for device buffers; "
            "PyTorch is not installed. Compile-only still works: use the compile_* functions "
            "of smemviz.kernel to get PTX, cubin and the requested SMEM."
        )
    gpu = current_gpu()
    if gpu is None:
        raise NoGpuError(
            f"{what} needs a CUDA GPU, and none is visible (torch.cuda.is_available() is False). "
            "Compile-only still works: use the compile_* functions of smemviz.kernel."
        )
    return gpu, torch
