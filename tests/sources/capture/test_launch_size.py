"""A launch that states its own dynamic SMEM (``launch(smem=N)``): the capture's total is what the launch requests."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.layout import plan_from_json  # noqa: E402
from smemviz.sources.capture import capture  # noqa: E402

from . import kernels  # noqa: E402


def _capture(host, name):
    with capture(arch="sm_90a") as cap:
        compiled = compile_host(name, host, (kernels.fake_out(32),), "sm_90a")
    (one,) = cap.kernels.values()
    return one, compiled


def test_a_launch_asking_for_more_than_the_allocations_sets_the_total():
    one, compiled = _capture(kernels.launch_4096_host, "capture_launch_4096")
    assert compiled.dynamic_smem_bytes == 4096
    assert one.total == one.plan.total == 4096
    assert [(a.name, a.offset, a.size) for a in one.allocations] == [("s", 0, 128)]
    assert "smem=4096" in one.total_from and "end at 128 B" in one.total_from
    marker = one.plan.region("launch smem=4096 B")  # the plan itself says where the total comes from
    assert (marker.offset, marker.size) == (128, 0)
    assert one.plan.padding == 4096 - 128  # what the launch reserves and no allocation uses
    assert plan_from_json(one.plan.to_json()) == one.plan


def test_a_launch_asking_for_less_keeps_what_the_allocations_need_and_says_so():
    one, _ = _capture(kernels.launch_16_host, "capture_launch_16")
    assert one.total == one.plan.total == 128
    assert "smem=16, less than the 128 B they need" in one.total_from


def test_without_a_stated_size_the_total_is_the_compilers():
    with capture() as cap:
        compiled = compile_host("capture_launch_auto", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    (one,) = cap.kernels.values()
    assert one.total == compiled.dynamic_smem_bytes
    assert one.total_from == "the compiler's launch size for its allocations"
    assert not [r for r in one.plan.regions if r.name.startswith("launch smem")]


def test_the_marker_goes_through_lint_and_the_report():
    one, _ = _capture(kernels.launch_4096_host, "capture_launch_lint")
    from smemviz.analysis import lint, text_report

    assert "padding-share" in lint(one.plan, "sm_90a").rules()  # 3968 of 4096 B reserved but unused
    assert "launch smem=4096 B" in text_report(one.plan)
