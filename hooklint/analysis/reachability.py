"""Which statements of a function can never run: those after a ``return``, ``raise``,
``continue`` or ``break`` in the same block (and everything inside them).

A removal placed there is no removal (``return out`` then ``handle.remove()``).  The
check is per block, as CPython's compiler sees it: a terminator inside an ``if`` does
not make the code after the ``if`` dead.
"""

from __future__ import annotations

import libcst as cst

_TERMINATORS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def dead_statements(function: cst.FunctionDef | cst.Module) -> set[int]:
    """The ids of the statements of ``function``'s body (nested defs excluded) that
    follow a terminator in their block: the outermost dead statement of each run."""
    dead: set[int] = set()
    _visit_block(_body(function), dead)
    return dead


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        body = getattr(body, "body", ())
    return list(body) if isinstance(body, (list, tuple)) else []


def _visit_block(statements: list[cst.CSTNode], dead: set[int]) -> None:
    finished = False
    for statement in statements:
        if finished:
            dead.add(id(statement))
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            finished = any(isinstance(small, _TERMINATORS) for small in statement.body)
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue  # a nested definition has reachability of its own
        for block in _blocks(statement):
            _visit_block(block, dead)


def _blocks(statement: cst.CSTNode):
    """The statement lists directly inside a compound statement (``if``/``elif``/
    ``else``, loops, ``try``'s parts, ``with``, ``match`` cases)."""
    yield _body(statement)
    orelse = getattr(statement, "orelse", None)
    if orelse is not None:
        if isinstance(orelse, cst.If):
            yield from _blocks(orelse)
        else:
            yield _body(orelse)
    for handler in getattr(statement, "handlers", ()) or ():
        yield _body(handler)
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield _body(final)
    for case in getattr(statement, "cases", ()) or ():
        yield _body(case)
