"""Whether forward passes run with grad disabled where a hook fires (HL006).

A forward hook's output only carries an autograd graph when the forward ran with
grad enabled.  This module answers, from one file, whether the model a registration
hooks runs under ``torch.no_grad()`` / ``torch.inference_mode()`` /
``torch.set_grad_enabled(False)`` or a calibration context
(:data:`~hooklint.analysis.vocabulary.NO_GRAD_CONTEXTS`): as a decorator or a
``with`` around the registration, in the registering function after the
registration (the forward that fires the hook), in a call to a calibration runner
there, or because every same-file caller of the registering function is itself
without grad (a few calls deep).  A hook that is itself decorated with a no-grad
context computes graph-free tensors (:func:`computed_in_no_grad_hook`), though what
it receives still carries the forward's graph.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import CallSite, FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.vocabulary import (
    FRESH_RESULT_METHODS,
    NO_GRAD_CONTEXTS,
    NO_GRAD_RUNNERS,
    SET_GRAD_ENABLED,
)

_DEPTH = 3


def _last(name: str | None) -> str:
    return (name or "").rsplit(".", 1)[-1]


def disables_grad(call: CallSite) -> bool:
    """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``,
    a calibration context: a call whose value, entered by ``with``, disables grad."""
    name = _last(call.callee) or (call.attr or "")
    if name in NO_GRAD_CONTEXTS:
        return True
    if name == SET_GRAD_ENABLED and call.node.args:
        value = call.node.args[0].value
        return isinstance(value, cst.Name) and value.value == "False"
    return False


def decorated_without_grad(info: FunctionInfo) -> bool:
    return any(_last(d) in NO_GRAD_CONTEXTS for d in info.decorators)


def _with_calls(facts: ModuleFacts, function: cst.FunctionDef | None) -> list[CallSite]:
    return [
        c
        for c in facts.calls
        if c.site.function is function and c.use.final.role == "with" and disables_grad(c)
    ]


def _inside_no_grad_with(facts: ModuleFacts, call: CallSite) -> bool:
    """The call sits in the body of a ``with`` whose item disables grad."""
    withs = {id(f.node) for f in call.site.frames if f.kind == "with"}
    if not withs:
        return False
    for other in facts.calls:
        if other.use.final.role == "with" and disables_grad(other) and id(other.site.statement) in withs:
            return True
    return False


def runs_without_grad(facts: ModuleFacts, info: FunctionInfo, depth: int = 0) -> bool:
    """The function is decorated with a no-grad context, or every same-file call of it
    (at least one) is inside one or in a function that runs without grad."""
    if decorated_without_grad(info):
        return True
    if depth >= _DEPTH:
        return False
    callers = [
        c
        for c in facts.calls
        if (c.attr == info.name if info.class_name is not None else c.callee == info.name)
        and c.site.function is not info.node
    ]
    if not callers:
        return False
    for call in callers:
        if _inside_no_grad_with(facts, call):
            continue
        outer = facts.function_for(call.site.function) if call.site.function is not None else None
        if outer is None or not runs_without_grad(facts, outer, depth + 1):
            return False
    return True


def hooks_fire_without_grad(facts: ModuleFacts, registration: Registration) -> bool:
    """The forwards that fire this registration's hook run with grad disabled, as far as
    this file shows: the registering function (or an enclosing one) runs without grad,
    the registration sits in a no-grad ``with``, or the registering function runs the
    model after it inside a no-grad ``with`` or through a calibration runner."""
    function = registration.site.function
    if function is None:
        return False
    info = facts.function_for(function)
    while info is not None:
        if runs_without_grad(facts, info):
            return True
        info = info.parent
    order = registration.site.order
    for call in facts.calls:
        if call.site.function is not function or call.site.order < order:
            continue
        if call.use.final.role == "with" and disables_grad(call):
            return True
        if _last(call.callee) in NO_GRAD_RUNNERS or call.attr in NO_GRAD_RUNNERS:
            return True
    for frame in registration.site.frames:
        if frame.kind == "with":
            for call in _with_calls(facts, function):
                if call.site.statement is frame.node:
                    return True
    return False


def computed_in_no_grad_hook(
    facts: ModuleFacts, registration: Registration, value: cst.BaseExpression
) -> bool:
    """The hook is a def decorated with ``torch.no_grad()`` / ``inference_mode()``, and
    ``value`` is computed in it as a new tensor (arithmetic, or a method that never
    returns its receiver or a view: :data:`FRESH_RESULT_METHODS`): it holds no graph.
    The tensors the hook receives (``output``, ``output[0]``, ``output.view(...)``)
    still do."""
    hook = registration.hook
    if hook is None or not isinstance(hook.node, cst.FunctionDef):
        return False
    info = facts.function_for(hook.node)
    if info is None or not decorated_without_grad(info):
        return False
    if isinstance(value, cst.BinaryOperation):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in FRESH_RESULT_METHODS
    )
