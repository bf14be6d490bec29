"""Third-party internals: used only on the versions the tests cover, with a public fallback elsewhere."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

import plotly  # noqa: E402
import plotly.graph_objects as go  # noqa: E402

from smemviz import SmemAllocation, SmemAllocator  # noqa: E402
from smemviz._compat import plotly as plotly_compat  # noqa: E402
from smemviz.explorer import _map_widget  # noqa: E402


@pytest.fixture
def fresh_widget_class():
    _map_widget.map_widget_class.cache_clear()
    yield
    _map_widget.map_widget_class.cache_clear()


def test_the_installed_plotly_is_in_the_tested_range_and_its_internals_are_there():
    assert plotly_compat.version_tested(), plotly.__version__
    assert plotly_compat.internals_available()


def test_plotly_js_comes_from_the_public_api():
    from plotly.offline import get_plotlyjs

    js = plotly_compat.plotly_js()
    assert js == get_plotlyjs() and len(js) > 1_000_000
    # the maps carry plotly.js's basic bundle of the same version (tests/explorer/test_explorer.py)
    carried = _map_widget.map_widget_class()._smemviz_plotly_js.default_value
    assert carried == _map_widget.map_plotly_js()[0] and carried.split("\n")[1].endswith(js.split("\n")[1][-6:])
    assert carried[:200] not in _map_widget.view_module()  # evaluated once per page, not inside every module


def test_undefined_travels_in_plotlys_wire_form():
    wire = plotly_compat.to_wire({"x": [1, plotly_compat.undefined()], "name": "keep"})
    assert wire == {"x": [1, "_undefined_"], "name": "keep"}


@pytest.mark.parametrize("version", ["6.5.0", "8.0.0", "not-a-version"])
def test_outside_the_tested_range_the_explorer_uses_plotlys_own_widget(version, monkeypatch, fresh_widget_class):
    monkeypatch.setattr(plotly, "__version__", version)
    assert not plotly_compat.internals_available()
    assert _map_widget.map_widget_class() is go.FigureWidget

    import smemviz

    def build(stages=2):
        s = SmemAllocator()
        for i in range(stages):
            s.add(SmemAllocation(f"a{i}", 8192, 1024))
        return s

    ex = smemviz.explore(build, stages=(1, 4))
    assert isinstance(ex.smem_widget, go.FigureWidget) and not hasattr(ex.smem_widget, "update_browser_first")
    ex.controls["stages"].value = 3
    assert ex.smem_plan.total == 3 * 8192
    data = next(t for t in ex.smem_widget.data if t.meta == "data")
    assert len(data.x) == 3  # the plain widget was updated through the public plotly_update


def test_missing_internals_also_fall_back(monkeypatch, fresh_widget_class):
    monkeypatch.setattr(plotly_compat, "_PRIVATE", (*plotly_compat._PRIVATE, "_a_method_plotly_dropped"))
    assert _map_widget.map_widget_class() is go.FigureWidget


def test_kaleido_tab_reuse_only_on_tested_versions(monkeypatch):
    pytest.importorskip("kaleido")
    import kaleido

    from smemviz._compat import kaleido as kaleido_compat

    assert kaleido_compat.version_tested()
    fast = kaleido_compat.fast_tab_reuse(kaleido.Kaleido)
    assert fast is not kaleido.Kaleido and issubclass(fast, kaleido.Kaleido)
    monkeypatch.setattr(kaleido_compat, "version_tested", lambda: False)
    assert kaleido_compat.fast_tab_reuse(kaleido.Kaleido) is kaleido.Kaleido

    class NoPrivates:
        pass

    monkeypatch.setattr(kaleido_compat, "version_tested", lambda: True)
    assert kaleido_compat.fast_tab_reuse(NoPrivates) is NoPrivates
