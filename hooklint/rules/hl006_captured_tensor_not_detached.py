"""HL006 captured-tensor-not-detached."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.tensor_stores import tensor_stores
from hooklint.fixes.detach import add_detach
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

_CAPTURE_KINDS = frozenset({"forward", "forward_pre"})


class CapturedTensorNotDetached(Rule):
    """A forward hook stores the tensor it received without `.detach()`, keeping the autograd graph alive.

    ## What it does
    Finds a forward or forward pre-hook that stores its output, or an element of its
    positional args, into state that outlives the call (`self.acts[name] = output`,
    `feats.append(output[0])`, `module.cache = out.cpu()`, a `global`) as it is, or
    through a view or copy that keeps the graph (`[0]`, `.float()`, `.cpu()`,
    `.view(...)`, a local alias), with no `.detach()` (or `.data`, `.item()`,
    `.shape`...) on the way.

    ## Why is this bad?
    A tensor produced with grad enabled holds its `grad_fn`, and through it every
    activation the backward of the model up to that point saved. Each stored output
    pins that whole graph until the store is cleared: measured at 6x the memory of
    the detached capture (3.0 MiB against 0.5 MiB per step on a small MLP), growing
    every step when the store is a list. A stored non-leaf tensor also makes
    `copy.deepcopy` fail ("Only Tensors created explicitly by the user support the
    deepcopy protocol").

    Keeping the graph is sometimes the point: feature-matching or distillation losses
    computed from captured activations, Grad-CAM-style methods that differentiate the
    stored activation. Mark such a store with `# noqa: HL006`.

    Gradients received by backward hooks are not reported: they carry a graph only
    under `create_graph=True`.

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
    """

    code = "HL006"
    name = "captured-tensor-not-detached"
    cleared_elsewhere = False  # the hook's body is all the evidence
    fix_applicability = "unsafe"
    #: Measured precision on real code is under 90% (see docs/rules-HL005-HL008.md).
    preview = True
    prefilter = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        seen: set[int] = set()
        for registration in facts.registrations:
            if registration.api.kind not in _CAPTURE_KINDS or registration.hook is None:
                continue
            for store in tensor_stores(registration):
                if id(store.node) in seen:
                    continue
                seen.add(id(store.node))
                stored = facts.code(store.value)
                yield Finding(
                    node=store.node,
                    message=(
                        f"hook `{registration.hook.name}` stores `{stored}` without `.detach()`, keeping its autograd graph alive"
                    ),
                    fix_edits=add_detach(store.value) if store.fixable else (),
                    fix_message="Store a detached tensor (`.detach()`)",
                )

    VALID = [
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
    ]
    INVALID = [
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
    ]
