"""HL008 hook-return-replaces-output."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.hook_returns import (
    accidental_lambda_value,
    dropped_rebinding,
    rebound_target,
    replaced_names,
)
from hooklint.fixes.hook_return import return_none_from_lambda, return_rebound
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

_KINDS = frozenset({"forward", "forward_pre"})


class HookReturnReplacesOutput(Rule):
    """A forward hook's return value replaces the module's output by accident, or a change it makes is dropped.

    ## What it does
    Finds two mirror-image mistakes in forward hooks and forward pre-hooks (module or
    process-wide):
    - a **lambda** whose body is a value by accident: a call that returns something
      (`d.setdefault(k, v)`, `d.pop(k)`, `t.register_hook(fn)`, a local function
      that returns a value) where a statement was meant, a side-effect list
      comprehension, or a tuple of calls. Calls known to return None (`append`,
      `extend`, `__setitem__`, `update`, `add`, `print`, `logging`/logger methods,
      `retain_grad`, `torch.save`...) are fine, and so is a lambda that transforms
      its own argument (`lambda m, i, o: o * 2`), which is how outputs are replaced
      on purpose;
    - a **def** hook that rebinds its output parameter (its args, for a pre-hook),
      never reads it again and has no `return`: the change is silently dropped.

    ## Why is this bad?
    Whatever a forward hook returns, unless it is None, *replaces* the module's
    output (for a pre-hook, its positional args). `lambda m, i, o:
    feats.setdefault("x", o.detach())` swaps in the detached tensor: the model still
    runs, but gradients through that layer are silently cut (`requires_grad=False`).
    Conversely, `output = output * mask` inside a hook changes only a local name:
    the mask is never applied.

    ## Example
    ```python
    layer.register_forward_hook(lambda m, i, o: feats.setdefault("layer", o.detach()))

    def mask_hook(module, args, output):
        output = output * module.mask
    ```

    ## Use instead
    ```python
    layer.register_forward_hook(lambda m, i, o: (feats.setdefault("layer", o.detach()), None)[1])

    def mask_hook(module, args, output):
        output = output * module.mask
        return output
    ```

    ## Fix safety
    Unsafe: both fixes change what the model computes (that is their purpose).
    The lambda fix makes the lambda return None; writing it as a `def` reads
    better. The `def` fix appends `return <output>` (`return args` for a pre-hook,
    `return args, kwargs` with `with_kwargs=True`) at the end of the body; check that
    the rebound value has the shape the next layer expects (a module returning a
    tuple must get a tuple back).

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`)
    and torch 2.13's own sources (`hooklint check --preview --select HL008
    <site-packages>/torch`): no finding. No true positive has been seen in real code
    yet, so precision is not measured and the rule stays in preview.
    """

    code = "HL008"
    name = "hook-return-replaces-output"
    cleared_elsewhere = False  # the hook's body is all the evidence
    fix_applicability = "unsafe"
    #: Not measured at 90% precision on real code yet (the docstring's "Precision on real code").
    preview = True
    prefilter = ("register_forward_hook", "register_forward_pre_hook", "register_module_forward")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        seen: set[int] = set()
        for registration in facts.registrations:
            hook = registration.hook
            if registration.api.kind not in _KINDS or hook is None or id(hook.node) in seen:
                continue
            seen.add(id(hook.node))
            what = "output" if registration.api.kind == "forward" else "positional args"
            body = accidental_lambda_value(facts, registration)
            if body is not None:
                yield Finding(
                    node=body,
                    message=(f"lambda hook returns `{facts.code(body)}`, which replaces the module's {what}"),
                    fix_edits=return_none_from_lambda(facts, body),
                    fix_message="Make the lambda return None",
                )
                continue
            rebinding = dropped_rebinding(registration)
            if rebinding is not None:
                names = replaced_names(registration)
                target = rebound_target(facts, rebinding)
                yield Finding(
                    node=rebinding,
                    message=(
                        f"hook `{hook.name}` rebinds `{target}` but returns nothing: the new {what} is dropped"
                    ),
                    fix_edits=return_rebound(hook.node, names),  # type: ignore[arg-type]
                    fix_message=f"Return `{', '.join(names)}`",
                )

    VALID = [
        # None-returning calls, and a lambda that replaces the output on purpose.
        Valid(
            """
import logging

logger = logging.getLogger(__name__)
feats = {}

encoder.register_forward_hook(lambda m, i, o: feats.__setitem__("enc", o.detach()))
encoder.register_forward_hook(lambda m, i, o: logger.debug("%s -> %s", type(m).__name__, o.shape))
decoder.register_forward_hook(lambda m, i, o: o * m.scale)
decoder.register_forward_pre_hook(lambda m, args: (args[0].to(m.weight.dtype),) + args[1:])
"""
        ),
        # The output is rebound as a local unwrap and then used: nothing is dropped.
        Valid(
            """
class Recorder:
    def __init__(self, model):
        self.cache = []
        model.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        if isinstance(output, tuple):
            output = output[0]
        self.cache.append(output.detach())
"""
        ),
        # A rebinding that is returned; a lambda delegating to a method that returns on purpose.
        Valid(
            """
class NoiseInjector:
    def __init__(self, model, std):
        self.std = std
        model.register_forward_hook(lambda m, i, o: self._inject(m, i, o))
        model.register_forward_pre_hook(self._cast)

    def _inject(self, module, inputs, output):
        return output + torch.randn_like(output) * self.std

    def _cast(self, module, args):
        args = tuple(a.half() for a in args)
        return args
"""
        ),
    ]
    INVALID = [
        # setdefault returns the stored value: the detached tensor becomes the output.
        Invalid(
            """
feats = {}
model.fc.register_forward_hook(lambda m, i, o: feats.setdefault("fc", o.detach()))
""",
            expected="""
feats = {}
model.fc.register_forward_hook(lambda m, i, o: (feats.setdefault("fc", o.detach()), None)[1])
""",
            line=2,
            message="setdefault",
        ),
        # A masking hook whose result is never returned.
        Invalid(
            """
def prune_heads(module, args, output):
    mask = module.head_mask.to(output.dtype)
    output = output * mask

for layer in model.encoder.layer:
    layer.attention.register_forward_hook(prune_heads)
""",
            expected="""
def prune_heads(module, args, output):
    mask = module.head_mask.to(output.dtype)
    output = output * mask
    return output

for layer in model.encoder.layer:
    layer.attention.register_forward_hook(prune_heads)
""",
            line=3,
            message="`output`",
        ),
        # A with_kwargs pre-hook rebinding its args inside a branch.
        Invalid(
            """
class InputScaler:
    def __init__(self, block, factor):
        self.factor = factor
        block.register_forward_pre_hook(self._scale, with_kwargs=True)

    def _scale(self, module, args, kwargs):
        if args:
            args = (args[0] * self.factor,) + args[1:]
""",
            expected="""
class InputScaler:
    def __init__(self, block, factor):
        self.factor = factor
        block.register_forward_pre_hook(self._scale, with_kwargs=True)

    def _scale(self, module, args, kwargs):
        if args:
            args = (args[0] * self.factor,) + args[1:]
        return args, kwargs
""",
            line=8,
        ),
        # A tensor-hook handle returned from a lambda, and a helper that returns a count.
        Invalid(
            """
def watch(model, grads):
    def keep(tensor):
        grads.append(tensor)
        return len(grads)

    model.register_forward_hook(lambda m, i, o: keep(o))
""",
            expected="""
def watch(model, grads):
    def keep(tensor):
        grads.append(tensor)
        return len(grads)

    model.register_forward_hook(lambda m, i, o: (keep(o), None)[1])
""",
            line=6,
            message="keep(o)",
        ),
    ]
