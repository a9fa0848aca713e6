"""HL007 deprecated-backward-hook."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.guards import holding_tests, in_other_branches
from hooklint.analysis.hook_roles import reads_role, replaces_role
from hooklint.analysis.names import isinstance_of
from hooklint.analysis.vocabulary import OTHER_FRAMEWORKS, SINGLE_NODE_MODULES
from hooklint.fixes.full_backward import use_full_backward_hook
from hooklint.rules.base import (
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    format_version,
)

FULL_BACKWARD_SINCE = (1, 8)
_REPLACEMENTS = {
    "register_backward_hook": "register_full_backward_hook",
    "register_module_backward_hook": "register_module_full_backward_hook",
}


class DeprecatedBackwardHook(Rule):
    """A backward hook is registered with the deprecated `register_backward_hook`.

    ## What it does
    Finds calls to `Module.register_backward_hook` and to the process-wide
    `torch.nn.modules.module.register_module_backward_hook`, also through a local
    name bound to the method (`add = m.register_backward_hook`, or one branch of
    `m.register_forward_hook if forward else m.register_backward_hook`) and called
    later.
    A hook of this file (with cross-file analysis also one another module of the
    project defines, or the def an imported factory returns) that never reads its
    `grad_input` (nor the `*args` that holds it) and returns nothing is not reported: it gets the right `grad_output`
    for a module that returns one tensor, or uses the backward only as a signal
    (`def clear_cache(self, *args): self._cached = None`), so which node's gradients
    it is given does not matter to it.
    Nor is a registration on an activation whose forward is one autograd node
    (`ReLU`, `GELU`, `Sigmoid`... tested with `if isinstance(m, nn.ReLU):` where the
    registration runs), or a hook that reads or replaces `grad_input` only under
    such a test of its module (guided backpropagation): there the old hook's
    gradients are the module's, and the full hook breaks an in-place `ReLU`.
    Handing `grad_input` back as it came (`return grad_input`, the name never bound
    again in the hook) neither reads nor replaces it: torch keeps what it passed.
    A class that defines its own `register_backward_hook` (torch's RPC
    `RemoteModule` does) is not reported for its `self.register_backward_hook`
    calls, nor is a fallback: a call in one branch of an `if` whose other branch
    registers the full variant (`if torch.__version__ >= "1.8": ...full... else:
    ...register_backward_hook...`), which runs only where the full one cannot.

    ## Why is this bad?
    These hooks receive the gradients of the module's *last autograd node*, not of
    the module's inputs and outputs. For `relu(linear(x)) * 3` the hook's
    `grad_input` is the gradient of the multiplication: shapes that do not match the
    inputs, an extra `None`, and `grad_input[0] != x.grad`. Code that clips, logs or
    rescales "input gradients" this way silently works on the wrong tensors. The
    APIs have been deprecated since torch 1.8 and warn only when forward has more
    than one autograd node.

    ## Example
    ```python
    def log_grads(module, grad_input, grad_output):
        stats[module] = grad_input[0].norm()

    layer.register_backward_hook(log_grads)
    ```

    ## Use instead
    ```python
    layer.register_full_backward_hook(log_grads)
    ```

    ## Fix safety
    Unsafe, and withheld when the target torch is older than 1.8 (where the full
    variants appeared). The full hook's semantics differ on purpose:
    - `grad_input` now holds the gradients of the forward's positional tensor inputs
      (`None` for inputs that do not require grad), so its length and shapes change;
    - the module's inputs and outputs become views produced by `BackwardHookFunction`,
      so an in-place op on them right after the module (`out.relu_()`) now raises
      "Output 0 of BackwardHookFunction is a view and is being modified inplace";
    - when no input requires grad (the first layer of a frozen model, an embedding
      of integer ids) the hook gets `grad_input == (None,)`, and torch warns.
    Review hooks that index `grad_input` by position or return a replacement tuple.
    A process-wide function imported by name is reported without a fix (its import
    would have to change as well).

    ## Known problems
    A call on an instance of a class that defines its own `register_backward_hook`
    is reported when the receiver is not `self` and the hook reads `grad_input`
    (torch's RPC tests call `remote_module.register_backward_hook(...)` on a
    `RemoteModule`, which only raises: their hook does nothing, so it is not).
    A hook that reads only `grad_output` is not reported, though for a module that
    returns several tensors the deprecated hook's `grad_output` covers the first
    one only.

    ## Options
    `target-torch`: the fix is withheld below 1.8.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`):
    no finding. On torch 2.13's own sources (`hooklint check --select HL007
    <site-packages>/torch`): 2 findings, both true (a DDP test's hook that returns a
    replacement `grad_input`). On a held-out set of 42 libraries never read before
    (`notes/heldout9.md`): 8 findings before hooks that never read `grad_input` were
    left out (1 true, 5 false, 2 debatable), 3 after (1 true, 2 debatable). On held-out
    set 10 (33 libraries): 5 findings before single-node activations were left out
    (3 false: guided backpropagation on `ReLU`s; 2 debatable: a `Conv2d`'s
    `grad_input[0]`, right with zero padding), 2 after (the debatable ones).
    """

    code = "HL007"
    name = "deprecated-backward-hook"
    cleared_elsewhere = False  # the registration's name is all the evidence
    fix_applicability = "unsafe"
    prefilter = ("register_backward_hook", "register_module_backward_hook")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        if _other_framework(facts):
            return  # its modules' ``register_backward_hook`` is that framework's own
        own_methods = _classes_defining(facts, "register_backward_hook")
        for registration in facts.registrations:
            deprecated = [name for name in registration.api_names if name in _REPLACEMENTS]
            if not deprecated:
                continue
            if _is_own_method(registration, own_methods):
                continue
            if not _uses_grad_input(registration):
                continue  # what the deprecated API gets wrong, the hook never looks at
            if _fallback(facts, registration, _REPLACEMENTS[deprecated[0]]):
                continue  # the old API only where the other branch cannot run
            if _on_single_node_modules(facts, registration):
                continue  # one autograd node: its gradients are the module's
            yield self._finding(facts, context, registration, deprecated[0])

    def _finding(self, facts, context, registration: Registration, old: str) -> Finding:
        replacement = _REPLACEMENTS[old]
        message = f"`{old}` reports the last autograd node's gradients; use `{replacement}`"
        edits = use_full_backward_hook(registration, old, replacement)
        withheld = None
        if edits and context.target_torch < FULL_BACKWARD_SINCE:
            withheld = (
                f"`{replacement}` needs torch >= {format_version(FULL_BACKWARD_SINCE)}, "
                f"target is {format_version(context.target_torch)}"
            )
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message=f"Use `{replacement}` (inputs become views; grad_input changes meaning)",
            fix_withheld=withheld,
        )

    VALID = [
        # A MindSpore file: a cell's `register_backward_hook` is MindSpore's own backward
        # hook, not torch's deprecated one.
        Valid(
            """
from mindspore import nn


class NormProbe:
    def __init__(self, net: nn.Cell):
        self.norms = []
        self.handles = [
            cell.register_backward_hook(self._record) for _, cell in net.cells_and_names()
        ]

    def _record(self, cell_id, grad_input, grad_output):
        self.norms.append(float(grad_input[0].norm()))
"""
        ),
        Valid(
            """
def watch_gradients(manager, model, sink):
    manager.register_backward_hook(lambda module, grad_in, grad_out: sink.append(grad_in[0]), modules=[model])
"""
        ),
        Valid(
            """
def clip_input_grads(module, grad_input, grad_output):
    return tuple(g.clamp(-1, 1) if g is not None else None for g in grad_input)

layer.register_full_backward_hook(clip_input_grads)
"""
        ),
        # A base class of another file has its own `register_backward_hook(event, callback)`:
        # two positional arguments, which torch's never takes.
        Valid(
            """
from pipelines.base import Pipeline


class OverlapPipeline(Pipeline):
    def setup(self):
        def step(pipeline):
            pipeline.optimizer.step()

        self.register_backward_hook(self.loss_event, step)
"""
        ),
        # A wrapper class that defines its own `register_backward_hook` (RemoteModule's shape).
        Valid(
            """
class RemoteLayer:
    def register_backward_hook(self, hook):
        raise RuntimeError("backward hooks are not supported for remote modules")

    def setup(self, hook):
        self.register_backward_hook(hook)
"""
        ),
        # Tensor hooks and process-wide full hooks are fine.
        Valid(
            """
from torch.nn.modules.module import register_module_full_backward_hook

def watch(model, log):
    handles = [p.register_hook(lambda g: log.append(g.norm())) for p in model.parameters()]
    handles.append(register_module_full_backward_hook(lambda m, gi, go: log.append(len(gi))))
    return handles
"""
        ),
        # A local name bound to forward hooks only.
        Valid(
            """
class Tap:
    def __init__(self, layer, before=False):
        attach = layer.register_forward_pre_hook if before else layer.register_forward_hook
        self.handle = attach(self.keep)

    def keep(self, module, *args):
        self.last = args[-1]
"""
        ),
        # A fallback for a torch without the full hook: the old API runs only there.
        Valid(
            """
def watch_gradients(model, log):
    handles = []
    for layer in model.children():
        if hasattr(layer, "register_full_backward_hook"):
            handles.append(layer.register_full_backward_hook(log))
        else:
            handles.append(layer.register_backward_hook(log))
    return handles
"""
        ),
        # The backward is only a signal: the hook takes `*args` and never reads them.
        Valid(
            """
class CachedProjection(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight
        self._folded = None
        self.register_backward_hook(self._forget_folded)

    def _forget_folded(self, *args):
        self._folded = None
"""
        ),
        # A hook that changes the gradients of `ReLU`s only and hands every other module's
        # `grad_input` back as it came (which changes nothing, like returning `None`).
        Valid(
            """
def halve_relu_grads(module, grad_input, grad_output):
    if isinstance(module, nn.ReLU):
        return (grad_input[0] / 2,)
    return grad_input


def damp_activations(model):
    return [m.register_backward_hook(halve_relu_grads) for m in model.modules()]
"""
        ),
        # Only `grad_output` is read: for a module with one output tensor the deprecated
        # hook gets it right (only `grad_input` is the last node's).
        Valid(
            """
def keep_output_grads(model, store):
    def keep(module, grad_in, grad_out):
        store[module] = grad_out[0].detach()

    return [m.register_backward_hook(keep) for m in model.modules() if isinstance(m, nn.Linear)]
"""
        ),
        # A hook that does nothing (a test that the registration itself is refused):
        # only a placeholder *method*, which subclasses override, is unknown.
        Valid(
            """
def test_backward_hooks_are_refused(remote_layer):
    def hook(module, grad_input, grad_output):
        pass

    with pytest.raises(ValueError):
        remote_layer.register_backward_hook(hook)
"""
        ),
        # Guided backpropagation: the hooks go only on `ReLU`s, a single autograd node,
        # whose old-style `grad_input` is the input's gradient (the full hook would
        # refuse an in-place `ReLU`).
        Valid(
            """
import torch
from torch import nn

def positive_only(module, grad_input, grad_output):
    return (torch.clamp(grad_input[0], min=0.0),)

def guide(model):
    handles = []
    for layer in model.modules():
        if isinstance(layer, (nn.ReLU, nn.LeakyReLU)):
            handles.append(layer.register_backward_hook(positive_only))
    return handles
"""
        ),
        # On every module, but the hook touches `grad_input` only when its module is one.
        Valid(
            """
import torch
from torch import nn

def positive_only(module, grad_input, grad_output):
    if isinstance(module, nn.ReLU):
        return (torch.clamp(grad_input[0], min=0.0),)

def guide(model):
    return [m.register_backward_hook(positive_only) for m in model.modules()]
"""
        ),
    ]
    INVALID = [
        # Torch's modules, in a file that also imports MindSpore (a converter between the
        # two): the torch module's deprecated hook is torch's.
        Invalid(
            """
import mindspore
import torch


def grad_probe(model: torch.nn.Module, seen):
    return model.register_backward_hook(lambda m, grad_in, grad_out: seen.append(grad_in[0]))
""",
            line=6,
            expected="""
import mindspore
import torch


def grad_probe(model: torch.nn.Module, seen):
    return model.register_full_backward_hook(lambda m, grad_in, grad_out: seen.append(grad_in[0]))
""",
        ),
        # A gradient-norm logger over every child (captum/torchsummary-era shape).
        Invalid(
            """
class GradientLogger:
    def __init__(self, model):
        self.norms = {}
        self.handles = [
            child.register_backward_hook(self._log) for child in model.children()
        ]

    def _log(self, module, grad_input, grad_output):
        self.norms[type(module).__name__] = grad_input[0].norm().item()
""",
            expected="""
class GradientLogger:
    def __init__(self, model):
        self.norms = {}
        self.handles = [
            child.register_full_backward_hook(self._log) for child in model.children()
        ]

    def _log(self, module, grad_input, grad_output):
        self.norms[type(module).__name__] = grad_input[0].norm().item()
""",
            line=5,
            message="register_full_backward_hook",
        ),
        # The process-wide variant through the module attribute.
        Invalid(
            """
import torch

def install_nan_check():
    def check(module, grad_input, grad_output):
        if any(g is not None and g.isnan().any() for g in grad_input):
            raise FloatingPointError(type(module).__name__)

    return torch.nn.modules.module.register_module_backward_hook(check)
""",
            expected="""
import torch

def install_nan_check():
    def check(module, grad_input, grad_output):
        if any(g is not None and g.isnan().any() for g in grad_input):
            raise FloatingPointError(type(module).__name__)

    return torch.nn.modules.module.register_module_full_backward_hook(check)
""",
            line=8,
        ),
        # Imported by name: reported, no fix (the import would have to change too).
        Invalid(
            """
from torch.nn.modules.module import register_module_backward_hook

handle = register_module_backward_hook(lambda m, gi, go: print(type(m).__name__, len(gi)))
""",
            expected=None,
            line=3,
        ),
        # A target torch older than 1.8: the fix is withheld.
        Invalid(
            """
def scale_grads(module, grad_input, grad_output):
    return tuple(g * 0.5 if g is not None else g for g in grad_input)

encoder.register_backward_hook(scale_grads)
""",
            expected=None,
            line=4,
            message="fix withheld",
            options={"target_torch": (1, 7)},
        ),
        # The method is picked into a local name first, then called.
        Invalid(
            """
class GradTap:
    def __init__(self, layer, forward=True):
        attach = layer.register_forward_hook if forward else layer.register_backward_hook
        self.handle = attach(self.keep)

    def keep(self, module, inputs, outputs):
        self.last = inputs
""",
            expected="""
class GradTap:
    def __init__(self, layer, forward=True):
        attach = layer.register_forward_hook if forward else layer.register_full_backward_hook
        self.handle = attach(self.keep)

    def keep(self, module, inputs, outputs):
        self.last = inputs
""",
            line=4,
            message="`register_backward_hook`",
        ),
        # The full hook after the `if`, not in its other branch: both run on any torch.
        Invalid(
            """
def watch_gradients(model, log, per_layer):
    handles = [model.register_full_backward_hook(log)]
    if per_layer:
        handles += [layer.register_backward_hook(log) for layer in model.children()]
    return handles
""",
            expected="""
def watch_gradients(model, log, per_layer):
    handles = [model.register_full_backward_hook(log)]
    if per_layer:
        handles += [layer.register_full_backward_hook(log) for layer in model.children()]
    return handles
""",
            line=4,
            message="register_full_backward_hook",
        ),
        # `*args` holds `grad_input`, and the hook reads it.
        Invalid(
            """
def watch(layer, seen):
    def record(module, *grads):
        seen.append(grads[0])

    return layer.register_backward_hook(record)
""",
            expected="""
def watch(layer, seen):
    def record(module, *grads):
        seen.append(grads[0])

    return layer.register_full_backward_hook(record)
""",
            line=5,
        ),
        # Handing `grad_input` back as it came does not read it: here the hook reads it
        # before, so the node it comes from matters.
        Invalid(
            """
def watch_and_pass(module, grad_input, grad_output):
    norms.append(grad_input[0].norm())
    return grad_input

head.register_backward_hook(watch_and_pass)
""",
            expected="""
def watch_and_pass(module, grad_input, grad_output):
    norms.append(grad_input[0].norm())
    return grad_input

head.register_full_backward_hook(watch_and_pass)
""",
            line=5,
        ),
        # A name bound again before it is handed back is a replacement.
        Invalid(
            """
def damp(module, grad_input, grad_output):
    if isinstance(module, nn.ReLU):
        return (grad_input[0] * 0.5,)
    grad_input = (None,) * len(grad_output)
    return grad_input

block.register_backward_hook(damp)
""",
            expected="""
def damp(module, grad_input, grad_output):
    if isinstance(module, nn.ReLU):
        return (grad_input[0] * 0.5,)
    grad_input = (None,) * len(grad_output)
    return grad_input

block.register_full_backward_hook(damp)
""",
            line=7,
        ),
        # Returning a value replaces `grad_input`, the last node's: read or not, it matters.
        Invalid(
            """
def freeze_inputs(module, grad_input, grad_output):
    return (None,)

stem.register_backward_hook(freeze_inputs)
""",
            expected="""
def freeze_inputs(module, grad_input, grad_output):
    return (None,)

stem.register_full_backward_hook(freeze_inputs)
""",
            line=4,
        ),
        # The hook is a placeholder each subclass overrides: what runs is unknown here.
        Invalid(
            """
class GradientProbe:
    def hook(self, module, *grads):
        raise NotImplementedError

    def attach(self, layer):
        return layer.register_backward_hook(self.hook)
""",
            expected="""
class GradientProbe:
    def hook(self, module, *grads):
        raise NotImplementedError

    def attach(self, layer):
        return layer.register_full_backward_hook(self.hook)
""",
            line=6,
        ),
        # A `Linear` among the tested classes: its last node is the bias addition.
        Invalid(
            """
from torch import nn

def record(module, grad_input, grad_output):
    seen.append(grad_input[0])

def watch(model):
    for layer in model.modules():
        if isinstance(layer, (nn.ReLU, nn.Linear)):
            layer.register_backward_hook(record)
""",
            expected="""
from torch import nn

def record(module, grad_input, grad_output):
    seen.append(grad_input[0])

def watch(model):
    for layer in model.modules():
        if isinstance(layer, (nn.ReLU, nn.Linear)):
            layer.register_full_backward_hook(record)
""",
            line=9,
        ),
    ]


def _uses_grad_input(registration: Registration) -> bool:
    """The hook may read ``grad_input`` or replace it (returns a value), other than
    under a test that its module is a single-node activation; True when the hook is
    not in this file."""
    hook = registration.hook
    if hook is None or reads_role(registration, "grad_input", unless_module=SINGLE_NODE_MODULES):
        return True
    return replaces_role(registration, "grad_input", SINGLE_NODE_MODULES)


def _on_single_node_modules(facts: ModuleFacts, registration: Registration) -> bool:
    """The hooked module is tested, where the registration runs, to be one of the
    activations whose forward is a single autograd node (``if isinstance(m, nn.ReLU):
    m.register_backward_hook(fn)``): there the deprecated hook's ``grad_input`` is the
    input's gradient, and the full hook would break an in-place ``ReLU``."""
    receiver = registration.receiver
    if not isinstance(receiver, cst.Name):
        return False
    for test in holding_tests(facts, registration.site):
        kinds = isinstance_of(test, receiver.value)
        if kinds and all(kind in SINGLE_NODE_MODULES for kind in kinds):
            return True
    return False


def _classes_defining(facts: ModuleFacts, method: str) -> set[str]:
    return {info.class_name for info in facts.functions if info.name == method and info.class_name}


def _other_framework(facts: ModuleFacts) -> bool:
    """The file imports another framework whose modules have a ``register_backward_hook``
    of their own (:data:`OTHER_FRAMEWORKS`), and nothing from torch."""
    roots = {qualified.split(".", 1)[0] for qualified in facts.imports.values()}
    return bool(roots & OTHER_FRAMEWORKS) and "torch" not in roots


def _is_own_method(registration: Registration, own_methods: set[str]) -> bool:
    """``self.register_backward_hook(...)`` inside a class that defines that method."""
    if not registration.receiver_is("self"):
        return False
    class_name = registration.site.class_name
    return class_name is not None and class_name in own_methods


def _fallback(facts: ModuleFacts, registration: Registration, replacement: str) -> bool:
    """The registration is in one branch of an ``if`` whose other branch registers
    ``replacement``: the old API is the fallback for a torch without the new one."""
    return any(
        replacement in other.api_names and in_other_branches(registration.site, other.site)
        for other in facts.registrations
    )
