"""HL011 saved-tensors-hooks-not-exited."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hooklint.analysis.delegation import raises_after_enter, skipped_base_exits
from hooklint.analysis.facts import CallSite, ModuleFacts
from hooklint.analysis.lifetime import (
    cannot_raise,
    common_level,
    has_multiline_string,
    same_function,
    statement_path,
    word_count,
)
from hooklint.analysis.statements import assigns_alone, is_expression_line
from hooklint.analysis.vocabulary import SAVED_TENSORS_HOOKS
from hooklint.fixes.lifetime import with_replacing
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class SavedTensorsHooksNotExited(Rule):
    """`saved_tensors_hooks` / `save_on_cpu` is entered by hand and not reliably exited.

    ## What it does
    Finds `torch.autograd.graph.saved_tensors_hooks(...)`, `save_on_cpu(...)` and
    `disable_saved_tensors_hooks(...)` (import aliases included) that are entered
    with `.__enter__()` and never exited, exited outside `finally` after code that
    can raise, or created and never used as a context manager at all.
    Entering one on a temporary (`save_on_cpu().__enter__()`) counts as never
    exited. Not flagged: `with`, `ExitStack.enter_context`, an object returned to
    the caller, `__enter__`/`__exit__` methods that delegate to it, and an exit
    through an alias in another hook.

    A class that extends one (`class Offload(saved_tensors_hooks):`) hands its own
    `__enter__`/`__exit__` on with `super()`: flagged when its `__exit__` runs code
    that can raise (a call, a `raise`, an `assert`) before `super().__exit__(...)` and
    outside `finally` (the base's exit is then skipped), or its `__enter__` runs such
    code after `super().__enter__()` outside any `try` (`with` never calls `__exit__`
    when `__enter__` raises); so is a class's `__enter__` that enters one it holds by
    hand (`self.ctx.__enter__()`, exited in its `__exit__`) and then runs such code
    outside `try`. No fix: move the `super()` call into `finally`, or the work before
    the enter.

    ## Why is this bad?
    These are not handles: they push pack/unpack hooks on a thread-local stack
    until `__exit__` pops them. Entered and never exited, every later autograd op on
    that thread packs its saved tensors through them (moving activations to the CPU,
    or raising for `disable_saved_tensors_hooks`), far from the code that caused
    it. Created and never entered, they do nothing at all, which is rarely what
    the author meant.

    ## Example
    ```python
    from torch.autograd.graph import save_on_cpu

    def offloaded_forward(model, x):
        ctx = save_on_cpu(pin_memory=True)
        ctx.__enter__()
        out = model(x)
        ctx.__exit__(None, None, None)
        return out
    ```

    ## Use instead
    ```python
    def offloaded_forward(model, x):
        with save_on_cpu(pin_memory=True):
            out = model(x)
        return out
    ```

    ## Fix safety
    Safe where the entered span is one block and the context object is a local
    used for nothing else: the `__enter__`/`__exit__` pair becomes a `with`
    statement, which exits on the same path and also when the span raises. No fix
    when the object is never exited (where it should end is unknown), or when
    enter and exit are in different blocks or functions.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`)
    and torch 2.13's own sources (`hooklint check --select HL011
    <site-packages>/torch`): no finding, so precision is not measured there. The
    rule is stable because its shape is exact: a context entered by hand and not
    exited on every path.
    """

    code = "HL011"
    name = "saved-tensors-hooks-not-exited"
    fix_applicability = "safe"
    prefilter = ("saved_tensors_hooks", "disable_saved_tensors_hooks", "save_on_cpu")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for skipped in skipped_base_exits(facts, SAVED_TENSORS_HOOKS):
            base = skipped.base.rsplit(".", 1)[-1]
            if skipped.method == "__exit__":
                message = (
                    f"`{skipped.class_name}.__exit__` may raise before `super().__exit__()` "
                    f"(not in `finally`): `{base}` hooks stay on"
                )
            else:
                message = (
                    f"`{skipped.class_name}.__enter__` may raise after `super().__enter__()`: "
                    f"no `__exit__`, `{base}` hooks stay on"
                )
            yield Finding(node=skipped.call, message=message)
        creations = [c for c in facts.calls if c.callee in SAVED_TENSORS_HOOKS]
        if not creations:
            return
        enters = list(facts.calls_to_attr("__enter__"))
        exits = list(facts.calls_to_attr("__exit__"))
        for creation in creations:
            finding = self._check(facts, creation, enters, exits)
            if finding is not None:
                yield finding

    def _check(self, facts: ModuleFacts, creation: CallSite, enters, exits) -> Finding | None:
        api = creation.callee.rsplit(".", 1)[-1]  # type: ignore[union-attr]
        role = creation.use.final.role
        if any(e.receiver is creation.node for e in enters):
            return Finding(
                node=creation.node,
                message=f"`{api}(...).__enter__()` can never be exited: its hooks stay active for the thread",
            )
        if role == "discarded":
            return Finding(
                node=creation.node,
                message=f"`{api}(...)` is created and dropped: its hooks are never installed",
            )
        if role != "bound" or len(creation.use.targets) != 1:
            return None
        target = creation.use.targets[0]
        entered = [e for e in enters if facts.code(e.receiver) == target]  # type: ignore[arg-type]
        exited = [x for x in exits if facts.code(x.receiver) == target]  # type: ignore[arg-type]
        scope = creation.site.function
        scope_code = facts.code(scope) if scope is not None else facts.module.code
        if target.startswith("self."):
            class_def = creation.site.class_def
            scope_code = facts.code(class_def) if class_def is not None else scope_code
        if not entered:
            if word_count(scope_code, target) == 1 and "." not in target:
                return Finding(
                    node=creation.node,
                    message=f"`{target} = {api}(...)` is never used as a context manager: its hooks are never installed",
                )
            return None
        if not exited:
            aliases = set(
                re.findall(
                    r"([A-Za-z_][\w.]*)\s*=\s*" + re.escape(target) + r"\b(?![.(\[])",
                    scope_code,
                )
            )
            if any(facts.code(x.receiver) in aliases for x in exits):  # type: ignore[arg-type]
                return None  # exited through another name (``cx = ctx`` ... ``cx.__exit__()``)
            return Finding(
                node=creation.node,
                message=f"`{target}.__enter__()` is never followed by `{target}.__exit__()`: hooks stay active",
            )
        enter = entered[0]
        same = [x for x in exited if same_function(x.site, enter.site) and x.site.order > enter.site.order]
        if not same and _exited_by_own_exit(enter, exited) and raises_after_enter(facts, enter.site):
            return Finding(
                node=enter.node,
                message=(
                    f"`__enter__` may raise after `{target}.__enter__()`: "
                    f"no `__exit__` then, and `{api}` hooks stay on"
                ),
            )
        if not same or any(x.site.in_finally or x.site.in_except for x in exited):
            return None
        exit_ = same[0]
        path_e = statement_path(facts, enter.site)
        path_x = statement_path(facts, exit_.site)
        if path_e is None or path_x is None:
            return None
        levels = common_level(path_e, path_x)
        if levels is None or levels[0].index >= levels[1].index:
            return None
        at_e, at_x = levels
        between = at_e.block[at_e.index + 1 : at_x.index]
        if all(cannot_raise(s) for s in between):
            return None
        message = (
            f"`{target}.__exit__()` is not in `finally`: the hooks stay active if the code before it raises"
        )
        edits = self._fix(facts, creation, target, at_e, at_x, between, scope_code)
        return Finding(
            node=creation.node,
            message=message,
            fix_edits=edits,
            fix_message=f"Use `with {api}(...):`" if edits else "",
        )

    def _fix(self, facts, creation: CallSite, target, at_e, at_x, between, scope_code) -> list:
        if not target.isidentifier() or word_count(scope_code, target) != 3:
            return []
        if not (is_expression_line(at_e.statement) and is_expression_line(at_x.statement)):
            return []
        path_c = statement_path(facts, creation.site)
        if path_c is None or path_c[-1].block is not at_e.block or path_c[-1].index != at_e.index - 1:
            return []
        creation_statement = path_c[-1].statement
        if not assigns_alone(creation_statement, creation.node) or has_multiline_string(facts, between):
            return []
        return with_replacing(
            facts,
            [creation_statement, at_e.statement],
            creation.node,
            between,
            [at_x.statement],
        )

    VALID = [
        # Entered by hand in `__enter__`, then only the base's enter: the chain of enters.
        Valid(
            """
from torch.autograd.graph import saved_tensors_hooks


class CountingMode(BaseMode):
    def __init__(self):
        super().__init__()
        self.ctx = saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, tensor):
        return tensor

    def unpack(self, tensor):
        return tensor

    def __enter__(self):
        self.ctx.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        self.ctx.__exit__(*exc)
        return super().__exit__(*exc)
"""
        ),
        # The subclass's own work in `try`, the base's exit in `finally`; on the way in,
        # the base's enter comes last.
        Valid(
            """
from torch.autograd.graph import saved_tensors_hooks


class StreamOffload(saved_tensors_hooks):
    def __init__(self, stream):
        self.stream = stream
        self.stash = {}
        super().__init__(self.pack, self.unpack)

    def pack(self, tensor):
        return tensor.to("cpu", non_blocking=True)

    def unpack(self, tensor):
        return tensor.to("cuda", non_blocking=True)

    def __enter__(self):
        self.stash.clear()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            self.stream.synchronize()
            self.stash.clear()
        finally:
            result = super().__exit__(*exc)
        return result
"""
        ),
        # The ordinary use: a `with` statement (activation offloading in a training step).
        Valid(
            """
from torch.autograd.graph import save_on_cpu

def training_step(model, batch):
    with save_on_cpu(pin_memory=True):
        loss = model(batch).sum()
    loss.backward()
"""
        ),
        # A reusable context object entered by an object's own __enter__/__exit__.
        Valid(
            """
import torch

class Offload:
    def __init__(self):
        self.ctx = torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)

    def __enter__(self):
        self.ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)
"""
        ),
        # Entered by hand, exited in `finally`; and one kept in an ExitStack.
        Valid(
            """
import contextlib
from torch.autograd import graph

def checkpointed(fn, x, pack, unpack):
    ctx = graph.saved_tensors_hooks(pack, unpack)
    ctx.__enter__()
    try:
        return fn(x)
    finally:
        ctx.__exit__(None, None, None)

def no_saved_hooks(fn, x):
    with contextlib.ExitStack() as stack:
        stack.enter_context(graph.disable_saved_tensors_hooks("not supported here"))
        return fn(x)
"""
        ),
        # A factory that returns the context manager to its caller.
        Valid(
            """
from torch.autograd.graph import saved_tensors_hooks

def offload_hooks(device):
    return saved_tensors_hooks(lambda t: t.to(device), lambda t: t.cuda())
"""
        ),
    ]
    INVALID = [
        # A held context entered by hand in `__enter__`, then more work that may raise:
        # `with` never calls `__exit__` when `__enter__` raises.
        Invalid(
            """
import torch


class LayerOffload:
    def __init__(self, planner):
        self.planner = planner
        self.ctx = torch.autograd.graph.saved_tensors_hooks(planner.pack, planner.unpack)

    def __enter__(self):
        self.ctx.__enter__()
        self.planner.next_layer()
        return self

    def __exit__(self, *exc):
        return self.ctx.__exit__(*exc)
""",
            line=10,
            message="`__enter__` may raise after `self.ctx.__enter__()`",
        ),
        # A subclass syncs its stream before handing on to the base's exit: if the sync
        # raises, the base's exit never runs and its pack hooks stay pushed.
        Invalid(
            """
from torch.autograd.graph import saved_tensors_hooks


class StreamOffload(saved_tensors_hooks):
    def __init__(self, stream):
        self.stream = stream
        self.stash = {}
        super().__init__(self.pack, self.unpack)

    def pack(self, tensor):
        return tensor.to("cpu", non_blocking=True)

    def unpack(self, tensor):
        return tensor.to("cuda", non_blocking=True)

    def __exit__(self, *exc):
        self.stream.synchronize()
        self.stash.clear()
        return super().__exit__(*exc)
""",
            line=19,
            message="may raise before `super().__exit__()` (not in `finally`)",
        ),
        # The same on the way in: `with` does not call `__exit__` when `__enter__` raises.
        Invalid(
            """
from torch.autograd.graph import saved_tensors_hooks


class PinnedOffload(saved_tensors_hooks):
    def __init__(self, pool):
        self.pool = pool
        super().__init__(self.pack, self.unpack)

    def pack(self, tensor):
        return self.pool.copy_in(tensor)

    def unpack(self, ref):
        return self.pool.copy_out(ref)

    def __enter__(self):
        entered = super().__enter__()
        self.pool.reserve()
        return entered
""",
            line=16,
            message="`PinnedOffload.__enter__` may raise after `super().__enter__()`",
        ),
        # Entered and exited by hand with a forward in between.
        Invalid(
            """
from torch.autograd.graph import save_on_cpu

def offloaded_forward(model, x):
    ctx = save_on_cpu(pin_memory=True)
    ctx.__enter__()
    out = model(x)
    ctx.__exit__(None, None, None)
    return out
""",
            expected="""
from torch.autograd.graph import save_on_cpu

def offloaded_forward(model, x):
    with save_on_cpu(pin_memory=True):
        out = model(x)
    return out
""",
            line=4,
            message="not in `finally`",
        ),
        # Entered by hand and never exited: the hooks stay for the thread.
        Invalid(
            """
import torch

class Quantized:
    def enable_compressed_activations(self):
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
""",
            expected=None,
            line=5,
            message="never followed by",
        ),
        # `__enter__()` on a temporary: nothing can exit it.
        Invalid(
            """
import torch.autograd.graph as G

def forbid_saving(module):
    G.disable_saved_tensors_hooks("saving is not supported under this wrapper").__enter__()
    return module
""",
            expected=None,
            line=4,
            message="can never be exited",
        ),
        # Created and never entered: the offloading silently does nothing.
        Invalid(
            """
from torch.autograd.graph import save_on_cpu

def train_step(model, batch, optimizer):
    offload = save_on_cpu()
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
""",
            expected=None,
            line=4,
            message="never used as a context manager",
        ),
    ]


def _exited_by_own_exit(enter: CallSite, exits: list[CallSite]) -> bool:
    """Entered in a class's ``__enter__`` and exited in the same class's ``__exit__``."""
    return enter.site.function_name == "__enter__" and any(
        x.site.function_name == "__exit__" and x.site.class_name == enter.site.class_name for x in exits
    )
