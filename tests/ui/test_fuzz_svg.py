"""Fuzzing the static SVG export with names of any text: valid XML, no raw
control characters (kaleido and Chromium are slow, so a handful of examples)."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest
from hypothesis import given

from ..export.test_fuzz_plans_and_exports import export_text, plans_with_any_names
from ..hostile import RAW_CONTROL, fuzz_settings

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("static_renderer")]


@fuzz_settings(3, long_share=0.002)
@given(plan=plans_with_any_names())
def test_svg_export_of_any_name_is_valid_xml(plan):
    svg = export_text(plan, ".svg")
    ElementTree.fromstring(svg)
    assert not RAW_CONTROL.search(svg)
