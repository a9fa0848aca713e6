"""Where hook handles go, and where they are removed: bindings per scope and a
summary per function, built once per module (``facts.handles``).

A *store* is what holds handles: a name, an attribute, or a container (a list, a
dict whose values are handles or tuples holding one).  Stores are keyed by their
code *and their owner*: the function that binds the root name, the class for
``self.*``, or the module for globals — so a ``handle.remove()`` in one function
never stands for a ``handle`` of another (bindings are per scope).  Aliases
(``x = self.handles``, ``a = b = []``, ``self.hs = hs``) join stores.

Per function (and for the module's top level) the summary records:

* handle flow: a handle bound to a name, then appended, extended, added, stored as
  a dict value or inside a tuple, returned, yielded, passed on, used in ``with`` or
  ``ExitStack.enter_context``;
* removals: ``x.remove()`` on a name, an element (``d[k].remove()``,
  ``hs.pop().remove()``, ``a, h = d.pop(k)`` then ``h.remove()``), loops and
  comprehensions over a store (``.values()``/``.items()`` and copies included),
  ``map(lambda h: h.remove(), hs)``, ``x.remove`` handed to a finalizer, and calls of
  removal helpers: same-file functions or methods that remove a parameter or an
  attribute (``remove_hooks(hs)``, ``self.cleanup()``), followed three calls deep,
  and callees whose name says they remove (another file's helper: trusted);
* acquisitions: registrations, and calls of same-file functions or methods that
  return handles (``hs = self._add_hooks(m)``), followed three calls deep.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import libcst as cst

from hooklint.analysis.facts import (
    CallSite,
    FunctionInfo,
    HandleUse,
    ModuleFacts,
    Registration,
    Site,
    parameter_names,
)
from hooklint.analysis.names import argument_for, dotted_name, is_attribute, is_super_call, literal_getattr
from hooklint.analysis.reachability import dead_statements
from hooklint.analysis.scopes import (
    assigned_values,
    local_names,
    loop_iterable,
    paired_elements,
    target_names,
)
from hooklint.analysis.vocabulary import (
    COLLECTION_BUILTINS,
    COMPUTING_BUILTINS,
    CONSTANT_NAMES,
    CONTAINER_ADDS,
    ELEMENT_METHODS,
    EXIT_STACK_METHODS,
    ITERATING_BUILTINS,
    KEYED_STORE_METHODS,
    LOADERS,
    PART_LOOKUPS,
    PLAIN_BASES,
    REMOVAL_WORDS,
    REMOVE_METHOD,
    SELF_RETURNING,
    SETUP_WORDS,
    STORE_METHODS,
    STORE_VIEWS,
)
from hooklint.analysis.walk import descendants
from hooklint.analysis.wrappers import is_abstract

#: How many calls deep removal helpers and handle-returning helpers are followed.
HELPER_DEPTH = 3
#: Calls that read a handle without keeping it.
_READING_CALLS = frozenset(
    {"len", "print", "isinstance", "bool", "id", "type", "str", "repr", "hasattr", "getattr", "iter", "next"}
)
MODULE_SCOPE = 0
#: The node types the walk of a scope looks at.
_WALKED = frozenset(
    {
        cst.Call,
        cst.Assign,
        cst.AnnAssign,
        cst.For,
        cst.CompFor,
        cst.AugAssign,
        cst.Return,
        cst.Yield,
        cst.WithItem,
    }
)


@dataclass
class Removal:
    """A call that removes what ``store`` holds (``kind``: ``direct``, ``element``,
    ``loop``, ``helper``, ``deferred``)."""

    call: cst.Call
    site: Site
    store: str
    kind: str


class Window(NamedTuple):
    """Where the name a registration binds holds its handle (:attr:`Flow.window`)."""

    #: The root of the name's store.
    store: str
    #: The walk positions of the registration and of the name's next binding.
    first: int
    last: int
    scope: int
    #: The registration runs in a loop of its function.
    looped: bool
    #: The name's raw key.
    name: str


@dataclass
class Flow:
    """Where one acquisition's handles end up, in its scope."""

    stores: set[str] = field(default_factory=set)
    #: One handle in one name or attribute (not collected into a container).
    single: bool = False
    #: ``returned``, ``yielded`` or ``passed`` when the handles leave the scope.
    escapes: str | None = None
    #: Used in ``with`` or entered into an ``ExitStack``.
    scoped: bool = False
    discarded: bool = False
    #: The code of the first store (``handles``, ``self._hooks``), for messages.
    target: str | None = None
    #: The name bound by the registration holds this handle only between two walk
    #: positions (until it is bound again).
    window: Window | None = None
    #: The stores are objects that hold the handles in an attribute (a helper keeps them
    #: on its parameter's attribute: :meth:`HandleModel._parameter_fill_flow`); ``target``
    #: names that attribute.
    on_object: bool = False


@dataclass
class Acquisition:
    """A call that puts hooks on something: a registration, or a call of a same-file
    function that returns handles (``helper`` set), or of another file's function or
    method that returns handles or keeps them on ``self`` (``evidence`` set)."""

    node: cst.Call
    site: Site
    flow: Flow
    registration: Registration | None = None
    helper: FunctionInfo | None = None
    #: What the code does with the call's value.
    use: HandleUse | None = None
    #: ``helper`` is a method called on another object (:meth:`HandleModel.other_object_method`).
    on_other: bool = False
    #: ``(name, place)`` of the other file's definition the acquisition rests on.
    evidence: tuple | None = None

    @property
    def call(self) -> cst.Call:
        return self.node

    @property
    def handle(self) -> HandleUse:
        return self.use if self.use is not None else HandleUse("other")


@dataclass
class _HandleSummary:
    """The handle summary of one function (or of the module's top level): what its walk
    found about stores, bindings, removals, calls and registrations, positioned in walk
    order.  Not a scope model: which names a function binds is
    :func:`hooklint.analysis.scopes.local_names`; this records *where* (at which walk
    position) handles and their stores are bound, moved and removed."""

    id: int
    info: FunctionInfo | None
    #: raw store key -> [(kind, other raw key or None)]; kinds: into, returned, yielded, passed, scoped
    events: dict[str, list[tuple[str, str | None, int]]] = field(default_factory=dict)
    #: raw key of a local name -> walk positions where it is (re)bound
    bindings: dict[str, list[int]] = field(default_factory=dict)
    #: raw key of a local name -> [(walk position, value)] of its plain assignments
    values: dict[str, list[tuple[int, cst.BaseExpression]]] = field(default_factory=dict)
    #: id of a call node -> its walk position
    positions: dict[int, int] = field(default_factory=dict)
    #: raw key of a name bound from an element of a store -> the store's raw key
    element_of: dict[str, str] = field(default_factory=dict)
    removals: list[Removal] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    registrations: list[Registration] = field(default_factory=list)


class HandleModel:
    """The handle facts of one module (see the module docstring)."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self._infos = {id(i.node): i for i in facts.functions}
        self._sites: dict[int, Site] | None = None
        self._locals: dict[int, tuple[set[str], set[str]]] = {}
        self._owners: dict[tuple[str, int], str] = {}
        self._parent: dict[str, str] = {}
        self._instances: dict[str, str] | None = None  # see _module_instances
        self._builder_names: frozenset | None = None  # see _builders
        self._runs_only: dict[tuple[int, int], bool] = {}  # see _only_runs
        self._summaries: dict[int, _HandleSummary] = {}
        self._calls: dict[int, list[CallSite]] = {}
        for call in facts.calls:
            self._calls.setdefault(self.scope_id(call.site), []).append(call)
        self._regs: dict[int, list[Registration]] = {}
        for registration in facts.registrations:
            self._regs.setdefault(self.scope_id(registration.site), []).append(registration)
        self._removal_calls: dict[int, list[CallSite]] = {}
        seen: set[int] = set()
        for calls in facts.removals.values():
            for call in calls:
                if id(call.node) not in seen:
                    seen.add(id(call.node))
                    self._removal_calls.setdefault(self.scope_id(call.site), []).append(call)
        relevant = set(self._regs) | set(self._removal_calls)
        for scope_id, calls in self._calls.items():
            if any(_says_remove(c) for c in calls):
                relevant.add(scope_id)
        self._callees: dict[int, FunctionInfo | None] = {}
        self._bound_functions: dict[str, FunctionInfo] | None = None
        relevant |= self._pair_callers()
        #: method name -> the same-file methods of that name (for calls on other objects)
        self._methods: dict[str, list[FunctionInfo]] = {}
        self._attribute_classes: dict[tuple[str, str], str | None] = {}
        self._param_fills: dict[int, dict[str, str]] = {}
        self._list_fills: dict[int, str | None] = {}
        for info in facts.functions:
            if info.class_name is not None and info.parent is None:
                self._methods.setdefault(info.name, []).append(info)
        # (a nested def's: its method's class, ``def start(self): def add(m): ...``)
        classes = {_enclosing_class(self._infos[s]) for s in relevant if s in self._infos}
        classes.discard(None)
        # A call on another object of a method of one of those classes (``tap.attach(fn)``)
        # may acquire or remove: its scope is walked too.
        self._acts: dict[int, bool] = {}
        named = {
            m.name
            for ms in self._methods.values()
            for m in ms
            if m.class_name in classes and self._acts_on_hooks(m)
        }
        # classes whose constructor registers or removes: building one may acquire
        built = {
            info.class_name
            for s in relevant
            if (info := self._infos.get(s)) is not None and info.name == "__init__"
        }
        for call in facts.calls:
            if (call.attr in named and not _on_self(call.node)) or (
                call.attr is None and call.callee in built
            ):
                relevant.add(self.scope_id(call.site))  # ``tap.attach(fn)``, or building a ``Tap(...)``
        classes |= {self._infos[s].class_name for s in relevant if s in self._infos}
        classes.discard(None)
        for info in facts.functions:
            if info.class_name in classes:
                relevant.add(id(info.node))
        # Keyed by (function, depth): what a helper removes depends on how much of the
        # helper budget is left, and a result cut short at the limit must not answer a
        # query with more budget (the answer would depend on which was asked first).
        self._removes_memo: dict[tuple[int, int], tuple[set[str], set[str]]] = {}
        self._returns_memo: dict[tuple[int, int], tuple[bool, frozenset[str]]] = {}
        self._objects_memo: dict[tuple[int, int], tuple[str, frozenset[str]] | None] = {}
        self._acquisitions: dict[int, list[Acquisition]] = {}
        self._removals: dict[int, list[Removal]] = {}
        self._others: dict[int, FunctionInfo | None] = {}
        self._position = -1
        self._dead: dict[int, set[int]] = {}
        #: raw keys of attributes some walked scope assigns (``self.handles = []``)
        self.assigned: set[str] = set()
        for scope_id in sorted(relevant, key=lambda s: s != MODULE_SCOPE):
            self._summary(scope_id)

    def _pair_callers(self) -> set[int]:
        """Scopes that run both a same-file function that registers hooks and one that
        removes handles (``attach(m)`` ... ``detach(m)``): a pair of helpers over one
        object (:meth:`_parameter_fill_flow`) is acquired and released there.  A function
        runs another by plain name, by ``X.apply(f)`` (:meth:`applied`) or as a method
        bound with ``__get__`` (:meth:`bound_functions`); one that runs a registering
        (removing) function so is one too, a few calls deep."""
        registering, removing = set(self._regs), set(self._removal_calls)
        if not registering or not removing:
            return set()
        runs: dict[int, set[int]] = {}
        for scope_id, calls in self._calls.items():
            ran = {id(f.node) for c in calls if (f := self._run_by_name(c)) is not None}
            if ran:
                runs[scope_id] = ran
        for _ in range(HELPER_DEPTH):
            registering |= {s for s, ran in runs.items() if ran & registering}
            removing |= {s for s, ran in runs.items() if ran & removing}
        return {s for s, ran in runs.items() if ran & registering and ran & removing}

    def _run_by_name(self, call: CallSite) -> FunctionInfo | None:
        """The same-file function a call runs by plain name, through ``X.apply``, or
        bound with ``__get__`` (not ``self.m()``: a class's own pairs are its methods')."""
        if call.attr is None:
            return self.callee(call)
        if call.attr == "apply":
            return self.applied(call)
        return self.callee(call) if call.attr in self.bound_functions() else None

    # -- functions run another way than by their name ------------------------------------------
    def bound_functions(self) -> dict[str, FunctionInfo]:
        """Attribute name -> module-level function, for each ``X.name =
        fn.__get__(X)`` of the file (``fn`` a module function, bound as a method of the
        object ``X``): ``obj.name(...)`` then runs ``fn(obj, ...)``.  A name bound to two
        functions is left out."""
        if self._bound_functions is None:
            found: dict[str, FunctionInfo | None] = {}
            for call in self.facts.calls_to_attr("__get__"):
                func = call.node.func
                if (
                    call.use.role != "bound"
                    or len(call.node.args) != 1
                    or not isinstance(func, cst.Attribute)
                ):
                    continue
                if not isinstance(func.value, cst.Name):
                    continue
                info = self.facts.module_function(func.value.value)
                if info is None:
                    continue
                for target in call.use.target_nodes:
                    if isinstance(target, cst.Attribute):
                        name = target.attr.value
                        found[name] = info if found.get(name, info) is info else None
            self._bound_functions = {name: info for name, info in found.items() if info is not None}
        return self._bound_functions

    def applied(self, call: CallSite) -> FunctionInfo | None:
        """The same-file function ``X.apply(f)`` runs on each submodule of ``X``
        (``Module.apply``): ``f`` by name (a nested def of the caller's included), a
        method of the calling class as ``self.m``, either wrapped in
        ``functools.partial`` or not."""
        if call.attr != "apply" or len(call.node.args) != 1 or call.node.args[0].keyword is not None:
            return None
        value = call.node.args[0].value
        inner = _partial_of(value)
        if inner is not None:
            value = inner.args[0].value
        if (
            isinstance(value, cst.Attribute)
            and isinstance(value.value, cst.Name)
            and value.value.value == "self"
        ):
            class_def = call.site.class_def
            return (
                self.facts.method(class_def.name.value, value.attr.value) if class_def is not None else None
            )
        if not isinstance(value, cst.Name):
            return None
        return self._function_named(value.value, self._infos.get(self.scope_id(call.site)))

    def _function_named(self, name: str, scope: FunctionInfo | None) -> FunctionInfo | None:
        """The def ``name`` means in ``scope``: a nested def of it or of an enclosing
        function, else the module function."""
        while scope is not None:
            if name in scope.nested:
                return scope.nested[name]
            scope = scope.parent
        return self.facts.module_function(name)

    def as_called(self, call: CallSite, helper: FunctionInfo) -> cst.Call:
        """``call`` with the arguments ``helper`` receives, in order: for ``X.apply(f)``
        ``f(X)`` (``partial``'s own arguments first, its keywords after), for a bound
        ``X.name(a)`` ``fn(X, a)``; the call itself otherwise.  For mapping arguments to
        parameters only: the node is not in the tree."""
        node = call.node
        if call.attr == "apply" and self.applied(call) is helper:
            inner = _partial_of(node.args[0].value)
            given = list(inner.args[1:]) if inner is not None else []
            positional = [a for a in given if a.keyword is None and a.star != "**"]
            keywords = [a for a in given if a.keyword is not None or a.star == "**"]
            return _with_args(node, [*positional, cst.Arg(node.func.value), *keywords])
        if (
            call.attr is not None
            and helper.class_name is None
            and self.bound_functions().get(call.attr) is helper
        ):
            return _with_args(node, [cst.Arg(node.func.value), *node.args])
        return node

    # -- scopes and keys ---------------------------------------------------------------------
    def scope_id(self, site: Site) -> int:
        function = site.function
        return MODULE_SCOPE if function is None or site.is_module_level else id(function)

    def info(self, scope_id: int) -> FunctionInfo | None:
        return self._infos.get(scope_id)

    def calls_in(self, scope_id: int) -> list[CallSite]:
        """The calls of one scope, in source order (indexed once)."""
        return self._calls.get(scope_id, [])

    def registrations_in(self, scope_id: int) -> list[Registration]:
        """The registrations of one scope, in source order (indexed once)."""
        return self._regs.get(scope_id, [])

    def _bound(self, info: FunctionInfo, nodes=None) -> tuple[set[str], set[str]]:
        found = self._locals.get(id(info.node))
        if found is None:
            assigned, declared = local_names(info.node, nodes)
            found = (assigned | _own_parameters(info), declared)
            self._locals[id(info.node)] = found
        return found

    def _rebinds(self, nested: FunctionInfo, name: str) -> bool:
        """Whether the nested def binds ``name`` in its body (a local it assigns, which
        may be the enclosing one's under ``nonlocal``); its own parameter of that name
        is another variable (:func:`_mentions` reads its defaults)."""
        assigned, declared = self._bound(nested)
        return name in declared or (name in assigned and name not in _own_parameters(nested))

    def owner(self, name: str, scope_id: int) -> str:
        """Who binds ``name`` as seen from a scope: ``def:<id>``, ``class:<name>`` for a
        method's ``self``/``cls``, or ``module``."""
        found = self._owners.get((name, scope_id))
        if found is None:
            found = self._owners[(name, scope_id)] = self._owner(name, scope_id)
        return found

    def _owner(self, name: str, scope_id: int) -> str:
        info = self._infos.get(scope_id)
        while info is not None:
            params = info.params
            if info.class_name and params and params[0] == name and name in ("self", "cls"):
                return f"class:{self._root_class(info.class_name)}"
            if name in params:  # a parameter is local (it cannot be declared global)
                return f"def:{id(info.node)}"
            assigned, declared = self._bound(info)
            if name in declared:
                if name in self._nonlocals(info):
                    info = info.parent  # ``nonlocal``: the enclosing function's name
                    continue
                return "module"
            if name in assigned:
                return f"def:{id(info.node)}"
            info = info.parent
        return "module"

    def _nonlocals(self, info: FunctionInfo) -> set[str]:
        """The names a function declares ``nonlocal`` (of ``_bound``'s declared ones)."""
        return {
            n.name.value
            for node in self.facts.body_nodes(info.node)
            if type(node) is cst.Nonlocal
            for n in node.names
        }

    def _root_class(self, name: str) -> str:
        """The topmost base of a class defined in this file: ``self`` of a subclass and of
        its base is one object."""
        seen = {name}
        while True:
            base = next((b for b in self._same_file_bases(name) if b not in seen), None)
            if base is None:
                return name
            seen.add(base)
            name = base

    def raw_key(self, node: cst.BaseExpression | None, scope_id: int) -> str | None:
        """The store an expression names: ``d[k]``, ``d.pop(k)``, ``d.values()`` and
        ``list(d)`` name ``d``; None for anything else than a name or attribute chain."""
        base = _store_base(node)
        if base is None:
            return None
        root = base
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        owner = self.owner(root.value, scope_id)
        code = _instance_dict_entry(node, base) or self.facts.code(base)
        if owner.startswith("def:") and isinstance(base, cst.Attribute) and base.value is root:
            info = self._infos.get(int(owner[4:]))  # the function that binds the root name
            if info is not None and root.value in info.params and root.value not in ("self", "cls"):
                # ``model.hooks`` of a parameter: the same attribute of what another
                # function of the file is handed (``detach(model)`` removing it) is one store
                self._union(f"parameter-attribute|{code[len(root.value) :]}", f"{owner}|{code}")
        if owner == "module" and base is not root:
            cls = self._module_instances().get(root.value)
            if cls is not None:  # ``REGISTRY.handles`` is ``self.handles`` of ``REGISTRY = Registry()``
                key = f"{owner}|{code}"
                # (the global's key stays the root: messages name ``REGISTRY.handles``)
                self._union(f"class:{self._root_class(cls)}|self{code[len(root.value) :]}", key)
                return key
        return f"{owner}|{code}"

    def _module_instances(self) -> dict[str, str]:
        """Module globals bound once, at the top level, to an instance of a class of this
        file (``REGISTRY = Registry()``): name -> class name."""
        found = self._instances
        if found is None:
            counts: dict[str, int] = {}
            classes: dict[str, str] = {}
            for statement in self.facts.module.body:
                if not isinstance(statement, cst.SimpleStatementLine):
                    continue
                for small in statement.body:
                    if not isinstance(small, cst.Assign):
                        continue
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            name = target.target.value
                            counts[name] = counts.get(name, 0) + 1
                            value = small.value
                            if (
                                isinstance(value, cst.Call)
                                and isinstance(value.func, cst.Name)
                                and value.func.value in self.facts.classes
                            ):
                                classes[name] = value.func.value
            found = self._instances = {n: c for n, c in classes.items() if counts[n] == 1}
        return found

    def find(self, key: str) -> str:
        parent = self._parent.get(key, key)
        if parent == key:
            return key
        root = self.find(parent)
        self._parent[key] = root
        return root

    def _union(self, a: str | None, b: str | None) -> None:
        if a and b:
            ra, rb = self.find(a), self.find(b)
            if ra != rb:
                self._parent[ra] = rb

    def key(self, node: cst.BaseExpression | None, scope_id: int) -> str | None:
        raw = self.raw_key(node, scope_id)
        return self.find(raw) if raw else None

    # -- the walk of one scope ---------------------------------------------------------------
    def _summary(self, scope_id: int) -> _HandleSummary:
        scope = self._summaries.get(scope_id)
        if scope is not None:
            return scope
        info = self._infos.get(scope_id)
        scope = _HandleSummary(
            scope_id, info, calls=self._calls.get(scope_id, []), registrations=self._regs.get(scope_id, [])
        )
        self._summaries[scope_id] = scope
        if info is not None:
            nodes = self.facts.body_nodes(info.node)
            self._bound(info, nodes)  # its locals, from the same walk
        else:
            nodes = [
                n
                for statement in self.facts.module.body
                if not isinstance(statement, (cst.FunctionDef, cst.ClassDef))
                for n in [statement, *descendants(statement, into_functions=False)]
            ]
        calls = {id(c.node): c for c in scope.calls}
        self._position = -1
        for position, node in enumerate(nodes):
            kind = type(node)  # parsed trees hold these exact types
            if kind not in _WALKED:
                continue
            self._position = position
            if kind is cst.Call:
                scope.positions[id(node)] = position
                call = calls.pop(id(node), None)
                if call is not None:
                    self._call(scope, call)
            elif kind is cst.AnnAssign and node.value is None:
                continue  # ``self.handles: list``: a declaration, no value
            elif kind is cst.Assign or kind is cst.AnnAssign:
                if kind is cst.AnnAssign:  # ``self.handles: list = []``: an assignment like any other
                    node = cst.Assign(targets=[cst.AssignTarget(node.target)], value=node.value)
                for target in node.targets:
                    if type(node.value) is cst.Call:  # ``hs = []`` in another branch keeps the handles
                        self._bind(scope, target.target, position)
                    if type(target.target) is cst.Name:
                        raw = f"{self.owner(target.target.value, scope_id)}|{target.target.value}"
                        scope.values.setdefault(raw, []).append((position, node.value))
                self._assign(scope, node)
            elif kind is cst.For or kind is cst.CompFor:
                self._bind(scope, node.target, position)
            elif kind is cst.AugAssign:
                for name in _element_names(node.value):
                    self._event(scope, name, "into", self.raw_key(node.target, scope_id))
            elif kind is cst.Return or kind is cst.Yield:
                what = "returned" if kind is cst.Return else "yielded"
                value = node.value if isinstance(node.value, cst.BaseExpression) else None
                for name in _element_names(value):
                    self._event(scope, name, what, None)
            else:  # a ``with`` item
                for name in _element_names(node.item):
                    self._event(scope, name, "scoped", None)
        self._position = -1  # calls inside lambdas: no position
        for call in calls.values():
            self._call(scope, call)
        for call in self._removal_calls.get(scope_id, ()):
            self._removal(scope, call)
        return scope

    def _bind(self, scope: _HandleSummary, target: cst.BaseExpression, position: int) -> None:
        for name in target_names(target):
            scope.bindings.setdefault(f"{self.owner(name, scope.id)}|{name}", []).append(position)

    def _event(self, scope: _HandleSummary, name: cst.BaseExpression, kind: str, other: str | None) -> None:
        raw = self.raw_key(name, scope.id)
        if raw is not None:
            scope.events.setdefault(raw, []).append((kind, other, self._position))

    def _assign(self, scope: _HandleSummary, node: cst.Assign) -> None:
        pairs = paired_elements(node)
        if pairs is not None:  # ``h, self._h = self._h, None``: one assignment per element
            for target, value in pairs:
                self._assign(scope, cst.Assign(targets=[cst.AssignTarget(target)], value=value))
            return
        targets = [t.target for t in node.targets]
        value = _literal_getattr(node.value) or node.value  # ``getattr(self, "hs", None)``: ``self.hs``
        for target in targets:
            if isinstance(target, cst.Attribute):
                raw = self.raw_key(target, scope.id)
                if raw is not None:
                    self.assigned.add(raw)
        if _is_chain(value) or len(targets) > 1:
            keys = [self.raw_key(t, scope.id) for t in targets if _is_chain(t)]
            if _is_chain(value):
                keys.append(self.raw_key(value, scope.id))
            for a, b in zip(keys, keys[1:]):
                self._union(a, b)
        if _is_chain(value):
            for target in targets:
                if not _is_chain(target):  # ``d[k] = h``: the handle goes into ``d``
                    self._event(scope, value, "into", self.raw_key(target, scope.id))
            return
        if isinstance(value, cst.Call) and _element_call(value) is not None:
            store = self.raw_key(_element_call(value), scope.id)
            for target in targets:
                for name in target_names(target):
                    scope.element_of[f"{self.owner(name, scope.id)}|{name}"] = store  # type: ignore[assignment]
            return
        if isinstance(value, cst.Subscript):
            store = self.raw_key(value, scope.id)
            for target in targets:
                if isinstance(target, (cst.Tuple, cst.List)):
                    for name in target_names(target):
                        scope.element_of[f"{self.owner(name, scope.id)}|{name}"] = store  # type: ignore[assignment]
            return
        if isinstance(value, cst.Call) and (_builtin(value) in COLLECTION_BUILTINS or self._is_record(value)):
            names = [n for a in value.args for n in _element_names(a.value)]
        else:
            names = (
                _element_names(value) if isinstance(value, (cst.Tuple, cst.List, cst.Set, cst.Dict)) else []
            )
        for target in targets:
            for name in names:
                self._event(scope, name, "into", self.raw_key(target, scope.id))

    def _call(self, scope: _HandleSummary, call: CallSite) -> None:
        node = call.node
        func = node.func
        for arg in node.args:
            value = arg.value
            if isinstance(value, cst.Attribute) and value.attr.value == REMOVE_METHOD:
                raw = self.raw_key(
                    value.value, scope.id
                )  # atexit.register(h.remove), stack.callback(h.remove)
                if raw is not None:
                    scope.removals.append(Removal(node, call.site, raw, "deferred"))
        if call.attr in STORE_METHODS or call.attr in KEYED_STORE_METHODS:
            dest = self.raw_key(func.value, scope.id)  # type: ignore[attr-defined]
            for arg in node.args:
                for name in _element_names(arg.value):
                    self._event(scope, name, "into", dest)
            return
        if call.attr in EXIT_STACK_METHODS:
            for arg in node.args:
                for name in _element_names(arg.value):
                    self._event(scope, name, "scoped", None)
            return
        removed = _getattr_remove(node)
        if removed is not None:  # ``remove = getattr(h, "remove", None)``, then called
            self._removal(scope, call, removed)
            return
        if (
            call.attr == REMOVE_METHOD
            or _builtin(node) in _READING_CALLS
            or _builtin(node) in COLLECTION_BUILTINS
            or _builtin(node) in ITERATING_BUILTINS  # ``enumerate(net)``: walked, not handed out
            or (call.use.role == "bound" and self._is_record(node))
            or _part_lookup(node) is not None  # ``reduce(getattr, path, net)``: a part looked up
        ):
            return
        if _says_remove(call):
            for arg in node.args:
                values = [arg.value]
                if isinstance(arg.value, (cst.Set, cst.List, cst.Tuple)):
                    values += [e.value for e in arg.value.elements]  # remove_hooks({d.pop(k)})
                for value in values:
                    raw = self.raw_key(value, scope.id)
                    if raw is not None:
                        scope.removals.append(Removal(node, call.site, raw, "helper"))
            return
        # Handed to a call whose value a local name keeps (``wrapped = Wrapper(net)``):
        # that local is noted, for the object's owner to follow (:meth:`_wrapped_here`).
        keeper = None
        if call.use.role == "bound" and len(call.use.target_nodes) == 1:
            target = call.use.target_nodes[0]
            if isinstance(target, cst.Name):
                keeper = self.raw_key(target, scope.id)
        callee = self.callee(call) if isinstance(func, cst.Name) else None
        for index, arg in enumerate(node.args):
            if isinstance(arg.value, cst.Name):
                if callee is not None and self._only_runs(callee, node, index):
                    continue  # ``forward(net, x)`` that only calls ``net(x)``: run, not handed out
                self._event(scope, arg.value, "passed", keeper)

    def _only_runs(self, callee: FunctionInfo, call: cst.Call, index: int) -> bool:
        """The argument at ``index`` of ``call``, positional, binds a parameter that the
        same-file plain function ``callee`` only ever calls (:func:`_only_calls`, read
        once per function and parameter)."""
        arg = call.args[index]
        if arg.keyword is not None or any(a.star for a in call.args[: index + 1]):
            return False
        key = (id(callee.node), index)
        if key not in self._runs_only:
            self._runs_only[key] = _only_calls(callee, index)
        return self._runs_only[key]

    def unreachable(self, site: Site) -> bool:
        """Whether the statement at ``site`` can never run (it follows a ``return`` or
        ``raise`` in its block, or sits inside a statement that does)."""
        function = site.function or self.facts.module
        dead = self._dead.get(id(function))
        if dead is None:
            dead = self._dead[id(function)] = dead_statements(function)
        if not dead:
            return False
        inside = [f.node for f in site.frames if f.kind not in ("def", "class", "lambda", "comp")]
        return any(id(node) in dead for node in (*inside, site.statement))

    def _removal(
        self, scope: _HandleSummary, call: CallSite, receiver: cst.BaseExpression | None = None
    ) -> None:
        """``receiver.remove()``; ``receiver`` defaults to what the call's method is called on."""
        if self.unreachable(call.site):
            return  # a removal that never runs removes nothing
        if receiver is None:
            receiver = call.node.func.value  # type: ignore[attr-defined]
        raw = self.raw_key(receiver, scope.id)
        if raw is None:
            return
        kind = "direct" if _is_chain(receiver) else "element"
        if not isinstance(receiver, cst.Name) or not self._loop_target(call.site, receiver.value):
            scope.removals.append(Removal(call.node, call.site, raw, kind))
        if isinstance(receiver, cst.Attribute) and _is_chain(receiver):
            root = receiver.value
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value not in ("self", "cls"):
                # ``for entry in entries: entry.handle.remove()``: records holding handles
                store = self._loop_store(scope, call.site, root.value)
                if store is not None:
                    scope.removals.append(Removal(call.node, call.site, store, "loop"))
            return
        if not isinstance(receiver, cst.Name):
            return
        name = receiver.value
        element = scope.element_of.get(raw)
        if element is not None:
            scope.removals.append(Removal(call.node, call.site, element, "element"))
        for frame in reversed(call.site.frames):
            if frame.kind in ("def", "class"):
                break
            loop = frame.node
            if frame.kind == "comp":
                loop = loop.for_in  # type: ignore[attr-defined]
            elif frame.kind == "lambda":
                store = self._mapped(scope, loop, name)  # type: ignore[arg-type]
                if store is not None:
                    scope.removals.append(Removal(call.node, call.site, store, "loop"))
                continue
            elif frame.kind != "for":
                continue
            if name in target_names(loop.target):  # type: ignore[attr-defined]
                store = self.raw_key(loop.iter, scope.id)  # type: ignore[attr-defined]
                if store is not None:
                    scope.removals.append(Removal(call.node, call.site, store, "loop"))
                    outer = _loop_over(call.site, loop.iter)  # type: ignore[attr-defined]
                    if outer is not None:  # for group in groups: for h in group: h.remove()
                        outer_store = self.raw_key(outer, scope.id)
                        if outer_store is not None:
                            scope.removals.append(Removal(call.node, call.site, outer_store, "loop"))
                else:  # for h in self.fwd + self.bwd / chain(fwd, bwd): h.remove()
                    for part in _joined(loop.iter):  # type: ignore[attr-defined]
                        store = self.raw_key(part, scope.id)
                        if store is not None:
                            scope.removals.append(Removal(call.node, call.site, store, "loop"))
                break

    def _loop_store(self, scope: _HandleSummary, site: Site, name: str) -> str | None:
        """The store a ``for`` loop around the site takes ``name`` from."""
        for frame in reversed(site.frames):
            if frame.kind in ("def", "class"):
                return None
            if frame.kind == "for" and name in target_names(frame.node.target):  # type: ignore[attr-defined]
                return self.raw_key(frame.node.iter, scope.id)  # type: ignore[attr-defined]
        return None

    @staticmethod
    def _loop_target(site: Site, name: str) -> bool:
        """``name`` is bound by a loop around the site (``for h in hs: h.remove()``
        removes the elements of ``hs``, not what ``h`` held before the loop)."""
        for frame in reversed(site.frames):
            if frame.kind in ("def", "class"):
                return False
            node = frame.node.for_in if frame.kind == "comp" else frame.node  # type: ignore[attr-defined]
            if frame.kind in ("for", "comp") and name in target_names(node.target):  # type: ignore[attr-defined]
                return True
        return False

    def _mapped(self, scope: _HandleSummary, lam: cst.Lambda, name: str) -> str | None:
        """``map(lambda h: h.remove(), handles)``: the store ``handles``."""
        if name not in {p.name.value for p in lam.params.params}:
            return None
        for call in scope.calls:
            args = call.node.args
            if call.callee == "map" and len(args) == 2 and args[0].value is lam:
                return self.raw_key(args[1].value, scope.id)
        return None

    # -- helpers of the same file -------------------------------------------------------------
    def callee(self, call: CallSite) -> FunctionInfo | None:
        """The same-file function or method a call runs, when the file says so."""
        key = id(call.node)
        if key not in self._callees:
            self._callees[key] = self._callee(call)
        return self._callees[key]

    def _callee(self, call: CallSite) -> FunctionInfo | None:
        func = call.node.func
        info = self._infos.get(self.scope_id(call.site))
        if isinstance(func, cst.Name):
            return self._function_named(func.value, info)
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
            and info is not None
        ):
            method = info
            while method is not None and method.class_name is None:
                method = method.parent
            if method is not None:
                return self.facts.method(method.class_name, func.attr.value)  # type: ignore[arg-type]
        if is_super_call(func) and info is not None:
            return self._super_method(info, func.attr.value)  # type: ignore[union-attr]
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in self.facts.classes
        ):
            # ``Manager._add_hooks(...)``: a static or class method of a class of this file
            method = self.facts.method(func.value.value, func.attr.value)
            if method is not None and {"staticmethod", "classmethod"} & set(method.decorators):
                return method
        if isinstance(func, cst.Attribute):
            return self.bound_functions().get(func.attr.value)
        return None

    def _super_method(self, info: FunctionInfo, name: str) -> FunctionInfo | None:
        """What ``super().name`` runs from a method of a class of this file: the first
        same-file base, depth first, that defines ``name`` (a base of another file is
        the project's to resolve: None)."""
        method = info
        while method is not None and method.class_name is None:
            method = method.parent
        if method is None:
            return None
        seen: set[str] = {method.class_name}  # type: ignore[arg-type]
        pending = list(self._same_file_bases(method.class_name))  # type: ignore[arg-type]
        while pending:
            base = pending.pop(0)
            if base in seen:
                continue
            seen.add(base)
            found = self.facts.method(base, name)
            if found is not None:
                return found
            pending[:0] = self._same_file_bases(base)
        return None

    def _same_file_bases(self, class_name: str) -> list[str]:
        """The bases of a class of this file that are classes of this file, in order."""
        node = self.facts.classes.get(class_name)
        if node is None:
            return []
        return [
            a.value.value
            for a in node.bases
            if isinstance(a.value, cst.Name) and a.value.value in self.facts.classes
        ]

    def other_object_method(self, call: CallSite) -> FunctionInfo | None:
        """The same-file method a call on *another* object runs (``tap.attach(fn)``,
        ``self.taps[name].detach_all()``): the method of the class the object's bindings
        name (:meth:`_receiver_class`), or, when they name none, the one the file leaves: exactly one
        same-file class has a method of that name that registers hooks or removes
        handles (:meth:`_acts_on_hooks`), and every other same-file method of that name
        only passes the call on to another object (``def attach(self, fn):
        self.inner.attach(fn)``).  Not ``self.m()``/``cls.m()`` (:meth:`callee`) nor
        ``super().m()``.  Kept apart from :meth:`callee`: what it stores or removes on
        its ``self`` is keyed by *its* class, not the caller's."""
        key = id(call.node)
        if key not in self._others:
            self._others[key] = self._other_object_method(call)
        return self._others[key]

    def _other_object_method(self, call: CallSite) -> FunctionInfo | None:
        if call.attr is None or _on_self(call.node):
            return None
        receiver = call.node.func.value  # type: ignore[attr-defined]
        if isinstance(receiver, cst.Call) and _builtin(receiver) == "super":
            return None
        methods = self._methods.get(call.attr, ())
        if not methods:
            return None  # no method of this file has the name
        typed = self._receiver_class(call.site, receiver)
        if call.attr == REMOVE_METHOD and typed is None:
            return None  # ``x.remove()``: a handle's, unless ``x`` is one of this file's classes
        if typed is not None:
            method = self.facts.method(typed, call.attr)
            if method is not None:
                return method if self._acts_on_hooks(method) else None
        acting = [m for m in methods if self._acts_on_hooks(m)]
        if len(acting) != 1:
            return None
        if acting[0].class_name == call.site.class_name and _on_self_attribute(receiver):
            # ``self.inner.state_dict()`` in a class whose own ``state_dict`` acts: a
            # wrapper handing the call to the object it wraps, not to another of itself
            return None
        for method in methods:
            if method is not acting[0] and not self._passes_on(method) and not is_abstract(method.node):
                return None  # another class's method of that name, which may be the one called
        return acting[0]

    def applied_other_method(self, call: CallSite) -> FunctionInfo | None:
        """The same-file method of *another* object that ``X.apply(obj.m)`` runs on each
        submodule of ``X`` (``Module.apply``), when ``obj``'s bindings name its class
        (:meth:`_receiver_class`) and the method registers hooks or removes handles:
        what it stores on its ``self`` is that object's, as for ``obj.m(X)``."""
        if call.attr != "apply" or len(call.node.args) != 1 or call.node.args[0].keyword is not None:
            return None
        value = call.node.args[0].value
        if not isinstance(value, cst.Attribute) or _on_self(cst.Call(func=value)):
            return None
        typed = self._receiver_class(call.site, value.value)
        method = self.facts.method(typed, value.attr.value) if typed is not None else None
        return method if method is not None and self._acts_on_hooks(method) else None

    def _receiver_class(self, site: Site, receiver: cst.BaseExpression) -> str | None:
        """The same-file class of the object a method is called on, when its bindings
        say it: ``self.smoother`` that the calling method's class only ever sets to
        ``Smoother(...)`` (or ``None``), a local only bound to ``Cache(...)``."""
        if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name):
            if receiver.value.value != "self" or site.class_name is None:
                return None
            key = (site.class_name, receiver.attr.value)
            if key not in self._attribute_classes:
                self._attribute_classes[key] = self._attribute_class(*key)
            return self._attribute_classes[key]
        if not isinstance(receiver, cst.Name):
            return None
        scope_id = self.scope_id(site)
        info = self._infos.get(scope_id)
        if info is None or receiver.value in info.params:
            return None
        iterated = loop_iterable(site, receiver.value)
        if iterated is not None:  # ``for hook in hooks: hook.remove()``
            return self._element_class(site, iterated, scope_id)
        raw = f"{self.owner(receiver.value, scope_id)}|{receiver.value}"
        values = [v for _, v in self._summary(scope_id).values.get(raw, [])]
        if not values or not _plain_bindings_only(self.facts.body_nodes(info.node), receiver.value):
            return None
        return self._constructed_class(values)

    def _element_class(
        self, site: Site | None, container: cst.BaseExpression, scope_id: int, depth: int = 0
    ) -> str | None:
        """The one same-file class of the objects in a local list or a ``self.*`` list
        of the site's class, when every way the file fills it says so: bound to empty
        displays or to displays and comprehensions of ``Cls(...)``, or (a local) to what
        a same-file helper returns (:meth:`returned_objects`, ``taps =
        make_taps(model)``), and ``append``/``add`` given ``Cls(...)`` or a local the
        same block bound to one just before (``hook = Steer(layer); hook.register();
        hooks.append(hook)``).  ``site`` is only read for a ``self.*`` list."""
        if isinstance(container, cst.Name) and container.value not in ("self", "cls"):
            info = self._infos.get(scope_id)
            values = assigned_values(info.node, container.value) if info is not None else None
            fills = [c for c in self.calls_in(scope_id) if _is_name(c.receiver, container.value)]
        elif (
            isinstance(container, cst.Attribute)
            and _is_name(container.value, "self")
            and site is not None
            and site.class_name is not None
        ):
            bindings = self.facts.self_attribute_bindings(site.class_name, container.attr.value)
            if any(not isinstance(target, cst.Attribute) for _, target, _ in bindings):
                return None
            values = [value for _, _, value in bindings if value is not None]
            fills = [
                c
                for c in self.facts.calls
                if c.site.class_name == site.class_name
                and isinstance(c.receiver, cst.Attribute)
                and is_attribute(c.receiver, "self", container.attr.value)
            ]
        else:
            return None
        if not values:
            return None
        built: list = []
        returned: set[str] = set()  # the classes of lists same-file helpers return
        for value in values:
            if isinstance(value, (cst.List, cst.Tuple)):
                built += [e.value for e in value.elements]
            elif isinstance(value, cst.ListComp):
                built.append(value.elt)
            elif isinstance(value, cst.Call) and isinstance(container, cst.Name):
                helper = next((self.callee(c) for c in self.calls_in(scope_id) if c.node is value), None)
                made = self.returned_objects(helper, depth) if helper is not None else None
                if made is None:
                    return None
                returned.add(made[0])
            else:
                return None
        for fill in fills:
            if fill.attr not in ("append", "add") or len(fill.node.args) != 1:
                if fill.attr in CONTAINER_ADDS:
                    return None  # filled some other way (``extend``, ``insert``)
                continue
            built.append(_built_just_before(fill))
        if not (built or returned) or any(b is None for b in built):
            return None
        return self._constructed_class(built, returned)

    def _attribute_class(self, class_name: str, attribute: str) -> str | None:
        values = []
        for statement, target, value in self.facts.self_attribute_bindings(class_name, attribute):
            if not isinstance(target, cst.Attribute):
                return None  # unpacked into it: its value is not seen
            if type(statement) is not cst.AugAssign and value is not None:
                values.append(value)
        return self._constructed_class(values)

    def _builders(self, info: FunctionInfo | None = None) -> frozenset:
        """The names of the file's module-level functions whose every ``return`` hands
        back an object they build, load or copy there (``t = Net.from_pretrained(path);
        return t.to(device).eval()``, ``return copy.deepcopy(model)``), whatever their
        arguments: what a call of one returns is the caller's own new object (computed
        once).  With ``info``: as seen from that function, whose nested defs of the same
        kind are builders too (``def fresh(m): return copy.deepcopy(m)`` inside it) and
        whose other nested defs hide a module-level builder of their name."""
        found = self._builder_names
        if found is None:
            self._builder_names = frozenset()  # a builder calling a builder: not yet one
            found = self._builder_names = frozenset(
                i.name
                for i in self.facts.functions
                if i.parent is None and i.class_name is None and self._is_builder(i)
            )
        if info is None or not info.nested:
            return found
        names = set(found)
        for name, nested in info.nested.items():
            if self._is_builder(nested):
                names.add(name)
            else:
                names.discard(name)
        return frozenset(names)

    def _is_builder(self, info: FunctionInfo) -> bool:
        """Every ``return`` of the function hands back an object it builds, loads or
        copies (:func:`_builds`)."""
        returns = [n for n in self.facts.body_nodes(info.node) if isinstance(n, cst.Return)]
        if not returns or any(r.value is None for r in returns):
            return False
        bound = _bound_here(info, self._summary(id(info.node)))
        return all(_builds(r.value, info, bound) for r in returns)  # type: ignore[arg-type]

    def _returns_self(self, info: FunctionInfo) -> bool:
        """Every ``return`` of the method hands back its own object (``return self``: a
        chained call's value is the object it was called on)."""
        returns = [n for n in self.facts.body_nodes(info.node) if isinstance(n, cst.Return)]
        return bool(returns) and all(
            isinstance(r.value, cst.Name) and info.params[:1] == ["self"] and r.value.value == "self"
            for r in returns
        )

    def _constructed_class(self, values: list, known: set[str] | None = None) -> str | None:
        """The one same-file class every value constructs (``None`` left out), the
        classes in ``known`` (objects a value holds by other means) included."""
        found = set(known or ())
        for value in values:
            if isinstance(value, cst.Name) and value.value == "None":
                continue
            if not (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value in self.facts.classes
            ):
                return None
            found.add(value.func.value)
        return found.pop() if len(found) == 1 else None

    def _acts_on_hooks(self, info: FunctionInfo) -> bool:
        """The method registers a hook or calls ``.remove()``, in its own body or in a
        nested def, same-file function or same-class method it calls (:meth:`callee`,
        or runs on every submodule: :meth:`applied`; one call deep: what the screen
        keeps for it).  Syntactic: it says nothing of
        which stores."""
        scope_id = id(info.node)
        known = self._acts.get(scope_id)
        if known is None:
            helpers = [h for c in self._calls.get(scope_id, ()) if (h := self.callee(c) or self.applied(c))]
            # and what a helper runs on every submodule (``self.stop()``, whose nested
            # def ``self.model.apply`` runs removes the handles)
            applied = [a for h in helpers for c in self._calls.get(id(h.node), ()) if (a := self.applied(c))]
            scopes = [scope_id] + [id(h.node) for h in helpers + applied]
            known = self._acts[scope_id] = any(
                self._regs.get(s) or self._removal_calls.get(s) for s in scopes
            )
        return known

    def _passes_on(self, method: FunctionInfo) -> bool:
        """The method calls a method of its own name on another object (a forwarder:
        ``def add_hook(self, name, fn): self.points[name].add_hook(fn)``)."""
        return any(
            call.attr == method.name and not _on_self(call.node)
            for call in self._calls.get(id(method.node), ())
        )

    def removed_by(self, info: FunctionInfo, depth: int = 0) -> tuple[set[str], set[str]]:
        """``(parameters, attributes)``: what a function removes of its parameters
        (by name) and of ``self.*`` (by code), directly or through helpers."""
        params, attrs, _others = self._removed_by(info, depth)
        return params, attrs

    def _removed_by(self, info: FunctionInfo, depth: int = 0) -> tuple[set[str], set[str], set[str]]:
        """:meth:`removed_by`, and the stores of *other* classes' instances it removes
        through their methods (``tap.detach_all()``: ``class:Tap|self.live``), by key."""
        key = (id(info.node), depth)
        memo = self._removes_memo.get(key)
        if memo is not None:
            return memo
        params: set[str] = set()
        attrs: set[str] = set()
        others: set[str] = set()
        self._removes_memo[key] = (params, attrs, others)
        if depth > HELPER_DEPTH:
            return params, attrs, others
        own = f"def:{id(info.node)}"
        mine = self.owner("self", id(info.node))
        enclosing = set()  # a closure removes what the function around it binds
        parent = info.parent
        while parent is not None:
            enclosing.add(f"def:{id(parent.node)}")
            parent = parent.parent
        for removal in self.removals_in(id(info.node), depth + 1):
            for member in self._members(removal.store):
                owner, _, code = member.partition("|")
                root = code.split(".", 1)[0]
                if owner == own and root in info.params:
                    params.add(root)
                elif owner in enclosing:
                    others.add(member)
                elif owner.startswith("class:") and root in ("self", "cls"):
                    if owner == mine or removal.store.startswith(mine + "|"):
                        attrs.add(code)
                    else:
                        others.add(member)
        return params, attrs, others

    def _members(self, key: str) -> list[str]:
        root = self.find(key)
        return [k for k in {*self._parent, key} if self.find(k) == root]

    def removals_in(self, scope_id: int, depth: int = 0) -> list[Removal]:
        """Every removal in one scope, helpers' included (computed once per scope)."""
        if depth == 0:
            known = self._removals.get(scope_id)
            if known is None:
                known = self._removals[scope_id] = self._removals_in(scope_id, 0)
            return known
        return self._removals_in(scope_id, depth)

    def _removals_in(self, scope_id: int, depth: int) -> list[Removal]:
        scope = self._summary(scope_id)
        found = list(scope.removals)
        if depth > HELPER_DEPTH:
            return found
        for call in scope.calls:
            helper = self.callee(call) or self.applied(call)
            other = self.other_object_method(call) if helper is None else None
            if other is not None:
                helper = other
            elif helper is None and self.facts.project is not None:
                found.extend(self._external_removals(call, scope_id, scope))
                continue
            if helper is None or helper.node is (scope.info.node if scope.info else None):
                continue
            params, attrs, others = self._removed_by(helper, depth)
            found.extend(Removal(call.node, call.site, store, "helper") for store in sorted(others))
            if other is not None:  # ``tap.detach_all()``: the stores of the tap's class
                owner = f"class:{self._root_class(other.class_name)}"  # type: ignore[arg-type]
                found.extend(Removal(call.node, call.site, f"{owner}|{a}", "helper") for a in sorted(attrs))
                attrs = set()
            names = helper.params
            if helper.class_name is not None and isinstance(call.node.func, cst.Attribute):
                names = names[1:]
            if helper.class_name is None:
                attrs = set()
            found.extend(
                self._helper_removals(
                    call, scope_id, scope, names, params, attrs, self.as_called(call, helper)
                )
            )
        return found

    def _helper_removals(
        self,
        call: CallSite,
        scope_id: int,
        scope: _HandleSummary,
        names,
        params: set[str],
        attrs: set[str],
        called: cst.Call | None = None,
    ) -> list[Removal]:
        """What a call of a helper removes, given what the helper removes of its
        parameters (``params``, among its parameter ``names`` as the call passes them:
        ``called``, :meth:`as_called`) and of its ``self`` (``attrs``, codes: the
        caller's instance's stores)."""
        found = []
        if params:
            for name, arg in _parameters_passed(called or call.node, names):
                raw = self.raw_key(arg.value, scope_id)
                if name in params and raw is not None:
                    found.append(Removal(call.node, call.site, raw, "helper"))
        owner = self.owner("self", scope_id) if scope.info is not None and attrs else ""
        if owner.startswith("class:"):
            # one order in every run (a message names the first)
            found.extend(Removal(call.node, call.site, f"{owner}|{attr}", "helper") for attr in sorted(attrs))
        return found

    def _external_removals(self, call: CallSite, scope_id: int, scope: _HandleSummary) -> list[Removal]:
        """Removals by another file's helper (a base class's method, an imported
        function: :mod:`hooklint.project`), read as a same-file helper's."""
        from hooklint.project.queries import external_removal

        removes = external_removal(self.facts.project, call)
        if removes is None:
            return []
        names, params, attrs = removes
        return self._helper_removals(call, scope_id, scope, names, params, attrs)

    def returns_handles(self, info: FunctionInfo, depth: int = 0) -> bool:
        """The function returns the handles it registers (or gets from a helper)."""
        return self._returned(info, depth)[0]

    def _returned(self, info: FunctionInfo, depth: int) -> tuple[bool, frozenset[str]]:
        """Whether the function returns handles, and the stores of its own that hold
        the ones it returns (its acquisitions' and those its nested defs fill)."""
        key = (id(info.node), depth)
        memo = self._returns_memo.get(key)
        if memo is not None:
            return memo
        self._returns_memo[key] = (False, frozenset())  # a cycle returns nothing more
        if depth > HELPER_DEPTH:
            return False, frozenset()
        returned = [a for a in self.acquisitions(id(info.node), depth + 1) if a.flow.escapes == "returned"]
        nested = self._nested_returned_stores(info, depth)
        stores = nested.union(*(a.flow.stores for a in returned))
        found = self._returns_memo[key] = (bool(returned or nested), frozenset(stores))
        return found

    def hands_back(self, info: FunctionInfo, flow: Flow) -> bool:
        """A ``return`` of ``info``'s own body hands back the local name of one of the
        flow's stores: the name itself, an element of a tuple or list, or an argument of
        a call (``return Group(handles)``), not a value computed from it
        (``len(handles)``: :data:`~hooklint.analysis.vocabulary.COMPUTING_BUILTINS`)."""
        owner = f"def:{id(info.node)}|"
        names = {store[len(owner) :] for store in flow.stores if store.startswith(owner)}

        def handed(value: cst.BaseExpression) -> bool:
            if isinstance(value, cst.Name):
                return value.value in names
            if isinstance(value, (cst.Tuple, cst.List)):
                return any(handed(e.value) for e in value.elements)
            if isinstance(value, cst.Call):
                if isinstance(value.func, cst.Name) and value.func.value in COMPUTING_BUILTINS:
                    return False
                return any(handed(a.value) for a in value.args)
            return False

        return any(
            isinstance(node, cst.Return) and node.value is not None and handed(node.value)
            for node in self.facts.body_nodes(info.node)
        )

    def _nested_returned_stores(self, info: FunctionInfo, depth: int) -> set[str]:
        """Stores of ``info``'s own locals that defs nested in it fill with handles
        (``handles.append(reg(...))`` in an inner walker, recursive or not) and that
        ``info`` returns."""
        owner = f"def:{id(info.node)}|"
        filled: set[str] = set()
        pending = list(info.nested.values())
        while pending:
            nested = pending.pop()
            pending.extend(nested.nested.values())
            for acquisition in self.acquisitions(id(nested.node), depth + 1):
                filled |= {k for k in acquisition.flow.stores if k.startswith(owner)}
        if not filled:
            return set()
        events = self._summary(id(info.node)).events
        return {
            key
            for raw, items in events.items()
            if (key := self.find(raw)) in filled and any(kind == "returned" for kind, _, _ in items)
        }

    # -- queries -------------------------------------------------------------------------------
    def acquisitions(self, scope_id: int, depth: int = 0) -> list[Acquisition]:
        """Registrations of a scope, and calls of same-file helpers that return handles."""
        known = self._acquisitions.get(scope_id)
        if known is not None:
            return known
        scope = self._summary(scope_id)
        found = [
            Acquisition(
                r.call, r.site, self._registration_flow(r, scope, scope_id), registration=r, use=r.handle
            )
            for r in scope.registrations
        ]
        registered = {id(r.call) for r in scope.registrations}
        for call in scope.calls:
            if id(call.node) in registered:
                continue
            helper = self.callee(call) or _applied_method(self.facts, call)
            applied = self.applied(call) if helper is None else None
            if applied is not None:
                # ``model.apply(attach)``: ``attach`` runs on each submodule, its value unused
                flow = self._parameter_fill_flow(call, scope_id, applied) or self._list_fill_flow(
                    call, scope_id, applied
                )
                if flow is not None:
                    found.append(Acquisition(call.node, call.site, flow, helper=applied, use=call.use))
                continue
            if helper is None:
                built = self._constructor_fill_flow(call, depth)
                if built is not None:
                    found.append(
                        Acquisition(
                            call.node, call.site, built[1], helper=built[0], use=call.use, on_other=True
                        )
                    )
                    continue
                other = self.other_object_method(call) or self.applied_other_method(call)
                if other is not None and (
                    call.use.role == "discarded" or (call.use.role == "bound" and self._returns_self(other))
                ):
                    # ``self.taps[name].attach(fn)``: the stores of that class it fills
                    # (``st = Stats().attach(model)``: a method that returns its object)
                    stores = self._filled_and_removed(other, depth)
                    if stores:
                        flow = Flow(stores=stores, target=f"{self.facts.code(call.node.func)}()")
                        found.append(
                            Acquisition(call.node, call.site, flow, helper=other, use=call.use, on_other=True)
                        )
                elif other is None and self.facts.project is not None:
                    found.extend(self._external_acquisitions(call, scope_id, scope))
                continue
            if helper.node is (scope.info.node if scope.info else None):
                continue
            if self._is_setup_call(call, helper, scope, depth):
                if any(word in helper.name.lower() for word in SETUP_WORDS):
                    stores = self.class_removed(helper.class_name)  # type: ignore[arg-type]
                else:
                    stores = self._filled_and_removed(helper, depth)
                if stores:
                    flow = Flow(stores=stores, target=f"{self.facts.code(call.node.func)}()")
                    found.append(Acquisition(call.node, call.site, flow, helper=helper, use=call.use))
                continue
            if self.returns_handles(helper, depth):
                found.append(
                    Acquisition(
                        call.node,
                        call.site,
                        self._helper_flow(call, scope_id, helper),
                        helper=helper,
                        use=call.use,
                    )
                )
                continue
            made = self.returned_objects(helper, depth)
            if made is not None:  # ``taps = make_taps(model)``: objects it hooked through
                flow = Flow(stores=set(made[1]), target=f"{self.facts.code(call.node.func)}()")
                found.append(
                    Acquisition(call.node, call.site, flow, helper=helper, use=call.use, on_other=True)
                )
                continue
            factory = self._built_by_factory(helper)
            built = self._constructor_fill_flow(call, depth, factory) if factory is not None else None
            if built is not None:  # ``self._get_extractor()`` builds a hooking object: as its build
                found.append(
                    Acquisition(call.node, call.site, built[1], helper=built[0], use=call.use, on_other=True)
                )
                continue
            flow = self._parameter_fill_flow(call, scope_id, helper) or self._list_fill_flow(
                call, scope_id, helper
            )
            if flow is not None:
                found.append(Acquisition(call.node, call.site, flow, helper=helper, use=call.use))
        if depth == 0:
            self._acquisitions[scope_id] = found
        return found

    def _external_acquisitions(
        self, call: CallSite, scope_id: int, scope: _HandleSummary
    ) -> list[Acquisition]:
        """A call of another file's function or method (:mod:`hooklint.project`) that
        returns the handles it registers, or a setup call (``self.m()``,
        ``net.apply(self.m)``) of a base class's method that keeps them on ``self``,
        read as a same-file helper's."""
        from hooklint.project.queries import external_acquisition

        found = external_acquisition(self.facts.project, call)
        if found is None:
            return []
        name, where, returns, fills = found
        evidence = (name, where)
        if returns:
            flow = self._helper_flow(call, scope_id)
            return [Acquisition(call.node, call.site, flow, use=call.use, evidence=evidence)]
        owner = self.owner("self", scope_id) if scope.info is not None else ""
        if not (fills and owner.startswith("class:") and call.use.role == "discarded"):
            return []
        flow = Flow(
            stores={f"{owner}|{attr}" for attr in fills}, target=f"{self.facts.code(call.node.func)}()"
        )
        return [Acquisition(call.node, call.site, flow, use=call.use, evidence=evidence)]

    def _helper_flow(self, call: CallSite, scope_id: int, helper: FunctionInfo | None = None) -> Flow:
        positions = self._returned_positions(helper) if helper is not None else None
        flow = self.flow(call.use, scope_id, call.node, positions)
        flow.single = False  # a helper hands back a collection
        if helper is not None and call.use.role == "discarded":
            # ``self.add_capture(name)``, its value unused: the handles it returns are
            # also in the stores of ``self`` it keeps them in (``self.hooks.append(h)``)
            kept = self._kept_on_self(call, scope_id, helper)
            if kept:
                flow.stores |= kept
                flow.target = flow.target or f"{self.facts.code(call.node.func)}()"
        return flow

    def _kept_on_self(self, call: CallSite, scope_id: int, helper: FunctionInfo) -> set[str]:
        """The stores of the caller's ``self`` that a method of its class, called on
        ``self``, keeps the handles it returns in."""
        func = call.node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return set()
        owner = self.owner(func.value.value, scope_id)
        if not owner.startswith("class:") or owner != f"class:{helper.class_name}":
            return set()
        return {store for store in self._returned(helper, 0)[1] if store.startswith(owner + "|")}

    def _returned_positions(self, helper: FunctionInfo) -> frozenset[int] | None:
        """Where in the tuples a helper returns its handles sit (``return handles,
        shapes``: position 0), when every ``return`` of its own body returns a tuple of
        one length; None otherwise (the value returned is the handles, or their
        container)."""
        returns = [
            n for n in self.facts.body_nodes(helper.node) if isinstance(n, cst.Return) and n.value is not None
        ]
        if not returns or not all(isinstance(r.value, cst.Tuple) for r in returns):
            return None
        if len({len(r.value.elements) for r in returns}) != 1:  # type: ignore[union-attr]
            return None
        scope_id = id(helper.node)
        stores = self._returned(helper, 0)[1]
        found = set()
        for node in returns:
            for index, element in enumerate(node.value.elements):  # type: ignore[union-attr]
                for name in _element_names(element.value):
                    raw = self.raw_key(name, scope_id)
                    if raw is not None and self.find(raw) in stores:
                        found.add(index)
        return frozenset(found) if found else None

    def value_at(self, name: cst.Name, call: cst.Call, scope_id: int) -> cst.BaseExpression | None:
        """The value last assigned to a local name before a call of the same scope."""
        scope = self._summary(scope_id)
        position = scope.positions.get(id(call), -1)
        raw = f"{self.owner(name.value, scope_id)}|{name.value}"
        before = [v for p, v in scope.values.get(raw, ()) if p < position]
        return before[-1] if before else None

    def removes_an_earlier_list(self, removal: Removal, registration: Registration) -> bool:
        """The removal runs before the registration in its scope, through a local name
        that is bound anew in between, and no loop holds both (``for h in hs:
        h.remove()``, then ``hs = []``, then ``hs.append(reg(...))``): it removes what an
        earlier list held, not what this registration adds."""
        scope_id = self.scope_id(registration.site)
        scope = self._summary(scope_id)
        start = scope.positions.get(id(removal.call), -1)
        end = scope.positions.get(id(registration.call), -1)
        owner, _, code = removal.store.partition("|")
        if start < 0 or end <= start or owner != f"def:{scope_id}" or "." in code:
            return False
        if not any(start < at < end for at, _ in scope.values.get(removal.store, ())):
            return False
        loops = [f.node for f in removal.site.frames if f.kind in ("for", "while")]
        return not any(registration.site.inside(loop) for loop in loops)

    def store_label(self, store: str, scope_id: int) -> str:
        """A store's code as a message names it in a scope: ``self.live`` for the
        scope's own instance, ``Tap.live`` for the instances of another class
        (:meth:`other_object_method`)."""
        owner, _, code = store.partition("|")
        root, dot, rest = code.partition(".")
        if (
            owner.startswith("class:")
            and dot
            and root in ("self", "cls")
            and owner != self.owner("self", scope_id)
        ):
            return f"{owner[6:]}.{rest}"
        return code

    def owned_stores(self, flow: Flow) -> set[str]:
        """The stores of a flow that are attributes of the instance which its class
        itself assigns (``self.handles``, set in one of its methods)."""
        return {s for s in flow.stores if s.startswith("class:") and s in self.assigned}

    def inherited_stores(self, stores: set[str]) -> bool:
        """Every store is an attribute of ``self`` that no class of this file binds
        (``self.handles.append(h)``, never ``self.handles = ...`` here), of a class
        that extends a class defined elsewhere, itself or through a same-file base
        (not one of :data:`~hooklint.analysis.vocabulary.PLAIN_BASES`), and nothing
        says the base leaves it full: the store is that base's, and so is whatever
        removes it (a ``release_hooks()`` the base defines and other files call).
        With cross-file analysis the base's methods decide when every base can be
        read (:func:`hooklint.project.queries.inherited_removal`: one that removes
        them makes the store the base's, none makes it kept); without it, or with a
        base outside the project, the evidence is out of sight and the rules stay
        silent rather than call the handle kept for good."""
        if not stores:
            return False
        attributes: set[str] = set()
        owners = set()
        for store in stores:
            owner, _, code = store.partition("|")
            root, dot, attribute = code.partition(".")
            if not owner.startswith("class:") or root != "self" or not dot or "." in attribute:
                return False
            if self._binds_attribute(attribute) or not self.extends_elsewhere(owner[6:]):
                return False
            attributes.add(code)
            owners.add(owner[6:])
        project = self.facts.project
        if project is None:
            return True
        from hooklint.project.queries import inherited_removal

        return all(inherited_removal(project, owner, attributes) is not False for owner in owners)

    def _binds_attribute(self, attribute: str) -> bool:
        """Whether any class of this file binds ``attribute``: ``self.<attribute> =``
        (annotated or augmented too) in a method, or a class-level statement."""
        for class_name, node in self.facts.classes.items():
            if self.facts.self_attribute_bindings(class_name, attribute):
                return True
            for statement in node.body.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    for small in statement.body:
                        if isinstance(small, cst.Assign):
                            targets = [t.target for t in small.targets]
                        elif isinstance(small, cst.AnnAssign):
                            targets = [small.target]
                        else:
                            continue
                        if any(attribute in target_names(t) for t in targets):
                            return True
        return False

    def extends_elsewhere(self, class_name: str) -> bool:
        """Whether the class or one of its same-file bases names a base that is not a
        class of this file and not a plain one (``object``, ``nn.Module``, ``ABC``)."""
        seen: set[str] = set()
        pending = [class_name]
        while pending:
            name = pending.pop()
            node = self.facts.classes.get(name)
            if name in seen or node is None:
                continue
            seen.add(name)
            for base in node.bases:
                if base.keyword is not None:
                    continue  # ``metaclass=...``
                code = self.facts.code(base.value).split("[", 1)[0]
                if code in self.facts.classes:
                    pending.append(code)
                elif code not in PLAIN_BASES:
                    return True
        return False

    def only_when_finalized(self, removals: list[Removal], class_name: str | None) -> bool:
        """Every one of ``removals`` runs only when an instance of ``class_name`` is
        finalized: in its ``__del__``, or in a private method of the class (``_name``)
        that only ``__del__`` calls in this file."""
        if not removals or class_name is None:
            return False
        for removal in removals:
            info = self._infos.get(self.scope_id(removal.site))
            if (
                info is None
                or info.class_name != class_name
                or not runs_only_when_finalized(self.facts, info)
            ):
                return False
        return True

    def store_codes(self, stores: set[str]) -> list[str]:
        """The code of each store (``handles``, ``self._hooks``)."""
        return [s.partition("|")[2] for s in stores]

    def _unpacked_values(self, info: FunctionInfo, name: str) -> list[tuple[int, cst.BaseExpression]]:
        """For a local bound only by unpacking what one call returns (``net, aux =
        build(cfg)``), that call, once per binding (the scope summary records plain
        ``name = value`` bindings only); empty when it is bound any other way too."""
        found: list[tuple[int, cst.BaseExpression]] = []
        for node in self.facts.body_nodes(info.node):
            kind = type(node)
            if kind is cst.Assign:
                for target in node.targets:
                    inner = target.target
                    if type(inner) in (cst.Tuple, cst.List) and any(
                        type(e) is cst.Element and type(e.value) is cst.Name and e.value.value == name
                        for e in inner.elements
                    ):
                        if not isinstance(node.value, cst.Call):
                            return []
                        found.append((-1, node.value))
                    elif name in target_names(inner):
                        return []  # bound plainly, or nested deeper in the unpacking
            elif binds_otherwise(node, name):
                return []
        return found

    def dies_with_scope(self, registration: Registration) -> bool:
        """The hooked object is made in the registering function and never leaves it
        (not returned, stored, aliased or passed on): its hooks die with the call.  A
        tensor counts when every binding of the name computes one in this call
        (:meth:`_computed_tensor`: an activation, ``torch.from_numpy(x)``, an element
        of a model's outputs), through plain aliases too.  So does a part of such an
        object that a loop walks (``for block in model.blocks:``, ``model`` made here),
        when the loop's name does not leave the function either."""
        receiver = _receiver_root(registration)
        if receiver is None:
            return False
        scope_id = self.scope_id(registration.site)
        info = self._infos.get(scope_id)
        if info is None:
            return False
        if receiver.value in info.params:
            # a tensor parameter that every call of the file hands a tensor it computed
            # (``watch(h, sink)`` after ``h = cell(x, h)``): an activation, gone after backward
            return registration.api.owner == "tensor" and self._given_computed_tensors(info, receiver.value)
        if registration.api.owner == "tensor":
            return self._kept_here(receiver.value, scope_id, info, tensor=True)
        walked = loop_iterable(registration.site, receiver.value)
        if walked is not None:
            roots = _root_names(walked)
            return (
                bool(roots)
                and None not in roots
                and self._kept_here(receiver.value, scope_id, info, made=False)
                and all(root not in info.params and self._kept_here(root, scope_id, info) for root in roots)
            )
        at = self._summary(scope_id).positions.get(id(registration.call))
        return self._kept_here(receiver.value, scope_id, info, at=at)

    def _given_computed_tensors(self, info: FunctionInfo, param: str) -> bool:
        """Every call of ``info`` in the file (at least one; a method called on ``self``
        or on an object of its class) passes for ``param`` a tensor the caller computes
        in that call (:func:`_computes_tensor`).  Callers in other files are not seen:
        the file's own use is the evidence, and without it nothing is assumed."""
        calls = [c for c in self.facts.calls if (self.callee(c) or self.other_object_method(c)) is info]
        if not calls or info.parent is not None:
            return False
        for call in calls:
            argument = argument_for(call.node, info.called_params, param)
            caller_id = self.scope_id(call.site)
            caller = self._infos.get(caller_id)
            if argument is None or caller is None:
                return False
            if not _computes_tensor(
                argument,
                lambda n, caller=caller, caller_id=caller_id: self._computed_tensor(n, caller_id, caller, 0),
                caller,
            ):
                return False
        return True

    def _kept_here(
        self,
        name: str,
        scope_id: int,
        info: FunctionInfo,
        tensor: bool = False,
        made: bool = True,
        at: int | None = None,
    ) -> bool:
        """``name`` is a local of the scope that never leaves it (no event: returned,
        stored, passed on; not used by a nested def) and, when ``made``, every binding of
        it builds a new object (or, for a ``tensor``, computes one in this call).  ``at``
        (the registration's place): a binding written at the top of the function body
        before it replaces the earlier ones (:func:`_since_top_binding`), whose objects
        and uses no longer matter."""
        raw = f"{self.owner(name, scope_id)}|{name}"
        if not raw.startswith(f"def:{scope_id}|") or (not tensor and len(self._members(raw)) > 1):
            return False
        scope = self._summary(scope_id)
        start = -1
        if tensor:
            if not self._computed_tensor(name, scope_id, info, 0):
                return False
        elif made:
            values = scope.values.get(raw, []) or self._unpacked_values(info, name)
            if at is not None:
                start = _since_top_binding(values, info, name, at)
                values = [(p, v) for p, v in values if p >= start]
            values = (
                [(p, v) for p, v in values if not _rebinds_itself(v, name)] if len(values) > 1 else values
            )
            if not values:
                return False
            bound = _bound_here(info, scope)
            if not all(_fresh_object(v, info, bound, builders=self._builders(info)) for _, v in values):
                # locals that themselves hold a new object (``cfg = Config(dim=4)``)
                # hand nothing existing to what is built from them (read only when
                # needed: freeing names never makes a fresh value stale)
                prefix = f"def:{scope_id}|"
                bound -= {
                    key[len(prefix) :]
                    for key, bindings in scope.values.items()
                    if key.startswith(prefix)
                    and key != raw
                    and all(_fresh_object(v, info, bound, builders=self._builders(info)) for _, v in bindings)
                }
                if not all(_fresh_object(v, info, bound, builders=self._builders(info)) for _, v in values):
                    return False
        # A tensor handed to a call (``model(inputs)``) is read there, as any input is.
        events = [e for e in scope.events.get(raw, ()) if not (tensor and e[0] == "passed") and e[2] > start]
        return not events and not any(
            self._rebinds(nested, name) or _mentions(nested.node, name) for nested in info.nested.values()
        )

    def object_made_here(self, flow: Flow, scope_id: int, call: cst.Call) -> bool:
        """For handles kept on an object (``flow.on_object``: ``start_count(model)``), the
        object is this call's own: every binding of its local name makes a new one (a
        copy, ``copy.deepcopy(model)``, or a build, :func:`_fresh_object`), also through
        a same-file function that hands back the object it is given (``counted =
        with_methods(model)``), and the function returns none of those names.  Its
        hooks then die with it, whatever raises."""
        info = self._infos.get(scope_id)
        if not flow.on_object or info is None or len(flow.stores) != 1:
            return False
        owner, _, name = next(iter(flow.stores)).partition("|")
        if owner != f"def:{scope_id}" or "." in name:
            return False
        scope = self._summary(scope_id)
        bound = _bound_here(info, scope)
        returned = {
            n.value
            for node in self.facts.body_nodes(info.node)
            if isinstance(node, cst.Return) and node.value is not None
            for n in descendants(node.value)
            if isinstance(n, cst.Name)
        }
        at = scope.positions.get(id(call), -1)
        seen: set[str] = set()
        pending = [name]
        while pending:
            local = pending.pop()
            if local in seen:
                continue
            seen.add(local)
            if local in returned:
                return False
            # what the name holds at the acquisition: its last binding before it (a
            # parameter rebound to a copy, ``model = copy.deepcopy(model)``, included)
            values = _held_at(scope, f"{owner}|{local}", local, info, at)
            if not values:
                return False
            for _, value in values:
                if _copies(value) or _fresh_object(value, info, bound, builders=self._builders(info)):
                    continue
                given = self._handed_back(value, scope_id)
                if given is None or given in seen:
                    return False  # (``model = wrap(model)``: the object it was given)
                pending.append(given)
        return True

    def hooks_die_on_failure(self, registration: Registration, removal_call: cst.Call) -> bool:
        """The object the hooks go on is this call's own, reached through a local that
        every binding before the registration sets to a copy (``copy.deepcopy(model)``,
        a parameter rebound to one included) or a build (:func:`_fresh_object`): hooked
        itself, through its parts (``snap.head``, ``snap[i]``, a local bound to
        ``dict(snap.named_modules())[name]``) or a loop over them (``for m in
        snap.modules()``); and nothing hands that local out (returns, stores, passes on,
        a nested def that names it) before ``removal_call``.  If what runs before the
        removal raises, the object and its hooks go with the call."""
        scope_id = self.scope_id(registration.site)
        info = self._infos.get(scope_id)
        scope = self._summary(scope_id)
        at = scope.positions.get(id(registration.call), -1)
        until = scope.positions.get(id(removal_call), -1)
        if info is None or at < 0 or until < at:
            return False
        roots = self._hooked_roots(registration, scope_id, at)
        return bool(roots) and all(
            root is not None and self._own_until(root, scope_id, info, at, until) for root in roots
        )

    def built_on_own_objects(self, acquisition: Acquisition, removal_call: cst.Call) -> bool:
        """The acquisition builds an object of a same-file class (``rec = Recorder(net)``),
        or calls a plain function that hands back handles (of this file, or another's:
        ``handles = attach(model, seen)``), on this call's own objects: every argument
        a literal or a local that holds a copy or a build and that nothing but this
        call hands out before ``removal_call`` (:meth:`_own_until`, whose wrapping rule
        keeps ``rec`` to the same test), or a part of one (``attach(ref.layers, seen)``).
        If what runs before the removal raises, the models, the object and their hooks
        go with the call."""
        helper = acquisition.helper
        call = acquisition.call
        if not isinstance(call, cst.Call):
            return False
        plain_function = isinstance(call.func, cst.Name) and not acquisition.on_other
        if not (
            (helper is not None and helper.name == "__init__")
            or (
                plain_function
                and (acquisition.evidence is not None or (helper and helper.class_name is None))
            )
        ):
            return False
        scope_id = self.scope_id(acquisition.site)
        info = self._infos.get(scope_id)
        scope = self._summary(scope_id)
        at = scope.positions.get(id(call), -1)
        until = scope.positions.get(id(removal_call), -1)
        if info is None or at < 0 or until < at or not call.args:
            return False
        bound = _bound_here(info, scope)
        names = []
        for arg in call.args:
            if arg.star:
                return False
            value = arg.value
            while isinstance(value, (cst.Attribute, cst.Subscript)):  # a part of one: ``ref.layers``
                value = value.value
            if isinstance(value, cst.Name) and value.value in bound:
                if not _plain_container(value.value, info, bound):
                    names.append(value.value)
            elif not _fresh_part(arg.value, info, bound, 0, self._builders(info)):
                return False
        return bool(names) and all(
            self._own_until(
                name, scope_id, info, at, until, handed_to_call=helper is None or helper.name != "__init__"
            )
            for name in names
        )

    def reinstalled_after(self, acquisition: Acquisition, removal: Removal) -> bool:
        """The function takes the hooks of ``acquisition`` (kept on ``self``) off with
        ``removal`` only for a moment: the same acquisition (the same setup method, or
        the same registration's code) runs again later in the block that holds the
        removal's statement, and nothing after it removes that store in the function
        (``self.install(); ...; self.strip(); snapshot = deepcopy(model);
        self.install()``).  The hooks are meant to stay on when the function ends, so
        what raises before the removal leaves them where they belong."""
        from hooklint.analysis.lifetime import common_level, statement_path, statement_site

        flow = acquisition.flow
        if not (flow.target or "").startswith("self."):
            return False
        scope_id = self.scope_id(acquisition.site)
        path_m = statement_path(self.facts, statement_site(removal.site))
        if path_m is None:
            return False
        for other in self.acquisitions(scope_id):
            if other is acquisition or other.site.order <= removal.site.order:
                continue
            if not flow.stores & other.flow.stores or not self._same_acquisition(acquisition, other):
                continue
            path_o = statement_path(self.facts, statement_site(other.site))
            levels = common_level(path_m, path_o) if path_o is not None else None
            if levels is None or levels[1] is not path_o[-1] or levels[1].index <= levels[0].index:
                continue  # not in the removal's block, after it: it may not run
            if any(r.site.order > other.site.order for r in self.removals_of(flow.stores, scope_id)):
                continue  # removed again before the end: off is the state the function leaves
            return True
        return False

    def _same_acquisition(self, first: Acquisition, second: Acquisition) -> bool:
        """The same setup method called, or registrations of the same code."""
        if first.helper is not None or second.helper is not None:
            return first.helper is second.helper
        if first.registration is None or second.registration is None:
            return False
        return self.facts.code(first.registration.call) == self.facts.code(second.registration.call)

    def _hooked_roots(self, registration: Registration, scope_id: int, at: int) -> set[str | None]:
        """The locals whose objects the registration hooks, or parts of them: the
        receiver's root name, what a loop it names walks, or what a local it names was
        bound to (``layer = dict(model.named_modules())[name]``: ``model``)."""
        receiver = _receiver_root(registration)
        if receiver is None:
            return set()
        name = receiver.value
        walked = loop_iterable(registration.site, name)
        if walked is not None:
            return _root_names(walked)
        raw = f"{self.owner(name, scope_id)}|{name}"
        values = [v for p, v in self._summary(scope_id).values.get(raw, []) if p < at]
        if len(values) == 1 and isinstance(values[0], (cst.Attribute, cst.Subscript)):
            return _root_names(values[0])  # a part of another local's object
        if len(values) == 1 and (looked_up := _part_lookup(values[0])) is not None:
            return _root_names(looked_up)  # ``sub = clone.get_submodule(name)``
        return {name}

    def _own_until(
        self, name: str, scope_id: int, info: FunctionInfo, at: int, until: int, handed_to_call: bool = False
    ) -> bool:
        """``name`` holds this call's own object at ``at`` (every binding before it a
        copy or a build; for a parameter, its last binding before it) and no event
        hands that object out, and no nested def names it, before ``until``.
        ``handed_to_call``: passing it to the call at ``at`` (the acquisition) is not
        handing it out."""
        raw = f"{self.owner(name, scope_id)}|{name}"
        if not raw.startswith(f"def:{scope_id}|") or len(self._members(raw)) > 1:
            return False
        scope = self._summary(scope_id)
        bindings = _held_at(scope, raw, name, info, at)
        if len(bindings) > 1:  # a top-level rebinding replaces what the name held before
            start = _since_top_binding(bindings, info, name, at)
            bindings = [(p, v) for p, v in bindings if p >= start]
        if len(bindings) > 1:  # ``model = model.to(device)`` keeps the object it had
            bindings = [(p, v) for p, v in bindings if not _rebinds_itself(v, name)] or bindings
        if not bindings and name not in info.params:
            # bound only by unpacking what one call returns (``net, x = build()``): the
            # call's whole result is new when the call builds anew
            bindings = self._unpacked_values(info, name)
        bound = _bound_here(info, scope)
        if not bindings or not all(
            _copies(_made(v)) or _fresh_object(v, info, bound, builders=self._builders(info))
            for _, v in bindings
        ):
            return False
        start = bindings[0][0]
        events = sorted(
            p
            for kind, keeper, p in scope.events.get(raw, ())
            if start < p < until
            and not (handed_to_call and p == at and kind == "passed")
            and not self._wrapped_here(name, kind, keeper, scope_id, info, until)
        )
        last, value = bindings[-1]
        value = _made(value)
        if _copies(value) and any(_is_name(arg.value, name) for arg in value.args):
            events = [p for p in events if p > last][1:]  # ``model = copy.deepcopy(model)``
        if events:
            return False
        return not any(_mentions(nested.node, name) for nested in info.nested.values())

    def _wrapped_here(
        self, name: str, kind: str, keeper: str | None, scope_id: int, info: FunctionInfo, until: int
    ) -> bool:
        """The event hands ``name``'s object to a build that a local keeps and that is
        this call's own too (``wrapped = nn.Sequential(net)``, ``wrapper = Wrapper(net)``:
        a new object from ``name`` and imported names or literals, bound once, handed out
        by nothing before ``until``, named by no nested def): whatever raises drops
        both."""
        if kind != "passed" or keeper is None or not keeper.startswith(f"def:{scope_id}|"):
            return False
        local = keeper.split("|", 1)[1]
        if local == name or local in info.params or len(self._members(keeper)) > 1:
            return False
        scope = self._summary(scope_id)
        values = [(p, v) for p, v in scope.values.get(keeper, []) if p < until]
        if len(values) != 1 or not isinstance(values[0][1], cst.Call):
            return False
        made, value = values[0]
        if not any(_is_name(arg.value, name) for arg in value.args):
            return False  # the event is another call's
        bound = _bound_here(info, scope) - {name}
        if not _fresh_object(value, info, bound, builders=self._builders(info)):
            return False
        if any(made < p < until for _, _, p in scope.events.get(keeper, ())):
            return False
        return not any(_mentions(nested.node, local) for nested in info.nested.values())

    def _handed_back(self, value: cst.BaseExpression, scope_id: int) -> str | None:
        """``x`` of ``helper(x)``, a same-file function whose every ``return`` gives back
        the parameter ``x`` is passed to; or of a plain alias ``x``."""
        if isinstance(value, cst.Name):
            return value.value
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
            return None
        helper = self._function_named(value.func.value, self._infos.get(scope_id))
        handed = returned_parameter(self.facts, helper) if helper is not None else None
        if handed is None:
            return None
        passed = argument_for(value, helper.params, handed)  # type: ignore[union-attr]
        return passed.value if isinstance(passed, cst.Name) else None

    def _computed_tensor(self, name: str, scope_id: int, info: FunctionInfo, depth: int) -> bool:
        """Every binding of the local ``name`` computes a tensor in this call
        (:func:`_computes_tensor`): an activation, a conversion of an argument, an
        element or a method result of such a tensor.  A parameter, or a local with a
        binding this model does not record (a tuple target), is not one."""
        if name in info.params or depth > 4:
            return False
        raw = f"{self.owner(name, scope_id)}|{name}"
        if not raw.startswith(f"def:{scope_id}|"):
            return False
        values = self._summary(scope_id).values.get(raw, [])
        if not values or not _plain_bindings_only(self.facts.body_nodes(info.node), name):
            return False
        return all(
            _computes_tensor(
                v,
                lambda n: self._computed_tensor(n, scope_id, info, depth + 1),
                info,
                lambda call: depth < 2 and self._returns_computed(call, info),
            )
            for _, v in values
        )

    def on_tensor_made_just_before(
        self, registration: Registration, inside: cst.CSTNode | None = None
    ) -> bool:
        """A tensor hook on a local (or an attribute of ``self``: ``self.out =
        self.proj(x)``, then ``self.out.register_hook(f)``) that the function binds,
        last before the registration in the blocks around it, to a tensor computed in
        this call (``x = layer(x)`` in the loop body that hooks ``x``), and that nothing
        binds after it in a loop around it: the hook is on this pass's tensor, whatever
        the name held before (a parameter, the last call's tensor).  ``inside``: a loop
        around the registration whose body must bind it so (a new tensor on each pass:
        ``loss = model(batch).mean()``)."""
        from hooklint.analysis.lifetime import statement_path, statement_site
        from hooklint.analysis.statements import chains_bound, is_loop

        receiver = registration.receiver
        if registration.api.owner != "tensor":
            return False
        if isinstance(receiver, cst.Name):
            name = receiver.value
        elif _self_attribute(receiver):
            name = f"self.{receiver.attr.value}"  # type: ignore[union-attr]
        else:
            return False
        scope_id = self.scope_id(registration.site)
        info = self._infos.get(scope_id)
        path = statement_path(self.facts, statement_site(registration.site))
        if info is None or not path:
            return False
        loops = [index for index, level in enumerate(path) if is_loop(level.statement)]
        if (
            loops
            and any(  # a later statement of the loop's pass binds it again
                name in chains_bound(s)
                for level in path[loops[0] + 1 :]
                for s in level.block[level.index + 1 :]
            )
        ):
            return False
        levels = path
        if inside is not None:
            at = next((k for k, level in enumerate(path) if level.statement is inside), None)
            if at is None:
                return False
            levels = path[at + 1 :]  # the loop's body, down to the registration
        for level in reversed(levels):
            for statement in reversed(level.block[: level.index]):
                if name not in chains_bound(statement):
                    continue
                value = _assigned_value(statement, name)
                if value is None:
                    value = _unpacked_from_call(statement, name)  # ``h, c = cell(x, state)``
                if value is None:  # bound inside a block: every binding must compute one
                    return "." not in name and self._computed_tensor(name, scope_id, info, 0)
                return _computes_tensor(
                    value,
                    lambda n: self._computed_tensor(n, scope_id, info, 1),
                    info,
                    lambda call: self._returns_computed(call, info),
                )
        return False

    def _returns_computed(self, value: cst.BaseExpression, info: FunctionInfo) -> bool:
        """``value`` calls a method of the caller's class (or a same-file base) on
        ``self`` whose every ``return`` computes a tensor in that call
        (``spike = self.fire()``, where ``fire`` returns ``self.surrogate(v - th)``)."""
        if not (isinstance(value, cst.Call) and _on_self(value) and info.class_name is not None):
            return False
        name = value.func.attr.value  # type: ignore[attr-defined]
        method = None
        for class_name in [info.class_name, *self._same_file_bases(info.class_name)]:
            method = self.facts.method(class_name, name)
            if method is not None:
                break
        if method is None or method.node is info.node:
            return False
        scope_id = id(method.node)
        returns = [node.value for node in self.facts.body_nodes(method.node) if isinstance(node, cst.Return)]
        return bool(returns) and all(
            r is not None
            and _computes_tensor(r, lambda n: self._computed_tensor(n, scope_id, method, 2), method)
            for r in returns
        )

    def lives_on_module(self, registration: Registration) -> bool:
        """A tensor hook in the ``forward`` of an ``autograd.Function`` subclass on an
        argument that every same-file ``Cls.apply(...)`` fills with a module attribute
        (``self.weight``): a parameter, which outlives the call, so its hooks pile up."""
        receiver = registration.receiver
        if registration.api.owner != "tensor" or not isinstance(receiver, cst.Name):
            return False
        info = self._infos.get(self.scope_id(registration.site))
        if info is None or info.name != "forward" or info.class_name is None:
            return False
        node = self.facts.classes.get(info.class_name)
        if node is None or not any(self.facts.code(b.value).endswith("Function") for b in node.bases):
            return False
        params = info.params
        if receiver.value not in params[1:]:
            return False
        index = params.index(receiver.value) - 1  # ``ctx`` is not passed to ``apply``
        applies = [
            c
            for c in self.facts.calls
            if c.attr == "apply" and self.facts.code(c.node.func.value) == info.class_name  # type: ignore[attr-defined]
        ]
        for call in applies:
            positional = [a.value for a in call.node.args if a.keyword is None and not a.star]
            if index >= len(positional):
                return False
            value = positional[index]
            if not (isinstance(value, cst.Attribute) and self.facts.code(value).startswith("self.")):
                return False
        return bool(applies)

    def _is_setup_call(
        self, call: CallSite, helper: FunctionInfo, scope: _HandleSummary, depth: int = 0
    ) -> bool:
        """``self.register_hooks(model)``, ``self._attach(m)``, ``net.apply(self._attach)``:
        from a method, a call of a method of this class that hands nothing back, and
        whose name says it installs hooks (its body may be a subclass's) or whose body
        puts the handles it registers into ``self.*`` stores."""
        if not (
            helper.class_name is not None
            and isinstance(call.node.func, cst.Attribute)
            and call.use.role == "discarded"
            and scope.info is not None
            and scope.info.class_name is not None
        ):
            return False
        name = helper.name.lower()
        return any(word in name for word in SETUP_WORDS) or self._fills_own_stores(helper, depth)

    def _fills_own_stores(self, method: FunctionInfo, depth: int) -> bool:
        """The method registers hooks and keeps every handle in a store of its instance
        (``self.handles.append(m.register_forward_hook(...))``)."""
        return bool(self._own_stores(method, depth))

    def _own_stores(self, method: FunctionInfo, depth: int) -> set[str]:
        """The stores of its instance a method keeps the handles it registers in (every
        one of them, possibly through a local: ``h = reg(...)``, ``self.h = h``); empty when
        it registers none or keeps one elsewhere."""
        if depth >= HELPER_DEPTH or method.class_name is None:
            return set()
        root = f"class:{self._root_class(method.class_name)}|"
        local = f"def:{id(method.node)}|"
        found: set[str] = set()
        for acquisition in self.acquisitions(id(method.node), depth + 1):
            flow = acquisition.flow
            if acquisition.registration is None and not (
                flow.on_object and flow.stores and all(s.startswith(root) for s in flow.stores)
            ):
                continue  # (``self.model.apply(attach)`` keeps handles on the instance's model)
            # a store is the instance's when it or an alias is (``self.h = h``)
            owned = [any(m.startswith(root) for m in self._members(s)) for s in flow.stores]
            if (
                flow.escapes is not None
                or not any(owned)
                or not all(mine or s.startswith(local) for s, mine in zip(flow.stores, owned))
            ):
                return set()
            found.update(self.find(s) for s, mine in zip(flow.stores, owned) if mine)
        return found

    def own_stores_filled(self, method: FunctionInfo, depth: int = 0) -> set[str]:
        """The ``self.*`` stores, by code (``self.handles``), that :meth:`_own_stores`
        finds: what a caller in another file sees filled (a module summary's ``fills``)."""
        if method.class_name is None:
            return set()
        root = f"class:{self._root_class(method.class_name)}|"
        return {
            member.partition("|")[2]
            for store in self._own_stores(method, depth)
            for member in self._members(store)
            if member.startswith(root)
        }

    def _constructor_fill_flow(
        self, call: CallSite, depth: int, class_name: str | None = None
    ) -> tuple[FunctionInfo, Flow] | None:
        """``probe = Probe(model)`` where ``Probe`` is a class of this file whose
        ``__init__`` keeps the handles it registers in ``self`` stores that a method of
        the class removes (``probe.close()``): building the object acquires them, and
        the flow's stores are the class's, as a removal through that method on the
        object names them (:meth:`other_object_method`).  Not when the class's
        ``__del__`` removes them too: dropping the object, as an exception does,
        removes its hooks; unless a hook holds the object (a bound method), which keeps
        ``__del__`` from running.  ``class_name``: the class a factory the call runs
        builds (:meth:`_built_by_factory`)."""
        func = call.node.func
        if class_name is None:
            if not isinstance(func, cst.Name) or func.value not in self.facts.classes:
                return None
            class_name = func.value
        init = self.facts.method(class_name, "__init__")
        if init is None:
            return None
        stores = self._filled_and_removed(init, depth)
        if not stores:
            return None
        finalizer = self.facts.method(class_name, "__del__")
        if (
            finalizer is not None
            and any(self.find(r.store) in stores for r in self.removals_in(id(finalizer.node)))
            and not self._hooks_hold_object(init)
        ):
            return None  # the object's end removes them (``__del__``): no span to protect
        return init, Flow(stores=stores, target=f"{class_name}()")

    def returned_objects(self, helper: FunctionInfo, depth: int = 0) -> tuple[str, frozenset[str]] | None:
        """``taps = make_taps(model)``: a same-file helper whose every ``return`` hands
        back one local list of objects of one same-file class (:meth:`_element_class`),
        on which it calls a method that keeps handles in stores of that class that a
        method of the class removes (``tap.attach(module)``; later ``tap.detach()``):
        the class and those stores.  None otherwise (also past
        :data:`HELPER_DEPTH`, and for a helper that reaches itself)."""
        if depth > HELPER_DEPTH:
            return None
        key, memo = id(helper.node), (id(helper.node), depth)  # per depth, as _returned
        if memo in self._objects_memo:
            return self._objects_memo[memo]
        self._objects_memo[memo] = None  # a helper that reaches itself returns nothing more
        returned = {
            r.value.value if isinstance(r.value, cst.Name) else None
            for r in self.facts.body_nodes(helper.node)
            if isinstance(r, cst.Return)
        }
        name = returned.pop() if len(returned) == 1 else None
        class_name = self._element_class(None, cst.Name(name), key, depth + 1) if name else None
        if class_name is None:
            return None
        stores = frozenset().union(
            *(
                a.flow.stores
                for a in self.acquisitions(key, depth + 1)
                if a.on_other and a.helper is not None and a.helper.class_name == class_name
            )
        )
        found = self._objects_memo[memo] = (class_name, stores) if stores else None
        return found

    def _built_by_factory(self, helper: FunctionInfo) -> str | None:
        """The same-file class whose object every ``return`` of ``helper`` builds
        (``def _get_extractor(self): return Extractor(self.model, self.layer)``)."""
        built = {
            r.value.func.value
            if isinstance(r.value, cst.Call) and isinstance(r.value.func, cst.Name)
            else None
            for r in self.facts.body_nodes(helper.node)
            if isinstance(r, cst.Return)
        }
        name = built.pop() if len(built) == 1 else None
        return name if name in self.facts.classes else None

    def _hooks_hold_object(self, method: FunctionInfo) -> bool:
        """A hook that ``method`` (or a method of its class it calls) registers holds the
        object (:func:`~hooklint.analysis.hook_roles.holds_registering_object`): its
        ``__del__`` cannot run while the hooked module lives."""
        from hooklint.analysis.hook_roles import holds_registering_object

        scopes = [id(method.node)] + [
            id(info.node)
            for call in self._calls.get(id(method.node), ())
            if (info := self.callee(call)) is not None and info.class_name == method.class_name
        ]
        return any(holds_registering_object(r) for s in scopes for r in self._regs.get(s, ()))

    def _parameter_fill_flow(self, call: CallSite, scope_id: int, helper: FunctionInfo) -> Flow | None:
        """``attach(module)`` where the same-file function ``attach`` keeps every handle
        it registers on an attribute of one of its parameters (``module._handle =
        module.register_forward_hook(fn)``), and some function of the file removes that
        attribute of its own parameter (``def detach(module): module._handle.remove()``):
        the call acquires what the object it passes holds.  The flow's store is that
        argument, as a removal helper's call (``detach(module)``) names it: an
        acquire/release pair of helpers over one object."""
        if call.use.role != "discarded" or helper.class_name is not None:
            return None
        filled = self._parameter_fills(helper)
        if not filled:
            return None
        names = helper.params
        stores: set[str] = set()
        targets: list[str] = []
        for name, arg in _parameters_passed(self.as_called(call, helper), names):
            if name not in filled or arg.star:
                continue
            raw = self.raw_key(arg.value, scope_id)
            if raw is None:
                return None
            stores.add(raw)
            targets.append(f"{self.facts.code(arg.value)}.{filled[name]}")
        if not stores or len(stores) != len(filled):
            return None
        return Flow(stores=stores, target=targets[0], on_object=True)

    def _registration_flow(self, registration: Registration, scope: _HandleSummary, scope_id: int) -> Flow:
        """Where a registration's handle goes; a same-file wrapper's call that returns
        nothing but fills the list it is given (:meth:`_list_fill_flow`) puts them there."""
        if registration.wrapper is not None and registration.handle.role == "discarded":
            call = next((c for c in scope.calls if c.node is registration.call), None)
            helper = self.callee(call) if call is not None else None
            if helper is not None:
                flow = self._list_fill_flow(call, scope_id, helper)
                if flow is not None:
                    return flow
        return self.flow(registration.handle, scope_id, registration.call)

    def _list_fill_flow(self, call: CallSite, scope_id: int, helper: FunctionInfo) -> Flow | None:
        """``attach(model, handles)`` where the same-file function ``attach`` puts every
        handle it registers into one of its parameters (``handles.append(
        m.register_forward_hook(fn))``, itself or through its own calls of such
        helpers, a recursive walker's) and removes none: the caller's container that
        the call passes holds them from then on."""
        if call.use.role != "discarded" or helper.class_name is not None:
            return None
        param = self._list_filled(helper)
        if param is None:
            return None
        passed = argument_for(self.as_called(call, helper), helper.params, param)
        raw = self.raw_key(passed, scope_id) if passed is not None else None
        if raw is None:
            return None
        return Flow(stores={raw}, target=self.facts.code(passed))

    def _list_filled(self, helper: FunctionInfo) -> str | None:
        """The parameter every handle ``helper`` registers goes into (see
        :meth:`_list_fill_flow`), or None."""
        key = id(helper.node)
        if key in self._list_fills:
            return self._list_fills[key]
        self._list_fills[key] = None  # a cycle (a recursive walker) adds nothing
        if key not in self._regs:
            return None  # it registers nothing itself
        owner = f"def:{key}|"
        filled: set[str] = set()
        for acquisition in self.acquisitions(key, depth=1):
            flow = acquisition.flow
            if flow.scoped or flow.discarded:
                return None
            # ``h = reg(...)`` … ``handles.append(h)``: the local on the way is no store
            stores = [s for s in flow.stores if not self._local_of(s, owner, helper)] or list(flow.stores)
            if len(stores) != 1:
                return None
            store = stores[0]
            name = store[len(owner) :]
            if not store.startswith(owner) or name not in helper.params:
                return None
            if flow.escapes and not (flow.escapes == "passed" and self._passed_only_to_itself(helper, name)):
                return None
            filled.add(name)
        if len(filled) != 1 or filled & {"self", "cls"}:
            return None
        name = next(iter(filled))
        if self.removals_of({f"{owner}{name}"}, key):
            return None  # it removes them too: a removal helper, not an installer
        self._list_fills[key] = name
        return name

    @staticmethod
    def _local_of(store: str, owner: str, helper: FunctionInfo) -> bool:
        """``store`` is a plain local name of ``helper`` (``owner``: its key prefix), not
        a parameter or an attribute chain."""
        name = store[len(owner) :] if store.startswith(owner) else ""
        return bool(name) and name.isidentifier() and name not in helper.params

    def _passed_only_to_itself(self, helper: FunctionInfo, name: str) -> bool:
        """Every call in ``helper`` that is given its parameter ``name`` is a call of
        ``helper`` itself (a recursive walker handing its list on)."""
        for call in self._summary(id(helper.node)).calls:
            if any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.node.args):
                if call.callee != helper.name or call.attr is not None:
                    return False
        return True

    def _parameter_fills(self, helper: FunctionInfo) -> dict[str, str]:
        """For a function whose every acquisition keeps its handles in attributes of
        its parameters: parameter -> the first such attribute, when for each attribute
        another function of the file removes that attribute of a parameter of its own;
        else empty.  The acquisitions are its registrations (``module._h =
        module.register_forward_hook(fn)``) and its calls of such functions with its
        own parameter (``attach(module)``, ``module.apply(attach)``: a start function
        over a whole model).  A method's ``self`` is its instance, not a parameter the
        caller passes."""
        key = id(helper.node)
        known = self._param_fills.get(key)
        if known is not None:
            return known
        self._param_fills[key] = {}  # a cycle fills nothing
        if key not in self._regs and not self._runs_a_filler(helper):
            return {}
        found: dict[str, str] = {}
        attributes: set[str] = set()
        acquisitions = self.acquisitions(key, depth=1)
        for acquisition in acquisitions:
            flow = acquisition.flow
            if flow.escapes or flow.scoped or flow.discarded or len(flow.stores) != 1:
                return {}
            store = next(iter(flow.stores))
            if acquisition.registration is None:
                # a filler's call: its store is the object passed, its target the attribute
                if not flow.on_object or flow.target is None:
                    return {}
                owner, _, root = store.partition("|")
                attribute = flow.target.rsplit(".", 1)[-1]
            else:
                # ``h = reg(...)`` … ``module._h = h``: one store, named both ways
                kept = self._parameter_attribute(store, key, helper)
                if kept is None:
                    return {}
                owner, root, attribute = f"def:{key}", *kept
            if owner != f"def:{key}" or root not in helper.params:
                return {}
            if helper.class_name is not None and root in ("self", "cls"):
                return {}
            found.setdefault(root, attribute)
            attributes.add(attribute)
        if not found or not all(self._parameter_attribute_removed(a, key) for a in attributes):
            found = {}
        self._param_fills[key] = found
        return found

    def _parameter_attribute(self, store: str, key: int, helper: FunctionInfo) -> tuple[str, str] | None:
        """``(parameter, attribute)`` when ``store`` (of the function ``key``) is, or is
        one with, ``<parameter>.<attribute>`` of ``helper``'s parameters."""
        found = None
        for member in self._members(store):
            owner, _, code = member.partition("|")
            root, dot, attribute = code.partition(".")
            if owner == f"def:{key}" and dot and "." not in attribute and root in helper.params:
                if found is not None and found != (root, attribute):
                    return None
                found = (root, attribute)
        return found

    def _runs_a_filler(self, helper: FunctionInfo) -> bool:
        """Whether ``helper`` calls (by name, bound, or through ``X.apply``) a same-file
        function that fills its parameters' attributes (:meth:`_parameter_fills`)."""
        for call in self._calls.get(id(helper.node), ()):
            ran = self.callee(call) or self.applied(call)
            if (
                ran is not None
                and ran is not helper
                and ran.class_name is None
                and self._parameter_fills(ran)
            ):
                return True
        return False

    def _parameter_attribute_removed(self, attribute: str, besides: int) -> bool:
        """Whether a function of the file (not ``besides``) removes ``<p>.<attribute>``
        of one of its parameters ``p`` (a direct removal: only scopes with removal
        calls hold one)."""
        for scope_id in self._removal_calls:
            info = self._infos.get(scope_id)
            if info is None or scope_id == besides:
                continue
            for removal in self._summary(scope_id).removals:
                for member in self._members(removal.store):  # one store may go by several names
                    owner, _, code = member.partition("|")
                    root, dot, rest = code.partition(".")
                    if owner == f"def:{scope_id}" and dot and rest == attribute and root in info.params:
                        return True
        return False

    def _filled_and_removed(self, method: FunctionInfo, depth: int) -> set[str]:
        """The stores of its instance a method fills with handles (:meth:`_own_stores`)
        that some method of its class removes."""
        filled = self._own_stores(method, depth)
        if not filled:
            return set()
        return {s for s in self.class_removed(method.class_name) if self.find(s) in filled}  # type: ignore[arg-type]

    def class_removed(self, class_name: str) -> set[str]:
        """The ``self.*`` stores that some method of a class (or its same-file bases)
        removes, itself or through a def it runs on every submodule of a model it holds."""
        root = f"class:{self._root_class(class_name)}|"
        found: set[str] = set()
        for info in self.facts.functions:
            if info.class_name is None or self._root_class(info.class_name) != root[6:-1]:
                continue
            scope_id = id(info.node)
            # its own removals, and those of the defs it runs on every submodule
            # (``self.model.apply(detach)``: the handles its modules hold)
            applying = {id(c.node) for c in self._calls.get(scope_id, ()) if self.applied(c) is not None}
            removals = [
                *self._summary(scope_id).removals,
                *(r for r in self.removals_in(scope_id) if id(r.call) in applying),
            ]
            for removal in removals:
                if self.find(removal.store).startswith(root) or removal.store.startswith(root):
                    found.add(self.find(removal.store))
        return found

    def scopes(self) -> list[int]:
        """The scopes the model walked (those with registrations or removals, and the
        methods of their classes), module first."""
        return list(self._summaries)

    def acquisition_of(self, registration: Registration) -> Acquisition:
        for acquisition in self.acquisitions(self.scope_id(registration.site)):
            if acquisition.registration is registration:
                return acquisition
        return Acquisition(registration.call, registration.site, Flow(), registration=registration)

    def flow(
        self,
        use: HandleUse,
        scope_id: int,
        call_node: cst.Call | None = None,
        positions: frozenset[int] | None = None,
    ) -> Flow:
        """Follow a value's use (a registration's handle) through its scope.
        ``positions``: a helper's call returns a tuple with the handles at these places;
        unpacked (``handles, shapes = helper()``), only those targets hold them."""
        flow = Flow()
        final = use.final
        role = final.role
        if role in ("with", "exit_stack"):
            flow.scoped = True
            return flow
        if role in ("returned", "yielded"):
            flow.escapes = role
            return flow
        if role == "argument":
            flow.escapes = "passed"
            return flow
        if role == "discarded":
            flow.discarded = True
            return flow
        if role not in ("bound", "appended"):
            return flow
        nodes = [n for n in final.target_nodes if not isinstance(n, str)]
        if positions is not None and len(nodes) == 1 and isinstance(nodes[0], (cst.Tuple, cst.List)):
            elements = nodes[0].elements
            if not any(isinstance(e, cst.StarredElement) for e in elements):
                nodes = [elements[i].value for i in sorted(positions) if i < len(elements)]
        flow.single = role == "bound" and use.role == "bound" and len(nodes) == 1 and _is_chain(nodes[0])
        if nodes:
            flow.target = self.facts.code(_store_base(nodes[0]) or nodes[0])
        todo = [k for k in (self.raw_key(n, scope_id) for n in nodes) if k is not None]
        scope = self._summary(scope_id)
        # A name bound by this statement holds this handle only until it is bound again.
        start = scope.positions.get(id(call_node), -1) if call_node is not None else -1
        windows: dict[str, tuple[int, int]] = {}
        if start >= 0 and len(todo) == 1 and isinstance(nodes[0], cst.Name) and use.role == "bound":
            later = [
                p
                for p in scope.bindings.get(todo[0], ())
                if p > start
                and not self._wraps(scope, todo[0], p, nodes[0].value)
                and not self._other_branch(scope, todo[0], p, call_node)
            ]
            windows[self.find(todo[0])] = (start, min(later) if later else 1 << 60)
            site = self._call_sites().get(id(call_node))
            flow.window = Window(
                self.find(todo[0]),
                *windows[self.find(todo[0])],
                scope_id,
                site is None or bool(site.loops),
                todo[0],
            )
        events: dict[str, list[tuple[str, str | None, int]]] = {}
        for raw, items in scope.events.items():
            events.setdefault(self.find(raw), []).extend(items)
        while todo:
            key = self.find(todo.pop())
            if key in flow.stores:
                continue
            flow.stores.add(key)
            low, high = windows.get(key, (-1, 1 << 60))
            for kind, other, position in events.get(key, ()):
                if position >= 0 and not low < position < high:
                    continue
                if kind == "into" and other is not None:
                    if self.find(other) not in flow.stores:
                        flow.single = False
                        todo.append(other)
                elif kind == "scoped":
                    flow.scoped = True
                elif kind in ("returned", "yielded", "passed") and flow.escapes is None:
                    flow.escapes = kind
        return flow

    def _is_record(self, call: cst.Call) -> bool:
        """A call of a record class of this file (``LensHandle(h, permanent)``, a
        dataclass pairing a handle with a flag): one without methods of its own (dunder
        methods aside), so it holds what it is given and does nothing with it."""
        if not isinstance(call.func, cst.Name):
            return False
        node = self.facts.classes.get(call.func.value)
        if node is None:
            return False
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        return not any(
            isinstance(s, cst.FunctionDef)
            and not (s.name.value.startswith("__") and s.name.value.endswith("__"))
            for s in body
        )

    def _other_branch(self, scope: _HandleSummary, raw: str, position: int, call_node: cst.Call) -> bool:
        """The binding of ``raw`` at ``position`` is a call in another branch of an ``if``
        than ``call_node`` (``if conv: h = reg(a) else: h = reg(b)``): it never runs
        after this one, so it does not end what the name holds."""
        from hooklint.analysis.guards import in_other_branches

        sites = self._call_sites()
        here = sites.get(id(call_node))
        for at, value in scope.values.get(raw, ()):
            if at == position:
                there = sites.get(id(value))
                return here is not None and there is not None and in_other_branches(here, there)
        return False

    def _call_sites(self) -> dict[int, Site]:
        """The site of each call of the module (registrations included), by node."""
        if self._sites is None:
            self._sites = {id(c.node): c.site for c in self.facts.calls}
            self._sites.update((id(r.call), r.site) for r in self.facts.registrations)
        return self._sites

    def _wraps(self, scope: _HandleSummary, raw: str, position: int, name: str) -> bool:
        """The binding of ``raw`` at ``position`` keeps what the name held: ``h =
        Record(h, ...)`` (a class of this file built around it, such as a dataclass
        that pairs a handle with a flag) or ``h = list(h)``."""
        for at, value in scope.values.get(raw, ()):
            if at != position or not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
                continue
            if self._is_record(value) or value.func.value in COLLECTION_BUILTINS:
                return any(isinstance(a.value, cst.Name) and a.value.value == name for a in value.args)
        return False

    def nested_fill_site(self, acquisition: Acquisition) -> Site | None:
        """Where the function around a nested def runs it, when the def puts its hooks
        only into stores of that function (``hooks.append(reg(...))`` in ``def
        attach(m)``): the first call of the def there, or of a call handed the def
        (``model.apply(attach)``, ``map(attach, ms)``), or of another def nested in that
        function that runs it, however many such defs deep (``def walk(m): attach(m);
        for c in m.children(): walk(c)``, then ``walk(model)``); None otherwise."""
        flow = acquisition.flow
        if not flow.stores or flow.escapes is not None or flow.scoped:
            return None
        info = self._infos.get(self.scope_id(acquisition.site))
        parent = info.parent if info is not None else None
        if parent is None:
            return None
        owners = {self.find(s).partition("|")[0] for s in flow.stores}
        if f"def:{id(parent.node)}" not in owners or not owners <= {
            f"def:{id(parent.node)}",
            f"def:{id(info.node)}",  # ``h = reg(...)`` then ``hooks.append(h)``
        }:
            return None
        runners = self._nested_runners(parent, info.name)
        hooked = self._hook_registrations(id(parent.node))
        for call in self._summary(id(parent.node)).calls:
            if _runs_one_of(call.node, runners):
                # Registered as a hook (``layer.register_forward_hook(on_forward)``),
                # the def runs when the module does, not here: where is not known.
                return None if id(call.node) in hooked else call.site
        return None

    def _hook_registrations(self, scope_id: int) -> set[int]:
        """The registration calls of a scope (their nodes' ids)."""
        return {id(r.call) for r in self._regs.get(scope_id, ())}

    def _nested_runners(self, parent: FunctionInfo, name: str) -> set[str]:
        """``name`` and the names of the defs nested in ``parent`` that run it (call it
        or hand it on, not as a hook they register), directly or through one another."""
        runners = {name}
        pending = True
        while pending:
            pending = False
            for sibling in parent.nested.values():
                if sibling.name in runners:
                    continue
                hooked = self._hook_registrations(id(sibling.node))
                if any(
                    _runs_one_of(c.node, runners) and id(c.node) not in hooked
                    for c in self._summary(id(sibling.node)).calls
                ):
                    runners.add(sibling.name)
                    pending = True
        return runners

    def removed_through_parameter(self, stores: set[str]) -> bool:
        """Every store is an attribute of a parameter of the function that fills it
        (``tree.handles``: the caller's object; a local the handle passes through on the
        way there aside), and another function of the file
        removes that attribute of a parameter of the same name (``def close(tree):
        for h in tree.handles: h.remove()``): a setup/teardown pair over the object
        the caller passes to both."""
        if not stores:
            return False
        wanted: set[str] = set()
        for store in stores:
            owner, _, code = store.partition("|")
            root, dot, _rest = code.partition(".")
            info = self._function_owning(owner)
            if info is not None and not dot and root not in info.params:
                continue  # a local the handle passes through (``h = reg(...)``) ends with the call
            if not dot or info is None or root not in info.params or root in ("self", "cls"):
                return False
            wanted.add(code)
        if not wanted:
            return False
        for scope_id, info in self._infos.items():
            if info is None:
                continue
            for removal in self.removals_in(scope_id):
                owner, _, code = self.find(removal.store).partition("|")
                if code in wanted and owner == f"def:{scope_id}" and code.partition(".")[0] in info.params:
                    wanted.discard(code)
        return not wanted

    def _function_owning(self, owner: str) -> FunctionInfo | None:
        """The function whose scope a store key's owner names (``def:<id>``), if any."""
        return self._infos.get(int(owner[4:])) if owner.startswith("def:") else None

    def handed_back(self, flow: Flow, scope_id: int) -> bool:
        """The handles go back to the caller: returned, or passed to a call that the
        function returns (``return PatchHandle(hooks)``, a record of them)."""
        if flow.escapes == "returned":
            return True
        info = self._infos.get(scope_id)
        if flow.escapes != "passed" or info is None:
            return False
        locals_ = {code for code in self.store_codes(flow.stores) if "." not in code}
        for node in self.facts.body_nodes(info.node):
            if isinstance(node, cst.Return) and isinstance(node.value, cst.Call):
                passed = {a.value.value for a in node.value.args if isinstance(a.value, cst.Name)}
                if passed & locals_:
                    return True
        return False

    def in_callers_container(self, stores: set[str]) -> bool:
        """Every store is a container the caller passed in: a parameter (not ``self``/
        ``cls``) of the function that fills it (``def arm(pending): pending[m] =
        m.register_forward_hook(fn)``).  What happens to its handles after the call is
        the caller's to decide."""
        if not stores:
            return False
        for store in stores:
            owner, _, code = self.find(store).partition("|")
            info = self._function_owning(owner)
            if info is None or "." in code or code not in info.params or code in ("self", "cls"):
                return False
        return True

    def on_dynamic_attribute(self, stores: set[str]) -> bool:
        """A store is a local bound only to ``getattr(param, name)`` with a computed
        ``name`` (``cache = getattr(model, self.cache_attr)``): an object the caller's
        argument holds under a name this file does not spell, which other code may
        read back and clear."""
        for store in stores:
            owner, _, code = self.find(store).partition("|")
            info = self._function_owning(owner)
            if info is None or "." in code:
                continue
            values = self._summary(id(info.node)).values.get(f"{owner}|{code}", [])
            if values and all(_dynamic_getattr(v, info) for _, v in values):
                return True
        return False

    def removals_of(
        self, stores: set[str], scope_id: int | None = None, window: Window | None = None
    ) -> list[Removal]:
        """Removals of any of ``stores``: in one scope, or (None) wherever the stores'
        owners reach them (the owning function and its nested defs, the class's
        methods, the whole module for globals).  With the ``window`` of a handle bound
        to a name (:attr:`Flow.window`), a removal in its scope does not count when it
        runs outside the window through that name, or through another name of the same
        store bound only before the registration ran (``old = self._h`` then ``h =
        reg(...); self._h = h; old.remove()``: ``old`` holds what was there before),
        unless the registration runs in a loop (then ``old`` may hold its earlier
        handle)."""
        roots = {self.find(s) for s in stores}
        if scope_id is not None:
            scopes = [scope_id]
        else:
            scopes = list(self._summaries)
        found = []
        for sid in scopes:
            positions = self._summary(sid).positions
            for removal in self.removals_in(sid):
                root = self.find(removal.store)
                if root not in roots:
                    continue
                if window is not None and sid == window.scope and root == window.store:
                    position = positions.get(id(removal.call), -1)
                    if (
                        removal.kind == "direct"
                        and position >= 0
                        and not window.first < position < window.last
                    ):
                        continue  # the name holds another value by then
                    if (
                        not window.looped
                        and removal.store != window.name
                        and self._bound_before(sid, removal.store, window.first)
                    ):
                        continue  # a name for what the store held before this handle
                found.append(removal)
        return found

    def _bound_before(self, scope_id: int, raw: str, position: int) -> bool:
        """``raw`` is a local name of the scope bound (by assignment or a loop) only
        before walk ``position``."""
        scope = self._summary(scope_id)
        bound = [at for at, _ in scope.values.get(raw, ())] + scope.bindings.get(raw, [])
        return bool(bound) and max(bound) < position


def _parameters_passed(call: cst.Call, names: list[str]) -> Iterator[tuple[str | None, cst.Arg]]:
    """Each argument of ``call`` with the parameter among ``names`` it binds: its
    keyword, or the name at its position (None past the last name)."""
    for index, arg in enumerate(call.args):
        yield (
            (
                arg.keyword.value
                if arg.keyword is not None
                else (names[index] if index < len(names) else None)
            ),
            arg,
        )


def may_remove(facts: ModuleFacts) -> bool:
    """Whether the handle model of ``facts`` can hold a removal, decided from the
    calls alone, without building it.  Every removal the model reads comes from a
    call of the module (:meth:`HandleModel._call`, ``facts.removals``) whose callee or
    method, as the call site names them (``callee`` resolved through the imports:
    ``from tools import remove_hooks as wipe`` makes ``wipe(hs)`` one), holds
    ``remove`` (``h.remove()``, ``remove_hooks(hs)``), or that passes an attribute or
    a string holding it (``atexit.register(h.remove)``, ``getattr(h, "remove")``), or
    calls a same-file helper holding such a call; or from another file's removal
    helper, which only a name in
    :meth:`~hooklint.project.resolve.FileView.helper_names` reaches.  So with no such
    call (in any case) and no helper name, nothing is removed: a rule about removals
    can stop before the model is built."""
    if facts.removals:
        return True
    if facts.project is not None and facts.project.helper_names():
        return True
    return any(_names_remove(call) for call in facts.calls)


def _names_remove(call: CallSite) -> bool:
    """Whether a removal word or the removal method's name (in any case) is in the
    names ``call`` reads as the model does (its ``callee`` and ``attr``), or in an
    attribute or a string among its arguments: a superset of the calls from which
    the model reads a removal."""
    names = [call.callee or "", call.attr or ""]
    for arg in call.node.args:
        value = arg.value
        if isinstance(value, cst.Attribute):
            names.append(value.attr.value)
        elif isinstance(value, cst.SimpleString):
            names.append(value.value)
    return any(_mentions_removal(name) for name in names)


def _mentions_removal(name: str) -> bool:
    lowered = name.lower()
    return REMOVE_METHOD in lowered or any(word in lowered for word in REMOVAL_WORDS)


def handle_model(facts: ModuleFacts) -> HandleModel:
    """The module's handle model, built on first use."""
    return facts.memo("_handle_model", HandleModel)


# -- what identifies a hook -----------------------------------------------------------------------
def hook_key(facts: ModuleFacts, model: HandleModel, acquisition: Acquisition) -> str:
    """What identifies the hook of an acquisition, so that registrations of one hook
    into one store count as one: the API and the code of the hook argument, or of the
    value last assigned to that name (``fn = partial(record, ...)``) and the function
    a ``partial`` wraps; the called code for a helper that returns handles."""
    registration = acquisition.registration
    if registration is None:
        if acquisition.on_other and acquisition.helper is not None:
            return acquisition.helper.qualname  # ``self.points[n].add(fn)``, ``point.add(fn)``: one method
        return facts.code(acquisition.node.func)
    hook = registration.hook_arg
    if isinstance(hook, cst.Name):
        hook = model.value_at(hook, registration.call, model.scope_id(registration.site)) or hook
    if isinstance(hook, cst.Call) and hook.args:
        hook = hook.args[0].value  # functools.partial(fn, ...)
    return f"{registration.api.name}:{facts.code(hook) if hook is not None else ''}"


# -- small syntactic helpers ---------------------------------------------------------------------
def _runs_one_of(call: cst.Call, names: set[str]) -> bool:
    """``call`` calls one of the functions ``names`` (``attach(m)``) or hands one on
    (``model.apply(attach)``)."""
    if isinstance(call.func, cst.Name) and call.func.value in names:
        return True
    return any(isinstance(a.value, cst.Name) and a.value.value in names for a in call.args)


def _on_self(call: cst.Call) -> bool:
    """``self.m(...)`` or ``cls.m(...)``."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value in ("self", "cls")
    )


def _joined(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The containers a loop runs through one after another: ``a + b`` (of names or
    attribute chains) and ``chain(a, b)`` / ``itertools.chain(a, b)``; empty otherwise."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = _joined(node.left) or [node.left], _joined(node.right) or [node.right]
        parts = [*left, *right]
    elif isinstance(node, cst.Call) and (
        (isinstance(node.func, cst.Name) and node.func.value == "chain")
        or (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "chain"
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value == "itertools"
        )
    ):
        parts = [a.value for a in node.args if a.keyword is None and not a.star]
        if len(parts) != len(node.args):
            return []
    else:
        return []
    return parts if all(_is_chain(p) for p in parts) else []


def _is_chain(node: cst.CSTNode | None) -> bool:
    """A name or an attribute chain on one (``h``, ``self._hooks``); not ``None``,
    ``True`` or ``False``, which libcst also spells as names but which hold no handle."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name) and node.value not in CONSTANT_NAMES


def _with_args(node: cst.Call, args: list[cst.Arg]) -> cst.Call:
    """``node`` with ``args``; with none when libcst refuses their order (a keyword
    before a positional one): nothing is mapped then."""
    try:
        return node.with_changes(args=args)
    except cst.CSTValidationError:
        return node.with_changes(args=[])


def _partial_of(node: cst.BaseExpression) -> cst.Call | None:
    """``partial(f, ...)`` / ``functools.partial(f, ...)`` with ``f`` given first, by position."""
    if not isinstance(node, cst.Call) or dotted_name(node.func) not in ("partial", "functools.partial"):
        return None
    if not node.args or node.args[0].keyword is not None or node.args[0].star:
        return None
    return node


def applied_self_method(call: CallSite) -> str | None:
    """``m`` of ``net.apply(self.m)``: the name of the calling class's method that
    ``Module.apply`` runs, handed positionally."""
    if call.attr != "apply" or len(call.node.args) != 1:
        return None
    argument = call.node.args[0]
    value = argument.value
    if argument.keyword is not None or argument.star or not isinstance(value, cst.Attribute):
        return None
    if not (isinstance(value.value, cst.Name) and value.value.value == "self"):
        return None
    return value.attr.value


def _applied_method(facts: ModuleFacts, call: CallSite) -> FunctionInfo | None:
    """``net.apply(self._attach)``: the method of this class that ``Module.apply`` runs
    (handed positionally)."""
    name = applied_self_method(call)
    class_def = call.site.class_def
    if name is None or class_def is None:
        return None
    return facts.method(class_def.name.value, name)


def _getattr_remove(call: cst.Call) -> cst.BaseExpression | None:
    """``X`` of ``getattr(X, "remove")`` / ``getattr(X, "remove", None)``: the bound
    ``remove`` of ``X``, looked up to be called."""
    if _builtin(call) != "getattr" or len(call.args) not in (2, 3):
        return None
    name = call.args[1].value
    if isinstance(name, cst.SimpleString) and name.value[1:-1] == REMOVE_METHOD and name.value[0] in "'\"":
        return call.args[0].value
    return None


def _builtin(call: cst.Call) -> str | None:
    return call.func.value if isinstance(call.func, cst.Name) else None


def _element_call(call: cst.Call) -> cst.BaseExpression | None:
    """The store ``S`` of ``S.pop(...)``, ``S.get(k)``, ``S.popleft()``."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ELEMENT_METHODS:
        return call.func.value
    return None


def _store_base(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``d`` for ``d``, ``d[k]``, ``d.pop(k)``, ``d.values()``, ``list(d)``, ``self.d``,
    ``d.setdefault(k, [])`` (the list kept under ``k``, which ``.append(h)`` fills)."""
    for _ in range(8):
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ELEMENT_METHODS | STORE_VIEWS | {
                "setdefault"
            }:
                node = func.value
            elif (
                isinstance(func, cst.Name) and func.value in COLLECTION_BUILTINS | {"enumerate"} and node.args
            ):
                node = node.args[0].value
            else:
                return None
        else:
            break
    return node if _is_chain(node) else None


def _instance_dict_entry(node: cst.BaseExpression | None, base: cst.BaseExpression) -> str | None:
    """``model.hooks`` for ``model.__dict__["hooks"]`` or ``model.__dict__.setdefault("hooks",
    [])`` (``base``: ``model.__dict__``, what :func:`_store_base` gives): an entry of an
    object's ``__dict__`` under a literal name is that attribute; else None."""
    if not (isinstance(base, cst.Attribute) and base.attr.value == "__dict__" and _is_chain(base.value)):
        return None
    key = None
    if isinstance(node, cst.Subscript) and node.value is base and len(node.slice) == 1:
        index = node.slice[0].slice
        key = index.value if isinstance(index, cst.Index) else None
    elif (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.value is base
        and node.func.attr.value in ("setdefault", "get", "pop")
        and node.args
    ):
        key = node.args[0].value
    if not isinstance(key, cst.SimpleString) or key.prefix:
        return None
    name = key.evaluated_value
    if not isinstance(name, str) or not name.isidentifier():
        return None
    return f"{dotted_name(base.value)}.{name}"


def _element_names(node: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """Names or attribute chains that are a value itself or an element of a literal
    container (``h``, ``[h1, h2]``, ``(hook, h)``, ``{k: h}``)."""
    if node is None:
        return []
    if _is_chain(node):
        return [node]
    out: list[cst.BaseExpression] = []
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        for element in node.elements:
            out += _element_names(element.value)
    elif isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                out += _element_names(element.value)
    return out


def _loop_over(site: Site, iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """For ``for h in group`` inside ``for group in groups``: ``groups``."""
    base = _store_base(iterable)
    if not isinstance(base, cst.Name):
        return None
    for frame in reversed(site.frames):
        if frame.kind in ("def", "class"):
            return None
        if frame.kind == "for" and base.value in target_names(frame.node.target):  # type: ignore[attr-defined]
            return frame.node.iter  # type: ignore[attr-defined]
    return None


def _bound_here(info: FunctionInfo, scope: _HandleSummary) -> set[str]:
    """The names a function binds itself (parameters, names it assigns, loop and
    ``with`` targets, ``self``/``cls``): a call rooted at any other name builds from
    imports and globals (:func:`_fresh_object`; an import inside the function, ``import
    torchvision.models as models``, is one of those, not a binding)."""
    local = _local_names(info) - _imported_in(info)
    return set(info.params) | {k.partition("|")[2] for k in scope.values} | local | {"self", "cls"}


def _imported_in(info: FunctionInfo) -> set[str]:
    """The names the function's own import statements bind."""
    found: set[str] = set()
    for node in descendants(info.node.body, into_functions=False):
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    found.add(alias.asname.name.value)
                else:
                    found.add((dotted_name(alias.name) or "").partition(".")[0])
    return found


#: How deep a build's arguments are followed (nested config objects, locals holding them).
_BUILD_DEPTH = 8


def _fresh_object(
    value: cst.BaseExpression,
    info: FunctionInfo,
    bound: set[str],
    depth: int = 0,
    builders: frozenset = frozenset(),
) -> bool:
    """A call that builds a new object from imported names, literals and other such
    calls (``models.vgg16(weights=None).eval()``, ``nn.Sequential(nn.Linear(4, 4))``),
    or that loads one (:data:`LOADERS`: ``AutoModel.from_pretrained(model_id)``), or a
    call of one of ``builders`` (same-file functions that return only objects they
    build: :meth:`HandleModel._builders`), whatever it is handed; not one that looks
    one up or wraps one it was given (``getattr(model, name)``,
    ``nn.Sequential(layer)``)."""
    node = _made(value)  # ``build(...).to(device)``: the object is ``build(...)``'s
    if not isinstance(node, cst.Call) or depth > _BUILD_DEPTH:
        return False
    if (
        isinstance(node.func, cst.Name)
        and node.func.value in builders
        and (node.func.value not in bound or node.func.value in info.nested)
    ):
        return True
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in LOADERS:
        # ``AutoModel.from_pretrained(name)``: loaded anew, whatever names it, also
        # through a class a local holds (``model_cls = getattr(transformers, arch)``)
        return True
    root = node.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or root.value in bound or root.value in ("self", "cls", "getattr"):
        return False
    return all(_fresh_part(arg.value, info, bound, depth, builders) for arg in node.args)


def _only_calls(callee: FunctionInfo, index: int) -> bool:
    """The same-file plain function ``callee`` only ever calls its positional parameter
    at ``index`` (``def run(net, x): return net(x)``): an object handed there is run,
    not kept or handed on."""
    params = callee.node.params
    positional = [*params.posonly_params, *params.params]
    if callee.class_name is not None or index >= len(positional):
        return False
    name = positional[index].name.value
    mentions = [n for n in descendants(callee.node.body) if isinstance(n, cst.Name) and n.value == name]
    called = {
        id(n.func)
        for n in descendants(callee.node.body)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
    }
    return bool(mentions) and all(id(n) in called for n in mentions)


def _builds(value: cst.BaseExpression, info: FunctionInfo, bound: set[str]) -> bool:
    """A builder's returned value is one it made: a fresh object
    (:func:`_fresh_object`), a deep copy (``copy.deepcopy(model).eval()``: a new object
    whatever it copies; not ``copy.copy``, whose parts are the original's), or a module
    method chain on a local that only ever holds one (``t.to(device).eval()`` after
    ``t = Net.from_pretrained(path)``).  Not a container it fills (``found = []``, then
    ``found.append(layer)``): what it holds may be the caller's."""
    node = _made(value)
    if _fresh_object(value, info, bound) or _copies(node, deep=True):
        return True
    root = node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else node
    if not isinstance(root, cst.Name) or root.value in info.params or root.value in ("self", "cls"):
        return False
    values = assigned_values(info.node, root.value)
    return bool(values) and all(isinstance(v, cst.Call) and _fresh_object(v, info, bound) for v in values)


def _plain_container(name: str, info: FunctionInfo, bound: set[str]) -> bool:
    """Every value the function assigns to the local ``name`` is a literal or a display
    of them (``seen = {}``): no module for a hook to go on."""
    values = assigned_values(info.node, name)
    return bool(values) and all(
        not isinstance(v, cst.Call) and _fresh_part(v, info, bound, 0) for v in values
    )


def _fresh_part(
    item: cst.BaseExpression,
    info: FunctionInfo,
    bound: set[str],
    depth: int,
    builders: frozenset = frozenset(),
) -> bool:
    """An argument that hands no existing object to what is built: a literal (an
    f-string too), a name the function does not bind, a constant of torch's
    (``torch.float32``), a fresh object, or a literal container of those (``[1, 1]``,
    ``(4, 4)``, ``{}``)."""
    if isinstance(
        item, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
    ):
        return True  # a new string, whatever it formats (``f"ViT-{size}"``)
    if isinstance(item, cst.UnaryOperation):
        return _fresh_part(item.expression, info, bound, depth, builders)
    if (
        isinstance(item, cst.Attribute)
        and dotted_name(item) is not None
        and dotted_name(item).startswith("torch.")
    ):
        return "torch" not in bound  # ``torch.float32``: a constant of torch's
    if isinstance(item, cst.Name):
        if item.value not in bound:
            return True
        if item.value in info.params or item.value in ("self", "cls") or depth > _BUILD_DEPTH:
            return False
        # a local of its own that holds a new object or a literal (``cfg = Config(4)``,
        # ``width, depth = 4, 2``; ``Net(cfg)``)
        values = assigned_values(info.node, item.value)
        return bool(values) and all(_fresh_part(v, info, bound, depth + 1, builders) for v in values)
    if isinstance(item, cst.Call):
        return _fresh_object(item, info, bound, depth + 1, builders)
    if isinstance(item, (cst.List, cst.Tuple, cst.Set)):
        return all(
            not isinstance(e, cst.StarredElement) and _fresh_part(e.value, info, bound, depth, builders)
            for e in item.elements
        )
    if isinstance(item, cst.Dict):
        return all(
            isinstance(e, cst.DictElement)
            and _fresh_part(e.key, info, bound, depth, builders)
            and _fresh_part(e.value, info, bound, depth, builders)
            for e in item.elements
        )
    return False


def _root_names(node: cst.BaseExpression) -> set[str | None]:
    """The objects a loop walks parts of: ``{"model"}`` for ``model.blocks``,
    ``model.modules()``, ``model.layers[1:]``, and for a literal tuple or list of such
    parts (``(("a", model.a), ("b", model.b))``) the roots of its elements (literal
    strings and numbers left out), through ``enumerate``, ``zip``, ``sorted`` and the
    like; None among them for anything else (a call's result)."""
    if isinstance(node, (cst.Tuple, cst.List)):
        found: set[str | None] = set()
        for element in node.elements:
            value = element.value
            if isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)):
                continue
            found |= _root_names(value) if not isinstance(element, cst.StarredElement) else {None}
        return found
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        if isinstance(node, cst.Call):
            if _collects_one(node):
                node = node.args[0].value  # ``dict(model.named_modules())``: its parts
                continue
            iterated = _iterated(node)
            if len(iterated) == 1:
                node = iterated[0]  # ``enumerate(model.blocks)``: the blocks, counted
                continue
            if iterated:  # ``zip(model.a, model.b)``
                found = set()
                for part in iterated:
                    found |= _root_names(part)
                return found
            if not isinstance(node.func, cst.Attribute):
                return {None}  # ``build()``, ``map(...)``: not a walk of one object
            node = node.func.value
        else:
            node = node.value
    return {node.value} if isinstance(node, cst.Name) else {None}


def _receiver_root(registration: Registration) -> cst.Name | None:
    """The name a registration's receiver starts from (``model`` of ``model.blocks[0]``,
    also of a part looked up by name, ``model.get_submodule(name)``), or None when it
    does not start from a name."""
    receiver = registration.receiver
    while True:
        if isinstance(receiver, (cst.Attribute, cst.Subscript)):
            receiver = receiver.value
        elif (looked_up := _part_lookup(receiver)) is not None:
            receiver = looked_up
        else:
            return receiver if isinstance(receiver, cst.Name) else None


def _part_lookup(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` of a part of ``X`` looked up by name: ``X.get_submodule(name)`` (a method
    of :data:`PART_LOOKUPS`), ``getattr(X, name)`` (without a default, which may be
    another object), ``functools.reduce(getattr, path.split("."), X)`` or
    ``reduce(getattr, [X, *path.split(".")])``; else None."""
    if not isinstance(node, cst.Call):
        return None
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in PART_LOOKUPS:
        return node.func.value
    args = node.args
    if (
        _is_name(node.func, "getattr")
        and len(args) == 2
        and not any(a.star or a.keyword is not None for a in args)
    ):
        return args[0].value
    if (
        dotted_name(node.func) not in ("reduce", "functools.reduce")
        or not args
        or not _is_name(args[0].value, "getattr")
    ):
        return None
    if len(args) >= 3:
        return args[2].value
    walked = args[1].value if len(args) == 2 else None
    if isinstance(walked, (cst.List, cst.Tuple)) and walked.elements:
        first = walked.elements[0]
        return None if isinstance(first, cst.StarredElement) else first.value
    return None


def _since_top_binding(values: list, info: FunctionInfo, name: str, at: int) -> int:
    """The place of the last of ``values`` (``(place, value)`` bindings of ``name``)
    before ``at`` that is a plain ``name = value`` line of the function's own top-level
    body: it runs on every call and replaces whatever ``name`` held before (``model =
    Reference(path)``, then ``model = AutoModel.from_pretrained(path)``; not ``model =
    model.to(device)``, which keeps it); -1 when none."""
    body = info.node.body.body if isinstance(info.node.body, cst.IndentedBlock) else ()
    top = {
        id(small.value)
        for statement in body
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
        if isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and _is_name(small.targets[0].target, name)
    }
    return max((p for p, v in values if p < at and id(v) in top and not _rebinds_itself(v, name)), default=-1)


def _held_at(scope: _HandleSummary, raw: str, name: str, info: FunctionInfo, at: int) -> list:
    """The bindings ``(position, value)`` of the local ``raw`` before walk position
    ``at`` that decide what it holds there: all of them, or for a parameter its last
    (``model = copy.deepcopy(model)``: what it holds from then on)."""
    bindings = [(p, v) for p, v in scope.values.get(raw, []) if p < at]
    return bindings[-1:] if name in info.params else bindings


def _rebinds_itself(value: cst.BaseExpression, name: str) -> bool:
    """``name.to(device)``, ``name.eval().half()``: module methods that hand back the
    object ``name`` already holds (:data:`SELF_RETURNING`), so ``name = value`` keeps it."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value not in SELF_RETURNING:
            return False
        value = value.func.value
    return _is_name(value, name)


def _made(value: cst.BaseExpression) -> cst.BaseExpression:
    """The call a chain of method calls starts from (``copy.deepcopy(m).eval().to(d)``:
    ``copy.deepcopy(m)``, whose object the module methods hand back)."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Call)
    ):
        value = value.func.value
    return value


def _enclosing_class(info: FunctionInfo) -> str | None:
    """The class of a method, or of the method a nested def sits in."""
    while info.class_name is None and info.parent is not None:
        info = info.parent
    return info.class_name


def _literal_getattr(value: cst.BaseExpression) -> cst.Attribute | None:
    """:func:`~hooklint.analysis.names.literal_getattr` of a name or attribute chain
    (``getattr(self, "hs", None)``: ``self.hs``)."""
    found = literal_getattr(value)
    return found if found is not None and _is_chain(found.value) else None


def _is_name(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _dynamic_getattr(value: cst.BaseExpression, info: FunctionInfo) -> bool:
    """``getattr(param, name)`` (a default allowed) with ``name`` not a string literal."""
    return (
        isinstance(value, cst.Call)
        and _builtin(value) == "getattr"
        and len(value.args) in (2, 3)
        and isinstance(value.args[0].value, cst.Name)
        and value.args[0].value.value in info.params
        and not isinstance(value.args[1].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _iterated(call: cst.Call) -> list[cst.BaseExpression]:
    """What ``enumerate(x)``, ``zip(x, y)``, ``sorted(x)``... iterate (their positional
    arguments); empty for any other call."""
    if not (isinstance(call.func, cst.Name) and call.func.value in ITERATING_BUILTINS):
        return []
    if any(arg.star for arg in call.args):
        return []
    return [arg.value for arg in call.args if arg.keyword is None]


def _collects_one(call: cst.Call) -> bool:
    """``list(x)``, ``dict(x)``, ``tuple(x)``...: a collection of what ``x`` yields."""
    return (
        isinstance(call.func, cst.Name)
        and call.func.value in COLLECTION_BUILTINS
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    )


def _on_self_attribute(receiver: cst.BaseExpression) -> bool:
    """``self.inner`` (or deeper, ``self.a.b``): an object the instance holds."""
    while isinstance(receiver, cst.Attribute):
        receiver = receiver.value
        if isinstance(receiver, cst.Name):
            return receiver.value == "self"
    return False


#: Calls that deep-copy what they are given; ``copy.copy`` copies too (a shallow copy,
#: whose parts are the original's).
_DEEP_COPIES = ("copy.deepcopy", "deepcopy")


def _copies(value: cst.BaseExpression, deep: bool = False) -> bool:
    """``copy.deepcopy(x)`` / ``deepcopy(x)`` / ``copy.copy(x)`` (not with ``deep``): a
    new object."""
    names = _DEEP_COPIES if deep else (*_DEEP_COPIES, "copy.copy")
    return isinstance(value, cst.Call) and dotted_name(value.func) in names


#: Calls that look an object up rather than compute one (``next(model.parameters())``).
_LOOKUPS = frozenset({"getattr", "next", "iter", "max", "min", "vars", "choice"})
#: Conversions that hand back the tensor they are given when it already fits
#: (``torch.as_tensor(t)`` is ``t``).
_SAME_OBJECT = frozenset({"as_tensor", "asarray"})


def _assigned_value(statement: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
    """The value of ``name = value`` (``name`` a local, or ``self.x``) when that is all
    ``statement`` is; else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target = small.targets[0].target
    if isinstance(target, cst.Name) and target.value == name:
        return small.value
    if _self_attribute(target) and f"self.{target.attr.value}" == name:  # type: ignore[union-attr]
        return small.value
    return None


def _unpacked_from_call(statement: cst.BaseStatement, name: str) -> cst.Call | None:
    """The call of ``a, name = call(...)`` (a plain tuple or list target holding the
    local ``name``, not starred) when that is all ``statement`` is: each element of what
    the call returns is as new as the call's value (an LSTM cell's ``h, c``)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)):
        return None
    target = small.targets[0].target
    if isinstance(target, (cst.Tuple, cst.List)) and any(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) and e.value.value == name
        for e in target.elements
    ):
        return small.value
    return None


def _self_attribute(node: cst.CSTNode) -> bool:
    """``self.x``: one attribute of ``self``."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _computes_tensor(value: cst.BaseExpression, computed, info: FunctionInfo, own_method=None) -> bool:
    """``value`` makes a tensor in this call: arithmetic (``x * 2``), a call of an
    imported function (``torch.from_numpy(x)``), a method of such a tensor
    (``.to(device)``: it or a new one), an element of one (``outputs[-1]``), or a
    call of a model on this call's values (``self.model(x)``, ``net(batch)``).  Not a
    parameter or an attribute (``self.weight``, ``model.bias``: they outlive the call),
    nor what a lookup returns (``next(model.parameters())``, ``params[0]``).
    ``computed(name)``: whether a local name is one (every binding of it);
    ``own_method(call)``: whether a call of ``self.m()`` returns one."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(value, cst.Name):
        return computed(value.value)
    if isinstance(value, cst.Subscript):
        return _computes_tensor(value.value, computed, info, own_method)
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute):
        owner = func.value
        if isinstance(owner, (cst.Call, cst.Subscript)):
            return _computes_tensor(owner, computed, info, own_method)
        if not isinstance(owner, cst.Name):
            return False
        if owner.value in ("self", "cls"):  # ``self.model(x)``: its output
            return _on_call_values(value, info) or (own_method is not None and own_method(value))
        if owner.value in info.params:
            return False  # ``p.to(device)``, ``p.requires_grad_()`` may return ``p`` itself
        if func.attr.value in _SAME_OBJECT:
            return False
        return computed(owner.value) or owner.value not in _local_names(info)  # ``torch.f(...)``
    if isinstance(func, cst.Name):
        if func.value in _LOOKUPS:
            return False
        return _on_call_values(value, info)
    return False


def _on_call_values(call: cst.Call, info: FunctionInfo) -> bool:
    """A positional argument of ``call`` is one of this call's values: a parameter or
    a local of the function, or reached from one (``x.view(-1, d)``, ``states[-1]``;
    not from ``self``): a model called on them returns a new tensor."""
    names = None
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            continue
        root = arg.value
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if not isinstance(root, cst.Name) or (root is not arg.value and root.value in ("self", "cls")):
            continue
        if root.value in info.params:
            return True
        names = _local_names(info) if names is None else names
        if root.value in names:
            return True
    return False


def _local_names(info: FunctionInfo) -> set[str]:
    return local_names(info.node)[0]


def _built_just_before(fill: CallSite) -> cst.BaseExpression | None:
    """What ``hooks.append(x)`` puts in: its argument, or for a local name the value of
    the last plain assignment to it earlier in the same block (None when the block does
    not bind it, or binds it some other way last)."""
    value = fill.node.args[0].value
    if not isinstance(value, cst.Name):
        return value
    block = fill.site.frames[-1].node if fill.site.frames else None
    body = getattr(getattr(block, "body", None), "body", None)
    if body is None or fill.site.statement not in body:
        return None
    found = None
    for statement in body[: body.index(fill.site.statement)]:
        if not isinstance(statement, cst.SimpleStatementLine):
            if value.value in _bound_in(statement):
                found = None
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(_is_name(t.target, value.value) for t in small.targets):
                found = small.value
            elif value.value in _bound_in(small):
                found = None
    return found


def _bound_in(node: cst.CSTNode) -> set[str]:
    """Names any assignment, loop, ``with``, ``:=`` or import in ``node`` binds."""
    names: set[str] = set()
    for current in (node, *descendants(node)):
        if isinstance(current, cst.AssignTarget):
            names |= target_names(current.target)
        elif isinstance(current, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            names |= target_names(current.target)
        elif isinstance(current, cst.AsName):
            names |= target_names(current.name)
    return names


def _plain_bindings_only(nodes, name: str) -> bool:
    """Every binding of ``name`` among a function's nodes is ``name = value`` (the
    bindings the scope summary records): none by unpacking, a loop, ``with ... as``,
    ``:=``, an annotated or augmented assignment."""
    for node in nodes:
        if type(node) is cst.AssignTarget:
            target = node.target
            if type(target) is not cst.Name and name in target_names(target):
                return False
        elif binds_otherwise(node, name):
            return False
    return True


def returned_parameter(
    facts: ModuleFacts, helper: FunctionInfo, place: int | None = None, size: int = 0
) -> str | None:
    """The parameter of ``helper`` that every ``return`` of it hands back: as the whole
    value (``place`` None: ``return model``), or as element ``place`` of a tuple of
    ``size`` elements (``return model, len(model)``); None when the returns differ, or
    hand back anything else."""
    handed: set[str] = set()
    for ret in (n for n in facts.body_nodes(helper.node) if isinstance(n, cst.Return)):
        value = ret.value
        if place is not None:
            if not isinstance(value, cst.Tuple) or len(value.elements) != size:
                return None
            value = value.elements[place].value
        if not isinstance(value, cst.Name):
            return None
        handed.add(value.value)
    if len(handed) != 1 or not handed <= set(helper.params):
        return None
    return next(iter(handed))


def binds_otherwise(node: cst.CSTNode, name: str) -> bool:
    """``node`` binds ``name`` other than by ``=``: a loop, ``with ... as``, ``:=``, an
    annotated or augmented assignment."""
    kind = type(node)
    if kind is cst.For or kind is cst.CompFor:
        return name in target_names(node.target)
    if kind is cst.AsName:
        return name in target_names(node.name)
    if kind is cst.AugAssign or kind is cst.AnnAssign or kind is cst.NamedExpr:
        return name in target_names(node.target)
    return False


def runs_only_when_finalized(facts: ModuleFacts, info: FunctionInfo) -> bool:
    """``info`` runs only when an instance of its class is finalized: it is ``__del__``,
    or a private method of the class (``_name``) that only ``__del__`` calls (on
    ``self``) in this file."""
    if info.name == "__del__":
        return True
    if not info.name.startswith("_") or info.name.startswith("__"):
        return False
    callers = [
        c
        for c in facts.calls_to_attr(info.name)
        if isinstance(c.receiver, cst.Name) and c.receiver.value == "self"
    ]
    return bool(callers) and all(c.site.function_name == "__del__" for c in callers)


def _own_parameters(info: FunctionInfo) -> set[str]:
    """Every parameter name of the def, ``*args`` and ``**kwargs`` included."""
    params = info.node.params
    names = set(info.params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` (a nested def) refers to the enclosing scope's ``name``: a name
    node for it, not an attribute's name (``self.model``), nor inside a def or lambda
    with a parameter of its own called ``name`` (``def hook(model, args, out)``: only
    its defaults and decorators are the enclosing scope's)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.FunctionDef, cst.Lambda)) and name in parameter_names(current.params):
            params = current.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.default is not None:
                    stack.append(param.default)
            if isinstance(current, cst.FunctionDef):
                stack.extend(d.decorator for d in current.decorators)
            continue
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
            continue
        if isinstance(current, cst.Name):
            if current.value == name:
                return True
            continue
        stack.extend(current.children)
    return False


def _says_remove(call: CallSite) -> bool:
    """A call of a function whose name says it removes (``remove_hooks(hs)``)."""
    if call.attr == REMOVE_METHOD:
        return False
    name = (call.callee or call.attr or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in REMOVAL_WORDS)
