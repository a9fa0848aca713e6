"""What becomes of what a hook stores (HL006): does the store die with one call, and
does the code that reads it need the autograd graph?

* :func:`dies_with_call`: the store is a local of the function that registers the
  hook (a closure variable, ``nonlocal`` included), and that function removes the
  hook (``.remove()``, ``with``, ...): the captured tensor lives no longer than the
  call, like any value a forward returns.
* :func:`graph_needed`: the stored activations are differentiated or trained
  through: the registering function calls ``torch.autograd.grad`` (attribution);
  the store (``self.X``) is read by the ``forward`` of the hooking class, or a
  method it calls (the
  captured features are part of the model's own computation); or it is read by a
  method that builds a loss from it (its name says loss/penalty/regularizer, or a
  sibling method detaches its result for logging, so the attached one is kept on
  purpose).
"""

from __future__ import annotations

import re

import libcst as cst

from hooklint.analysis.captures import handle_fate
from hooklint.analysis.facts import FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.names import dotted_name
from hooklint.analysis.scopes import local_names
from hooklint.analysis.tensor_stores import TensorStore
from hooklint.analysis.vocabulary import DIFFERENTIATING_CALLS
from hooklint.analysis.walk import descendants

_LOSS_WORDS = re.compile(r"loss|penalt|regulari", re.I)
_FORWARDS = frozenset({"forward", "_forward"})


def store_root(store: TensorStore) -> str | None:
    """``self`` for ``self.acts[k]``, ``feats`` for ``feats.append``."""
    node = store.target
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _self_attribute(store: TensorStore) -> str | None:
    """``acts`` for a store into ``self.acts`` / ``self.acts[k]``."""
    node = store.target
    while isinstance(node, (cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    while isinstance(node, cst.Attribute) and not (
        isinstance(node.value, cst.Name) and node.value.value == "self"
    ):
        node = node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _enclosing(facts: ModuleFacts, registration: Registration) -> FunctionInfo | None:
    """The function the hook's body is nested in (for a lambda: where it is written)."""
    hook = registration.hook
    if hook is None:
        return None
    if hook.function is not None:
        return hook.function.parent
    if isinstance(hook.node, cst.Lambda) and registration.site.function is not None:
        return facts.function_for(registration.site.function)
    return None


def dies_with_call(facts: ModuleFacts, registration: Registration, store: TensorStore) -> bool:
    root = store_root(store)
    if root is None or root in ("self", "cls"):
        return False
    binder = _enclosing(facts, registration)
    while binder is not None:
        bound, _declared = local_names(binder.node)
        if root in bound or root in binder.params:
            break
        binder = binder.parent
    if binder is None or root in binder.params:
        return False
    if registration.site.function is not binder.node and not registration.site.inside(binder.node):
        return False
    return handle_fate(facts, registration).kind == "removed"


def _hooking_class(facts: ModuleFacts, registration: Registration) -> str | None:
    hook = registration.hook
    info = hook.function if hook is not None else None
    if info is None and registration.site.function is not None:
        info = facts.function_for(registration.site.function)
    while info is not None:
        if info.class_name is not None:
            return info.class_name
        info = info.parent
    return None


def _class_and_bases(facts: ModuleFacts, name: str) -> set[str]:
    found: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.add(current)
        node = facts.classes.get(current)
        if node is not None:
            todo.extend(facts.code(b.value) for b in node.bases if b.keyword is None)
    return found


def _reads(info: FunctionInfo, attribute: str) -> bool:
    return any(
        isinstance(n, cst.Attribute)
        and n.attr.value == attribute
        and isinstance(n.value, cst.Name)
        and n.value.value == "self"
        for n in descendants(info.node.body, into_functions=False)
    )


def _detached_calls(info: FunctionInfo) -> set[str]:
    """Methods whose result this method detaches: ``self.retrieve(...).detach()``."""
    found: set[str] = set()
    for node in descendants(info.node.body, into_functions=False):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "detach"
        ):
            inner = node.func.value
            if isinstance(inner, cst.Call):
                callee = dotted_name(inner.func) or ""
                if callee.startswith("self."):
                    found.add(callee[5:])
    return found


def _forward_reach(methods: list[FunctionInfo]) -> set[str]:
    """``forward`` and the methods it calls on ``self`` (a few calls deep)."""
    by_name = {info.name: info for info in methods}
    reached = set(_FORWARDS) & set(by_name)
    todo = list(reached)
    depth = 0
    while todo and depth < 3:
        depth += 1
        nxt = []
        for name in todo:
            for node in descendants(by_name[name].node.body, into_functions=False):
                if isinstance(node, cst.Call):
                    callee = dotted_name(node.func) or ""
                    if callee.startswith("self.") and callee[5:] in by_name and callee[5:] not in reached:
                        reached.add(callee[5:])
                        nxt.append(callee[5:])
        todo = nxt
    return reached


def graph_needed(facts: ModuleFacts, registration: Registration, store: TensorStore) -> bool:
    function = registration.site.function
    if function is not None:
        for call in facts.calls:
            if call.callee in DIFFERENTIATING_CALLS and (
                call.site.function is function or call.site.inside(function)
            ):
                return True
    attribute = _self_attribute(store) if store_root(store) == "self" else None
    class_name = _hooking_class(facts, registration)
    if attribute is None or class_name is None:
        return False
    classes = _class_and_bases(facts, class_name)
    methods = [info for info in facts.functions if info.class_name in classes]
    readers = [
        info
        for info in methods
        if _reads(info, attribute) and info.node is not getattr(registration.hook, "node", None)
    ]
    if any(info.name in _forward_reach(methods) for info in readers):
        return True
    detached = set().union(*(_detached_calls(info) for info in methods)) if methods else set()
    return any(_LOSS_WORDS.search(info.name) or info.name in detached for info in readers)
