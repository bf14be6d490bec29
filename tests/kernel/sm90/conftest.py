"""Every test in this folder traces for its folder's arch (``ARCH`` in ``__init__.py``)."""

import pytest

from . import ARCH


@pytest.fixture(autouse=True)
def _dsl_arch(monkeypatch):
    monkeypatch.setenv("CUTE_DSL_ARCH", ARCH)
    return ARCH
