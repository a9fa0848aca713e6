"""Direct ``x.forward(...)`` calls, and why one may be meant (HL014).

:func:`bypass_reason` answers, for one ``x.forward(...)`` call, why calling ``x(...)``
instead would be wrong or pointless, or None when nothing in the file says so:

* the receiver is no module (:mod:`hooklint.analysis.module_kinds`): a class of this
  file that does not derive from ``nn.Module``, a pipeline, a C++ custom class
  (``torch.classes``), RPC and TorchScript objects, ``super()``, a class
  (``Parent.forward(self, x)``, ``x.__class__.forward(x)``, ``__class__.forward``);
* the receiver is typed with a ``@torch.jit.interface`` class, whose interface *is*
  ``forward``;
* the call sits where ``x(...)`` would re-enter what runs it: ``__call__`` (or a
  ``forward``) of the same object, a hook registered on that very module (its module
  parameter, or the registration's receiver), a forward replacement (a ``def``
  named ``*forward*`` that is not a method of a class: it is assigned to
  ``module.forward``), a ``@torch.jit.script`` function;
* the receiver's ``forward`` takes the module it serves (``variant.forward(self, x)``,
  ``runner.forward(block, batch)``): a helper object, not a module call;
* the call is inside a class of this file that is no module and defines its own
  ``forward``: that code base's own ``forward`` protocol;
* a comment on the call's line, or just above it, says why (``__call__``, hooks,
  recursion, double execution).
"""

from __future__ import annotations

import re

import libcst as cst

from hooklint.analysis.facts import CallSite, FunctionInfo, ModuleFacts
from hooklint.analysis.keyword_calls import loop_iterable
from hooklint.analysis.module_kinds import INTERFACE, NOT_MODULE, class_kind, receiver_kind
from hooklint.analysis.names import dotted_name
from hooklint.analysis.walk import descendants

#: Methods whose job is to stand in for ``Module.__call__``: calling ``forward`` there is the point.
CALL_REPLACEMENTS = frozenset({"__call__", "_call_impl", "_wrapped_call_impl"})
#: Calls whose result is a submodule: ``model.get_submodule("fc").forward(x)`` is still reported.
_SUBMODULE_LOOKUPS = frozenset({"get_submodule", "get_module"})
#: Receivers whose ``forward`` is the API: RPC remote modules and TorchScript/mobile modules
#: (no Python hooks run there), and the C++ module of a ScriptModule (``self._c``).
_REMOTE_OR_SCRIPTED = ("remote", "rref", "script", "mobile")
#: First positional arguments that are the module a helper's ``forward`` serves.
_MODULE_ARGUMENT = re.compile(
    r"^(self|m|mod|module|model|layer|block|submodule)$|(_module|_model|_layer|_block)$"
)
#: Words of a comment that explains a direct ``forward`` call.
_EXPLAINING_COMMENT = re.compile(r"__call__|\bhooks?\b|recurs|double|bypass|_call_impl", re.I)


def bypass_reason(facts: ModuleFacts, call: CallSite) -> str | None:
    """Why ``call`` (``x.forward(...)``) is not a hook-skipping module call, or None."""
    receiver = call.node.func.value  # type: ignore[union-attr]
    if isinstance(receiver, cst.Call):
        # super().forward(...); and any other call result (rref.rpc_sync(), type(x),
        # a loaded extension) unless it is a submodule lookup.
        func = receiver.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _SUBMODULE_LOOKUPS):
            return "a call's result"
        return None
    code = facts.code(receiver).lower()
    if any(word in code for word in _REMOTE_OR_SCRIPTED) or code == "_c" or code.endswith("._c"):
        return "an RPC or TorchScript object"
    if isinstance(receiver, cst.Name):
        iterable = (loop_iterable(facts, call.site, receiver.value) or "").lower()
        if any(word in iterable for word in _REMOTE_OR_SCRIPTED):
            return "an RPC or TorchScript object"  # for m in self._create_remote_module_iter(...)
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "__class__":
        return "a call through the class"
    dotted = dotted_name(receiver)
    if dotted is not None:
        last = dotted.rsplit(".", 1)[-1]
        if (last[:1].isupper() and not last.isupper()) or dotted in facts.classes:
            return "a call through the class"
    function = facts.function_for(call.site.function) if call.site.function is not None else None
    class_def = call.site.class_def or _enclosing_class(call)
    kind = receiver_kind(facts, receiver, function, class_def)
    if kind == INTERFACE:
        return "a TorchScript interface"
    if kind == NOT_MODULE:
        return "not a module"
    if _takes_the_module(call, receiver):
        return "a helper whose forward takes the module"
    where = _reentry(facts, call, receiver)
    if where is not None:
        return where
    if (
        class_def is not None
        and class_kind(facts, class_def) == NOT_MODULE
        and facts.method(class_def.name.value, "forward")
    ):
        return "the forward protocol of a class that is no module"
    if explained_by_comment(call.site.statement):
        return "a comment explains it"
    return None


def _enclosing_class(call: CallSite) -> cst.ClassDef | None:
    """The class around a nested function (whose ``self`` is the method's)."""
    for frame in reversed(call.site.frames):
        if frame.kind == "class":
            return frame.node  # type: ignore[return-value]
    return None


def _takes_the_module(call: CallSite, receiver: cst.BaseExpression) -> bool:
    if not call.node.args or (isinstance(receiver, cst.Name) and receiver.value == "self"):
        return False
    first = call.node.args[0]
    return (
        first.keyword is None
        and not first.star
        and isinstance(first.value, cst.Name)
        and _MODULE_ARGUMENT.search(first.value.value) is not None
    )


def _reentry(facts: ModuleFacts, call: CallSite, receiver: cst.BaseExpression) -> str | None:
    """Where ``receiver(...)`` would re-enter the code that makes this call."""
    function = call.site.function
    if function is None:
        return None
    name = function.name.value
    if any("jit.script" in facts.code(d.decorator) for d in function.decorators):
        return "TorchScript"
    if name in CALL_REPLACEMENTS:
        return "a __call__ replacement"
    info = facts.function_for(function)
    if (
        isinstance(receiver, cst.Name)
        and receiver.value in ("self", "cls")
        and name in ("forward", "_forward")
    ):
        return "the object's own forward"
    if info is not None and is_forward_replacement(facts, info):
        return "a forward replacement"
    receiver_code = facts.code(receiver)
    for registration in facts.registrations:
        hook = registration.hook
        if hook is None or hook.node is not function:
            continue
        params = hook.params
        if (params and receiver_code == params[0]) or receiver_code == registration.receiver_code:
            return "a hook on the same module"
    return None


def is_forward_replacement(facts: ModuleFacts, info: FunctionInfo) -> bool:
    """A ``def`` that replaces a module's ``forward``: a function (not a method) whose
    first parameter is ``self``, or one whose name (or its factory's name) is on the
    right of a ``something.forward = ...`` assignment of this file."""
    if info.class_name is None or info.parent is not None:
        params = info.params
        if params and params[0] == "self":
            return True
    names = _forward_assignments(facts)
    while info is not None:
        if info.name in names:
            return True
        info = info.parent
    return False


def _forward_assignments(facts: ModuleFacts) -> set[str]:
    """Names in the values assigned to ``x.forward`` (and the functions that built
    them: ``f = make(...)``, ``m.forward = partial(f, m)``), once per module."""
    return facts.memo("_forward_assignments", _find_forward_assignments)


def _find_forward_assignments(facts: ModuleFacts) -> set[str]:
    built: dict[str, set[str]] = {}
    names: set[str] = set()
    for node in descendants(facts.module):
        if not isinstance(node, cst.Assign):
            continue
        value_names = _plain_names(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "forward":
                names |= value_names
            elif isinstance(target.target, cst.Name) and isinstance(node.value, cst.Call):
                callee = dotted_name(node.value.func)
                if callee is not None:
                    built.setdefault(target.target.value, set()).add(callee.rsplit(".", 1)[-1])
    for name in list(names):
        names |= built.get(name, set())
    return names


def _plain_names(value: cst.BaseExpression) -> set[str]:
    """Names used in an expression (``self.method`` counts as ``method``; other
    attribute names and ``self`` itself are left out)."""
    attrs: set[int] = set()
    found: set[str] = set()
    for node in [value, *descendants(value)]:
        if isinstance(node, cst.Attribute):
            attrs.add(id(node.attr))
            if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
                found.add(node.attr.value)
        elif isinstance(node, cst.Name) and id(node) not in attrs and node.value not in ("self", "cls"):
            found.add(node.value)
    return found


def explained_by_comment(statement: cst.CSTNode) -> bool:
    """A comment on the statement's (first) line, or on the lines just above it, that
    explains a direct ``forward`` call."""
    comments: list[str] = []
    trailing = getattr(statement, "trailing_whitespace", None)
    if trailing is not None and trailing.comment is not None:
        comments.append(trailing.comment.value)
    leading = list(getattr(statement, "leading_lines", ()))
    for line in reversed(leading[-2:]):
        if line.comment is None:
            break
        comments.append(line.comment.value)
    return any(_EXPLAINING_COMMENT.search(c) for c in comments)
