"""CUTLASS's own CuTe DSL examples, unmodified, captured while compiled on the CPU.

The examples are fetched, not committed: set ``SMEMVIZ_CUTLASS_EXAMPLES`` to a
copy of CUTLASS's ``examples/python/CuTeDSL`` (default ``.cutlass_examples/``).
Each capture is checked against the compiled kernel: the total against the
launch's dynamic SMEM, the offsets against the PTX's TMA destinations,
mbarrier inits and TMEM-pointer slot.
"""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = [pytest.mark.cutlass, pytest.mark.slow]

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.kernel._ptx import read_addresses  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from .cutlass_examples import EXAMPLES, examples_dir, load  # noqa: E402
from .overlaps import undeclared_overlaps  # noqa: E402

# the regions each example's TMA loads write (stage 0 of each)
TMA_LOADED = {
    "hopper_dense_gemm": ("sA", "sB"),
    "hopper_dense_gemm_persistent": ("sA", "sB"),
    "hopper_fmha": ("sQ", "sK"),
    "blackwell_dense_gemm_persistent": ("sA", "sB"),
    "blackwell_fmha": ("sQ", "sK"),
}


def _loaded(name: str):
    example = EXAMPLES[name]
    if not (examples_dir() / example.path).exists():
        pytest.skip(
            f"CUTLASS example {example.path} not found under {examples_dir()} "
            "(set SMEMVIZ_CUTLASS_EXAMPLES to a copy of CUTLASS's examples/python/CuTeDSL)"
        )
    return example, example.build(load(example))


def _compiled(name: str):
    example, (host, args) = _loaded(name)
    with capture() as cap:
        compiled = compile_host(f"example_{name}", host, args, example.arch)
    return cap, compiled


@pytest.mark.parametrize("name", sorted(TMA_LOADED))
def test_example_is_captured_as_compiled(name):
    cap, compiled = _compiled(name)
    plan = cap.plan
    assert plan.total == compiled.dynamic_smem_bytes
    facts = read_addresses(compiled.ptx)
    starts = {plan.region(r).offset for r in TMA_LOADED[name]}
    assert starts <= facts.tma_load_offsets
    data = [r for r in plan.regions if r.kind == "data" and r.size]
    for offset in facts.tma_load_offsets:  # every TMA destination lies in a captured data region
        assert any(r.offset <= offset < r.end for r in data), offset
    barriers = [r for r in plan.regions if r.kind == "barrier"]
    for offset in facts.mbarrier_inits:
        assert any(r.offset <= offset < r.end for r in barriers), offset
    for r in plan.regions:
        assert r.source is not None
    if compiled.arch == "sm_100a":
        (slot,) = [r for r in plan.regions if r.kind == "tmem_ptr"]
        assert set(facts.tmem_slot) == {slot.offset}
        assert cap.tmem_plan is not None
        assert set(facts.tcgen05_alloc_columns) == {cap.tmem_plan.tmem_alloc_columns}


def test_merged_cluster_branches_are_one_alias_group():
    """fp16_gemm_4 runs its kernel body in one of two cluster-shape arms and launches with
    smem_merge_branch_allocs=True: the compiler overlays the arms' SMEM, and each arm takes TMEM."""
    cap, compiled = _compiled("blackwell_tutorial_fp16_gemm_4")
    (one,) = cap.kernels.values()
    plan, tmem = one.plan, one.tmem_plan
    assert plan.total == compiled.dynamic_smem_bytes
    (group,) = plan.groups
    assert len(group.phase_sizes) == 2
    arms = [{r.name.replace("#2", "") for r in plan.phase_regions(0, p)} for p in (0, 1)]
    assert arms[0] == arms[1] and {"sA", "sB", "sC", "storage.ab_mbar_ptr"} <= arms[0]
    for name in ("sA", "sB", "sC"):  # the arms overlaid, offset for offset
        assert plan.region(name).offset == plan.region(name + "#2").offset
    assert plan.region("storage.tmem_holding_buffer").offset == plan.region("storage#2.tmem_holding_buffer").offset
    assert undeclared_overlaps(plan) == []
    facts = read_addresses(compiled.ptx)
    data = [r for r in plan.regions if r.kind == "data" and r.size]
    for offset in facts.tma_load_offsets:  # every TMA destination lies in a captured data region
        assert any(r.offset <= offset < r.end for r in data), offset
    barriers = [r for r in plan.regions if r.kind == "barrier"]
    assert facts.mbarrier_inits
    for offset in facts.mbarrier_inits:
        assert any(r.offset <= offset < r.end for r in barriers), offset
    assert set(facts.tmem_slot) == {plan.region("storage.tmem_holding_buffer").offset}
    assert tmem is not None and [(r.name, r.offset, r.size, r.phase) for r in tmem.regions] == [
        ("tmem", 0, 512, 0),
        ("tmem#2", 0, 512, 1),
    ]
    assert undeclared_overlaps(tmem) == []
    assert [line.split(":")[0] for line in one.branches] == ["SMEM alias group 1", "TMEM alias group 1"]


def test_the_experimental_front_end_is_refused_by_name():
    from cutlass.cute import experimental as cute_ext

    _, (gemm, args) = _loaded("cute_ext_blackwell_dense_gemm")
    with capture() as cap:
        cute_ext.compile(gemm, *args, options="--gpu-arch=sm_100a")
    (kernel,) = cap.refused
    assert "DenseGemmKernel" in kernel
    why = cap.refused[kernel]
    assert "experimental front end" in why
    assert "3 SMEM buffers (cute_ext.allocate) and 1 TMEM buffer (cute_ext.allocate)" in why


def test_the_torch_stand_in_leaves_nothing_behind():
    import sys

    from .cutlass_examples import torch_stand_in

    with torch_stand_in() as used:
        import torch  # noqa: F401
    if used:
        assert "torch" not in sys.modules and "cutlass.torch" not in sys.modules
        with pytest.raises(ImportError):
            import torch  # noqa: F401, F811
