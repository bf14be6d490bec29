"""Jupyter server settings for scripts/lab.sh: notebooks under notebooks/ are
saved as committed, so running them never changes the files git tracks.

The outputs stay on screen; only what is written to disk is stripped: outputs,
execution counts, widget state and the Python version the kernel reports (the
one machine-specific field of ``language_info``; the rest, and the kernelspec,
are what notebooks/build_notebooks.py writes). A copy saved elsewhere (File >
Save Notebook As... outside notebooks/) keeps them.

The hook is the contents manager's own default rather than a configured
``pre_save_hook`` value: a configured value is validated again each time the
server reloads its configuration, which warned ``Overriding existing
pre_save_hook`` at every start.
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
    language = metadata.get("language_info")
    if isinstance(language, dict):
        language.pop("version", None)  # the kernel's Python, which differs from machine to machine


def stripping_contents_manager() -> type:
    """The server's default contents manager with :func:`strip_outputs` as its pre-save hook."""
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from traitlets import default

    class StrippingContentsManager(AsyncLargeFileManager):
        """Saves notebooks under notebooks/ without outputs (scripts/jupyter_server_config.py)."""

        @default("pre_save_hook")
        def _strip_outputs_by_default(self) -> Any:
            return strip_outputs

    return StrippingContentsManager


def _configure(c: Any) -> None:
    c.ServerApp.contents_manager_class = stripping_contents_manager()


if "get_config" in globals():  # read by Jupyter as a config file
    _configure(get_config())  # type: ignore[name-defined]  # noqa: F821
