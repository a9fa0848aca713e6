"""Parse → facts → rules: one facts pass over the module libcst parsed, then each
rule's query over the facts."""

from __future__ import annotations

from hooklint.engine.parse import parse_module
from hooklint.rules.base import RuleContext


def _findings(code: str, rules, context: RuleContext):
    """``(module, [(rule, finding), ...])`` for code that libcst parses; else libcst's
    ParserSyntaxError, or a short reason."""
    import libcst

    from hooklint.analysis.collector import collect
    from hooklint.engine.construction import direct_construction

    try:
        with direct_construction(code.count("\n")):
            module = parse_module(code)
    except libcst.ParserSyntaxError as exc:
        return exc
    except (RecursionError, ValueError) as exc:  # deeply nested or unparseable input
        return type(exc).__name__
    facts = collect(module, context.registration_wrappers, context.project)
    findings = []
    try:
        for rule in rules:
            if rule.code == "HL000":
                continue
            for finding in rule().check(facts, context):
                findings.append((rule, finding))
    finally:
        facts.release()  # the findings hold nodes, never the facts
    return module, findings
