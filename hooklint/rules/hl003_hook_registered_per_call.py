"""HL003 hook-registered-per-call."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from hooklint.analysis.facts import Frame, FunctionInfo, ModuleFacts, Registration
from hooklint.analysis.guards import breaks_after, install_once, pins_loop_value
from hooklint.analysis.handles import handle_model
from hooklint.analysis.lifecycles import GrowingStore, growing_stores
from hooklint.analysis.lifetime import (
    container_of,
    names_in,
    registration_statement_alone,
    same_function,
    statement_path,
    statement_site,
    stored_in,
    word_count,
)
from hooklint.analysis.measuring import MeasuringHook, measuring_hook
from hooklint.analysis.passes import (
    argument_names,
    call_arguments,
    dropped_per_pass,
    hook_per_part,
    is_statement_loop,
    kept_handle,
    loop_body_code,
    per_call_name,
    rebound_per_pass,
    removed_in_pass,
    runs_per_call,
    varying_in_call,
    varying_in_loop,
)
from hooklint.analysis.unclosed import UnclosedObject, unclosed_objects
from hooklint.analysis.vocabulary import BACKWARD_KINDS, DIFFERENTIATING_CALLS
from hooklint.fixes.lifetime import with_over_rest_of_block
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

if TYPE_CHECKING:
    import libcst as cst


#: Hooks that run during a backward pass (after the forward that registers them returns).
def _differentiates_after(facts: ModuleFacts, registration: Registration) -> bool:
    """A statement after the registration, in its block, runs a backward pass
    (``loss.backward()``, ``torch.autograd.grad(...)``): a ``with`` around them keeps the
    hook for the backward it is for."""
    path = statement_path(facts, statement_site(registration.site))
    if not path:
        return False
    rest = "".join(facts.code(s) for s in path[-1].block[path[-1].index + 1 :])
    return ".backward(" in rest or any(f"{name}(" in rest for name in DIFFERENTIATING_CALLS)


class HookRegisteredPerCall(Rule):
    """A hook is registered on every call or loop iteration, and its handle is not removed there.

    ## What it does
    Finds a registration that runs once per call of something that runs many times:
    inside `forward()` or `__call__`, inside `generate`, `step` or a `*_step` method,
    inside the body of another hook, or inside a `for`/`while` loop, when the object
    it hooks is the same on every pass (a parameter, `self`, a submodule) and the
    handle is not removed in that same scope (a `register_hook()` called with no
    argument is some object's own method, not torch's, which takes the hook). It also finds a handle assigned to one
    name or attribute on every iteration of a loop, so that all but the last handle
    are lost; and a method that starts its `self.*` handle store anew (`self.hooks =
    []`) without removing what it held, run by a loop of its class (directly or a few
    same-class calls up) that does not remove the store in the loop. And a setup that
    runs again and again (`__enter__`, or `attach` of an `attach`/`detach` pair: a
    `with tap:` per batch) appending its handles to a `self` list that the teardown
    removes but nothing but the constructor empties or rebinds (`clear()`, `pop()`,
    `self.handles = []`): the list, and the time each teardown takes, grows with
    every run. The setup must run again on one object: `__enter__` (unless each
    `with` of the file enters a new object: `with Tap(model):`, or `with
    self.tap(layer):` where `tap` returns `Tap(...)` and only `with` calls it), or a setup that a
    per-call function, a loop or a public method of the class runs (not one that
    only the constructor runs, once per object). And a function that builds objects
    of a same-file class whose constructor hooks the module it is given and keeps the
    handle for a method that removes it (`close()`), on modules its own caller passed
    in, and neither calls that method on them (also in a loop or a nested cleanup
    function) nor hands them on (returns or yields them, keeps them on `self` or on an
    object it was given, passes them to a call): each call of the function leaves one
    more hook on each of those modules. And a function that hooks a module its caller
    handed in with a hook object it makes in that call (`counter = Counter()`; a class
    of the file or a CapWords name), drops the handle, and then reads what the object
    recorded (`counter.calls`): the hook served that one call, and each call leaves
    one more on the caller's module (not when the function hands the object on:
    returns it, stores it, passes it to another call). And a function that hooks the
    caller's model (or its modules) with a hook it makes in that call (a factory's
    closure, `partial`, a lambda, a nested def), drops the handle and then runs that
    model (`model(batch)`), with no call after it whose name says it takes hooks off
    (`remove`, `clear`, `strip`...): the hooks served that run, and each call leaves
    one more set on the model.

    A registration that the pass then leaves its loop after (`if name == wanted: h =
    m.register_forward_hook(f); break`) runs once per run of the loop: not flagged.
    A registration on something new on every pass is fine: the loop variable of
    `for module in model.modules()`, the item a `while` loop takes off its work list
    (`node = queue.pop()`: a graph walk), a tensor the loop's body computes before
    hooking it (`loss = model(batch).mean()`, also unpacked from a module's call on the
    pass's values, `h, c = self.cell(x.flatten(1), state)`), a function argument of `forward`, a tensor
    created in the call (an activation, also kept on `self` just before it is hooked:
    `self.out = self.proj(x)`; also one a method of the class returns that
    it computes in its call, `spike = self.fire()`; not one that returns `self.weight`),
    since the hook dies with it (but not its
    handle: a hook that appends it to the `self` list keeping the hook's own handle, which
    only the teardown empties, grows that list on every call: flagged). So is an
    install-once registration (guarded by a flag or an attribute that is tested
    first; not one the function sets anew before it tests it, from a value that does
    not read it: that is this call's state, not "already installed"), and handles kept in a list that is removed in the same function, unless
    the loop binds the name to a new list on every pass (`hooks = [reg(m) for m in
    ms]` inside the loop): a removal after the loop reaches the last list only.
    A method that hooks a module its object was given (`self.net`, its submodules),
    drops the handles and has no install-once guard, and that a loop in another method
    of the class runs (directly or through up to three methods: one call per batch) is
    flagged too: each pass adds one more hook to the same modules (not when the
    method's parameters choose the hook or the modules, nor from `__init__`).
    Also not flagged: a different hook on every iteration of a loop
    (`for fn in hooks: m.register_forward_hook(fn)`), also a loop over the hooked
    module's own parts that writes a hook naming each part (`for name, p in
    m.named_parameters(): def check(mod, args, out, name=name): ...`: one hook per part,
    once per setup), or a registration in a loop under
    an `if` that tests the loop variable for one literal value (`for name in names:
    if name == "pooled": self.pool.register_forward_hook(...)`: it runs on the pass
    for that name, not on every pass); in a function that runs once per
    call only the receiver of a module hook decides, so a fresh `partial` or lambda on
    each call to the same submodule is flagged, and a removal of an earlier list (bound anew before the
    registration) does not count. Nor is a per-call lifecycle
    whose handle another function of the file removes on each call (registered in a
    pre-hook, removed in a backward hook through the same attribute, or in a method
    such a hook calls, two calls deep). A handle that only a teardown removes
    (`__exit__`, `close`: functions that run once, when the work is done) is
    flagged: until then each call adds one more hook to the same module. A tensor hook that an
    `autograd.Function.forward` puts on an argument that every same-file
    `Cls.apply(...)` fills with a module's parameter (`self.weight`) is on a
    parameter: flagged here, not as HL002's capture. One reason in one function is
    one finding; the message counts the other registrations like it.

    ## Why is this bad?
    Every pass adds one more hook and none goes away: the hook count, the memory the
    hooks capture and the time per step grow without bound. The worst case is
    `Tensor.register_hook` on a parameter in a training loop: the parameter lives
    forever, so after k steps k hooks run, and a hook that halves the gradient
    yields 0.5, 0.25, 0.125... times the gradient: silently wrong training.

    ## Example
    ```python
    for batch in loader:
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp(-1, 1))
        loss_fn(model(batch)).backward()
    ```

    ## Use instead
    ```python
    for p in model.parameters():
        p.register_hook(lambda g: g.clamp(-1, 1))
    for batch in loader:
        loss_fn(model(batch)).backward()
    ```
    or, when the hook is meant for one pass only, remove it in that pass:
    `with module.register_forward_hook(fn): ...`.

    ## Fix safety
    Unsafe. When the handle is dropped (or bound to a name used nowhere else) and
    statements follow the registration in its block, the fix wraps those
    statements in `with register(...):`, so the hook is removed at the end of the
    pass. That changes the hook's lifetime: if later code relied on the hook
    staying, it no longer fires. A hook that runs during backward (a tensor hook, a
    backward hook) gets the fix only when those statements run the backward
    (`loss.backward()`, `torch.autograd.grad(...)`): put on in `forward`, it would be
    gone before its backward. Otherwise no fix is offered: hoist the
    registration out of the loop, or keep the handle and remove it.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    3 findings, none labelled for this rule. DeepSpeed's transformer
    `autograd.Function` registers tensor hooks on the layer's parameters in every
    `forward`, on a path its code marks "for testing only" (labelled debatable for
    HL002: real, but tests call it once). Captum's DeepLift and GuidedBackprop extend
    their handle lists on every `attribute()` call and never empty them (checked:
    4 more handles per call on a small model); true by our reading. On two held-out
    sets of 30 libraries each (`notes/heldout12.md`, `notes/heldout13.md`): 3
    findings, all debatable (a handle list rebound per match whose hooks are meant
    to stay; a vendored DeepLift its library builds anew per call).
    """

    code = "HL003"
    name = "hook-registered-per-call"
    fix_applicability = "unsafe"

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        hook_bodies = {
            id(r.hook.node): r for r in facts.registrations if r.hook is not None and r.hook.via != "lambda"
        }
        # One bug, one finding: the same reason in one function is reported at its first site.
        groups: dict[tuple, list] = {}

        def group(function: cst.FunctionDef | None, finding: Finding) -> None:
            # A fix mends one site only: findings with a fix stay one per site.
            key = (id(function), finding.message, id(finding) if finding.fix_edits else 0)
            if key in groups:
                groups[key][1] += 1
            else:
                groups[key] = [finding, 0]

        for unclosed in unclosed_objects(facts):
            group(unclosed.function.node, self._unclosed(unclosed))
        growing = {id(g.registration.call): g for g in growing_stores(facts)}
        for registration in facts.registrations:
            finding = (
                self._check(facts, registration, hook_bodies)
                or self._rebound(facts, registration)
                or self._dropped(facts, registration)
                or self._grows(growing.get(id(registration.call)))
                or self._measuring(measuring_hook(facts, registration))
            )
            if finding is not None:
                group(registration.site.function, finding)
        for finding, others in groups.values():
            if others:
                more = "registration" if others == 1 else "registrations"
                finding = dataclasses.replace(
                    finding, message=f"{finding.message} ({others} more {more} like it here)"
                )
            yield finding

    def _check(self, facts: ModuleFacts, registration: Registration, hook_bodies) -> Finding | None:
        if registration.api.is_global or registration.api.owner == "autograd_graph":
            return None  # process-wide hooks: HL009
        use = registration.handle
        if use.final.role in (
            "with",
            "exit_stack",
            "returned",
            "yielded",
            "argument",
            "other",
        ):
            return None
        site = registration.site
        receiver_names = names_in(registration.receiver)
        function = site.function
        # 1. a loop whose passes all hook the same object
        for frame in site.loops:
            # The pass that registers, then leaves the loop, runs once per run of it
            # (``breaks_after``, asked last: only of what would be reported).
            varying = varying_in_loop(facts, frame)
            if receiver_names & varying or (
                registration.api.owner == "tensor"
                and handle_model(facts).on_tensor_made_just_before(registration, frame.node)
            ):
                lost = self._lost_handles(facts, registration, frame, varying)
                if lost is not None and not breaks_after(facts, site, frame):
                    return lost
                continue
            if argument_names(registration) & varying:
                continue  # a different hook on each pass (``for fn in hooks: m.register_forward_hook(fn)``)
            if hook_per_part(facts, registration, frame):
                continue  # a hook of its own for each part of the module (``for n, p in m.named_parameters()``)
            if pins_loop_value(facts, site, frame.node, varying):
                continue  # only on the pass whose item is one value (``if name == "head":``)
            if breaks_after(facts, site, frame):
                continue
            if self._removed_or_guarded(facts, registration, frame.node):
                return None
            return self._finding(facts, registration, "on every iteration of this loop", frame)
        # 2. a function that runs once per forward / step / hook call
        if function is None:
            return None
        reason = _per_call_reason(facts, function, hook_bodies)
        if reason is None:
            return None
        if handle_model(facts).lives_on_module(registration):
            if self._removed_or_guarded(facts, registration, function):
                return None
            return self._finding(
                facts,
                registration,
                "inside `forward()` of an autograd Function, on a module's parameter,",
                None,
                fix=False,  # removing it at the end of forward would keep it from ever firing in backward
            )
        hook_registration = hook_bodies.get(id(function))
        seed = call_arguments(function)
        if hook_registration is not None and hook_registration.api.owner in (
            "module",
            "global_module",
        ):
            params = hook_registration.hook.params
            if params:
                seed.discard(params[0])  # the hooked module lives on
        varying = varying_in_call(facts, function, seed)
        if receiver_names & varying or handle_model(facts).on_tensor_made_just_before(registration):
            # a new object on each call (an argument, an activation): its hook dies with
            # it, but not a handle kept in the store of the hook that registers it
            return self._handles_pile_up(registration, hook_registration)
        # For a module hook only the receiver decides here: a fresh ``partial``/lambda on
        # each call is one more hook on the same module each call (unlike case 1's finite
        # collection).  A tensor built from this call's values (``loss = f(batch)``) is
        # new on each call even where its binding does not show it: a hook given this
        # call's values is taken as one on such a tensor.
        if registration.api.owner == "tensor" and argument_names(registration) & varying:
            return None
        if self._removed_or_guarded(facts, registration, function):
            return None
        removers = _removed_elsewhere(facts, registration)
        if any(runs_per_call(facts, remover.node) for remover in removers):
            return None  # a per-call lifecycle: removed in another hook or the next call
        if removers:
            # removed once, when the work is done (``__exit__``, ``close``): until then
            # every call adds one more hook to the same module
            name = removers[0].name
            message = f"`{registration.api.name}` {reason} is removed only in `{name}`: hooks pile up"
            return Finding(node=registration.call, message=message)
        return self._finding(facts, registration, reason, None)

    # -- exceptions --------------------------------------------------------------------------
    def _rebound(self, facts: ModuleFacts, registration: Registration) -> Finding | None:
        """A method that starts its handle store anew, run by a loop of its class."""
        found = rebound_per_pass(facts, registration)
        if found is None:
            return None
        store, method, caller = found
        message = f"`{store}` starts anew in `{method}`, which a loop in `{caller}` runs per pass: earlier hooks stay"
        return Finding(node=registration.call, message=message)

    def _dropped(self, facts: ModuleFacts, registration: Registration) -> Finding | None:
        """A method that drops the handles of hooks on its object's module, run by a
        loop of its class."""
        found = dropped_per_pass(facts, registration)
        if found is None:
            return None
        method, caller = found
        message = f"`{method}` hooks its object's module and drops the handle; a loop in `{caller}` runs it per pass"
        return Finding(node=registration.call, message=message + ": hooks pile up")

    @staticmethod
    def _unclosed(unclosed: UnclosedObject) -> Finding:
        """A function that builds a hook-owning object on its caller's module and never
        closes it or hands it on."""
        message = (
            f"`{unclosed.cls}(...)` hooks the caller's module and nothing calls its"
            f" `{unclosed.closer}()`: each `{unclosed.function.name}` call adds a hook"
        )
        return Finding(node=unclosed.acquisition.node, message=message)

    @staticmethod
    def _measuring(measuring: MeasuringHook | None) -> Finding | None:
        """A function that hooks its caller's module with a hook object it reads for this
        call only, and drops the handle."""
        if measuring is None:
            return None
        name = measuring.function.name
        name = name if len(name) <= 30 else name[:29] + "…"
        if measuring.runs:
            # (short enough for "(N more registrations like it here)" after it)
            short = measuring.function.name
            short = short if len(short) <= 25 else short[:24] + "…"
            message = f"`{short}` hooks and runs the caller's model; each call adds hooks"
        else:
            message = f"`{name}` hooks its caller's module with a hook it reads, then drops the handle: each call adds a hook"
        return Finding(node=measuring.registration.call, message=message)

    @staticmethod
    def _grows(growing: GrowingStore | None) -> Finding | None:
        """A setup that appends to a ``self`` list its teardown removes but never empties."""
        if growing is None:
            return None
        teardown = growing.lifecycle.teardown.name  # type: ignore[union-attr]
        stores = " and ".join(f"`{store}`" for store in growing.stores[:2])
        more = f" (and {len(growing.stores) - 2} more)" if len(growing.stores) > 2 else ""
        lists = "it" if len(growing.stores) == 1 else "them"
        message = (
            f"`{teardown}` removes {stores}{more} but never empties {lists}:"
            f" each `{growing.lifecycle.setup.name}` adds more handles"
        )
        return Finding(node=growing.registration.call, message=message)

    def _removed_or_guarded(self, facts: ModuleFacts, registration: Registration, scope: cst.CSTNode) -> bool:
        return removed_in_pass(facts, registration, scope) or install_once(
            facts, registration, kept_handle(registration)
        )

    def _lost_handles(
        self,
        facts: ModuleFacts,
        registration: Registration,
        frame: Frame,
        varying: set[str],
    ) -> Finding | None:
        """``for m in mods: self.handle = m.register_forward_hook(fn)``: all but the last lost."""
        use = registration.handle
        if use.role != "bound" or len(use.targets) != 1:
            return None
        target = use.targets[0]
        if "[" in target or not is_statement_loop(frame):
            return None
        if target.split(".", 1)[0] in varying:
            return None  # ``state.handle = ...``: a different object's attribute on each pass
        body_code = loop_body_code(facts, frame)
        if word_count(body_code, target) != 1:
            return None  # used in the loop: appended, stored by key, removed...
        if "." not in target and not any(
            same_function(r.site, registration.site) for r in facts.removals.get(target, ())
        ):
            return None  # a local that is never removed: HL002's "never removed"
        message = f"`{target}` is reassigned on every loop iteration: all but the last handle are lost"
        return Finding(node=registration.call, message=message)

    @staticmethod
    def _handles_pile_up(
        registration: Registration, hook_registration: Registration | None
    ) -> Finding | None:
        """A hook that registers on each call's new object (``output.register_hook(f)``)
        and appends the handle to the ``self`` store that also keeps the hook's own
        handle: the store is emptied only where the hook itself is removed, so it gains
        one handle on every call for as long as the hook is on."""
        if hook_registration is None:
            return None
        use, own = registration.handle, hook_registration.handle.final
        if use.role != "appended" or own.role != "appended":
            return None
        store = use.targets[0] if use.targets else ""
        if not store.startswith("self.") or store not in own.targets:
            return None
        return Finding(
            node=registration.call,
            message=f"`{registration.api.name}` adds a handle to `{store}` each time the hook runs: the list only grows",
        )

    def _finding(
        self, facts: ModuleFacts, registration: Registration, reason: str, frame, fix: bool = True
    ) -> Finding:
        what = "a hook" if registration.api.owner != "tensor" else "a tensor hook"
        message = f"`{registration.api.name}` registers {what} {reason} without removing it: hooks pile up"
        edits = self._fix(facts, registration) if fix else []
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message="Remove the hook at the end of the block (`with register(...):`)" if edits else "",
        )

    def _fix(self, facts: ModuleFacts, registration: Registration) -> list:
        if not registration_statement_alone(registration):
            return []
        use = registration.handle
        if use.role == "bound":
            target = use.targets[0]
            function = registration.site.function
            scope_code = facts.code(function) if function is not None else facts.module.code
            if "." in target or "[" in target or word_count(scope_code, target) != 1:
                return []
        elif use.role != "discarded":
            return []
        if registration.api.kind in BACKWARD_KINDS and not _differentiates_after(facts, registration):
            return []  # removed at the end of the block, the hook would never see its backward
        return with_over_rest_of_block(facts, registration)

    VALID = [
        # The function hooks a model it builds itself: the model, and its hooks, go
        # when the call returns.
        Valid(
            """
import torch


def make_recorder(sizes):
    def record(module, inputs, output):
        sizes.append(tuple(output.shape))
    return record


def probe_sizes(batch):
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    sizes = []
    for layer in net:
        layer.register_forward_hook(make_recorder(sizes))
    net(batch)
    return sizes
"""
        ),
        # An installer: it hooks the model, tries it once, and hands the model back
        # with its hook for the caller to keep.
        Valid(
            """
def with_input_check(model, example):
    def check(module, args):
        if args[0].dim() != 4:
            raise ValueError("expected a batch of images")

    model.register_forward_pre_hook(check)
    model(example)
    return model
"""
        ),
        # The caller's model is run with the hooks on, and a helper of the file takes
        # every hook off afterwards.
        Valid(
            """
def strip_hooks(model):
    for module in model.modules():
        module._forward_hooks.clear()


def widths(model, batch):
    found = {}
    for name, module in model.named_modules():
        module.register_forward_hook(lambda m, a, out, key=name: found.__setitem__(key, out.shape[-1]))
    model(batch)
    strip_hooks(model)
    return found
"""
        ),
        # Each pass unpacks a new hidden state from the cell and hooks it: one hook per
        # tensor, gone with it.
        Valid(
            """
import torch


class Stepper(torch.nn.Module):
    def __init__(self, width, steps):
        super().__init__()
        self.cell = torch.nn.LSTMCell(width, width)
        self.steps = steps

    def forward(self, feats, state):
        outputs = []
        for _ in range(self.steps):
            hidden, cell = self.cell(feats.flatten(1), state)
            if hidden.requires_grad:
                hidden.register_hook(lambda grad: grad.clamp(-5, 5))
            state = (hidden, cell)
            outputs.append(hidden)
        return outputs
"""
        ),
        # `tap.register_hook()` takes no hook: it is the tap object's own method (it
        # puts back the hook it just took off), not torch's `Tensor.register_hook`.
        Valid(
            """
class SynapticOps:
    def __init__(self):
        self.total = 0

    def __call__(self, model, batch):
        for tap in model.taps:
            for spikes in tap.inputs:
                tap.handle.remove()
                self.total += int(spikes.sum())
                tap.register_hook()
        return self.total
"""
        ),
        # The counter is handed back: the caller reads it for as long as it wants the
        # hook, which is meant to stay.
        Valid(
            """
class CallCounter:
    def __init__(self):
        self.calls = 0

    def __call__(self, module, args):
        self.calls += 1


def attach_counter(model):
    counter = CallCounter()
    model.register_forward_pre_hook(counter)
    print("counting from", counter.calls)
    return counter
"""
        ),
        # The function counts on a model it builds itself: the hook goes with the model.
        Valid(
            """
import torch.nn as nn


class CallCounter:
    def __init__(self):
        self.calls = 0

    def __call__(self, module, args):
        self.calls += 1


def forwards_of_fresh_net(width, batches):
    net = nn.Sequential(nn.Linear(width, width))
    counter = CallCounter()
    net.register_forward_pre_hook(counter)
    for batch in batches:
        net(batch)
    return counter.calls
"""
        ),
        # The head is hooked on the one pass whose tap name is "head": once, not per pass.
        Valid(
            """
class Taps:
    def __init__(self, model, names):
        self.model = model
        self.names = names
        self.seen = {}

    def keep(self, name):
        def hook(module, args, output):
            self.seen[name] = output.detach()
        return hook

    def install(self):
        for tap in self.names:
            if tap == "head":
                self.model.classifier.register_forward_hook(self.keep("head"))
            else:
                self.model.get_submodule(tap).register_forward_hook(self.keep(tap))
"""
        ),
        # Every `with` enters a new `Shift`, made by a method only `with` calls.
        Valid(
            """
class Shift:
    def __init__(self, module, delta):
        self.module = module
        self.delta = delta
        self.handles = []

    def __enter__(self):
        self.handles.append(self.module.register_forward_hook(lambda m, args, out: out + self.delta))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


class Sweep:
    def __init__(self, layer):
        self.layer = layer

    def shifted(self, delta):
        return Shift(self.layer, delta)

    def run(self, x, deltas):
        outputs = []
        for delta in deltas:
            with self.shifted(delta):
                outputs.append(self.layer(x))
        return outputs
"""
        ),
        # `fire()` computes a new tensor on each call: its hook goes with it.
        Valid(
            """
import torch


class Spiking(torch.nn.Module):
    def __init__(self, threshold=1.0):
        super().__init__()
        self.threshold = threshold
        self.potential = torch.zeros(1)
        self.gain = None

    def fire(self):
        spikes = (self.potential - self.threshold).clamp(min=0)
        return torch.tanh(spikes)

    def forward(self, current):
        self.potential = self.potential + current
        if self.training:
            spikes = self.fire()
            spikes.register_hook(lambda grad: grad * self.gain)
            return spikes
        return self.potential
"""
        ),
        # The inner loop is a lookup: each pass hooks the module its own name picks out.
        Valid(
            """
def hook_named(model, names, note):
    handles = []
    for wanted in names:
        for name, module in model.named_modules():
            if name == wanted:
                handles.append(module.register_forward_hook(note))
    return handles
"""
        ),
        # A search keyed on the pass's item, its result bound and hooked: another module each pass.
        Valid(
            """
def hook_matching(model, suffixes, graph_names, note):
    modules = dict(model.named_modules())
    for suffix in suffixes:
        match = None
        for name in graph_names:
            if name.endswith(suffix):
                match = name
                break
        if match is not None:
            modules[match].register_forward_hook(note)
"""
        ),
        # A fresh `partial` on every call, removed in the same call.
        Valid(
            """
from functools import partial

from torch import nn


def _shift(mod, args, out, by):
    return out + by


class Shifted(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, by):
        handle = self.inner.register_forward_hook(partial(_shift, by=by))
        try:
            return self.inner(x)
        finally:
            handle.remove()
"""
        ),
        # The previous call's hook is removed before the next one goes on.
        Valid(
            """
from functools import partial

from torch import nn


def _shift(mod, args, out, by):
    return out + by


class Shifted(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self._shift = None

    def forward(self, x, by):
        if self._shift is not None:
            self._shift.remove()
        self._shift = self.inner.register_forward_hook(partial(_shift, by=by))
        return self.inner(x)
"""
        ),
        # Per step, a fresh `partial` on each block, and every handle removed in the step.
        Valid(
            """
from functools import partial


def _tag(mod, args, out, step):
    out.step = step


def training_step(model, batch, step):
    handles = []
    for block in batch.blocks:
        handles.append(block.register_forward_hook(partial(_tag, step=step)))
    loss = model(batch).sum()
    for handle in handles:
        handle.remove()
    return loss
"""
        ),
        # A tensor hook on an activation inside an autograd Function's forward dies with it.
        Valid(
            """
import torch

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        y = x * weight
        y.register_hook(lambda g: g.clamp(-1, 1))
        return y

class Layer(torch.nn.Module):
    def forward(self, x):
        return Scale.apply(x, self.weight)
"""
        ),
        # A worklist: each module is hooked once, and an old handle of it is removed first.
        Valid(
            """
def trace_tree(root, on_enter):
    handles = {}
    pending = [root]
    while pending:
        module = pending.pop()
        if id(module) in handles:
            handles.pop(id(module)).remove()
        handles[id(module)] = module.register_forward_pre_hook(on_enter)
        pending.extend(module.children())
    return handles
"""
        ),
        # One hook per module of the model, installed once (a profiler's attach()).
        Valid(
            """
class ActivationStats:
    def attach(self, model):
        self.handles = []
        for name, module in model.named_modules():
            self.handles.append(module.register_forward_hook(self._record))
        hooks = [p.register_hook(self._grad_norm) for p in model.parameters()]
        self.handles.extend(hooks)
"""
        ),
        # Tensor hooks on activations created in forward die with them.
        Valid(
            """
class Block(nn.Module):
    def forward(self, x):
        h = self.proj(x)
        if h.requires_grad:
            h.register_hook(self._save_grad)
        out = torch.relu(h)
        out.register_hook(lambda g: g.clamp(-1, 1))
        return out
"""
        ),
        # The attribute is bound to this call's product just before it is hooked: each
        # call's tensor gets one hook, which dies with it.
        Valid(
            """
class Mixer(nn.Module):
    def forward(self, x):
        self.mixed = self.inner(x) * self.scale
        if self.training:
            self.mixed.register_hook(self._clip)
        return self.mixed
"""
        ),
        # The loop hands a different pattern and hook to each call: one hook each, no pile.
        Valid(
            """
import fnmatch


class StatsHooks:
    def __init__(self, model, patterns, fns):
        self.model = model
        self.patterns = patterns
        self.fns = fns

    def install(self):
        for pattern, fn in zip(self.patterns, self.fns):
            self._add(pattern, fn)

    def _add(self, pattern, fn):
        for name, module in self.model.named_modules():
            if not fnmatch.fnmatch(name, pattern):
                continue
            module.register_forward_hook(fn)
"""
        ),
        # The pass that finds the wanted layer hooks it and leaves the loop.
        Valid(
            """
class Probe:
    def __init__(self, model):
        self.model = model
        self.handle = None

    def watch(self, wanted, hook):
        for name, layer in self.model.named_modules():
            if name == wanted:
                self.handle = layer.register_forward_hook(hook)
                break

    def stop(self):
        self.handle.remove()
"""
        ),
        # Each pass computes a new loss before hooking it: one hook per tensor, gone with it.
        Valid(
            """
def fit(critic, batches, rounds, check):
    for _ in range(rounds):
        sample = next(batches)
        score = critic(sample).sum() * 0.5
        score.register_hook(check)
        score.backward()
"""
        ),
        # Install-once guard inside forward (a PEFT-style adapter), and a hook removed in the loop.
        Valid(
            """
class Adapter(nn.Module):
    def forward(self, x):
        if self._scale_handle is None:
            self._scale_handle = self.base.register_forward_hook(self._scale)
        return self.base(x)


def calibrate(layer, loader, observer):
    for batch in loader:
        with layer.register_forward_pre_hook(observer):
            layer(batch)
        h = layer.register_forward_hook(observer)
        try:
            layer(batch)
        finally:
            h.remove()
"""
        ),
        # Handles appended in a loop and removed later in the same function.
        Valid(
            """
def trace(model, batches):
    handles = []
    for batch in batches:
        handles.append(model.register_forward_hook(print_shape))
        model(batch)
    for h in handles:
        h.remove()
"""
        ),
        # A forward hook that hooks the output tensor (new on every call).
        Valid(
            """
def _attach_grad_hook(module, args, output):
    output.register_hook(lambda g: GRADS.append(g.norm()))

def install(model):
    return model.register_forward_hook(_attach_grad_hook)
"""
        ),
        # A graph walk: each pass of the `while` takes another node off the work list
        # and hooks it once; the handles go back to the caller.
        Valid(
            """
def hook_autograd_graph(output, on_grad):
    handles = []
    seen = set()
    pending = [output.grad_fn]
    while pending:
        node = pending.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        handles.append(node.register_hook(on_grad))
        pending.extend(parent for parent, _ in node.next_functions)
    return handles
"""
        ),
        # Built anew on every pass, and removed in the same pass.
        Valid(
            """
def calibrate(model, batches, stats):
    for batch in batches:
        hooks = [layer.register_forward_hook(stats.observe) for layer in model.children()]
        try:
            model(batch)
        finally:
            for hook in hooks:
                hook.remove()
"""
        ),
        # The loop removes what each pass installed before the next one starts.
        Valid(
            """
class RangeTuner:
    def __init__(self, model, blocks):
        self.model = model
        self.blocks = blocks
        self.observers = []
        self.ranges = {}

    def _watch(self):
        self.observers = []
        for name, block in self.blocks.items():
            self.observers.append(block.register_forward_hook(self._note(name)))

    def _unwatch(self):
        for handle in self.observers:
            handle.remove()

    def _note(self, name):
        def hook(module, inputs, output):
            self.ranges[name] = output.abs().max()
        return hook

    def tune(self, batches):
        for batch in batches:
            self._watch()
            try:
                self.model(batch)
            finally:
                self._unwatch()
"""
        ),
        # The list starts anew only when it is empty: an install-once check.
        Valid(
            """
class Loop:
    def __init__(self, modules, hook):
        self.modules = modules
        self.hook = hook
        self.sync_handles = []

    def _evaluate(self, batch):
        if len(self.sync_handles) == 0:
            self.sync_handles = [m.register_forward_pre_hook(self.hook) for m in self.modules]
        return batch

    def run(self, batches):
        for batch in batches:
            self._evaluate(batch)
"""
        ),
        # The activations' handles go into a list of their own, which each backward empties.
        Valid(
            """
class GradTap:
    def __init__(self, layer):
        self.grad_handles = []
        self.grad = None
        self.handle = layer.register_forward_hook(self._on_forward)

    def _on_forward(self, module, inputs, output):
        self.grad_handles.append(output.register_hook(self._save))

    def _save(self, grad):
        self.grad = grad
        while self.grad_handles:
            self.grad_handles.pop().remove()

    def close(self):
        self.handle.remove()
"""
        ),
        # A pre-hook puts a one-shot post-hook on the module it sees, and the post-hook
        # takes its own handle off again: a lifecycle of one call, nothing piles up.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_pre_hook


class CallTimer:
    def __init__(self, clock):
        self.clock = clock
        self.started = {}
        self.ends = {}

    def _before(self, module, args):
        key = id(module)
        self.started[key] = self.clock()
        self.ends[key] = module.register_forward_hook(self._after)

    def _after(self, module, args, output):
        self.ends.pop(id(module)).remove()

    def __enter__(self):
        self.global_handle = register_module_forward_pre_hook(self._before)
        return self

    def __exit__(self, *exc):
        self.global_handle.remove()
        for handle in self.ends.values():
            handle.remove()
"""
        ),
        # A counter kept from call to call: only the first call registers.
        Valid(
            """
class FirstCallProbe:
    def __init__(self, layer, sink):
        self.sink = sink
        self.calls = 0
        self.probe = None
        self.pre = layer.register_forward_pre_hook(self._before)

    def _before(self, module, args):
        self.calls += 1
        if self.calls == 1:
            self.probe = module.register_forward_hook(self.sink)

    def close(self):
        self.pre.remove()
        if self.probe is not None:
            self.probe.remove()
"""
        ),
        # The same per-call registration, but the previous call's hook under that key is
        # taken off first: one post-hook per module at a time.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_pre_hook


class DepthTracer:
    def __init__(self):
        self.depth = 0
        self.post_handles = {}

    def _before(self, module, args):
        self.depth += 1
        key = type(module).__name__
        if key in self.post_handles:
            self.post_handles[key].remove()
        self.post_handles[key] = module.register_forward_hook(self._after)

    def _after(self, module, args, output):
        self.depth -= 1

    def __enter__(self):
        self.pre_handle = register_module_forward_pre_hook(self._before)
        return self

    def __exit__(self, *exc):
        self.pre_handle.remove()
        for handle in self.post_handles.values():
            handle.remove()
"""
        ),
        # The teardown empties the list it walked: the next `with` starts from nothing.
        Valid(
            """
class ActivationTap:
    def __init__(self, layers):
        self.layers = layers
        self.seen = []
        self.handles = []

    def _keep(self, module, args, output):
        self.seen.append(output.shape)

    def __enter__(self):
        for layer in self.layers:
            self.handles.append(layer.register_forward_hook(self._keep))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
"""
        ),
        # Each handle is taken out of the list as it is removed.
        Valid(
            """
class ActivationTap:
    def __init__(self, layers):
        self.layers = layers
        self.handles = []

    def _keep(self, module, args, output):
        module.last_shape = output.shape

    def attach(self):
        for layer in self.layers:
            self.handles.append(layer.register_forward_hook(self._keep))

    def detach(self):
        while self.handles:
            self.handles.pop().remove()
"""
        ),
        # The setup runs once per object, from its constructor: the list is filled once.
        Valid(
            """
class ActivationTap:
    def __init__(self, layers):
        self.layers = layers
        self.handles = []
        self._register()

    def _keep(self, module, args, output):
        module.last_shape = output.shape

    def _register(self):
        for layer in self.layers:
            self.handles.append(layer.register_forward_hook(self._keep))

    def _unregister(self):
        for handle in self.handles:
            handle.remove()

    def close(self):
        self._unregister()
"""
        ),
        # Every `with` of this file enters a new object: no list is entered twice.
        Valid(
            """
class keep_shapes:
    def __init__(self, layer, shapes):
        self.layer = layer
        self.shapes = shapes
        self.handles = []

    def _keep(self, module, args, output):
        self.shapes.append(output.shape)

    def __enter__(self):
        self.handles.append(self.layer.register_forward_hook(self._keep))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


def output_shapes(model, layer, batches):
    shapes = []
    for batch in batches:
        with keep_shapes(layer, shapes):
            model(batch)
    return shapes
"""
        ),
        # The function closes every object it built, so their hooks go with the call.
        Valid(
            """
class Tap:
    def __init__(self, module):
        self.output = None
        self.handle = module.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.output = output

    def close(self):
        self.handle.remove()


def layer_outputs(model, layers, batch):
    taps = [Tap(layer) for layer in layers]
    try:
        model(batch)
    finally:
        for tap in taps:
            tap.close()
    return [tap.output for tap in taps]
"""
        ),
        # The objects go back to the caller, who closes them; and a tap on a module the
        # function builds itself goes away with that module.
        Valid(
            """
from torch import nn


class Tap:
    def __init__(self, module):
        self.output = None
        self.handle = module.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.output = output

    def close(self):
        self.handle.remove()


def attach_taps(layers):
    return [Tap(layer) for layer in layers]


def probe_width(batch):
    layer = nn.Linear(batch.shape[-1], 4)
    tap = Tap(layer)
    layer(batch)
    return tap.output.shape[-1]
"""
        ),
        # A hook of its own for each parameter of the hooked block (the def names the
        # pass's part): one setup, one hook per part, handed back to be removed.
        Valid(
            """
def watch_each_weight(block, report):
    handles = []
    for name, weight in block.named_parameters():

        def check(module, args, output, name=name):
            if not weight.isfinite().all():
                report(name)

        handles.append(block.register_forward_hook(check))
    return handles
"""
        ),
    ]
    INVALID = [
        # Each call puts a new counting closure on every module of the caller's model
        # (it notes its count on the module), runs the model once, and keeps no
        # handle: a second call leaves two hooks on each module, and every later
        # forward of the model still runs them all.
        Invalid(
            """
import torch


def make_counter(scale):
    def count(module, inputs, output):
        module.elements = output.numel() * scale
    return count


def activation_sizes(model, batch, scale=1):
    for module in model.modules():
        module.register_forward_hook(make_counter(scale))
    with torch.no_grad():
        model(batch)
    return {name: getattr(m, "elements", 0) for name, m in model.named_modules()}
""",
            line=12,
            message="hooks and runs the caller's model; each call adds hooks",
        ),
        # Nested hooks on the caller's last layer, a backward run, and a tensor's
        # `detach()` (which takes nothing off the model): each call leaves one more pair.
        Invalid(
            """
def saliency(model, image):
    act = grad = None

    def keep_output(module, inputs, output):
        nonlocal act
        act = output

    def keep_grad(module, grad_input, grad_output):
        nonlocal grad
        grad = grad_output[0]

    head = list(model.children())[-1]
    head.register_forward_hook(keep_output)
    head.register_full_backward_hook(keep_grad)
    model(image).sum().backward()
    return (act * grad).sum(dim=1).detach()
""",
            line=13,
            message="hooks and runs the caller's model; each call adds hooks",
        ),
        # The same hook put on the caller's tensor, the same one on every pass.
        Invalid(
            """
import torch


class Stepper(torch.nn.Module):
    def __init__(self, width, steps):
        super().__init__()
        self.cell = torch.nn.LSTMCell(width, width)
        self.steps = steps

    def forward(self, feats, state):
        outputs = []
        for _ in range(self.steps):
            hidden, cell = self.cell(feats.flatten(1), state)
            if feats.requires_grad:
                feats.register_hook(lambda grad: grad.clamp(-5, 5))
            state = (hidden, cell)
            outputs.append(hidden)
        return outputs
""",
            line=15,
        ),
        # The same walk with a hook that names nothing of the part: the same hook, once
        # more for every parameter.
        Invalid(
            """
def watch_each_weight(block, shapes):
    handles = []
    for name, weight in block.named_parameters():

        def note(module, args, output):
            shapes.append(output.shape)

        handles.append(block.register_forward_hook(note))
    return handles
""",
            line=8,
            message="registers a hook on every iteration of this loop",
        ),
        # Handed a hook, `register_hook` is torch's: each call adds one more per tap.
        Invalid(
            """
class SynapticOps:
    def __init__(self):
        self.total = 0

    def _note(self, grad):
        self.total += 1

    def __call__(self, model, batch):
        for tap in model.taps:
            for spikes in tap.inputs:
                self.total += int(spikes.sum())
                tap.register_hook(self._note)
        return self.total
""",
            line=12,
            message="`register_hook` registers a tensor hook on every iteration of this loop",
        ),
        # A measurement that hooks the caller's model with a counter made for this call,
        # reads it, and drops the handle: every call leaves one more counting hook.
        Invalid(
            """
class CallCounter:
    def __init__(self):
        self.calls = 0

    def __call__(self, module, args):
        self.calls += 1


def forwards_per_batch(model, batches):
    counter = CallCounter()
    model.register_forward_pre_hook(counter)
    for batch in batches:
        model(batch)
    return counter.calls / len(batches)
""",
            line=11,
            message="`forwards_per_batch` hooks its caller's module with a hook it reads, then drops the handle",
        ),
        # A test that many passes meet (every name with a prefix) hooks the head again each time.
        Invalid(
            """
class Taps:
    def __init__(self, model, names):
        self.model = model
        self.names = names
        self.seen = []

    def install(self):
        for tap in self.names:
            if tap.startswith("head"):
                self.model.classifier.register_forward_hook(lambda m, a, out: self.seen.append(out.shape))
""",
            line=10,
            message="on every iteration of this loop",
        ),
        # The score is computed once, before the loop: every pass hooks the same tensor.
        Invalid(
            """
def fit(critic, batches, rounds, check):
    score = critic(next(batches)).sum()
    for _ in range(rounds):
        score.register_hook(check)
        score.backward(retain_graph=True)
""",
            line=4,
            message="on every iteration of this loop",
            expected="""
def fit(critic, batches, rounds, check):
    score = critic(next(batches)).sum()
    for _ in range(rounds):
        with score.register_hook(check):
            score.backward(retain_graph=True)
""",
        ),
        # Each batch hooks every block of the object's model again and keeps no handle.
        Invalid(
            """
latest = {}


def _saver(name):
    def save(module, args, output):
        latest[name] = output.detach()

    return save


class Probe:
    def __init__(self, net):
        self.net = net

    def _hook_all(self):
        for name, block in self.net.named_children():
            block.register_forward_hook(_saver(name))

    def _batch(self, x):
        self._hook_all()
        self.net(x)
        return dict(latest)

    def collect(self, loader):
        return [self._batch(x) for x in loader]
""",
            line=17,
            message="a loop in `collect` runs it per pass: hooks pile up",
        ),
        # The attribute is bound to the layer's weight, which every call hooks again.
        Invalid(
            """
class Mixer(nn.Module):
    def forward(self, x):
        self.kernel = self.inner.weight
        self.kernel.register_hook(self._clip)
        return x @ self.kernel
""",
            line=4,
            message="inside `forward()` (once per call)",
        ),
        # One `Shift`, kept and entered again on every pass: its list only grows.
        Invalid(
            """
class Shift:
    def __init__(self, module, delta):
        self.module = module
        self.delta = delta
        self.handles = []

    def __enter__(self):
        self.handles.append(self.module.register_forward_hook(lambda m, args, out: out + self.delta))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


class Sweep:
    def __init__(self, layer, delta):
        self.layer = layer
        self.shift = self.shifted(delta)

    def shifted(self, delta):
        return Shift(self.layer, delta)

    def run(self, x, times):
        outputs = []
        for _ in range(times):
            with self.shift:
                outputs.append(self.layer(x))
        return outputs
""",
            line=8,
            message="`__exit__` removes `self.handles` but never empties it",
        ),
        # `scaled_weight()` hands back the parameter itself: one more hook on it per call.
        Invalid(
            """
import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4))
        self.clip = 1.0

    def scaled_weight(self):
        return self.weight

    def forward(self, x):
        w = self.scaled_weight()
        w.register_hook(lambda grad: grad.clamp(-self.clip, self.clip))
        return x * w
"""
        ),
        # Every epoch hooks every module again: the inner loop visits the same modules each time.
        Invalid(
            """
def train(model, epochs, note, step):
    for epoch in range(epochs):
        for module in model.modules():
            module.register_forward_hook(note)
        step(model, epoch)
""",
            line=4,
            message="on every iteration of this loop",
        ),
        # A hook on the model that hooks every block again on each call, with a fresh
        # `partial`: the blocks are the same ones every call, so the hooks pile up (only
        # the last call's are removed when the context ends).
        Invalid(
            """
from contextlib import contextmanager
from functools import partial


def _route(mod, args, kwargs, weights):
    kwargs["weights"] = weights
    return args, kwargs


class Router:
    def __init__(self, model, scorer):
        self.model = model
        self.scorer = scorer

    @contextmanager
    def routed(self):
        added = []

        def mix(mod, args, kwargs):
            weights = self.scorer(*args)
            for block in self.model.children():
                added.append(block.register_forward_pre_hook(partial(_route, weights=weights), with_kwargs=True))
            return args, kwargs

        top = self.model.register_forward_pre_hook(mix, with_kwargs=True)
        try:
            yield
        finally:
            top.remove()
            for handle in added[-len(list(self.model.children())) :]:
                handle.remove()
""",
            line=22,
            message="inside hook `mix` (once per hook call)",
        ),
        # A lambda over this call's `scale`, on a submodule that lives on.
        Invalid(
            """
from torch import nn


class Steered(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, scale):
        self.inner.register_forward_hook(lambda mod, args, out: out * scale)
        return self.inner(x)
""",
            expected="""
from torch import nn


class Steered(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, scale):
        with self.inner.register_forward_hook(lambda mod, args, out: out * scale):
            return self.inner(x)
""",
            line=10,
            message="inside `forward()` (once per call)",
        ),
        # The first list is removed in `finally`; the second is a new list whose handles
        # nothing removes: the removal before it was of the earlier list.
        Invalid(
            """
from functools import partial

import torch


def _set_mix(mod, args, kwargs, mix):
    kwargs["mix"] = mix
    return args, kwargs


def install(model, blocks, mixer):
    def twice(mod, args, kwargs):
        probes = []
        for block in blocks:
            probes.append(block.register_forward_pre_hook(partial(_set_mix, mix=None), with_kwargs=True))
        try:
            with torch.no_grad():
                first = model.base(*args, **kwargs)
        finally:
            for probe in probes:
                probe.remove()
        probes = []
        for block in blocks:
            probes.append(block.register_forward_pre_hook(partial(_set_mix, mix=mixer(first)), with_kwargs=True))
        return args, kwargs

    return model.register_forward_pre_hook(twice, with_kwargs=True)
""",
            line=24,
            message="inside hook `twice` (once per hook call)",
        ),
        # Gradient clipping hooks re-registered every step: gradients scaled k times.
        Invalid(
            """
def train(model, loader, optimizer, loss_fn):
    for batch, target in loader:
        for p in model.parameters():
            p.register_hook(lambda g: g * 0.5)
        loss_fn(model(batch), target).backward()
        optimizer.step()
""",
            expected=None,
            line=4,
            message="every iteration of this loop",
        ),
        # Registered in forward() on a submodule: one more hook per forward call.
        Invalid(
            """
class Wrapper(nn.Module):
    def forward(self, x):
        self.encoder.register_forward_hook(self._store)
        hidden = self.encoder(x)
        return self.head(hidden)
""",
            expected="""
class Wrapper(nn.Module):
    def forward(self, x):
        with self.encoder.register_forward_hook(self._store):
            hidden = self.encoder(x)
            return self.head(hidden)
""",
            line=3,
            message="inside `forward()`",
        ),
        # A generation loop that hooks the same layer for every token.
        Invalid(
            """
def generate(model, input_ids, steps):
    cache = []
    for _ in range(steps):
        handle = model.lm_head.register_forward_hook(lambda m, i, o: cache.append(o[:, -1].detach()))
        logits = model(input_ids)
        input_ids = torch.cat([input_ids, logits[:, -1:].argmax(-1)], dim=1)
    return input_ids, cache
""",
            expected="""
def generate(model, input_ids, steps):
    cache = []
    for _ in range(steps):
        with model.lm_head.register_forward_hook(lambda m, i, o: cache.append(o[:, -1].detach())):
            logits = model(input_ids)
            input_ids = torch.cat([input_ids, logits[:, -1:].argmax(-1)], dim=1)
    return input_ids, cache
""",
            line=4,
        ),
        # A forward pre-hook that registers a forward hook on its module every call.
        Invalid(
            """
def _pre(module, args):
    module.register_forward_hook(_post)

def _post(module, args, output):
    module.calls += 1

def install(model):
    model.register_forward_pre_hook(_pre)
""",
            expected=None,
            line=2,
            message="inside hook `_pre`",
        ),
        # One attribute for the handles of every layer: only the last can be removed.
        Invalid(
            """
class Probe:
    def attach(self, model):
        for layer in model.layers:
            self.handle = layer.register_forward_hook(self.record)

    def detach(self):
        self.handle.remove()
""",
            expected=None,
            line=4,
            message="all but the last",
        ),
        # Each pass of the `while` takes a new batch, but hooks the same parameter.
        Invalid(
            """
def train(model, batches, loss_fn):
    while batches:
        batch = batches.pop()
        model.weight.register_hook(lambda g: g.clamp(-1, 1))
        loss_fn(model(batch)).backward()
""",
            expected="""
def train(model, batches, loss_fn):
    while batches:
        batch = batches.pop()
        with model.weight.register_hook(lambda g: g.clamp(-1, 1)):
            loss_fn(model(batch)).backward()
""",
            line=4,
            message="on every iteration of this loop",
        ),
        # The list is built anew on every pass: the removal after the loop reaches the
        # last pass's hooks only.
        Invalid(
            """
def calibrate(model, batches, stats):
    hooks = []
    for batch in batches:
        hooks = [layer.register_forward_hook(stats.observe) for layer in model.children()]
        model(batch)
    for hook in hooks:
        hook.remove()
""",
            line=4,
            message="on every iteration of this loop",
        ),
        # A method starts its handle list anew; a loop two calls up runs it per batch.
        Invalid(
            """
class RangeTuner:
    def __init__(self, model, blocks):
        self.model = model
        self.blocks = blocks
        self.observers = []
        self.ranges = {}

    def _watch(self):
        self.observers = []
        for name, block in self.blocks.items():
            self.observers.append(block.register_forward_hook(self._note(name)))

    def _note(self, name):
        def hook(module, inputs, output):
            self.ranges[name] = output.abs().max()
        return hook

    def _score(self, batch):
        self._watch()
        return self.model(batch)

    def tune(self, batches):
        scores = []
        for batch in batches:
            scores.append(self._score(batch))
        for handle in self.observers:
            handle.remove()
        return scores
""",
            line=11,
            message="`self.observers` starts anew in `_watch`, which a loop in `tune` runs per pass",
        ),
        # The same with nothing that ever removes the store: each pass adds hooks.
        Invalid(
            """
class Loop:
    def __init__(self, modules, hook):
        self.modules = modules
        self.hook = hook
        self.sync_handles = []

    def _evaluate(self, batch):
        self.sync_handles = [m.register_forward_pre_hook(self.hook) for m in self.modules]
        return batch

    def run(self, batches):
        for batch in batches:
            self._evaluate(batch)
""",
            line=8,
            message="`self.sync_handles` starts anew in `_evaluate`",
        ),
        # The hook's tensor hook dies with the activation, but its handle goes into the
        # list that keeps the hook's own handle, which only the teardown empties: one
        # more handle per forward for the life of the object.
        Invalid(
            """
class GradTap:
    def __init__(self, layer):
        self.handles = []
        self.grad = None
        self.handles.append(layer.register_forward_hook(self._on_forward))

    def _on_forward(self, module, inputs, output):
        self.handles.append(output.register_hook(self._save))

    def _save(self, grad):
        self.grad = grad

    def close(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
""",
            expected=None,
            line=8,
            message="`register_hook` adds a handle to `self.handles` each time the hook runs: the list only grows",
        ),
        # A pre-hook that hooks its module again on every call, the handle kept under the
        # module's key and removed only when the context closes: a module run three
        # times in the context carries three post-hooks (the key keeps the last), and
        # the flag set at the start of each call is no install-once check.
        Invalid(
            """
from torch.nn.modules.module import register_module_forward_pre_hook


class DepthTracer:
    def __init__(self):
        self.depth = 0
        self.replaying = False
        self.phase = "forward"
        self.post_handles = {}

    def _before(self, module, args):
        self.replaying = self.phase == "backward"
        if not self.replaying:
            self.depth += 1
            self.post_handles[type(module).__name__] = module.register_forward_hook(self._after)

    def _after(self, module, args, output):
        self.depth -= 1

    def __enter__(self):
        self.pre_handle = register_module_forward_pre_hook(self._before)
        return self

    def __exit__(self, *exc):
        self.pre_handle.remove()
        for handle in self.post_handles.values():
            handle.remove()
""",
            expected=None,
            line=15,
            message="(once per hook call) is removed only in `__exit__`: hooks pile up",
        ),
        # A reusable context manager: every `with tap:` appends its handles to the list
        # the last one left behind, and `__exit__` walks (and removes) them all again.
        Invalid(
            """
class ActivationTap:
    def __init__(self, layers):
        self.layers = layers
        self.handles = []
        self.grad_handles = []

    def _keep(self, module, args, output):
        module.last_shape = output.shape

    def _keep_grad(self, module, grad_input, grad_output):
        module.last_grad_shape = grad_output[0].shape

    def __enter__(self):
        for layer in self.layers:
            handle = layer.register_forward_hook(self._keep)
            self.handles.append(handle)
            self.grad_handles.append(layer.register_full_backward_hook(self._keep_grad))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        for handle in self.grad_handles:
            handle.remove()
""",
            expected=None,
            line=15,
            message="`__exit__` removes `self.handles` and `self.grad_handles` but never empties them",
        ),
        # The same with a setup/teardown pair that a public method runs on every call.
        Invalid(
            """
class ActivationTap:
    def __init__(self, model, layers):
        self.model = model
        self.layers = layers
        self.handles = []

    def _keep(self, module, args, output):
        module.last_shape = output.shape

    def attach(self):
        for layer in self.layers:
            self.handles.append(layer.register_forward_hook(self._keep))

    def detach(self):
        for handle in self.handles:
            handle.remove()

    def shapes(self, batch):
        self.attach()
        try:
            self.model(batch)
        finally:
            self.detach()
        return [layer.last_shape for layer in self.layers]
""",
            expected=None,
            line=12,
            message="each `attach` adds more handles",
        ),
        # The class can take its hook off, but this function never asks it to: every
        # call leaves one more hook on each of the caller's layers (each one still
        # storing, and keeping alive, its object).
        Invalid(
            """
class Tap:
    def __init__(self, module):
        self.output = None
        self.handle = module.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.output = output

    def close(self):
        self.handle.remove()


def layer_outputs(model, layers, batch):
    taps = {}
    for name, layer in layers.items():
        taps[name] = Tap(layer)
    model(batch)
    return {name: tap.output for name, tap in taps.items()}
""",
            expected=None,
            line=16,
            message="`Tap(...)` hooks the caller's module and nothing calls its `close()`",
        ),
    ]


def _removed_elsewhere(facts: ModuleFacts, registration: Registration) -> list[FunctionInfo]:
    """The other functions of the file that remove the attribute the handle goes into
    (``x._hooks.append(h)``, ``self._h = h``), in file order."""
    if registration.handle.final.role not in ("bound", "appended"):
        return []
    attributes = {
        container_of(target).rsplit(".", 1)[-1]
        for target in stored_in(facts, registration)
        if "." in container_of(target)
    }
    found: dict[int, FunctionInfo] = {}
    for key, removals in facts.removals.items():
        if any(attribute in key for attribute in attributes):
            for removal in removals:
                function = removal.site.function
                info = facts.function_for(function) if function is not None else None
                if info is not None:
                    found.setdefault(id(function), info)
    return sorted(found.values(), key=lambda info: info.site.order)


def _per_call_reason(facts: ModuleFacts, function: cst.FunctionDef, hook_bodies) -> str | None:
    name = facts.function_for(function).name  # type: ignore[union-attr]
    if id(function) in hook_bodies:
        return f"inside hook `{name}` (once per hook call)"
    if per_call_name(name):
        return f"inside `{name}()` (once per call)"
    return None
