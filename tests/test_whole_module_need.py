"""A rule that reasons about every use of a name (``Rule.whole_module``) sends a file
to the whole-file parse only when it can fire there: HL013 only when a stale name of
``torch.nn.utils.parametrize`` is in the file (``whole_module_tokens``)."""

from __future__ import annotations

import pytest

import hooklint.screen as screen
from hooklint.engine import lint_text
from hooklint.engine.prefilter import needs_whole_module
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext
from tests.test_fast_path_equivalence import assert_same

DEFAULT = [r for r in all_rules() if r.default_on and not r.preview]

HOOKS = """
def watch(model, seen):
    handle = model.register_forward_hook(lambda m, i, o: seen.append(o))
    model(1)
    handle.remove()
"""

HARMLESS = "from torch.nn.utils.parametrize import is_parametrized\n" + HOOKS
STALE = "from torch.nn.utils.parametrize import _cache_enabled\n" + HOOKS
STALE_SPLIT = "from torch.nn.utils.parametrize import (\n    is_parametrized,\n    _cache,\n)\n" + HOOKS


def test_a_parametrize_import_without_a_stale_name_needs_no_whole_module():
    assert not needs_whole_module(HARMLESS, DEFAULT)


@pytest.mark.parametrize("text", [STALE, STALE_SPLIT], ids=["one-line", "split"])
def test_a_stale_name_imported_needs_the_whole_module(text):
    assert needs_whole_module(text, DEFAULT)


def test_a_rule_without_whole_module_tokens_is_decided_by_its_prefilter():
    (hl006,) = [r for r in all_rules() if r.code == "HL006"]
    assert hl006.whole_module and not hl006.whole_module_tokens
    assert needs_whole_module(HOOKS, [hl006])
    assert not needs_whole_module("import torch\n", [hl006])


def test_the_harmless_import_takes_the_screen(monkeypatch):
    calls = []
    original = screen.screening_source

    def recording(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(screen, "screening_source", recording)
    lint_text(HARMLESS, "m.py", DEFAULT, RuleContext())
    assert calls == [HARMLESS]
    calls.clear()
    lint_text(STALE, "m.py", DEFAULT, RuleContext())
    assert calls == []  # the whole file, for HL013


@pytest.mark.parametrize("text", [HARMLESS, STALE, STALE_SPLIT], ids=["harmless", "stale", "split"])
def test_findings_and_fixes_are_those_of_the_whole_file(text):
    assert_same(text, DEFAULT)
    assert_same(text)


def test_hl013_still_reports_a_stale_import_next_to_hooks():
    found = lint_text(STALE, "m.py", DEFAULT, RuleContext())
    assert [(v.code, v.start.line) for v in found if v.code == "HL013"] == [("HL013", 1)]
    assert [v.code for v in lint_text(HARMLESS, "m.py", DEFAULT, RuleContext())] == ["HL004"]
