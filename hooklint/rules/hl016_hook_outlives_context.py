"""HL016 hook-outlives-context."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.lifecycles import OutlivingHook, constructor_hooks, outliving_hooks
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
      `register_hooks`/`remove_hooks`, `enable`/`disable`;
    - `__init__` of a class that has a teardown of any kind (`close`, `release`,
      `remove`, `remove_hooks`, `detach`, `teardown`, `__exit__`, `__del__`): the
      object owns the hooks its constructor puts on a module it was given (a
      parameter, or something reached from one: `model.named_modules()`,
      `model.layer4`, `self.model` set from a parameter), and none of its teardowns
      removes them. Hooks `__init__` puts on `self` or on modules it builds itself go
      with the object and are not reported; without any teardown, see HL019, which
      also reports a class whose one teardown is `__del__` when the hook holds the
      object (then `__del__` cannot run): not reported here again.

    Hooks count when the setup registers them itself, or calls a same-file
    *installer* that does (directly, or through `model.apply(fn)`, three calls deep)
    and keeps no handle for it. A hook outlives the lifecycle when its handle is
    discarded, lost in the installer's locals, or kept where nothing in the file
    removes it (not in a `self.*` list that a base class of another file creates and
    may empty), and the teardown does not take hooks off in bulk
    (`m._forward_hooks.clear()`, or a call whose name says it removes hooks).
    Such a call is followed three calls deep into same-file helpers. A handle
    removed anywhere in the file is not this rule's, also when it is removed
    through its attribute name on another object (`state._pre_hook_handle.remove()`)
    or through `getattr(self, "_handle")` in a removing function: the hooks can be
    taken off, and whether that happens on every path is HL004's question. Hooks
    that `__init__` puts on `self` or its own parts die with the object and are not
    reported.  For `__init__`, every teardown of the class is looked at: a hook
    outlives the object when none of them removes it.

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
    the same attribute of another object), since cleared: 2 of 5 then. The
    constructor case (a class with a teardown) adds no finding on the development
    set or torch, and 2 on 26 held-out libraries (`hooklint check --preview --select
    HL016 DIR`), both true (ptflops 0.7.5's `FlopCounterMode`, one bug). Fewer than
    the 8 judged findings promotion needs, so the rule stays in preview.
    """

    code = "HL016"
    name = "hook-outlives-context"
    preview = True

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        hooks = outliving_hooks(facts)
        # A constructor whose class's one teardown is `__del__`: HL019's when it reports it.
        reported = {id(h.registration.call) for h in constructor_hooks(facts)} if hooks else set()
        for hook in hooks:
            if id(hook.registration.call) not in reported:
                yield self._finding(hook)

    @staticmethod
    def _finding(hook: OutlivingHook) -> Finding:
        lifecycle = hook.lifecycle
        if hook.kept is None:
            reason = "its handle is discarded" if not hook.via else "its handle is not kept"
        else:
            reason = f"its handle (`{_clip(hook.kept)}`) is never removed"
        if lifecycle.teardown is None:
            undone = "the code after `yield` does"
        elif lifecycle.also:  # an object's teardowns: at most two named
            names = [f"`{_clip(t.name)}`" for t in (lifecycle.teardown, *lifecycle.also)]
            undone = "/".join(names[:2] + (["..."] if len(names) > 2 else [])) + " do"
        else:
            undone = f"`{_clip(lifecycle.teardown.name)}` does"
        # What `__init__` sets up lives as long as the object it builds: name the class.
        setup = lifecycle.setup.class_name if lifecycle.kind == "owner" else lifecycle.setup.name
        message = f"hook outlives `{_clip(setup)}`: {undone} not remove it and {reason}"
        return Finding(node=hook.registration.call, message=message, related=tuple(c.node for c in hook.via))

    VALID = [
        # The teardown reads the list back with `getattr(self, "...", None)`: the same
        # attribute `enable` set.
        Valid(
            """
class Model:
    def enable(self):
        def make(module, input, output):
            output.requires_grad_(True)

        hooks = []
        for module in self.modules():
            emb = module.get_input_embeddings()
            hooks.append(emb.register_forward_hook(make))
        self._grad_hooks = hooks

    def disable(self):
        hooks = getattr(self, "_grad_hooks", None)
        if not hooks:
            return
        for hook in hooks:
            hook.remove()
"""
        ),
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
        # A constructor that keeps its handles, and a context exit that removes them.
        Valid(
            """
class NormWatch:
    def __init__(self, network):
        self.peaks = {}
        self.handles = [m.register_forward_hook(self._peak) for m in network.modules()]

    def _peak(self, module, args, output):
        self.peaks[module] = max(self.peaks.get(module, 0.0), float(output.abs().max()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
"""
        ),
        # A constructor that hooks a module it built itself: the hook goes with the object.
        Valid(
            """
class Scorer:
    def __init__(self, config):
        self.head = build_head(config)
        self.head.register_forward_pre_hook(_cast_half)

    def close(self):
        self.head = None
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
        # The handles go into a list the imported base class defines: what removes them
        # is the base's (its file is not this one), not this `detach`'s to do.
        Valid(
            """
from .probes import ProbeBase


class NormProbe(ProbeBase):
    def attach(self, model):
        for layer in model.children():
            self.handles.append(layer.register_forward_hook(self.measure))

    def detach(self):
        self.norms.clear()

    def measure(self, module, args, output):
        self.norms[module] = output.norm().item()
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
        # A counter that hooks the caller's layers when built; entering and leaving it never takes them off.
        Invalid(
            """
import time

class StageTimer:
    def __init__(self, net):
        self.started = {}
        for name, stage in net.named_children():
            stage.register_forward_pre_hook(self._stamp(name))

    def _stamp(self, name):
        def hook(module, args):
            self.started[name] = time.perf_counter()
        return hook

    def __enter__(self):
        self.started.clear()
        return self

    def __exit__(self, *exc):
        self.summary = dict(self.started)
""",
            line=7,
            message="hook outlives `StageTimer`: `__exit__` does not remove it and its handle is discarded",
        ),
        # The handles are kept, but neither `close` nor `__del__` removes them.
        Invalid(
            """
class OutputClamp:
    def __init__(self, model, bound):
        self.model = model
        self.bound = bound
        self.handles = [m.register_forward_hook(self._clamp) for m in self.model.children()]

    def _clamp(self, module, args, output):
        return output.clamp(-self.bound, self.bound)

    def close(self):
        self.bound = None

    def __del__(self):
        self.close()
""",
            line=5,
            message="`close`/`__del__` do not remove it and its handle (`self.handles`) is never removed",
        ),
        # An installer the constructor calls on a layer it looks up in the given model.
        Invalid(
            """
class Pruner:
    def __init__(self, model, layer_names):
        for name in layer_names:
            self._gate(getattr(model, name))

    def _gate(self, layer):
        layer.register_forward_pre_hook(self._drop_small)

    def _drop_small(self, module, args):
        return (args[0] * (args[0].abs() > self.threshold),)

    def release(self):
        self.threshold = None
""",
            line=7,
            message="hook outlives `Pruner`: `release` does not remove it and its handle is not kept",
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
        # A training callback's `before_*` installs, its `after_*` forgets the hooks.
        Invalid(
            """
class GradientHalver:
    def __init__(self, model):
        self.model = model

    def before_fit(self):
        for layer in self.model.modules():
            layer.register_full_backward_hook(self._halve)

    def after_fit(self):
        self.model = None

    def _halve(self, module, grad_input, grad_output):
        return tuple(g / 2 if g is not None else None for g in grad_input)
""",
            line=7,
            message="`after_fit` does not remove it",
        ),
        # The same probe with a list of its own, which `detach` leaves full.
        Invalid(
            """
from .probes import ProbeBase


class NormProbe(ProbeBase):
    def __init__(self):
        super().__init__()
        self.norms = {}
        self.handles = []

    def attach(self, model):
        for layer in model.children():
            self.handles.append(layer.register_forward_hook(self.measure))

    def detach(self):
        self.norms.clear()

    def measure(self, module, args, output):
        self.norms[module] = output.norm().item()
""",
            line=12,
            message="hook outlives `attach`: `detach` does not remove it",
        ),
    ]


def _clip(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."
