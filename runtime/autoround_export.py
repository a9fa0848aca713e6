"""GPTQ-format export of an AutoRound-quantized model, and a pure-torch ``QuantLinear`` to load it.

The checkpoint layout is GPTQ's (v1, ``checkpoint_format: "gptq"``), the one
Intel's ``auto-round`` writes for its ``auto_gptq`` format and transformers
(through gptqmodel/optimum) and vLLM read.  Per quantized layer with ``in``
inputs, ``out`` outputs, ``b`` bits (2, 4 or 8) and ``G = ceil(in / group)``:

* ``qweight`` int32 ``(in * b / 32, out)``: codes packed along the input
  dimension, ``32 / b`` per word, the first in the lowest bits;
* ``qzeros`` int32 ``(G, out * b / 32)``: zero points minus one, packed along
  the output dimension (GPTQ v1 stores ``zero - 1``; a zero point of 0 cannot
  be stored and is written as 1, as the package does; the export warns);
* ``scales`` float16 ``(G, out)``; ``g_idx`` int32 ``(in,)`` = ``i // group``;
* ``bias`` in the checkpoint dtype.

GPT-2's ``Conv1D`` is exported like the ``nn.Linear`` it computes.  Fused 3-D
expert weights are written stacked per expert (``(experts, ...)`` of the
tensors above, under ``<module>.<param>.qweight`` etc.): no inference engine
reads that layout yet; :func:`load_quantized` dequantizes them into the
model's parameter.

``config.json`` (when the model has a transformers config) gets the
``quantization_config`` that transformers and vLLM read; layers whose
settings differ from the defaults, and skipped layers inside the blocks, are
listed in its ``dynamic`` mapping (``+:regex`` / ``-:regex``, as gptqmodel
and vLLM read it).  Files are written with a small safetensors writer here
(the format is a JSON header and raw little-endian tensors), so only torch is
needed; ``safetensors.torch.load_file`` reads them.
"""

from __future__ import annotations

import json
import math
import re
import struct
import warnings
from collections.abc import Mapping
from pathlib import Path

from hooklint.runtime import require_torch

torch = require_torch()
nn = torch.nn

WEIGHTS_NAME = "model.safetensors"
GPTQ_BITS = (2, 4, 8)

_DTYPES = {
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float32: "F32",
    torch.float64: "F64",
    torch.int8: "I8",
    torch.int16: "I16",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}
_CODES = {code: dtype for dtype, code in _DTYPES.items()}


# --- safetensors -------------------------------------------------------------------------------


def save_safetensors(path: str | Path, tensors: Mapping[str, torch.Tensor], metadata=None) -> None:
    """Write ``tensors`` in the safetensors layout (written to a temporary name, then renamed)."""
    path = Path(path)
    header, offset, blobs = {}, 0, []
    for name, tensor in tensors.items():
        tensor = tensor.detach().to("cpu").contiguous()
        blob = tensor.reshape(-1).view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        header[name] = {
            "dtype": _DTYPES[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        offset += len(blob)
        blobs.append(blob)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * ((-len(encoded)) % 8)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)) + encoded)
        for blob in blobs:
            handle.write(blob)
    partial.replace(path)


def load_safetensors(path: str | Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file into CPU tensors."""
    data = Path(path).read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    base = 8 + length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        dtype = _CODES[entry["dtype"]]
        raw = bytearray(data[base + start : base + end])
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        tensors[name] = flat.reshape(entry["shape"])
    return tensors


# --- packing -----------------------------------------------------------------------------------


def _pack_rows(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Pack along dim 0: ``(n, m)`` unsigned codes -> int32 ``(n * bits / 32, m)``."""
    per_word = 32 // bits
    rows, columns = values.shape
    if rows % per_word:
        raise ValueError(f"{rows} is not a multiple of {per_word} ({bits}-bit GPTQ packing)")
    grouped = values.to(torch.int64).reshape(rows // per_word, per_word, columns)
    shifts = (torch.arange(per_word, dtype=torch.int64, device=values.device) * bits)[:, None]
    words = (grouped << shifts).sum(dim=1)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def _unpack_rows(words: torch.Tensor, bits: int, rows: int) -> torch.Tensor:
    per_word = 32 // bits
    shifts = (torch.arange(per_word, dtype=torch.int64, device=words.device) * bits)[:, None]
    unsigned = words.to(torch.int64) & 0xFFFFFFFF
    values = (unsigned[:, None, :] >> shifts) & (2**bits - 1)
    return values.reshape(-1, words.shape[-1])[:rows]


def gptq_pack(
    codes: torch.Tensor, zeros: torch.Tensor, scales: torch.Tensor, bits: int, group_size: int
) -> dict[str, torch.Tensor]:
    """GPTQ tensors of one ``(out, in)`` layer from its codes ``(out, in)``, zeros and scales ``(out, G)``."""
    if bits not in GPTQ_BITS:
        raise NotImplementedError(f"GPTQ export supports {GPTQ_BITS} bits, got {bits}")
    out_features, in_features = codes.shape
    size = group_size if group_size > 0 else in_features
    stored_zeros = (zeros.to(torch.int64) - 1).clamp_(0, 2**bits - 1)
    return {
        "qweight": _pack_rows(codes.t(), bits),
        "qzeros": _pack_columns(stored_zeros.t(), bits),
        "scales": scales.t().contiguous().to(torch.float16),
        "g_idx": torch.arange(in_features, dtype=torch.int32) // size,
    }


def _pack_columns(values: torch.Tensor, bits: int) -> torch.Tensor:
    """Pack along dim 1: ``(n, m)`` -> int32 ``(n, m * bits / 32)``."""
    return _pack_rows(values.t(), bits).t().contiguous()


def gptq_unpack(
    qweight: torch.Tensor, qzeros: torch.Tensor, scales: torch.Tensor, g_idx: torch.Tensor, bits: int
) -> torch.Tensor:
    """The float32 ``(out, in)`` weight a GPTQ layer stands for."""
    in_features = g_idx.numel()
    codes = _unpack_rows(qweight, bits, in_features)  # (in, out)
    zeros = _unpack_rows(qzeros.t().contiguous(), bits, qzeros.shape[1] * 32 // bits).t() + 1
    index = g_idx.to(torch.long)
    weight = scales.float()[index] * (codes - zeros[index]).float()
    return weight.t()


def _layer_tensors(quantized) -> dict[str, torch.Tensor]:
    """GPTQ tensors of one :class:`~hooklint.runtime.autoround.QuantizedWeight`."""
    spec = quantized.spec
    rows, groups = quantized.rows, quantized.groups_per_row
    size = spec.group_size if spec.group_size > 0 else spec.in_features
    codes = quantized.codes.codes.reshape(rows, groups * size)[:, : spec.in_features]
    zeros = quantized.codes.zero.reshape(rows, groups)
    scales = quantized.codes.scale.reshape(rows, groups)
    if spec.kind != "experts":
        return gptq_pack(codes, zeros, scales, spec.bits, spec.group_size)
    experts = spec.shape[0]
    per_expert = [
        gptq_pack(c, z, s, spec.bits, spec.group_size)
        for c, z, s in zip(codes.chunk(experts), zeros.chunk(experts), scales.chunk(experts))
    ]
    stacked = {
        key: torch.stack([tensors[key] for tensors in per_expert]) for key in ("qweight", "qzeros", "scales")
    }
    stacked["g_idx"] = per_expert[0]["g_idx"]
    return stacked


# --- export ------------------------------------------------------------------------------------


def export(
    model: nn.Module,
    path: str | Path,
    quantizer,
    format: str = "gptq",
    *,
    dtype: torch.dtype = torch.float16,
) -> Path:
    """Write ``model`` (quantized by ``quantizer``) as a GPTQ checkpoint in directory ``path``.

    Writes ``model.safetensors`` (quantized layers packed, every other tensor
    in ``dtype``), ``quantize_config.json`` and, for a transformers model,
    ``config.json`` with ``quantization_config``.  Returns ``path``.
    """
    if format != "gptq":
        raise ValueError(f"unknown export format {format!r} (supported: 'gptq')")
    if not quantizer.quantized:
        raise ValueError("nothing to export: quantize the model first")
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, torch.Tensor] = {}
    replaced = set()
    zero_at_floor = 0
    for quantized in quantizer.quantized.values():
        if quantized.spec.bits not in GPTQ_BITS:
            raise NotImplementedError(
                f"{quantized.base}: GPTQ export supports {GPTQ_BITS} bits, got {quantized.spec.bits}"
            )
        if not quantized.spec.sym:
            zero_at_floor += int((quantized.codes.zero == 0).sum())
        for key, value in _layer_tensors(quantized).items():
            tensors[f"{quantized.base}.{key}"] = value
        replaced.add(f"{quantized.module}.{quantized.spec.param}")
    if zero_at_floor:
        warnings.warn(
            f"{zero_at_floor} groups have zero point 0, which GPTQ v1 cannot store; "
            "they are written as 1 (as auto-round does)",
            stacklevel=2,
        )
    for name, tensor in model.state_dict().items():
        if name in replaced:
            continue
        tensors[name] = tensor.to(dtype) if tensor.is_floating_point() else tensor
    save_safetensors(directory / WEIGHTS_NAME, _dedupe(tensors), {"format": "pt"})
    config = quantization_config(quantizer)
    (directory / "quantize_config.json").write_text(json.dumps(config, indent=2) + "\n")
    model_config = getattr(model, "config", None)
    if model_config is not None and hasattr(model_config, "to_dict"):
        data = model_config.to_dict()
        data["quantization_config"] = config
        data["torch_dtype"] = data["dtype"] = str(dtype).removeprefix("torch.")
        (directory / "config.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    return directory


def _dedupe(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Tied weights share storage; safetensors wants separate copies."""
    seen, result = set(), {}
    for name, tensor in tensors.items():
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        result[name] = tensor.clone() if key in seen else tensor
        seen.add(key)
    return result


def quantization_config(quantizer) -> dict:
    """The ``quantization_config`` transformers and vLLM read for a GPTQ checkpoint."""
    config = {
        "quant_method": "gptq",
        "checkpoint_format": "gptq",
        "bits": quantizer.bits,
        "group_size": quantizer.group_size if quantizer.group_size > 0 else -1,
        "sym": quantizer.sym,
        "desc_act": False,
        "true_sequential": False,
        "damp_percent": 0.01,
        "lm_head": False,
        "provider": "hooklint",
    }
    dynamic = {}
    for quantized in quantizer.quantized.values():
        spec = quantized.spec
        if (spec.bits, spec.group_size, spec.sym) != (
            quantizer.bits,
            quantizer.group_size,
            quantizer.sym,
        ):
            dynamic[f"+:^{re.escape(quantized.base)}$"] = {
                "bits": spec.bits,
                "group_size": spec.group_size,
                "sym": spec.sym,
            }
    coverage = quantizer.coverage
    for skipped in coverage.skipped if coverage is not None else ():
        module = skipped.name.rsplit(".", 1)[0]
        dynamic[f"-:^{re.escape(module)}$"] = {}
    if dynamic:
        config["dynamic"] = dynamic
    config["block_name_to_quantize"] = _block_prefixes(quantizer)
    return config


def _block_prefixes(quantizer) -> list[str]:
    """The block-stack names (``model.layers``) the quantized modules live in."""
    prefixes = []
    for quantized in quantizer.quantized.values():
        match = re.match(r"(.*?)\.(\d+)(\.|$)", quantized.module)
        if match and match.group(1) not in prefixes:
            prefixes.append(match.group(1))
    return prefixes


# --- loading -----------------------------------------------------------------------------------


class QuantLinear(nn.Module):
    """A GPTQ-format linear layer in plain torch (any device): unpacks its weight and calls ``F.linear``.

    ``cache_weight=True`` keeps the dequantized weight after the first call
    (faster, but the memory of a dense layer).
    """

    def __init__(
        self,
        bits: int,
        group_size: int,
        in_features: int,
        out_features: int,
        bias: bool,
        *,
        cache_weight: bool = False,
    ):
        super().__init__()
        if bits not in GPTQ_BITS:
            raise NotImplementedError(f"QuantLinear supports {GPTQ_BITS} bits, got {bits}")
        self.bits, self.in_features, self.out_features = bits, in_features, out_features
        self.group_size = group_size if group_size > 0 else in_features
        groups = math.ceil(in_features / self.group_size)
        self.register_buffer(
            "qweight", torch.zeros(in_features * bits // 32, out_features, dtype=torch.int32)
        )
        self.register_buffer("qzeros", torch.zeros(groups, out_features * bits // 32, dtype=torch.int32))
        self.register_buffer("scales", torch.zeros(groups, out_features, dtype=torch.float16))
        self.register_buffer("g_idx", torch.arange(in_features, dtype=torch.int32) // self.group_size)
        if bias:
            self.register_buffer("bias", torch.zeros(out_features, dtype=torch.float16))
        else:
            self.bias = None
        self.cache_weight = cache_weight
        self._weight = None

    def dequantized_weight(self, dtype: torch.dtype) -> torch.Tensor:
        if self._weight is not None and self._weight.dtype == dtype:
            return self._weight
        weight = gptq_unpack(self.qweight, self.qzeros, self.scales, self.g_idx, self.bits).to(dtype)
        if self.cache_weight:
            self._weight = weight
        return weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.dequantized_weight(x.dtype)
        bias = None if self.bias is None else self.bias.to(x.dtype)
        return nn.functional.linear(x, weight, bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bits={self.bits}, group_size={self.group_size}"
        )


def _settings_for(name: str, config: Mapping) -> tuple[int, int]:
    bits, group_size = config["bits"], config["group_size"]
    for pattern, override in config.get("dynamic", {}).items():
        if pattern.startswith("+:") and re.match(pattern[2:], name):
            bits = override.get("bits", bits)
            group_size = override.get("group_size", group_size)
    return bits, group_size


def load_quantized(model: nn.Module, path: str | Path, *, cache_weight: bool = False) -> nn.Module:
    """Load a checkpoint written by :func:`export` into ``model`` (same architecture), in place.

    Each quantized ``nn.Linear`` / ``Conv1D`` is replaced by a
    :class:`QuantLinear`; fused expert parameters get their dequantized
    weights; every other tensor is loaded as is (cast to the model's dtype).
    Raises ValueError when the checkpoint and the model do not match.
    """
    directory = Path(path)
    config = json.loads((directory / "quantize_config.json").read_text())
    tensors = load_safetensors(directory / WEIGHTS_NAME)
    bases = [name[: -len(".qweight")] for name in tensors if name.endswith(".qweight")]
    loaded = set()  # state-dict names filled from the quantized tensors
    for base in bases:
        bits, group_size = _settings_for(base, config)
        parts = {key: tensors.pop(f"{base}.{key}") for key in ("qweight", "qzeros", "scales", "g_idx")}
        try:
            module = model.get_submodule(base)
            param_name = None
        except AttributeError:
            module_name, _, param_name = base.rpartition(".")
            module = model.get_submodule(module_name)
        if param_name is not None:  # fused experts: dequantize into the parameter
            param = getattr(module, param_name)
            weights = [
                gptq_unpack(qw, qz, sc, parts["g_idx"], bits)
                for qw, qz, sc in zip(parts["qweight"], parts["qzeros"], parts["scales"])
            ]
            with torch.no_grad():
                param.copy_(torch.stack(weights).to(param.dtype))
            loaded.add(base)
            continue
        is_conv1d = type(module).__name__ == "Conv1D"
        if not (isinstance(module, nn.Linear) or is_conv1d):
            raise ValueError(f"{base}: checkpoint has a quantized layer, model has {type(module).__name__}")
        in_features, out_features = (
            tuple(module.weight.shape) if is_conv1d else (module.in_features, module.out_features)
        )
        bias_name = f"{base}.bias"
        layer = QuantLinear(
            bits, group_size, in_features, out_features, bias_name in tensors, cache_weight=cache_weight
        )
        for key, value in parts.items():
            if getattr(layer, key).shape != value.shape:
                raise ValueError(f"{base}.{key}: shape {tuple(value.shape)} does not fit the model")
            setattr(layer, key, value)
        if bias_name in tensors:
            layer.bias = tensors.pop(bias_name)
        layer.to(_first_device(module))
        parent_name, _, child = base.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, child, layer)
        loaded.update(f"{base}.{name}" for name, _ in layer.named_buffers())
    state = model.state_dict()
    missing = [k for k in state if k not in tensors and k not in loaded]
    if missing:
        raise ValueError(f"checkpoint lacks {len(missing)} tensors, e.g. {missing[:3]}")
    extra = [k for k in tensors if k not in state]
    if extra:
        raise ValueError(f"checkpoint has {len(extra)} tensors the model does not, e.g. {extra[:3]}")
    with torch.no_grad():
        for name, value in tensors.items():
            target = state[name]
            target.copy_(value.to(target.dtype))
    return model


def _first_device(module: nn.Module):
    for tensor in module.parameters():
        return tensor.device
    return torch.device("cpu")
