"""Hooks a function puts on its caller's module for one run and leaves there (HL003's
question).

A function that hooks a module its caller handed in (a parameter, or something
reached from one: :func:`hooklint.analysis.given.is_given`) with a hook object it
makes in this call (``counter = Counter()``, then
``model.register_forward_pre_hook(counter)``), drops the handle, and afterwards reads
what the object recorded (``counter.calls``), uses the hook for that one call and
never takes it off: every call of the function leaves one more hook on the caller's
module, still counting into an object nobody reads again.

The object is a *new* one when its one binding in the function calls a class: a
class of the file, or a name written in CapWords (``ForwardCounter()``,
``stats.Recorder()``), the convention for classes.  It is read when the function
names one of its attributes after the registration.  Not this shape: a function that
uses the object in any other way (returns it, keeps it on an object, puts it in a
container, passes it to a call other than the registration: the hook may be meant
to stay, with the object handed to whoever reads it), that keeps the handle, or
whose registration is install-once.  Hooks that store into a growing container are
HL002's captures.

The same holds for a hook the function makes in this call (a factory's closure,
``partial``, a lambda, a nested def) when the function then runs the model it hooked
(:func:`hooklint.analysis.captures.runs_what_it_hooked`: ``model(batch)`` after
hooking each of ``model.modules()``), drops the handle, and takes no hook off the
model by other means (no ``remove``/``clear`` call after it that names hooks or a
parameter): the hooks served that run, and each call of the function leaves one more
set on the caller's model.  Not when HL002 reports the registration (the hook
captures into a store: :func:`~hooklint.analysis.captures.leaking_capture`): one bug,
one finding.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.captures import calls_after, leaking_capture, runs_after, taken_from
from hooklint.analysis.facts import FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.given import is_given
from hooklint.analysis.handles import binds_otherwise, handle_model
from hooklint.analysis.scopes import assigned_values, target_names
from hooklint.analysis.walk import descendants


@dataclass(frozen=True)
class MeasuringHook:
    """``registration`` hooks the caller's module with ``name``, a new object of the
    call of ``function`` whose attributes the function reads afterwards."""

    registration: Registration
    name: str
    function: FunctionInfo
    #: The shape of a hook made in this call for a run of the function's own (no object read).
    runs: bool = False


def measuring_hook(facts: ModuleFacts, registration: Registration) -> MeasuringHook | None:
    """One of the two shapes above for ``registration``, or None."""
    if registration.api.owner != "module" or registration.handle.final.role != "discarded":
        return None
    function = registration.site.function
    info = facts.function_for(function) if function is not None else None
    if info is None or info.name == "__init__":
        return None  # a constructor's hooks are HL019's (the object is the hook's owner)
    return _read_object(facts, registration, info) or _run_of_its_own(facts, registration, info)


def _read_object(facts: ModuleFacts, registration: Registration, info: FunctionInfo) -> MeasuringHook | None:
    """The first shape: a new hook object whose attributes the function reads after."""
    hook = registration.hook_arg
    function = registration.site.function
    if not isinstance(hook, cst.Name) or hook.value in info.params:
        return None
    nodes = facts.body_nodes(function)
    binding = _made_here(facts, nodes, hook.value)
    # the same object registered again (``if new: m.register_full_backward_hook(c)
    # else: m.register_backward_hook(c)``) is no other use of it
    registering = {id(r.hook_arg) for r in facts.registrations if r.site.function is function}
    if binding is None or not _only_read_after(nodes, hook.value, binding, registration.call, registering):
        return None
    model = handle_model(facts)
    if not is_given(facts, model, registration.receiver, registration.site, registration.call):
        return None
    return MeasuringHook(registration, hook.value, info)


def _run_of_its_own(
    facts: ModuleFacts, registration: Registration, info: FunctionInfo
) -> MeasuringHook | None:
    """The second shape of the module docstring: a hook made in this call on the
    caller's module, which the function then runs, and no removal after it."""
    from hooklint.analysis.guards import install_once

    hook = registration.hook_arg
    # the cheap tests of the text first: most registrations stop at one of them
    if not _made_in_call(facts, info, hook) or not _runs_the_model(facts, registration, info):
        return None
    if _takes_hooks_off_after(facts, registration, info) or install_once(facts, registration, None):
        return None
    model = handle_model(facts)
    if not is_given(facts, model, registration.receiver, registration.site, registration.call):
        return None
    if leaking_capture(facts, registration) is not None:
        return None  # a capture into a store: HL002's, one finding for one bug
    return MeasuringHook(registration, "", info, runs=True)


def _runs_the_model(facts: ModuleFacts, registration: Registration, info: FunctionInfo) -> bool:
    """The function's own body (not a lambda or nested def in it), after the
    registration, calls the model the hooked module belongs to (``model(batch)``,
    ``model.generate(...)``): a parameter that the hooked module is, or is taken from
    (``for m in model.modules()``, ``head = list(model.children())[-1]``); and it does
    not return that model (``return model``, also in a tuple: a function that hands
    the hooked model back installs hooks on it for its caller)."""
    params = set(info.params) - {"self", "cls"}
    roots = (taken_from(registration, params) or set()) & params
    if not roots:
        return False
    function = registration.site.function
    for node in descendants(function.body, into_functions=False):
        if isinstance(node, cst.Return) and node.value is not None:
            value = node.value
            handed = (
                [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
            )
            if any(isinstance(item, cst.Name) and item.value in roots for item in handed):
                return False  # ``return model`` (also in a tuple): not ``return read(model)``
    return runs_after(facts, registration, roots, own_body=True)


def _made_in_call(facts: ModuleFacts, info: FunctionInfo, hook) -> bool:
    """A hook object this call makes: a lambda, a call (a factory's closure,
    ``partial(...)``, an instance), or a name the function binds only to one of those
    or defines as a nested def."""
    if isinstance(hook, (cst.Lambda, cst.Call)):
        return True
    if not isinstance(hook, cst.Name) or hook.value in info.params:
        return False
    if hook.value in info.nested:
        return True
    values = assigned_values(info.node, hook.value)
    return bool(values) and all(isinstance(v, (cst.Lambda, cst.Call)) for v in values)


#: Words of a call that may take hooks off (``h.remove()``, ``m._forward_hooks.clear()``,
#: a ``strip_hooks(model)`` helper).
_TAKING_OFF = (
    "remove",
    "clear",
    "detach",
    "reset",
    "unhook",
    "restore",
    "strip",
    "clean",
    "disable",
    "uninstall",
)


def _takes_hooks_off_after(facts: ModuleFacts, registration: Registration, info: FunctionInfo) -> bool:
    """A call after the registration, in its function, whose name says it may take
    hooks off, and that names hooks or one of the function's parameters (not
    ``out.detach()`` or ``cache.clear()``)."""
    params = set(info.params)
    for call in calls_after(facts, registration):
        name = (call.attr or call.callee or "").lower()
        if not any(word in name for word in _TAKING_OFF):
            continue
        if "hook" in facts.code(call.node).lower() or any(
            isinstance(n, cst.Name) and n.value in params for n in descendants(call.node)
        ):
            return True
    return False


def _made_here(facts: ModuleFacts, nodes: list, name: str) -> cst.Name | None:
    """The one binding of ``name`` in the function when it is to an instance of a class
    (a class of the file, or a CapWords name: ``Counter()``, ``tools.Counter(k)``),
    also as one element of a tuple bound to a tuple (``fwd, bwd = Counter(),
    Counter()``); else None."""
    values = []
    for node in nodes:
        if binds_otherwise(node, name):
            return None
        if isinstance(node, cst.Assign):
            for target in node.targets:
                found = _element_bound(target.target, node.value, name)
                if found is not None:
                    values.append(found)
                elif name in target_names(target.target):
                    return None  # unpacked from one value, or starred
    if len(values) != 1 or not isinstance(values[0][1], cst.Call):
        return None
    func = values[0][1].func
    last = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else func.value
        if isinstance(func, cst.Name)
        else ""
    )
    if last in facts.classes or (last[:1].isupper() and not last.isupper()):
        return values[0][0]
    return None


def _element_bound(target, value, name: str):
    """``(target name node, value)`` when ``target = value`` binds ``name`` alone or as
    one element of a tuple bound to a tuple of as many elements; else None."""
    if isinstance(target, cst.Name):
        return (target, value) if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(value.elements) or any(
            isinstance(e, cst.StarredElement) for e in [*target.elements, *value.elements]
        ):
            return None
        for element, item in zip(target.elements, value.elements):
            if isinstance(element.value, cst.Name) and element.value.value == name:
                return element.value, item.value
    return None


def _only_read_after(
    nodes: list, name: str, binding: cst.Name, registration: cst.Call, hook_args: set[int]
) -> bool:
    """Every use of ``name`` but its ``binding`` and the hooks the function registers
    (``hook_args``: their nodes' ids) is an attribute of it (``counter.calls``,
    ``counter.reset()``), and one comes after ``registration``."""
    reads_after = False
    after = False
    attribute_values = {id(n.value) for n in nodes if isinstance(n, cst.Attribute)}
    for node in nodes:
        if node is registration:
            after = True
        if not (isinstance(node, cst.Name) and node.value == name) or node is binding:
            continue
        if id(node) in hook_args:
            continue
        if id(node) not in attribute_values:
            return False  # returned, stored, passed on: it may be meant to stay
        reads_after = reads_after or after
    return reads_after
