"""Captures opened inside one another: each sees every kernel traced while it is open."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import kernels  # noqa: E402


def test_both_captures_see_the_kernel_compiled_inside_both():
    with capture() as outer:
        with capture() as inner:
            compile_host("capture_nested", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    assert not outer.refused and not inner.refused
    assert outer.plan == inner.plan
    assert [a.name for a in outer.plan.regions][:2] == ["bars", "sA"]
    assert inner.plan.region("sD").layout == outer.plan.region("sD").layout  # struct views and layouts too


def test_the_outer_capture_also_sees_what_was_compiled_outside_the_inner_one():
    with capture() as outer:
        compile_host("capture_nested_a", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
        with capture() as inner:
            compile_host("capture_nested_b", kernels.tmem_host_and_kernel(), (kernels.fake_out(),), "sm_100a")
    assert len(outer.plans) == 2
    (only,) = inner.kernels.values()
    assert "tmem_kernel" in only.kernel
    assert outer.kernels[only.kernel].tmem_plan == only.tmem_plan is not None
    assert outer.kernels[only.kernel].plan == only.plan
