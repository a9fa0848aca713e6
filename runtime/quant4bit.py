"""Blockwise absmax 4-bit quantization (NF4 / FP4) in pure torch.

A tensor is flattened, zero-padded to whole blocks, and each block of
``blocksize`` values is scaled by its absolute maximum into ``[-1, 1]`` and
rounded to the nearest entry of a 16-value code book. Two 4-bit codes are packed
per ``uint8`` (first value in the high nibble). Optionally the per-block absmax
values are themselves compressed to int8 with one scale per 256 blocks
("double quantization").
"""

from __future__ import annotations

from hooklint.runtime import require_torch

torch = require_torch()

__all__ = [
    "QUANT_TYPES",
    "code_book",
    "compress_absmax",
    "decompress_absmax",
    "dequantize_4bit",
    "quantize_4bit",
]

# NormalFloat4: quantiles of a standard normal, normalized to [-1, 1] (QLoRA paper).
_NF4 = (
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982456207275, 0.5626170039176941, 0.7229568362236023, 1.0,
)  # fmt: skip
# FP4 E2M1 (code = sign bit << 3 | 3-bit magnitude), normalized so that max |value| == 1.
_E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_FP4 = tuple(m / 6.0 for m in _E2M1_MAGNITUDES) + tuple(
    -m / 6.0 for m in _E2M1_MAGNITUDES
)

_CODE_BOOKS = {"nf4": _NF4, "fp4": _FP4}
QUANT_TYPES = tuple(_CODE_BOOKS)
ABSMAX_NESTED_BLOCKSIZE = 256


def code_book(quant_type: str, device=None) -> torch.Tensor:
    """The 16 float32 values a 4-bit code of ``quant_type`` stands for."""
    if quant_type not in _CODE_BOOKS:
        raise ValueError(f"quant_type must be one of {QUANT_TYPES}, not {quant_type!r}")
    return torch.tensor(_CODE_BOOKS[quant_type], dtype=torch.float32, device=device)


def _nearest_code(scaled: torch.Tensor, code: torch.Tensor) -> torch.Tensor:
    """Index of the nearest code-book entry for each value, without an N x 16 temporary."""
    sorted_values, order = code.sort()
    midpoints = (sorted_values[1:] + sorted_values[:-1]) / 2
    return order[torch.bucketize(scaled, midpoints)]


def quantize_4bit(tensor: torch.Tensor, quant_type: str = "nf4", blocksize: int = 64):
    """Quantize ``tensor`` blockwise; returns ``(packed uint8, absmax float32 per block)``."""
    if blocksize <= 0 or blocksize % 2:
        raise ValueError(f"blocksize must be a positive even number, not {blocksize}")
    flat = tensor.detach().flatten().float()
    padding = -flat.numel() % blocksize
    blocks = torch.nn.functional.pad(flat, (0, padding)).view(-1, blocksize)
    absmax = blocks.abs().amax(dim=1)
    scaled = blocks / absmax.clamp_min(torch.finfo(torch.float32).tiny)[:, None]
    codes = (
        _nearest_code(scaled, code_book(quant_type, tensor.device))
        .to(torch.uint8)
        .flatten()
    )
    packed = (codes[0::2] << 4) | codes[1::2]
    return packed, absmax


def dequantize_4bit(
    packed: torch.Tensor,
    absmax: torch.Tensor,
    code: torch.Tensor,
    shape: torch.Size,
    dtype: torch.dtype,
) -> torch.Tensor:
    """Inverse of :func:`quantize_4bit`: a tensor of ``shape`` and ``dtype``."""
    codes = torch.stack((packed >> 4, packed & 0x0F), dim=-1).flatten().long()
    values = code[codes].view(absmax.numel(), -1) * absmax[:, None]
    return values.flatten()[: shape.numel()].view(shape).to(dtype)


def compress_absmax(absmax: torch.Tensor):
    """Double quantization: ``(int8 codes, float32 scale per 256 blocks, float32 offset)``."""
    offset = absmax.mean()
    centered = absmax - offset
    padding = -centered.numel() % ABSMAX_NESTED_BLOCKSIZE
    nested = torch.nn.functional.pad(centered, (0, padding)).view(
        -1, ABSMAX_NESTED_BLOCKSIZE
    )
    scales = nested.abs().amax(dim=1).clamp_min(torch.finfo(torch.float32).tiny) / 127
    codes = (
        torch.round(nested / scales[:, None]).to(torch.int8).flatten()[: absmax.numel()]
    )
    return codes, scales, offset


def decompress_absmax(
    codes: torch.Tensor, scales: torch.Tensor, offset: torch.Tensor
) -> torch.Tensor:
    """Inverse of :func:`compress_absmax`."""
    per_block_scale = scales.repeat_interleave(ABSMAX_NESTED_BLOCKSIZE)[: codes.numel()]
    return codes.float() * per_block_scale + offset
