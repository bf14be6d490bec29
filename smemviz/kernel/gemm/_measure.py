"""Compile, run, check and time one GEMM config: the unit a sweep and the
explorer's run action are made of. Without a GPU of the kernel's arch it still compiles and
reports the requested SMEM and registers, and says why it did not run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ..._errors import CapacityError
from ._config import GemmConfig, GemmProblem
from ._layout import gemm_layout
from ._operands import random_operands

__all__ = ["GemmMeasurement", "measure_gemm", "gemm_runner", "time_interleaved", "REL_ERR_LIMIT"]

# relative Frobenius error against an fp32 product of the same inputs
REL_ERR_LIMIT = {"f16": 2e-3, "bf16": 1.2e-2, "f8e4m3": 1e-2}


@dataclass(frozen=True)
class GemmMeasurement:
    """One config on one problem: what was compiled, and (on a GPU) how fast and how right."""

    config: GemmConfig
    problem: GemmProblem
    stages: int | None = None
    smem_planned: int | None = None
    smem_requested: int | None = None
    registers: int | None = None
    compile_seconds: float | None = None
    ran: bool = False
    median_ms: float | None = None
    tflops: float | None = None
    rel_err: float | None = None
    reason: str = ""
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def passed(self) -> bool | None:
        """Within the dtype's tolerance of torch's fp32 product (``None`` when it did not run)."""
        if not self.ran or self.rel_err is None:
            return None
        return self.rel_err < REL_ERR_LIMIT[self.config.dtype]

    @property
    def fits(self) -> bool:
        return self.stages is not None

    def row(self) -> dict[str, Any]:
        """A flat dict for tables: the config's fields, then the measurements."""
        cfg = asdict(self.config)
        cfg["stages"] = self.stages
        return {
            "label": self.config.label() if self.stages is None else GemmConfig(**cfg).label(),
            **cfg,
            "m": self.problem.m,
            "n": self.problem.n,
            "k": self.problem.k,
            "l": self.problem.l,
            "smem_planned": self.smem_planned,
            "smem_requested": self.smem_requested,
            "registers": self.registers,
            "compile_s": self.compile_seconds,
            "ran": self.ran,
            "median_ms": self.median_ms,
            "tflops": self.tflops,
            "rel_err": self.rel_err,
            "passed": self.passed,
            "reason": self.reason,
        }

    def summary(self) -> str:
        head = f"{self.row()['label']} on {self.problem.m}x{self.problem.n}x{self.problem.k}"
        if not self.fits:
            return f"{head}: {self.reason}"
        smem = f"SMEM {self.smem_requested:,} B requested (plan {self.smem_planned:,} B)"
        regs = f", {self.registers} registers/thread" if self.registers is not None else ""
        if not self.ran:
            return f"{head}: compiled, {smem}{regs}; not run: {self.reason}"
        verdict = "PASS" if self.passed else "FAIL"
        return f"{head}: {self.tflops:.0f} TFLOP/s ({self.median_ms:.3f} ms), {verdict} rel err {self.rel_err:.1e}; {smem}{regs}"


def sample_interleaved(
    launches: dict[str, Callable[[], Any]], *, iters: int = 10, rounds: int = 7, warmup: int = 3
) -> dict[str, list[float]]:
    """Milliseconds per launch of each callable, one sample per round, timed with CUDA
    events in interleaved rounds (order reversed every other round) after warm-up."""
    import torch

    for fn in launches.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in launches}
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    names = list(launches)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            fn = launches[name]
            start.record()
            for _ in range(iters):
                fn()
            stop.record()
            stop.synchronize()
            samples[name].append(start.elapsed_time(stop) / iters)
    return samples


def time_interleaved(
    launches: dict[str, Callable[[], Any]], *, iters: int = 10, rounds: int = 7, warmup: int = 3
) -> dict[str, float]:
    """Median milliseconds per launch of each callable (see :func:`sample_interleaved`)."""
    samples = sample_interleaved(launches, iters=iters, rounds=rounds, warmup=warmup)
    return {name: statistics.median(v) for name, v in samples.items()}


def why_not_run(config: GemmConfig | None = None) -> str | None:
    """Why ``config``'s kernel (by default the Hopper GEMM) cannot run here, or ``None``."""
    from .._device import current_gpu, no_gpu_reason
    from ._host import gpu_mismatch

    gpu = current_gpu()
    if gpu is None:
        return no_gpu_reason()
    return gpu_mismatch(config or GemmConfig(), gpu)


def compile_measurement(config: GemmConfig, problem: GemmProblem) -> GemmMeasurement:
    """The compile-only part: layout (or why it does not fit), requested SMEM, registers."""
    from .._cubin import register_counts
    from ._host import compile_gemm

    try:
        layout = gemm_layout(config)
    except CapacityError as exc:
        return GemmMeasurement(config, problem, reason=f"does not fit: {exc}")
    t0 = time.perf_counter()
    compiled = compile_gemm(layout.config)
    regs = register_counts(compiled.cubin)
    return GemmMeasurement(
        layout.config,
        problem,
        stages=layout.stages,
        smem_planned=layout.unified_bytes,
        smem_requested=compiled.dynamic_smem_bytes,
        registers=max(regs) if regs else None,
        compile_seconds=time.perf_counter() - t0,
    )


def prepare_checked(config: GemmConfig, a: Any, b: Any) -> tuple[Any, float]:
    """A prepared launch of ``config`` on ``a``, ``b`` and its relative error against
    an fp32 product (outputs poisoned with NaN first, so an unwritten one fails)."""
    from ._host import prepare_gemm

    prepared = prepare_gemm(a, b, config)
    prepared.out.fill_(float("nan"))
    out = prepared().float()
    ref = a.float() @ b.float().transpose(-1, -2)
    return prepared, float((out - ref).norm() / ref.norm())


def measure_gemm(
    config: GemmConfig,
    problem: GemmProblem | None = None,
    *,
    run: bool = True,
    iters: int = 10,
    rounds: int = 7,
    warmup: int = 3,
    seed: int = 0,
) -> GemmMeasurement:
    """Compile ``config`` for its arch (cached) and, with ``run`` and a GPU of that arch here,
    launch it on random normal inputs of ``problem``, check it against an fp32
    product and time it. Never raises for a layout that does not fit: the
    measurement says so."""
    problem = problem or GemmProblem(4096, 4096, 4096)
    base = compile_measurement(config, problem)
    if not base.fits:
        return base
    why = "not asked to run" if not run else why_not_run(config)
    if why is not None:
        return _replace(base, reason=why)
    a, b = random_operands(config.dtype, problem, seed)
    t1 = time.perf_counter()
    prepared, rel = prepare_checked(base.config, a, b)
    t2 = time.perf_counter()
    ms = time_interleaved({"gemm": prepared}, iters=iters, rounds=rounds, warmup=warmup)["gemm"]
    return timed(base, ms, rel, {"prepare_and_check_s": t2 - t1, "timing_s": time.perf_counter() - t2})


def timed(m: GemmMeasurement, ms: float, rel: float, timings: dict[str, float] | None = None) -> GemmMeasurement:
    """``m`` with a run's median time and error filled in."""
    return _replace(m, ran=True, median_ms=ms, tflops=m.problem.tflops(ms / 1e3), rel_err=rel, timings=timings or {})


def _replace(m: GemmMeasurement, **changes: Any) -> GemmMeasurement:
    from dataclasses import replace

    return replace(m, **changes)


@dataclass(frozen=True)
class GemmRunner:
    """The explorer's "Run on GPU" for smemviz's GEMM (see :func:`gemm_runner`): called with the
    controls it measures them; :meth:`profile` puts one launch under Nsight Compute."""

    problem: GemmProblem
    arch: str | None = None
    run: bool = True
    iters: int = 10
    rounds: int = 5
    warmup: int = 3

    def config(self, **controls: Any) -> GemmConfig:
        from ._config import config_from_controls

        if self.arch is not None:
            controls.setdefault("arch", self.arch)
        return config_from_controls(**controls)

    def __call__(self, **controls: Any) -> GemmMeasurement:
        return measure_gemm(
            self.config(**controls),
            self.problem,
            run=self.run,
            iters=self.iters,
            rounds=self.rounds,
            warmup=self.warmup,
        )

    def profile(self, **controls: Any) -> Any:
        """Nsight Compute's shared-memory counters of one launch of the controls' GEMM on the map
        of its capture (an :class:`~smemviz.analysis.ncu.NcuAttribution`): needs the GPU and ncu."""
        from ._profile import profile_gemm

        return profile_gemm(self.config(**controls), self.problem)


def gemm_runner(
    problem: GemmProblem | None = None,
    *,
    arch: str | None = None,
    run: bool = True,
    iters: int = 10,
    rounds: int = 5,
    warmup: int = 3,
) -> GemmRunner:
    """A runner for ``explore(gemm_allocator, run=gemm_runner(), ...)``: called with the
    explorer's controls (GemmConfig fields, ``stages=0`` for the most that fit), it
    compiles, launches, checks against torch and times the GEMM on ``problem``; where
    Nsight Compute is installed the explorer can also profile the launch (``runner.profile``).
    ``arch`` (e.g. ``"sm_100a"`` with ``blackwell_gemm_allocators``) is used when the
    controls name none."""
    return GemmRunner(problem or GemmProblem(4096, 4096, 4096), arch, run, iters, rounds, warmup)
