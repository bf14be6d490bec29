"""Hostile input for the fuzz tests: values, names, layout documents (as data,
TOML and JSON text, and byte-level mutations of them), and the settings that
keep the CI budget small while a long run can be started by hand.

``SMEMVIZ_FUZZ_EXAMPLES=N`` runs every fuzz test with up to N examples drawn
at random (not derandomized) instead of the fixed-seed CI budget; tests whose
examples are slow (figures, HTML and SVG exports) take a stated share of N.
See ``scripts/fuzz_long.sh``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import signal
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

LONG_RUN_EXAMPLES = int(os.environ.get("SMEMVIZ_FUZZ_EXAMPLES", "0") or 0)

# C0 and C1 controls (tab/newline/CR allowed only where the format itself puts
# them), DEL, bidi and zero-width format characters, the BOM, lone surrogates
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
RAW_CONTROL_OR_NEWLINE = re.compile(RAW_CONTROL.pattern[:-1] + "\n\r\t]")


def fuzz_settings(ci_examples: int, long_share: float = 1.0) -> settings:
    """A fixed seed and ``ci_examples`` examples in CI; fresh randomness and
    ``long_share`` of the long run's count when ``SMEMVIZ_FUZZ_EXAMPLES`` is set."""
    long_examples = max(ci_examples, int(LONG_RUN_EXAMPLES * long_share))
    return settings(
        max_examples=long_examples if LONG_RUN_EXAMPLES else ci_examples,
        derandomize=not LONG_RUN_EXAMPLES,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
    )


class Hang(AssertionError):
    """One example ran past its time limit."""


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fail the example (rather than stall the run) if it takes longer than ``seconds``."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# -- values ------------------------------------------------------------------------------

hostile_ints = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**32, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**30, 3, 48, 1000]),
    st.sampled_from([1, 2, 4, 8, 16, 128, 1024, 4096, 65536]),
)
hostile_floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.5, 128.0, -0.0]))

# characters chosen to hurt: controls, escapes, bidi overrides, markup, quotes, brackets
_NASTY_CHARS = "\x00\x07\x08\t\n\r\x1b\x7f\x85\u00a0\u200b\u202e\u2066\ufeff<>&\"'\\[]{}|*#`=.:,;$% "
_NASTY_STRINGS = [
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x1b[2J",
    "<script>alert(1)</script>",
    "]]>",
    "{{x}}",
    "a|b",
    "\u202eevil",
    "$(rm -rf)",
    "\n[[smem]]\n",
    '"',
    "'''",
    "\\u0000",
]

hostile_text = st.one_of(
    st.text(max_size=24),
    st.text(alphabet=st.sampled_from(_NASTY_CHARS + "abc_019"), max_size=24),
    st.sampled_from(_NASTY_STRINGS),
    st.builds(lambda n, c: c * n, st.integers(300, 5000), st.sampled_from("aé\x1b")),  # very long
    st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True),  # ordinary names
)
# names that must be refused: at least one unprintable character
unprintable_names = st.builds(
    lambda head, bad, tail: head + bad + tail,
    st.text("abc_", max_size=5),
    st.sampled_from(
        [
            "\x00",
            "\x1b",
            "\n",
            "\t",
            "\x7f",
            "\x85",
            "\u200b",
            "\u202e",
            "\u2066",
            "\ufeff",
            "\u00a0",
            "\ud800",
            "\U000e0001",
        ]
    ),
    st.text("abc_", max_size=5),
)

scalars = st.one_of(st.none(), st.booleans(), hostile_ints, hostile_floats, hostile_text)


def nested(depth: int) -> st.SearchStrategy[Any]:
    """A value nested ``depth`` levels deep (arrays or tables)."""
    return st.sampled_from(["list", "dict"]).map(lambda kind: _nest(kind, depth))


def _nest(kind: str, depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


hostile_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(hostile_text, children, max_size=4)),
    max_leaves=12,
) | st.integers(20, 150).flatmap(nested)  # deeper nesting is written as text (deep_text)


@st.composite
def deep_text(draw: Any, fmt: str) -> str:
    """A document with one value nested hundreds to thousands of levels deep."""
    depth = draw(st.integers(40, 6000))
    open_, close = draw(st.sampled_from([("[", "]"), ("{a = ", "}") if fmt == "toml" else ('{"a": ', "}")]))
    inner = open_ * depth + ("1" if "a" in open_ else "") + close * depth
    if fmt == "toml":
        return draw(st.sampled_from([f"name = {inner}\n", f"[[smem]]\nname = {inner}\n"]))
    return draw(st.sampled_from([inner, f'{{"smem": [{{"name": {inner}}}]}}', f'{{"name": {inner}}}']))


# -- layout documents ----------------------------------------------------------------------

SMEM_KEYS = ("name", "size", "dtype", "count", "align")
TABLE_KEYS = {
    "smem": SMEM_KEYS,
    "tmem": ("name", "columns"),
    "pipeline": ("name", "stages"),
    "pipeline_group": ("name", "stages", "members", "barriers_per_stage"),
    "smem_alias": ("phases",),
    "tmem_alias": ("phases",),
}
_DTYPES = ["f16", "bf16", "f32", "f8e4m3", "f4e2m1", "i8", "u64", "fp4", "nope", "", "F16"]
_ARCHES = ["sm_90a", "sm_100a", "sm_80", "sm_120", "sm_999", "hopper", "", "sm_90\x1b"]


def _plausible(key: str, names: list[str]) -> st.SearchStrategy[Any]:
    """A value that is often right for ``key``, so documents get past the first check."""
    if key == "name":
        return st.one_of(st.sampled_from(names), hostile_text)
    if key in ("size", "count", "columns", "stages", "members", "barriers_per_stage"):
        return st.one_of(st.integers(1, 70000), hostile_ints)
    if key == "align":
        return st.one_of(st.sampled_from([1, 4, 8, 16, 128, 1024]), hostile_ints)
    if key == "dtype":
        return st.sampled_from(_DTYPES)
    if key == "phases":
        return st.lists(st.lists(st.sampled_from(names), min_size=0, max_size=3), min_size=0, max_size=3)
    return scalars


@st.composite
def valid_documents(draw: Any) -> dict[str, Any]:
    """A layout document that follows the schema (it may still not fit)."""
    smem_names = draw(
        st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True), min_size=0, max_size=7, unique=True)
    )
    doc: dict[str, Any] = {"version": 1}
    if draw(st.booleans()):
        doc["name"] = draw(st.from_regex(r"[A-Za-z][A-Za-z0-9 _.-]{0,20}", fullmatch=True))
    if draw(st.booleans()):
        doc["arch"] = draw(st.sampled_from(["sm_90a", "sm_100a", "sm_80", "sm_120"]))
    smem = []
    for name in smem_names:
        entry: dict[str, Any] = {"name": name, "align": draw(st.sampled_from([4, 8, 16, 128, 1024]))}
        if draw(st.booleans()):
            entry["size"] = draw(st.integers(4, 90000))
        else:
            entry.update(
                dtype=draw(st.sampled_from(["f16", "bf16", "f32", "f8e4m3", "f4e2m1", "i8"])),
                count=draw(st.integers(1, 40000)),
            )
        smem.append(entry)
    if smem:
        doc["smem"] = smem
    free = list(smem_names)
    if free and draw(st.booleans()):
        slot = free.pop()
        doc["tmem_ptr"] = slot
        smem[smem_names.index(slot)].update(size=draw(st.sampled_from([4, 8, 16])), align=4)
        smem[smem_names.index(slot)].pop("dtype", None)
        smem[smem_names.index(slot)].pop("count", None)
    aliases = []
    while len(free) >= 2 and draw(st.booleans()):
        members = [free.pop() for _ in range(draw(st.integers(2, len(free))))]
        cut = draw(st.integers(1, len(members) - 1))
        aliases.append({"phases": [members[:cut], members[cut:]]})
    if aliases:
        doc["smem_alias"] = aliases
    pipes = draw(st.lists(st.from_regex(r"p[a-z]{0,5}", fullmatch=True), max_size=3, unique=True))
    if pipes:
        doc["pipeline"] = [{"name": p, "stages": draw(st.integers(1, 8))} for p in pipes]
    if draw(st.integers(0, 2)) == 0:
        doc["pipeline_group"] = [{"name": "grp", "stages": draw(st.integers(1, 8)), "members": draw(st.integers(1, 4))}]
    tmem_names = draw(st.lists(st.from_regex(r"t[a-z0-9]{0,5}", fullmatch=True), max_size=4, unique=True))
    if tmem_names:
        doc["tmem"] = [{"name": t, "columns": draw(st.sampled_from([16, 32, 64, 128, 256, 300]))} for t in tmem_names]
        if len(tmem_names) >= 2 and draw(st.booleans()):
            doc["tmem_alias"] = [{"phases": [tmem_names[:1], tmem_names[1:]]}]
    return doc


def _all_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _all_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _all_paths(v, (*path, i))
    return out


@st.composite
def with_defects(draw: Any, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with up to two values replaced, keys removed or added, or entries duplicated."""
    for _ in range(draw(st.integers(0, 2))):
        paths = [p for p in _all_paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        key = path[-1]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add_key", "duplicate"]))
        if op == "replace":
            parent[key] = draw(st.one_of(scalars, hostile_values, unprintable_names))
        elif op == "delete":
            del parent[key]
        elif op == "add_key" and isinstance(parent[key], dict):
            parent[key][draw(st.sampled_from(["sizee", "alignment", "Name", "phase", ""]))] = draw(scalars)
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(json.loads(json.dumps(parent[key])))
    return doc


def layout_documents() -> st.SearchStrategy[dict[str, Any]]:
    """Layout documents: valid ones, valid ones with a defect or two, and
    documents that are hostile throughout."""
    return st.one_of(valid_documents(), valid_documents().flatmap(with_defects), hostile_documents())


@st.composite
def hostile_documents(draw: Any) -> dict[str, Any]:
    """A layout document as data: mostly the schema's shape, with wrong types,
    extreme numbers, unknown keys, duplicate names and hostile strings mixed in."""
    names = draw(
        st.lists(st.one_of(st.from_regex(r"[a-z]{1,6}[0-9]?", fullmatch=True), hostile_text), min_size=1, max_size=6)
    )
    doc: dict[str, Any] = {}
    if draw(st.booleans()):
        doc["version"] = draw(st.one_of(st.just(1), hostile_values))
    if draw(st.booleans()):
        doc["name"] = draw(st.one_of(hostile_text, hostile_values))
    if draw(st.booleans()):
        doc["arch"] = draw(st.one_of(st.sampled_from(_ARCHES), hostile_values))
    if draw(st.integers(0, 4)) == 0:
        doc["tmem_ptr"] = draw(st.one_of(st.sampled_from(names), hostile_values))
    for table, keys in TABLE_KEYS.items():
        if not draw(st.integers(0, 2)):
            continue
        if draw(st.integers(0, 12)) == 0:
            doc[table] = draw(hostile_values)  # not an array of tables at all
            continue
        entries = []
        for _ in range(draw(st.integers(0, 4))):
            entry = {}
            for key in keys:
                if draw(st.integers(0, 5)):
                    entry[key] = draw(_plausible(key, names))
            if draw(st.integers(0, 8)) == 0:
                entry[draw(hostile_text)] = draw(hostile_values)  # unknown key
            if draw(st.integers(0, 10)) == 0:
                entry = draw(hostile_values)  # an entry that is not a table
            entries.append(entry)
        doc[table] = entries
    if draw(st.integers(0, 10)) == 0:
        doc[draw(hostile_text)] = draw(hostile_values)
    return doc


# -- writing documents as text -------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: Any) -> str:
    key = str(key)
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string (lone surrogates make it invalid)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if value is None:
        return '""'  # TOML has no null
    raise TypeError(type(value))


def to_toml(doc: dict[str, Any]) -> str:
    """TOML text for ``doc``: scalars first, arrays of tables as ``[[key]]``."""
    tables = {k: v for k, v in doc.items() if isinstance(v, list) and v and all(isinstance(t, dict) for t in v)}
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in doc.items() if k not in tables]
    for key, entries in tables.items():
        for entry in entries:
            lines += ["", f"[[{_toml_key(key)}]]"] + [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def to_json(doc: dict[str, Any]) -> str:
    """JSON text for ``doc``; NaN and infinities come out as the non-JSON
    literals ``NaN``/``Infinity`` that a reader must refuse."""
    return json.dumps(doc, indent=1)


# -- mutating text ----------------------------------------------------------------------------

_INSERTS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b"'",
    b",",
    b"=",
    b":",
    b"\n",
    b"[[smem]]\n",
    b"\x00",
    b"\x1b[31m",
    b"\xff\xfe",
    b"\xc3",
    b"\xed\xa0\x80",
    b"NaN",
    b"Infinity",
    b"-",
    b"1e999",
    b"9" * 30,
    b"true",
    b"\\u0000",
    b"\\",
    b"#",
    b'"""',
    b"[" * 200,
    b'{"a":' * 100,
]


@st.composite
def mutated(draw: Any, original: bytes) -> bytes:
    """``original`` with a few byte-level edits: deletions, duplications,
    insertions of syntax and of non-UTF-8 bytes, truncation."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        n = len(data)
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "replace", "truncate", "swap_case"]))
        i = draw(st.integers(0, n))
        if op == "delete" and n:
            j = draw(st.integers(i, min(n, i + 40)))
            del data[i:j]
        elif op == "duplicate" and n:
            j = draw(st.integers(i, min(n, i + 80)))
            data[i:i] = data[i:j] * draw(st.integers(1, 3))
        elif op == "insert":
            data[i:i] = draw(st.one_of(st.sampled_from(_INSERTS), st.binary(min_size=1, max_size=8)))
        elif op == "replace" and i < n:
            data[i] = draw(st.integers(0, 255))
        elif op == "truncate":
            del data[i:]
        elif op == "swap_case" and i < n:
            data[i : i + 1] = bytes(data[i : i + 1]).swapcase()
    return bytes(data)


# -- the bank analysis: seeded cases ------------------------------------------------------------
# Plain ``random.Random(seed)`` cases, so that a worker process can rebuild any case from its seed
# alone (tests/test_fuzz_bounded.py runs them under memory and time limits; tests/fuzz_long.py
# runs them for as long as asked).

_INSTRUCTIONS = [
    "ld.shared.b8",
    "ld.shared.b16",
    "ld.shared.b32",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "st.shared.b32",
    "st.shared.v4.b32",
    "ldmatrix.x4",
    "ldmatrix.x2.trans",
    "stmatrix.x4",
    "stmatrix.x1",
    "cp.async.ca.16",
    "stmatrix.sync.aligned.m8n8.x4.shared.b16",
]
_BAD_INSTRUCTIONS = [
    "",
    " ",
    "LD.SHARED.B32",
    "cp.async.cg.16",
    "cp.async.ca.8",
    "cp.async.ca.4",
    "stmatrix.x9",
    "ld.shared.b32\x00",
]
_HUGE = [2**31, 2**62, 2**63 - 1, 2**63, 2**64, 10**12, 10**30, -(2**63), -1, 0]
_DTYPES_BANK = ["bf16", "f16", "f32", "i8", "f8e4m3", "u64", "f4e2m1", "nope", ""]


def _pick(rng: random.Random, *groups: Any) -> Any:
    """One value from one of ``groups`` (each a list, or a function of ``rng``)."""
    group = rng.choice(groups)
    return group(rng) if callable(group) else rng.choice(group)


def _extent(rng: random.Random) -> int:
    return _pick(rng, [1, 2, 4, 8, 16, 32, 64, 128, 256], _HUGE, lambda r: r.randint(-3, 300))


def _int_tuple_text(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.5:
        return str(_extent(rng))
    return "(" + ",".join(_int_tuple_text(rng, depth + 1) for _ in range(rng.randint(1, 3))) + ")"


def hostile_layout_text(rng: random.Random) -> str:
    """Layout text: plausible tiles, zero strides over huge extents, deep nesting, long digits,
    swizzles of any bits, garbage and very long text."""
    kind = rng.randrange(12)
    kind = 0 if kind > 8 else kind  # half the time a plausible tile, so the analysis runs
    rows, cols = rng.choice([8, 16, 32, 64, 128, 256]), rng.choice([8, 16, 32, 64, 128])
    if kind <= 2:  # a plausible tile, K-major or MN-major, maybe staged, maybe swizzled
        text = rng.choice(
            [
                f"({rows},{cols}):({cols},1)",
                f"({cols},{rows}):(1,{cols})",
                f"({rows},{cols},2):({cols},1,{rows * cols})",
            ]
        )
        if rng.random() < 0.3:
            b = rng.choice([0, 1, 2, 3, rng.randint(0, 40)])
            text = f"S<{b},{rng.choice([3, 4, rng.randint(0, 40)])},{rng.choice([3, b, rng.randint(0, 40)])}> o {rng.choice([0, 0, 7, 2**64])} o {text}"
        return text
    if kind == 3:  # zero strides over huge extents
        big = rng.choice([10**6, 10**9, 10**12, 2**40, 2**62, 2**63 - 1, 2**63, 10**30])
        return rng.choice([f"({big},32):(0,1)", f"(({big},{big}),32):((0,0),1)", f"({rows},{big}):(0,1)"])
    if kind == 4:  # nesting
        d = rng.choice([1, 2, 15, 16, 17, 40, 1000, 3000])
        return "(" * d + "128" + ")" * d + ":" + "(" * d + "1" + ")" * d
    if kind == 5:  # long digits
        n = rng.choice([18, 19, 20, 21, 400, 4000, 5000])
        return f"({'9' * n},32):(32,1)"
    if kind == 6:  # random nested tuples of extreme integers
        return _int_tuple_text(rng) + ":" + _int_tuple_text(rng)
    if kind == 7:  # garbage
        return "".join(rng.choice("(),:S<>o -0123456789 \x00é") for _ in range(rng.randint(0, 40)))
    return rng.choice(["(1," * 30000 + "1):(1)", "(" + "1," * 50000 + "1):(1)", "x" * 100_000])


def hostile_pair(rng: random.Random) -> Any:
    """A (rows, columns) of warps or lanes: right, too many, negative, not integers, the wrong length."""
    return _pick(
        rng,
        [[1, 1], [8, 1], [4, 2], [32, 1], [1, 32], [33, 1], [8, 8], [0, 1], [-1, -32], [16, 2], [4, 8]],
        lambda r: [r.choice(_HUGE), r.choice([1, 2])],
        [[1], [1, 1, 1], "8x1", 8, [1.0, 1], [True, 1], None, []],
    )


def hostile_access(rng: random.Random) -> dict[str, Any]:
    """An access table, often right, with one or two fields hostile."""
    table: dict[str, Any] = {
        "instruction": _pick(rng, _INSTRUCTIONS, _INSTRUCTIONS, _BAD_INSTRUCTIONS, [5, None, "x" * 100_000]),
        "layout": hostile_layout_text(rng),
    }
    if rng.random() < 0.4:
        table["warps"] = hostile_pair(rng)
    if rng.random() < 0.1:
        table["threads"] = hostile_pair(rng)
    if rng.random() < 0.3:
        table["dtype"] = _pick(rng, _DTYPES_BANK, [3, "x" * 1000])
    if rng.random() < 0.3:
        table["swizzle"] = _pick(rng, ["region", "none", "32B", "64B", "128B", "96B", "", 5])
    if rng.random() < 0.2:
        table["stage"] = _pick(rng, [0, 1, 2, 3], _HUGE, ["1", 1.0, True])
    if rng.random() < 0.05:
        table[rng.choice(["colour", "region", "warp"])] = rng.choice(["c", 1, "epi"])
    return table


def hostile_addresses(rng: random.Random) -> Any:
    """A warp's addresses for bank_conflicts: patterns, out of range, huge, wrong types and lengths."""
    kind = rng.randrange(6)
    if kind <= 1:
        step, base = rng.choice([1, 2, 4, 8, 16, 128, 132, 0]), rng.choice([0, 4, 16, 1024, 232448])
        return [base + step * i for i in range(32)]
    if kind == 2:
        return [rng.choice([0, 16, 4096, -4, 2**40, None, 10**5000, 1.5, True, "0"]) for _ in range(32)]
    if kind == 3:
        return rng.choice([range(32), range(10**20), range(0, 128 * 32, 128), {i + 100: 4 * i for i in range(32)}])
    if kind == 4:
        return [4 * i for i in range(rng.choice([0, 1, 31, 33, 1000]))]
    return rng.choice(["0" * 32, b"\x00" * 32, 32, None, object(), ([0] * 32,)])
