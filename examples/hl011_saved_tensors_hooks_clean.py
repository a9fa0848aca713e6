"""Activation offloading with `with`."""

import torch
from torch import nn
from torch.autograd.graph import save_on_cpu


def offloaded_forward(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with save_on_cpu(pin_memory=True):
        out = model(x)
    return out


class CompressedActivations:
    def __enter__(self):
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def _pack(self, t):
        return t.to(torch.bfloat16)

    def _unpack(self, t):
        return t.float()
