"""What each parameter of a hook receives, small structural queries over one hook
body (whether it returns a value, whether it removes itself), shared by HL005-HL008,
which callable a registration runs (:func:`hook_callable`: also callable objects of
same-file classes), and whether a pre-hook's push is popped by the forward hook on
the same object (:func:`undone_by_post_hook`, HL002).

The parameter roles look only inside one hook's own function, and only at the
registration's facts: the API kind and ``with_kwargs=True``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import FunctionInfo, HookBody, ModuleFacts, Registration
from hooklint.analysis.names import dotted_name, isinstance_of, resolve
from hooklint.analysis.vocabulary import ITEM_ADDS
from hooklint.analysis.walk import child_nodes, descendants
from hooklint.analysis.wrappers import is_abstract

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


def parameter_roles(registration: Registration, hook: HookBody | None = None) -> dict[str, str]:
    """``{parameter name: role}`` for the hook's parameters, e.g.
    ``{"mod": "module", "inp": "args", "out": "output"}``; empty when unknown.
    ``hook``: one of the registration's alternative hooks instead of its own."""
    hook = hook or registration.hook
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


#: Calls that return None: a hook lambda made of one of them returns None.
_NONE_RETURNING = frozenset({"append", "extend", "add", "update", "insert", "print", "__setitem__", "put"})


def returns_value(
    node: cst.FunctionDef | cst.Lambda,
    module: str | None = None,
    kinds: frozenset[str] = frozenset(),
    unchanged: frozenset[int] = frozenset(),
) -> bool:
    """Whether the hook returns something: a def with a ``return <value>`` (other than
    ``return None``) or a ``yield`` in its own body; a lambda unless its body is a
    call of a None-returning method (``lambda *_: seen.append(1)``).  With ``module``
    (the hook's module parameter) and ``kinds``: a ``return`` inside ``if
    isinstance(module, <only kinds>):`` does not count.  ``unchanged``: the values of
    ``return`` statements that hand a parameter back as it came (:func:`passed_back`),
    which replace nothing."""
    if isinstance(node, cst.Lambda):
        body = node.body
        return not (
            isinstance(body, cst.Call)
            and isinstance(body.func, (cst.Attribute, cst.Name))
            and (body.func.attr.value if isinstance(body.func, cst.Attribute) else body.func.value)
            in _NONE_RETURNING
        )

    def children(current: cst.CSTNode):
        if module is not None and _tests_only(current, module, kinds):
            return [current.orelse] if current.orelse is not None else []
        return child_nodes(current)

    for current in _own_nodes(node, children):
        if isinstance(current, cst.Return):
            value = current.value
            if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
                if id(value) not in unchanged:
                    return True
        if isinstance(current, cst.Yield):
            return True
    return False


def _own_nodes(node: cst.FunctionDef, children=child_nodes):
    """The nodes of a def's own body (not those of defs, lambdas or classes in it);
    ``children`` says which children of a node to go on with."""
    stack = list(child_nodes(node.body))
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        yield current
        stack.extend(children(current))


def holds_registering_object(registration: Registration) -> bool:
    """The hook keeps the object whose method registers it alive: a bound method
    (``self.on_output``), or a function written in the method that names ``self``.  The
    hooked module holds the hook, so that object's ``__del__`` cannot run while the
    module lives."""
    hook = registration.hook
    if hook is None or registration.site.class_name is None or not registration.site.function_name:
        return False
    return hook.is_method or any(
        isinstance(n, cst.Name) and n.value == "self" for n in descendants(hook.node)
    )


def module_parameter(registration: Registration, hook: HookBody) -> str | None:
    """The name of the hook's parameter that receives the module (None: none, or unknown)."""
    return next((name for name, r in parameter_roles(registration, hook).items() if r == "module"), None)


def reads_role(registration: Registration, role: str, unless_module: frozenset[str] = frozenset()) -> bool:
    """Whether the registration's hook may read what torch passes it as ``role``
    (``"grad_input"``: :data:`_ROLES`): its parameter for it, or the ``*args`` that
    takes it, is named in its body (nested defs included: a closure reading it).
    True when unknown: the hook is not in this file or is a placeholder that
    subclasses override (``@abstractmethod``), its signature does not match the role
    table, or an alternative hook (``a if x else b``) may read it.
    ``unless_module``: class names (last parts); a read inside ``if isinstance(module,
    <only those>):``, the hook's module parameter tested, does not count.  Nor does
    handing the parameter back unchanged (``return grad_input``, the name never bound
    again in the hook): torch then keeps what it passed, as with ``return None``."""
    hook = registration.hook
    if hook is None:
        return True
    for body in (hook, *hook.alternatives):
        node = body.node
        if body.is_method and isinstance(node, cst.FunctionDef) and is_abstract(node):
            return True  # a placeholder method: what runs is a subclass's override
        roles = parameter_roles(registration, body)
        named = [name for name, r in roles.items() if r == role]
        if not named:
            kinds = _ROLES.get(registration.api.kind, ())
            star = node.params.star_arg
            if role not in kinds or not isinstance(star, cst.Param) or len(body.params) > kinds.index(role):
                return True  # a signature the table does not match: unknown
            named = [star.name.value]  # ``def hook(module, *args)``: the rest is in ``args``
        module = module_parameter(registration, body)
        handed_back = {id(value) for value in passed_back(node, set(named))}
        if module is not None and unless_module:
            if _named_outside(node.body, set(named), module, unless_module, handed_back):
                return True
        elif any(
            isinstance(n, cst.Name) and n.value in named and id(n) not in handed_back
            for n in descendants(node.body)
        ):
            return True
    return False


def passed_back(node: cst.FunctionDef | cst.Lambda, names: set[str]) -> list[cst.Name]:
    """The values of the hook's own ``return <name>`` statements that hand one of its
    parameters ``names`` back unchanged: the name is never bound again in the hook."""
    if isinstance(node, cst.Lambda):
        return []
    binders = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.WithItem)
    bound = set()
    for binder in descendants(node.body):
        if isinstance(binder, binders):
            target = binder.asname.name if isinstance(binder, cst.WithItem) and binder.asname else binder
            target = getattr(target, "target", target)
            bound |= {n.value for n in (target, *descendants(target)) if isinstance(n, cst.Name)}
    return [
        current.value
        for current in _own_nodes(node)
        if isinstance(current, cst.Return)
        and isinstance(current.value, cst.Name)
        and current.value.value in names
        and current.value.value not in bound
    ]


def replaces_role(registration: Registration, role: str, unless_module: frozenset[str] = frozenset()) -> bool:
    """Whether the hook returns a value (:func:`returns_value`, ``unless_module`` as
    there) other than its ``role`` parameter handed back unchanged (:func:`passed_back`)."""
    hook = registration.hook
    for body in (hook, *hook.alternatives):
        named = {name for name, r in parameter_roles(registration, body).items() if r == role}
        kept = frozenset(id(value) for value in passed_back(body.node, named))
        if returns_value(body.node, module_parameter(registration, body), unless_module, kept):
            return True
    return False


def _named_outside(
    node: cst.CSTNode, names: set[str], module: str, kinds: frozenset[str], skip: set[int] = frozenset()
) -> bool:
    """One of ``names`` is named in ``node`` outside the bodies of ``if isinstance(module,
    K):`` tests whose classes ``K`` are all among ``kinds`` (the nodes in ``skip`` aside)."""
    if isinstance(node, cst.Name):
        return node.value in names and id(node) not in skip
    if _tests_only(node, module, kinds):
        return node.orelse is not None and _named_outside(node.orelse, names, module, kinds, skip)
    return any(_named_outside(child, names, module, kinds, skip) for child in child_nodes(node))


def _tests_only(node: cst.CSTNode, module: str, kinds: frozenset[str]) -> bool:
    """``node`` is ``if isinstance(module, K):`` with every class of ``K`` among ``kinds``."""
    if not isinstance(node, cst.If):
        return False
    tested = isinstance_of(node.test, module)
    return bool(tested) and all(kind in kinds for kind in tested)


# -- which hook runs, and on what ------------------------------------------------------
@dataclass(frozen=True)
class HookCallable:
    """The code a registration's hook runs, with what it runs on.

    ``receiver`` is the key that ``self`` stands for when the hook is a method or
    ``__call__`` of an instance of a class in this file (``tracker.enter``,
    ``Counter()``, ``self.probes["pre"]``); None for a plain function, a lambda or a
    method of the registering class (``self.method``, whose ``self`` is ``self``).
    ``context`` is the function a lambda is written in.
    """

    body: HookBody
    receiver: str | None = None
    context: FunctionInfo | None = None


def hook_callable(facts: ModuleFacts, registration: Registration) -> HookCallable | None:
    """What ``registration`` runs: its resolved hook, or a callable object of a
    same-file class — an instance (``Counter()``, or a name, attribute or container item
    holding one), a bound method of one (``tracker.enter``), or ``functools.partial`` of
    either.  None when the callable is not in this file."""
    from hooklint.analysis.effects import function_info

    function = registration.site.function
    context = function_info(facts, function) if function is not None else None
    if registration.hook is not None:
        receiver = None
        if registration.hook.via == "method" and isinstance(registration.hook_arg, cst.Attribute):
            owner = registration.hook_arg.value
            if not (isinstance(owner, cst.Name) and owner.value in ("self", "cls")):
                receiver = facts.code(owner)
        return HookCallable(registration.hook, receiver, context)
    return _callable(facts, registration.hook_arg, registration, context, 0)


def _callable(facts, expr, registration, context, depth) -> HookCallable | None:
    if expr is None or depth > 3:
        return None
    if isinstance(expr, cst.Call):
        callee = resolve(dotted_name(expr.func), facts.imports)
        if callee in ("functools.partial", "partial") and expr.args:
            inner = _callable(facts, expr.args[0].value, registration, context, depth + 1)
            if inner is None:
                return None
            positional = tuple(a.value for a in expr.args[1:] if a.keyword is None and not a.star)
            keywords = tuple(a.keyword.value for a in expr.args[1:] if a.keyword is not None)
            body = dataclasses.replace(
                inner.body,
                via="partial",
                bound_args=inner.body.bound_args + positional,
                bound_keywords=inner.body.bound_keywords + keywords,
            )
            return HookCallable(body, inner.receiver, inner.context)
        method = _instance_method(facts, expr, "__call__")
        if method is not None:
            # A fresh instance: its state is its own (never the same object as another hook's).
            return HookCallable(method, f"<{facts.code(expr.func)} #{registration.site.order}>", context)
        return None
    if isinstance(expr, cst.Attribute):
        owner = expr.value
        value = held_value(facts, owner, registration, context)
        if value is not None:
            method = _instance_method(facts, value, expr.attr.value)
            if method is not None:
                return HookCallable(method, facts.code(owner), context)
    value = held_value(facts, expr, registration, context)
    if value is not None:
        if isinstance(value, cst.Call) and _instance_method(facts, value, "__call__") is not None:
            return HookCallable(_instance_method(facts, value, "__call__"), facts.code(expr), context)
        return None
    return None


def _instance_method(facts: ModuleFacts, value, name: str) -> HookBody | None:
    """``Cls(...).name`` for a class of this file: the method's body, bound."""
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in facts.classes
    ):
        return None
    info = facts.method(value.func.value, name)
    if info is None:
        return None
    return HookBody(
        info.node,
        f"{value.func.value}.{name}",
        "method",
        function=info,
        imports=facts.imports,
        is_method=True,
    )


def held_value(facts: ModuleFacts, expr, registration: Registration, context) -> cst.BaseExpression | None:
    """The instance ``expr`` holds (a ``Cls(...)`` call, or None): the value a name, ``self.attr`` or container item is
    assigned in the registering function (or, for ``self.attr``, in its class)."""
    target = expr.value if isinstance(expr, cst.Subscript) else expr
    wanted = dotted_name(target)
    if wanted is None:
        return None
    scopes = []
    if context is not None:
        scopes.append(context.node)
    if wanted.startswith("self.") and registration.site.class_def is not None:
        scopes.extend(
            i.node for i in facts.functions if i.class_name == registration.site.class_def.name.value
        )
    item = isinstance(expr, cst.Subscript)
    for scope in scopes:
        for node in descendants(scope.body, into_functions=False):
            value = _assigned_instance(node, wanted, item)
            if value is not None:
                return value
    return None


def _assigned_instance(node, wanted: str, item: bool):
    """The ``Cls(...)`` that ``node`` puts under ``wanted`` (or into it, for items)."""
    if isinstance(node, cst.Assign):
        for target in node.targets:
            name = dotted_name(target.target)
            if name == wanted and not item and isinstance(node.value, cst.Call):
                return node.value
            if item and name == wanted and isinstance(node.value, (cst.Dict, cst.List, cst.Tuple)):
                for element in node.value.elements:
                    value = element.value
                    if isinstance(value, cst.Call):
                        return value
            if (
                item
                and isinstance(target.target, cst.Subscript)
                and dotted_name(target.target.value) == wanted
            ):
                if isinstance(node.value, cst.Call):
                    return node.value
    if item and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ITEM_ADDS and dotted_name(node.func.value) == wanted:
            for arg in node.args:
                if isinstance(arg.value, cst.Call):
                    return arg.value
    return None


def same_hooked_object(pre: Registration, post: Registration) -> bool:
    """Whether a pre-hook and a post-hook are on one object: as
    :meth:`Registration.same_target`, or both on the same ``self.attr`` from methods of
    one class (``self.module`` means one object in every method)."""
    if pre.same_target(post):
        return True
    code = post.receiver_code
    if code is None or code != pre.receiver_code or not (code == "self" or code.startswith("self.")):
        return False
    pre_class, post_class = pre.site.class_def, post.site.class_def
    return pre_class is not None and pre_class is post_class


class HookedObjects:
    """Registrations (each with what goes along: ``(registration, x)`` pairs) indexed by
    what they hook.  :meth:`same_object` gives those :func:`same_hooked_object` pairs
    with a registration, in their order, asking only the ones that can be on its
    object, not every one for every registration: the process-wide ones, and those
    with its receiver code, in its function (``self.*`` codes: in any method)."""

    _PROCESS_WIDE = ("process-wide",)  # never a receiver's key

    def __init__(self, items: list) -> None:
        self.items = items
        self._by_key: dict = {}
        for index, (registration, _) in enumerate(items):
            self._by_key.setdefault(self._key(registration), []).append(index)

    @classmethod
    def _key(cls, registration: Registration):
        if registration.api.is_global:
            return cls._PROCESS_WIDE
        code = registration.receiver_code
        if code is not None and (code == "self" or code.startswith("self.")):
            return (code,)  # one object in every method of the class
        return (code, id(registration.site.function))  # the same code in the same function

    def same_object(self, other: Registration) -> list:
        if other.api.is_global:
            indexes: list[int] | range = range(len(self.items))
        else:
            found = self._by_key.get(self._key(other), [])
            indexes = sorted(found + self._by_key.get(self._PROCESS_WIDE, []))
        return [self.items[i] for i in indexes if same_hooked_object(self.items[i][0], other)]


def effects_of(facts: ModuleFacts, hook: HookCallable):
    """The state effects of what a registration runs, helpers included (cached per module)."""
    from hooklint.analysis.effects import hook_effects

    return hook_effects(facts, hook.body, hook.receiver, hook.context)


def removes_itself(hook: HookBody) -> bool:
    """An unconditional removal at the top level of the hook body: the hook removes
    itself (or all hooks) on its first call."""
    node = hook.node
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return False
    for statement in node.body.body:
        if isinstance(statement, (cst.If, cst.Try, cst.While, cst.With)) or not isinstance(
            statement, (cst.SimpleStatementLine, cst.For)
        ):
            continue
        for current in descendants(statement):
            if isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
                attr = current.func.attr.value
                if attr == "remove" and not current.args:
                    return True
                if "remove" in attr and "hook" in attr:
                    return True
    return False


def undone_by_post_hook(facts: ModuleFacts, registration: Registration, nodes: list[cst.CSTNode]) -> bool:
    """Whether every one of ``nodes`` (places in a forward pre-hook's body) acquires
    state that a forward hook on the same object gives back (HL001's pairs: a pushed
    stack popped, an added item removed): the pre-hook's half of a push/pop pair,
    bounded by one entry per forward in flight, not a store that grows."""
    if registration.api.kind != "forward_pre" or not nodes:
        return False
    from hooklint.analysis.effects import acquired, pair_matches

    pre_hook = hook_callable(facts, registration)
    if pre_hook is None:
        return False
    acquires = acquired(effects_of(facts, pre_hook))
    posts = [(r, hook_callable(facts, r)) for r in facts.registrations if r.api.kind == "forward"]
    popped: set[int] = set()
    for _post, post_hook in HookedObjects([(r, c) for r, c in posts if c is not None]).same_object(
        registration
    ):
        releases = [e for e in effects_of(facts, post_hook) if e.releases]
        popped |= {id(a.anchor) for a in acquires if any(pair_matches(a, r) for r in releases)}
    return all(id(node) in popped for node in nodes)
