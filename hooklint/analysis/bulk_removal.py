"""Hooks taken off without their handles: code that empties a module's hook dict.

torch keeps a module's hooks in dicts keyed by handle id (``m._forward_hooks``,
``m._forward_pre_hooks``...).  Some code registers hooks, drops the handles, and later
takes every hook of a kind off at once: ``m._forward_hooks.clear()`` (or ``.pop(k)``,
``.popitem()``), or binds the dict anew (``m._forward_hooks = OrderedDict()``), often in
a loop over ``model.modules()`` or in a same-file helper (``self._clear_hooks()``).
That is a removal like any other: when the code before it raises, it is skipped and
the hooks stay on (HL004 reads these).

A *bulk clear* of a scope is a call there that empties or rebinds a hook dict, or that
runs a same-file function or method which does (followed :data:`HELPER_DEPTH` calls
deep).  Only mutations count: reading a dict (``if m._forward_hooks:``, ``for h in
m._forward_hooks.values()``) takes nothing off, and neither does emptying one that the
same function fills again (``saved = m._backward_hooks.copy()``, ``.clear()``, then
``.update(saved)``: the hooks are off only for a while).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import CallSite, ModuleFacts
from hooklint.analysis.handles import HELPER_DEPTH, HandleModel
from hooklint.analysis.vocabulary import HOOK_DICT_OF_KIND, MODULE_HOOK_DICTS

#: Dict methods that take entries out.
_EMPTYING = frozenset({"clear", "pop", "popitem"})
#: Calls that build the empty dict a hook dict is bound to anew.
_NEW_DICT = frozenset({"OrderedDict", "dict"})


@dataclass(frozen=True)
class BulkClear:
    """A call of a scope that takes hooks off by their dicts."""

    call: CallSite
    #: The hook dicts it empties (``_forward_hooks``...).
    dicts: frozenset[str]
    #: How it takes them off, for messages (``emptying `m._forward_hooks```, or the
    #: helper called).
    how: str


def hook_dict_of(registration) -> str | None:
    """The hook dict a module registration fills (``register_forward_hook`` →
    ``_forward_hooks``); None for tensors, optimizers and process-wide hooks."""
    if registration.api.owner != "module":
        return None
    return HOOK_DICT_OF_KIND.get(registration.api.kind)


def bulk_clears(facts: ModuleFacts, model: HandleModel, scope_id: int) -> list[BulkClear]:
    """The calls of one scope that take hooks off by their dicts, in source order."""
    found = []
    for call in model.calls_in(scope_id):
        cleared = _clears(facts, model, scope_id, call)
        if cleared is not None:
            found.append(BulkClear(call, frozenset({cleared[0]}), f"emptying `{cleared[1]}`"))
            continue
        dicts = _cleared_by_helper(facts, model, call, {scope_id}, 0)
        if dicts:
            found.append(BulkClear(call, frozenset(dicts), f"`{facts.code(call.node.func)}()`"))
    return found


def _clears(facts: ModuleFacts, model: HandleModel, scope_id: int, call: CallSite) -> tuple[str, str] | None:
    """``(dict, code)`` when the call empties a hook dict (:func:`_emptied`) that its
    scope does not fill again (:func:`_restored`)."""
    emptied = _emptied(facts, call)
    if emptied is None or _restored(facts, model, scope_id, emptied[1]):
        return None
    return emptied


def _emptied(facts: ModuleFacts, call: CallSite) -> tuple[str, str] | None:
    """``(dict, code)`` when the call empties a hook dict (``X._forward_hooks.clear()``) or
    builds the empty dict one is bound to (``X._forward_hooks = OrderedDict()``)."""
    func = call.node.func
    if (
        call.attr in _EMPTYING
        and isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Attribute)
        and func.value.attr.value in MODULE_HOOK_DICTS
    ):
        return func.value.attr.value, facts.code(func.value)
    name = (call.callee or call.attr or "").rsplit(".", 1)[-1]
    line = call.site.statement
    if name not in _NEW_DICT or call.node.args or not isinstance(line, cst.SimpleStatementLine):
        return None
    for statement in line.body:
        if isinstance(statement, cst.Assign) and statement.value is call.node and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Attribute) and target.attr.value in MODULE_HOOK_DICTS:
                return target.attr.value, facts.code(target)
    return None


def _restored(facts: ModuleFacts, model: HandleModel, scope_id: int, code: str) -> bool:
    """The scope also fills the dict ``code`` again (``saved = m._forward_hooks.copy()``,
    ``.clear()``, then ``m._forward_hooks.update(saved)``): the hooks are off only for a
    while, not removed."""
    for call in model.calls_in(scope_id):
        func = call.node.func
        if (
            call.attr in ("update", "setdefault")
            and isinstance(func, cst.Attribute)
            and facts.code(func.value) == code
        ):
            return True
    return False


def _cleared_by_helper(
    facts: ModuleFacts, model: HandleModel, call: CallSite, visited: set[int], depth: int
) -> set[str]:
    """The hook dicts a same-file function or method the call runs empties, itself or
    through the helpers it calls."""
    if depth >= HELPER_DEPTH:
        return set()
    helper = model.callee(call)
    if helper is None or id(helper.node) in visited:
        return set()
    visited.add(id(helper.node))
    dicts: set[str] = set()
    for inner in model.calls_in(id(helper.node)):
        cleared = _clears(facts, model, id(helper.node), inner)
        if cleared is not None:
            dicts.add(cleared[0])
        else:
            dicts |= _cleared_by_helper(facts, model, inner, visited, depth + 1)
    return dicts


def may_clear(facts: ModuleFacts) -> bool:
    """Whether any call of the module empties a hook dict (decided without the model)."""
    return facts.memo(
        "may_clear", lambda facts: any(_emptied(facts, call) is not None for call in facts.calls)
    )
