"""scripts/lab.sh's Jupyter settings: notebooks under notebooks/ are saved
without outputs; the explorer's default export files are ignored by git."""

from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest

from .helpers import ROOT

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupyter_server")


def _config_module():
    spec = importlib.util.spec_from_file_location("lab_config", ROOT / "scripts" / "jupyter_server_config.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook_with_output() -> dict:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells = [cell, nbformat.v4.new_markdown_cell("text")]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return json.loads(nbformat.writes(nb))


def test_saving_under_notebooks_strips_outputs_and_elsewhere_keeps_them(tmp_path):
    """The config file as Jupyter reads it, and the contents manager it gives the server
    (JupyterLab's default one, with the hook)."""
    import asyncio

    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("jupyter_server_config.py", path=str(ROOT / "scripts")).load_config()
    (tmp_path / "notebooks").mkdir()
    assert issubclass(config.ServerApp.contents_manager_class, AsyncLargeFileManager)
    manager = config.ServerApp.contents_manager_class(root_dir=str(tmp_path), config=config)
    for path in ("notebooks/a.ipynb", "scratch.ipynb"):
        asyncio.run(manager.save({"type": "notebook", "format": "json", "content": _notebook_with_output()}, path))
    stripped = json.loads((tmp_path / "notebooks" / "a.ipynb").read_text())
    kept = json.loads((tmp_path / "scratch.ipynb").read_text())
    assert stripped["cells"][0]["outputs"] == [] and stripped["cells"][0]["execution_count"] is None
    assert "".join(stripped["cells"][0]["source"]) == "print(1)" and "widgets" not in stripped["metadata"]
    assert kept["cells"][0]["outputs"] and kept["cells"][0]["execution_count"] == 3


def test_the_hook_leaves_other_files_alone():
    model = {"type": "file", "content": "x"}
    _config_module().strip_outputs(model, "notebooks/a.txt")
    assert model == {"type": "file", "content": "x"}


def test_lab_script_roots_jupyterlab_at_the_repository():
    script = (ROOT / "scripts" / "lab.sh").read_text()
    assert '--ServerApp.root_dir="$PWD"' in script and "jupyter_server_config.py" in script
    assert "notebooks/01_quickstart.ipynb" in script


def test_explorer_exports_in_notebooks_are_ignored():
    for name in ("smemviz-layout.html", "smemviz-layout.svg", "smemviz-layout.json"):
        done = subprocess.run(["git", "check-ignore", "-q", f"notebooks/{name}"], cwd=ROOT)
        assert done.returncode == 0, name
