"""Where a module is compiled, and where the compiled object first runs (for HL010).

Queries over :class:`ModuleFacts` only: ``torch.compile(X)`` / ``X.compile()`` calls,
the later calls that run the compiled object, whether a registration hooks the
compiled module or one of its submodules (:func:`hooked_target`), and whether two sites can both run
(they are not in the two branches of one ``if``, or in a ``try`` and its ``except``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import CallSite, ModuleFacts, Registration, Site
from hooklint.analysis.names import dotted_name
from hooklint.analysis.walk import contains

#: Calls that only look at an object: passing the compiled model to them does not run it.
_INSPECTING = frozenset(
    {
        "print",
        "isinstance",
        "len",
        "type",
        "id",
        "str",
        "repr",
        "getattr",
        "hasattr",
        "setattr",
        "vars",
        "dir",
        "callable",
        "hash",
        "format",
        "list",
        "sum",
        "iter",
        "next",
        "enumerate",
        "torch.compile",
        "copy.deepcopy",
        "deepcopy",
    }
)
_INSPECTING_ATTRS = frozenset(
    {"info", "debug", "warning", "warn", "error", "append", "add", "extend", "format", "to", "cuda", "cpu"}
)
#: Methods that run a module's forward.
_RUNNING_ATTRS = frozenset({"generate", "forward", "__call__"})


@dataclass(frozen=True)
class Compilation:
    """``compiled = torch.compile(original)`` or ``original.compile()`` (``compiled == original``)."""

    call: CallSite
    original: str
    compiled: str
    in_place: bool


def compilations(facts: ModuleFacts) -> Iterator[Compilation]:
    for call in facts.calls:
        node = call.node
        if call.callee == "torch.compile":
            positional = [a for a in node.args if a.keyword is None and not a.star]
            if not positional:
                continue
            original = dotted_name(positional[0].value)
            if original is None or original.endswith(".forward"):
                continue
            use = call.use
            if use.role != "bound" or len(use.targets) != 1:
                continue
            yield Compilation(call, original, use.targets[0], in_place=False)
        elif call.attr == "compile" and isinstance(node.func, cst.Attribute):
            if any(
                a.keyword is None for a in node.args
            ):  # re.compile(pattern), Module.compile is keyword-only
                continue
            receiver = dotted_name(node.func.value)
            if receiver is None or receiver in facts.imports:
                continue
            yield Compilation(call, receiver, receiver, in_place=True)


def first_run(facts: ModuleFacts, compilation: Compilation) -> CallSite | None:
    """The first call after the compilation, in the same function, that runs the
    compiled object (calls it, or hands it to another function)."""
    start = compilation.call.site
    name = compilation.compiled
    for call in facts.calls:
        if call.site.order <= start.order or call.site.function is not start.function:
            continue
        if not can_both_run(start, call.site):
            continue
        callee = call.callee
        if callee == name:
            return call
        if call.attr in _RUNNING_ATTRS and isinstance(call.node.func, cst.Attribute):
            if dotted_name(call.node.func.value) == name:
                return call
        if callee in _INSPECTING or call.attr in _INSPECTING_ATTRS:
            continue
        for arg in call.node.args:
            if dotted_name(arg.value) == name:
                return call
    return None


def can_both_run(first: Site, second: Site) -> bool:
    """False when the two sites sit in different branches of one ``if``, or one in a
    ``try`` body and the other in one of its ``except`` handlers."""
    second_nodes = {id(f.node): f for f in second.frames}
    for frame in first.frames:
        if frame.kind == "if" and id(frame.node) in second_nodes:
            node = frame.node
            if _branch(node, first.statement) != _branch(node, second.statement):
                return False
        if frame.kind == "try":
            handlers = {id(h) for h in frame.node.handlers}  # type: ignore[attr-defined]
            if any(f.kind == "except" and id(f.node) in handlers for f in second.frames):
                return False
    for frame in second.frames:
        if frame.kind == "try":
            handlers = {id(h) for h in frame.node.handlers}  # type: ignore[attr-defined]
            if any(f.kind == "except" and id(f.node) in handlers for f in first.frames):
                return False
    return True


def _branch(node: cst.If, statement: cst.CSTNode) -> str:
    if statement is node:
        return "test"
    if contains(node.body, statement):
        return "body"
    return "orelse"


def hooked_target(registration: Registration, compilation: Compilation) -> str | None:
    """The receiver's code when it is the compiled module or one of its submodules."""
    receiver = registration.receiver_code
    if receiver is None:
        return None
    for prefix in _prefixes(compilation):
        if _under(receiver, prefix):
            return receiver
    if isinstance(registration.receiver, cst.Name):
        # for sub in model.modules(): sub.register_forward_hook(...)
        for frame in reversed(registration.site.frames):
            node = frame.node
            if frame.kind == "for" and _binds(node.target, receiver):  # type: ignore[attr-defined]
                iterated = _code_of(node.iter)  # type: ignore[attr-defined]
                for prefix in _prefixes(compilation):
                    if _under(iterated, prefix, allow_equal=True):
                        return receiver
                return None
    if receiver in (compilation.original, compilation.compiled) and not compilation.in_place:
        # The module itself after torch.compile(module) (not the wrapper the name now holds).
        if compilation.original != compilation.compiled and receiver == compilation.original:
            return receiver
    return None


def _prefixes(compilation: Compilation) -> tuple[str, ...]:
    if compilation.original == compilation.compiled:
        return (compilation.original,)
    return (compilation.original, compilation.compiled)


def _under(code: str, prefix: str, allow_equal: bool = False) -> bool:
    if allow_equal and code == prefix:
        return True
    return code.startswith(prefix + ".") or code.startswith(prefix + "[")


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, cst.Tuple):
        return any(_binds(e.value, name) for e in target.elements)
    return False


def _code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=()).code_for_node(node)
