"""Mutation testing of the ordering check on captured kernels.

Each mutation is a text edit of one kernel's source (a call dropped, a count or a byte
count changed, an argument moved), written to a temporary folder and compiled from there
under ``smemviz.capture()``; nothing edited is kept. A mutant passes when the check gives
**exactly one** finding (errors and warnings; ``info`` does not count), of the expected rule,
naming the expected regions (or pipeline) and the expected call site (``file:line`` of the
unedited source: an edit keeps every line where it was). For a kernel whose unedited source
does not check clean yet, the table also says whether the mutant added exactly one finding
of the expected rule to the unedited kernel's.

``python -m tests.analysis.ordering.mutations [KERNEL ...]`` prints the table (results in
``results/ordering_mutations.md``); ``tests/analysis/ordering/test_mutations.py`` holds each
row to it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
COUNTED = ("error", "warning")


@dataclass(frozen=True)
class Kernel:
    name: str
    path: Path  # the source edited
    arch: str
    build: Callable[[Any], tuple[Any, tuple[Any, ...]]]  # loaded module -> (host callable, args)
    package: str | None = None  # load the copy inside this package (relative imports)
    cutlass_example: str | None = None  # name in tests/sources/capture/cutlass_examples.EXAMPLES
    slow: bool = False
    not_clean: str | None = None  # why the unedited kernel does not check clean yet (its mutants are xfail)


@dataclass(frozen=True)
class Mutation:
    kernel: str
    name: str
    what: str
    edits: tuple[tuple[str, str | None], ...]  # (exact text, replacement or None: drop that statement)
    rule: str
    regions: frozenset[str]  # the finding's regions must include these
    site: str  # text on the line the finding must name (unique in the unedited source)
    xfail: str | None = None  # why exactly one finding is not expected yet
    occurrence: int | None = None  # which occurrence of the edits' text (None: it must be unique)
    site_occurrence: int | None = None  # which occurrence of ``site`` (None: it must be unique)


@dataclass
class Outcome:
    mutation: Mutation
    findings: list[Any]  # counted findings (error, warning) of the mutant
    baseline: list[Any]  # counted findings of the unedited source
    expected_site: str
    seconds: float
    problems: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.problems

    @property
    def added(self) -> list[Any]:
        before = [(f.rule, f.message) for f in self.baseline]
        added = []
        for f in self.findings:
            key = (f.rule, f.message)
            if key in before:
                before.remove(key)
            else:
                added.append(f)
        return added

    @property
    def adds_one(self) -> bool:
        """The mutant has the baseline's findings and exactly one more, of the expected rule."""
        return len(self.findings) == len(self.baseline) + 1 and [f.rule for f in self.added] == [self.mutation.rule]


# -- the kernels -----------------------------------------------------------------


def _gemm_build(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    from smemviz.kernel.gemm import GemmConfig, gemm_layout
    from smemviz.kernel.gemm._host import _fake_operands

    config = GemmConfig(alias_epilogue=True, arch="sm_90a")
    return mod.Sm90Gemm(gemm_layout(config)), _fake_operands(config.dtype)


def _gemm_sm100_build(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    from smemviz.kernel.gemm import GemmConfig, gemm_layout
    from smemviz.kernel.gemm._host import _fake_operands

    config = GemmConfig(alias_epilogue=False, acc_stages=2, arch="sm_100a")
    return mod.Sm100Gemm(gemm_layout(config), max_ctas=148), _fake_operands(config.dtype)


def _handoff_build(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    import cutlass

    from tests.sources.capture.kernels import fake_out

    return mod.make(False), (fake_out(32), cutlass.Int32(4))


def _example_build(name: str) -> Callable[[Any], tuple[Any, tuple[Any, ...]]]:
    def build(mod: Any) -> tuple[Any, tuple[Any, ...]]:
        from tests.sources.capture.cutlass_examples import EXAMPLES

        return EXAMPLES[name].build(mod)

    return build


def _examples_dir() -> Path:
    from tests.sources.capture.cutlass_examples import examples_dir

    return examples_dir()


# what the unedited CUTLASS kernels still give (false findings, being worked on); their mutants are xfail
NOT_CLEAN = {
    "blackwell_fmha": "the unedited kernel gives 11 findings (a hang on an umma_async pipeline's empty barrier "
    "first, which hides what follows)",
}


def kernels() -> dict[str, Kernel]:
    from tests.sources.capture.cutlass_examples import EXAMPLES

    out = {
        "gemm": Kernel("gemm", ROOT / "smemviz/kernel/gemm/_sm90.py", "sm_90a", _gemm_build, "smemviz.kernel.gemm"),
        "gemm_sm100": Kernel(
            "gemm_sm100",
            ROOT / "smemviz/kernel/gemm/_sm100.py",
            "sm_100a",
            _gemm_sm100_build,
            "smemviz.kernel.gemm",
            slow=True,
        ),
        "handoff": Kernel(
            "handoff",
            ROOT / "tests/sources/capture/ordering_kernels.py",
            "sm_90a",
            _handoff_build,
            "tests.sources.capture",
        ),
    }
    for name in (
        "hopper_dense_gemm",
        "hopper_dense_gemm_persistent",
        "hopper_fmha",
        "blackwell_dense_gemm_persistent",
        "blackwell_fmha",
    ):
        ex = EXAMPLES[name]
        out[name] = Kernel(
            name, _examples_dir() / ex.path, ex.arch, _example_build(name), None, name, True, NOT_CLEAN.get(name)
        )
    return out


def available(kernel: Kernel) -> bool:
    return kernel.path.exists()


# -- the mutations -----------------------------------------------------------------

_GEMM_ALIAS = frozenset({"sA", "sC"})
MUTATIONS: tuple[Mutation, ...] = (
    # smemviz's Hopper GEMM (C staging over the A stages)
    Mutation(
        "gemm",
        "drop-loop-release",
        "drop the consumers' consumer_release in the k loop",
        (
            (
                "mainloop.consumer_release(release)\n                release.advance()",
                "pass\n                release.advance()",
            ),
        ),
        "mbarrier-parity",
        frozenset({"mainloop"}),
        "mainloop.producer_tail(state)",
    ),
    Mutation(
        "gemm",
        "drop-wgmma-wait",
        "drop the wgmma wait_group(1) before the release in the k loop",
        (("cute.nvgpu.warpgroup.wait_group(1)", None),),
        "unordered-alias",
        frozenset({"sA"}),
        "cute.gemm(tiled_mma, acc, tCrA",
        xfail="2 findings, sA and sB: the WGMMA the dropped wait retires reads both operand regions, each "
        "overwritten by its own TMA load (one finding per pair of regions; both real, the dropped edge is one)",
    ),
    Mutation(
        "gemm",
        "drop-epilogue-barrier",
        "drop the consumers' named barrier before the first C write over sA",
        (
            (
                "                epilogue_barrier.arrive_and_wait()\n            r2s",
                "                pass\n            r2s",
            ),
        ),
        "unordered-alias",
        _GEMM_ALIAS,
        "cute.copy(r2s, frag_out, tRS_sC[(None, None, None, buf)])",
    ),
    Mutation(
        "gemm",
        "drop-proxy-fence",
        "drop fence.proxy.async before the TMA store of sC",
        (('cute.arch.fence_proxy("async.shared", space="cta")', None),),
        "proxy-fence",
        frozenset({"sC"}),
        "cute.copy(r2s, frag_out, tRS_sC[(None, None, None, buf)])",
    ),
    Mutation(
        "gemm",
        "drop-store-wait",
        "drop the TMA store pipeline's acquire (wait_group read) before sC is rewritten",
        (("stores.producer_acquire()", None),),
        "unordered-alias",
        frozenset({"sC"}),
        "cute.copy(tma_c, bSG_sC[(None, buf)], bSG_gC[(None, epi_order.get_hier_coord(e))])",
    ),
    Mutation(
        "gemm",
        "empty-count+1",
        "the empty barriers' arrive count one above the consumer warps",
        (("WARPGROUP // 32 + extra_arrivals", "WARPGROUP // 32 + 1"),),
        "mbarrier-arrive-count",
        frozenset({"mainloop"}),
        "mainloop.producer_tail(state)",
    ),
    Mutation(
        "gemm",
        "empty-count-1",
        "the empty barriers' arrive count one below the consumer warps",
        (("WARPGROUP // 32 + extra_arrivals", "WARPGROUP // 32 - 1"),),
        "mbarrier-arrive-count",
        frozenset({"mainloop"}),
        "mainloop.consumer_release(release)\n                release.advance()",
    ),
    Mutation(
        "gemm",
        "tx-count-short",
        "tx_count 1 KiB short of the stage's bytes",
        (("tx_count=stage_bytes,", "tx_count=stage_bytes - 1024,"),),
        "mbarrier-tx-bytes",
        frozenset({"mainloop"}),
        "mainloop.consumer_wait(read)\n            cute.nvgpu.warpgroup.fence()",
    ),
    # smemviz's Blackwell GEMM (two TMEM accumulator buffers, C staging apart)
    Mutation(
        "gemm_sm100",
        "dealloc-other-warp",
        "free the TMEM from epilogue warp 1 instead of warp 0, which allocated it",
        (
            (
                "            if warp == EPILOGUE_WARPS[0]:\n                cute.arch.dealloc_tmem(",
                "            if warp == EPILOGUE_WARPS[1]:\n                cute.arch.dealloc_tmem(",
            ),
        ),
        "tmem-lifecycle",
        frozenset(),
        "cute.arch.dealloc_tmem(tmem_base, self.alloc_columns)",
    ),
    Mutation(
        "gemm_sm100",
        "acc1-over-acc0",
        "move accumulator buffer 1 down 128 columns, over half of buffer 0",
        (("column = cutlass.Int32(self.acc_columns[1])", "column = cutlass.Int32(self.acc_columns[1] - 128)"),),
        "unordered-alias",
        frozenset(),
        "column = cutlass.Int32(self.acc_columns[1])",
        xfail="0 findings: with buffer 1's column moved, capture no longer reads the accumulator's TMEM view "
        "(info: the MMA's and the tcgen05.ld's TMEM is 'no tensor view capture saw made'), so the overlap is not "
        "read (capture, not the check)",
    ),
    # the two-warp hand-off kernel
    Mutation(
        "handoff",
        "drop-release",
        "drop the consumer's release",
        (("handoff.consumer_release(state)", None),),
        "mbarrier-parity",
        frozenset({"handoff"}),
        "handoff.producer_acquire(state)",
    ),
    Mutation(
        "handoff",
        "drop-commit",
        "drop the producer's commit",
        (("handoff.producer_commit(state)", None),),
        "mbarrier-parity",
        frozenset({"handoff"}),
        "handoff.consumer_wait(state)",
    ),
    Mutation(
        "handoff",
        "drop-wait",
        "drop the consumer's wait",
        (("handoff.consumer_wait(state)", None),),
        "unordered-alias",
        frozenset({"buf"}),
        "total += stage[lane]",
        xfail="2 findings, both real: the st/ld race, and the release may fill the empty barrier's phase before "
        "the producer's wait looks (mbarrier-parity)",
    ),
    Mutation(
        "handoff",
        "consumer-count+1",
        "the consumer group one thread larger than the warp that releases",
        (
            (
                "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)",
                "consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 33)",
            ),
        ),
        "mbarrier-arrive-count",
        frozenset({"handoff"}),
        "handoff.producer_acquire(state)",
    ),
)

MUTATIONS += (
    # CUTLASS's Hopper dense_gemm (one warpgroup loads and computes; C staging over the A stages)
    Mutation(
        "hopper_dense_gemm",
        "drop-release",
        "drop the consumer_release in the k loop",
        (
            (
                "mainloop_pipeline.consumer_release(mainloop_consumer_release_state)\n\n"
                "            mainloop_consumer_read_state.advance()",
                "pass\n\n            mainloop_consumer_read_state.advance()",
            ),
        ),
        "mbarrier-parity",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.producer_acquire(mainloop_producer_state)",
        site_occurrence=1,
    ),
    Mutation(
        "hopper_dense_gemm",
        "drop-proxy-fence",
        "drop fence.proxy.async before the TMA store of sC",
        (("cute.arch.fence_proxy(", None),),
        "proxy-fence",
        frozenset({"sC"}),
        "cute.copy(\n                tiled_copy_r2s, tRS_rD_out, tRS_sD",
    ),
    Mutation(
        "hopper_dense_gemm",
        "drop-store-wait",
        "drop the C store pipeline's acquire (wait_group read) before sC is rewritten",
        (("c_pipeline.producer_acquire()", None),),
        "unordered-alias",
        frozenset({"sC"}),
        "cute.copy(\n                    tma_atom_c,",
    ),
    Mutation(
        "hopper_dense_gemm",
        "tx-count-short",
        "tx_count 1 KiB short of the stage's bytes",
        (("tx_count=tma_copy_bytes,", "tx_count=tma_copy_bytes - 1024,"),),
        "mbarrier-tx-bytes",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.consumer_wait(",
        site_occurrence=0,
    ),
    Mutation(
        "hopper_dense_gemm",
        "empty-count+1",
        "the empty barriers' arrive count one above the consumer warps",
        (("consumer_arrive_cnt = mcast_size * num_warps", "consumer_arrive_cnt = mcast_size * num_warps + 1"),),
        "mbarrier-arrive-count",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.producer_acquire(mainloop_producer_state)",
        site_occurrence=1,
    ),
    # CUTLASS's Hopper dense_gemm_persistent (warp-specialised, persistent tiles)
    Mutation(
        "hopper_dense_gemm_persistent",
        "drop-release",
        "drop the consumer_release in the k loop",
        (
            (
                "mainloop_pipeline.consumer_release(mainloop_consumer_release_state)\n"
                "                    mainloop_consumer_release_state.advance()\n"
                "                    mainloop_consumer_read_state.advance()",
                "pass\n"
                "                    mainloop_consumer_release_state.advance()\n"
                "                    mainloop_consumer_read_state.advance()",
            ),
        ),
        "mbarrier-parity",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.producer_tail(mainloop_producer_state)",
    ),
    Mutation(
        "hopper_dense_gemm_persistent",
        "drop-proxy-fence",
        "drop fence.proxy.async before the TMA store of sC",
        (("cute.arch.fence_proxy(", None),),
        "proxy-fence",
        frozenset({"sC"}),
        "cute.copy(\n                        tiled_copy_r2s,",
    ),
    Mutation(
        "hopper_dense_gemm_persistent",
        "drop-store-wait",
        "drop the TMA store pipeline's acquire (wait_group read) before sC is rewritten",
        (("tma_store_pipeline.producer_acquire()", None),),
        "unordered-alias",
        frozenset({"sC"}),
        "cute.copy(\n                            tma_atom_c,",
    ),
    Mutation(
        "hopper_dense_gemm_persistent",
        "tx-count-short",
        "tx_count 1 KiB short of the stage's bytes",
        (("tx_count=tma_copy_bytes,", "tx_count=tma_copy_bytes - 1024,"),),
        "mbarrier-tx-bytes",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.consumer_wait(mainloop_consumer_read_state)",
        site_occurrence=0,
    ),
    Mutation(
        "hopper_dense_gemm_persistent",
        "empty-count+1",
        "the empty barriers' arrive count one above the consumer warps",
        (
            (
                "mcast_size * self.num_mma_warp_groups * self.num_warps_per_warp_group\n",
                "mcast_size * self.num_mma_warp_groups * self.num_warps_per_warp_group + 1\n",
            ),
        ),
        "mbarrier-arrive-count",
        frozenset({"mainloop_pipeline"}),
        "mainloop_pipeline.producer_tail(mainloop_producer_state)",
    ),
    # CUTLASS's Blackwell dense_gemm_persistent (TMA warp, MMA warp, epilogue warps own the TMEM)
    Mutation(
        "blackwell_dense_gemm_persistent",
        "dealloc-other-warp",
        "free the TMEM from the MMA warp instead of the epilogue warps that allocated it",
        (
            ("            tmem.free(tmem_ptr)\n\n    @staticmethod", "            pass\n\n    @staticmethod"),
            (
                "            acc_pipeline.producer_tail(acc_producer_state)",
                "            acc_pipeline.producer_tail(acc_producer_state); tmem.free(tmem_ptr, self.num_tmem_alloc_cols)",
            ),
        ),
        "tmem-lifecycle",
        frozenset(),
        "            acc_pipeline.producer_tail(acc_producer_state)",
        xfail="one finding, at the allocation rather than the moved free: 'TMEM allocated by warp 0 at :964 is "
        "not freed before the kernel exits', the free moved into the MMA warp is not read as a free",
    ),
    Mutation(
        "blackwell_dense_gemm_persistent",
        "tx-count-short",
        "tx_count 1 KiB short of the stage's bytes",
        (("tx_count=self.num_tma_load_bytes,", "tx_count=self.num_tma_load_bytes - 1024,"),),
        "mbarrier-tx-bytes",
        frozenset(),
        "handle = ab_consumer.wait_and_advance(peek_ab_full_status)",
    ),
    # CUTLASS's Hopper fmha
    Mutation(
        "hopper_fmha",
        "tx-count-short",
        "the K/V pipeline's tx_count 1 KiB short of a stage's bytes",
        (("tx_count=self.tma_copy_kv_bytes,", "tx_count=self.tma_copy_kv_bytes - 1024,"),),
        "mbarrier-tx-bytes",
        frozenset(),
        "k_handle = load_kv_consumer.wait_and_advance()",
        site_occurrence=0,
    ),
    Mutation(
        "hopper_fmha",
        "drop-release",
        "drop the release of the V stage after the last P*V",
        (("                v_handle.release()\n", "                pass\n"),),
        "mbarrier-parity",
        frozenset(),
        "k_handle = load_kv_producer.acquire_and_advance()",
        site_occurrence=2,
    ),
    # CUTLASS's Blackwell fmha (P written in place over S in TMEM)
    Mutation(
        "blackwell_fmha",
        "drop-inplace-wait",
        "drop the softmax's wait on the in-place pipeline after writing P",
        (
            (
                "        inplace_consumer.wait_and_advance(inplace_peek_status)\n        return local_row_sum",
                "        pass\n        return local_row_sum",
            ),
        ),
        "unordered-alias",
        frozenset(),
        "        inplace_consumer.wait_and_advance(inplace_peek_status)\n        return local_row_sum",
    ),
    Mutation(
        "blackwell_fmha",
        "p0-columns",
        "move P0 onto P1's TMEM columns",
        (("self.tmem_p0_offset = 160", "self.tmem_p0_offset = 32"),),
        "unordered-alias",
        frozenset(),
        "self.tmem_p0_offset = 160",
    ),
    Mutation(
        "blackwell_fmha",
        "dealloc-other-warp",
        "free the TMEM from the MMA warp instead of the correction warps that allocated it",
        (
            ("            tmem.free(tmem_ptr)\n        return\n", "            pass\n        return\n"),
            (
                "            # End of persistent scheduler loop\n        # ///////////////////////////////////////////////////////////////////////////////\n        #  Epilogue (TMA store",
                "            tmem.free(tmem_ptr, self.num_tmem_alloc_cols)\n        # ///////////////////////////////////////////////////////////////////////////////\n        #  Epilogue (TMA store",
            ),
        ),
        "tmem-lifecycle",
        frozenset(),
        "            # End of persistent scheduler loop\n        # ///////////////////////////////////////////////////////////////////////////////\n        #  Epilogue (TMA store",
    ),
)


def mutations_for(kernel: str) -> list[Mutation]:
    return [m for m in MUTATIONS if m.kernel == kernel]


# -- editing, loading, checking -----------------------------------------------------


def _statement_lines(source: str, offset: int) -> tuple[int, int]:
    """The first and last line (1-based) of the innermost statement starting on the line of ``offset``."""
    line = source.count("\n", 0, offset) + 1
    best = None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno == line:
            if best is None or (node.end_lineno or node.lineno) < (best.end_lineno or best.lineno):
                best = node
    if best is None:
        raise ValueError(f"no statement starts on line {line}")
    return best.lineno, best.end_lineno or best.lineno


def _find(source: str, text: str, occurrence: int | None = None) -> int:
    starts = [m.start() for m in re.finditer(re.escape(text), source)]
    if not starts:
        raise ValueError(f"{text!r} is not in the source")
    if occurrence is None and len(starts) > 1:
        raise ValueError(f"{text!r} is in the source {len(starts)} times")
    return starts[occurrence or 0]


def apply(source: str, mutation: Mutation) -> str:
    """``source`` with the mutation's edits; every line stays where it was."""
    for text, replacement in mutation.edits:
        at = _find(source, text, mutation.occurrence)
        if replacement is not None:
            if replacement.count("\n") != text.count("\n"):
                raise ValueError(f"{mutation.name}: an edit must keep the line count")
            source = source[:at] + replacement + source[at + len(text) :]
            continue
        # drop the statement(s) the text spans: `pass` on the first line, blank lines after
        end = at + len(text)
        first, _ = _statement_lines(source, at)
        _, last = _statement_lines(source, source.rfind("\n", 0, end - 1) + 1 if "\n" in text else at)
        lines = source.split("\n")
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        lines[first - 1] = indent + "pass"
        for i in range(first, last):
            lines[i] = ""
        source = "\n".join(lines)
    ast.parse(source)
    return source


def site_of(source: str, text: str, occurrence: int | None = None) -> int:
    return source.count("\n", 0, _find(source, text, occurrence)) + 1


@contextlib.contextmanager
def _no_dsl_cache() -> Iterator[None]:
    from cutlass.cutlass_dsl import CuTeDSL

    env = CuTeDSL._get_dsl().envar
    before = env.no_cache
    env.no_cache = True
    try:
        yield
    finally:
        env.no_cache = before


_loaded = 0


def _load(kernel: Kernel, source: str, folder: Path) -> Any:
    global _loaded
    _loaded += 1
    path = folder / f"m{_loaded}" / kernel.path.name
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    if kernel.cutlass_example:
        from tests.sources.capture.cutlass_examples import EXAMPLES, torch_stand_in

        examples = str(_examples_dir())
        if examples not in sys.path:  # the examples import their helpers ("from helpers import ...")
            sys.path.insert(0, examples)
        name = f"ordering_mutant_{kernel.name}_{_loaded}"
        stand_in = EXAMPLES[kernel.cutlass_example].needs_torch_import
    else:
        name = f"{kernel.package}._ordering_mutant_{_loaded}"
        stand_in = False
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if stand_in:
        with torch_stand_in():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module


def counted(report: Any) -> list[Any]:
    return [f for f in report.findings if f.severity in COUNTED]


def check_source(kernel: Kernel, source: str, folder: Path) -> Any:
    """Capture ``source`` (an edited copy of the kernel's file) and check its ordering model."""
    from smemviz.analysis.ordering import check_ordering
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    module = _load(kernel, source, folder)
    host, args = kernel.build(module)
    with _no_dsl_cache(), capture() as cap:
        compile_host(f"ordering_mutant_{kernel.name}", host, args, kernel.arch, key=None)
    (kc,) = cap.kernels.values()
    return check_ordering(kc.ordering)


def judge(mutation: Mutation, report: Any, baseline: list[Any], site: str, seconds: float) -> Outcome:
    found = counted(report)
    out = Outcome(mutation, found, baseline, site, seconds)
    if len(found) != 1:
        out.problems.append(f"{len(found)} findings")
    for f in found[:1]:
        if f.rule != mutation.rule:
            out.problems.append(f"rule {f.rule}")
        if not mutation.regions <= set(f.regions):
            out.problems.append(f"regions {', '.join(f.regions)}")
        if site not in f.message:
            out.problems.append(f"does not name {site}")
    return out


def run(kernel: Kernel, mutations: list[Mutation], folder: Path) -> tuple[list[Any], list[Outcome]]:
    """The unedited copy's counted findings and each mutant's outcome."""
    source = kernel.path.read_text(encoding="utf-8")
    baseline = counted(check_source(kernel, source, folder))
    outcomes = []
    for m in mutations:
        start = time.perf_counter()
        report = check_source(kernel, apply(source, m), folder)
        site = f"{kernel.path.name}:{site_of(source, m.site, m.site_occurrence)}"
        outcomes.append(judge(m, report, baseline, site, time.perf_counter() - start))
    return baseline, outcomes


def _short(f: Any) -> str:
    sites = sorted(set(re.findall(r"[\w.]+\.py:\d+", f.message)))
    return f"{f.rule} [{', '.join(f.regions)}] {' '.join(sites[:3])}"


def table(rows: list[tuple[Kernel, list[Any], list[Outcome]]]) -> str:
    lines = [
        "| kernel | mutation | expected | site | findings | exactly one | adds one | what came |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kernel, baseline, outcomes in rows:
        for o in outcomes:
            came = "; ".join(_short(f) for f in (o.added if o.baseline else o.findings)[:3]) or "nothing"
            lines.append(
                f"| {kernel.name} (baseline {len(baseline)}) | {o.mutation.name} | {o.mutation.rule} | "
                f"{o.expected_site} | {len(o.findings)} | {'yes' if o.exact else 'no: ' + ', '.join(o.problems)} | "
                f"{'yes' if o.adds_one else 'no'} | {came} |"
            )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    import os

    known = kernels()
    names = argv or list(known)
    rows = []
    with tempfile.TemporaryDirectory(prefix="smemviz-mutants-") as tmp:
        for name in names:
            kernel = known[name]
            if not available(kernel):
                print(f"{name}: source not found, skipped", flush=True)
                continue
            os.environ["CUTE_DSL_ARCH"] = kernel.arch
            start = time.perf_counter()
            baseline, outcomes = run(kernel, mutations_for(name), Path(tmp))
            rows.append((kernel, baseline, outcomes))
            print(f"{name}: {len(outcomes)} mutants in {time.perf_counter() - start:.0f} s", flush=True)
            for f in baseline:
                print(f"  baseline: {f.line()}", flush=True)
            for o in outcomes:
                print(f"  {o.mutation.name}: " + " | ".join(f.line() for f in o.findings), flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
