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

# the regions each example's TMA loads write (stage 0 of each)
TMA_LOADED = {
    "hopper_dense_gemm": ("sA", "sB"),
    "hopper_dense_gemm_persistent": ("sA", "sB"),
    "hopper_fmha": ("sQ", "sK"),
    "blackwell_dense_gemm_persistent": ("sA", "sB"),
    "blackwell_fmha": ("sQ", "sK"),
}


def _compiled(name: str):
    example = EXAMPLES[name]
    if not (examples_dir() / example.path).exists():
        pytest.skip(
            f"CUTLASS example {example.path} not found under {examples_dir()} "
            "(set SMEMVIZ_CUTLASS_EXAMPLES to a copy of CUTLASS's examples/python/CuTeDSL)"
        )
    host, args = example.build(load(example))
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


def test_the_torch_stand_in_leaves_nothing_behind():
    import sys

    from .cutlass_examples import torch_stand_in

    with torch_stand_in() as used:
        import torch  # noqa: F401
    if used:
        assert "torch" not in sys.modules and "cutlass.torch" not in sys.modules
        with pytest.raises(ImportError):
            import torch  # noqa: F401, F811
