"""Passes: the repeated runs of a loop body or of a function (HL003's questions).

A registration inside a loop, or inside a function that runs once per forward or
step, runs once per *pass*.  Whether that piles hooks up depends on what is new on
each pass: the names a loop binds (:func:`loop_targets`), the arguments a call
receives (:func:`call_arguments`); :func:`hooklint.analysis.lifetime.varying_names`
follows them through the pass.
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import Frame, ModuleFacts, Registration, parameter_names
from hooklint.analysis.guards import install_once
from hooklint.analysis.handles import handle_model
from hooklint.analysis.lifetime import names_in, varying_names
from hooklint.analysis.scopes import target_names
from hooklint.analysis.vocabulary import MODULE_PARTS, PER_CALL_NAMES, TAKE_ITEM_FUNCTIONS, TAKE_ITEM_METHODS
from hooklint.analysis.walk import contains, descendants


def is_statement_loop(frame: Frame) -> bool:
    """A ``for`` or ``while`` statement (not a comprehension)."""
    return frame.kind in ("for", "while")


def loop_targets(frame: Frame) -> set[str]:
    """The names a ``for`` loop or a comprehension binds on each pass (none for ``while``)."""
    node = frame.node
    if isinstance(node, cst.For):
        return target_names(node.target)
    if frame.kind == "comp":
        names: set[str] = set()
        for_in = node.for_in  # type: ignore[attr-defined]
        while for_in is not None:
            names |= target_names(for_in.target)
            for_in = for_in.inner_for_in
        return names
    return set()


def loop_body_code(facts: ModuleFacts, frame: Frame) -> str:
    """The code of a ``for``/``while`` loop's body."""
    return facts.code(frame.node.body)  # type: ignore[attr-defined]


def call_arguments(function: cst.FunctionDef) -> set[str]:
    """The names a call of ``function`` fills anew: its parameters and ``*args``
    (``self``/``cls`` left out: the object lives on between calls)."""
    names = set(parameter_names(function.params)) - {"self", "cls"}
    star = function.params.star_arg
    if star is not None and isinstance(star, cst.Param):
        names.add(star.name.value)
    return names


def argument_names(registration: Registration) -> set[str]:
    """The names the registration call's arguments read (the hook, its flags)."""
    names: set[str] = set()
    for arg in registration.call.args:
        names |= names_in(arg.value)
    return names


def varying_in_loop(facts: ModuleFacts, frame: Frame) -> set[str]:
    """Names new on each pass of a loop: its targets, the items a ``while`` loop takes
    out of a work list (:func:`drained_items`), what is bound from them, and what a pass
    picks out of an inner search keyed on them (:func:`selected_by_search`)."""
    varying = varying_names(facts, frame.node, loop_targets(frame) | drained_items(frame))
    selected = selected_by_search(frame, varying)
    return varying_names(facts, frame.node, varying | selected) if selected else varying


def hook_per_part(facts: ModuleFacts, registration: Registration, frame: Frame) -> bool:
    """The loop walks the hooked module's own parts (``for name, p in
    m.named_parameters(): m.register_forward_hook(check)``) and gives each pass a hook
    of its own: a def or lambda written in the loop that names the pass's part
    (``def check(mod, args, out, name=name)``).  Such a loop runs once per setup and puts
    one hook per part on the module, not one more each time something runs."""
    node = frame.node
    if not isinstance(node, cst.For):
        return False
    walked = node.iter
    if not (
        isinstance(walked, cst.Call)
        and isinstance(walked.func, cst.Attribute)
        and walked.func.attr.value in MODULE_PARTS
        and registration.receiver is not None
        and facts.code(walked.func.value) == registration.receiver_code
    ):
        return False
    hook = registration.hook  # a def the loop writes, or the lambda passed as it is
    if hook is None or not (
        (hook.via == "function" and contains(node.body, hook.node, into_functions=False))
        or (hook.via == "lambda" and hook.node is registration.hook_arg)
    ):
        return False
    parts = target_names(node.target)
    return any(isinstance(n, cst.Name) and n.value in parts for n in descendants(hook.node))


def selected_by_search(frame: Frame, varying: set[str]) -> set[str]:
    """Targets of a ``for`` inside the loop that an ``if`` in its body compares with a name
    new on each pass (``for name, m in model.named_modules(): if name == wanted:``), and
    names bound from them there (``short = name.split(".")[-1]``, ``found = candidate``):
    each pass picks another item.
    Without such a test the inner loop visits the same items on every pass."""
    selected: set[str] = set()
    if not isinstance(frame.node, (cst.For, cst.While)):
        return selected  # a comprehension: no statements to search in
    for inner in descendants(frame.node.body, into_functions=False):
        if type(inner) is not cst.For:
            continue
        nodes = list(descendants(inner.body, into_functions=False))
        # the inner pass's item and what its body binds from it (``short = name.split(".")[-1]``)
        items = set(target_names(inner.target))
        for n in nodes:
            if type(n) is cst.Assign and names_in(n.value) & items:
                for target in n.targets:
                    items |= target_names(target.target)
        if any(
            type(n) is cst.If and (names_in(n.test) & items) and (names_in(n.test) & varying) for n in nodes
        ):
            selected |= items
    return selected


def drained_items(frame: Frame) -> set[str]:
    """Names a ``while`` loop binds, at the top of its body, from an item it takes out
    of a container (``node = queue.pop()``, ``_, item = heapq.heappop(heap)``): a work
    list drained one item per pass, so each pass holds another item (a graph walk)."""
    node = frame.node
    if not isinstance(node, cst.While) or not isinstance(node.body, cst.IndentedBlock):
        return set()
    names: set[str] = set()
    for statement in node.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and _takes_item(small.value):
                for target in small.targets:
                    names |= target_names(target.target)
    return names


def _takes_item(value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in TAKE_ITEM_METHODS or func.attr.value in TAKE_ITEM_FUNCTIONS
    return isinstance(func, cst.Name) and func.value in TAKE_ITEM_FUNCTIONS


def varying_in_call(facts: ModuleFacts, function: cst.FunctionDef, seed: set[str]) -> set[str]:
    """Names new on each call of ``function``: ``seed`` and what its body binds from them."""
    return varying_names(facts, function.body, seed)


def kept_handle(registration: Registration) -> str | None:
    """The one name or attribute the handle is kept in (``h``, ``self.handles``), if any."""
    use = registration.handle
    if use.role == "bound" and len(use.targets) == 1 or use.role == "appended" and use.targets:
        return use.targets[0]
    if use.role == "collected" and use.final.role == "bound" and use.final.targets:
        return use.final.targets[0]
    return None


def removed_in_pass(facts: ModuleFacts, registration: Registration, scope: cst.CSTNode) -> bool:
    """Whether the handle is removed again: in ``scope`` (the loop, or the function whose
    calls are the passes), or anywhere in the function when the handles are a
    collection or an attribute (removed in bulk later), but not a collection built and
    bound to a name anew on each pass of a loop (only the last one is left to remove)."""
    target = kept_handle(registration)
    if target is None:
        return False
    site = registration.site
    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    use = registration.handle
    # ``hs = [reg(m) for m in ms]`` inside the loop: each pass binds the name to a new
    # list, so a removal after the loop reaches the last pass's handles only.
    rebound = (
        use.role == "collected"
        and use.final.role == "bound"
        and len(use.final.targets) == 1
        and target.isidentifier()
        and scope is not site.function
    )
    for removal in model.removals_of(flow.stores, model.scope_id(site), flow.window):
        if model.removes_an_earlier_list(removal, registration):
            continue
        if (
            (not flow.single and not rebound)
            or removal.site.inside(scope)
            or "." in (flow.target or "")
            or scope is site.function
        ):
            return True
    return False


#: How many same-class method calls a loop may sit above the method that rebinds its store.
REBIND_DEPTH = 3


def rebound_per_pass(facts: ModuleFacts, registration: Registration) -> tuple[str, str, str] | None:
    """``(store, method, caller)`` when a method other than ``__init__`` binds the
    ``self.*`` store its handles go into anew (``self.hooks = []``) and removes nothing
    of it, and a loop of a method of its class calls it, directly or through up to
    :data:`REBIND_DEPTH` same-class methods, without removing that store in the loop:
    each pass drops the list holding the previous pass's handles, whose hooks stay.
    Not when the registration is guarded by a test of its store (an install-once
    check: the store starts anew only when it holds nothing)."""
    function = registration.site.function
    info = facts.function_for(function) if function is not None else None
    if info is None or info.class_name is None or info.parent is not None or info.name == "__init__":
        return None
    rebound = _rebound_attributes(facts, function)
    if not rebound:
        return None  # the common case: the method binds no ``self.*`` store anew
    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    owned = {s for s in flow.stores if s.startswith("class:")}
    codes = set(model.store_codes(owned)) & rebound
    if not codes or flow.escapes is not None or flow.scoped or model.removals_of(owned, id(function)):
        return None
    if install_once(facts, registration, kept_handle(registration)):
        return None  # ``if not self.hooks: self.hooks = [...]``: it starts anew only when empty
    removals = model.removals_of(owned)
    call = _caller_in_loop(
        facts,
        info,
        lambda c: any(
            loop.kind != "comp" and not any(r.site.inside(loop.node) for r in removals)
            for loop in c.site.loops
        ),
    )
    return None if call is None else (sorted(codes)[0], info.name, call.site.function_name or "")


def _caller_in_loop(facts: ModuleFacts, info, counts, skips=None):
    """The first ``self.<method>(...)`` call of ``info`` by its class, directly or through
    up to :data:`REBIND_DEPTH` same-class methods, that ``counts`` (a loop runs it on
    every pass); ``skips``: calls not followed at all.  None when there is none."""
    calls = facts.memo("_self_calls_by_class", _self_calls_by_class)
    names = {info.name}
    for _ in range(REBIND_DEPTH):
        callers: set[str] = set()
        for name in names:
            for call in calls.get((info.class_name, name), ()):
                if skips is not None and skips(call):
                    continue
                if counts(call):
                    return call
                if call.site.function_name:
                    callers.add(call.site.function_name)
        names = callers - names
        if not names:
            return None
    return None


def dropped_per_pass(facts: ModuleFacts, registration: Registration) -> tuple[str, str] | None:
    """``(method, caller)`` when a method other than ``__init__`` drops the handle of a
    hook it puts on a module its object was given (``self.net`` set from a parameter of
    ``__init__``, or its submodules), with no install-once guard, and a loop of a method
    of its class calls it, directly or through up to :data:`REBIND_DEPTH` same-class
    methods: each pass puts one more hook on the same module, and nothing can remove
    them."""
    from hooklint.analysis.given import is_given

    function = registration.site.function
    info = facts.function_for(function) if function is not None else None
    if info is None or info.class_name is None or info.parent is not None or info.name == "__init__":
        return None
    if registration.api.owner != "module" or registration.wrapper is not None:
        return None
    if registration.handle.role != "discarded":
        return None
    # What a loop runs comes first: most methods are not, and the rest needs the handle model.
    call = _caller_in_loop(
        facts,
        info,
        lambda c: bool(c.site.loops),  # a comprehension too: ``[self.step(b) for b in batches]``
        skips=lambda c: c.site.function_name == "__init__",  # once per object
    )
    if call is None:
        return None
    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    if not flow.discarded or flow.escapes is not None or flow.scoped:
        return None
    if not _reached_from_self(model, registration):
        return None  # on the object's own modules only: a parameter may be new each pass
    if not is_given(facts, model, registration.receiver, registration.site, registration.call):
        return None
    if install_once(facts, registration, None):
        return None
    if _reads_parameters(facts, info, registration):
        return None  # which hook, or where, is the caller's choice: another one per pass
    return info.name, call.site.function_name or ""


def _reads_parameters(facts: ModuleFacts, info, registration: Registration) -> bool:
    """The registration, the statements before it in its blocks or the headers of the
    blocks around it read a parameter of the method (``self`` aside): the caller
    chooses the hook or the module (``if not fnmatch(name, pattern): continue``)."""
    from hooklint.analysis.lifetime import statement_path, statement_site, word_count

    params = [p for p in info.params if p not in ("self", "cls")]
    if not params:
        return False
    if argument_names(registration) & set(params):
        return True
    path = statement_path(facts, statement_site(registration.site)) or []
    codes = []
    for depth, level in enumerate(path):
        codes += [facts.code(s) for s in level.block[: level.index]]
        if depth < len(path) - 1:
            header = getattr(level.statement, "iter", None) or getattr(level.statement, "test", None)
            if header is not None:
                codes.append(facts.code(header))
    return any(word_count(code, p) for code in codes for p in params)


def _reached_from_self(model, registration: Registration) -> bool:
    """The hooked module is reached from ``self`` (``self.net``, ``self.net.blocks[0]``,
    a loop variable over ``self.net.named_modules()``, a local bound to one), not from a
    parameter of the method, which may be a new module on each pass."""
    from hooklint.analysis.scopes import loop_iterable

    node = registration.receiver
    scope_id = model.scope_id(registration.site)
    for _ in range(4):
        while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
            node = node.func if isinstance(node, cst.Call) else node.value
        if not isinstance(node, cst.Name):
            return False
        if node.value == "self":
            return True
        walked = loop_iterable(registration.site, node.value)
        node = walked if walked is not None else model.value_at(node, registration.call, scope_id)
    return False


def _rebound_attributes(facts: ModuleFacts, function: cst.FunctionDef) -> set[str]:
    """The ``self.*`` attributes a def binds to a fresh value (a literal container, a
    comprehension, a call): once per def."""
    known: dict[int, set[str]] = facts.memo("_rebound_attributes", lambda _: {})
    found = known.get(id(function))
    if found is None:
        found = known[id(function)] = {
            facts.code(node.targets[0].target)
            for node in facts.body_nodes(function)
            if type(node) is cst.Assign
            and len(node.targets) == 1
            and type(node.targets[0].target) is cst.Attribute
            and type(node.value) in _FRESH_VALUES
            and facts.code(node.targets[0].target).startswith("self.")
        }
    return found


def self_calls(facts: ModuleFacts, class_name: str | None, name: str) -> list:
    """The ``self.<name>(...)`` calls that methods of ``class_name`` make (indexed once)."""
    return facts.memo("_self_calls_by_class", _self_calls_by_class).get((class_name, name), [])


def _self_calls_by_class(facts: ModuleFacts) -> dict[tuple[str, str], list]:
    """``self.m(...)`` calls by the class whose method makes them and ``m``."""
    index: dict[tuple[str, str], list] = {}
    for call in facts.calls:
        if call.attr is None or call.callee != f"self.{call.attr}":
            continue
        class_def = call.site.class_def
        if class_def is not None:
            index.setdefault((class_def.name.value, call.attr), []).append(call)
    return index


#: What a store is bound to when it starts anew: a literal container, a comprehension, a call.
_FRESH_VALUES = frozenset({cst.List, cst.Dict, cst.Set, cst.Tuple, cst.ListComp, cst.DictComp, cst.Call})


#: How many calls deep a function runs per call when a per-call function calls it.
PER_CALL_DEPTH = 2


def runs_per_call(facts: ModuleFacts, function: cst.FunctionDef | None) -> bool:
    """Whether ``function`` runs once per forward, step or hook call: it is the body of
    a hook registered in this file (by name, method or ``partial``; a lambda's body is
    the lambda), a ``forward``/``__call__``/``generate``/``step``/``*_step``, or a
    same-class method or module function one of those calls, up to
    :data:`PER_CALL_DEPTH` calls deep.  A teardown (``__exit__``, ``close``) run once
    when the work is done is none of these."""
    return function is not None and id(function) in facts.memo("_per_call_functions", _per_call_functions)


def per_call_name(name: str) -> bool:
    """A name that says the function runs once per forward or step."""
    return name in PER_CALL_NAMES or name.endswith("_step")


def _per_call_functions(facts: ModuleFacts) -> set[int]:
    found = {id(r.hook.node) for r in facts.registrations if r.hook is not None and r.hook.via != "lambda"}
    found |= {id(info.node) for info in facts.functions if per_call_name(info.name)}
    layer = set(found)
    for _ in range(PER_CALL_DEPTH):
        called: set[int] = set()
        for call in facts.calls:
            caller = call.site.function
            if caller is None or id(caller) not in layer:
                continue
            callee = _same_file_callee(facts, call)
            if callee is not None and id(callee.node) not in found:
                called.add(id(callee.node))
        found |= called
        layer = called
    return found


def _same_file_callee(facts: ModuleFacts, call):
    """The def a call runs: ``self.m(...)`` in a method of the class that defines ``m``,
    or a module function called by name."""
    if call.callee is None:
        return None
    if call.attr is not None:
        class_def = call.site.class_def
        if call.callee != f"self.{call.attr}" or class_def is None:
            return None
        return facts.method(class_def.name.value, call.attr)
    return facts.module_function(call.callee) if "." not in call.callee else None
