"""Refused declarations carry what they were about as data (allocation name,
field), and the layout-file reader points at the key from that data."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import smemviz
from smemviz import DeclarationError, DeclarationTypeError
from smemviz.sources.layout_file import LayoutFileError, parse_layout_text


@pytest.mark.parametrize(
    ("make", "error", "allocation", "field"),
    [
        (lambda: smemviz.SmemAllocation("a", -1), DeclarationError, "a", "size_bytes"),
        (lambda: smemviz.SmemAllocation("a", 0), DeclarationError, "a", "size_bytes"),
        (lambda: smemviz.SmemAllocation("a", 1.5), DeclarationTypeError, "a", "size_bytes"),
        (lambda: smemviz.SmemAllocation("a", 64, 3), DeclarationError, "a", "alignment"),
        (lambda: smemviz.SmemAllocation("a", 64, "8"), DeclarationTypeError, "a", "alignment"),
        (lambda: smemviz.SmemAllocation("a", 64, 8, "f16", 0), DeclarationError, "a", "count"),
        (lambda: smemviz.SmemAllocation("a", 64, 8, "f16", 1.0), DeclarationTypeError, "a", "count"),
        (lambda: smemviz.SmemAllocation("a", 0, 8, "no_such_type", 4), DeclarationError, "a", "dtype"),
        (lambda: smemviz.SmemAllocation("a", 2, 8, "f16", 4), DeclarationError, "a", "size_bytes"),
        (lambda: smemviz.SmemAllocation("", 64), DeclarationError, "", "name"),
        (lambda: smemviz.SmemAllocation(7, 64), DeclarationTypeError, None, "name"),
        (lambda: smemviz.SmemAllocation("a\x1b[31m", 64), DeclarationError, "a\x1b[31m", "name"),
        (lambda: smemviz.TmemAllocation("t", 0), DeclarationError, "t", "num_columns"),
        (lambda: smemviz.TmemAllocation("t", "32"), DeclarationTypeError, "t", "num_columns"),
        (lambda: smemviz.TmemAllocation("t\u202e", 32), DeclarationError, "t\u202e", "name"),
    ],
)
def test_refused_allocation_names_allocation_and_field(make, error, allocation, field):
    with pytest.raises(error) as info:
        make()
    assert info.value.allocation == allocation
    assert info.value.field == field
    # still the builtin types callers catch
    assert isinstance(info.value, ValueError if error is DeclarationError else TypeError)


@dataclass
class _Cfg:
    num_stages: object
    barrier_ptr: object = None


@dataclass
class _Pipe:
    name: str
    pipeline_config: _Cfg
    pipeline_group: object = None


def test_pipeline_stages_error_names_field():
    alloc = smemviz.SmemAllocator()
    with pytest.raises(DeclarationError) as info:
        alloc.add_resource(_Pipe("load", _Cfg(0)))
    assert (info.value.allocation, info.value.field) == ("load", "num_stages")


def test_tmem_ptr_slot_error_names_field():
    alloc = smemviz.SmemAllocator()
    with pytest.raises(DeclarationError) as info:
        alloc.add_tmem_ptr(smemviz.SmemAllocation("slot", 2, 4))
    assert (info.value.allocation, info.value.field) == ("slot", "size_bytes")


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        # the name holds another field's name: the key still comes from the error's field
        ('name = "size_bytes"\ndtype = "f16"\ncount = 0\n', "smem[0].count"),
        ('name = "alignment"\nsize = -1\n', "smem[0].size"),
        ('name = "count"\nsize = 64\nalign = 48\n', "smem[0].align"),
        ('name = "a"\ndtype = "nope"\n', "smem[0].dtype"),
    ],
)
def test_layout_file_error_key_comes_from_the_field(entry, key):
    with pytest.raises(LayoutFileError) as info:
        parse_layout_text("[[smem]]\n" + entry, format="toml", source="f.toml")
    assert info.value.key == key
    assert info.value.line is not None
