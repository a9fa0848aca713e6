"""A transformer block that calls its submodules' forward directly (HL014).

Adapters, quantization observers and FSDP all attach through hooks on ``attn`` and
``mlp``; ``.forward(...)`` skips them.
"""

import torch.nn as nn


class Block(nn.Module):
    def __init__(self, attn, mlp, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attn = attn
        self.mlp = mlp

    def forward(self, x):
        x = x + self.attn.forward(self.norm1(x))
        return x + self.mlp.forward(self.norm2(x))
