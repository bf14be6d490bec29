"""The ``smemviz`` command line end to end: exit codes, output, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from smemviz.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GEMM = str(EXAMPLES / "gemm_sm100.toml")
ATTN = str(EXAMPLES / "hopper_fa.json")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# -- check -------------------------------------------------------------------------------


def test_check_fits(capsys):
    code, out, err = run(capsys, "check", GEMM, "--arch", "sm_100a")
    assert code == 0 and err == ""
    assert "SMEM layout needs 196,776 B: fits the sm_100" in out
    assert "TMEM layout needs 512 columns: fits" in out


def test_check_uses_the_files_arch_by_default(capsys):
    code, out, _ = run(capsys, "check", ATTN)
    assert code == 0 and "sm_90" in out


def test_check_does_not_fit_exits_1_with_the_overshoot(capsys):
    code, out, err = run(capsys, "check", GEMM, "--arch", "sm_120")
    assert code == 1
    assert "exceeds the sm_120 per-block limit of 101,376 B by 95,400 B" in err
    assert "sm_120 has no TMEM, but the layout needs 512 columns" in err
    assert err.startswith("smemviz: error: ")


def test_check_smem_only_on_hopper(capsys):
    code, _, err = run(capsys, "check", GEMM, "--arch", "sm_90a")
    assert code == 1 and "sm_90 has no TMEM" in err
    code, out, _ = run(capsys, "check", GEMM, "--arch", "sm_90a", "--which", "smem")
    assert code == 0 and "fits the sm_90" in out


def test_check_needs_an_arch(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CUTE_DSL_ARCH", raising=False)  # the DSL's own arch would stand in for --arch
    f = tmp_path / "k.toml"
    f.write_text('[[smem]]\nname = "a"\nsize = 64\n')
    code, _, err = run(capsys, "check", str(f))
    assert code == 2 and "pass --arch" in err


def test_tmem_beyond_512_columns_does_not_fit(tmp_path, capsys):
    f = tmp_path / "k.toml"
    f.write_text('arch = "sm_100a"\n[[tmem]]\nname = "a"\ncolumns = 384\n[[tmem]]\nname = "b"\ncolumns = 256\n')
    code, _, err = run(capsys, "check", str(f))
    assert code == 1 and "640 columns" in err and "by 128" in err


def test_check_reads_an_exported_plan(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert run(capsys, "render", ATTN, "-o", str(out))[0] == 0
    assert json.loads(out.read_text())["schema"] == "smemviz.layout-plan"
    assert run(capsys, "check", str(out), "--arch", "sm_90a")[0] == 0
    code, _, err = run(capsys, "check", str(out), "--arch", "sm_89")
    assert code == 1 and "by 63,536 B" in err


# -- report ----------------------------------------------------------------------------------


def test_report_text(capsys):
    code, out, _ = run(capsys, "report", GEMM)
    assert code == 0
    assert out.startswith("GEMM sm_100a")
    assert "[smem-layout] SMEM Usage Report" in out and "[tmem-layout] TMEM Usage Report" in out
    assert "tma_load.barriers [mbarrier]" in out


def test_report_markdown_and_json(capsys):
    code, md, _ = run(capsys, "report", ATTN, "--format", "md")
    assert code == 0 and "| q_load.barriers | mbarriers |" in md
    code, js, _ = run(capsys, "report", GEMM, "--format", "json", "--which", "tmem")
    data = json.loads(js)
    assert code == 0 and data["memory"] == "tmem" and data["summary"]["tmem_alloc_columns"] == 512


def test_report_arch_override(capsys):
    _, out, _ = run(capsys, "report", ATTN, "--arch", "sm_80")
    assert "sm_80 per-block limit of 166,912 B" in out


# -- render ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ext", [".json", ".md"])
def test_render_text_formats(tmp_path, capsys, ext):
    out = tmp_path / f"l{ext}"
    code, stdout, _ = run(capsys, "render", GEMM, "-o", str(out))
    assert code == 0 and f"wrote {out}" in stdout and out.stat().st_size > 100


def test_render_html(tmp_path, capsys):
    pytest.importorskip("plotly")
    out = tmp_path / "l.html"
    code, _, _ = run(capsys, "render", GEMM, "-o", str(out), "--title", "My kernel")
    page = out.read_text()
    assert code == 0 and "<h1>My kernel</h1>" in page and "smem_a" in page


def test_render_unknown_extension(tmp_path, capsys):
    code, _, err = run(capsys, "render", GEMM, "-o", str(tmp_path / "l.docx"))
    assert code == 2 and "unknown extension '.docx'" in err and ".svg" in err
    assert list(tmp_path.iterdir()) == []


def test_render_which_missing_memory(tmp_path, capsys):
    code, _, err = run(capsys, "render", ATTN, "-o", str(tmp_path / "l.json"), "--which", "tmem")
    assert code == 2 and "no TMEM layout" in err


def test_render_into_a_missing_folder(tmp_path, capsys):
    code, _, err = run(capsys, "render", GEMM, "-o", str(tmp_path / "no" / "l.json"))
    assert code == 3 and "does not exist" in err


def test_render_static_without_a_browser(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-chrome"))
    code, _, err = run(capsys, "render", GEMM, "-o", str(tmp_path / "l.svg"))
    assert code == 3 and "apt-get install chromium" in err
    assert list(tmp_path.iterdir()) == []


# -- bad files: file, position, key; exit 2; no traceback --------------------------------------------

BAD_FILES = [
    ("syntax.toml", 'arch = "sm_90a"\n[[smem]]\nname = "a"\nsize = = 4\n', ":4:8: TOML syntax error"),
    ("syntax.json", '{\n  "smem": [\n    {"name": "a", "size": 4,}\n  ]\n}\n', ":3:29: JSON syntax error"),
    ("unknown.toml", '[[smem]]\nname = "a"\nsize = 4\nalignment = 8\n', ":4:1: smem[0].alignment: unknown key"),
    ("unknown.json", '{"smem": [{"name": "a",\n "size": 4, "algn": 8}]}', ":2:13: smem[0].algn: unknown key"),
    (
        "value.toml",
        '[[smem]]\nname = "a"\nsize = 4\nalign = 3\n',
        ":4:1: smem[0].align: SMEM allocation 'a': alignment",
    ),
    ("value.json", '{"tmem": [{"name": "acc", "columns": -1}]}', ":1:27: tmem[0].columns:"),
    ("type.toml", "arch = 90\n", ":1:1: arch: expected a string"),
    (
        "dup.toml",
        '[[tmem]]\nname = "a"\ncolumns = 32\n[[tmem]]\nname = "a"\ncolumns = 32\n',
        ":5:1: tmem[1].name: duplicate",
    ),
    ("ext.yaml", "smem: []\n", ": unsupported layout file extension '.yaml'"),
]


@pytest.mark.parametrize("name,text,expected", BAD_FILES)
@pytest.mark.parametrize("command", [["check", "--arch", "sm_90a"], ["report"], ["render", "-o", "out.json"]])
def test_bad_files_exit_2_with_file_position_and_key(tmp_path, capsys, monkeypatch, name, text, expected, command):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / name
    f.write_text(text)
    args = [command[0], str(f), *command[1:]]
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.startswith(f"smemviz: error: {f}{expected}")
    assert err.count("\n") == 1
    assert not (tmp_path / "out.json").exists()


def test_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "report", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml: cannot read the file" in err


def test_bad_arguments_exit_2(capsys):
    assert run(capsys, "check", GEMM, "--arch", "sm_42")[0] == 2
    assert run(capsys, "render", GEMM)[0] == 2  # -o is required
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys, "render", GEMM, "-o", "x.png", "--width", "0")[0] == 2


# -- as installed: python -m smemviz and the console script ------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return env


def test_python_dash_m(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "smemviz", "check", GEMM, "--arch", "sm_100a"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert ok.returncode == 0 and "fits the sm_100" in ok.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[[smem]\n")
    fail = subprocess.run(
        [sys.executable, "-m", "smemviz", "report", str(bad)], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert fail.returncode == 2
    assert fail.stderr.startswith(f"smemviz: error: {bad}:1:") and "Traceback" not in fail.stderr


def test_console_script():
    script = shutil.which("smemviz", path=str(Path(sys.executable).parent)) or shutil.which("smemviz")
    if script is None:
        pytest.skip("the smemviz console script is not installed")
    done = subprocess.run(
        [script, "check", GEMM, "--arch", "sm_120"], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert done.returncode == 1 and "exceeds the sm_120 per-block limit" in done.stderr
    version = subprocess.run([script, "--version"], capture_output=True, text=True, env=_env(), timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("smemviz ")


@pytest.mark.browser
def test_render_svg_end_to_end(tmp_path):
    pytest.importorskip("kaleido")
    from smemviz._export import BrowserNotFoundError, find_browser

    try:
        find_browser()
    except BrowserNotFoundError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "l.svg"
    done = subprocess.run(
        [sys.executable, "-m", "smemviz", "render", GEMM, "-o", str(out), "--which", "smem"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    from xml.etree import ElementTree

    assert "smem_a" in " ".join(ElementTree.parse(out).getroot().itertext())
