"""Evidence, from one file, that a hooked module is called by keyword only (HL015).

A module called as ``model(**batch)`` or ``self.block(hidden_states=h, mask=m)``
hands its forward pre-hooks and forward hooks ``args == ()`` unless they are
registered with ``with_kwargs=True``.  :func:`keyword_only_call` finds such a call
of the module a registration hooks: the same receiver code in the same function
(``model``), in any method of the same class (``self.encoder``), or a loop variable
over the same iterable (``for layer in self.layers: layer(hidden_states=h)``).
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import CallSite, ModuleFacts, Registration, Site


def _keyword_only(call: cst.Call) -> bool:
    """Arguments, all passed by keyword (``**kw`` included), none positionally."""
    return bool(call.args) and all(a.keyword is not None or a.star == "**" for a in call.args)


def loop_iterable(facts: ModuleFacts, site: Site, name: str) -> str | None:
    """The code of the iterable a ``for`` around ``site`` binds ``name`` from."""
    for frame in reversed(site.frames):
        if frame.kind in ("def", "lambda", "class"):
            return None
        node = frame.node
        if frame.kind == "for" and isinstance(node, cst.For):
            target, iterable = node.target, node.iter
        elif frame.kind == "comp" and hasattr(node, "for_in"):
            target, iterable = node.for_in.target, node.for_in.iter  # type: ignore[attr-defined]
        else:
            continue
        names = (
            [target] if isinstance(target, cst.Name) else [e.value for e in getattr(target, "elements", ())]
        )
        if any(isinstance(n, cst.Name) and n.value == name for n in names):
            if (
                isinstance(iterable, cst.Call)
                and isinstance(iterable.func, cst.Name)
                and iterable.func.value == "enumerate"
                and iterable.args
            ):
                iterable = iterable.args[0].value  # for i, layer in enumerate(layers)
            return facts.code(iterable)
    return None


def _class_of(site: Site) -> cst.ClassDef | None:
    for frame in reversed(site.frames):
        if frame.kind == "class":
            return frame.node  # type: ignore[return-value]
    return None


def keyword_only_call(facts: ModuleFacts, registration: Registration) -> CallSite | None:
    """A same-file call of the hooked module with keyword arguments only, if any."""
    receiver = registration.receiver
    code = registration.receiver_code
    if receiver is None or code is None:
        return None
    iterable = loop_iterable(facts, registration.site, code) if isinstance(receiver, cst.Name) else None
    on_self = code.startswith("self.")
    owner = _class_of(registration.site)
    for call in facts.calls:
        if not _keyword_only(call.node):
            continue
        func = call.node.func
        func_code = facts.code(func) if isinstance(func, (cst.Name, cst.Attribute, cst.Subscript)) else None
        if func_code is None:
            continue
        if on_self:
            if func_code == code and owner is not None and _class_of(call.site) is owner:
                return call
            continue
        if iterable is not None and isinstance(func, cst.Name):
            if (
                loop_iterable(facts, call.site, func.value) == iterable
                and (not iterable.startswith("self.") or _class_of(call.site) is owner)
                and (iterable.startswith("self.") or call.site.function is registration.site.function)
            ):
                return call
            continue
        if func_code == code and call.site.function is registration.site.function:
            return call
    return None
