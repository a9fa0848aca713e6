"""HL015 hook-ignores-kwargs."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.walk import descendants
from hooklint.fixes.semantics_b import add_with_kwargs
from hooklint.rules.base import (
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    format_version,
)

WITH_KWARGS_SINCE = (2, 0)
_APIS = frozenset({"register_forward_pre_hook", "register_forward_hook"})
#: Layers that are called positionally everywhere: an ``isinstance`` guard on them makes ``args[0]`` fine.
_POSITIONAL_LAYERS = (
    "Linear", "Conv", "Embedding", "LayerNorm", "BatchNorm", "GroupNorm", "InstanceNorm", "RMSNorm",
    "ReLU", "GELU", "SiLU", "Dropout", "Pool", "Identity", "LSTM", "GRU", "RNN", "Softmax", "Sigmoid",
    "Tanh", "Flatten", "Upsample", "Conv1D", "_ConvNd", "_BatchNorm", "_NormBase", "Activation",
)
#: Calls that return None: a pre-hook lambda made of one of them returns None.
_NONE_RETURNING = frozenset({"append", "extend", "add", "update", "insert", "print", "__setitem__", "put"})


class HookIgnoresKwargs(Rule):
    """A forward (pre-)hook indexes its positional args but is registered without `with_kwargs=True`.

    ## What it does
    Finds a `register_forward_pre_hook` / `register_forward_hook` registration
    without `with_kwargs=True` whose hook reads `args[i]` (or unpacks `args`) from
    its positional-arguments parameter without checking that it is non-empty.
    Hooks registered inside an `isinstance(m, nn.Linear)`-style check (layers that
    are always called positionally) are not reported.

    ## Why is this bad?
    Without `with_kwargs=True` a hook sees only the positional arguments. Modules
    called by keyword — Hugging Face decoder layers are often called as
    `layer(hidden_states=..., attention_mask=...)` — give the hook `args == ()`,
    so `args[0]` raises `IndexError` inside the forward, or a pre-hook that
    modifies `args[0]` silently does nothing useful. The call sites are usually in
    another library, so this is a warning: it depends on how the module is called.

    ## Example
    ```python
    def steer(module, args):
        return (args[0] + VECTOR,) + args[1:]

    def record(module, args, output):
        INPUTS.append(args[0].detach())

    layer.register_forward_hook(record)
    ```

    ## Use instead
    ```python
    def record(module, args, kwargs, output):
        INPUTS.append((args[0] if args else next(iter(kwargs.values()))).detach())

    layer.register_forward_hook(record, with_kwargs=True)
    ```

    ## Fix safety
    Unsafe, and only with a target torch of at least 2.0 (`with_kwargs` appeared in
    2.0; withheld otherwise). The fix registers with `with_kwargs=True`, adds a
    `kwargs` parameter after the args parameter, and reads `args[0]` from the first
    keyword argument when there are no positional ones; that guesses that the first
    keyword is the main input. It is offered only for `args[0]`, for a hook in the
    same file used by this registration only, and for a pre-hook that returns
    nothing (with `with_kwargs=True` a pre-hook must return `(args, kwargs)`).
    """

    code = "HL015"
    name = "hook-ignores-kwargs"
    cleared_elsewhere = False  # the hook and its registration are all the evidence
    preview = True
    fix_applicability = "unsafe"
    prefilter = ("register_forward_hook", "register_forward_pre_hook")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        shared: dict[int, int] = {}
        for registration in facts.registrations:
            if registration.hook is not None:
                shared[id(registration.hook.node)] = shared.get(id(registration.hook.node), 0) + 1
        for registration in facts.registrations:
            if registration.api.name not in _APIS or registration.api.is_global:
                continue
            if registration.has_star_kwargs or "with_kwargs" in registration.keywords:
                continue
            hook = registration.hook
            if hook is None or len(hook.params) < 2:
                continue
            if _guarded_by_layer_type(facts, registration):
                continue
            args_name = hook.params[1]
            indexed, unpacked = _positional_reads(hook.node, args_name)
            if not indexed and not unpacked:
                continue
            yield self._finding(facts, context, registration, args_name, indexed, unpacked, shared)

    def _finding(self, facts, context, registration: Registration, args_name, indexed, unpacked, shared) -> Finding:
        hook = registration.hook
        shown = f"reads `{args_name}[{_index_code(facts, indexed[0])}]`" if indexed else f"unpacks `{args_name}`"
        message = (
            f"hook `{hook.name}` {shown} without `with_kwargs=True`: `{args_name}` is `()` for keyword calls"
        )
        edits: list = []
        withheld = None
        if self._fixable(registration, indexed, unpacked, shared):
            kwargs_name = "kwargs" if not _uses_name(hook.node, "kwargs") else "hook_kwargs"
            param = _param_named(hook.node, args_name)
            if param is not None:
                edits = add_with_kwargs(facts, registration.call, hook.node, param, indexed, kwargs_name)
            if edits and context.target_torch < WITH_KWARGS_SINCE:
                withheld = (
                    f"`with_kwargs` needs torch >= {format_version(WITH_KWARGS_SINCE)}, "
                    f"target is {format_version(context.target_torch)}"
                )
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message="Register with `with_kwargs=True` and fall back to the first keyword argument",
            fix_withheld=withheld,
        )

    @staticmethod
    def _fixable(registration: Registration, indexed, unpacked, shared) -> bool:
        hook = registration.hook
        if unpacked or not indexed or shared.get(id(hook.node), 0) > 1:
            return False
        if not all(_index_value(s) == 0 for s in indexed):
            return False
        if hook.via not in ("function", "lambda", "method"):
            return False
        if hook.node.params.star_arg is not None and isinstance(hook.node.params.star_arg, cst.Param):
            return False
        if registration.api.kind == "forward_pre":
            return not _returns_value(hook.node)
        return True

    VALID = [
        # Registered with with_kwargs=True and reading kwargs as a fallback.
        Valid(
            """
def capture_hidden(module, args, kwargs, output):
    hidden = args[0] if args else kwargs["hidden_states"]
    CAPTURED.append(hidden.detach())

for layer in model.model.layers:
    layer.register_forward_hook(capture_hidden, with_kwargs=True)
"""
        ),
        # Only on Linear layers, which are always called positionally.
        Valid(
            """
import torch.nn as nn

def calibrate(model, stats):
    def observe(module, inputs, output):
        stats[module].update(inputs[0].abs().amax())
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Conv2d)):
            module.register_forward_hook(observe)
"""
        ),
        # The hook checks for an empty args tuple itself.
        Valid(
            """
def shape_logger(module, args):
    if len(args) == 0:
        return
    LOG.append(tuple(args[0].shape))

model.encoder.register_forward_pre_hook(shape_logger)
"""
        ),
        # Reads the output only, never indexes args.
        Valid(
            """
def save_logits(module, inputs, output):
    RESULTS["logits"] = output[0].detach()

model.lm_head.register_forward_hook(save_logits)
"""
        ),
    ]
    INVALID = [
        # Activation capture on decoder layers (called by keyword in HF models).
        Invalid(
            """
def capture(module, inputs, output):
    ACTS.append(inputs[0].detach().cpu())

for layer in model.model.layers:
    layer.register_forward_hook(capture)
""",
            expected="""
def capture(module, inputs, kwargs, output):
    ACTS.append((inputs[0] if inputs else next(iter(kwargs.values()))).detach().cpu())

for layer in model.model.layers:
    layer.register_forward_hook(capture, with_kwargs=True)
""",
            line=5,
            message="`inputs[0]`",
        ),
        # A pre-hook lambda recording input norms; target 1.13: fix withheld.
        Invalid(
            """
def track_norms(blocks, norms):
    for i, block in enumerate(blocks):
        block.register_forward_pre_hook(lambda m, args, i=i: norms[i].append(args[0].norm().item()))
""",
            line=3,
            message="(fix withheld: `with_kwargs` needs torch >= 2.0",
            options={"target_torch": (1, 13)},
        ),
        # A steering pre-hook that returns new args: reported, no fix (the return contract changes).
        Invalid(
            """
class Steerer:
    def __init__(self, vector):
        self.vector = vector

    def hook(self, module, args):
        hidden = args[0] + self.vector
        return (hidden,) + args[1:]

    def attach(self, layer):
        self.handle = layer.register_forward_pre_hook(self.hook)
""",
            line=10,
        ),
        # A method hook unpacking its inputs.
        Invalid(
            """
class Recorder:
    def _on_forward(self, module, inputs, output):
        (x,) = inputs
        self.records.append((x.shape, output.shape))

    def register(self, model):
        model.transformer.register_forward_hook(self._on_forward)
""",
            line=7,
            message="unpacks `inputs`",
        ),
    ]


def _positional_reads(node: cst.FunctionDef | cst.Lambda, name: str) -> tuple[list[cst.Subscript], list[cst.CSTNode]]:
    """``args[i]`` subscripts and ``x, = args`` unpackings, unless the hook checks ``args`` first."""
    indexed: list[cst.Subscript] = []
    unpacked: list[cst.CSTNode] = []
    body = node.body
    for sub in descendants(body) if isinstance(body, cst.CSTNode) else ():
        if isinstance(sub, cst.Subscript) and _is_name(sub.value, name):
            if len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and _index_value(sub) is not None:
                indexed.append(sub)
        elif isinstance(sub, cst.Assign) and _is_name(sub.value, name):
            if any(isinstance(t.target, (cst.Tuple, cst.List)) for t in sub.targets):
                unpacked.append(sub)
        elif isinstance(sub, cst.Call) and _is_name(sub.func, "len") and sub.args and _is_name(sub.args[0].value, name) or isinstance(sub, (cst.If, cst.IfExp, cst.While)) and _mentions(sub.test, name) or isinstance(sub, cst.BooleanOperation) and (_is_name(sub.left, name) or _is_name(sub.right, name)):
            return [], []
    return indexed, unpacked


def _mentions(test: cst.BaseExpression, name: str) -> bool:
    if _is_name(test, name):
        return True
    if isinstance(test, cst.UnaryOperation) and _is_name(test.expression, name):
        return True
    return False


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _index_value(sub: cst.Subscript) -> int | None:
    index = sub.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    value = index.value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and isinstance(value.expression, cst.Integer):
        return -int(value.expression.value, 0)
    return None


def _index_code(facts: ModuleFacts, sub: cst.Subscript) -> str:
    return str(_index_value(sub))


def _guarded_by_layer_type(facts: ModuleFacts, registration: Registration) -> bool:
    for frame in registration.site.frames:
        if frame.kind == "if":
            test = facts.code(frame.node.test)  # type: ignore[attr-defined]
            if ("isinstance" in test or "type(" in test) and any(layer in test for layer in _POSITIONAL_LAYERS):
                return True
    return False


def _returns_value(node: cst.FunctionDef | cst.Lambda) -> bool:
    if isinstance(node, cst.Lambda):
        body = node.body
        return not (isinstance(body, cst.Call) and isinstance(body.func, (cst.Attribute, cst.Name))
                    and (body.func.attr.value if isinstance(body.func, cst.Attribute) else body.func.value) in _NONE_RETURNING)
    for sub in descendants(node.body, into_functions=False):
        if isinstance(sub, cst.Return) and sub.value is not None:
            return True
    return False


def _uses_name(node: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    if any(p.name.value == name for p in node.params.params):
        return True
    body = node.body
    return any(isinstance(n, cst.Name) and n.value == name for n in descendants(body))


def _param_named(node: cst.FunctionDef | cst.Lambda, name: str) -> cst.Param | None:
    for param in list(node.params.posonly_params) + list(node.params.params):
        if param.name.value == name:
            return param
    return None
