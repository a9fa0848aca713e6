"""Fixing a text: ruff's loop.

The chosen fixes' edits are applied as text, the result re-parsed and re-linted,
until no fix is left.  A round whose result does not parse is retried one fix at a
time; a fix that breaks the parse is dropped and reported, never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hooklint.engine.lint import lint_text
from hooklint.engine.parse import parses
from hooklint.lexical import line_starts
from hooklint.rules.base import RuleContext
from hooklint.violation import Edit, Fix, Location, Violation

MAX_FIX_ROUNDS = 20


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (positions refer to ``text``)."""
    starts = line_starts(text)

    def offset(location: Location) -> int:
        if location.line > len(starts):
            return len(text)
        return min(starts[location.line - 1] + location.column - 1, len(text))

    for edit in sorted(set(edits), key=lambda e: (e.start, e.end), reverse=True):
        text = text[: offset(edit.start)] + edit.content + text[offset(edit.end) :]
    return text


def _overlaps(a: Fix, b: Fix) -> bool:
    return any(x.start <= y.end and y.start <= x.end for x in a.edits for y in b.edits)


@dataclass
class FixOutcome:
    text: str
    fixed: int
    failures: list[str]
    violations: list[Violation]
    #: The code of each fix applied (``--show-fixes``).
    codes: list[str] = field(default_factory=list)


def fix_text(text: str, path: str, rules, context: RuleContext, unsafe: bool, notebook=None) -> FixOutcome:
    """Apply fixes until none is left; never return code that does not parse (nor,
    for a ``notebook``'s joined cells, code moved across cells: :mod:`hooklint.notebook`)."""

    def keeps(candidate: str) -> bool:
        return parses(candidate) and (notebook is None or notebook.keeps_cells(candidate))

    fixed = 0
    codes: list[str] = []
    failures: list[str] = []
    broken: set[tuple[str, Location]] = set()
    violations = lint_text(text, path, rules, context)
    for _ in range(MAX_FIX_ROUNDS):
        fixable = [v for v in violations if v.is_fixable(unsafe) and (v.code, v.start) not in broken]
        if not fixable:
            break
        chosen: list[Violation] = []
        for violation in fixable:
            if not any(_overlaps(violation.fix, other.fix) for other in chosen):
                chosen.append(violation)
        candidate = apply_edits(text, [e for v in chosen for e in v.fix.edits])
        if not keeps(candidate):
            first = chosen[0]
            chosen = [first]
            candidate = apply_edits(text, first.fix.edits)
            if not keeps(candidate):
                broken.add((first.code, first.start))
                where = (
                    f"{first.start.line}:{first.start.column}"
                    if notebook is None
                    else notebook.where(first.start)
                )
                why = (
                    "it would leave code that does not parse"
                    if notebook is None or not parses(candidate)
                    else "it would move code across notebook cells"
                )
                failures.append(f"{path}:{where}: {first.code} fix rolled back: {why}")
                continue
        text = candidate
        fixed += len(chosen)
        codes.extend(v.code for v in chosen)
        violations = lint_text(text, path, rules, context)
    return FixOutcome(text, fixed, failures, violations, codes)
