"""Fixes that change a registration's keyword arguments (HL017, HL018), and the loop
that feeds it (HL017): text edits, so the call's formatting and comments stay.

- add keywords after the last argument: ``reg(h)`` → ``reg(h, with_kwargs=True)``;
- drop one keyword argument: ``reg(h, with_kwargs=True)`` → ``reg(h)``;
- iterate a hook dict's items instead of its values, so the loop has the handle id
  the flags are keyed by: ``for h in m._forward_hooks.values():`` →
  ``for hook_id, h in m._forward_hooks.items():``.
"""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import DeleteAfter, InsertAfter, Replace


def add_keywords(call: cst.Call, text: str) -> list:
    """Append ``text`` (``with_kwargs=True``) as the call's last arguments."""
    if not call.args:
        return []
    return [InsertAfter(call.args[-1].value, f", {text}")]


def drop_keyword(facts, call: cst.Call, name: str) -> list:
    """Delete ``name=...`` from the call (never its first argument; not when a comment
    sits in the call, which the deletion could take with it)."""
    if "#" in facts.code(call):
        return []
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == name:
            if index == 0:
                return []
            return [DeleteAfter(call.args[index - 1].value, arg.value)]
    return []


def iterate_items(target: cst.BaseExpression, view: cst.Attribute, key: str, facts) -> list:
    """``for h in d.values()`` → ``for key, h in d.items()`` (``view`` is ``d.values``)."""
    return [Replace(target, f"{key}, {facts.code(target)}"), Replace(view.attr, "items")]
