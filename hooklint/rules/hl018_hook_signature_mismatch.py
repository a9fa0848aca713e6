"""HL018 hook-signature-mismatch."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.hook_roles import hook_callable
from hooklint.analysis.signatures import Mismatch, signature_mismatch
from hooklint.fixes.registration_keywords import add_keywords, drop_keyword
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid, format_version


class HookSignatureMismatch(Rule):
    """A forward (pre-)hook's parameters do not match what torch passes it, given `with_kwargs`.

    ## What it does
    Finds forward hooks and forward pre-hooks (`Module.register_forward_hook`,
    `register_forward_pre_hook`, and the global `register_module_forward_hook` /
    `register_module_forward_pre_hook`) whose function cannot take the arguments
    torch passes:

    - registered with `with_kwargs=True`, torch calls a forward hook as
      `hook(module, args, kwargs, output)` and a pre-hook as
      `hook(module, args, kwargs)`; a `(module, args, output)` hook or a
      `(module, args)` pre-hook does not take them;
    - registered without it, torch calls `hook(module, args, output)` and
      `hook(module, args)`; a four-parameter forward hook or a three-parameter
      pre-hook does not take them (a global pre-hook always gets two arguments:
      `register_module_forward_pre_hook` has no `with_kwargs`);
    - the count fits only because a trailing parameter has a default, and a
      parameter named `output` receives the kwargs dict (or one named `kwargs`
      receives the output).

    The hook is resolved in the file: functions, `self.method`, lambdas,
    `functools.partial` (its bound leading arguments and keywords are left out),
    factories that return a nested def, and callable objects of same-file classes.
    A parameter with a default is optional and `*args` accepts any number; a
    decorator other than `torch.no_grad`-like ones makes the signature unknown.

    ## Why is this bad?
    A count mismatch raises `TypeError` on the first forward, which may be a rare
    path (an evaluation mode, a calibration run) that tests never take. The silent
    variant is worse: `output` holds the kwargs dict, and a value the hook returns
    replaces the module's output.

    ## Example
    ```python
    def clamp_output(module, args, output):
        return output.clamp(-10, 10)

    layer.register_forward_hook(clamp_output, with_kwargs=True)
    ```

    ## Use instead
    ```python
    layer.register_forward_hook(clamp_output)
    ```
    or give the hook the `kwargs` parameter it is registered for:
    `def clamp_output(module, args, kwargs, output)`.

    ## Fix safety
    Unsafe: the fix makes the registration match the function — it drops
    `with_kwargs=True` when the function takes the arguments torch passes without
    it, and adds `with_kwargs=True` when the function takes the kwargs (withheld
    when the target torch predates `with_kwargs`: 2.0 for module hooks, 2.6 for the
    global forward hook). The code then runs where it raised before, and the author
    may have meant the other way round (a hook that should read kwargs). No fix for
    a global pre-hook, or a call with a comment inside.

    ## Options
    `target-torch`: the fix that adds `with_kwargs=True` is withheld below 2.0 (2.6
    for the global forward hook).

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`)
    and torch 2.13's own sources (`hooklint check --preview --select HL018
    <site-packages>/torch`): no finding. On first contact it reported one false
    positive in torch's tests (a registration meant to fail, under
    `assertRaisesRegex`; registrations under `assertRaises*` and `pytest.raises` are
    now skipped). Unmeasured, so the rule stays in preview.
    """

    code = "HL018"
    name = "hook-signature-mismatch"
    preview = True
    cleared_elsewhere = False  # the registration and its hook are all the evidence
    fix_applicability = "unsafe"
    prefilter = (
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_module_forward_hook",
        "register_module_forward_pre_hook",
    )

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for registration in facts.registrations:
            if registration.api.kind not in ("forward", "forward_pre"):
                continue
            hook = hook_callable(facts, registration)
            if hook is None:
                continue
            mismatch = signature_mismatch(facts, registration, hook.body)
            if mismatch is not None:
                yield self._finding(facts, context, registration, hook.body.name, mismatch)

    def _finding(self, facts, context, registration: Registration, name: str, mismatch: Mismatch) -> Finding:
        shape = mismatch.shape
        shown = name if len(name) <= 20 else name[:17] + "..."
        flag = "with_kwargs=True" if shape.with_kwargs else "without with_kwargs"
        passed = ", ".join(shape.passed)
        if mismatch.silent:
            message = (
                f"{flag}, torch calls `{shown}` as ({passed}): "
                f"`{mismatch.misbound}` gets the {mismatch.receives}"
            )
        else:
            message = (
                f"{flag}, torch calls `{shown}` as ({passed}), which takes "
                f"{mismatch.arity.describe()}: TypeError"
            )
        edits: list = []
        withheld = None
        fix_message = ""
        if mismatch.fits_other:
            if shape.with_kwargs:
                edits = drop_keyword(facts, registration.call, "with_kwargs")
                fix_message = "Register without `with_kwargs=True`, as the hook's parameters expect"
            else:
                edits = add_keywords(registration.call, "with_kwargs=True")
                fix_message = "Register with `with_kwargs=True`, as the hook's parameters expect"
                if edits and shape.since is not None and context.target_torch < shape.since:
                    withheld = (
                        f"`with_kwargs` here needs torch >= {format_version(shape.since)}, "
                        f"target is {format_version(context.target_torch)}"
                    )
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message=fix_message,
            unsafe_fix=True,
            fix_withheld=withheld,
        )

    VALID = [
        # The kwargs-aware forward hook, registered for kwargs.
        Valid(
            """
def log_call(module, args, kwargs, output):
    CALLS.append((type(module).__name__, sorted(kwargs)))

def watch(block):
    return block.register_forward_hook(log_call, with_kwargs=True)
"""
        ),
        # partial binds the leading name: torch's four arguments fill the rest.
        Valid(
            """
import functools

def record(tag, module, args, kwargs, output):
    SEEN[tag] = kwargs.get("attention_mask") is not None

def watch(model):
    for name, sub in model.named_modules():
        sub.register_forward_hook(functools.partial(record, name), with_kwargs=True)
"""
        ),
        # A method: self is bound, so (self, module, args) is a two-argument pre-hook.
        Valid(
            """
class Scaler:
    def attach(self, layer):
        self.handle = layer.register_forward_pre_hook(self._scale)

    def _scale(self, module, args):
        return tuple(a * self.factor for a in args)
"""
        ),
        # *rest accepts both call shapes; a default makes the fourth parameter optional.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook

def tolerant(module, args, *rest):
    TRACE.append(rest[-1])

def count(module, args, output, extra=None):
    COUNTS[module] = COUNTS.get(module, 0) + 1

register_module_forward_hook(tolerant, with_kwargs=True)
handle = register_module_forward_hook(count)
"""
        ),
        # with_kwargs from a variable, and a decorator that may change the signature: not judged.
        Valid(
            """
def arm(layer, hook, wants_kwargs):
    return layer.register_forward_hook(hook_with(hook), with_kwargs=wants_kwargs)

@traced
def pre(module, args):
    return None

def arm_pre(layer):
    return layer.register_forward_pre_hook(pre, with_kwargs=True)
"""
        ),
    ]
    INVALID = [
        # A quantization observer written for (module, args, output), registered for kwargs.
        Invalid(
            """
def observe_range(module, args, output):
    module.act_min = torch.minimum(module.act_min, output.min())

def add_observers(model):
    for sub in model.modules():
        if isinstance(sub, nn.Linear):
            sub.register_forward_hook(observe_range, with_kwargs=True)
""",
            expected="""
def observe_range(module, args, output):
    module.act_min = torch.minimum(module.act_min, output.min())

def add_observers(model):
    for sub in model.modules():
        if isinstance(sub, nn.Linear):
            sub.register_forward_hook(observe_range)
""",
            line=7,
            message="with_kwargs=True, torch calls `observe_range` as (module, args, kwargs, output), which takes 3",
        ),
        # A pre-hook method that takes kwargs, registered without with_kwargs.
        Invalid(
            """
class CacheInjector:
    def __init__(self, attention, cache):
        self.cache = cache
        self.handle = attention.register_forward_pre_hook(self.inject)

    def inject(self, module, args, kwargs):
        kwargs["past_key_values"] = self.cache
        return args, kwargs
""",
            expected="""
class CacheInjector:
    def __init__(self, attention, cache):
        self.cache = cache
        self.handle = attention.register_forward_pre_hook(self.inject, with_kwargs=True)

    def inject(self, module, args, kwargs):
        kwargs["past_key_values"] = self.cache
        return args, kwargs
""",
            line=4,
            message="without with_kwargs, torch calls `inject` as (module, args), which takes 3",
        ),
        # A lambda with four parameters on a plain forward hook; fix withheld below torch 2.0.
        Invalid(
            """
def tap(block, sink):
    return block.register_forward_hook(lambda m, a, k, out: sink.append(out.shape))
""",
            line=2,
            message="fix withheld",
            options={"target_torch": (1, 13)},
        ),
        # The silent variant: the default lets the count fit, and `output` gets the kwargs dict.
        Invalid(
            """
def rescale(module, args, output, factor=0.5):
    return output * factor

def install(model):
    return [m.register_forward_hook(rescale, with_kwargs=True) for m in model.blocks]
""",
            expected="""
def rescale(module, args, output, factor=0.5):
    return output * factor

def install(model):
    return [m.register_forward_hook(rescale) for m in model.blocks]
""",
            line=5,
            message="`output` gets the kwargs",
        ),
        # A global pre-hook never gets kwargs: no with_kwargs exists to add, so no fix.
        Invalid(
            """
import torch.nn.modules.module as module_hooks

def _note_inputs(module, args, kwargs):
    SHAPES.append([a.shape for a in args])

handle = module_hooks.register_module_forward_pre_hook(_note_inputs)
""",
            line=6,
            message="torch calls `_note_inputs` as (module, args), which takes 3",
        ),
    ]
