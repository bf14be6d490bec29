"""Running a notebook and saving it in scripts/lab.sh's JupyterLab leaves the committed file
unchanged: the save goes through the server's contents manager with the project's pre-save
hook, and the notebook as the lab sends it (outputs, execution counts, widget state, the
kernel's own kernelspec and language_info) is written back byte for byte as committed."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import shutil
import subprocess
import warnings

import pytest

from .helpers import ROOT

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupyter_server")
ipykernel = pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _lab_config():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("jupyter_server_config.py", path=str(ROOT / "scripts")).load_config()


def _as_the_lab_sends_it(path) -> dict:
    """The notebook after Run All, as JupyterLab's save sends it: the running kernel's
    kernelspec and language_info (its Python version included), outputs, counts, widgets."""
    from ipykernel.ipkernel import IPythonKernel
    from ipykernel.kernelspec import KERNEL_NAME, get_kernel_dict

    nb = json.loads(path.read_text(encoding="utf-8"))
    spec = get_kernel_dict()
    nb["metadata"]["kernelspec"] = {
        "display_name": spec["display_name"],
        "language": spec["language"],
        "name": KERNEL_NAME,
    }
    nb["metadata"]["language_info"] = copy.deepcopy(IPythonKernel.language_info)
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
    for n, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = n + 1
            cell["outputs"] = [{"name": "stdout", "output_type": "stream", "text": [f"{n}\n"]}]
    return nb


def test_saving_every_notebook_from_the_lab_leaves_it_as_committed(tmp_path):
    config = _lab_config()
    manager_class = config.ServerApp.contents_manager_class
    (tmp_path / "notebooks").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Overriding existing pre_save_hook" was one per server start
        manager = manager_class(root_dir=str(tmp_path), config=config)
        manager.update_config(config)  # as the server does again once its extensions load
    for path in NOTEBOOKS:
        model = {"type": "notebook", "format": "json", "content": _as_the_lab_sends_it(path)}
        asyncio.run(manager.save(model, f"notebooks/{path.name}"))
        saved = tmp_path / "notebooks" / path.name
        diff = subprocess.run(
            ["git", "diff", "--no-index", "--stat", "--exit-code", str(path), str(saved)],
            capture_output=True,
            text=True,
        )
        assert diff.returncode == 0, f"{path.name} changes on save:\n{diff.stdout}"


def test_the_kernelspec_is_the_one_the_labs_kernel_writes():
    from ipykernel.kernelspec import get_kernel_dict

    for path in NOTEBOOKS:
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert meta["kernelspec"]["display_name"] == get_kernel_dict()["display_name"], path.name
        assert "version" not in meta["language_info"]


def test_the_server_uses_the_stripping_manager_without_a_configured_hook():
    config = _lab_config()
    assert "pre_save_hook" not in config.get("ContentsManager", {})
    manager = config.ServerApp.contents_manager_class(root_dir=str(ROOT))
    assert manager.pre_save_hook.__name__ == "strip_outputs"


def test_a_notebook_saved_elsewhere_keeps_its_outputs(tmp_path):
    config = _lab_config()
    manager = config.ServerApp.contents_manager_class(root_dir=str(tmp_path), config=config)
    shutil.copy(NOTEBOOKS[0], tmp_path / "scratch.ipynb")
    model = {"type": "notebook", "format": "json", "content": _as_the_lab_sends_it(NOTEBOOKS[0])}
    asyncio.run(manager.save(model, "scratch.ipynb"))
    kept = json.loads((tmp_path / "scratch.ipynb").read_text())
    assert any(c.get("outputs") for c in kept["cells"] if c["cell_type"] == "code")
    assert "version" in kept["metadata"]["language_info"]


def test_the_config_module_loads_without_jupyter_running():
    spec = importlib.util.spec_from_file_location("lab_config", ROOT / "scripts" / "jupyter_server_config.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = {"type": "notebook", "content": {"cells": [], "metadata": {"language_info": {"version": "3.x"}}}}
    module.strip_outputs(model, "notebooks/x.ipynb")
    assert model["content"]["metadata"]["language_info"] == {}


def test_notebook_02_draws_one_step_with_the_step_map():
    """A step's byte map tells the bytes of buffers not live then from padding;
    ``smem_figure(plan.at_step(...))`` drew both as padding."""
    pytest.importorskip("plotly")
    import smemviz
    from smemviz.figures import step_figure

    source = "".join(
        "".join(c["source"])
        for c in json.loads((ROOT / "notebooks" / "02_tuning_gemm_layout.ipynb").read_text())["cells"]
    )
    assert "at_step(" not in source
    assert 'step_figure(plan, "epilogue")' in source

    s = smemviz.SmemAllocator(steps=("load", "epilogue"))
    s.add(smemviz.SmemAllocation("a", 65536, alignment=1024), live="load")
    s.add(smemviz.SmemAllocation("c", 16384, alignment=1024), live="epilogue")
    s.compute_layout()
    subtitle = step_figure(s.plan, "epilogue").layout.title.subtitle.text
    assert "not live here" in subtitle and "padding 65,536" not in subtitle
