"""What a hook body does to state that outlives the call.

A *state effect* is a change to something shared between calls: a global or
``nonlocal`` name, an attribute (``self.depth``, ``P._cache_enabled``, an attribute
of the hooked module), an item of such a container, or a container mutated through
a method (``_active.add(x)``).  Locals and parameters rebound inside the hook are not
shared state.

Keys are normalised so that the two hooks of a pair agree: names go through the
module's imports (``P._cache_enabled`` → ``torch.nn.utils.parametrize._cache_enabled``),
and the hook's first parameter (the module the hook fires for) becomes ``<module>``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.names import dotted_name, resolve
from hooklint.analysis.scopes import local_names
from hooklint.analysis.walk import descendants

if TYPE_CHECKING:
    from hooklint.analysis.facts import HookBody

#: Operations that take something (a pre-hook's side of a pair) ...
ACQUIRE = frozenset({"increment", "add", "set_true", "set"})
#: ... and those that give it back (a post-hook's side).
RELEASE = frozenset({"decrement", "decrement_clamped", "remove", "discard", "set_false", "delete", "clear"})

_ADDING_METHODS = frozenset({"add", "append", "appendleft", "push", "insert", "acquire", "__enter__"})
_REMOVING_METHODS = {
    "remove": "remove",
    "pop": "remove",
    "popleft": "remove",
    "discard": "discard",
    "release": "remove",
    "__exit__": "remove",
    "clear": "clear",
}
_FALSY = frozenset({"False", "None"})


@dataclass(frozen=True)
class StateEffect:
    """One change a hook makes: ``op`` on the shared state named ``key``.

    ``node`` is the statement or call that makes it (an ``AugAssign``, ``Assign``,
    ``Del`` or ``Call``), which fixes rewrite.
    """

    key: str
    op: str
    node: cst.CSTNode

    @property
    def acquires(self) -> bool:
        return self.op in ACQUIRE

    @property
    def releases(self) -> bool:
        return self.op in RELEASE


def state_effects(hook: "HookBody") -> list[StateEffect]:
    """The state effects of a hook body, in source order."""
    node = hook.node
    params = hook.params
    module_param = params[0] if params else None
    if isinstance(node, cst.Lambda):
        body: cst.CSTNode = node.body
        declared: set[str] = set()
        assigned: set[str] = set()
    else:
        body = node.body
        assigned, declared = local_names(node)
    scope = _Scope(hook.imports, module_param, declared, assigned | set(params))
    effects: list[StateEffect] = []
    # A lambda's body is one expression: it is a node of interest itself.
    nodes = descendants(body, into_functions=False)
    if isinstance(node, cst.Lambda):
        nodes = itertools.chain((body,), nodes)
    for current in nodes:
        effect = scope.effect_of(current)
        if effect is not None:
            effects.append(effect)
    return effects


class _Scope:
    """Turns nodes of one hook body into effects on shared keys."""

    def __init__(self, imports, module_param, declared, local_names) -> None:
        self.imports = imports
        self.module_param = module_param
        self.declared = declared
        self.local_names = local_names

    def key(self, target: cst.BaseExpression, *, rebinding: bool) -> str | None:
        """The shared-state key of ``target``, or None if it is local to the call.

        A bare name is shared when declared ``global``/``nonlocal``, or, when it is only
        mutated (not rebound), when it is not a local of the hook.
        """
        suffix = ""
        if isinstance(target, cst.Subscript):
            suffix = "[]"
            target = target.value
            rebinding = False
        dotted = dotted_name(target)
        if dotted is None:
            return None
        head, dot, rest = dotted.partition(".")
        if head == self.module_param:
            return "<module>" + dot + rest + suffix
        if not dot:
            if head in self.declared:
                return head + suffix
            if rebinding or head in self.local_names:
                return None
            return head + suffix
        if head in self.local_names and head != "self":
            return None
        return (resolve(dotted, self.imports) or dotted) + suffix

    def effect_of(self, node: cst.CSTNode) -> StateEffect | None:
        if isinstance(node, cst.AugAssign):
            key = self.key(node.target, rebinding=True)
            if key is None:
                return None
            if isinstance(node.operator, cst.AddAssign):
                return StateEffect(key, "increment", node)
            if isinstance(node.operator, cst.SubtractAssign):
                return StateEffect(key, "decrement", node)
            return None
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            key = self.key(node.targets[0].target, rebinding=True)
            if key is None:
                return None
            return StateEffect(key, _assignment_op(node.targets[0].target, node.value), node)
        if isinstance(node, cst.Del):
            targets = node.target.elements if isinstance(node.target, cst.Tuple) else None
            first = targets[0].value if targets else node.target
            key = self.key(first, rebinding=True)
            return StateEffect(key, "delete", node) if key is not None else None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method in _ADDING_METHODS:
                op = "add"
            elif method in _REMOVING_METHODS:
                op = _REMOVING_METHODS[method]
                if method == "pop" and len(node.args) >= 2:
                    op = "discard"  # dict.pop(k, default) tolerates a missing key
            else:
                return None
            key = self.key(node.func.value, rebinding=False)
            return StateEffect(key, op, node) if key is not None else None
        return None


def _assignment_op(target: cst.BaseExpression, value: cst.BaseExpression) -> str:
    """``X = X + 1`` → increment, ``X = max(0, X - 1)`` → decrement_clamped,
    ``X = False/None`` → set_false, ``X = True`` → set_true, else set."""
    if isinstance(value, cst.Name):
        if value.value == "True":
            return "set_true"
        if value.value in _FALSY:
            return "set_false"
    if isinstance(value, cst.BinaryOperation) and _same(value.left, target):
        if isinstance(value.operator, cst.Add):
            return "increment"
        if isinstance(value.operator, cst.Subtract):
            return "decrement"
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "max"
        and any(
            isinstance(a.value, cst.BinaryOperation)
            and isinstance(a.value.operator, cst.Subtract)
            and _same(a.value.left, target)
            for a in value.args
        )
    ):
        return "decrement_clamped"
    return "set"


def _same(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    name_a, name_b = dotted_name(a), dotted_name(b)
    return name_a is not None and name_a == name_b
