"""The explorer's detail tabs, addressed by name.

Which tabs an explorer has depends on what it shows ("Tried" needs a
builder, "Lifetimes" a layout solved from lifetimes), so a tab's index
means different tabs in different explorers; its name does not. A tab is
marked stale when what it shows changes and redrawn when it is next open.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

__all__ = ["NamedTabs"]


class NamedTabs:
    """An ``ipywidgets.Tab`` (:attr:`widget`) whose pages are offered and withdrawn by name."""

    def __init__(self, pages: dict[str, Any]) -> None:
        self._pages = dict(pages)  # every page made so far, offered or not
        self.names: tuple[str, ...] = tuple(pages)
        self.widget = widgets.Tab(list(pages.values()))
        self._title()
        self.stale: set[str] = set(pages)  # redrawn when next open

    @property
    def open(self) -> str | None:
        """The name of the tab open now."""
        index = self.widget.selected_index
        return self.names[index] if index is not None and index < len(self.names) else None

    def show(self, name: str) -> None:
        """Open the tab called ``name``."""
        if name not in self.names:
            raise ValueError(f"no {name!r} tab here; this explorer has {', '.join(map(repr, self.names))}")
        self.widget.selected_index = self.names.index(name)

    def offer(self, name: str, page: Any) -> None:
        """Add ``page`` as the last tab, called ``name`` (nothing when offered already)."""
        self._pages[name] = page
        if name not in self.names:
            self._set((*self.names, name))

    def withdraw(self, name: str) -> None:
        """Remove the tab called ``name``, opening the first one if it was open."""
        if name not in self.names:
            return
        if self.open == name:
            self.widget.selected_index = 0
        self._set(tuple(n for n in self.names if n != name))

    def _set(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.widget.children = tuple(self._pages[n] for n in names)
        self._title()

    def _title(self) -> None:
        for i, name in enumerate(self.names):
            self.widget.set_title(i, name)
