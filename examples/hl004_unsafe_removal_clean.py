"""The same helpers, exception-safe."""

from contextlib import contextmanager

import torch
from torch import nn


def layer_activation(model: nn.Module, layer: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
    saved = []
    with layer.register_forward_hook(lambda m, i, o: saved.append(o.detach())):
        model(inputs)
    return saved[0]


def summarize(model: nn.Module, example: torch.Tensor) -> dict:
    shapes = {}
    hooks = []
    try:
        for name, module in model.named_modules():
            hooks.append(module.register_forward_hook(lambda m, i, o, name=name: shapes.update({name: tuple(o.shape)})))
        model(example)
    finally:
        for h in hooks:
            h.remove()
    return shapes


@contextmanager
def record_inputs(module: nn.Module, sink: list):
    handle = module.register_forward_pre_hook(lambda m, args: sink.extend(a.detach() for a in args))
    try:
        yield sink
    finally:
        handle.remove()
