"""Quantized linear layers whose dequantized weights are cached for one forward pass.

The pre-hook opens the cache, the forward hook closes it.  The forward hook is a plain
one, so when ``forward`` raises (non-reentrant activation checkpointing does, on
purpose, every backward) the cache is never closed: the counter only climbs and the
dequantized weights stay alive until the process runs out of memory.

``hooklint check examples/`` reports HL001 here; ``hooklint check --fix`` produces
``hl001_parametrize_cache_fixed.py``.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.utils.parametrize as P
from torch import nn


class Dequantize(nn.Module):
    """Parametrization: the stored int8 weight times its per-row scale."""

    def __init__(self, scale: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("scale", scale)

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        return packed.float() * self.scale[:, None]


def _open_dequant_cache(module: nn.Module, inputs: tuple[Any, ...]) -> None:
    P._cache_enabled += 1


def _close_dequant_cache(module: nn.Module, inputs: tuple[Any, ...], output: Any) -> None:
    P._cache_enabled -= 1
    if not P._cache_enabled:
        P._cache = {}


def quantize_linear(layer: nn.Linear) -> nn.Linear:
    """Store ``layer.weight`` as int8 plus a scale, dequantized on access."""
    weight = layer.weight.detach()
    scale = weight.abs().amax(dim=1).clamp(min=1e-8) / 127
    packed = torch.round(weight / scale[:, None]).to(torch.int8)
    layer.weight = nn.Parameter(packed, requires_grad=False)
    P.register_parametrization(layer, "weight", Dequantize(scale), unsafe=True)

    # Cache the dequantized weight while the layer runs: it is read more than once.
    layer.register_forward_pre_hook(_open_dequant_cache)
    layer.register_forward_hook(_close_dequant_cache)
    return layer
