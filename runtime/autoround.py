"""AutoRound weight-only quantization (and round-to-nearest), in pure torch.

AutoRound (Cheng et al., "Optimize Weight Rounding via Signed Gradient Descent
for the Quantization of LLMs") quantizes a model block by block: for every
``nn.Linear`` in a block it learns a rounding offset and per-group clipping
scales by SignSGD, minimising the MSE between the quantized block's output on
quantized inputs and the fp block's output on fp inputs.

The calibration capture cannot leak, by construction: one forward pre-hook on
the first block stores its inputs and stops the model forward, and it is
removed in ``finally`` before any block is optimised; each later block's
inputs are the previous block's outputs, computed directly, and each input set
is dropped once the next one exists.  The quantized forward during tuning uses
:func:`torch.func.functional_call`, so no module is replaced, wrapped or
hooked, and an exception leaves the model with its original weights.

Example::

    from hooklint.runtime.autoround import AutoRound

    quantizer = AutoRound(bits=4, group_size=128)
    stats = quantizer.quantize(model, quantizer.calibration_from_tokens(token_ids))
    packed = quantizer.export_state_dict(model)   # qweight / scales / qzeros
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hooklint.runtime import require_torch
from hooklint.runtime._autoround_capture import (
    BlockInputs,
    capture_block_inputs,
    find_blocks,
)
from hooklint.runtime._autoround_quant import GroupCodes, pack_codes, unpack_codes
from hooklint.runtime._autoround_tune import LinearTuner, TuneSettings, tune_block

torch = require_torch()
nn = torch.nn

__all__ = [
    "AutoRound",
    "BlockStats",
    "IterationEvent",
    "dequantize_packed",
    "find_blocks",
]


@dataclass(frozen=True)
class BlockStats:
    """Outcome of one block.  Losses are None in round-to-nearest mode.

    ``initial_loss`` is iteration 0's loss, which is the round-to-nearest loss.
    """

    index: int
    name: str
    initial_loss: float | None
    best_loss: float | None
    best_iteration: int | None
    seconds: float


@dataclass(frozen=True)
class IterationEvent:
    """Passed to ``on_iteration`` after each tuning iteration's backward pass."""

    block_index: int
    block: nn.Module
    iteration: int
    loss: float
    inputs: BlockInputs  # the store the block is being tuned on


@dataclass(frozen=True)
class _QuantizedWeight:
    """Integer codes of one folded ``nn.Linear`` weight."""

    codes: GroupCodes
    shape: tuple[int, int]


class AutoRound:
    """AutoRound quantizer; ``iters=0`` (or :meth:`rtn`) gives round-to-nearest.

    Defaults follow Intel's ``auto-round``: 4 bits, asymmetric, groups of 128
    input columns, 200 iterations, 128 samples of 2048 tokens, batches of 8,
    ``lr = minmax_lr = 1 / iters`` decayed linearly to 0, min/max tuning and
    quantized block inputs on.  ``progress=None`` shows a bar only when
    stderr is a terminal.  ``on_iteration`` receives an :class:`IterationEvent`.
    """

    def __init__(
        self,
        bits: int = 4,
        group_size: int = 128,
        sym: bool = False,
        iters: int = 200,
        *,
        lr: float | None = None,
        minmax_lr: float | None = None,
        nsamples: int = 128,
        seqlen: int = 2048,
        batch_size: int = 8,
        gradient_accumulate_steps: int = 1,
        enable_minmax_tuning: bool = True,
        enable_quanted_input: bool = True,
        seed: int = 42,
        progress: bool | None = None,
        on_iteration: Callable[[IterationEvent], None] | None = None,
    ):
        if not 1 <= bits <= 8:
            raise ValueError(f"bits must be in 1..8, got {bits}")
        self.bits, self.group_size, self.sym, self.iters = bits, group_size, sym, iters
        self.lr = lr if lr is not None else 1.0 / max(iters, 1)
        self.minmax_lr = minmax_lr if minmax_lr is not None else self.lr
        self.nsamples, self.seqlen, self.batch_size = nsamples, seqlen, batch_size
        self.gradient_accumulate_steps = gradient_accumulate_steps
        self.enable_minmax_tuning = enable_minmax_tuning
        self.enable_quanted_input = enable_quanted_input
        self.seed = seed
        self.progress = progress
        self.on_iteration = on_iteration
        self.quantized: dict[str, _QuantizedWeight] = {}

    @classmethod
    def rtn(cls, bits: int = 4, group_size: int = 128, sym: bool = False) -> AutoRound:
        """A round-to-nearest quantizer (no calibration needed)."""
        return cls(bits, group_size, sym, iters=0)

    def calibration_from_tokens(self, token_ids: torch.Tensor) -> list[torch.Tensor]:
        """Cut a 1-D token stream into ``nsamples`` inputs of shape ``(1, seqlen)``."""
        usable = min(self.nsamples, token_ids.numel() // self.seqlen)
        if usable == 0:
            raise ValueError(
                f"need at least {self.seqlen} tokens, got {token_ids.numel()}"
            )
        chunks = token_ids[: usable * self.seqlen].reshape(usable, 1, self.seqlen)
        return list(chunks)

    def quantize(
        self,
        model: nn.Module,
        calibration: Iterable[Any] | None = None,
        *,
        blocks: Sequence[nn.Module] | None = None,
    ) -> list[BlockStats]:
        """Quantize the weights of every ``nn.Linear`` in ``blocks``, in place.

        ``blocks`` defaults to :func:`find_blocks`.  ``calibration`` items are
        model inputs (tensor, dict or tuple); it is not needed for RTN.  The
        model's train/eval mode and ``requires_grad`` flags are restored on
        return or on error.  The codes kept for :meth:`export_state_dict` are
        those of the last call.
        """
        blocks = list(blocks) if blocks is not None else find_blocks(model)
        self.quantized = {}
        module_names = {id(module): name for name, module in model.named_modules()}
        names = [
            module_names.get(id(block), f"block{i}") for i, block in enumerate(blocks)
        ]
        trainable = [p for p in model.parameters() if p.requires_grad]
        was_training = model.training
        progress = _Progress(len(blocks) * max(self.iters, 1), self.progress)
        model.eval()
        for param in trainable:
            param.requires_grad_(False)
        try:
            if self.iters == 0:
                return [
                    self._round_block(i, block, names[i], progress)
                    for i, block in enumerate(blocks)
                ]
            if calibration is None:
                raise ValueError(
                    "AutoRound needs calibration data (or use AutoRound.rtn())"
                )
            return self._tune_blocks(model, blocks, names, calibration, progress)
        finally:
            for param in trainable:
                param.requires_grad_(True)
            model.train(was_training)
            progress.close()

    def export_state_dict(self, model: nn.Module) -> dict[str, torch.Tensor]:
        """``model.state_dict()`` with each quantized ``W.weight`` replaced by packed integers.

        Per quantized layer: ``qweight`` (int32, ``32 // bits`` codes per word
        along the input dim, padded to whole groups), ``scales`` (float32,
        ``(out, groups)``) and ``qzeros`` (int32, zero points packed like the
        codes).  :func:`dequantize_packed` inverts it.
        """
        state = model.state_dict()
        for name, weight in self.quantized.items():
            del state[f"{name}.weight"]
            rows = weight.shape[0]
            state[f"{name}.qweight"] = pack_codes(
                weight.codes.codes.reshape(rows, -1), self.bits
            )
            state[f"{name}.scales"] = weight.codes.scale.reshape(rows, -1)
            state[f"{name}.qzeros"] = pack_codes(
                weight.codes.zero.reshape(rows, -1), self.bits
            )
        return state

    def _capture(
        self, model: nn.Module, block: nn.Module, calibration: Iterable[Any]
    ) -> BlockInputs:
        """Inputs of the first block for ``nsamples`` calibration samples."""
        return capture_block_inputs(model, block, calibration, self.nsamples)

    def _tune_blocks(
        self, model, blocks, names, calibration, progress
    ) -> list[BlockStats]:
        fp_inputs = self._capture(model, blocks[0], calibration)
        q_inputs = fp_inputs
        stats = []
        for index, block in enumerate(blocks):
            started = time.perf_counter()
            targets = self._run(block, fp_inputs)
            tuners = self._tuners(block)

            def report(
                iteration: int, loss: float, index=index, block=block, inputs=q_inputs
            ) -> None:
                progress.advance(f"block {index + 1}/{len(blocks)} loss {loss:.3g}")
                if self.on_iteration is not None:
                    self.on_iteration(
                        IterationEvent(index, block, iteration, loss, inputs)
                    )

            settings = TuneSettings(
                self.iters,
                self.lr,
                self.minmax_lr,
                self.batch_size,
                self.gradient_accumulate_steps,
                self.seed + index,
            )
            result = tune_block(block, tuners, q_inputs, targets, settings, report)
            self._fold(names[index], block, tuners)
            del tuners, report
            # The next block's inputs replace, and so release, this block's.
            if index + 1 < len(blocks):
                if self.enable_quanted_input:
                    q_inputs = q_inputs.replaced(self._run(block, q_inputs))
                fp_inputs = fp_inputs.replaced(targets)
                if not self.enable_quanted_input:
                    q_inputs = fp_inputs
            del targets
            stats.append(
                BlockStats(
                    index,
                    names[index],
                    result.initial_loss,
                    result.best_loss,
                    result.best_iteration,
                    time.perf_counter() - started,
                )
            )
        return stats

    def _round_block(self, index, block, name, progress) -> BlockStats:
        started = time.perf_counter()
        self._fold(name, block, self._tuners(block))
        progress.advance(f"block {index + 1} (round-to-nearest)")
        return BlockStats(index, name, None, None, None, time.perf_counter() - started)

    def _tuners(self, block: nn.Module) -> dict[str, LinearTuner]:
        return {
            name: LinearTuner(
                module, self.bits, self.group_size, self.sym, self.enable_minmax_tuning
            )
            for name, module in block.named_modules()
            if isinstance(module, nn.Linear)
        }

    def _fold(
        self, prefix: str, block: nn.Module, tuners: dict[str, LinearTuner]
    ) -> None:
        """Write each tuner's quantized weight into its layer and keep its codes."""
        with torch.no_grad():
            for name, tuner in tuners.items():
                weight, codes = tuner.codes()
                block.get_submodule(name).weight.copy_(weight)
                self.quantized[f"{prefix}.{name}"] = _QuantizedWeight(
                    codes, tuner.shape
                )

    def _run(self, block: nn.Module, inputs: BlockInputs) -> torch.Tensor:
        """The block's hidden-state outputs for every sample, in batches."""
        with torch.no_grad():
            batches = torch.arange(len(inputs)).split(self.batch_size)
            return torch.cat([inputs.call(block, indices) for indices in batches])


def dequantize_packed(
    qweight: torch.Tensor,
    scales: torch.Tensor,
    qzeros: torch.Tensor,
    *,
    bits: int,
    group_size: int,
    in_features: int,
) -> torch.Tensor:
    """Rebuild a float32 weight ``(out, in_features)`` from :meth:`AutoRound.export_state_dict`."""
    rows, groups = scales.shape
    size = in_features if group_size <= 0 else group_size
    codes = (
        unpack_codes(qweight, bits, groups * size).reshape(rows, groups, size).float()
    )
    zeros = unpack_codes(qzeros, bits, groups).float()
    weight = scales[..., None] * (codes - zeros[..., None])
    return weight.reshape(rows, -1)[:, :in_features]


class _Progress:
    """A one-line bar on stderr over blocks x iterations; silent when disabled.

    ``enabled=None`` means: only when stderr is a terminal.
    """

    def __init__(self, total: int, enabled: bool | None):
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done = 0
        self.last_draw = 0.0

    def advance(self, label: str) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.last_draw > 0.1 or self.done == self.total):
            self.last_draw = now
            filled = 30 * self.done // self.total
            sys.stderr.write(
                f"\rautoround [{'#' * filled}{'.' * (30 - filled)}] {label}   "
            )
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\n")
