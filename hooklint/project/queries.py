"""What the facts layer asks of other files, answered from summaries.

The analysis modules call these with the checked file's :class:`FileView`
(``facts.project``; None when cross-file analysis is off or the file is analysed
alone), and get back the same kind of answer a same-file definition gives:

* :func:`external_wrapper`: the registration wrapper a call reaches (``self.m(...)``
  through the class's bases, ``super().m(...)``, an imported ``helper(...)`` or
  ``module.helper(...)``), as a :class:`hooklint.analysis.wrappers.Wrapper` whose
  ``evidence`` names the definition;
* :func:`external_removal`: what a called helper of another file removes (its
  parameters by name, ``self.*`` attributes by code);
* :func:`external_acquisition`: another file's function that returns the handles it
  registers, or a base class's setup method that keeps them on ``self``;
* :func:`imported_hook`: the body of a hook function imported from another module,
  or of a hook method (``self.m``) a base class in another file defines;
* :func:`base_method`: the body of the method ``self.m()`` / ``super().m()`` reaches in
  another file, whose state effects a hook's are followed into (those modules' facts
  are parsed on demand, once per process and file version).

A call whose target cannot be resolved within the project gets None: the caller
treats it as it does any unknown call.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from hooklint.project.resolve import FileView, Ref
from hooklint.violation import Place


def place(view: FileView, ref: Ref) -> Place:
    return Place(ref.line, 1, view.shown(ref))


def callee_ref(view: FileView, call) -> Ref | None:
    """The other file's function or method that ``call`` (a :class:`CallSite`) reaches,
    when it may register or remove hooks: only names in :meth:`FileView.helper_names`
    are resolved (a call of anything else costs a set lookup, not a module read)."""
    func = call.node.func
    name = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else func.value
        if isinstance(func, cst.Name)
        else None
    )
    if name is None or name not in view.helper_names():
        return None
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
        return None  # ``module.helper(...)``: not followed (only imported names are)
    return view.function(func.value)


def external_wrapper(view: FileView, call):
    """A :class:`Wrapper` for a call of another file's registration wrapper, or None."""
    from hooklint.analysis.vocabulary import METHOD_APIS
    from hooklint.analysis.wrappers import Wrapper

    ref = callee_ref(view, call)
    entry = view.facts_of(ref) if ref is not None else None
    wrapper = entry.get("wrapper") if entry else None
    if wrapper is None:
        return None
    api = METHOD_APIS.get(wrapper["api"]) if wrapper.get("api") else None
    return Wrapper(
        ref.name,
        wrapper["hook"],
        wrapper["hook_param"],
        wrapper.get("target"),
        api,
        None,
        evidence=(place(view, ref),),
    )


def external_removal(view: FileView, call) -> tuple[list[str], set[str], set[str]] | None:
    """``(parameter names, removed parameters, removed self attributes)`` of another
    file's helper that ``call`` reaches, when it removes anything."""
    ref = callee_ref(view, call)
    entry = view.facts_of(ref) if ref is not None else None
    removes = entry.get("removes") if entry else None
    if not removes:
        return None
    return list(entry.get("params", [])), set(removes["params"]), set(removes["attrs"])


def inherited_removal(view: FileView, class_name: str, attributes: set[str]) -> bool | None:
    """Whether the methods the checked file's class ``class_name`` inherits from other
    files remove every one of ``attributes`` (codes such as ``self.handles``): True when
    they do, False when none is left unremoved only because a base is unknown (every
    base of the hierarchy resolves within the project, or is a plain one), None when a
    base cannot be read (outside the project): then nobody here can say."""
    from hooklint.analysis.vocabulary import PLAIN_BASES

    removed: set[str] = set()
    elsewhere, complete = _hierarchy(view, class_name, lambda base: base.split("[", 1)[0] in PLAIN_BASES)
    for ref in elsewhere:  # the file's own methods: its handle model reads them
        for name, method in (ref.entry or {}).get("methods", {}).items():
            full = view.facts_of(Ref(ref.path, "method", f"{ref.name}.{name}", method))
            removes = full.get("removes") if full else None
            if removes:
                removed.update(attributes.intersection(removes["attrs"]))
    if removed >= attributes:
        return True
    return False if complete else None


def inherited_classes(view: FileView, class_name: str, plain: frozenset[str]) -> list[Ref] | None:
    """The classes of other files that the checked file's class ``class_name`` inherits
    from, when every base of its hierarchy resolves to a class within the project or is
    one of ``plain`` (last names of bases known to be neither modules nor hook owners:
    ``object``, ``ABC``...); None when some base cannot be read (outside the project)."""
    elsewhere, complete = _hierarchy(
        view, class_name, lambda base: base.split("[", 1)[0].rsplit(".", 1)[-1] in plain
    )
    return elsewhere if complete else None


def _hierarchy(view: FileView, class_name: str, plain) -> tuple[list[Ref], bool]:
    """The classes of other files in the hierarchy of the checked file's class
    ``class_name``, and whether every base in it resolves to a class within the project
    or is ``plain`` (a predicate on the base as written)."""
    elsewhere: list[Ref] = []
    complete = True
    for ref in view.mro(class_name):
        for base in (ref.entry or {}).get("bases", ()):
            if not plain(base):
                found = view.dotted(ref.path, base)
                complete = complete and found is not None and found.kind == "class"
        if ref.path != view.path:
            elsewhere.append(ref)
    return elsewhere, complete


def external_acquisition(view: FileView, call) -> tuple[str, Place, bool, list[str]] | None:
    """``(name, place, returns, fills)`` of another file's function or method that
    ``call`` reaches (``net.apply(self.m)`` reaches ``m``) when it acquires hooks: it
    returns the handles it registers (``returns``), or is a method that keeps every
    handle it registers in these ``self.*`` stores (``fills``); or of another file's
    class whose object holds the hooks its constructor registers until its
    ``remove()`` (read as returning them: :func:`_constructed_ref`)."""
    constructed = _constructed_ref(view, call)
    if constructed is not None:
        return constructed.name, place(view, constructed), True, []
    ref = callee_ref(view, call) or _applied_ref(view, call)
    entry = view.facts_of(ref) if ref is not None else None
    if not entry or not (entry.get("returns_handles") or entry.get("fills")):
        return None
    if entry.get("fills") and ref.kind != "method":
        return None
    return ref.name, place(view, ref), bool(entry.get("returns_handles")), list(entry.get("fills", ()))


def _constructed_ref(view: FileView, call) -> Ref | None:
    """``Capture(model)``: another file's class whose constructor keeps the handles of
    the hooks it registers and whose ``remove()`` removes them
    (:meth:`FileView.removable_construction`): the object stands for its handles."""
    func = call.node.func
    if not isinstance(func, cst.Name) or func.value not in view.helper_names():
        return None
    ref = view.constructed(func.value)
    return ref if ref is not None and view.removable_construction(ref) is not None else None


def _applied_ref(view: FileView, call) -> Ref | None:
    """``X.apply(self.m)``: the method ``m`` of another file that ``Module.apply`` runs,
    handed positionally."""
    from hooklint.analysis.handles import applied_self_method

    name = applied_self_method(call)
    class_def = call.site.class_def
    if name is None or class_def is None or name not in view.helper_names():
        return None
    return view.method(class_def.name.value, name)


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def imported_hook(view: FileView, hook_arg, site=None):
    """The body of a hook that the checked file imports from another module of the
    project (``from .taps import grab``; ``taps.grab``; or the def an imported factory
    returns, ``make_hook(store, "fwd")``), as a
    :class:`hooklint.analysis.facts.HookBody` of that module's facts, with the place
    of its definition; None when it is not one."""
    from hooklint.analysis.facts import HookBody

    if (
        isinstance(hook_arg, cst.Attribute)
        and isinstance(hook_arg.value, cst.Name)
        and hook_arg.value.value == "self"
    ):
        class_def = site.class_def if site is not None else None
        ref = view.method(class_def.name.value, hook_arg.attr.value) if class_def is not None else None
        if ref is None:
            return None
        facts = module_facts(ref.path)
        owner, _, name = ref.name.rpartition(".")
        info = facts.method(owner, name) if facts is not None else None
        if info is None:
            return None
        body = HookBody(info.node, ref.name, "method", function=info, imports=facts.imports, is_method=True)
        return body, place(view, ref)
    factory = isinstance(hook_arg, cst.Call)  # ``make_hook(store, "fwd")``: what it returns
    dotted = _dotted(hook_arg.func if factory else hook_arg)
    ref = view.function(dotted) if dotted else None
    if ref is None:
        return None
    facts = module_facts(ref.path)
    info = facts.module_function(ref.name) if facts is not None else None
    if info is None:
        return None
    if factory:
        from hooklint.analysis.names import returned_name

        returned = returned_name(info.node)
        info = info.nested.get(returned) if returned is not None else None
        if info is None:
            return None
    via = "factory" if factory else "function"
    return HookBody(info.node, info.name, via, function=info, imports=facts.imports), place(view, ref)


def base_method(view: FileView, class_name: str, name: str, after_own: bool = False):
    """The :class:`FunctionInfo` (in its own module's facts) of the method of another
    file that ``self.name`` (``after_own``: ``super().name``) reaches from the checked
    file's class ``class_name``; None when it is not one."""
    ref = view.method(class_name, name, after_own=after_own)
    if ref is None:
        return None
    facts = module_facts(ref.path)
    owner, _, method = ref.name.rpartition(".")
    info = facts.method(owner, method) if facts is not None else None
    if info is not None:
        view.note_foreign(info.node, place(view, ref))
    return info


_facts: dict[str, tuple[tuple[int, int], object]] = {}


def module_facts(path: str):
    """Another module's facts (parsed once per process and file version), or None."""
    import os

    from hooklint.analysis.collector import collect
    from hooklint.engine import parse_module
    from hooklint.files import SourceError, read_source

    try:
        status = os.stat(path)
        stamp = (status.st_mtime_ns, status.st_size)
        known = _facts.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        facts = collect(parse_module(read_source(Path(path), 4 * 1024 * 1024).text))
    except (OSError, SourceError, RecursionError, ValueError, cst.ParserSyntaxError):
        return None
    if len(_facts) > 64:
        _facts.clear()
    _facts[path] = (stamp, facts)
    return facts
