"""HL005 unclamped-always-call-release."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.effects import StateEffect, acquired, balanced_inside, pair_matches, split_key
from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.guards import locals_read_from, mentions, popped_into
from hooklint.analysis.hook_roles import (
    HookCallable,
    HookedObjects,
    effects_of,
    hook_callable,
    parameter_roles,
)
from hooklint.analysis.releases import (
    alone_in_statement,
    assumes_acquired,
    container_kind,
    helper_code,
    is_lambda,
    released_under_own_mark,
    target_code,
)
from hooklint.fixes.release_guard import acquired_flag_guard, tolerant_release
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class UnclampedAlwaysCallRelease(Rule):
    """An `always_call=True` forward hook undoes its pre-hook's change but breaks when that pre-hook never ran.

    ## What it does
    Finds a forward hook registered with `always_call=True` (on a module, or
    process-wide with `register_module_forward_hook`) that undoes what its forward
    pre-hook on the same target did (a counter incremented, an item added to a set, a
    stack pushed, a dict entry set, one side of a method-call pair such as
    `timer.start()`) with a release that assumes the pre-hook ran: a bare `n -= 1`,
    `s.remove(x)`, `stack.pop()`, `d.pop(k)`, `del d[k]` or `timer.stop()`, with no
    guard around it. Releases made inside same-file helpers the hook calls count too
    (followed as HL001 follows them); the finding is on the hook's call.
    Hooks may be functions, lambdas, instances of same-file classes with
    `__call__`, bound methods of such instances and `functools.partial` of either,
    and different literal dict keys are different state, as for HL001. A release
    under a check of a flag its pre-hook sets to `True` (HL001's guard), or of state it
    fills (also through a local read from it: `marks = self.marks.get(m)`, `if not
    marks: return`), or of the container whose popped item the release is handed (`if
    tokens: ctx.reset(tokens.pop())`), is guarded,
    and so is a method-call pair on an instance of a same-file class whose release
    method starts with `if not self.flag: return` for a flag its acquire method sets
    to `True` (`pf.begin()` / `pf.end()`).

    ## Why is this bad?
    An `always_call` hook also runs when forward never started because an *earlier*
    pre-hook raised (a prepended or process-wide pre-hook, or an input check), so its
    own pre-hook never ran. The counter then goes to -1, which is truthy: a gate such
    as `P._cache_enabled` stays on forever. `remove`/`pop`/`del` raise instead; torch
    turns an exception inside an `always_call` hook into a warning, so the rest of
    the cleanup in that hook silently never runs.

    ## Example
    ```python
    def _enter(module, args):
        P._cache_enabled += 1

    def _exit(module, args, output):
        P._cache_enabled -= 1

    module.register_forward_pre_hook(_enter)
    module.register_forward_hook(_exit, always_call=True)
    ```

    ## Use instead
    ```python
    def _exit(module, args, output):
        P._cache_enabled = max(0, P._cache_enabled - 1)
    ```
    For sets use `discard`, for dicts `pop(key, None)`, for stacks `if stack:
    stack.pop()`; for a method-call pair, or a release inside a helper, mark the
    module in the pre-hook once it has acquired and release only under the mark. The clamp is the same rewrite HL001's fix makes, so code fixed by
    HL001 is clean here. It is still approximate when an outer module legitimately
    holds the gate; `hooklint.runtime.hooks.paired_forward_hooks` (a per-call token)
    is exact.

    ## Fix safety
    Safe: each rewrite behaves exactly as before whenever the pre-hook did run, and
    only tolerates the unmatched call. For a method-call pair, or a release inside a
    helper, the fix is HL001's guard: the pre-hook sets `module._<pre-hook>_acquired`
    after the statement that acquires, and the releasing statement runs only under
    it (and clears it); no fix when that cannot be placed exactly (a lambda hook,
    for one: see HL001). No fix is offered when the container's type is
    unknown (a `remove(x)` on something the pre-hook did not visibly fill with
    `add`/`append`) or the popped stack is not a plain name or attribute.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    10 findings, not labelled yet, all one shape, judged debatable: torchtune's and
    trl's activation offloading register `lambda *a: noop_ctx.__enter__()` and
    `lambda *a: noop_ctx.__exit__()` with `always_call=True` on the output layer.
    When an earlier pre-hook on that layer raises, `__exit__` pops the outer
    `saved_tensors_hooks` (the offloading hooks) instead: real, but it needs a
    second, raising pre-hook on that layer. No fix is offered for lambdas. No true
    or false positive, so precision is not measurable yet; the rule is stable
    because its shape is narrow and its fixes only tolerate the unmatched call.
    """

    code = "HL005"
    name = "unclamped-always-call-release"
    cleared_elsewhere = False  # the pair and its hooks are all in the seed
    fix_applicability = "safe"
    prefilter = ("always_call",)

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        pre_hooks = [(r, hook_callable(facts, r)) for r in facts.registrations if r.api.kind == "forward_pre"]
        pre_hooks = [(r, c) for r, c in pre_hooks if c is not None]
        if not pre_hooks:
            return
        pre_hooks_on = HookedObjects(pre_hooks)
        for post in facts.registrations:
            if post.api.kind != "forward" or not post.keyword_is_true("always_call"):
                continue
            post_hook = hook_callable(facts, post)
            if post_hook is None:
                continue
            acquires: list[tuple[StateEffect, HookCallable]] = []
            for _, pre_hook in pre_hooks_on.same_object(post):
                acquires += [(a, pre_hook) for a in acquired(effects_of(facts, pre_hook))]
            if not acquires:
                continue
            flags = {_checked_name(a.key) for a, _ in acquires}
            reported: set[int] = set()
            post_effects = effects_of(facts, post_hook)
            own = balanced_inside(post_effects)  # it pops what it pushed itself: always there
            for release in post_effects:
                if not assumes_acquired(release) or id(release.anchor) in reported or id(release) in own:
                    continue
                match = next(((a, h) for a, h in acquires if pair_matches(a, release)), None)
                if match is None or _guarded(facts, release, post, flags, post_hook):
                    continue
                if released_under_own_mark(facts, release, match[0], post, post_hook.context):
                    continue  # the release method returns unless the acquire method marked it
                reported.add(id(release.anchor))
                yield self._finding(facts, post, post_hook, release, *match)

    def _finding(
        self,
        facts,
        post: Registration,
        post_hook: HookCallable,
        effect: StateEffect,
        acquire: StateEffect,
        pre_hook: HookCallable,
    ) -> Finding:
        if effect.op == "decrement":
            what = "goes below zero"
        elif effect.op == "release":
            what = "undoes an acquire that never happened"
        else:
            what = "raises"
        where = "" if effect.direct else f" (in `{helper_code(facts, effect)}`)"
        message = f"always_call hook releases `{effect.key}`{where}, which {what} if its pre-hook never ran"
        if effect.op == "release" or not effect.direct:
            edits, _ = acquired_flag_guard(facts, pre_hook.body, post_hook.body, [acquire], [effect])
            title = "Release only what this call's pre-hook acquired"
        else:
            alone, is_call = alone_in_statement(effect)
            edits, title = tolerant_release(
                facts,
                effect,
                container_kind(acquire),
                effect.statement if alone else None,
                is_call,
                is_lambda(post_hook.body.node),
            )
        return Finding(node=effect.anchor, message=message, fix_edits=edits, fix_message=title)

    VALID = [
        # The release of the pre-hook's range is guarded; the range the post-hook opens
        # and ends for itself is always there to end.
        Valid(
            """
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
"""
        ),
        # The release method itself returns unless the acquire method marked the object:
        # it undoes only what an acquire did.
        Valid(
            """
class Stopwatch:
    def start(self):
        self.running = True
        self.laps = []

    def stop(self):
        if not self.running:
            return
        self.running = False
        self.laps.append(len(self.laps))


def time_module(module):
    watch = Stopwatch()
    module.register_forward_pre_hook(lambda *_: watch.start())
    module.register_forward_hook(lambda *_: watch.stop(), always_call=True)
"""
        ),
        # The pre-hook pushes whether it counted; the post-hook returns when nothing was
        # pushed for the module and gives back only what the popped mark says it took.
        Valid(
            """
class Nesting:
    def __init__(self, limit):
        self.limit = limit
        self.level = 0
        self.marks = {}

    def enter(self, module, args):
        counted = self.level < self.limit
        if counted:
            self.level += 1
        self.marks.setdefault(module, []).append(counted)

    def leave(self, module, args, output):
        pushed = self.marks.get(module)
        if not pushed:
            return
        if pushed.pop():
            self.level -= 1

    def watch(self, module):
        module.register_forward_pre_hook(self.enter)
        module.register_forward_hook(self.leave, always_call=True)
"""
        ),
        # The post-hook resets the context variable only with a token the pre-hook
        # pushed (each hook reaches the list through a default argument): with none
        # pushed, it does nothing.
        Valid(
            """
from contextvars import ContextVar

phase: ContextVar = ContextVar("phase", default="idle")


def label(block):
    pushed = []

    def begin(module, args, tokens=pushed):
        tokens.append(phase.set("running"))

    def end(module, args, output, tokens=pushed):
        if tokens:
            phase.reset(tokens.pop())

    block.register_forward_pre_hook(begin)
    block.register_forward_hook(end, always_call=True)
"""
        ),
        # HL001's fix: always_call plus a clamped decrement.
        Valid(
            """
import torch.nn.utils.parametrize as P

def _enable(module, inputs):
    P._cache_enabled += 1

def _disable(module, inputs, output):
    P._cache_enabled = max(0, P._cache_enabled - 1)
    if not P._cache_enabled:
        P._cache = {}

def install(module):
    module.register_forward_pre_hook(_enable)
    module.register_forward_hook(_disable, always_call=True)
"""
        ),
        # Guarded releases: an `if` on the container, a try/except KeyError, a dict pop default.
        Valid(
            """
class ActivationScope:
    def __init__(self):
        self.stack = []
        self.active = set()
        self.started = {}

    def _enter(self, module, args):
        self.stack.append(module)
        self.active.add(id(module))
        self.started[id(module)] = time.perf_counter()

    def _exit(self, module, args, output):
        if self.stack:
            self.stack.pop()
        try:
            self.active.remove(id(module))
        except KeyError:
            pass
        self.started.pop(id(module), None)

    def attach(self, model):
        for layer in model.modules():
            layer.register_forward_pre_hook(self._enter)
            layer.register_forward_hook(self._exit, always_call=True)
"""
        ),
        # Without always_call an unmatched call cannot happen (HL001's business, not this rule's).
        Valid(
            """
depth = 0

def enter(module, args):
    global depth
    depth += 1

def leave(module, args, output):
    global depth
    depth -= 1

block.register_forward_pre_hook(enter)
block.register_forward_hook(leave)
"""
        ),
        # The always_call hook returns early when the forward did not run.
        Valid(
            """
def track(model, live):
    def push(module, args):
        live.append(module)

    def pop(module, args, output):
        if output is None:
            return
        live.pop()

    model.register_forward_pre_hook(push)
    model.register_forward_hook(pop, always_call=True)
"""
        ),
        # HL001's guard for a method-call pair: release only what this call acquired.
        Valid(
            """
class Profiler:
    def _open(self, module, args):
        self.clock.start()
        module._open_acquired = True

    def _close(self, module, args, output):
        if getattr(module, "_open_acquired", False):
            module._open_acquired = False
            self.clock.stop()

    def attach(self, model):
        model.register_forward_pre_hook(self._open)
        model.register_forward_hook(self._close, always_call=True)
"""
        ),
        # A helper lowers a per-name count only for names the pre-hook entered.
        Valid(
            """
class Nesting:
    def _down(self, name):
        if name in self.open_names:
            self.counts[name] -= 1

    def _up(self, module, args):
        self.open_names.add(type(module).__name__)
        self.counts[type(module).__name__] += 1

    def _exit(self, module, args, output):
        self._down(type(module).__name__)

    def attach(self, model):
        model.register_forward_pre_hook(self._up)
        model.register_forward_hook(self._exit, always_call=True)
"""
        ),
    ]
    INVALID = [
        # The same pair without the mark check in `stop`: a lap is recorded for a
        # forward that never started.
        Invalid(
            """
class Stopwatch:
    def start(self):
        self.running = True
        self.laps = []

    def stop(self):
        self.running = False
        self.laps.append(len(self.laps))


def time_module(module):
    watch = Stopwatch()
    module.register_forward_pre_hook(lambda *_: watch.start())
    module.register_forward_hook(lambda *_: watch.stop(), always_call=True)
""",
            line=14,
            message="releases `watch`",
        ),
        # The bitsandbytes hooks after adding always_call but not the clamp.
        Invalid(
            """
import torch.nn.utils.parametrize as P

def _enable_parametrization_cache(module, inputs):
    P._cache_enabled += 1

def _disable_parametrization_cache(module, inputs, output):
    P._cache_enabled -= 1
    if not P._cache_enabled:
        P._cache = {}

def _register_parametrization_hooks(module):
    module.register_forward_pre_hook(_enable_parametrization_cache)
    module.register_forward_hook(_disable_parametrization_cache, always_call=True)
""",
            expected="""
import torch.nn.utils.parametrize as P

def _enable_parametrization_cache(module, inputs):
    P._cache_enabled += 1

def _disable_parametrization_cache(module, inputs, output):
    P._cache_enabled = max(0, P._cache_enabled - 1)
    if not P._cache_enabled:
        P._cache = {}

def _register_parametrization_hooks(module):
    module.register_forward_pre_hook(_enable_parametrization_cache)
    module.register_forward_hook(_disable_parametrization_cache, always_call=True)
""",
            line=7,
            message="goes below zero",
        ),
        # A module tracker: a set of active names and a stack of parents (the HL001 fix's output).
        Invalid(
            """
class ModuleTracker:
    def __init__(self):
        self.parents = []
        self.active = set()

    def _fw_pre_hook(self, module, args):
        name = type(module).__name__
        self.parents.append(name)
        self.active.add(name)

    def _fw_post_hook(self, module, args, output):
        self.active.remove(type(module).__name__)
        self.parents.pop()

    def __enter__(self):
        self._pre = register_module_forward_pre_hook(self._fw_pre_hook)
        self._post = register_module_forward_hook(self._fw_post_hook, always_call=True)
        return self
""",
            expected="""
class ModuleTracker:
    def __init__(self):
        self.parents = []
        self.active = set()

    def _fw_pre_hook(self, module, args):
        name = type(module).__name__
        self.parents.append(name)
        self.active.add(name)

    def _fw_post_hook(self, module, args, output):
        self.active.discard(type(module).__name__)
        if self.parents:
            self.parents.pop()

    def __enter__(self):
        self._pre = register_module_forward_pre_hook(self._fw_pre_hook)
        self._post = register_module_forward_hook(self._fw_post_hook, always_call=True)
        return self
""",
            line=12,
            message="self.active",
        ),
        # A shape recorder with a stack of open layers (and a dict keyed by the module,
        # whose entry the module's next call overwrites: the stack is what goes wrong).
        Invalid(
            """
class ShapeRecorder:
    def __init__(self):
        self.inflight = {}
        self.stack = []

    def _start(self, module, args):
        self.inflight[id(module)] = tuple(args[0].shape)
        self.stack.append(module)

    def _stop(self, module, args, output):
        del self.inflight[id(module)]
        del self.stack[-1]

    def attach(self, model):
        for sub in model.modules():
            sub.register_forward_pre_hook(self._start)
            sub.register_forward_hook(self._stop, always_call=True)
""",
            expected="""
class ShapeRecorder:
    def __init__(self):
        self.inflight = {}
        self.stack = []

    def _start(self, module, args):
        self.inflight[id(module)] = tuple(args[0].shape)
        self.stack.append(module)

    def _stop(self, module, args, output):
        del self.inflight[id(module)]
        if self.stack:
            del self.stack[-1]

    def attach(self, model):
        for sub in model.modules():
            sub.register_forward_pre_hook(self._start)
            sub.register_forward_hook(self._stop, always_call=True)
""",
            line=12,
            message="self.stack",
        ),
        # Lambdas on one layer: a depth counter in a dict and a popped stack.
        Invalid(
            """
def watch(layer, stack):
    layer.register_forward_pre_hook(lambda m, a: stack.append(m))
    layer.register_forward_hook(lambda m, a, o: stack.pop(), always_call=True)
""",
            expected="""
def watch(layer, stack):
    layer.register_forward_pre_hook(lambda m, a: stack.append(m))
    layer.register_forward_hook(lambda m, a, o: (stack.pop() if stack else None), always_call=True)
""",
            line=3,
            message="`stack`",
        ),
        # A method-call pair: stopping a clock that this call never started.
        Invalid(
            """
class Profiler:
    def _open(self, module, args):
        self.clock.start()

    def _close(self, module, args, output):
        self.clock.stop()

    def attach(self, model):
        model.register_forward_pre_hook(self._open)
        model.register_forward_hook(self._close, always_call=True)
""",
            expected="""
class Profiler:
    def _open(self, module, args):
        self.clock.start()
        module._open_acquired = True

    def _close(self, module, args, output):
        if getattr(module, '_open_acquired', False):
            module._open_acquired = False
            self.clock.stop()

    def attach(self, model):
        model.register_forward_pre_hook(self._open)
        model.register_forward_hook(self._close, always_call=True)
""",
            line=6,
            message="undoes an acquire that never happened",
        ),
        # A counter lowered inside a helper method: the finding is on the hook's call.
        Invalid(
            """
class Gate:
    def _raise(self):
        self.level += 1

    def _lower(self):
        self.level -= 1

    def attach(self, model):
        def up(module, args):
            self._raise()

        def down(module, args, output):
            self._lower()

        model.register_forward_pre_hook(up)
        model.register_forward_hook(down, always_call=True)
""",
            expected="""
class Gate:
    def _raise(self):
        self.level += 1

    def _lower(self):
        self.level -= 1

    def attach(self, model):
        def up(module, args):
            self._raise()
            module._up_acquired = True

        def down(module, args, output):
            if getattr(module, '_up_acquired', False):
                module._up_acquired = False
                self._lower()

        model.register_forward_pre_hook(up)
        model.register_forward_hook(down, always_call=True)
""",
            line=13,
            message="in `self._lower`",
        ),
    ]


def _checked_name(key: str) -> str:
    """How code names acquired state in a check: ``self.parents`` for ``self.parents``,
    ``_entered`` for ``<module>._entered`` (the module parameter's name varies)."""
    base = split_key(key)[0]
    return base.rpartition(".")[2] if base.startswith("<module>") else base


def _guarded(
    facts, effect: StateEffect, post: Registration, flags: set[str], post_hook: HookCallable
) -> bool:
    """Whether the release runs only when there is something to release: under a check
    of the released object, of the forward's output, or of state the pre-hook acquires
    (a flag it raises, a set it adds to), also through a local the hook reads from
    one of those first (``stack = self.pending.get(m)``, ``if not stack: return``),
    after an early return on one of those, or inside ``try``/``suppress``."""
    if effect.handled:
        return True
    target = target_code(facts, effect)
    if target is None:
        return True
    watched = [target, *flags] + [name for name, role in parameter_roles(post).items() if role == "output"]
    watched += popped_into(facts, effect.node)  # ``if tokens: ctx.reset(tokens.pop())``
    if not effect.via:  # in the hook's own body: its locals read from that state
        watched += locals_read_from(facts, post_hook.body.node, watched)
    return mentions(facts, effect.guards, watched)
