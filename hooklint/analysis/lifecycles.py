"""Setup code with a teardown, and the hooks the setup installs that the teardown
leaves behind (HL016's questions).

A *lifecycle* is code that sets something up and has a place that undoes it:

* a ``@contextmanager`` function: the code before its first ``yield`` sets up, the
  code after it (``finally`` included) tears down;
* ``__enter__`` and ``__exit__`` of one class;
* a setup method and its teardown in the same class, by name
  (:func:`hooklint.analysis.vocabulary.lifecycle_teardowns`: ``on_train_start`` /
  ``on_train_end``, ``setup`` / ``teardown``, ``attach`` / ``detach``,
  ``register_hooks`` / ``remove_hooks``...);
* ``__init__`` of a class with a teardown of any kind (``close``, ``release``,
  ``__exit__``, ``__del__``...: :data:`hooklint.analysis.vocabulary.OWNER_TEARDOWNS`), an
  *owner*: only its hooks on a module it was given count
  (:mod:`hooklint.analysis.given`), and every teardown of the class is looked at.

A class whose ``__init__`` hooks a module it was given and that has no teardown at all
is not a lifecycle: :func:`constructor_hooks` answers HL019's narrower question about it.

The hooks a setup installs are its own registrations (before the ``yield``), and
those of *installers* it calls: same-file functions or methods, called directly or
handed to ``model.apply(fn)``, that register hooks and keep no handle the caller
gets (followed three calls deep).  Such a hook *outlives* the lifecycle when its
handle is discarded or kept where nothing in the file removes it, and the teardown
does not take hooks off in bulk (``m._forward_hooks.clear()``, a call whose name
says it removes hooks).

What other rules report is left to them, so that one bug is one finding: capture
hooks never removed (HL002), process-wide hooks never removed (HL009), handles that
``__enter__`` keeps on ``self`` and ``__exit__`` does not remove (HL004), and
removals that exist but are not exception-safe (HL004).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from hooklint.analysis.captures import leaking_capture, touches_hook_dict
from hooklint.analysis.facts import CallSite, FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.given import is_given
from hooklint.analysis.handles import (
    HELPER_DEPTH,
    HandleModel,
    applied_self_method,
    handle_model,
    runs_only_when_finalized,
)
from hooklint.analysis.hook_roles import holds_registering_object
from hooklint.analysis.module_kinds import NOT_MODULE, UNKNOWN, class_kind
from hooklint.analysis.scopes import loop_iterable
from hooklint.analysis.vocabulary import (
    CONTAINER_REMOVALS,
    CONTEXTMANAGERS,
    MODULE_ADDITIONS,
    NOT_MODULE_BASES,
    PARAMETER_LISTS,
    UNHOOK_WORDS,
    lifecycle_teardowns,
)
from hooklint.analysis.walk import descendants

_ENTERS = frozenset({"__enter__", "__aenter__"})


@dataclass(frozen=True)
class Lifecycle:
    """``setup`` and where it is undone: ``teardown`` (a method), or, for a
    ``@contextmanager`` (``kind`` ``contextmanager``), the code after the yield at
    walk position ``yield_at`` of ``setup``'s body.  ``kind`` is ``contextmanager``,
    ``enter``, ``pair`` or ``owner`` (``__init__`` of a class with a teardown)."""

    kind: str
    setup: FunctionInfo
    teardown: FunctionInfo | None = None
    #: For an ``owner`` (``__init__`` and the object's teardowns): its other teardowns.
    also: tuple[FunctionInfo, ...] = ()
    yield_at: int = -1


@dataclass(frozen=True)
class OutlivingHook:
    """A hook installed by ``lifecycle`` that its teardown leaves registered:
    ``registration`` (in the setup, or in an installer it calls through ``via``);
    ``kept`` names where the handle is kept (None: discarded or lost in a local)."""

    lifecycle: Lifecycle
    registration: Registration
    via: tuple[CallSite, ...] = ()
    kept: str | None = None
    #: Removed only when the object is finalized (``__del__``), which the hook, holding
    #: the object, keeps from running (HL019).
    finalizer: bool = False


def lifecycles(facts: ModuleFacts) -> list[Lifecycle]:
    found = []
    for info in facts.functions:
        if any(d in CONTEXTMANAGERS for d in info.decorators):
            at = _first_yield(info)
            if at >= 0:
                found.append(Lifecycle("contextmanager", info, yield_at=at))
            continue
        if info.class_name is None or info.parent is not None:
            continue
        teardowns = [facts.method(info.class_name, name) for name in lifecycle_teardowns(info.name)]
        teardowns = [t for t in teardowns if t is not None and t is not info]
        if not teardowns:
            continue
        if info.name == "__init__":  # every teardown of the object must leave the hook
            found.append(Lifecycle("owner", info, teardowns[0], tuple(teardowns[1:])))
        else:
            found.append(Lifecycle("enter" if info.name in _ENTERS else "pair", info, teardowns[0]))
    return found


def outliving_hooks(facts: ModuleFacts) -> list[OutlivingHook]:
    """The hooks each lifecycle leaves registered, one per registration."""
    model = handle_model(facts)
    found: list[OutlivingHook] = []
    seen: set[int] = set()
    for lifecycle in lifecycles(facts):
        cleared = None  # computed once per lifecycle, when a candidate needs it
        for registration, via in _installed(facts, model, lifecycle):
            if id(registration.call) in seen:
                continue
            kept = _left_behind(facts, model, lifecycle, registration, via)
            if kept is False:
                continue
            if cleared is None:
                cleared = _teardown_unhooks(facts, model, lifecycle)
            if cleared:
                break
            seen.add(id(registration.call))
            found.append(OutlivingHook(lifecycle, registration, via, kept if isinstance(kept, str) else None))
    return found


def constructor_hooks(facts: ModuleFacts) -> list[OutlivingHook]:
    """The hooks a class's ``__init__`` puts on a module it was given, when the class has
    no teardown at all (no lifecycle): the handle is discarded (or lost in a local), the
    hook holds the object (:func:`_bound_to_self`), and no method of the class takes
    hooks off in bulk.  One per registration (HL019; HL016 asks too, to leave them to
    it): computed once per module."""
    return facts.memo("_constructor_hooks", _constructor_hooks)


def _constructor_hooks(facts: ModuleFacts) -> list[OutlivingHook]:
    # A class whose only teardown is ``__del__`` is no lifecycle here: a hook that holds
    # the object keeps ``__del__`` from running.
    owners = {id(lifecycle.setup.node) for lifecycle in lifecycles(facts) if not _finalizer_only(lifecycle)}
    # A constructor that calls nothing installs nothing (``_installed`` starts from its
    # registrations and calls): the handle model is built only when one does.
    calling = {id(c.site.function) for c in facts.calls} | {id(r.site.function) for r in facts.registrations}
    constructors = [
        info
        for info in facts.functions
        if info.name == "__init__"
        and info.class_name is not None
        and info.parent is None
        and id(info.node) in calling
        and id(info.node) not in owners
        and _helper_object(facts, info.class_name)
    ]
    if not constructors:
        return []
    model = handle_model(facts)
    found: list[OutlivingHook] = []
    for info in constructors:
        lifecycle = Lifecycle("constructor", info)
        installed = list(_installed(facts, model, lifecycle))
        if any(_captures(facts, registration) for registration, _ in installed):
            continue  # the object's hooks leak with HL002's capture hook: one bug, one finding
        unhooked = None  # computed once per class, when a candidate needs it
        seen: set[int] = set()
        for registration, via in installed:
            if id(registration.call) in seen:
                continue
            finalizer = False
            if _left_behind(facts, model, lifecycle, registration, via) is not True:
                finalizer = _removed_only_by_finalizer(facts, model, lifecycle, registration, via)
                if not finalizer:
                    continue
            if not _bound_to_self(registration):
                continue
            if _adds_to_module(facts, info, registration):
                continue  # the object changes the module for good: its hooks are part of it
            if unhooked is None:
                unhooked = _class_unhooks(facts, model, info.class_name)  # type: ignore[arg-type]
            if unhooked:
                break
            seen.add(id(registration.call))
            found.append(OutlivingHook(lifecycle, registration, via, finalizer=finalizer))
    return found


def _adds_to_module(facts: ModuleFacts, info: FunctionInfo, registration: Registration) -> bool:
    """The constructor also gives the module it hooks a buffer, parameter or submodule
    (``module.register_buffer(name + "_mask", ...)``): it changes that module for as long
    as the module lives, and the hook (a forward pre-hook applying the mask, a state-dict
    hook keeping it) is part of the change, as ``torch.nn.utils.prune``'s are."""
    receiver = registration.receiver_code
    return any(
        call.attr in MODULE_ADDITIONS
        and call.site.function is info.node
        and isinstance(call.node.func, cst.Attribute)
        and facts.code(call.node.func.value) == receiver
        for call in facts.calls
    )


def _finalizer_only(lifecycle: Lifecycle) -> bool:
    """An owner whose one teardown is ``__del__``."""
    teardown = lifecycle.teardown
    return (
        lifecycle.kind == "owner"
        and not lifecycle.also
        and teardown is not None
        and teardown.name == "__del__"
    )


def _removed_only_by_finalizer(
    facts: ModuleFacts, model: HandleModel, lifecycle: Lifecycle, registration: Registration, via
) -> bool:
    """The constructor keeps the handle of a hook on a module it was given, and only the
    object's finalizer removes it (``__del__``, or a private method only ``__del__``
    calls), while the hook holds the object: the module keeps the hook, the hook keeps
    the object, so ``__del__`` never runs while the module lives."""
    if registration.api.owner != "module" or registration.wrapper is not None:
        return False
    if not is_given(facts, model, registration.receiver, registration.site, registration.call, via):
        return False
    if _captures(facts, registration) or not holds_registering_object(registration):
        return False  # a capture hook removed only by ``__del__`` is HL002's
    if model.dies_with_scope(registration):
        return False
    flow = model.acquisition_of(registration).flow
    if flow.scoped or flow.escapes is not None or flow.discarded or not flow.stores:
        return False
    removals = model.removals_of(flow.stores, window=flow.window)
    return model.only_when_finalized(removals, lifecycle.setup.class_name)


def _helper_object(facts: ModuleFacts, class_name: str) -> bool:
    """A class known from this file not to be an ``nn.Module`` (a module that hooks the
    module it wraps keeps it as its own part), none of whose same-file bases has a
    teardown (a base from another file might have one: unknown, so not this, unless
    cross-file analysis reads the whole hierarchy: :func:`_plain_bases_elsewhere`)."""
    class_def = facts.classes.get(class_name)
    if class_def is None:
        return False
    kind = class_kind(facts, class_def)
    if kind != NOT_MODULE and not (kind == UNKNOWN and _plain_bases_elsewhere(facts, class_name)):
        return False
    seen: set[str] = set()
    pending = [class_def]
    while pending:
        current = pending.pop()
        if current.name.value in seen:
            continue
        seen.add(current.name.value)
        if any(
            facts.method(current.name.value, name) is not None
            for name in lifecycle_teardowns("__init__")
            if name != "__del__"  # blocked by a hook that holds the object: see below
        ):
            return False
        pending += [
            facts.classes[b] for b in map(facts.code, (a.value for a in current.bases)) if b in facts.classes
        ]
    return True


def _plain_bases_elsewhere(facts: ModuleFacts, class_name: str) -> bool:
    """Cross-file analysis reads every base of the class (each resolves within the
    project, or is a plain one such as ``ABC``: :data:`NOT_MODULE_BASES`), so none is an
    ``nn.Module``, and no base of another file has a teardown or any hook code (a
    method with a registration or removal in it): nothing there can take the hooks off."""
    if facts.project is None:
        return False
    from hooklint.project.queries import inherited_classes

    bases = inherited_classes(facts.project, class_name, NOT_MODULE_BASES)
    if bases is None:
        return False
    teardowns = set(lifecycle_teardowns("__init__"))
    return not any(
        name in teardowns or method.get("hooky")
        for ref in bases
        for name, method in (ref.entry or {}).get("methods", {}).items()
    )


def _captures(facts: ModuleFacts, registration: Registration) -> bool:
    """A capture hook HL002 reports (one bug, one finding): not any capture hook, since
    one that HL002 leaves alone (bounded slots, say) still stays on the module."""
    return leaking_capture(facts, registration) is not None


def _bound_to_self(registration: Registration) -> bool:
    """The hook holds the object that registers it: a bound method (``self._count``,
    also inside ``partial``), what a method of it builds (``self._make_hook(name)``),
    or a lambda or nested def that uses ``self``."""
    argument = registration.hook_arg
    if argument is None:
        return False
    if _uses_self(argument):
        return True
    hook = registration.hook
    return hook is not None and hook.via == "function" and "self" not in hook.params and _uses_self(hook.node)


def _uses_self(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Name) and n.value == "self" for n in descendants(node))


def _class_unhooks(facts: ModuleFacts, model: HandleModel, class_name: str) -> bool:
    """Whether some method of the class takes hooks off without their handles: it
    touches a module's hook dict, or calls something whose name starts with a removal
    verb and is about hooks (``self._remove_all_hooks()``, ``unhook(model)``; not
    ``create_and_remove_grad_hooks`` or ``remove_buffers``).  Not ``__del__`` nor a
    private method only ``__del__`` calls: the hooks HL019 reports hold the object, so
    those never run while the module lives."""
    for info in facts.functions:
        if info.class_name != class_name or runs_only_when_finalized(facts, info):
            continue
        if touches_hook_dict(descendants(info.node.body, into_functions=False)):
            return True
        for call in facts.calls:
            name = (call.callee or call.attr or "").rsplit(".", 1)[-1].lower().lstrip("_")
            if (
                model.scope_id(call.site) == id(info.node)
                and "hook" in name
                and name.startswith(UNHOOK_WORDS)
            ):
                return True
    return False


# -- what a setup installs -----------------------------------------------------------------
def _first_yield(info: FunctionInfo) -> int:
    for position, node in enumerate(descendants(info.node.body, into_functions=False)):
        if isinstance(node, cst.Yield):
            return position
    return -1


def _setup_positions(lifecycle: Lifecycle) -> dict[int, int] | None:
    """Walk positions of the setup's calls (None: every call of the setup counts)."""
    if lifecycle.kind != "contextmanager":
        return None
    return {
        id(node): position
        for position, node in enumerate(descendants(lifecycle.setup.node.body, into_functions=False))
        if isinstance(node, cst.Call)
    }


def _before_teardown(lifecycle: Lifecycle, positions: dict[int, int] | None, call: cst.Call) -> bool:
    if positions is None:
        return True
    return positions.get(id(call), 1 << 60) < lifecycle.yield_at


def _installed(facts: ModuleFacts, model: HandleModel, lifecycle: Lifecycle):
    """``(registration, via)`` for the setup's own registrations and those of the
    installers it calls (an installer called from several places: once per call, so
    that what each call passes can be judged)."""
    positions = _setup_positions(lifecycle)
    setup = lifecycle.setup
    for registration in model.registrations_in(id(setup.node)):
        if _before_teardown(lifecycle, positions, registration.call):
            yield registration, ()
    calls = [c for c in model.calls_in(id(setup.node)) if _before_teardown(lifecycle, positions, c.node)]
    yield from _through_installers(facts, model, calls, (), set(), frozenset({id(setup.node)}), 0)


def _through_installers(facts, model: HandleModel, calls, via, walked: set[int], chain_ids, depth: int):
    if depth >= HELPER_DEPTH:
        return
    for call in calls:
        for installer in _called_functions(facts, model, call):
            if id(installer.node) in chain_ids or model.returns_handles(installer):
                continue
            chain = (*via, call)
            for registration in model.registrations_in(id(installer.node)):
                yield registration, chain
            if id(installer.node) in walked:
                continue  # its own installers were followed from its first call
            walked.add(id(installer.node))
            inner = model.calls_in(id(installer.node))
            yield from _through_installers(
                facts, model, inner, chain, walked, chain_ids | {id(installer.node)}, depth + 1
            )


def _called_functions(facts: ModuleFacts, model: HandleModel, call: CallSite) -> list[FunctionInfo]:
    """The same-file functions a call runs: its callee, and a function handed to
    ``X.apply(fn)``."""
    found = []
    callee = model.callee(call)
    if callee is not None:
        found.append(callee)
    applied = model.applied(call)
    if applied is not None:
        found.append(applied)
    return found


# -- whether a hook is left behind -----------------------------------------------------------
def _left_behind(
    facts, model: HandleModel, lifecycle: Lifecycle, registration: Registration, via
) -> str | bool:
    """False when the hook does not outlive the lifecycle (or another rule reports it);
    otherwise where its handle is kept (a store's code), or True (discarded, lost)."""
    if registration.wrapper is not None:
        return False
    if registration.api.owner == "tensor" and lifecycle.kind == "constructor":
        # a tensor hook on each parameter of a given module (an optimizer that updates
        # in backward): the parameters keep it as a module keeps its hooks
        if not _parameter_of_given(facts, model, registration, via):
            return False
    elif registration.api.owner != "module":
        return False  # process-wide hooks: HL009; other tensor and optimizer hooks: not judged
    elif lifecycle.kind in ("owner", "constructor") and not is_given(
        facts, model, registration.receiver, registration.site, registration.call, via
    ):
        return False  # an object hooking itself or its parts when built: they go together
    if _captures(facts, registration):
        return False  # a capture hook never removed: HL002
    if model.dies_with_scope(registration):
        return False
    flow = model.acquisition_of(registration).flow
    if flow.scoped:
        return False
    if flow.escapes is not None:
        return False  # handed to the caller (or on): theirs to remove
    if flow.discarded:
        return True
    if not flow.stores:
        return False
    if model.removals_of(flow.stores, window=flow.window):
        return False  # removed somewhere (HL004 judges whether that is exception-safe)
    if model.inherited_stores(flow.stores):
        return False  # kept in a store a base class of another file owns (and may empty)
    if _removed_by_name(facts, model.store_codes(flow.stores)):
        return False
    installer = registration.site.function
    local = installer is not None and all(
        s.startswith(f"def:{id(installer)}|") and s.partition("|")[2].isidentifier() for s in flow.stores
    )
    if via and local:
        return True  # kept in a local of the installer: lost when it returns
    if lifecycle.kind == "enter" and model.owned_stores(flow):
        return False  # HL004: `__enter__` keeps these hooks on self and `__exit__` does not remove them
    if local and lifecycle.kind != "contextmanager":
        return True
    return ", ".join(sorted(model.store_codes(flow.stores)))


def _parameter_of_given(facts: ModuleFacts, model: HandleModel, registration: Registration, via) -> bool:
    """The tensor hook's receiver is a loop variable over the parameters of a module the
    constructor was given (``for p in model.parameters(): p.register_hook(...)``, also
    ``named_parameters()``, whose pairs' second item it is)."""
    receiver = registration.receiver
    if not isinstance(receiver, cst.Name):
        return False
    iterable = loop_iterable(registration.site, receiver.value)
    if not (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Attribute)
        and iterable.func.attr.value in PARAMETER_LISTS
    ):
        return False
    return is_given(facts, model, iterable.func.value, registration.site, registration.call, via)


def _removed_by_name(facts: ModuleFacts, codes: list[str]) -> bool:
    """A store kept as an attribute (``state._pre_hook_handle``, ``self._handle``) that
    the file removes through another path to the same attribute name: ``x.<attr>.remove()``
    on another object, or ``getattr(self, "<attr>")`` in a function that removes."""
    attrs = {code.split("[", 1)[0].rsplit(".", 1)[-1] for code in codes if "." in code.split("[", 1)[0]}
    if not attrs:
        return False
    removing = []
    for key, calls in facts.removals.items():
        if key.split("[", 1)[0].rsplit(".", 1)[-1] in attrs:
            return True
        removing += [c.site.function for c in calls if c.site.function is not None]
    for function in dict.fromkeys(removing):
        code = facts.code(function)
        if any(f'"{a}"' in code or f"'{a}'" in code for a in attrs):
            return True
    return False


def _teardown_unhooks(facts: ModuleFacts, model: HandleModel, lifecycle: Lifecycle) -> bool:
    """Whether the teardown takes hooks off without their handles: it touches a module's
    hook dict (``m._forward_hooks.clear()``), or calls something whose name says it
    removes hooks, itself or through same-file helpers."""
    if lifecycle.teardown is not None:
        return any(
            _unhooks(
                facts,
                model,
                list(descendants(teardown.node.body, into_functions=False)),
                [c for c in facts.calls if model.scope_id(c.site) == id(teardown.node)],
                {id(teardown.node)},
                0,
            )
            for teardown in (lifecycle.teardown, *lifecycle.also)
        )
    nodes = list(descendants(lifecycle.setup.node.body, into_functions=False))[lifecycle.yield_at + 1 :]
    inside = {id(n) for n in nodes if isinstance(n, cst.Call)}
    calls = [c for c in facts.calls if id(c.node) in inside]
    return _unhooks(facts, model, nodes, calls, {id(lifecycle.setup.node)}, 0)


def _unhooks(facts, model: HandleModel, nodes, calls, visited: set[int], depth: int) -> bool:
    if touches_hook_dict(nodes):
        return True
    for call in calls:
        name = (call.callee or call.attr or "").rsplit(".", 1)[-1].lower()
        if call.attr != "remove" and any(word in name for word in UNHOOK_WORDS):
            return True
    if depth >= HELPER_DEPTH:
        return False
    for call in calls:
        for function in _called_functions(facts, model, call):
            if id(function.node) in visited:
                continue
            visited.add(id(function.node))
            inner_nodes = list(descendants(function.node.body, into_functions=False))
            inner_calls = [c for c in facts.calls if model.scope_id(c.site) == id(function.node)]
            if _unhooks(facts, model, inner_nodes, inner_calls, visited, depth + 1):
                return True
    return False


@dataclass(frozen=True)
class GrowingStore:
    """A setup that appends its handles to ``store`` (a ``self`` list) each time it runs,
    and a teardown that removes what the list holds but never empties it."""

    lifecycle: Lifecycle
    #: The first registration whose handle goes into such a list.
    registration: Registration
    #: Every such list of the setup, in the order its registrations fill them.
    stores: tuple[str, ...]


#: Methods that take items out of a list or a dict (or empty it): the container
#: removals that expect the item there, and ``clear``.
_EMPTYING_METHODS = frozenset(m for m, kind in CONTAINER_REMOVALS.items() if kind != "discard")
#: Methods that set an object's stores up the first time (not a rebinding per run).
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__"})


def growing_stores(facts: ModuleFacts) -> list[GrowingStore]:
    """``__enter__`` (or the setup of a same-class pair: ``attach``/``detach``) appends
    each handle it registers to a ``self`` list, and its teardown removes every handle
    of that list (``for h in self.handles: h.remove()``) but nothing in the class,
    besides its constructor, empties or rebinds the list: a second ``with obj:`` adds
    its handles to those of the first, and every teardown walks them all again.  The
    setup's own registrations only, not under an install-once check.

    Only where the setup runs again on one object: ``__enter__``, unless every use of
    the class in the file enters a new object (``with Tap(model):``); another setup
    when the file calls it (or hands it to ``Module.apply``) from a function that runs
    per call (:func:`hooklint.analysis.passes.runs_per_call`), from a loop, or from a
    public method other than the constructor (a setup that only ``__init__`` runs,
    once per object, fills the list once)."""
    from hooklint.analysis.guards import install_once

    found = []
    for lifecycle in lifecycles(facts):
        if lifecycle.kind not in ("enter", "pair") or lifecycle.teardown is None:
            continue
        if not any(r.site.function is lifecycle.setup.node for r in facts.registrations):
            continue  # (read first: the handle model is built only for a setup that registers)
        if lifecycle.kind == "enter":
            if _entered_new_only(facts, lifecycle.setup.class_name):
                continue
        elif not _runs_again(facts, lifecycle.setup):
            continue
        model = handle_model(facts)
        teardown_removals = model.removals_in(id(lifecycle.teardown.node))
        if not teardown_removals:
            continue
        first, stores = None, []
        for registration in model.registrations_in(id(lifecycle.setup.node)):
            flow = model.acquisition_of(registration).flow
            if flow.single or flow.escapes or flow.scoped:
                continue
            removed = {model.find(r.store) for r in teardown_removals}
            kept = [s for s in flow.stores if s.startswith("class:") and model.find(s) in removed]
            store = model.store_codes(set(kept[:1]))[0] if kept else ""
            if not store.startswith("self.") or "[" in store:
                continue
            if install_once(facts, registration, store) or _emptied(facts, lifecycle.setup.class_name, store):
                continue
            first = first or registration
            if store not in stores:
                stores.append(store)
        if first is not None:
            found.append(GrowingStore(lifecycle, first, tuple(stores)))
    return found


def _emptied(facts: ModuleFacts, class_name: str | None, store: str) -> bool:
    """Whether a method of the class other than its constructor binds ``store`` anew,
    deletes it or one of its items, or takes items out of it (``clear()``, ``pop()``)."""
    for info in facts.functions:
        if info.class_name != class_name or info.name in _CONSTRUCTORS:
            continue
        for node in facts.body_nodes(info.node):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                if any(_names_store(facts, target, store) for target in targets):
                    return True
            elif isinstance(node, cst.Del) and _names_store(facts, node.target, store):
                return True
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in _EMPTYING_METHODS
                and facts.code(node.func.value) == store
            ):
                return True
    return False


def _names_store(facts: ModuleFacts, target: cst.CSTNode, store: str) -> bool:
    """``self.hooks``, ``self.hooks[:]``, ``self.hooks[i]``, or a tuple holding one."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_names_store(facts, element.value, store) for element in target.elements)
    while isinstance(target, cst.Subscript):
        target = target.value
    return facts.code(target) == store


def _entered_new_only(facts: ModuleFacts, class_name: str | None) -> bool:
    """Every construction of the class in the file is the item of a ``with``, or is
    returned by a function or method whose every call in the file is (``with
    self.steer(d):``, ``steer`` returning ``AddHook(...)``): each ``with`` enters an
    object of its own, once."""
    made = [call for call in facts.calls if call.callee == class_name]
    return bool(made) and all(
        call.use.role == "with" or (call.use.role == "returned" and _only_entered(facts, call.site.function))
        for call in made
    )


def _only_entered(facts: ModuleFacts, function) -> bool:
    """Every call of ``function`` in the file (by name, or as a method of that name)
    is the item of a ``with``."""
    info = facts.function_for(function) if function is not None else None
    if info is None or info.parent is not None:
        return False
    if info.class_name is None:
        calls = [c for c in facts.calls if c.callee == info.name]
    else:
        calls = list(facts.calls_to_attr(info.name))
    return bool(calls) and all(c.use.role == "with" for c in calls)


def _runs_again(facts: ModuleFacts, setup: FunctionInfo) -> bool:
    """The file runs ``setup`` (``self.setup()``, or ``X.apply(self.setup)``) from a
    per-call function, a loop, or a public method other than the constructor."""
    from hooklint.analysis.passes import runs_per_call, self_calls

    applied = [
        call
        for call in facts.calls_to_attr("apply")
        if applied_self_method(call) == setup.name
        and call.site.class_def is not None
        and call.site.class_def.name.value == setup.class_name
    ]
    for call in [*self_calls(facts, setup.class_name, setup.name), *applied]:
        caller = facts.function_for(call.site.function) if call.site.function is not None else None
        if caller is None or caller.name in _CONSTRUCTORS:
            continue
        if runs_per_call(facts, caller.node) or call.site.loops or not caller.name.startswith("_"):
            return True
    return False
