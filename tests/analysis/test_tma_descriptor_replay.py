"""check_tma_descriptor against the H200 driver's recorded answers, and the calibration script itself.

``benchmarks/tma_descriptor_h200.py`` called ``cuTensorMapEncodeTiled`` on every case it generates and
wrote the driver's CUresult beside each; the check must agree with every one (ok <=> CUDA_SUCCESS).
The script's generator and its CSV writer and reader are tested here too, with a fake encoder, so that
a change to either shows before the next GPU run.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from smemviz.analysis.tma import check_tma_descriptor

from ..helpers import ROOT

SCRIPT = ROOT / "benchmarks" / "tma_descriptor_h200.py"
RECORDING = ROOT / "results" / "tma_descriptor_h200.csv"
META = ROOT / "results" / "tma_descriptor_h200.json"
ROUND1 = ROOT / "results" / "tma_descriptor_h200_round1.csv.gz"  # the first device call's recording


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tma_descriptor_h200", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


calibration = _script()


def _disagreements(recorded) -> list[str]:
    out = []
    for case, result in recorded:
        answer = check_tma_descriptor(
            case.data_type,
            case.global_dims,
            case.global_strides,
            case.box_dims,
            case.element_strides,
            case.interleave,
            case.swizzle,
            case.global_address,
            case.l2_promotion,
            case.oob_fill,
        )
        if answer.ok != (result == calibration.CUDA_SUCCESS):
            out.append(f"{case} -> driver {result}, check {answer.lines()}")
    return out


def _recorded() -> list:
    if not RECORDING.exists():
        pytest.skip(f"no recording yet: run `python3 {SCRIPT.relative_to(ROOT)}` on a GPU machine (see its docstring)")
    return calibration.read_csv(RECORDING)


def test_the_check_agrees_with_the_driver_on_every_recorded_case():
    recorded = _recorded()
    assert len(recorded) >= 1000
    results = Counter(result for _, result in recorded)
    assert results[0] > 1000 and sum(results.values()) - results[0] > 1000  # both answers well represented
    assert _disagreements(recorded) == []


def test_the_check_agrees_with_the_first_recording_too(tmp_path: Path):
    if not ROUND1.exists():
        pytest.skip("the first device call's recording is not in results/")
    plain = tmp_path / "round1.csv"
    plain.write_bytes(gzip.decompress(ROUND1.read_bytes()))
    recorded = calibration.read_csv(plain)
    assert len(recorded) == 10063
    assert _disagreements(recorded) == []


def test_every_rule_family_was_recorded_on_both_sides():
    families: dict[str, Counter] = {}
    for case, result in _recorded():
        families.setdefault(case.family, Counter())[result == 0] += 1
    for family in ("rank", "global_dims", "global_strides", "box_dims", "swizzle_span", "element_strides"):
        assert families[family][True] and families[family][False], family
    for family in ("interleave", "global_address", "l2_oob", "rank5_box", "interleave_inner", "random_near"):
        assert families[family][True] and families[family][False], family


def test_the_recording_is_what_the_script_generates():
    recorded = _recorded()
    meta = json.loads(META.read_text())
    assert meta["cases"] == len(recorded) and meta["gpu"] == "NVIDIA H200" and meta["compute_capability"] == "9.0"
    generated = calibration.all_cases(meta["allocation_base"])
    assert [case for case, _ in recorded] == generated


def test_the_generator_covers_each_parameter_and_is_fixed_by_its_seed():
    cases = calibration.all_cases(1 << 40)
    assert cases == calibration.all_cases(1 << 40)  # no hidden randomness
    assert {c.data_type for c in cases} == set(calibration.E.DATA_TYPES)
    assert {c.swizzle for c in cases} == set(calibration.E.SWIZZLES)
    assert {c.interleave for c in cases} == set(calibration.E.INTERLEAVES)
    assert {len(c.global_dims) for c in cases} == set(range(7))
    assert {1, 2**32, 2**32 + 1} <= {d for c in cases for d in c.global_dims}
    assert {0, 1, 256, 257} <= {b for c in cases for b in c.box_dims}
    assert set(range(10)) <= {e for c in cases for e in c.element_strides}
    assert {2**40 - 16, 2**40} <= {s for c in cases for s in c.global_strides}
    assert {a % 32 for c in cases for a in [c.global_address]} >= {0, 16}


def test_the_csv_round_trips_what_a_fake_encoder_answered(tmp_path: Path):
    cases = calibration.all_cases(4096)[:300]

    def fake(case) -> int:  # refuses odd-sized boxes: any rule will do
        return 1 if sum(case.box_dims) % 2 else 0

    path = tmp_path / "fake.csv"
    written = calibration.write_csv(path, calibration.record(cases, fake, lambda r: f"R{r}"))
    assert written == len(cases)
    back = calibration.read_csv(path)
    assert [c for c, _ in back] == cases
    assert [r for _, r in back] == [fake(c) for c in cases]
    assert path.read_text().splitlines()[0].split(",") == list(calibration.CSV_FIELDS)
    assert calibration.tally(back)["rank"] == {
        "accepted": sum(1 for c, r in back if c.family == "rank" and r == 0),
        "refused": sum(1 for c, r in back if c.family == "rank" and r != 0),
    }


def test_the_script_hands_the_driver_the_checks_own_enum_values():
    from smemviz.analysis.tma import _enums

    assert calibration.E.DATA_TYPES == _enums.DATA_TYPES
    assert calibration.E.SWIZZLES == _enums.SWIZZLES and calibration.E.OOB_FILLS == _enums.OOB_FILLS
