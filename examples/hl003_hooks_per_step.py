"""A fine-tuning loop that clips gradients with tensor hooks, and a wrapper that
hooks its encoder from forward(): both add one more hook on every pass."""

import torch
from torch import nn


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, loss_fn) -> None:
    for inputs, targets in loader:
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp(-1.0, 1.0))  # HL003: k hooks after k steps
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
        optimizer.zero_grad()


class FeatureWrapper(nn.Module):
    def __init__(self, encoder: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.encoder, self.head = encoder, head
        self.features: list[torch.Tensor] = []

    def _store(self, module, args, output):
        self.features.append(output.detach())

    def forward(self, x):
        self.encoder.register_forward_hook(self._store)  # HL003: one more hook per call
        return self.head(self.encoder(x))
