"""The two defects hostile input once found, pinned: deeply nested layout files
(exit 2 with ``FILE: message``, never exit 3 or a traceback) and control
characters in names (refused when made; escaped wherever a name from another
road is shown)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

import smemviz
from smemviz import DeclarationError, LayoutPlan, SmemAllocation, SmemAllocator, TmemAllocation
from smemviz._names import shown
from smemviz.analysis._report import html_report, markdown_report, text_report
from smemviz.cli import main
from smemviz.layout import plan_from_dict, plan_from_json
from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

from .hostile import no_hang

# C0 and C1 controls, DEL, and the bidi/zero-width format characters
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# -- deep nesting ---------------------------------------------------------------------

DEEP = {
    "deep_array.json": "[" * 5000 + "]" * 5000,
    "deep_object.json": '{"a":' * 5000 + "1" + "}" * 5000,
    "deep_value.json": '{"smem": [{"name": ' + "[" * 3000 + "]" * 3000 + "}]}",
    "deep_array.toml": "name = " + "[" * 5000 + "]" * 5000 + "\n",
    "deep_inline.toml": "name = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "moderate.toml": "name = " + "[" * 200 + "]" * 200 + "\n",  # parses, then refused by depth
    "moderate.json": '{"smem": ' + "[" * 200 + "]" * 200 + "}",
}


@pytest.mark.parametrize("name", sorted(DEEP))
@pytest.mark.parametrize("command", ["check", "report", "render"])
def test_deep_nesting_exits_2_naming_the_file(tmp_path, capsys, name, command):
    path = tmp_path / name
    path.write_text(DEEP[name])
    argv = [command, str(path)]
    if command == "render":
        argv += ["-o", str(tmp_path / "out.json")]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith(f"smemviz: error: {path}") and err.count("\n") == 1
    assert "nested more than 32 levels deep" in err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "out.json").exists()


def test_deep_nesting_through_the_api_is_a_layout_file_error():
    for name, text in DEEP.items():
        with pytest.raises(LayoutFileError, match="nested more than 32 levels"):
            parse_layout_text(text, format="json" if name.endswith(".json") else "toml", source=name)


def test_deep_json_reports_the_position_where_it_gets_too_deep():
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text('{\n "smem": ' + "[" * 40 + "]" * 40 + "}", format="json")
    assert (info.value.line, info.value.column) == (2, 41)


def test_deep_plan_json_is_refused(tmp_path, capsys):
    path = tmp_path / "plan.json"
    path.write_text('{"schema": "smemviz.layout-plan", "version": 1, "regions": ' + "[" * 5000 + "]" * 5000 + "}")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2 and err.startswith(f"smemviz: error: {path}")
    with pytest.raises(ValueError):
        plan_from_json(path.read_text())


# -- names ----------------------------------------------------------------------------

BAD_NAMES = [
    "a\x00b",
    "\x1b[31mred",
    "line\nbreak",
    "tab\there",
    "del\x7f",
    "c1\x85",
    "rtl\u202eevil",
    "zw\u200bsp",
    "nb\u00a0sp",
    "lone\ud800",
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_allocations_refuse_unprintable_names(name):
    with pytest.raises(DeclarationError, match="unprintable character") as info:
        SmemAllocation(name, 64)
    assert info.value.field == "name" and info.value.allocation == name
    with pytest.raises(DeclarationError, match="unprintable character"):
        TmemAllocation(name, 32)


def test_a_name_changed_after_add_is_refused_by_compute_layout():
    alloc = SmemAllocator()
    a = alloc.add(SmemAllocation("ok", 64))
    a.name = "\x1b]0;title\x07"
    with pytest.raises(DeclarationError, match="unprintable"):
        alloc.compute_layout()
    assert not alloc.layout_computed


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_layout_files_refuse_unprintable_strings_at_their_key(fmt):
    docs = {
        "smem[0].name": {"smem": [{"name": "a\u001b[2J", "size": 8}]},
        "pipeline[0].name": {"pipeline": [{"name": "p\u0000", "stages": 2}]},
        "name": {"name": "title\u202e", "smem": [{"name": "a", "size": 8}]},
    }
    for key, doc in docs.items():
        text = json.dumps(doc)
        if fmt == "toml":
            text = _as_toml(doc)
        with pytest.raises(LayoutFileError, match="unprintable character") as info:
            parse_layout_text(text, format=fmt)
        assert info.value.key == key
        assert not RAW_CONTROL.search(str(info.value))


def _as_toml(doc: dict) -> str:
    lines = [f"{k} = {json.dumps(v)}" for k, v in doc.items() if not isinstance(v, list)]
    for k, v in doc.items():
        if isinstance(v, list):
            for table in v:
                lines += [f"[[{k}]]"] + [f"{tk} = {json.dumps(tv)}" for tk, tv in table.items()]
    return "\n".join(lines) + "\n"


def test_shown_escapes_only_what_is_unprintable():
    assert shown("smem_a") == "smem_a"
    assert shown("a b·é") == "a b·é"
    assert shown("\x1b[31m") == "\\x1b[31m"
    assert shown("x\u202ey") == "x\\u202ey"
    assert shown("\U000e0001") == "\\U000e0001"


@dataclasses.dataclass
class _Cfg:
    num_stages: int
    barrier_ptr: object = None


@dataclasses.dataclass
class _Pipe:
    name: str
    pipeline_config: _Cfg
    pipeline_group: object = None


def _plan_with_hostile_names() -> LayoutPlan:
    """Names that reach a plan by the roads the allocations' own check does not
    guard: a pipeline object's name, and a plan document read back."""
    alloc = SmemAllocator("sm_90a")
    alloc.add(SmemAllocation("data", 256))
    alloc.add_resource(_Pipe("\x1b[31mload\x00\u202e", _Cfg(2)))
    alloc.compute_layout()
    data = alloc.plan.to_dict()
    data["regions"][0]["name"] = "row\nbreak\x07<b>"
    return plan_from_dict(data)


def test_reports_hold_no_raw_control_characters():
    plan = _plan_with_hostile_names()
    assert any(RAW_CONTROL.search(r.name) for r in plan.regions)  # the plan keeps the names as given
    for text in (text_report(plan), markdown_report(plan), html_report(plan), plan.capacity("sm_120").message()):
        assert not RAW_CONTROL.search(text)
    assert "\\x1b[31mload\\x00\\u202e.barriers" in text_report(plan)
    assert "row\\nbreak\\x07&lt;b&gt;" in html_report(plan)


def test_cli_report_and_exports_hold_no_raw_control_characters(tmp_path, capsys):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(_plan_with_hostile_names().to_json())
    for fmt in ("text", "md", "json"):
        code, out, err = run_cli(capsys, "report", str(plan_file), "--format", fmt)
        assert code == 0 and not RAW_CONTROL.search(out + err)
    for ext in (".md", ".json"):
        code, _, _ = run_cli(capsys, "render", str(plan_file), "-o", str(tmp_path / f"out{ext}"))
        assert code == 0 and not RAW_CONTROL.search((tmp_path / f"out{ext}").read_text())


def test_html_export_and_figure_hold_no_raw_control_characters(tmp_path):
    pytest.importorskip("plotly")
    plan = _plan_with_hostile_names()
    from plotly.offline import get_plotlyjs

    page = smemviz.export(plan, tmp_path / "p.html", title="t\x1b[0m").read_text()
    library = get_plotlyjs()
    assert library in page  # plotly.js itself holds raw bytes such as \x1a; the page's own text must not
    assert not RAW_CONTROL.search(page.replace(library, ""))
    fig = smemviz.smem_figure(plan)
    assert not RAW_CONTROL.search(json.dumps(fig.to_plotly_json(), ensure_ascii=False))


def test_title_from_the_command_line_is_escaped(tmp_path, capsys):
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(_plan_with_hostile_names().to_json())
    out_md = tmp_path / "t.md"
    code, _, _ = run_cli(capsys, "render", str(plan_file), "-o", str(out_md), "--title", "T\x1b[2J")
    assert code == 0 and r"## T\\x1b\[2J" in Path(out_md).read_text()  # Markdown for a literal "T\x1b[2J"


# -- layout files that would make the analysis walk without end ---------------------------------

_ACCESS_FILE = """arch = "sm_90a"

[[smem]]
name = "epi_c"
dtype = "bf16"
count = 4096
align = 1024

[[smem.access]]
instruction = "stmatrix.x4"
layout = "{layout}"
warps = {warps}
"""
_TILE = "(128,32):(32,1)"
ENDLESS = {
    "warps 2**62": (_TILE, "[4611686018427387904, 1]", "warps", r"arranges 4611686018427387904 warps"),
    "zero strides": ("(1000000000000,32):(0,1)", "[1, 1]", "layout", r"its tile holds 32000000000000 elements"),
    "nested zero strides": ("((1000000,1000000),32):((0,0),1)", "[1, 1]", "layout", r"tile holds .* elements"),
    "swizzle bits": ("S<1,99999999999,1> o 0 o " + _TILE, "[1, 1]", "layout", r"B \+ M \+ S is 100000000001"),
    "5000 digits": ("(" + "1" * 4000 + ",32):(32,1)", "[1, 1]", "layout", r"an integer of 4000 digits"),
}


@pytest.mark.parametrize("case", sorted(ENDLESS))
@pytest.mark.parametrize("command", ["check", "report", "render"])
def test_an_access_past_the_bounds_exits_2_at_its_key(tmp_path, capsys, case, command):
    layout, warps, key, message = ENDLESS[case]
    path = tmp_path / "kernel.toml"
    path.write_text(_ACCESS_FILE.format(layout=layout, warps=warps))
    argv = [command, str(path)] + (["-o", str(tmp_path / "out.json")] if command == "render" else [])
    with no_hang(20):
        code, out, err = run_cli(capsys, *argv)
    line = 11 if key == "layout" else 12
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"smemviz: error: {path}:{line}:1: smem[0].access[0].{key}: ")
    assert re.search(message, err) and len(err) < 600
    assert not (tmp_path / "out.json").exists()


def test_a_plan_json_with_endless_warps_exits_2(tmp_path, capsys):
    alloc = SmemAllocator("sm_90a")
    alloc.add(
        SmemAllocation("epi_c", 8192, dtype="bf16", count=4096, access={"instruction": "stmatrix.x4", "layout": _TILE})
    )
    alloc.compute_layout()
    data = alloc.plan.to_dict()
    for warps in ([2**62, 1], [10**30, 1]):
        data["accesses"][0]["warps"] = warps
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(data))
        with no_hang(20):
            code, out, err = run_cli(capsys, "check", str(path))
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith("smemviz: error: ") and "accesses[0].warps" in err and "at most 32" in err


def test_a_declared_access_with_endless_warps_is_refused_before_lint():
    with no_hang(20), pytest.raises(DeclarationError, match="a CTA holds at most 32") as info:
        SmemAllocation(
            "epi_c",
            8192,
            dtype="bf16",
            count=4096,
            access={"instruction": "stmatrix.x4", "layout": _TILE, "warps": [2**62, 1]},
        )
    assert info.value.field == "access.warps"


def test_a_long_layout_in_a_file_is_quoted_short(tmp_path, capsys):
    path = tmp_path / "kernel.toml"
    path.write_text(_ACCESS_FILE.format(layout="(" + "1," * 50_000 + "1):(1)", warps="[1, 1]"))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2 and "(100007 characters)" in err and len(err) < 600


def test_a_huge_name_or_key_in_a_file_gives_a_short_error_line(tmp_path, capsys):
    long_name = "n" * 100_000
    docs = {
        "duplicate.toml": f'[[smem]]\nname = "{long_name}"\nsize = 64\n\n[[smem]]\nname = "{long_name}"\nsize = 64\n',
        "unknown_key.toml": f'[[smem]]\nname = "a"\nsize = 64\n{long_name} = 1\n',
    }
    for name, text in docs.items():
        path = tmp_path / name
        path.write_text(text)
        code, _, err = run_cli(capsys, "check", str(path))
        assert code == 2 and err.count("\n") == 1 and "characters)" in err
        assert len(err) < 2000 + len(str(path))


def test_a_plan_with_a_huge_integer_gives_a_short_refusal():
    alloc = SmemAllocator("sm_90a")
    alloc.add(SmemAllocation("a", 256, alignment=128))
    alloc.compute_layout()
    data = alloc.plan.to_dict()
    data["regions"][0]["offset"] = 10**4000 + 1  # not a multiple of its alignment
    with pytest.raises(ValueError, match=r"regions\[0\]\.offset: ") as info:
        plan_from_dict(data)
    assert "characters)" in str(info.value) and len(str(info.value)) < 1100
