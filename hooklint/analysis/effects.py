"""What a hook does to state that outlives the call, followed into the helpers it calls.

A *state effect* is a change to something shared between calls: a global or
``nonlocal`` name, a closure cell shared by two hooks, an attribute (``self.depth``,
``P._cache_enabled``, an attribute of the hooked module), an item of such a container,
a container mutated through a method (``_active.add(x)``), or one side of a
method-call pair (``self.timers(name).start()`` ... ``.stop()``; the pairs are in
:mod:`hooklint.analysis.vocabulary`).  Locals and parameters rebound inside the hook
are not shared state, except where a local is only another name for shared state
(``coordinator = self.get_coordinator()``, ``for m in self.model.modules()``,
``rec = self.records.pop(k)``), or a fresh object entered in the hook is stored into
shared state (``r = record_function(n); r.__enter__(); self.records[n] = r``).

Keys are normalised so that the two hooks of a pair agree: names go through the
module's imports (``P._cache_enabled`` → ``torch.nn.utils.parametrize._cache_enabled``),
the hook's first parameter (the module the hook fires for) becomes ``<module>``, an
item with a literal key keeps it (``state["a"]`` and ``state["b"]`` are different
state) and any other item is ``X[]``.

A value set aside in a backup and then overwritten (``m._saved = m.p; m.p = 0.0``)
is taken (op ``override``), and writing the backup back (``m.p = m._saved``) gives it
back (``restore``); the two match by the backup's key.  What a getter of the module or
of an imported module returns when called without arguments (``get_tracker()``,
``torch._C._get_tracing_state()``) is shared state: the one object the process keeps.

**Calls are followed**: a call of a same-file function — a module helper, a def
nested in an enclosing function, a method through ``self``/``cls``, or the closure a
same-file factory returns when it is called at once (``self._get_fn(name)()``) — adds
the callee's effects, with its parameters bound to what the call passes (a helper
given the hooked module sees it as ``<module>``; a parameter given ``True``,
``False`` or ``None``, or left at such a default, makes ``flag = param`` the set or
the reset it stands for: ``_set_active(True)`` / ``_set_active(False)``).  Up to :data:`MAX_DEPTH` calls deep,
never into a function already on the call path; anything defined in another file is
not followed (cross-file evidence is left out rather than guessed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.facts import parameter_names
from hooklint.analysis.guards import exits_early
from hooklint.analysis.names import dotted_name, is_super_call, literal_getattr, resolve, returned_name
from hooklint.analysis.scopes import target_names
from hooklint.analysis.vocabulary import (
    ACQUIRING_VERBS,
    CONSTANT_NAMES,
    CONTAINER_ADDS,
    CONTAINER_REMOVALS,
    FALSY_CONSTANTS,
    METHOD_PAIRS,
    RELEASING_VERBS,
)
from hooklint.analysis.walk import child_nodes, descendants

if TYPE_CHECKING:
    from hooklint.analysis.facts import FunctionInfo, HookBody, ModuleFacts

#: How many calls deep a hook's effects are followed (the hook's own body is depth 0):
#: a hook → its helper → the helper's helper → one more.  Real hooks reach their state
#: within two (``hook → self._forward_prologue() → self._start_timers()``).
MAX_DEPTH = 3

#: Operations that take something (a pre-hook's side of a pair) ...
ACQUIRE = frozenset({"increment", "add", "set_true", "acquire", "override"})
#: ... and those that give it back (a post-hook's side).  A plain ``x = value`` (op
#: ``set``) is neither: it overwrites whatever was there, so skipping its undo leaves
#: nothing that the next call does not overwrite again.
RELEASE = frozenset(
    {
        "decrement",
        "decrement_clamped",
        "remove",
        "discard",
        "set_false",
        "delete",
        "clear",
        "release",
        "restore",
    }
)

#: Saving state into a backup and overwriting it (``b = x; x = v``), then writing the
#: backup back (``x = b``): the take and the give-back of an override, matched by the
#: backup's key (their ``pair`` is ``"override|b"`` / ``"restore|b"``).
_OVERRIDE_PAIR = ("override", "restore")
_PAIR_SET = frozenset((*METHOD_PAIRS, _OVERRIDE_PAIR))
_ITEM_GETTERS = frozenset({"pop", "get", "popleft", "setdefault", "__getitem__"})


@dataclass(frozen=True)
class StateEffect:
    """One change a hook makes: ``op`` on the shared state named ``key``.

    ``node`` is the statement or call that makes it (an ``AugAssign``, ``Assign``,
    ``Del`` or ``Call``), which fixes rewrite when it is in the hook's own body
    (``via`` empty); ``via`` holds the calls, outermost first, through which a helper
    makes it.  ``pair`` is ``"verb|rest"`` for one side of a method-call pair.
    ``statement`` is the simple statement line holding ``node`` (None in a lambda),
    ``hook_statement`` the one in the hook's own body that leads to it.  ``guards``
    holds every condition it runs under (:mod:`hooklint.analysis.guards`: enclosing
    ``if``/``while`` tests, the left side of ``and``/``or``, the test of an earlier
    ``if ...: return``/``raise``/``continue``);
    ``handled`` says an ``except`` or ``suppress(...)`` catches what it raises.
    """

    key: str
    op: str
    node: cst.CSTNode
    pair: str | None = None
    via: tuple = ()
    statement: cst.CSTNode | None = None
    hook_statement: cst.CSTNode | None = None
    conditional: bool = False
    guards: tuple[cst.BaseExpression, ...] = ()
    handled: bool = False

    @property
    def acquires(self) -> bool:
        return self.op in ACQUIRE

    @property
    def releases(self) -> bool:
        return self.op in RELEASE

    @property
    def direct(self) -> bool:
        """Made by the hook's own code, not by a helper it calls."""
        return not self.via

    @property
    def anchor(self) -> cst.CSTNode:
        """The node in the hook's own body that makes it (the call into a helper, or itself)."""
        return self.via[0] if self.via else self.node


# -- keys ----------------------------------------------------------------------------
def split_key(key: str) -> tuple[str, str | None]:
    """``("state", '"a"')`` for ``state["a"]``, ``("X", "")`` for ``X[]``, ``("X", None)``
    for a key without an item."""
    if key.endswith("]"):
        depth = 0
        for index in range(len(key) - 1, -1, -1):
            char = key[index]
            if char == "]":
                depth += 1
            elif char == "[":
                depth -= 1
                if depth == 0:
                    return key[:index], key[index + 1 : -1]
    return key, None


def keys_match(a: str, b: str) -> bool:
    """Whether two keys can name the same state: equal, or the same container where at
    most one side names a literal item (``X`` / ``X[]`` / ``X["a"]``), never two
    different literal items (``state["a"]`` vs ``state["b"]``)."""
    if a == b:
        return True
    base_a, item_a = split_key(a)
    base_b, item_b = split_key(b)
    if base_a != base_b:
        return False
    return not (item_a and item_b)


def pair_matches(acquire: StateEffect, release: StateEffect) -> bool:
    """Whether a release undoes an acquire: both sides of one method-call pair on the
    same object, or (neither a method pair) the same state taken and given back."""
    if not keys_match(acquire.key, release.key):
        return False
    if acquire.pair is None or release.pair is None:
        return acquire.pair is None and release.pair is None
    verb_a, _, rest_a = acquire.pair.partition("|")
    verb_r, _, rest_r = release.pair.partition("|")
    return rest_a == rest_r and (verb_a, verb_r) in _PAIR_SET


def method_pair_side(method: str) -> tuple[str, str] | None:
    """``("acquire"|"release", "verb|rest")`` for a method named as one side of a pair
    (``start``, ``start_profile``, ``range_push``), else None."""
    if method in ACQUIRING_VERBS and method not in CONTAINER_ADDS:
        return "acquire", method + "|"
    if method in RELEASING_VERBS and method not in CONTAINER_REMOVALS:
        return "release", method + "|"
    stripped = method.lstrip("_")
    if stripped.startswith("_") or not stripped:
        return None
    head, sep, tail = stripped.partition("_")
    if sep and tail:
        if head in ACQUIRING_VERBS:
            return "acquire", f"{head}|{tail}_"
        if head in RELEASING_VERBS:
            return "release", f"{head}|{tail}_"
    head, sep, tail = stripped.rpartition("_")
    if sep and head:
        if tail in ACQUIRING_VERBS:
            return "acquire", f"{tail}|_{head}"
        if tail in RELEASING_VERBS:
            return "release", f"{tail}|_{head}"
    return None


# -- the model -----------------------------------------------------------------------
def hook_effects(
    facts: ModuleFacts, hook: HookBody, receiver: str | None = None, context: FunctionInfo | None = None
) -> list[StateEffect]:
    """The state effects of a hook body, its helpers' included, in source order.

    ``receiver`` names the object a bound ``__call__``/method of a same-file instance
    runs on (its ``self`` becomes that key); ``context`` is the function a lambda hook
    is written in (for ``self`` and nested helpers).  Cached per module."""
    model = _model(facts)
    cache_key = (id(hook.node), receiver, tuple(hook.params))
    cached = model.hooks.get(cache_key)
    if cached is None:
        cached = model.hook(hook, receiver, context)
        model.hooks[cache_key] = cached
    return cached


def state_effects(hook: HookBody) -> list[StateEffect]:
    """The effects of a hook's own body only (no helpers followed: no module index)."""
    walker = _Walker(None, _hook_scope(None, hook, None, None), depth=MAX_DEPTH, path=frozenset())
    walker.scope.imports = hook.imports
    return walker.run(hook.node)


def acquired(effects: list[StateEffect]) -> list[StateEffect]:
    """The acquires a pre-hook makes, leaving out state it resets itself first.

    A key whose first effect is an unconditional overwrite (``self.n = 0``,
    ``self.flag = False``, ``self.start = now()``, a copy ``self.n = self.initial``)
    is re-established at the start of every call: whatever a skipped post-hook left
    there is overwritten, so a later ``+= 1`` or ``= True`` on it in the same pre-hook
    does not accumulate across calls.
    """
    reset: list[str] = []
    seen: list[str] = []
    for effect in effects:
        if any(keys_match(effect.key, k) for k in seen):
            continue
        seen.append(effect.key)
        overwrite = effect.op in ("set", "set_false") and effect.pair is None
        if (overwrite or effect.op == "restore") and not effect.conditional:  # a copy overwrites too
            reset.append(effect.key)
    return [
        e for e in effects if e.acquires and not any(e.key == k or split_key(e.key)[0] == k for k in reset)
    ]


class _Model:
    """Per-module index of the functions calls may reach, and cached results."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.module = facts.module
        self.hooks: dict = {}
        self.bodies: dict = {}
        self.body_names: dict = {}
        self.methods: dict[tuple[str, str], FunctionInfo] = {}
        self.module_functions: dict[str, FunctionInfo] = {}
        self.by_node: dict[int, FunctionInfo] = {}
        for info in facts.functions:
            self.by_node[id(info.node)] = info
            if info.class_name is not None:
                self.methods.setdefault((info.class_name, info.name), info)
            elif info.parent is None and info.class_name is None:
                self.module_functions.setdefault(info.name, info)

    def names(self, node: cst.FunctionDef):
        found = self.body_names.get(id(node))
        if found is None:
            found = self.body_names[id(node)] = _body_names(node, self.facts.body_nodes(node))
        return found

    def hook(self, hook: HookBody, receiver: str | None, context) -> list[StateEffect]:
        function = hook.function or context
        scope = _hook_scope(self, hook, receiver, function)
        return _Walker(self, scope, depth=0, path=frozenset({id(hook.node)})).run(hook.node)

    def callee_effects(
        self,
        info: FunctionInfo,
        aliases: dict[str, str],
        extra_locals: frozenset,
        depth: int,
        path: frozenset,
        constants: tuple = (),
    ) -> list[StateEffect]:
        key = (id(info.node), tuple(sorted(aliases.items())), extra_locals, depth, constants)
        cached = self.bodies.get(key)
        if cached is None:
            scope = _StateKeys(self, info.node, info, aliases, extra_locals, module_param=None)
            scope.constants = dict(constants)
            cached = _Walker(self, scope, depth=depth, path=path | {id(info.node)}).run(info.node)
            self.bodies[key] = cached
        return cached


def function_info(facts: ModuleFacts, node: cst.FunctionDef) -> FunctionInfo | None:
    """The :class:`FunctionInfo` of a def (indexed once per module)."""
    return _model(facts).by_node.get(id(node))


def _model(facts: ModuleFacts) -> _Model:
    return facts.memo("_effects_model", _Model)


def _hook_scope(model, hook: HookBody, receiver: str | None, function) -> _StateKeys:
    params = hook.params
    aliases: dict[str, str] = {}
    raw = parameter_names(hook.node.params)
    if hook.is_method and raw:
        aliases[raw[0]] = receiver or "self"
    scope = _StateKeys(
        model, hook.node, function, aliases, frozenset(), module_param=params[0] if params else None
    )
    # ``lambda m, a, k=name: ...``: a default is bound once, when the hook is made
    scope.constants = {
        p.name.value: FIXED
        for p in _all_params(hook.node.params)
        if p.default is not None and not _constant(p.default)
    }
    return scope


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


class _StateKeys:
    """Turns expressions of one function body into shared-state keys."""

    def __init__(
        self, model, node, function, aliases: dict[str, str], extra_locals: frozenset, module_param
    ) -> None:
        self.model = model
        self.function = function  # FunctionInfo of the body, or of the def a lambda sits in
        self.module_param = module_param
        self.aliases = dict(aliases)
        self.imports = model.facts.imports if model is not None else {}
        if isinstance(node, cst.Lambda):
            self.declared: set[str] = set()
            self.locals = set(parameter_names(node.params)) | set(extra_locals)
            self.single: dict[str, cst.BaseExpression] = {}
        else:
            names = model.names(node) if model is not None else _body_names(node)
            assigned, declared, self.single = names
            self.declared = declared
            self.locals = assigned | set(parameter_names(node.params)) | set(extra_locals)
        if module_param is not None:
            self.aliases[module_param] = "<module>"
        self.locals -= set(self.aliases)
        self._resolving: set[str] = set()
        #: Parameters a call passed ``True``, ``False`` or ``None`` (by position, by
        #: keyword or as the default it left): ``set_enabled(True)`` and
        #: ``set_enabled(False)`` are an acquire and a release of what the helper sets.
        self.constants: dict[str, str] = {}
        #: Pair acquires on fresh local objects, until the object is stored somewhere shared.
        self.pending: dict[str, list[StateEffect]] = {}

    def fixed_item(self, target: cst.Subscript) -> bool:
        """``d[name]`` where ``name`` is bound outside the function (a closure variable
        of the factory that made the hook, a module constant): the same key on every
        call, so setting it overwrites what the last call left instead of adding an
        entry.  A parameter or local of the function (the hooked module, a per-call
        id) may differ from call to call, unless it is :data:`FIXED` (a hook's parameter
        with a default, ``lambda m, a, k=name: ...``, bound once per registration, or
        what a call hands a helper from such a name)."""
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return False
        value = target.slice[0].slice.value
        if self.module_param is not None and _names_module(value, self.module_param):
            # ``d[id(module)]``: a hook registered on a module is always handed that
            # module, so each registration writes its one entry, which its next call
            # overwrites (as with a default bound when the hook was made)
            return True
        return isinstance(value, cst.Name) and self.is_fixed(value.value)

    def is_fixed(self, name: str) -> bool:
        """Whether ``name`` holds the same value on every call of the function: bound
        outside it, or a parameter bound to a :data:`FIXED` value."""
        if self.constants.get(name) == FIXED:
            return True
        return name not in self.locals and name not in self.aliases and name not in self.declared

    def name_key(self, name: str, *, rebinding: bool) -> str | None:
        alias = self.aliases.get(name)
        if alias is not None:
            return alias
        if name in self.declared:
            return name
        if name in self.locals:
            value = self.single.get(name)
            if value is not None and not rebinding and name not in self._resolving:
                self._resolving.add(name)
                try:
                    return self.value_key(value)
                finally:
                    self._resolving.discard(name)
            return None
        if rebinding:
            return None
        return self.imports.get(name, name)

    def value_key(self, value: cst.BaseExpression) -> str | None:
        """The key a local assigned ``value`` is another name for."""
        if isinstance(value, (cst.Subscript, cst.Attribute, cst.Call)):
            return self.key(value, rebinding=False)
        return None

    def key(self, target: cst.BaseExpression, *, rebinding: bool) -> str | None:
        """The shared-state key of ``target``, or None if it is local to the call."""
        if isinstance(target, cst.Name):
            return self.name_key(target.value, rebinding=rebinding)
        if isinstance(target, cst.Attribute):
            base = self.key(target.value, rebinding=False)
            return f"{base}.{target.attr.value}" if base is not None else None
        if isinstance(target, cst.Subscript):
            base = self.key(target.value, rebinding=False)
            if base is None:
                return None
            return f"{base}[{_literal_item(target)}]"
        attribute = literal_getattr(target)
        if attribute is not None:  # ``getattr(m, "_saved", None)``: ``m._saved``
            return self.key(attribute, rebinding=rebinding)
        if (
            isinstance(target, cst.Call)
            and isinstance(target.func, cst.Attribute)
            and target.func.attr.value in _ITEM_GETTERS
        ):
            base = self.key(target.func.value, rebinding=False)  # ``d.pop(k)``: an item of ``d``
            return base + "[]" if base is not None else None
        if isinstance(target, cst.Call) and not target.args and _is_getter(target.func, self):
            # ``torch._C._get_tracing_state()``, ``current_tracker()``: a getter called
            # without arguments hands out the one object the process keeps.
            name = resolve(dotted_name(target.func), self.imports)
            return f"{name}()" if name is not None else None
        if isinstance(target, cst.Call) and self.model is not None:
            # What a method of a shared object returns may be shared (``self.timers(n)``,
            # ``self.coordinator()``); a plain or module function's result is a fresh object.
            root = target.func
            while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
                root = root.func if isinstance(root, cst.Call) else root.value
            if not isinstance(target.func, cst.Attribute) or (
                isinstance(root, cst.Name) and root.value in self.imports
            ):
                return None
            base = self.key(target.func, rebinding=False)
            if base is None or not all(_simple(a.value) for a in target.args):
                return None
            args = ", ".join(_simple_code(a.value) for a in target.args)
            return f"{base}({args})"
        return None


#: How the name of a function that returns process-wide state begins.
_GETTER_PREFIXES = ("get_", "current_")


def _is_getter(func: cst.BaseExpression, scope: _StateKeys) -> bool:
    """A function of the module or of an imported module, named as a getter
    (``get_tracker``, ``torch._C._get_tracing_state``, ``current_scope``); not a method
    of an object (a local one may be fresh on every call)."""
    name = dotted_name(func)
    if name is None or not _module_function(name, scope):
        return False
    return name.rsplit(".", 1)[-1].lstrip("_").startswith(_GETTER_PREFIXES)


def _module_function(name: str, scope: _StateKeys) -> bool:
    """``name`` (dotted) is a function of this module or of a module it imports
    (``torch.cuda.set_device``), not reached through a local or an alias of shared
    state."""
    root, _, rest = name.partition(".")
    if rest and root not in scope.imports:
        return False
    return root not in scope.locals and root not in scope.aliases


#: How a getter and a setter of one process-wide setting are named:
#: ``torch.cuda.current_device()`` / ``torch.cuda.set_device(d)``,
#: ``torch.get_default_dtype()`` / ``torch.set_default_dtype(t)``.
_SETTING_PREFIXES = {"getter": ("current_", "get_"), "setter": ("set_",)}


def _setting(call: cst.BaseExpression, scope: _StateKeys, kind: str) -> str | None:
    """The setting a call of an imported module's getter (no arguments) or setter (one
    argument) reads or writes, named without its verb (``torch.cuda.device``); None for
    anything else (a method of an object, a local function)."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    if (kind == "getter") != (not call.args):
        return None
    name = dotted_name(call.func)  # an attribute: ``module.verb_setting``
    if name is None or not _module_function(name, scope):
        return None
    prefix, _, last = name.rpartition(".")
    for verb in _SETTING_PREFIXES[kind]:
        if last.startswith(verb) and len(last) > len(verb):
            resolved = resolve(prefix, scope.imports)
            return f"{resolved}.{last[len(verb) :]}" if resolved is not None else None
    return None


def _literal_item(target: cst.Subscript) -> str:
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return ""
    value = target.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        try:
            return repr(value.evaluated_value)
        except Exception:  # noqa: BLE001 - an odd literal is just not a literal key
            return ""
    if isinstance(value, cst.Integer):
        return value.value
    if (
        isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Minus)
        and isinstance(value.expression, cst.Integer)
    ):
        return "-" + value.expression.value
    return ""


def _simple(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.Attribute):
        return _simple(node.value)
    return False


def _simple_code(node: cst.BaseExpression) -> str:
    if isinstance(node, (cst.SimpleString, cst.Integer, cst.Float)):
        return node.value
    return dotted_name(node) or ""


def _body_names(node: cst.FunctionDef, nodes=None):
    """``(locals, declared, single)`` in one pass: the names the body binds (not
    declared ``global``/``nonlocal``), those declared, and the locals bound exactly
    once by a plain ``name = value`` (with that value).  ``nodes``: the body's nodes
    (:meth:`ModuleFacts.body_nodes`) when the caller has them."""
    declared: set[str] = set()
    counts: dict[str, int] = {}
    values: dict[str, cst.BaseExpression] = {}
    if nodes is None:
        nodes = descendants(node.body, into_functions=False)
    # ``type(x) is`` rather than ``isinstance``: libcst's classes check through ABCMeta.
    for current in nodes:
        kind = type(current)
        if kind is cst.Assign:
            for target in current.targets:
                for name in target_names(target.target):
                    counts[name] = counts.get(name, 0) + 1
                if len(current.targets) == 1 and type(target.target) is cst.Name:
                    values[target.target.value] = current.value
        elif kind is cst.Global or kind is cst.Nonlocal:
            declared.update(n.name.value for n in current.names)
        elif kind is cst.AugAssign or kind is cst.AnnAssign:
            if type(current.target) is cst.Name:
                counts[current.target.value] = counts.get(current.target.value, 0) + 2
        elif kind is cst.For or kind is cst.CompFor:
            for name in target_names(current.target):
                counts[name] = counts.get(name, 0) + 2
        elif kind is cst.AsName:
            for name in target_names(current.name):
                counts[name] = counts.get(name, 0) + 2
    assigned = set(counts) - declared
    single = {name: value for name, value in values.items() if counts.get(name) == 1 and name in assigned}
    return assigned, declared, single


_NOT_ENTERED = frozenset({cst.Lambda, cst.FunctionDef, cst.ClassDef})
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})
#: Nodes with nothing below them that binds a name or changes state.
_LEAF_TYPES = frozenset(
    {
        cst.Name,
        cst.SimpleString,
        cst.Integer,
        cst.Float,
        cst.Pass,
        cst.Comment,
        cst.Newline,
        cst.EmptyLine,
        cst.Ellipsis,
    }
)


# -- the walk ------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ctx:
    conditional: bool = False
    guards: tuple[cst.BaseExpression, ...] = ()
    handled: bool = False
    statement: cst.CSTNode | None = None


_SAME: object = object()


def _with(ctx: _Ctx, *, conditional=_SAME, guards=_SAME, handled=_SAME, statement=_SAME) -> _Ctx:
    """``dataclasses.replace`` of a context, built directly (the walk makes one per
    statement, and ``replace`` scans the fields each time)."""
    return _Ctx(
        ctx.conditional if conditional is _SAME else conditional,  # type: ignore[arg-type]
        ctx.guards if guards is _SAME else guards,  # type: ignore[arg-type]
        ctx.handled if handled is _SAME else handled,  # type: ignore[arg-type]
        ctx.statement if statement is _SAME else statement,  # type: ignore[arg-type]
    )


def _effect(key: str, op: str, node: cst.CSTNode, ctx: _Ctx, pair: str | None) -> StateEffect:
    """An effect met directly (no helper chain) at ``node``, in the context ``ctx``."""
    return StateEffect(
        key, op, node, pair, (), ctx.statement, ctx.statement, ctx.conditional, ctx.guards, ctx.handled
    )


class _Walker:
    """Walks one body in execution order, recording effects and following calls."""

    def __init__(self, model: _Model | None, scope: _StateKeys, *, depth: int, path: frozenset) -> None:
        self.model = model
        self.scope = scope
        self.depth = depth
        self.path = path
        self.effects: list[StateEffect] = []
        #: Shared state copied into a backup earlier in this body: its key -> the backup's.
        self.saved: dict[str, str] = {}

    def run(self, node: cst.FunctionDef | cst.Lambda) -> list[StateEffect]:
        if isinstance(node, cst.Lambda):
            self.expression(node.body, _Ctx())
        else:
            self.block(_statements(node.body), _Ctx())
        return self.effects

    def add(self, key: str, op: str, node: cst.CSTNode, ctx: _Ctx, pair: str | None = None) -> None:
        self.effects.append(_effect(key, op, node, ctx, pair))

    # statements
    def block(self, statements, ctx: _Ctx) -> None:
        guards = ctx.guards
        for statement in statements:
            here = _with(ctx, guards=guards) if guards is not ctx.guards else ctx
            self.statement(statement, here)
            if exits_early(statement):
                guards = guards + (statement.test,)

    def statement(self, node: cst.CSTNode, ctx: _Ctx) -> None:
        if isinstance(node, cst.SimpleStatementLine) or isinstance(node, cst.SimpleStatementSuite):
            line = _with(ctx, statement=node if isinstance(node, cst.SimpleStatementLine) else None)
            for small in node.body:
                self.small(small, line)
        elif isinstance(node, cst.If):
            self.expression(node.test, ctx)
            inner = _with(ctx, conditional=True, guards=ctx.guards + (node.test,))
            self.block(_statements(node.body), inner)
            if node.orelse is not None:
                orelse = node.orelse
                if isinstance(orelse, cst.If):
                    self.statement(orelse, inner)
                else:
                    self.block(_statements(orelse.body), inner)
        elif isinstance(node, (cst.For,)):
            self.expression(node.iter, ctx)
            if isinstance(node.target, cst.Name):
                base = self.scope.key(node.iter, rebinding=False)
                if base is not None:
                    self.scope.aliases[node.target.value] = base + "[]"
                    self.scope.locals.discard(node.target.value)
            inner = _with(ctx, conditional=True)
            self.block(_statements(node.body), inner)
            if node.orelse is not None:
                self.block(_statements(node.orelse.body), inner)
        elif isinstance(node, cst.While):
            self.expression(node.test, ctx)
            inner = _with(ctx, conditional=True, guards=ctx.guards + (node.test,))
            self.block(_statements(node.body), inner)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self.block(_statements(node.body), _with(ctx, handled=ctx.handled or bool(node.handlers)))
            for handler in node.handlers:
                self.block(_statements(handler.body), _with(ctx, conditional=True))
            if node.orelse is not None:
                self.block(_statements(node.orelse.body), _with(ctx, conditional=True))
            if node.finalbody is not None:
                self.block(_statements(node.finalbody.body), ctx)
        elif isinstance(node, cst.With):
            for item in node.items:
                self.expression(item.item, ctx)
            suppressed = any(_is_suppress(item.item) for item in node.items)
            self.block(_statements(node.body), _with(ctx, handled=ctx.handled or suppressed))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return
        else:  # match, and anything newer: walked as conditional code
            inner = _with(ctx, conditional=True)
            for child in child_nodes(node):
                if isinstance(child, cst.BaseStatement):
                    self.statement(child, inner)
                elif isinstance(child, cst.BaseSuite):
                    self.block(_statements(child), inner)
                elif isinstance(child, cst.BaseExpression):
                    self.expression(child, inner)

    def small(self, node: cst.CSTNode, ctx: _Ctx) -> None:
        scope = self.scope
        if isinstance(node, cst.AugAssign):
            self.expression(node.value, ctx)
            key = scope.key(node.target, rebinding=True)
            if key is not None:
                if isinstance(node.operator, cst.AddAssign):
                    self.add(key, "increment", node, ctx)
                elif isinstance(node.operator, cst.SubtractAssign):
                    self.add(key, "decrement", node, ctx)
            return
        if isinstance(node, cst.Assign):
            self.expression(node.value, ctx)
            if len(node.targets) != 1:
                return
            target = node.targets[0].target
            key = scope.key(target, rebinding=True)
            if key is None:
                return
            op = _assignment_op(target, node.value)
            if (
                op == "set"
                and isinstance(node.value, cst.Name)
                and scope.constants.get(node.value.value) in _CONSTANT_OPS
            ):
                op = _CONSTANT_OPS[scope.constants[node.value.value]]
            if (
                op == "set"
                and isinstance(target, cst.Subscript)
                and key.endswith("[]")
                and not scope.fixed_item(target)
            ):
                op = "add"  # an entry under a per-call key: the container grows
            # ``x = b``: a copy of an attribute or item of shared state (a bare name may
            # be a constant or a default: an overwrite like any other).
            copied = isinstance(node.value, (cst.Attribute, cst.Subscript))
            source = scope.key(node.value, rebinding=False) if copied else None
            if source is not None and source != key:
                self.saved[source] = key
                self.add(key, "restore", node, ctx, f"restore|{source}")
                return
            backup = self.saved.get(key)
            if backup is not None:  # ``b = x; x = v``: overwritten after a backup was taken
                self.add(key, "override", node, ctx, f"override|{backup}")
                return
            setting = _setting(node.value, scope, "getter")
            if setting is not None:  # ``b = torch.cuda.current_device()``: a backup of a setting
                self.saved[setting] = key
            if not self.stored(node.value, key, node, ctx) or op != "set":
                # (storing an object entered here is its acquire, not an overwrite)
                self.add(key, op, node, ctx)
            return
        if isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.expression(node.value, ctx)
            return
        if isinstance(node, cst.Del):
            targets = node.target.elements if isinstance(node.target, cst.Tuple) else None
            first = targets[0].value if targets else node.target
            key = scope.key(first, rebinding=True)
            if key is not None:
                self.add(key, "delete", node, ctx)
            return
        for child in child_nodes(node):
            if isinstance(child, cst.BaseExpression):
                self.expression(child, ctx)

    # expressions
    def expression(self, node: cst.CSTNode, ctx: _Ctx) -> None:
        kind = type(node)
        if kind in _LEAF_TYPES or kind in _NOT_ENTERED:
            return
        if kind is cst.IfExp:
            self.expression(node.test, ctx)
            inner = _with(ctx, conditional=True, guards=ctx.guards + (node.test,))
            self.expression(node.body, inner)
            self.expression(node.orelse, inner)
            return
        if kind is cst.BooleanOperation:
            self.expression(node.left, ctx)
            inner = _with(ctx, conditional=True, guards=ctx.guards + (node.left,))
            self.expression(node.right, inner)
            return
        if kind in _COMPREHENSIONS:
            ctx = _with(ctx, conditional=True)
        for child in child_nodes(node):
            self.expression(child, ctx)
        if kind is cst.Call:
            self.call(node, ctx)

    def call(self, node: cst.Call, ctx: _Ctx) -> None:
        if self.follow(node, ctx):
            return
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        scope = self.scope
        setting = _setting(node, scope, "setter")
        if setting is not None:
            self.setter(setting, node, ctx)
            return
        if method in CONTAINER_ADDS:
            key = scope.key(func.value, rebinding=False)
            if key is not None:
                self.add(key, "add", node, ctx)
                for arg in node.args:
                    self.stored(arg.value, key, node, ctx)
            elif _setdefault_receiver(func.value):
                key = scope.key(func.value.func.value, rebinding=False)  # type: ignore[attr-defined]
                if key is not None:
                    self.add(key + "[]", "add", node, ctx)
            return
        if method in CONTAINER_REMOVALS:
            key = scope.key(func.value, rebinding=False)
            if key is not None:
                op = CONTAINER_REMOVALS[method]
                if method == "pop" and len(node.args) >= 2:
                    op = "discard"  # dict.pop(k, default) tolerates a missing key
                self.add(key, op, node, ctx)
            return
        side = method_pair_side(method)
        if side is None:
            return
        op, pair = side
        key = scope.key(func.value, rebinding=False)
        if key is not None:
            self.add(key, op, node, ctx, pair)
        elif op == "acquire" and isinstance(func.value, cst.Name) and func.value.value in scope.locals:
            scope.pending.setdefault(func.value.value, []).append(_effect("", op, node, ctx, pair))

    def setter(self, setting: str, node: cst.Call, ctx: _Ctx) -> None:
        """``torch.cuda.set_device(v)``: after a backup of the setting was taken in this
        body (``b = torch.cuda.current_device()``), an override; given shared state (the
        backup another hook took, ``torch.cuda.set_device(m._saved)``), a restore.  The
        two match by the backup's key, as attribute overrides do."""
        backup = self.saved.get(setting)
        if backup is not None:
            self.add(setting, "override", node, ctx, f"override|{backup}")
            return
        if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            source = self.scope.key(node.args[0].value, rebinding=False)
            if source is not None:
                self.add(setting, "restore", node, ctx, f"restore|{source}")

    def stored(self, value: cst.BaseExpression, key: str, node: cst.CSTNode, ctx: _Ctx) -> bool:
        """A fresh local entered earlier is stored under ``key``: the acquire is on ``key``
        now.  Whether there was one."""
        pending = self.scope.pending.pop(value.value, ()) if isinstance(value, cst.Name) else ()
        for effect in pending:
            self.add(key, effect.op, node, ctx, effect.pair)
        return bool(pending)

    # following calls
    def follow(self, node: cst.Call, ctx: _Ctx) -> bool:
        """Add the effects of a same-file callee; whether the call was one."""
        if self.model is None or self.depth >= MAX_DEPTH:
            return False
        targets = self.callees(node)
        if not targets:
            return False
        for info, aliases, extra, constants in targets:
            if id(info.node) in self.path:
                continue
            for effect in self.model.callee_effects(
                info, aliases, extra, self.depth + 1, self.path, constants
            ):
                self.effects.append(
                    StateEffect(  # the callee's effect, seen through this call
                        key=effect.key,
                        op=effect.op,
                        node=effect.node,
                        pair=effect.pair,
                        via=(node,) + effect.via,
                        statement=effect.statement,
                        hook_statement=ctx.statement,
                        conditional=effect.conditional or ctx.conditional,
                        guards=ctx.guards + effect.guards,
                        handled=effect.handled or ctx.handled,
                    )
                )
        return True

    def callees(self, node: cst.Call) -> list:
        func = node.func
        factory_call = isinstance(func, cst.Call)
        info, bound_self = self.function_of(func.func if factory_call else func)  # type: ignore[union-attr]
        if info is None:
            return []
        if not factory_call:
            constants = _constants(info, node, bound_self) + self._fixed_arguments(info, node, bound_self)
            return [(info, self.bind(info, node, bound_self), frozenset(), tuple(sorted(constants)))]
        result = [
            (info, self.bind(info, func, bound_self), frozenset(), _constants(info, func, bound_self))  # type: ignore[arg-type]
        ]
        returned = returned_name(info.node)
        closure = info.nested.get(returned) if returned else None
        if closure is not None:
            # The factory's locals are the closure's cells, fresh per call (not shared
            # state), except its ``self``, which is the object the factory ran on.
            factory_params = parameter_names(info.node.params)
            extra = set(self.model.names(info.node)[0]) | set(factory_params)
            aliases = self.bind(closure, node, None)
            if bound_self and factory_params:
                extra.discard(factory_params[0])
                aliases[factory_params[0]] = bound_self
            result.append((closure, aliases, frozenset(extra), _constants(closure, node, None)))
        return result

    def _fixed_arguments(self, info: FunctionInfo, call: cst.Call, bound_self) -> tuple:
        """``(parameter, FIXED)`` for each parameter of ``info`` that ``call`` hands, by
        position or keyword, a name this scope holds as :data:`FIXED` (a hook's
        parameter with a default, or what such a name was handed as).  A name merely
        bound outside the hook (a factory's closure variable) stays fixed only where
        the hook itself uses it as a key: a helper it is handed to is not followed."""
        if FIXED not in self.scope.constants.values() or any(a.star for a in call.args):
            return ()  # (most hooks have no such parameter: nothing to hand on)
        params = [p.name.value for p in info.node.params.posonly_params] + [
            p.name.value for p in info.node.params.params
        ]
        if bound_self and params:
            params = params[1:]
        found = []
        for param, arg in zip(params, (a for a in call.args if a.keyword is None)):
            if isinstance(arg.value, cst.Name) and self.scope.constants.get(arg.value.value) == FIXED:
                found.append((param, FIXED))
        for arg in call.args:
            if (
                arg.keyword is not None
                and isinstance(arg.value, cst.Name)
                and self.scope.constants.get(arg.value.value) == FIXED
            ):
                found.append((arg.keyword.value, FIXED))
        return tuple(found)

    def function_of(self, func: cst.BaseExpression):
        """The same-file function ``func`` names, and the key of its ``self`` for methods."""
        scope = self.scope
        if isinstance(func, cst.Name):
            name = func.value
            if name in scope.aliases or name in scope.declared:
                return None, None
            info = scope.function
            while info is not None:
                nested = info.nested.get(name)
                if nested is not None:
                    return nested, None
                info = info.parent
            if name in scope.locals:
                return None, None
            return self.model.module_functions.get(name), None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = func.value.value
            class_name = _class_of(scope.function)
            if class_name is None:
                return None, None
            self_key = scope.name_key(owner, rebinding=False)
            if owner in ("self", "cls") or (self_key is not None and self_key == scope.aliases.get(owner)):
                info = self.model.methods.get((class_name, func.attr.value))
                if info is None and self.model.facts.project is not None:
                    info = _base_method(self.model.facts.project, class_name, func.attr.value, False)
                if info is not None and not _is_static(info):
                    return info, self_key or owner
                if info is not None:
                    return info, False
        if is_super_call(func) and self.model.facts.project is not None:
            # ``super().m(...)``: the base's method, in another file of the project.
            class_name = _class_of(scope.function)
            info = (
                _base_method(self.model.facts.project, class_name, func.attr.value, True)
                if class_name
                else None
            )
            if info is not None and not _is_static(info):
                return info, scope.name_key("self", rebinding=False) or "self"
        return None, None

    def bind(self, info: FunctionInfo, call: cst.Call, bound_self) -> dict[str, str]:
        """Callee parameter → key, for arguments that are shared state or the hooked module."""
        params = parameter_names(info.node.params)
        aliases: dict[str, str] = {}
        if bound_self and params:
            aliases[params[0]] = bound_self
            params = params[1:]
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args):
            return aliases
        for param, arg in zip(params, positional):
            key = self.scope.key(arg.value, rebinding=False) if _aliasable(arg.value) else None
            if key is not None:
                aliases[param] = key
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in params and _aliasable(arg.value):
                key = self.scope.key(arg.value, rebinding=False)
                if key is not None:
                    aliases[arg.keyword.value] = key
        return aliases


def _names_module(key: cst.BaseExpression, module_param: str) -> bool:
    """``module`` or ``id(module)``, where ``module`` is the hook's module parameter."""
    if isinstance(key, cst.Call) and isinstance(key.func, cst.Name) and key.func.value == "id":
        if len(key.args) != 1 or key.args[0].keyword is not None or key.args[0].star:
            return False
        key = key.args[0].value
    return isinstance(key, cst.Name) and key.value == module_param


#: A parameter's value in :attr:`_StateKeys.constants` that is no ``True``/``False``/``None``
#: but the same on every call of the hook (a default bound when the hook was made).
FIXED = "<fixed>"
#: What an assignment of a parameter bound to a constant does (:attr:`_StateKeys.constants`).
_CONSTANT_OPS = {"True": "set_true", **{c: "set_false" for c in FALSY_CONSTANTS}}


def _constants(info: FunctionInfo, call: cst.Call, bound_self) -> tuple:
    """``(parameter, constant)`` for each parameter of ``info`` that ``call`` gives
    ``True``, ``False`` or ``None``, by position or keyword, or leaves at such a
    default; sorted, for the cache key.  Nothing when the call unpacks ``*``/``**``."""
    if any(a.star for a in call.args):
        return ()
    params = list(info.node.params.posonly_params) + list(info.node.params.params)
    if bound_self and params:
        params = params[1:]
    found: dict[str, str] = {}
    for param in params + list(info.node.params.kwonly_params):
        if param.default is not None and _constant(param.default):
            found[param.name.value] = param.default.value  # type: ignore[union-attr]
    positional = [a for a in call.args if a.keyword is None]
    for param, arg in zip(params, positional):
        found.pop(param.name.value, None)
        if _constant(arg.value):
            found[param.name.value] = arg.value.value  # type: ignore[union-attr]
    for arg in call.args:
        if arg.keyword is not None:
            found.pop(arg.keyword.value, None)
            if _constant(arg.value):
                found[arg.keyword.value] = arg.value.value  # type: ignore[union-attr]
    return tuple(sorted(found.items()))


def _constant(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in _CONSTANT_OPS


def _base_method(project, class_name: str, name: str, after_own: bool):
    """The method of another file that ``self.name`` (``super().name``) reaches."""
    from hooklint.project.queries import base_method

    return base_method(project, class_name, name, after_own)


def _aliasable(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Subscript))


def _class_of(info) -> str | None:
    while info is not None:
        if info.class_name is not None:
            return info.class_name
        info = info.parent
    return None


def _is_static(info) -> bool:
    return "staticmethod" in info.decorators or any(d.endswith(".staticmethod") for d in info.decorators)


def _statements(suite: cst.BaseSuite):
    """The statements of a block (a one-line suite is one statement of its own)."""
    return suite.body if isinstance(suite, cst.IndentedBlock) else (suite,)


def _is_suppress(item: cst.BaseExpression) -> bool:
    if isinstance(item, cst.Call):
        name = dotted_name(item.func)
        return name is not None and name.split(".")[-1] == "suppress"
    return False


def _setdefault_receiver(node: cst.BaseExpression) -> bool:
    """``X.setdefault(k, [])``: a stack per key, which ``.append`` fills."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "setdefault"
    )


def _assignment_op(target: cst.BaseExpression, value: cst.BaseExpression) -> str:
    """``X = X + 1`` → increment, ``X = max(0, X - 1)`` → decrement_clamped,
    ``X = False/None`` → set_false, ``X = True`` → set_true, else set."""
    if isinstance(value, cst.Name) and value.value in _CONSTANT_OPS:
        return _CONSTANT_OPS[value.value]
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


def _same_change(first: StateEffect, second: StateEffect) -> bool:
    """Two hooks make one change: the same statement (of a helper both reach), on the
    same state, through calls that give it the same literal arguments (a helper
    handed ``"start"`` by one hook and ``"stop"`` by the other makes two changes)."""
    return (
        first.node is second.node
        and first.op == second.op
        and keys_match(first.key, second.key)
        and _literal_arguments(first.via) == _literal_arguments(second.via)
    )


def _literal_arguments(calls: tuple) -> set[str]:
    """The literal arguments of ``calls`` and of the calls they call the result of
    (``self._phase("start")()``)."""
    found = set()
    for call in calls:
        while isinstance(call, (cst.Call, cst.Attribute)):
            if isinstance(call, cst.Call):
                found.update(
                    arg.value.value  # a literal's text
                    for arg in call.args
                    if isinstance(arg.value, (cst.SimpleString, cst.Integer, cst.Float))
                    or (isinstance(arg.value, cst.Name) and arg.value.value in CONSTANT_NAMES)
                )
                call = call.func
            else:
                call = call.value
    return found


def undone(
    pre_effects: list[StateEffect], post_effects: list[StateEffect]
) -> list[tuple[StateEffect, StateEffect]]:
    """``(acquire, release)`` for every release of a post-hook that undoes something its
    pre-hook acquired (see :func:`acquired` and :func:`pair_matches`), in the post-hook's order.
    Not when the post-hook makes the pre-hook's acquire itself too (both hooks run one
    helper, ``+= n`` in one branch and ``= None`` in another): it repeats the change
    instead of undoing it, and a skipped run of it leaves nothing a next run would not.
    An acquire the post-hook releases again itself, later in its own order (a marker
    pushed and popped for the output), is neither a repeat nor does its release undo
    the pre-hook's: :func:`balanced_inside`."""
    acquires = acquired(pre_effects)
    if not acquires:
        return []
    balanced = balanced_inside(post_effects)
    repeated = [e for e in post_effects if e.acquires and id(e) not in balanced]
    result = []
    for release in post_effects:
        if release.releases and id(release) not in balanced:
            for acquire in acquires:
                if any(_same_change(acquire, e) for e in repeated):
                    continue
                if pair_matches(acquire, release):
                    result.append((acquire, release))
                    break
    return result


def balanced_inside(effects: list[StateEffect]) -> set[int]:
    """The ids of the acquires in ``effects`` (one hook's, in its order) that a later
    release of the same hook undoes (:func:`pair_matches`), and of those releases: each
    release closes the latest acquire still open that it matches, as a stack does.  Only
    an acquire that always runs counts (``start() if phase == "start" else stop()``
    holds two branches, not a pair)."""
    open_acquires: list[StateEffect] = []
    balanced: set[int] = set()
    for effect in effects:
        if effect.releases:
            for index in range(len(open_acquires) - 1, -1, -1):
                if pair_matches(open_acquires[index], effect):
                    balanced.update((id(open_acquires.pop(index)), id(effect)))
                    break
        if effect.acquires and not effect.conditional:  # one branch's acquire may not run
            open_acquires.append(effect)
    return balanced
