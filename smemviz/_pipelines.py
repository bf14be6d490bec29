"""Pipelines declared by name, for layouts written without kernel resource
classes: what a layout file's ``[[pipeline]]`` is in Python.

A :class:`Pipeline` is a resource in the allocators' sense (a
``pipeline_config`` with ``num_stages``, no SMEM of its own), so the barrier
bytes, their place after the data and ``assign_barrier_ptrs()`` treat it
exactly as a kernel's own pipeline resource.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pipeline", "PipelineConfig"]


@dataclass
class PipelineConfig:
    """Stages of a pipeline; ``barrier_ptr`` is set by ``assign_barrier_ptrs()`` at trace time."""

    num_stages: int
    barrier_ptr: Any = None


@dataclass
class Pipeline:
    """A named pipeline that owns ``num_stages`` x 16 B of mbarriers."""

    name: str
    pipeline_config: PipelineConfig
    pipeline_group: Any = field(default=None)

    def get_smem_requirements(self) -> list[Any]:
        return []
