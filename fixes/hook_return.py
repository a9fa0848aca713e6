"""Fixes for HL008: make a hook's return value deliberate.

- a lambda whose value replaces the output by accident → ``(expr, None)[1]``
- a ``def`` hook whose rebinding of its output/args is dropped → ``return output``
  (``return args, kwargs`` for a ``with_kwargs`` pre-hook) at the end of its body.
"""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import InsertLineAfter, Replace

from hooklint.analysis.facts import ModuleFacts


def return_none_from_lambda(facts: ModuleFacts, body: cst.BaseExpression) -> list:
    return [Replace(body, f"({facts.code(body)}, None)[1]")]


def return_rebound(function: cst.FunctionDef, names: list[str]) -> list:
    if not isinstance(function.body, cst.IndentedBlock) or not function.body.body:
        return []
    return [InsertLineAfter(function.body.body[-1], "return " + ", ".join(names))]
