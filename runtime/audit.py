"""Runtime hook-leak checks: :class:`HookAudit`.

While an audit is active, the few torch functions that register hooks are
wrapped so that each registration is recorded with the source location of the
user's call (frames inside torch and hooklint are skipped). Nothing on the
forward or backward path is traced. When the audit stops it reports, in the
``path:line:col: CODE message`` form of ``hooklint check``:

* ``HL002`` a module, tensor or optimizer hook still registered on a live object;
* ``HL009`` a global module or optimizer hook still registered;
* ``HL011`` ``saved_tensors_hooks`` / ``save_on_cpu`` entered but never exited;
* ``HL001`` ``torch.nn.utils.parametrize._cache_enabled`` left non-zero (it changed
  during the audit), which pins the parametrization cache.
"""

from __future__ import annotations

import functools
import gc
import importlib
import itertools
import os
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

from hooklint.runtime import require_torch

torch = require_torch()
P = torch.nn.utils.parametrize
_module_globals = importlib.import_module("torch.nn.modules.module")
_optimizer_globals = importlib.import_module("torch.optim.optimizer")

__all__ = ["Finding", "HookAudit", "HookLeakError", "SourceLocation"]

LEAKED_HOOK = "HL002"
LEAKED_GLOBAL_HOOK = "HL009"
ACTIVE_SAVED_TENSORS_HOOKS = "HL011"
PARAMETRIZE_CACHE_ENABLED = "HL001"


@dataclass(frozen=True)
class _EntryPoint:
    """A registration function to wrap: ``namespace.attribute``."""

    namespace: object
    attribute: str
    kind: str
    code: str

    @property
    def is_global(self) -> bool:
        return self.code == LEAKED_GLOBAL_HOOK


def _entry(namespace, attribute, kind, code=LEAKED_HOOK) -> _EntryPoint:
    return _EntryPoint(namespace, attribute, kind, code)


_ENTRY_POINTS = (
    _entry(torch.nn.Module, "register_forward_pre_hook", "forward pre-hook"),
    _entry(torch.nn.Module, "register_forward_hook", "forward hook"),
    _entry(
        torch.nn.Module, "register_full_backward_pre_hook", "full backward pre-hook"
    ),
    _entry(torch.nn.Module, "register_full_backward_hook", "full backward hook"),
    _entry(torch.nn.Module, "register_backward_hook", "backward hook"),
    _entry(torch.Tensor, "register_hook", "tensor hook"),
    _entry(
        torch.Tensor, "register_post_accumulate_grad_hook", "post-accumulate-grad hook"
    ),
    _entry(torch.optim.Optimizer, "register_step_pre_hook", "optimizer step pre-hook"),
    _entry(
        torch.optim.Optimizer, "register_step_post_hook", "optimizer step post-hook"
    ),
    *(
        _entry(
            _module_globals,
            f"register_module_{name}",
            f"global module {name.replace('_', ' ')}",
            LEAKED_GLOBAL_HOOK,
        )
        for name in (
            "forward_pre_hook",
            "forward_hook",
            "full_backward_pre_hook",
            "full_backward_hook",
            "backward_hook",
        )
    ),
    _entry(
        _optimizer_globals,
        "register_optimizer_step_pre_hook",
        "global optimizer step pre-hook",
        LEAKED_GLOBAL_HOOK,
    ),
    _entry(
        _optimizer_globals,
        "register_optimizer_step_post_hook",
        "global optimizer step post-hook",
        LEAKED_GLOBAL_HOOK,
    ),
)

# Global hook dicts, checked by difference so that registrations through names
# imported before the audit started are still found.
_GLOBAL_HOOK_DICTS = {
    "global module forward pre-hook": _module_globals._global_forward_pre_hooks,
    "global module forward hook": _module_globals._global_forward_hooks,
    "global module backward pre-hook": _module_globals._global_backward_pre_hooks,
    "global module backward hook": _module_globals._global_backward_hooks,
    "global optimizer step pre-hook": _optimizer_globals._global_optimizer_pre_hooks,
    "global optimizer step post-hook": _optimizer_globals._global_optimizer_post_hooks,
}

_INTERNAL_DIRS = tuple(
    str(Path(path).resolve().parent) + os.sep
    for path in (
        torch.__file__,
        sys.modules["hooklint.runtime"].__file__,
        sys.modules["hooklint"].__file__,
    )
)
_SAVED_TENSORS_HOOKS = torch.autograd.graph.saved_tensors_hooks


@dataclass(frozen=True)
class SourceLocation:
    """Where user code made a call; ``column`` is 1-based."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        path = (
            os.path.relpath(self.path)
            if self.path.startswith(os.getcwd() + os.sep)
            else self.path
        )
        return f"{path}:{self.line}:{self.column}"


@dataclass(frozen=True)
class _CallSite:
    """A code object and instruction offset; resolved to a :class:`SourceLocation` only when reported."""

    code: CodeType
    instruction: int
    line: int

    def location(self) -> SourceLocation:
        column = 1
        positions = getattr(self.code, "co_positions", None)  # Python >= 3.11
        if positions is not None:
            position = next(
                itertools.islice(positions(), self.instruction // 2, None), None
            )
            if position is not None and position[2] is not None:
                column = position[2] + 1
        return SourceLocation(self.code.co_filename, self.line, column)


def _user_call_site() -> _CallSite | None:
    """The innermost calling frame outside torch and hooklint."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL_DIRS):
        frame = frame.f_back
    if frame is None:
        return None
    return _CallSite(frame.f_code, frame.f_lasti, frame.f_lineno)


def _definition_site(hook) -> SourceLocation:
    code = getattr(hook, "__code__", None) or getattr(
        getattr(hook, "func", None), "__code__", None
    )
    if code is None:
        return SourceLocation("<unknown>", 0, 0)
    return SourceLocation(code.co_filename, code.co_firstlineno, 1)


@dataclass(frozen=True)
class Finding:
    """One leak, printable as ``path:line:col: CODE message``."""

    location: SourceLocation
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.code} {self.message}"


class HookLeakError(AssertionError):
    """Raised by :meth:`HookAudit.assert_no_hook_leaks`; the message is the report."""


@dataclass(frozen=True)
class _Registration:
    entry: _EntryPoint
    owner: weakref.ref | None
    handle: object
    site: _CallSite | None

    def is_still_registered(self) -> bool:
        if self.owner is not None and self.owner() is None:
            return False
        hooks = self.handle.hooks_dict_ref()
        return hooks is not None and self.handle.id in hooks

    def finding(self) -> Finding:
        location = (
            self.site.location() if self.site else SourceLocation("<unknown>", 0, 0)
        )
        if self.entry.is_global:
            message = f"{self.entry.kind} registered here is still installed: it runs for every model in the process"
        else:
            owner = type(self.owner()).__name__
            message = f"{self.entry.kind} registered here is still registered on a live {owner} (handle never removed)"
        return Finding(location, self.entry.code, message)


_active_audits: list[HookAudit] = []
_originals: dict[tuple[object, str], object] = {}


def _wrap_registration(entry: _EntryPoint, register):
    @functools.wraps(register)
    def recording_register(*args, **kwargs):
        handle = register(*args, **kwargs)
        owner = None if entry.is_global else weakref.ref(args[0])
        registration = _Registration(entry, owner, handle, _user_call_site())
        for audit in _active_audits:
            audit._record(registration)
        return handle

    return recording_register


def _wrap_saved_tensors_enter(enter):
    @functools.wraps(enter)
    def recording_enter(self):
        result = enter(self)
        site = _user_call_site()
        for audit in _active_audits:
            audit._open_saved_tensors_hooks[id(self)] = (self, site)
        return result

    return recording_enter


def _wrap_saved_tensors_exit(exit_):
    @functools.wraps(exit_)
    def recording_exit(self, *args):
        for audit in _active_audits:
            audit._open_saved_tensors_hooks.pop(id(self), None)
        return exit_(self, *args)

    return recording_exit


def _install_recorders() -> None:
    for entry in _ENTRY_POINTS:
        register = getattr(entry.namespace, entry.attribute)
        _originals[entry.namespace, entry.attribute] = register
        setattr(entry.namespace, entry.attribute, _wrap_registration(entry, register))
    for name, wrap in (
        ("__enter__", _wrap_saved_tensors_enter),
        ("__exit__", _wrap_saved_tensors_exit),
    ):
        method = getattr(_SAVED_TENSORS_HOOKS, name)
        _originals[_SAVED_TENSORS_HOOKS, name] = method
        setattr(_SAVED_TENSORS_HOOKS, name, wrap(method))


def _uninstall_recorders() -> None:
    for (namespace, attribute), original in _originals.items():
        setattr(namespace, attribute, original)
    _originals.clear()


class HookAudit:
    """Record hook registrations made while active and report those that leak.

    ::

        with HookAudit() as audit:
            run_one_training_step()
        audit.assert_no_hook_leaks()   # raises HookLeakError with the report

    An object counts as alive if anything still references it when the audit
    stops, including local variables of the auditing function; cyclic garbage is
    collected first. Audits may nest. ``origin`` is the location reported for
    ``HL001`` (default: where the audit was started).
    """

    _PRUNE_FLOOR = 1024

    def __init__(self, origin: SourceLocation | None = None) -> None:
        self.origin = origin
        self.findings: list[Finding] = []
        self._registrations: list[_Registration] = []
        self._prune_at = self._PRUNE_FLOOR
        self._open_saved_tensors_hooks: dict[int, tuple[object, _CallSite | None]] = {}
        self._global_hook_ids_at_start: dict[str, set[int]] = {}
        self._cache_enabled_at_start = 0

    def start(self) -> HookAudit:
        if self.origin is None:
            site = _user_call_site()
            self.origin = site.location() if site else SourceLocation("<unknown>", 0, 0)
        self._cache_enabled_at_start = P._cache_enabled
        self._global_hook_ids_at_start = {
            kind: set(hooks) for kind, hooks in _GLOBAL_HOOK_DICTS.items()
        }
        if not _active_audits:
            _install_recorders()
        _active_audits.append(self)
        return self

    def stop(self) -> list[Finding]:
        """Stop recording; compute and return :attr:`findings`."""
        _active_audits.remove(self)
        if not _active_audits:
            _uninstall_recorders()
        if self._leaked_registrations():
            gc.collect()  # objects kept alive only by reference cycles are not leaks
        self.findings = [
            *(registration.finding() for registration in self._leaked_registrations()),
            *self._unrecorded_global_hooks(),
            *self._saved_tensors_hooks_findings(),
            *self._cache_findings(),
        ]
        return self.findings

    __enter__ = start

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def report(self) -> str:
        """One ``path:line:col: CODE message`` line per finding."""
        return "\n".join(map(str, self.findings))

    def assert_no_hook_leaks(self) -> None:
        if self.findings:
            raise HookLeakError(f"{len(self.findings)} hook leak(s):\n{self.report()}")

    def _record(self, registration: _Registration) -> None:
        self._registrations.append(registration)
        if len(self._registrations) >= self._prune_at:
            self._registrations = self._leaked_registrations()
            self._prune_at = max(self._PRUNE_FLOOR, 2 * len(self._registrations))

    def _leaked_registrations(self) -> list[_Registration]:
        return [r for r in self._registrations if r.is_still_registered()]

    def _unrecorded_global_hooks(self) -> list[Finding]:
        recorded = {
            (id(r.handle.hooks_dict_ref()), r.handle.id)
            for r in self._registrations
            if r.entry.is_global
        }
        findings = []
        for kind, hooks in _GLOBAL_HOOK_DICTS.items():
            for hook_id in hooks.keys() - self._global_hook_ids_at_start[kind]:
                if (id(hooks), hook_id) not in recorded:
                    message = f"{kind} defined here is still installed (registered through a name imported before the audit)"
                    findings.append(
                        Finding(
                            _definition_site(hooks[hook_id]),
                            LEAKED_GLOBAL_HOOK,
                            message,
                        )
                    )
        return findings

    def _saved_tensors_hooks_findings(self) -> list[Finding]:
        return [
            Finding(
                site.location() if site else SourceLocation("<unknown>", 0, 0),
                ACTIVE_SAVED_TENSORS_HOOKS,
                f"{type(hooks).__name__} entered here is still active: every later autograd save goes through it",
            )
            for hooks, site in self._open_saved_tensors_hooks.values()
        ]

    def _cache_findings(self) -> list[Finding]:
        value = P._cache_enabled
        if value == 0 or value == self._cache_enabled_at_start:
            return []
        message = (
            f"torch.nn.utils.parametrize._cache_enabled is {value} at exit (was {self._cache_enabled_at_start}): "
            "a cache-enabling pre-hook was not undone, so parametrized tensors stay cached (use enable_dequant_cache)"
        )
        return [Finding(self.origin, PARAMETRIZE_CACHE_ENABLED, message)]
