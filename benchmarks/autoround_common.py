"""Shared pieces of the AutoRound benchmarks (``autoround_speed.py``, ``autoround_decoder.py``).

* :func:`load_text_helper`: ``tests/runtime/_minilm.py`` by file path (the
  MiniLM model files, the calibration and held-out text, the metrics).
* :func:`run_intel`: Intel's ``auto-round`` on a model, with our settings,
  restricted to the first ``blocks`` blocks of one block stack (the later
  blocks' Linears get 16 bits, which the package skips).
* :class:`Stopwatch`: wall seconds and CPU seconds (this process's, plus its
  finished children's: the package's ``torch.compile`` workers), since on a
  shared machine the CPU seconds compare two runs better than the wall time.

The package is installed with ``--no-deps`` (see docs/autoround.md), so that
pip keeps the CPU torch.
"""

from __future__ import annotations

import copy
import importlib.util
import resource
import time
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def load_text_helper():
    """tests/runtime/_minilm.py, imported by file path."""
    spec = importlib.util.spec_from_file_location("_minilm", ROOT / "tests" / "runtime" / "_minilm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class Stopwatch:
    """``with Stopwatch() as watch: ...`` then ``watch.wall`` and ``watch.cpu`` (seconds)."""

    wall: float = 0.0
    cpu: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._wall, self._cpu = time.perf_counter(), _cpu_seconds()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = _cpu_seconds() - self._cpu


def skipped_after(stack, prefix: str, blocks: int) -> dict[str, dict]:
    """The package's ``layer_config`` that leaves every Linear of blocks ``blocks..`` at 16 bits."""
    return {
        f"{prefix}.{index}.{name}": {"bits": 16}
        for index, block in enumerate(stack)
        if index >= blocks
        for name, module in block.named_modules()
        if isinstance(module, torch.nn.Linear)
    }


def run_intel(
    model,
    tokenizer,
    calibration: list,
    *,
    stack,
    prefix: str,
    blocks: int,
    bits: int,
    group_size: int,
    iters: int,
    nsamples: int,
    seqlen: int,
    batch_size: int,
    **options,
) -> Stopwatch:
    """Quantize ``model`` in place with Intel's ``AutoRound`` (asymmetric, on CPU); its timing.

    ``stack`` is the model's block list, named ``prefix`` (``"model.layers"``);
    only its first ``blocks`` blocks are quantized.  ``options`` go to the
    package unchanged (``seed``, ``gradient_accumulate_steps``...).

    The package gets its own copy of the calibration items: for language
    models it sets the last position of each ``attention_mask`` to 0 in place
    (and leaves it out of its loss), which must not leak into other runs.
    """
    from auto_round import AutoRound as IntelAutoRound

    skipped = skipped_after(stack, prefix, blocks)
    quantizer = IntelAutoRound(
        model,
        tokenizer=tokenizer,
        bits=bits,
        group_size=group_size,
        sym=False,
        iters=iters,
        nsamples=nsamples,
        seqlen=seqlen,
        batch_size=batch_size,
        dataset=copy.deepcopy(calibration),
        device_map="cpu",
        **({"layer_config": skipped} if skipped else {}),
        **options,
    )
    with Stopwatch() as watch:
        quantizer.quantize()
    return watch
