"""HL010 hook-registered-after-compile."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.compiled import can_both_run, compilations, first_run, hooked_target
from hooklint.analysis.facts import ModuleFacts
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid

_MODULE_HOOK_OWNERS = frozenset({"module"})


class HookRegisteredAfterCompile(Rule):
    """A hook is registered on a compiled module, or one of its submodules, after the compiled model has run.

    ## What it does
    Finds, in one function (or at module level), `compiled = torch.compile(model)`
    or `model.compile()`, then a call that runs the compiled model (calling it,
    `.generate(...)`, or handing it to another function such as a trainer), then
    a module hook registration on `model`, on a submodule of it (`model.encoder`,
    `model.layers[3]`, a loop variable over `model.modules()`), or on a submodule
    reached through the compiled wrapper.

    ## Why is this bad?
    Dynamo traces the hooks that exist when the compiled model first runs and, by
    default (`torch._dynamo.config.skip_nnmodule_hook_guards = True`), does not
    guard on the hook dicts of the modules it inlined. A hook added later is not
    seen by the compiled code: it is silently never called (verified on 2.13:
    0 calls for forward hooks and forward pre-hooks on a submodule). Backward
    hooks added this way have produced wrong gradients. Registering before the
    first compiled call is fine: the hooks are traced.

    ## Example
    ```python
    model = Transformer(cfg)
    compiled = torch.compile(model)
    compiled(warmup_batch)
    for block in model.blocks:
        block.register_forward_hook(record_activation)   # never called
    ```

    ## Use instead
    ```python
    model = Transformer(cfg)
    for block in model.blocks:
        block.register_forward_hook(record_activation)
    compiled = torch.compile(model)
    compiled(warmup_batch)
    ```
    If the hooks must change after compiling, call `torch._dynamo.reset()` (or
    compile again) after changing them.

    ## Fix safety
    No fix: moving a registration changes the order of side effects, so it is
    left to you.

    ## Known problems
    The rule is a heuristic: "a submodule of the compiled model" is judged from the
    receiver's spelling (`model.encoder`, `model.layers[3]`, a loop over
    `model.modules()`), and "the compiled model has run" from a call of it or its
    being passed to any function, in the same function only.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`)
    and torch 2.13's own sources (`hooklint check --preview --select HL010
    <site-packages>/torch`): no finding, so precision is not measured and the rule
    stays in preview.
    """

    code = "HL010"
    name = "hook-registered-after-compile"
    preview = True
    screenable = False  # the compile and the run need not mention a hook

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        registrations = [
            r for r in facts.registrations if r.api.owner in _MODULE_HOOK_OWNERS or r.api.kind == "dynamic"
        ]
        if not registrations:
            return
        reported: set[int] = set()
        for compilation in compilations(facts):
            run = None
            for registration in registrations:
                if id(registration) in reported:
                    continue
                site = registration.site
                if (
                    site.order <= compilation.call.site.order
                    or site.function is not compilation.call.site.function
                ):
                    continue
                target = hooked_target(registration, compilation)
                if target is None:
                    continue
                if run is None:
                    run = first_run(facts, compilation)
                    if run is None:
                        break
                if site.order <= run.site.order:
                    continue
                if not (can_both_run(compilation.call.site, site) and can_both_run(run.site, site)):
                    continue
                reported.add(id(registration))
                yield Finding(
                    node=registration.call,
                    message=(
                        f"`{registration.api.name}` on `{target}` after compiled `{compilation.compiled}` ran: "
                        "silently never called"
                    ),
                )


HookRegisteredAfterCompile.VALID = [
    # Hooks registered before the first compiled call are traced.
    Valid(
        """
import torch

def build(model, batch):
    compiled = torch.compile(model)
    for block in model.blocks:
        block.register_forward_hook(record)
    compiled(batch)
    return compiled
"""
    ),
    # Compile in one branch, hooks in the other: never both.
    Valid(
        """
import torch

def prepare(model, args, batch):
    if args.compile:
        model = torch.compile(model)
        model(batch)
    else:
        model.encoder.register_forward_hook(save_features)
    return model
"""
    ),
    # The hook goes on the compiled wrapper itself, whose own __call__ runs hooks.
    Valid(
        """
import torch

compiled = torch.compile(net, mode="max-autotune")
compiled(example)
compiled.register_forward_hook(log_output)
"""
    ),
    # re.compile is not torch.compile; and a different model is hooked.
    Valid(
        """
import re
import torch

PATTERN = re.compile(r"layers\\.(\\d+)")

def attach(student, teacher, batch):
    fast = torch.compile(teacher)
    fast(batch)
    for name, sub in student.named_modules():
        if PATTERN.match(name):
            sub.register_forward_hook(capture)
"""
    ),
]

HookRegisteredAfterCompile.INVALID = [
    # A warm-up run, then profiling hooks on every block.
    Invalid(
        """
import torch

def profile(model, batch):
    compiled = torch.compile(model)
    compiled(batch)
    for block in model.blocks:
        block.register_forward_hook(record_time)
    return compiled(batch)
""",
        line=7,
        message="silently never called",
    ),
    # In-place Module.compile(), a generation run, then a hook on one layer.
    Invalid(
        """
def attach_steering(model, tokenizer, prompt, vector):
    model.compile(mode="reduce-overhead")
    model.generate(**tokenizer(prompt, return_tensors="pt"))
    layer = 12
    handle = model.model.layers[layer].register_forward_pre_hook(
        lambda m, args: (args[0] + vector,)
    )
    return handle
""",
        line=5,
        message="`model.model.layers[layer]`",
    ),
    # The name rebound to the wrapper, handed to a trainer, then a submodule hooked through it.
    Invalid(
        """
import torch

def train(model, trainer, loader):
    model = torch.compile(model)
    trainer.fit(model, loader)
    model.classifier.register_full_backward_hook(clip_grads)
""",
        line=6,
    ),
    # The original module itself after torch.compile(module) has run.
    Invalid(
        """
import torch

net = Net()
fast = torch.compile(net, backend="inductor")
fast(torch.randn(8, 3, 224, 224))
net.register_forward_hook(lambda m, i, o: print(o.shape))
""",
        line=6,
    ),
]
