"""Analyse once: one frozen value per plan and arch, and every view reads it.

The counters wrap the two costly steps (lint's rules and the bank analysis of the
plan's accesses); each view of one plan must run each of them exactly once."""

from __future__ import annotations

import dataclasses

import pytest

import smemviz
from smemviz.analysis import Analysed, analyse, lint, occupancy, text_report
from smemviz.analysis import _analysed as analysed_module
from smemviz.analysis import _lint as lint_module
from smemviz.analysis.banks import _access as access_module

from ..helpers import EXAMPLES


@pytest.fixture(scope="module")
def plan():
    return smemviz.load_layout(EXAMPLES / "epilogue_banks.toml").plans()[0]


@pytest.fixture
def counted(monkeypatch):
    """How often lint's rules and the bank analysis ran."""
    calls = {"lint": 0, "banks": 0}
    real_lint, real_banks = lint_module.lint_with_accesses, access_module._analyse

    def count_lint(*args, **kwargs):
        calls["lint"] += 1
        return real_lint(*args, **kwargs)

    def count_banks(*args, **kwargs):
        calls["banks"] += 1
        return real_banks(*args, **kwargs)

    monkeypatch.setattr(lint_module, "lint_with_accesses", count_lint)
    monkeypatch.setattr(analysed_module, "lint_with_accesses", count_lint)
    monkeypatch.setattr(access_module, "_analyse", count_banks)
    return calls


def test_the_value_holds_every_answer(plan):
    an = analyse(plan, "sm_90a")
    assert an.plan is plan and an.arch == "sm_90"
    assert an.capacity == plan.capacity("sm_90a")
    assert an.occupancy == occupancy(plan, "sm_90a")
    assert an.findings == lint(plan, "sm_90a")
    assert [f.rule for f in an.beyond_capacity] == [f.rule for f in an.findings if f.rule != "capacity"]
    assert len(an.banks) == len(plan.accesses) and an.bank_reports
    with pytest.raises(dataclasses.FrozenInstanceError):
        an.arch = "sm_100a"  # type: ignore[misc]


def test_analyse_runs_each_step_once(plan, counted):
    analyse(plan, "sm_90a")
    assert counted == {"lint": 1, "banks": 1}


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_an_export_analyses_once(plan, counted, tmp_path, fmt):
    pytest.importorskip("plotly")
    smemviz.export(plan, tmp_path / f"out.{fmt}")
    assert counted == {"lint": 1, "banks": 1}


def test_the_byte_map_analyses_once(plan, counted):
    pytest.importorskip("plotly")
    from smemviz.figures import smem_spec

    smem_spec(plan, "sm_90a")
    assert counted == {"lint": 1, "banks": 1}


def test_views_given_the_value_analyse_nothing(plan, counted):
    pytest.importorskip("plotly")
    from smemviz.figures import smem_spec

    an = analyse(plan, "sm_90a")
    counted.update(lint=0, banks=0)
    spec = smem_spec(an)
    text = text_report(an)
    assert counted == {"lint": 0, "banks": 0}
    assert "bank-conflict" in text or "conflict" in text
    assert spec.meta["capacity"] == an.capacity


def test_the_analysis_is_not_kept_between_calls(plan, counted):
    """No hidden cache: two analyses of one plan run the steps twice, and a view of the same
    plan asked twice analyses twice (what is kept is the value the caller holds)."""
    analyse(plan)
    analyse(plan)
    assert counted == {"lint": 2, "banks": 2}


def test_a_value_for_another_arch_is_made_anew(plan):
    an = analyse(plan, "sm_90a")
    assert smemviz.analysis.as_analysed(an) is an
    other = smemviz.analysis.as_analysed(an, "sm_100a")
    assert isinstance(other, Analysed) and other.arch == "sm_100"
