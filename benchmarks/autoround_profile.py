"""Where AutoRound's tuning time goes on one SmolLM2-sized decoder block.

A random-init Llama block with SmolLM2-135M's shapes (hidden 576, MLP 1536,
9 heads, 3 KV heads; no download), ``--samples`` x ``--seqlen`` calibration
tokens, batches of 8, one thread.  Prints ``torch.profiler``'s table (by
self CPU time) or ``cProfile``'s (by internal time), then the block's
losses, so two revisions can be checked for equal results.

    python benchmarks/autoround_profile.py                    # torch.profiler, 10 iterations
    python benchmarks/autoround_profile.py --mode cprofile
    python benchmarks/autoround_profile.py --mode time --iters 20
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

import torch
from hooklint.runtime.autoround import AutoRound


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=("torch", "cprofile", "time"), default="torch")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--rows", type=int, default=30, help="table rows")
    args = parser.parse_args(argv)
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(1)
    config = LlamaConfig(
        vocab_size=1000,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=1,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=max(256, args.seqlen),
    )
    model = LlamaForCausalLM(config).eval()
    ids = torch.randint(0, config.vocab_size, (args.samples, 1, args.seqlen))
    calibration = [{"input_ids": x, "attention_mask": torch.ones_like(x)} for x in ids]
    quantizer = AutoRound(
        iters=args.iters,
        nsamples=args.samples,
        seqlen=args.seqlen,
        batch_size=8,
        progress=False,
    )
    started = time.perf_counter()
    if args.mode == "torch":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            stats = quantizer.quantize(model, calibration)
        print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    elif args.mode == "cprofile":
        profiler = cProfile.Profile()
        profiler.enable()
        stats = quantizer.quantize(model, calibration)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.rows)
    else:
        stats = quantizer.quantize(model, calibration)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "seconds": round(seconds, 2),
                "losses": [[s.initial_loss, s.best_loss, s.best_iteration] for s in stats],
            }
        )
    )


if __name__ == "__main__":
    main()
