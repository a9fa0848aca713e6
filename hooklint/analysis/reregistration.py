"""Hooks copied from one module's hook dict onto a module by registering them again
(HL017's question).

``m._forward_hooks`` / ``m._forward_pre_hooks`` hold only the hook functions; the
flags they were registered with live in side dicts keyed by the handle id
(:data:`hooklint.analysis.vocabulary.HOOK_FLAG_DICTS`).  Code that copies hooks
(``for h in old._forward_hooks.values(): new.register_forward_hook(h)``) registers
each one without its flags unless it reads them.

A registration is a copy when its hook argument is a loop target (``for`` or a
comprehension) over ``X._forward_hooks`` / ``.values()`` / ``.items()`` (also
wrapped in ``list(...)``/``tuple(...)``, or through a local name assigned one of
those), or ``X._forward_hooks[k]``.  Only the registration's enclosing frames and
the value a local name was assigned are read.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.handles import handle_model
from hooklint.analysis.scopes import target_names
from hooklint.analysis.vocabulary import HOOK_FLAG_DICTS

_WRAPPERS = frozenset({"list", "tuple", "reversed", "sorted"})


@dataclass(frozen=True)
class Reregistration:
    """A registration of a hook taken from a hook dict, without the flags it had.

    ``source`` is the code of the module whose dict is read; ``dict_name`` the dict
    (``_forward_hooks``); ``dropped`` the ``(keyword, side dict, since)`` flags the
    registration does not pass; ``key`` the name that holds the handle id when the
    code has one (``for k, h in d.items()``, ``d[k]``); ``values_loop`` the loop
    target and the ``X.values`` attribute when the hooks come from ``.values()``
    directly (what a fix turns into ``.items()``)."""

    registration: Registration
    source: str
    dict_name: str
    dropped: tuple[tuple[str, str, tuple[int, int]], ...]
    key: str | None = None
    values_loop: tuple[cst.BaseExpression, cst.Attribute] | None = None


def reregistrations(facts: ModuleFacts) -> list[Reregistration]:
    found = []
    for registration in facts.registrations:
        copy = _reregistration(facts, registration)
        if copy is not None:
            found.append(copy)
    return found


def _hook_dict(node: cst.BaseExpression | None) -> tuple[cst.BaseExpression, str] | None:
    """``(X, name)`` for ``X._forward_hooks``."""
    if isinstance(node, cst.Attribute) and node.attr.value in HOOK_FLAG_DICTS:
        return node.value, node.attr.value
    return None


def _unwrap(node: cst.BaseExpression) -> cst.BaseExpression:
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in _WRAPPERS
        and len(node.args) == 1
    ):
        node = node.args[0].value
    return node


def _reregistration(facts: ModuleFacts, registration: Registration) -> Reregistration | None:
    if registration.has_star_kwargs or registration.wrapper is not None:
        return None
    arg = registration.hook_arg
    source = None
    key = None
    values_loop = None
    if isinstance(arg, cst.Subscript):
        found = _hook_dict(arg.value)
        if found is None:
            return None
        index = arg.slice[0].slice if len(arg.slice) == 1 else None
        value = getattr(index, "value", None)
        source, dict_name = found
        key = value.value if isinstance(value, cst.Name) else None
    elif isinstance(arg, cst.Name):
        loop = _loop_binding(registration, arg.value)
        if loop is None:
            return None
        target, iterable = loop
        iterable = _unwrap(iterable)
        direct = True
        if isinstance(
            iterable, cst.Name
        ):  # ``hooks = list(m._forward_hooks.values())`` ... ``for h in hooks``
            function = registration.site.function
            if function is None:
                return None
            model = handle_model(facts)
            value = model.value_at(iterable, registration.call, model.scope_id(registration.site))
            if value is None:
                return None
            iterable, direct = _unwrap(value), False
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)):
            return None
        view = iterable.func
        found = _hook_dict(view.value)
        if found is None or view.attr.value not in ("values", "items"):
            return None
        source, dict_name = found
        if view.attr.value == "items":
            if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
                return None
            first, second = (e.value for e in target.elements)
            if not (isinstance(second, cst.Name) and second.value == arg.value):
                return None
            key = first.value if isinstance(first, cst.Name) else None
        elif isinstance(target, cst.Name) and direct:
            values_loop = (target, view)
        elif not isinstance(target, cst.Name):
            return None
    else:
        return None
    api_name, flags = HOOK_FLAG_DICTS[dict_name]
    if registration.api.name != api_name:
        return None
    function = registration.site.function
    scope_code = facts.code(function) if function is not None else facts.module.code
    # A flag passed, or whose side dict the function reads itself, is not dropped.
    dropped = tuple(
        flag for flag in flags if flag[0] not in registration.keywords and flag[1] not in scope_code
    )
    if not dropped:
        return None
    return Reregistration(registration, facts.code(source), dict_name, dropped, key, values_loop)


def _loop_binding(registration: Registration, name: str):
    """``(target, iterable)`` of the innermost loop or comprehension around the
    registration (in its function) whose target binds ``name``."""
    for frame in reversed(registration.site.frames):
        if frame.kind in ("def", "lambda", "class"):
            return None
        node = frame.node
        if frame.kind == "for":
            target, iterable = node.target, node.iter  # type: ignore[attr-defined]
        elif frame.kind == "comp":
            for_in = node.for_in  # type: ignore[attr-defined]
            # the innermost ``for`` clause that binds the name
            clause = for_in
            chosen = None
            while clause is not None:
                if name in target_names(clause.target):
                    chosen = clause
                clause = clause.inner_for_in
            if chosen is None:
                continue
            target, iterable = chosen.target, chosen.iter
        else:
            continue
        if name in target_names(target):
            return target, iterable
    return None


def fresh_name(facts: ModuleFacts, registration: Registration, wanted: str) -> str:
    """``wanted``, or ``wanted`` with a trailing ``_`` until the function does not use it."""
    function = registration.site.function
    code = facts.code(function) if function is not None else facts.module.code
    import re

    name = wanted
    while re.search(rf"\b{re.escape(name)}\b", code):
        name += "_"
    return name
