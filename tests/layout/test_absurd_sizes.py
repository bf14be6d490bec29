"""The Python API refuses integers beyond 64 bits, as layout files do
(issue 23, point 12): ``count=2**70`` is 2.4e21 B, no memory at all."""

from __future__ import annotations

import pytest

from smemviz import SmemAllocation, SmemAllocator, TmemAllocation
from smemviz._errors import DeclarationError


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"dtype": "bf16", "count": 2**70}, "count"),
        ({"size_bytes": 2**70}, "size_bytes"),
        ({"size_bytes": 1024, "alignment": 2**64}, "alignment"),
    ],
)
def test_smem_fields_beyond_64_bits_are_refused_naming_the_field(kwargs, field):
    with pytest.raises(DeclarationError) as info:
        SmemAllocation("huge", **kwargs)
    msg = str(info.value)
    assert "'huge'" in msg and field in msg and "64 bits" in msg
    assert info.value.field == field


def test_the_largest_64_bit_value_is_still_a_declaration():
    a = SmemAllocation("edge", size_bytes=2**63 - 1, alignment=1)
    assert a.size_bytes == 2**63 - 1


def test_tmem_columns_beyond_64_bits_are_refused():
    with pytest.raises(DeclarationError, match="num_columns .* does not fit in 64 bits"):
        TmemAllocation("acc", 2**64)


def test_a_field_grown_after_construction_is_refused_by_compute_layout():
    a = SmemAllocation("a", 1024)
    s = SmemAllocator()
    s.add(a)
    a.size_bytes = 2**70  # allocations are mutable; compute_layout() checks them again
    with pytest.raises(DeclarationError, match="size_bytes .* does not fit in 64 bits"):
        s.compute_layout()
