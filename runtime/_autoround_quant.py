"""Group-wise integer weight quantizer behind :mod:`hooklint.runtime.autoround`.

A weight matrix of shape ``(out, in)`` is cut into groups of ``group_size``
consecutive input columns (the last group zero-padded when ``in`` is not a
multiple), giving a ``(out * groups_per_row, group_size)`` matrix with one
scale and one zero point per row.  Quantization follows AutoRound:

* asymmetric: ``wmin = min(min W_g, 0) * alpha``, ``wmax = max(max W_g, 0) * beta``,
  ``s = max((wmax - wmin) / (2^b - 1), 1e-5)``, ``zp = round(-wmin / s)``,
  ``q = clamp(round(W / s + V) + zp, 0, 2^b - 1)``, ``W_hat = s * (q - zp)``;
* symmetric ("full range"): the larger of ``|wmin|`` and ``wmax`` maps onto
  ``-2^(b-1)``, the code that a symmetric grid otherwise wastes, so the scale is
  signed: ``q = clamp(round(W / s + V), -2^(b-1), 2^(b-1) - 1)``, ``W_hat = s * q``.

Rounding is straight-through so that gradients reach the rounding offset ``V``
and the clipping scales ``alpha`` (min) and ``beta`` (max), which are clamped
to ``[0, 1]`` before use.
"""

from __future__ import annotations

from dataclasses import dataclass

from hooklint.runtime import require_torch

torch = require_torch()

SCALE_FLOOR = 1e-5
"""Smallest scale magnitude, so that constant groups do not divide by zero."""


def round_ste(x: torch.Tensor) -> torch.Tensor:
    """Round to nearest in the forward pass, identity in the backward pass."""
    return x + (torch.round(x) - x).detach()


def to_groups(weight: torch.Tensor, group_size: int) -> tuple[torch.Tensor, int]:
    """Reshape ``(out, in)`` into ``(out * groups_per_row, group_size)``.

    ``group_size <= 0`` means one group per output row.  Returns the grouped
    matrix and the number of zero columns appended to each row.
    """
    columns = weight.shape[1]
    size = columns if group_size <= 0 else group_size
    pad = (-columns) % size
    if pad:
        weight = torch.nn.functional.pad(weight, (0, pad))
    return weight.reshape(-1, size), pad


def from_groups(grouped: torch.Tensor, shape: tuple[int, int], pad: int) -> torch.Tensor:
    """Inverse of :func:`to_groups`: back to ``shape``, dropping the padding."""
    rows, columns = shape
    return grouped.reshape(rows, columns + pad)[:, :columns]


@dataclass
class GroupCodes:
    """Integer form of one quantized weight matrix, in the grouped layout.

    ``codes`` are unsigned (``0 .. 2^bits - 1``) for both modes; the weight is
    ``scale * (codes - zero)`` per group row.
    """

    codes: torch.Tensor  # (groups, group_size), uint8
    scale: torch.Tensor  # (groups,), float32; negative allowed in symmetric mode
    zero: torch.Tensor  # (groups,), uint8


def fake_quantize(
    grouped: torch.Tensor,
    bits: int,
    sym: bool,
    offset: torch.Tensor | None = None,
    min_scale: torch.Tensor | None = None,
    max_scale: torch.Tensor | None = None,
) -> tuple[torch.Tensor, GroupCodes]:
    """Quantize-dequantize ``grouped`` (differentiable in offset and scales).

    Returns the dequantized groups and their integer codes.  With no offset and
    no scales this is plain round-to-nearest.
    """
    alpha = 1.0 if min_scale is None else min_scale.clamp(0, 1)
    beta = 1.0 if max_scale is None else max_scale.clamp(0, 1)
    offset = 0.0 if offset is None else offset
    wmin = grouped.min(dim=-1).values.clamp(max=0) * alpha
    wmax = grouped.max(dim=-1).values.clamp(min=0) * beta
    if sym:
        return _symmetric(grouped, bits, offset, wmin, wmax)
    return _asymmetric(grouped, bits, offset, wmin, wmax)


def _asymmetric(grouped, bits, offset, wmin, wmax):
    top = 2**bits - 1
    scale = ((wmax - wmin) / top).clamp(min=SCALE_FLOOR)
    zero = round_ste(-wmin / scale)
    q = torch.clamp(round_ste(grouped / scale[:, None] + offset) + zero[:, None], 0, top)
    dequantized = scale[:, None] * (q - zero[:, None])
    codes = GroupCodes(q.detach().to(torch.uint8), scale.detach().float(), zero.detach().to(torch.uint8))
    return dequantized, codes


def _symmetric(grouped, bits, offset, wmin, wmax):
    half = 2 ** (bits - 1)
    negative_wins = (-wmin) > wmax
    extreme = torch.where(negative_wins, -wmin, -wmax)  # maps onto code -half
    scale = extreme / half
    scale = torch.where(scale < 0, scale.clamp(max=-SCALE_FLOOR), scale.clamp(min=SCALE_FLOOR))
    q = torch.clamp(round_ste(grouped / scale[:, None] + offset), -half, half - 1)
    dequantized = scale[:, None] * q
    zero = torch.full_like(scale, half, dtype=torch.uint8)
    codes = GroupCodes((q.detach() + half).to(torch.uint8), scale.detach().float(), zero.detach())
    return dequantized, codes


def pack_codes(codes: torch.Tensor, bits: int) -> torch.Tensor:
    """Pack unsigned ``bits``-bit codes along the last dim into int32 words.

    Each word holds ``32 // bits`` codes, the first in the lowest bits; the
    last word of a row is zero-filled.
    """
    per_word = 32 // bits
    rows, columns = codes.shape
    pad = (-columns) % per_word
    values = torch.nn.functional.pad(codes.to(torch.int64), (0, pad)).reshape(rows, -1, per_word)
    shifts = torch.arange(per_word, dtype=torch.int64, device=codes.device) * bits
    words = (values << shifts).sum(dim=-1)
    words = torch.where(words >= 2**31, words - 2**32, words)  # reinterpret as signed
    return words.to(torch.int32)


def unpack_codes(words: torch.Tensor, bits: int, columns: int) -> torch.Tensor:
    """Inverse of :func:`pack_codes`: ``columns`` uint8 codes per row."""
    per_word = 32 // bits
    shifts = torch.arange(per_word, dtype=torch.int64, device=words.device) * bits
    unsigned = words.to(torch.int64) & 0xFFFFFFFF
    values = (unsigned[..., None] >> shifts) & (2**bits - 1)
    return values.reshape(words.shape[0], -1)[:, :columns].to(torch.uint8)
