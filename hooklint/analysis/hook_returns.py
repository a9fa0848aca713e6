"""What a forward (pre-)hook returns, for HL008.

Two questions about one hook body:

- :func:`accidental_lambda_value`: a lambda hook whose body is a value by accident,
  e.g. ``lambda m, i, o: feats.setdefault("x", o.detach())`` (the dict value replaces
  the output) or ``lambda m, i, o: o.register_hook(fn)`` (the handle does);
- :func:`dropped_rebinding`: a ``def`` hook that rebinds its output/args parameter,
  never reads it again and returns nothing, so the change is silently lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.facts import parameter_names
from hooklint.analysis.hook_roles import parameter_roles, returns_value
from hooklint.analysis.names import dotted_name, resolve
from hooklint.analysis.walk import contains, descendants

if TYPE_CHECKING:
    from hooklint.analysis.facts import FunctionInfo, ModuleFacts, Registration

#: Methods that return None (list/dict/set mutation, logging, tensor bookkeeping).
NONE_METHODS = frozenset(
    {
        "append",
        "appendleft",
        "extend",
        "extendleft",
        "insert",
        "__setitem__",
        "__delitem__",
        "update",
        "add",
        "clear",
        "discard",
        "remove",
        "sort",
        "reverse",
        "retain_grad",
        "register_buffer",
        "register_parameter",
        "put",
        "put_nowait",
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "write",
        "set",
        "record",
        "add_scalar",
        "add_histogram",
        "add_image",
        "add_text",
        "__exit__",
        "release",
        "notify",
        "notify_all",
    }
)
#: Functions that return None.
NONE_FUNCTIONS = frozenset(
    {
        "print",
        "setattr",
        "delattr",
        "breakpoint",
        "torch.save",
        "warnings.warn",
        "time.sleep",
        "pdb.set_trace",
        "logging.debug",
        "logging.info",
        "logging.warning",
        "logging.error",
        "logging.critical",
        "logging.exception",
        "logging.log",
    }
)
#: Methods whose (non-None) value is almost never meant as the new output.
INCIDENTAL_METHODS = frozenset(
    {
        "setdefault",
        "pop",
        "get",
        "popitem",
        "popleft",
        "copy",
        "index",
        "count",
        "register_hook",
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_full_backward_hook",
        "register_backward_hook",
        "submit",
        "apply_async",
        "send",
        "__setattr__",
    }
)


def accidental_lambda_value(facts: ModuleFacts, registration: Registration) -> cst.BaseExpression | None:
    """The lambda body when its value would replace the output/args by accident."""
    hook = registration.hook
    if hook is None or not isinstance(hook.node, cst.Lambda):
        return None
    body = hook.node.body
    params = hook.params
    if isinstance(body, cst.Call):
        return body if _incidental_call(facts, registration, body, params) else None
    if isinstance(body, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and isinstance(body.elt, cst.Call):
        # ``lambda m, i, o: [buf.append(t) for t in o]``: a side-effect comprehension.
        return body if _returns_none(facts, body.elt) else None
    if isinstance(body, (cst.Tuple, cst.List)) and body.elements:
        # ``lambda m, i, o: (a.append(o), b.append(i))``: statements written as a tuple.
        calls = [e.value for e in body.elements]
        if all(isinstance(c, cst.Call) and _returns_none(facts, c) for c in calls):
            return body
    return None


def _returns_none(facts: ModuleFacts, call: cst.Call) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in NONE_METHODS:
        return True
    callee = resolve(dotted_name(func), facts.imports)
    return callee in NONE_FUNCTIONS


def _incidental_call(facts, registration, call: cst.Call, params: list[str]) -> bool:
    if _returns_none(facts, call):
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in INCIDENTAL_METHODS:
        return True
    target = _local_function(facts, registration, func)
    if target is None or not returns_value(target.node):
        return False
    # ``lambda m, i, o: self._hook(m, i, o)`` delegates: its value is meant.
    passed = [a.value.value for a in call.args if isinstance(a.value, cst.Name)]
    if params and all(p in passed for p in params):
        return False
    # A helper that returns something computed from its arguments (``_prepare_input_fn``)
    # is a transform meant to replace the value; one that returns unrelated state
    # (``return len(self.buffer)``) is not.
    return not _returns_computed_value(target.node)


def _returns_computed_value(node: cst.FunctionDef) -> bool:
    own = set(parameter_names(node.params)) - {"self", "cls"}
    returned: set[str] = set()
    for current in descendants(node.body, into_functions=False):
        if (
            isinstance(current, cst.AssignTarget)
            and isinstance(current.target, cst.Name)
            or isinstance(current, (cst.AugAssign, cst.AnnAssign))
            and isinstance(current.target, cst.Name)
            or isinstance(current, (cst.For, cst.CompFor))
            and isinstance(current.target, cst.Name)
        ):
            own.add(current.target.value)
        elif isinstance(current, cst.Return) and current.value is not None:
            returned.update(n.value for n in descendants(current.value) if isinstance(n, cst.Name))
            if isinstance(current.value, cst.Name):
                returned.add(current.value.value)
    return bool(returned & own)


def _local_function(facts, registration, func) -> FunctionInfo | None:
    if isinstance(func, cst.Name):
        for frame in reversed(registration.site.frames):
            if frame.kind == "def":
                info = facts.function_for(frame.node)
                if info is not None and func.value in info.nested:
                    return info.nested[func.value]
        return facts.module_function(func.value)
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        class_def = registration.site.class_def
        if class_def is not None:
            return facts.method(class_def.name.value, func.attr.value)
    return None


def replaced_names(registration: Registration) -> list[str]:
    """The parameters whose rebinding a hook must return: the output of a forward hook,
    the args (and kwargs) of a pre-hook."""
    roles = parameter_roles(registration)
    kind = registration.api.kind
    wanted = ("output",) if kind == "forward" else ("args", "kwargs")
    return [name for name, role in roles.items() if role in wanted]


def dropped_rebinding(registration: Registration) -> cst.Assign | None:
    """The last assignment to the output/args parameter of a ``def`` hook that returns
    nothing, when the rebound name is never read afterwards."""
    hook = registration.hook
    if hook is None or not isinstance(hook.node, cst.FunctionDef):
        return None
    names = replaced_names(registration)
    if not names or returns_value(hook.node):
        return None
    nodes = list(descendants(hook.node.body, into_functions=False))
    last: cst.Assign | None = None
    last_index = -1
    last_name = ""
    for index, node in enumerate(nodes):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value in names:
                last, last_index, last_name = node, index, target.value
    if last is None:
        return None
    # The value is evaluated (and visited) after the target: skip the whole assignment.
    inside = {id(n) for n in descendants(last)}
    for node in nodes[last_index + 1 :]:
        if id(node) in inside:
            continue
        if isinstance(node, cst.Name) and node.value == last_name:
            return None
    if _in_loop(hook.node, last):
        return None
    return last


def _in_loop(function: cst.FunctionDef, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a loop of ``function`` (a later iteration may read it)."""
    for current in descendants(function.body, into_functions=False):
        if isinstance(current, (cst.For, cst.While)) and contains(current, node):
            return True
    return False


def rebound_target(facts: ModuleFacts, rebinding: cst.Assign) -> str:
    """The code of the name an assignment found by :func:`dropped_rebinding` rebinds."""
    return facts.code(rebinding.targets[0].target)
