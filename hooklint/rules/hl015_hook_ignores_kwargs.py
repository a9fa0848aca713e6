"""HL015 hook-ignores-kwargs."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.hook_args import (
    has_star_args,
    index_value,
    param_named,
    positional_reads,
    uses_name,
)
from hooklint.analysis.hook_roles import hook_callable, returns_value
from hooklint.analysis.keyword_calls import keyword_only_call
from hooklint.analysis.signatures import signature_mismatch
from hooklint.fixes.hook_params import add_with_kwargs
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


def _short(code: str, width: int = 20) -> str:
    code = " ".join(code.split())
    return code if len(code) <= width else code[: width - 3] + "..."


class HookIgnoresKwargs(Rule):
    """A forward (pre-)hook indexes its positional args but is registered without `with_kwargs=True`.

    ## What it does
    Finds a `register_forward_pre_hook` / `register_forward_hook` registration
    without `with_kwargs=True` whose hook reads `args[i]` (or unpacks `args`) from
    its positional-arguments parameter without checking it first, on a module that
    the same file calls with keyword arguments only (`model(**batch)`,
    `self.block(hidden_states=h)`, a loop variable over the same layers): the
    evidence that the hook will see `args == ()` (`hooklint/analysis/keyword_calls.py`).

    Without such a call the rule says nothing: most hooked modules are called
    positionally (`nn.Linear`, convolutions, norms, MoE expert blocks, and 215 of the
    218 Hugging Face decoder-layer calls in transformers pass `hidden_states` by
    position), so a guess from the hook alone was wrong nearly every time. In
    particular these are not reported: hooks on layers chosen by a filter
    (`isinstance(m, nn.Linear)` in an `if` or a comprehension, a tuple constant of
    layer types, a helper predicate), hooks a module registers on itself in
    `__init__`, and hooks that check `args` first, also in a compound guard
    (`if not args or args[0] is None: return`, `args[0] if args else ...`).
    A hook whose parameters do not fit its registration at all (a four-parameter
    forward hook registered without `with_kwargs`) is HL018's finding, not this
    rule's.

    ## Why is this bad?
    Without `with_kwargs=True` a hook sees only the positional arguments. A module
    called by keyword gives the hook `args == ()`, so `args[0]` raises `IndexError`
    inside the forward, or a pre-hook that modifies `args[0]` silently does nothing.

    ## Example
    ```python
    def record(module, args, output):
        INPUTS.append(args[0].detach())

    model.register_forward_hook(record)
    model(**tokenizer(text, return_tensors="pt"))
    ```

    ## Use instead
    ```python
    def record(module, args, kwargs, output):
        INPUTS.append((args[0] if args else next(iter(kwargs.values()))).detach())

    model.register_forward_hook(record, with_kwargs=True)
    ```

    ## Fix safety
    Unsafe, and only with a target torch of at least 2.0 (`with_kwargs` appeared in
    2.0; withheld otherwise). The fix registers with `with_kwargs=True`, adds a
    `kwargs` parameter after the args parameter, and reads `args[0]` from the first
    keyword argument when there are no positional ones; that guesses that the first
    keyword is the main input. It is offered only for `args[0]`, for a hook in the
    same file used by this registration only, and for a pre-hook that returns
    nothing (with `with_kwargs=True` a pre-hook must return `(args, kwargs)`).

    ## Options
    `target-torch`: the fix is withheld below 2.0 (the finding stays).

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`)
    and torch 2.13's own sources (`hooklint check --preview --select HL015
    <site-packages>/torch`): no finding. Before the rule asked for keyword-call
    evidence it made 39 findings on the development set, all guesses on layers
    always called positionally: 37 false, 2 debatable. With no finding left,
    precision cannot be measured yet and the rule stays in preview.
    """

    code = "HL015"
    name = "hook-ignores-kwargs"
    # The evidence (a call by keyword) may sit anywhere in the file: such files are read
    # whole (only with --preview).
    whole_module = True
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
            args_name = hook.params[1]
            indexed, unpacked = positional_reads(hook.node, args_name)
            if not indexed and not unpacked:
                continue
            evidence = keyword_only_call(facts, registration)
            if evidence is None:
                continue
            resolved = hook_callable(facts, registration)
            if resolved is not None and signature_mismatch(facts, registration, resolved.body) is not None:
                continue  # its parameters do not fit the registration at all: HL018 says so
            yield self._finding(facts, context, registration, args_name, indexed, unpacked, shared, evidence)

    def _finding(
        self, facts, context, registration: Registration, args_name, indexed, unpacked, shared, evidence
    ) -> Finding:
        hook = registration.hook
        arg = _short(args_name, 10)
        shown = f"reads `{arg}[{index_value(indexed[0])}]`" if indexed else f"unpacks `{arg}`"
        called = _short(facts.code(evidence.node.func))
        message = f"`{_short(hook.name, 16)}` {shown} without `with_kwargs=True`; `{called}(...)` passes only keywords"
        edits: list = []
        withheld = None
        if self._fixable(registration, indexed, unpacked, shared):
            kwargs_name = "kwargs" if not uses_name(hook.node, "kwargs") else "hook_kwargs"
            param = param_named(hook.node, args_name)
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
            related=(evidence.node,),
        )

    @staticmethod
    def _fixable(registration: Registration, indexed, unpacked, shared) -> bool:
        hook = registration.hook
        if unpacked or not indexed or shared.get(id(hook.node), 0) > 1:
            return False
        if not all(index_value(s) == 0 for s in indexed):
            return False
        if hook.via not in ("function", "lambda", "method"):
            return False
        if has_star_args(hook.node):
            return False
        if registration.api.kind == "forward_pre":
            return not returns_value(hook.node)
        return True

    VALID = [
        # Registered with with_kwargs=True and reading kwargs as a fallback.
        Valid(
            """
# A kwargs-style hook registered without with_kwargs: the parameters do not fit the
# registration at all, which is HL018's finding (hook-signature-mismatch), not this one.
def grab_hidden(module, args, kwargs, output):
    BUFFER.append(args[0].detach())

def trace(decoder, ids):
    decoder.register_forward_hook(grab_hidden)
    decoder(input_ids=ids)
"""
        ),
        Valid(
            """
def capture_hidden(module, args, kwargs, output):
    hidden = args[0] if args else kwargs["hidden_states"]
    CAPTURED.append(hidden.detach())

def run(model, batch):
    model.register_forward_hook(capture_hidden, with_kwargs=True)
    model(**batch)
"""
        ),
        # Only on Linear layers chosen in a comprehension filter: called positionally.
        Valid(
            """
import torch.nn as nn

def observe_linears(model, stats):
    def observe(module, inputs, output):
        stats[module].update(inputs[0].abs().amax())
    return [m.register_forward_hook(observe) for m in model.modules() if isinstance(m, nn.Linear)]
"""
        ),
        # Layers chosen by a tuple constant of types and by a helper predicate.
        Valid(
            """
QUANTIZABLE = (Linear, Conv1D)

def wants_scale(name, module):
    return isinstance(module, QUANTIZABLE) and "head" not in name

def attach(model, hook):
    for name, module in model.named_modules():
        if wants_scale(name, module):
            module.register_forward_pre_hook(lambda m, args: hook(m, args[0]))
"""
        ),
        # A compound guard checks args before indexing it.
        Valid(
            """
def rotate_input(module, args):
    if not args or args[0] is None:
        return None
    return (args[0] @ module.rotation,) + args[1:]

def install(layer):
    layer.register_forward_pre_hook(rotate_input)
    return layer(x=None)
"""
        ),
        # A layer that hooks itself in __init__ (lazy initialisation on the first input).
        Valid(
            """
import torch.nn as nn

class LazyProjection(nn.Module):
    def __init__(self, out_features):
        super().__init__()
        self.out_features = out_features
        self._hook = self.register_forward_pre_hook(self._materialize)

    def _materialize(self, module, inputs):
        self.weight = nn.Parameter(inputs[0].new_empty(self.out_features, inputs[0].shape[-1]))
        self._hook.remove()
"""
        ),
        # MoE expert blocks are always called positionally: no keyword call in sight.
        Valid(
            """
def count_tokens(moe, counts):
    for index, expert in enumerate(moe.experts):
        expert.register_forward_hook(lambda m, args, out, i=index: counts.__setitem__(i, args[0].shape[0]))
    for index, expert in enumerate(moe.experts):
        expert(moe.route(index))
"""
        ),
    ]
    INVALID = [
        # Activation capture on a model that the same function calls with **batch.
        Invalid(
            """
def capture(module, inputs, output):
    ACTS.append(inputs[0].detach().cpu())

def collect(model, loader):
    model.register_forward_hook(capture)
    for batch in loader:
        model(**batch)
""",
            expected="""
def capture(module, inputs, kwargs, output):
    ACTS.append((inputs[0] if inputs else next(iter(kwargs.values()))).detach().cpu())

def collect(model, loader):
    model.register_forward_hook(capture, with_kwargs=True)
    for batch in loader:
        model(**batch)
""",
            line=5,
            message="`inputs[0]`",
        ),
        # A pre-hook lambda on layers that the same class calls by keyword; target 1.13: fix withheld.
        Invalid(
            """
class Tracker:
    def __init__(self, blocks):
        self.blocks = blocks
        self.norms = [[] for _ in blocks]
        for i, block in enumerate(self.blocks):
            block.register_forward_pre_hook(lambda m, args, i=i: self.norms[i].append(args[0].norm().item()))

    def run(self, hidden, mask):
        for block in self.blocks:
            hidden = block(hidden_states=hidden, attention_mask=mask)
        return hidden
""",
            line=6,
            message="(fix withheld: `with_kwargs` needs torch >= 2.0",
            options={"target_torch": (1, 13)},
        ),
        # A steering pre-hook on a submodule the model calls by keyword: reported, no fix
        # (the pre-hook returns new args; with with_kwargs it must return (args, kwargs)).
        Invalid(
            """
import torch.nn as nn

class Steered(nn.Module):
    def __init__(self, encoder, vector):
        super().__init__()
        self.encoder = encoder
        self.vector = vector
        self.encoder.register_forward_pre_hook(self._steer)

    def _steer(self, module, args):
        return (args[0] + self.vector,) + args[1:]

    def forward(self, ids, mask):
        return self.encoder(input_ids=ids, attention_mask=mask)
""",
            line=8,
        ),
        # A method hook unpacking its inputs; the wrapped model is called with **inputs.
        Invalid(
            """
class Recorder:
    def _on_forward(self, module, inputs, output):
        (x,) = inputs
        self.records.append((x.shape, output.shape))

    def profile(self, model, inputs):
        model.register_forward_hook(self._on_forward)
        return model(**inputs)
""",
            line=7,
            message="unpacks `inputs`",
        ),
    ]
