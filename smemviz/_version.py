"""The installed version, from the package metadata (pyproject.toml is the one place it is written)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("smemviz")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
