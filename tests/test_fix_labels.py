"""``hooklint rules`` (and the README table built from it) says which rules' fixes are
unsafe: a rule listed ``safe`` whose examples include an unsafe fix is listed
``safe, some unsafe`` (``Rule.some_fixes_unsafe``; JSON: ``some_fixes_unsafe``), and
only such a rule."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from hooklint.cli import main
from hooklint.engine import lint_text
from hooklint.rules import all_rules, rules_by_code
from hooklint.rules.base import RuleContext

SAFE_RULES = [r for r in all_rules() if r.fix_applicability == "safe"]


def _applicabilities(rule) -> set[str]:
    found = set()
    for example in rule.INVALID:
        context = RuleContext(**example.options) if example.options else RuleContext()
        for violation in lint_text(textwrap.dedent(example.code), "example.py", [rule], context):
            if violation.code == rule.code and violation.fix is not None:
                found.add(violation.fix.applicability)
    return found


@pytest.mark.parametrize("rule", SAFE_RULES, ids=[r.code for r in SAFE_RULES])
def test_a_safe_rule_says_when_some_of_its_fixes_are_unsafe(rule):
    assert ("unsafe" in _applicabilities(rule)) == rule.some_fixes_unsafe


def test_the_rules_listing_shows_the_mixed_safety():
    result = CliRunner().invoke(main, ["rules", "--format", "json"])
    rows = {row["code"]: row for row in json.loads(result.output)}
    assert rows["HL002"]["fix"] == "safe" and rows["HL002"]["some_fixes_unsafe"] is True
    assert rows["HL001"]["some_fixes_unsafe"] is False and rows["HL003"]["fix"] == "unsafe"
    table = CliRunner().invoke(main, ["rules", "--format", "markdown"]).output
    assert "| HL002 | `capture-hook-not-removed` | on | stable | safe, some unsafe |" in table


def test_fix_tiers():
    assert rules_by_code()["HL003"].fix_applicability == "unsafe"
    for code in ("HL004", "HL009", "HL011"):
        assert rules_by_code()[code].fix_applicability == "safe"
