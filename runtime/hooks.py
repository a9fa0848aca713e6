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
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hooklint.runtime import require_torch

torch = require_torch()
nn = torch.nn

__all__ = [
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
# called from ``_call_impl`` itself (exception path) or from its nested ``inner``.
_MAX_FRAMES_TO_CALL_IMPL = 4


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
    """
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


class _CaptureComplete(Exception):
    """Raised from a hook to stop the model forward after the last wanted capture."""


@dataclass
class Captures:
    """What each module received or produced, in call order: ``captures[module]``."""

    by_module: dict[nn.Module, list] = field(default_factory=dict)

    def __getitem__(self, module: nn.Module) -> list:
        return self.by_module[module]

    def first(self, module: nn.Module):
        """The first record of ``module``; raises LookupError when it never ran."""
        records = self.by_module[module]
        if not records:
            raise LookupError(
                f"{type(module).__name__} was not called during the capture"
            )
        return records[0]


def _as_module_list(modules: nn.Module | Iterable[nn.Module]) -> list[nn.Module]:
    return [modules] if isinstance(modules, nn.Module) else list(modules)


def _is_recomputing() -> bool:
    """True inside a backward pass, i.e. during activation-checkpoint recomputation."""
    return torch._C._current_graph_task_id() != -1


@contextlib.contextmanager
def _capturing(
    modules, *, outputs, detach, to_cpu, max_calls, stop_early
) -> Iterator[Captures]:
    modules = _as_module_list(modules)
    if stop_early and max_calls is None:
        raise ValueError(
            "stop_early=True needs max_calls: it says when the capture is complete"
        )
    captures = Captures({module: [] for module in modules})

    def store_tensor(tensor):
        if detach:
            tensor = tensor.detach()
        return tensor.to("cpu") if to_cpu else tensor

    def store(value):
        return torch.utils._pytree.tree_map_only(torch.Tensor, store_tensor, value)

    def wants(module) -> bool:
        return not _is_recomputing() and (
            max_calls is None or len(captures.by_module[module]) < max_calls
        )

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


def capture_inputs(
    modules: nn.Module | Iterable[nn.Module],
    *,
    detach: bool = True,
    to_cpu: bool = False,
    max_calls: int | None = None,
    stop_early: bool = False,
) -> contextlib.AbstractContextManager[Captures]:
    """Record the arguments each module is called with, as :class:`CapturedCall`.

    Tensors are detached (unless ``detach=False``) and optionally moved to the
    CPU. At most ``max_calls`` calls per module are recorded. With
    ``stop_early=True`` the model forward is aborted once every module has
    ``max_calls`` records; the rest of the ``with`` block is skipped as well.
    Calls made during checkpoint recomputation are not recorded again. The hooks
    are removed on exit, exception or not::

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
    )


def capture_outputs(
    modules: nn.Module | Iterable[nn.Module],
    *,
    detach: bool = True,
    to_cpu: bool = False,
    max_calls: int | None = None,
    stop_early: bool = False,
) -> contextlib.AbstractContextManager[Captures]:
    """Record what each module returns; options as in :func:`capture_inputs`."""
    return _capturing(
        modules,
        outputs=True,
        detach=detach,
        to_cpu=to_cpu,
        max_calls=max_calls,
        stop_early=stop_early,
    )
