"""Builder controls, abbreviated as ``ipywidgets.interact`` takes them:
``(1, 8)`` becomes a slider, ``[64, 128]`` a dropdown, ``True`` a checkbox,
a widget stays itself and ``fixed(v)`` passes ``v`` without a control."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["make_controls"]


def _parameters(builder: Callable[..., Any]) -> tuple[dict[str, inspect.Parameter], bool]:
    try:
        params = inspect.signature(builder).parameters
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return {}, True
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = {
        n: p
        for n, p in params.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return named, takes_any


def make_controls(builder: Callable[..., Any], abbrevs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(widgets, fixed_values)`` for ``builder``'s controls.

    The builder's own default picks a control's start value when it is one of
    the choices, as ``interact`` does. Raises ``TypeError`` naming a control the
    builder does not take, or a builder parameter with neither default nor control.
    """
    from ipywidgets import Widget, fixed, interactive

    params, takes_any = _parameters(builder)
    name = getattr(builder, "__name__", type(builder).__name__)
    if not takes_any:
        unknown = [k for k in abbrevs if k not in params]
        if unknown:
            raise TypeError(
                f"builder {name}() has no parameter {unknown[0]!r}; its parameters: {', '.join(params) or 'none'}"
            )
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty and n not in abbrevs]
    if missing:
        raise TypeError(f"builder {name}() parameter {missing[0]!r} has no default; give it a control or fixed(value)")
    widgets: dict[str, Any] = {}
    fixed_values: dict[str, Any] = {}
    for key, abbrev in abbrevs.items():
        if isinstance(abbrev, fixed):
            fixed_values[key] = abbrev.value
            continue
        default = params[key].default if key in params else inspect.Parameter.empty
        widget = abbrev if isinstance(abbrev, Widget) else interactive.widget_from_abbrev(abbrev, default)
        if widget is None or not hasattr(widget, "value"):
            raise TypeError(
                f"control {key!r}: cannot make a widget from {abbrev!r} (use a tuple, a list, a value or a widget)"
            )
        if isinstance(widget, fixed):
            fixed_values[key] = widget.value
            continue
        if not getattr(widget, "description", None):
            widget.description = key
        widgets[key] = widget
    return widgets, fixed_values
