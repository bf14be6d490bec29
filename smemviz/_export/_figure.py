"""The figure an export draws: the notebook's own builders, never a copy."""

from __future__ import annotations

from typing import Any

from .._inputs import LayoutPair

__all__ = ["build_figure"]


def build_figure(pair: LayoutPair) -> Any:
    """Both maps stacked when there are both, else the single map as the
    explorer shows it."""
    try:
        from .. import figures
    except ImportError as exc:
        raise ImportError(
            f"HTML and image exports draw with plotly ({exc}); pip install 'smemviz[viz]'"
        ) from None

    if pair.smem is not None and pair.tmem is not None:
        return figures.layout_figure(pair.smem, pair.tmem, arch=pair.arch)
    if pair.smem is not None:
        return figures.smem_figure(pair.smem, arch=pair.arch)
    return figures.tmem_figure(pair.tmem)
