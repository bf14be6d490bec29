"""The configurations tried in a builder explorer, newest first, so a kernel
author can see what each control change cost and go back to one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = ["Attempt", "history_html", "option_labels", "MAX_HISTORY"]

MAX_HISTORY = 200  # the oldest attempts are dropped beyond this


@dataclass(frozen=True)
class Attempt:
    """One builder call: its arguments and what came of them."""

    values: tuple[tuple[str, Any], ...]
    smem_total: int | None  # bytes; None without an SMEM layout or on an error
    tmem_columns: int | None
    fits: bool | None  # None: the builder raised
    arch: str

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.values)


def _cell(name: str, value: Any, labels: Mapping[str, Sequence[tuple[str, Any]]]) -> str:
    """A control's value as its control shows it: the label a selection gives it
    ("most that fit" for 0), a string bare (f16, not 'f16'), anything else as Python writes it."""
    for label, option in labels.get(name, ()):
        try:
            if option == value and type(option) is type(value):
                return label
        except Exception:  # an option that cannot be compared is not this value
            continue
    return value if isinstance(value, str) else repr(value)


def history_html(attempts: list[Attempt], labels: Mapping[str, Sequence[tuple[str, Any]]] | None = None) -> str:
    """A table of ``attempts``, newest first, with the SMEM change against the one before;
    ``labels`` maps a control's name to its (label, value) options, so a value reads as on its control."""
    labels = labels or {}
    if not attempts:
        return "<div class='smemviz-history' style='font-size:12px;color:#546e7a'>nothing tried yet</div>"
    names = [k for k, _ in attempts[-1].values]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    rows = []
    for i in range(len(attempts) - 1, -1, -1):
        a = attempts[i]
        prev = attempts[i - 1].smem_total if i > 0 else None
        delta = f"{a.smem_total - prev:+,}" if a.smem_total is not None and prev is not None else ""
        state = "error" if a.fits is None else "fits" if a.fits else "over"
        color = {"error": "#8e1b1b", "fits": "#2e7d32", "over": "#c62828"}[state]
        cells = "".join(f"<td>{escape(_cell(k, v, labels))}</td>" for k, v in a.values)
        smem = f"{a.smem_total:,}" if a.smem_total is not None else ""
        tmem = f"{a.tmem_columns:,}" if a.tmem_columns is not None else ""
        rows.append(
            f"<tr>{cells}<td class=n>{smem}</td><td class=n>{delta}</td><td class=n>{tmem}</td>"
            f"<td style='color:{color}'>{state} ({escape(a.arch)})</td></tr>"
        )
    return (
        "<div class='smemviz-history smemviz-tscroll'><table class='smemviz-utable'><thead><tr>"
        f"{head}<th class=n>SMEM B</th><th class=n>change</th><th class=n>TMEM cols</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def option_labels(control: Any) -> list[tuple[str, Any]]:
    """A selection control's (label, value) options, as ipywidgets takes them (labels,
    (label, value) pairs or a dict); none for a control without options (a slider of numbers)."""
    options = getattr(control, "options", None)
    if options is None:
        return []
    if isinstance(options, Mapping):
        return [(str(k), v) for k, v in options.items()]
    return [(str(o[0]), o[1]) if isinstance(o, tuple) and len(o) == 2 else (str(o), o) for o in options]
