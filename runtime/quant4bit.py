"""Blockwise absmax 4-bit quantization (NF4 / FP4 / E2M1) in pure torch.

A tensor is flattened, zero-padded to whole blocks, and each block of
``blocksize`` values is scaled by its absolute maximum into ``[-1, 1]`` and
rounded to the nearest entry of a 16-value code book: ``nf4`` and ``fp4`` are
bitsandbytes' code books, ``e2m1`` the OCP FP4 format. Two 4-bit codes are packed
per ``uint8`` (first value in the high nibble), as bitsandbytes does. Optionally
the per-block absmax values are themselves compressed to 8 bits with one scale
per 256 blocks ("double quantization", bitsandbytes' nested layout).
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

# NormalFloat4: quantiles of a standard normal, normalized to [-1, 1] (QLoRA paper);
# the same float32 values as bitsandbytes' "nf4".
_NF4 = (
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
)  # fmt: skip
# bitsandbytes' "fp4" code book (what its kernels and state dicts use): 1 sign bit
# (code bit 3) and a 3-bit magnitude from the table below, in units of 1/6; its
# smallest non-zero magnitude is 1/192, not E2M1's subnormal 1/12.
_BNB_FP4_MAGNITUDES = (0.0, 1 / 192, 4 / 6, 1.0, 2 / 6, 3 / 6, 1 / 6, 1.5 / 6)
_FP4 = _BNB_FP4_MAGNITUDES + tuple(-m for m in _BNB_FP4_MAGNITUDES)
# OCP FP4 E2M1 (code = sign bit << 3 | 3-bit magnitude), normalized so that max |value| == 1.
_E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_E2M1 = tuple(m / 6.0 for m in _E2M1_MAGNITUDES) + tuple(-m / 6.0 for m in _E2M1_MAGNITUDES)

_CODE_BOOKS = {"nf4": _NF4, "fp4": _FP4, "e2m1": _E2M1}
QUANT_TYPES = tuple(_CODE_BOOKS)
ABSMAX_NESTED_BLOCKSIZE = 256
# Bytes of packed codes dequantized per step: bounds the index and float32
# temporaries (about 12 bytes per packed byte) whatever the tensor's size.
_CHUNK_BYTES = 1 << 18


def code_book(quant_type: str, device=None) -> torch.Tensor:
    """The 16 float32 values a 4-bit code of ``quant_type`` stands for."""
    if quant_type not in _CODE_BOOKS:
        raise ValueError(f"quant_type must be one of {QUANT_TYPES}, not {quant_type!r}")
    return torch.tensor(_CODE_BOOKS[quant_type], dtype=torch.float32, device=device)


def _nearest_code(scaled: torch.Tensor, code: torch.Tensor) -> torch.Tensor:
    """Index of the nearest code-book entry for each value, without an N x 16 temporary."""
    sorted_values, order = code.sort(stable=True)
    midpoints = (sorted_values[1:] + sorted_values[:-1]) / 2
    return order[torch.bucketize(scaled, midpoints)]


def quantize_4bit(tensor: torch.Tensor, quant_type: str = "nf4", blocksize: int = 64):
    """Quantize ``tensor`` blockwise; returns ``(packed uint8 [n/2, 1], absmax float32 per block)``.

    The packed layout is bitsandbytes': two codes per byte, the first value in the
    high nibble, shape ``[ceil(n / blocksize) * blocksize / 2, 1]``.
    """
    if blocksize <= 0 or blocksize % 2:
        raise ValueError(f"blocksize must be a positive even number, not {blocksize}")
    flat = tensor.detach().flatten().float()
    padding = -flat.numel() % blocksize
    blocks = torch.nn.functional.pad(flat, (0, padding)).view(-1, blocksize)
    absmax = blocks.abs().amax(dim=1)
    scaled = blocks / absmax.clamp_min(torch.finfo(torch.float32).tiny)[:, None]
    codes = _nearest_code(scaled, code_book(quant_type, tensor.device)).to(torch.uint8).flatten()
    packed = (codes[0::2] << 4) | codes[1::2]
    return packed.view(-1, 1), absmax


def _pair_table(code: torch.Tensor) -> torch.Tensor:
    """256 entries, one per byte: both nibbles' float32 values at once, viewed as one int64."""
    code = code.float()
    pairs = torch.stack((code.repeat_interleave(16), code.repeat(16)), dim=-1)
    return pairs.contiguous().view(torch.int64).view(256)


def dequantize_4bit(
    packed: torch.Tensor,
    absmax: torch.Tensor,
    code: torch.Tensor,
    shape: torch.Size,
    dtype: torch.dtype,
) -> torch.Tensor:
    """Inverse of :func:`quantize_4bit`: a tensor of ``shape`` and ``dtype``.

    A 256-entry table gives both values of a byte in one gather; the packed codes
    are processed in chunks, so the temporaries stay a few MiB beside the output
    (no per-element int64 index), on the CPU and on CUDA alike.
    """
    flat = packed.reshape(-1)
    blocks = absmax.numel()
    blocksize = 2 * flat.numel() // blocks
    out = torch.empty(blocks * blocksize, dtype=dtype, device=packed.device)
    table = _pair_table(code.to(packed.device))
    scales = absmax.to(device=packed.device, dtype=torch.float32)
    # at most a quarter of the codes per step: the temporaries stay below the output's size
    chunk_bytes = min(_CHUNK_BYTES, max(blocksize // 2, flat.numel() // 4))
    blocks_per_chunk = max(1, 2 * chunk_bytes // blocksize)
    for first in range(0, blocks, blocks_per_chunk):
        last = min(blocks, first + blocks_per_chunk)
        index = flat[first * blocksize // 2 : last * blocksize // 2].to(torch.int32)
        target = out[first * blocksize : last * blocksize]
        scale = scales[first:last, None]
        if dtype == torch.float32:  # gather both values of each byte straight into the output
            torch.index_select(table, 0, index, out=target.view(torch.int64))
            target.view(last - first, blocksize).mul_(scale)
        else:  # float32 values, rounded once to the output dtype
            values = torch.index_select(table, 0, index).view(torch.float32)
            target.view(last - first, blocksize).copy_(values.view(last - first, blocksize).mul_(scale))
            del values
        del index  # before the next chunk allocates its own
    return out[: shape.numel()].view(shape)


def _linear_absmax_map(device=None) -> torch.Tensor:
    """The 256-entry map of :func:`compress_absmax`: code k stands for (k - 127) / 127."""
    return (torch.arange(256, dtype=torch.float32, device=device) - 127) / 127


def compress_absmax(absmax: torch.Tensor):
    """Double quantization, in bitsandbytes' nested layout.

    Returns ``(uint8 codes, float32 scale per 256 blocks, float32 offset, 256-entry
    map)``: ``absmax ~= map[codes] * scale[block // 256] + offset``. The map is
    linear (code k stands for (k - 127) / 127); bitsandbytes reads any map it is
    given, so a state dict saved with it loads there, and one saved by
    bitsandbytes (its dynamic map) decompresses here.
    """
    offset = absmax.mean()
    centered = absmax - offset
    padding = -centered.numel() % ABSMAX_NESTED_BLOCKSIZE
    nested = torch.nn.functional.pad(centered, (0, padding)).view(-1, ABSMAX_NESTED_BLOCKSIZE)
    scales = nested.abs().amax(dim=1).clamp_min(torch.finfo(torch.float32).tiny)
    codes = (torch.round(nested / scales[:, None] * 127) + 127).to(torch.uint8).flatten()[: absmax.numel()]
    return codes, scales, offset, _linear_absmax_map(absmax.device)


def decompress_absmax(
    codes: torch.Tensor,
    scales: torch.Tensor,
    offset: torch.Tensor,
    absmax_map: torch.Tensor | None = None,
) -> torch.Tensor:
    """Inverse of :func:`compress_absmax` (any 256-entry map, bitsandbytes' included)."""
    if absmax_map is None:
        absmax_map = _linear_absmax_map(codes.device)
    values = absmax_map[codes.long()]
    nested = -values.numel() % ABSMAX_NESTED_BLOCKSIZE
    values = torch.nn.functional.pad(values, (0, nested)).view(-1, ABSMAX_NESTED_BLOCKSIZE)
    return (values * scales[:, None]).flatten()[: codes.numel()] + offset
