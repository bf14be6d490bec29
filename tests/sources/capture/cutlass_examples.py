"""CUTLASS's own CuTe DSL examples, unmodified, compiled on the CPU with fake tensors.

The examples are not shipped: they are read from ``$SMEMVIZ_CUTLASS_EXAMPLES``
(default ``.cutlass_examples/`` in the repository root), laid out as in
CUTLASS's ``examples/python/CuTeDSL/`` folder. Each builder loads one example
module from its file and returns what to compile: the host callable, its
arguments (fake tensors and stream) and the architecture.
"""

import contextlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def examples_dir() -> Path:
    return Path(os.environ.get("SMEMVIZ_CUTLASS_EXAMPLES", ROOT / ".cutlass_examples"))


@dataclass(frozen=True)
class Example:
    name: str
    path: str  # relative to the examples folder
    arch: str
    build: Callable[[Any], tuple[Any, tuple[Any, ...]]]  # module -> (host callable, args)
    needs_torch_import: bool = False  # imports torch at module level, uses it only on the host side


class _TorchStandIn(types.ModuleType):
    """Stands in for PyTorch when it is not installed, for examples that import it at module level
    but use it only on the host side (making data, checking results). Any attribute is an inert
    placeholder class; calling or instantiating one raises, so a trace that did need torch fails loudly."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(f"torch.{name} used, but torch is not installed (a stand-in is loaded)")

        placeholder = type(name, (), {"__new__": refuse, "__call__": refuse})
        setattr(self, name, placeholder)
        return placeholder


@contextlib.contextmanager
def torch_stand_in() -> Iterator[bool]:
    """While loading an example: the stand-in in place of a missing torch (yields whether it is used).
    Afterwards every module imported with it is dropped again, so nothing else sees a fake torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        yield False
        return
    before = set(sys.modules)
    sys.modules["torch"] = _TorchStandIn("torch")
    try:
        yield True
    finally:
        for name in set(sys.modules) - before:
            if name == "torch" or name.startswith("torch.") or name.endswith(".torch"):
                del sys.modules[name]
                parent, _, leaf = name.rpartition(".")
                if parent in sys.modules and getattr(sys.modules[parent], leaf, None) is not None:
                    delattr(sys.modules[parent], leaf)


def load(example: Example) -> Any:
    path = examples_dir() / example.path
    folder = str(examples_dir())
    if folder not in sys.path:  # the examples import their helpers ("from helpers import ...")
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"cutlass_example_{example.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    if example.needs_torch_import:
        with torch_stand_in():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module


def _gemm_operands(dtype: Any, out: Any, mode: str = "k") -> tuple[Any, Any, Any]:
    """A (m, k, l), B (n, k, l), C (m, n, l), K-major A/B and N-major C, symbolic sizes."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    m, n, k, l = (cute.sym_int32(symbol=s) for s in "mnkl")  # noqa: E741
    per, per_out = 128 // dtype.width, 128 // out.width
    lda = cute.sym_int32(divisibility=per, symbol="lda")
    ldc = cute.sym_int32(divisibility=per_out, symbol="ldc")
    a = make_fake_tensor(dtype, (m, k, l), stride=(lda, 1, cute.sym_int64(divisibility=per)), assumed_align=16)
    b = make_fake_tensor(dtype, (n, k, l), stride=(lda, 1, cute.sym_int64(divisibility=per)), assumed_align=16)
    c = make_fake_tensor(out, (m, n, l), stride=(ldc, 1, cute.sym_int64(divisibility=per_out)), assumed_align=16)
    return a, b, c


def _stream() -> Any:
    from cutlass.cute.runtime import make_fake_stream

    return make_fake_stream()


def hopper_dense_gemm(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    import cutlass

    gemm = mod.HopperWgmmaGemmKernel(cutlass.Float32, (128, 128), (1, 1))
    return gemm, (*_gemm_operands(cutlass.Float16, cutlass.Float16), _stream())


def hopper_dense_gemm_persistent(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    import cutlass

    gemm = mod.HopperWgmmaGemmPersistentKernel(cutlass.Float32, (128, 128), (1, 1), 1, True)
    return gemm, (*_gemm_operands(cutlass.Float16, cutlass.Float16), 132, _stream())


def blackwell_dense_gemm_persistent(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    import cutlass

    gemm = mod.PersistentDenseGemmKernel(cutlass.Float32, False, (128, 128), (1, 1), True)
    return gemm, (*_gemm_operands(cutlass.Float16, cutlass.Float16), 148, _stream())


def _attention_tensor(dtype: Any, shape: tuple[Any, ...], contiguous: int) -> Any:
    """A fake tensor of ``shape`` whose mode ``contiguous`` has stride 1, the others symbolic."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    per = max(1, 128 // dtype.width)
    stride = tuple(1 if i == contiguous else cute.sym_int64(divisibility=per) for i in range(len(shape)))
    return make_fake_tensor(dtype, shape, stride=stride, assumed_align=16)


def hopper_fmha(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    """Q/K/V/O as the example hands them over: (s, d, h_r, h_k, b), head dim 128 contiguous;
    not persistent (the persistent scheduler asks the CUDA driver for the SM count while tracing)."""
    import cutlass
    import cutlass.cute as cute

    fmha_utils = sys.modules["helpers.fmha_helpers"]
    fmha = mod.HopperFusedMultiHeadAttentionForward(
        cutlass.Float32, cutlass.Float32, (64, 128, 128), False, fmha_utils.MaskEnum.RESIDUAL_MASK
    )
    s_q, s_k, h_r, h_k, b = (cute.sym_int32(symbol=n) for n in ("s_q", "s_k", "h_r", "h_k", "b"))
    f16 = cutlass.Float16
    q = _attention_tensor(f16, (s_q, 128, h_r, h_k, b), 1)
    k = _attention_tensor(f16, (s_k, 128, 1, h_k, b), 1)
    v = _attention_tensor(f16, (s_k, 128, 1, h_k, b), 1)
    o = _attention_tensor(f16, (s_q, 128, h_r, h_k, b), 1)
    lse = _attention_tensor(cutlass.Float32, (s_q, 1, h_r, h_k, b), 1)
    scale = cutlass.Float32(0.125)
    return fmha, (q, k, v, o, lse, scale, scale, cutlass.Float32(1.0), None, None, _stream())


def blackwell_fmha(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    """Q/K/V/O compact (b, s, h_k, h_r, d), head dim 128, as the example's own run() builds them;
    not persistent (the persistent scheduler asks the CUDA driver for the SM count while tracing)."""
    import cutlass
    import cutlass.cute as cute

    fmha_utils = sys.modules["helpers.fmha_helpers"]
    fmha = mod.BlackwellFusedMultiHeadAttentionForward(
        cutlass.Float32,
        cutlass.Float32,
        (128, 128),
        128,
        False,
        fmha_utils.MaskEnum.RESIDUAL_MASK,
        False,
        False,
        use_tma_store=True,
    )
    b, s_q, s_k, h_k, h_r = (cute.sym_int32(symbol=n) for n in ("b", "s_q", "s_k", "h_k", "h_r"))
    f16 = cutlass.Float16
    q = _attention_tensor(f16, (b, s_q, h_k, h_r, 128), 4)
    k = _attention_tensor(f16, (b, s_k, h_k, 1, 128), 4)
    v = _attention_tensor(f16, (b, s_k, h_k, 1, 128), 4)
    o = _attention_tensor(f16, (b, s_q, h_k, h_r, 128), 4)
    i32 = cutlass.Int32
    problem = (i32(1), i32(1024), i32(1024), i32(1024), i32(8), i32(8), i32(128), i32(128))
    scale = cutlass.Float32(0.125)
    return fmha, (
        q,
        k,
        v,
        o,
        problem,
        None,
        None,
        None,
        None,
        scale,
        scale,
        cutlass.Float32(1.0),
        None,
        None,
        None,
        None,
        None,
        _stream(),
        False,
    )


def blackwell_tutorial_gemm_4(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    """A (m, k), B (n, k), C (m, n), K-major, symbolic sizes; one active cluster of each shape (the
    counts are Constexpr and only size the static scheduler's grid, which the CLC scheduler ignores)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    m, n, k = (cute.sym_int32(symbol=s) for s in "mnk")
    f16 = cutlass.Float16
    lda, ldc = (cute.sym_int32(divisibility=8, symbol=s) for s in ("lda", "ldc"))
    a = make_fake_tensor(f16, (m, k), stride=(lda, 1), assumed_align=16)
    b = make_fake_tensor(f16, (n, k), stride=(lda, 1), assumed_align=16)
    c = make_fake_tensor(f16, (m, n), stride=(ldc, 1), assumed_align=16)
    return mod.host_function, (a, b, c, 1, 1)


def cute_ext_dense_gemm(mod: Any) -> tuple[Any, tuple[Any, ...]]:
    """The experimental front end's GEMM: f16 in, f32 accumulator, f16 out, tile 128x128."""
    import cutlass

    gemm = mod.DenseGemmKernel(
        mn_tiler=(128, 128), mma_dtype=(cutlass.Float16, cutlass.Float32), tmem_output_dtype=cutlass.Float16
    )
    return gemm, _gemm_operands(cutlass.Float16, cutlass.Float16)


EXAMPLES = {
    e.name: e
    for e in (
        Example("hopper_dense_gemm", "cute/hopper/kernel/dense_gemm/dense_gemm.py", "sm_90a", hopper_dense_gemm),
        Example(
            "hopper_dense_gemm_persistent",
            "cute/hopper/kernel/dense_gemm/dense_gemm_persistent.py",
            "sm_90a",
            hopper_dense_gemm_persistent,
        ),
        Example("hopper_fmha", "cute/hopper/kernel/attention/fmha.py", "sm_90a", hopper_fmha),
        Example(
            "blackwell_dense_gemm_persistent",
            "cute/blackwell/kernel/dense_gemm/dense_gemm_persistent.py",
            "sm_100a",
            blackwell_dense_gemm_persistent,
        ),
        Example(
            "blackwell_fmha",
            "cute/blackwell/kernel/attention/fmha/fmha.py",
            "sm_100a",
            blackwell_fmha,
            needs_torch_import=True,
        ),
        Example(
            "blackwell_tutorial_fp16_gemm_4",
            "cute/blackwell/tutorial/tutorial_gemm/fp16_gemm_4.py",
            "sm_100a",
            blackwell_tutorial_gemm_4,
        ),
        Example(
            "cute_ext_blackwell_dense_gemm",
            "cute_ext/blackwell/dense_gemm.py",
            "sm_100a",
            cute_ext_dense_gemm,
            needs_torch_import=True,
        ),
    )
}
