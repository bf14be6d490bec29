"""Layout files: the schema, errors with positions, and plans equal to the
ones the Python API computes from the same declarations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings

import smemviz
from smemviz.sources.layout_file import LayoutFileError, LayoutSpec, load_layout, parse_layout_text

from ..strategies import PipelineConfig, PipelineGroup, Resource, replay, smem_programs, smemviz_alloc

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# -- helpers: a layout description written as TOML or JSON ------------------------------


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def to_toml(doc: dict) -> str:
    lines = [
        f"{k} = {_toml_value(v)}"
        for k, v in doc.items()
        if not isinstance(v, list) or not v or not isinstance(v[0], dict)
    ]
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            for table in value:
                lines += ["", f"[[{key}]]"] + [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def both_formats(doc: dict) -> list[LayoutSpec]:
    return [
        parse_layout_text(to_toml(doc), format="toml", source="t.toml"),
        parse_layout_text(json.dumps(doc, indent=1), format="json", source="t.json"),
    ]


def program_to_doc(ops) -> dict:
    """The layout file that declares what ``replay(ops, ...)`` declares."""
    doc: dict = {"smem": [], "pipeline": [], "pipeline_group": [], "smem_alias": []}
    names: list[str] = []

    def entry(spec) -> None:
        e = {"name": spec.name, "align": spec.align}
        if spec.dtype:
            e.update(dtype=spec.dtype, count=spec.count)
        else:
            e["size"] = spec.size
        doc["smem"].append(e)
        names.append(spec.name)

    for k, op in enumerate(ops):
        if op.kind in ("add", "resource", "tmem_ptr", "alias"):
            for spec in op.allocs:
                entry(spec)
        if op.kind == "resource" and op.stages is not None and not op.preset and not op.grouped:
            doc["pipeline"].append({"name": f"res{k}", "stages": op.stages})
        elif op.kind == "pgroup":
            doc["pipeline_group"].append({"name": f"pg{k}", "stages": op.stages, "members": op.members})
        elif op.kind == "tmem_ptr":
            doc["tmem_ptr"] = op.allocs[0].name
        elif op.kind == "alias":
            doc["smem_alias"].append({"phases": [[names[i] for i in phase] for phase in op.phases]})
    return {k: v for k, v in doc.items() if v != []}


# -- plans equal the Python API's -----------------------------------------------------------


@settings(max_examples=60)
@given(smem_programs())
def test_a_layout_file_computes_the_same_plan_as_the_python_api(ops):
    pool_names = [s.name for op in ops for s in op.allocs]
    assume(len(set(pool_names)) == len(pool_names))
    expected_alloc = smemviz.SmemAllocator()
    replay(ops, expected_alloc, smemviz_alloc)
    expected_alloc.compute_layout()
    doc = program_to_doc(ops)
    for spec in both_formats(doc):
        smem, tmem = spec.plans()
        assert tmem is None
        if not spec.has_smem:
            assert expected_alloc.plan.regions == ()
            continue
        assert smem.to_dict() == expected_alloc.plan.to_dict()


def test_example_gemm_matches_hand_written_declarations():
    spec = load_layout(EXAMPLES / "gemm_sm100.toml")
    a = smemviz.SmemAllocation("smem_a", alignment=1024, dtype="bf16", count=32768)
    b = smemviz.SmemAllocation("smem_b", alignment=1024, dtype="bf16", count=65536)
    c = smemviz.SmemAllocation("epi_c", alignment=1024, dtype="bf16", count=32768)
    slot = smemviz.SmemAllocation("tmem_slot", 4, 4)
    alloc = smemviz.SmemAllocator()
    for x in (a, b, c, slot):
        alloc.add(x)
    alloc.add_tmem_ptr(slot)
    alloc.add_resource(Resource("tma_load", [], PipelineConfig(4)))
    alloc.add_pipeline_group(PipelineGroup("acc", 3, PipelineConfig(2)))
    alloc.add_alias_group([[a, b], [c]])
    alloc.compute_layout()

    smem, tmem = spec.plans()
    assert smem.regions == alloc.plan.regions
    assert smem.barrier_bytes == 4 * 16 + 3 * 2 * 16
    assert smem.arch == "sm_100" and spec.name.startswith("GEMM")
    assert [(r.name, r.offset, r.size) for r in tmem.regions] == [("acc0", 0, 256), ("acc1", 256, 256)]
    assert spec.tmem_allocator().tcgen05_alloc_columns == 512


def test_json_example_loads_and_fits_hopper():
    spec = load_layout(EXAMPLES / "hopper_fa.json")
    smem, tmem = spec.plans()
    assert tmem is None and smem.fits("sm_90a")
    assert smem.region("q").offset == smem.region("o").offset  # aliased
    assert not smem.fits("sm_89")


def test_plans_take_an_arch_override_and_keep_over_capacity_layouts():
    spec = parse_layout_text('[[smem]]\nname = "big"\nsize = 300000\n')
    smem, _ = spec.plans("sm_90a")
    assert smem.arch == "sm_90" and not smem.fits()
    with pytest.raises(smemviz.CapacityError, match="big"):
        spec.smem_allocator("sm_90a")


def test_tmem_alias_groups_and_columns():
    spec = parse_layout_text(
        '[[tmem]]\nname = "acc0"\ncolumns = 128\n[[tmem]]\nname = "acc1"\ncolumns = 64\n'
        '[[tmem]]\nname = "sfa"\ncolumns = 32\n'
        '[[tmem_alias]]\nphases = [["acc0"], ["acc1", "sfa"]]\n'
    )
    smem, tmem = spec.plans()
    assert smem is None
    assert tmem.data_total == 128 and tmem.groups[0].phase_sizes == (128, 96)


def test_pipeline_group_barriers_per_stage_form():
    a = parse_layout_text('[[pipeline_group]]\nname = "g"\nstages = 3\nbarriers_per_stage = 4\n')
    b = parse_layout_text('[[pipeline_group]]\nname = "g"\nstages = 3\nmembers = 3\n')
    assert a.plans()[0].barrier_bytes == b.plans()[0].barrier_bytes == 4 * 3 * 16


def test_spec_is_frozen():
    spec = parse_layout_text('[[smem]]\nname = "a"\nsize = 4\n')
    with pytest.raises(AttributeError):
        spec.arch = "sm_90"  # type: ignore[misc]


def test_lazy_public_name():
    assert smemviz.load_layout is load_layout


# -- errors: the key, the line, the column ------------------------------------------------------

TOML_ERRORS = [
    # (text, key, line, fragment of the message)
    (
        '[[smem]]\nname = "a"\nsize = 64\n\n[[smem]]\nname = "b"\nsize = 64\nalignment = 8\n',
        "smem[1].alignment",
        8,
        "did you mean 'align'",
    ),
    ('arch = "sm_90a"\nbogus = 1\n', "bogus", 2, "unknown key 'bogus'"),
    ('[[smem]]\nname = "a"\nsize = -4\n', "smem[0].size", 3, "size_bytes must be >= 0"),
    ('[[smem]]\nname = "a"\nsize = 64\nalign = 48\n', "smem[0].align", 4, "power of two"),
    ('[[smem]]\nname = "a"\nsize = 1.5\n', "smem[0].size", 3, "expected an integer"),
    ('[[smem]]\nname = "a"\nsize = true\n', "smem[0].size", 3, "expected an integer"),
    ('[[smem]]\nname = "a"\ndtype = "bf17"\ncount = 4\n', "smem[0].dtype", 3, "unknown dtype name 'bf17'"),
    ('[[smem]]\nname = "a"\n', "smem[0]", 1, "needs 'size'"),
    ("[[smem]]\nsize = 4\n", "smem[0]", 1, "missing required key 'name'"),
    (
        '[[smem]]\nname = "a"\nsize = 4\n[[smem]]\nname = "a"\nsize = 8\n',
        "smem[1].name",
        5,
        "duplicate [[smem]] name 'a'",
    ),
    ('arch = "sm_42"\n', "arch", 1, "unknown architecture 'sm_42'"),
    ("version = 2\n", "version", 1, "unsupported layout file version 2"),
    ('tmem_ptr = "slot"\n[[smem]]\nname = "a"\nsize = 4\n', "tmem_ptr", 1, "'slot' is not an [[smem]] entry"),
    ('tmem_ptr = "a"\n[[smem]]\nname = "a"\nsize = 2\n', "tmem_ptr", 1, "must hold a 32-bit address"),
    (
        '[[smem]]\nname = "a"\nsize = 4\n[[smem_alias]]\nphases = [["a"], ["b"]]\n',
        "smem_alias[0].phases[1][0]",
        5,
        "'b' is not an [[smem]] entry",
    ),
    (
        '[[smem]]\nname = "a"\nsize = 4\n[[smem_alias]]\nphases = [["a"]]\n',
        "smem_alias[0].phases",
        5,
        "at least 2 phases",
    ),
    (
        '[[smem]]\nname = "a"\nsize = 4\n[[smem]]\nname = "b"\nsize = 4\n'
        '[[smem_alias]]\nphases = [["a"], ["b"]]\n[[smem_alias]]\nphases = [["a"], ["b"]]\n',
        "smem_alias[1].phases",
        10,
        "already in another alias group",
    ),
    ('[[smem_alias]]\nphases = "a"\n', "smem_alias[0].phases", 2, "expected a list of phases"),
    ('[[pipeline]]\nname = "p"\nstages = 0\n', "pipeline[0].stages", 3, "positive integer"),
    (
        '[[pipeline]]\nname = "p"\nstages = 2\n[[pipeline_group]]\nname = "p"\nstages = 2\nmembers = 1\n',
        "pipeline_group[0].name",
        5,
        "duplicate pipeline name 'p'",
    ),
    ('[[pipeline_group]]\nname = "g"\nstages = 2\n', "pipeline_group[0]", 1, "exactly one of 'members'"),
    ('[[tmem]]\nname = "acc"\ncolumns = 0\n', "tmem[0].columns", 3, "num_columns must be >= 1"),
    ('[[tmem]]\nname = "acc"\n', "tmem[0]", 1, "missing required key 'columns'"),
    ("smem = 3\n", "smem", 1, "expected an array of tables"),
]


@pytest.mark.parametrize("text,key,line,fragment", TOML_ERRORS)
def test_toml_errors_name_the_key_and_line(text, key, line, fragment):
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(text, format="toml", source="kernel.toml")
    err = info.value
    assert err.key == key
    assert err.line == line
    assert fragment in err.message
    assert str(err).startswith(f"kernel.toml:{line}:")


def _json_of(toml_text: str) -> dict:
    import tomllib

    return tomllib.loads(toml_text)


@pytest.mark.parametrize("text,key,line,fragment", TOML_ERRORS)
def test_the_same_errors_in_json_name_the_same_key(text, key, line, fragment):
    doc = _json_of(text)
    body = json.dumps(doc, indent=2)
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(body, format="json", source="kernel.json")
    err = info.value
    assert err.key == key and fragment in err.message
    # the reported position holds the key named (or the entry that lacks one)
    assert err.line is not None
    lines = body.splitlines()
    last = [p for p in key.replace("]", "").replace("[", ".").split(".") if p][-1]
    at = lines[err.line - 1][err.column - 1 :]
    if last.isdigit():  # an array element: the value starts there
        assert at[0] in '{["'
    else:
        assert at.startswith(f'"{last}"')


def test_toml_syntax_error_has_line_and_column():
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text('arch = "sm_90a"\n[[smem]]\nname = "a"\nsize = = 4\n', source="k.toml")
    assert (info.value.line, info.value.column) == (4, 8)
    assert "TOML syntax error" in str(info.value)


def test_toml_error_at_end_of_file_points_at_the_end():
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text('arch = "sm_90a"\nname = ', source="k.toml")
    assert (info.value.line, info.value.column) == (2, 8)
    assert "end of file" in info.value.message


def test_json_syntax_error_has_line_and_column():
    text = '{\n  "smem": [\n    {"name": "a", "size": 4,}\n  ]\n}\n'
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text(text, format="json", source="k.json")
    assert info.value.line == 3 and info.value.column == 29
    assert str(info.value).startswith("k.json:3:29: JSON syntax error")


def test_json_duplicate_keys_are_refused_like_toml():
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text('{"arch": "sm_90a",\n "arch": "sm_100a"}', format="json", source="k.json")
    assert str(info.value) == "k.json:2:2: duplicate key 'arch' in one object"


def test_json_rejects_nan_and_non_objects():
    with pytest.raises(LayoutFileError, match="NaN"):
        parse_layout_text('{"smem": [{"name": "a", "size": NaN}]}', format="json")
    with pytest.raises(LayoutFileError, match="expected a table"):
        parse_layout_text("[1, 2]", format="json")


def test_load_layout_file_level_errors(tmp_path):
    with pytest.raises(LayoutFileError, match="unsupported layout file extension '.yaml'"):
        load_layout(tmp_path / "k.yaml")
    with pytest.raises(LayoutFileError, match="cannot read the file"):
        load_layout(tmp_path / "missing.toml")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(LayoutFileError, match="not UTF-8") as info:
        load_layout(bad)
    assert info.value.line == 1


def test_names_are_kept_verbatim(tmp_path):
    name = "</script><script>window.__pwned=1</script>"
    spec = parse_layout_text(json.dumps({"smem": [{"name": name, "size": 64}]}), format="json")
    assert spec.plans()[0].regions[0].name == name
