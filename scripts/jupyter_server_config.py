"""Jupyter server settings for scripts/lab.sh: notebooks under notebooks/ are
saved without outputs, so running them never changes the committed files.

The outputs stay on screen; only what is written to disk is stripped. A copy
saved elsewhere (File > Save Notebook As... outside notebooks/) keeps them.
"""

from __future__ import annotations

from typing import Any

STRIPPED_FOLDER = "notebooks/"  # relative to the server's root, the repository


def strip_outputs(model: dict[str, Any], path: str, **_: Any) -> None:
    """Clear outputs and execution counts of a notebook saved under notebooks/ (in place)."""
    if model.get("type") != "notebook" or not path.lstrip("/").startswith(STRIPPED_FOLDER):
        return
    content = model.get("content") or {}
    for cell in content.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    metadata = content.get("metadata") or {}
    metadata.pop("widgets", None)  # widget state is output too


def _configure(c: Any) -> None:
    c.ContentsManager.pre_save_hook = strip_outputs  # every contents manager class, the async default too


if "get_config" in globals():  # read by Jupyter as a config file
    _configure(get_config())  # type: ignore[name-defined]  # noqa: F821
