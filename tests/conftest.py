import os
import shutil
import sys

import pytest
from hypothesis import HealthCheck, settings

from tools.browser import find_chromium

from .helpers import SKIP_BROWSER_FLAG

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=150)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))

# commands the tests run draw their images with their own browser, so no render service
# outlives the suite; tests/test_cli_render_service.py turns it on for its own commands
os.environ["SMEMVIZ_RENDER_SERVICE"] = "0"


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


@pytest.fixture(autouse=True, scope="module")
def _static_browser_stopped_after_each_module():
    """A module that started the static-export browser (kaleido's Chromium) stops it at its end:
    under parallel workers any module may follow any other in a process, and a browser left
    running by one changes what the next sees (the explorer's warm-up starts nothing then)."""
    yield
    static = sys.modules.get("smemviz._export._static")
    if static is not None:
        static.stop_renderer()


# Under pytest-xdist (scripts/test.sh runs with workers, --dist loadgroup) the longest tests are handed out
# first, so that no worker is left with one at the end: the browser tests, then the notebooks,
# whose Binder environment (tests/binder_env.py) is built in the background from the start. A browser module's tests go to one worker together (their Chromium
# and the JupyterLab pages are shared within a module); the always-drawn maps' notebooks
# are independent and may go to different workers.
_SPREAD_MODULES = {"test_maps_always_drawn.py"}


def _cost_rank(item) -> int:
    """0 for the slowest kind of test, larger for faster ones (a stable sort keeps the rest in order)."""
    if "browser" in item.keywords:
        return 0 if "slow" in item.keywords else 1
    if "notebook" in item.keywords:
        return 2
    if "slow" in item.keywords:
        return 3
    return 4


def _group_browser_modules(items) -> None:
    for item in items:
        path = item.path
        if path.parent.name == "ui" and path.name not in _SPREAD_MODULES:
            item.add_marker(pytest.mark.xdist_group(f"ui/{path.stem}"))


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker; a serial run keeps the file order
        items.sort(key=_cost_rank)
        _group_browser_modules(items)
    if _have_cuda_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none on this machine)")
    for item in items:
        if "gpu" in item.keywords or "blackwell" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    """The notebooks run in Binder's environment: start building it now, while the other
    tests run, when this run (after -m and -k) has any of them."""
    if any(item.path.name == "test_notebooks.py" and "binder" in item.fixturenames for item in session.items):
        from .binder_env import start_building

        start_building(session.config._tmp_path_factory)
