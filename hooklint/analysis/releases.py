"""What a release in a hook assumes about its acquire (HL005's facts): whether it
fails or misbehaves when the acquire never happened, what kind of container the
acquire filled, and the code of the state it touches.

These read the libcst node of a :class:`~hooklint.analysis.effects.StateEffect`, so
that the rule only asks questions of effects.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.effects import StateEffect
from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.vocabulary import CONTAINER_ADDS, CONTAINER_REMOVALS

#: Removals that assume the item is there (``remove``, ``pop``, ``popleft``), not ``popitem``.
_ITEM_REMOVALS = frozenset(m for m, kind in CONTAINER_REMOVALS.items() if kind == "remove" and m != "popitem")


def assumes_acquired(effect: StateEffect) -> bool:
    """A release that assumes its acquire happened: a decrement, the second call of a
    method-call pair, ``del d[k]``, or ``x.remove(item)``/``x.pop()``/``x.popleft()``."""
    if effect.op in ("decrement", "release"):
        return True
    node = effect.node
    if isinstance(node, cst.Del):
        return isinstance(node.target, cst.Subscript)
    if effect.op == "remove" and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value in _ITEM_REMOVALS
    return False


def container_kind(acquire: StateEffect) -> str:
    """What the acquire filled: ``set`` (``s.add(x)``), ``list`` (``append``,
    ``appendleft``, ``insert``, ``push``), ``dict`` (``d[k] = v``), or ``""``."""
    node = acquire.node
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method == "add":
            return "set"
        if method in CONTAINER_ADDS:
            return "list"
        return ""
    if acquire.key.endswith("[]") and isinstance(node, cst.Assign):
        return "dict"
    return ""


def target_code(facts: ModuleFacts, effect: StateEffect) -> str | None:
    """The code of what the effect changes: ``self.depth`` of ``self.depth -= 1``,
    ``d`` of ``del d[k]``, ``stack`` of ``stack.pop()``; None for anything else."""
    node = effect.node
    if isinstance(node, cst.AugAssign):
        return facts.code(node.target)
    if isinstance(node, cst.Assign):
        return facts.code(node.targets[0].target)
    if isinstance(node, cst.Del) and isinstance(node.target, cst.Subscript):
        return facts.code(node.target.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return facts.code(node.func.value)
    return None


def alone_in_statement(effect: StateEffect) -> tuple[bool, bool]:
    """``(alone, is_call)``: the effect's simple statement line holds one statement, and
    that statement is the effect's call itself (``stack.pop()`` on its own line)."""
    statement = effect.statement
    alone = statement is not None and len(statement.body) == 1
    small = statement.body[0] if alone else None  # type: ignore[union-attr]
    is_call = alone and (small is effect.node or (isinstance(small, cst.Expr) and small.value is effect.node))
    return alone, is_call


def is_lambda(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Lambda)


def helper_code(facts: ModuleFacts, effect: StateEffect) -> str:
    """The callee of the innermost helper call through which a hook makes the effect
    (``self._lower`` of ``self._lower()``)."""
    return facts.code(effect.via[-1].func).strip()


def released_under_own_mark(
    facts: ModuleFacts, release: StateEffect, acquire: StateEffect, registration: Registration, context
) -> bool:
    """A method-call pair (``pf.begin()`` / ``pf.end()``) on an instance of a class of
    this file whose release method starts by returning unless a flag is set
    (``if not self.active: return``) that its acquire method sets to ``True``: the
    release already undoes only what an acquire did.  ``context`` is the function the
    instance is made in (:func:`hook_roles.held_value`)."""
    from hooklint.analysis.hook_roles import held_value

    calls = [release.node, acquire.node]
    if release.pair is None or not all(
        isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) for c in calls
    ):
        return False
    instance = held_value(facts, release.node.func.value, registration, context)
    if not (
        isinstance(instance, cst.Call)
        and isinstance(instance.func, cst.Name)
        and instance.func.value in facts.classes
    ):
        return False
    released = facts.method(instance.func.value, release.node.func.attr.value)
    acquiring = facts.method(instance.func.value, acquire.node.func.attr.value)
    if released is None or acquiring is None:
        return False
    flag = _early_return_flag(released.node)
    return flag is not None and flag in _flags_raised(acquiring.node)


def _self_name(node: cst.FunctionDef) -> str | None:
    params = node.params.params
    return params[0].name.value if params else None


def _own_statements(node: cst.FunctionDef) -> list[cst.BaseStatement]:
    """The method's top-level statements, a leading docstring left out."""
    body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
    if (
        body
        and isinstance(body[0], cst.SimpleStatementLine)
        and isinstance(body[0].body[0], cst.Expr)
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        body = body[1:]
    return body


def _early_return_flag(node: cst.FunctionDef) -> str | None:
    """``active`` for a method whose first statement is ``if not self.active: return``."""
    body = _own_statements(node)
    self_name = _self_name(node)
    if not body or self_name is None or not isinstance(body[0], cst.If) or body[0].orelse is not None:
        return None
    first = body[0]
    test = first.test
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return None
    flag = test.expression
    if not (
        isinstance(flag, cst.Attribute) and isinstance(flag.value, cst.Name) and flag.value.value == self_name
    ):
        return None
    inner = first.body.body if isinstance(first.body, cst.IndentedBlock) else [first.body]
    only_return = (
        len(inner) == 1
        and isinstance(inner[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and len(inner[0].body) == 1
        and isinstance(inner[0].body[0], cst.Return)
    )
    return flag.attr.value if only_return else None


def _flags_raised(node: cst.FunctionDef) -> set[str]:
    """The ``self.X`` the method's own top-level statements set to ``True``."""
    self_name = _self_name(node)
    raised: set[str] = set()
    for statement in _own_statements(node):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Assign) and isinstance(small.value, cst.Name)):
                continue
            if small.value.value != "True":
                continue
            for target in small.targets:
                t = target.target
                if (
                    isinstance(t, cst.Attribute)
                    and isinstance(t.value, cst.Name)
                    and t.value.value == self_name
                ):
                    raised.add(t.attr.value)
    return raised
