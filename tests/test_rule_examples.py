"""Every rule's VALID/INVALID examples, run as tests (Fixit's model).

VALID: the rule reports nothing.  INVALID: the rule reports, at ``line`` when given,
with ``message`` in the text when given; when ``expected`` is given, applying the
rule's fix (unsafe fixes included) yields exactly that code, which parses, no longer
has the violation, and is a fixed point (a second fix changes nothing).  When
``expected`` is None, no fix is offered.
"""

from __future__ import annotations

import textwrap

import pytest

from hooklint.engine import fix_text, lint_text, parses
from hooklint.rules import all_rules
from hooklint.rules.base import RuleContext

RULES = [r for r in all_rules() if r.code != "HL000"]


def _context(options: dict) -> RuleContext:
    return RuleContext(**options)


def _cases(kind: str):
    for rule in RULES:
        for index, example in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind.lower()}-{index}")


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.mark.parametrize(("rule", "example"), list(_cases("VALID")))
def test_valid_example_is_not_flagged(rule, example):
    violations = lint_text(_code(example.code), "example.py", [rule], _context(example.options))
    assert [v for v in violations if v.code == rule.code] == []


@pytest.fixture
def positions_only_for_what_findings_name(monkeypatch):
    """The engine computes positions for the nodes findings and fixes hold; asking for
    another node falls back to every node's (correct, but the cost a lint avoids)."""
    import hooklint.engine.locator

    def fail(self):
        raise AssertionError("a finding or fix asked for a node it does not hold")

    monkeypatch.setattr(hooklint.engine.locator._Locator, "every_position", fail)


@pytest.mark.usefixtures("positions_only_for_what_findings_name")
@pytest.mark.parametrize(("rule", "example"), list(_cases("INVALID")))
def test_invalid_example_is_flagged_and_fixed(rule, example):
    source = _code(example.code)
    context = _context(example.options)
    violations = [v for v in lint_text(source, "example.py", [rule], context) if v.code == rule.code]
    assert violations, f"{rule.code} did not flag:\n{source}"
    if example.line is not None:
        assert example.line in [v.start.line for v in violations]
    if example.message is not None:
        assert any(example.message in v.message for v in violations), [v.message for v in violations]
    if example.expected is None:
        assert all(v.fix is None for v in violations), "a fix was offered where the example expects none"
        return
    outcome = fix_text(source, "example.py", [rule], context, unsafe=True)
    assert outcome.text == _code(example.expected)
    assert parses(outcome.text)
    assert [v for v in outcome.violations if v.code == rule.code] == []
    again = fix_text(outcome.text, "example.py", [rule], context, unsafe=True)
    assert again.text == outcome.text and again.fixed == 0


def test_every_rule_documents_itself_in_ruff_sections():
    for rule in all_rules():
        docs = rule.documentation()
        for section in ("## What it does", "## Why is this bad?", "## Fix safety"):
            assert section in docs, f"{rule.code} docs lack {section!r}"
        if rule.code != "HL000":
            assert "## Example" in docs, rule.code
            assert len(rule.VALID) >= 3 and len(rule.INVALID) >= 3, (
                f"{rule.code} needs 3 VALID and 3 INVALID examples"
            )


def test_codes_and_names_are_unique_and_well_formed():
    codes = [r.code for r in all_rules()]
    names = [r.name for r in all_rules()]
    assert len(set(codes)) == len(codes) and len(set(names)) == len(names)
    assert all(len(c) == 5 and c.startswith("HL") and c[2:].isdigit() for c in codes)
