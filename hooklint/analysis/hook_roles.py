"""What each parameter of a hook receives, and small structural queries over one
hook body (parents, locals), shared by HL005-HL008.

Everything here looks only inside one hook's own function (never the module), and
only at the registration's facts: the API kind and ``with_kwargs=True``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.walk import child_nodes

if TYPE_CHECKING:
    from hooklint.analysis.facts import Registration

#: Roles of the positional parameters torch passes, per hook kind (the module first).
_ROLES: dict[str, tuple[str, ...]] = {
    "forward_pre": ("module", "args"),
    "forward": ("module", "args", "output"),
    "backward": ("module", "grad_input", "grad_output"),
    "full_backward": ("module", "grad_input", "grad_output"),
    "full_backward_pre": ("module", "grad_output"),
    "tensor": ("grad",),
}
_ROLES_WITH_KWARGS: dict[str, tuple[str, ...]] = {
    "forward_pre": ("module", "args", "kwargs"),
    "forward": ("module", "args", "kwargs", "output"),
}
#: Roles whose value is a tuple of tensors (only ``x[i]`` is a tensor).
TUPLE_ROLES = frozenset({"args", "grad_input", "grad_output"})
#: Roles whose value is (usually) a tensor.
TENSOR_ROLES = frozenset({"output", "grad"})


def with_kwargs(registration: Registration) -> bool:
    return registration.keyword_is_true("with_kwargs")


def parameter_roles(registration: Registration) -> dict[str, str]:
    """``{parameter name: role}`` for the hook's parameters, e.g.
    ``{"mod": "module", "inp": "args", "out": "output"}``; empty when unknown."""
    hook = registration.hook
    if hook is None:
        return {}
    kind = registration.api.kind
    roles = (_ROLES_WITH_KWARGS if with_kwargs(registration) else _ROLES).get(kind) or _ROLES.get(kind)
    if roles is None:
        return {}
    params = hook.params
    if len(params) < len(roles) and isinstance(hook.node, cst.FunctionDef) and hook.node.params.star_arg:
        # ``def hook(module, *args)``: only the leading names are known.
        roles = roles[: len(params)]
    elif len(params) != len(roles):
        return {}
    return dict(zip(params, roles))


def body_of(node: cst.FunctionDef | cst.Lambda) -> cst.CSTNode:
    return node.body


def parents(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """``id(child) → parent`` for every node under ``root`` (nested defs not entered)."""
    result: dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        for child in child_nodes(node):
            result[id(child)] = node
            stack.append(child)
    return result


def ancestors(node: cst.CSTNode, parent_map: dict[int, cst.CSTNode]):
    current = parent_map.get(id(node))
    while current is not None:
        yield current
        current = parent_map.get(id(current))


def returns_value(node: cst.FunctionDef) -> bool:
    """Whether the def has a ``return <value>`` (other than ``return None``) in its own body."""
    stack = list(child_nodes(node.body))
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(current, cst.Return):
            value = current.value
            if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
                return True
        if isinstance(current, (cst.Yield,)):
            return True
        stack.extend(child_nodes(current))
    return False
