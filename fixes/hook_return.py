"""Fixes for HL008: make a hook's return value deliberate.

- a lambda whose value replaces the output by accident → ``(expr, None)[1]``
- a ``def`` hook whose rebinding of its output/args is dropped → ``return output``
  (``return args, kwargs`` for a ``with_kwargs`` pre-hook) at the end of its body.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from hooklint.fixes.edits import Replace

from hooklint.analysis.facts import ModuleFacts
from hooklint.violation import Edit, Location


@dataclass(frozen=True)
class AppendStatement:
    """Add a statement at the end of an indented function body."""

    function: cst.FunctionDef
    text: str

    def resolve(self, at) -> list[Edit]:
        body = self.function.body
        first, last = body.body[0], body.body[-1]  # type: ignore[union-attr]
        line = at.line(at.start(first).line)
        indent = line[: len(line) - len(line.lstrip())]
        end_line = at.end(last).line
        here = Location(end_line, len(at.line(end_line)) + 1)
        return [Edit(here, here, f"\n{indent}{self.text}")]


def return_none_from_lambda(facts: ModuleFacts, body: cst.BaseExpression) -> list:
    return [Replace(body, f"({facts.code(body)}, None)[1]")]


def return_rebound(function: cst.FunctionDef, names: list[str]) -> list:
    if not isinstance(function.body, cst.IndentedBlock) or not function.body.body:
        return []
    return [AppendStatement(function, "return " + ", ".join(names))]
