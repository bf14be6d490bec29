"""What a newcomer trips over in the docs (issue 23, point 10): the layout-file
schema names every top-level key, export() says where a figure goes, what the
README writes is ignored by git, and commands in the repository name no one
machine's paths."""

from __future__ import annotations

import re
import subprocess

import pytest

from smemviz import SmemAllocation, SmemAllocator
from smemviz.sources.layout_file._schema import TOP_KEYS

from .helpers import ROOT

TABLE_KEY = re.compile(r"^\| `(?:\[\[)?([a-z_]+)(?:\]\])?` \|", re.M)


def test_the_schema_table_lists_every_top_level_key():
    text = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    listed = set(TABLE_KEY.findall(text))
    missing = [k for k in TOP_KEYS if k not in listed]
    assert not missing, f"examples/README.md's schema table lacks {missing}"


def test_export_of_a_figure_names_the_figure_argument(tmp_path):
    pytest.importorskip("plotly")
    import smemviz

    def one(size):
        s = SmemAllocator()
        s.add(SmemAllocation("a", size))
        s.compute_layout()
        return s

    fig = smemviz.experimental.compare_figure(one(1024), one(2048))
    with pytest.raises(TypeError, match=r"figure=") as info:
        smemviz.export(fig, tmp_path / "cmp.svg")
    assert "export(layout" in str(info.value)
    assert not (tmp_path / "cmp.svg").exists()


def _exported_names(markdown: str) -> list[str]:
    code = "\n".join(re.findall(r"^```python\n(.*?)^```", markdown, re.S | re.M))
    return re.findall(r"export\([^\n]*?\"([^\"/]+\.(?:html|svg|png|pdf|json|md))\"", code)


def test_what_the_readme_snippets_write_is_ignored_by_git():
    names = _exported_names((ROOT / "README.md").read_text(encoding="utf-8"))
    assert names, "the README's snippets export something"
    for name in [*names, "smemviz-layout.html", "smemviz-lifetimes.svg"]:  # + the explorer's default stems
        done = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT)
        assert done.returncode == 0, f"{name}, written in the repository root, is not ignored by git"


MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|home|Users|root|tmp)/[\w.-]+\S*")


def test_commands_in_the_repository_name_no_machine_paths():
    found = []
    for path in [
        *ROOT.glob("*.md"),
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("results/*.md"),
        *ROOT.glob("examples/*.md"),
        *ROOT.glob("benchmarks/*.md"),
    ]:
        for block in re.findall(r"^```(?:bash|sh|console)\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M):
            found += [(path.name, m) for m in MACHINE_PATH.findall(block)]
    assert not found, found
