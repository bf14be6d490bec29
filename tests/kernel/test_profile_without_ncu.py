"""Profiling smemviz's GEMM where Nsight Compute is not installed: a clear error naming what is
missing, before anything is compiled."""

from __future__ import annotations

import pytest

from smemviz.analysis.ncu._profile import ProfileError
from smemviz.kernel import GemmProblem, gemm_runner


def test_no_ncu_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ProfileError, match="ncu is not on PATH"):
        gemm_runner(GemmProblem(256, 256, 64)).profile(c_swizzle="none")
