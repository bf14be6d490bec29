"""Fuzzing layout files and the command line that reads them.

Every document, however hostile (wrong types, extreme numbers, NaN, deep
nesting, duplicate keys and names, unknown keys, non-UTF-8 bytes, very long
strings), is either a valid layout or one :class:`LayoutFileError` line naming
the file (and, for JSON, the line and column of the key); the command line
exits 0, 1 or 2 with one error line, never a traceback, exit 3, a hang or a
partial output file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import event as _event
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from smemviz import CapacityError
from smemviz.analysis._report import markdown_report, text_report
from smemviz.cli import main
from smemviz.layout import plan_from_dict
from smemviz.sources.layout_file import LayoutFileError, LayoutSpec, load_layout, parse_layout_text

from ..hostile import (
    RAW_CONTROL,
    RAW_CONTROL_OR_NEWLINE,
    deep_text,
    fuzz_settings,
    layout_documents,
    mutated,
    no_hang,
    to_json,
    to_toml,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = {p.suffix[1:]: p.read_bytes() for p in sorted(EXAMPLES.glob("*")) if p.suffix in (".toml", ".json")}


def event(text: str) -> None:
    """Count an outcome in hypothesis's statistics (ignored outside a fuzz test)."""
    try:
        _event(text)
    except InvalidArgument:
        pass


def check_error(exc: LayoutFileError, source: str, fmt: str) -> None:
    event(f"refused ({'with' if exc.line is not None else 'without'} a line)")
    text = str(exc)
    assert text.startswith(source), text
    assert not RAW_CONTROL_OR_NEWLINE.search(text), text  # one line, nothing a terminal would obey
    if exc.key and fmt == "json" and not text.startswith(f"{source}: "):
        assert exc.line is not None


def check_valid(spec: LayoutSpec) -> None:
    event("valid layout")
    try:
        plans = spec.plans()
    except CapacityError:  # TMEM beyond 512 columns: a fact about the layout, not a bad file
        return
    for plan in plans:
        if plan is None:
            continue
        for text in (text_report(plan), markdown_report(plan)):
            assert not RAW_CONTROL.search(text)
        assert plan_from_dict(json.loads(plan.to_json())) == plan  # what smemviz computes, it reads back


def parse_outcome(text: str, fmt: str, source: str) -> None:
    with no_hang():
        try:
            spec = parse_layout_text(text, format=fmt, source=source)  # type: ignore[arg-type]
        except LayoutFileError as exc:
            check_error(exc, source, fmt)
            return
    check_valid(spec)


@fuzz_settings(150)
@given(doc=layout_documents(), fmt=st.sampled_from(["toml", "json"]))
def test_generated_documents_are_valid_or_one_clean_error(doc, fmt):
    text = to_toml(doc) if fmt == "toml" else to_json(doc)
    parse_outcome(text, fmt, f"fuzz.{fmt}")


@fuzz_settings(60, long_share=0.1)
@given(data=st.data(), fmt=st.sampled_from(["toml", "json"]))
def test_deeply_nested_documents_are_refused(data, fmt):
    text = data.draw(deep_text(fmt))
    with no_hang(), pytest.raises(LayoutFileError, match="nested more than") as info:
        parse_layout_text(text, format=fmt, source=f"deep.{fmt}")
    check_error(info.value, f"deep.{fmt}", fmt)


@st.composite
def _file_bytes(draw):
    fmt = draw(st.sampled_from(["toml", "json"]))
    if draw(st.booleans()) and fmt in EXAMPLE_FILES:
        original = EXAMPLE_FILES[fmt]
    else:
        doc = draw(layout_documents())
        original = (to_toml(doc) if fmt == "toml" else to_json(doc)).encode("utf-8", "surrogatepass")
    return fmt, draw(mutated(original))


@fuzz_settings(150)
@given(case=_file_bytes())
def test_mutated_files_are_valid_or_one_clean_error(case):
    fmt, data = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"mutant.{fmt}"
        path.write_bytes(data)
        with no_hang():
            try:
                spec = load_layout(path)
            except LayoutFileError as exc:
                check_error(exc, str(path), fmt)
                return
        check_valid(spec)


# -- the command line, in process --------------------------------------------------------


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), no_hang(60):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own exits
            code = exc.code  # type: ignore[assignment]
    return code, out.getvalue(), err.getvalue()


def check_cli(path: Path, argv: list[str], output: Path | None = None) -> int:
    code, out, err = run_main(argv)
    event(f"{argv[0]} exit {code}")
    assert "Traceback" not in out + err
    assert code in (0, 1, 2), (code, err)
    assert not RAW_CONTROL.search(out + err)
    if code == 2:
        assert err.startswith(f"smemviz: error: {path}"), err
        assert err.count("\n") == 1 and err.endswith("\n"), err
    if output is not None:
        leftovers = sorted(p.name for p in output.parent.iterdir() if p.name not in (path.name, output.name))
        assert leftovers == [], leftovers  # no temporary files left behind
        if code == 0:
            assert output.stat().st_size > 0
            if output.suffix == ".json":
                json.loads(output.read_text())
        else:
            assert not output.exists()
    return code


@st.composite
def _cli_case(draw):
    fmt, data = draw(_file_bytes()) if draw(st.booleans()) else (None, None)
    if data is None:
        fmt = draw(st.sampled_from(["toml", "json"]))
        doc = draw(layout_documents())
        data = (to_toml(doc) if fmt == "toml" else to_json(doc)).encode("utf-8", "surrogatepass")
    command = draw(st.sampled_from(["check", "report", "render"]))
    extra: list[str] = []
    if draw(st.booleans()):
        extra += ["--arch", draw(st.sampled_from(["sm_90a", "sm_100a", "sm_120"]))]
    if draw(st.integers(0, 3)) == 0:
        extra += ["--which", draw(st.sampled_from(["smem", "tmem"]))]
    if command == "report":
        extra += ["--format", draw(st.sampled_from(["text", "md", "json"]))]
    out_ext = draw(st.sampled_from([".json", ".md"])) if command == "render" else None
    return fmt, data, command, extra, out_ext


@fuzz_settings(100, long_share=0.25)
@given(case=_cli_case())
def test_cli_exits_0_1_or_2_with_one_clean_line(case):
    fmt, data, command, extra, out_ext = case
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"layout.{fmt}"
        path.write_bytes(data)
        output = Path(folder) / f"out{out_ext}" if out_ext else None
        argv = [command, str(path), *extra] + (["-o", str(output)] if output else [])
        check_cli(path, argv, output)


def test_cli_html_render_of_a_hostile_file_is_all_or_nothing(tmp_path):
    pytest.importorskip("plotly")
    good = tmp_path / "good.toml"
    good.write_text('name = "t"\n[[smem]]\nname = "a"\nsize = 64\n')
    assert check_cli(good, ["render", str(good), "-o", str(tmp_path / "good.html")], tmp_path / "good.html") == 0
    (tmp_path / "other").mkdir()
    bad = tmp_path / "other" / "bad.json"
    bad.write_text('{"smem": [{"name": "a\\u001b[31m", "size": 64}]}')
    out = bad.with_suffix(".html")
    assert check_cli(bad, ["render", str(bad), "-o", str(out)], out) == 2


# -- a few real processes ------------------------------------------------------------------------

SUBPROCESS_CASES = {
    "deep.json": b"[" * 20000 + b"]" * 20000,
    "deep.toml": b"name = " + b"[" * 20000 + b"]" * 20000 + b"\n",
    "latin1.toml": 'name = "caf\xe9"\n'.encode("latin-1"),
    "control.json": b'{"smem": [{"name": "\\u001b]0;pwned\\u0007", "size": 64}]}',
    "nan.json": b'{"smem": [{"name": "a", "size": NaN}]}',
    "huge.json": b'{"smem": [{"name": "a", "size": ' + b"9" * 6000 + b"}]}",
    "dupes.json": b'{"smem": [{"name": "a", "size": 8, "size": 16}]}',
}


@pytest.mark.parametrize("name", sorted(SUBPROCESS_CASES))
def test_cli_process_refuses_hostile_files_with_exit_2(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(SUBPROCESS_CASES[name])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-m", "smemviz", "check", str(path), "--arch", "sm_90a"],
        capture_output=True,
        timeout=120,
        env=env,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert err.startswith(f"smemviz: error: {path}") and err.count("\n") == 1
    assert "Traceback" not in err and not RAW_CONTROL.search(err)
