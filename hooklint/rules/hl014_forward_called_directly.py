"""HL014 forward-called-directly."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.forward_calls import bypass_reason
from hooklint.fixes.call_module import call_module_instead_of_forward
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class ForwardCalledDirectly(Rule):
    """A module's `forward` is called directly, which skips every hook on it.

    ## What it does
    Finds `x.forward(...)` calls on an object other than `super()` or a class (an
    unbound `Parent.forward(self, ...)` is how a subclass reaches its parent).

    ## Why is this bad?
    `Module.__call__` is what runs hooks: forward pre-hooks, forward hooks, backward
    hooks and the global `register_module_*` hooks. Calling `forward` directly skips
    all of them, and with them everything built on hooks: FSDP's parameter
    all-gathers, quantization observers, PEFT/LoRA adapters attached by hooks,
    `accelerate`'s device-offload hooks, activation capture for attribution. The
    module computes its output as if nothing were attached.

    ## Example
    ```python
    class Block(nn.Module):
        def forward(self, x):
            h = self.attn.forward(self.norm(x))
            return x + self.mlp.forward(h)
    ```

    ## Use instead
    ```python
    class Block(nn.Module):
        def forward(self, x):
            h = self.attn(self.norm(x))
            return x + self.mlp(h)
    ```

    Not reported, because `x(...)` would be wrong or pointless there
    (`hooklint/analysis/forward_calls.py`):
    - receivers that are no module: a class of this file that does not derive from
      `nn.Module` (through same-file bases: `object`, `ABC`, mixins, `autograd.Function`),
      a pipeline (`...Pipeline`), a C++ custom class (`torch.classes.ns.Op()`),
      RPC/TorchScript objects, `super()`, a class (`Parent.forward(self, x)`,
      `x.__class__.forward(x)`, `__class__.forward(...)`);
    - a receiver typed with a `@torch.jit.interface` class: TorchScript interface
      calls require `.forward`;
    - a deliberate bypass: in `__call__` or `forward` of the same object, in a hook
      registered on that module (calling it would re-enter the hook), in a forward
      replacement (a function assigned to `module.forward`, or a non-method `def`
      taking `self`), in `@torch.jit.script` code, or explained by a comment on the
      line or just above it (`__call__`, hooks, recursion, double execution);
    - helpers whose `forward` takes the module they serve
      (`self.variants[k].forward(self, x)`, `runner.forward(block, batch)`), and the
      `forward` protocol of a same-file class that is no module.

    ## Fix safety
    Unsafe: after the fix, hooks on the module run, which is the point, but it
    changes behaviour: a hook that replaces outputs now does so. The fix is offered
    only where the receiver is known, from this file, to be an `nn.Module`: `self`
    in a class that derives from `nn.Module` (directly, from another `torch.nn`
    module, or through classes of the same file), `self.x` that `__init__` sets to
    an `nn.*` module or to an instance of such a class, and `self.x[i]` of an
    `nn.ModuleList`/`ModuleDict`/`Sequential`. Anywhere else `x(...)` may run a
    different `__call__`, none at all, or (`self(...)` in a class that is no
    module) recurse, so the finding comes without a fix.

    ## Known problems
    The false positives left are receivers whose class lives in another file and is
    no module (gptqmodel's `LinearEXL3`, torch_geometric's `BaseTransform`): from
    this file alone they look like modules. Most findings are debatable rather than
    wrong: `self.forward(...)` in a helper method of the module, a wrapper that
    delegates to the model it wraps, a frozen feature network.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`):
    68 findings; with the labels and a reading of every unlabeled one
    (`notes/preview-triage.md`), 12 true, 3 false and 53 debatable: 80% (12 of 15).
    The true ones are submodules called through `.forward` inside a parent's
    `forward` (torch_geometric `Linear` layers whose lazy-init pre-hook is skipped,
    `ModuleList` kernels, `Sequential` layers). On torch 2.13's own sources
    (`hooklint check --preview --select HL014 <site-packages>/torch`): 6 findings,
    1 true (DDP calls `self.module.forward` in its `_delay_all_reduce_all_params`
    mode and `self.module(...)` otherwise), 5 debatable (compiler backends running a
    traced graph, distributed tests). Below the 90% that promotion needs, so the
    rule stays in preview.
    """

    code = "HL014"
    name = "forward-called-directly"
    preview = True
    fix_applicability = "unsafe"
    prefilter = (".forward(",)

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for call in facts.calls_to_attr("forward"):
            if bypass_reason(facts, call) is not None:
                continue
            receiver = call.receiver
            shown = facts.code(receiver)
            if len(shown) > 20:
                shown = shown[:17] + "..."
            yield Finding(
                node=call.node,
                message=(f"`{shown}.forward(...)` skips every hook on `{shown}`; call `{shown}(...)`"),
                fix_edits=call_module_instead_of_forward(facts, call.node, call.site.class_def),
                fix_message=f"Call `{shown}(...)` instead of `.forward(...)`",
            )


_BLOCK = """
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.{call}(self.norm(x))
        return x + self.mlp(h)
"""

ForwardCalledDirectly.VALID = [
    # A subclass reaching its parent's forward, with super() and with the class.
    Valid(
        """
import torch.nn as nn

class QuantLinear(nn.Linear):
    def forward(self, x):
        return super().forward(self.quant(x))

class LoggedLinear(nn.Linear):
    def forward(self, x):
        return nn.Linear.forward(self, x)
"""
    ),
    # A torch.autograd.Function's static forward, called on the class.
    Valid(
        """
import torch

class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None

def reference(x):
    return ScaleGrad.forward(None, x, 1.0)
"""
    ),
    # A hand-rolled wrapper: its __call__ is where forward is meant to be called.
    Valid(
        """
class CompiledStep:
    def __init__(self, module):
        self.module = module

    def __call__(self, *args, **kwargs):
        with self.guard():
            return self.module.forward(*args, **kwargs)
"""
    ),
    # A plain class (no nn.Module base) with its own forward method.
    Valid(
        """
class Pipeline:
    def forward(self, batch):
        return [step(batch) for step in self.steps]

    def run(self, batch):
        return self.forward(batch)
"""
    ),
    # An explicit call through the instance's class (like Parent.forward(self, x)).
    Valid(
        """
def reference_output(layer, x):
    return layer.__class__.forward(layer, x)
"""
    ),
    # A variant object whose forward takes the module it serves: not a module call.
    Valid(
        """
import torch.nn as nn

class LoraLinear(nn.Module):
    def forward(self, x):
        for name in self.active:
            x = self.lora_variant[name].forward(self, x)
        return x
"""
    ),
    # A pipeline is no module: `self(...)` would run the pipeline's `__call__`, not hooks.
    Valid(
        """
from .hub import PushToHubMixin

class SpeechPipeline(PushToHubMixin):
    def forward(self, batch):
        return self.model(**batch)

    def run_one(self, batch):
        return self.postprocess(self.forward(self.preprocess(batch)))
"""
    ),
    # A C++ custom class held by a module, and an instance of a plain same-file class.
    Valid(
        """
import torch
import torch.nn as nn

class Engine:
    def forward(self, x):
        return x

class FusedGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernel = None
        if torch.cuda.is_available():
            self._kernel = torch.classes.fused_ops.Gelu()
        self.engine = Engine()

    def forward(self, x):
        if self._kernel is not None:
            return self._kernel.forward(x, 0.5)
        return self.engine.forward(x)
"""
    ),
    # TorchScript interface: the annotated submodule must be called through `.forward`.
    Valid(
        """
import torch
import torch.nn as nn

@torch.jit.interface
class CellLike(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass

class Searched(nn.Module):
    def forward(self, x):
        for key in self.order:
            cell: CellLike = self.cells[key]
            x = cell.forward(x)
        return x
"""
    ),
    # Inside a pre-hook on the same module: calling it would run this hook again.
    Valid(
        """
def install_probe(model):
    def probe(module, args, kwargs):
        with torch.no_grad():
            reference = model.forward(*args, **kwargs)
        module.reference = reference

    return model.register_forward_pre_hook(probe, with_kwargs=True)
"""
    ),
    # A forward replacement reaches the original layer's forward on purpose.
    Valid(
        """
def patch_rotation(wrapper_cls):
    def rotated_forward(self, x):
        return self.inner.forward(self.rotate(x))

    wrapper_cls.forward = rotated_forward
"""
    ),
    # A comment says why: the hooks were already run by hand.
    Valid(
        """
class Counter(Base):
    def update(self, key, value):
        metric = self.metrics[key]
        # skip __call__: its checks cost too much on this hot path
        metric.forward(value)
"""
    ),
    # A helper object whose forward takes the block it runs, and the zero-argument
    # `__class__` of an autograd Function.
    Valid(
        """
import torch

class Tuner:
    def step(self, block, batch, runner):
        return runner.forward(block, batch, cache=None)

class Scaled(torch.autograd.Function):
    @staticmethod
    def check(a):
        return __class__.forward(None, a)
"""
    ),
]


ForwardCalledDirectly.INVALID = [
    # A submodule's forward called inside a parent's forward (PEFT adapters on attn are skipped).
    Invalid(
        _BLOCK.format(call="attn.forward"),
        expected=_BLOCK.format(call="attn"),
        line=11,
        message="`self.attn.forward(...)` skips every hook",
    ),
    # Evaluation helper on a (possibly FSDP-wrapped or quantized) model: nothing in the
    # file says `model` is an nn.Module, so no fix (`model(...)` may be another `__call__`).
    Invalid(
        """
import torch

@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for inputs, labels in loader:
        logits = model.forward(inputs)
        total += (logits.argmax(-1) == labels).float().mean().item()
    return total / len(loader)
""",
        expected=None,
        line=8,
    ),
    # A LightningModule step calling its own forward: hooks on the module itself are
    # skipped. Its base lives in another package, so no fix.
    Invalid(
        """
import lightning as L

class Classifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self.forward(x), y)
        return loss
""",
        expected=None,
        line=6,
    ),
    # A model whose base is imported: it may be no module at all, and `self(x)`
    # could call a `__call__` that calls `forward` (a recursion): reported, no fix.
    Invalid(
        """
from .base import BaseModel

class Detector(BaseModel):
    def forward(self, images):
        return self.head(self.backbone(images))

    def detect(self, images):
        return self.forward(images).sigmoid()
""",
        expected=None,
        line=8,
    ),
    # Indexing into a list passed in: each layer's hooks are skipped; no fix.
    Invalid(
        """
def run_layers(layers, hidden, mask):
    for i in range(len(layers)):
        hidden = layers[i].forward(hidden, attention_mask=mask)
    return hidden
""",
        expected=None,
        line=3,
    ),
    # A module of this file calling its own forward, through a same-file base class.
    Invalid(
        """
from torch.nn import Module

class Base(Module):
    pass

class Scorer(Base):
    def forward(self, x):
        return x.sum(-1)

    def score(self, x):
        return self.forward(x).mean()
""",
        expected="""
from torch.nn import Module

class Base(Module):
    pass

class Scorer(Base):
    def forward(self, x):
        return x.sum(-1)

    def score(self, x):
        return self(x).mean()
""",
        line=11,
    ),
    # Layers of an nn.ModuleList set in __init__, and a submodule of a same-file class.
    Invalid(
        """
import torch

class Layer(torch.nn.Module):
    def forward(self, x):
        return x

class Stack(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))
        self.head = Layer()

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i].forward(x)
        return self.head.forward(x)
""",
        expected="""
import torch

class Layer(torch.nn.Module):
    def forward(self, x):
        return x

class Stack(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))
        self.head = Layer()

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
        return self.head(x)
""",
        line=15,
    ),
    # An attribute that __init__ sets to something imported: reported, no fix.
    Invalid(
        """
import torch.nn as nn
from .engines import make_engine

class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.engine = make_engine(config)

    def forward(self, x):
        return self.engine.forward(x)
""",
        expected=None,
        line=10,
    ),
    # A decoder's layers looped over in forward: hooks (FSDP, adapters) on each are skipped.
    Invalid(
        """
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, hidden, mask):
        for layer in self.layers:
            hidden = layer.forward(hidden, mask)
        return hidden
""",
        expected=None,
        line=10,
    ),
]
