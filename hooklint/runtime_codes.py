"""The codes of runtime findings (``HLR...``), for ``hooklint explain`` and the reports.

Runtime checks (:mod:`hooklint.runtime.audit`, the pytest plugin, the capture
helpers) report what they *observe* while code runs; the static rules (``HL...``)
report what a file *says*. The two code spaces never share a number: at runtime
``HLR001`` means "this hook leaked", whatever the code looked like. Each runtime
code names the static rules that would have caught the same bug before it ran.

This module never imports torch: the linter side reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RUNTIME_CODES", "RuntimeCode", "find_runtime_code"]


@dataclass(frozen=True)
class RuntimeCode:
    code: str
    name: str
    summary: str
    static_rules: tuple[str, ...]
    documentation: str


_CODES = (
    RuntimeCode(
        "HLR001",
        "leaked-hook",
        "A module, tensor, grad_fn, optimizer or state-dict hook is still registered on a live object, and nothing can remove it.",
        ("HL002", "HL003", "HL004"),
        """\
## What it reports
A hook registered while the audit ran is still registered when the audit checks,
its target (module, tensor, autograd node, optimizer) is still alive, and
either

- no live object can reach its handle any more: the handle was dropped, or is
  held only by garbage that the hook itself keeps alive (a tracker object whose
  bound method is the hook, a closure that holds its own handle), or
- the code asked for it to be checked (`audit.expect_removed(handle)`), or
- the audit runs in strict mode (`HookAudit(strict=True)`,
  `pytest --hooklint-audit-strict`): then a hook whose handle is still held by a
  live object is reported too.

A hook whose handle a live object still holds (a wrapper keeping
`self._hooks` and removing them in `remove_hooks()`) is not reported by
default: its owner can still remove it.

## Why is this bad?
The hook runs on every later call of the target, for the rest of the target's
life, and keeps everything its closure references alive. A hook that stores
what it receives grows without bound.

## Where it is reported
At the registering call outside torch and hooklint. When that call is in a
library, the report also names the innermost frame in the test file and the
test, and sites that registered several leaked hooks are reported once with a
count.

## Static rules that catch it
HL002 (capture hook never removed), HL003 (hook registered on every call),
HL004 (removal skipped when code in between raises).""",
    ),
    RuntimeCode(
        "HLR002",
        "parametrize-cache-left-on",
        "`torch.nn.utils.parametrize._cache_enabled` is non-zero when the audit checks, and changed while it ran.",
        ("HL001", "HL005", "HL013"),
        """\
## What it reports
The global parametrization-cache counter is non-zero at the check and differs
from its value when the audit started: a pre-hook incremented it and its
post-hook never ran (forward raised, or non-reentrant checkpointing stopped a
recomputation early), so every parametrized tensor stays cached and pinned.
Reported where the audit started (for the pytest plugin: the test).

## Why is this bad?
The cache is never emptied: dequantized weights stay in memory, and later
forwards read stale values after the parameters change.

## Use instead
`hooklint.runtime.parametrize.enable_dequant_cache(module)`.

## Static rules that catch it
HL001 (post-hook without `always_call=True`), HL005 (an `always_call` release
that breaks when its pre-hook never ran), HL013 (stale by-name import of
`_cache_enabled`).""",
    ),
    RuntimeCode(
        "HLR003",
        "leaked-global-hook",
        "A process-wide module or optimizer hook registered while the audit ran is still installed.",
        ("HL009",),
        """\
## What it reports
A global hook (`register_module_forward_hook`, `register_optimizer_step_pre_hook`,
...) registered during the audit is still installed and its handle was dropped
(strict mode: or is still held). Hooks registered through names imported before
the audit started are found by difference and reported at the hook's
definition.

## Why is this bad?
It runs for every module or optimizer of the process, in every later test.

## Static rules that catch it
HL009 (global hook never removed).""",
    ),
    RuntimeCode(
        "HLR004",
        "saved-tensors-hooks-left-active",
        "A `saved_tensors_hooks` / `save_on_cpu` context was entered and never exited.",
        ("HL011",),
        """\
## What it reports
`__enter__` of a `torch.autograd.graph.saved_tensors_hooks` (or `save_on_cpu`)
ran during the audit and its `__exit__` did not.

## Why is this bad?
Every later autograd save in the thread goes through its pack hook.

## Static rules that catch it
HL011 (saved_tensors_hooks entered by hand and not reliably exited).""",
    ),
    RuntimeCode(
        "HLR005",
        "capture-on-compiled-module",
        "A capture helper hooked a module that a `torch.compile`d model has already run: the graph was traced without the hooks.",
        ("HL010",),
        """\
## What it reports
`capture_inputs` / `capture_outputs` was given a module whose compiled wrapper
(`torch.compile(model)`, or `model.compile()`) has already run. Dynamo traced
the forward without the capture hooks, so the captures record nothing until it
recompiles. A warning by default (`on_compiled="raise"` raises instead).

## Use instead
Capture on the eager module (`compiled._orig_mod`), call
`torch._dynamo.reset()` before capturing, or register the hooks before the first
compiled call.

## Static rules that catch it
HL010 (hook registered after compile).""",
    ),
)

RUNTIME_CODES = {code.code: code for code in _CODES}


def find_runtime_code(code_or_name: str) -> RuntimeCode | None:
    """A runtime code by code (``HLR001``, any case) or name (``leaked-hook``)."""
    wanted = code_or_name.strip()
    for code in _CODES:
        if code.code == wanted.upper() or code.name == wanted.lower():
            return code
    return None


def explanation(code: RuntimeCode) -> str:
    """The text ``hooklint explain`` prints for a runtime code."""
    rules = ", ".join(code.static_rules)
    return (
        f"# {code.code} {code.name}\n\n(runtime finding, from hooklint.runtime; "
        f"static rules: {rules})\n\n{code.summary}\n\n{code.documentation}"
    )
