"""The scope tracker with a hook that accepts both arities (HL012, clean)."""

from contextlib import contextmanager

from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)

_ACTIVE = set()


def _enter(module, args):
    _ACTIVE.add(id(module))


def _leave(module, args, *rest):
    kwargs, output = (rest[0], rest[1]) if len(rest) == 2 else ({}, rest[0])
    _ACTIVE.discard(id(module))


@contextmanager
def tracking():
    with register_module_forward_pre_hook(_enter), register_module_forward_hook(
        _leave, with_kwargs=True, always_call=True
    ):
        yield _ACTIVE
