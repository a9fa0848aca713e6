"""A process-wide scope tracker with a kwargs-aware cleanup hook (HL012).

On torch 2.6-2.13 the always_call path calls the hook with three arguments, so
``_leave`` raises TypeError (turned into a warning) and the scope stays active.
"""

from contextlib import contextmanager

from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)

_ACTIVE = set()


def _enter(module, args):
    _ACTIVE.add(id(module))


def _leave(module, args, kwargs, output):
    _ACTIVE.discard(id(module))


@contextmanager
def tracking():
    with register_module_forward_pre_hook(_enter), register_module_forward_hook(
        _leave, with_kwargs=True, always_call=True
    ):
        yield _ACTIVE
