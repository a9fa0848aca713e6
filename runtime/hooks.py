"""Exception-safe forward-hook helpers.

* :func:`paired_forward_hooks` registers a pre/post pair whose post side undoes
  exactly what its own pre side did for the same call (a per-call token, not a
  clamp), so it stays balanced when forward raises, when an earlier pre-hook
  raises, when the module is re-entered, and when non-reentrant checkpointing
  aborts a recomputation with ``_StopRecomputationError``.
* :func:`capture_inputs` / :func:`capture_outputs` record what modules receive or
  produce and always remove their hooks.
* :func:`removing` removes a group of handles on exit.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hooklint.runtime import require_torch

torch = require_torch()
nn = torch.nn

__all__ = [
    "CaptureWarning",
    "CapturedCall",
    "Captures",
    "PairedHooksHandle",
    "capture_inputs",
    "capture_outputs",
    "paired_forward_hooks",
    "removing",
]

_CALL_IMPL_CODE = nn.Module._call_impl.__code__
# Frames between a hook and the ``Module._call_impl`` that runs it: the hook is
# called from ``_call_impl`` itself (exception path) or from its nested ``inner``
# (torch 2.4 to 2.15); a little slack for versions that add a helper between.
_MAX_FRAMES_TO_CALL_IMPL = 6


def _current_module_call() -> int | None:
    """Identify the ``Module.__call__`` that is running the calling hook.

    Both hooks of one call find the same ``_call_impl`` frame, while a nested call
    of the same module has its own, so the frame id is a per-call token. Returns
    None when hooks are run some other way (e.g. traced by ``torch.compile``).
    """
    frame = sys._getframe(2)
    for _ in range(_MAX_FRAMES_TO_CALL_IMPL):
        if frame is None:
            return None
        if frame.f_code is _CALL_IMPL_CODE:
            return id(frame)
        frame = frame.f_back
    return None


_tokens_checked = False


def _check_call_tokens() -> None:
    """Fail loudly, once per process, if this torch runs hooks where the token cannot be found.

    Probes an ``nn.Identity`` called twice, once nested inside its own forward
    pre-hook: the pre- and post-hook of one call must see the same token, and
    the nested call another one.
    """
    global _tokens_checked
    if _tokens_checked:
        return
    probe = nn.Identity()
    seen: list[tuple[str, int | None]] = []

    def pre(module, args):
        seen.append(("pre", _current_module_call()))
        if len(seen) == 1:
            module(*args)  # nested call

    def post(module, args, output):
        seen.append(("post", _current_module_call()))

    handles = (
        probe.register_forward_pre_hook(pre),
        probe.register_forward_hook(post, always_call=True),
    )
    try:
        probe(torch.zeros(()))
    finally:
        for handle in handles:
            handle.remove()
    tokens = [token for _, token in seen]
    # outer pre, inner pre, inner post, outer post
    if not (
        len(tokens) == 4
        and None not in tokens
        and tokens[0] == tokens[3]
        and tokens[1] == tokens[2]
        and tokens[0] != tokens[1]
    ):
        raise RuntimeError(
            f"paired_forward_hooks: torch {torch.__version__} runs module hooks where the per-call "
            "token (the Module._call_impl frame) cannot be found; pairing by token would be wrong, "
            "so it is refused. Please report this torch version to hooklint."
        )
    _tokens_checked = True


class PairedHooksHandle:
    """Removes both hooks of a pair; also a context manager."""

    def __init__(self, pre_handle, post_handle) -> None:
        self._handles = (pre_handle, post_handle)

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()

    def __enter__(self) -> PairedHooksHandle:  # noqa: PYI034 -- typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


class _CallTokens(threading.local):
    """Per-thread stack of ``(call token, enter's return value)`` for one pair."""

    def __init__(self) -> None:
        self.stack: list[tuple[int | None, Any]] = []


def paired_forward_hooks(
    module: nn.Module,
    enter: Callable[[nn.Module], Any],
    exit: Callable[[nn.Module, Any], None],
) -> PairedHooksHandle:
    """Run ``enter(module)`` before and ``exit(module, state)`` after each forward.

    ``state`` is what ``enter`` returned for the same call. ``exit`` runs exactly
    once for every ``enter`` that returned, also when forward (or a later hook)
    raises, and never for a call whose ``enter`` did not run, e.g. because an
    earlier pre-hook raised. Calls are matched by a per-call token, so a nested
    call of the same module, or an inner module failing while an outer one holds
    the same resource, never releases someone else's ``enter``. Tokens are kept
    per thread (backward recomputation may run on an autograd thread).

    Returns one handle that removes both hooks; it is also a context manager.
    Raises ``RuntimeError`` at registration when the installed torch calls hooks
    in a way the per-call token cannot follow (checked once per process).
    """
    _check_call_tokens()
    tokens = _CallTokens()

    def pre_hook(mod, args):
        state = enter(mod)
        tokens.stack.append((_current_module_call(), state))

    def post_hook(mod, args, output):
        stack = tokens.stack
        if stack and stack[-1][0] == _current_module_call():
            _, state = stack.pop()
            exit(mod, state)

    pre_handle = module.register_forward_pre_hook(pre_hook)
    post_handle = module.register_forward_hook(post_hook, always_call=True)
    return PairedHooksHandle(pre_handle, post_handle)


@contextlib.contextmanager
def removing(*handles) -> Iterator[tuple]:
    """Remove every handle on exit, exception or not."""
    try:
        yield handles
    finally:
        for handle in handles:
            handle.remove()


@dataclass(frozen=True)
class CapturedCall:
    """The positional and keyword arguments of one module call."""

    args: tuple
    kwargs: dict


class _CaptureComplete(BaseException):
    """Raised from a hook to stop the model forward after the last wanted capture.

    It derives from ``BaseException`` (like ``KeyboardInterrupt``), so that an
    ``except Exception:`` in the model or in the ``with`` block does not swallow it.
    """


class CaptureWarning(UserWarning):
    """A capture helper could not do what was asked (``HLR005``, or a value it could not detach)."""


@dataclass
class Captures:
    """What each module received or produced, in call order: ``captures[module]``.

    ``undetached`` names the types of captured values that hold tensors but that
    ``detach=True`` could not reach (neither a pytree node nor a dataclass); they
    still reference the autograd graph.
    """

    by_module: dict[nn.Module, list] = field(default_factory=dict)
    undetached: set[str] = field(default_factory=set)

    def __getitem__(self, module: nn.Module) -> list:
        try:
            return self.by_module[module]
        except KeyError:
            raise LookupError(_not_captured(module, self.by_module)) from None

    def first(self, module: nn.Module):
        """The first record of ``module``; raises LookupError when it never ran."""
        records = self[module]
        if not records:
            raise LookupError(f"{type(module).__name__} was not called during the capture")
        return records[0]


def _not_captured(module, captured) -> str:
    name = type(module).__name__
    if isinstance(module, (nn.ModuleList, nn.ModuleDict)):
        return (
            f"a {name} is not captured itself (it has no forward): its {len(module)} members are; "
            f"look one up, e.g. captures[{name.lower()}[0]]"
        )
    return f"this {name} was not given to the capture ({len(captured)} modules were)"


def _as_module_list(modules) -> list[nn.Module]:
    """Modules to hook: containers without a forward and sequences expand to their members."""
    if isinstance(modules, nn.ModuleDict):
        return _as_module_list(list(modules.values()))
    if isinstance(modules, nn.ModuleList):
        return _as_module_list(list(modules))
    if isinstance(modules, nn.Module):
        return [modules]
    if isinstance(modules, Mapping):
        modules = list(modules.values())
    expanded: list[nn.Module] = []
    for item in modules:
        if not isinstance(item, (nn.Module, Mapping, list, tuple)):
            raise TypeError(
                f"capture helpers take modules or collections of modules, not {type(item).__name__}"
            )
        for member in _as_module_list(item):
            if member not in expanded:
                expanded.append(member)
    return expanded


def _compiled_roots() -> list[nn.Module]:
    """Eager modules whose compiled form (``torch.compile(m)``, ``m.compile()``) has run."""
    dynamo = sys.modules.get("torch._dynamo.eval_frame")
    utils = sys.modules.get("torch._dynamo.utils")
    if dynamo is None or utils is None or not utils.counters["frames"].get("ok"):
        return []
    optimized = getattr(dynamo, "OptimizedModule", ())
    roots = []
    proxies = weakref.ProxyTypes
    for obj in gc.get_objects():
        if type(obj) in proxies:  # isinstance would dereference a dead proxy
            continue
        if isinstance(obj, optimized):
            roots.append(obj._orig_mod)
        elif isinstance(obj, nn.Module) and getattr(obj, "_compiled_call_impl", None) is not None:
            roots.append(obj)
    return roots


def _check_not_compiled(modules: list[nn.Module], on_compiled: str) -> None:
    if on_compiled == "ignore":
        return
    roots = _compiled_roots()
    if not roots:
        return
    wanted = {id(m) for m in modules}
    for root in roots:
        if any(id(m) in wanted for m in root.modules()):
            message = (
                f"HLR005 capture-on-compiled-module: a hooked module is part of a compiled "
                f"{type(root).__name__} that has already run; its compiled graph was traced without "
                "these hooks, so the capture records nothing. Capture on the eager module "
                "(compiled._orig_mod), call torch._dynamo.reset() first, or register before the "
                "first compiled call"
            )
            if on_compiled == "raise":
                raise RuntimeError(message)
            warnings.warn(message, CaptureWarning, stacklevel=4)
            return


def _holds_tensor(value) -> bool:
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        return any(isinstance(v, torch.Tensor) for v in attributes.values())
    return False


def _store_tree(value, store_tensor, undetached: set[str]):
    """Apply ``store_tensor`` to every tensor pytree can reach, and inside dataclasses."""

    def leaf(item):
        if isinstance(item, torch.Tensor):
            return store_tensor(item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            clone = copy.copy(item)
            for f in dataclasses.fields(item):
                stored = _store_tree(getattr(item, f.name), store_tensor, undetached)
                object.__setattr__(clone, f.name, stored)  # frozen dataclasses too
            return clone
        if _holds_tensor(item):
            undetached.add(type(item).__qualname__)
        return item

    return torch.utils._pytree.tree_map(leaf, value)


def _is_recomputing() -> bool:
    """True inside a backward pass, i.e. during activation-checkpoint recomputation."""
    return torch._C._current_graph_task_id() != -1


@contextlib.contextmanager
def _capturing(modules, *, outputs, detach, to_cpu, max_calls, stop_early, on_compiled) -> Iterator[Captures]:
    modules = _as_module_list(modules)
    if stop_early and max_calls is None:
        raise ValueError("stop_early=True needs max_calls: it says when the capture is complete")
    if on_compiled not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_compiled must be 'warn', 'raise' or 'ignore', not {on_compiled!r}")
    _check_not_compiled(modules, on_compiled)
    captures = Captures({module: [] for module in modules})

    def store_tensor(tensor):
        if detach:
            tensor = tensor.detach()
        return tensor.to("cpu") if to_cpu else tensor

    def store(value):
        if not detach and not to_cpu:
            return value
        return _store_tree(value, store_tensor, captures.undetached)

    def wants(module) -> bool:
        return not _is_recomputing() and (max_calls is None or len(captures.by_module[module]) < max_calls)

    def record(module, value) -> None:
        captures.by_module[module].append(value)
        if stop_early and all(len(r) >= max_calls for r in captures.by_module.values()):
            raise _CaptureComplete

    def pre_hook(module, args, kwargs):
        if wants(module):
            record(module, CapturedCall(store(tuple(args)), store(dict(kwargs))))

    def post_hook(module, args, output):
        if wants(module):
            record(module, store(output))

    handles = [
        module.register_forward_hook(post_hook)
        if outputs
        else module.register_forward_pre_hook(pre_hook, with_kwargs=True)
        for module in modules
    ]
    with removing(*handles):
        try:
            yield captures
        except _CaptureComplete:
            pass
    if captures.undetached and detach:
        warnings.warn(
            "could not detach captured values of type "
            + ", ".join(sorted(captures.undetached))
            + " (neither a pytree node nor a dataclass): they keep the autograd graph alive; "
            "register the type with torch.utils._pytree or capture its tensors",
            CaptureWarning,
            stacklevel=3,
        )


def capture_inputs(
    modules: nn.Module | Iterable[nn.Module],
    *,
    detach: bool = True,
    to_cpu: bool = False,
    max_calls: int | None = None,
    stop_early: bool = False,
    on_compiled: str = "warn",
) -> contextlib.AbstractContextManager[Captures]:
    """Record the arguments each module is called with, as :class:`CapturedCall`.

    ``modules`` is a module or a collection of them: ``ModuleList``,
    ``ModuleDict``, lists, tuples and dicts expand to their members (a
    ``ModuleList`` has no forward of its own). Tensors are detached (unless
    ``detach=False``), also inside dataclasses and anything pytree can flatten;
    other objects holding tensors are kept as they are, named in
    ``captures.undetached`` and a :class:`CaptureWarning`. They are optionally
    moved to the CPU. At most ``max_calls`` calls per module are recorded. With
    ``stop_early=True`` the model forward is aborted once every module has
    ``max_calls`` records, by an internal ``BaseException`` (an ``except
    Exception:`` does not catch it); the rest of the ``with`` block is skipped as
    well. Calls made during checkpoint recomputation are not recorded again. A
    module inside a ``torch.compile``d model that has already run records
    nothing (its graph was traced without the hooks): ``on_compiled="warn"``
    (default) warns with the remedy, ``"raise"`` raises ``RuntimeError``,
    ``"ignore"`` skips the check. The hooks are removed on exit, exception or
    not::

        with capture_inputs(model.blocks[3], max_calls=1, stop_early=True) as cap:
            model(batch)
        hidden = cap.first(model.blocks[3]).args[0]
    """
    return _capturing(
        modules,
        outputs=False,
        detach=detach,
        to_cpu=to_cpu,
        max_calls=max_calls,
        stop_early=stop_early,
        on_compiled=on_compiled,
    )


def capture_outputs(
    modules: nn.Module | Iterable[nn.Module],
    *,
    detach: bool = True,
    to_cpu: bool = False,
    max_calls: int | None = None,
    stop_early: bool = False,
    on_compiled: str = "warn",
) -> contextlib.AbstractContextManager[Captures]:
    """Record what each module returns; options as in :func:`capture_inputs`."""
    return _capturing(
        modules,
        outputs=True,
        detach=detach,
        to_cpu=to_cpu,
        max_calls=max_calls,
        stop_early=stop_early,
        on_compiled=on_compiled,
    )
