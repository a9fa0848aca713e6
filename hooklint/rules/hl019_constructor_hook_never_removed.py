"""HL019 constructor-hook-never-removed."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.lifecycles import OutlivingHook, constructor_hooks
from hooklint.analysis.lifetime import registering_block
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class ConstructorHookNeverRemoved(Rule):
    """An object's constructor hooks a module it was given and keeps no way to remove the hook.

    ## What it does
    Finds module hooks that a class's `__init__` registers on a module it was handed
    (a parameter, or something reached from one: `model.named_modules()`,
    `model.layer4`, `rgetattr(model, path)` and such lookup helpers, a list the
    constructor starts empty and fills only with such things, a comprehension that
    collects them (`[m for m in model.modules() if ...]`, a dict of
    `model.named_modules()`), either branch
    of a conditional, `self.model` set from a parameter (also by the `__init__` of a
    base of another file that `super().__init__(model)` runs), a local that walks down
    from one into its own parts, `layer = layer._modules[step]`, also as one element of what
    a same-file function hands back (`self.model, self.n = _split(model)` with
    `return model, len(model)`) or by the `__init__` of a same-file base that
    `super().__init__(model)` runs), directly or through a
    same-file installer it calls (also through `model.apply(fn)`), and tensor hooks it
    puts on each parameter of such a module (`for p in model.parameters():
    p.register_post_accumulate_grad_hook(self._step)`, an optimizer that steps in
    backward: the parameters keep the hook as a module does), when

    - the handle is discarded (or lost in a local),
    - the hook holds the object: a bound method (`self._count`, also inside
      `partial`), a hook that a method of the object builds (`self._make_hook(name)`),
      or a lambda or nested def that uses `self`,
    - the class is a helper object, known from the file not to be an `nn.Module`
      (no base, `object`, `ABC`, torch's `Optimizer`, or same-file classes that are
      not modules),
    - and neither it nor a same-file base has a teardown (`close`, `release`,
      `remove`, `remove_hooks`, `detach`, `teardown`, `cleanup`, `destroy`,
      `__exit__`: a class with one is HL016's), and no method of it takes
      hooks off in bulk (`m._forward_hooks.clear()`, a call such as
      `self._remove_all_hooks()` whose name starts with a removal verb and is about
      hooks).

    `__del__` is no teardown for a hook that holds the object: the module keeps the
    hook and the hook keeps the object, so `__del__` never runs while the module
    lives. A handle kept on the object and removed only there (or in a private method
    only `__del__` calls) is reported as well.

    Hooks that `__init__` puts on `self` or on modules it builds itself go with the
    object and are not reported; so do those of an `nn.Module` on a module it wraps
    (it keeps the module as its own part, usually for the model's whole life), and of
    a class with a base from another file (which may have a teardown: unless
    cross-file analysis reads every base of the hierarchy, none is a module, and none of
    another file has a teardown or any hook code), and of a
    constructor that also gives the hooked module a buffer, parameter or submodule
    (`register_buffer`...): it changes the module for good, and the hook is part of
    the change, as `torch.nn.utils.prune`'s mask and pre-hook are. Capture hooks
    (those that store what they receive) are HL002's, and a constructor that
    installs one that HL002 reports is left to HL002 entirely: one bug, one finding (a
    capture HL002 leaves alone, into slots that do not grow, still keeps the hook on the
    module: reported here). The same module
    hooked side by side in one block, `if`s around them aside (the branches of one
    `if`, each case registering its own way; a forward and a backward hook each under
    its own flag), is one finding too, at the first; the message counts the
    registrations.

    ## Why is this bad?
    The module keeps every hook in its hook dicts, and each hook keeps its object
    alive. Tools that are built once per image, batch, experiment or profiling run
    (a counter, a fault injector, a saliency helper) then stack one more hook on the
    user's model with every instance: the hooks all keep running on every forward,
    counts and perturbations add up, and nothing the instance holds is ever freed.
    torch's own `FlopCounterMode` did this until it learnt to register its hooks in
    `__enter__` and remove them in `__exit__`.

    ## Example
    ```python
    class CallCounter:
        def __init__(self, model):
            self.calls = {}
            for name, module in model.named_modules():
                module.register_forward_hook(partial(self._count, name))

        def _count(self, name, module, args, output):
            self.calls[name] = self.calls.get(name, 0) + 1
    ```

    ## Use instead
    ```python
    class CallCounter:
        def __init__(self, model):
            self.calls = {}
            self.handles = [
                module.register_forward_hook(partial(self._count, name))
                for name, module in model.named_modules()
            ]

        def _count(self, name, module, args, output):
            self.calls[name] = self.calls.get(name, 0) + 1

        def close(self):
            for handle in self.handles:
                handle.remove()
    ```

    ## Fix safety
    No fix: whether the hooks should be taken off by a `close()`, by `__exit__`, or
    installed only for the duration of a `with` block is the author's design.

    ## Known problems
    Libraries that install a hook for the whole life of the model on purpose (an
    engine that wraps the model it is given and is never rebuilt) are reported too;
    `# noqa: HL019` on the registration says the hook is meant to stay. A teardown
    in a base class in another file is not seen.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    2 findings, judged by reading the code: 1 true (MONAI's `ModelWithHooks`: every
    CAM object built on a model leaves hooks on it that keep the object and its
    activations and gradients alive), 1 debatable (transformers'
    `DebugUnderflowOverflow`, a debugging aid whose hooks are meant to last the
    training run; a second `train()` on the same model stacks them). Held-out
    libraries, read before any rule was changed for them (`notes/heldout*.md`;
    `hooklint check --preview --select HL019 DIR` on each tree): 12 findings, 11 true
    (deepspeed 0.6.4's ZeRO-3 optimizer 2, one bug: re-initialising on the same model
    stacks a second set; torch-cka and ckatorch 2 each, pytorch-gradcam, flashtorch's
    `Backprop`, chatterbox-tts's alignment analyzer built on every inference, MONAI
    0.4.0 and 0.5.0), 1 debatable (diffsynth's offload manager, whose hooks are meant
    to stay for the training run), none false; before the rule left `nn.Module`
    classes alone it also reported deepspeed 0.6.4's `InferenceEngine`, a module that
    wraps the model for its whole life (false). torch 2.13's own sources: no finding.
    12 true, 0 false, 2 debatable over 14 judged findings: on by default since
    7 Dec 2026. Held-out sets 18-20 (`notes/heldout18.md`, 75 libraries): flashtorch
    0.1.3's `Backprop` (true), and, once torch's `Optimizer` counted as a helper base,
    deepchem's K-FAC optimizer (true: a second optimizer on the model stacks a second set).
    With `__del__` no teardown for a hook that holds the object (`notes/heldout23.md`):
    omnixai 1.3.1's `FeatureMapExtractor` and `ScoreCAM` (true: one extractor per call,
    each leaving a hook that keeps it and its last output), signxai2's
    `GradCAMAnalyzer` in a module the package no longer imports (debatable).
    """

    code = "HL019"
    name = "constructor-hook-never-removed"

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        # One bug, one finding: the same module hooked in the branches of one `if`
        # (each case registers the same hook its own way) is reported at the first.
        groups: dict[tuple, list] = {}
        for hook in constructor_hooks(facts):
            block = registering_block(hook.registration.site)
            key = (self._message(hook), hook.registration.receiver_code, id(block.node) if block else None)
            groups.setdefault(key, []).append(hook)
        for hooks in groups.values():
            yield self._finding(hooks[0], len(hooks))

    @staticmethod
    def _message(hook: OutlivingHook, count: int = 1) -> str:
        owner = _clip(hook.lifecycle.setup.class_name or "")
        if hook.finalizer:
            more = "" if count == 1 else f" ({count} registrations)"
            return f"`{owner}` hooks a given module; only `__del__`, which the hook blocks, removes it{more}"
        kept = "drops the handle" if not hook.via else "keeps no handle"
        lost = "the hook is never removed" if count == 1 else f"never removed ({count} registrations)"
        if hook.registration.api.owner == "tensor":
            lost = "never removed" if count == 1 else f"never removed ({count} registrations)"
            return f"`{owner}` hooks each parameter of a given module and {kept}: {lost}"
        return f"`{owner}` hooks a module its `__init__` was given and {kept}: {lost}"

    def _finding(self, hook: OutlivingHook, count: int) -> Finding:
        return Finding(
            node=hook.registration.call,
            message=self._message(hook, count),
            related=tuple(c.node for c in hook.via),
        )

    VALID = [
        # A comprehension over the object's own layers, built here: the hooks go
        # with the object.
        Valid(
            """
import torch.nn as nn


class WidthProbe:
    def __init__(self, width):
        self.shapes = {}
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(3))
        for layer in [x for x in self.layers if x.out_features > 1]:
            layer.register_forward_hook(self._shape)

    def _shape(self, module, args, output):
        self.shapes[id(module)] = tuple(output.shape)
"""
        ),
        # An optimizer that steps each parameter from its gradient hook keeps the handles
        # and takes them off in `close()`: HL016's business, not this rule's.
        Valid(
            """
import torch


class StepInBackward(torch.optim.Optimizer):
    def __init__(self, net, lr):
        super().__init__(net.parameters(), {"lr": lr})
        self.handles = [p.register_post_accumulate_grad_hook(self._step_one) for p in net.parameters()]

    def _step_one(self, param):
        param.data.add_(param.grad, alpha=-self.defaults["lr"])
        param.grad = None

    def close(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
"""
        ),
        # The same walk down a dotted path, from a model the object builds itself: its
        # hooks go with it.
        Valid(
            """
from torch import nn


class LayerGrabber:
    def __init__(self, dotted):
        self.model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.last = None
        self._hook(dotted)

    def _hook(self, dotted):
        def grab(module, args, output):
            self.last = output.detach()

        layer = self.model
        for step in dotted.split("."):
            layer = layer._modules[step]
        layer.register_forward_hook(grab)
"""
        ),
        # The constructor gives the layer a mask buffer and the hook that applies it:
        # the layer is changed for good, as pruning changes it, hook included.
        Valid(
            """
import torch


class WeightMask:
    def __init__(self, layer, keep):
        self.keep = keep
        layer.register_buffer("weight_mask", torch.ones_like(layer.weight))
        layer.register_forward_pre_hook(self._apply)

    def _apply(self, module, args):
        module.weight.data.mul_(module.weight_mask)
"""
        ),
        # The helper hands back a copy of the model, not the model: the object hooks its
        # own copy, and the copy goes with it.
        Valid(
            """
import copy


def _private(net):
    return copy.deepcopy(net), sum(1 for _ in net.children())


class LeafTicker:
    def __init__(self, net):
        self.net, self.parts = _private(net)
        self.ticks = 0
        for leaf in self.net.modules():
            leaf.register_forward_pre_hook(self._tick)

    def _tick(self, module, args):
        self.ticks += 1
"""
        ),
        # The base builds its own model; the subclass hooks that one, not the caller's.
        Valid(
            """
import torch.nn as nn


class Holder:
    def __init__(self, width):
        self.net = nn.Sequential(nn.Linear(width, width), nn.ReLU())
        self.calls = 0


class Counted(Holder):
    def __init__(self, width):
        super().__init__(width)
        self.net.register_forward_hook(self._count)

    def _count(self, module, args, output):
        self.calls += 1
"""
        ),
        # `register_forward_hook` of the project's own hook manager, with keywords torch's
        # method does not take: the manager records the hook and keeps its handle.
        Valid(
            """
from tracking.manager import HookManager


class Tracker:
    def __init__(self, *modules):
        self.manager = HookManager()
        self.outputs = {}
        self.manager.register_forward_hook(self._keep, label="tracker", activate=False, modules=modules)

    def _keep(self, module, args, output):
        self.outputs[id(module)] = output.detach()
"""
        ),
        # `__del__` removes the hook, and the hook holds no part of the object (a plain
        # function handed a dict), so dropping the object runs `__del__`.
        Valid(
            """
def _measure(store, module, args, output):
    store["peak"] = max(store.get("peak", 0.0), float(output.norm()))


class NormMonitor:
    def __init__(self, model, layer):
        self.store = {}
        store = self.store
        self._hook = model.get_submodule(layer).register_forward_hook(
            lambda m, a, o: _measure(store, m, a, o)
        )

    def __del__(self):
        self._hook.remove()
"""
        ),
        # A public `detach` the user calls also removes the hook.
        Valid(
            """
class NormMonitor:
    def __init__(self, model, layer):
        self._hook = model.get_submodule(layer).register_forward_hook(self._measure)

    def _measure(self, module, args, output):
        self.peak = float(output.norm())

    def detach(self):
        self._hook.remove()

    def __del__(self):
        self.detach()
"""
        ),
        # The handles are kept and `close` removes them.
        Valid(
            """
from functools import partial

class CallCounter:
    def __init__(self, model):
        self.calls = {}
        self.handles = [
            module.register_forward_hook(partial(self._count, name))
            for name, module in model.named_modules()
        ]

    def _count(self, name, module, args, output):
        self.calls[name] = self.calls.get(name, 0) + 1

    def close(self):
        for handle in self.handles:
            handle.remove()
"""
        ),
        # The constructor hooks a module it built itself: the hook goes with the object.
        Valid(
            """
from torch import nn

class Head:
    def __init__(self, width):
        self.proj = nn.Linear(width, width)
        self.proj.register_forward_hook(self._scale)

    def _scale(self, module, args, output):
        return output / self.temperature
"""
        ),
        # A plain function, holding nothing of the object, installed for the model's life.
        Valid(
            """
def _to_half(module, args):
    return tuple(a.half() for a in args)

class HalfPrecision:
    def __init__(self, model):
        for block in model.children():
            block.register_forward_pre_hook(_to_half)
"""
        ),
        # Another method takes the hooks off in bulk.
        Valid(
            """
class Saturation:
    def __init__(self, model):
        self.model = model
        self.hits = 0
        for m in model.modules():
            m.register_forward_hook(self._count)

    def _count(self, module, args, output):
        self.hits += int(output.abs().max() > 1e4)

    def reset(self):
        for m in self.model.modules():
            m._forward_hooks.clear()
"""
        ),
        # A module that wraps the model it is given: the hook belongs to its own part.
        Valid(
            """
from torch import nn

class OnDevice(nn.Module):
    def __init__(self, inner, device):
        super().__init__()
        self.inner = inner
        self.device = device
        self.inner.register_forward_pre_hook(self._move)

    def _move(self, module, args):
        return tuple(a.to(self.device) for a in args)
"""
        ),
        # A capture hook that a constructor never removes is HL002's finding.
        Valid(
            """
class FeatureTap:
    def __init__(self, layer):
        self.features = []
        layer.register_forward_hook(self._keep)
        layer.register_full_backward_hook(self._note)

    def _keep(self, module, args, output):
        self.features.append(output.detach())

    def _note(self, module, grad_input, grad_output):
        self.seen = True
"""
        ),
        # The same lookup helper and a conditional, on models the object builds itself.
        Valid(
            """
from .builders import make_narrow, make_wide
from .utils import rgetattr


class FeatureTap:
    def __init__(self, layer_path, wide=False):
        self.model = make_wide() if wide else make_narrow()
        self.features = None
        rgetattr(self.model, layer_path).register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.features = output.detach()
"""
        ),
        # A list the constructor fills with modules it builds itself.
        Valid(
            """
from torch import nn


class LinearTaps:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))
        self.outputs = {}
        self.handles = []
        chosen = []
        for child in self.model.children():
            if isinstance(child, nn.Linear):
                chosen.append(child)
        for index, layer in enumerate(chosen):
            self.handles.append(layer.register_forward_hook(self._tap(index)))

    def _tap(self, index):
        def keep(module, args, output):
            self.outputs[index] = output.detach()

        return keep

    def __del__(self):
        for handle in self.handles:
            handle.remove()
"""
        ),
    ]
    INVALID = [
        # The layers to watch are picked from the given model by a comprehension and
        # kept on `self`: a loop over them hooks parts of the caller's model, and the
        # handles are dropped.
        Invalid(
            """
class GateCounter:
    def __init__(self, model):
        self.fired = {}
        self.gates = {name: part for name, part in model.named_modules() if name.endswith("gate")}
        for name in self.gates:
            self.gates[name].register_forward_hook(self._count)

    def _count(self, module, args, output):
        self.fired[id(module)] = self.fired.get(id(module), 0) + 1
""",
            line=6,
            message="hooks a module its `__init__` was given and drops the handle",
        ),
        # The same optimizer without a way out: building a second one (a new learning
        # rate, a new phase) leaves the first one's hooks on every parameter, still
        # stepping the weights with the old settings, and keeps the old object alive.
        Invalid(
            """
import torch


class StepInBackward(torch.optim.Optimizer):
    def __init__(self, net, lr):
        super().__init__(net.parameters(), {"lr": lr})
        for param in net.parameters():
            param.register_post_accumulate_grad_hook(self._step_one)

    def _step_one(self, param):
        param.data.add_(param.grad, alpha=-self.defaults["lr"])
        param.grad = None
""",
            line=8,
            message="hooks each parameter of a given module and drops the handle",
        ),
        # A list the constructor starts empty and fills with parts of the given model:
        # what a loop over it hooks is given (removed only by `__del__`, which the hook,
        # a closure over `self`, keeps from running).
        Invalid(
            """
class LastLayerTaps:
    def __init__(self, model, count=2):
        self.model = model
        self.outputs = {}
        self.handles = []
        chosen = []
        for name, child in reversed(list(model.named_children())):
            if len(chosen) == count:
                break
            chosen.append(child)
        for index, layer in enumerate(chosen):
            self.handles.append(layer.register_forward_hook(self._tap(index)))

    def _tap(self, index):
        def keep(module, args, output):
            self.outputs[index] = output.detach()

        return keep

    def __del__(self):
        for handle in self.handles:
            handle.remove()
""",
            line=12,
            message="`LastLayerTaps` hooks a given module; only `__del__`",
        ),
        # Either branch of a conditional may be the caller's model, and a lookup helper
        # (`rgetattr`) hands back a part of what it is given.
        Invalid(
            """
from torch import nn

from .utils import rgetattr


class FeatureTap:
    def __init__(self, model, layer_path):
        self.model = model if model is not None else nn.Identity()
        self.features = None
        rgetattr(self.model, layer_path).register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.features = output.detach()
""",
            line=10,
            message="`FeatureTap` hooks a module its `__init__` was given and drops the handle",
        ),
        # A walk down a dotted path from the given model (`layer = layer._modules[step]`)
        # ends on a part of that model: the hook stays on it.
        Invalid(
            """
class LayerGrabber:
    def __init__(self, model, dotted):
        self.model = model
        self.last = None
        self._hook(dotted)

    def _hook(self, dotted):
        def grab(module, args, output):
            self.last = output.detach()

        layer = self.model
        for step in dotted.split("."):
            layer = layer._modules[step]
        layer.register_forward_hook(grab)
""",
            line=14,
            message="`LayerGrabber` hooks a module its `__init__` was given and keeps no handle",
        ),
        # The same hook without a change to the layer: the object hooks a layer it was
        # given and nothing can take the hook off.
        Invalid(
            """
import torch


class WeightMask:
    def __init__(self, layer, keep):
        self.keep = keep
        layer.register_forward_pre_hook(self._apply)

    def _apply(self, module, args):
        module.weight.data.mul_(self.keep)
""",
            line=7,
            message="`WeightMask` hooks a module its `__init__` was given and drops the handle",
        ),
        # The hook hands what it sees to a same-file record whose `add` overwrites one
        # slot per layer: no growing capture (HL002 leaves it), but the hook, holding
        # the probe, still stays on the caller's layers.
        Invalid(
            """
from functools import partial


class Sizes:
    def __init__(self):
        self.by_layer = {}

    def add(self, name, size):
        self.by_layer[name] = size


class SizeProbe:
    def __init__(self, model):
        self.sizes = Sizes()
        for name, child in model.named_children():
            child.register_forward_hook(partial(self._record, name))

    def _record(self, name, module, args, output):
        self.sizes.add(name, output.numel())
""",
            line=16,
            message="`SizeProbe` hooks a module its `__init__` was given and drops the handle",
        ),
        # The base class keeps the model it is handed; the subclass's constructor hooks
        # the model's children through it: `self.net` is the caller's model.
        Invalid(
            """
from functools import partial


class Holder:
    def __init__(self, net):
        self.net = net
        self.calls = {}


class CallCounter(Holder):
    def __init__(self, net):
        super().__init__(net)
        for name, child in self.net.named_children():
            child.register_forward_hook(partial(self._count, name))

    def _count(self, name, module, args, output):
        self.calls[name] = self.calls.get(name, 0) + 1
""",
            line=14,
            message="`CallCounter` hooks a module its `__init__` was given and drops the handle",
        ),
        # The model comes back from a same-file helper, beside a count: it is still the
        # one the caller handed in.
        Invalid(
            """
def _unwrap(net):
    return net, sum(1 for _ in net.children())


class LeafTicker:
    def __init__(self, net):
        self.net, self.parts = _unwrap(net)
        self.ticks = 0
        for leaf in self.net.modules():
            leaf.register_forward_pre_hook(self._tick)

    def _tick(self, module, args):
        self.ticks += 1
""",
            line=10,
            message="`LeafTicker` hooks a module its `__init__` was given and drops the handle",
        ),
        # Only `__del__` takes the hook off, but the layer keeps the bound method and the
        # method keeps the monitor: `__del__` never runs while the model lives.
        Invalid(
            """
class NormMonitor:
    def __init__(self, model, layer):
        self.norms = []
        self._hook = model.get_submodule(layer).register_forward_hook(self._measure)

    def _measure(self, module, args, output):
        self.peak = max(getattr(self, "peak", 0.0), float(output.norm()))

    def _release(self):
        self._hook.remove()

    def __del__(self):
        self._release()
""",
            line=4,
            message="only `__del__`, which the hook blocks, removes it",
        ),
        # A counter built once per profiling run: a partial of its method on every submodule.
        Invalid(
            """
from functools import partial

class CallCounter:
    def __init__(self, model):
        self.calls = {}
        for name, module in model.named_modules():
            module.register_forward_hook(partial(self._count, name))

    def _count(self, name, module, args, output):
        self.calls[name] = self.calls.get(name, 0) + 1
""",
            line=7,
            message="`CallCounter` hooks a module its `__init__` was given and drops the handle",
        ),
        # A nested def that uses `self`, on a submodule of the given model.
        Invalid(
            """
import torch

class ActivationNoise:
    def __init__(self, model, sigma):
        self.sigma = sigma

        def jitter(module, args, output):
            return output + self.sigma * torch.randn_like(output)

        model.encoder.register_forward_hook(jitter)
""",
            line=10,
            message="`ActivationNoise` hooks a module its `__init__` was given and drops the handle: the hook is never removed",
        ),
        # An installer handed to `apply` on the model kept from the constructor's argument.
        Invalid(
            """
from torch import nn

class SilentUnits:
    def __init__(self, net):
        self.net = net
        self.silent = 0
        self.net.apply(self._attach)

    def _attach(self, module):
        if isinstance(module, nn.ReLU):
            module.register_forward_hook(self._mark)

    def _mark(self, module, args, output):
        self.silent += int(not output.any())
""",
            line=11,
            message="`SilentUnits` hooks a module its `__init__` was given and keeps no handle",
        ),
        # One hook on each chosen layer, registered in either branch of one `if`: one
        # finding, at the first.
        Invalid(
            """
from functools import partial


class Similarity:
    def __init__(self, model, layers=None):
        self.outputs = {}
        for name, layer in model.named_modules():
            if layers is None:
                layer.register_forward_hook(partial(self._keep, name))
            elif name in layers:
                layer.register_forward_hook(partial(self._keep, name))

    def _keep(self, name, module, args, output):
        self.outputs[name] = output.detach()
""",
            line=9,
            message="drops the handle: never removed (2 registrations)",
        ),
        # An optimizer that watches the model it steps: torch's `Optimizer` is no module
        # and has no teardown, so a second optimizer on the model stacks a second set.
        Invalid(
            """
import torch


class WatchfulSGD(torch.optim.Optimizer):
    def __init__(self, model, lr=0.01):
        super().__init__(model.parameters(), {"lr": lr})
        self.forwards = 0
        for module in model.modules():
            module.register_forward_pre_hook(self._count)

    def _count(self, module, args):
        self.forwards += 1
""",
            line=9,
            message="`WatchfulSGD` hooks a module its `__init__` was given and drops the handle",
        ),
    ]


def _clip(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."
