"""The facts one pass records about a module's hooks.

:func:`hooklint.analysis.collector.collect` walks a module once and fills a
:class:`ModuleFacts`.  Rules never walk the module again: they query these facts.
Hook bodies are small, so the questions about what a hook *does*
(:mod:`hooklint.analysis.effects`) look only inside the hook's own function, once,
and cache the answer on the :class:`HookBody`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import libcst as cst

    from hooklint.analysis.effects import StateEffect
    from hooklint.analysis.vocabulary import HookApi

T = TypeVar("T")


@dataclass(frozen=True)
class Frame:
    """One enclosing construct of a site: ``def``, ``class``, ``lambda``, ``for``,
    ``while``, ``if``, ``with``, ``try`` (its body), ``except``, ``else``, ``finally``,
    or a comprehension."""

    kind: str
    node: cst.CSTNode


@dataclass(frozen=True)
class Site:
    """Where something happens: its enclosing frames (outermost first), the
    innermost statement that holds it, and its visit order in the module."""

    order: int
    frames: tuple[Frame, ...]
    statement: cst.CSTNode

    def _frames_in_function(self) -> Iterator[Frame]:
        """Frames from the innermost outwards, stopping at the enclosing def/lambda."""
        for frame in reversed(self.frames):
            if frame.kind in ("def", "lambda", "class"):
                return
            yield frame

    @property
    def function(self) -> cst.FunctionDef | None:
        for frame in reversed(self.frames):
            if frame.kind == "def":
                return frame.node  # type: ignore[return-value]
            if frame.kind == "class":
                return None
        return None

    @property
    def class_def(self) -> cst.ClassDef | None:
        """The class whose method (directly) holds this site."""
        seen_def = False
        for frame in reversed(self.frames):
            if frame.kind == "def":
                if seen_def:
                    return None
                seen_def = True
            elif frame.kind == "class":
                return frame.node  # type: ignore[return-value]
        return None

    @property
    def function_name(self) -> str | None:
        """The name of :attr:`function`."""
        function = self.function
        return function.name.value if function is not None else None

    @property
    def class_name(self) -> str | None:
        """The name of :attr:`class_def`."""
        class_def = self.class_def
        return class_def.name.value if class_def is not None else None

    @property
    def is_module_level(self) -> bool:
        return not any(f.kind in ("def", "lambda") for f in self.frames)

    @property
    def loops(self) -> tuple[Frame, ...]:
        """``for``/``while`` loops and comprehensions around the site, in the same function."""
        return tuple(f for f in self._frames_in_function() if f.kind in ("for", "while", "comp"))

    @property
    def in_finally(self) -> bool:
        return any(f.kind == "finally" for f in self._frames_in_function())

    @property
    def in_except(self) -> bool:
        return any(f.kind == "except" for f in self._frames_in_function())

    def inside(self, node: cst.CSTNode) -> bool:
        return any(f.node is node for f in self.frames)


@dataclass(frozen=True)
class HandleUse:
    """What the code does with the value a registration call returns.

    ``role`` is one of:
    ``discarded`` (an expression statement), ``bound`` (assigned: ``targets`` holds the
    targets' code, e.g. ``h`` or ``self._handles[name]``), ``appended`` (passed to
    ``X.append``/``X.extend``/``X.add``: ``targets`` holds ``X``), ``with`` (a ``with``
    item), ``exit_stack`` (``stack.enter_context(...)``), ``returned``, ``yielded``,
    ``argument`` (passed to another call: ``targets`` holds the callee's code),
    ``collected`` (an element of a comprehension or literal whose own use is in ``outer``),
    ``other``.
    """

    role: str
    #: The targets as code, or as nodes whose code is generated on first use of
    #: :attr:`targets` (code generation is costly, and most uses are never asked).
    target_nodes: tuple = ()
    outer: HandleUse | None = None
    module: cst.Module | None = field(default=None, repr=False, compare=False)

    @cached_property
    def targets(self) -> tuple[str, ...]:
        return tuple(
            t if isinstance(t, str) else self.module.code_for_node(t)  # type: ignore[union-attr]
            for t in self.target_nodes
        )

    @property
    def final(self) -> HandleUse:
        """The use of the outermost collection that holds this handle."""
        use = self
        while use.outer is not None:
            use = use.outer
        return use


@dataclass
class FunctionInfo:
    """A ``def`` in the module, with where it sits."""

    node: cst.FunctionDef
    name: str
    qualname: str  # e.g. "Outer.method.<locals>.inner"
    class_name: str | None  # set for methods
    parent: FunctionInfo | None  # the enclosing def, for nested defs
    decorators: tuple[str, ...]
    site: Site
    nested: dict[str, FunctionInfo] = field(default_factory=dict)

    @property
    def params(self) -> list[str]:
        return parameter_names(self.node.params)

    @property
    def called_params(self) -> list[str]:
        """The parameters a call's arguments fill: a method's without ``self``/``cls``."""
        params = self.params
        return [p for p in params if p not in ("self", "cls")] if self.class_name else params


@dataclass
class HookBody:
    """The code that runs when a hook fires, resolved from a registration's argument.

    ``via`` says how it was found: ``function`` (a module-level or nested def),
    ``method`` (``self.method``), ``lambda``, ``partial`` (``functools.partial(f, ...)``,
    with ``bound_args``/``bound_keywords``), ``factory`` (a def returned by a function of
    this file that was called to build the hook).
    """

    node: cst.FunctionDef | cst.Lambda
    name: str
    via: str
    function: FunctionInfo | None = None
    bound_args: tuple[cst.BaseExpression, ...] = ()
    bound_keywords: tuple[str, ...] = ()
    imports: dict[str, str] = field(default_factory=dict, repr=False)
    #: A bound method (``self.method``, also inside ``partial``): ``self`` is not a hook argument.
    is_method: bool = False
    #: The other hooks the registration may get instead (``a if light else b``: ``b``'s
    #: body); a fix that edits this body would have to edit theirs too.
    alternatives: tuple[HookBody, ...] = ()

    @property
    def params(self) -> list[str]:
        """Parameters the hook receives from torch (those bound by ``partial`` left out)."""
        names = parameter_names(self.node.params)
        if self.is_method:
            names = names[1:]  # ``self`` is bound
        names = names[len(self.bound_args) :]
        return [n for n in names if n not in self.bound_keywords]

    @cached_property
    def effects(self) -> list[StateEffect]:
        """How the hook changes state that outlives the call (cached: computed once)."""
        from hooklint.analysis.effects import state_effects

        return state_effects(self)


@dataclass
class Registration:
    """One call that registers a hook."""

    call: cst.Call
    api: HookApi
    receiver: cst.BaseExpression | None  # None for process-wide functions
    receiver_code: str | None
    hook_arg: cst.BaseExpression | None
    keywords: dict[str, cst.BaseExpression]
    has_star_kwargs: bool
    site: Site
    handle: HandleUse
    hook: HookBody | None = None
    #: The wrapper function called (``register_hook`` of a ``HooksMixin``...), when the
    #: hook is registered through one (see :mod:`hooklint.analysis.wrappers`).
    wrapper: str | None = None
    #: Places in other files this registration's reading rests on (the wrapper's
    #: definition in a base class or an imported module: :mod:`hooklint.project`).
    evidence: tuple = ()
    #: For a call of a local name bound to registration methods (``add = m.register_forward_hook``,
    #: ``add = m.register_forward_hook if fwd else m.register_backward_hook``; then
    #: ``add(fn)``): those attribute references, the first giving ``api``.  Empty for a
    #: direct call.
    named_by: tuple = ()

    @property
    def api_names(self) -> tuple[str, ...]:
        """Every registration method the call may run: ``api`` or, through a local
        name, each one the name may be bound to."""
        if self.named_by:
            return tuple(dict.fromkeys(a.attr.value for a in self.named_by))
        return (self.api.name,)

    def same_target(self, other: Registration, *, same_function: bool = True) -> bool:
        """Whether two registrations hook the same thing: both process-wide of one kind
        (module or optimizer), or the same receiver code — by default only when both
        are registered in the same function, where the code means the same object."""
        if self.api.is_global or other.api.is_global:
            return self.api.owner == other.api.owner
        if self.receiver_code != other.receiver_code:
            return False
        return not same_function or self.site.function is other.site.function

    def receiver_is(self, name: str) -> bool:
        """Whether the receiver is the plain name ``name`` (``self.register_backward_hook(...)``)."""
        receiver = self.receiver
        return type(receiver).__name__ == "Name" and receiver.value == name  # type: ignore[union-attr]

    def keyword_is_true(self, name: str) -> bool:
        """Whether ``name=True`` is passed literally."""
        return self._keyword_is(name, "True")

    def keyword_is_false(self, name: str) -> bool:
        """Whether ``name=False`` is passed literally."""
        return self._keyword_is(name, "False")

    def _keyword_is(self, name: str, constant: str) -> bool:
        value = self.keywords.get(name)
        return value is not None and type(value).__name__ == "Name" and value.value == constant  # type: ignore[attr-defined]


@dataclass(frozen=True)
class CallSite:
    """Any call in the module: ``callee`` is its dotted name resolved through the
    module's imports (``P.cached`` → ``torch.nn.utils.parametrize.cached``), or None
    when the callee is not a plain dotted name."""

    node: cst.Call
    callee: str | None
    attr: str | None  # the last attribute name for ``x.attr(...)`` calls
    site: Site
    use: HandleUse

    @property
    def receiver(self) -> cst.BaseExpression | None:
        """The object a method is called on (``x`` of ``x.attr(...)``); None for a plain call."""
        return self.node.func.value if self.attr is not None else None  # type: ignore[attr-defined]


@dataclass
class ModuleFacts:
    """Everything the rules may ask about one module."""

    module: cst.Module
    imports: dict[str, str] = field(default_factory=dict)
    import_statements: list[tuple[cst.CSTNode, Site]] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    registrations: list[Registration] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    #: ``X.remove()`` calls, keyed by the code of ``X`` (``h``, ``self._handle``...).
    removals: dict[str, list[CallSite]] = field(default_factory=dict)
    #: ``id`` of each def whose own code (not a nested def's) holds a ``raise`` or an ``assert``.
    raising: set[int] = field(default_factory=set)
    #: ``id`` of each def whose own code returns a value (``return x``).
    returning: set[int] = field(default_factory=set)
    #: The rest of the project as this file sees it (a
    #: :class:`hooklint.project.resolve.FileView`), or None: analysed alone.
    project: object = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        """Break the reference cycles these facts form, once the rules are done with
        them: what is kept on them beside their fields (the models and indexes the
        analysis builds once per module, ``_codes``) refers back to them, and a nested
        def's :class:`FunctionInfo` and its parent's refer to each other.  Each cycle
        holds part of the tree (all of it, through ``module``), which reference counting
        then cannot free: the garbage collector would have to walk every node of it
        after the lint (a tenth of a large file's lint time)."""
        for info in self.functions:
            info.parent = None
            info.nested = {}
        fields = {f.name for f in dataclasses.fields(self)}
        for name in [n for n in vars(self) if n not in fields]:
            del self.__dict__[name]

    def memo(self, name: str, build: Callable[[ModuleFacts], T]) -> T:
        """A result computed once per module (a model, an index): ``build(self)`` on
        first use, kept beside the fields under ``name`` until :meth:`release`."""
        found = self.__dict__.get(name)
        if found is None:
            found = self.__dict__[name] = build(self)
        return found

    def body_nodes(self, function: cst.FunctionDef) -> list[cst.CSTNode]:
        """Every code-bearing node of a def's body, nested defs, lambdas and classes
        not entered (``descendants(function.body, into_functions=False)``), walked once
        per def for every analysis that reads them (the handle model, the effects' locals)."""
        known: dict[int, list[cst.CSTNode]] = self.memo("_body_nodes", lambda _: {})
        found = known.get(id(function))
        if found is None:
            from hooklint.analysis.walk import descendants

            found = known[id(function)] = list(descendants(function.body, into_functions=False))
        return found

    def registrations_at(self, statement: cst.CSTNode) -> list[Registration]:
        """The registrations whose statement is ``statement`` (indexed once)."""
        index: dict[int, list[Registration]] = self.memo("_registrations_by_statement", _by_statement)
        return index.get(id(statement), [])

    def code(self, node: cst.CSTNode) -> str:
        """The source of ``node``: a plain dotted name (``self._hooks``) is joined from
        its parts, anything else generated by libcst (once per node)."""
        found = chain_code(node)
        if found is not None:
            return found
        known = self.__dict__.setdefault("_codes", {})
        found = known.get(id(node))
        if found is None:
            found = known[id(node)] = self.module.code_for_node(node)
        return found

    def calls_to_attr(self, attr: str) -> Iterator[CallSite]:
        return (c for c in self.calls if c.attr == attr)

    def module_function(self, name: str) -> FunctionInfo | None:
        return self._index()[0].get(name)

    def method(self, class_name: str, name: str) -> FunctionInfo | None:
        return self._index()[1].get((class_name, name))

    def self_attribute_bindings(
        self, class_name: str, attribute: str, *, only_init: bool = False
    ) -> list[tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression | None]]:
        """``(statement, target, value)`` for each assignment in the class's own methods
        (``only_init``: its ``__init__``) that binds ``self.<attribute>``: ``self.x = v``,
        ``self.x: T = v`` and ``self.x += v`` (target ``self.x``; a bare ``self.x: T``
        gives value None), and unpacking into it (``self.x, self.y = v``: the tuple is
        the target, its element's value is not seen)."""
        import libcst as cst

        found = []
        for info in self.functions:
            if info.class_name != class_name or (only_init and info.name != "__init__"):
                continue
            for node in self.body_nodes(info.node):
                kind = type(node)
                if kind is cst.Assign:
                    targets = [t.target for t in node.targets]
                elif kind is cst.AnnAssign or kind is cst.AugAssign:
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    if attribute in _self_attributes_in(target):
                        found.append((node, target, node.value))
        return found

    def function_for(self, node: cst.CSTNode) -> FunctionInfo | None:
        return self._index()[2].get(id(node))

    def _index(self) -> tuple[dict, dict, dict]:
        """``functions`` by module-level name, by ``(class, name)`` and by node (the
        first of each, as a scan in order finds it); rebuilt when a def was added."""
        index = self.__dict__.get("_function_index")
        if index is None or index[0] != len(self.functions):
            by_name: dict = {}
            by_method: dict = {}
            by_node: dict = {}
            for info in self.functions:
                if info.parent is None and info.class_name is None:
                    by_name.setdefault(info.name, info)
                by_method.setdefault((info.class_name, info.name), info)
                by_node.setdefault(id(info.node), info)
            index = self.__dict__["_function_index"] = (len(self.functions), (by_name, by_method, by_node))
        return index[1]


def parameter_names(params: cst.Parameters) -> list[str]:
    """Positional and keyword parameter names, in order (no ``*args``/``**kwargs``)."""
    names = [p.name.value for p in params.posonly_params]
    names += [p.name.value for p in params.params]
    names += [p.name.value for p in params.kwonly_params]
    return names


def chain_code(node) -> str | None:
    """The code of a name or attribute chain written without parentheses or spaces
    (``h``, ``self.handles``), as libcst would generate it; None for anything else."""
    import libcst as cst  # (this module is imported before libcst is needed)

    parts = []
    while type(node) is cst.Attribute:
        dot = node.dot
        if (
            node.lpar
            or node.attr.lpar
            or not (_tight(dot.whitespace_before) and _tight(dot.whitespace_after))
        ):
            return None
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name or node.lpar:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts)) if len(parts) > 1 else node.value


def _tight(whitespace) -> bool:
    return type(whitespace).__name__ == "SimpleWhitespace" and not whitespace.value  # type: ignore[attr-defined]


def _self_attributes_in(target: cst.BaseExpression) -> set[str]:
    """The ``self.x`` attributes an assignment target binds: ``self.a``, or those of an
    unpacking (``self.a, self.b = ...``)."""
    import libcst as cst

    found = set()
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            found |= _self_attributes_in(element.value)
    elif isinstance(target, cst.StarredElement):
        found |= _self_attributes_in(target.value)
    elif (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    ):
        found.add(target.attr.value)
    return found


def _by_statement(facts: ModuleFacts) -> dict[int, list[Registration]]:
    found: dict[int, list[Registration]] = {}
    for registration in facts.registrations:
        found.setdefault(id(registration.site.statement), []).append(registration)
    return found
