"""Capture hooks and the lifetime of their handles (HL002's questions).

A *capture* is a place in a hook body where the hook stores what it received (its
args, kwargs, inputs, outputs or gradients, or values derived from them) into a store
that outlives the call and grows with every call: ``store.append(x)``,
``store.extend(xs)``, ``store.insert(i, x)``, ``store.setdefault(k, []).append(x)``,
``store[k].append(x)``, ``store += [x]``, ``store = torch.cat([store, x])``,
``store = [x] + store`` (or ``store + [x]``, ``[*store, x]``) and
``store[k] = x`` with a key that changes per call (``len(store)``, a counter the hook
increments, ``next(...)``, ``id(...)``, ``time...``).

A store outlives the call when it is an attribute of ``self`` (a method hook, or a
callable object's ``__call__``), an attribute of the hooked module, a module global, a
closure or ``nonlocal`` variable, or an object bound into ``functools.partial``.  A
store obtained per call (a local, a plain argument, ``ContextVar.get()``) does not
accumulate.  Bounded accumulation (``self.H[name] = self.H[name] + x.T @ x``,
``total += x.sum()``, overwriting a fixed key) is not a capture, nor is storing what
kind of thing the hook received (``seen.add(type(output))``, ``output.dtype``).

Only the hook body (and, for handles kept in a local, the one registering function)
is looked at: nothing here walks the module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.facts import HookBody, ModuleFacts, Registration, parameter_names
from hooklint.analysis.hook_roles import holds_registering_object, hook_callable
from hooklint.analysis.names import argument_for, dotted_name, is_attribute
from hooklint.analysis.scopes import local_names, paired_elements, target_names
from hooklint.analysis.vocabulary import MODULE_HOOK_DICTS, STORE_VERBS, UNHOOK_WORDS
from hooklint.analysis.walk import contains, descendants

_CONCAT = frozenset(
    {"cat", "concat", "concatenate", "stack", "vstack", "hstack", "row_stack", "column_stack"}
)
_PER_CALL_KEY_CALLS = frozenset({"len", "next", "id", "time", "perf_counter", "monotonic", "uuid4", "count"})
_MODULE_OWNERS = frozenset({"module", "global_module"})


@dataclass(frozen=True)
class Capture:
    """One place where a hook stores what it received into a growing store."""

    store: str  # the store's code: ``self._all_module_input``, ``feats``
    verb: str  # "appends to", "extends", "concatenates onto", "adds a new key to"...
    node: cst.CSTNode  # the call or statement that stores
    captured: str  # the code of what is stored
    key: cst.BaseExpression | None = None  # for keyed stores: the per-registration key


def hook_of(facts: ModuleFacts, registration: Registration) -> HookBody | None:
    """The registration's hook body; also a callable object of a class in this file
    that defines ``__call__`` — built in the call (``Capture(...)``), or held by a name,
    ``self`` attribute or container item (``self.rec``), or a bound method of one —
    as :func:`hooklint.analysis.hook_roles.hook_callable` resolves it."""
    if registration.hook is not None:
        return registration.hook
    from hooklint.analysis.hook_roles import hook_callable

    found = hook_callable(facts, registration)
    return found.body if found is not None else None


def own_method_call(facts: ModuleFacts, hook: HookBody, capture: Capture) -> bool:
    """The capture is a call of a method that a same-file class defines on an object
    the hook's class holds (``self.tree.add(name, n)`` where every binding of
    ``self.tree`` builds a ``Tree`` of this file, which defines ``add``), also reached
    through attributes and items of such objects (``self.mem.states[i].add(...)``,
    where ``Memory.__init__`` binds ``states`` to a list of ``State(...)``): what it
    does is that method's, not a list's or a set's growth."""
    node = capture.node
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    class_name = hook.function.class_name if hook.function is not None else None
    held = _held_class(facts, class_name, node.func.value, depth=3) if class_name else None
    return held is not None and facts.method(held, node.func.attr.value) is not None


def _held_class(facts: ModuleFacts, class_name: str, code: cst.BaseExpression, depth: int) -> str | None:
    """The same-file class of the object ``code`` names inside a method of
    ``class_name`` (``self.a``, ``self.a.b``, ``self.a.b[i]``), when every binding of
    each attribute on the way builds that one class (an item: every element of the
    literal or comprehension bound); None when unknown.  ``depth``: attributes
    followed after the first."""
    if isinstance(code, cst.Subscript):
        owner = code.value
        if not isinstance(owner, cst.Attribute):
            return None
        holder = _holder(facts, class_name, owner, depth)
        return (
            _built_class(_attribute_values(facts, holder, owner.attr.value), items=True) if holder else None
        )
    if not isinstance(code, cst.Attribute):
        return None
    holder = _holder(facts, class_name, code, depth)
    return _built_class(_attribute_values(facts, holder, code.attr.value), items=False) if holder else None


def _holder(facts: ModuleFacts, class_name: str, attribute: cst.Attribute, depth: int) -> str | None:
    """The class whose instance holds ``attribute``: ``class_name`` for ``self.x``, the
    held class of the object before the dot otherwise (``depth`` permitting)."""
    value = attribute.value
    if isinstance(value, cst.Name) and value.value == "self":
        return class_name
    return _held_class(facts, class_name, value, depth - 1) if depth > 0 else None


def _attribute_values(facts: ModuleFacts, class_name: str, attribute: str) -> list | None:
    """The values bound to ``self.<attribute>`` in the methods of ``class_name``; None
    when one of them is not a plain ``self.<attribute> = value``."""
    bindings = facts.self_attribute_bindings(class_name, attribute)
    if not bindings or not all(isinstance(target, cst.Attribute) for _, target, _ in bindings):
        return None
    return [value for _, _, value in bindings]


def _built_class(values: list | None, *, items: bool) -> str | None:
    """The one same-file class every value builds (``items``: every element of each
    value, a list, tuple, set or dict literal or comprehension); None otherwise."""
    if not values:
        return None
    built: set[str | None] = set()
    for value in values:
        for element in _elements(value) if items else [value]:
            built.add(dotted_name(element.func) if isinstance(element, cst.Call) else None)
    return next(iter(built)) if len(built) == 1 and None not in built else None


def _elements(value: cst.BaseExpression) -> list:
    """What a literal container or comprehension holds (a dict: its values); a list
    with ``None`` for anything else."""
    if isinstance(value, (cst.ListComp, cst.SetComp)):
        return [value.elt]
    if isinstance(value, cst.DictComp):
        return [value.value]
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)) and value.elements:
        return [e.value if isinstance(e, cst.Element) else None for e in value.elements]
    if isinstance(value, cst.Dict) and value.elements:
        return [e.value if isinstance(e, cst.DictElement) else None for e in value.elements]
    return [None]


def written_once(hook: HookBody, capture: Capture) -> bool:
    """The hook stores only while the store is empty: the capture sits in the body of
    an ``if`` that tests it empty (``if not self.shapes:``, ``if len(seen) == 0:``), in
    the ``else`` of one that tests it not empty, or after an early exit when it is not
    (``if self.shapes: return``) in the hook's own body.  Whatever empties it again, it holds one call's worth at a time."""
    body = hook.node.body
    store = capture.store
    inside: set[int] = set()
    for node in descendants(body, into_functions=False):
        if isinstance(node, cst.If) and _tests_empty(node.test, store, empty=True):
            inside.update(id(inner) for inner in descendants(node.body))
        elif (
            isinstance(node, cst.If)
            and node.orelse is not None
            and _tests_empty(node.test, store, empty=False)
        ):
            inside.update(id(inner) for inner in descendants(node.orelse))  # ``else:`` runs when empty
    if id(capture.node) in inside:
        return True
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    for statement in statements:
        if id(capture.node) in {id(n) for n in descendants(statement)} or statement is capture.node:
            return False
        if (
            isinstance(statement, cst.If)
            and statement.orelse is None
            and _tests_empty(statement.test, store, empty=False)
            and _exits(statement.body)
        ):
            return True
    return False


def emptied_first(hook: HookBody, capture: Capture) -> bool:
    """The hook empties the store itself (``mod.saved = []``, ``.clear()``) in a
    statement that runs before the capture whenever the capture runs: earlier in the
    capture's block or in a block around it.  Each call then starts the store anew, and
    it holds one call's worth.  (An emptying in a branch the capture is not in, or
    after it, does not count.)"""
    owner, _, attr = capture.store.rpartition(".")
    body = hook.node.body
    if not owner or not isinstance(body, cst.IndentedBlock):
        return False
    for statements, index in _block_path(body, capture.node):
        for statement in statements[:index]:
            if isinstance(statement, cst.SimpleStatementLine) and any(
                _empties(small.value if isinstance(small, cst.Expr) else small, owner, attr)
                for small in statement.body
            ):
                return True
    return False


def _block_path(block: cst.IndentedBlock, target: cst.CSTNode) -> list[tuple[tuple, int]]:
    """The blocks from ``block`` down to the statement that holds ``target``: each
    block's statements and the index of the one on the way (nested defs not entered)."""
    for index, statement in enumerate(block.body):
        if statement is target or contains(statement, target, into_functions=False):
            path = [(tuple(block.body), index)]
            for suite in _suites(statement):
                inner = _block_path(suite, target)
                if inner:
                    return path + inner
            return path
    return []


def _suites(statement: cst.CSTNode) -> Iterator[cst.IndentedBlock]:
    """The indented blocks of a compound statement (``elif`` and ``else`` included)."""
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return
    for part in (getattr(statement, "body", None), getattr(statement, "finalbody", None)):
        part = getattr(part, "body", part) if isinstance(part, cst.Finally) else part
        if isinstance(part, cst.IndentedBlock):
            yield part
    for handler in getattr(statement, "handlers", ()):
        if isinstance(handler.body, cst.IndentedBlock):
            yield handler.body
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        yield from _suites(orelse)
    elif isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        yield orelse.body


def emptied_before(facts: ModuleFacts, registration: Registration, store: str) -> bool:
    """The registering function empties ``store`` (``self.grads = []``,
    ``self.grads.clear()``) in a statement of its own body before the one that holds
    the registration: each call starts it anew."""
    from hooklint.analysis.lifetime import statement_path, statement_site

    owner, _, attr = store.rpartition(".")
    path = statement_path(facts, statement_site(registration.site))
    if not owner or not path:
        return False
    for statement in path[0].block[: path[0].index]:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                node = small.value if isinstance(small, cst.Expr) else small
                if _empties(node, owner, attr):
                    return True
    return False


def _tests_empty(test: cst.BaseExpression, store: str, *, empty: bool) -> bool:
    """``test`` is true exactly when ``store`` is empty (``empty``) or not: ``not S``,
    ``len(S) == 0``, ``not len(S)``, ``S == []`` for empty; ``S``, ``len(S)``,
    ``len(S) > 0``, ``len(S) != 0`` for not."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _tests_empty(test.expression, store, empty=not empty)
    if _code(test) == store or _is_len_of(test, store):
        return not empty
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        right = _code(target.comparator)
        if _is_len_of(test.left, store) and right == "0":
            if isinstance(target.operator, cst.Equal):
                return empty
            if isinstance(target.operator, (cst.NotEqual, cst.GreaterThan)):
                return not empty
        if _code(test.left) == store and right in ("[]", "{}") and isinstance(target.operator, cst.Equal):
            return empty
    return False


def _is_len_of(expr: cst.BaseExpression, store: str) -> bool:
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "len"
        and len(expr.args) == 1
        and _code(expr.args[0].value) == store
    )


def _exits(block: cst.BaseSuite) -> bool:
    """The block ends the hook: it is a bare ``return`` (or ``return None``)."""
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1:
        return False
    line = block.body[0]
    return (
        isinstance(line, cst.SimpleStatementLine)
        and isinstance(line.body[0], cst.Return)
        and (line.body[0].value is None or _code(line.body[0].value) == "None")
    )


def captures(hook: HookBody, registration: Registration | None = None) -> list[Capture]:
    """The captures of a hook body, in source order."""
    return hook_writes(hook, registration)[0]


def hook_writes(
    hook: HookBody, registration: Registration | None = None
) -> tuple[list[Capture], list[Capture]]:
    """The captures of a hook body, and where it writes what it received under a key
    that is the same on every call (``store[name] = output.detach()``,
    ``store["last"] = x``): one slot per key, overwritten, so not a capture; what
    matters there is whose store it is (:func:`per_call_store`).  One walk for both."""
    scope, body = _hook_taint(hook, registration)
    found: list[Capture] = []
    slots: list[Capture] = []
    nodes = [body] if isinstance(hook.node, cst.Lambda) else []
    for current in [*nodes, *descendants(body, into_functions=False)]:
        capture = scope.capture(current)
        if capture is not None:
            found.append(capture)
        elif type(current) is cst.Assign and len(current.targets) == 1:
            target = current.targets[0].target
            if isinstance(target, cst.Subscript) and scope.is_tainted(current.value):
                store = scope.store_key(target)
                if store is not None and not scope.per_call_key(target):
                    slots.append(
                        Capture(store, "stores into", current, _code(current.value), _key_of(target))
                    )
    return found, slots


def _hook_taint(hook: HookBody, registration: Registration | None) -> tuple[_HookTaint, cst.CSTNode]:
    """The taint of a hook body (what it received and what it computes from that) and
    the body itself."""
    node = hook.node
    raw = parameter_names(node.params)
    received = hook.params
    is_method = getattr(hook, "is_method", False) or hook.via == "method"
    self_name = raw[0] if is_method and raw else None
    bound = {n for n in raw if n not in received and n != self_name}
    module_owner = registration is None or registration.api.owner in _MODULE_OWNERS
    module_param = received[0] if module_owner and received else None
    if isinstance(node, cst.Lambda):
        body: cst.CSTNode = node.body
        local, declared = set(), set()
    else:
        body = node.body
        local, declared = local_names(node)
    scope = _HookTaint(self_name, bound, set(received), module_param, local, declared)
    scope.taint(body, set(received) - {module_param})
    return scope, body


#: Calls that make a new, empty container.
_FRESH_CONTAINERS = frozenset({"dict", "list", "OrderedDict", "defaultdict"})


def per_call_store(
    facts: ModuleFacts, registration: Registration, hook: HookBody, capture: Capture
) -> str | None:
    """The local of the registering function that ``capture`` writes into, when that
    function makes it anew on every call (every binding of the name there is ``{}``,
    ``[]``, ``dict()``, ``defaultdict(...)``...) and the hook reaches it as a closure
    (a def or lambda nested in the function, also one that a factory nested there
    builds, ``get_activation(name)`` closing over ``outputs``) or through the parameter
    of the same-file hook factory the registration calls with it (``keep(name,
    outputs)``).  Each call
    of the function then hooks a store of its own: None for anything else."""
    function = registration.site.function
    if function is None or not capture.store.isidentifier():
        return None
    name = capture.store
    if hook.via == "factory":
        factory = hook.function.parent if hook.function is not None else None
        made = registration.hook_arg
        if factory is None or not isinstance(made, cst.Call):
            return None
        if name in factory.params:
            passed = argument_for(made, factory.params, name)
            if not isinstance(passed, cst.Name):
                return None
            name = passed.value
        elif not _nested_in(facts, hook, function) or _binds(hook.function, name) or _binds(factory, name):
            return None  # not a closure over the function's own local, through a factory nested in it
    elif hook.via not in ("function", "lambda") or not _nested_in(facts, hook, function):
        return None
    info = facts.function_for(function)
    if info is None or name in info.params:
        return None
    bindings = [
        node
        for node in descendants(function.body, into_functions=False)
        if type(node) is cst.Assign and any(name in target_names(t.target) for t in node.targets)
    ]
    if not bindings or not all(len(b.targets) == 1 and _fresh_container(b.value) for b in bindings):
        return None
    if name in local_names(function)[1]:
        return None  # ``global``/``nonlocal``: shared after all
    return name


def _binds(info, name: str) -> bool:
    """Whether a def binds ``name`` itself (a parameter, a local, a ``global`` or
    ``nonlocal`` declaration): then it is not a free name of the def around it."""
    found, declared = local_names(info.node)
    return name in info.params or name in found or name in declared


def _nested_in(facts: ModuleFacts, hook: HookBody, function: cst.FunctionDef) -> bool:
    """Whether the hook's def or lambda sits inside ``function`` (a closure over its locals)."""
    if isinstance(hook.node, cst.Lambda):
        return contains(function.body, hook.node)
    info = hook.function
    while info is not None:
        if info.parent is not None and info.parent.node is function:
            return True
        info = info.parent
    return False


def _fresh_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Dict, cst.List)) and not value.elements:
        return True
    if isinstance(value, cst.Call):
        name = dotted_name(value.func)
        return name is not None and name.rsplit(".", 1)[-1] in _FRESH_CONTAINERS
    return False


def _names_in(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    for current in descendants(node):
        if isinstance(current, cst.Name):
            yield current.value


_EMPTY = cst.Module([])


def _code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


_TAINTING = frozenset({cst.Assign, cst.For, cst.CompFor, cst.AugAssign})


class _HookTaint:
    """What a hook body received (its tensor parameters and what is computed from
    them), and the stores it puts those values into."""

    def __init__(self, self_name, bound, params, module_param, local, declared) -> None:
        self.self_name = self_name
        self.bound = bound
        self.params = params
        self.module_param = module_param
        self.local = local
        self.declared = declared
        self.tainted: set[str] = set()
        self.aliases: set[str] = set()  # locals bound to a shared store (``buf = self.buf``)
        self.incremented: set[str] = set()  # codes the hook increments (per-call keys)
        self.kinds: set[str] = set()  # locals every binding of which is a kind (``k = type(x)``)

    def _same_every_call(self, name: str, call: cst.Call) -> bool:
        """``id(module)`` of the hooked module (or ``id(self)``): one key per hook, not a
        new one per call."""
        if name != "id" or len(call.args) != 1 or not isinstance(call.args[0].value, cst.Name):
            return False
        return call.args[0].value.value in {self.module_param, self.self_name} - {None}

    def taint(self, body: cst.CSTNode, seeds: set[str]) -> None:
        self.tainted = set(seeds)
        # The nodes it reads, by exact type (no subclasses; ``isinstance`` on libcst's
        # classes goes through ABCMeta when it fails).
        nodes = [n for n in (body, *descendants(body, into_functions=False)) if type(n) in _TAINTING]
        kinds: dict[str, bool] = {}
        for current in nodes:
            if type(current) is cst.Assign:
                for t in current.targets:
                    for name in target_names(t.target):
                        plain = isinstance(t.target, cst.Name) and len(current.targets) == 1
                        kinds[name] = kinds.get(name, True) and plain and _kind_of(current.value)
            elif type(current) in (cst.For, cst.CompFor, cst.AugAssign):
                for name in target_names(current.target):
                    kinds[name] = False
        self.kinds = {name for name, kind in kinds.items() if kind}
        for _ in range(2):
            for current in nodes:
                kind = type(current)
                if kind is cst.Assign:
                    names = set(_names_in(current.value))
                    targets = set()
                    for t in current.targets:
                        targets |= target_names(t.target)
                    if names & self.tainted:
                        self.tainted |= targets - {self.self_name}
                    if len(current.targets) == 1 and isinstance(current.targets[0].target, cst.Name):
                        if self.store_key(current.value) is not None and not isinstance(
                            current.value, cst.Call
                        ):
                            self.aliases.add(current.targets[0].target.value)
                elif kind is cst.For or kind is cst.CompFor:
                    if set(_names_in(current.iter)) & self.tainted:
                        self.tainted |= target_names(current.target)
                elif kind is cst.AugAssign:
                    self.incremented.add(_code(current.target))

    def is_tainted(self, node: cst.CSTNode) -> bool:
        return bool(set(_names_in(node)) & self.tainted)

    def store_key(self, expr: cst.BaseExpression) -> str | None:
        """The code of the shared store ``expr`` reaches (subscripts and
        ``setdefault``/``get`` stripped), or None when it is per call."""
        while True:
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif (
                isinstance(expr, cst.Call)
                and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in ("setdefault", "get", "__getitem__")
            ):
                expr = expr.func.value
            else:
                break
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        head, dot, _ = dotted.partition(".")
        if head == self.self_name:
            return dotted if dot else None
        if head in self.bound:
            return dotted
        if head == self.module_param:
            return dotted if dot else None
        if head in self.declared:
            return dotted
        if head in self.aliases:
            return dotted
        if head in self.params or head in self.local:
            return None
        return dotted  # a closure or module global

    def capture(self, node: cst.CSTNode) -> Capture | None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if method not in STORE_VERBS or not node.args:
                return None
            store = self.store_key(node.func.value)
            if store is None:
                return None
            values = [a.value for a in node.args]
            tainted = [v for v in values if self.is_tainted(v)]
            if not tainted or all(
                _kind_of(v) or (isinstance(v, cst.Name) and v.value in self.kinds) for v in tainted
            ):
                return None  # nothing received, or only what kind of thing it was
            key = _key_of(node.func.value)
            return Capture(store, STORE_VERBS[method], node, _code(values[-1]), key)
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
            if not isinstance(node.value, (cst.List, cst.Tuple, cst.ListComp)):
                return None
            store = self.store_key(node.target)
            if store is None or not self.is_tainted(node.value):
                return None
            return Capture(store, "extends", node, _code(node.value), _key_of(node.target))
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            value = node.value
            if isinstance(target, cst.Subscript):
                store = self.store_key(target)
                if store is None or not self.is_tainted(value):
                    return None
                if not self.per_call_key(target):
                    return None
                return Capture(store, "adds a new key to", node, _code(value))
            store = self.store_key(target)
            if store is None or not self.is_tainted(value):
                return None
            target_code = _code(target)
            if _grows_itself(value, target_code):
                return Capture(store, "concatenates onto", node, _code(value))
        return None

    def per_call_key(self, target: cst.Subscript) -> bool:
        for element in target.slice:
            index = element.slice
            if not isinstance(index, cst.Index):
                return False
            key = index.value
            for current in [key, *descendants(key)]:
                if isinstance(current, cst.Call):
                    name = dotted_name(current.func)
                    if name is not None and name.rsplit(".", 1)[-1] in _PER_CALL_KEY_CALLS:
                        if not self._same_every_call(name, current):
                            return True
                code = _code(current) if isinstance(current, (cst.Name, cst.Attribute)) else None
                if code is not None and code in self.incremented:
                    return True
        return False


#: Attributes that say what kind of tensor or object a value is: few values, each stored
#: once per kind at most (``warned.add(type(output))``).
_KIND_ATTRIBUTES = frozenset({"__class__", "dtype", "device", "layout", "__name__", "__qualname__"})


def _kind_of(value: cst.BaseExpression) -> bool:
    """``type(x)``, ``x.__class__``, ``x.dtype``, ``x.device`` (and their ``__name__``):
    what kind of thing a hook received, not what it received."""
    if isinstance(value, cst.Call):
        return dotted_name(value.func) == "type" and len(value.args) == 1
    if isinstance(value, cst.Attribute) and value.attr.value in _KIND_ATTRIBUTES:
        return value.attr.value not in ("__name__", "__qualname__") or _kind_of(value.value)
    return False


def _key_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``k`` for ``store[k]`` and ``store.setdefault(k, ...)``."""
    if (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
    ):
        return expr.slice[0].slice.value
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("setdefault", "get")
        and expr.args
    ):
        return expr.args[0].value
    return None


def _grows_itself(value: cst.BaseExpression, target_code: str) -> bool:
    """``torch.cat([store, x])``, ``store + [x]``, ``[x] + store``, or a display that
    unpacks the store beside new items (``[*store, x]``, ``[x, *store]``)."""
    if isinstance(value, cst.Call):
        name = dotted_name(value.func)
        if name is None or name.rsplit(".", 1)[-1] not in _CONCAT:
            return False
        return any(
            isinstance(n, (cst.Name, cst.Attribute)) and _code(n) == target_code for n in descendants(value)
        )
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        displays = (cst.List, cst.Tuple)
        return (_code(value.left) == target_code and isinstance(value.right, displays)) or (
            isinstance(value.left, displays) and _code(value.right) == target_code
        )
    if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) > 1:
        return any(
            isinstance(e, cst.StarredElement) and _code(e.value) == target_code for e in value.elements
        )
    return False


# -- handles ---------------------------------------------------------------------------
@dataclass(frozen=True)
class HandleFate:
    """What becomes of a registration's handle.

    ``kind``: ``removed`` (``.remove()``, ``with``, an ``ExitStack``, a removal helper),
    ``escapes`` (returned, yielded, passed on: the caller's to remove), ``discarded``,
    ``inherited`` (kept in a store of ``self`` that a base class of another file owns:
    :meth:`~hooklint.analysis.handles.HandleModel.inherited_stores`), ``kept`` (stored
    in ``targets`` but never removed).
    """

    kind: str
    targets: tuple[str, ...] = ()
    #: ``kept``: removed only when the object that the hook holds is finalized
    #: (:func:`_removed_only_by_finalizer`), which the hook itself prevents.
    finalizer: bool = False


def handle_fate(facts: ModuleFacts, registration: Registration) -> HandleFate:
    """Follow the handle through the module's handle model (bindings per scope: a
    ``handle.remove()`` in another function is another ``handle``)."""
    from hooklint.analysis.handles import handle_model

    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    if flow.scoped:
        return HandleFate("removed")
    if flow.discarded:
        return HandleFate("discarded")
    if flow.escapes is not None or not flow.stores:
        return HandleFate("escapes")
    removals = model.removals_of(flow.stores, window=flow.window)
    targets = tuple(sorted(model.store_codes(flow.stores)))
    if not removals and any(_on_imported_object(facts, code) for code in targets):
        return HandleFate("escapes")  # kept by another module's object, which may remove it
    if not removals and model.on_dynamic_attribute(flow.stores):
        return HandleFate("escapes")  # kept on the caller's object under a computed name
    if removals and _removed_only_by_finalizer(model, registration, removals):
        return HandleFate("kept", targets, finalizer=True)
    if removals or model.removed_through_parameter(flow.stores):
        return HandleFate("removed")
    if model.inherited_stores(flow.stores):
        return HandleFate("inherited")
    return HandleFate("kept", targets)


@dataclass(frozen=True)
class CaptureLeak:
    """A capture hook whose store grows for as long as the hook is on, and whose handle
    nothing removes (HL002's finding): the hook, its captures, the registering
    function's own store when the captures are slots of it (``made``), and the
    handle's fate."""

    hook: HookBody
    found: list
    made: str | None
    fate: HandleFate


#: Hook kinds that receive no tensors to capture (state-dict and registration hooks,
#: and dynamo's bytecode hooks, which receive code objects: HL009 reports those).
_NOT_CAPTURING = frozenset(
    {
        "bytecode",
        "state_dict_pre",
        "state_dict_post",
        "load_state_dict_pre",
        "load_state_dict_post",
        "buffer_registration",
        "module_registration",
        "parameter_registration",
    }
)


def leaking_capture(facts: ModuleFacts, registration: Registration) -> CaptureLeak | None:
    """Whether ``registration`` puts on a capture hook that leaks (asked once per
    registration: HL002 reports it, and the lifecycle questions leave such hooks to
    it)."""
    known: dict = facts.memo("_leaking_captures", lambda _: {})
    key = id(registration.call)
    if key not in known:
        known[key] = _leaking_capture(facts, registration)
    return known[key]


def _leaking_capture(facts: ModuleFacts, registration: Registration) -> CaptureLeak | None:
    from hooklint.analysis.handles import handle_model
    from hooklint.analysis.hook_roles import removes_itself, undone_by_post_hook

    if registration.api.owner in ("optimizer", "global_optimizer") or registration.api.kind in _NOT_CAPTURING:
        return None
    hook = hook_of(facts, registration)
    if hook is None:
        return None
    found, slots = hook_writes(hook, registration)
    found = [
        c
        for c in found
        if not own_method_call(facts, hook, c) and not written_once(hook, c) and not emptied_first(hook, c)
    ]
    made = None  # the registering function's own store, for slots it overwrites
    if not found:
        found = [c for c in slots if per_call_store(facts, registration, hook, c)]
        if not found or not runs_what_it_hooked(facts, registration):
            return None  # bounded slots of a store that outlives the call, or an installer
        made = per_call_store(facts, registration, hook, found[0])
    if removes_itself(hook):
        return None
    if undone_by_post_hook(facts, registration, [c.node for c in found]):
        return None  # a push that the forward hook on the same object pops: bounded
    if all(
        drained_by_forward(facts, registration, c.store) or drained_by_its_runs(facts, registration, c.store)
        for c in found
    ):
        return None  # a module consuming its own layers' captures in its forward, or each run
    if all(recorded_in_window(facts, registration, hook, c.store) for c in found):
        return None  # stores only inside a `with` window that starts it empty
    fate = handle_fate(facts, registration)
    if fate.kind not in ("discarded", "kept"):
        return None
    if fate.kind == "discarded" and unhooked_by_dict(facts, registration.site.class_name):
        return None  # its class takes the hook out of the module's hook dict instead
    model = handle_model(facts)
    if model.dies_with_scope(registration):
        return None  # a model built in this call and never handed out: its hooks go with it
    if rides_on_removed_hook(facts, registration):
        return None  # on a tensor the forward hook was handed: the forward hook's fate decides
    if model.on_tensor_made_just_before(registration) and all(
        emptied_before(facts, registration, c.store) for c in found
    ):
        return None  # this call's tensor, into a store each call starts anew
    if model.lives_on_module(registration):
        return None  # a parameter hooked on every Function.forward: HL003's pile-up
    if registration.wrapper and _reruns_with_hooks_disabled(facts, registration):
        return None
    return CaptureLeak(hook, found, made, fate)


def _reruns_with_hooks_disabled(facts: ModuleFacts, registration: Registration) -> bool:
    """The class that registered through a hooks manager re-runs modules under the
    manager's ``with ...disable_hooks():`` (llm-compressor's AWQ): the capture is
    paused, not growing, until the bulk removal."""
    class_def = registration.site.class_def
    for call in facts.calls:
        name = call.attr or (call.callee or "").rsplit(".", 1)[-1]
        if name != "disable_hooks" or call.use.role not in ("with", "exit_stack"):
            continue
        if class_def is None or call.site.class_def is class_def:
            return True
    return False


def rides_on_removed_hook(facts: ModuleFacts, registration: Registration) -> bool:
    """A tensor hook put, inside a module hook's body, on a tensor that hook was handed
    for this call (its output, its inputs: not the module; or a part of one that a
    call picks from it, ``output = first_tensor(output)``), that the body keeps
    nowhere, where every registration of that module hook has its handle removed: the
    tensor hook dies with the tensor, and the store grows only while the module hook
    is on, which the outer registration's own fate decides (``save_gradient`` putting
    ``_store_grad`` on ``output`` of each forward, the forward hook kept and removed by
    ``release()``)."""
    if registration.api.owner != "tensor":
        return False
    receiver = registration.receiver
    function = registration.site.function
    if not isinstance(receiver, cst.Name) or function is None:
        return False
    outer = [r for r in facts.registrations if r.hook is not None and r.hook.node is function]
    if not outer or any(r.api.owner not in ("module", "global_module") for r in outer):
        return False
    per_call = set(outer[0].hook.params[1:])  # the module itself lives on
    if receiver.value not in per_call or not _kept_nowhere(
        facts, function, receiver.value, registration.call
    ):
        return False
    return all(handle_fate(facts, r).kind == "removed" for r in outer)


#: Calls that look at a tensor without keeping it.
_INSPECTING = frozenset({"hasattr", "isinstance", "getattr", "len", "type", "id", "print"})


def _kept_nowhere(facts: ModuleFacts, function: cst.FunctionDef, name: str, registration: cst.Call) -> bool:
    """The parameter ``name`` holds what the call was handed (or a part a call picks
    from it: every rebinding ``name = pick(name)``, ``name = name[0]``) and the body
    only reads it: its attributes, the registration on it, calls that look at it
    (:data:`_INSPECTING`), tests (``output is None``, ``not output``), and those
    rebindings."""
    nodes = facts.body_nodes(function)
    allowed: set[int] = (
        {id(registration.func.value)} if isinstance(registration.func, cst.Attribute) else set()
    )
    for node in nodes:
        if isinstance(node, cst.Attribute):
            allowed.add(id(node.value))
        elif isinstance(node, cst.Comparison):  # ``output is None``
            allowed.update([id(node.left), *(id(c.comparator) for c in node.comparisons)])
        elif isinstance(node, cst.UnaryOperation):  # ``not output``
            allowed.add(id(node.expression))
        elif isinstance(node, cst.BooleanOperation):
            allowed.update((id(node.left), id(node.right)))
        elif isinstance(node, (cst.If, cst.While)):
            allowed.add(id(node.test))
        elif isinstance(node, cst.Call) and dotted_name(node.func) in _INSPECTING:
            allowed.update(id(a.value) for a in node.args)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and name in target_names(node.target):
            return False
        elif isinstance(node, (cst.For, cst.CompFor)) and name in target_names(node.target):
            return False
        elif isinstance(node, cst.Assign) and any(name in target_names(t.target) for t in node.targets):
            if not (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)):
                return False
            allowed.add(id(node.targets[0].target))
            picked = _picked_from(node.value, name)
            if picked is None:
                return False
            allowed.add(id(picked))
    return all(id(n) in allowed for n in nodes if isinstance(n, cst.Name) and n.value == name)


def _picked_from(value: cst.BaseExpression, name: str) -> cst.Name | None:
    """The ``name`` node of ``pick(name)``, ``self.pick(name)`` or ``name[i]``."""
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value == name:
        return value.value
    if isinstance(value, cst.Call) and len(value.args) == 1:
        arg = value.args[0].value
        if isinstance(arg, cst.Name) and arg.value == name and not value.args[0].star:
            return arg
    return None


def _on_imported_object(facts: ModuleFacts, code: str) -> bool:
    """``code`` is an attribute chain on a name the file imports (``tracker.run.handles``):
    a store of another module's, whose removals this file does not show."""
    root, dot, _ = code.partition(".")
    return bool(dot) and root in facts.imports


def _removed_only_by_finalizer(model, registration: Registration, removals) -> bool:
    """The hook holds the registering object (:func:`holds_registering_object`) and the
    handle is removed only when that object is finalized (``__del__``), which the
    module keeping the hook prevents."""
    return holds_registering_object(registration) and model.only_when_finalized(
        removals, registration.site.class_name
    )


def bulk_removal(facts: ModuleFacts, class_name: str | None) -> str | None:
    """A call that removes every hook an object holds (``self.remove_hooks()``), if any."""
    for call in facts.calls:
        if call.attr and "remove" in call.attr and call.attr != "remove" and not call.node.args:
            if (
                class_name is None
                or call.site.class_def is None
                or call.site.class_def.name.value == class_name
            ):
                return facts.code(call.node)
    return None


def touches_hook_dict(nodes) -> bool:
    """Whether any of ``nodes`` names one of a module's hook dicts (``m._forward_hooks``):
    code that reaches in there can take hooks off without their handles."""
    return any(isinstance(node, cst.Attribute) and node.attr.value in MODULE_HOOK_DICTS for node in nodes)


def unhooked_by_dict(facts: ModuleFacts, class_name: str | None) -> bool:
    """Whether a method of ``class_name`` reaches into a module's hook dicts
    (``del layer._forward_hooks[key]``, ``m._forward_pre_hooks.clear()``), itself or
    through a module function of the file it calls, or calls a function whose name
    says it takes every hook off (``unregister_all_hooks(self.model)``, also imported
    from another file): hooks taken off there need no handle, so a discarded one is not
    evidence of a hook left on."""
    if class_name is None:
        return False
    methods = [info for info in facts.functions if info.class_name == class_name]
    if any(touches_hook_dict(facts.body_nodes(info.node)) for info in methods):
        return True
    inside = {id(info.node) for info in methods}
    for call in facts.calls:
        # a function handed the module (not a method of the object: ``self.remove_hooks()``
        # empties only what a hook manager kept, HL002's own case)
        if (
            id(call.site.function) not in inside
            or not isinstance(call.node.func, cst.Name)
            or not call.node.args
        ):
            continue
        name = call.node.func.value.lower().lstrip("_")
        if "hook" in name and name.startswith(UNHOOK_WORDS):
            return True
        helper = facts.module_function(call.node.func.value)
        if helper is not None and touches_hook_dict(facts.body_nodes(helper.node)):
            return True
    return False


def store_reads(
    facts: ModuleFacts, class_name: str, store: str, skip: set[int]
) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, cst.FunctionDef]]:
    """Reads of ``store`` (``self.X[k]``, ``self.X.pop(k)``, ``self.X.get(k)``) in the
    methods of ``class_name`` other than those in ``skip``: (read node, key, method)."""
    for info in facts.functions:
        if info.class_name != class_name or id(info.node) in skip:
            continue
        assigned: set[int] = set()
        for current in descendants(info.node.body, into_functions=False):
            if isinstance(current, cst.AssignTarget):
                assigned.add(id(current.target))
            elif isinstance(current, cst.Subscript) and id(current) not in assigned:
                if (
                    facts.code(current.value) == store
                    and len(current.slice) == 1
                    and isinstance(current.slice[0].slice, cst.Index)
                ):
                    yield current, current.slice[0].slice.value, info.node
            elif (
                isinstance(current, cst.Call)
                and isinstance(current.func, cst.Attribute)
                and current.func.attr.value in ("pop", "get")
                and current.args
                and facts.code(current.func.value) == store
            ):
                yield current, current.args[0].value, info.node


def _self_attribute(expr: cst.CSTNode, self_name: str) -> str | None:
    """``attr`` for ``<self_name>.attr``, else None."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == self_name:
        return expr.attr.value
    return None


def _hooks_own_method(registration: Registration) -> bool:
    """The registration hooks a method of its own class: ``self.method``."""
    return _self_attribute(registration.hook_arg, "self") is not None


def drained_by_forward(facts: ModuleFacts, registration: Registration, store: str) -> bool:
    """Whether ``store`` (``self.X`` of the hook's ``self``) is emptied on every forward
    of the registering class: ``forward``, or a method of the class that ``forward``
    calls (through ``self.method(...)``, at any depth), empties it (``self.X.clear()``,
    ``self.X = []`` / ``{}`` / ``list()`` / ``dict()``, ``self.X[key] = []``, ``del
    self.X[:]``).  The hook is a method of the registering class (``self.method``), or
    an object of a same-file class with ``__call__`` that the class holds
    (``self.saver``): then the forward empties ``self.saver.X``, or calls a method of
    the object that empties its ``self.X`` (``self.saver.clear()``).  A module that
    hooks its own layers and consumes what they captured in its own forward holds at
    most one forward's captures."""
    class_name = registration.site.class_name
    if class_name is None or not store.startswith("self.") or facts.method(class_name, "forward") is None:
        return False
    attr = store[len("self.") :]
    held = None  # the attribute of ``self`` holding the callable object
    if registration.hook is None or not _hooks_own_method(registration):
        found = hook_callable(facts, registration)
        receiver = found.receiver if found is not None else None
        function = found.body.function if found is not None else None
        if receiver is None or not receiver.startswith("self.") or "." in receiver[5:] or function is None:
            return False
        held = (receiver[5:], function.class_name)
    if held is None:
        return _empties_through(facts, class_name, "forward", lambda node, me: _empties(node, me, attr))
    return _empties_through(
        facts, class_name, "forward", lambda node, me: _empties_held(facts, node, me, held, attr)
    )


def drained_by_its_runs(facts: ModuleFacts, registration: Registration, store: str) -> bool:
    """Whether the hooked module is the object's own part (``self.net``, built by the
    class: not given to it), nothing but calls touches it outside ``__init__`` and the
    method that hooks it (``self.net(x)``: it is never handed out), and every method
    that runs it empties ``store`` (``self.X``) too, itself or through a ``self.m()`` it
    calls: an extractor that owns its backbone and drains what the hooks captured on
    each run.  (A module with ``forward``: :func:`drained_by_forward`.)"""
    from hooklint.analysis.given import is_given
    from hooklint.analysis.handles import handle_model

    class_name = registration.site.class_name
    receiver = registration.receiver_code or ""
    if class_name is None or not store.startswith("self.") or not receiver.startswith("self."):
        return False
    root = receiver[len("self.") :].split(".")[0].split("[")[0]
    if not root.isidentifier() or is_given(
        facts, handle_model(facts), registration.receiver, registration.site, registration.call
    ):
        return False
    attr = store[len("self.") :]
    setup = _construction(facts, class_name)
    runners = []
    for info in facts.functions:
        if (
            info.class_name != class_name
            or info.parent is not None
            or info.name in setup
            or info.node is registration.site.function
            or not info.params
        ):
            continue  # the setup that builds and hooks the module may touch it
        nodes = list(descendants(info.node.body))
        uses = {id(n) for n in nodes if is_attribute(n, info.params[0], root)}
        runs = {id(n.func) for n in nodes if isinstance(n, cst.Call)} & uses
        if runs != uses:
            return False  # ``self.net`` read otherwise: it may be handed out
        if runs:
            runners.append(info)
    return bool(runners) and all(
        _empties_through(facts, class_name, info.name, lambda node, me: _empties(node, me, attr))
        for info in runners
    )


def _self_reached(facts: ModuleFacts, class_name: str, start: str, into_functions: bool = True):
    """The method ``start`` of the class and the methods it runs through ``self.m()``,
    at any depth, each once: ``(method, its self name, its nodes)``, the nodes of
    nested defs included unless ``into_functions`` is false."""
    todo, seen = [start], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        info = facts.method(class_name, name)
        if info is None or not info.params:
            continue
        me = info.params[0]
        nodes = list(descendants(info.node.body)) if into_functions else facts.body_nodes(info.node)
        yield info, me, nodes
        todo += [
            n.func.attr.value
            for n in nodes
            if isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and isinstance(n.func.value, cst.Name)
            and n.func.value.value == me
        ]


def _construction(facts: ModuleFacts, class_name: str) -> set[str]:
    """``__init__`` and the methods of the class it runs through ``self.m()``, at any
    depth (``self._build()``, ``self._install_hooks()``): the object's construction."""
    return {info.name for info, _, _ in _self_reached(facts, class_name, "__init__", into_functions=False)}


def _empties_through(facts: ModuleFacts, class_name: str, start: str, empties) -> bool:
    """The method ``start`` of the class, or a method it calls through ``self.m()`` (at
    any depth), holds a node that ``empties(node, self_name)`` accepts."""
    return any(
        empties(node, me) for _, me, nodes in _self_reached(facts, class_name, start) for node in nodes
    )


def _empties_held(facts: ModuleFacts, node: cst.CSTNode, self_name: str, held, attr: str) -> bool:
    """``node`` empties ``X`` of the object ``self.<name>`` holds: directly
    (``self.saver.X.clear()``), or through a method of its class that empties its own
    ``self.X`` (``self.saver.reset()``)."""
    name, class_name = held
    if _empties(node, f"{self_name}.{name}", attr):
        return True
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and facts.code(node.func.value) == f"{self_name}.{name}"
    ):
        return False
    method = facts.method(class_name, node.func.attr.value)
    if method is None or not method.params:
        return False
    return any(_empties(current, method.params[0], attr) for current in descendants(method.node.body))


_EMPTY_CALLS = frozenset({"list", "dict", "set", "deque", "OrderedDict", "defaultdict"})


def recorded_in_window(facts: ModuleFacts, registration: Registration, hook: HookBody, store: str) -> bool:
    """Whether the hook (a method of the registering class, ``self.method``) writes
    ``store`` (``self.X``) only under ``if self.<flag>:``, and the class turns the flag
    on only in ``__enter__``, which also empties the store, and off in ``__exit__``: the
    store holds one ``with`` window's captures, and outside a window the hook stores
    nothing (a recorder kept on a module for good, read a window at a time)."""
    class_name = registration.site.class_name
    params = parameter_names(hook.node.params)
    if (
        not _hooks_own_method(registration)
        or class_name is None
        or not store.startswith("self.")
        or not params
    ):
        return False
    attr = store[len("self.") :]
    enter, exit_ = facts.method(class_name, "__enter__"), facts.method(class_name, "__exit__")
    if enter is None or exit_ is None or not enter.params or not exit_.params:
        return False
    flag = _gating_flag(hook.node, params[0], attr)
    if flag is None:
        return False
    turned_on = [
        info.name
        for info in facts.functions
        if info.class_name == class_name and info.parent is None and info.params
        if any(_sets_flag(node, info.params[0], flag, on=True) for node in facts.body_nodes(info.node))
    ]
    return (
        turned_on == ["__enter__"]
        and any(_sets_flag(node, exit_.params[0], flag, on=False) for node in facts.body_nodes(exit_.node))
        and any(_empties(node, enter.params[0], attr) for node in facts.body_nodes(enter.node))
    )


def _gating_flag(hook: cst.FunctionDef | cst.Lambda, self_name: str, attr: str) -> str | None:
    """The flag ``self.<flag>`` that every use of ``self.<attr>`` in the hook sits
    under (``if self.recording: self.buffer.append(x)``; the innermost such ``if``
    when they nest), or None."""
    gated: dict[int, str] = {}  # node -> the flag of the innermost `if self.<flag>:` around it
    uses = []
    for node in descendants(hook.body):  # outer `if`s before the ones they hold
        if isinstance(node, cst.If):
            flag = _self_attribute(node.test, self_name)
            if flag is not None:
                gated.update((id(inner), flag) for inner in descendants(node.body))
        elif _self_attribute(node, self_name) == attr:
            uses.append(node)
    flags = {gated.get(id(node)) for node in uses}
    return next(iter(flags)) if len(flags) == 1 else None


def _sets_flag(node: cst.CSTNode, self_name: str, flag: str, on: bool) -> bool:
    """``self.<flag> = value``: any value but ``False``/``None`` turns it on (``on``);
    ``False`` or ``None`` turns it off."""
    if not isinstance(node, cst.Assign):
        return False
    if not any(_self_attribute(t.target, self_name) == flag for t in node.targets):
        return False
    off = isinstance(node.value, cst.Name) and node.value.value in ("False", "None")
    return off != on


def _empties(node: cst.CSTNode, self_name: str, attr: str) -> bool:
    """``node`` empties ``<self_name>.attr`` (``self_name`` may be dotted: ``self.saver``):
    ``.clear()``, an empty value assigned to it or to one of its keys (a store of
    lists by key: ``self.X[device] = []``), ``del X[:]``."""

    def is_store(expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.Attribute)
            and expr.attr.value == attr
            and dotted_name(expr.value) == self_name
        )

    def is_store_or_key(expr: cst.BaseExpression) -> bool:
        return is_store(expr) or (isinstance(expr, cst.Subscript) and is_store(expr.value))

    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "clear" and not node.args and is_store(node.func.value)
    if isinstance(node, cst.Assign):
        value = node.value
        pairs = paired_elements(node)
        if pairs is not None:  # ``taken, self.X = self.X, []``: one assignment per element
            return any(is_store_or_key(t) and _empty_value(v) for t, v in pairs)
        return _empty_value(value) and any(is_store_or_key(t.target) for t in node.targets)
    if isinstance(node, cst.Del):
        target = node.target
        return (
            isinstance(target, cst.Subscript)
            and is_store(target.value)
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Slice)
            and target.slice[0].slice.lower is None
            and target.slice[0].slice.upper is None
        )
    return False


def _empty_value(value: cst.BaseExpression) -> bool:
    """``[]``, ``{}``, or a call of an empty container type with no argument (``list()``)."""
    return (isinstance(value, (cst.List, cst.Dict)) and not value.elements) or (
        isinstance(value, cst.Call) and dotted_name(value.func) in _EMPTY_CALLS and not value.args
    )


#: Methods that run a module as its call does.
_RUNS = frozenset({"forward", "generate", "__call__"})


def runs_what_it_hooked(facts: ModuleFacts, registration: Registration) -> bool:
    """Whether the registering function, after the registration, calls the object the
    hook sits on or the one it was taken from (``model(batch)``, ``model.generate(...)``
    after hooking ``dict(model.named_modules())[name]`` or a loop's ``layer`` of
    ``model.children()``), or, when the hooked object was handed in, another module
    handed in with it (``model(x)`` after hooking the parameter ``layer``): it hooks to
    collect from a run of its own."""
    function = registration.site.function
    info = facts.function_for(function) if function is not None else None
    if info is None:
        return False
    roots = taken_from(registration, set(info.params) | local_names(function)[0])
    if roots is None:
        return False
    # A part handed in beside the model it belongs to (``hook(model, layer)``, then
    # ``model(x)``): running any module the caller handed in runs the hooked part.
    handed = set(info.params) - {"self", "cls"}
    if roots & handed:
        roots |= handed
    return runs_after(facts, registration, roots)


def taken_from(registration: Registration, known: set[str]) -> set[str] | None:
    """The name the registration's receiver starts from (``layer`` of ``layer.attn``),
    and the names of ``known`` it is taken from in the registering function (the
    value bound to it, ``head = list(model.children())[-1]``, or the loop it is the
    target of, ``for layer in model.modules()``); None when the receiver does not
    start from a name."""
    function = registration.site.function
    receiver = registration.receiver
    while isinstance(receiver, (cst.Attribute, cst.Subscript, cst.Call)):
        receiver = receiver.func if isinstance(receiver, cst.Call) else receiver.value
    if function is None or not isinstance(receiver, cst.Name):
        return None
    roots = {receiver.value}
    for node in descendants(function.body, into_functions=False):
        kind = type(node)
        if kind is cst.Assign and any(receiver.value in target_names(t.target) for t in node.targets):
            source = node.value
        elif kind in (cst.For, cst.CompFor) and receiver.value in target_names(node.target):
            source = node.iter
        else:
            continue
        roots |= {n.value for n in descendants(source) if isinstance(n, cst.Name) and n.value in known}
        if isinstance(source, cst.Name) and source.value in known:
            roots.add(source.value)
    return roots


def calls_after(facts: ModuleFacts, registration: Registration):
    """The calls of the registering function (its body, its lambdas) after the
    registration."""
    function = registration.site.function
    for call in facts.calls:
        if call.site.function is function and call.site.order > registration.site.order:
            yield call


def runs_after(
    facts: ModuleFacts, registration: Registration, roots: set[str], own_body: bool = False
) -> bool:
    """Whether the registering function, after the registration, calls one of
    ``roots`` (``model(x)``) or runs it (``model.generate(...)``, :data:`_RUNS`);
    ``own_body``: not in a lambda of the function (a hook it registers)."""
    for call in calls_after(facts, registration):
        if own_body and any(frame.kind == "lambda" for frame in call.site.frames):
            continue
        func = call.node.func
        if isinstance(func, cst.Name) and func.value in roots:
            return True
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _RUNS
            and isinstance(func.value, cst.Name)
            and func.value.value in roots
        ):
            return True
    return False
