"""What the rule tests in this folder share: dedented sources, linting with some rules
(keeping their findings only), and the bundled example files of a rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hooklint.engine import lint_text
from hooklint.rules import rules_by_code
from hooklint.rules.base import RuleContext

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: The rules on when a hook goes away (the users of :mod:`hooklint.analysis.lifetime`).
LIFETIME_RULES = ("HL003", "HL004", "HL009", "HL011")


def dedented(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def findings(text: str, codes, context: RuleContext | None = None, path: str = "t.py"):
    """The findings of the rules ``codes`` on ``text`` (dedented), and of no other rule."""
    rules = [rules_by_code()[code] for code in codes]
    return [v for v in lint_text(dedented(text), path, rules, context or RuleContext()) if v.code in codes]


def check_example_files(code: str, clean_under) -> None:
    """Each buggy ``examples/hlNNN_*.py`` is flagged by rule ``code``; each of its
    ``*_clean.py`` counterparts is flagged by none of the rules ``clean_under``."""
    number = code[2:]
    buggy = sorted(p for p in EXAMPLES.glob(f"hl{number}_*.py") if not p.stem.endswith("_clean"))
    clean = sorted(EXAMPLES.glob(f"hl{number}_*_clean.py"))
    assert buggy and clean
    for path in buggy:
        assert findings(path.read_text(), (code,)), f"{path.name} is not flagged"
    for path in clean:
        assert findings(path.read_text(), clean_under) == [], f"{path.name} is flagged"


def rule_findings(text: str, rule, target: tuple[int, int] = (2, 4)):
    """The findings of ``rule`` on ``text`` (dedented) for the target torch ``target``."""
    return findings(text, (rule.code,), RuleContext(target_torch=target))


def lint(text: str, rules, **options):
    """Every finding of ``rules`` on ``text`` (dedented), with the settings ``options``."""
    return lint_text(dedented(text), "m.py", rules, RuleContext(**options))


def codes_and_lines(text: str, rules, **options) -> list[tuple[str, int]]:
    """``(code, line)`` of every finding of ``rules`` on ``text``, sorted."""
    return sorted((v.code, v.start.line) for v in lint(text, rules, **options))
