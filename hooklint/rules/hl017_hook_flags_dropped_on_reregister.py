"""HL017 hook-flags-dropped-on-reregister."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.reregistration import Reregistration, fresh_name, reregistrations
from hooklint.fixes.registration_keywords import add_keywords, iterate_items
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid, format_version


class HookFlagsDroppedOnReregister(Rule):
    """Hooks copied out of `module._forward_hooks` / `_forward_pre_hooks` are registered again without their flags.

    ## What it does
    Finds `register_forward_hook(h)` / `register_forward_pre_hook(h)` where `h` comes
    from another module's hook dict: a loop or comprehension over
    `old._forward_hooks` (its `.values()` or `.items()`, also inside `list(...)`, or
    through a local name holding one), or `old._forward_hooks[k]`, when the
    registration does not pass `with_kwargs` (and, for forward hooks,
    `always_call`), and the function never reads the side dicts that hold them.

    ## Why is this bad?
    The hook dicts hold only the functions. torch keeps each hook's flags beside
    them, keyed by the handle id: `_forward_hooks_with_kwargs`,
    `_forward_hooks_always_called` and `_forward_pre_hooks_with_kwargs`. A copy made
    with plain `register_forward_hook(h)` turns a `with_kwargs=True` hook into one
    called as `h(module, args, output)` (a `TypeError`, or its `kwargs` parameter
    receiving the output), and an `always_call=True` cleanup hook into one that is
    skipped when forward raises. Module-swapping code (quantization and sparsity
    conversions that move hooks from the float module to its replacement) is where
    this happens. `prepend` is not a flag torch keeps: iterating the dict in order
    already replays it.
    Verified on torch 2.13: hooks copied this way by torch's own
    `torch.ao.quantization.fuse_modules.fuse_known_modules` make a
    `with_kwargs=True` hook raise `TypeError` on the next forward.

    ## Example
    ```python
    def swap(old, new):
        for hook in old._forward_hooks.values():
            new.register_forward_hook(hook)
    ```

    ## Use instead
    ```python
    def swap(old, new):
        for hook_id, hook in old._forward_hooks.items():
            new.register_forward_hook(
                hook,
                with_kwargs=hook_id in old._forward_hooks_with_kwargs,
                always_call=hook_id in old._forward_hooks_always_called,
            )
    ```

    ## Fix safety
    Unsafe: the fix passes each flag as `hook_id in old.<side dict>` (turning a
    `.values()` loop into `.items()` to get the id), so it relies on torch's private
    side dicts, and hooks that ran without their flags before now run with them.
    Offered when the loop or subscript gives the handle id; withheld when the target
    torch predates a flag (`with_kwargs` 2.0, `always_call` 2.1).

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py --preview`):
    2 findings, not labelled yet, both judged true (`notes/newrules-triage.md`).
    torch 2.13's own sources (`hooklint check --preview --select HL017
    <site-packages>/torch`): 6 findings, all true (module-swapping code in
    quantization and sparsity). 8 of 8 right, but only 2 on the development set,
    whose labels promotion counts (at least 8), so the rule stays in preview.
    """

    code = "HL017"
    name = "hook-flags-dropped-on-reregister"
    preview = True
    cleared_elsewhere = False  # the registration, its loop and its function are all the evidence
    fix_applicability = "unsafe"
    prefilter = ("_forward_hooks", "_forward_pre_hooks")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for copy in reregistrations(facts):
            yield self._finding(facts, context, copy)

    def _finding(self, facts: ModuleFacts, context: RuleContext, copy: Reregistration) -> Finding:
        registration = copy.registration
        flags = " and ".join(f"`{keyword}`" for keyword, _, _ in copy.dropped)
        source = copy.source if len(copy.source) <= 20 else copy.source[:17] + "..."
        message = (
            f"hooks from `{source}.{copy.dict_name}` are registered again without {flags} "
            f"flag{'s' if len(copy.dropped) > 1 else ''}"
        )
        edits: list = []
        key = copy.key
        if key is None and copy.values_loop is not None:
            key = fresh_name(facts, registration, "hook_id")
            edits = iterate_items(*copy.values_loop, key, facts)
        withheld = None
        if key is not None:
            keywords = ", ".join(
                f"{keyword}={key} in {copy.source}.{side}" for keyword, side, _ in copy.dropped
            )
            added = add_keywords(registration.call, keywords)
            edits = edits + added if added else []
            since = max(flag[2] for flag in copy.dropped)
            if edits and context.target_torch < since:
                withheld = f"the flags need torch >= {format_version(since)}, target is {format_version(context.target_torch)}"
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message="Pass each flag as torch stored it for the hook's handle id",
            unsafe_fix=True,
            fix_withheld=withheld,
        )

    VALID = [
        # The flags are read from the side dicts and passed on.
        Valid(
            """
def move_hooks(old, new):
    for hook_id, hook in old._forward_hooks.items():
        new.register_forward_hook(
            hook,
            with_kwargs=hook_id in old._forward_hooks_with_kwargs,
            always_call=hook_id in old._forward_hooks_always_called,
        )
"""
        ),
        # Hooks from the dict are only called by hand, not registered again.
        Valid(
            """
def run_hooks(layer, x, output):
    for hook in layer._forward_hooks.values():
        result = hook(layer, (x,), output)
        if result is not None:
            output = result
    return output
"""
        ),
        # The function checks the side dict itself (it skips the kwargs hooks).
        Valid(
            """
def copy_plain_pre_hooks(src, dst):
    for hook_id, hook in src._forward_pre_hooks.items():
        if hook_id in src._forward_pre_hooks_with_kwargs:
            continue
        dst.register_forward_pre_hook(hook)
"""
        ),
        # A forward hook loop that passes both flags explicitly, and a name that merely
        # looks like a hook dict (a user attribute of another kind) registered as a tensor hook.
        Valid(
            """
def rearm(module, spare, grads):
    for hook in spare._forward_hooks.values():
        module.register_forward_hook(hook, with_kwargs=False, always_call=False)
    for hook in grads._forward_hooks.values():
        grads.weight.register_hook(hook)
"""
        ),
    ]
    INVALID = [
        # A sparsity conversion that keeps the dense module's hooks on its replacement.
        Invalid(
            """
def to_sparse(dense, mapping):
    sparse = mapping[type(dense)].from_dense(dense)
    for pre_hook in dense._forward_pre_hooks.values():
        sparse.register_forward_pre_hook(pre_hook)
    for hook in dense._forward_hooks.values():
        sparse.register_forward_hook(hook)
    return sparse
""",
            expected="""
def to_sparse(dense, mapping):
    sparse = mapping[type(dense)].from_dense(dense)
    for hook_id, pre_hook in dense._forward_pre_hooks.items():
        sparse.register_forward_pre_hook(pre_hook, with_kwargs=hook_id in dense._forward_pre_hooks_with_kwargs)
    for hook_id, hook in dense._forward_hooks.items():
        sparse.register_forward_hook(hook, with_kwargs=hook_id in dense._forward_hooks_with_kwargs, always_call=hook_id in dense._forward_hooks_always_called)
    return sparse
""",
            line=4,
            message="without `with_kwargs` flag",
        ),
        # Items already give the id; only always_call is dropped (with_kwargs is passed).
        Invalid(
            """
class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        for key, hook in list(inner._forward_hooks.items()):
            self.register_forward_hook(hook, with_kwargs=key in inner._forward_hooks_with_kwargs)
            del inner._forward_hooks[key]
""",
            expected="""
class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        for key, hook in list(inner._forward_hooks.items()):
            self.register_forward_hook(hook, with_kwargs=key in inner._forward_hooks_with_kwargs, always_call=key in inner._forward_hooks_always_called)
            del inner._forward_hooks[key]
""",
            line=6,
            message="without `always_call` flag",
        ),
        # A comprehension through a local list; no handle id to read, so no fix.
        Invalid(
            """
def clone_with_hooks(model, copy):
    saved = list(model._forward_hooks.values())
    return [copy.register_forward_hook(fn) for fn in saved]
""",
            line=3,
            message="registered again without `with_kwargs` and `always_call` flags",
        ),
        # A subscript by key; the fix is withheld on a target without always_call (torch 2.0).
        Invalid(
            """
def transplant(src, dst, ids):
    for i in ids:
        dst.register_forward_hook(src._forward_hooks[i])
""",
            line=3,
            message="fix withheld",
            options={"target_torch": (2, 0)},
        ),
    ]
