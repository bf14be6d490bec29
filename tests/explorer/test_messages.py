"""The explorer's wire messages, as typed in ``smemviz/explorer/_messages.py``, are the
ones ``map_view.js`` reads and sends: every field the view touches is a key of its type."""

from __future__ import annotations

import re
import typing

from smemviz.explorer import _messages
from smemviz.explorer._messages import JS2PY, PY2JS, UPDATE_MESSAGE, MapUpdate

from ..helpers import ROOT

VIEW = (ROOT / "smemviz" / "explorer" / "map_view.js").read_text(encoding="utf-8")


def _keys(kind: type) -> set[str]:
    return set(typing.get_type_hints(kind))


def _case_fields(name: str) -> set[str]:
    """``msg.<field>`` read in the view's ``case "<name>":`` branches (both of them)."""
    fields: set[str] = set()
    for m in re.finditer(r'case "' + re.escape(name) + r'":(.*?)(?=case "|default:|\n  \}\n)', VIEW, flags=re.S):
        fields |= set(re.findall(r"\bmsg\.(\w+)", m.group(1)))
    return fields


def test_every_drawn_message_reads_only_typed_fields():
    assert set(re.findall(r'"(_py2js_\w+)"', VIEW)) == set(PY2JS)
    for name, kind in PY2JS.items():
        read = _case_fields(name)
        assert read, f"map_view.js has no case for {name}"
        assert read <= _keys(kind), f"{name}: the view reads {sorted(read - _keys(kind))}, untyped"


def test_every_sent_message_sets_only_typed_fields():
    sent = dict(re.findall(r'send\("(_js2py_\w+)", \{(.*?)\}\)', VIEW))
    sent.update(re.findall(r'model\.set\("(_js2py_\w+)", \{(.*?)\}\)', VIEW))
    assert set(sent) | {"_js2py_pointsCallback"} == set(JS2PY)
    for name, body in sent.items():
        fields = set(re.findall(r"(\w+):", body))
        assert fields == _keys(JS2PY[name]), f"{name}: the view sends {sorted(fields)}"
    points = re.search(r"const msg = \{(.*?)\n  \};", VIEW, flags=re.S)
    assert points is not None
    top = set(re.findall(r"^    (\w+):", points.group(1), flags=re.M))
    assert top == _keys(_messages.Js2PyPointsCallback)


def test_the_custom_update_is_typed():
    assert f'const UPDATE_MESSAGE = "{UPDATE_MESSAGE}"' in VIEW
    assert UPDATE_MESSAGE in _keys(MapUpdate)


def test_the_check_can_fail():
    assert "nonexistent_field" not in _keys(_messages.Py2JsUpdate)
    assert _case_fields("_py2js_relayout") == {"relayout_data"}
