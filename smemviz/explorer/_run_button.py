"""The run action's button: a click runs the configuration on screen.

The widget manager in the browser sends one change per control at a time and
holds the next back until the kernel has taken the previous one, while a
button's click goes out at once: a control changed twice, or a slider dragged,
just before "Run" is pressed, reaches the kernel after the click, and the run
would measure the previous configuration. This button's click carries the
controls' values as the page shows them (``run_button.js``); they are applied
to the controls before the click handlers run, so the explorer rebuilds for
them first and the run reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["make_run_button", "apply_screen_values", "control_key"]

_ESM = Path(__file__).with_name("run_button.js")


def control_key(widget: Any) -> str:
    """The trait the browser changes when a control is set: ``index`` for the
    selection widgets (dropdowns, selection sliders), else ``value``."""
    return "index" if "index" in getattr(widget, "keys", ()) else "value"


def apply_screen_values(controls: Mapping[str, Any], state: Mapping[str, Any]) -> None:
    """Set each control to the value the page showed (``state``: control name ->
    the value of its :func:`control_key`, as the browser sends it), as the
    browser's own change would; a control already there is left alone."""
    for name, value in state.items():
        widget = controls.get(name)
        if widget is None:
            continue
        key = control_key(widget)
        if widget.get_state(key)[key] != value:
            widget.set_state({key: value})


@lru_cache(maxsize=1)
def _button_class() -> type | None:
    try:
        import anywidget
        import traitlets
    except ImportError:
        return None

    class RunButton(anywidget.AnyWidget):
        """A button like ``ipywidgets.Button`` whose click carries the controls' values on screen."""

        _esm = _ESM
        description = traitlets.Unicode("").tag(sync=True)
        tooltip = traitlets.Unicode("").tag(sync=True)
        icon = traitlets.Unicode("").tag(sync=True)
        disabled = traitlets.Bool(False).tag(sync=True)
        controls: traitlets.List[list[str]] = traitlets.List().tag(
            sync=True
        )  # [name, "IPY_MODEL_<id>", key] per control

        def __init__(self, watched: Mapping[str, Any], **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._watched = dict(watched)
            self._handlers: list[Callable[[Any], None]] = []
            self.controls = [[n, w.model_id, control_key(w)] for n, w in self._watched.items()]
            self.on_msg(self._on_message)

        def on_click(self, handler: Callable[[Any], None], remove: bool = False) -> None:
            """Call ``handler(button)`` on each click, after the values on screen are applied
            (``remove``: stop calling it), as ``ipywidgets.Button.on_click``."""
            if remove:
                self._handlers.remove(handler)
            else:
                self._handlers.append(handler)

        def click(self, state: Mapping[str, Any] | None = None) -> None:
            """Click as the page does, with the controls' values on screen (``state``) when given."""
            apply_screen_values(self._watched, state or {})
            for handler in self._handlers:
                handler(self)

        def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
            if isinstance(content, dict) and content.get("event") == "click":
                self.click(content.get("state") or {})

    RunButton.__module__ = __name__
    return RunButton


def make_run_button(controls: Mapping[str, Any], **traits: Any) -> Any:
    """The run button for ``controls``; a plain ``ipywidgets.Button`` where
    anywidget is missing (its click is then sent as soon as it is made)."""
    cls = _button_class()
    if cls is None:
        import ipywidgets as widgets

        return widgets.Button(**traits)
    return cls(controls, **traits)
