"""Runtime hook-leak checks: :class:`HookAudit`.

While an audit is active, the few torch functions that register hooks are
wrapped so that each registration is recorded with the source location of the
user's call (frames inside torch and hooklint are skipped). Nothing on the
forward or backward path is traced, and registrations torch makes for itself
(its frames call the registration function directly) are not recorded. When
the audit checks (at :meth:`HookAudit.stop`, or :meth:`HookAudit.check` while
it runs) it reports, in the ``path:line:col: CODE message`` form of
``hooklint check`` (codes in :mod:`hooklint.runtime_codes`, ``hooklint explain
HLR001``):

* ``HLR001`` leaked-hook: a module, tensor, grad_fn, optimizer or state-dict
  hook still registered on a live target whose handle no live object can reach
  (dropped, or held only through the hooks themselves); in strict mode also a
  hook whose handle is still held; always a hook passed to
  :meth:`HookAudit.expect_removed`;
* ``HLR002`` parametrize-cache-left-on: ``parametrize._cache_enabled`` left
  non-zero (it changed during the audit), which pins the parametrization cache;
* ``HLR003`` leaked-global-hook: a global module or optimizer hook still installed;
* ``HLR004`` saved-tensors-hooks-left-active: ``saved_tensors_hooks`` /
  ``save_on_cpu`` entered and never exited.
"""

from __future__ import annotations

import functools
import gc
import importlib
import itertools
import os
import sys
import threading
import types
import weakref
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType

from hooklint.runtime import require_torch

torch = require_torch()
P = torch.nn.utils.parametrize
_module_globals = importlib.import_module("torch.nn.modules.module")
_optimizer_globals = importlib.import_module("torch.optim.optimizer")
_graph = importlib.import_module("torch.autograd.graph")

__all__ = ["Finding", "HookAudit", "HookLeakError", "SourceLocation"]

LEAKED_HOOK = "HLR001"
PARAMETRIZE_CACHE_LEFT_ON = "HLR002"
LEAKED_GLOBAL_HOOK = "HLR003"
SAVED_TENSORS_HOOKS_LEFT_ACTIVE = "HLR004"

# How the target of a registration is found from the wrapped call.
_FIRST_ARGUMENT = "first argument"  # module, tensor, optimizer: weakly referenced
_HOOKS_DICT = "hooks dict"  # autograd nodes cannot be weakly referenced: the dict stands in
_GLOBAL = "global"


@dataclass(frozen=True)
class _EntryPoint:
    """A registration function to wrap: ``namespace.attribute``."""

    namespace: object
    attribute: str
    kind: str
    code: str = LEAKED_HOOK
    target: str = _FIRST_ARGUMENT

    @property
    def is_global(self) -> bool:
        return self.target == _GLOBAL


def _entries(owner: type, kinds: dict[str, str]) -> list[_EntryPoint]:
    """The entry points of ``kinds`` (method name -> what it registers) that ``owner``
    has: the state-dict names vary across torch versions."""
    return [_EntryPoint(owner, name, kind) for name, kind in kinds.items() if hasattr(owner, name)]


_MODULE_KINDS = {
    "register_forward_pre_hook": "forward pre-hook",
    "register_forward_hook": "forward hook",
    "register_full_backward_pre_hook": "full backward pre-hook",
    "register_full_backward_hook": "full backward hook",
    "register_backward_hook": "backward hook",
    "_register_state_dict_hook": "state-dict hook",
    "register_state_dict_pre_hook": "state-dict pre-hook",
    "register_state_dict_post_hook": "state-dict hook",
    "_register_load_state_dict_pre_hook": "load-state-dict pre-hook",
    "register_load_state_dict_pre_hook": "load-state-dict pre-hook",
    "register_load_state_dict_post_hook": "load-state-dict post-hook",
}
_OPTIMIZER_KINDS = {
    "register_step_pre_hook": "optimizer step pre-hook",
    "register_step_post_hook": "optimizer step post-hook",
    "register_state_dict_pre_hook": "optimizer state-dict pre-hook",
    "register_state_dict_post_hook": "optimizer state-dict hook",
    "register_load_state_dict_pre_hook": "optimizer load-state-dict pre-hook",
    "register_load_state_dict_post_hook": "optimizer load-state-dict post-hook",
}


_ENTRY_POINTS = (
    *_entries(torch.nn.Module, _MODULE_KINDS),
    _EntryPoint(torch.Tensor, "register_hook", "tensor hook"),
    _EntryPoint(torch.Tensor, "register_post_accumulate_grad_hook", "post-accumulate-grad hook"),
    # grad_fn.register_hook / register_prehook (C++ autograd nodes) create their
    # handle through this staticmethod, looked up on the class at every call.
    _EntryPoint(torch.autograd.Function, "_register_hook", "grad_fn hook", target=_HOOKS_DICT),
    *_entries(torch.optim.Optimizer, _OPTIMIZER_KINDS),
    *(
        _EntryPoint(
            _module_globals,
            f"register_module_{name}",
            f"global module {name.replace('_', ' ')}",
            LEAKED_GLOBAL_HOOK,
            _GLOBAL,
        )
        for name in (
            "forward_pre_hook",
            "forward_hook",
            "full_backward_pre_hook",
            "full_backward_hook",
            "backward_hook",
        )
        if hasattr(_module_globals, f"register_module_{name}")
    ),
    _EntryPoint(
        _optimizer_globals,
        "register_optimizer_step_pre_hook",
        "global optimizer step pre-hook",
        LEAKED_GLOBAL_HOOK,
        _GLOBAL,
    ),
    _EntryPoint(
        _optimizer_globals,
        "register_optimizer_step_post_hook",
        "global optimizer step post-hook",
        LEAKED_GLOBAL_HOOK,
        _GLOBAL,
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

_TORCH_DIR = str(Path(torch.__file__).resolve().parent) + os.sep
_INTERNAL_DIRS = tuple(
    str(Path(path).resolve().parent) + os.sep
    for path in (
        torch.__file__,
        sys.modules["hooklint.runtime"].__file__,
        sys.modules["hooklint"].__file__,
    )
)
_SAVED_TENSORS_HOOKS = torch.autograd.graph.saved_tensors_hooks
# register_multi_grad_hook registers one tensor hook per tensor, from torch's own
# frames; those are recorded (as multi-grad hooks) although torch made the call.
_MULTI_GRAD_CODE = getattr(getattr(_graph, "register_multi_grad_hook", None), "__code__", None)


@dataclass(frozen=True)
class SourceLocation:
    """Where user code made a call; ``column`` is 1-based."""

    path: str
    line: int
    column: int

    def __str__(self) -> str:
        path = os.path.relpath(self.path) if self.path.startswith(os.getcwd() + os.sep) else self.path
        return f"{path}:{self.line}:{self.column}"


_UNKNOWN = SourceLocation("<unknown>", 0, 0)


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
            position = next(itertools.islice(positions(), self.instruction // 2, None), None)
            if position is not None and position[2] is not None:
                column = position[2] + 1
        return SourceLocation(self.code.co_filename, self.line, column)


def _site(frame) -> _CallSite:
    return _CallSite(frame.f_code, frame.f_lasti, frame.f_lineno)


def _user_frame(depth: int = 2):
    """The innermost calling frame outside torch and hooklint."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL_DIRS):
        frame = frame.f_back
    return frame


def _user_call_site() -> _CallSite | None:
    frame = _user_frame(3)
    return None if frame is None else _site(frame)


def _definition_site(hook) -> SourceLocation:
    code = getattr(hook, "__code__", None) or getattr(getattr(hook, "func", None), "__code__", None)
    if code is None:
        return _UNKNOWN
    return SourceLocation(code.co_filename, code.co_firstlineno, 1)


@dataclass(frozen=True)
class Finding:
    """One leak, printable as ``path:line:col: CODE message``.

    ``test`` names the test (pytest plugin), ``test_frame`` the innermost frame in
    a test file when the reported location is elsewhere (a library), ``count``
    how many registrations at this location the finding stands for.
    """

    location: SourceLocation
    code: str
    message: str
    test: str | None = None
    test_frame: SourceLocation | None = None
    count: int = 1

    def __str__(self) -> str:
        text = f"{self.location}: {self.code} {self.message}"
        if self.count > 1:
            text += f" ({self.count} registrations)"
        if self.test_frame is not None:
            text += f"; called from {self.test_frame}"
        if self.test is not None:
            text += f"; in test {self.test}"
        return text


class HookLeakError(AssertionError):
    """Raised by :meth:`HookAudit.assert_no_hook_leaks`; the message is the report."""


@dataclass(eq=False)
class _Registration:
    entry: _EntryPoint
    kind: str
    target: weakref.ref | None  # None: global, or only the hooks dict tells
    hooks: weakref.ref  # the dict the hook was inserted into
    hook_id: int
    handle: weakref.ref | None  # None: handle not weakly referenceable (treated as held)
    site: _CallSite | None
    test_site: _CallSite | None
    expected_removed: bool = False

    def is_still_registered(self) -> bool:
        if self.target is not None and self.target() is None:
            return False
        hooks = self.hooks()
        return hooks is not None and self.hook_id in hooks

    def handle_is_dropped(self) -> bool:
        return self.handle is not None and self.handle() is None

    def owner_name(self) -> str:
        if self.target is not None:
            return type(self.target()).__name__
        return "autograd node" if self.entry.target == _HOOKS_DICT else "process"


_active_audits: list[HookAudit] = []
_originals: dict[tuple[object, str], object] = {}
_MISSING = object()


def _caller_is_torch(frame) -> bool:
    """True when torch's own code made the registration (and not for a multi-grad hook)."""
    if frame is None or not frame.f_code.co_filename.startswith(_TORCH_DIR):
        return False
    for _ in range(3):  # register_multi_grad_hook -> generator expression -> register_hook
        if frame is None:
            break
        if frame.f_code is _MULTI_GRAD_CODE:
            return False
        frame = frame.f_back
    return True


def _registered_from_multi_grad(frame) -> bool:
    for _ in range(3):
        if frame is None:
            return False
        if frame.f_code is _MULTI_GRAD_CODE:
            return True
        frame = frame.f_back
    return False


@functools.lru_cache(maxsize=4096)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def _weak(obj) -> weakref.ref | None:
    try:
        return weakref.ref(obj)
    except TypeError:
        return None


def _wrap_registration(entry: _EntryPoint, register):
    @functools.wraps(register)
    def recording_register(*args, **kwargs):
        result = register(*args, **kwargs)
        if not _active_audits:
            return result
        caller = sys._getframe(1)
        if _caller_is_torch(caller):
            return result
        # Function._register_hook returns (hooks dict, handle)
        handle = result[1] if isinstance(result, tuple) else result
        hooks = handle.hooks_dict_ref()
        if hooks is None:
            return result
        kind = entry.kind
        if entry.kind == "tensor hook" and _registered_from_multi_grad(caller):
            kind = "multi-grad hook"
        registration = _Registration(
            entry,
            kind,
            _weak(args[0]) if entry.target == _FIRST_ARGUMENT else None,
            weakref.ref(hooks),
            handle.id,
            _weak(handle),
            _user_call_site(),
            None,
        )
        for audit in _active_audits:
            audit._record(registration)
        return result

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


def _install(namespace, attribute, wrap) -> None:
    raw = vars(namespace).get(attribute, _MISSING)
    _originals[namespace, attribute] = raw
    if isinstance(raw, staticmethod):
        setattr(namespace, attribute, staticmethod(wrap(raw.__func__)))
    else:
        setattr(namespace, attribute, wrap(getattr(namespace, attribute)))


def _install_recorders() -> None:
    for entry in _ENTRY_POINTS:
        _install(
            entry.namespace,
            entry.attribute,
            functools.partial(_wrap_registration, entry),
        )
    _install(_SAVED_TENSORS_HOOKS, "__enter__", _wrap_saved_tensors_enter)
    _install(_SAVED_TENSORS_HOOKS, "__exit__", _wrap_saved_tensors_exit)


def _uninstall_recorders() -> None:
    for (namespace, attribute), raw in _originals.items():
        if raw is _MISSING:  # it was inherited: uncover the base class's again
            delattr(namespace, attribute)
        else:
            setattr(namespace, attribute, raw)
    _originals.clear()


# --- Who holds a handle -----------------------------------------------------------

# Objects that are live by nature once cyclic garbage is collected: a running or
# suspended frame (generator, coroutine: a fixture that yields), a module, a class.
_ANCHOR_TYPES = (
    types.FrameType,
    types.ModuleType,
    type,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)
_WALK_LIMIT = 48


class _Reachability:
    """Is a handle reachable from live objects without passing through a hook dict?

    The walk goes up referrers (``gc.get_referrers``) from the handle, never up
    through the dicts that hold the recorded hooks (an object reachable only from
    a hook is kept alive by that hook alone), and stops at the first live anchor:
    an object referenced from outside every gc-tracked container (a local
    variable of a running function, a C extension), a frame, a generator, a
    module or a class. When it runs out of objects, the handle is held only
    through the hooks: garbage the hooks keep alive. A walk longer than the
    limit counts as live, so an unsure answer never reports a leak.
    Call after ``gc.collect()``, so that no cyclic garbage is left to be mistaken
    for a holder.
    """

    def __init__(self, hook_dicts: list) -> None:
        self.excluded = {id(d) for d in hook_dicts}
        self.live: list = []  # objects found live (kept alive while checking)
        self.live_ids: set[int] = set()

    def handle_is_held(self, handle_ref: weakref.ref) -> bool:
        # No closures or comprehensions here: they would turn `obj` into a cell,
        # one more referrer. Every strong reference this walk holds is counted.
        queue = [handle_ref()]
        if queue[0] is None:
            return False
        seen = {id(queue[0])}
        path: list = []
        visited = 0
        while queue:
            obj = queue.pop()
            visited += 1
            if visited > _WALK_LIMIT or id(obj) in self.live_ids or isinstance(obj, _ANCHOR_TYPES):
                self._mark_live(path, obj)
                return True
            references = sys.getrefcount(obj) - 2  # the argument and `obj`
            referrers = gc.get_referrers(obj)
            internal = 0
            parents = []
            for referrer in referrers:
                if referrer is queue or referrer is path or referrer is parents:
                    continue
                if isinstance(referrer, types.FrameType) and referrer.f_code.co_filename == __file__:
                    continue
                for referent in gc.get_referents(referrer):
                    if referent is obj:
                        internal += 1
                referent = None
                if id(referrer) not in self.excluded and id(referrer) not in seen:
                    parents.append(referrer)
            referrer = None
            del referrers
            if references > internal:  # referenced from outside the gc's view: live
                self._mark_live(path, obj)
                return True
            path.append(obj)
            for parent in parents:
                seen.add(id(parent))
                queue.append(parent)
            parent = None
            del parents
        return False

    def _mark_live(self, path: list, obj) -> None:
        for item in (*path, obj):
            if id(item) not in self.live_ids:
                self.live_ids.add(id(item))
                self.live.append(item)


# --- The audit --------------------------------------------------------------------


@dataclass
class _Leak:
    registration: _Registration
    why: str  # "dropped" | "garbage" | "held" | "expected"


_WHY = {
    "dropped": "and its handle was dropped: nothing can remove it",
    "garbage": "and its handle is held only through hooks (garbage the hook keeps alive): nothing can remove it",
    "held": "and was not removed (its handle is still held by a live object; reported in strict mode)",
    "expected": "although the code expected it removed (expect_removed)",
}


@dataclass(eq=False)
class HookAudit:
    """Record hook registrations made while active and report those that leak.

    ::

        with HookAudit() as audit:
            run_one_training_step()
        audit.assert_no_hook_leaks()   # raises HookLeakError with the report

    A registration leaks when its hook is still registered on a live target and
    no live object can reach its handle any more (it was dropped, or only the
    hooks themselves keep its holder alive). Cyclic garbage is collected before
    deciding. ``strict=True`` also reports hooks whose handle is still held;
    :meth:`expect_removed` marks handles that must be gone at the check whatever
    holds them. Audits may nest. ``origin`` is the location reported for
    ``HLR002`` (default: where the audit was started); ``test`` names the test in
    every finding; ``test_files`` are the files whose innermost frame is named
    besides a registering call made in a library (default: the file that
    started the audit).
    """

    origin: SourceLocation | None = None
    strict: bool = False
    test: str | None = None
    test_files: frozenset[str] | None = None
    findings: list[Finding] = field(default_factory=list)

    _PRUNE_FLOOR = 1024

    def __post_init__(self) -> None:
        self._registrations: list[_Registration] = []
        self._prune_at = self._PRUNE_FLOOR
        self._open_saved_tensors_hooks: dict[int, tuple[object, _CallSite | None]] = {}
        self._global_hook_ids_at_start: dict[str, set[int]] = {}
        self._cache_enabled_at_start = 0
        self._expected: list[tuple[weakref.ref, int]] = []
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self in _active_audits

    def start(self) -> HookAudit:
        frame = _user_frame(2)
        if self.origin is None:
            self.origin = _site(frame).location() if frame is not None else _UNKNOWN
        if self.test_files is None:
            self.test_files = frozenset(
                {os.path.realpath(frame.f_code.co_filename)} if frame is not None else ()
            )
        else:
            self.test_files = frozenset(os.path.realpath(p) for p in self.test_files)
        self._cache_enabled_at_start = P._cache_enabled
        self._global_hook_ids_at_start = {kind: set(hooks) for kind, hooks in _GLOBAL_HOOK_DICTS.items()}
        if not _active_audits:
            _install_recorders()
        _active_audits.append(self)
        return self

    def stop(self) -> list[Finding]:
        """Stop recording; compute and return :attr:`findings`."""
        if self in _active_audits:
            _active_audits.remove(self)
            if not _active_audits:
                _uninstall_recorders()
        return self.check()

    __enter__ = start

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def expect_removed(self, *handles) -> None:
        """Report these handles' hooks at the check if they are still registered, whoever holds them."""
        for handle in handles:
            for inner in getattr(handle, "handles", None) or (handle,):
                hooks = inner.hooks_dict_ref()
                if hooks is not None:
                    self._expected.append((weakref.ref(hooks), inner.id))

    def check(self) -> list[Finding]:
        """Compute :attr:`findings` from what is registered now (also while active)."""
        self.findings = [
            *self._leak_findings(),
            *self._unrecorded_global_hooks(),
            *self._saved_tensors_hooks_findings(),
            *self._cache_findings(),
        ]
        return self.findings

    def report(self) -> str:
        """One ``path:line:col: CODE message`` line per finding."""
        return "\n".join(map(str, self.findings))

    def assert_no_hook_leaks(self) -> None:
        """Raise :class:`HookLeakError` with the report; while active, checks what is registered now."""
        if self.active:
            self.check()
        if self.findings:
            raise HookLeakError(f"{len(self.findings)} hook leak(s):\n{self.report()}")

    def _record(self, registration: _Registration) -> None:
        if registration.site is not None and self.test_files:
            registration.test_site = self._test_frame(registration)
        with self._lock:
            self._registrations.append(registration)
            if len(self._registrations) >= self._prune_at:
                self._registrations = [r for r in self._registrations if r.is_still_registered()]
                self._prune_at = max(self._PRUNE_FLOOR, 2 * len(self._registrations))

    def _test_frame(self, registration: _Registration) -> _CallSite | None:
        if _realpath(registration.site.code.co_filename) in self.test_files:
            return None
        frame = sys._getframe(2)
        while frame is not None:
            if _realpath(frame.f_code.co_filename) in self.test_files:
                return _site(frame)
            frame = frame.f_back
        return None

    def _expected_ids(self) -> set[tuple[int, int]]:
        return {(id(hooks), hook_id) for ref, hook_id in self._expected if (hooks := ref()) is not None}

    def _leaks(self) -> list[_Leak]:
        registered = [r for r in self._registrations if r.is_still_registered()]
        if not registered:
            return []
        gc.collect()  # what only cycles keep alive is not held by anything live
        registered = [r for r in registered if r.is_still_registered()]
        expected = self._expected_ids()
        leaks, undecided = [], []
        for registration in registered:
            if (id(registration.hooks()), registration.hook_id) in expected:
                leaks.append(_Leak(registration, "expected"))
            elif registration.handle_is_dropped():
                leaks.append(_Leak(registration, "dropped"))
            else:
                undecided.append(registration)
        if undecided:
            reachability = _Reachability([r.hooks() for r in registered])
            for registration in undecided:
                held = registration.handle is None or reachability.handle_is_held(registration.handle)
                if not held:
                    leaks.append(_Leak(registration, "garbage"))
                elif self.strict:
                    leaks.append(_Leak(registration, "held"))
        return leaks

    def _leak_findings(self) -> list[Finding]:
        groups: dict[tuple, list[_Leak]] = {}
        for leak in self._leaks():
            r = leak.registration
            location = r.site.location() if r.site else _UNKNOWN
            test_frame = r.test_site.location() if r.test_site else None
            key = (location, test_frame, r.entry.code, r.kind, r.owner_name(), leak.why)
            groups.setdefault(key, []).append(leak)
        findings = []
        for (location, test_frame, code, kind, owner, why), leaks in groups.items():
            if code == LEAKED_GLOBAL_HOOK:
                message = f"{kind} registered here is still installed {_WHY[why]}; it runs for every model in the process"
            else:
                message = f"{kind} registered here is still registered on a live {owner} {_WHY[why]}"
            findings.append(Finding(location, code, message, self.test, test_frame, len(leaks)))
        return findings

    def _unrecorded_global_hooks(self) -> list[Finding]:
        recorded = {(id(r.hooks()), r.hook_id) for r in self._registrations if r.entry.is_global}
        counts: Counter = Counter()
        for kind, hooks in _GLOBAL_HOOK_DICTS.items():
            for hook_id in hooks.keys() - self._global_hook_ids_at_start[kind]:
                if (id(hooks), hook_id) not in recorded:
                    counts[_definition_site(hooks[hook_id]), kind] += 1
        return [
            Finding(
                location,
                LEAKED_GLOBAL_HOOK,
                f"{kind} defined here is still installed (registered through a name imported before the audit)",
                self.test,
                None,
                count,
            )
            for (location, kind), count in counts.items()
        ]

    def _saved_tensors_hooks_findings(self) -> list[Finding]:
        return [
            Finding(
                site.location() if site else _UNKNOWN,
                SAVED_TENSORS_HOOKS_LEFT_ACTIVE,
                f"{type(hooks).__name__} entered here is still active: every later autograd save goes through it",
                self.test,
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
        return [Finding(self.origin, PARAMETRIZE_CACHE_LEFT_ON, message, self.test)]
