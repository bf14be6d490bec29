"""What a notebook shows for ``bank_conflicts(...)`` and an access report: a short HTML
table of the numbers and the 32-bank picture, not the dataclass's repr."""

from html.parser import HTMLParser

import pytest

import smemviz
from smemviz.analysis.banks._model import conflicts_html


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._grid = False
        self._in_td = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._grid = ("class", "g") in attrs
        elif tag == "tr" and self._grid:
            self.rows.append([])
        elif tag == "td" and self._grid:
            self._in_td = True
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag == "td":
            self._in_td = False

    def handle_data(self, data):
        if self._in_td:
            self.rows[-1][-1] += data


def grid_of(html: str) -> list[list[str]]:
    parser = _Cells()
    parser.feed(html)
    return [row for row in parser.rows if row]  # the header row holds th only


def test_a_conflicting_access_shows_its_numbers_and_banks():
    result = smemviz.bank_conflicts("ld.shared.b32", [lane * 128 for lane in range(32)])
    html = result._repr_html_()
    assert "<script" not in html and "plotly" not in html
    assert "32 wavefronts (ideal 1), 31 conflicts; 32-way" in html
    grid = grid_of(html)
    assert len(grid) == 32 and all(len(row) == 32 for row in grid)  # 32 wavefronts x 32 banks
    assert [row[0] for row in grid] == [str(lane) for lane in range(32)]  # every lane in bank 0, one per wavefront
    assert all(cell == "" for row in grid for cell in row[1:])
    assert html.count('<tr class="r">') == 31  # the replayed wavefronts are marked
    assert len(html) < 20_000


def test_a_conflict_free_access_is_one_row_per_wavefront():
    result = smemviz.bank_conflicts("ld.shared.v4.b32", [lane * 16 for lane in range(32)])
    grid = grid_of(result._repr_html_())
    assert len(grid) == 4 and grid[0][:5] == ["0", "0", "0", "0", "1"]
    assert "conflict-free" in result._repr_html_() and 'class="r"' not in result._repr_html_()


def test_an_access_report_shows_its_worst_instruction():
    from smemviz import SmemAllocation, SmemAllocator
    from smemviz.analysis.banks import analyze_access, stmatrix_atom

    s = SmemAllocator()
    s.add(SmemAllocation("c", 128 * 64 * 2, 1024, dtype="bf16", count=128 * 64))
    s.compute_layout()
    report = analyze_access(s.plan, "c", stmatrix_atom(4), layout="(128,64):(64,1)", warps=(4, 1), swizzle=None)
    html = conflicts_html(report)
    assert report.summary() in html.replace("&#x27;", "'")
    assert f"<span>instructions</span> <b>{report.instructions}</b>" in html
    assert len(grid_of(html)) == report.worst.wavefronts
    assert report._repr_html_() == html  # what a notebook shows for the report


def test_text_is_escaped_and_other_values_are_refused():
    result = smemviz.bank_conflicts("ld.shared.b32", [lane * 4 for lane in range(32)])
    html = conflicts_html(result, title="<b>mine</b>")
    assert "&lt;b&gt;mine&lt;/b&gt;" in html
    with pytest.raises(TypeError, match="BankConflicts"):
        conflicts_html(42)
