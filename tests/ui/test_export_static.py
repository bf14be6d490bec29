"""Static images through kaleido and the system Chromium: each format valid."""

from __future__ import annotations

import struct
import zlib
from xml.etree import ElementTree

import pytest

import smemviz

from ..helpers import EXAMPLES

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("static_renderer")]


@pytest.fixture(scope="module")
def spec():
    return smemviz.load_layout(EXAMPLES / "gemm_sm100.toml")


def decode_png(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the raw scanlines of an 8-bit PNG (checks every chunk CRC)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color]
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + width * channels)
    return width, height, raw


def test_svg_parses_and_names_the_regions(tmp_path, spec):
    out = smemviz.export(spec, tmp_path / "l.svg")
    root = ElementTree.parse(out).getroot()
    assert root.tag.endswith("svg")
    text = " ".join(t for t in root.itertext())
    for name in ("smem_a", "smem_b", "epi_c", "acc0", "acc1"):
        assert name in text


def test_png_decodes_at_the_requested_size(tmp_path, spec):
    out = smemviz.export(spec, tmp_path / "l.png", width=800, height=500, scale=2)
    width, height, raw = decode_png(out.read_bytes())
    assert (width, height) == (1600, 1000)
    assert len(set(raw)) > 8  # drawn, not a blank page


def test_pdf_has_header_and_trailer(tmp_path, spec):
    data = smemviz.export(spec, tmp_path / "l.pdf").read_bytes()
    assert data.startswith(b"%PDF-")
    assert b"%%EOF" in data[-1024:]


def test_which_draws_one_map(tmp_path, spec):
    smem_only = " ".join(ElementTree.parse(smemviz.export(spec, tmp_path / "s.svg", which="smem")).getroot().itertext())
    assert "smem_a" in smem_only and "acc0" not in smem_only
    tmem_only = " ".join(ElementTree.parse(smemviz.export(spec, tmp_path / "t.svg", which="tmem")).getroot().itertext())
    assert "acc0" in tmem_only and "smem_a" not in tmem_only


def test_a_given_figure_is_drawn_as_is(tmp_path, spec):
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[1, 2], y=["tuned_in_the_explorer", "b"], orientation="h"))
    out = smemviz.export(spec, tmp_path / "f.svg", figure=fig)
    assert "tuned_in_the_explorer" in out.read_text()


def test_hostile_names_stay_text_in_svg(tmp_path):
    import json

    from smemviz.sources.layout_file import parse_layout_text

    name = '<img src=x onerror="alert(1)">'
    spec = parse_layout_text(json.dumps({"smem": [{"name": name, "size": 65536}]}), format="json")
    root = ElementTree.parse(smemviz.export(spec, tmp_path / "h.svg")).getroot()
    assert not [e for e in root.iter() if e.tag.endswith("img")]
    assert not [e for e in root.iter() if any(k.lower().startswith("on") for k in e.attrib)]
    assert name in " ".join(root.itertext())


def test_a_reused_browser_tab_draws_each_figure_afresh(tmp_path, spec, monkeypatch):
    """The warm renderer reuses its page between images (refreshing it every
    few); each image must show its own layout only."""
    from smemviz._compat import kaleido as kaleido_compat
    from smemviz._export import _static

    _static.stop_renderer()  # the next export starts a renderer that reloads its tab every 3 images
    monkeypatch.setattr(kaleido_compat, "RELOAD_EVERY", 3)
    other = smemviz.SmemAllocator()
    other.add(smemviz.SmemAllocation("only_in_other", 150_000))
    other.compute_layout()
    for i in range(4):
        a = " ".join(ElementTree.parse(smemviz.export(spec, tmp_path / f"a{i}.svg", which="smem")).getroot().itertext())
        b = " ".join(ElementTree.parse(smemviz.export(other, tmp_path / f"b{i}.svg")).getroot().itertext())
        assert "smem_a" in a and "only_in_other" not in a
        assert "only_in_other" in b and "smem_a" not in b
    assert smemviz.export(spec, tmp_path / "after.pdf").read_bytes().startswith(b"%PDF-")
