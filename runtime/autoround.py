"""AutoRound weight-only quantization (and round-to-nearest), in pure torch.

AutoRound (Cheng et al., "Optimize Weight Rounding via Signed Gradient Descent
for the Quantization of LLMs") quantizes a model block by block: for every
weight in a block (``nn.Linear``, transformers' ``Conv1D``, fused 3-D expert
weights; see :mod:`._autoround_layers`) it learns a rounding offset and
per-group clipping scales by SignSGD, minimising the MSE between the quantized
block's output on quantized inputs and the fp block's output on fp inputs.

The calibration capture cannot leak, by construction: forward pre-hooks on
the first blocks store their inputs and stop the model forward (run with
``use_cache=False``, no cache object kept), and they are removed in
``finally`` before any block is optimised; each later block's
inputs are the previous block's outputs, computed directly, and each input set
is dropped once the next one exists.  The quantized forward during tuning uses
:func:`torch.func.functional_call`, so no module is replaced, wrapped or
hooked, and an exception leaves the model with its original weights.

Example::

    from hooklint.runtime.autoround import AutoRound

    quantizer = AutoRound(bits=4, group_size=128)
    stats = quantizer.quantize(model, quantizer.calibration_from_tokens(token_ids))
    quantizer.export(model, "out-dir")            # GPTQ checkpoint
"""

from __future__ import annotations

import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hooklint.runtime import require_torch
from hooklint.runtime._autoround_capture import (
    BlockInputs,
    capture_inputs,
    find_block_stacks,
    find_blocks,
    same_extras,
)
from hooklint.runtime._autoround_layers import (
    DEFAULT_SKIP,
    MAX_UNSUPPORTED_SHARE,
    Coverage,
    WeightSpec,
    plan_block,
)
from hooklint.runtime._autoround_quant import GroupCodes, pack_codes, unpack_codes
from hooklint.runtime._autoround_tune import TuneSettings, WeightTuner, tune_block

torch = require_torch()
nn = torch.nn

__all__ = [
    "DEFAULT_SKIP",
    "MAX_UNSUPPORTED_SHARE",
    "AutoRound",
    "BlockStats",
    "Coverage",
    "IterationEvent",
    "QuantizedWeight",
    "dequantize_packed",
    "find_block_stacks",
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
class QuantizedWeight:
    """Integer codes of one folded weight, in the grouped layout of its matrix view.

    ``module`` is the full module name; ``spec`` says which parameter, its
    kind (linear, conv1d, experts), shape and settings.
    """

    codes: GroupCodes
    spec: WeightSpec
    module: str

    @property
    def shape(self) -> tuple[int, ...]:
        return self.spec.shape

    @property
    def base(self) -> str:
        """Name prefix of the exported tensors: the module, or ``module.param`` for experts."""
        return self.module if self.spec.param == "weight" else f"{self.module}.{self.spec.param}"

    @property
    def rows(self) -> int:
        """Rows of the matrix view (output features, times experts)."""
        return self.codes.scale.numel() // self.groups_per_row

    @property
    def groups_per_row(self) -> int:
        size = self.spec.group_size if self.spec.group_size > 0 else self.spec.in_features
        return -(-self.spec.in_features // size)


_QuantizedWeight = QuantizedWeight


class _Replay:
    """Iterates ``source`` once, keeping what it yielded, so that later captures can re-read it."""

    def __init__(self, source: Iterable[Any]):
        self.source: Iterator[Any] = iter(source)
        self.seen: list[Any] = []

    def __iter__(self):
        yield from self.seen
        for item in self.source:
            self.seen.append(item)
            yield item


class AutoRound:
    """AutoRound quantizer; ``iters=0`` (or :meth:`rtn`) gives round-to-nearest.

    Defaults follow Intel's ``auto-round``: 4 bits, asymmetric, groups of 128
    input columns, 200 iterations, 128 samples of 2048 tokens, batches of 8,
    ``lr = minmax_lr = 1 / iters`` decayed linearly to 0, min/max tuning and
    quantized block inputs on.  ``progress=None`` shows a bar only when
    stderr is a terminal.  ``on_iteration`` receives an :class:`IterationEvent`.
    ``amp_dtype=torch.bfloat16`` runs the tuning forward and backward under
    :class:`torch.autocast` (matrix products and attention in bf16: several
    times faster on a CPU with bf16 instructions or on a GPU); the weights, the
    tuned parameters, the fp targets, each next block's inputs and the loss
    stay in the model's dtype.  The package's ``amp`` (on by default where the
    device supports bf16) casts the whole model instead.
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
        layer_config: Mapping[str, object] | None = None,
        on_skip: str = "raise",
        max_unsupported_share: float = MAX_UNSUPPORTED_SHARE,
        scale_dtype: torch.dtype | None = torch.float16,
        device: str | torch.device | None = None,
        pin_memory: bool = False,
        amp_dtype: torch.dtype | None = None,
    ):
        if not 1 <= bits <= 8:
            raise ValueError(f"bits must be in 1..8, got {bits}")
        if on_skip not in ("raise", "warn", "ignore"):
            raise ValueError(f"on_skip must be 'raise', 'warn' or 'ignore', got {on_skip!r}")
        self.layer_config = dict(layer_config or {})
        self.on_skip, self.max_unsupported_share = on_skip, max_unsupported_share
        self.scale_dtype = scale_dtype
        self.device = torch.device(device) if device is not None else None
        self.pin_memory = pin_memory
        if amp_dtype is not None and amp_dtype not in (torch.bfloat16, torch.float16):
            raise ValueError(f"amp_dtype must be torch.bfloat16, torch.float16 or None, got {amp_dtype!r}")
        self.amp_dtype = amp_dtype
        self.coverage: Coverage | None = None
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
        self.quantized: dict[str, QuantizedWeight] = {}

    @classmethod
    def rtn(cls, bits: int = 4, group_size: int = 128, sym: bool = False, **options) -> AutoRound:
        """A round-to-nearest quantizer (no calibration needed)."""
        return cls(bits, group_size, sym, iters=0, **options)

    def calibration_from_tokens(self, token_ids: torch.Tensor) -> list[torch.Tensor]:
        """Cut a 1-D token stream into ``nsamples`` inputs of shape ``(1, seqlen)``."""
        usable = min(self.nsamples, token_ids.numel() // self.seqlen)
        if usable == 0:
            raise ValueError(f"need at least {self.seqlen} tokens, got {token_ids.numel()}")
        chunks = token_ids[: usable * self.seqlen].reshape(usable, 1, self.seqlen)
        return list(chunks)

    def quantize(
        self,
        model: nn.Module,
        calibration: Iterable[Any] | None = None,
        *,
        blocks: Sequence[nn.Module] | None = None,
    ) -> list[BlockStats]:
        """Quantize the weights of every block, in place.

        ``blocks`` defaults to every stack of :func:`find_block_stacks` (an
        encoder's and a decoder's), quantized stack by stack.  In each block,
        ``nn.Linear``, transformers' ``Conv1D`` and fused 3-D expert weights
        are quantized, with ``layer_config`` applied and :data:`DEFAULT_SKIP`
        (``lm_head``, routers) skipped; :attr:`coverage` says what was
        quantized and skipped.  A run that would quantize nothing, or leave
        more than ``max_unsupported_share`` of the block weights unquantized
        for want of support, raises ValueError before any work (``on_skip=
        "warn"`` warns instead).  ``calibration`` items are model inputs
        (tensor, dict or tuple); it is not needed for RTN.  The model's
        train/eval mode, ``requires_grad`` flags and ``config.use_cache`` are
        restored on return or on error.  The codes kept for
        :meth:`export_state_dict` and :func:`~hooklint.runtime.autoround_export.export`
        are those of the last call.
        """
        stacks = [list(blocks)] if blocks is not None else find_block_stacks(model)
        self.quantized = {}
        module_names = {id(module): name for name, module in model.named_modules()}
        flat_blocks = [block for stack in stacks for block in stack]
        position = {id(block): i for i, block in enumerate(flat_blocks)}
        named = [
            [(module_names.get(id(block), f"block{position[id(block)]}"), block) for block in stack]
            for stack in stacks
        ]
        plans = self._plan(named)
        trainable = [p for p in model.parameters() if p.requires_grad]
        was_training = model.training
        total_blocks = sum(len(stack) for stack in named)
        progress = _Progress(total_blocks * max(self.iters, 1), self.progress)
        model.eval()
        for param in trainable:
            param.requires_grad_(False)
        try:
            if self.iters == 0:
                flat = [entry for stack in named for entry in stack]
                return [
                    self._round_block(i, block, name, plans[id(block)], progress, total_blocks)
                    for i, (name, block) in enumerate(flat)
                ]
            if calibration is None:
                raise ValueError("AutoRound needs calibration data (or use AutoRound.rtn())")
            replay = _Replay(calibration)
            # one sample-order stream for the whole run, as the reference's (see _EpochSampler)
            rng = random.Random(self.seed)
            stats: list[BlockStats] = []
            for stack in named:
                stats.extend(
                    self._tune_stack(model, stack, plans, replay, progress, len(stats), total_blocks, rng)
                )
            return stats
        finally:
            for param in trainable:
                param.requires_grad_(True)
            model.train(was_training)
            progress.close()

    def _plan(self, named) -> dict[int, list[WeightSpec]]:
        """Every block's weight specs; checks coverage before any work is done."""
        plans: dict[int, list[WeightSpec]] = {}
        quantized: dict[str, WeightSpec] = {}
        skipped, total = [], 0
        defaults = (self.bits, self.group_size, self.sym)
        for stack in named:
            for name, block in stack:
                specs, block_skipped, block_total = plan_block(block, name, defaults, self.layer_config)
                plans[id(block)] = specs
                for spec in specs:
                    quantized[f"{name}.{spec.key}"] = spec
                skipped.extend(block_skipped)
                total += block_total
        self.coverage = Coverage(quantized, skipped, total)
        problem = None
        if not quantized:
            problem = "nothing to quantize"
        elif self.coverage.unsupported_share > self.max_unsupported_share:
            problem = (
                f"{self.coverage.unsupported_share:.1%} of the block weights have an "
                f"unsupported layer type (limit {self.max_unsupported_share:.0%})"
            )
        if problem is not None:
            message = f"AutoRound: {problem}: {self.coverage.summary()}"
            if self.on_skip == "raise":
                raise ValueError(message + " (pass on_skip='warn' to go on)")
            if self.on_skip == "warn":
                warnings.warn(message, stacklevel=3)
        return plans

    def export_state_dict(self, model: nn.Module) -> dict[str, torch.Tensor]:
        """``model.state_dict()`` with each quantized weight replaced by packed integers.

        Per quantized weight (named by its module, or ``module.param`` for
        fused experts), in the grouped layout of its matrix view ``(rows, in)``
        (a Conv1D's transpose; experts times out rows): ``qweight`` (int32,
        ``32 // bits`` codes per word along the input dim, padded to whole
        groups), ``scales`` (float32, ``(rows, groups)``) and ``qzeros``
        (int32, zero points packed like the codes).  :func:`dequantize_packed`
        inverts it.  For the GPTQ checkpoint layout that inference engines
        read, use :func:`hooklint.runtime.autoround_export.export`.
        """
        state = model.state_dict()
        for weight in self.quantized.values():
            spec = weight.spec
            del state[f"{weight.module}.{spec.param}"]
            rows = weight.rows
            state[f"{weight.base}.qweight"] = pack_codes(weight.codes.codes.reshape(rows, -1), spec.bits)
            state[f"{weight.base}.scales"] = weight.codes.scale.reshape(rows, -1)
            state[f"{weight.base}.qzeros"] = pack_codes(weight.codes.zero.reshape(rows, -1), spec.bits)
        return state

    def export(self, model: nn.Module, path, format: str = "gptq", **options):
        """Write the model this quantizer last quantized as a GPTQ checkpoint.

        See :func:`hooklint.runtime.autoround_export.export`; load it back with
        :func:`hooklint.runtime.autoround_export.load_quantized`.
        """
        from hooklint.runtime.autoround_export import export

        return export(model, path, self, format, **options)

    def _capture(self, model: nn.Module, blocks: Sequence[nn.Module], calibration: Iterable[Any]):
        """The first block's inputs and the extras of ``blocks`` for ``nsamples`` samples."""
        store = torch.device("cpu") if self.device is not None else None
        return capture_inputs(
            model,
            list(blocks),
            calibration,
            self.nsamples,
            store_device=store,
            pin_memory=self.pin_memory,
        )

    def _tune_stack(
        self, model, stack, plans, replay, progress, first_index, total_blocks, rng
    ) -> list[BlockStats]:
        """Tune one block stack.

        One capture forward records block 0's inputs and the extra arguments
        (masks, position embeddings...) of blocks 0-2.  Usually all blocks get
        the same extras; when block 0's differ from block 1's but 1's equal
        2's (T5: block 0 computes the position bias the later ones receive),
        blocks from 1 on use block 1's; otherwise each block's extras are
        captured again before it is tuned.
        """
        blocks = [block for _, block in stack]
        captured = self._capture(model, blocks[:3], replay)
        fp_inputs = captured.inputs
        later_extras = None
        recapture = False
        if len(blocks) > 1 and not same_extras(captured.extras[0], captured.extras[1]):
            if len(blocks) == 2 or same_extras(captured.extras[1], captured.extras[2]):
                later_extras = captured.extras[1]
            else:
                recapture = True
        del captured
        q_inputs = fp_inputs
        stats = []
        for position, (name, block) in enumerate(stack):
            index = first_index + position
            started = time.perf_counter()
            if position > 0 and (later_extras is not None or recapture):
                extras = (
                    later_extras
                    if later_extras is not None
                    else self._capture(model, [block], replay).extras[0]
                )
                fp_inputs = fp_inputs.replaced(fp_inputs.hidden, extras)
                q_inputs = (
                    fp_inputs
                    if q_inputs.hidden is fp_inputs.hidden
                    else q_inputs.replaced(q_inputs.hidden, extras)
                )
                later_extras = None if not recapture else later_extras
            home = _device_of(block)
            if self.device is not None:
                block.to(self.device)
            try:
                targets = self._run(block, fp_inputs)
                tuners = self._tuners(block, plans[id(block)])

                def report(iteration: int, loss: float, index=index, block=block, inputs=q_inputs) -> None:
                    progress.advance(f"block {index + 1}/{total_blocks} loss {loss:.3g}")
                    if self.on_iteration is not None:
                        self.on_iteration(IterationEvent(index, block, iteration, loss, inputs))

                settings = TuneSettings(
                    self.iters,
                    self.lr,
                    self.minmax_lr,
                    self.batch_size,
                    self.gradient_accumulate_steps,
                    rng,
                    self.amp_dtype,
                )
                result = tune_block(block, tuners, q_inputs, targets, settings, report)
                self._fold(name, block, tuners)
                del tuners, report
                # The next block's inputs replace, and so release, this block's.
                if position + 1 < len(stack):
                    if self.enable_quanted_input:
                        q_inputs = q_inputs.replaced(self._run(block, q_inputs))
                    fp_inputs = fp_inputs.replaced(targets)
                    if not self.enable_quanted_input:
                        q_inputs = fp_inputs
                del targets
            finally:
                if self.device is not None and home is not None:
                    block.to(home)
            stats.append(
                BlockStats(
                    index,
                    name,
                    result.initial_loss,
                    result.best_loss,
                    result.best_iteration,
                    time.perf_counter() - started,
                )
            )
        return stats

    def _round_block(self, index, block, name, specs, progress, total) -> BlockStats:
        started = time.perf_counter()
        self._fold(name, block, self._tuners(block, specs))
        progress.advance(f"block {index + 1}/{total} (round-to-nearest)")
        return BlockStats(index, name, None, None, None, time.perf_counter() - started)

    def _tuners(self, block: nn.Module, specs: list[WeightSpec]) -> dict[str, WeightTuner]:
        return {
            spec.key: WeightTuner(
                getattr(block.get_submodule(spec.module), spec.param),
                spec,
                self.enable_minmax_tuning,
                self.scale_dtype,
            )
            for spec in specs
        }

    def _fold(self, prefix: str, block: nn.Module, tuners: dict[str, WeightTuner]) -> None:
        """Write each tuner's quantized weight into its layer and keep its codes.

        The scale is rounded to ``scale_dtype`` first (fp16 by default, as
        GPTQ checkpoints store it), so the weights left in the model are
        exactly those an exported checkpoint dequantizes to.
        """
        with torch.no_grad():
            for tuner in tuners.values():
                spec = tuner.spec
                weight, codes = tuner.folded(self.scale_dtype)
                getattr(block.get_submodule(spec.module), spec.param).copy_(weight)
                module = f"{prefix}.{spec.module}" if spec.module else prefix
                self.quantized[f"{module}.{spec.param}"] = QuantizedWeight(codes, spec, module)

    def _run(self, block: nn.Module, inputs: BlockInputs) -> torch.Tensor:
        """The block's hidden-state outputs for every sample, in batches, stored like the inputs."""
        with torch.no_grad():
            batches = torch.arange(len(inputs)).split(self.batch_size)
            outputs = [inputs.call(block, indices) for indices in batches]
            store = inputs.hidden.device
            if self.device is not None:
                outputs = [output.to(store) for output in outputs]
            result = torch.cat(outputs)
            if self.pin_memory and result.device.type == "cpu" and torch.cuda.is_available():
                result = result.pin_memory()
            return result


def _device_of(module: nn.Module):
    for param in module.parameters():
        return param.device
    return None


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
    codes = unpack_codes(qweight, bits, groups * size).reshape(rows, groups, size).float()
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
            sys.stderr.write(f"\rautoround [{'#' * filled}{'.' * (30 - filled)}] {label}   ")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\n")
