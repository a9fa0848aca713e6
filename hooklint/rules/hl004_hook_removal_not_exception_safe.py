"""HL004 hook-removal-not-exception-safe."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

from hooklint.analysis.bulk_removal import bulk_clears, hook_dict_of, may_clear
from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.guards import in_script_that_stops_on_error, only_when_unset, touches_only_its_module
from hooklint.analysis.handles import Acquisition, HandleModel, handle_model, hook_key, may_remove
from hooklint.analysis.lifetime import (
    cannot_raise,
    common_level,
    has_multiline_string,
    is_contextmanager,
    looks_up_before_registering,
    only_registers,
    plain_value,
    registering_block,
    registration_statement_alone,
    statement_path,
    statement_site,
    tests_on_the_way,
    word_count,
)
from hooklint.analysis.reachability import (
    guarded_body,
    narrow_handler,
    raise_after,
    raises_next,
    removed_before,
)
from hooklint.analysis.statements import (
    chains_bound,
    chains_read,
    in_kept_lambda,
    is_bare_yield,
    is_loop,
    is_simple_line,
    jump_out_of,
    leaves_before,
    leaves_loop_after,
    only_removes,
    raises_first,
    tests_empty,
)
from hooklint.analysis.walk import contains
from hooklint.fixes.lifetime import try_finally, try_from_earlier, with_replacing
from hooklint.rules.base import (
    MESSAGE_LIMIT,
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    more_registrations,
    with_evidence,
)

if TYPE_CHECKING:
    import libcst as cst


def _removals_run_here(model: HandleModel, stores, scope_id: int, window=None) -> list:
    """The removals of ``stores`` in one scope that run there: a remover lambda handed
    back (``return lambda: [h.remove() for h in hs]``) runs later, in the caller.  None
    when every one is a cleanup just before a ``raise`` (``self.close()``, then
    ``raise``, outside any handler): the scope takes the hooks off only on its way out
    of an error, and they are meant to stay on otherwise (another method removes them)."""
    found = [r for r in model.removals_of(stores, scope_id, window) if not in_kept_lambda(r.site)]
    if found and all(
        not r.site.in_except
        and not r.site.in_finally
        and r.site.function is not None
        and raises_next(r.site.function, r.call)
        for r in found
    ):
        return []
    return found


def _covered_by(site, removals, part: str) -> bool:
    """One of ``removals`` is in a ``part`` (``"finally"``, or ``"except"``: a handler)
    of a `try` whose body holds ``site``."""
    parts: set[int] = set()
    for frame in site.frames:
        if frame.kind != "try":
            continue
        if part == "finally" and getattr(frame.node, "finalbody", None) is not None:
            parts.add(id(frame.node.finalbody))
        elif part == "except":
            parts.update(id(handler) for handler in getattr(frame.node, "handlers", ()))
    return bool(parts) and any(
        frame.kind == part and id(frame.node) in parts for r in removals for frame in r.site.frames
    )


def _leaves_after(facts: ModuleFacts, removal) -> bool:
    """The removal's block leaves the function right after it (``return``, ``raise``):
    an early way out, with the rest of the function a path of its own."""
    import libcst as cst

    path = statement_path(facts, statement_site(removal.site))
    if not path:
        return False
    level = path[-1]
    rest = level.block[level.index + 1 :]
    return any(
        isinstance(small, (cst.Return, cst.Raise))
        for statement in rest
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
    )


def _prepares_for(facts: ModuleFacts, gap, try_statement, handles: str) -> bool:
    """Whether the statements between hooks going on and the `try` that removes them
    prepare what the `try` body uses: one that can raise binds a name the body reads
    (``batch = move(batch, device)``, ``x, sizes = process(inputs)``), or checks the
    hooks just put on and raises when they are not what was asked for (``assert
    len(handles) == len(names)``, ``if len(handles) < len(names): raise ...``: made to
    fail, with the hooks on; not ``if not handles: raise ...``, which fails only when
    no hook went on).  A call run for its effect (a log line, a flag set), another
    registration or a guard of something else is not counted: what raises there is
    rare, and it is not the input the hooks are for."""
    used = chains_read(try_statement.body)
    for statement in gap:
        if only_registers(facts, statement) or cannot_raise(statement):
            continue
        if chains_bound(statement) & used or _checks(statement, handles):
            return True
    return False


def _registers_raises_and_returns(facts: ModuleFacts) -> set[int]:
    """The defs (``id`` of each) whose own code registers a hook, raises (or asserts)
    and returns a value: the only ones that can hand handles back after a ``raise``
    (decided from the facts, before the handle model is built)."""
    return {id(r.site.function) for r in facts.registrations} & facts.raising & facts.returning


def _checks(statement, handles: str) -> bool:
    """``statement`` is an ``assert``, or an ``if`` whose body raises, that tests
    ``handles`` (the code of the handle store)."""
    import libcst as cst

    if isinstance(statement, cst.SimpleStatementLine):
        return any(
            isinstance(small, cst.Assert) and handles in chains_read(small.test) for small in statement.body
        )
    return (
        isinstance(statement, cst.If)
        and handles in chains_read(statement.test)
        and raises_first(statement)
        and not tests_empty(statement.test, handles)  # raises only when no hook went on
    )


def _base_exit_may_remove(facts: ModuleFacts, model: HandleModel, class_name: str, exit_, owned) -> bool:
    """``__exit__`` hands on to a base class of another file (``super().__exit__()``),
    which may remove the stores ``owned``: stay silent unless cross-file analysis reads
    every base of the class and none of them removes them."""
    from hooklint.analysis.names import is_super_call

    if not model.extends_elsewhere(class_name):
        return False
    if not any(is_super_call(call.node.func) for call in model.calls_in(id(exit_.node))):
        return False
    if facts.project is None:
        return True
    from hooklint.project.queries import inherited_removal

    return inherited_removal(facts.project, class_name, set(model.store_codes(owned))) is not False


def _try_level(path) -> int | None:
    """How many levels of ``path`` (a removal's statement path from the common level
    down) lead to the `try` whose `finally` holds the removal: its own level is the
    last of them; None when that `try` is not on the path (the registration sits in
    the same `finally`)."""
    import libcst as cst

    for index, level in enumerate(path[:-1]):
        statement = level.statement
        if not isinstance(statement, (cst.Try, cst.TryStar)):
            continue
        blocks = [h.body.body for h in statement.handlers]  # a handler's: the failure path's
        if statement.finalbody is not None:
            blocks.append(statement.finalbody.body.body)
        if any(path[index + 1].block is block for block in blocks):
            return index
    return None


#: Methods whose failure leaves no one to remove what they kept on ``self``, and why.
_SETUP_THAT_MAY_FAIL = {
    "__init__": "the caller never gets the object to remove them",
    "__enter__": "`with` then never runs `__exit__` to remove them",
}


class HookRemovalNotExceptionSafe(Rule):
    """A hook's handle is removed after code that can raise, outside `finally`/`with`.

    ## What it does
    Finds `handle = register_*hook(...)` (or handles collected into a list), then code
    that can raise, then `handle.remove()` (or a loop or helper that removes the list)
    that is not in a `finally` block or a `with` statement. This includes a removal
    after the `yield` of a `@contextmanager` function, which is skipped when the body of
    the caller's `with` raises, and a removal that a `return`, `continue` or `break`
    between can skip without anything raised (the message names the jump; the same
    fix covers it). A removal in `finally` covers only what its `try`
    runs: hooks put on before the `try`, with code that can raise between the two
    (preparing the input, moving it to a device), are reported too, and the fix starts
    the `try` at that code, reusing its `finally` (other hooks put on for the same
    `finally` are part of the registration, not code between). Such code counts when
    it prepares what the `try` body uses, or checks the hooks just put on and raises
    when they are not what was asked (`assert len(handles) == len(names)`); a log
    line or a guard of something else does not, nor does a check that raises only
    when no hook went on (`if handle is None: raise ...`, `if not handles:`; the fix
    never moves one into the `try`, whose `finally` would remove a `None`). A loop that puts the hooks on before
    the `try` and looks each module up by a name the caller gave (a later pass raises
    with the earlier hooks on) is HL020's, a preview rule: whether the caller's names
    can be wrong is often decided outside the function.
    Code in a script's main block (`if __name__ == "__main__":`, also a function
    defined there) that catches nothing is left alone: an error there ends the
    program, hooks and all.
    Hooks on the call's own object are left alone: a copy (`copy.deepcopy(model)`,
    also a parameter rebound to one), a new build (from literals, f-strings, imported
    names or the call's own new objects, `spec = Spec(8); net = Net(spec)`, or by a
    same-file function that only ever returns what it builds, loads or deep-copies,
    whatever it is handed: `ref = load_reference(path, device)`, also a nested def of
    the function, `def fresh(m): return copy.deepcopy(m)`; handing it to a same-file function
    that only calls it, `run(ref, batch)`, keeps it the call's own) or a model
    loaded by name (`AutoModel.from_pretrained(name)`, also through a class a local
    holds, `cls = getattr(transformers, arch); net = cls.from_pretrained(name)`; `net =
    net.to(device)` after it keeps the same object), hooked itself,
    through its parts or a loop over them (`enumerate(net.blocks)` too) or parts looked
    up by name (`net.get_submodule(path)`, `functools.reduce(getattr, path.split("."),
    net)`), or by a
    same-file class built on it (`taps = Taps(net)`), or by a plain function that
    hands back the handles (`hs = watch(net, seen)`, of this file or another; the other
    arguments literals or locals that hold only literals), that nothing returns, stores or passes on before the
    removal (handing it to a new object that a local keeps and that is the call's own
    too, `wrapped = nn.Sequential(net)`, is not passing it on): whatever raises drops
    the object with its hooks. Nor is a removal that
    takes hooks kept on `self` off only for a moment: the same setup method (or the same
    registration) runs again after it, in the same block, and nothing removes them
    before the function ends (strip the hooks, `copy.deepcopy` the model, install them
    again): on is the state the function leaves either way.
    A removal on an early way out (an `if` that removes and returns) does not hide the
    rest of the function: the removal after it is checked on its own path.
    It fires only when a removal exists (a hook never removed is HL002's or HL009's
    business) and something other than plain assignments (of names, literals, empty
    slots built per key, `{i: [] for i in range(n)}`, tests such as `"x" in kinds`,
    `getattr(obj, "name", default)`; putting a name into a container:
    `self.handles.append(handle)`; a forward (pre-)hook registration on a name; a `try`
    whose handler catches every `Exception` and re-raises nothing, with `else` and
    `finally` of such statements; a `with torch.no_grad():` around them, or an `if`
    on such values; attributes of `self`, and a value's `device`, `dtype` or
    `training`; a module's mode switch, `model.eval()`; the first of a module's
    parameters with a default, `next(model.parameters(), None)`; `torch.tensor(0.0)`,
    `torch.device("cpu")`; another registration that keeps its handle) sits between
    the registration and the removal (a
    removal inside a `try` whose `finally` removes them too is an extra: the `finally`
    decides), and only when the registration's pass reaches the
    removal: not when a block around the registration ends in `return`, or in
    `continue`/`break` of a loop around both (the handles are removed by a later
    pass or call). A call of a helper of another file whose name says
    it removes (`remove_hooks(handles)`) is trusted to remove.

    Handles are followed the way code keeps them (see
    `hooklint.analysis.handles`): bound and then appended, extended or added; built
    by comprehensions and `set(...)`/`list(...)` of a generator or of `map` over a
    lambda (`list(map(lambda p: p.register_hook(f), ps))`); dict values and
    tuples inside them; aliases; returned by a helper of the same file (three calls
    deep; a static or class method called through its class's name, `Tracer._watch(net)`,
    is one), also as one element of a tuple the caller unpacks (`handles, shapes =
    helper()`) and also when a def nested in the helper (a recursive walker) fills the
    list the helper returns; put by a same-file helper into the list its caller passes
    (`hook_tree(model, fn, handles)`, also a walker that passes it on to itself); put
    by a nested def into a list of the function around
    it, which calls the def or hands it out (`model.apply(attach)`), also through
    other defs nested there (a walker that calls it on every child): the span then
    starts at that call (not when the def is registered as a hook: it then runs
    when the module does); kept by a same-file helper on an attribute of the object it
    is given (`def attach(m): m._h = m.register_forward_hook(fn)`) that another
    function of the file removes (`def detach(m): m._h.remove()`): a call
    `attach(m)` acquires, and `detach(m)` releases, what `m` holds, also through a
    function that hands its parameter to such a helper (`def start(net):
    net.apply(attach)`: `Module.apply` runs `attach` on every submodule, also wrapped
    in `partial`) and through a module function bound to the object as its method
    (`net.start = start.__get__(net)`, then `net.start()`), the flop counters' start/stop
    pair; not when the object is the call's own copy of a model (`copy.deepcopy`),
    whose hooks die with it. A closure that removes what the function around it
    binds removes it where it is called; kept by the
    constructor of a same-file class whose method removes them (`probe =
    Probe(model)` acquires, also through a same-file factory whose every `return`
    builds one, `self._make_probe()`; `probe.close()` releases; not when its `__del__` removes
    them too, unless a hook holds the object, a bound method or a closure over `self`:
    the model keeps the hook, the hook keeps the object, and `__del__` never runs); so
    does building an object of another file's class whose `__init__` keeps every handle
    it registers on `self` and whose own `remove()` removes them (not when its
    `__del__` does: `cap = Capture(model)`, then `cap.remove()`). Removals are `.remove()` on the handle or an element (`d.pop(k).remove()`,
    `_, h = d.pop(k)`), loops, `while hs: hs.pop().remove()`, comprehensions and `map`
    over the store, and same-file helpers that remove a parameter or an attribute.
    A loop that registers and then leaves with `break` (finding one module by its
    name) registers once: its handle is read as outside a loop.
    Bindings are per scope: a `handle` of another function is another handle.
    A constructor that keeps handles on `self` (for another method to remove) and
    then reaches an explicit `raise` or `assert` outside `try` is reported too: when it
    raises, its caller never gets the object, so nothing can remove the hooks; so is
    an `__enter__` that does so, since `with` runs `__exit__` only after `__enter__`
    returned (a
    call that might raise is not enough there: only an argument check after the
    hooks are on; in a loop that hooks one layer per pass, a check of what the loop
    changes, whose later pass raises after the earlier ones hooked, also in a
    handler that re-raises or in a method of the class that `__init__` calls; not
    when the `raise` follows, in its block, a call that removes them: `self.close()`
    then `raise`). So is a function that hands the handles of the hooks it registers
    back to its caller (returns them, or an object built on them, `return
    Group(handles)`) and reaches such a `raise` or `assert` after a registration: the
    caller never gets the handles (not when the registration's branch returns first,
    nor when the hooks come off before the `raise`). `super().m(...)` runs the first
    same-file base's `m`.
    `self.register_hooks(...)` followed by a same-class removal method
    (`self.cleanup()`) is a setup/teardown pair, as is a call of a same-class method
    whose body keeps every handle it registers on `self`, whatever its name, called
    directly or run on every submodule (`self.net.apply(self._attach)`), also through a
    local (`h = reg(...)`, then `self.h = h`). A method called
    on another object (`self.points[name].add(fn)`, `probe.release()`, also run on every
    submodule: `model.apply(probe.attach)`; and a profiler's `prof.start()`/`prof.stop()`
    that run nested defs on every submodule of the model they hold,
    `self.model.apply(attach)`, keeping each handle on its module) is followed when
    the object's bindings name its class (`self.tracker` that its class only ever sets
    to `RangeTracker(...)` or `None`, a local only bound to `Sampler(...)`; then a method of
    that class named `remove` is that method, not a handle's; a loop variable over a list
    whose every fill is an object of that class, `hooks.append(Steer(...))`, or that a
    same-file helper returns (`taps = make_taps(model)`, which calls `tap.attach(m)` on
    each before it returns the list: the call acquires what `attach` keeps), or a local
    the same block just bound to one, names it too), or else
    when the file has exactly one class whose method of that name registers hooks or removes
    handles (any other method of that name only passes the call on, or is a base class's
    placeholder, `raise NotImplementedError`): what it keeps on its
    `self` is that class's store (the message says `Probe.active`), and a handle wrapped
    in a record class of the file (`Entry(handle, sticky)`) is still that handle. A class whose `__enter__` keeps
    handles on `self` that `__exit__` does not remove is flagged too (not when `__exit__`
    calls `super().__exit__()` of a base class in another file that may remove them, unless
    cross-file analysis reads every base and none does), and so is a one-shot
    hook whose only removal is in its own body (`handle.remove()` inside the hook): it
    comes off only if it fires, so a module the forward never reaches, or every module
    when the forward raises first, keeps it (a module's own one-shot hook on `self`, such
    as lazy initialisation, is left alone, as is a one-shot forward (pre-)hook that keeps
    nothing outside the module it is handed, lazy set-up (it stores only into that
    module, `module.ready = True`, names no `self` and calls no function of the file), and so is a handle kept in a `self.*` list
    that a base class of another file creates, whose own methods may empty it, or in a
    dict the caller passed in, whose leftovers the caller may remove). A removal only in an `except` handler that
    catches some exceptions (`except StopForward:`, the hook that stops the forward on
    purpose) covers only those: anything else raised, or a forward that never reaches
    the hook, keeps it (a handler catching `Exception` or everything, that re-raises
    or gives up, counts as the failure path's removal, for what its `try` runs: hooks
    put on before that `try`, with code between that can raise and that prepares what
    the `try` uses, are reported as for a late `finally`, without a fix). A remover handed back to the caller
    (`return lambda: [h.remove() for h in hs]`) is the caller's removal, not one here.
    Hooks whose handles are dropped (or never removed) and that come off in bulk,
    by emptying their hook dicts (`m._forward_hooks.clear()`, `.pop(k)`, or `m._forward_hooks
    = OrderedDict()`, often in a loop over `model.modules()`, itself or through a
    same-file helper, three calls deep), are read the same way: the clear is their
    removal, and it must be in `finally` when code that can raise runs first (a
    function that also clears in `finally` or a handler is left alone; reading a dict,
    `if m._forward_hooks:`, takes nothing off). No fix is offered for this shape.
    One bug is one
    finding: what one statement removes of the same hook registered again, or of hooks
    registered side by side in one block (a pre-hook and a post-hook put into one list,
    two comprehensions into one name, the branches of one `if`/`elif`), is reported at
    the first registration, and the message counts the others.

    ## Why is this bad?
    If anything between the registration and the removal raises (an out-of-memory
    error, a shape mismatch, a `KeyboardInterrupt` in a notebook), the removal never
    runs and the hook stays registered for the rest of the process. Attribution and
    summary tools that hook every layer then keep capturing (and pinning memory) on
    every later forward, and a retried notebook cell stacks a second set of hooks.

    ## Example
    ```python
    def layer_shapes(model, x):
        shapes = []
        handle = model.register_forward_hook(lambda m, i, o: shapes.append(o.shape))
        model(x)
        handle.remove()
        return shapes
    ```

    ## Use instead
    ```python
    def layer_shapes(model, x):
        shapes = []
        with model.register_forward_hook(lambda m, i, o: shapes.append(o.shape)):
            model(x)
        return shapes
    ```
    `RemovableHandle` is a context manager in every torch release since 1.8. When
    the handle is used for something else too, or handles are collected in a list,
    the span goes into `try`/`finally` instead.

    ## Fix safety
    Safe: the hook is removed at the same point on the normal path, and also when
    the code in between raises. The fix turns the span into `with register(...):`
    when the handle is a local name used for nothing else, and into
    `try`/`finally` otherwise (for a `@contextmanager`, that puts `yield` in
    `try`/`finally`). No fix is offered when the registration and the removal are
    not in the same block, or the span holds a multi-line string, or when the
    removal statement does more than remove, or when it hands `h.remove` to a
    finalizer (`weakref.finalize`, `atexit.register`): that hook is meant to outlive
    the function. What binds a name the removal reads (the registration, `hooks = [h]`,
    an alias) stays above `try`, so that `finally` never meets an unbound name; when
    such a statement comes after code that can raise, no fix is offered.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    38 findings, 30 true positives, no false positive, 3 debatable (100% of the
    judged ones), 5 not labelled (judged true in the closing notes; the fifth,
    DeepSpeed's `get_model_profile`, from a profiler object's start/stop pair). On 29 other
    libraries (`notes/heldout4.md`): 30 findings, 30 true positives. On held-out set 10
    (33 libraries, `notes/heldout10.md`): 6 findings, all true (a flop counter's
    start/stop pair, model summaries' handle lists, a walker's list, a constructor that
    raises on a later pass of its hooking loop); on set 11 (33 more, read after these
    changes): 1, true. Held-out sets 18-20 (75 libraries, `notes/heldout18.md`): 107
    findings, 93 true, 3 false, 11 debatable as the helpers found them; the three false
    ones (a caller's dict, two builds from a local settings object) are gone. Set 21
    (`notes/heldout18.md`, 25 more, read after these changes): 27 findings, 5 true, 10
    false, 12 debatable, counting the 7 false ones of the loop shape that then went to
    HL020 (the other 3: tensor arithmetic on a guarded dict lookup counted as code that
    can raise). Set 22 (45 libraries, `notes/heldout22.md`, read before the changes of
    7 Dec's second session): 30 findings, 24 true, 2 false, 4 debatable; after them 31:
    26 true (a walker nested beside the def that fills the list, in two of its parts),
    1 false (a private helper whose only caller, in another file, builds the models),
    4 debatable.
    """

    code = "HL004"
    name = "hook-removal-not-exception-safe"
    fix_applicability = "safe"
    reads_removals = True  # handles another file's helper registered
    #: Report only the registration loops whose lookups can raise (HL020, preview).
    loop_lookups: ClassVar[bool] = False

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        if (
            not may_remove(facts)
            and not may_clear(facts)
            and not any(f.name == "__enter__" and f.class_name for f in facts.functions)
        ):
            # nothing here removes a hook, and no `__enter__` keeps one: only a function
            # that registers and raises can hand the caller hooks it cannot remove
            if _registers_raises_and_returns(facts):
                yield from self._returned_after_raising(facts, handle_model(facts))
            return
        model = handle_model(facts)
        # One finding per bug: what one statement removes of the same hook registered
        # again, or of hooks registered side by side (a pre-hook and a post-hook in one
        # block), reported at the first.
        groups: dict[tuple, list] = {}
        for scope_id in model.scopes():
            for acquisition in model.acquisitions(scope_id):
                found = self._check(facts, model, acquisition) or self._removes_only_itself(
                    model, acquisition
                )
                if found is None:
                    continue
                finding, removal_statement = found
                block = registering_block(acquisition.site)
                keys = (
                    (id(removal_statement), hook_key(facts, model, acquisition)),
                    (id(removal_statement), (block.kind, id(block.node)) if block is not None else None),
                )
                group = next((groups[k] for k in keys if k in groups), None)
                if group is not None:
                    group[1].append(acquisition.call)
                else:
                    group = [finding, []]
                for key in keys:
                    groups.setdefault(key, group)
        exits = list(self._exit_leaves_hooks(facts, model))
        exits += self._constructor_raises_after_hooking(facts, model)
        exits += self._returned_after_raising(facts, model)
        exits += self._cleared_in_bulk(facts, model)
        yield from exits
        reported = {id(f.node) for f in exits}
        for finding, others in {id(g): g for g in groups.values()}.values():
            if id(finding.node) in reported:
                continue  # one bug, one finding: `__exit__` leaving them is the same hooks
            if others:
                finding = dataclasses.replace(
                    finding, message=finding.message + more_registrations(len(others)), related=tuple(others)
                )
            yield finding

    def _exit_leaves_hooks(self, facts: ModuleFacts, model: HandleModel) -> Iterable[Finding]:
        """``__enter__`` keeps handles on ``self`` that ``__exit__`` (which runs when the
        body raises) does not remove: only a normal end of the body, or another method,
        would.  Only attributes the class itself assigns (a base class in another file
        cannot know them)."""
        for enter in facts.functions:
            if enter.name != "__enter__" or enter.class_name is None:
                continue
            exit_ = facts.method(enter.class_name, "__exit__")
            if exit_ is None:
                continue  # no __exit__ here: a base class elsewhere may have one
            for acquisition in model.acquisitions(id(enter.node)):
                flow = acquisition.flow
                owned = model.owned_stores(flow)
                if not owned or flow.escapes is not None or flow.scoped:
                    continue
                if model.removals_of(flow.stores, id(exit_.node)):
                    continue
                if _base_exit_may_remove(facts, model, enter.class_name, exit_, owned):
                    continue  # ``super().__exit__()`` of another file's base may remove them
                target = model.store_codes(owned)[0]
                yield Finding(
                    node=acquisition.node,
                    message=(f"`__enter__` keeps hooks in `{target}` but `__exit__` does not remove them"),
                )
                break

    def _constructor_raises_after_hooking(self, facts: ModuleFacts, model: HandleModel) -> list[Finding]:
        """``__init__`` keeps handles on ``self`` (which another method removes) and
        then reaches a ``raise`` or ``assert``: when it raises, the object never
        reaches its caller, so no method of it can remove the hooks.  So does
        ``__enter__``: when it raises, ``with`` never runs ``__exit__``.  Only an explicit
        ``raise``/``assert`` outside ``try`` counts (argument checks after the hooks
        are installed), not every call that might raise."""
        found = []
        for init in facts.functions:
            if init.name not in _SETUP_THAT_MAY_FAIL or init.class_name is None or init.parent is not None:
                continue
            for acquisition in model.acquisitions(id(init.node)):
                flow = acquisition.flow
                owned = model.owned_stores(flow)
                if not owned or flow.escapes is not None or flow.scoped or not model.removals_of(owned):
                    continue
                raised = raise_after(init.node, acquisition.site.statement) or self._raises_in_setup(
                    model, init, acquisition
                )
                if raised is None:
                    continue
                # Any removal just before the ``raise`` in its block runs after the
                # registration (in a loop, a later pass's ``self.close()`` comes first in
                # the text): ``raise_after`` only finds what runs after it.
                cleanup = [r.call for r in model.removals_of(owned, id(init.node))]
                if removed_before(init.node, raised, cleanup):
                    continue  # ``self.close()`` then ``raise``: the hooks are off first
                target = model.store_codes(owned)[0]
                found.append(
                    Finding(
                        node=acquisition.node,
                        message=(
                            f"`{init.name}` keeps hooks in `{target}`, then may "
                            f"`{type(raised).__name__.lower()}`: "  # ``raise`` or ``assert``
                            + _SETUP_THAT_MAY_FAIL[init.name]
                        ),
                        related=(raised,),
                    )
                )
                break
        return found

    @staticmethod
    def _returned_after_raising(facts: ModuleFacts, model: HandleModel) -> list[Finding]:
        """A function that hands the handles of the hooks it registers back to its
        caller (returns them, or an object built on them) and reaches an explicit
        ``raise``/``assert`` after a registration, outside ``try``: when it raises, the
        caller never gets the handles, and nothing removes those hooks.  Not when the
        registration's path leaves first (``return`` after it), nor when the function
        removes them anywhere (the rest of the rule reads that removal)."""
        found = []
        registering = _registers_raises_and_returns(facts)
        for info in facts.functions:
            if id(info.node) not in registering or info.parent is not None:
                continue  # only a def that both registers and raises
            if info.name in _SETUP_THAT_MAY_FAIL or is_contextmanager(facts, info):
                continue
            for acquisition in model.acquisitions(id(info.node)):
                flow = acquisition.flow
                if acquisition.registration is None or not flow.stores or model.removals_of(flow.stores):
                    continue
                if not (
                    flow.escapes == "returned" or (flow.escapes == "passed" and model.hands_back(info, flow))
                ):
                    continue
                raised = raise_after(info.node, acquisition.site.statement)
                if raised is None:
                    continue
                path = statement_path(facts, statement_site(acquisition.site))
                if path is None or leaves_before(path):
                    continue  # ``return reg(...)`` in its branch: the ``raise`` is another path's
                found.append(
                    Finding(
                        node=acquisition.node,
                        message=(
                            f"`{info.name}` returns the handles of hooks it registers, but may "
                            f"`{type(raised).__name__.lower()}` after registering: nothing removes them then"
                        ),
                        related=(raised,),
                    )
                )
                break
        return found

    @staticmethod
    def _raises_in_setup(model: HandleModel, init, acquisition: Acquisition):
        """A ``raise``/``assert`` that a method of the class called from ``__init__``
        (``self.register(module)``) reaches after one of its own registrations."""
        helper = acquisition.helper
        if helper is None or helper.class_name != init.class_name or acquisition.registration is not None:
            return None
        for inner in model.acquisitions(id(helper.node)):
            if inner.registration is not None:
                raised = raise_after(helper.node, inner.site.statement)
                if raised is not None:
                    return raised
        return None

    @staticmethod
    def _cleared_in_bulk(facts: ModuleFacts, model: HandleModel) -> list[Finding]:
        """Hooks whose handles the function drops (or never removes) and takes off later
        by emptying their hook dicts (``m._forward_hooks.clear()``, itself or through a
        same-file helper: :mod:`~hooklint.analysis.bulk_removal`), outside
        `finally`/`with`, after code that can raise.  One finding per clearing call, at
        the first registration it takes off.  A function that also empties the dicts
        in `finally` or a handler is left alone."""
        found: list[Finding] = []
        if not may_clear(facts):
            return found  # nothing in the file empties a hook dict
        for scope_id in model.scopes():
            dropped = []  # module hooks whose handles this scope keeps nowhere that is removed
            for acquisition in model.acquisitions(scope_id):
                registration, flow = acquisition.registration, acquisition.flow
                kind = hook_dict_of(registration) if registration is not None else None
                if kind is None or flow.escapes is not None or flow.scoped:
                    continue
                if flow.stores and model.removals_of(flow.stores):
                    continue  # taken off by its handle: the rest of this rule reads that
                dropped.append((acquisition, kind))
            clears = bulk_clears(facts, model, scope_id) if dropped else []
            if not clears or any(c.call.site.in_finally or c.call.site.in_except for c in clears):
                continue
            groups: dict[int, list] = {}
            for acquisition, kind in dropped:
                site = statement_site(acquisition.site)
                clear = next((c for c in clears if kind in c.dicts and c.call.site.order > site.order), None)
                if clear is None:
                    continue
                path_r = statement_path(facts, site)
                path_m = statement_path(facts, statement_site(clear.call.site))
                levels = None if path_r is None or path_m is None else common_level(path_r, path_m)
                if levels is None or levels[0].index >= levels[1].index:
                    continue
                at_r, at_m = levels
                depth = path_r.index(at_r)
                if leaves_before(path_r[depth:]):
                    continue
                between = at_r.block[at_r.index + 1 : at_m.index]
                after = [s for level in path_r[depth + 1 :] for s in level.block[level.index + 1 :]]
                inner = [s for level in path_m[path_m.index(at_m) + 1 :] for s in level.block[: level.index]]
                if all(cannot_raise(s) for s in [*after, *between, *inner]):
                    continue
                if id(clear.call.node) in groups:
                    groups[id(clear.call.node)][1].append(acquisition.call)
                    continue
                groups[id(clear.call.node)] = [
                    Finding(
                        node=acquisition.node,
                        message=(
                            f"hooks come off by {clear.how} outside `finally`/`with`: "
                            "skipped if the code before it raises"
                        ),
                    ),
                    [],
                ]
            for finding, others in groups.values():
                if others:
                    finding = dataclasses.replace(
                        finding,
                        message=finding.message + more_registrations(len(others)),
                        related=tuple(others),
                    )
                found.append(finding)
        return found

    def _removes_only_itself(
        self, model: HandleModel, acquisition: Acquisition
    ) -> tuple[Finding, cst.CSTNode] | None:
        """A one-shot hook: every removal of its handle is in the hook's own body, so it
        comes off only if it fires.  A module the forward never reaches keeps it, and so
        does every module when the forward raises before reaching them.  A module's own
        one-shot hook (``self.register_forward_pre_hook(self._init)``, lazy
        initialisation) is left alone: it is meant to wait for that module's forward; so
        is a forward (pre-)hook that keeps nothing outside the module it is handed
        (:func:`~hooklint.analysis.guards.touches_only_its_module`)."""
        registration = acquisition.registration
        if registration is None and acquisition.helper is not None:
            # ``self._h = self._register_hook()``: the helper's one returned registration
            returned = [
                a.registration
                for a in model.acquisitions(id(acquisition.helper.node))
                if a.registration is not None and a.flow.escapes == "returned"
            ]
            registration = returned[0] if len(returned) == 1 else None
        flow = acquisition.flow
        if registration is None or registration.hook is None or flow.target is None:
            return None
        if registration.receiver_code in (None, "self", "cls") or flow.escapes is not None or flow.scoped:
            return None
        removals = model.removals_of(flow.stores)
        hook = registration.hook.node
        if not removals or any(r.site.function is not hook for r in removals):
            return None
        if model.in_callers_container(flow.stores):
            return None  # the caller's dict: the caller may remove what never fired
        if registration.api.kind in ("forward_pre", "forward") and touches_only_its_module(
            model.facts, registration
        ):
            return None  # lazy initialisation of the module: meant to wait for its forward
        if model.inherited_stores(flow.stores):
            return None  # a base class of another file owns the store: it may remove it too
        message = (
            f"`{flow.target}` is removed only by its own hook `{registration.hook.name}`: "
            "kept if it never fires (module not reached, forward raised)"
        )
        if len(message) > MESSAGE_LIMIT:  # one short line: the why goes first, then the name
            message = message.removesuffix(" (module not reached, forward raised)")
        if len(message) > MESSAGE_LIMIT:
            message = f"its handle is removed only by its own hook `{registration.hook.name}`: kept if it never fires"
        finding = Finding(node=acquisition.node, message=message)
        return finding, removals[0].call

    def _check(
        self, facts: ModuleFacts, model: HandleModel, acquisition: Acquisition
    ) -> tuple[Finding, cst.CSTNode] | None:
        flow = acquisition.flow
        if not flow.stores or flow.target is None:
            return None
        target, single = flow.target, flow.single
        site = acquisition.site
        if model.object_made_here(flow, model.scope_id(site), acquisition.call):
            return None  # hooks on the call's own copy of a model die with it
        if in_script_that_stops_on_error(site):
            return None  # what raises there ends the program, hooks and all
        later = _removals_run_here(model, flow.stores, model.scope_id(site), flow.window)
        if not later and not single:
            # A nested def fills a list of the function around it, which calls (or hands
            # out: ``model.apply(attach)``) the def and removes the list: the span runs there.
            site = model.nested_fill_site(acquisition)
            if site is None:
                return None
            later = _removals_run_here(model, flow.stores, model.scope_id(site))
        if not later:
            return None
        # The failure path's removal: a handler for everything (that re-raises, or gives
        # up); it covers what its `try` body runs, as a `finally` does.
        handled = [
            r for r in later if r.site.in_except and not r.site.in_finally and narrow_handler(r.site) is None
        ]
        if handled and _covered_by(site, handled, "except"):
            return None
        if _covered_by(site, later, "finally"):
            return None  # registered inside the `try` of a `finally` that removes it
        later = sorted((r for r in later if r.site.order > site.order), key=lambda r: r.site.order)
        if handled:
            later = [r for r in later if any(r is h for h in handled)]
        if not later:
            return None
        finals = [r for r in later if r.site.in_finally]
        if not handled and finals and _covered_by(later[0].site, finals, "finally"):
            # Taken off early inside a `try` whose `finally` takes them off too (the
            # early removal is an extra): the `finally` decides.
            later = finals
        # A removal in `finally` (or such a handler) covers what its `try` body runs;
        # registered before the `try`, the hooks are kept if what runs before it raises
        # (`late_try`).
        late_try = bool(handled) or later[0].site.in_finally
        later = [r for r in later if bool(handled) or r.site.in_finally == late_try]
        # A removal on an early way out (``if not batches: h.remove(); return``) is a
        # path of its own: the removals after it are checked too, until one that the
        # function goes on from; the first whose gap can raise decides.
        for removal in list({id(r.call): r for r in later}.values()):
            found = self._against(
                facts, model, acquisition, removal, later, target, single, site, handled, late_try
            )
            if found is not None:
                return found
            if not _leaves_after(facts, removal):
                return None
        return None

    def _against(
        self, facts, model, acquisition, removal, later, target, single, site, handled, late_try
    ) -> tuple[Finding, cst.CSTNode] | None:
        """The finding for ``acquisition`` against one of its removals, or None."""
        flow = acquisition.flow
        registration = acquisition.registration
        if registration is not None and model.hooks_die_on_failure(registration, removal.call):
            return None  # on the call's own copy or build: what raises drops it with its hooks
        if registration is None and model.built_on_own_objects(acquisition, removal.call):
            return None  # ``rec = Recorder(net)`` on the call's own build: both go together
        if model.reinstalled_after(acquisition, removal):
            return None  # off for a moment, then on again: on is the state the function leaves
        if (
            not single and not flow.on_object
        ):  # name the container that is removed (``probes``, not ``h`` of ``_, h = probes.pop(k)``)
            same = [r for r in later if r.call is removal.call]
            store = next((r.store for r in same if r.kind != "direct"), removal.store)
            target = model.store_label(store, model.scope_id(acquisition.site)) or target
        path_r = statement_path(facts, statement_site(site))
        path_m = statement_path(facts, statement_site(removal.site))
        if path_r is None or path_m is None:
            return None
        levels = common_level(path_r, path_m)
        if levels is None:
            return None
        at_r, at_m = levels
        if at_r.index >= at_m.index:
            return None  # the removal's statement holds the registration (its `try` covers it)
        depth = path_r.index(at_r)
        below = path_r[depth + 1 :]
        # Loops that run the registration again (not one that breaks right after it:
        # it looks the module up and hooks it once).
        rerun = [
            is_loop(level.statement) and not leaves_loop_after(path_r, depth + k)
            for k, level in enumerate(path_r[depth:])
        ]
        if single and any(rerun[:-1]):
            return None  # a name re-bound in a loop: HL003's "all but the last handle are lost"
        if single and at_r.statement is not site.statement and any(rerun):
            return None
        if leaves_before(path_r[depth:]):
            return None  # this pass never reaches the removal: a later pass or call removes them
        between = at_r.block[at_r.index + 1 : at_m.index]
        # Inside the removal's own blocks, what runs first (``if hs: run(); remove(hs)``);
        # for a removal in `finally`, what runs before its `try`.
        from_m = path_m[path_m.index(at_m) :]
        down = from_m[1:]
        if late_try:
            level = _try_level(from_m)
            if level is None:
                return None  # the registration is in that `finally` too: its `try` is not late
            down = down[:level]
        inner = [s for level in down for s in level.block[: level.index]]
        # Removed only in ``except Stop:``: the ``try`` body runs first, and any other
        # exception (or none) skips the removal.
        narrow = narrow_handler(removal.site)
        if narrow is not None:
            inner += guarded_body([at_m.statement], narrow[0])
        # And the rest of the blocks the registration sits in (a `try` whose `finally`
        # does not remove it, a `with` body): a removal after them is not covered either.
        after = [s for level in below for s in level.block[level.index + 1 :]]
        spans = [*after, *between, *inner]
        # ``if handle is None: raise``: runs only when nothing was registered; another
        # registration that keeps its handle is part of putting the hooks on.
        spans = [s for s in spans if not only_when_unset(facts, s, target) and not only_registers(facts, s)]
        # A loop that looks up what it hooks by the names it was given raises for a
        # name that is not there, after the hooks of the names before it went on: the
        # preview rule HL020's (``loop_lookups``), not this rule's.
        looked_up = (
            self.loop_lookups
            and late_try
            and not single
            and looks_up_before_registering(path_r[depth:], acquisition.call, site.function, acquisition.site)
        )
        if self.loop_lookups and not looked_up:
            return None
        prepares = late_try and _prepares_for(facts, [*between, *inner], from_m[level].statement, target)
        if late_try:
            if not looked_up and not prepares:
                return None
            if self.loop_lookups and prepares:
                return None  # code before the `try` that prepares its body: this rule's finding
            scope = model.scope_id(site)
            if any(
                r.site.in_finally and model.scope_id(r.site) != scope for r in model.removals_of(flow.stores)
            ):
                return None  # a `finally` elsewhere (the owner of a closure's list) removes them too
        # the tests of an ``if``/``elif`` chain the removal sits in run first too
        tests = [t for level in from_m for t in tests_on_the_way(level.block[level.index], removal.call)]
        if not looked_up and all(cannot_raise(s) for s in spans) and all(plain_value(t) for t in tests):
            return None
        in_cm = is_contextmanager(facts, site.function) and any(is_bare_yield(s) for s in between)
        if late_try and handled:
            message = (
                f"`{target}` is removed when its `try` fails, but the `try` starts after code that can raise"
            )
        elif looked_up:
            message = (
                f"`{target}` is removed in `finally`, but the loop that registers it, whose lookups can raise, "
                "runs before the `try`"
            )
        elif late_try:
            message = f"`{target}` is removed in `finally`, but its `try` starts after code that can raise"
        elif narrow is not None:
            normal = any(narrow_handler(r.site) is None and not r.site.in_except for r in later)
            message = (
                f"`{target}` is removed only in `except {narrow[1]}`: kept if anything else is raised"
                + ("" if normal else ", or nothing is")
            )
        elif in_cm:
            message = (
                f"`{target}` is removed after `yield` outside `finally`: skipped when the `with` body raises"
            )
        elif (
            jump := jump_out_of([s for s in between if not any(contains(s, r.call) for r in later)])
        ) is not None:
            # (a jump after a removal of its own, an early ``return`` that removes first, skips nothing)
            message = (
                f"`{target}` is removed outside `finally`/`with`: skipped by the `{jump}` before it, "
                "or if code before it raises"
            )
        else:
            message = f"`{target}` is removed outside `finally`/`with`: skipped if the code before it raises"
        related = ()
        if acquisition.evidence is not None:  # handles from another file's helper
            name, where = acquisition.evidence
            message += f" (hooks from `{name}`, {where.path.rsplit('/', 1)[-1]}:{where.line})"
            related = (where,)
        if removal.kind == "deferred":
            # `weakref.finalize(obj, h.remove)`, `atexit.register(h.remove)`: the hook is
            # meant to outlive the function; scoping it to a `with` would end it early.
            edits, fix_message = [], ""
        elif looked_up:
            edits, fix_message = self._loop_into_try_fix(facts, at_r, at_m, between, inner)
        elif late_try:
            edits, fix_message = self._late_try_fix(facts, at_m, between, [*after, *inner], target)
        else:
            edits, fix_message = self._fix(facts, acquisition, target, single, at_r, at_m, between, in_cm)
        finding = Finding(
            node=acquisition.node,
            message=message,
            fix_edits=edits,
            fix_message=fix_message,
            related=related,
        )
        if acquisition.evidence is None and acquisition.registration is not None:
            finding = with_evidence(finding, acquisition.registration)  # another file's wrapper
        return finding, at_m.statement

    @staticmethod
    def _late_try_fix(facts, at_m, between, elsewhere, target):
        """Start the `try` at the first statement after the registration that can raise
        (what is already in its block, between the two): only when that is all that
        runs unprotected (nothing in the registration's own blocks after it, nothing
        before the `try` inside the statement that holds it), and no ``if handle is
        None: raise`` moves in (its `finally` would then remove a handle that is None)."""
        import libcst as cst

        if not isinstance(at_m.statement, cst.Try) or not all(cannot_raise(s) for s in elsewhere):
            return [], ""
        start = next(
            (
                i
                for i, s in enumerate(between)
                if not cannot_raise(s)
                and not only_registers(facts, s)
                and not only_when_unset(facts, s, target)
            ),
            None,
        )
        if start is None or any(only_when_unset(facts, s, target) for s in between[start:]):
            return [], ""
        edits = try_from_earlier(facts, between[start:], at_m.statement)
        return edits, "Start the `try` before the code that can raise" if edits else ""

    @staticmethod
    def _loop_into_try_fix(facts, at_r, at_m, between, inner):
        """Start the `try` at the loop that puts the hooks on: only when nothing before
        the `try` inside the statement that holds it can raise."""
        import libcst as cst

        if not isinstance(at_m.statement, cst.Try) or not all(cannot_raise(s) for s in inner):
            return [], ""
        edits = try_from_earlier(facts, [at_r.statement, *between], at_m.statement)
        return edits, "Start the `try` before the loop that puts the hooks on" if edits else ""

    def _fix(self, facts, registration, target, single, at_r, at_m, between, in_cm):
        removal_statement = at_m.statement
        if not only_removes(facts, removal_statement):
            return [], ""
        if has_multiline_string(facts, [*between, removal_statement]):
            return [], ""
        if single:
            if at_r.statement is not registration.site.statement:
                return [], ""
            function = registration.site.function
            scope_code = facts.code(function) if function is not None else facts.module.code
            if (
                not in_cm
                and "." not in target
                # both uses are in the two dropped statements (not an alias: `a = h; a.remove()`)
                and word_count(facts.code(removal_statement), target) == 1
                and registration_statement_alone(registration)
                and is_simple_line(removal_statement)
                and word_count(scope_code, target) == 2
            ):
                return with_replacing(
                    facts,
                    [at_r.statement],
                    registration.call,
                    between,
                    [removal_statement],
                ), ("Use the handle as a context manager (`with register(...):`)")
            edits = try_finally(facts, between, [removal_statement])
            return edits, "Remove the hook in `finally`" if edits else ""
        from_helper = registration.registration is None  # a helper's (or another file's) handles
        if registration.handle.role == "collected" or (from_helper and registration.handle.role == "bound"):
            # ``handles = [...]`` or ``hs = helper()`` runs before `try`: if it raised
            # inside, `finally` would find no name to remove
            body, acquire = between, None
        else:
            body = at_r.block[at_r.index : at_m.index]
            direct = registration.registration
            acquire = (
                at_r.statement
                if direct is not None
                and at_r.statement is direct.site.statement
                and registration_statement_alone(direct)
                else None
            )
        edits = try_finally(facts, body, [removal_statement], acquire)
        return edits, "Remove the hooks in `finally`" if edits else ""

    VALID = [
        # A nested helper hands back a deep copy of the caller's model: the hooks go on
        # the copy, which goes with the call if the run raises.
        Valid(
            """
import copy


def peak_activations(model, sample):
    def detached_copy(net):
        return copy.deepcopy(net).eval()

    trial = detached_copy(model)
    peaks = []
    handles = [m.register_forward_hook(lambda mod, args, out: peaks.append(out.abs().max())) for m in trial.modules()]
    trial(sample)
    for handle in handles:
        handle.remove()
    return max(peaks)
"""
        ),
        # The loaded teacher is handed to a helper that only runs it: it stays the
        # call's own, and its hooks go with it if the forward raises.
        Valid(
            """
import torch
from transformers import AutoModel


def load_teacher(path):
    return AutoModel.from_pretrained(path).eval()


def run_once(net, batch):
    with torch.no_grad():
        return net(**batch)


def teacher_attention(path, batch):
    teacher = load_teacher(path)
    maps = []
    hooks = [layer.attention.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in teacher.encoder.layer]
    run_once(teacher, batch)
    for hook in hooks:
        hook.remove()
    return maps
"""
        ),
        # The model comes from a same-file loader that only ever returns what it loads:
        # the blocks are the call's own, and go with it if the forward raises.
        Valid(
            """
import torch
from transformers import AutoModel


def load_reference(path, device):
    net = AutoModel.from_pretrained(path)
    return net.to(device).eval()


def reference_activations(path, device, batch):
    ref = load_reference(path, device)
    acts = {}
    hooks = [
        block.register_forward_hook(lambda m, a, out, i=i: acts.__setitem__(i, out))
        for i, block in enumerate(ref.encoder.layer)
    ]
    with torch.no_grad():
        ref(**batch)
    for hook in hooks:
        hook.remove()
    return acts
"""
        ),
        # Set-up deferred to a module's first forward: the one-shot forward hook keeps
        # nothing outside the module, and waiting for that forward is its purpose.
        Valid(
            """
def _run_pending(module, args, output):
    for init in module._pending_inits:
        module.apply(init)
    module._pending_inits.clear()
    module._pending_handle.remove()


def defer_init(module, init):
    if not hasattr(module, "_pending_inits"):
        module._pending_inits = []
        module._pending_handle = module.register_forward_hook(_run_pending)
    module._pending_inits.append(init)
    return module
"""
        ),
        # Before the `try`: the first parameter or a default, its device, and a switch to
        # eval mode; none of them fails in practice.
        Valid(
            """
import torch


def input_norms(model, loader):
    norms = {}
    handles = []
    for name, layer in model.named_modules():
        if isinstance(layer, torch.nn.Linear):
            handles.append(layer.register_forward_pre_hook(lambda m, a, n=name: norms.setdefault(n, a[0].norm())))
    first = next(model.parameters(), None)
    device = first.device if first is not None else torch.device("cpu")
    model.eval()
    try:
        with torch.no_grad():
            for batch in loader:
                model(batch.to(device))
    finally:
        for handle in handles:
            handle.remove()
    return norms
"""
        ),
        # A guard on the object's own attributes around a `try` that catches everything:
        # nothing gets past it to skip the removal.
        Valid(
            """
import torch


class Calibrator:
    def __init__(self, model, samples=None):
        self.model = model
        self.samples = samples

    def ranges(self):
        seen = {}
        hooks = []
        for name, layer in self.model.named_modules():
            if isinstance(layer, torch.nn.Conv2d):
                hooks.append(layer.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.amax())))
        if self.samples is not None and self.samples:
            try:
                with torch.no_grad():
                    for x in self.samples:
                        self.model(x)
            except Exception as error:
                print("calibration stopped:", error)
        for hook in hooks:
            hook.remove()
        return seen
"""
        ),
        # Two registrations per pass into one list are one act of hooking; the forward's
        # errors are all caught before the removal.
        Valid(
            """
def compare(student, teacher, pairs, batch):
    got, want, hooks = {}, {}, []
    for i, (s, t) in enumerate(pairs):
        hooks.append(s.register_forward_hook(lambda m, a, out, i=i: got.__setitem__(i, out)))
        hooks.append(t.register_forward_hook(lambda m, a, out, i=i: want.__setitem__(i, out)))
    try:
        student(batch)
        teacher(batch)
    except Exception as error:
        print("forward failed:", error)
    for hook in hooks:
        hook.remove()
    return got, want
"""
        ),
        # The model comes from a same-file builder and its blocks are hooked by a helper:
        # if the forward raises, the model and its hooks go with the call.
        Valid(
            """
import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def make_tiny(dtype):
    return Tiny().to(dtype)


def hook_blocks(blocks, out):
    return [b.register_forward_hook(lambda m, a, o, i=i: out.__setitem__(i, o)) for i, b in enumerate(blocks)]


def block_outputs(x):
    net = make_tiny(torch.float64)
    out = {}
    hooks = hook_blocks(net.blocks, out)
    net(x)
    for hook in hooks:
        hook.remove()
    return out
"""
        ),
        # A script's self-test: nothing in its main block catches an error, so a
        # forward that raises ends the program with the hook.
        Valid(
            """
import torch
from torch import nn


def halve(module, args, output):
    return output * 0.5


if __name__ == "__main__":
    def smoke_test(layer, x):
        handle = layer.register_forward_hook(halve)
        print(layer(x).sum().item())
        handle.remove()

    smoke_test(nn.Linear(4, 2), torch.randn(3, 4))
"""
        ),
        # The search hooks the first matching layer and stops; the check before the
        # `try` raises only when nothing matched, so no hook is on when it does.
        Valid(
            """
def first_layer_output(model, batch, kind):
    found = {}
    hook = None
    for layer in model.modules():
        if type(layer).__name__ == kind:
            hook = layer.register_forward_hook(lambda m, a, out: found.setdefault("out", out))
            break
    if hook is None:
        raise LookupError(f"no {kind} layer")
    try:
        model(batch)
    finally:
        hook.remove()
    return found["out"]
"""
        ),
        # The same method (it keeps each handle on `self` and returns it), the taps
        # removed in `finally`.
        Valid(
            """
class Tapper:
    def __init__(self, net):
        self.net = net
        self.taps = []

    def tap(self, name, sink):
        handle = self.net.get_submodule(name).register_forward_hook(lambda mod, args, out: sink.append(out))
        self.taps.append(handle)
        return handle

    def snapshot(self, batch, names):
        sink = []
        try:
            for name in names:
                self.tap(name, sink)
            self.net(batch)
        finally:
            while self.taps:
                self.taps.pop().remove()
        return sink
"""
        ),
        # Handles handed back to the caller: a branch that returns its hook comes first,
        # and the check that raises takes the hooks already on off before raising.
        Valid(
            """
def add_hook(module, kind, fn):
    if kind == "output":
        return module.register_forward_hook(fn)
    if kind == "input":
        return module.register_forward_pre_hook(fn)
    raise ValueError(kind)


def add_scales(blocks, head, scales):
    handles = [blocks[i].register_forward_hook(lambda mod, args, out, s=s: out * s) for i, s in scales]
    if head is None:
        for handle in handles:
            handle.remove()
        raise ValueError("this model has no head")
    handles.append(head.register_forward_hook(lambda mod, args, out: out.float()))
    return handles
"""
        ),
        # The same static helper, its handles removed in `finally`.
        Valid(
            """
class Tracer:
    @staticmethod
    def _watch(net, seen):
        return [m.register_forward_pre_hook(lambda mod, args, n=n: seen.add(n)) for n, m in net.named_children()]

    def trace(self, net, sample):
        seen = set()
        handles = Tracer._watch(net, seen)
        try:
            return self.record(net, sample), seen
        finally:
            for handle in handles:
                handle.remove()
"""
        ),
        # Reading a clock between the hooks going on and the `try` raises nothing.
        Valid(
            """
import time


def timed_features(net, block, batches, every):
    kept = []
    handle = block.register_forward_hook(lambda mod, args, out: kept.append(out.mean()))
    started = time.monotonic()
    try:
        for batch in batches:
            net(batch)
            if time.monotonic() - started > every:
                print(len(kept))
                started = time.monotonic()
    finally:
        handle.remove()
    return kept
"""
        ),
        # The per-layer check takes the earlier layers' hooks off before it raises (a
        # later pass runs `self.close()` after the earlier passes hooked).
        Valid(
            """
class Patched:
    def __init__(self, layers, scales):
        self.layers = layers
        self.scales = scales
        self.handles = []

    def __enter__(self):
        for layer, scale in zip(self.layers, self.scales):
            if scale <= 0:
                self.close()
                raise ValueError("scales must be positive")
            self.handles.append(layer.register_forward_hook(lambda m, a, out, s=scale: out * s))
        return self

    def close(self):
        while self.handles:
            self.handles.pop().remove()

    def __exit__(self, *exc):
        self.close()
"""
        ),
        # Probes of one subclass (the base only declares the methods) attached before
        # the forward and collected in `finally`.
        Valid(
            """
class Probe:
    def attach(self):
        raise NotImplementedError()

    def collect(self):
        raise NotImplementedError()


class OutputProbe(Probe):
    def __init__(self, layer):
        self.layer = layer
        self.seen = None
        self.handle = None

    def attach(self):
        self.handle = self.layer.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.seen = output.detach()

    def collect(self):
        self.handle.remove()
        return self.seen


def probe_outputs(model, probes, batch):
    for probe in probes:
        probe.attach()
    try:
        model(batch)
    finally:
        outputs = [probe.collect() for probe in probes]
    return outputs
"""
        ),
        # Layers found by a dotted path in the call's own copy: a failing forward drops
        # the copy with its hooks.
        Valid(
            """
import copy
import functools


def calibrated_copy(net, layer_paths, sample):
    twin = copy.deepcopy(net)
    outputs = {}
    handles = []
    for path in layer_paths:
        layer = functools.reduce(getattr, path.split("."), twin)
        handles.append(layer.register_forward_hook(lambda m, a, out: outputs.__setitem__(m, out)))
    twin(sample)
    for layer, out in outputs.items():
        layer.offset = out.mean()
    for handle in handles:
        handle.remove()
    return twin
"""
        ),
        # `__enter__` checks its arguments before it hooks anything.
        Valid(
            """
class Patched:
    def __init__(self, layers, scales):
        self.layers = layers
        self.scales = scales
        self.handles = []

    def __enter__(self):
        if any(scale <= 0 for scale in self.scales):
            raise ValueError("scales must be positive")
        for layer, scale in zip(self.layers, self.scales):
            self.handles.append(layer.register_forward_hook(lambda m, a, out, s=scale: out * s))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        self.handles = []
"""
        ),
        # The model class is picked by name, then loaded: the model is this call's own,
        # and a failing forward drops it with its hooks.
        Valid(
            """
import transformers


def mean_widths(checkpoint, arch, batches):
    model_class = getattr(transformers, arch)
    model = model_class.from_pretrained(checkpoint)
    widths = []
    handles = [m.register_forward_hook(lambda m, a, out: widths.append(out.shape[-1])) for m in model.modules()]
    for batch in batches:
        model(**batch)
    for handle in handles:
        handle.remove()
    return sum(widths) / max(len(widths), 1)
"""
        ),
        # The same early `continue`, the removal in `finally`: it runs on the way out.
        Valid(
            """
def count_rows(model, batches, seen):
    for batch in batches:
        handle = model.register_forward_hook(lambda m, a, out: seen.append(out.shape[0]))
        try:
            if len(batch) == 0:
                continue
            model(batch)
        finally:
            handle.remove()
"""
        ),
        # A helper hooks each module through an object of its own and returns the
        # objects; the caller detaches them in `finally`.
        Valid(
            """
class Meter:
    def __init__(self, label):
        self.label = label
        self.peaks = []
        self.handle = None

    def start(self, module):
        self.handle = module.register_forward_hook(self.take)

    def stop(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None

    def take(self, module, args, output):
        self.peaks.append(float(output.abs().max()))


def meters_for(net):
    meters = []
    for label, layer in net.named_children():
        meter = Meter(label)
        meter.start(layer)
        meters.append(meter)
    return meters


def peak_table(net, inputs):
    meters = meters_for(net)
    try:
        for x in inputs:
            net(x)
    finally:
        for meter in meters:
            meter.stop()
    return {m.label: max(m.peaks) for m in meters}
"""
        ),
        # A factory method builds the hooking object; its hooks come off in `finally`.
        Valid(
            """
class Extractor:
    def __init__(self, model, layer):
        self.model = model
        self.acts = []
        self.handles = [layer.register_forward_hook(self._keep)]

    def _keep(self, module, args, output):
        self.acts.append(output)

    def clear_hooks(self):
        for h in self.handles:
            h.remove()


class Explainer:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer

    def _get_extractor(self):
        return Extractor(self.model, self.layer)

    def explain(self, x):
        extractor = self._get_extractor()
        try:
            out = self.model(x)
            acts = list(extractor.acts)
        finally:
            extractor.clear_hooks()
        return out, acts
"""
        ),
        # A same-file helper hooks the net this call builds and hands back the handles:
        # if the forward raises, the net and its hooks go with the call.
        Valid(
            """
import torch
from torch import nn


def watch_linears(model, seen):
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            handles.append(module.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.shape)))
    return handles


def shapes_of_a_fresh_net():
    net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    seen = {}
    handles = watch_linears(net, seen)
    net(torch.zeros(1, 8))
    for handle in handles:
        handle.remove()
    return seen
"""
        ),
        # A hook meant to stay is put on again: the new handle goes where the old one
        # was, and the name read from there before the registration holds the old
        # handle, which is what the helper removes. The new one is `release()`'s.
        Valid(
            """
def _drop(handle):
    try:
        handle.remove()
    except Exception:
        pass


class Ticker:
    def __init__(self, model):
        self.model = model
        self.ticks = 0
        self._handle = None

    def _tick(self, module, args, output):
        self.ticks += 1

    def rearm(self):
        old = self._handle
        new = self.model.register_forward_hook(self._tick)
        self._handle = new
        if old is not None:
            _drop(old)

    def release(self):
        if self._handle is not None:
            _drop(self._handle)
            self._handle = None
"""
        ),
        # A wrapper hands `state_dict()` to the optimizer it wraps (`self.optimizer`, an
        # object it was given): the wrapper's own `state_dict`, which takes the hooks
        # off, is not what runs, so nothing removes them in `__init__`.
        Valid(
            """
class Guarded:
    def __init__(self, optimizer, model):
        self.optimizer = optimizer
        self.model = model
        self.handles = []
        self._install()
        self.optimizer.zero_grad(set_to_none=True)
        self.optimizer.load_state_dict(self.optimizer.state_dict())

    def _install(self):
        self.handles.append(self.model.register_forward_pre_hook(self._check))

    def _check(self, module, args):
        return None

    def state_dict(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
        return self.optimizer.state_dict()
"""
        ),
        # The forward runs inside a `try` whose handler catches every `Exception` and
        # re-raises nothing (under `torch.no_grad()`): whatever the forward raises, the
        # removal after it runs; the registrations before it do not fail.
        Valid(
            """
import torch


def layer_shapes(model, batch):
    shapes = []
    handles = []

    def note(module, args, output):
        shapes.append((type(module).__name__, tuple(output.shape)))

    for module in model.modules():
        handles.append(module.register_forward_pre_hook(note))
        handles.append(module.register_forward_hook(note))
    failure = None
    with torch.no_grad():
        try:
            model(batch)
        except Exception as error:
            failure = f"{type(error).__name__}: {error}"
    for handle in handles:
        handle.remove()
    return shapes, failure
"""
        ),
        # Between the hooks and the `try` only values that do not fail: empty slots per
        # layer, a membership test, an attribute read with a default.
        Valid(
            """
def trace(model, layers, depth, batches, wanted):
    outputs = {}
    handles = [
        layer.register_forward_hook(lambda m, a, out, i=i: outputs.__setitem__(i, out))
        for i, layer in enumerate(layers)
    ]
    history = {f"layer{i}": [] for i in range(depth)}
    keep_states = "states" in wanted
    chunked = getattr(model, "chunked", False)
    try:
        for batch in batches:
            model(batch, states=keep_states, chunked=chunked)
            for i in range(depth):
                history[f"layer{i}"].append(outputs[i])
    finally:
        for handle in handles:
            handle.remove()
    return history
"""
        ),
        # Taken off early inside the `try` (and the list emptied); the `finally` takes off
        # whatever is left.
        Valid(
            """
def pooled(model, layers, images):
    maps = []
    handles = [layer.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in layers]
    try:
        model(images)
        for handle in handles:
            handle.remove()
        handles = []
        return sum(m.mean() for m in maps)
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # A test's own layer, wrapped in a model the test builds and drops too: if the
        # assert fails, layer, model and hook go together.
        Valid(
            """
import torch
from torch import nn


def test_hook_sees_one_call():
    layer = nn.Linear(2, 2)
    calls = []
    handle = layer.register_forward_hook(lambda *args: calls.append(1))
    model = nn.Sequential(layer, nn.Tanh())
    model(torch.ones(1, 2))
    assert calls == [1]
    handle.remove()
"""
        ),
        # Clamps meant to stay on: taken off only while the model is copied, then put back.
        Valid(
            """
import copy


class Clamps:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.snapshot = None

    def attach(self):
        for p in self.net.parameters():
            self.handles.append(p.register_hook(lambda g: g.clamp(-1, 1)))

    def detach(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def checkpoint(self, batch):
        self.attach()
        self.net(batch).sum().backward()
        self.detach()
        self.snapshot = copy.deepcopy(self.net)
        self.attach()
"""
        ),
        # A counter object whose `start`/`stop` put a hook on every submodule and take it
        # off again, stopped in `finally`.
        Valid(
            """
class CallCounter:
    def __init__(self, model):
        self.model = model

    def start(self):
        def attach(module):
            module.calls = 0
            module.count_handle = module.register_forward_hook(self._count)

        self.model.apply(attach)

    @staticmethod
    def _count(module, args, output):
        module.calls += 1

    def stop(self):
        def detach(module):
            if hasattr(module, "count_handle"):
                module.count_handle.remove()
                del module.count_handle

        self.model.apply(detach)


def count_calls(model, batch):
    counter = CallCounter(model)
    counter.start()
    try:
        model(batch)
        return {name: m.calls for name, m in model.named_modules()}
    finally:
        counter.stop()
"""
        ),
        # The hooks go on the call's own copy: if a forward raises, the copy and its
        # hooks go with the call.
        Valid(
            """
import copy

import torch


def teacher_gap(student, batches):
    teacher = copy.deepcopy(student).eval()
    seen = []
    handle = teacher.register_forward_hook(lambda module, args, out: seen.append(out))
    with torch.no_grad():
        for batch in batches:
            teacher(batch)
    handle.remove()
    return [s.mean() for s in seen]
"""
        ),
        # A model this call builds from its own settings object, and its blocks walked
        # with a count: nothing hands the model out, so a raise drops it with its hooks.
        Valid(
            """
from torch import nn


class Spec:
    def __init__(self, width):
        self.width = width


class Tower(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(spec.width, spec.width) for _ in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def call_order(batch):
    spec = Spec(8)
    tower = Tower(spec)
    order = []
    taps = []
    for position, block in enumerate(tower.blocks):
        taps.append(block.register_forward_pre_hook(lambda mod, args, position=position: order.append(position)))
    tower(batch)
    for tap in taps:
        tap.remove()
    return order
"""
        ),
        # Hooks that take themselves off when they fire, kept in a dict the caller
        # passed in; the caller removes the ones that never fired, in `finally`.
        Valid(
            """
class FirstInputs:
    def __init__(self, model):
        self.model = model
        self.inputs = {}

    def _arm(self, waiting):
        def grab(module, args):
            waiting.pop(module).remove()
            self.inputs[module] = args

        for module in self.model.modules():
            waiting[module] = module.register_forward_pre_hook(grab)

    def collect(self, run):
        waiting = {}
        self._arm(waiting)
        try:
            run(self.model)
        finally:
            for handle in waiting.values():
                handle.remove()
        return self.inputs
"""
        ),
        # A loop that looks layers up by the caller's names before the `try`: HL020's
        # (preview), not this rule's.
        Valid(
            """
from contextlib import contextmanager


@contextmanager
def record_layers(model, layer_names, sink):
    hooks = []
    for layer_name in layer_names:
        layer = model.get_submodule(layer_name)
        hooks.append(layer.register_forward_hook(lambda mod, args, out: sink.append(out.detach())))
    try:
        yield sink
    finally:
        for hook in hooks:
            hook.remove()
"""
        ),
        # A layer of a scratch copy, looked up by name: the copy dies with the call.
        Valid(
            """
import copy


class Last:
    def __init__(self):
        self.value = None

    def __call__(self, module, args, output):
        self.value = output


def probe_copy(model, name, batches):
    scratch = copy.deepcopy(model)
    layer = dict(scratch.named_modules())[name]
    last = Last()
    handle = layer.register_forward_hook(last)
    means = []
    for batch in batches:
        scratch(batch)
        means.append(last.value.mean())
    handle.remove()
    return means
"""
        ),
        # The parameter rebound to a copy, its parts hooked, returned only after the
        # hooks are off.
        Valid(
            """
import copy

from torch import nn


def clipped_copy(model, batches, limit):
    model = copy.deepcopy(model)

    def clip(module, args, out):
        return out.clamp(-limit, limit)

    handles = [m.register_forward_hook(clip) for m in model.modules() if isinstance(m, nn.Linear)]
    for batch in batches:
        model(batch)
    for handle in handles:
        handle.remove()
    return model
"""
        ),
        # A check of something else between the hooks and the `try` is a guard, not
        # the input the hooks are for: not counted.
        Valid(
            """
from contextlib import contextmanager


@contextmanager
def steer(model, vectors):
    handles = [m.register_forward_pre_hook(vectors[n]) for n, m in model.named_modules() if n in vectors]
    assert not model.training, "steer an eval-mode model"
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # The same marker run on every submodule, detached in `finally`.
        Valid(
            """
import torch.nn as nn


class ReluMarker:
    def __init__(self):
        self.handles = []

    def _mark(self, module, args, output):
        module.last_active = (output > 0).float().mean()

    def attach(self, module):
        if isinstance(module, nn.ReLU):
            self.handles.append(module.register_forward_hook(self._mark))

    def detach(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def activity(model, batch):
    marker = ReluMarker()
    model.apply(marker.attach)
    try:
        model(batch)
    finally:
        marker.detach()
"""
        ),
        # A local only ever bound to an `InputSampler`: its `detach` in `finally` removes
        # what its `attach` kept.
        Valid(
            """
from functools import partial


class RangeTracker:
    def __init__(self):
        self._hooks = []
        self.ranges = {}

    def attach(self, model):
        for name, module in model.named_modules():
            self._hooks.append(module.register_forward_hook(partial(self._track, name)))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _track(self, name, module, args, output):
        self.ranges[name] = output.abs().max()


class InputSampler:
    def __init__(self):
        self._hooks = []
        self.samples = []

    def attach(self, model):
        self._hooks.append(model.register_forward_pre_hook(self._keep))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _keep(self, module, args):
        self.samples.append(args[0])


def sample_inputs(model, batches):
    sampler = InputSampler()
    sampler.attach(model)
    try:
        for batch in batches:
            model(batch)
    finally:
        sampler.detach()
    return sampler.samples
"""
        ),
        # The same stop, with the removal in `finally`: it runs however the forward ends.
        Valid(
            """
class Reached(Exception):
    pass


def input_of(layer, model, batch):
    def stop(module, args):
        raise Reached(args)

    hook = layer.register_forward_pre_hook(stop)
    try:
        model(batch)
    except Reached as found:
        return found.args[0]
    finally:
        hook.remove()
    return None
"""
        ),
        # A one-shot hook with a fallback: `disarm()` removes it when it never fired.
        Valid(
            """
class LazyWidth:
    def __init__(self, module):
        self.module = module
        self.width = None
        self._pending = None

    def _first(self, mod, args, output):
        self.width = output.shape[-1]
        self._pending.remove()

    def arm(self):
        self._pending = self.module.register_forward_hook(self._first)

    def disarm(self):
        if self._pending is not None:
            self._pending.remove()
"""
        ),
        # A one-shot pre-hook that only prepares the module it is handed: lazy set-up
        # that waits for that module's first forward, whenever it comes.
        Valid(
            """
def defer_setup(block, build_cache):
    handle = None

    def first_call(module, args):
        if not getattr(module, "cache_ready", False):
            module.cache_ready = True
            module.cache = build_cache(args[0].shape)
        handle.remove()

    handle = block.register_forward_pre_hook(first_call)
"""
        ),
        # A module's own one-shot hook (lazy initialisation) waits for that module's forward.
        Valid(
            """
import torch.nn as nn


class LazyScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = None
        self._init_handle = self.register_forward_pre_hook(self._initialise)

    def _initialise(self, module, args):
        self.scale = nn.Parameter(args[0].new_ones(args[0].shape[-1]))
        self._init_handle.remove()
"""
        ),
        # The remover is handed to the caller: nothing runs here between registration and removal.
        Valid(
            """
def record_outputs(layers, store):
    handles = [layer.register_forward_hook(lambda m, a, o: store.append(o.detach())) for layer in layers]
    return lambda: [handle.remove() for handle in handles]
"""
        ),
        # The same installer, its hooks removed in `finally`.
        Valid(
            """
class GradTrace:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.grads = []

    def _hook_one(self, module):
        handle = module.register_full_backward_hook(self._keep)
        self.handles.append(handle)

    def _keep(self, module, grad_in, grad_out):
        self.grads.append(grad_out[0].norm())

    def _unhook(self):
        for handle in self.handles:
            handle.remove()

    def trace(self, batch):
        try:
            self.net.apply(self._hook_one)
            self.net(batch).sum().backward()
        finally:
            self._unhook()
        return self.grads
"""
        ),
        # A helper method keeps the handle on the instance through a local; the caller
        # removes it in `finally`.
        Valid(
            """
class LayerInputs:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.layer_handle = None
        self.inputs = None

    def _keep_inputs(self, module, args, output):
        self.inputs = args

    def _hook_layer(self, layer):
        handle = layer.register_forward_hook(self._keep_inputs)
        self.layer_handle = handle

    def explain(self, batch):
        self._hook_layer(self.layer)
        try:
            output = self.model(batch)
        finally:
            self.layer_handle.remove()
        return output, self.inputs
"""
        ),
        # The hook stays on across calls until `close()`: no removal in `explain` to guard.
        Valid(
            """
class LayerInputs:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.layer_handle = None
        self.inputs = None

    def _keep_inputs(self, module, args, output):
        self.inputs = args

    def _hook_layer(self, layer):
        handle = layer.register_forward_hook(self._keep_inputs)
        self.layer_handle = handle

    def explain(self, batch):
        if self.layer_handle is None:
            self._hook_layer(self.layer)
        return self.model(batch), self.inputs

    def close(self):
        if self.layer_handle is not None:
            self.layer_handle.remove()
            self.layer_handle = None
"""
        ),
        # A method of another object registers (`self.probes[key].watch(fn)`) and the
        # caller removes through that object's class in `finally`.
        Valid(
            """
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.active = []

    def watch(self, fn):
        self.active.append(self.register_forward_hook(lambda mod, args, out: fn(out)))

    def release(self):
        for handle in self.active:
            handle.remove()
        self.active = []

    def forward(self, x):
        return x


class Probed(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.probes = {"out": Probe()}

    def forward(self, x):
        return self.probes["out"](self.body(x))

    def drop_probes(self):
        for probe in self.probes.values():
            probe.release()

    def run_probed(self, x, watchers):
        try:
            for key, fn in watchers:
                self.probes[key].watch(fn)
            out = self(x)
        finally:
            self.drop_probes()
        return out
"""
        ),
        # Two classes of the file have a registering `watch`: which one `probe.watch`
        # runs is not known, so nothing is said.
        Valid(
            """
class ShapeProbe:
    def __init__(self):
        self.handles = []
        self.shapes = []

    def watch(self, module):
        self.handles.append(module.register_forward_hook(lambda mod, args, out: self.shapes.append(out.shape)))

    def release(self):
        for handle in self.handles:
            handle.remove()


class GradProbe:
    def __init__(self):
        self.handles = []
        self.norms = []

    def watch(self, module):
        self.handles.append(module.register_full_backward_hook(lambda mod, gin, gout: self.norms.append(gout[0].norm())))

    def release(self):
        for handle in self.handles:
            handle.remove()


def probe_layer(probe, layer, model, batch):
    probe.watch(layer)
    model(batch).sum().backward()
    probe.release()
"""
        ),
        # `self._drop()` removes the runner's own `self.active`, not the probe's: a store
        # on another object is that object's class's, whatever its attribute's name.
        Valid(
            """
class Probe:
    def __init__(self):
        self.active = []

    def watch(self, module, fn):
        self.active.append(module.register_forward_hook(lambda mod, args, out: fn(out)))

    def release(self):
        for handle in self.active:
            handle.remove()
        self.active = []


class Runner:
    def __init__(self, model, probe):
        self.model = model
        self.probe = probe
        self.active = []

    def _drop(self):
        for handle in self.active:
            handle.remove()
        self.active = []

    def run(self, x, fn):
        self.probe.watch(self.model, fn)
        out = self.model(x)
        self._drop()
        return out
"""
        ),
        # Only bookkeeping between the registration and the removal handed to the
        # finalizer: appending the handle to a list cannot fail.
        Valid(
            """
import weakref


class Planner:
    def __init__(self):
        self.handles = []

    def install(self, model):
        handle = model.register_forward_pre_hook(self._plan)
        self.handles.append(handle)
        weakref.finalize(self, handle.remove)

    def _plan(self, module, args):
        pass
"""
        ),
        # `self._attach` in `Timeline` is Timeline's own method (a subscription, no hook),
        # not the same-named registration wrapper of the unrelated `Probe`.
        Valid(
            """
class Probe:
    def _attach(self, module, hook):
        return module.register_forward_hook(hook)


class Timeline:
    def _attach(self, module, callback):
        return self.events.subscribe(module, callback)

    def run(self, module, callback, batch):
        subscription = self._attach(module, callback)
        module(batch)
        subscription.remove()
"""
        ),
        # A method that keeps its handles on the instance, run on every submodule by
        # `Module.apply`; the caller removes them in `finally`.
        Valid(
            """
class LayerShapes:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.shapes = []

    def _attach(self, module):
        self.handles.append(module.register_forward_hook(self._note))

    def _note(self, module, args, output):
        self.shapes.append(tuple(output.shape))

    def _detach(self):
        while self.handles:
            self.handles.pop().remove()

    def measure(self, batch):
        try:
            self.net.apply(self._attach)
            self.net(batch)
        finally:
            self._detach()
        return self.shapes
"""
        ),
        # `__exit__` removes what `__enter__` kept, through a helper method.
        Valid(
            """
class Calibration:
    def __init__(self, model):
        self.model = model
        self.taps = {}

    def __enter__(self):
        for name, module in self.model.named_modules():
            self.taps[name] = module.register_forward_pre_hook(self.observe)
        return self

    def __exit__(self, *exc):
        self._drop_all()

    def _drop_all(self):
        for tap in self.taps.values():
            tap.remove()
        self.taps.clear()
"""
        ),
        # Handles returned by a helper of the same file; the caller removes them in `finally`.
        Valid(
            """
def attach_probes(model, sink):
    probes = []
    for module in model.children():
        probe = module.register_forward_hook(lambda m, i, o: sink.append(o.shape))
        probes.append(probe)
    return probes

def shapes(model, x):
    sink = []
    probes = attach_probes(model, sink)
    try:
        model(x)
    finally:
        for probe in probes:
            probe.remove()
    return sink
"""
        ),
        # A removal after `return` or in another function is not this function's removal:
        # nothing here removes the handle on this path, which is HL002's question, not HL004's.
        Valid(
            """
def keep_watching(model, log):
    handle = model.register_forward_hook(log)
    return handle

def stop_watching(handle):
    handle.remove()
"""
        ),
        # Removal in `finally`: a summary tool that hooks every leaf module.
        Valid(
            """
def summarize(model, example):
    rows = []
    handles = [m.register_forward_hook(lambda mod, i, o: rows.append(o.shape)) for m in model.modules()]
    try:
        model(example)
    finally:
        for h in handles:
            h.remove()
    return rows
"""
        ),
        # The handle is a context manager; a second one sits in an ExitStack.
        Valid(
            """
import contextlib

def attribute(model, layer, inputs, store):
    with layer.register_forward_hook(lambda m, i, o: store.append(o.detach())):
        model(inputs)
    with contextlib.ExitStack() as stack:
        stack.enter_context(layer.register_full_backward_hook(lambda m, gi, go: store.append(go[0])))
        model(inputs).sum().backward()
"""
        ),
        # Nothing that can raise between registering and removing (a probe that is reset).
        Valid(
            """
def reset_probe(module, probe):
    handle = module.register_forward_hook(probe)
    calls = 0
    name = "probe"
    handle.remove()
    return calls, name
"""
        ),
        # A @contextmanager that already guards its yield.
        Valid(
            """
from contextlib import contextmanager

@contextmanager
def capture(module, sink):
    handle = module.register_forward_hook(lambda m, i, o: sink.append(o.detach()))
    try:
        yield sink
    finally:
        handle.remove()
"""
        ),
        # Removed in an except handler that re-raises, and on the normal path.
        Valid(
            """
def calibrate(layer, batches, observer):
    handle = layer.register_forward_pre_hook(observer)
    try:
        for batch in batches:
            layer(batch)
    except Exception:
        handle.remove()
        raise
    handle.remove()
"""
        ),
        # Handles kept on a long-lived object, added in a pass that ends in `continue`:
        # this pass never reaches the removal; a later pass (or call) removes them.
        Valid(
            """
def attach_sync(modules, sync):
    return [m.register_forward_pre_hook(sync) for m in modules]


class Trainer:
    def train_batch(self, batch, sync):
        while True:
            try:
                loss = self.step(batch)
            except MemoryError:
                self.shrink_batch()
                if not self.state.sync_handles:
                    self.state.sync_handles = attach_sync(self.state.modules, sync)
                continue
            self.clean_steps += 1
            if self.state.sync_handles and self.clean_steps >= 3:
                for handle in self.state.sync_handles:
                    handle.remove()
                self.state.sync_handles.clear()
            return loss
"""
        ),
        # A nested def fills the list `model.apply` hands it; `finally` removes the list.
        Valid(
            """
def layer_table(model, x):
    rows = []
    hooks = []

    def attach(module):
        hooks.append(module.register_forward_hook(lambda m, i, o: rows.append(o.shape)))

    try:
        model.apply(attach)
        model(x)
    finally:
        for h in hooks:
            h.remove()
    return rows
"""
        ),
        # The tensor hooks are put on by a forward hook, so only while the model runs
        # inside the inner `try`; registering the forward hook does not run it.
        Valid(
            """
def saliency(model, layer, image, device):
    grads = []
    grad_taps = []

    def keep(grad):
        grads.append(grad)

    def on_output(module, args, out):
        grad_taps.append(out.register_hook(keep))

    tap = None
    try:
        tap = layer.register_forward_hook(on_output)
        batch = image.to(device)
        try:
            model(batch).max().backward()
        finally:
            for t in grad_taps:
                t.remove()
    finally:
        if tap is not None:
            tap.remove()
    return grads
"""
        ),
        # The raise before the `try` happens only when the loop hooked nothing: no hook
        # is on then.
        Valid(
            """
import torch.nn as nn


def conv_means(net, batch):
    means = []
    taps = []
    for layer in net.modules():
        if isinstance(layer, nn.Conv2d):
            taps.append(layer.register_forward_hook(lambda m, a, o: means.append(o.mean())))
    if not taps:
        raise ValueError("the network has no convolution")
    try:
        net(batch)
    finally:
        for tap in taps:
            tap.remove()
    return means
"""
        ),
        # The constructor takes its hooks off before it refuses the model.
        Valid(
            """
class NormTaps:
    def __init__(self, model, expected):
        self.taps = []
        self.norms = {}
        for name, layer in model.named_children():
            self.taps.append(layer.register_forward_hook(self._record(name)))
        if len(self.taps) != expected:
            self.detach()
            raise ValueError(f"expected {expected} layers, found {len(self.taps)}")

    def _record(self, name):
        def hook(module, args, output):
            self.norms[name] = output.norm().item()

        return hook

    def detach(self):
        for tap in self.taps:
            tap.remove()
        self.taps = []
"""
        ),
        # The recorder of this file hooks a network this call builds; neither leaves the
        # call, so if the forward raises both go, hooks and all.
        Valid(
            """
import torch
from torch import nn


class Taps:
    def __init__(self, net):
        self.seen = []
        self.handles = [m.register_forward_hook(self._keep) for m in net.children()]

    def _keep(self, module, args, output):
        self.seen.append(output.shape)

    def close(self):
        for handle in self.handles:
            handle.remove()


def smoke_test():
    net = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    taps = Taps(net)
    net(torch.ones(1, 8))
    taps.close()
    return taps.seen
"""
        ),
        # Each pass loads its own model by name and drops it at the end of the pass.
        Valid(
            """
from transformers import AutoModel


def head_sizes(names, batch):
    sizes = {}
    for name in names:
        model = AutoModel.from_pretrained(name).eval()
        shapes = []
        hook = model.pooler.register_forward_hook(lambda m, a, o: shapes.append(o.shape))
        model(**batch)
        hook.remove()
        sizes[name] = shapes
    return sizes
"""
        ),
        # A walker nested beside the def that fills the list runs it on every
        # submodule; the walk starts inside the `try` whose `finally` empties the list.
        Valid(
            """
def norm_stats(net, batch):
    stats, taps = {}, []

    def tap(mod):
        taps.append(mod.register_forward_hook(lambda m, a, o: stats.setdefault(m, o.norm())))

    def visit(mod):
        tap(mod)
        for sub in mod.children():
            visit(sub)

    try:
        visit(net)
        net(batch)
    finally:
        while taps:
            taps.pop().remove()
    return stats
"""
        ),
        # Two registrations, then the `try`: only the second registration runs between
        # the first and the `try`, and the `finally` removes both.
        Valid(
            """
def load_with_remap(optimizer, state, before, after):
    first = optimizer.register_load_state_dict_pre_hook(before)
    second = optimizer.register_load_state_dict_post_hook(after)
    try:
        optimizer.load_state_dict(state)
    finally:
        first.remove()
        second.remove()
"""
        ),
        # The unpacked handles are removed in `finally`; the other element is data.
        Valid(
            """
def _watch(model):
    handles, sizes = [], {}
    for name, layer in model.named_modules():
        handles.append(layer.register_forward_hook(lambda m, a, o, n=name: sizes.update({n: o.numel()})))
    return handles, sizes


def output_sizes(model, batch):
    handles, sizes = _watch(model)
    try:
        model(batch)
    finally:
        for handle in handles:
            handle.remove()
    return sizes
"""
        ),
        # Arguments checked before the hooks go on; or a failure after them cleans up.
        Valid(
            """
class Saliency:
    def __init__(self, layer, smoothing):
        if smoothing <= 0:
            raise ValueError("smoothing must be positive")
        self.handles = [layer.register_forward_hook(self._keep)]
        self.smoothing = smoothing

    def _keep(self, module, inputs, output):
        self.activation = output

    def remove(self):
        for handle in self.handles:
            handle.remove()


class Checked(Saliency):
    def __init__(self, layer, smoothing, limit):
        super().__init__(layer, smoothing)
        try:
            if limit < smoothing:
                raise ValueError("limit below smoothing")
        except ValueError:
            self.remove()
            raise
"""
        ),
        # The same one-shot hook, its handle kept in a list the imported base class
        # defines (and may empty: its file is not this one).
        Valid(
            """
from .base import Recorder


class FirstInput(Recorder):
    def arm(self, layer):
        def once(module, args):
            self.seen.append(tuple(args[0].shape))
            self.armed.pop().remove()

        self.armed.append(layer.register_forward_pre_hook(once))
"""
        ),
        # The same pair (nested this time), the release in `finally`.
        Valid(
            """
def estimate_scores(model, modules, step, batches):
    def attach(module):
        module._score_handle = module.register_full_backward_hook(_accumulate)

    def detach(module):
        module._score_handle.remove()
        del module._score_handle

    for module in modules:
        attach(module)
    try:
        for batch in batches:
            step(model, batch)
    finally:
        for module in modules:
            detach(module)


def _accumulate(module, grad_input, grad_output):
    module.score += grad_output[0].abs().sum()
"""
        ),
        # The same object, released in `finally`.
        Valid(
            """
class ScoreRegistry:
    def __init__(self, model):
        self.handles = []
        self.scores = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._score(name)))

    def _score(self, name):
        def hook(module, args, output):
            self.scores[name] = output.abs().mean().item()

        return hook

    def cleanup(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def rank_layers(model, batches):
    registry = ScoreRegistry(model)
    try:
        for batch in batches:
            model(batch)
        ranking = sorted(registry.scores, key=registry.scores.get)
    finally:
        registry.cleanup()
    return ranking
"""
        ),
        # The same object with a finalizer that removes its hooks: an exception that
        # drops the object removes them (the hooks hold the scores, not the object).
        Valid(
            """
def score_hook(scores, name):
    def hook(module, args, output):
        scores[name] = output.abs().mean().item()

    return hook


class ScoreRegistry:
    def __init__(self, model):
        self.handles = []
        self.scores = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(score_hook(self.scores, name)))

    def __del__(self):
        self.cleanup()

    def cleanup(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def rank_layers(model, batches):
    registry = ScoreRegistry(model)
    for batch in batches:
        model(batch)
    ranking = sorted(registry.scores, key=registry.scores.get)
    registry.cleanup()
    return ranking
"""
        ),
        # The `try` starts right after the hooks go on: nothing before it can raise
        # (another registration kept for the same `finally` is part of putting them on).
        Valid(
            """
def load_with_remap(optimizer, state, remap, restore):
    before = optimizer.register_load_state_dict_pre_hook(remap)
    after = optimizer.register_load_state_dict_post_hook(restore)
    loaded = False
    try:
        optimizer.load_state_dict(state)
        loaded = True
    finally:
        before.remove()
        after.remove()
    return loaded
"""
        ),
        # The helper fills the caller's list; the caller removes it in `finally`, whose
        # `try` starts right after the call.
        Valid(
            """
def hook_tree(module, record, handles):
    handles.append(module.register_forward_hook(record))
    for child in module.children():
        hook_tree(child, record, handles)


def trace(model, batch, record):
    handles = []
    hook_tree(model, record, handles)
    try:
        return model(batch)
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # Between the hooks and the `try` only a log line and a flag: nothing the `try`
        # uses is prepared there (what is reported is input made ready for the hooks).
        Valid(
            """
def calibrate(model, batches, observe):
    handles = [m.register_forward_hook(observe) for m in model.modules()]
    logger.info("calibrating %d modules", len(handles))
    model.calibrating = True
    try:
        for batch in batches:
            model(batch)
    finally:
        model.calibrating = False
        for handle in handles:
            handle.remove()
"""
        ),
        # The list is the enclosing function's (`nonlocal`): its own `finally` removes
        # whatever the hook put there.
        Valid(
            """
@contextmanager
def two_pass(model, plan):
    inner = []

    def first_pass(module, args):
        nonlocal inner
        inner = [layer.register_forward_pre_hook(plan) for layer in module.children()]
        prepared = plan.prepare(args)
        try:
            plan.run(prepared)
        finally:
            for handle in inner:
                handle.remove()

    outer = model.register_forward_pre_hook(first_pass)
    try:
        yield
    finally:
        outer.remove()
        for handle in inner:
            handle.remove()
"""
        ),
        # Removed early in the `try` body, and again by its `finally`: the `finally`
        # covers the run before the early removal.
        Valid(
            """
def probe_then_measure(model, batch, record):
    handles = []
    try:
        handles.append(model.register_forward_hook(record))
        model(batch)
        for handle in handles:
            handle.remove()
        handles.clear()
        return model(batch)
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # Putting both handles into the list is bookkeeping, not code that can raise.
        Valid(
            """
def trace_blocks(model, blocks, enter, leave, batch):
    handles = []
    for block in blocks:
        first = block.register_forward_pre_hook(enter)
        second = block.register_forward_hook(leave)
        handles.extend([first, second])
    try:
        return model(batch)
    finally:
        for handle in handles:
            handle.remove()
"""
        ),  # Start/stop functions over a whole model (`Module.apply` runs the installer on
        # every submodule, each handle kept on its module), bound to the model as methods
        # with `__get__`: the stop runs in `finally`.
        Valid(
            """
from functools import partial


def tally(module, inputs, output):
    module.__calls__ += 1


def begin_tally(self, step=1):
    def install(module, step):
        module.__tally_handle__ = module.register_forward_hook(tally)

    self.apply(partial(install, step=step))


def uninstall(module):
    if hasattr(module, "__tally_handle__"):
        module.__tally_handle__.remove()
        del module.__tally_handle__


def end_tally(self):
    self.apply(uninstall)


def tallied(model):
    model.begin_tally = begin_tally.__get__(model)
    model.end_tally = end_tally.__get__(model)
    return model


def count_calls(model, batch):
    model = tallied(model)
    model.begin_tally()
    try:
        model(batch)
    finally:
        model.end_tally()
"""
        ),
        # The hooks go on the call's own copy of the model, which nothing keeps: when the
        # forward raises, the copy and its hooks are dropped together.
        Valid(
            """
import copy


def tally(module, inputs, output):
    module.__calls__ += 1


def install(module):
    module.__tally_handle__ = module.register_forward_hook(tally)


def uninstall(module):
    module.__tally_handle__.remove()


def begin_tally(self):
    self.apply(install)


def end_tally(self):
    self.apply(uninstall)


def count_calls(model, batch):
    model = copy.deepcopy(model)
    begin_tally(model)
    model(batch)
    total = sum(m.__calls__ for m in model.modules())
    end_tally(model)
    return total
"""
        ),
        # The same handler, with the hooks put on inside its `try`: covered.
        Valid(
            """
def profile(model, make_input, size, hook):
    handles = []
    try:
        handles += [m.register_forward_hook(hook) for m in model.modules()]
        model(make_input(size))
    except Exception:
        for handle in handles:
            handle.remove()
        return None
    for handle in handles:
        handle.remove()
    return size
"""
        ),
        # The check in the loop does not change from pass to pass: it fails on the first
        # one, before any hook is on, or never.
        Valid(
            """
class LayerTaps:
    def __init__(self, model, names, backend):
        self.handles = []
        self.seen = {}
        layers = dict(model.named_modules())
        for name in names:
            assert backend.supports_hooks(), "this backend cannot hook modules"
            self.handles.append(layers[name].register_forward_hook(self.tap))

    def tap(self, module, inputs, output):
        self.seen[module] = output.shape

    def close(self):
        for handle in self.handles:
            handle.remove()
"""
        ),
        # `__exit__` hands on to a base class of another file, which may remove what
        # `__enter__` put on: with no way to read it, nothing is reported.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_pre_hook

from tracing.base import Tracker


class DepthTracker(Tracker):
    def __enter__(self):
        self.depth = 0
        self._pre_handle = register_module_forward_pre_hook(self._enter_module)
        return self

    def __exit__(self, *exc):
        super().__exit__(*exc)

    def _enter_module(self, module, args):
        self.depth += 1
"""
        ),
        # Hooks with dropped handles that come off in bulk, in `finally`: directly, or
        # through a helper of the file.
        Valid(
            """
def trace_shapes(model, batch):
    shapes = []
    for block in model.children():
        block.register_forward_hook(lambda mod, args, out: shapes.append(out.shape))
    try:
        model(batch)
    finally:
        for block in model.children():
            block._forward_hooks.clear()
    return shapes
"""
        ),
        Valid(
            """
def clear_forward_hooks(model):
    for layer in model.layers:
        layer._forward_hooks.clear()


def count_calls(model, batch, counter):
    for layer in model.layers:
        layer.register_forward_hook(counter)
    try:
        return model(batch)
    finally:
        clear_forward_hooks(model)
"""
        ),
        # A helper that empties a hook dict and fills it again (to pickle the module
        # bare) takes nothing off for good: no removal here to judge.
        Valid(
            """
import torch


def _save_bare(module, path):
    saved = module._backward_hooks.copy()
    module._backward_hooks.clear()
    torch.save(module, path)
    module._backward_hooks.update(saved)


def save_with_sync(model, path, stream):
    model.register_full_backward_hook(lambda mod, gi, go: stream.synchronize())
    model.train()
    _save_bare(model, path)
"""
        ),
        # Reading a hook dict takes nothing off: no removal here to judge.
        Valid(
            """
def run_traced(model, batch, tracer):
    for layer in model.layers:
        layer.register_forward_hook(tracer)
    out = model(batch)
    hooked = [layer for layer in model.layers if layer._forward_hooks]
    return out, hooked
"""
        ),
        # A same-file factory given locals that hold literals builds the test's own net;
        # so does a call that builds anew and hands back a tuple (`model, batch = ...`):
        # whatever raises drops them with their hooks.
        Valid(
            """
import torch
from torch import nn


def make_stack(width, depth):
    return nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])


def test_first_block_sees_the_batch():
    width, depth = 8, 3
    net = make_stack(width, depth)
    seen = []
    handle = net[0].register_forward_pre_hook(lambda mod, args: seen.append(args[0].shape))
    net(torch.zeros(2, width))
    handle.remove()
    assert seen
"""
        ),
        Valid(
            """
from helpers import build_model_and_batch


def test_hook_counts_backward_calls():
    model, batch = build_model_and_batch(layers=2)
    calls = []
    handle = model.head.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    model(batch).sum().backward()
    handle.remove()
    assert calls == [1]
"""
        ),
        # Choosing a grad-mode context (not yet entered) before the `try` cannot raise.
        Valid(
            """
import torch


def first_input(layer, x, train):
    seen = []
    handle = layer.register_forward_pre_hook(lambda mod, args: seen.append(args[0]))
    mode = torch.enable_grad() if train else torch.no_grad()
    try:
        with mode:
            layer(x)
    finally:
        handle.remove()
    return seen[0]
"""
        ),
        # A loop that finds one module and stops (`break`) registers once: the handle is
        # removed in `finally`.
        Valid(
            """
def layer_outputs(model, batches, layer_name):
    captured = []
    handle = None
    for name, module in model.named_modules():
        if name == layer_name:
            handle = module.register_forward_hook(lambda mod, args, out: captured.append(out.detach()))
            break
    try:
        for batch in batches:
            model(batch)
    finally:
        if handle is not None:
            handle.remove()
    return captured
"""
        ),
        # Objects of a class of the file, each hooking on `attach()` and unhooking on
        # `remove()`, kept in a list the `finally` walks.
        Valid(
            """
class Nudge:
    def __init__(self, block, direction):
        self.block = block
        self.direction = direction
        self.handle = None

    def _shift(self, module, args, output):
        return output + self.direction

    def attach(self):
        self.handle = self.block.register_forward_hook(self._shift)

    def remove(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


def nudged_logits(model, block, directions, tokens):
    nudges = []
    try:
        for direction in directions:
            nudge = Nudge(block, direction)
            nudge.attach()
            nudges.append(nudge)
        return model(tokens)
    finally:
        for nudge in nudges:
            nudge.remove()
"""
        ),
    ]
    INVALID = [
        # The nested helper hands back the caller's model itself (in eval mode): a
        # raising run leaves the hooks on it.
        Invalid(
            """
def peak_activations(model, sample):
    def prepared(net):
        return net.eval()

    trial = prepared(model)
    peaks = []
    handles = [m.register_forward_hook(lambda mod, args, out: peaks.append(out.abs().max())) for m in trial.modules()]
    trial(sample)
    for handle in handles:
        handle.remove()
    return max(peaks)
""",
            line=7,
            expected="""
def peak_activations(model, sample):
    def prepared(net):
        return net.eval()

    trial = prepared(model)
    peaks = []
    handles = [m.register_forward_hook(lambda mod, args, out: peaks.append(out.abs().max())) for m in trial.modules()]
    try:
        trial(sample)
    finally:
        for handle in handles:
            handle.remove()
    return max(peaks)
""",
        ),
        # The helper also keeps the model it runs: the hooks may outlive the call.
        Invalid(
            """
import torch
from transformers import AutoModel

CACHE = []


def load_teacher(path):
    return AutoModel.from_pretrained(path).eval()


def run_and_keep(net, batch):
    CACHE.append(net)
    with torch.no_grad():
        return net(**batch)


def teacher_attention(path, batch):
    teacher = load_teacher(path)
    maps = []
    hooks = [layer.attention.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in teacher.encoder.layer]
    run_and_keep(teacher, batch)
    for hook in hooks:
        hook.remove()
    return maps
""",
            line=20,
            expected="""
import torch
from transformers import AutoModel

CACHE = []


def load_teacher(path):
    return AutoModel.from_pretrained(path).eval()


def run_and_keep(net, batch):
    CACHE.append(net)
    with torch.no_grad():
        return net(**batch)


def teacher_attention(path, batch):
    teacher = load_teacher(path)
    maps = []
    hooks = [layer.attention.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in teacher.encoder.layer]
    try:
        run_and_keep(teacher, batch)
    finally:
        for hook in hooks:
            hook.remove()
    return maps
""",
        ),
        # A same-file helper that returns a list it fills with the caller's blocks is no
        # loader: the hooks are on the caller's model.
        Invalid(
            """
import torch


def pick_blocks(model):
    found = []
    for block in model.children():
        found.append(block)
    return found


def block_activations(model, batch):
    blocks = pick_blocks(model)
    acts = {}
    hooks = [b.register_forward_hook(lambda m, a, out, i=i: acts.__setitem__(i, out)) for i, b in enumerate(blocks)]
    with torch.no_grad():
        model(batch)
    for hook in hooks:
        hook.remove()
    return acts
""",
            line=14,
            expected="""
import torch


def pick_blocks(model):
    found = []
    for block in model.children():
        found.append(block)
    return found


def block_activations(model, batch):
    blocks = pick_blocks(model)
    acts = {}
    hooks = [b.register_forward_hook(lambda m, a, out, i=i: acts.__setitem__(i, out)) for i, b in enumerate(blocks)]
    try:
        with torch.no_grad():
            model(batch)
    finally:
        for hook in hooks:
            hook.remove()
    return acts
""",
        ),
        # The same one-shot hook, but the function runs the model itself: if that forward
        # raises, the hook stays on and fires on some later, unrelated forward.
        Invalid(
            """
def first_batch_shape(model, batch, log):
    def once(module, args, output):
        log.append(tuple(output.shape))
        module._first_batch_handle.remove()

    model._first_batch_handle = model.register_forward_hook(once)
    model(batch)
    return log[-1]
""",
            line=6,
            expected=None,
            message="is removed only by its own hook `once`",
        ),
        # An early return removes the hook first and nothing before it can raise; the
        # forward before the last removal can, and skips it.
        Invalid(
            """
def probe_width(model, batch, index):
    seen = {}
    for i, layer in enumerate(model.modules()):
        if i == index:
            hook = layer.register_forward_hook(lambda m, a, out: seen.setdefault("out", out))
            break
    model.eval()
    if batch is None:
        hook.remove()
        return None
    model(batch)
    hook.remove()
    return seen["out"].shape[-1]
""",
            line=5,
            expected=None,
            message="`hook` is removed outside `finally`/`with`: skipped if the code before it raises",
        ),
        # The same guard, but the `try` catches one kind of error: any other skips the
        # removal.
        Invalid(
            """
import torch


class Calibrator:
    def __init__(self, model, samples=None):
        self.model = model
        self.samples = samples

    def ranges(self):
        seen = {}
        hooks = []
        for name, layer in self.model.named_modules():
            if isinstance(layer, torch.nn.Conv2d):
                hooks.append(layer.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.amax())))
        if self.samples is not None and self.samples:
            try:
                with torch.no_grad():
                    for x in self.samples:
                        self.model(x)
            except ValueError as error:
                print("calibration stopped:", error)
        for hook in hooks:
            hook.remove()
        return seen
""",
            line=14,
            expected="""
import torch


class Calibrator:
    def __init__(self, model, samples=None):
        self.model = model
        self.samples = samples

    def ranges(self):
        seen = {}
        hooks = []
        try:
            for name, layer in self.model.named_modules():
                if isinstance(layer, torch.nn.Conv2d):
                    hooks.append(layer.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.amax())))
            if self.samples is not None and self.samples:
                try:
                    with torch.no_grad():
                        for x in self.samples:
                            self.model(x)
                except ValueError as error:
                    print("calibration stopped:", error)
        finally:
            for hook in hooks:
                hook.remove()
        return seen
""",
        ),
        # The main block catches the error and goes on to the next size: the hook of
        # the size that failed stays on the model for the passes after it.
        Invalid(
            """
import torch
from torch import nn


def halve(module, args, output):
    return output * 0.5


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    for size in (3, 0, 5):
        try:
            handle = model[0].register_forward_hook(halve)
            print(model(torch.randn(size, 4)).sum().item())
            handle.remove()
        except RuntimeError as error:
            print("skipped", size, error)
""",
            line=13,
            expected="""
import torch
from torch import nn


def halve(module, args, output):
    return output * 0.5


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    for size in (3, 0, 5):
        try:
            with model[0].register_forward_hook(halve):
                print(model(torch.randn(size, 4)).sum().item())
        except RuntimeError as error:
            print("skipped", size, error)
""",
        ),
        # The same search, but a call that can raise runs after the check and before
        # the `try`: it starts at that call.
        Invalid(
            """
def first_layer_output(model, batch, kind):
    found = {}
    hook = None
    for layer in model.modules():
        if type(layer).__name__ == kind:
            hook = layer.register_forward_hook(lambda m, a, out: found.setdefault("out", out))
            break
    if hook is None:
        raise LookupError(f"no {kind} layer")
    batch = batch.to(next(model.parameters()).device)
    try:
        model(batch)
    finally:
        hook.remove()
    return found["out"]
""",
            line=6,
            message="`hook` is removed in `finally`, but its `try` starts after code that can raise",
            expected="""
def first_layer_output(model, batch, kind):
    found = {}
    hook = None
    for layer in model.modules():
        if type(layer).__name__ == kind:
            hook = layer.register_forward_hook(lambda m, a, out: found.setdefault("out", out))
            break
    if hook is None:
        raise LookupError(f"no {kind} layer")
    try:
        batch = batch.to(next(model.parameters()).device)
        model(batch)
    finally:
        hook.remove()
    return found["out"]
""",
        ),
        # The same probes collected after the forward, outside `finally`: the base
        # class's placeholders do not hide which `attach` and `collect` run.
        Invalid(
            """
class Probe:
    def attach(self):
        raise NotImplementedError()

    def collect(self):
        raise NotImplementedError()


class OutputProbe(Probe):
    def __init__(self, layer):
        self.layer = layer
        self.seen = None
        self.handle = None

    def attach(self):
        self.handle = self.layer.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.seen = output.detach()

    def collect(self):
        self.handle.remove()
        return self.seen


def probe_outputs(model, probes, batch):
    for probe in probes:
        probe.attach()
    model(batch)
    return [probe.collect() for probe in probes]
""",
            line=28,
        ),
        # The same path walk on the caller's model: a failing forward leaves its hooks.
        Invalid(
            """
import functools


def calibrate(net, layer_paths, sample):
    outputs = {}
    handles = []
    for path in layer_paths:
        layer = functools.reduce(getattr, path.split("."), net)
        handles.append(layer.register_forward_hook(lambda m, a, out: outputs.__setitem__(m, out)))
    net(sample)
    for layer, out in outputs.items():
        layer.offset = out.mean()
    for handle in handles:
        handle.remove()
    return net
""",
            line=9,
            expected="""
import functools


def calibrate(net, layer_paths, sample):
    outputs = {}
    handles = []
    try:
        for path in layer_paths:
            layer = functools.reduce(getattr, path.split("."), net)
            handles.append(layer.register_forward_hook(lambda m, a, out: outputs.__setitem__(m, out)))
        net(sample)
        for layer, out in outputs.items():
            layer.offset = out.mean()
    finally:
        for handle in handles:
            handle.remove()
    return net
""",
        ),
        # The check runs per layer, after the earlier layers are hooked: when it raises,
        # `with` never runs `__exit__`, and those hooks stay on the caller's layers.
        Invalid(
            """
class Patched:
    def __init__(self, layers, scales):
        self.layers = layers
        self.scales = scales
        self.handles = []

    def __enter__(self):
        for layer, scale in zip(self.layers, self.scales):
            if scale <= 0:
                raise ValueError("scales must be positive")
            self.handles.append(layer.register_forward_hook(lambda m, a, out, s=scale: out * s))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        self.handles = []
""",
            line=11,
            message="`with` then never runs `__exit__` to remove them",
        ),
        # A pass that meets an empty batch moves on before the removal: the hook stays,
        # and the next pass adds another. No exception needed; the fix covers both.
        Invalid(
            """
def count_rows(model, batches, seen):
    for batch in batches:
        handle = model.register_forward_hook(lambda m, a, out: seen.append(out.shape[0]))
        if len(batch) == 0:
            continue
        model(batch)
        handle.remove()
""",
            line=3,
            message="skipped by the `continue` before it",
            expected="""
def count_rows(model, batches, seen):
    for batch in batches:
        with model.register_forward_hook(lambda m, a, out: seen.append(out.shape[0])):
            if len(batch) == 0:
                continue
            model(batch)
""",
        ),
        # The same helper, the objects detached after the loop of forwards, outside
        # `finally`: a failing forward leaves every meter's hook on the network.
        Invalid(
            """
class Meter:
    def __init__(self, label):
        self.label = label
        self.peaks = []
        self.handle = None

    def start(self, module):
        self.handle = module.register_forward_hook(self.take)

    def stop(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None

    def take(self, module, args, output):
        self.peaks.append(float(output.abs().max()))


class Profiler:
    def __init__(self, net):
        self.net = net

    def _meters(self):
        meters = []
        for label, layer in self.net.named_children():
            meter = Meter(label)
            meter.start(layer)
            meters.append(meter)
        return meters

    def peaks(self, inputs):
        meters = self._meters()
        for x in inputs:
            self.net(x)
        for meter in meters:
            meter.stop()
        return {m.label: max(m.peaks) for m in meters}
""",
            line=32,
        ),
        # The same without `finally`: the list's class says what `nudge.remove()` runs.
        Invalid(
            """
class Nudge:
    def __init__(self, block, direction):
        self.block = block
        self.direction = direction
        self.handle = None

    def _shift(self, module, args, output):
        return output + self.direction

    def attach(self):
        self.handle = self.block.register_forward_hook(self._shift)

    def remove(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


def nudged_logits(model, block, directions, tokens):
    nudges = []
    for direction in directions:
        nudge = Nudge(block, direction)
        nudge.attach()
        nudges.append(nudge)
    logits = model(tokens)
    for nudge in nudges:
        nudge.remove()
    return logits
""",
            expected="""
class Nudge:
    def __init__(self, block, direction):
        self.block = block
        self.direction = direction
        self.handle = None

    def _shift(self, module, args, output):
        return output + self.direction

    def attach(self):
        self.handle = self.block.register_forward_hook(self._shift)

    def remove(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


def nudged_logits(model, block, directions, tokens):
    nudges = []
    try:
        for direction in directions:
            nudge = Nudge(block, direction)
            nudge.attach()
            nudges.append(nudge)
        logits = model(tokens)
    finally:
        for nudge in nudges:
            nudge.remove()
    return logits
""",
            line=23,
            message="`Nudge.handle` is removed outside `finally`/`with`",
        ),
        # One registration (the loop stops after it), removed after the batches run.
        Invalid(
            """
def layer_outputs(model, batches, layer_name):
    captured = []
    handle = None
    for name, module in model.named_modules():
        if name == layer_name:
            handle = module.register_forward_hook(lambda mod, args, out: captured.append(out.detach()))
            break
    for batch in batches:
        model(batch)
    if handle is not None:
        handle.remove()
    return captured
""",
            line=6,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # The pair comes from a call given the caller's model: the hooks are on it.
        Invalid(
            """
from helpers import prepare


def grad_calls(net, data):
    model, batch = prepare(net, data)
    calls = []
    handle = model.head.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    model(batch).sum().backward()
    handle.remove()
    return calls
""",
            expected="""
from helpers import prepare


def grad_calls(net, data):
    model, batch = prepare(net, data)
    calls = []
    with model.head.register_full_backward_hook(lambda mod, gi, go: calls.append(1)):
        model(batch).sum().backward()
    return calls
""",
            line=7,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # A context whose construction can raise (`torch.autocast` checks its device).
        Invalid(
            """
import torch


def first_input(layer, x, device, amp):
    seen = []
    handle = layer.register_forward_pre_hook(lambda mod, args: seen.append(args[0]))
    mode = torch.autocast(device) if amp else torch.no_grad()
    try:
        with mode:
            layer(x)
    finally:
        handle.remove()
    return seen[0]
""",
            expected="""
import torch


def first_input(layer, x, device, amp):
    seen = []
    handle = layer.register_forward_pre_hook(lambda mod, args: seen.append(args[0]))
    try:
        mode = torch.autocast(device) if amp else torch.no_grad()
        with mode:
            layer(x)
    finally:
        handle.remove()
    return seen[0]
""",
            line=6,
            message="`handle` is removed in `finally`, but its `try` starts after code that can raise",
        ),
        # A method that keeps each handle on `self` and also returns it, its value unused
        # by the caller: the handles are in `self.taps`, removed after the forward.
        Invalid(
            """
class Tapper:
    def __init__(self, net):
        self.net = net
        self.taps = []
        self.seen = {}

    def tap(self, name):
        layer = self.net.get_submodule(name)
        handle = layer.register_forward_hook(lambda mod, args, out: self.seen.update({name: out}))
        self.taps.append(handle)
        return handle

    def snapshot(self, batch, names):
        for name in names:
            self.tap(name)
        self.net(batch)
        for handle in self.taps:
            handle.remove()
        self.taps = []
        return dict(self.seen)
""",
            line=15,
            message="`self.taps` is removed outside `finally`/`with`: skipped if the code before it raises",
            expected="""
class Tapper:
    def __init__(self, net):
        self.net = net
        self.taps = []
        self.seen = {}

    def tap(self, name):
        layer = self.net.get_submodule(name)
        handle = layer.register_forward_hook(lambda mod, args, out: self.seen.update({name: out}))
        self.taps.append(handle)
        return handle

    def snapshot(self, batch, names):
        try:
            for name in names:
                self.tap(name)
            self.net(batch)
        finally:
            for handle in self.taps:
                handle.remove()
        self.taps = []
        return dict(self.seen)
""",
        ),
        # The handles go back to the caller, but a check after the loop that hooks the
        # blocks raises first: the caller never gets them, and the blocks stay hooked.
        Invalid(
            """
def add_scales(blocks, head, scales, head_scale):
    handles = []
    for index, scale in scales.items():
        handles.append(blocks[index].register_forward_hook(lambda mod, args, out, s=scale: out * s))
    if head_scale is not None:
        if head is None:
            raise ValueError("this model has no head to scale")
        handles.append(head.register_forward_hook(lambda mod, args, out: out * head_scale))
    return handles
""",
            line=4,
            message=(
                "`add_scales` returns the handles of hooks it registers, but may `raise` after registering: "
                "nothing removes them then"
            ),
        ),
        # A static method of the class, called through the class's name, hands back the
        # handles; the caller removes them after the trace, outside `finally`.
        Invalid(
            """
class Tracer:
    @staticmethod
    def _watch(net, seen):
        return [m.register_forward_pre_hook(lambda mod, args, n=n: seen.add(n)) for n, m in net.named_children()]

    def trace(self, net, sample):
        seen = set()
        handles = Tracer._watch(net, seen)
        graph = self.record(net, sample)
        for handle in handles:
            handle.remove()
        return graph, seen
""",
            line=8,
            message="`handles` is removed outside `finally`/`with`: skipped if the code before it raises",
            expected="""
class Tracer:
    @staticmethod
    def _watch(net, seen):
        return [m.register_forward_pre_hook(lambda mod, args, n=n: seen.add(n)) for n, m in net.named_children()]

    def trace(self, net, sample):
        seen = set()
        handles = Tracer._watch(net, seen)
        try:
            graph = self.record(net, sample)
        finally:
            for handle in handles:
                handle.remove()
        return graph, seen
""",
        ),
        # An object's method can raise, unlike a clock (`time.monotonic()`, VALID).
        Invalid(
            """
def timed_features(net, block, batches, timer):
    kept = []
    handle = block.register_forward_hook(lambda mod, args, out: kept.append(out.mean()))
    started = timer.start()
    try:
        for batch in batches:
            net(batch)
            timer.lap(started)
    finally:
        handle.remove()
    return kept
""",
            line=3,
            message="`handle` is removed in `finally`, but its `try` starts after code that can raise",
            expected="""
def timed_features(net, block, batches, timer):
    kept = []
    handle = block.register_forward_hook(lambda mod, args, out: kept.append(out.mean()))
    try:
        started = timer.start()
        for batch in batches:
            net(batch)
            timer.lap(started)
    finally:
        handle.remove()
    return kept
""",
        ),
        # Handles dropped, hooks taken off by emptying every module's dict after the
        # forward, outside `finally`: a forward that raises leaves them all on.
        Invalid(
            """
from functools import partial


class ShapeRecorder:
    def __init__(self, model):
        self.model = model
        self.shapes = {}

    def _note(self, name, module, args, output):
        self.shapes[name] = tuple(output.shape)

    def record(self, batch):
        for name, module in self.model.named_modules():
            module.register_forward_hook(partial(self._note, name))
        self.model(batch)
        for module in self.model.modules():
            module._forward_hooks.clear()
        return self.shapes
""",
            line=14,
            message="hooks come off by emptying `module._forward_hooks` outside `finally`/`with`",
        ),
        # The same through a helper that binds each dict anew: a failed `generate`
        # leaves the model steered for every later call.
        Invalid(
            """
from collections import OrderedDict


def _unhook(layers):
    for layer in layers:
        layer._forward_pre_hooks = OrderedDict()


def generate_steered(model, layers, shift, prompt):
    for layer in layers:
        layer.register_forward_pre_hook(lambda mod, args: (args[0] + shift,))
    text = model.generate(prompt)
    _unhook(layers)
    return text
""",
            line=11,
            message="hooks come off by `_unhook()` outside `finally`/`with`",
        ),
        # A same-file factory method builds the object whose constructor hooks the layer:
        # calling it acquires the hooks as building the object does.
        Invalid(
            """
class Extractor:
    def __init__(self, model, layer):
        self.model = model
        self.acts = []
        self.handles = [layer.register_forward_hook(self._keep)]

    def _keep(self, module, args, output):
        self.acts.append(output)

    def clear_hooks(self):
        for h in self.handles:
            h.remove()


class Explainer:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer

    def _get_extractor(self):
        return Extractor(self.model, self.layer)

    def explain(self, x):
        extractor = self._get_extractor()
        out = self.model(x)
        acts = list(extractor.acts)
        extractor.clear_hooks()
        return out, acts
""",
            expected="""
class Extractor:
    def __init__(self, model, layer):
        self.model = model
        self.acts = []
        self.handles = [layer.register_forward_hook(self._keep)]

    def _keep(self, module, args, output):
        self.acts.append(output)

    def clear_hooks(self):
        for h in self.handles:
            h.remove()


class Explainer:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer

    def _get_extractor(self):
        return Extractor(self.model, self.layer)

    def explain(self, x):
        extractor = self._get_extractor()
        try:
            out = self.model(x)
            acts = list(extractor.acts)
        finally:
            extractor.clear_hooks()
        return out, acts
""",
            line=24,
            message="`Extractor.handles` is removed outside `finally`/`with`",
        ),
        # The same helper on a net the caller passes in: its hooks stay on it.
        Invalid(
            """
import torch
from torch import nn


def watch_linears(model, seen):
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            handles.append(module.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.shape)))
    return handles


def shapes_of(net, width):
    seen = {}
    handles = watch_linears(net, seen)
    net(torch.zeros(1, width))
    for handle in handles:
        handle.remove()
    return seen
""",
            expected="""
import torch
from torch import nn


def watch_linears(model, seen):
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            handles.append(module.register_forward_hook(lambda m, a, out, n=name: seen.setdefault(n, out.shape)))
    return handles


def shapes_of(net, width):
    seen = {}
    handles = watch_linears(net, seen)
    try:
        net(torch.zeros(1, width))
    finally:
        for handle in handles:
            handle.remove()
    return seen
""",
            line=15,
            message="`handles` is removed outside `finally`/`with`",
        ),
        # The list read before the registration is the list the handle is appended to:
        # removing through it removes the new handle, after a forward that can raise.
        Invalid(
            """
class Probe:
    def __init__(self, model):
        self.model = model
        self.handles = []

    def _look(self, module, args, output):
        return None

    def run(self, x):
        handles = self.handles
        handle = self.model.register_forward_hook(self._look)
        handles.append(handle)
        out = self.model(x)
        for h in handles:
            h.remove()
        return out
""",
            expected="""
class Probe:
    def __init__(self, model):
        self.model = model
        self.handles = []

    def _look(self, module, args, output):
        return None

    def run(self, x):
        handles = self.handles
        try:
            handle = self.model.register_forward_hook(self._look)
            handles.append(handle)
            out = self.model(x)
        finally:
            for h in handles:
                h.remove()
        return out
""",
            line=11,
            message="`handles` is removed outside `finally`",
        ),
        # The same, but the handler re-raises: the removal after the `try` is skipped.
        Invalid(
            """
import torch


def layer_shapes(model, batch):
    shapes = []
    handles = []

    def note(module, args, output):
        shapes.append((type(module).__name__, tuple(output.shape)))

    for module in model.modules():
        handles.append(module.register_forward_pre_hook(note))
        handles.append(module.register_forward_hook(note))
    failure = None
    with torch.no_grad():
        try:
            model(batch)
        except Exception as error:
            failure = error
            raise
    for handle in handles:
        handle.remove()
    return shapes, failure
""",
            expected="""
import torch


def layer_shapes(model, batch):
    shapes = []
    handles = []

    def note(module, args, output):
        shapes.append((type(module).__name__, tuple(output.shape)))

    try:
        for module in model.modules():
            handles.append(module.register_forward_pre_hook(note))
            handles.append(module.register_forward_hook(note))
        failure = None
        with torch.no_grad():
            try:
                model(batch)
            except Exception as error:
                failure = error
                raise
    finally:
        for handle in handles:
            handle.remove()
    return shapes, failure
""",
            line=12,
            message="`handles` is removed outside `finally`/`with`",
        ),
        # The store is declared with an annotation; a missing layer raises after the
        # first hooks are on, and the caller never gets the object to close it.
        Invalid(
            """
class LayerTaps:
    def __init__(self, model, names):
        self.outputs = {}
        self.handles: list = []
        modules = dict(model.named_modules())
        for name in names:
            if name not in modules:
                raise KeyError(name)
            self.handles.append(modules[name].register_forward_hook(self._keep))

    def _keep(self, module, args, output):
        self.outputs[module] = output

    def close(self):
        for handle in self.handles:
            handle.remove()
""",
            line=9,
            message="then may `raise`",
        ),
        # The def that fills the list is run by a second nested def (a walker over the
        # children), which the function calls before the forward that can raise.
        Invalid(
            """
def norm_stats(net, batch):
    stats, taps = {}, []

    def tap(mod):
        taps.append(mod.register_forward_hook(lambda m, a, o: stats.setdefault(m, o.norm())))

    def visit(mod):
        tap(mod)
        for sub in mod.children():
            visit(sub)

    visit(net)
    net(batch)
    while taps:
        taps.pop().remove()
    return stats
""",
            line=5,
            message="is removed outside `finally`/`with`",
            expected="""
def norm_stats(net, batch):
    stats, taps = {}, []

    def tap(mod):
        taps.append(mod.register_forward_hook(lambda m, a, o: stats.setdefault(m, o.norm())))

    def visit(mod):
        tap(mod)
        for sub in mod.children():
            visit(sub)

    try:
        visit(net)
        net(batch)
    finally:
        while taps:
            taps.pop().remove()
    return stats
""",
        ),
        # Collecting the loader's batches runs the loader: it can raise with the hooks on.
        Invalid(
            """
def record(model, layers, loader):
    maps = []
    handles = [layer.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in layers]
    batches = [batch for batch in loader]
    try:
        for batch in batches:
            model(batch)
    finally:
        for handle in handles:
            handle.remove()
    return maps
""",
            line=3,
            message="its `try` starts after code that can raise",
            expected="""
def record(model, layers, loader):
    maps = []
    handles = [layer.register_forward_hook(lambda m, a, out: maps.append(out)) for layer in layers]
    try:
        batches = [batch for batch in loader]
        for batch in batches:
            model(batch)
    finally:
        for handle in handles:
            handle.remove()
    return maps
""",
        ),
        # The wrapper is kept on `self`: the layer outlives a failed call, hook and all.
        Invalid(
            """
import torch
from torch import nn


class Harness:
    def build(self, x):
        layer = nn.Linear(2, 2)
        calls = []
        handle = layer.register_forward_hook(lambda *args: calls.append(1))
        self.model = nn.Sequential(layer, nn.Tanh())
        self.model(x)
        handle.remove()
        return calls
""",
            line=9,
            message="`handle` is removed outside `finally`/`with`",
            expected="""
import torch
from torch import nn


class Harness:
    def build(self, x):
        layer = nn.Linear(2, 2)
        calls = []
        with layer.register_forward_hook(lambda *args: calls.append(1)):
            self.model = nn.Sequential(layer, nn.Tanh())
            self.model(x)
        return calls
""",
        ),
        # Put back after the copy, but taken off again at the end: off is the state the
        # method leaves, and a backward that raises first leaves them on.
        Invalid(
            """
import copy


class Clamps:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.snapshot = None

    def attach(self):
        for p in self.net.parameters():
            self.handles.append(p.register_hook(lambda g: g.clamp(-1, 1)))

    def detach(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def two_steps(self, batch):
        self.attach()
        self.net(batch).sum().backward()
        self.detach()
        self.snapshot = copy.deepcopy(self.net)
        self.attach()
        self.net(batch).sum().backward()
        self.detach()
""",
            line=20,
            message="`self.handles` is removed outside `finally`/`with`",
            expected="""
import copy


class Clamps:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.snapshot = None

    def attach(self):
        for p in self.net.parameters():
            self.handles.append(p.register_hook(lambda g: g.clamp(-1, 1)))

    def detach(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def two_steps(self, batch):
        try:
            self.attach()
            self.net(batch).sum().backward()
        finally:
            self.detach()
        self.snapshot = copy.deepcopy(self.net)
        try:
            self.attach()
            self.net(batch).sum().backward()
        finally:
            self.detach()
""",
        ),
        # The same counter stopped after the forward, outside `finally`: a forward that
        # raises leaves a hook on every submodule of the caller's model.
        Invalid(
            """
class CallCounter:
    def __init__(self, model):
        self.model = model

    def start(self):
        def attach(module):
            module.calls = 0
            module.count_handle = module.register_forward_hook(self._count)

        self.model.apply(attach)

    @staticmethod
    def _count(module, args, output):
        module.calls += 1

    def stop(self):
        def detach(module):
            if hasattr(module, "count_handle"):
                module.count_handle.remove()
                del module.count_handle

        self.model.apply(detach)


def count_calls(model, batch):
    counter = CallCounter(model)
    counter.start()
    model(batch)
    calls = {name: m.calls for name, m in model.named_modules()}
    counter.stop()
    return calls
""",
            expected="""
class CallCounter:
    def __init__(self, model):
        self.model = model

    def start(self):
        def attach(module):
            module.calls = 0
            module.count_handle = module.register_forward_hook(self._count)

        self.model.apply(attach)

    @staticmethod
    def _count(module, args, output):
        module.calls += 1

    def stop(self):
        def detach(module):
            if hasattr(module, "count_handle"):
                module.count_handle.remove()
                del module.count_handle

        self.model.apply(detach)


def count_calls(model, batch):
    counter = CallCounter(model)
    try:
        counter.start()
        model(batch)
        calls = {name: m.calls for name, m in model.named_modules()}
    finally:
        counter.stop()
    return calls
""",
            line=27,
            message="`CallCounter.model` is removed outside `finally`/`with`",
        ),
        # The copy is kept on `self` before the forwards: if one raises, the kept copy
        # keeps the hook.
        Invalid(
            """
import copy

import torch


class Distiller:
    def teacher_gap(self, student, batches):
        teacher = copy.deepcopy(student).eval()
        self.teacher = teacher
        seen = []
        handle = teacher.register_forward_hook(lambda module, args, out: seen.append(out))
        with torch.no_grad():
            for batch in batches:
                teacher(batch)
        handle.remove()
        return [s.mean() for s in seen]
""",
            expected="""
import copy

import torch


class Distiller:
    def teacher_gap(self, student, batches):
        teacher = copy.deepcopy(student).eval()
        self.teacher = teacher
        seen = []
        with teacher.register_forward_hook(lambda module, args, out: seen.append(out)):
            with torch.no_grad():
                for batch in batches:
                    teacher(batch)
        return [s.mean() for s in seen]
""",
            line=11,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # The check of the hooks just put on is made to fail (a name that matches no
        # module), and it runs before the `try`: the hooks stay on the model.
        Invalid(
            """
from contextlib import contextmanager


@contextmanager
def steer(model, vectors, before):
    handles = [
        m.register_forward_pre_hook(vectors[name]) if before else m.register_forward_hook(vectors[name])
        for name, m in model.named_modules()
        if name in vectors
    ]
    assert len(handles) == len(vectors), "a steering vector names no module"
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()
""",
            expected="""
from contextlib import contextmanager


@contextmanager
def steer(model, vectors, before):
    handles = [
        m.register_forward_pre_hook(vectors[name]) if before else m.register_forward_hook(vectors[name])
        for name, m in model.named_modules()
        if name in vectors
    ]
    try:
        assert len(handles) == len(vectors), "a steering vector names no module"
        yield model
    finally:
        for handle in handles:
            handle.remove()
""",
            line=7,
            message="`handles` is removed in `finally`, but its `try` starts after code that can raise",
        ),
        # `Module.apply` runs the marker's own `attach` on every submodule; its handles
        # are the marker's, and a failing forward skips `detach()`.
        Invalid(
            """
import torch.nn as nn


class ReluMarker:
    def __init__(self):
        self.handles = []

    def _mark(self, module, args, output):
        module.last_active = (output > 0).float().mean()

    def attach(self, module):
        if isinstance(module, nn.ReLU):
            self.handles.append(module.register_forward_hook(self._mark))

    def detach(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def activity(model, batch):
    marker = ReluMarker()
    model.apply(marker.attach)
    model(batch)
    marker.detach()
    return {name: m.last_active for name, m in model.named_modules() if hasattr(m, "last_active")}
""",
            expected="""
import torch.nn as nn


class ReluMarker:
    def __init__(self):
        self.handles = []

    def _mark(self, module, args, output):
        module.last_active = (output > 0).float().mean()

    def attach(self, module):
        if isinstance(module, nn.ReLU):
            self.handles.append(module.register_forward_hook(self._mark))

    def detach(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def activity(model, batch):
    marker = ReluMarker()
    try:
        model.apply(marker.attach)
        model(batch)
    finally:
        marker.detach()
    return {name: m.last_active for name, m in model.named_modules() if hasattr(m, "last_active")}
""",
            line=23,
            message="`ReluMarker.handles` is removed outside `finally`/`with`",
        ),
        # The recorder's own teardown is named `remove`, like a handle's: `recorder` is
        # only ever a `FirstInputs`, so its `remove()` is that class's method.
        Invalid(
            """
class FirstInputs:
    def __init__(self):
        self.seen = []
        self._handle = None

    def attach(self, module):
        self._handle = module.register_forward_pre_hook(self._keep)

    def remove(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _keep(self, module, args):
        self.seen.append(args[0].detach().cpu())


def collect(pipe, target, prompts):
    recorder = FirstInputs()
    recorder.attach(target)
    for prompt in prompts:
        pipe(prompt)
    recorder.remove()
    return recorder.seen
""",
            expected="""
class FirstInputs:
    def __init__(self):
        self.seen = []
        self._handle = None

    def attach(self, module):
        self._handle = module.register_forward_pre_hook(self._keep)

    def remove(self):
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _keep(self, module, args):
        self.seen.append(args[0].detach().cpu())


def collect(pipe, target, prompts):
    recorder = FirstInputs()
    try:
        recorder.attach(target)
        for prompt in prompts:
            pipe(prompt)
    finally:
        recorder.remove()
    return recorder.seen
""",
            line=20,
            message="`FirstInputs._handle` is removed outside `finally`/`with`",
        ),
        # Two classes of the file have `attach`/`detach` methods; `self.tracker` is only
        # ever a `RangeTracker`, so its call is that class's.
        Invalid(
            """
from functools import partial


class RangeTracker:
    def __init__(self):
        self._hooks = []
        self.ranges = {}

    def attach(self, model):
        for name, module in model.named_modules():
            self._hooks.append(module.register_forward_hook(partial(self._track, name)))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _track(self, name, module, args, output):
        self.ranges[name] = output.abs().max()


class InputSampler:
    def __init__(self):
        self._hooks = []
        self.samples = []

    def attach(self, model):
        self._hooks.append(model.register_forward_pre_hook(self._keep))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _keep(self, module, args):
        self.samples.append(args[0])


class Calibrator:
    def __init__(self, model):
        self.model = model
        self.tracker = RangeTracker()

    def run(self, batches):
        self.tracker.attach(self.model)
        for batch in batches:
            self.model(batch)
        self.tracker.detach()
""",
            expected="""
from functools import partial


class RangeTracker:
    def __init__(self):
        self._hooks = []
        self.ranges = {}

    def attach(self, model):
        for name, module in model.named_modules():
            self._hooks.append(module.register_forward_hook(partial(self._track, name)))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _track(self, name, module, args, output):
        self.ranges[name] = output.abs().max()


class InputSampler:
    def __init__(self):
        self._hooks = []
        self.samples = []

    def attach(self, model):
        self._hooks.append(model.register_forward_pre_hook(self._keep))

    def detach(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()

    def _keep(self, module, args):
        self.samples.append(args[0])


class Calibrator:
    def __init__(self, model):
        self.model = model
        self.tracker = RangeTracker()

    def run(self, batches):
        try:
            self.tracker.attach(self.model)
            for batch in batches:
                self.model(batch)
        finally:
            self.tracker.detach()
""",
            line=45,
            message="`RangeTracker._hooks` is removed outside `finally`/`with`",
        ),
        # Each branch of one `if`/`elif` registers the hook its case needs into one list,
        # which one loop removes: one bug, one finding.
        Invalid(
            """
from contextlib import contextmanager
from functools import partial


@contextmanager
def watching(model, log):
    hooks = []
    for name, module in model.named_modules():
        if name.endswith("attn"):
            hook = module.register_forward_hook(partial(log_attention, log=log))
            hooks.append(hook)
        elif name.endswith("mlp"):
            hook = module.register_forward_hook(partial(log_mlp, log=log))
            hooks.append(hook)
    yield
    for hook in hooks:
        hook.remove()
""",
            expected="""
from contextlib import contextmanager
from functools import partial


@contextmanager
def watching(model, log):
    hooks = []
    try:
        for name, module in model.named_modules():
            if name.endswith("attn"):
                hook = module.register_forward_hook(partial(log_attention, log=log))
                hooks.append(hook)
            elif name.endswith("mlp"):
                hook = module.register_forward_hook(partial(log_mlp, log=log))
                hooks.append(hook)
        yield
    finally:
        for hook in hooks:
            hook.remove()
""",
            line=10,
            message="(and 1 more registration here)",
        ),
        # A pre-hook and a post-hook list built by two comprehensions into one name.
        Invalid(
            """
from functools import partial


def block_traffic(blocks, model, batches):
    seen = {}
    handles = [b.register_forward_pre_hook(partial(note_input, seen=seen)) for b in blocks]
    handles += [b.register_forward_hook(partial(note_output, seen=seen)) for b in blocks]
    for batch in batches:
        model(batch)
    for handle in handles:
        handle.remove()
    return seen
""",
            line=6,
            message="`handles` is removed outside `finally`/`with`: skipped if the code before it raises (and 1 more",
        ),
        # The hook stops the forward with its own exception, and only that exception's
        # handler removes it: anything else raised (or a forward that never reaches
        # the layer) leaves a hook that stops every later forward.
        Invalid(
            """
class Reached(Exception):
    pass


def input_of(layer, model, batch):
    def stop(module, args):
        raise Reached(args)

    hook = layer.register_forward_pre_hook(stop)
    try:
        model(batch)
    except Reached as found:
        hook.remove()
        return found.args[0]
    return None
""",
            line=9,
            message="`hook` is removed only in `except Reached`: kept if anything else is raised, or nothing is",
        ),
        # Each hook removes only itself, when it fires: a module the forward skips (or every
        # module, when the forward raises first) keeps it, and the list it appends to.
        Invalid(
            """
def first_calls(model, batch):
    order = []

    def watch(module):
        def note(mod, args):
            order.append(type(mod).__name__)
            handle.remove()

        handle = module.register_forward_pre_hook(note)

    for module in model.modules():
        watch(module)
    model(batch)
    return order
""",
            line=9,
            message="`handle` is removed only by its own hook `note`",
        ),
        # A one-shot hook whose handle list the class binds itself: only the hook empties it.
        Invalid(
            """
from .base import Recorder


class FirstInput(Recorder):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.armed = []

    def arm(self, layer):
        def once(module, args):
            self.seen.append(tuple(args[0].shape))
            self.armed.pop().remove()

        self.armed.append(layer.register_forward_pre_hook(once))
""",
            line=15,
            message="`self.armed` is removed only by its own hook `once`",
        ),
        # The same through a helper that returns the one-shot hook's handle; nothing else removes it.
        Invalid(
            """
class FirstShape:
    def __init__(self, layer):
        self.layer = layer
        self.shape = None
        self._handle = self._arm()

    def _arm(self):
        def once(module, args, output):
            self.shape = tuple(output.shape)
            self._handle.remove()

        return self.layer.register_forward_hook(once)
""",
            line=5,
            message="`self._handle` is removed only by its own hook `once`",
        ),
        # Handles a helper returns, bound to a name: the fix leaves the call before
        # `try` (had it raised inside, `finally` would find no `watching` to remove).
        Invalid(
            """
def _watch_all(model, seen):
    return [m.register_forward_hook(lambda mod, i, o: seen.append(o.shape)) for m in model.children()]


def shapes(model, batch):
    seen = []
    watching = _watch_all(model, seen)
    model(batch)
    for handle in watching:
        handle.remove()
    return seen
""",
            expected="""
def _watch_all(model, seen):
    return [m.register_forward_hook(lambda mod, i, o: seen.append(o.shape)) for m in model.children()]


def shapes(model, batch):
    seen = []
    watching = _watch_all(model, seen)
    try:
        model(batch)
    finally:
        for handle in watching:
            handle.remove()
    return seen
""",
            line=7,
            message="`watching` is removed outside `finally`/`with`",
        ),
        # The registration sits in a `try` whose `finally` does other work: the removal
        # after the block is skipped when the forward inside it raises. (No fix: the
        # handle is bound inside the `try`, so the existing `finally` cannot remove it.)
        Invalid(
            """
def probe(model, batch, log):
    try:
        handle = model.register_forward_hook(lambda m, i, o: log.append(o.shape))
        model(batch)
    finally:
        log.append("ran")
    handle.remove()
    return log
""",
            line=3,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # An installer method that keeps each handle through a local name on its way to
        # `self.handles`, run on every submodule by `Module.apply`; the removal helper
        # after the backward is skipped when it raises.
        Invalid(
            """
class GradTrace:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.grads = []

    def _hook_one(self, module):
        handle = module.register_full_backward_hook(self._keep)
        self.handles.append(handle)

    def _keep(self, module, grad_in, grad_out):
        self.grads.append(grad_out[0].norm())

    def _unhook(self):
        for handle in self.handles:
            handle.remove()

    def trace(self, batch):
        self.net.apply(self._hook_one)
        self.net(batch).sum().backward()
        self._unhook()
        return self.grads
""",
            expected="""
class GradTrace:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.grads = []

    def _hook_one(self, module):
        handle = module.register_full_backward_hook(self._keep)
        self.handles.append(handle)

    def _keep(self, module, grad_in, grad_out):
        self.grads.append(grad_out[0].norm())

    def _unhook(self):
        for handle in self.handles:
            handle.remove()

    def trace(self, batch):
        try:
            self.net.apply(self._hook_one)
            self.net(batch).sum().backward()
        finally:
            self._unhook()
        return self.grads
""",
            line=19,
            message="`self.handles` is removed outside `finally`/`with`",
        ),
        # A helper method binds the handle to a local, then to `self.layer_handle`; the
        # caller removes it after the forward, outside `finally`.
        Invalid(
            """
class LayerInputs:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.layer_handle = None
        self.inputs = None

    def _keep_inputs(self, module, args, output):
        self.inputs = args

    def _hook_layer(self, layer):
        handle = layer.register_forward_hook(self._keep_inputs)
        self.layer_handle = handle

    def explain(self, batch):
        self._hook_layer(self.layer)
        output = self.model(batch)
        self.layer_handle.remove()
        return output, self.inputs
""",
            expected="""
class LayerInputs:
    def __init__(self, model, layer):
        self.model = model
        self.layer = layer
        self.layer_handle = None
        self.inputs = None

    def _keep_inputs(self, module, args, output):
        self.inputs = args

    def _hook_layer(self, layer):
        handle = layer.register_forward_hook(self._keep_inputs)
        self.layer_handle = handle

    def explain(self, batch):
        try:
            self._hook_layer(self.layer)
            output = self.model(batch)
        finally:
            self.layer_handle.remove()
        return output, self.inputs
""",
            line=16,
            message="`self.layer_handle` is removed outside `finally`/`with`",
        ),
        # Registration through a method of another object (the file's only `watch`
        # keeps the handle on its own instance), removal through that class's `release`
        # after the forward, outside `finally`.
        Invalid(
            """
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.active = []

    def watch(self, fn):
        self.active.append(self.register_forward_hook(lambda mod, args, out: fn(out)))

    def release(self):
        for handle in self.active:
            handle.remove()
        self.active = []

    def forward(self, x):
        return x


class Probed(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.probes = {"out": Probe()}

    def forward(self, x):
        return self.probes["out"](self.body(x))

    def drop_probes(self):
        for probe in self.probes.values():
            probe.release()

    def run_probed(self, x, watchers):
        for key, fn in watchers:
            self.probes[key].watch(fn)
        out = self(x)
        self.drop_probes()
        return out
""",
            expected="""
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.active = []

    def watch(self, fn):
        self.active.append(self.register_forward_hook(lambda mod, args, out: fn(out)))

    def release(self):
        for handle in self.active:
            handle.remove()
        self.active = []

    def forward(self, x):
        return x


class Probed(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.probes = {"out": Probe()}

    def forward(self, x):
        return self.probes["out"](self.body(x))

    def drop_probes(self):
        for probe in self.probes.values():
            probe.release()

    def run_probed(self, x, watchers):
        try:
            for key, fn in watchers:
                self.probes[key].watch(fn)
            out = self(x)
        finally:
            self.drop_probes()
        return out
""",
            line=36,
            message="`Probe.active` is removed outside `finally`/`with`",
        ),
        # The point wraps each handle in a record of the file before keeping it; the
        # root's own `add` only passes the call on, so `self.points[name].add` is the
        # point's. The records' handles are removed in a loop after the forward.
        Invalid(
            """
from dataclasses import dataclass

from torch import nn


@dataclass
class Entry:
    handle: object
    sticky: bool = False


class Point(nn.Module):
    def __init__(self):
        super().__init__()
        self.entries = []

    def add(self, fn, sticky=False):
        handle = self.register_forward_hook(lambda mod, args, out: fn(out))
        handle = Entry(handle, sticky)
        self.entries.append(handle)

    def clear(self):
        for entry in self.entries:
            entry.handle.remove()
        self.entries = []

    def forward(self, x):
        return x


class Root(nn.Module):
    def __init__(self, points):
        super().__init__()
        self.points = points

    def add(self, name, fn):
        self.points[name].add(fn)

    def forward(self, x):
        return self.points["out"](x)

    def run_with(self, x, fns):
        for name, fn in fns.items():
            self.points[name].add(fn)
        out = self(x)
        for point in self.points.values():
            point.clear()
        return out
""",
            line=44,
            message="`Point.entries` is removed outside `finally`/`with`",
        ),
        # A function builds a recorder, attaches it to every child, runs the model and
        # detaches after it: a raise in the forward leaves the hooks on the model.
        Invalid(
            """
class Recorder:
    def __init__(self):
        self.handles = []
        self.seen = []

    def attach_to(self, module):
        handle = module.register_forward_hook(lambda mod, args, out: self.seen.append(out.shape))
        self.handles.append(handle)

    def detach(self):
        while self.handles:
            self.handles.pop().remove()


def record_shapes(model, batch):
    recorder = Recorder()
    for module in model.children():
        recorder.attach_to(module)
    model(batch)
    recorder.detach()
    return recorder.seen
""",
            expected="""
class Recorder:
    def __init__(self):
        self.handles = []
        self.seen = []

    def attach_to(self, module):
        handle = module.register_forward_hook(lambda mod, args, out: self.seen.append(out.shape))
        self.handles.append(handle)

    def detach(self):
        while self.handles:
            self.handles.pop().remove()


def record_shapes(model, batch):
    recorder = Recorder()
    try:
        for module in model.children():
            recorder.attach_to(module)
        model(batch)
    finally:
        recorder.detach()
    return recorder.seen
""",
            line=18,
            message="`Recorder.handles` is removed outside `finally`/`with`",
        ),
        # A trial forward before the finalizer is set up: if it raises, nothing removes
        # the hook. No fix: the hook is meant to live as long as the planner.
        Invalid(
            """
import weakref


class Planner:
    def install(self, model, batch):
        handle = model.register_forward_pre_hook(self._plan)
        model(batch)
        weakref.finalize(self, handle.remove)

    def _plan(self, module, args):
        pass
""",
            line=6,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # Bookkeeping and then a trial forward: the forward can raise. The registration
        # stays above `try` (a `finally` reached when it raised would find no `handle`).
        Invalid(
            """
class Planner:
    def __init__(self):
        self.handles = []

    def trial(self, model, batch):
        handle = model.register_forward_pre_hook(self._plan)
        self.handles.append(handle)
        model(batch)
        handle.remove()

    def _plan(self, module, args):
        pass
""",
            expected="""
class Planner:
    def __init__(self):
        self.handles = []

    def trial(self, model, batch):
        handle = model.register_forward_pre_hook(self._plan)
        try:
            self.handles.append(handle)
            model(batch)
        finally:
            handle.remove()

    def _plan(self, module, args):
        pass
""",
            line=6,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # A subclass calls the wrapper it inherits from a class of the same file.
        Invalid(
            """
class Probe:
    def _attach(self, module, hook):
        return module.register_forward_hook(hook)


class Tracer(Probe):
    def run(self, module, hook, batch):
        handle = self._attach(module, hook)
        module(batch)
        handle.remove()
""",
            expected="""
class Probe:
    def _attach(self, module, hook):
        return module.register_forward_hook(hook)


class Tracer(Probe):
    def run(self, module, hook, batch):
        with self._attach(module, hook):
            module(batch)
""",
            line=8,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # A removal just after a `finally` block is not covered by it.
        Invalid(
            """
def profile(model, layer, x, log):
    handle = layer.register_forward_pre_hook(log.note)
    try:
        out = model(x)
    finally:
        log.flush()
    handle.remove()
    return out
""",
            expected="""
def profile(model, layer, x, log):
    with layer.register_forward_pre_hook(log.note):
        try:
            out = model(x)
        finally:
            log.flush()
    return out
""",
        ),
        # A @contextmanager whose handles are bound, then appended: removed after a bare yield.
        Invalid(
            """
from contextlib import contextmanager

@contextmanager
def scale_outputs(model, factor):
    handles = []
    for layer in model.children():
        handle = layer.register_forward_hook(lambda m, i, o: o * factor)
        handles.append(handle)
    yield
    for handle in handles:
        handle.remove()
""",
            expected="""
from contextlib import contextmanager

@contextmanager
def scale_outputs(model, factor):
    handles = []
    try:
        for layer in model.children():
            handle = layer.register_forward_hook(lambda m, i, o: o * factor)
            handles.append(handle)
        yield
    finally:
        for handle in handles:
            handle.remove()
""",
            line=7,
            message="`handles` is removed after `yield`",
        ),
        # Handles collected by `set(generator)`, removed by a helper after a loop that can raise.
        Invalid(
            """
def remove_all(handles):
    for h in handles:
        h.remove()

def count_calls(model, loader, counts):
    hooks = set(m.register_forward_pre_hook(lambda mod, args: counts.update([id(mod)])) for m in model.modules())
    for batch in loader:
        model(batch)
    remove_all(hooks)
""",
            expected="""
def remove_all(handles):
    for h in handles:
        h.remove()

def count_calls(model, loader, counts):
    hooks = set(m.register_forward_pre_hook(lambda mod, args: counts.update([id(mod)])) for m in model.modules())
    try:
        for batch in loader:
            model(batch)
    finally:
        remove_all(hooks)
""",
            line=6,
        ),
        # A dict of (recorder, handle) tuples, each popped and removed after the run (no fix:
        # the removal loop does more than remove).
        Invalid(
            """
def probe_layers(model, names, run):
    probes = {}
    for name in names:
        recorder = Recorder(name)
        handle = model.get_submodule(name).register_forward_hook(recorder)
        probes[name] = (recorder, handle)
    run(model)
    for name in list(probes):
        recorder, handle = probes.pop(name)
        handle.remove()
""",
            line=5,
            message="`probes` is removed outside",
        ),
        # The removal sits in the same `if` as the run that can raise.
        Invalid(
            """
def warm_start(model, layers, batch, stats):
    taps = []
    for layer in layers:
        taps.append(layer.register_forward_hook(stats.observe))
    if taps:
        model(batch)
        for tap in taps:
            tap.remove()
""",
            line=4,
        ),
        # One bug, one finding: the same hook put into one store twice per block.
        Invalid(
            """
def trace_shapes(model, example):
    taps = []
    for block in model.blocks:
        tap = block.attn.register_forward_hook(log_shape)
        taps.append(tap)
        tap = block.mlp.register_forward_hook(log_shape)
        taps.append(tap)
    model(example)
    for tap in taps:
        tap.remove()
""",
            expected="""
def trace_shapes(model, example):
    taps = []
    try:
        for block in model.blocks:
            tap = block.attn.register_forward_hook(log_shape)
            taps.append(tap)
            tap = block.mlp.register_forward_hook(log_shape)
            taps.append(tap)
        model(example)
    finally:
        for tap in taps:
            tap.remove()
""",
            line=4,
            message="(and 1 more registration here)",
        ),
        # An attribution method: hook, run, unhook.
        Invalid(
            """
def layer_activations(model, layer, inputs):
    saved = []
    handle = layer.register_forward_hook(lambda m, i, o: saved.append(o.detach()))
    model(inputs)
    handle.remove()
    return saved[0]
""",
            expected="""
def layer_activations(model, layer, inputs):
    saved = []
    with layer.register_forward_hook(lambda m, i, o: saved.append(o.detach())):
        model(inputs)
    return saved[0]
""",
            line=3,
            message="`handle` is removed outside `finally`/`with`",
        ),
        # Handles collected in a loop and removed by a loop: try/finally.
        Invalid(
            """
from functools import partial

def record_shape(summary, name, module, inputs, output):
    summary[name] = tuple(output.shape)

def model_summary(model, example):
    summary = {}
    hooks = []
    for name, module in model.named_modules():
        hooks.append(module.register_forward_hook(partial(record_shape, summary, name)))
    model(example)
    # drop the hooks again
    for h in hooks:
        h.remove()
    return summary
""",
            expected="""
from functools import partial

def record_shape(summary, name, module, inputs, output):
    summary[name] = tuple(output.shape)

def model_summary(model, example):
    summary = {}
    hooks = []
    try:
        for name, module in model.named_modules():
            hooks.append(module.register_forward_hook(partial(record_shape, summary, name)))
        model(example)
    finally:
        # drop the hooks again
        for h in hooks:
            h.remove()
    return summary
""",
            line=10,
        ),
        # A @contextmanager whose removal follows a bare yield.
        Invalid(
            """
from contextlib import contextmanager

@contextmanager
def record_inputs(module, sink):
    handle = module.register_forward_pre_hook(lambda m, args: sink.append(args[0].detach()))
    yield sink
    handle.remove()
""",
            expected="""
from contextlib import contextmanager

@contextmanager
def record_inputs(module, sink):
    handle = module.register_forward_pre_hook(lambda m, args: sink.append(args[0].detach()))
    try:
        yield sink
    finally:
        handle.remove()
""",
            line=5,
            message="after `yield`",
        ),
        # The handle is kept on the object (used elsewhere): try/finally, in a calibration loop.
        Invalid(
            """
class Calibrator:
    def run(self, layer, loader):
        self.handle = layer.register_forward_hook(self.observe)
        for batch in loader:
            layer(batch)
        self.handle.remove()
""",
            expected="""
class Calibrator:
    def run(self, layer, loader):
        self.handle = layer.register_forward_hook(self.observe)
        try:
            for batch in loader:
                layer(batch)
        finally:
            self.handle.remove()
""",
            line=3,
        ),
        # Removed through a helper that takes the handle list.
        Invalid(
            """
def remove_hooks(handles):
    for h in handles:
        h.remove()

def collect_grads(model, loss_fn, batch):
    grads = {}
    handles = []
    for name, p in model.named_parameters():
        handles.append(p.register_hook(lambda g, name=name: grads.__setitem__(name, g)))
    loss_fn(model(batch)).backward()
    remove_hooks(handles)
    return grads
""",
            expected="""
def remove_hooks(handles):
    for h in handles:
        h.remove()

def collect_grads(model, loss_fn, batch):
    grads = {}
    handles = []
    try:
        for name, p in model.named_parameters():
            handles.append(p.register_hook(lambda g, name=name: grads.__setitem__(name, g)))
        loss_fn(model(batch)).backward()
    finally:
        remove_hooks(handles)
    return grads
""",
            line=9,
        ),
        # A `continue` of a loop on the way down falls through to the removal after it.
        Invalid(
            """
def trace(model, layers, x, show, note):
    handles = []
    for layer in layers:
        if layer.training:
            handles.append(layer.register_forward_hook(show))
            continue
        handles.append(layer.register_forward_pre_hook(note))
    model(x)
    for h in handles:
        h.remove()
""",
            expected="""
def trace(model, layers, x, show, note):
    handles = []
    try:
        for layer in layers:
            if layer.training:
                handles.append(layer.register_forward_hook(show))
                continue
            handles.append(layer.register_forward_pre_hook(note))
        model(x)
    finally:
        for h in handles:
            h.remove()
""",
            line=5,
            message="`handles` is removed outside `finally`/`with`",
        ),
        # The same summary tool, removing after the forward: a forward that raises
        # leaves every hook the nested def put into the list.
        Invalid(
            """
def layer_table(model, x):
    rows = []
    hooks = []

    def attach(module):
        hooks.append(module.register_forward_hook(lambda m, i, o: rows.append(o.shape)))

    model.apply(attach)
    model(x)
    for h in hooks:
        h.remove()
    return rows
""",
            expected="""
def layer_table(model, x):
    rows = []
    hooks = []

    def attach(module):
        hooks.append(module.register_forward_hook(lambda m, i, o: rows.append(o.shape)))

    try:
        model.apply(attach)
        model(x)
    finally:
        for h in hooks:
            h.remove()
    return rows
""",
            line=6,
            message="`hooks` is removed outside `finally`/`with`",
        ),
        # The method version: whatever the installer is called, what it does counts (its
        # body keeps the handles on the instance); a forward that raises skips the
        # removal helper and leaves every hook `apply` installed.
        Invalid(
            """
class LayerTimes:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.seen = []

    def _attach(self, module):
        self.handles.append(module.register_forward_hook(self._note))

    def _note(self, module, args, output):
        self.seen.append(type(module).__name__)

    def _detach_all(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()

    def measure(self, batch):
        self.net.apply(self._attach)
        self.net(batch)
        self._detach_all()
        return self.seen
""",
            expected="""
class LayerTimes:
    def __init__(self, net):
        self.net = net
        self.handles = []
        self.seen = []

    def _attach(self, module):
        self.handles.append(module.register_forward_hook(self._note))

    def _note(self, module, args, output):
        self.seen.append(type(module).__name__)

    def _detach_all(self):
        for h in self.handles:
            h.remove()
        self.handles.clear()

    def measure(self, batch):
        try:
            self.net.apply(self._attach)
            self.net(batch)
        finally:
            self._detach_all()
        return self.seen
""",
            line=19,
            message="`self.handles` is removed outside `finally`/`with`",
        ),
        # The handle is removed under another name. The fix keeps the registration and
        # the alias above `try` (the alias cannot raise): dropping `tap = ...` for a
        # `with` would leave `current` bound to a name that no longer exists.
        Invalid(
            """
def sample_activations(layer, model, batch, store):
    tap = layer.register_forward_hook(lambda mod, args, out: store.append(out.detach()))
    current = tap
    model(batch)
    current.remove()
""",
            """
def sample_activations(layer, model, batch, store):
    tap = layer.register_forward_hook(lambda mod, args, out: store.append(out.detach()))
    current = tap
    try:
        model(batch)
    finally:
        current.remove()
""",
            line=2,
        ),
        # The list the removal reads is made after a call that can raise: no `try` can
        # start early enough to cover that call and late enough to find the list bound,
        # so no fix is offered (the finding stands).
        Invalid(
            """
def profile_block(block, batch, timer):
    handle = block.register_forward_pre_hook(timer.start)
    timer.reset()
    live = [handle]
    block(batch)
    live[0].remove()
""",
            None,
            line=2,
        ),
        # The helper returns its handles beside the store its hooks fill; the caller
        # unpacks the pair.
        Invalid(
            """
def _watch(model):
    handles, sizes = [], {}
    for name, layer in model.named_modules():
        handles.append(layer.register_forward_hook(lambda m, a, o, n=name: sizes.update({n: o.numel()})))
    return handles, sizes


def output_sizes(model, batch):
    handles, sizes = _watch(model)
    model(batch)
    for handle in handles:
        handle.remove()
    return sizes
""",
            expected="""
def _watch(model):
    handles, sizes = [], {}
    for name, layer in model.named_modules():
        handles.append(layer.register_forward_hook(lambda m, a, o, n=name: sizes.update({n: o.numel()})))
    return handles, sizes


def output_sizes(model, batch):
    handles, sizes = _watch(model)
    try:
        model(batch)
    finally:
        for handle in handles:
            handle.remove()
    return sizes
""",
            line=9,
            message="`handles` is removed outside",
        ),
        # An inner walker, recursive, fills the helper's list; the helper returns it.
        Invalid(
            """
def _hook_tree(model, note):
    found = []

    def visit(module, path):
        found.append(module.register_forward_pre_hook(lambda m, a: note(path)))
        for name, child in module.named_children():
            visit(child, f"{path}.{name}")

    visit(model, "root")
    return found


def visit_order(model, batch):
    order = []
    hooks = _hook_tree(model, order.append)
    model(batch)
    for hook in hooks:
        hook.remove()
    return order
""",
            expected="""
def _hook_tree(model, note):
    found = []

    def visit(module, path):
        found.append(module.register_forward_pre_hook(lambda m, a: note(path)))
        for name, child in module.named_children():
            visit(child, f"{path}.{name}")

    visit(model, "root")
    return found


def visit_order(model, batch):
    order = []
    hooks = _hook_tree(model, order.append)
    try:
        model(batch)
    finally:
        for hook in hooks:
            hook.remove()
    return order
""",
            line=15,
            message="`hooks` is removed outside",
        ),
        # The constructor installs its hooks, then checks an argument and raises: the
        # caller never gets the object whose `remove` would take them off.
        Invalid(
            """
class Saliency:
    def __init__(self, layer, smoothing):
        self.handles = [layer.register_forward_hook(self._keep)]
        if smoothing <= 0:
            raise ValueError("smoothing must be positive")
        self.smoothing = smoothing

    def _keep(self, module, inputs, output):
        self.activation = output

    def remove(self):
        for handle in self.handles:
            handle.remove()
""",
            line=3,
            message="`__init__` keeps hooks in `self.handles`, then may `raise`",
        ),
        # The same through the base class's constructor, called with `super()`.
        Invalid(
            """
class _Probe:
    def __init__(self, layer):
        self.handles = []
        self.handles.append(layer.register_forward_hook(self._keep))

    def _keep(self, module, inputs, output):
        self.activation = output

    def remove(self):
        for handle in self.handles:
            handle.remove()


class HeadProbe(_Probe):
    def __init__(self, layer, head=None):
        super().__init__(layer)
        assert head is not None, "a classifier head is needed"
        self.head = head
""",
            line=16,
            message="then may `assert`",
        ),
        # A pre-hook and a post-hook in one list, removed by one loop: one finding.
        Invalid(
            """
def layer_times(model, batch, clock):
    starts, spans, handles = {}, {}, []
    for name, layer in model.named_modules():
        handles.append(layer.register_forward_pre_hook(lambda m, a, n=name: starts.update({n: clock()})))
        handles.append(layer.register_forward_hook(lambda m, a, o, n=name: spans.update({n: clock() - starts[n]})))
    model(batch)
    for handle in handles:
        handle.remove()
    return spans
""",
            expected="""
def layer_times(model, batch, clock):
    starts, spans, handles = {}, {}, []
    try:
        for name, layer in model.named_modules():
            handles.append(layer.register_forward_pre_hook(lambda m, a, n=name: starts.update({n: clock()})))
            handles.append(layer.register_forward_hook(lambda m, a, o, n=name: spans.update({n: clock() - starts[n]})))
        model(batch)
    finally:
        for handle in handles:
            handle.remove()
    return spans
""",
            line=4,
            message="(and 1 more registration here)",
        ),
        # A pair of helpers over one object: `attach` keeps the handle on the module it is
        # given, `detach` removes it; the caller runs the steps between them unprotected.
        Invalid(
            """
def attach(module):
    module._score_handle = module.register_full_backward_hook(_accumulate)


def detach(module):
    module._score_handle.remove()


def estimate_scores(model, modules, step, batches):
    for module in modules:
        attach(module)
    for batch in batches:
        step(model, batch)
    for module in modules:
        detach(module)


def _accumulate(module, grad_input, grad_output):
    module.score += grad_output[0].abs().sum()
""",
            line=11,
            message="`module._score_handle` is removed outside `finally`/`with`",
        ),
        # An object whose constructor keeps the hooks it registers and whose `cleanup`
        # removes them: building it acquires them, and the forwards run unprotected.
        Invalid(
            """
class ScoreRegistry:
    def __init__(self, model):
        self.handles = []
        self.scores = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._score(name)))

    def _score(self, name):
        def hook(module, args, output):
            self.scores[name] = output.abs().mean().item()

        return hook

    def cleanup(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def rank_layers(model, batches):
    registry = ScoreRegistry(model)
    for batch in batches:
        model(batch)
    ranking = sorted(registry.scores, key=registry.scores.get)
    registry.cleanup()
    return ranking
""",
            expected="""
class ScoreRegistry:
    def __init__(self, model):
        self.handles = []
        self.scores = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._score(name)))

    def _score(self, name):
        def hook(module, args, output):
            self.scores[name] = output.abs().mean().item()

        return hook

    def cleanup(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


def rank_layers(model, batches):
    registry = ScoreRegistry(model)
    try:
        for batch in batches:
            model(batch)
        ranking = sorted(registry.scores, key=registry.scores.get)
    finally:
        registry.cleanup()
    return ranking
""",
            line=21,
            message="`ScoreRegistry.handles` is removed outside `finally`/`with`",
        ),
        # The `finally` removes the hooks, but the input is prepared between the
        # registration and the `try`: a bad batch leaves the hooks on the model.  The fix
        # starts the `try` there (the `finally` is reused, nothing else is re-indented).
        Invalid(
            """
def layer_widths(model, batch):
    widths = {}
    handles = [layer.register_forward_hook(_width_hook(widths)) for layer in model.children()]
    inputs = batch.to(next(model.parameters()).device)
    try:
        model(inputs)
    finally:
        for handle in handles:
            handle.remove()
    return widths
""",
            expected="""
def layer_widths(model, batch):
    widths = {}
    handles = [layer.register_forward_hook(_width_hook(widths)) for layer in model.children()]
    try:
        inputs = batch.to(next(model.parameters()).device)
        model(inputs)
    finally:
        for handle in handles:
            handle.remove()
    return widths
""",
            line=3,
            message="removed in `finally`, but its `try` starts after code that can raise",
        ),
        # The statement before the `try` binds what `finally` reads: moving it into the
        # `try` would leave the name unbound there, so there is no fix.
        Invalid(
            """
def probe(model, batch, hook, device):
    handle = model.register_forward_hook(hook)
    moved = batch.to(device)
    try:
        return model(moved)
    finally:
        handle.remove()
        log.debug("probed %s", tuple(moved.shape))
""",
            expected=None,
            line=2,
        ),
        # Handles made by `map` over a lambda are collected like a comprehension's.
        Invalid(
            """
def train_scaled(model, batches, scale):
    hooks = list(map(lambda p: p.register_hook(lambda g: g * scale), model.parameters()))
    for batch in batches:
        model(batch).sum().backward()
    for hook in hooks:
        hook.remove()
""",
            expected="""
def train_scaled(model, batches, scale):
    hooks = list(map(lambda p: p.register_hook(lambda g: g * scale), model.parameters()))
    try:
        for batch in batches:
            model(batch).sum().backward()
    finally:
        for hook in hooks:
            hook.remove()
""",
            line=2,
        ),
        # A helper puts the handles into the list its caller passes (walking the tree
        # itself); the caller runs the model before removing them.
        Invalid(
            """
def hook_tree(module, record, handles):
    handles.append(module.register_forward_hook(record))
    for child in module.children():
        hook_tree(child, record, handles)


def trace(model, batch, record):
    handles = []
    hook_tree(model, record, handles)
    model(batch)
    for handle in handles:
        handle.remove()
""",
            expected="""
def hook_tree(module, record, handles):
    handles.append(module.register_forward_hook(record))
    for child in module.children():
        hook_tree(child, record, handles)


def trace(model, batch, record):
    handles = []
    try:
        hook_tree(model, record, handles)
        model(batch)
    finally:
        for handle in handles:
            handle.remove()
""",
            line=9,
            message="`handles` is removed outside `finally`/`with`",
        ),
        # A handler would catch what the moved statement raises: no fix either.
        Invalid(
            """
def first_activation(model, batch, hook):
    handles = [model.register_forward_hook(hook)]
    batch = batch.cuda()
    try:
        model(batch)
    except StopForward:
        pass
    finally:
        for handle in handles:
            handle.remove()
""",
            expected=None,
            line=2,
        ),
        # The same pair called as plain functions, the stop after the forward: a forward
        # that raises leaves a counting hook on every submodule of the user's model.
        Invalid(
            """
def tally(module, inputs, output):
    module.__calls__ += 1


def install(module):
    handle = module.register_forward_hook(tally)
    module.__tally_handle__ = handle


def uninstall(module):
    if hasattr(module, "__tally_handle__"):
        module.__tally_handle__.remove()
        del module.__tally_handle__


def begin_tally(self):
    self.apply(install)


def end_tally(self):
    self.apply(uninstall)


def count_calls(model, batch):
    begin_tally(model)
    model(batch)
    end_tally(model)
""",
            expected="""
def tally(module, inputs, output):
    module.__calls__ += 1


def install(module):
    handle = module.register_forward_hook(tally)
    module.__tally_handle__ = handle


def uninstall(module):
    if hasattr(module, "__tally_handle__"):
        module.__tally_handle__.remove()
        del module.__tally_handle__


def begin_tally(self):
    self.apply(install)


def end_tally(self):
    self.apply(uninstall)


def count_calls(model, batch):
    try:
        begin_tally(model)
        model(batch)
    finally:
        end_tally(model)
""",
            line=25,
            message="`model.__tally_handle__` is removed outside `finally`/`with`",
        ),
        # The failure path's removal is a handler for everything, but the input is
        # built between the hooks going on and the `try`: a bad input raises there.
        Invalid(
            """
def profile(model, make_input, size, hook):
    handles = [m.register_forward_hook(hook) for m in model.modules()]
    batch = make_input(size)
    try:
        model(batch)
    except Exception:
        for handle in handles:
            handle.remove()
        return None
    for handle in handles:
        handle.remove()
    return size
""",
            expected=None,
            line=2,
            message="`handles` is removed when its `try` fails, but the `try` starts after code that can raise",
        ),
        # The walker binds each handle to a name before putting it into the caller's list.
        Invalid(
            """
def hook_tree(module, record, handles):
    handle = module.register_forward_hook(record)
    handles.append(handle)
    for child in module.children():
        hook_tree(child, record, handles)


def trace(model, batch, record):
    handles = []
    hook_tree(model, record, handles)
    model(batch)
    for handle in handles:
        handle.remove()
""",
            expected="""
def hook_tree(module, record, handles):
    handle = module.register_forward_hook(record)
    handles.append(handle)
    for child in module.children():
        hook_tree(child, record, handles)


def trace(model, batch, record):
    handles = []
    try:
        hook_tree(model, record, handles)
        model(batch)
    finally:
        for handle in handles:
            handle.remove()
""",
            line=10,
            message="`handles` is removed outside `finally`/`with`",
        ),
        # A loop that hooks one named layer per pass and rejects an unknown name: the
        # layers before a bad name are already hooked when the constructor raises.
        Invalid(
            """
class LayerTaps:
    def __init__(self, model, names):
        self.handles = []
        self.seen = {}
        layers = dict(model.named_modules())
        for name in names:
            if name not in layers:
                raise KeyError(name)
            self.handles.append(layers[name].register_forward_hook(self.tap))

    def tap(self, module, inputs, output):
        self.seen[module] = output.shape

    def close(self):
        for handle in self.handles:
            handle.remove()
""",
            expected=None,
            line=9,
            message="`__init__` keeps hooks in `self.handles`, then may `raise`",
        ),
        # A finalizer does not help when the hooks hold the object (a closure over
        # `self`): the model keeps the hooks, the hooks keep the object, so `__del__`
        # never runs after a failed forward.
        Invalid(
            """
class NormLog:
    def __init__(self, model):
        self.handles = []
        self.norms = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._record(name)))

    def _record(self, name):
        def hook(module, args, output):
            self.norms[name] = output.norm().item()

        return hook

    def __del__(self):
        self.close()

    def close(self):
        for handle in self.handles:
            handle.remove()


def layer_norms(model, batch):
    log = NormLog(model)
    model(batch)
    norms = dict(log.norms)
    log.close()
    return norms
""",
            expected="""
class NormLog:
    def __init__(self, model):
        self.handles = []
        self.norms = {}
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._record(name)))

    def _record(self, name):
        def hook(module, args, output):
            self.norms[name] = output.norm().item()

        return hook

    def __del__(self):
        self.close()

    def close(self):
        for handle in self.handles:
            handle.remove()


def layer_norms(model, batch):
    log = NormLog(model)
    try:
        model(batch)
        norms = dict(log.norms)
    finally:
        log.close()
    return norms
""",
            line=23,
            message="`NormLog.handles` is removed outside `finally`/`with`",
        ),
    ]
