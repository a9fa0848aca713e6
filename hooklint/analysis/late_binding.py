"""Hooks written in a loop that read the loop's names when they run (HL021).

A ``def`` or ``lambda`` keeps the *variables* of the function around it, not their
values: a hook written in a loop body that reads the loop's variable
(``for name, m in model.named_modules(): m.register_forward_hook(lambda mod, a, out:
acts.__setitem__(name, out))``) reads it when it fires, after the loop has moved on.
Every hook the loop registered then sees the last pass's value.  Binding the value
when the hook is written (a default, ``name=name``; ``functools.partial``; a factory
``make_hook(name)``) gives each hook its own.

Only hooks that outlive their pass matter: a handle removed later in the same pass
(or a registration scoped by ``with``), or a loop that leaves right after
registering (``break``), runs the hook only while the variable still holds that
pass's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import Frame, ModuleFacts, Registration, parameter_names
from hooklint.analysis.guards import breaks_after
from hooklint.analysis.handles import handle_model
from hooklint.analysis.passes import varying_in_loop
from hooklint.analysis.scopes import local_names
from hooklint.analysis.walk import child_nodes, contains


@dataclass(frozen=True)
class LateRead:
    """A registration whose hook, written in ``loop``, reads ``names`` of the loop late."""

    registration: Registration
    hook: cst.FunctionDef | cst.Lambda
    names: tuple[str, ...]
    loop: Frame


def late_reads(facts: ModuleFacts) -> list[LateRead]:
    """Every registration in a loop whose hook is a def or lambda written in that loop
    and reads a name new on each pass (:func:`~hooklint.analysis.passes.varying_in_loop`)
    that it neither takes as a parameter nor binds itself, when the hook outlives the
    pass of the loop that binds that name."""
    found = []
    for registration in facts.registrations:
        hook = registration.hook
        if hook is None or hook.via not in ("function", "lambda") or hook.bound_args:
            continue
        node = hook.node
        loops = [f for f in registration.site.loops if contains(f.node, node)]  # innermost first
        if not loops:
            continue
        reads = _read_late(node)
        late: set[str] = set()
        innermost = None
        for frame in loops:  # a name counts where the hook outlives the pass that binds it
            names = reads & varying_in_loop(facts, frame)
            if names and _outlives_pass(facts, registration, frame):
                late |= names
                innermost = innermost or frame
        if innermost is not None:
            found.append(LateRead(registration, node, tuple(sorted(late)), innermost))
    return found


def _read_late(hook: cst.FunctionDef | cst.Lambda) -> set[str]:
    """The names the hook's body reads from the scopes around it: read there, and
    neither a parameter nor a name the hook binds (nor declared ``global``/``nonlocal``)."""
    params = _parameter_names(hook.params)
    if isinstance(hook, cst.Lambda):
        return _reads(hook.body) - params
    assigned, declared = local_names(hook)
    if declared:
        return set()  # ``nonlocal name``: the hook shares the variable on purpose
    return set().union(*(_reads(s) for s in hook.body.body)) - params - assigned


def _reads(node: cst.CSTNode) -> set[str]:
    """Names ``node`` reads (the ``b`` of ``a.b`` and keyword names of calls left out;
    a nested def or lambda reads what its body reads but its own parameters)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _reads(node.value)
    if isinstance(node, cst.Arg):
        return _reads(node.value)
    if isinstance(node, (cst.Lambda, cst.FunctionDef)):
        defaults = {
            name
            for p in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params)
            if p.default is not None
            for name in _reads(p.default)
        }
        return (_reads(node.body) - _parameter_names(node.params)) | defaults
    found: set[str] = set()
    for child in child_nodes(node):
        found |= _reads(child)
    return found


def _parameter_names(params: cst.Parameters) -> set[str]:
    """Every name the parameters bind, ``*args`` and ``**kwargs`` included."""
    names = set(parameter_names(params))
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _outlives_pass(facts: ModuleFacts, registration: Registration, frame: Frame) -> bool:
    """The hook stays on after the pass that wrote it: not scoped by ``with``, not removed
    later in the same pass, and the pass does not leave the loop right after it."""
    if registration.handle.final.role in ("with", "exit_stack"):
        return False
    if frame.kind != "comp" and breaks_after(facts, registration.site, frame):
        return False
    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    if flow.scoped:
        return False
    return not any(
        removal.site.inside(frame.node) and removal.site.order > registration.site.order
        for removal in model.removals_of(flow.stores)
    )
