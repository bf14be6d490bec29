"""Mutation tests of the ordering check: each edited copy of a kernel (a call dropped, a
count changed, a buffer moved; see ``mutations.py``) gives exactly one finding, of the
expected rule, naming the expected regions and call site. The kernels' own files are never
edited: each copy is written to a temporary folder and compiled from there under capture.

smemviz's Hopper GEMM and the capture tests' hand-off kernel always run; CUTLASS's
examples run where ``.cutlass_examples/`` holds them (``slow``). A mutation that cannot yet
give exactly one finding is an ``xfail`` naming why; the table of what each gives is in
results/ordering_mutations.md (``python -m tests.analysis.ordering.mutations``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("cutlass")

from . import mutations as mut  # noqa: E402

pytestmark = pytest.mark.cutlass
KERNELS = mut.kernels()


def _param(m: mut.Mutation):
    kernel = KERNELS[m.kernel]
    marks = [pytest.mark.slow] if kernel.slow else []
    reason = m.xfail or kernel.not_clean
    if reason:
        marks.append(pytest.mark.xfail(reason=reason, strict=False))
    return pytest.param(m, id=f"{m.kernel}-{m.name}", marks=marks)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("mutants")


@pytest.fixture(scope="module")
def baselines():
    return {}


def _baseline(kernel: mut.Kernel, baselines: dict, folder) -> list:
    if kernel.name not in baselines:
        source = kernel.path.read_text(encoding="utf-8")
        baselines[kernel.name] = mut.counted(mut.check_source(kernel, source, folder))
    return baselines[kernel.name]


def test_enough_mutations_over_enough_kernels():
    assert len(mut.MUTATIONS) >= 12
    assert len({m.kernel for m in mut.MUTATIONS}) >= 4
    assert len({(m.kernel, m.name) for m in mut.MUTATIONS}) == len(mut.MUTATIONS)


@pytest.mark.parametrize("mutation", [_param(m) for m in mut.MUTATIONS])
def test_mutant_gives_exactly_one_finding(mutation, baselines, folder, monkeypatch):
    kernel = KERNELS[mutation.kernel]
    if not mut.available(kernel):
        pytest.skip(f"{kernel.path.name} not found (CUTLASS's examples are fetched into .cutlass_examples/)")
    monkeypatch.setenv("CUTE_DSL_ARCH", kernel.arch)
    source = kernel.path.read_text(encoding="utf-8")
    edited = mut.apply(source, mutation)
    assert edited != source
    assert edited.count("\n") == source.count("\n")  # every line where it was: sites name the file as it is
    site = f"{kernel.path.name}:{mut.site_of(source, mutation.site, mutation.site_occurrence)}"
    baseline = _baseline(kernel, baselines, folder)  # one compile per kernel; a mutant is read against a clean one
    assert not baseline, "the unedited kernel has findings: " + " | ".join(f.line() for f in baseline)
    outcome = mut.judge(mutation, mut.check_source(kernel, edited, folder), baseline, site, 0.0)
    assert outcome.exact, f"{outcome.problems}: " + " | ".join(f.line() for f in outcome.findings)
