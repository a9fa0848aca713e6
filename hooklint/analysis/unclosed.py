"""Hook-owning objects a function builds and never closes (HL003's question).

A class of the file whose ``__init__`` hooks a module it is given and keeps the
handle on ``self``, with a method that removes it (``close()``, ``remove()``: the
*closer*), is built to be closed.  A function that builds such objects on modules its
own caller handed in (a parameter, or something reached from one: the items of
``layers``), and neither closes them (``tap.close()``, a loop over them, also in a
nested def) nor lets them go (returns or yields them, keeps them on ``self`` or on
an object it was given, passes them to another call), leaves their hooks on the
caller's modules: one more on each module with every call of the function.  Objects
kept in a local container that a closure reads still count as left behind: the
closure hands back what they captured, never the objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from hooklint.analysis.facts import FunctionInfo, ModuleFacts
from hooklint.analysis.given import is_given
from hooklint.analysis.handles import Acquisition, handle_model


@dataclass(frozen=True)
class UnclosedObject:
    """``acquisition`` builds an object of ``cls`` (its ``__init__`` hooks what the
    call passes) in ``function``; nothing calls ``closer`` on it."""

    acquisition: Acquisition
    cls: str
    closer: str
    function: FunctionInfo


def unclosed_objects(facts: ModuleFacts) -> list[UnclosedObject]:
    hooking = {r.site.class_name for r in facts.registrations} - {None}
    if not any(call.attr is None and call.callee in hooking for call in facts.calls):
        return []  # no class of the file that registers hooks is built here
    model = handle_model(facts)
    found = []
    for scope_id in model.scopes():
        info = model.info(scope_id)
        if info is None:
            continue
        for acquisition in model.acquisitions(scope_id):
            built = _built_object(acquisition)
            if built is None or built == info.class_name:
                continue
            closer = _closer(facts, model, built, acquisition.flow.stores)
            if closer is None or not _on_given(facts, model, acquisition):
                continue
            value = model.flow(acquisition.handle, scope_id, acquisition.node)
            if value.escapes or value.scoped or any(not s.startswith("def:") for s in value.stores):
                continue  # handed on, entered, or kept on an object that outlives the call
            roots = {model.find(s) for s in acquisition.flow.stores}
            if any(
                model.find(r.store) in roots
                for sid in model.scopes()
                if _outside_class(model, sid, built)
                for r in model.removals_in(sid)
            ):
                continue  # closed somewhere (a loop over the objects, a cleanup closure)
            found.append(UnclosedObject(acquisition, built, closer, info))
    return found


def _built_object(acquisition: Acquisition) -> str | None:
    """The class ``Cls`` of a ``Cls(...)`` acquisition (its ``__init__`` keeps handles
    that a method of the class removes)."""
    helper = acquisition.helper
    if not acquisition.on_other or helper is None or helper.name != "__init__":
        return None
    return helper.class_name


def _closer(facts: ModuleFacts, model, class_name: str, stores: set[str]) -> str | None:
    """The class's method (not ``__del__``) that removes what ``__init__`` kept."""
    roots = {model.find(s) for s in stores}
    for info in facts.functions:
        if info.class_name != class_name or info.parent is not None or info.name in ("__init__", "__del__"):
            continue
        if any(model.find(r.store) in roots for r in model.removals_in(id(info.node))):
            return info.name
    return None


def _on_given(facts: ModuleFacts, model, acquisition: Acquisition) -> bool:
    """Some argument of the construction is something the function's caller handed in."""
    return any(
        is_given(facts, model, arg.value, acquisition.site, acquisition.node) for arg in acquisition.node.args
    )


def _outside_class(model, scope_id: int, class_name: str) -> bool:
    info = model.info(scope_id)
    return info is None or info.class_name != class_name
