"""Record the captured plans of CUTLASS's Blackwell FMHA in ``notebooks/data/`` (our output, not
CUTLASS code), for a notebook to show them on a machine without the fetched examples.

``python -m tests.sources.capture.record_fmha_plan`` from the repository root, after any change
to what capture records or to the plan's JSON; ``test_ordering_blackwell.py`` checks the files
against a fresh capture.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "notebooks" / "data"


def main() -> None:
    from smemviz.kernel._compile import compile_host
    from smemviz.sources.capture import capture

    from .cutlass_examples import EXAMPLES, load

    example = EXAMPLES["blackwell_fmha"]
    host, args = example.build(load(example))
    with capture() as cap:
        compile_host("ordering_blackwell_fmha", host, args, example.arch)
    (kc,) = cap.kernels.values()
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "blackwell_fmha_plan.json").write_text(kc.plan.to_json())
    (DATA / "blackwell_fmha_tmem_plan.json").write_text(kc.tmem_plan.to_json())


if __name__ == "__main__":
    main()
