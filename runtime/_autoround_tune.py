"""The per-block SignSGD loop of AutoRound.

Each quantized weight of a block (see :mod:`._autoround_layers`) gets a
:class:`WeightTuner`: a rounding offset
``V`` (grouped weight shape, starts at 0) and per-group min/max clipping scales
(start at 1; their stored values are clamped to ``[0, 1]`` before every use,
as the reference does).  The block runs through :func:`torch.func.functional_call` with
the tuners' fake-quantized weights substituted, so the block's modules are
never replaced, wrapped or hooked.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from hooklint.runtime import require_torch
from hooklint.runtime._autoround_capture import BlockInputs, _device_of
from hooklint.runtime._autoround_layers import WeightSpec, from_matrix, to_matrix
from hooklint.runtime._autoround_quant import (
    GroupCodes,
    fake_quantize,
    from_groups,
    group_range,
    quantize_codes,
    to_groups,
)

torch = require_torch()
nn = torch.nn


class WeightTuner:
    """Learnable rounding state of one weight (a Linear's, a Conv1D's or fused experts')."""

    def __init__(
        self,
        weight: torch.Tensor,
        spec: WeightSpec,
        tune_minmax: bool,
        scale_dtype: torch.dtype | None = None,
    ):
        weight = weight.detach()
        self.spec = spec
        # The dtype the scale is rounded to while tuning (the export's, so the tuned
        # rounding is that of the stored scale); None keeps float32.
        self.scale_dtype = scale_dtype
        self.shape = tuple(weight.shape)
        self.dtype = weight.dtype
        self.bits, self.sym = spec.bits, spec.sym
        matrix = to_matrix(spec, weight.float())
        self.matrix_shape = tuple(matrix.shape)
        self.grouped, self.pad = to_groups(matrix, spec.group_size)
        self.value_range = group_range(self.grouped)
        groups = self.grouped.shape[0]
        self.offset = torch.zeros_like(self.grouped, requires_grad=True)
        self.min_scale = torch.ones(groups, device=weight.device, requires_grad=tune_minmax)
        self.max_scale = torch.ones(groups, device=weight.device, requires_grad=tune_minmax)

    def _unview(self, grouped: torch.Tensor) -> torch.Tensor:
        matrix = from_groups(grouped, self.matrix_shape, self.pad)
        return from_matrix(self.spec, matrix).to(self.dtype)

    def scale_parameters(self) -> list[torch.Tensor]:
        """The clipping scales, when they are tuned."""
        return [self.min_scale, self.max_scale] if self.min_scale.requires_grad else []

    def clamp_scales(self) -> None:
        """Clamp the clipping scales' values into ``[0, 1]`` in place.

        As in the reference, the stored values are clamped (not only the
        values used), so a scale that a step pushed past 1 (or below 0) is
        back on the boundary with a live gradient at the next iteration; a
        functional clamp alone would zero its gradient there and freeze it.
        """
        with torch.no_grad():
            self.min_scale.clamp_(0, 1)
            self.max_scale.clamp_(0, 1)

    def weight(self) -> torch.Tensor:
        """Fake-quantized weight in the layer's shape and dtype (differentiable)."""
        self.clamp_scales()
        grouped = fake_quantize(
            self.grouped,
            self.bits,
            self.sym,
            self.offset,
            self.min_scale,
            self.max_scale,
            self.value_range,
            self.scale_dtype,
        )
        return self._unview(grouped)

    def codes(self) -> tuple[torch.Tensor, GroupCodes]:
        """The quantized weight (layer shape and dtype) and its integer codes, without grad."""
        grouped, codes = quantize_codes(
            self.grouped,
            self.bits,
            self.sym,
            self.offset,
            self.min_scale,
            self.max_scale,
            self.scale_dtype,
        )
        return self._unview(grouped), codes

    def folded(self, scale_dtype: torch.dtype | None) -> tuple[torch.Tensor, GroupCodes]:
        """:meth:`codes` with the scale rounded to ``scale_dtype`` (the export's) and the
        weight rebuilt from the codes, so it equals what an exported checkpoint holds."""
        _, codes = self.codes()
        if scale_dtype is not None:
            codes.scale = codes.scale.to(scale_dtype).float()
        levels = codes.codes.float() - codes.zero.float()[:, None]
        return self._unview(codes.scale[:, None] * levels), codes

    def snapshot(self) -> tuple[torch.Tensor, ...]:
        """Copies of the current offset and scales."""
        return tuple(t.detach().clone() for t in (self.offset, self.min_scale, self.max_scale))

    def snapshot_into(self, state: tuple[torch.Tensor, ...]) -> None:
        """Overwrite an earlier :meth:`snapshot` with the current values (no allocation)."""
        with torch.no_grad():
            for target, value in zip(state, (self.offset, self.min_scale, self.max_scale)):
                target.copy_(value)

    def restore(self, state: tuple[torch.Tensor, ...]) -> None:
        """Load a :meth:`snapshot`."""
        with torch.no_grad():
            for target, value in zip((self.offset, self.min_scale, self.max_scale), state):
                target.copy_(value)


LinearTuner = WeightTuner  # the earlier name


@dataclass(frozen=True)
class TuneSettings:
    """Hyper-parameters of the SignSGD loop."""

    iters: int
    lr: float
    minmax_lr: float
    batch_size: int
    gradient_accumulate_steps: int
    rng: random.Random
    """The sample-order stream, shared by all blocks of one quantize call."""
    amp_dtype: torch.dtype | None = None
    """The dtype the tuning forward runs its matrix products in, by
    :class:`torch.autocast` (``None``: the block's own dtype, no autocast)."""


@dataclass(frozen=True)
class TuneResult:
    """Iteration-0 (round-to-nearest) loss, best loss and the iteration that reached it."""

    initial_loss: float
    best_loss: float
    best_iteration: int


def tune_block(
    block: nn.Module,
    tuners: dict[str, LinearTuner],
    inputs: BlockInputs,
    targets: torch.Tensor,
    settings: TuneSettings,
    on_iteration: Callable[[int, float], None],
) -> TuneResult:
    """Minimise MSE(quantized block(inputs), targets) over the tuners' parameters.

    With ``settings.amp_dtype`` the block's forward runs under
    :class:`torch.autocast` (its matrix products and attention in that dtype,
    their backward too); the weights, the tuned parameters, the targets and the
    loss stay in their own dtype.

    Positions a calibration item's 2-D ``attention_mask`` marks as padding
    (``inputs.loss_mask``) are left out of the mean.

    Each iteration runs ``gradient_accumulate_steps`` batches of ``batch_size``
    samples, drawn without replacement within an epoch by :class:`_EpochSampler`
    (the reference's sample order); SignSGD with learning rates decayed linearly to 0,
    one decay step per iteration.  The loss of each iteration is measured
    before its update; the parameters of the best iteration are loaded into
    the tuners on return.
    ``on_iteration(i, loss)``
    runs after each iteration's backward pass.
    """
    groups = [([t.offset for t in tuners.values()], settings.lr)]
    groups.append(([p for t in tuners.values() for p in t.scale_parameters()], settings.minmax_lr))
    count, steps = len(inputs), settings.gradient_accumulate_steps
    per_step = min(settings.batch_size, count)
    sampler = _EpochSampler(count, min(per_step * steps, count), settings.rng)
    best_loss, best_iteration, initial_loss = math.inf, 0, math.nan
    best_state = {name: tuner.snapshot() for name, tuner in tuners.items()}

    for iteration in range(settings.iters):
        # Quantize once per iteration; the steps accumulate gradients on detached copies of
        # the weights, which are then pushed through the quantizer in one backward call.
        weights = {tuner.spec.key: tuner.weight() for tuner in tuners.values()}
        leaves = {key: weight.detach().requires_grad_() for key, weight in weights.items()}
        quantized_forward = _forward_with(block, leaves)
        # Summed on the device in float64 (as Python floats would be: same value) and read
        # once per iteration, not once per step: no per-step device sync.
        loss_sum = None
        batches = sampler.next_batch().split(per_step)
        for indices in batches:
            with _autocast(block, settings.amp_dtype):
                output = inputs.call(block, indices, quantized_forward)
            target = targets[indices.to(targets.device)].to(output.device)
            token_weights = inputs.loss_weights(indices, output.device)
            if token_weights is None:
                loss = torch.nn.functional.mse_loss(output.float(), target.float())
            else:  # padded positions (attention_mask 0) are left out of the loss
                squared = (output.float() - target.float()).pow(2) * token_weights[..., None]
                loss = squared.sum() / (token_weights.sum() * output.shape[-1]).clamp(min=1)
            step_loss = loss.detach().double()
            loss_sum = step_loss if loss_sum is None else loss_sum + step_loss
            loss.backward()
        used = [key for key, leaf in leaves.items() if leaf.grad is not None]
        torch.autograd.backward([weights[key] for key in used], [leaves[key].grad for key in used])
        loss_value = loss_sum.item() / len(batches)
        if iteration == 0:
            initial_loss = loss_value
        if loss_value < best_loss:
            best_loss, best_iteration = loss_value, iteration
            for name, tuner in tuners.items():
                tuner.snapshot_into(best_state[name])
        on_iteration(iteration, loss_value)
        decay = 1.0 - iteration / settings.iters
        with torch.no_grad():
            for params, lr in groups:
                for param in params:
                    # None: the layer is unused by this block's forward.
                    if param.grad is not None:
                        param.add_(param.grad.sign_(), alpha=-lr * decay)
                        param.grad = None
    for name, tuner in tuners.items():
        tuner.restore(best_state[name])
    return TuneResult(initial_loss, best_loss, best_iteration)


class _EpochSampler:
    """Shuffled batches without replacement, in the reference's order.

    The indices ``0 .. count-1`` are shuffled once; each call returns the
    next ``size`` of them; when fewer than ``size`` remain, the same list is
    shuffled again in place and the remainder dropped.  Every sample is thus
    used once per epoch, instead of each batch being an independent draw.

    The shuffles draw from ``rng``, a :class:`random.Random` that
    :meth:`AutoRound.quantize` seeds once with ``seed`` and passes on from
    block to block: the reference's ``IndexSampler`` does the same with the
    ``random`` module's state, which it seeds once, so for equal
    ``seed``, ``nsamples``, ``batch_size`` and ``gradient_accumulate_steps`` both
    tune every block on the same batches in the same order (and a
    comparison at one seed compares the implementations, not two orders).
    """

    def __init__(self, count: int, size: int, rng: random.Random):
        if not 0 < size <= count:
            raise ValueError(f"batch size must be in 1..{count}, got {size}")
        self.count, self.size, self.rng = count, size, rng
        self.order = list(range(count))
        rng.shuffle(self.order)
        self.position = 0

    def next_batch(self) -> torch.Tensor:
        if self.position + self.size > self.count:
            self.rng.shuffle(self.order)
            self.position = 0
        batch = self.order[self.position : self.position + self.size]
        self.position += self.size
        return torch.tensor(batch, dtype=torch.long)


def _autocast(block: nn.Module, dtype: torch.dtype | None):
    """``torch.autocast`` to ``dtype`` on the block's device type; a no-op context for ``None``."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=_device_of(block, torch.device("cpu")).type, dtype=dtype)


def _forward_with(block: nn.Module, weights: dict[str, torch.Tensor]):
    """A ``forward(args, kwargs)`` for :meth:`BlockInputs.call` running ``block`` with ``weights``."""

    def forward(args, kwargs):
        return torch.func.functional_call(block, weights, args, kwargs, strict=False)

    return forward
