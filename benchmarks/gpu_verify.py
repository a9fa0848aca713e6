"""Verify the corrected 4-bit dequant cache on a GPU; prints one JSON object.

Trains a small model whose fused-expert weights are 4-bit (``replace_parameter_4bit``)
under non-reentrant gradient checkpointing, once per cache variant, and records
after every step: ``torch.cuda.memory_allocated()``, ``parametrize._cache_enabled``,
the cache size and how often weights were dequantized. Variants:

* ``original``: bitsandbytes' hook pair (post-hook without ``always_call``);
* ``clamp``: the bitsandbytes fix (``always_call=True`` and a clamp at zero);
* ``enable_dequant_cache``: hooklint's token-paired hooks;
* ``no_cache``: no hooks at all (every access dequantizes), for timing.

Without CUDA it prints ``{"skipped": "no CUDA"}`` and exits 0. ``--device cpu``
runs the same experiment on the CPU, where "memory" is the bytes held by the
model, the optimizer state and the parametrization cache. If ``benchmarks/gpu_autoround.py``
exists and defines ``run() -> dict``, its result is added under ``"autoround"``.
Exit status: 0 when every check passes (or skipped), 1 otherwise.

    python benchmarks/gpu_verify.py [--steps 50] [--device cuda|cpu]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn.utils.parametrize as P
from hooklint.runtime.parametrize import enable_dequant_cache, replace_parameter_4bit
from torch import nn
from torch.utils.checkpoint import checkpoint

MIB = 2**20
VARIANTS = ("original", "clamp", "enable_dequant_cache", "no_cache")
AUTOROUND_MODULE = Path(__file__).with_name("gpu_autoround.py")


@dataclass(frozen=True)
class ModelConfig:
    """Size of the verification model; the default takes seconds on one GPU."""

    layers: int = 4
    experts: int = 8
    dim: int = 512
    tokens: int = 256
    dtype: torch.dtype = torch.bfloat16

    def dequantized_bytes(self) -> int:
        """Bytes of all expert weights once dequantized (what a leaked cache pins)."""
        element_size = torch.empty((), dtype=self.dtype).element_size()
        return self.layers * self.experts * self.dim * self.dim * element_size


class FusedExperts(nn.Module):
    """Experts stored as one ``[experts, out, in]`` weight, indexed per expert like HF fused MoE."""

    def __init__(self, experts: int, dim: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.weight = nn.Parameter(
            torch.randn(experts, dim, dim, dtype=dtype) / dim**0.5, requires_grad=False
        )

    def forward(self, x: torch.Tensor, gates: torch.Tensor) -> torch.Tensor:
        outputs = [x @ self.weight[e].T for e in range(gates.shape[-1])]
        # The last tensor save of the checkpointed block happens here, so an
        # early-stopped recomputation raises through this forward.
        return (torch.stack(outputs, dim=-1) * gates[:, None, :]).sum(dim=-1)


class MoEBlock(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.router = nn.Linear(config.dim, config.experts, dtype=config.dtype)
        self.experts = FusedExperts(config.experts, config.dim, config.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.experts(x, self.router(x).softmax(dim=-1))


class MoEModel(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(MoEBlock(config) for _ in range(config.layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return x


def _enable_cache(module, args) -> None:
    P._cache_enabled += 1


def _disable_cache(module, args, output) -> None:
    P._cache_enabled -= 1
    if not P._cache_enabled:
        P._cache = {}


def _disable_cache_clamped(module, args, output) -> None:
    P._cache_enabled = max(P._cache_enabled - 1, 0)
    if not P._cache_enabled:
        P._cache = {}


def install_original_pair(module: nn.Module) -> list:
    """The bitsandbytes pair as first shipped: the post-hook is skipped when forward raises."""
    return [
        module.register_forward_pre_hook(_enable_cache),
        module.register_forward_hook(_disable_cache),  # noqa: HL001  the bug as first shipped, on purpose
    ]


def install_clamp_pair(module: nn.Module) -> list:
    """The bitsandbytes fix: ``always_call=True`` plus a clamp at zero."""
    return [
        module.register_forward_pre_hook(_enable_cache),
        module.register_forward_hook(_disable_cache_clamped, always_call=True),
    ]


def install_variant(variant: str, module: nn.Module) -> list:
    if variant == "original":
        return install_original_pair(module)
    if variant == "clamp":
        return install_clamp_pair(module)
    if variant == "enable_dequant_cache":
        return [enable_dequant_cache(module)]
    if variant == "no_cache":
        return []
    raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")


def tracked_tensor_bytes(model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """Bytes of the distinct storages held by the model, the optimizer state and the parametrization cache."""
    tensors = [*model.parameters(), *model.buffers(), *P._cache.values()]
    tensors += [
        t for state in optimizer.state.values() for t in state.values() if isinstance(t, torch.Tensor)
    ]
    storages = {
        t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors if t is not None
    }
    return sum(storages.values())


def memory_probe(device: torch.device, model: nn.Module, optimizer: torch.optim.Optimizer) -> int:
    """Allocated bytes: the CUDA allocator after collecting cyclic garbage, or the tracked tensors on CPU."""
    if device.type == "cuda":
        gc.collect()
        torch.cuda.synchronize(device)
        return torch.cuda.memory_allocated(device)
    return tracked_tensor_bytes(model, optimizer)


def cached_bytes() -> int:
    return sum(t.nbytes for t in P._cache.values() if t is not None)


@dataclass
class VariantRun:
    """Per-step observations of one variant."""

    memory_bytes: list[int] = field(default_factory=list)
    cache_enabled: list[int] = field(default_factory=list)
    cache_entries: list[int] = field(default_factory=list)
    cached_bytes: list[int] = field(default_factory=list)
    dequant_calls: list[int] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)


def run_variant(
    variant: str, config: ModelConfig, steps: int, device: torch.device, seed: int = 0
) -> VariantRun:
    """Train ``steps`` steps with ``variant`` hooks on every experts module; restores the global cache state."""
    torch.manual_seed(seed)
    model = MoEModel(config).to(device)
    dequant_calls = 0

    def count_dequant(module, args, output) -> None:
        nonlocal dequant_calls
        dequant_calls += 1

    for block in model.blocks:
        replace_parameter_4bit(block.experts, "weight", quant_type="nf4", blocksize=64)
        block.experts.parametrizations.weight[0].register_forward_hook(count_dequant)
    handles = [h for block in model.blocks for h in install_variant(variant, block.experts)]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    x = torch.randn(config.tokens, config.dim, device=device, dtype=config.dtype)
    target = torch.randn_like(x)
    run = VariantRun()
    try:
        for _ in range(steps):
            dequant_calls = 0
            start = time.perf_counter()
            loss = nn.functional.mse_loss(model(x).float(), target.float())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            del loss
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            run.step_seconds.append(time.perf_counter() - start)
            run.memory_bytes.append(memory_probe(device, model, optimizer))
            run.cache_enabled.append(P._cache_enabled)
            run.cache_entries.append(len(P._cache))
            run.cached_bytes.append(cached_bytes())
            run.dequant_calls.append(dequant_calls)
    finally:
        for handle in handles:
            handle.remove()
        P._cache_enabled = 0
        P._cache = {}
    return run


def check_runs(runs: dict[str, VariantRun], config: ModelConfig) -> dict[str, bool]:
    """The acceptance checks of issue 6 over the per-step observations."""
    layers = config.layers
    original, clamp, cached = (
        runs["original"],
        runs["clamp"],
        runs["enable_dequant_cache"],
    )
    checks = {
        "original_counter_climbs": original.cache_enabled
        == [layers * (k + 1) for k in range(len(original.cache_enabled))],
        "original_pins_dequantized_weights": min(original.cached_bytes) >= config.dequantized_bytes()
        and original.memory_bytes[-1] - cached.memory_bytes[-1] >= config.dequantized_bytes(),
        "clamp_counter_zero": set(clamp.cache_enabled) == {0} and set(clamp.cache_entries) == {0},
        "cache_counter_zero_every_step": set(cached.cache_enabled) == {0},
        "cache_empty_every_step": set(cached.cache_entries) == {0},
        "cache_memory_flat_after_step_2": max(
            abs(m - cached.memory_bytes[2]) for m in cached.memory_bytes[2:]
        )
        <= MIB,
        "cache_dequantizes_once_per_forward": set(cached.dequant_calls) == {2 * layers},
    }
    return checks


def _median_step_seconds(run: VariantRun) -> float:
    return statistics.median(run.step_seconds[2:] or run.step_seconds)


def run_autoround() -> dict | None:
    """Result of ``benchmarks/gpu_autoround.py:run()`` when that module exists, else None."""
    if not AUTOROUND_MODULE.exists():
        return None
    try:
        spec = importlib.util.spec_from_file_location("gpu_autoround", AUTOROUND_MODULE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not callable(getattr(module, "run", None)):
            return {"error": "benchmarks/gpu_autoround.py defines no run()"}
        return module.run()
    except Exception as exc:  # noqa: BLE001 -- report it, do not lose the dequant-cache results
        return {"error": f"{type(exc).__name__}: {exc}"}


def verify(config: ModelConfig, steps: int, device: torch.device) -> dict:
    """Run every variant and the checks; the JSON-ready report."""
    runs = {variant: run_variant(variant, config, steps, device) for variant in VARIANTS}
    checks = check_runs(runs, config)
    no_cache_s, cache_s = (
        _median_step_seconds(runs["no_cache"]),
        _median_step_seconds(runs["enable_dequant_cache"]),
    )
    return {
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "steps": steps,
        "config": {**asdict(config), "dtype": str(config.dtype)},
        "dequantized_mib": config.dequantized_bytes() / MIB,
        "variants": {variant: asdict(run) for variant, run in runs.items()},
        "timing": {
            "median_step_s_no_cache": no_cache_s,
            "median_step_s_enable_dequant_cache": cache_s,
            "speedup": no_cache_s / cache_s,
        },
        "checks": checks,
        "passed": all(checks.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps({"skipped": "no CUDA"}))
        return 0
    device = torch.device(args.device)
    config = ModelConfig() if device.type == "cuda" else ModelConfig(layers=2, experts=4, dim=64, tokens=32)
    report = verify(config, args.steps, device)
    if device.type == "cuda":
        report["autoround"] = run_autoround()
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
