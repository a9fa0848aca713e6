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

    ## Fix safety
    Unsafe: after the fix, hooks on the module run, which is the point, but it
    changes behaviour: a hook that replaces outputs now does so, and a module that
    overrides `__call__` (or is not an `nn.Module` at all) now goes through that
    method instead. Calls inside `__call__`, `forward` of the same object, and
    calls on classes are not reported.
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
                    f"`{shown}.forward(...)` skips every hook on `{shown}` (forward and backward hooks, "
                    f"FSDP, quantization observers, adapters attached by hooks); call `{shown}(...)`"
                ),
                fix_edits=call_module_instead_of_forward(facts, call.node),
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
        self.attn = Attention(dim)
        self.mlp = Mlp(dim)

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
]

ForwardCalledDirectly.INVALID = [
    # A submodule's forward called inside a parent's forward (PEFT adapters on attn are skipped).
    Invalid(
        _BLOCK.format(call="attn.forward"),
        expected=_BLOCK.format(call="attn"),
        line=11,
        message="`self.attn.forward(...)` skips every hook",
    ),
    # Evaluation helper on a (possibly FSDP-wrapped or quantized) model.
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
        expected="""
import torch

@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    total = 0.0
    for inputs, labels in loader:
        logits = model(inputs)
        total += (logits.argmax(-1) == labels).float().mean().item()
    return total / len(loader)
""",
        line=8,
    ),
    # A LightningModule step calling its own forward: hooks on the module itself are skipped.
    Invalid(
        """
import lightning as L

class Classifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self.forward(x), y)
        return loss
""",
        expected="""
import lightning as L

class Classifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self(x), y)
        return loss
""",
        line=6,
    ),
    # Indexing into a ModuleList: each layer's hooks are skipped.
    Invalid(
        """
def run_layers(layers, hidden, mask):
    for i in range(len(layers)):
        hidden = layers[i].forward(hidden, attention_mask=mask)
    return hidden
""",
        expected="""
def run_layers(layers, hidden, mask):
    for i in range(len(layers)):
        hidden = layers[i](hidden, attention_mask=mask)
    return hidden
""",
        line=3,
    ),
]
