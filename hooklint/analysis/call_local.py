"""Hook state that lives for one call of a function which also removes the hooks.

A pre-/post-hook pair whose shared state is a local of one function (``stack = []``,
``depth = [0]``), registered there (or by a helper it calls), whose handles that
function removes in ``finally`` (or scopes with ``with``), leaves nothing behind: when
``forward`` raises, the stale state dies with the call, and so do the hooks.  A
removal outside ``finally``, by that function or by one nested in it between it and
the registration, counts too: the hooks a raising ``forward`` leaves on are the only
thing that still reaches the stale state, and HL004 reports them (one bug, one
finding).  (A helper's caller, below, must still remove in ``finally``.)  The
state may reach the hooks two ways:

* a free name of the hooks that the registering function, or a function around it,
  binds (``def measure(): stack = []; def attach(m): ... stack.append(...)``);
* a parameter of a same-file helper that registers the pair and returns the handles,
  when every call of that helper in the file passes a local of its caller
  (``handles = track(model, depth)`` in a ``try`` whose ``finally`` removes them).

The local must not leave the function (returned, yielded, or stored on an
attribute): then the stale state would outlive the call.
"""

from __future__ import annotations

import re

import libcst as cst

from hooklint.analysis.facts import FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.handles import HandleModel, handle_model
from hooklint.analysis.names import argument_for
from hooklint.analysis.scopes import assigned_values, local_names
from hooklint.analysis.vocabulary import NEW_CONTAINER_CALLS
from hooklint.analysis.walk import descendants

_DISPLAYS = (
    cst.List,
    cst.Dict,
    cst.Set,
    cst.Tuple,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.Integer,
    cst.Float,
    cst.SimpleString,
)
_ROOT = re.compile(r"([A-Za-z_]\w*)([.\[].*)?$")


def state_dies_with_call(facts: ModuleFacts, registrations: list[Registration], keys: list[str]) -> bool:
    """Every state key is a local of one function call that removes every one of
    ``registrations``' handles in ``finally`` or ``with`` (see the module docstring)."""
    roots = set()
    for key in keys:
        match = _ROOT.match(key)
        if match is None or match.group(1) in ("self", "cls"):
            return False
        roots.add(match.group(1))
    model = handle_model(facts)
    return all(_dies_with_call(facts, model, r, root) for r in registrations for root in roots)


def _dies_with_call(facts: ModuleFacts, model: HandleModel, registration: Registration, root: str) -> bool:
    function = registration.site.function
    info = facts.function_for(function) if function is not None else None
    current = info
    while current is not None:
        assigned, declared = local_names(current.node)
        if root in declared:
            return False
        if root in assigned and root not in current.params:
            return (
                _fresh(facts, current, root)
                and _removed_by(model, registration, _chain(info, current))
                and not _escapes(current, root, _finally_removing(model, registration, current))
            )
        if root in current.params:
            if current is not info:
                return False
            return _helper_of_callers_local(facts, model, info, root)
        current = current.parent
    return False


def _chain(inner: FunctionInfo, owner: FunctionInfo) -> list[FunctionInfo]:
    """``inner`` and the functions around it, out to ``owner``."""
    chain = [inner]
    while chain[-1] is not owner and chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return chain


def _removed_by(model: HandleModel, registration: Registration, functions: list[FunctionInfo]) -> bool:
    """The registration's handles are scoped by ``with``, or removed by one of
    ``functions`` (the registering function and those around it, out to the one whose
    call the state lives for).  A removal outside ``finally`` counts: a raising
    ``forward`` then leaves the hooks on, with the stale state they hold, and that is
    HL004's finding (the hooks), not a second one for the state they alone still reach."""
    flow = model.acquisition_of(registration).flow
    if flow.scoped:
        return True
    if not flow.stores or flow.escapes is not None:
        return False
    return any(model.removals_of(flow.stores, id(f.node)) for f in functions)


def _helper_of_callers_local(
    facts: ModuleFacts, model: HandleModel, helper: FunctionInfo, param: str
) -> bool:
    """``helper`` hands its handles back, and every same-file call of it passes a local
    of the caller for ``param`` and removes what it gets in ``finally``."""
    if helper.parent is not None or helper.class_name is not None:
        return False
    if not model.returns_handles(helper):
        return False
    calls = [c for c in facts.calls if c.callee == helper.name and c.attr is None]
    if not calls:
        return False
    for call in calls:
        value = argument_for(call.node, helper.params, param)
        caller_node = call.site.function
        caller = facts.function_for(caller_node) if caller_node is not None else None
        if not isinstance(value, cst.Name) or caller is None:
            return False
        assigned, _ = local_names(caller.node)
        if (
            value.value not in assigned
            or value.value in caller.params
            or not _fresh(facts, caller, value.value)
            or _escapes(caller, value.value)
        ):
            return False
        acquisition = next(
            (a for a in model.acquisitions(id(caller.node)) if a.node is call.node and a.helper is helper),
            None,
        )
        if acquisition is None:
            return False
        flow = acquisition.flow
        if not flow.scoped and not any(
            r.site.in_finally for r in model.removals_of(flow.stores, id(caller.node))
        ):
            return False
    return True


def _fresh(facts: ModuleFacts, info: FunctionInfo, name: str) -> bool:
    """Every plain assignment of ``name`` in the function (``stack = []``, ``stack, seen
    = [], set()``: :func:`~hooklint.analysis.scopes.assigned_values`) makes a new object
    (a literal, a display or comprehension, a builtin container call, or an object of
    a class of the file, ``rec = Recorder()``), not another name for shared state
    (``stack = self.stack``)."""
    values = assigned_values(info.node, name)
    return bool(values) and all(_new_object(facts, v) for v in values)


def _new_object(facts: ModuleFacts, value: cst.BaseExpression) -> bool:
    if isinstance(value, _DISPLAYS):
        return True
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name) and func.value in facts.classes:
            return True
        code = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        return code in NEW_CONTAINER_CALLS
    return False


def _finally_removing(
    model: HandleModel, registration: Registration, info: FunctionInfo
) -> list[cst.CSTNode]:
    """The statements of ``info`` that run only after a ``try`` without handlers whose
    ``finally`` removes the registration's handles, in that ``try``'s block: when
    ``forward`` raises, that ``try`` passes the exception on and they never run."""
    flow = model.acquisition_of(registration).flow
    removals = {id(r.call) for r in model.removals_of(flow.stores, id(info.node)) if r.site.in_finally}
    if not removals:
        return []
    later: list[cst.CSTNode] = []
    for node in (info.node, *descendants(info.node.body, into_functions=False)):
        body = getattr(getattr(node, "body", None), "body", None)
        if not isinstance(body, (list, tuple)):
            continue
        for index, statement in enumerate(body):
            if (
                isinstance(statement, cst.Try)
                and not statement.handlers
                and statement.finalbody is not None
                and any(id(n) in removals for n in descendants(statement.finalbody))
            ):
                later.extend(body[index + 1 :])
    return later


def _escapes(info: FunctionInfo, name: str, after: list[cst.CSTNode] = ()) -> bool:
    """``name`` is returned, yielded, or stored on an attribute or subscript; not by a
    ``return`` among (or inside) the statements ``after``, which run only when the
    forward did not raise (:func:`_finally_removing`)."""
    late = {id(n) for statement in after for n in descendants(statement, into_functions=False)}
    late |= {id(statement) for statement in after}
    for node in descendants(info.node.body, into_functions=False):
        value = None
        if isinstance(node, cst.Return) and id(node) in late:
            continue
        if isinstance(node, (cst.Return, cst.Yield)):
            value = node.value
        elif isinstance(node, cst.Assign) and any(
            isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in node.targets
        ):
            value = node.value
        if value is not None and any(isinstance(n, cst.Name) and n.value == name for n in _names(value)):
            return True
    return False


def _names(node: cst.CSTNode):
    yield node
    yield from descendants(node)
