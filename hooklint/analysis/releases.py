"""What a release in a hook assumes about its acquire (HL005's facts): whether it
fails or misbehaves when the acquire never happened, what kind of container the
acquire filled, and the code of the state it touches.

These read the libcst node of a :class:`~hooklint.analysis.effects.StateEffect`, so
that the rule only asks questions of effects.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.effects import StateEffect
from hooklint.analysis.facts import ModuleFacts
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
