"""HL014 forward-called-directly."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from hooklint.analysis.facts import CallSite, ModuleFacts
from hooklint.analysis.names import dotted_name
from hooklint.fixes.semantics_b import call_module_instead_of_forward
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

#: Methods whose job is to stand in for ``Module.__call__``: calling ``forward`` there is the point.
_CALL_REPLACEMENTS = frozenset({"__call__", "_call_impl", "_wrapped_call_impl", "forward", "_forward"})
#: Bases that make a class something other than an ``nn.Module``.
#: Calls whose result is a submodule: ``model.get_submodule("fc").forward(x)`` is still reported.
_SUBMODULE_LOOKUPS = frozenset({"get_submodule", "get_module"})
#: Receivers whose ``forward`` is the API: RPC remote modules and TorchScript/mobile modules
#: (no Python hooks run there), and the C++ module of a ScriptModule (``self._c``).
_REMOTE_OR_SCRIPTED = ("remote", "rref", "script", "mobile")
_NOT_MODULE_BASES = ("Function", "object", "ABC", "Protocol", "NamedTuple", "Enum", "Exception")


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

    Calls inside `__call__`, `forward` of the same object, calls through a class
    (`Parent.forward(self, x)`, `x.__class__.forward(x)`), and calls that pass
    `self` to another object's `forward` (`self.variants[k].forward(self, x)`: a
    helper whose `forward` takes the module) are not reported.

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
    """

    code = "HL014"
    name = "forward-called-directly"
    preview = True
    fix_applicability = "unsafe"
    prefilter = (".forward(",)

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for call in facts.calls_to_attr("forward"):
            receiver = call.node.func.value  # type: ignore[union-attr]
            if _exempt(facts, call, receiver):
                continue
            shown = facts.code(receiver)
            if len(shown) > 40:
                shown = shown[:37] + "..."
            yield Finding(
                node=call.node,
                message=(
                    f"`{shown}.forward(...)` skips every hook on `{shown}`; call `{shown}(...)`"
                ),
                fix_edits=call_module_instead_of_forward(facts, call.node, call.site.class_def),
                fix_message=f"Call `{shown}(...)` instead of `.forward(...)`",
            )


def _exempt(facts: ModuleFacts, call: CallSite, receiver: cst.BaseExpression) -> bool:
    # super().forward(...), super(Cls, self).forward(...)
    if isinstance(receiver, cst.Call):
        # super().forward(...); and any other call result (rref.rpc_sync(), type(x),
        # a loaded extension) unless it is a submodule lookup.
        func = receiver.func
        return not (isinstance(func, cst.Attribute) and func.attr.value in _SUBMODULE_LOOKUPS)
    code = facts.code(receiver).lower()
    if any(word in code for word in _REMOTE_OR_SCRIPTED) or code == "_c" or code.endswith("._c"):
        return True
    # x.__class__.forward(x, ...): an explicit call through the class, like Parent.forward(self, ...)
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "__class__":
        return True
    # self.variants[name].forward(self, x): a helper object whose forward takes the module
    if call.node.args and not (isinstance(receiver, cst.Name) and receiver.value == "self"):
        first = call.node.args[0]
        if first.keyword is None and not first.star and isinstance(first.value, cst.Name) and first.value.value == "self":
            return True
    dotted = dotted_name(receiver)
    if dotted is not None:
        last = dotted.rsplit(".", 1)[-1]
        # Parent.forward(self, x), nn.Linear.forward(self, x), MyFunction.forward(ctx, ...)
        if last[:1].isupper() and not last.isupper():
            return True
        if dotted in facts.classes:
            return True
        if dotted in ("self", "cls"):
            function = call.site.function
            if function is not None and function.name.value in _CALL_REPLACEMENTS:
                return True
            class_def = call.site.class_def
            if class_def is None or not _may_be_module(facts, class_def):
                return True
    # forward(...) reached from a function that replaces __call__ (a hand-rolled wrapper),
    # or from TorchScript (where the module interface is `forward`).
    function = call.site.function
    if function is not None and any(
        "jit.script" in facts.code(d.decorator) for d in function.decorators
    ):
        return True
    if function is not None and function.name.value in ("__call__", "_call_impl", "_wrapped_call_impl"):
        return True
    return False


def _may_be_module(facts: ModuleFacts, class_def: cst.ClassDef) -> bool:
    """Whether a class could be an ``nn.Module``: it has a base that is not obviously something else."""
    bases = [dotted_name(b.value) or "" for b in class_def.bases if b.keyword is None]
    if not bases:
        return False
    return not all(b.rsplit(".", 1)[-1].endswith(_NOT_MODULE_BASES) for b in bases)


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
    # A pipeline whose base is imported: it may be no module at all, and `self(x)`
    # could call a `__call__` that calls `forward` (a recursion): reported, no fix.
    Invalid(
        """
from .base import BasePipeline

class TextPipeline(BasePipeline):
    def forward(self, batch):
        return [step(batch) for step in self.steps]

    def run(self, batch):
        return self.forward(batch)
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
    # An attribute that __init__ sets to a plain object: reported, no fix.
    Invalid(
        """
import torch.nn as nn

class Runner:
    def __init__(self, engine):
        self.engine = engine

    def forward(self, x):
        return self.engine.run(x)

class Wrapper(nn.Module):
    def __init__(self, engine):
        super().__init__()
        self.runner = Runner(engine)

    def forward(self, x):
        return self.runner.forward(x)
""",
        expected=None,
        line=16,
    ),
]
