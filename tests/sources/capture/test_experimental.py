"""The DSL's experimental front end (``cute_ext``): its kernels are refused by name, with the true reason."""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")
pytest.importorskip("cutlass.cute.experimental")
pytestmark = pytest.mark.cutlass

from smemviz.sources.capture import CaptureError, capture  # noqa: E402

from . import kernels  # noqa: E402


def test_an_experimental_kernel_is_refused_by_name_and_the_compile_is_untouched():
    from cutlass.cute import experimental as cute_ext

    host = kernels.experimental_host()
    with capture() as cap:
        compiled = cute_ext.compile(host, kernels.fake_out(32), options="--gpu-arch=sm_90a")
    assert compiled is not None
    (kernel,) = cap.refused
    assert "experimental_kernel" in kernel
    why = cap.refused[kernel]
    assert "experimental front end" in why and "cute_ext.compile" in why
    assert "1 SMEM buffer (cute_ext.allocate)" in why
    with pytest.raises(CaptureError, match=r"experimental_kernel.*experimental front end") as info:
        cap.plan
    assert "no kernel" not in str(info.value)  # it was compiled inside the block, and the message says so


def test_the_refusal_is_not_hidden_by_a_kernel_captured_beside_it():
    from cutlass.cute import experimental as cute_ext

    from smemviz.kernel._compile import compile_host

    with capture() as cap:
        cute_ext.compile(kernels.experimental_host(), kernels.fake_out(32), options="--gpu-arch=sm_90a")
        compile_host("capture_beside_experimental", kernels.named_host, (kernels.fake_out(16),), "sm_90a")
    assert len(cap.refused) == 1
    with pytest.raises(CaptureError, match="experimental front end"):
        cap.plans  # a refusal is never hidden behind the kernels that were captured
