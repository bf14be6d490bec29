"""Fuzzing the bank analysis's bounds: layout files with accesses (through the reader and the
command line), declared accesses, ``bank_conflicts``, ``analyze_access`` and plan documents.

Every case is rebuilt from its seed (``tests.hostile``'s seeded generators) in a worker process
that runs under a memory limit, with a time limit per case and on the whole worker, so that a
hang or a memory blow-up fails the test (naming the seed) instead of stalling the machine. A case
may succeed or raise ValueError/TypeError (KeyError for a region the plan does not have) with a
short message; the command line exits 0, 1 or 2, with exactly one ``smemviz: error:`` line on 2.

    python -m tests.test_fuzz_bounded FIRST_SEED SECONDS   # one worker, results as JSON lines
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASE_SECONDS = 30  # no case of a bounded analysis comes near this
MEMORY_BYTES = 2 << 30  # address space of a worker (one runs in about 30 MB)
MAX_MESSAGE = 2000  # characters of an error message, the file's name and key included
KINDS = ("bank", "analyze", "declared", "file", "plan")


# -- the cases -------------------------------------------------------------------------------------


def _plan() -> Any:
    from smemviz import SmemAllocation, SmemAllocator

    s = SmemAllocator("sm_90a")
    s.add(SmemAllocation("c", 8192, alignment=1024, dtype="bf16", count=4096, swizzle="128B"))
    s.add(SmemAllocation("s", 16384, alignment=1024, dtype="f32", count=4096, stages=2))
    s.add(SmemAllocation("u", 4096, alignment=128))
    s.compute_layout()
    return s.plan


def _case_bank(rng: random.Random) -> None:
    from smemviz.analysis.banks import bank_conflicts

    from .hostile import _BAD_INSTRUCTIONS, _INSTRUCTIONS, hostile_addresses

    instruction = rng.choice(_INSTRUCTIONS * 3 + _BAD_INSTRUCTIONS + ["x" * 100_000, None])
    result = bank_conflicts(instruction, hostile_addresses(rng))  # type: ignore[arg-type]
    assert result.wavefronts >= result.ideal >= 1 and result.n_way >= 1


def _atom(rng: random.Random) -> Any:
    from smemviz.analysis.banks import cp_async_atom, ldmatrix_atom, stmatrix_atom, vector_atom

    from .hostile import _INSTRUCTIONS, hostile_pair

    kind = rng.randrange(8)
    eb = rng.choice([2, 2, 2, 2, 4, 4, 1, 0, -2, 3, 16, True, 2.0])
    if kind == 0:
        return rng.choice(_INSTRUCTIONS + ["x" * 1000, ""])
    if kind >= 5:  # an atom the tile's elements fit, so that the walk itself runs often
        return rng.choice(["stmatrix.x4", "ldmatrix.x4", "ldmatrix.x2.trans", "ld.shared.b16", "st.shared.v4.b32"])
    if kind == 1:
        return ldmatrix_atom(rng.choice([1, 2, 4, 3, True]), rng.random() < 0.5, eb)
    if kind == 2:
        return stmatrix_atom(rng.choice([1, 2, 4, 0]), rng.random() < 0.5, eb)
    if kind == 3:
        return vector_atom(rng.choice(_INSTRUCTIONS), eb, hostile_pair(rng))
    return cp_async_atom(rng.choice([4, 16, 8, 3]), eb, hostile_pair(rng))


def _case_analyze(rng: random.Random, plan: Any) -> None:
    from smemviz._limits import MAX_INSTRUCTIONS
    from smemviz.analysis.banks import Swizzle, advise, analyze_access

    from .hostile import _HUGE, hostile_layout_text, hostile_pair

    region = rng.choice(["c", "c", "s", "u", "nope"])
    kwargs: dict[str, Any] = {"layout": hostile_layout_text(rng) if rng.random() < 0.9 else None}
    if rng.random() < 0.3:
        kwargs["dtype"] = rng.choice(["bf16", "f32", "i8", "nope", "x" * 1000, 3])
    if rng.random() < 0.4:
        kwargs["swizzle"] = rng.choice(
            [
                "region",
                None,
                "NONE",
                "32B",
                "64B",
                "128B",
                "96B",
                5,
                lambda: Swizzle(3, 4, 3),
                lambda: Swizzle(3, 3, 3, "element"),
            ]
        )
        if callable(kwargs["swizzle"]):
            kwargs["swizzle"] = kwargs["swizzle"]()
    if rng.random() < 0.3:
        kwargs["warps"] = hostile_pair(rng)
    if rng.random() < 0.2:
        kwargs["stage"] = rng.choice([0, 1, 2, -1, "0", *_HUGE])
    if rng.random() < 0.2:
        kwargs["base"] = rng.choice([None, 0, 1024, 1040, -1, 2**64, "0"])
    try:
        atom = _atom(rng)
        rep = analyze_access(plan, region, atom, **kwargs)
    except KeyError:
        assert region not in {r.name for r in plan.regions}
        return
    assert 1 <= rep.instructions <= MAX_INSTRUCTIONS and rep.wavefronts >= rep.ideal
    if rng.random() < 0.3:
        kwargs.pop("base", None)
        advise(plan, region, atom, **kwargs)


def _case_declared(rng: random.Random) -> None:
    from smemviz import SmemAllocation, SmemAllocator
    from smemviz.analysis import lint

    from .hostile import hostile_access

    s = SmemAllocator("sm_90a")
    accesses = [hostile_access(rng) for _ in range(rng.choice([1, 1, 2]))]
    a = s.add(SmemAllocation("epi_c", 16384, alignment=1024, dtype="bf16", count=8192, stages=2, access=accesses))
    if rng.random() < 0.2:
        a.name = "epi_d"  # a rename after the declaration
    s.compute_layout()
    lint(s.plan)


def _layout_file(rng: random.Random) -> tuple[str, str]:
    from .hostile import hostile_access, to_json, to_toml

    entries = []
    for i in range(rng.choice([1, 1, 2])):
        entry: dict[str, Any] = {"name": f"buf{i}", "dtype": rng.choice(["bf16", "f32", "i8"]), "count": 8192}
        entry["align"] = 1024
        if rng.random() < 0.3:
            entry["stages"] = 2
        access = [hostile_access(rng) for _ in range(rng.choice([1, 2]))]
        for table in access:  # TOML and JSON have no null
            for key in [k for k, v in table.items() if v is None]:
                del table[key]
        entry["access"] = access if len(access) > 1 or rng.random() < 0.5 else access[0]
        entries.append(entry)
    doc = {"arch": "sm_90a", "smem": entries}
    fmt = rng.choice(["toml", "json"])
    return fmt, (to_toml(doc) if fmt == "toml" else to_json(doc))


def _case_file(rng: random.Random) -> None:
    from smemviz.analysis import lint
    from smemviz.sources.layout_file import LayoutFileError, parse_layout_text

    fmt, text = _layout_file(rng)
    if rng.random() < 0.25:
        _run_cli(rng, fmt, text)
        return
    try:
        spec = parse_layout_text(text, format=fmt, source=f"kernel.{fmt}")  # type: ignore[arg-type]
    except LayoutFileError as exc:
        assert str(exc).startswith(f"kernel.{fmt}")
        raise
    smem, _ = spec.plans()
    if smem is not None:
        lint(smem)


def _run_cli(rng: random.Random, fmt: str, text: str) -> None:
    from smemviz.cli import main

    command = rng.choice(["check", "report", "render"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"kernel.{fmt}"
        path.write_text(text, encoding="utf-8")
        out = Path(tmp) / "out.md"
        argv = [command, str(path)] + (["-o", str(out)] if command == "render" else [])
        err, std = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code  # type: ignore[assignment]
        errors = [line for line in err.getvalue().splitlines() if line.startswith("smemviz: error:")]
        assert code in (0, 1, 2), f"exit {code}: {err.getvalue()[:300]}"
        if code == 2:
            assert err.getvalue().count("\n") == 1 and len(errors) == 1, err.getvalue()[:300]
            assert len(errors[0]) <= MAX_MESSAGE + len(str(path)), f"an error line of {len(errors[0])} characters"
            assert not out.exists()


def _case_plan(rng: random.Random, plan_doc: dict[str, Any]) -> None:
    from smemviz.analysis import lint
    from smemviz.layout import plan_from_dict

    from .hostile import hostile_access

    doc = json.loads(json.dumps(plan_doc))
    records = []
    for _ in range(rng.choice([1, 1, 2])):
        record = hostile_access(rng)
        record["region"] = rng.choice(["c", "c", "c", "s", "nope", 5])
        records.append(record)
    doc["accesses"] = records
    if rng.random() < 0.2:
        doc["regions"][0]["layout"] = rng.choice(
            ["(128,32):(32,1)", "(1000000000000,32):(0,1)", "(" * 40 + "1" + ")" * 40]
        )
    lint(plan_from_dict(doc))


def case(kind: str, rng: random.Random, plan: Any, plan_doc: dict[str, Any]) -> Callable[[], None]:
    """The call of one case of ``kind``, its values drawn from ``rng``."""
    runs: dict[str, Callable[[], None]] = {
        "bank": partial(_case_bank, rng),
        "analyze": partial(_case_analyze, rng, plan),
        "declared": partial(_case_declared, rng),
        "file": partial(_case_file, rng),
        "plan": partial(_case_plan, rng, plan_doc),
    }
    return runs[kind]


# -- the worker ------------------------------------------------------------------------------------


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _outcome(run: Callable[[], None]) -> str:
    """'ok', 'refused' (ValueError/TypeError with a short message), or what went wrong."""
    try:
        with _time_limit(CASE_SECONDS):
            run()
    except _Hang as exc:
        return f"HANG: {exc}"
    except (ValueError, TypeError) as exc:
        message = str(exc)
        if len(message) > MAX_MESSAGE:
            return f"LONG MESSAGE of {len(message)} characters: {message[:200]}"
        if "int_max_str_digits" in message or "Exceeds the limit" in message:
            return f"PYTHON'S DIGIT LIMIT: {message[:200]}"
        return "refused"
    except BaseException as exc:  # noqa: BLE001 - every other escape is the finding
        return f"{type(exc).__name__}: {str(exc)[:300]}"
    return "ok"


def worker(first: int, seconds: float) -> None:
    """Run seeds ``first``, ``first + 1`` ... for ``seconds``, under the memory limit, printing
    ``{"start": seed}`` before each case and ``{"seed", "kind", "outcome"}`` after it."""
    import resource
    import time

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    plan = _plan()
    plan_doc = plan.to_dict()
    deadline = time.monotonic() + seconds
    seed = first
    while time.monotonic() < deadline:
        rng = random.Random(seed)
        kind = KINDS[seed % len(KINDS)]
        print(json.dumps({"start": seed}), flush=True)
        print(
            json.dumps({"seed": seed, "kind": kind, "outcome": _outcome(case(kind, rng, plan, plan_doc))}), flush=True
        )
        seed += 1


def run_worker(first: int, seconds: float) -> tuple[list[dict[str, Any]], list[str]]:
    """One worker process for ``seconds``: the results it printed, and the problems found (a bad
    outcome, or a worker that died or overran, naming the seed it was running)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "tests.test_fuzz_bounded", str(first), str(seconds)]
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=seconds + 2 * CASE_SECONDS + 30
        )
        stdout, code = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        code = None
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    results = [r for r in lines if "outcome" in r]
    problems = [
        f"seed {r['seed']} ({r['kind']}): {r['outcome']}" for r in results if r["outcome"] not in ("ok", "refused")
    ]
    started = [r["start"] for r in lines if "start" in r]
    if code != 0:
        unfinished = started[-1] if started and (not results or results[-1]["seed"] != started[-1]) else None
        problems.append(
            f"the worker {'overran its time' if code is None else f'exited {code}'} (running seed {unfinished})"
        )
    return results, problems


# -- the test --------------------------------------------------------------------------------------


def test_fuzzed_bank_inputs_are_refused_cleanly_within_bounds():
    seconds = float(os.environ.get("SMEMVIZ_FUZZ_BOUNDED_SECONDS", "30"))
    results, problems = run_worker(0, seconds)
    assert not problems, "\n".join(problems)
    kinds = {k: [r["outcome"] for r in results if r["kind"] == k] for k in KINDS}
    assert len(results) >= 50, f"only {len(results)} cases ran"
    for kind, outcomes in kinds.items():  # every surface was exercised, both ways
        assert outcomes, kind
    assert {"ok", "refused"} <= {o for r in results for o in [r["outcome"]]}


def test_a_hang_or_a_memory_error_is_a_finding(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CASE_SECONDS", 1)

    def spin() -> None:
        while True:
            pass

    def blow_up() -> None:
        raise MemoryError

    assert _outcome(spin).startswith("HANG")
    assert _outcome(blow_up).startswith("MemoryError")
    assert _outcome(lambda: int("x")) == "refused"
    assert _outcome(lambda: (_ for _ in ()).throw(ValueError("x" * 3000))).startswith("LONG MESSAGE")


if __name__ == "__main__":
    worker(int(sys.argv[1]), float(sys.argv[2]))
