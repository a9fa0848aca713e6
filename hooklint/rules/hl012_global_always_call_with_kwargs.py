"""HL012 global-always-call-with-kwargs."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.signatures import tolerates_three_arguments
from hooklint.fixes.hook_params import accept_both_arities
from hooklint.rules.base import (
    Finding,
    Invalid,
    Rule,
    RuleContext,
    Valid,
    format_version,
)

#: ``with_kwargs`` for the global forward hook appeared in 2.6 (PR #137403), and with it the bug.
FIRST_AFFECTED = (2, 6)
#: The newest release verified to have it.  Raise this when a newer release is checked;
#: a target above it is the only range that provably avoids the bug.
LAST_AFFECTED = (2, 13)


class GlobalAlwaysCallWithKwargs(Rule):
    """A global forward hook with both `with_kwargs=True` and `always_call=True` gets three arguments on the exception path.

    ## What it does
    Finds `torch.nn.modules.module.register_module_forward_hook(hook,
    with_kwargs=True, always_call=True)` when the target torch range includes
    2.6–2.13 (the target is the oldest supported release, so a target of 2.4 or 2.10
    includes them; only a target above 2.13 excludes them).

    ## Why is this bad?
    On torch 2.6–2.13, when a module's forward raises, `Module._call_impl` calls the
    global always-call hooks as `hook(module, args, result)`, ignoring
    `with_kwargs`. A hook written for `with_kwargs=True` takes four arguments, so it
    raises `TypeError`, which torch turns into a `UserWarning`; the cleanup the hook
    was registered with `always_call=True` for never runs (verified on 2.13).

    ## Example
    ```python
    from torch.nn.modules.module import register_module_forward_hook

    def _leave(module, args, kwargs, output):
        _ACTIVE.discard(id(module))

    register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
    ```

    ## Use instead
    ```python
    def _leave(module, args, *rest):
        kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0])
        _ACTIVE.discard(id(module))
    ```

    ## Fix safety
    Unsafe: the fix changes the hook's signature to `(module, args, *rest)` and
    unpacks `kwargs` and `output` from `rest` (`kwargs` is `{}` and `output` is `None`
    on the exception path); other callers of the function that pass these by keyword
    would break. Offered for a `def` hook in the same file with exactly four
    positional parameters; not for lambdas.

    ## Options
    `target-torch`: the oldest torch the project supports. The rule reports while
    that is 2.13 or older (`LAST_AFFECTED` in the rule: the newest release verified
    to have the bug), since a project that supports 2.4 also runs on 2.6 to 2.13.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`)
    and torch 2.13's own sources (`hooklint check --select HL012
    <site-packages>/torch`): no finding. The rule is stable because it matches one
    exact shape whose behaviour is verified: a test runs the fixed hook on torch's
    exception path.
    """

    code = "HL012"
    name = "global-always-call-with-kwargs"
    cleared_elsewhere = False  # the registration's keywords are all the evidence
    fix_applicability = "unsafe"
    prefilter = ("register_module_forward_hook",)

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        if context.target_torch > LAST_AFFECTED:
            return
        for registration in facts.registrations:
            if registration.api.name != "register_module_forward_hook":
                continue
            if not (
                registration.keyword_is_true("with_kwargs") and registration.keyword_is_true("always_call")
            ):
                continue
            if tolerates_three_arguments(registration):
                continue
            yield self._finding(facts, registration, context)

    def _finding(self, facts: ModuleFacts, registration: Registration, context: RuleContext) -> Finding:
        hook = registration.hook
        name = f"`{hook.name}`" if hook is not None else "the hook"
        message = (
            f"global always_call hook {name} is called with 3 arguments when forward raises "
            f"(torch {format_version(FIRST_AFFECTED)}-{format_version(LAST_AFFECTED)})"
        )
        edits: list = []
        if hook is not None and hook.via in ("function", "method"):
            edits = accept_both_arities(hook.node, 1 if hook.via == "method" else 0)
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message="Make the hook accept `(module, args, output)` as well as `(module, args, kwargs, output)`",
        )

    VALID = [
        # Already arity-tolerant (what the fix writes).
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook

def _leave(module, args, *rest):
    kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0])
    _ACTIVE.discard(id(module))

register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
"""
        ),
        # Only always_call: torch calls it with 3 arguments on both paths.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook

def _pop_scope(module, args, output):
    SCOPES.pop()

handle = register_module_forward_hook(_pop_scope, always_call=True)
"""
        ),
        # with_kwargs without always_call: the exception path never calls it.
        Valid(
            """
import torch

def _trace(module, args, kwargs, output):
    RECORDS.append((type(module).__name__, sorted(kwargs)))

handle = torch.nn.modules.module.register_module_forward_hook(_trace, with_kwargs=True)
"""
        ),
        # A module-local forward hook: torch passes kwargs on the exception path there.
        Valid(
            """
def attach(block):
    def leave(module, args, kwargs, output):
        block.depth -= 1
    return block.register_forward_hook(leave, with_kwargs=True, always_call=True)
"""
        ),
        # A target above the last affected release.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook

def _leave(module, args, kwargs, output):
    _ACTIVE.discard(id(module))

register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
""",
            options={"target_torch": (2, 14)},
        ),
    ]
    INVALID = [
        # A profiler that pops its scope stack in the global always_call hook.
        Invalid(
            """
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

_ACTIVE = set()

def _enter(module, args):
    _ACTIVE.add(id(module))

def _leave(module, args, kwargs, output):
    _ACTIVE.discard(id(module))

pre = register_module_forward_pre_hook(_enter)
post = register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
""",
            expected="""
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

_ACTIVE = set()

def _enter(module, args):
    _ACTIVE.add(id(module))

def _leave(module, args, *rest):
    kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0])  # torch 2.6-2.13 call always_call hooks with 3 arguments on the exception path
    _ACTIVE.discard(id(module))

pre = register_module_forward_pre_hook(_enter)
post = register_module_forward_hook(_leave, with_kwargs=True, always_call=True)
""",
            line=12,
            message="called with 3 arguments",
        ),
        # A method hook on a tracker object (self is bound), target 2.4 also runs on 2.6+.
        Invalid(
            """
import torch.nn.modules.module as mm

class KwargTracker:
    def start(self):
        self.handle = mm.register_module_forward_hook(self._record, with_kwargs=True, always_call=True)

    def _record(self, module, args, kwargs, output):
        \"\"\"Record the call, also when forward raised.\"\"\"
        self.calls.append((module, kwargs, output is None))
""",
            expected="""
import torch.nn.modules.module as mm

class KwargTracker:
    def start(self):
        self.handle = mm.register_module_forward_hook(self._record, with_kwargs=True, always_call=True)

    def _record(self, module, args, *rest):
        \"\"\"Record the call, also when forward raised.\"\"\"
        kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0])  # torch 2.6-2.13 call always_call hooks with 3 arguments on the exception path
        self.calls.append((module, kwargs, output is None))
""",
            line=5,
            options={"target_torch": (2, 4)},
        ),
        # A lambda hook: reported, no fix offered.
        Invalid(
            """
import torch

torch.nn.modules.module.register_module_forward_hook(
    lambda m, a, k, o: LOG.append((m, k)), with_kwargs=True, always_call=True
)
""",
            line=3,
            options={"target_torch": (2, 10)},
        ),
    ]
