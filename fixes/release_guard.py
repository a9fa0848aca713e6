"""Fixes for HL005: make an ``always_call`` post-hook's release tolerate a call whose
pre-hook never ran.

- ``n -= 1`` / ``n = n - 1`` → ``n = max(0, n - 1)`` (the same rewrite as HL001's fix)
- ``s.remove(x)`` on a set → ``s.discard(x)``; on a list → ``if x in s: s.remove(x)``
- ``d.pop(k)`` on a dict, ``del d[k]`` → ``d.pop(k, None)``
- ``stack.pop()`` → ``if stack: stack.pop()`` (a statement), or ``if not stack: return``
  before a statement that uses the popped value, or ``(stack.pop() if stack else None)``
  in a lambda.
- a method-call pair (``timer.start()`` / ``timer.stop()``): :func:`acquired_flag_guard`
  marks the hooked module in the pre-hook once it has acquired, and the post-hook
  releases only when the mark is there (clearing it), so it undoes only what this call
  acquired.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from hooklint.fixes.always_call import clamp_decrement
from hooklint.fixes.edits import (
    InsertAfter,
    InsertLineAfter,
    InsertLinesBefore,
    Replace,
    indent_edits,
    indentation_of,
)

from hooklint.analysis.effects import StateEffect
from hooklint.analysis.facts import HookBody, ModuleFacts, parameter_names
from hooklint.analysis.scopes import local_names
from hooklint.violation import Edit


@dataclass(frozen=True)
class GuardStatement:
    """Put a one-statement line under ``if condition:`` (continuation lines re-indented)."""

    node: cst.CSTNode
    condition: str
    first: str = ""  # a statement to run first under the ``if``

    def resolve(self, at) -> list[Edit]:
        indent = indentation_of(at, self.node)
        start = at.start(self.node)
        first = f"{self.first}\n{indent}    " if self.first else ""
        edits = [Edit(start, start, f"if {self.condition}:\n{indent}    {first}")]
        return edits + indent_edits(at, start.line + 1, at.end(self.node).line, "    ")


@dataclass(frozen=True)
class ReturnUnless:
    """Insert ``if not condition: return`` before a statement."""

    node: cst.CSTNode
    condition: str

    def resolve(self, at) -> list[Edit]:
        return InsertLinesBefore(self.node, (f"if not {self.condition}:", "    return")).resolve(at)


@dataclass(frozen=True)
class ReturnThrough:
    """``return value`` → ``name = value``, ``text``, ``return name``."""

    node: cst.Return
    value: str
    name: str
    text: str

    def resolve(self, at) -> list[Edit]:
        indent = indentation_of(at, self.node)
        code = f"{self.name} = {self.value}\n{indent}{self.text}\n{indent}return {self.name}"
        return [Edit(at.start(self.node), at.end(self.node), code)]


def acquired_flag_guard(
    facts: ModuleFacts, pre: HookBody, post: HookBody, acquires, releases
) -> tuple[list, str | None]:
    """Edits that make ``post`` release a method-call pair only after ``pre`` acquired it
    in this call, or ``([], reason)`` when no exact rewrite is known.

    The pre-hook sets a flag on the hooked module right after the statement of its own
    body that (itself or through a helper) acquires; the post-hook runs the statement
    that releases only under that flag, and clears it.  The flag lives on the module, so
    each module's call is matched with its own (``always_call`` runs the post-hook also
    when an earlier pre-hook raised, before this pre-hook acquired anything).
    """
    if (
        isinstance(pre.node, cst.Lambda)
        or isinstance(post.node, cst.Lambda)
        or not pre.params
        or not post.params
    ):
        return [], "a lambda hook, or one without the module parameter, cannot hold the guard"
    released = {id(r.hook_statement) for r in releases}
    release_line = releases[0].hook_statement
    if len(released) != 1 or release_line is None or len(release_line.body) != 1:
        return [], "the release is spread over several statements of the forward hook"
    small = release_line.body[0]
    if not isinstance(small, cst.Expr) and not any(r.node is small for r in releases):
        # (an assignment that is itself the release, ``x = backup``, can be skipped)
        return [], "the releasing statement's value is used, so it cannot be skipped"
    acquire_line = acquires[-1].hook_statement
    if acquire_line is None or len(acquire_line.body) != 1:
        return [], "the acquiring statement of the pre-hook is not a statement of its own"
    owner, _, method = pre.name.rpartition(".")
    named = owner if method.startswith("__") and owner else method
    flag = "_" + named.strip("_").lower() + "_acquired"
    pre_module, post_module = pre.params[0], post.params[0]
    mark = f"{pre_module}.{flag} = True"
    small = acquire_line.body[0]
    edits: list = []
    if isinstance(small, cst.Return):
        if small.value is None:
            edits.append(InsertLinesBefore(acquire_line, (mark,)))  # a bare return after acquiring
        else:
            name = "result"
            taken = set(parameter_names(pre.node.params)) | local_names(pre.node)[0]
            while name in taken:
                name = "_" + name
            edits.append(ReturnThrough(small, facts.code(small.value), name, mark))
    elif isinstance(small, cst.Raise):
        return [], "the pre-hook raises where it acquires"
    else:
        edits.append(InsertLineAfter(acquire_line, mark))
    edits.append(
        GuardStatement(
            release_line, f"getattr({post_module}, {flag!r}, False)", f"{post_module}.{flag} = False"
        )
    )
    return edits, None


def tolerant_release(
    facts: ModuleFacts,
    effect: StateEffect,
    container: str,
    statement: cst.CSTNode | None,
    statement_is_call: bool,
    in_lambda: bool,
) -> tuple[list, str]:
    """Edits that make ``effect`` tolerate an unmatched call, and the fix's title.

    ``container`` is what the pre-hook filled (``set``, ``list``, ``dict`` or ``""``
    when unknown); ``statement`` is the simple statement holding the effect (None in a
    lambda); ``statement_is_call`` says the statement is the bare call itself.
    Returns ``([], "")`` when no safe rewrite is known.
    """
    node = effect.node
    if effect.op == "decrement":
        edits = clamp_decrement(facts, effect)
        return edits, "Clamp the release at zero: `max(0, n - 1)`"
    if isinstance(node, cst.Del):
        target = node.target
        if (
            container == "list"
            and isinstance(target, cst.Subscript)
            and statement is not None
            and _pure(target.value)
        ):
            return [GuardStatement(statement, facts.code(target.value))], "Delete only from a non-empty list"
        if (
            container == "dict"
            and isinstance(target, cst.Subscript)
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
        ):
            base = facts.code(target.value)
            key = facts.code(target.slice[0].slice.value)
            return [
                Replace(node, f"{base}.pop({key}, None)")
            ], "Use `pop(key, None)`, which tolerates a missing key"
        return [], ""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return [], ""
    method = node.func.attr.value
    owner = facts.code(node.func.value)
    if method == "remove" and len(node.args) == 1:
        if container == "set":
            return [Replace(node.func.attr, "discard")], "Use `discard`, which tolerates a missing item"
        item = node.args[0].value
        if container == "list" and statement_is_call and statement is not None and _pure(item):
            return [
                GuardStatement(statement, f"{facts.code(item)} in {owner}")
            ], "Remove the item only if it is there"
        return [], ""
    if method == "pop" and len(node.args) == 1 and container == "dict":
        return [
            InsertAfter(node.args[0].value, ", None")
        ], "Use `pop(key, None)`, which tolerates a missing key"
    if method in ("pop", "popleft") and (not node.args or container == "list"):
        if not _pure(node.func.value) or isinstance(node.func.value, cst.Subscript):
            # ``if not d[k]`` would raise KeyError itself when the pre-hook never ran.
            return [], ""
        if in_lambda:
            code = facts.code(node)
            return [Replace(node, f"({code} if {owner} else None)")], "Pop only from a non-empty stack"
        if statement is None:
            return [], ""
        if statement_is_call:
            return [GuardStatement(statement, owner)], "Pop only from a non-empty stack"
        return [ReturnUnless(statement, owner)], "Return early when the stack is empty"
    return [], ""


def _pure(node: cst.BaseExpression) -> bool:
    """A name, attribute chain, constant or subscript of those (safe to evaluate twice)."""
    if isinstance(node, (cst.Name, cst.Integer, cst.SimpleString, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.Subscript):
        return _pure(node.value) and all(
            isinstance(e.slice, cst.Index) and _pure(e.slice.value) for e in node.slice
        )
    return False
