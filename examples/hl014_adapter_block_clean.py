"""The block calling its submodules, so their hooks run (HL014, clean)."""

import torch.nn as nn


class Block(nn.Module):
    def __init__(self, attn, mlp, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.attn = attn
        self.mlp = mlp

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class ScaledLinear(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 0.5
