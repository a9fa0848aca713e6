"""HL021 hook-reads-loop-variable-late."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.late_binding import LateRead, late_reads
from hooklint.fixes.bind_defaults import bind_as_defaults
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class HookReadsLoopVariableLate(Rule):
    """A hook written in a loop reads the loop's variable when it fires: every hook sees the last pass's value.

    ## What it does
    Finds a registration inside a `for`/`while` loop or a comprehension whose hook is
    a `lambda` or a `def` written in that loop, when the hook's body reads a name that
    is new on each pass (the loop's target, or what the pass binds from it) and that
    the hook neither takes as a parameter nor binds itself, and the hook stays on after
    its pass: its handle is not removed later in the same pass, the registration is not
    scoped by `with`, and the pass does not leave the loop right after it (`break`).

    ## Why is this bad?
    A Python closure keeps the variable, not its value. The hooks run later (on the
    next forward or backward), when the loop has finished and the variable holds the
    last pass's value, so every hook acts as if it were the last one: activations of
    every layer are stored under the last layer's name, every parameter's gradient
    hook restores or checks the last parameter, every steering hook adds the last
    layer's vector. Nothing fails; the results are silently wrong.

    ## Example
    ```python
    activations = {}
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out: activations.__setitem__(name, out))
    ```

    ## Use instead
    ```python
    activations = {}
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out, name=name: activations.__setitem__(name, out))
    ```
    (or `functools.partial(record, name)`, or a factory `make_hook(name)`).

    ## Fix safety
    Unsafe: the fix binds each name the hook reads late as a default of its own
    (`name=name`), so each hook keeps its pass's value, which changes what the hooks
    do (that is the point); after `*args` the new parameters are keyword-only, which
    torch never passes. No fix for a hook whose parameters take `**kwargs`, span lines
    or end with a comma.

    ## Precision on real code
    Written for the bugs of held-out set 28 (`notes/heldout28.md`): machin's
    gradient hooks, made in a loop over parameters, all restore or check the last
    parameter (reproduced on CPU). Over the 560 released libraries of sets 14-28 and
    the development set (`python ../shared/accuracy/score.py --preview`: no finding
    there), the registrations of this shape are machin's two, lmdoctor's steering
    hooks (every layer gets the last layer's direction) and batched-melbo's
    `__enter__` (every module runs the last hook function), all true. Few findings,
    so the rule is in preview.
    """

    code = "HL021"
    name = "hook-reads-loop-variable-late"
    preview = True
    cleared_elsewhere = False  # the loop, its hook and its removal are all in what the screen keeps
    fix_applicability = "unsafe"

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for late in late_reads(facts):
            yield self._finding(facts, late)

    @staticmethod
    def _finding(facts: ModuleFacts, late: LateRead) -> Finding:
        names = ", ".join(f"`{n}`" for n in late.names)
        what = "lambda" if isinstance(late.hook, cst.Lambda) else f"`{late.hook.name.value}`"
        plural = "s" if len(late.names) > 1 else ""
        return Finding(
            node=late.registration.call,
            message=f"hook {what} reads the loop's {names} when it fires: every hook sees the last value{plural}",
            fix_edits=bind_as_defaults(facts, late.hook, late.names),
            fix_message=f"Bind the loop's value{plural} as default{plural} of the hook",
            unsafe_fix=True,
        )

    VALID = [
        # The value is bound when the hook is written: a default.
        Valid(
            """
def record_all(model, activations):
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out, name=name: activations.__setitem__(name, out))
"""
        ),
        # A factory makes each hook with its own value.
        Valid(
            """
def make_recorder(store, key):
    def record(module, args, output):
        store[key] = output

    return record


def record_all(model, store):
    return [m.register_forward_hook(make_recorder(store, n)) for n, m in model.named_children()]
"""
        ),
        # The hook runs only during its pass: removed before the loop moves on.
        Valid(
            """
def per_layer_inputs(model, batch, layers):
    seen = {}
    for name in layers:
        layer = model.get_submodule(name)
        handle = layer.register_forward_pre_hook(lambda mod, args: seen.__setitem__(name, args[0]))
        try:
            model(batch)
        finally:
            handle.remove()
    return seen
"""
        ),
        # Hooks of an inner comprehension read a name of the outer pass, and that pass
        # removes them before the outer loop moves on.
        Valid(
            """
def leaf_orders(blocks, batch):
    orders = []
    for block in blocks:
        names = {module: name for name, module in block.named_modules()}
        seen = []
        handles = [leaf.register_forward_hook(lambda mod, *_: seen.append(names[mod])) for leaf in block.modules()]
        block(batch)
        for handle in handles:
            handle.remove()
        orders.append(seen)
    return orders
"""
        ),
        # The hook reads only what it is handed and names of the function, not of the loop.
        Valid(
            """
def count_calls(model, counts):
    for module in model.modules():
        module.register_forward_hook(lambda mod, args, out: counts.update({id(mod): 1}))
"""
        ),
        # A `nonlocal` hook shares the variable on purpose.
        Valid(
            """
def last_seen(model):
    last = None
    for block in model.children():

        def note(module, args, output):
            nonlocal last
            last = block

        block.register_forward_hook(note)
    return lambda: last
"""
        ),
    ]
    INVALID = [
        Invalid(
            """
def record_all(model, activations):
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out: activations.__setitem__(name, out))
""",
            expected="""
def record_all(model, activations):
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out, name=name: activations.__setitem__(name, out))
""",
            line=3,
            message="hook lambda reads the loop's `name` when it fires",
        ),
        # A def written in the loop, reading the pass's parameter and its name; its
        # handles are kept and removed later, after every pass.
        Invalid(
            """
def guard_parameters(model, report):
    handles = []
    for pname, param in model.named_parameters():

        def check(grad):
            if not grad.isfinite().all():
                report(pname, param.shape)

        handles.append(param.register_hook(check))
    return handles
""",
            expected="""
def guard_parameters(model, report):
    handles = []
    for pname, param in model.named_parameters():

        def check(grad, param=param, pname=pname):
            if not grad.isfinite().all():
                report(pname, param.shape)

        handles.append(param.register_hook(check))
    return handles
""",
            line=9,
            message="hook `check` reads the loop's `param`, `pname` when it fires",
        ),
        # A comprehension's variable is read late too.
        Invalid(
            """
def steer(layers, vectors):
    return [
        layer.register_forward_hook(lambda mod, args, out: out + vectors[i])
        for i, layer in enumerate(layers)
    ]
""",
            expected="""
def steer(layers, vectors):
    return [
        layer.register_forward_hook(lambda mod, args, out, i=i: out + vectors[i])
        for i, layer in enumerate(layers)
    ]
""",
            line=3,
            message="hook lambda reads the loop's `i` when it fires",
        ),
        # A hook that takes `*args`: the bound value becomes keyword-only.
        Invalid(
            """
class Tracer:
    def __init__(self, model):
        self.calls = []
        for name, module in model.named_modules():
            module.register_forward_pre_hook(lambda *args: self.calls.append(name))
""",
            expected="""
class Tracer:
    def __init__(self, model):
        self.calls = []
        for name, module in model.named_modules():
            module.register_forward_pre_hook(lambda *args, name=name: self.calls.append(name))
""",
            line=5,
            message="hook lambda reads the loop's `name` when it fires",
        ),
    ]
