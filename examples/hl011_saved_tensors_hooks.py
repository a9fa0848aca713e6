"""Activation offloading entered by hand."""

import torch
from torch import nn
from torch.autograd.graph import save_on_cpu


def offloaded_forward(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    ctx = save_on_cpu(pin_memory=True)
    ctx.__enter__()
    out = model(x)  # HL011: if this raises, every later op on the thread offloads
    ctx.__exit__(None, None, None)
    return out


class CompressedActivations:
    def enable(self) -> None:
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()  # HL011: never exited

    def _pack(self, t):
        return t.to(torch.bfloat16)

    def _unpack(self, t):
        return t.float()
