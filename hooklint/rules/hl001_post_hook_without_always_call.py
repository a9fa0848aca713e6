"""HL001 post-hook-without-always-call."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.call_local import state_dies_with_call
from hooklint.analysis.effects import undone
from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.hook_roles import HookCallable, HookedObjects, effects_of, hook_callable
from hooklint.analysis.reachability import runs_when_raising
from hooklint.fixes.always_call import add_always_call, clamp_decrement
from hooklint.fixes.release_guard import acquired_flag_guard
from hooklint.rules.base import (
    MESSAGE_LIMIT,
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    format_version,
    with_places,
)

ALWAYS_CALL_SINCE = (2, 1)
#: Releases that assume the acquire happened (a skipped or doubled one is wrong).
_ASSUMING = frozenset({"decrement", "remove", "delete", "release"})


class PostHookWithoutAlwaysCall(Rule):
    """A post-hook that undoes its pre-hook's change is skipped when the forward or step raises (no `always_call=True`).

    ## What it does
    Finds a forward pre-hook / forward hook pair on the same target (one module, the
    same `self.attr` from two methods of one class, or the process-wide
    `register_module_forward_pre_hook` / `register_module_forward_hook` pair) where
    the pre-hook takes something — a counter incremented, an item added to a set or
    stack, a flag set to `True`, one side of a method-call pair (`timer.start()`,
    `lock.acquire()`, `coordinator.fetch_x(m)`, `rec.__enter__()`; the pairs are
    listed in `hooklint.analysis.vocabulary`), an attribute or item set aside in a
    backup and then overwritten (`m._saved = m.p; m.p = 0.0`), or a process-wide
    setting read by its getter into a backup and changed by its setter (`m._dev =
    torch.cuda.current_device(); torch.cuda.set_device(gpu)`) — and the post-hook
    gives it back (writes the backup back: `m.p = m._saved`,
    `torch.cuda.set_device(m._dev)`), and
    the post-hook is registered without `always_call=True`.

    The same pair of an optimizer's step hooks (`register_step_pre_hook` /
    `register_step_post_hook` on one optimizer, or the process-wide
    `register_optimizer_step_pre_hook` / `register_optimizer_step_post_hook`) is
    reported too: a step post-hook has no `always_call` at all; and so is the pair of a
    full backward pre-hook and full backward hook on one module (which has none either).
    A failed step or backward is an error rather than a routine path, so there only
    the takes that the next run that succeeds does not put right count: a counter
    raised, an item pushed onto a stack or list, one side of a method-call pair, a value
    set aside and overwritten. A flag set to `True`, an entry stored under a key, or an
    item added to a set is set and given back again by the next run's hooks.

    The hooks' effects are followed into same-file helpers they call (module
    functions, nested defs, `self` methods, the closure a same-file factory returns
    and the hook calls at once), up to three calls deep, with a `True`, `False` or
    `None` the call passes (or leaves at a default) standing for the parameter it is
    given to (`_set_active(True)` in the pre-hook, `_set_active(False)` in the
    post-hook). What a getter of the module or of an imported module returns when
    called without arguments (`get_tracker()`, `torch._C._get_tracing_state()`) is the
    one object the process keeps: the same state in both hooks. Hooks may be functions, methods, static methods or class methods
    named through their class (`Block._enter`), lambdas, `functools.partial` objects,
    or instances of same-file classes with `__call__` (also held in a dict, list or
    attribute). A pre-hook picked by a condition (`enter = light if flag else full`,
    both same-file hooks) is read as the first choice; its fix is withheld when the
    release needs a guard (each choice would have to set it). Different literal dict
    keys are different state (`state["a"]` vs `state["b"]`). A plain assignment
    (`self.start = now()`, or `self.starts[name] = now()` under a key fixed outside
    the hook, such as its factory's parameter or a default of the hook's own
    parameters, `lambda m, a, k=name: self._begin(k)`, also once handed to a helper,
    or under the module the hook is called on, `self.starts[id(module)]`: each
    registration is handed its own module) is not a take: it overwrites what the
    previous call left,
    and so is any state the pre-hook resets unconditionally before changing it. A
    post-hook that makes the pre-hook's take itself too (both run one counting helper)
    repeats it rather than undoing it, unless it gives that take back itself later (it
    pushes and pops a marker of its own): that inner pair balances, and a release
    before it still undoes the pre-hook's take.
    Helpers defined in other files are not followed. State that lives for one call
    of a function that also removes the hooks in `finally` (or scopes them with
    `with`) is not flagged: a local `stack = []` of that function, or of a same-file
    helper's caller that passes its local in and removes the handles the helper
    returns (`hooklint.analysis.call_local`), or an object of a class of the file
    built there (`trace = Trace()`); the stale state dies with the call. It may be
    returned after that `finally` when its `try` has no handler: a raising forward
    ends the call.
    The same holds when that function (or one nested in it that registers the
    hooks) removes them outside `finally`: a raising forward then leaves the hooks
    on, and they alone still reach the stale state; that is one bug, HL004's.
    A forward hook registered in an `except TypeError:` handler (or one that
    catches everything) of a `try` that registers the same kind of hook with
    `always_call=True` is the fallback for a torch without the keyword: not flagged.

    ## Why is this bad?
    PyTorch skips plain forward hooks when `forward` raises. Then the pre-hook's
    change is never undone. This is not only an error path: non-reentrant activation
    checkpointing (`torch.utils.checkpoint(..., use_reentrant=False)`) stops
    recomputation early by raising through `forward` on purpose, every backward.
    bitsandbytes' 4-bit parametrization paired `P._cache_enabled += 1` with
    `P._cache_enabled -= 1` this way: the counter climbed every step and the
    dequantized weights stayed cached until the process ran out of memory.
    `Optimizer.step` runs its post-hooks only after the step returns, in the same way:
    a lock a step pre-hook takes stays taken after a step that raises (an
    out-of-memory error caught by a retrying loop, say).

    ## Example
    ```python
    import torch.nn.utils.parametrize as P

    def _enable(module, inputs):
        P._cache_enabled += 1

    def _disable(module, inputs, output):
        P._cache_enabled -= 1

    module.register_forward_pre_hook(_enable)
    module.register_forward_hook(_disable)
    ```

    ## Use instead
    ```python
    def _disable(module, inputs, output):
        P._cache_enabled = max(0, P._cache_enabled - 1)

    module.register_forward_pre_hook(_enable)
    module.register_forward_hook(_disable, always_call=True)
    ```
    The clamp matters: an `always_call` hook also runs when an earlier pre-hook
    raised, so its own pre-hook never ran; an unclamped counter would go to -1,
    which is truthy. `hooklint.runtime.hooks.paired_forward_hooks` is exact even
    for nested failures (a per-call token instead of a clamp).

    ## Fix safety
    Safe when the target torch is at least 2.1 (`always_call` appeared in 2.1);
    withheld otherwise. The fix adds `always_call=True` and clamps counter
    decrements in the post-hook at zero. A method-call pair (and a counter or stack
    released inside a helper) cannot be clamped: releasing what was never acquired
    raises (`stop()` on a stopped timer) or undoes someone else's take (`__exit__`
    pops another context). So the fix also makes the pre-hook mark the hooked module
    right after the statement that acquires (`module._<pre-hook>_acquired = True`),
    and runs the releasing statement of the post-hook only under that mark, clearing
    it: the post-hook undoes only what this call's pre-hook acquired. The fix is
    withheld, with the reason, when that cannot be done exactly (a lambda hook, a
    release spread over several statements, or a releasing statement whose value is
    used). Flags set back to `False` need no guard: lowering a lowered flag is
    harmless. Set and stack removals are left as they are (see HL005).

    Optimizer step hooks and full backward hooks get no fix: torch offers no
    `always_call` for them. Take and give back around the `step()` or `backward()` call
    (`try`/`finally`) instead, or make the pre-hook overwrite rather than take.

    ## Options
    `target-torch`: the fix is withheld below 2.1, where `always_call` does not exist.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    5 findings, 5 true positives, no false positive (100%), among them the
    bitsandbytes 4-bit cache leak this rule was written for.
    """

    code = "HL001"
    name = "post-hook-without-always-call"
    cleared_elsewhere = False  # the pair, its hooks and always_call are all in the seed
    fix_applicability = "safe"
    prefilter = (
        "register_forward_hook",
        "register_module_forward_hook",
        "register_step_post_hook",
        "register_optimizer_step_post_hook",
        "register_full_backward_hook",
    )

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        pre_hooks = [
            (r, hook_callable(facts, r)) for r in facts.registrations if r.api.kind in _PRE_OF.values()
        ]
        pre_hooks = [(r, c) for r, c in pre_hooks if c is not None]
        if not pre_hooks:
            return
        pre_hooks_on = HookedObjects(pre_hooks)
        for post in facts.registrations:
            if not _skipped_when_raising(post) or _fallback_for_old_torch(post, facts):
                continue
            post_hook = hook_callable(facts, post)
            if post_hook is None:
                continue
            for pre, pre_hook in pre_hooks_on.same_object(post):
                if pre.api.kind != _PRE_OF[post.api.kind]:
                    continue  # an optimizer's step hook and a module's forward hook are no pair
                pairs = undone(effects_of(facts, pre_hook), effects_of(facts, post_hook))
                if post.api.kind in _NO_ALWAYS_CALL:
                    pairs = [(acquire, release) for acquire, release in pairs if _outlasts_a_step(acquire)]
                if pairs and state_dies_with_call(facts, [pre, post], [a.key for a, _ in pairs]):
                    continue  # the stale state dies with the call that removes the hooks
                if pairs:
                    finding = self._finding(facts, context, pre_hook, post, post_hook, pairs)
                    yield with_places(
                        finding, facts, [e.node for pair in pairs for e in pair], "state change"
                    )
                    break

    def _finding(
        self, facts, context, pre: HookCallable, post: Registration, post_hook: HookCallable, pairs
    ) -> Finding:
        keys = ", ".join(sorted({_shown(acquire, release) for acquire, release in pairs}))
        if len(_message(post, keys)) > MESSAGE_LIMIT:  # one short line: the state alone, without how
            keys = ", ".join(sorted({f"`{release.key}`" for _, release in pairs}))
        message = _message(post, keys)
        if post.api.kind in _NO_ALWAYS_CALL:
            what, _, instead = _NO_ALWAYS_CALL[post.api.kind]
            return Finding(
                node=post.call, message=message, fix_withheld=f"{what} hooks have no `always_call`: {instead}"
            )
        edits = add_always_call(post)
        guarded = []
        for acquire, release in pairs:
            if release.op == "decrement" and release.direct:
                edits += clamp_decrement(facts, release)
            elif release.pair is not None or (not release.direct and release.op in _ASSUMING):
                guarded.append((acquire, release))
        withheld = None
        fix_message = "Add `always_call=True` and clamp the release at zero"
        if guarded and pre.body.alternatives:
            withheld = "each pre-hook a condition may pick would have to set the release's guard"
        elif guarded:
            guard, reason = acquired_flag_guard(
                facts, pre.body, post_hook.body, [a for a, _ in guarded], [r for _, r in guarded]
            )
            edits += guard
            withheld = f"the release cannot be guarded automatically: {reason}" if reason else None
            fix_message = "Add `always_call=True` and release only what this call's pre-hook acquired"
        if context.target_torch < ALWAYS_CALL_SINCE:
            withheld = (
                f"`always_call` needs torch >= {format_version(ALWAYS_CALL_SINCE)}, "
                f"target is {format_version(context.target_torch)}"
            )
        return Finding(
            node=post.call,
            message=message,
            fix_edits=edits,
            fix_message=fix_message,
            fix_withheld=withheld,
        )

    VALID = [
        # The pre-hook keys its entry by the module it is called on: a registration is
        # always handed its own module, so a skipped release leaves that module's one
        # entry, which its next forward overwrites.
        Valid(
            """
import time


class StepWatch:
    def __init__(self):
        self.opened = {}
        self.durations = []
        self.handles = []

    def watch(self, net):
        for layer in net.modules():
            self.handles.append(layer.register_forward_pre_hook(self._open))
            self.handles.append(layer.register_forward_hook(self._close))

    def _open(self, layer, inputs):
        self.opened[id(layer)] = time.monotonic()

    def _close(self, layer, inputs, output):
        began = self.opened.pop(id(layer), None)
        if began is not None:
            self.durations.append(time.monotonic() - began)

    def unwatch(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
"""
        ),
        # Each hook is bound to its layer's name by a lambda default: the pre-hook's
        # helper overwrites that one entry, so a skipped release leaves nothing the next
        # call does not overwrite.
        Valid(
            """
import time


class LayerClock:
    def __init__(self, model):
        self.model = model
        self.began = {}
        self.spent = {}
        self.handles = []

    def _begin(self, key):
        self.began[key] = time.perf_counter()

    def _end(self, key):
        if key in self.began:
            self.spent[key] = self.spent.get(key, 0.0) + time.perf_counter() - self.began.pop(key)

    def start(self):
        for name, layer in self.model.named_modules():
            self.handles.append(layer.register_forward_pre_hook(lambda m, a, k=name: self._begin(k)))
            self.handles.append(layer.register_forward_hook(lambda m, a, o, k=name: self._end(k)))

    def stop(self):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
"""
        ),
        # The stack lives on an object built for this call; the hooks come off in a
        # `finally` with no handler, so a raising forward ends the call too, and the
        # result is read only after a forward that returned.
        Valid(
            """
class Trace:
    def __init__(self):
        self.open = []
        self.deepest = 0


def deepest_nesting(net, x):
    trace = Trace()
    handles = []

    def arrive(module, args):
        trace.open.append(module)
        trace.deepest = max(trace.deepest, len(trace.open))

    def depart(module, args, output):
        trace.open.pop()

    for part in net.modules():
        handles.append(part.register_forward_pre_hook(arrive))
        handles.append(part.register_forward_hook(depart))
    try:
        net(x)
    finally:
        for handle in handles:
            handle.remove()
    return trace.deepest
"""
        ),
        # Both hooks run one helper: the post-hook repeats the pre-hook's count (and its
        # reset), it does not give anything back.
        Valid(
            """
class Tally:
    def __init__(self):
        self.items = 0

    def _add(self, args):
        if not args:
            self.items = None
            return
        if self.items is not None:
            self.items += len(args[0])

    def install(self, net):
        net.register_forward_pre_hook(self._before)
        net.register_forward_hook(self._after)

    def _before(self, module, args):
        self._add(args)

    def _after(self, module, args, output):
        self._add(args)
"""
        ),
        # A backward pair around a flag: a backward that raises leaves it set, and the
        # next backward's hooks set and clear it again.
        Valid(
            """
class GradWatch:
    def __init__(self, block):
        self.in_backward = False
        block.register_full_backward_pre_hook(self._start)
        block.register_full_backward_hook(self._stop)

    def _start(self, module, grad_output):
        self.in_backward = True

    def _stop(self, module, grad_input, grad_output):
        self.in_backward = False
"""
        ),
        # A step pre-hook raises a flag and stores a start time under the optimizer's
        # key; a step that raises leaves both, and the next step's hooks set and clear
        # them again: nothing stays wrong.
        Valid(
            """
import time

_started = {}


class StepWatch:
    def __init__(self, optimizer):
        self.in_step = False
        self.spans = []
        optimizer.register_step_pre_hook(self._begin)
        optimizer.register_step_post_hook(self._end)

    def _begin(self, optimizer, args, kwargs):
        self.in_step = True
        _started[id(optimizer)] = time.perf_counter()

    def _end(self, optimizer, args, kwargs):
        self.spans.append(time.perf_counter() - _started.pop(id(optimizer)))
        self.in_step = False
"""
        ),
        # An optimizer's step pre-hook that overwrites a timestamp on every step: a step
        # that raises leaves nothing the next step does not write again.
        Valid(
            """
import time


class StepTimer:
    def __init__(self, optimizer):
        self.spans = []
        optimizer.register_step_pre_hook(self._mark)
        optimizer.register_step_post_hook(self._record)

    def _mark(self, optimizer, args, kwargs):
        self.began = time.perf_counter()

    def _record(self, optimizer, args, kwargs):
        self.spans.append(time.perf_counter() - self.began)
"""
        ),
        # The post-hook sets a setting the pre-hook never set aside: nothing to give back.
        Valid(
            """
import torch


def _note(module, inputs):
    module.calls = getattr(module, "calls", 0)


def _threads(module, inputs, output):
    torch.set_num_threads(module.threads)


def tune(block):
    block.register_forward_pre_hook(_note)
    block.register_forward_hook(_threads)
"""
        ),
        # The same switch with `always_call=True`: the dtype comes back on every path.
        Valid(
            """
import torch


def _wide(module, inputs):
    module._dtype_before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)


def _narrow(module, inputs, output):
    torch.set_default_dtype(module._dtype_before)


def widen(block):
    block.register_forward_pre_hook(_wide)
    block.register_forward_hook(_narrow, always_call=True)
"""
        ),
        Valid(
            """
import torch.nn.utils.parametrize as P

def _enable(module, inputs):
    P._cache_enabled += 1

def _disable(module, inputs, output):
    P._cache_enabled = max(0, P._cache_enabled - 1)

def install(module):
    module.register_forward_pre_hook(_enable)
    module.register_forward_hook(_disable, always_call=True)
"""
        ),
        # A **kwargs splat may carry always_call: hooklint cannot see into it.
        Valid(
            """
def install(module, options):
    module.register_forward_pre_hook(lambda m, i: STACK.append(m))
    module.register_forward_hook(lambda m, i, o: STACK.pop(), **options)
"""
        ),
        # The two hooks share no state: nothing to undo.
        Valid(
            """
class Timer:
    def start(self, module, inputs):
        self.started += 1

    def stop(self, module, inputs, output):
        self.outputs.append(output.shape)

    def attach(self, model):
        model.register_forward_pre_hook(self.start)
        model.register_forward_hook(self.stop)
"""
        ),
        # Pre- and post-hook on different modules are not a pair.
        Valid(
            """
depth = 0

def enter(module, args):
    global depth
    depth += 1

def leave(module, args, output):
    global depth
    depth -= 1

encoder.register_forward_pre_hook(enter)
decoder.register_forward_hook(leave)
"""
        ),
        # A pre-hook that overwrites a timestamp on every call: nothing accumulates.
        Valid(
            """
class StepClock:
    def _mark(self, module, args):
        self.began = self.clock()

    def _record(self, module, args, output):
        self.spans.append((self.began, self.clock()))
        self.began = None

    def attach(self, model):
        model.register_forward_pre_hook(self._mark)
        model.register_forward_hook(self._record)
"""
        ),
        # Two different keys of one dict: the pre-hook sets one, the post-hook clears another.
        Valid(
            """
def once(model):
    flags = {"waiting": True, "shrunk": False}

    def shrink(module, args):
        flags["shrunk"] = True

    def grow(module, args, output):
        flags["waiting"] = False

    model.register_forward_pre_hook(shrink)
    model.register_forward_hook(grow)
"""
        ),
        # The pre-hook resets its flags before setting them, on every call.
        Valid(
            """
class Packer:
    def _reset(self, module, args):
        self.pack = False
        if args:
            self.pack = True

    def _unpack(self, module, args, output):
        self.pack = False

    def attach(self, model):
        model.register_forward_pre_hook(self._reset)
        model.register_forward_hook(self._unpack)
"""
        ),
        # Helpers from another file are not followed: no evidence here.
        Valid(
            """
from .regions import open_region, close_region

def attach(model):
    model.register_forward_pre_hook(lambda m, a: open_region(m))
    model.register_forward_hook(lambda m, a, o: close_region(m))
"""
        ),
        # The stack is a local of one call, which removes the hooks in `finally`: when
        # forward raises, the stale entries die with the call (a nested helper registers).
        Valid(
            """
def layer_paths(model, x):
    handles = []
    path = []

    def attach(module, name):
        def enter(m, args):
            path.append(name)

        def leave(m, args, output):
            path.pop()

        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))

    try:
        for name, module in model.named_children():
            attach(module, name)
        return model(x)
    finally:
        for h in handles:
            h.remove()
"""
        ),
        # The stack lives for one call of `depths`; the context manager nested in it
        # removes the hooks after `yield`, outside `finally` (HL004 reports that): a
        # raising forward leaves hooks that alone still reach the stale stack.
        Valid(
            """
from contextlib import contextmanager


def depths(model, x):
    stack = []
    seen = []

    def push(m, args):
        stack.append(m)

    def pop(m, args, output):
        stack.pop()
        seen.append(len(stack))

    @contextmanager
    def hooked(root):
        handles = [root.register_forward_pre_hook(push), root.register_forward_hook(pop)]
        yield
        for h in handles:
            h.remove()

    with hooked(model):
        model(x)
    return seen
"""
        ),
        # The post-hook asks for `always_call`; the bare registration runs only on a
        # torch that rejects the keyword, where the fix would fail the same way.
        Valid(
            """
ACTIVE = set()


def track(block, key):
    block.register_forward_pre_hook(lambda m, a: ACTIVE.add(key))
    try:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key), always_call=True)
    except TypeError:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key))
"""
        ),
        # The same local stack, the hooks removed after forward outside `finally`: a
        # forward that raises leaves them registered, and they alone still reach the
        # stale stack. One bug: HL004 reports the removal; not this rule.
        Valid(
            """
def layer_paths(model, x):
    handles = []
    path = []

    def attach(module, name):
        def enter(m, args):
            path.append(name)

        def leave(m, args, output):
            path.pop()

        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))

    for name, module in model.named_children():
        attach(module, name)
    out = model(x)
    for h in handles:
        h.remove()
    return out
"""
        ),
        # A helper counts into the caller's local and hands the handles back; every
        # caller removes them in `finally`.
        Valid(
            """
def _count_depth(model, level):
    handles = []
    for module in model.modules():
        def down(m, args):
            level[0] += 1

        def up(m, args, output):
            level[0] -= 1

        handles.append(module.register_forward_pre_hook(down))
        handles.append(module.register_forward_hook(up))
    return handles

def deepest(model, x):
    level = [0]
    handles = []
    try:
        handles = _count_depth(model, level)
        return model(x)
    finally:
        for h in handles:
            h.remove()
"""
        ),
        # The setter is given the same value by both hooks, or a value it cannot
        # read: nothing is taken that the post-hook gives back.
        Valid(
            """
_MODE = {"eval": False}


def _set_eval(flag=True):
    _MODE["eval"] = flag


def _before(module, args):
    _set_eval(module.training)


def _after(module, args, output):
    _set_eval()


def watch(model):
    model.register_forward_pre_hook(_before)
    model.register_forward_hook(_after)
"""
        ),
        # Static methods handed over through their class, the post-hook with always_call.
        Valid(
            """
import torch


class LowPrecisionBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_pre_hook(LowPrecisionBlock._relax)
        self.register_forward_hook(LowPrecisionBlock._restore, always_call=True)

    @staticmethod
    def _relax(module, args):
        torch.backends.cudnn.allow_tf32 = True

    @staticmethod
    def _restore(module, args, output):
        torch.backends.cudnn.allow_tf32 = False
"""
        ),
        # The pre-hook only notes the value (it changes nothing); the post-hook's copy
        # back is a no-op whether or not it runs.
        Valid(
            """
def _note(module, inputs):
    module._p_seen = module.p


def _put_back(module, inputs, output):
    module.p = module._p_seen


def watch(model):
    model.register_forward_pre_hook(_note)
    model.register_forward_hook(_put_back)
"""
        ),
        # Each hook builds its own registry and asks it for a stack: two objects, not
        # one pushed and popped.
        Valid(
            """
import profiling


def _open_span(module, inputs):
    registry = profiling.Registry()
    registry.get_stack().push(module)


def _close_span(module, inputs, output):
    registry = profiling.Registry()
    registry.get_stack().pop()


def instrument(model):
    model.register_forward_pre_hook(_open_span)
    model.register_forward_hook(_close_span)
"""
        ),
        # Each hook's factory fixes its key: the pre-hook overwrites one slot per layer, as
        # `self.start = now()` overwrites one attribute; a skipped post-hook leaves one stale
        # entry that the next call replaces.
        Valid(
            """
import time


class LayerTimer:
    def __init__(self):
        self.started = {}
        self.totals = {}
        self.handles = []

    def attach(self, model):
        def before(name):
            def hook(module, args):
                self.started[name] = time.perf_counter()

            return hook

        def after(name):
            def hook(module, args, output):
                self.totals[name] = time.perf_counter() - self.started[name]
                del self.started[name]

            return hook

        for name, layer in model.named_children():
            self.handles.append(layer.register_forward_pre_hook(before(name)))
            self.handles.append(layer.register_forward_hook(after(name)))
"""
        ),
        # State bound with another name in one tuple assignment is still the call's own.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


def deepest_paths(model, x):
    path, deepest = [], set()

    def enter(module, args):
        path.append(type(module).__name__)
        deepest.add(tuple(path))

    def leave(module, args, output):
        path.pop()

    handles = [register_module_forward_pre_hook(enter), register_module_forward_hook(leave)]
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return deepest
"""
        ),
    ]
    INVALID = [
        # Keyed by the batch the forward gets, not by the module: each call adds an
        # entry of its own, and a forward that raises leaves its entry (and the batch it
        # names) behind for good.
        Invalid(
            """
class BatchLog:
    def __init__(self):
        self.open = {}
        self.handles = []

    def watch(self, net):
        self.handles.append(net.register_forward_pre_hook(self._enter))
        self.handles.append(net.register_forward_hook(self._leave))

    def _enter(self, net, inputs):
        self.open[id(inputs[0])] = inputs[0]

    def _leave(self, net, inputs, output):
        self.open.pop(id(inputs[0]), None)
""",
            line=8,
            expected="""
class BatchLog:
    def __init__(self):
        self.open = {}
        self.handles = []

    def watch(self, net):
        self.handles.append(net.register_forward_pre_hook(self._enter))
        self.handles.append(net.register_forward_hook(self._leave, always_call=True))

    def _enter(self, net, inputs):
        self.open[id(inputs[0])] = inputs[0]

    def _leave(self, net, inputs, output):
        self.open.pop(id(inputs[0]), None)
""",
        ),
        # The layer's index reaches the loading helper from the factory's closure: the
        # entry it fills holds the layer's copies on the device, and only the post-hook
        # lets them go.
        Invalid(
            """
class Streamer:
    def __init__(self, layers, host_copies):
        self.host = host_copies
        self.live = {}
        for i, layer in enumerate(layers):
            layer.register_forward_pre_hook(self._make_pre(i))
            layer.register_forward_hook(self._make_post(i))

    def _load(self, i):
        self.live[i] = [t.to("cuda", non_blocking=True) for t in self.host[i]]

    def _make_pre(self, i):
        def pre(module, args):
            self._load(i)
        return pre

    def _make_post(self, i):
        def post(module, args, output):
            self.live.pop(i, None)
        return post
""",
            line=7,
            expected="""
class Streamer:
    def __init__(self, layers, host_copies):
        self.host = host_copies
        self.live = {}
        for i, layer in enumerate(layers):
            layer.register_forward_pre_hook(self._make_pre(i))
            layer.register_forward_hook(self._make_post(i), always_call=True)

    def _load(self, i):
        self.live[i] = [t.to("cuda", non_blocking=True) for t in self.host[i]]

    def _make_pre(self, i):
        def pre(module, args):
            self._load(i)
        return pre

    def _make_post(self, i):
        def post(module, args, output):
            self.live.pop(i, None)
        return post
""",
        ),
        # The post-hook ends the pre-hook's range, then opens and ends one of its own
        # through the same helper: that inner push and pop balance each other, and the
        # first pop still undoes the pre-hook's push.
        Invalid(
            """
import torch.cuda.nvtx as nvtx


class LayerRanges:
    def __init__(self, model):
        self.labels = {m: n for n, m in model.named_modules()}
        for module in self.labels:
            module.register_forward_pre_hook(self._enter)
            module.register_forward_hook(self._leave)

    def _open(self, label):
        nvtx.range_push(label)

    def _enter(self, module, args):
        self._open(self.labels[module])

    def _leave(self, module, args, output):
        nvtx.range_pop()
        self._open(self.labels[module] + "/output")
        nvtx.range_pop()
""",
            line=9,
            expected="""
import torch.cuda.nvtx as nvtx


class LayerRanges:
    def __init__(self, model):
        self.labels = {m: n for n, m in model.named_modules()}
        for module in self.labels:
            module.register_forward_pre_hook(self._enter)
            module.register_forward_hook(self._leave, always_call=True)

    def _open(self, label):
        nvtx.range_push(label)

    def _enter(self, module, args):
        self._open(self.labels[module])
        module._enter_acquired = True

    def _leave(self, module, args, output):
        if getattr(module, '_enter_acquired', False):
            module._enter_acquired = False
            nvtx.range_pop()
        self._open(self.labels[module] + "/output")
        nvtx.range_pop()
""",
        ),
        # The same, but the forward's error is swallowed and the trace handed back:
        # the caller gets a stack still holding the modules whose forward raised.
        Invalid(
            """
class Trace:
    def __init__(self):
        self.open = []
        self.deepest = 0


def deepest_nesting(net, x):
    trace = Trace()
    handles = []

    def arrive(module, args):
        trace.open.append(module)
        trace.deepest = max(trace.deepest, len(trace.open))

    def depart(module, args, output):
        trace.open.pop()

    for part in net.modules():
        handles.append(part.register_forward_pre_hook(arrive))
        handles.append(part.register_forward_hook(depart))
    try:
        net(x)
    except RuntimeError:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
""",
            line=20,
            expected="""
class Trace:
    def __init__(self):
        self.open = []
        self.deepest = 0


def deepest_nesting(net, x):
    trace = Trace()
    handles = []

    def arrive(module, args):
        trace.open.append(module)
        trace.deepest = max(trace.deepest, len(trace.open))

    def depart(module, args, output):
        trace.open.pop()

    for part in net.modules():
        handles.append(part.register_forward_pre_hook(arrive))
        handles.append(part.register_forward_hook(depart, always_call=True))
    try:
        net(x)
    except RuntimeError:
        pass
    finally:
        for handle in handles:
            handle.remove()
    return trace
""",
        ),
        # The same pair on a stack that outlives the call (`self.path`).
        Invalid(
            """
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


def deepest_paths(self, model, x):
    path, deepest = self.path, set()

    def enter(module, args):
        path.append(type(module).__name__)
        deepest.add(tuple(path))

    def leave(module, args, output):
        path.pop()

    handles = [register_module_forward_pre_hook(enter), register_module_forward_hook(leave)]
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return deepest
""",
            expected="""
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook


def deepest_paths(self, model, x):
    path, deepest = self.path, set()

    def enter(module, args):
        path.append(type(module).__name__)
        deepest.add(tuple(path))

    def leave(module, args, output):
        path.pop()

    handles = [register_module_forward_pre_hook(enter), register_module_forward_hook(leave, always_call=True)]
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return deepest
""",
            line=14,
            message="post-hook undoes `path` but lacks `always_call=True`",
        ),
        # A full backward pre-hook pushes onto a stack that the full backward hook pops:
        # a backward that raises in between (out of memory) leaves the entry for good.
        Invalid(
            """
_open_ranges = []


def _enter(module, grad_output):
    _open_ranges.append(type(module).__name__)


def _leave(module, grad_input, grad_output):
    _open_ranges.pop()


def trace_backward(block):
    block.register_full_backward_pre_hook(_enter)
    block.register_full_backward_hook(_leave)
""",
            line=14,
            message="backward post-hook undoes `_open_ranges` but is skipped when backward raises",
        ),
        # An optimizer's step pre-hook takes a lock that its step post-hook gives back:
        # torch skips step post-hooks when `step()` raises, and they have no
        # `always_call`, so a failed step leaves the lock held and the next one waits for
        # ever.  No fix: take and give back around the `step()` call instead.
        Invalid(
            """
import threading


class StepGuard:
    def __init__(self, optimizer):
        self._lock = threading.Lock()
        self._handles = [
            optimizer.register_step_pre_hook(self._take),
            optimizer.register_step_post_hook(self._give_back),
        ]

    def _take(self, optimizer, args, kwargs):
        self._lock.acquire()

    def _give_back(self, optimizer, args, kwargs):
        self._lock.release()
""",
            line=9,
            message="step post-hook undoes `self._lock` (`acquire`/`release`) but is skipped when `step()` raises",
        ),
        # The process-wide pair, on every optimizer: reads of a store are shut off for
        # the step (`disallow_*`/`allow_*` is a method-call pair) and stay shut after a
        # step that raises.
        Invalid(
            """
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook


def guard_checkpoints(store):
    def before(optimizer, args, kwargs):
        store.disallow_reads()

    def after(optimizer, args, kwargs):
        store.allow_reads()

    return (
        register_optimizer_step_pre_hook(before),
        register_optimizer_step_post_hook(after),
    )
""",
            line=13,
            message="step post-hook undoes `store` (`disallow`/`allow`)",
        ),
        # The pre-hook switches the process's default dtype (its getter's value set aside
        # on the module), the post-hook switches it back: a forward that raises leaves
        # every later tensor in float64.
        Invalid(
            """
import torch


def _wide(module, inputs):
    module._dtype_before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)


def _narrow(module, inputs, output):
    torch.set_default_dtype(module._dtype_before)


def widen(block):
    block.register_forward_pre_hook(_wide)
    block.register_forward_hook(_narrow)
""",
            expected="""
import torch


def _wide(module, inputs):
    module._dtype_before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    module._wide_acquired = True


def _narrow(module, inputs, output):
    if getattr(module, '_wide_acquired', False):
        module._wide_acquired = False
        torch.set_default_dtype(module._dtype_before)


def widen(block):
    block.register_forward_pre_hook(_wide)
    block.register_forward_hook(_narrow, always_call=True)
""",
            line=15,
            message="post-hook undoes `torch.default_dtype` but lacks `always_call=True`",
        ),
        # The pre-hook is one of two, picked by a flag; either enters a scope that only
        # the post-hook leaves.  No fix: the release's guard would have to be set by
        # each choice.
        Invalid(
            """
_open = {}


def _gather(module, args):
    scope = GatheredWeights(module)
    scope.__enter__()
    _open[module] = scope


def _stand_in(module, args):
    scope = StandInWeights(module)
    scope.__enter__()
    _open[module] = scope


def _leave(module, args, output):
    scope = _open.pop(module, None)
    if scope is not None:
        scope.__exit__(None, None, None)


def materialise(model, light):
    enter = _stand_in if light else _gather
    handles = []
    for sub in model.modules():
        handles.append(sub.register_forward_pre_hook(enter))
        handles.append(sub.register_forward_hook(_leave))
    return handles
""",
            line=27,
            message="`__enter__`/`__exit__`",
        ),
        # The bitsandbytes shape (before PR #1999).
        Invalid(
            """
from functools import partial
import torch.nn.utils.parametrize as P

def _disable_parametrization_cache(module, inputs, output):
    P._cache_enabled -= 1
    if not P._cache_enabled:
        P._cache = {}

def _enable_parametrization_cache(module, inputs):
    P._cache_enabled += 1

def _register_parametrization_hooks(module, param_name):
    module.register_forward_pre_hook(_enable_parametrization_cache)
    module.register_forward_hook(_disable_parametrization_cache)
""",
            expected="""
from functools import partial
import torch.nn.utils.parametrize as P

def _disable_parametrization_cache(module, inputs, output):
    P._cache_enabled = max(0, P._cache_enabled - 1)
    if not P._cache_enabled:
        P._cache = {}

def _enable_parametrization_cache(module, inputs):
    P._cache_enabled += 1

def _register_parametrization_hooks(module, param_name):
    module.register_forward_pre_hook(_enable_parametrization_cache)
    module.register_forward_hook(_disable_parametrization_cache, always_call=True)
""",
            line=14,
            message="torch.nn.utils.parametrize._cache_enabled",
        ),
        # Methods of a profiler: a stack pushed and popped through `self`.
        Invalid(
            """
class ModuleTracer:
    def __init__(self):
        self.stack = []

    def _push(self, module, args):
        self.stack.append(type(module).__name__)

    def _pop(self, module, args, output):
        self.stack.pop()

    def attach(self, model):
        for sub in model.modules():
            sub.register_forward_pre_hook(self._push)
            sub.register_forward_hook(self._pop)
""",
            expected="""
class ModuleTracer:
    def __init__(self):
        self.stack = []

    def _push(self, module, args):
        self.stack.append(type(module).__name__)

    def _pop(self, module, args, output):
        self.stack.pop()

    def attach(self, model):
        for sub in model.modules():
            sub.register_forward_pre_hook(self._push)
            sub.register_forward_hook(self._pop, always_call=True)
""",
            line=14,
            message="self.stack",
        ),
        # Process-wide pair through import aliases, a flag set and reset on the module.
        Invalid(
            """
from torch.nn.modules.module import (
    register_module_forward_hook as add_post,
    register_module_forward_pre_hook as add_pre,
)

def mark(module, args):
    module._active = True

def unmark(module, args, output):
    module._active = False

add_pre(mark)
add_post(unmark)
""",
            expected="""
from torch.nn.modules.module import (
    register_module_forward_hook as add_post,
    register_module_forward_pre_hook as add_pre,
)

def mark(module, args):
    module._active = True

def unmark(module, args, output):
    module._active = False

add_pre(mark)
add_post(unmark, always_call=True)
""",
            line=13,
            message="<module>._active",
        ),
        # Hooks built by a factory closure and functools.partial; target torch 2.0: fix withheld.
        Invalid(
            """
import functools

ACTIVE = set()

def make_enter(tag):
    def enter(module, args):
        ACTIVE.add(tag)
    return enter

def leave(tag, module, args, output):
    ACTIVE.discard(tag)

def install(layer, tag):
    layer.register_forward_pre_hook(make_enter(tag))
    layer.register_forward_hook(functools.partial(leave, tag))
""",
            expected=None,
            line=15,
            message="`ACTIVE`",
            options={"target_torch": (2, 0)},
        ),
        # A method-call pair: the clock is started before forward and stopped after it.
        Invalid(
            """
class ForwardTimer:
    def _begin(self, module, args):
        self.clock.start()

    def _finish(self, module, args, output):
        self.clock.stop()
        self.total += self.clock.elapsed()

    def attach(self, model):
        model.register_forward_pre_hook(self._begin)
        model.register_forward_hook(self._finish)
""",
            expected="""
class ForwardTimer:
    def _begin(self, module, args):
        self.clock.start()
        module._begin_acquired = True

    def _finish(self, module, args, output):
        if getattr(module, '_begin_acquired', False):
            module._begin_acquired = False
            self.clock.stop()
        self.total += self.clock.elapsed()

    def attach(self, model):
        model.register_forward_pre_hook(self._begin)
        model.register_forward_hook(self._finish, always_call=True)
""",
            line=11,
            message="`self.clock` (`start`/`stop`)",
        ),
        # One call deep: a helper method pushes a global stack and fetches weights.
        Invalid(
            """
ACTIVE = []


class Offloader:
    def _bring_in(self, layer):
        global ACTIVE
        ACTIVE.append(layer)
        self.store.fetch_weights(layer)

    def _send_back(self, layer):
        self.store.release_weights(layer)

    def install(self, layer):
        def before(module, args):
            self._bring_in(module)

        def after(module, args, output):
            ACTIVE.pop()
            self._send_back(module)

        layer.register_forward_pre_hook(before)
        layer.register_forward_hook(after)
""",
            expected="""
ACTIVE = []


class Offloader:
    def _bring_in(self, layer):
        global ACTIVE
        ACTIVE.append(layer)
        self.store.fetch_weights(layer)

    def _send_back(self, layer):
        self.store.release_weights(layer)

    def install(self, layer):
        def before(module, args):
            self._bring_in(module)
            module._before_acquired = True

        def after(module, args, output):
            ACTIVE.pop()
            if getattr(module, '_before_acquired', False):
                module._before_acquired = False
                self._send_back(module)

        layer.register_forward_pre_hook(before)
        layer.register_forward_hook(after, always_call=True)
""",
            line=22,
            message="`ACTIVE`",
        ),
        # Prologue/epilogue hooks from two methods; a factory closure starts and stops timers.
        Invalid(
            """
class Engine:
    def _phase(self, name):
        def run():
            for timer in self.timer_names:
                self.timers(timer).start() if name == "start" else self.timers(timer).stop()
        return run

    def _prologue(self):
        for sub in self.model.modules():
            sub.in_forward = True
        self._phase("start")()

    def _epilogue(self):
        for sub in self.model.modules():
            sub.in_forward = False
        self._phase("stop")()

    def _add_pre_hook(self):
        def pre(module, args):
            return self._prologue()
        return self.model.register_forward_pre_hook(pre)

    def _add_post_hook(self):
        def post(module, args, output):
            self._epilogue()
        return self.model.register_forward_hook(post)
""",
            expected="""
class Engine:
    def _phase(self, name):
        def run():
            for timer in self.timer_names:
                self.timers(timer).start() if name == "start" else self.timers(timer).stop()
        return run

    def _prologue(self):
        for sub in self.model.modules():
            sub.in_forward = True
        self._phase("start")()

    def _epilogue(self):
        for sub in self.model.modules():
            sub.in_forward = False
        self._phase("stop")()

    def _add_pre_hook(self):
        def pre(module, args):
            result = self._prologue()
            module._pre_acquired = True
            return result
        return self.model.register_forward_pre_hook(pre)

    def _add_post_hook(self):
        def post(module, args, output):
            if getattr(module, '_pre_acquired', False):
                module._pre_acquired = False
                self._epilogue()
        return self.model.register_forward_hook(post, always_call=True)
""",
            line=26,
            message="`self.timers(timer)` (`start`/`stop`)",
        ),
        # Callable objects of this file, one held in a dict, one inside functools.partial.
        Invalid(
            """
import functools

DEPTH = {"n": 0}


def _enter(tag):
    DEPTH["n"] += 1


def _leave(tag):
    DEPTH["n"] -= 1


class Enter:
    def __call__(self, module, args):
        _enter(type(module).__name__)


class Leave:
    def __call__(self, tag, module, args, output):
        _leave(tag)


def install(model):
    hooks = {"pre": Enter()}
    model.register_forward_pre_hook(hooks["pre"])
    model.register_forward_hook(functools.partial(Leave(), "block"))
""",
            expected="""
import functools

DEPTH = {"n": 0}


def _enter(tag):
    DEPTH["n"] += 1


def _leave(tag):
    DEPTH["n"] -= 1


class Enter:
    def __call__(self, module, args):
        _enter(type(module).__name__)
        module._enter_acquired = True


class Leave:
    def __call__(self, tag, module, args, output):
        if getattr(module, '_enter_acquired', False):
            module._enter_acquired = False
            _leave(tag)


def install(model):
    hooks = {"pre": Enter()}
    model.register_forward_pre_hook(hooks["pre"])
    model.register_forward_hook(functools.partial(Leave(), "block"), always_call=True)
""",
            line=27,
            message="`DEPTH['n']`",
        ),
        # Lambdas whose bodies call same-file helpers that fill and empty a set.
        Invalid(
            """
def _open(names, module):
    names.add(id(module))


def _close(names, module):
    names.discard(id(module))


def watch(model, names):
    model.register_forward_pre_hook(lambda m, a: _open(names, m))
    model.register_forward_hook(lambda m, a, o: _close(names, m))
""",
            expected="""
def _open(names, module):
    names.add(id(module))


def _close(names, module):
    names.discard(id(module))


def watch(model, names):
    model.register_forward_pre_hook(lambda m, a: _open(names, m))
    model.register_forward_hook(lambda m, a, o: _close(names, m), always_call=True)
""",
            line=11,
            message="`names`",
        ),
        # A handler for another error is no keyword fallback: the bare registration
        # runs whenever the first one fails for that reason.
        Invalid(
            """
ACTIVE = set()


def track(block, key):
    block.register_forward_pre_hook(lambda m, a: ACTIVE.add(key))
    try:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key), always_call=True)
    except RuntimeError:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key))
""",
            expected="""
ACTIVE = set()


def track(block, key):
    block.register_forward_pre_hook(lambda m, a: ACTIVE.add(key))
    try:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key), always_call=True)
    except RuntimeError:
        block.register_forward_hook(lambda m, a, o: ACTIVE.discard(key), always_call=True)
""",
            line=9,
            message="undoes `ACTIVE`",
        ),
        # A local name for state that outlives the call (`self.depth`) is not call-local.
        Invalid(
            """
class Tracer:
    def run(self, model, x):
        depth = self.depth
        handles = []
        for module in model.children():
            handles.append(module.register_forward_pre_hook(lambda m, a: depth.append(m)))
            handles.append(module.register_forward_hook(lambda m, a, o: depth.pop()))
        try:
            return model(x)
        finally:
            for h in handles:
                h.remove()
""",
            expected="""
class Tracer:
    def run(self, model, x):
        depth = self.depth
        handles = []
        for module in model.children():
            handles.append(module.register_forward_pre_hook(lambda m, a: depth.append(m)))
            handles.append(module.register_forward_hook(lambda m, a, o: depth.pop(), always_call=True))
        try:
            return model(x)
        finally:
            for h in handles:
                h.remove()
""",
            line=7,
            message="undoes `depth`",
        ),
        # One setter for both sides: the pre-hook passes `True`, the post-hook `False`.
        Invalid(
            """
_TRACING = {"active": False}


def _set_tracing(active):
    _TRACING["active"] = active


def _begin(module, args):
    _set_tracing(True)


def _end(module, args, output):
    _set_tracing(False)


def trace(model):
    model.register_forward_pre_hook(_begin)
    model.register_forward_hook(_end)
""",
            expected="""
_TRACING = {"active": False}


def _set_tracing(active):
    _TRACING["active"] = active


def _begin(module, args):
    _set_tracing(True)


def _end(module, args, output):
    _set_tracing(False)


def trace(model):
    model.register_forward_pre_hook(_begin)
    model.register_forward_hook(_end, always_call=True)
""",
            line=18,
            message="`_TRACING['active']`",
        ),
        # Static methods handed over through their class.
        Invalid(
            """
import torch


class LowPrecisionBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_pre_hook(LowPrecisionBlock._relax)
        self.register_forward_hook(LowPrecisionBlock._restore)

    @staticmethod
    def _relax(module, args):
        torch.backends.cudnn.allow_tf32 = True

    @staticmethod
    def _restore(module, args, output):
        torch.backends.cudnn.allow_tf32 = False
""",
            expected="""
import torch


class LowPrecisionBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_forward_pre_hook(LowPrecisionBlock._relax)
        self.register_forward_hook(LowPrecisionBlock._restore, always_call=True)

    @staticmethod
    def _relax(module, args):
        torch.backends.cudnn.allow_tf32 = True

    @staticmethod
    def _restore(module, args, output):
        torch.backends.cudnn.allow_tf32 = False
""",
            line=8,
            message="`torch.backends.cudnn.allow_tf32`",
        ),
        # A value set aside in a backup and overwritten by the pre-hook, written back
        # by the post-hook: a failed forward leaves the override in place for good.
        Invalid(
            """
def _no_dropout(module, inputs):
    module._p_before = module.p
    module.p = 0.0


def _dropout_back(module, inputs, output):
    module.p = module._p_before


def freeze_dropout(model):
    for layer in model.modules():
        if hasattr(layer, "p"):
            layer.register_forward_pre_hook(_no_dropout)
            layer.register_forward_hook(_dropout_back)
""",
            expected="""
def _no_dropout(module, inputs):
    module._p_before = module.p
    module.p = 0.0
    module._no_dropout_acquired = True


def _dropout_back(module, inputs, output):
    if getattr(module, '_no_dropout_acquired', False):
        module._no_dropout_acquired = False
        module.p = module._p_before


def freeze_dropout(model):
    for layer in model.modules():
        if hasattr(layer, "p"):
            layer.register_forward_pre_hook(_no_dropout)
            layer.register_forward_hook(_dropout_back, always_call=True)
""",
            line=14,
            message="set aside in `<module>._p_before`",
        ),
        # Both hooks reach the process's one tracer through an imported getter (a
        # stack: the fix leaves its pop to HL005, as for any stack).
        Invalid(
            """
import profiling


def _open_span(module, inputs):
    tracer = profiling.get_active_tracer()
    tracer.push(type(module).__name__)


def _close_span(module, inputs, output):
    profiling.get_active_tracer().pop()


def instrument(model):
    for layer in model.modules():
        layer.register_forward_pre_hook(_open_span)
        layer.register_forward_hook(_close_span)
""",
            expected="""
import profiling


def _open_span(module, inputs):
    tracer = profiling.get_active_tracer()
    tracer.push(type(module).__name__)


def _close_span(module, inputs, output):
    profiling.get_active_tracer().pop()


def instrument(model):
    for layer in model.modules():
        layer.register_forward_pre_hook(_open_span)
        layer.register_forward_hook(_close_span, always_call=True)
""",
            line=16,
            message="undoes `profiling.get_active_tracer()`",
        ),
        # The same timer pushing onto a list per layer: a skipped post-hook leaves an
        # entry behind on every failed call, and later calls pop the stale ones.
        Invalid(
            """
import time
from collections import defaultdict


class LayerTimer:
    def __init__(self):
        self.started = defaultdict(list)
        self.totals = {}
        self.handles = []

    def attach(self, model):
        def before(name):
            def hook(module, args):
                self.started[name].append(time.perf_counter())

            return hook

        def after(name):
            def hook(module, args, output):
                self.totals[name] = time.perf_counter() - self.started[name].pop()

            return hook

        for name, layer in model.named_children():
            self.handles.append(layer.register_forward_pre_hook(before(name)))
            self.handles.append(layer.register_forward_hook(after(name)))
""",
            expected="""
import time
from collections import defaultdict


class LayerTimer:
    def __init__(self):
        self.started = defaultdict(list)
        self.totals = {}
        self.handles = []

    def attach(self, model):
        def before(name):
            def hook(module, args):
                self.started[name].append(time.perf_counter())

            return hook

        def after(name):
            def hook(module, args, output):
                self.totals[name] = time.perf_counter() - self.started[name].pop()

            return hook

        for name, layer in model.named_children():
            self.handles.append(layer.register_forward_pre_hook(before(name)))
            self.handles.append(layer.register_forward_hook(after(name), always_call=True))
""",
            line=26,
            message="post-hook undoes `self.started[]`",
        ),
    ]


#: The post-hook kinds torch skips when what they follow raises, and their pre-hook kinds.
_PRE_OF = {"forward": "forward_pre", "step_post": "step_pre", "full_backward": "full_backward_pre"}
#: Post-hooks with no ``always_call`` at all, skipped when what they follow raises (an
#: error path, not a routine one): what raises, and how to undo it instead.
_NO_ALWAYS_CALL = {
    "step_post": ("step", "`step()`", "undo it around `step()` in `finally`"),
    "full_backward": ("backward", "backward", "undo it in a `finally`"),
}


def _outlasts_a_step(acquire) -> bool:
    """Whether a step (or backward) pre-hook's take stays wrong after the next step
    that succeeds: a counter raised, an item pushed onto a stack or list, one side of a
    method-call pair (a lock stays taken, a timer started), a value set aside and
    overwritten (the next step sets aside the overwritten one).  A flag set to ``True``,
    an entry stored under a key or an item added to a set is set again and given back by
    the next step's hooks."""
    if acquire.op == "add":
        node = acquire.node  # ``stack.append(x)``; not ``d[k] = x``, nor ``seen.add(x)``: a set
        return (
            type(node).__name__ == "Call"
            and getattr(node.func, "attr", None) is not None
            and (node.func.attr.value != "add")
        )
    return acquire.op in ("increment", "acquire", "override")


def _message(post: Registration, keys: str) -> str:
    if post.api.kind in _NO_ALWAYS_CALL:
        what, raising, _ = _NO_ALWAYS_CALL[post.api.kind]
        return f"{what} post-hook undoes {keys} but is skipped when {raising} raises"
    return f"post-hook undoes {keys} but lacks `always_call=True`"


def _skipped_when_raising(post: Registration) -> bool:
    """Whether torch skips the post-hook when what it follows raises: an optimizer's
    step post-hook and a full backward hook always (there is no ``always_call`` for
    them), a forward hook unless ``always_call=True`` is passed (or may be, through
    ``**kwargs``)."""
    if post.api.kind in _NO_ALWAYS_CALL:
        return True
    if post.api.kind != "forward" or not post.api.accepts_always_call:
        return False
    if post.has_star_kwargs:
        return False
    if "always_call" not in post.keywords:
        return True
    return post.keyword_is_false("always_call")


def _fallback_for_old_torch(post: Registration, facts: ModuleFacts) -> bool:
    """``post`` runs only when registering a forward hook with ``always_call=True``
    raised ``TypeError`` (a torch without the keyword): the code around it already
    asks for ``always_call``, and the fix would raise the same error."""
    return any(
        other.api.kind == post.api.kind
        and other.keyword_is_true("always_call")
        and runs_when_raising(post.site, other.site, "TypeError")
        for other in facts.registrations
    )


def _shown(acquire, release) -> str:
    if release.pair is None:
        return f"`{release.key}`"
    if release.op == "restore":
        return f"`{release.key}` (set aside in `{release.pair.split('|', 1)[1]}` and written back)"
    return f"`{release.key}` (`{acquire.pair.split('|')[0]}`/`{release.pair.split('|')[0]}`)"
