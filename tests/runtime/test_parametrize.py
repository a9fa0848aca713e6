"""hooklint.runtime.parametrize / quant4bit: 4-bit weights and the exception-safe dequant cache."""

from __future__ import annotations

import pytest
import torch
import torch.nn.utils.parametrize as P
from hooklint.runtime.parametrize import enable_dequant_cache, replace_parameter_4bit
from hooklint.runtime.quant4bit import code_book, dequantize_4bit, quantize_4bit
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

STEPS = 50


def relative_rms_error(approx: torch.Tensor, exact: torch.Tensor) -> float:
    return (
        (approx.float() - exact.float()).pow(2).mean().sqrt()
        / exact.float().pow(2).mean().sqrt()
    ).item()


def quantized_linear(weight: torch.Tensor, **kwargs) -> nn.Linear:
    layer = nn.Linear(weight.shape[1], weight.shape[0], bias=False, dtype=weight.dtype)
    with torch.no_grad():
        layer.weight.copy_(weight)
    replace_parameter_4bit(layer, "weight", **kwargs)
    return layer


# Relative RMS error of blockwise-64 absmax quantization of N(0, 1) weights
# (measured: NF4 0.092, FP4 0.106); NF4's code book is optimal for normal data.
@pytest.mark.parametrize(("quant_type", "bound"), [("nf4", 0.10), ("fp4", 0.115)])
@pytest.mark.parametrize("compress_statistics", [False, True])
def test_reconstruction_error_of_gaussian_weights(
    quant_type, bound, compress_statistics
):
    weight = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))
    layer = quantized_linear(
        weight, quant_type=quant_type, compress_statistics=compress_statistics
    )
    assert relative_rms_error(layer.weight, weight) < bound


def test_nf4_beats_fp4_on_gaussian_weights():
    weight = torch.randn(256, 256, generator=torch.Generator().manual_seed(1))
    errors = {
        q: relative_rms_error(quantized_linear(weight, quant_type=q).weight, weight)
        for q in ("nf4", "fp4")
    }
    assert errors["nf4"] < errors["fp4"]


@settings(max_examples=40, deadline=None)
@given(
    numel=st.integers(1, 600),
    blocksize=st.sampled_from([2, 16, 64, 256]),
    quant_type=st.sampled_from(["nf4", "fp4"]),
    seed=st.integers(0, 2**16),
)
def test_every_value_rounds_to_a_neighbouring_code(numel, blocksize, quant_type, seed):
    """|x - dequant(x)| <= block absmax * (largest gap between neighbouring codes) / 2."""
    x = torch.randn(numel, generator=torch.Generator().manual_seed(seed)) * 3
    packed, absmax = quantize_4bit(x, quant_type, blocksize)
    code = code_book(quant_type)
    restored = dequantize_4bit(packed, absmax, code, x.shape, x.dtype)
    half_gap = code.sort().values.diff().max() / 2
    per_value_absmax = absmax.repeat_interleave(blocksize)[:numel]
    assert (
        packed.dtype == torch.uint8
        and packed.numel() == absmax.numel() * blocksize // 2
    )
    assert torch.all((restored - x).abs() <= per_value_absmax * half_gap + 1e-6)


def test_fused_expert_weight_keeps_shape_and_dtype_and_packs_two_per_byte():
    experts = nn.Module()
    experts.weight = nn.Parameter(torch.randn(4, 32, 16, dtype=torch.bfloat16))
    reference = experts.weight.detach().clone()
    replace_parameter_4bit(experts, "weight", quant_type="fp4", blocksize=64)
    packed = experts.parametrizations.weight.original
    assert packed.dtype == torch.uint8 and packed.numel() == reference.numel() // 2
    assert not packed.requires_grad
    assert (
        experts.weight.shape == (4, 32, 16) and experts.weight.dtype == torch.bfloat16
    )
    assert relative_rms_error(experts.weight, reference) < 0.115


@pytest.mark.parametrize("compress_statistics", [False, True])
def test_state_dict_round_trip(compress_statistics):
    weight = torch.randn(24, 40)
    source = quantized_linear(
        weight, quant_type="fp4", blocksize=32, compress_statistics=compress_statistics
    )
    # The target starts from other weights and another quant type and block size;
    # loading restores the codes, the scales and the quantization settings.
    target = quantized_linear(
        torch.zeros(24, 40),
        quant_type="nf4",
        blocksize=32,
        compress_statistics=compress_statistics,
    )
    target.load_state_dict(source.state_dict())
    assert torch.equal(target.weight, source.weight)
    assert target.parametrizations.weight[0].quant_type == "fp4"


def test_compressed_statistics_use_less_memory():
    def state_bytes(layer):
        return sum(
            t.nbytes for t in layer.state_dict().values() if isinstance(t, torch.Tensor)
        )

    weight = torch.randn(512, 512)
    plain = quantized_linear(weight, compress_statistics=False)
    compressed = quantized_linear(weight, compress_statistics=True)
    assert state_bytes(compressed) < state_bytes(plain) < weight.nbytes / 6


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="quant_type"):
        replace_parameter_4bit(nn.Linear(4, 4), "weight", quant_type="int4")
    with pytest.raises(ValueError, match="blocksize"):
        replace_parameter_4bit(nn.Linear(4, 4), "weight", blocksize=3)


class ReadsWeightTwice(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 8))
        self.fail = False

    def forward(self, x):
        y = x @ self.weight @ self.weight
        if self.fail:
            raise RuntimeError("forward failed after touching the weight")
        return y


def count_dequantizations(module: nn.Module) -> list:
    calls = []
    module.parametrizations.weight[0].register_forward_hook(
        lambda *args: calls.append(1)
    )
    return calls


def test_cache_dequantizes_once_per_forward_and_is_released():
    module = ReadsWeightTwice()
    replace_parameter_4bit(module, "weight")
    calls = count_dequantizations(module)
    with enable_dequant_cache(module):
        module(torch.randn(2, 8))
        assert len(calls) == 1
        assert P._cache_enabled == 0 and P._cache == {}
    module(torch.randn(2, 8))
    assert len(calls) == 3  # hooks removed: each access dequantizes again


def test_cache_is_released_when_forward_raises():
    module = ReadsWeightTwice()
    replace_parameter_4bit(module, "weight")
    enable_dequant_cache(module)
    module.fail = True
    with pytest.raises(RuntimeError):
        module(torch.randn(2, 8))
    assert P._cache_enabled == 0 and P._cache == {}


def test_cache_nests_inside_an_outer_cached_region():
    module = ReadsWeightTwice()
    replace_parameter_4bit(module, "weight")
    enable_dequant_cache(module)
    with P.cached():
        module(torch.randn(2, 8))
        assert (
            P._cache_enabled == 1 and len(P._cache) == 1
        )  # the outer region keeps its cache
    assert P._cache_enabled == 0 and P._cache == {}


@pytest.fixture(scope="module")
def training_runs(gpu_verify):
    """The gpu_verify experiment on CPU: every variant, 50 steps, tiny fused-MoE model."""
    config = gpu_verify.ModelConfig(layers=2, experts=4, dim=32, tokens=8)
    runs = {
        v: gpu_verify.run_variant(v, config, STEPS, torch.device("cpu"))
        for v in gpu_verify.VARIANTS
    }
    return config, runs


def test_original_pair_leaks_under_non_reentrant_checkpoint(training_runs):
    """Reproduces the bitsandbytes bug on purpose: the counter climbs and the dequantized weights stay pinned."""
    config, runs = training_runs
    original = runs["original"]
    assert original.cache_enabled == [
        config.layers * (step + 1) for step in range(STEPS)
    ]
    assert set(original.cache_entries) == {config.layers}
    assert set(original.cached_bytes) == {config.dequantized_bytes()}
    assert original.dequant_calls[1:] == [0] * (
        STEPS - 1
    )  # a stale cache is served forever
    pinned = original.memory_bytes[-1] - runs["enable_dequant_cache"].memory_bytes[-1]
    assert pinned == config.dequantized_bytes()


def test_enable_dequant_cache_is_released_every_step(training_runs):
    config, runs = training_runs
    cached = runs["enable_dequant_cache"]
    assert cached.cache_enabled == [0] * STEPS
    assert cached.cache_entries == [0] * STEPS
    assert set(cached.memory_bytes[2:]) == {cached.memory_bytes[2]}  # flat
    # once per forward and once per recomputation, versus once per expert access without the cache
    assert set(cached.dequant_calls) == {2 * config.layers}
    assert set(runs["no_cache"].dequant_calls) == {2 * config.layers * config.experts}


def test_acceptance_checks_pass_on_cpu(gpu_verify, training_runs):
    config, runs = training_runs
    assert gpu_verify.check_runs(runs, config) == dict.fromkeys(
        gpu_verify.check_runs(runs, config), True
    )
    assert (
        P._cache_enabled == 0
    )  # run_variant restores the global state after the leaking variant


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_verify_passes_on_cuda(gpu_verify):
    config = gpu_verify.ModelConfig(layers=2, experts=4, dim=256, tokens=64)
    report = gpu_verify.verify(config, steps=6, device=torch.device("cuda"))
    assert report["checks"] == dict.fromkeys(report["checks"], True)
