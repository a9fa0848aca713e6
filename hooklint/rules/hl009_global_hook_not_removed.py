"""HL009 global-hook-not-removed."""

from __future__ import annotations

from collections.abc import Iterable

from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.guards import if_tests_around, under_main_guard
from hooklint.analysis.handles import handle_model
from hooklint.analysis.lifetime import (
    container_of,
    registration_statement_alone,
    stored_in,
    word_count,
)
from hooklint.analysis.module_kinds import base_codes
from hooklint.analysis.vocabulary import INSTALLER_PREFIXES, PLAIN_BASES, runs_once
from hooklint.fixes.lifetime import with_over_rest_of_block
from hooklint.rules.base import Finding, Invalid, Rule, RuleContext, Valid


class GlobalHookNotRemoved(Rule):
    """A process-wide module, optimizer or compiler hook is never removed.

    ## What it does
    Finds `torch.nn.modules.module.register_module_*` hooks (forward, backward,
    and the buffer/module/parameter registration hooks) and
    `torch.optim.optimizer.register_optimizer_step_pre_hook`/`_post_hook`, and
    `torch._dynamo.convert_frame.register_bytecode_hook` (it runs on every frame
    dynamo compiles), import aliases included, whose handle is discarded, is kept but never removed anywhere
    in the file, or that are registered at module import time.
    Not flagged: a registration under `with` or an `ExitStack`, a handle returned to
    the caller or removed anywhere in the file (`__exit__`, a `stop()` method), a
    handle kept on `self` in a subclass of an imported class (the base class's
    `__exit__` may remove it), registrations under
    `if __name__ == "__main__":` or behind an environment-variable opt-in, and
    registrations in a function that runs once per process (`@functools.cache`,
    `@lru_cache`, a decorator named `call_once`, `run_once`...): an installer
    whose hook is meant to last, which never piles up.

    ## Why is this bad?
    A global hook fires for every module (or optimizer) of every model in the
    process, long after the code that installed it is done: it keeps capturing,
    printing or timing, and whatever its closure holds stays alive. Any global
    forward or backward hook also turns off the fast path of `Module.__call__` for
    every module, and some fused kernels check for hooks. A bytecode hook registered
    with an object's bound method per instance keeps every instance alive, and each
    one runs on every compilation. The PyTorch docs call
    these hooks "only intended for debugging/profiling"; a registration at import
    time installs one for everyone who imports the module.

    ## Example
    ```python
    from torch.nn.modules.module import register_module_forward_hook

    def profile(model, batch):
        register_module_forward_hook(log_shapes)
        model(batch)
    ```

    ## Use instead
    ```python
    def profile(model, batch):
        with register_module_forward_hook(log_shapes):
            model(batch)
    ```

    ## Fix safety
    Safe, and only offered when the hook's lifetime is visibly one function: the
    handle is dropped (or bound to a name used nowhere else) in a function that is
    not an installer (`install*`, `enable*`, `setup*`, `__enter__`, ...), and
    statements follow the registration in its block; those statements go into
    `with register_module_*(...):`. No fix for import-time registrations or
    handles kept on objects.

    ## Precision on real code
    Development set (29 released libraries, `python ../shared/accuracy/score.py`)
    and torch 2.13's own sources (`hooklint check --select HL009
    <site-packages>/torch`): no finding, so precision is not measured there. The
    rule is stable because its shape is exact: a process-wide hook whose handle
    nothing in the file removes.
    """

    code = "HL009"
    name = "global-hook-not-removed"
    fix_applicability = "safe"
    prefilter = ("register_module_", "register_optimizer_step_", "register_bytecode_hook")

    def check(self, facts: ModuleFacts, context: RuleContext) -> Iterable[Finding]:
        for registration in facts.registrations:
            if not registration.api.is_global:
                continue
            finding = self._check(facts, registration)
            if finding is not None:
                yield finding

    def _check(self, facts: ModuleFacts, registration: Registration) -> Finding | None:
        use = registration.handle
        role = use.final.role
        if role in ("with", "exit_stack"):
            return None
        site = registration.site
        api = registration.api.name
        if site.is_module_level:
            if under_main_guard(site) or _opted_in_by_environment(facts, site) or site.class_def is not None:
                return None
            if _removed_in_finally(facts, registration):
                return None
            message = (
                f"`{api}` runs at import time: importing this file installs the hook process-wide, for good"
            )
            return Finding(node=registration.call, message=message)
        if role in ("returned", "yielded", "argument", "other"):
            return None  # the caller owns the handle
        function = facts.function_for(site.function) if site.function is not None else None
        if function is not None and runs_once(function.decorators):
            return None  # an installer that runs once per process: the hook is meant to last
        if role == "discarded":
            reason = "its handle is discarded"
        else:
            model = handle_model(facts)
            flow = model.acquisition_of(registration).flow
            if flow.escapes is not None or flow.scoped:
                return None  # returned or passed on through a name: the caller owns it
            if model.removals_of(flow.stores, window=flow.window):
                return None  # removed somewhere (HL004 checks that a same-function removal is exception-safe)
            if _removed_by_attribute(facts, registration):
                return None
            if _may_be_removed_by_base_class(facts, registration):
                return None
            reason = "its handle is never removed"
        message = f"process-wide hook `{api}` is never removed: {reason}"
        edits = self._fix(facts, registration)
        return Finding(
            node=registration.call,
            message=message,
            fix_edits=edits,
            fix_message=f"Remove the hook at the end of the block (`with {api}(...):`)" if edits else "",
        )

    def _fix(self, facts: ModuleFacts, registration: Registration) -> list:
        function = registration.site.function
        name = registration.site.function_name
        if function is None or name.lstrip("_").startswith(INSTALLER_PREFIXES):  # type: ignore[union-attr]
            return []
        if not registration_statement_alone(registration):
            return []
        use = registration.handle
        if use.role == "bound":
            target = use.targets[0]
            if not target.isidentifier() or word_count(facts.code(function), target) != 1:
                return []
        elif use.role != "discarded":
            return []
        return with_over_rest_of_block(facts, registration)

    VALID = [
        # Cached: the installer runs once per process, and its hook is meant to stay.
        Valid(
            """
import functools
import warnings

from torch.optim.optimizer import register_optimizer_step_pre_hook


def _warn_on_sparse(optimizer, args, kwargs):
    if any(p.is_sparse for group in optimizer.param_groups for p in group["params"]):
        warnings.warn("sparse parameters are not supported")


@functools.cache
def enable_checks():
    register_optimizer_step_pre_hook(_warn_on_sparse)
    return True
"""
        ),
        # A profiler context object: registered in __enter__, removed in __exit__.
        Valid(
            """
from torch.nn.modules.module import register_module_forward_hook

class ShapeProfiler:
    def __enter__(self):
        self._handle = register_module_forward_hook(self._record)
        return self

    def __exit__(self, *exc):
        self._handle.remove()
"""
        ),
        # The compiler hook lives as long as its object: `close()` removes it.
        Valid(
            """
from torch._dynamo.convert_frame import register_bytecode_hook


class BytecodeRecorder:
    def __init__(self):
        self.codes = []
        self._handle = register_bytecode_hook(self._record)

    def _record(self, old_code, new_code):
        self.codes.append((old_code.co_name, new_code))

    def close(self):
        self._handle.remove()
"""
        ),
        # Scoped with `with` and try/finally, through an import alias.
        Valid(
            """
import torch.nn.modules.module as M
from torch.optim.optimizer import register_optimizer_step_post_hook as on_step

def count_calls(model, batch, counts):
    with M.register_module_forward_pre_hook(lambda m, a: counts.update([type(m).__name__])):
        model(batch)

def train_with_logging(optimizer, step_fn):
    handle = on_step(lambda opt, args, kwargs: print("stepped"))
    try:
        step_fn()
    finally:
        handle.remove()
"""
        ),
        # The handle is returned: the caller owns it.  A script's __main__ block.
        Valid(
            """
from torch.nn.modules.module import register_module_full_backward_hook

def install_grad_logger(log):
    return register_module_full_backward_hook(lambda m, gi, go: log.append(type(m).__name__))

if __name__ == "__main__":
    register_module_full_backward_hook(print)
"""
        ),
        # Handles kept in a list removed by a method of the same tool.
        Valid(
            """
import torch

class Tracer:
    def start(self):
        self.handles = [
            torch.nn.modules.module.register_module_forward_pre_hook(self.enter),
            torch.nn.modules.module.register_module_forward_hook(self.leave),
        ]

    def stop(self):
        for h in self.handles:
            h.remove()
"""
        ),
    ]
    INVALID = [
        # The same installer without the cache: every call adds another process-wide hook.
        Invalid(
            """
import functools
import warnings

from torch.optim.optimizer import register_optimizer_step_pre_hook


def _warn_on_sparse(optimizer, args, kwargs):
    if any(p.is_sparse for group in optimizer.param_groups for p in group["params"]):
        warnings.warn("sparse parameters are not supported")


def enable_checks():
    register_optimizer_step_pre_hook(_warn_on_sparse)
    return True
""",
            line=13,
            message="process-wide hook `register_optimizer_step_pre_hook` is never removed",
        ),
        # Bindings are per scope: `probe` removes its own `handle`, not the one `install` keeps.
        Invalid(
            """
from torch.nn.modules.module import register_module_forward_hook

def install(fn):
    handle = register_module_forward_hook(fn)

def probe(model, x, fn):
    handle = register_module_forward_hook(fn)
    try:
        model(x)
    finally:
        handle.remove()
""",
            line=4,
            message="its handle is never removed",
        ),
        # A debugging helper that leaves the hook installed.
        Invalid(
            """
from torch.nn.modules.module import register_module_forward_hook

def print_shapes(model, example):
    register_module_forward_hook(lambda m, i, o: print(type(m).__name__, tuple(o.shape)))
    model(example)
""",
            expected="""
from torch.nn.modules.module import register_module_forward_hook

def print_shapes(model, example):
    with register_module_forward_hook(lambda m, i, o: print(type(m).__name__, tuple(o.shape))):
        model(example)
""",
            line=4,
            message="handle is discarded",
        ),
        # Registered at import time, through a module alias.
        Invalid(
            """
import torch.nn.modules.module as module_hooks

def _nan_check(module, args, output):
    if output.isnan().any():
        raise RuntimeError(f"NaN in {type(module).__name__}")

_NAN_HOOK = module_hooks.register_module_forward_hook(_nan_check)
""",
            expected=None,
            line=7,
            message="import time",
        ),
        # A global optimizer hook whose handle is kept but never removed.
        Invalid(
            """
from torch.optim.optimizer import register_optimizer_step_pre_hook

class GradMonitor:
    def enable(self):
        self.handle = register_optimizer_step_pre_hook(self._check_grads)

    def _check_grads(self, optimizer, args, kwargs):
        for group in optimizer.param_groups:
            self.norms.append(sum(p.grad.norm() for p in group["params"] if p.grad is not None))
""",
            expected=None,
            line=5,
            message="never removed",
        ),
        # Each wrapper object puts a compiler hook, its own bound method, on the whole
        # process: every wrapper ever built stays alive and runs on every compilation.
        Invalid(
            """
import torch


class CompiledDispatcher:
    def __init__(self, fn):
        self.fn = fn
        self.codes = []
        torch._dynamo.convert_frame.register_bytecode_hook(self._on_bytecode)

    def _on_bytecode(self, old_code, new_code):
        if old_code is self.fn.__code__:
            self.codes.append(new_code)
""",
            expected=None,
            line=8,
            message="`register_bytecode_hook` is never removed: its handle is discarded",
        ),
        # A timing run in a function: the handle is a local used nowhere else.
        Invalid(
            """
import time
from torch.nn.modules.module import register_module_forward_pre_hook

def time_modules(model, batch, started):
    handle = register_module_forward_pre_hook(lambda m, a: started.setdefault(id(m), time.perf_counter()))
    out = model(batch)
    return out
""",
            expected="""
import time
from torch.nn.modules.module import register_module_forward_pre_hook

def time_modules(model, batch, started):
    with register_module_forward_pre_hook(lambda m, a: started.setdefault(id(m), time.perf_counter())):
        out = model(batch)
        return out
""",
            line=5,
        ),
    ]


def _removed_in_finally(facts: ModuleFacts, registration: Registration) -> bool:
    model = handle_model(facts)
    flow = model.acquisition_of(registration).flow
    return any(r.site.in_finally for r in model.removals_of(flow.stores, window=flow.window))


def _removed_by_attribute(facts: ModuleFacts, registration: Registration) -> bool:
    """``self._hooks[k] = reg(...)`` ... ``for h in self._hooks.values(): h.remove()``
    in another method: matched by the attribute's name."""
    for target in stored_in(facts, registration):
        target = container_of(target)
        if "." in target:
            attribute = target.rsplit(".", 1)[-1]
            if any(attribute in key for key in facts.removals):
                return True
    return False


def _opted_in_by_environment(facts: ModuleFacts, site) -> bool:
    """``if os.environ.get("PROFILE_STEPS"): register_optimizer_step_post_hook(...)``:
    a process-wide hook the user asked for."""
    for test in if_tests_around(site):
        code = facts.code(test)
        if "environ" in code or "getenv" in code:
            return True
    return False


def _may_be_removed_by_base_class(facts: ModuleFacts, registration: Registration) -> bool:
    """``self._handle = ...`` in a subclass of a class from elsewhere (a tracker base
    class whose ``__exit__`` removes ``self._handle``)."""
    class_def = registration.site.class_def
    if class_def is None:
        return False
    if not any(t.startswith("self.") for t in stored_in(facts, registration)):
        return False
    for name in base_codes(facts, class_def):
        if name not in PLAIN_BASES and name.split("[", 1)[0] not in PLAIN_BASES and name not in facts.classes:
            return True
    return False
