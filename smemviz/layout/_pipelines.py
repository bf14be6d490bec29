"""Pipelines and their mbarriers: the one pipeline model every layout source uses.

A pipeline stage needs a full and an empty 8-byte mbarrier (16 B, 8-aligned).
A resource with a ``pipeline_config`` owns ``num_stages`` stage pairs; a
pipeline group of N members owns ``(N + 1) * num_stages`` (or
``num_barriers_per_stage * num_stages``). Barrier storage follows the data,
resources' first, then groups', as CUTLASS places it.

:class:`Pipeline` and :class:`PipelineGroup` are what a layout file's
``[[pipeline]]`` / ``[[pipeline_group]]`` and the kernels' own pipelines are in
Python; kernel resource classes that bring a ``pipeline_config`` of their own
are read the same way (duck-typed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import hardware
from .._errors import DeclarationError, DeclarationTypeError
from .._units import align_up
from ._allocation import _is_int
from ._base import _BaseAllocator, _label

__all__ = ["Pipeline", "PipelineConfig", "PipelineGroup", "barriers_per_stage"]


@dataclass(frozen=True)
class PipelineConfig:
    """Stages of a pipeline and, once placed, the pointer to its barrier storage
    (``assign_barrier_ptrs()`` sets it at trace time with ``dataclasses.replace``)."""

    num_stages: int
    barrier_ptr: Any = None


@dataclass
class Pipeline:
    """A named pipeline resource that owns ``num_stages`` x 16 B of mbarriers and no data."""

    name: str
    pipeline_config: PipelineConfig
    pipeline_group: Any = field(default=None)

    def get_smem_requirements(self) -> list[Any]:
        return []


@dataclass
class PipelineGroup:
    """A named pipeline group: ``num_barriers_per_stage`` x ``num_stages`` x 16 B of mbarriers."""

    name: str
    pipeline_config: PipelineConfig
    num_barriers_per_stage: int


def barriers_per_stage(group: Any) -> int:
    """Barrier pairs per stage of a pipeline group: its ``num_barriers_per_stage``,
    or, for groups from CUTLASS releases before 4.8 that lack it, members + 1
    (one full barrier per member and a shared empty one, as those releases counted)."""
    label = _label(group)
    per_stage = getattr(group, "num_barriers_per_stage", None)
    if per_stage is None:
        members = getattr(group, "members", None)
        try:
            count = len(members) if members is not None else 0
        except TypeError:
            count = 0
        if count <= 0:
            raise DeclarationError(
                f"pipeline group {label!r} has neither num_barriers_per_stage nor members to count "
                f"(members + 1 barrier pairs per stage), got members={members!r}",
                allocation=label,
                field="members",
            )
        return count + 1
    if not _is_int(per_stage) or per_stage <= 0:
        raise DeclarationError(
            f"pipeline group {label!r}: num_barriers_per_stage must be a positive int, got {per_stage!r}",
            allocation=label,
            field="num_barriers_per_stage",
        )
    return per_stage


class _PipelineMethods(_BaseAllocator):
    """The SMEM allocator's pipeline declarations: resources, named pipelines, groups."""

    _barrier_resources: list[Any]
    _barrier_groups: list[Any]
    _resource_barriers: list[tuple[str, int]]
    _group_barriers: list[tuple[str, int]]
    _barrier_bytes: int

    @staticmethod
    def _stages(cfg: Any, kind: str, label: str) -> int:
        stages = getattr(cfg, "num_stages", None)
        if not _is_int(stages) or stages <= 0:
            raise DeclarationError(
                f"{kind} {label!r}: pipeline_config.num_stages must be a positive int, got {stages!r}",
                allocation=label,
                field="num_stages",
            )
        return stages

    def add_resource(self, resource: Any, live: Any = None) -> None:
        """Register a resource's data allocations (all live in ``live``) and,
        when it owns a pipeline whose barriers are not placed yet,
        ``num_stages * 16`` bytes of mbarriers (always live).

        Members of a pipeline group leave their barriers to the group
        (see :meth:`add_pipeline_group`).
        """
        label = _label(resource)
        self._ensure_open(f"add resource {label!r}")
        cfg = getattr(resource, "pipeline_config", None)
        if not hasattr(resource, "get_smem_requirements") and cfg is None:
            raise TypeError(f"resource {label!r} has neither get_smem_requirements() nor a pipeline_config")
        reqs = self._collect_requirements(resource, "get_smem_requirements")
        needs_barriers = (
            cfg is not None
            and getattr(cfg, "barrier_ptr", None) is None
            and getattr(resource, "pipeline_group", None) is None
        )
        nbytes = self._stages(cfg, "resource", label) * hardware.BARRIER_BYTES_PER_STAGE if needs_barriers else 0
        lives = self._read_lives(reqs, live, label)
        self._add_many(reqs, lives)
        if needs_barriers:
            self._barrier_resources.append(resource)
            self._add_barriers(self._resource_barriers, f"{label}.barriers", nbytes)

    def add_pipeline(self, name: str, stages: int) -> Pipeline:
        """Declare a pipeline that owns ``stages`` x 16 B of mbarriers (a layout
        file's ``[[pipeline]]``) and return it; its region is ``<name>.barriers``."""
        if not isinstance(name, str) or not name:
            raise DeclarationTypeError(f"pipeline name must be a non-empty str, got {name!r}", field="name")
        self._stages(PipelineConfig(stages), "pipeline", name)  # checked before anything changes
        taken = [label for label, _ in self._barrier_entries()]
        if f"{name}.barriers" in taken:
            raise DeclarationError(
                f"pipeline {name!r} is declared twice (its barriers {name}.barriers exist already)",
                allocation=name,
                field="name",
            )
        pipeline = Pipeline(name, PipelineConfig(stages))
        self.add_resource(pipeline)
        return pipeline

    def add_pipeline_group(self, group: Any) -> None:
        """Register a pipeline group's barriers: ``(N + 1) * S`` stage pairs for
        N members and S stages (``num_barriers_per_stage * num_stages * 16`` bytes;
        a group without ``num_barriers_per_stage`` is counted as its members + 1)."""
        label = _label(group)
        self._ensure_open(f"add pipeline group {label!r}")
        cfg = getattr(group, "pipeline_config", None)
        if cfg is None:
            raise ValueError(f"pipeline group {label!r} has no pipeline_config; register it once the group is built")
        stages = self._stages(cfg, "pipeline group", label)
        per_stage = barriers_per_stage(group)
        self._barrier_groups.append(group)
        self._add_barriers(
            self._group_barriers, f"{label}.barriers", per_stage * stages * hardware.BARRIER_BYTES_PER_STAGE
        )

    def _add_barriers(self, into: list, name: str, nbytes: int) -> None:
        align = hardware.MBARRIER_ALIGNMENT
        self._barrier_bytes = align_up(self._barrier_bytes, align) + nbytes
        into.append((name, nbytes))

    def _barrier_entries(self) -> list[tuple[str, int]]:
        return self._resource_barriers + self._group_barriers

    @property
    def barrier_smem_bytes(self) -> int:
        """Bytes of pipeline mbarrier storage (16 per stage per pipeline)."""
        return self._barrier_bytes
