"""What the facts layer asks of other files, answered from summaries.

The analysis modules call these with the checked file's :class:`FileView`
(``facts.project``; None when cross-file analysis is off or the file is analysed
alone), and get back the same kind of answer a same-file definition gives:

* :func:`external_wrapper`: the registration wrapper a call reaches (``self.m(...)``
  through the class's bases, ``super().m(...)``, an imported ``helper(...)`` or
  ``module.helper(...)``), as a :class:`hooklint.analysis.wrappers.Wrapper` whose
  ``evidence`` names the definition;
* :func:`external_removal`: what a called helper of another file removes (its
  parameters by name, ``self.*`` attributes by code).

A call whose target cannot be resolved within the project gets None: the caller
treats it as it does any unknown call.
"""

from __future__ import annotations

import libcst as cst

from hooklint.project.resolve import FileView, Ref
from hooklint.violation import Place


def place(view: FileView, ref: Ref) -> Place:
    return Place(ref.line, 1, view.shown(ref))


def callee_ref(view: FileView, call) -> Ref | None:
    """The other file's function or method that ``call`` (a :class:`CallSite`) reaches."""
    func = call.node.func
    if isinstance(func, cst.Attribute):
        value = func.value
        if isinstance(value, cst.Name) and value.value in ("self", "cls"):
            class_def = call.site.class_def
            return view.method(class_def.name.value, func.attr.value) if class_def is not None else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "super":
            class_def = call.site.class_def
            if class_def is None:
                return None
            return view.method(class_def.name.value, func.attr.value, after_own=True)
    dotted = _dotted(func)
    return view.function(dotted) if dotted else None


def external_wrapper(view: FileView, call):
    """A :class:`Wrapper` for a call of another file's registration wrapper, or None."""
    from hooklint.analysis.hookapi import METHOD_APIS
    from hooklint.analysis.wrappers import Wrapper

    ref = callee_ref(view, call)
    wrapper = ref.entry.get("wrapper") if ref is not None and ref.entry else None
    if wrapper is None:
        return None
    api = METHOD_APIS.get(wrapper["api"]) if wrapper.get("api") else None
    return Wrapper(
        ref.name, wrapper["hook"], wrapper["hook_param"], wrapper.get("target"), api, None, evidence=(place(view, ref),)
    )


def external_removal(view: FileView, call) -> tuple[list[str], set[str], set[str]] | None:
    """``(parameter names, removed parameters, removed self attributes)`` of another
    file's helper that ``call`` reaches, when it removes anything."""
    ref = callee_ref(view, call)
    removes = ref.entry.get("removes") if ref is not None and ref.entry else None
    if not removes:
        return None
    return list(ref.entry.get("params", [])), set(removes["params"]), set(removes["attrs"])


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None
