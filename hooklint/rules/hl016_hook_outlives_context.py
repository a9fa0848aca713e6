"""HL016 hook-outlives-context."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.lifecycles import OutlivingHook, outliving_hooks
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class HookOutlivesContext(Rule):
    """A hook installed by a context manager or setup method is left registered by its teardown.

    ## What it does
    Finds module hooks installed by code that has a teardown, where the teardown
    does not remove them:

    - a `@contextmanager` function, before its `yield` (the teardown is the code
      after the `yield`);
    - `__enter__` (the teardown is `__exit__` of the same class);
    - a setup method whose paired teardown is in the same class:
      `on_*_start`/`on_*_end`, `setup`/`teardown`, `attach`/`detach`,
      `register_hooks`/`remove_hooks`, `enable`/`disable`, `__init__`/`close` (for
      `__init__`, only hooks on objects it was given, not on `self`).

    Hooks count when the setup registers them itself, or calls a same-file
    *installer* that does (directly, or through `model.apply(fn)`, three calls deep)
    and keeps no handle for it. A hook outlives the lifecycle when its handle is
    discarded, lost in the installer's locals, or kept where nothing in the file
    removes it, and the teardown does not take hooks off in bulk
    (`m._forward_hooks.clear()`, or a call whose name says it removes hooks).
    Such a call is followed three calls deep into same-file helpers. A handle
    removed anywhere in the file is not this rule's, also when it is removed
    through its attribute name on another object (`state._pre_hook_handle.remove()`)
    or through `getattr(self, "_handle")` in a removing function: the hooks can be
    taken off, and whether that happens on every path is HL004's question. Hooks
    that `__init__` puts on `self` or its own parts die with the object and are not
    reported.

    One bug, one finding: capture hooks never removed are HL002's, process-wide
    hooks HL009's, handles `__enter__` keeps on `self` that `__exit__` does not
    remove HL004's, and removals after `yield` outside `finally` HL004's too.

    ## Why is this bad?
    The context ends, the hooks stay, and they keep running on every later forward
    of the model, long after their purpose. The state a calibration hook reads is
    often torn down with the context: auto-round's KV-cache quantization context
    registers pre/post hooks on every attention module through `model.apply`, and on
    exit deletes the `kv_cache` attribute those hooks read, so every later
    `generate()` raises `AttributeError`.

    ## Example
    ```python
    @contextmanager
    def calibration(model):
        for module in model.modules():
            module.register_forward_pre_hook(inject_observer)
        yield model
        strip_observers(model)
    ```

    ## Use instead
    ```python
    @contextmanager
    def calibration(model):
        handles = [m.register_forward_pre_hook(inject_observer) for m in model.modules()]
        try:
            yield model
        finally:
            for handle in handles:
                handle.remove()
            strip_observers(model)
    ```

    ## Fix safety
    No fix: where the handles should be kept, and whether the teardown or another
    method should remove them, is the author's design.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`):
    2 findings, both true (one bug: auto-round's KV-cache quantization context
    above); torch 2.13's own sources (`hooklint check --preview --select HL016
    <site-packages>/torch`): no finding. On first contact with real code the rule
    also reported 3 false positives (handles removed through `getattr` or through
    the same attribute of another object), since cleared: 2 of 5 then. Fewer than
    the 8 judged findings promotion needs, so the rule stays in preview.
    """

    code = "HL016"
    name = "hook-outlives-context"
    preview = True

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for hook in outliving_hooks(facts):
            yield self._finding(hook)

    @staticmethod
    def _finding(hook: OutlivingHook) -> Finding:
        lifecycle = hook.lifecycle
        if hook.kept is None:
            reason = "its handle is discarded" if not hook.via else "its handle is not kept"
        else:
            reason = f"its handle (`{_clip(hook.kept)}`) is never removed"
        undone = (
            "the code after `yield`" if lifecycle.teardown is None else f"`{_clip(lifecycle.teardown.name)}`"
        )
        message = f"hook outlives `{_clip(lifecycle.setup.name)}`: {undone} does not remove it and {reason}"
        return Finding(node=hook.registration.call, message=message, related=tuple(c.node for c in hook.via))

    VALID = [
        # The handles are removed in `finally` after the yield.
        Valid(
            """
from contextlib import contextmanager

@contextmanager
def capture_shapes(model, sink):
    handles = [m.register_forward_hook(lambda mod, a, out: sink.add(out.shape)) for m in model.children()]
    try:
        yield sink
    finally:
        for handle in handles:
            handle.remove()
"""
        ),
        # `__exit__` calls a helper that clears the hook dicts in bulk.
        Valid(
            """
class Probe:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        for m in self.model.modules():
            m.register_forward_pre_hook(check_finite)
        return self

    def __exit__(self, *exc):
        _strip(self.model)

def _strip(model):
    for m in model.modules():
        m._forward_pre_hooks.clear()
"""
        ),
        # A module hooking its own child when built: the hook goes with the object; and a
        # setup whose handles are returned to the caller.
        Valid(
            """
class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.norm.register_forward_hook(_clip)

    def close(self):
        self.norm = None

class Tap:
    def attach(self, model):
        return [m.register_forward_hook(self._log) for m in model.modules()]

    def detach(self):
        self.log.clear()

    def _log(self, module, args, output):
        print(type(module).__name__)
"""
        ),
        # The teardown does not remove them, but another method of the class does.
        Valid(
            """
class Sparsifier:
    def setup(self, model):
        self._handles = [m.register_forward_pre_hook(self._mask) for m in model.modules()]

    def teardown(self):
        self.masks = None

    def squash(self):
        for handle in self._handles:
            handle.remove()

    def _mask(self, module, args):
        return (args[0] * self.masks[module],)
"""
        ),
        # A capture hook never removed is HL002's finding, not this rule's.
        Valid(
            """
from contextlib import contextmanager

@contextmanager
def record(model, store):
    model.register_forward_hook(lambda m, a, out: store.append(out))
    yield store
"""
        ),
    ]
    INVALID = [
        # The KV-cache calibration context: hooks installed through model.apply, state deleted on exit.
        Invalid(
            """
import contextlib

def _inject_cache(module, args, kwargs):
    kwargs["past_key_values"] = module.calib_cache
    return args, kwargs

def _arm(module):
    if hasattr(module, "k_proj"):
        module.register_forward_pre_hook(_inject_cache, with_kwargs=True)

@contextlib.contextmanager
def kv_calibration(model):
    model.apply(_attach_cache)
    model.apply(_arm)
    try:
        yield model
    finally:
        model.apply(_drop_cache)
""",
            line=9,
            message="hook outlives `kv_calibration`: the code after `yield` does not remove it and its handle is not kept",
        ),
        # `__exit__` forgets the handles kept in a local list of `__enter__`.
        Invalid(
            """
class FreezeStats:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        handles = []
        for m in self.model.modules():
            if isinstance(m, nn.BatchNorm2d):
                handles.append(m.register_forward_pre_hook(_use_running_stats))
        return self

    def __exit__(self, *exc):
        self.model.train()
""",
            line=9,
            message="`__exit__` does not remove it",
        ),
        # A Lightning-style callback: hooks added when training starts, never taken off at its end.
        Invalid(
            """
class ActivationClamp(Callback):
    def on_train_start(self, trainer, pl_module):
        for layer in pl_module.layers:
            layer.register_forward_hook(self._clamp)

    def on_train_end(self, trainer, pl_module):
        self.summary = None

    def _clamp(self, module, args, output):
        return output.clamp(-self.limit, self.limit)
""",
            line=4,
            message="hook outlives `on_train_start`: `on_train_end` does not remove it and its handle is discarded",
        ),
        # A context manager method that keeps the handle on self, which no method removes.
        Invalid(
            """
from contextlib import contextmanager

class Quantizer:
    @contextmanager
    def observing(self, layer):
        self._observer = layer.register_forward_hook(self._observe)
        yield
        self.finalize()
""",
            line=6,
            message="its handle (`self._observer`) is never removed",
        ),
    ]


def _clip(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."
