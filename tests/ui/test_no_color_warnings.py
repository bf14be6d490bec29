"""Every figure smemviz draws, drawn by plotly.js in Chromium, logs no
"Invalid color specifier" warning (issue 23, point 11: 54-60 of them per
explorer notebook came from the barrier and TMEM-pointer bars, whose hatching
took its background from the marker's colour array; issue 30, point 12: the
same from a step map's padding / not-live bars, wherever a step left bytes
that are someone else's)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser

pio = pytest.importorskip("plotly.io")

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation, TmemAllocator  # noqa: E402
from smemviz.explorer._sync import without_legend  # noqa: E402
from smemviz.figures import compare_figure, layout_figure, lifetime_spec, smem_spec, tmem_spec  # noqa: E402
from smemviz.figures._bank import bank_spec  # noqa: E402
from smemviz.figures._lifetime import comparison_spec  # noqa: E402
from smemviz.figures._step import step_map_spec  # noqa: E402


class Pipe:
    name = "load"
    pipeline_group = None

    class pipeline_config:
        num_stages = 4
        barrier_ptr = None

    def get_smem_requirements(self):
        return []


def figures() -> dict:
    s = SmemAllocator(arch="sm_100a")
    a, b, c = SmemAllocation("smem_a", 32768, 1024), SmemAllocation("smem_b", 32768, 1024), SmemAllocation("epi", 16384)
    s.add(a)
    s.add(b)
    s.add_resource(Pipe())
    s.add_tmem_ptr(SmemAllocation("tmem_ptr", 4, 4))
    s.add_alias_group([[a, b], [c]])
    s.compute_layout()
    t = TmemAllocator()
    t.add(TmemAllocation("acc0", 128))
    t.add(TmemAllocation("acc1", 128))
    t.compute_layout()
    life = SmemAllocator(arch="sm_90a", steps=("load", "mma", "epi"))
    life.add(SmemAllocation("x", 4096), live=range(0, 2))
    life.add(SmemAllocation("y", 4096), live="epi")
    life.add(SmemAllocation("bias", 64, 16), live="epi")
    life.compute_layout()
    one = SmemAllocator()
    one.add(SmemAllocation("only", 4096))
    one.compute_layout()
    specs = {
        "smem": smem_spec(s.plan, "sm_100a"),
        "highlighted": smem_spec(s.plan, "sm_100a", highlight=(0, 1)),
        "tmem": tmem_spec(t.plan),
        "bank": bank_spec(s.plan),
        "lifetimes": lifetime_spec(life.plan),
        "step": step_map_spec(life.plan, 2, "sm_90a"),
        # at the first step the bias' bytes are not live: a bar of the padding / not-live trace
        "step with bytes not live": step_map_spec(life.plan, 0, "sm_90a"),
        "totals": comparison_spec({"a": life.plan, "b": one.plan}),
    }
    out = {name: spec.to_figure() for name, spec in specs.items()}
    out.update({f"{name} (live)": without_legend(spec).to_figure() for name, spec in specs.items()})
    out["combined"] = layout_figure(s, t)
    out["compare"] = compare_figure(s, one)
    return out


def test_no_figure_makes_plotly_warn_about_colours(browser):
    from plotly.offline import get_plotlyjs

    page = browser.new_page()
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text))
    try:
        page.set_content("<!doctype html><body><div id=g></div></body>")
        page.add_script_tag(content=get_plotlyjs())
        noisy = {}
        for name, fig in figures().items():
            messages.clear()
            page.evaluate("async (f) => { await Plotly.newPlot('g', f.data, f.layout); }", json.loads(pio.to_json(fig)))
            bad = [m for m in messages if "Invalid color" in m]
            if bad:
                noisy[name] = bad
        assert not noisy, noisy
    finally:
        page.close()
