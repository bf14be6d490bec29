"""``smemviz capture FILE.py:FUNCTION`` on a file that cannot be loaded: one error line, exit 2."""

from __future__ import annotations

import pytest

from smemviz.cli import main


def _run(tmp_path, capsys, text: str) -> tuple[int, str, str]:
    script = tmp_path / "broken.py"
    script.write_text(text)
    code = main(["capture", f"{script}:build"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_syntax_error_names_the_file_and_line(tmp_path, capsys):
    code, out, err = _run(tmp_path, capsys, "def build():\n    return 1\n\nx = (1,\n")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("smemviz: error: ")
    assert "broken.py:4: syntax error:" in err
    assert "Traceback" not in err


def test_an_import_that_raises_names_the_file_and_the_error(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, "import no_such_module_for_smemviz\n\ndef build():\n    pass\n")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("smemviz: error: ")
    assert "broken.py: importing it raised ModuleNotFoundError" in err and "no_such_module_for_smemviz" in err


def test_a_file_raising_at_import_gives_its_line(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, "\n\nraise ValueError('bad config\\nsecond line')\n")
    assert code == 2
    assert err.count("\n") == 1
    assert "importing it raised ValueError: bad config (at broken.py:3)" in err


@pytest.mark.parametrize("exit_code", [0, 3])
def test_a_file_that_exits_at_import_is_refused_not_obeyed(tmp_path, capsys, exit_code):
    code, _, err = _run(tmp_path, capsys, f"import sys\nsys.exit({exit_code})\n")
    assert code == 2
    assert "importing it raised SystemExit" in err
