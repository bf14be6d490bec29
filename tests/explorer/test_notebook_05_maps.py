"""Notebook 05 sets its Hopper and Blackwell maps side by side in an HBox: each is drawn
460 px wide, so the two fit a notebook's output area (about 1,000 px in JupyterLab at a
1,280 px window) where two 560 px maps ran past its edge."""

from __future__ import annotations

import json
import re

from ..helpers import ROOT

OUTPUT_AREA_PX = 1000  # JupyterLab's output area at a 1,280 px window, less the prompt


def test_the_side_by_side_maps_fit_the_notebook():
    nb = json.loads((ROOT / "notebooks" / "05_tuning_a_real_gemm.ipynb").read_text(encoding="utf-8"))
    cell = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code" and "widgets.HBox([go.FigureWidget(fig) for fig in maps])" in "".join(c["source"])
    )
    widths = [int(w) for w in re.findall(r"update_layout\(width=(\d+)", cell)]
    assert widths == [460], cell
    assert 2 * widths[0] + 2 * 16 <= OUTPUT_AREA_PX  # two maps and the HBox's margins
