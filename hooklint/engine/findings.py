"""Parse → facts → rules: one facts pass over the module libcst parsed, then each
rule's query over the facts."""

from __future__ import annotations

import dataclasses

from hooklint.engine.parse import parse_module
from hooklint.rules.base import RuleContext


def _findings(code: str, rules, context: RuleContext):
    """``(module, [(rule, finding), ...])`` for code that libcst parses; else libcst's
    ParserSyntaxError, or a short reason."""
    import libcst

    from hooklint.analysis.collector import collect

    try:
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
        _release(facts)
    return module, findings


def _release(facts) -> None:
    """Break the reference cycles the facts form once the rules are done with them:
    the models cached on the facts refer back to them, and a nested def's
    :class:`FunctionInfo` and its parent's refer to each other.  Each cycle holds
    part of the tree (all of it, through ``facts.module``), which reference counting
    then cannot free: the garbage collector would have to walk every node of it after
    the lint (a tenth of a large file's lint time).  The findings hold nodes, never
    the facts."""
    for info in facts.functions:
        info.parent = None
        info.nested = {}
    fields = {f.name for f in dataclasses.fields(facts)}
    for name in [n for n in vars(facts) if n not in fields]:
        del facts.__dict__[name]
