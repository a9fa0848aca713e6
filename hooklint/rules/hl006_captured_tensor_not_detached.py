"""HL006 captured-tensor-not-detached."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.grad_mode import computed_in_no_grad_hook, hooks_fire_without_grad
from hooklint.analysis.store_uses import dies_with_call, graph_needed
from hooklint.analysis.tensor_stores import tensor_stores
from hooklint.fixes.detach import add_detach
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

_CAPTURE_KINDS = frozenset({"forward", "forward_pre"})


def _short(code: str, width: int = 24) -> str:
    code = " ".join(code.split())
    return code if len(code) <= width else code[: width - 3] + "..."


class CapturedTensorNotDetached(Rule):
    """A forward hook stores the tensor it received without `.detach()`, keeping the autograd graph alive.

    ## What it does
    Finds a forward or forward pre-hook that stores its output, or an element of its
    positional args, into state that outlives the call (`self.acts[name] = output`,
    `feats.append(output[0])`, `module.cache = out.cpu()`, a `global`) as it is, or
    through a view or copy that keeps the graph (`[0]`, `.float()`, `.cpu()`,
    `.view(...)`, a local alias), with no `.detach()` (or `.data`, `.item()`,
    `.shape`...) on the way. A name the hook rebinds only in top-level
    `name = value` statements is read at the store, binding by binding
    (`x = x[0]`, `x = x.detach()`, then `store.append(x)` stores a detached tensor).

    ## Why is this bad?
    A tensor produced with grad enabled holds its `grad_fn`, and through it every
    activation the backward of the model up to that point saved. Each stored output
    pins that whole graph until the store is cleared: measured at 6x the memory of
    the detached capture (3.0 MiB against 0.5 MiB per step on a small MLP), growing
    every step when the store is a list. A stored non-leaf tensor also makes
    `copy.deepcopy` fail ("Only Tensors created explicitly by the user support the
    deepcopy protocol").

    Not reported, because no graph is kept or the graph is the point:
    - forwards without grad: the registering function (or an enclosing one) is
      decorated with `torch.no_grad()` / `torch.inference_mode()`, every same-file
      caller of it runs under one, the registration sits in such a `with`, or the
      function runs the model after registering inside one (also
      `set_grad_enabled(False)` and calibration contexts such as
      `calibration_forward_context` / `run_calibration`);
    - tensors a hook decorated with `torch.no_grad()` computes anew (a reduction,
      arithmetic); what it received, and views of it, still count;
    - stores that die with the call: a local (or `nonlocal`) of the registering
      function, which removes the hook before it returns;
    - code that needs the graph: the registering function differentiates the stored
      activations (`torch.autograd.grad`), the class's own `forward` reads the store,
      or a method builds a loss from it (its name says loss/penalty/regularizer, or a
      sibling detaches its result only for logging).
    Mark any other deliberate graph keeping with `# noqa: HL006`.
    (`hooklint/analysis/grad_mode.py`, `hooklint/analysis/store_uses.py`.)

    Gradients received by backward hooks are not reported: they carry a graph only
    under `create_graph=True`.
    Nor is a whole args tuple stored as it is (the "capture the inputs to replay
    them" idiom): it may hold non-tensors and is captured once.

    ## Example
    ```python
    activations = {}

    def save(name):
        def hook(module, args, output):
            activations[name] = output
        return hook

    model.layer4.register_forward_hook(save("layer4"))
    ```

    ## Use instead
    ```python
    def save(name):
        def hook(module, args, output):
            activations[name] = output.detach()
        return hook
    ```
    Add `.clone()` too if a later in-place op (`ReLU(inplace=True)`) may overwrite
    the stored tensor.

    ## Fix safety
    Unsafe: it adds `.detach()` to the stored expression, which changes behavior for
    code that does backpropagate through the stored tensor, and it assumes the stored
    value is a tensor (a module that returns a tuple needs each element detached).
    No fix is offered when the stored value is the whole args tuple, a literal that
    holds the tensor, or is added with `extend`/`update`.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`):
    1 finding, debatable (MONAI's class activation maps keep the last activation
    until the next call); before the grad-mode and store-use analysis the rule made
    17 findings there, 16 of them false. No true or false positive is left, so
    precision cannot be measured and the rule stays in preview. On torch 2.13's
    own sources (`hooklint check --preview --select HL006 <site-packages>/torch`):
    no finding.
    """

    code = "HL006"
    name = "captured-tensor-not-detached"
    # Cleared by evidence anywhere in the file (callers under no_grad, every read of the
    # store, a sibling that detaches it): such files are read whole (only with --preview).
    whole_module = True
    fix_applicability = "unsafe"
    #: Not measured at 90% precision on real code yet (the docstring's "Precision on real code").
    preview = True
    prefilter = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        seen: set[int] = set()
        for registration in facts.registrations:
            if registration.api.kind not in _CAPTURE_KINDS or registration.hook is None:
                continue
            stores = tensor_stores(registration)
            if not stores or hooks_fire_without_grad(facts, registration):
                continue
            for store in stores:
                if id(store.node) in seen:
                    continue
                seen.add(id(store.node))
                if dies_with_call(facts, registration, store) or graph_needed(facts, registration, store):
                    continue
                if computed_in_no_grad_hook(facts, registration, store.value):
                    continue
                stored = facts.code(store.value)
                yield Finding(
                    node=store.node,
                    message=(
                        f"hook `{_short(registration.hook.name)}` stores `{_short(stored)}` without `.detach()`, "
                        "keeping its autograd graph alive"
                    ),
                    fix_edits=add_detach(store.value) if store.fixable else (),
                    fix_message="Store a detached tensor (`.detach()`)",
                )

    VALID = [
        # The hook rebinds the name to a detached copy before it stores it.
        Valid(
            """
inputs_seen = []

def keep_input(module, args, output):
    first = args[0]
    first = first.detach().cpu()
    inputs_seen.append(first)

model.encoder.register_forward_hook(keep_input)
"""
        ),
        # Detached (and cloned) captures, on the output and through a tuple unwrap.
        Valid(
            """
class FeatureExtractor:
    def __init__(self, model, layers):
        self.features = {}
        for name in layers:
            model.get_submodule(name).register_forward_hook(self._save(name))

    def _save(self, name):
        def hook(module, args, output):
            if isinstance(output, tuple):
                output = output[0]
            self.features[name] = output.detach().clone()
        return hook
"""
        ),
        # Statistics only: shapes, norms as Python floats, a running mean under `.data`.
        Valid(
            """
stats = {}

def record(module, inputs, output):
    stats[module] = (tuple(output.shape), output.norm().item(), output.data.mean())
    module.last_input_shape = inputs[0].shape

for layer in model.modules():
    layer.register_forward_hook(record)
"""
        ),
        # A distillation loss needs the graph: the store is deliberately kept and waived.
        Valid(
            """
class Distiller:
    def __init__(self, student):
        self.hidden = []
        student.encoder.register_forward_hook(self._keep)

    def _keep(self, module, args, output):
        self.hidden.append(output)  # noqa: HL006 -- the distillation loss backpropagates through it
"""
        ),
        # Local scratch lists that never leave the hook, and gradients in a backward hook.
        Valid(
            """
def install(model, norms):
    def hook(module, args, output):
        parts = []
        parts.append(output)
        print(sum(p.numel() for p in parts))

    def grad_hook(module, grad_input, grad_output):
        norms.append(grad_output[0])

    model.register_forward_hook(hook)
    model.register_full_backward_hook(grad_hook)
"""
        ),
        # Capturing a submodule's whole input tuple to replay it (torch.fx's splitter shape):
        # it may hold non-tensors and is a one-shot capture, so it is not reported.
        Valid(
            """
def inputs_of(model, submodule, sample):
    captured = None

    def grab(module, args, kwargs):
        nonlocal captured
        captured = (args, kwargs)

    with submodule.register_forward_pre_hook(grab, with_kwargs=True):
        model(*sample)
    return captured
"""
        ),
        # Registered in a helper whose only caller runs under torch.no_grad().
        Valid(
            """
import torch

def _attach(model, store):
    def keep(module, args, output):
        store.append(output)
    return [m.register_forward_hook(keep) for m in model.blocks]

@torch.no_grad()
def collect_scales(model, batches, store):
    handles = _attach(model, store)
    for batch in batches:
        model(batch)
    return handles
"""
        ),
        # The model runs inside `with torch.inference_mode()` right after registering.
        Valid(
            """
import torch

class Probe:
    def __init__(self):
        self.outputs = {}

    def run(self, model, batch):
        model.head.register_forward_hook(self._grab)
        with torch.inference_mode():
            model(batch)

    def _grab(self, module, args, output):
        self.outputs[module] = output
"""
        ),
        # A calibration context (it enters no_grad) around the forward passes.
        Valid(
            """
from llmcompressor.utils.helpers import calibration_forward_context

def gather_inputs(model, layer, loader):
    seen = []
    handle = layer.register_forward_pre_hook(lambda m, args: seen.append(args[0]))
    with calibration_forward_context(model):
        for batch in loader:
            model(**batch)
    return seen, handle
"""
        ),
        # A function-local capture whose hook is removed before returning: it dies with the call.
        Valid(
            """
def last_hidden(model, layer, **inputs):
    found = {}

    def grab(module, args, output):
        found["hidden"] = output[0] if isinstance(output, tuple) else output

    handle = layer.register_forward_hook(grab)
    try:
        model(**inputs)
    finally:
        handle.remove()
    return found["hidden"]
"""
        ),
        # Attribution: the stored layer output is differentiated in the same function.
        Valid(
            """
import torch

def layer_gradients(model, layer, inputs, target):
    saved = {}

    def keep(module, args, output):
        saved[module] = output

    hook = layer.register_forward_hook(keep)
    scores = model(inputs)[:, target].sum()
    hook.remove()
    return torch.autograd.grad(scores, saved[layer])
"""
        ),
        # The captured features feed the module's own forward (a multi-scale head).
        Valid(
            """
import torch.nn as nn

class PyramidHead(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.taps = {}
        for name in ("layer2", "layer3"):
            getattr(backbone, name).register_forward_hook(self._tap(name))

    def _tap(self, name):
        def hook(module, args, output):
            self.taps[name] = output
        return hook

    def forward(self, x):
        top = self.backbone(x)
        return top + sum(t.mean() for t in self.taps.values())
"""
        ),
        # A regularizer summed into the training loss; only the logged copy is detached.
        Valid(
            """
class ActivationPenalty:
    def __init__(self, model):
        self.terms = []
        for module in model.modules():
            module.register_forward_hook(self._record)

    def _record(self, module, args, output):
        self.terms.append(output.abs().mean())

    def total(self):
        return sum(self.terms)

    def log_value(self):
        return self.total().detach().item()
"""
        ),
        # The hook itself runs under `torch.no_grad()`: a reduction it computes holds no graph.
        Valid(
            """
import torch


class ChannelScorer:
    def attach(self, model):
        @torch.no_grad()
        def score(module, inputs, output):
            module.channel_score = inputs[0].abs().mean((0, 2, 3))

        self.handles = [m.register_forward_hook(score) for m in model.modules()]
"""
        ),
    ]
    INVALID = [
        # The detached copy is made only after the store: the stored tensor keeps its graph.
        Invalid(
            """
inputs_seen = []

def keep_input(module, args, output):
    first = args[0]
    inputs_seen.append(first)
    first = first.detach()

model.encoder.register_forward_hook(keep_input)
""",
            expected="""
inputs_seen = []

def keep_input(module, args, output):
    first = args[0]
    inputs_seen.append(first.detach())
    first = first.detach()

model.encoder.register_forward_hook(keep_input)
""",
            line=5,
            message="`first`",
        ),
        # The classic closure over a dict of activations.
        Invalid(
            """
activations = {}

def get_activation(name):
    def hook(model, input, output):
        activations[name] = output
    return hook

model.fc2.register_forward_hook(get_activation("fc2"))
""",
            expected="""
activations = {}

def get_activation(name):
    def hook(model, input, output):
        activations[name] = output.detach()
    return hook

model.fc2.register_forward_hook(get_activation("fc2"))
""",
            line=5,
            message="`output`",
        ),
        # An HF decoder layer returns a tuple: unwrapped into a local, moved to CPU, appended.
        Invalid(
            """
class HiddenStateRecorder:
    def __init__(self, model):
        self.states = []
        self.handles = [layer.register_forward_hook(self._record) for layer in model.layers]

    def _record(self, module, args, output):
        hidden = output[0] if isinstance(output, tuple) else output
        self.states.append(hidden.cpu())
""",
            expected="""
class HiddenStateRecorder:
    def __init__(self, model):
        self.states = []
        self.handles = [layer.register_forward_hook(self._record) for layer in model.layers]

    def _record(self, module, args, output):
        hidden = output[0] if isinstance(output, tuple) else output
        self.states.append(hidden.cpu().detach())
""",
            line=8,
            message="hidden.cpu()",
        ),
        # A pre-hook caching the module's input on the module itself (calibration shape).
        Invalid(
            """
def cache_input(module, args):
    module.calib_input = args[0]

for linear in linears:
    linear.register_forward_pre_hook(cache_input)
""",
            expected="""
def cache_input(module, args):
    module.calib_input = args[0].detach()

for linear in linears:
    linear.register_forward_pre_hook(cache_input)
""",
            line=2,
        ),
        # A lambda storing via __setitem__.
        Invalid(
            """
feats = {}
backbone.register_forward_hook(lambda m, i, o: feats.__setitem__("backbone", o))
""",
            expected="""
feats = {}
backbone.register_forward_hook(lambda m, i, o: feats.__setitem__("backbone", o.detach()))
""",
            line=2,
        ),
        # A local list whose hook is never removed: the closure keeps it (and each graph) alive.
        Invalid(
            """
def watch(model):
    seen = []

    def hook(module, args, output):
        seen.append(output)

    model.register_forward_hook(hook)
    return seen
""",
            expected="""
def watch(model):
    seen = []

    def hook(module, args, output):
        seen.append(output.detach())

    model.register_forward_hook(hook)
    return seen
""",
            line=5,
        ),
        # no_grad only around an evaluation that ran before the hook was registered.
        Invalid(
            """
import torch

def train_with_probe(model, batch, probe):
    with torch.no_grad():
        baseline = model(batch)
    model.encoder.register_forward_hook(lambda m, a, out: probe.append(out))
    loss = model(batch).sum() - baseline.sum()
    loss.backward()
""",
            expected="""
import torch

def train_with_probe(model, batch, probe):
    with torch.no_grad():
        baseline = model(batch)
    model.encoder.register_forward_hook(lambda m, a, out: probe.append(out.detach()))
    loss = model(batch).sum() - baseline.sum()
    loss.backward()
""",
            line=6,
        ),
        # Under the same decorator, a view of the received input still holds its graph.
        Invalid(
            """
import torch


class InputKeeper:
    def attach(self, model):
        @torch.no_grad()
        def keep(module, inputs, output):
            module.last_input = inputs[0].view(inputs[0].shape[0], -1)

        self.handles = [m.register_forward_hook(keep) for m in model.modules()]
""",
            expected="""
import torch


class InputKeeper:
    def attach(self, model):
        @torch.no_grad()
        def keep(module, inputs, output):
            module.last_input = inputs[0].view(inputs[0].shape[0], -1).detach()

        self.handles = [m.register_forward_hook(keep) for m in model.modules()]
""",
            line=8,
            message="stores `inputs[0].view(",
        ),
    ]
