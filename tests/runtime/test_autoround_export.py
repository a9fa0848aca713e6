"""GPTQ export of AutoRound-quantized transformers models and loading it back (issue 17, item 3)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from hooklint.runtime.autoround import AutoRound
from hooklint.runtime.autoround_export import (
    QuantLinear,
    gptq_pack,
    gptq_unpack,
    load_quantized,
    load_safetensors,
    save_safetensors,
)


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hf = _load("_hf_models")


def quantized(make, calibration=None, **options):
    model = make()
    settings = {"group_size": 32, "iters": 3, "nsamples": 8, "batch_size": 4, "progress": False}
    quantizer = AutoRound(**{**settings, **options})
    quantizer.quantize(model, calibration or list(hf.token_ids(8, 16).split(1)))
    return model, quantizer


def logits(model, ids):
    with torch.no_grad():
        return model(ids).logits


@pytest.mark.parametrize("make", [hf.llama, hf.gpt2, hf.mixtral], ids=["llama", "gpt2", "mixtral"])
def test_exported_checkpoint_loads_into_a_fresh_model_with_the_same_logits(make, tmp_path):
    model, quantizer = quantized(make)
    quantizer.export(model, tmp_path, dtype=torch.float32)
    torch.manual_seed(123)
    fresh = make.__wrapped__() if hasattr(make, "__wrapped__") else make()
    with torch.no_grad():  # make sure nothing of the fresh model's own weights survives
        for param in fresh.parameters():
            param.add_(1.0)
    load_quantized(fresh, tmp_path)
    ids = hf.token_ids(2, 12, seed=7)
    torch.testing.assert_close(logits(fresh, ids), logits(model, ids), rtol=1e-4, atol=1e-4)
    linears = [m for m in fresh.modules() if isinstance(m, QuantLinear)]
    expected = {"llama": 14, "gpt2": 8, "mixtral": 8}[make.__name__]
    assert len(linears) == expected


def test_checkpoint_layout_and_quantization_config(tmp_path):
    model, quantizer = quantized(hf.llama, layer_config={"mlp.down_proj": {"bits": 8}, "*.o_proj": "skip"})
    quantizer.export(model, tmp_path)
    tensors = load_safetensors(tmp_path / "model.safetensors")
    q = tensors["model.layers.0.self_attn.q_proj.qweight"]
    assert q.dtype == torch.int32 and q.shape == (64 * 4 // 32, 64)
    assert tensors["model.layers.0.self_attn.q_proj.qzeros"].shape == (2, 64 * 4 // 32)
    assert tensors["model.layers.0.self_attn.q_proj.scales"].dtype == torch.float16
    assert tensors["model.layers.0.self_attn.q_proj.scales"].shape == (2, 64)
    assert tensors["model.layers.0.self_attn.q_proj.g_idx"].tolist() == [i // 32 for i in range(64)]
    assert tensors["model.layers.0.mlp.down_proj.qweight"].shape == (128 * 8 // 32, 64)
    assert "model.layers.0.self_attn.o_proj.weight" in tensors  # skipped: kept dense
    assert "model.layers.0.self_attn.q_proj.weight" not in tensors
    assert tensors["model.embed_tokens.weight"].dtype == torch.float16
    config = json.loads((tmp_path / "config.json").read_text())["quantization_config"]
    assert config["quant_method"] == "gptq" and config["checkpoint_format"] == "gptq"
    assert (config["bits"], config["group_size"], config["sym"], config["desc_act"]) == (4, 32, False, False)
    assert config["block_name_to_quantize"] == ["model.layers"]
    assert config["dynamic"][r"+:^model\.layers\.0\.mlp\.down_proj$"]["bits"] == 8
    assert config["dynamic"][r"-:^model\.layers\.1\.self_attn\.o_proj$"] == {}
    assert json.loads((tmp_path / "quantize_config.json").read_text()) == config


def test_safetensors_files_read_with_the_safetensors_package(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    tensors = {
        "a": torch.arange(12, dtype=torch.int32).reshape(3, 4),
        "b": torch.randn(5, dtype=torch.float16),
        "c": torch.randn(2, 3),
    }
    save_safetensors(tmp_path / "x.safetensors", tensors)
    read = safetensors_torch.load_file(str(tmp_path / "x.safetensors"))
    assert read.keys() == tensors.keys()
    for key, value in tensors.items():
        assert torch.equal(read[key], value)
    assert all(torch.equal(load_safetensors(tmp_path / "x.safetensors")[k], v) for k, v in tensors.items())


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_gptq_pack_round_trips(bits):
    generator = torch.Generator().manual_seed(bits)
    codes = torch.randint(0, 2**bits, (32, 64), generator=generator)
    zeros = torch.randint(1, 2**bits, (32, 2), generator=generator)
    scales = (torch.rand(32, 2, generator=generator) + 0.01).half().float()
    packed = gptq_pack(codes, zeros, scales, bits, 32)
    weight = gptq_unpack(packed["qweight"], packed["qzeros"], packed["scales"], packed["g_idx"], bits)
    expected = scales.repeat_interleave(32, 1) * (codes - zeros.repeat_interleave(32, 1)).float()
    assert torch.equal(weight, expected)


@pytest.mark.parametrize("sym", [False, True])
def test_packing_matches_the_auto_round_package_byte_for_byte(sym):
    """The intel package's own GPTQ packer, given our folded layer, writes the same bytes."""
    package = pytest.importorskip("auto_round_extension.torch.qlinear_torch_zp")
    model, quantizer = quantized(hf.llama, sym=sym)
    name = "model.layers.1.mlp.up_proj"
    layer = model.get_submodule(name)
    weight = quantizer.quantized[f"{name}.weight"]
    rows, groups = weight.rows, weight.groups_per_row
    scales = weight.codes.scale.reshape(rows, groups)
    zeros = weight.codes.zero.reshape(rows, groups).to(torch.int32)
    theirs = package.QuantLinear(4, 32, layer.in_features, layer.out_features, False, g_idx=True)
    theirs.pack(layer, scales, zeros if not sym else int(zeros.flatten()[0]), None, "cpu")
    ours = gptq_pack(
        weight.codes.codes.reshape(rows, -1), weight.codes.zero.reshape(rows, groups), scales, 4, 32
    )
    for key in ("qweight", "qzeros", "scales", "g_idx"):
        mine, package_tensor = ours[key], getattr(theirs, key)
        assert mine.dtype == package_tensor.dtype and mine.shape == package_tensor.shape, key
        assert (
            mine.contiguous().view(torch.uint8).tolist()
            == package_tensor.contiguous().view(torch.uint8).tolist()
        ), key


@pytest.mark.cuda
def test_quant_linear_runs_on_cuda(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    model, quantizer = quantized(hf.llama)
    quantizer.export(model, tmp_path, dtype=torch.float32)
    fresh = load_quantized(hf.llama(), tmp_path).cuda()
    ids = hf.token_ids(2, 12, seed=7)
    torch.testing.assert_close(logits(fresh, ids.cuda()).cpu(), logits(model, ids), rtol=1e-3, atol=1e-3)
