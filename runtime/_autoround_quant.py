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


def group_range(grouped: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-group ``min(min W_g, 0)`` and ``max(max W_g, 0)``; constant while tuning."""
    return grouped.min(dim=-1).values.clamp(max=0), grouped.max(dim=-1).values.clamp(min=0)


@dataclass
class _Grid:
    """Forward quantities of one quantization, kept for the backward pass."""

    scale: torch.Tensor  # (groups,) after the floor
    raw_scale: torch.Tensor  # (groups,) before the floor
    zero: torch.Tensor  # (groups,) asymmetric zero point (float), 0 in symmetric mode
    level: torch.Tensor  # (groups, size) q - zero: the integer level the weight sits on
    in_range: torch.Tensor  # (groups, size) float 1.0 at the unclamped positions, else 0.0
    negative_wins: torch.Tensor | None  # symmetric: the negative extreme sets the scale


def _rounded(scale: torch.Tensor, scale_dtype: torch.dtype | None) -> torch.Tensor:
    """``scale`` rounded to ``scale_dtype`` and back (``None``: unchanged)."""
    return scale if scale_dtype is None else scale.to(scale_dtype).to(scale.dtype)


def _grid(grouped, offset, alpha, beta, low, high, bits: int, sym: bool, scale_dtype=None) -> _Grid:
    # Full-size work is done in place on two fresh tensors and the mask is kept
    # as float: on CPU a bool mask costs several times a float multiply.
    # ``scale_dtype`` rounds the scale before the floor and the zero point, so
    # the codes are those of the scale a checkpoint stores (the rounding passes
    # gradient straight through, as a dtype cast does under autograd).
    if sym:
        half = 2 ** (bits - 1)
        negative, positive = -low * alpha, high * beta
        negative_wins = negative > positive
        raw_scale = _rounded(torch.where(negative_wins, negative, -positive) / half, scale_dtype)
        scale = torch.where(
            raw_scale < 0,
            raw_scale.clamp(max=-SCALE_FLOOR),
            raw_scale.clamp(min=SCALE_FLOOR),
        )
        zero = torch.zeros_like(scale)
        low_code, high_code = -half, half - 1
    else:
        top = 2**bits - 1
        raw_scale = _rounded((high * beta - low * alpha) / top, scale_dtype)
        scale = raw_scale.clamp(min=SCALE_FLOOR)
        zero = torch.round(-low * alpha / scale)
        negative_wins = None
        low_code, high_code = 0, top
    if isinstance(offset, torch.Tensor):
        unclamped = torch.addcdiv(offset, grouped, scale[:, None]).round_()
    else:
        unclamped = torch.div(grouped, scale[:, None]).add_(offset).round_()
    if not sym:
        unclamped.add_(zero[:, None])
    level = unclamped.clamp(low_code, high_code)
    in_range = torch.eq(unclamped, level, out=unclamped)  # reuses the buffer, as 0.0 / 1.0
    if not sym:
        level.sub_(zero[:, None])
    return _Grid(scale, raw_scale, zero, level, in_range, negative_wins)


class _FakeQuantize(torch.autograd.Function):
    """``scale * level`` with straight-through rounding, and a hand-written backward.

    Autograd over the same formula records about 25 full-size elementwise
    kernels per weight; this forward needs 7 and this backward 6, in place
    where possible.  Gradients equal autograd's (rounding is the identity,
    clamps pass gradient inside their range).
    """

    @staticmethod
    def forward(ctx, grouped, offset, min_scale, max_scale, low, high, bits, sym, scale_dtype):
        alpha, beta = min_scale.clamp(0, 1), max_scale.clamp(0, 1)
        grid = _grid(grouped, offset, alpha, beta, low, high, bits, sym, scale_dtype)
        ctx.grid, ctx.bits, ctx.sym = grid, bits, sym
        ctx.save_for_backward(grouped, min_scale, max_scale, alpha, low, high)
        return grid.level * grid.scale[:, None]

    @staticmethod
    def backward(ctx, grad):
        grouped, min_scale, max_scale, alpha, low, high = ctx.saved_tensors
        grid, scale = ctx.grid, ctx.grid.scale
        masked = grad * grid.in_range
        grad_min = grad_max = None
        if ctx.needs_input_grad[2] or ctx.needs_input_grad[3]:
            # d loss / d scale: direct term, through x / scale, and (asymmetric) through the zero point
            grad_scale = torch.linalg.vecdot(grad, grid.level) - torch.linalg.vecdot(masked, grouped) / scale
            if ctx.sym:
                grad_raw = grad_scale * (grid.raw_scale.abs() >= SCALE_FLOOR) / 2 ** (ctx.bits - 1)
                grad_alpha = torch.where(grid.negative_wins, grad_raw, 0.0) * -low
                grad_beta = torch.where(grid.negative_wins, 0.0, -grad_raw) * high
            else:
                top = 2**ctx.bits - 1
                wmin = low * alpha
                # gradient mass on clamped positions
                unmasked_sum = grad.sum(-1) - masked.sum(-1)
                grad_scale = grad_scale + wmin / scale * unmasked_sum * -1
                grad_raw = grad_scale * (grid.raw_scale >= SCALE_FLOOR)
                grad_alpha = (unmasked_sum - grad_raw / top) * low
                grad_beta = grad_raw / top * high
            grad_min = grad_alpha * ((min_scale >= 0) & (min_scale <= 1))
            grad_max = grad_beta * ((max_scale >= 0) & (max_scale <= 1))
        grad_offset = masked.mul_(scale[:, None])
        return None, grad_offset, grad_min, grad_max, None, None, None, None, None


def fake_quantize(
    grouped: torch.Tensor,
    bits: int,
    sym: bool,
    offset: torch.Tensor | None = None,
    min_scale: torch.Tensor | None = None,
    max_scale: torch.Tensor | None = None,
    value_range: tuple[torch.Tensor, torch.Tensor] | None = None,
    scale_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Quantize-dequantize ``grouped``, differentiable in offset and min/max scales.

    With no offset and no scales this is plain round-to-nearest.
    ``value_range`` is :func:`group_range` of ``grouped``, when already known.
    ``scale_dtype`` (e.g. ``torch.float16``) rounds the scale to that dtype, as
    the checkpoint will store it; ``None`` keeps it in float32.
    """
    low, high = value_range if value_range is not None else group_range(grouped)
    ones = torch.ones_like(low)
    offset = torch.zeros_like(grouped) if offset is None else offset
    min_scale = ones if min_scale is None else min_scale
    max_scale = ones if max_scale is None else max_scale
    return _FakeQuantize.apply(grouped, offset, min_scale, max_scale, low, high, bits, sym, scale_dtype)


@torch.no_grad()
def quantize_codes(
    grouped: torch.Tensor,
    bits: int,
    sym: bool,
    offset: torch.Tensor | None = None,
    min_scale: torch.Tensor | None = None,
    max_scale: torch.Tensor | None = None,
    scale_dtype: torch.dtype | None = None,
) -> tuple[torch.Tensor, GroupCodes]:
    """The dequantized groups (equal to :func:`fake_quantize`'s) and their integer codes."""
    low, high = group_range(grouped)
    alpha = 1.0 if min_scale is None else min_scale.clamp(0, 1)
    beta = 1.0 if max_scale is None else max_scale.clamp(0, 1)
    grid = _grid(grouped, 0.0 if offset is None else offset, alpha, beta, low, high, bits, sym, scale_dtype)
    shift = 2 ** (bits - 1) if sym else grid.zero[:, None]
    zero = torch.full_like(grid.scale, 2 ** (bits - 1)) if sym else grid.zero
    codes = GroupCodes((grid.level + shift).to(torch.uint8), grid.scale.float(), zero.to(torch.uint8))
    return grid.scale[:, None] * grid.level, codes


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
