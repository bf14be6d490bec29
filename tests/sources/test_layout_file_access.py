"""The ``access`` key of a layout file's [[smem]] entry: read into the plan, refused with the
file, line, column and key when wrong, and ``smemviz check`` reports the conflicts it costs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomllib

from smemviz.analysis import lint
from smemviz.cli import main
from smemviz.sources.layout_file import LayoutFileError, load_layout, parse_layout_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "epilogue_banks.toml"

HEAD = 'arch = "sm_90a"\n[[smem]]\nname = "epi_c"\ndtype = "bf16"\ncount = 4096\n'
CONFLICTING = HEAD + '[[smem.access]]\ninstruction = "stmatrix.x4"\nlayout = "(128,32):(32,1)"\nwarps = [8, 1]\n'
FIXED = CONFLICTING.replace("count = 4096\n", 'count = 4096\nalign = 512\nswizzle = "64B"\n')


def test_the_example_carries_its_accesses_into_the_plan():
    smem, _ = load_layout(EXAMPLE).plans()
    assert [(a.region, a.short_instruction, a.warps) for a in smem.accesses] == [
        ("sA", "ldmatrix.x4", (4, 1)),
        ("epi_c", "stmatrix.x4", (8, 1)),
        ("epi_c_sw64", "stmatrix.x4", (8, 1)),
    ]
    assert [f.regions for f in lint(smem) if f.rule == "bank-conflict"] == [("epi_c",)]


def test_inline_tables_and_json_read_the_same():
    inline = HEAD + 'access = {instruction = "stmatrix.x4", layout = "(128,32):(32,1)", warps = [8, 1]}\n'
    listed = HEAD + 'access = [{instruction = "stmatrix.x4", layout = "(128,32):(32,1)", warps = [8, 1]}]\n'
    expected = parse_layout_text(CONFLICTING, format="toml").plans()[0].accesses
    assert len(expected) == 1
    for text in (inline, listed):
        assert parse_layout_text(text, format="toml").plans()[0].accesses == expected
    body = json.dumps(tomllib.loads(CONFLICTING), indent=2)
    assert parse_layout_text(body, format="json").plans()[0].accesses == expected


ERRORS = [
    # (text after HEAD, key, line, fragment)
    (
        '[[smem.access]]\ninstruction = "stmatrix.x9"\nlayout = "(8,8):(8,1)"\n',
        "smem[0].access[0].instruction",
        7,
        "unknown instruction 'stmatrix.x9'",
    ),
    (
        '[[smem.access]]\ninstruction = "stmatrix.x4"\nlayout = "(8,8):(8,1)"\nwarps = [8, 0]\n',
        "smem[0].access[0].warps",
        9,
        "'warps' must be two positive integers",
    ),
    (
        '[[smem.access]]\ninstruction = "stmatrix.x4"\nlayout = "(8,8):(8,1)"\nwarps = "8x1"\n',
        "smem[0].access[0].warps",
        9,
        "expected an array of integers",
    ),
    (
        '[[smem.access]]\ninstruction = "stmatrix.x4"\nlayuot = "(8,8):(8,1)"\n',
        "smem[0].access[0].layuot",
        8,
        "did you mean 'layout'",
    ),
    ('[[smem.access]]\ninstruction = "stmatrix.x4"\n', "smem[0].access[0]", 6, "give the tile's 'layout'"),
    (
        '[[smem.access]]\ninstruction = "stmatrix.x4"\nlayout = "(8,8):(8,1)"\nswizzle = "96B"\n',
        "smem[0].access[0].swizzle",
        9,
        "'swizzle' must be one of",
    ),
    ("access = 3\n", "smem[0].access", 6, "expected a table"),
]


@pytest.mark.parametrize("tail,key,line,fragment", ERRORS)
def test_toml_access_errors_name_the_key_and_line(tail, key, line, fragment):
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(HEAD + tail, format="toml", source="k.toml")
    err = info.value
    assert err.key == key and fragment in err.message
    assert err.line == line and str(err).startswith(f"k.toml:{line}:")


@pytest.mark.parametrize("tail,key,line,fragment", ERRORS)
def test_json_access_errors_name_the_same_key(tail, key, line, fragment):
    body = json.dumps(tomllib.loads(HEAD + tail), indent=2)
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(body, format="json", source="k.json")
    err = info.value
    assert err.key == key and fragment in err.message and err.line is not None


def test_a_stage_the_entry_does_not_hold_is_refused_at_its_key():
    text = (
        '[[smem]]\nname = "sA"\ndtype = "bf16"\nshape = [2, 64, 64]\n[[smem.access]]\n'
        'instruction = "ldmatrix.x4"\nlayout = "(64,64):(64,1)"\nstage = 2\n'
    )
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(text, format="toml", source="k.toml")
    assert info.value.key == "smem[0].access[0].stage" and info.value.line == 8
    assert "stage 2 does not exist; the allocation holds 2 stage(s)" in info.value.message


def _check(capsys, tmp_path, text: str, *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "kernel.toml"
    path.write_text(text)
    code = main(["check", str(path), *flags])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_check_reports_a_conflicting_access_and_its_fix(capsys, tmp_path):
    code, out, err = _check(capsys, tmp_path, CONFLICTING)
    assert code == 0
    assert (
        "warning[bank-conflict] stmatrix.x4 on 'epi_c' is 4-way: 256 wavefronts where 64 would do "
        "(16 instructions, 192 conflicts as ncu counts)"
    ) in out + err
    assert "fix: 64B swizzle on a 512-byte boundary" in out + err
    code, _, err = _check(capsys, tmp_path, CONFLICTING, "--strict")
    assert code == 1 and "bank-conflict" in err


def test_check_is_quiet_on_the_fixed_twin(capsys, tmp_path):
    code, out, err = _check(capsys, tmp_path, FIXED, "--strict")
    assert code == 0 and "bank-conflict" not in out + err


def test_check_fails_on_an_access_the_region_cannot_hold(capsys, tmp_path):
    code, _, err = _check(capsys, tmp_path, CONFLICTING.replace("count = 4096", "count = 1024"))
    assert code == 1
    assert "error[bank-access] stmatrix.x4 on 'epi_c' cannot be analysed" in err and "past its 2048 B" in err


def test_render_banks_needs_accesses(capsys, tmp_path):
    path = tmp_path / "plain.toml"
    path.write_text('[[smem]]\nname = "a"\nsize = 1024\n')
    code = main(["render", str(path), "-o", str(tmp_path / "x.svg"), "--banks"])
    _, err = capsys.readouterr()
    assert code == 2 and "--banks needs an SMEM layout with access keys" in err


@pytest.mark.browser
def test_render_banks_draws_the_bank_pictures(capsys, tmp_path):
    pytest.importorskip("kaleido")
    from smemviz._export import stop_renderer

    out = tmp_path / "banks.svg"
    try:
        code = main(["render", str(EXAMPLE), "-o", str(out), "--banks"])
    finally:
        stop_renderer()  # later tests expect no warm browser
    capsys.readouterr()
    assert code == 0 and "Conflict strip" in out.read_text() and "epi_c: stmatrix.x4" in out.read_text()
