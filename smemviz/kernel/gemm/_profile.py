"""smemviz's GEMM under Nsight Compute: one configuration captured, launched once under ncu and
attributed (:func:`smemviz.analysis.ncu._profile.profile`), for the explorer's Run on GPU.

``smemviz profile`` takes a kernel as ``FILE.py:FUNCTION``, called once under capture and once in
the process ncu profiles. This module is that file for the GEMM: :func:`launch` reads the
configuration and problem from :data:`CONFIG_ENV`, which :func:`profile_gemm` sets for both calls.
It is loaded from its path there, as a file of the user's would be, so it imports smemviz by name.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from smemviz.kernel.gemm._config import GemmConfig, GemmProblem

if TYPE_CHECKING:
    from smemviz.analysis.ncu import NcuAttribution

__all__ = ["profile_gemm", "launch", "CONFIG_ENV"]

CONFIG_ENV = "SMEMVIZ_PROFILE_GEMM"  # {"config": GemmConfig fields, "problem": GemmProblem fields}


def launch() -> Any:
    """The ``FUNCTION`` of ``smemviz profile``: compile the configuration :data:`CONFIG_ENV` names
    and return the callable that launches it once on random operands."""
    from smemviz.kernel.gemm._host import prepare_gemm
    from smemviz.kernel.gemm._operands import random_operands

    spec = json.loads(os.environ[CONFIG_ENV])
    config = GemmConfig(**spec["config"])
    a, b = random_operands(config.dtype, GemmProblem(**spec["problem"]))
    return prepare_gemm(a, b, config)


def profile_gemm(
    config: GemmConfig, problem: GemmProblem, *, ncu: str | None = None, timeout: float = 600
) -> NcuAttribution:
    """Nsight Compute's shared-memory counters of one launch of ``config`` on ``problem``, on the
    map of its capture (needs a GPU of the config's arch and ncu on PATH, or ``ncu=``)."""
    from smemviz.analysis.ncu._profile import profile

    previous = os.environ.get(CONFIG_ENV)
    os.environ[CONFIG_ENV] = json.dumps({"config": asdict(config), "problem": asdict(problem)})
    try:
        return profile(f"{__file__}:launch", arch=config.arch, ncu=ncu, timeout=timeout)
    finally:
        if previous is None:
            del os.environ[CONFIG_ENV]
        else:
            os.environ[CONFIG_ENV] = previous
