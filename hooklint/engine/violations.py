"""Findings to violations: a message on one line, positions, and the fix's edits
resolved to text positions (a fix of another module's code is never offered)."""

from __future__ import annotations

from hooklint.engine.locator import _Locator, _nodes_named
from hooklint.rules.base import Finding
from hooklint.violation import SAFE, UNSAFE, Fix, Location, Violation


def _report(outcome, path: str, text: str, line_numbers: list[int] | None = None) -> list[Violation]:
    """Findings as violations, with positions in ``text`` (the parsed code kept the
    columns of every line it kept; ``line_numbers`` maps its lines to ``text``'s when
    it dropped some); :func:`lint_text` applies ``# noqa``."""
    module, findings = outcome
    if not findings:
        return []
    locator = _Locator(module, text, _nodes_named(findings), line_numbers)
    violations = []
    for rule, finding in findings:
        try:
            violations.append(_violation(rule, finding, path, locator))
        except KeyError:  # it points into another module (a hook body imported from it): that file's finding
            continue
    return sorted(set(violations), key=lambda v: v.sort_key)


def _violation(rule, finding: Finding, path: str, locator: _Locator) -> Violation:
    fix = None
    if finding.fix_edits and finding.fix_withheld is None:
        from hooklint.fixes.edits import resolve_edits

        try:
            edits = tuple(
                sorted(set(resolve_edits(finding.fix_edits, locator)), key=lambda e: (e.start, e.end))
            )
        except KeyError:  # an edit of another module's code (cross-file evidence) is never offered
            edits = None
        fix = (
            None
            if edits is None
            else Fix(
                finding.fix_message,
                UNSAFE if finding.unsafe_fix or rule.fix_applicability == UNSAFE else SAFE,
                edits,
            )
        )
    message = " ".join(finding.message.split())  # one line: names copied from source may hold line breaks
    if finding.fix_withheld:
        message += f" (fix withheld: {finding.fix_withheld})"
    start = locator.start(finding.node)
    return Violation(
        code=rule.code,
        name=rule.name,
        message=message,
        path=path,
        start=start,
        end=locator.end(finding.node),
        fix=fix,
        fix_withheld=finding.fix_withheld,
        source_line=locator.line(start.line),
        related=tuple(
            node if isinstance(node, Location) else locator.start(node) for node in finding.related
        ),
    )
