"""What capture refuses, and that it always leaves the DSL as it found it."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytestmark = pytest.mark.cutlass

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.memory import SmemAllocator  # noqa: E402

from smemviz.kernel._compile import compile_host  # noqa: E402
from smemviz.sources.capture import CaptureError, capture  # noqa: E402

from . import kernels  # noqa: E402

_METHODS = ("allocate", "allocate_array", "allocate_tensor", "_smem_alloca")


def _originals():
    return {name: SmemAllocator.__dict__[name] for name in _METHODS}


def test_smem_outside_the_allocator_is_refused_with_the_reason():
    with capture() as cap:
        compile_host("capture_raw", kernels.raw_smem_host, (kernels.fake_out(32),), "sm_90a")
    with pytest.raises(
        CaptureError, match=r"outside cutlass\.memory\.SmemAllocator \(cute_nvgpu\.arch\.get_dyn_smem\)"
    ):
        cap.plan
    assert "raw_smem_kernel" in next(iter(cap.refused))
    with pytest.raises(CaptureError):
        cap.plans


def test_an_error_while_tracing_propagates_and_leaves_no_plan():
    before = _originals()
    with pytest.raises(Exception, match="the kernel author's own error") as info:
        with capture() as cap:
            compile_host("capture_fail", kernels.failing_host, (kernels.fake_out(32),), "sm_90a")
    with pytest.raises(CaptureError, match="nothing captured: the block raised"):
        cap.plan
    assert _originals() == before, "the allocator's methods are restored after an error"
    assert info.value is not None


def test_a_layout_that_is_not_static_is_refused_by_the_dsl_with_capture_naming_the_call():
    @cute.kernel
    def dynamic_kernel(out: cute.Tensor, n: cutlass.Int32):
        smem = SmemAllocator()
        s_dyn = smem.allocate_tensor(cutlass.Int32, cute.make_layout(n))
        out[0] = s_dyn[0]

    @cute.jit
    def dynamic_host(out: cute.Tensor, n: cutlass.Int32):
        dynamic_kernel(out, n).launch(grid=(1, 1, 1), block=(32, 1, 1))

    with pytest.raises(Exception) as info:
        with capture() as cap:
            compile_host("capture_dyn", dynamic_host, (kernels.fake_out(32), cutlass.Int32(4)), "sm_90a")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "s_dyn" in notes and "test_refusals.py:" in notes
    with pytest.raises(CaptureError):
        cap.plan


def test_methods_are_wrapped_only_while_open_and_calls_outside_are_untouched():
    before = _originals()
    with capture():
        assert _originals() != before
        with capture():  # nested: one install
            pass
        assert _originals() != before
    assert _originals() == before


def test_reading_before_the_block_ends_and_with_nothing_traced():
    with capture() as cap:
        with pytest.raises(CaptureError, match="still open"):
            cap.plan
    with pytest.raises(CaptureError, match="no kernel with SMEM or TMEM allocations was traced"):
        cap.plan


def test_two_kernels_need_a_choice():
    with capture() as cap:
        compile_host("capture_a", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
        compile_host("capture_b", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    assert len(cap.plans) == 2
    with pytest.raises(CaptureError, match="2 kernels were captured"):
        cap.plan


def test_a_recording_failure_never_breaks_the_compile(monkeypatch):
    """Should reading a call go wrong, the kernel compiles exactly as without capture and no plan is shown."""
    from cutlass.cutlass_dsl import CuTeDSL

    from smemviz.sources.capture import _hooks

    monkeypatch.setattr(CuTeDSL._get_dsl().envar, "no_cache", True)
    plain = compile_host("capture_broken_plain", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")

    def broken(*args, **kwargs):
        raise LookupError("a DSL this capture does not know")

    monkeypatch.setattr(_hooks, "_describe", broken)
    with capture() as cap:
        captured = compile_host("capture_broken", kernels.mixed_host, (kernels.fake_out(),), "sm_90a")
    assert captured.ptx == plain.ptx
    with pytest.raises(CaptureError, match="could not record .* LookupError: a DSL this capture does not know"):
        cap.plan


def test_a_failing_hook_never_breaks_the_compile(monkeypatch):
    from smemviz.sources.capture import _session

    def broken(module):
        raise RuntimeError("unreadable module")

    monkeypatch.setattr(_session, "walk_allocas", broken)
    with capture() as cap:
        compiled = compile_host("capture_broken_hook", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    assert compiled.dynamic_smem_bytes
    with pytest.raises(CaptureError, match="reading the traced module .* RuntimeError: unreadable module"):
        cap.plan


def test_a_capture_records_one_block():
    cap = capture()
    with cap:
        pass
    with pytest.raises(RuntimeError, match="records one with block"):
        with cap:
            pass


def test_a_recording_failure_names_the_kernel(monkeypatch):
    from smemviz.sources.capture import _hooks

    def broken(*args, **kwargs):
        raise LookupError("an argument this capture cannot read")

    monkeypatch.setattr(_hooks, "_describe", broken)
    with capture() as outer:
        with capture() as inner:
            compile_host("capture_broken_named", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    for cap in (inner, outer):  # each says once which kernel it could not record
        with pytest.raises(CaptureError, match=r"kernel '[^']*named_kernel[^']*': could not record") as info:
            cap.plan
        assert str(info.value).count("named_kernel") == 3  # one line per allocation, each named once
