"""Capture any CuTe DSL kernel's shared and tensor memory as the compiler lays it out.

``with smemviz.capture() as cap: cute.compile(host, *args)`` records every
allocation the kernel makes through ``cutlass.memory`` (or the deprecated
``cutlass.utils``) allocators while it is traced, then reads where the
compiler puts each one; ``cap.plan`` is the kernel's :class:`LayoutPlan`.
"""

from ._records import CapturedAllocation, CapturedTmem
from ._session import Capture, CaptureError, KernelCapture, capture

__all__ = ["capture", "Capture", "CaptureError", "KernelCapture", "CapturedAllocation", "CapturedTmem"]
