"""``compile_probe`` and ``probe``: prove an SMEM layout on the GPU, byte by byte.

``probe(allocator)`` compiles the probe kernel for the GPU that is here (cached
by the plan), launches it once, and checks every byte of every snapshot
against what the plan says. The result needs neither plotly nor Jupyter; its
figure imports plotly only when asked for.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
import time
from dataclasses import dataclass, field
from typing import Any

from ... import hardware
from ..._names import shown
from ...layout._emit import require_cutlass
from ...sources._inputs import as_plan
from .._compile import CompiledKernel, compile_host, launch, plan_key
from .._device import require_gpu
from ._schedule import ProbeSchedule, schedule_for

__all__ = ["compile_probe", "probe", "ProbeResult", "RegionCheck"]

DEFAULT_THREADS = 256


def _smem_plan(obj: Any) -> Any:
    plan = as_plan(obj)
    if plan.memory != "smem":
        raise ValueError(f"the SMEM probe needs an SMEM layout; {obj!r} is a {plan.memory} layout")
    return plan


def _fake_args(schedule: ProbeSchedule) -> tuple[Any, Any]:
    import cutlass
    from cutlass.cute.runtime import make_fake_tensor

    from ._smem_kernel import INFO_WORDS

    n = schedule.unified_bytes
    out = make_fake_tensor(cutlass.Uint8, (len(schedule.steps), n), stride=(n, 1))
    info = make_fake_tensor(cutlass.Int32, (INFO_WORDS,), stride=(1,))
    return out, info


def compile_probe(obj: Any, arch: str = "sm_90a", *, threads: int = DEFAULT_THREADS) -> CompiledKernel:
    """Compile the SMEM probe kernel for ``obj`` (an allocator or plan) without a GPU.

    The result's ``dynamic_smem_bytes`` is what the launch requests; for a
    correct bridge it equals ``plan.unified_bytes``. Cached by the plan.
    """
    require_cutlass()
    plan = _smem_plan(obj)
    if plan.unified_bytes > 0:
        plan.check(arch)
    schedule = schedule_for(plan)
    key = (plan_key(plan), threads)
    from ._smem_kernel import SmemProbeKernel

    return compile_host("smem_probe", SmemProbeKernel(plan, schedule, threads), _fake_args(schedule), arch, key=key)


@dataclass(frozen=True)
class RegionCheck:
    """How one region read back: ``bad_bytes`` bytes of it did not hold its tag."""

    name: str
    kind: str
    offset: int
    size: int
    group: int | None
    phase: int | None
    tag: int
    step: int
    dtype: str
    through_own_type: bool
    bad_bytes: int
    first_bad_offset: int | None = None
    found: int | None = None  # the byte read at first_bad_offset

    @property
    def ok(self) -> bool:
        return self.bad_bytes == 0


@dataclass(frozen=True)
class ProbeResult:
    """What the probe kernel read back on the GPU, checked against the plan."""

    plan: Any
    gpu: str
    arch: str
    checks: tuple[RegionCheck, ...]
    stray_bytes: int  # bytes outside every region that were not 0 (or not as planned)
    requested_smem_bytes: int | None  # what the launch asked the driver for
    kernel_smem_bytes: int  # %dynamic_smem_size read inside the kernel
    base_mod_1024: int  # the unified array's SMEM address modulo 1024
    snapshots: tuple[bytes, ...] = field(repr=False)
    timings: dict[str, float] = field(default_factory=dict)
    when: str = ""

    @property
    def smem_size_ok(self) -> bool:
        return self.kernel_smem_bytes == self.plan.unified_bytes == self.requested_smem_bytes

    @property
    def alignment_ok(self) -> bool:
        return self.base_mod_1024 % min(self.plan.base_alignment, hardware.MAX_SMEM_BASE_ALIGNMENT) == 0

    @property
    def passed(self) -> bool:
        return all(c.ok for c in self.checks) and self.stray_bytes == 0 and self.smem_size_ok and self.alignment_ok

    @property
    def failures(self) -> tuple[RegionCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def summary(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        return (
            f"SMEM probe {status} on {self.gpu} ({self.arch}): {len(self.checks)} regions, "
            f"{len(self.failures)} failed, {self.stray_bytes} stray bytes, "
            f"SMEM requested {self.requested_smem_bytes:,} B / seen in kernel {self.kernel_smem_bytes:,} B / "
            f"planned {self.plan.unified_bytes:,} B"
        )

    def __repr__(self) -> str:
        return f"ProbeResult({self.summary()})"

    def measured_extents(self) -> dict[int, list[tuple[int, int]]]:
        """Per region (by index in ``checks``): the runs of its tag in the snapshot
        right after its step, as ``(offset, length)``."""
        runs_by_step: list[dict[int, list[tuple[int, int]]]] = []
        for snap in self.snapshots:
            runs: dict[int, list[tuple[int, int]]] = {}
            for m in re.finditer(rb"([\x08-\x7b])\1*", snap):
                runs.setdefault(snap[m.start()], []).append((m.start(), m.end() - m.start()))
            runs_by_step.append(runs)
        return {i: runs_by_step[c.step].get(c.tag, []) for i, c in enumerate(self.checks)}

    def figure(self) -> Any:
        """A plotly figure of planned vs measured bytes per region (imports plotly)."""
        from ...figures._probe import probe_figure

        return probe_figure(self)

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        rows = []
        for c in self.checks:
            where = "" if c.group is None else f"group {c.group + 1}, phase {(c.phase or 0) + 1}"
            detail = "" if c.ok else f"{c.bad_bytes:,} B wrong; first at {c.first_bad_offset:,} (read 0x{c.found:02x})"
            rows.append(
                "<tr>"
                f"<td>{html.escape(shown(c.name))}</td><td>{c.kind}</td><td>{c.offset}</td><td>{c.size}</td>"
                f"<td>{where}</td><td>{html.escape(c.dtype)}</td><td>0x{c.tag:02x}</td>"
                f"<td style='color:{'#1a7f37' if c.ok else '#cf222e'}'>{'pass' if c.ok else 'FAIL'}</td>"
                f"<td>{html.escape(detail)}</td></tr>"
            )
        head = "".join(
            f"<th>{h}</th>"
            for h in ("region", "kind", "offset", "size", "alias", "written as", "tag", "result", "detail")
        )
        return (
            f"<div><div style='font-weight:bold;color:{colour}'>{html.escape(self.summary())}</div>"
            f"<div>stray bytes outside regions: {self.stray_bytes}; unified array address mod 1024: "
            f"{self.base_mod_1024} (needs alignment {self.plan.base_alignment})</div>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )


def check_snapshots(plan: Any, schedule: ProbeSchedule, snapshots: list[bytes]) -> tuple[list[RegionCheck], int]:
    """Compare each snapshot with the plan: per-region results and stray bytes."""
    writes = schedule.writes
    # per region: mismatches inside its bytes while it is the last writer there
    bad: dict[int, list[tuple[int, int]]] = {i: [] for i in range(len(writes))}
    stray = 0
    for step, snap in enumerate(snapshots):
        expected = schedule.expected(step)
        if snap == expected:
            continue
        owner = [-1] * len(expected)
        for s in range(step + 1):
            for wi, w in enumerate(writes):
                if w.step == s:
                    owner[w.offset : w.offset + w.size] = [wi] * w.size
        for pos, (got, want) in enumerate(zip(snap, expected)):
            if got != want:
                if owner[pos] < 0:
                    stray += 1
                else:
                    bad[owner[pos]].append((pos, got))
    checks = []
    for wi, w in enumerate(writes):
        region = plan.regions[w.region_index]
        misses = sorted(set(bad[wi]))
        checks.append(
            RegionCheck(
                name=w.name,
                kind=w.kind,
                offset=w.offset,
                size=w.size,
                group=region.group,
                phase=region.phase,
                tag=w.tag,
                step=w.step,
                dtype=w.dtype,
                through_own_type=w.through_own_type,
                bad_bytes=len({p for p, _ in misses}),
                first_bad_offset=misses[0][0] if misses else None,
                found=misses[0][1] if misses else None,
            )
        )
    return checks, stray


def probe(obj: Any, *, threads: int = DEFAULT_THREADS) -> ProbeResult:
    """Compile (cached), launch and check the SMEM probe for ``obj`` on this GPU.

    Raises :class:`~smemviz.kernel.NoGpuError` with no GPU (compile_probe still works).
    """
    t0 = time.perf_counter()
    gpu, torch = require_gpu("smemviz.probe()")
    plan = _smem_plan(obj)
    plan.check(gpu.arch)
    schedule = schedule_for(plan)
    t_compile = time.perf_counter()
    compiled = compile_probe(plan, gpu.arch, threads=threads)
    t_launch = time.perf_counter()
    from ._smem_kernel import INFO_WORDS

    out = torch.full((len(schedule.steps), schedule.unified_bytes), 0xEE, dtype=torch.uint8, device="cuda")
    info = torch.full((INFO_WORDS,), -1, dtype=torch.int32, device="cuda")
    launch(compiled, out, info)
    torch.cuda.synchronize()
    host = out.cpu()
    snapshots = [bytes(host[s].numpy().tobytes()) for s in range(len(schedule.steps))]
    kernel_smem, base_mod = (int(v) for v in info.cpu().tolist())
    t_end = time.perf_counter()
    checks, stray = check_snapshots(plan, schedule, snapshots)
    return ProbeResult(
        plan=plan,
        gpu=gpu.name,
        arch=compiled.arch,
        checks=tuple(checks),
        stray_bytes=stray,
        requested_smem_bytes=compiled.dynamic_smem_bytes,
        kernel_smem_bytes=kernel_smem,
        base_mod_1024=base_mod,
        snapshots=tuple(snapshots),
        timings={
            "compile_s": t_launch - t_compile,
            "launch_roundtrip_s": t_end - t_launch,
            "total_s": time.perf_counter() - t0,
        },
        when=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
