import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

from .helpers import SKIP_BROWSER_FLAG, find_chromium

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=150)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


def _have_cuda_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and os.path.exists("/dev/nvidia0")


def pytest_addoption(parser):
    parser.addoption(
        SKIP_BROWSER_FLAG,
        action="store_true",
        help="skip the tests that need Chromium (browser tests, static SVG/PNG/PDF export); "
        "without it they fail when Chromium is missing",
    )


def pytest_runtest_setup(item):
    """Browser tests never pass silently: no Chromium is a failure unless skipped on purpose."""
    if "browser" not in item.keywords or find_chromium() is not None:
        return
    if item.config.getoption(SKIP_BROWSER_FLAG):
        pytest.skip(f"no Chromium, and {SKIP_BROWSER_FLAG} was given")
    pytest.fail(
        "this test needs Chromium and none was found (SMEMVIZ_CHROMIUM, BROWSER_PATH, /usr/bin/chromium, PATH); "
        f"install it (scripts/bootstrap.sh does: apt-get install chromium) or pass {SKIP_BROWSER_FLAG} "
        "to skip the browser tests on purpose",
        pytrace=False,
    )


def pytest_collection_modifyitems(config, items):
    if _have_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none on this machine)")
    for item in items:
        if "gpu" in item.keywords or "blackwell" in item.keywords:
            item.add_marker(skip)
