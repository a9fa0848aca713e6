"""4-bit weights as a ``torch.nn.utils.parametrize`` parametrization, with a dequant cache that cannot leak.

:func:`replace_parameter_4bit` stores a parameter as packed NF4/FP4 codes and
dequantizes it on access. :func:`enable_dequant_cache` makes each forward of a
module dequantize once, through the global parametrization cache, and always
releases that cache again: it is the exception-safe replacement of the
pre-hook ``_cache_enabled += 1`` / post-hook ``_cache_enabled -= 1`` pair, whose
post-hook is skipped when forward raises (non-reentrant checkpointing raises
``_StopRecomputationError`` through forward on every early-stopped recompute).
"""

from __future__ import annotations

import json
import sys
import warnings

from hooklint.runtime import require_torch
from hooklint.runtime.hooks import PairedHooksHandle, paired_forward_hooks
from hooklint.runtime.quant4bit import (
    ABSMAX_NESTED_BLOCKSIZE,
    QUANT_TYPES,
    code_book,
    compress_absmax,
    decompress_absmax,
    dequantize_4bit,
    quantize_4bit,
)

torch = require_torch()
nn = torch.nn
P = torch.nn.utils.parametrize

__all__ = [
    "Dequantize4bit",
    "enable_dequant_cache",
    "remove_bnb_cache_hooks",
    "replace_parameter_4bit",
    "replace_parameter_4bit_prequantized",
]

_BNB_QUANT_STATE = "quant_state.bitsandbytes__"


class Dequantize4bit(nn.Module):
    """Parametrization: packed 4-bit codes -> the dequantized tensor.

    The quantization state lives in buffers named as bitsandbytes names them
    (``absmax``, ``quant_map``; with ``compress_statistics`` ``absmax`` holds
    uint8 codes and ``nested_absmax`` / ``nested_quant_map`` / ``nested_offset``
    decompress them) and in attributes (shape, dtype, quant type, block size).
    ``module.state_dict()`` uses bitsandbytes' layout (see
    :func:`replace_parameter_4bit`). Casting the module (``.to(torch.bfloat16)``,
    ``.half()``) changes the dtype of the dequantized weight, never the
    quantization state, which stays float32 / uint8.
    """

    def __init__(
        self,
        absmax,
        *,
        shape,
        dtype,
        quant_type,
        blocksize,
        compress_statistics,
        quant_map=None,
        nested=None,
    ) -> None:
        super().__init__()
        self.shape = torch.Size(shape)
        self.dtype = dtype
        self.quant_type = quant_type
        self.blocksize = blocksize
        self.nested_blocksize = ABSMAX_NESTED_BLOCKSIZE
        self.compress_statistics = compress_statistics
        if quant_map is None:
            quant_map = code_book(quant_type, absmax.device)
        self.register_buffer("quant_map", quant_map.float())
        if compress_statistics:
            codes, scales, offset, absmax_map = nested or compress_absmax(absmax)
            self.register_buffer("absmax", codes)
            self.register_buffer("nested_absmax", scales.float())
            self.register_buffer("nested_quant_map", absmax_map.float())
            self.register_buffer("nested_offset", torch.as_tensor(offset, dtype=torch.float32))
        else:
            self.register_buffer("absmax", absmax.float())

    def block_absmax(self) -> torch.Tensor:
        """The per-block scale, decompressed if needed."""
        if self.compress_statistics:
            return decompress_absmax(
                self.absmax, self.nested_absmax, self.nested_offset, self.nested_quant_map
            )
        return self.absmax

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        return dequantize_4bit(packed, self.block_absmax(), self.quant_map, self.shape, self.dtype)

    def _apply(self, fn, recurse=True):
        # Module.to(dtype) casts floating buffers: keep the quantization state's
        # dtypes, follow the device, and let the dtype decide the output dtype.
        probe = fn(torch.empty(0, dtype=self.dtype, device=self.absmax.device))
        if probe.is_floating_point():
            self.dtype = probe.dtype
        for name, buffer in self._buffers.items():
            if buffer is not None:
                moved = fn(buffer)
                if moved.dtype != buffer.dtype:  # a cast: move the exact values instead
                    moved = buffer.to(moved.device)
                self._buffers[name] = moved
        return self

    def bnb_state(self) -> dict:
        """The quantization state as bitsandbytes' packed ``QuantState.as_dict``."""
        state = {"absmax": self.absmax, "quant_map": self.quant_map}
        info = {
            "quant_type": self.quant_type,
            "blocksize": self.blocksize,
            "dtype": str(self.dtype).removeprefix("torch."),
            "shape": list(self.shape),
        }
        if self.compress_statistics:
            state["nested_absmax"] = self.nested_absmax
            state["nested_quant_map"] = self.nested_quant_map
            info.update(
                nested_blocksize=self.nested_blocksize,
                nested_dtype="float32",
                nested_offset=float(self.nested_offset),
            )
        packed_info = torch.tensor(list(json.dumps(info).encode()), dtype=torch.uint8)
        state[_BNB_QUANT_STATE + self.quant_type] = packed_info
        return state

    @classmethod
    def from_bnb_state(cls, state: dict, device=None) -> Dequantize4bit:
        """From bitsandbytes' (packed or unpacked) quant-state dict, key prefixes stripped or not."""
        state = {key.rpartition(".")[2] if "quant_state" not in key else key: v for key, v in state.items()}
        info = dict(state)
        packed = [k for k in state if "quant_state" in k]
        if len(packed) > 1:
            raise ValueError(f"more than one packed quant_state entry: {packed}")
        if packed:
            info.update(json.loads(bytes(state[packed[0]].tolist()).decode()))
        missing = {"absmax", "quant_map", "quant_type", "blocksize", "dtype", "shape"} - info.keys()
        if missing:
            raise ValueError(f"not a 4-bit quant state: {sorted(missing)} missing")
        if info["quant_type"] not in QUANT_TYPES:
            raise ValueError(f"quant_type must be one of {QUANT_TYPES}, not {info['quant_type']!r}")

        def on(t):
            return t.to(device) if device is not None else t

        nested = None
        if "nested_absmax" in info:
            nested = (
                on(info["absmax"]),
                on(info["nested_absmax"]),
                torch.tensor(float(info["nested_offset"]), device=device),
                on(info["nested_quant_map"]),
            )
        return cls(
            on(info["absmax"]),
            shape=info["shape"],
            dtype=getattr(torch, info["dtype"]),
            quant_type=info["quant_type"],
            blocksize=int(info["blocksize"]),
            compress_statistics=nested is not None,
            quant_map=on(info["quant_map"]),
            nested=nested,
        )

    def extra_repr(self) -> str:
        return (
            f"shape={tuple(self.shape)}, dtype={self.dtype}, quant_type={self.quant_type}, "
            f"blocksize={self.blocksize}, compress_statistics={self.compress_statistics}"
        )


def _parametrization(module: nn.Module, name: str) -> Dequantize4bit | None:
    if not P.is_parametrized(module, name):
        return None
    return next((p for p in module.parametrizations[name] if isinstance(p, Dequantize4bit)), None)


def _save_bnb_layout(module, state_dict, prefix, local_metadata, *, name):
    """State-dict hook: ``<name>`` (packed codes) and ``<name>.absmax`` ... as bitsandbytes saves them."""
    parametrization = _parametrization(module, name)
    original = f"{prefix}parametrizations.{name}.original"
    if parametrization is None or original not in state_dict:
        return
    state_dict[f"{prefix}{name}"] = state_dict.pop(original)
    inner = f"{prefix}parametrizations.{name}."
    for key in [k for k in state_dict if k.startswith(inner)]:
        del state_dict[key]
    for key, value in parametrization.bnb_state().items():
        state_dict[f"{prefix}{name}.{key}"] = value


def _load_bnb_layout(
    module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors, *, name
):
    """Load-state-dict pre-hook: read bitsandbytes' layout (ours, or saved by bitsandbytes)."""
    packed_key = f"{prefix}{name}"
    state_keys = [k for k in state_dict if k.startswith(f"{packed_key}.")]
    if packed_key not in state_dict or not state_keys:
        return
    state = {k[len(packed_key) + 1 :]: state_dict.pop(k) for k in state_keys}
    packed = state_dict.pop(packed_key)
    try:
        loaded = Dequantize4bit.from_bnb_state(state, device=packed.device)
    except ValueError as exc:
        errors.append(f"{packed_key}: {exc}")
        return
    current = _parametrization(module, name)
    original = module.parametrizations[name].original
    # Give the parameter and the buffers the loaded shapes and dtypes, then let
    # the ordinary load copy the values under their internal names.
    original.data = torch.empty_like(packed, device=original.device)
    current.__dict__.update(
        {k: getattr(loaded, k) for k in ("shape", "dtype", "quant_type", "blocksize", "compress_statistics")}
    )
    current._buffers.clear()
    inner = f"{prefix}parametrizations.{name}."
    state_dict[inner + "original"] = packed
    for key, buffer in loaded._buffers.items():
        current._buffers[key] = torch.empty_like(buffer, device=original.device)
        index = next(i for i, p in enumerate(module.parametrizations[name]) if p is current)
        state_dict[f"{inner}{index}.{key}"] = buffer


def _install_bnb_layout(module: nn.Module, name: str) -> None:
    """bitsandbytes' state-dict layout for ``module.<name>``; the hooks live as long as the module."""
    from functools import partial

    save = partial(_save_bnb_layout, name=name)
    register_save = getattr(module, "register_state_dict_post_hook", None)
    if register_save is not None:
        register_save(lambda m, sd, prefix, meta: save(m, sd, prefix, meta))
    else:  # torch < 2.5
        module._register_state_dict_hook(save)

    def load(m, *args):
        _load_bnb_layout(m, *args, name=name)

    register_load = getattr(module, "register_load_state_dict_pre_hook", None)
    if register_load is not None:
        register_load(load)
    else:  # torch < 2.5: the private name, same hook signature with with_module=True
        module._register_load_state_dict_pre_hook(load, with_module=True)


def replace_parameter_4bit(
    module: nn.Module,
    param_name: str,
    compress_statistics: bool = False,
    quant_type: str = "nf4",
    blocksize: int | None = None,
) -> Dequantize4bit:
    """Quantize ``module.<param_name>`` to 4 bits and dequantize it on every access.

    bitsandbytes' signature (argument names and order; ``blocksize=None`` is 64).
    ``quant_type`` is ``"nf4"``, ``"fp4"`` (bitsandbytes' FP4 code book) or
    ``"e2m1"`` (OCP FP4 E2M1; bitsandbytes cannot read it). Works for any shape
    (2-D weights, 3-D fused-expert weights ``[experts, out, in]``) on any
    device. The packed codes become the frozen parameter
    ``module.parametrizations.<param_name>.original`` (``uint8 [n/2, 1]``, half
    a byte per value, bitsandbytes' layout); ``module.<param_name>`` returns the
    dequantized tensor in the original dtype. ``module.state_dict()`` holds
    what bitsandbytes saves (``<name>``, ``<name>.absmax``,
    ``<name>.quant_map``, ``<name>.quant_state.bitsandbytes__<type>``, and the
    ``nested_*`` entries with ``compress_statistics``), and
    ``load_state_dict`` reads it back, also when bitsandbytes wrote it.
    Returns the parametrization module holding the quantization state. Unlike
    bitsandbytes, no cache hooks are registered: use :func:`enable_dequant_cache`.
    """
    if quant_type not in QUANT_TYPES:
        raise ValueError(f"quant_type must be one of {QUANT_TYPES}, not {quant_type!r}")
    blocksize = 64 if blocksize is None else blocksize
    original = getattr(module, param_name)
    packed, absmax = quantize_4bit(original, quant_type, blocksize)
    parametrization = Dequantize4bit(
        absmax,
        shape=original.shape,
        dtype=original.dtype,
        quant_type=quant_type,
        blocksize=blocksize,
        compress_statistics=compress_statistics,
    )
    setattr(module, param_name, nn.Parameter(packed, requires_grad=False))
    P.register_parametrization(module, param_name, parametrization, unsafe=True)
    _install_bnb_layout(module, param_name)
    return parametrization


def replace_parameter_4bit_prequantized(
    module: nn.Module, param_name: str, qs_dict: dict, device=None
) -> Dequantize4bit:
    """bitsandbytes' pre-quantized load: ``module.<param_name>`` already holds packed codes.

    ``qs_dict`` is the quant state as bitsandbytes saves it (``absmax``,
    ``quant_map``, ``quant_state.bitsandbytes__nf4`` ..., prefixes stripped or not).
    """
    packed = getattr(module, param_name)
    parametrization = Dequantize4bit.from_bnb_state(qs_dict, device=device or packed.device)
    setattr(module, param_name, nn.Parameter(packed.detach(), requires_grad=False))
    P.register_parametrization(module, param_name, parametrization, unsafe=True)
    _install_bnb_layout(module, param_name)
    return parametrization


def _enable_cache(module: nn.Module):
    cache = P.cached()
    cache.__enter__()
    return cache


def _release_cache(module: nn.Module, cache) -> None:
    cache.__exit__(None, None, None)


_BNB_MODULE = "bitsandbytes.nn.parametrize"
_BNB_ENABLE = "_enable_parametrization_cache"
_BNB_DISABLE = "_disable_parametrization_cache"


def _is_bnb_cache_hook(hook, name: str) -> bool:
    """bitsandbytes' cache hook: by identity when it is imported, else by qualified name."""
    bnb = sys.modules.get(_BNB_MODULE)
    if bnb is not None and hook is getattr(bnb, name, None):
        return True
    return getattr(hook, "__module__", None) == _BNB_MODULE and getattr(hook, "__qualname__", None) == name


def remove_bnb_cache_hooks(module: nn.Module) -> list[str]:
    """Remove bitsandbytes' ``_cache_enabled`` pre/post hook pair from ``module`` and below.

    bitsandbytes <= 0.49 registers ``P._cache_enabled += 1`` / ``-= 1`` forward
    hooks without ``always_call`` and keeps no handle; under non-reentrant
    checkpointing the post-hook is skipped on every early-stopped recomputation,
    so the counter climbs. Returns the qualified names of the modules it was
    removed from.
    """
    removed = []
    for path, submodule in module.named_modules():
        pre = [k for k, h in submodule._forward_pre_hooks.items() if _is_bnb_cache_hook(h, _BNB_ENABLE)]
        post = [k for k, h in submodule._forward_hooks.items() if _is_bnb_cache_hook(h, _BNB_DISABLE)]
        for key in pre:
            del submodule._forward_pre_hooks[key]
            submodule._forward_pre_hooks_with_kwargs.pop(key, None)
        for key in post:
            del submodule._forward_hooks[key]
            submodule._forward_hooks_with_kwargs.pop(key, None)
            getattr(submodule, "_forward_hooks_always_called", {}).pop(key, None)
        if pre or post:
            removed.append(path or type(submodule).__name__)
    return removed


def enable_dequant_cache(module: nn.Module) -> PairedHooksHandle:
    """Cache parametrized tensors for the duration of each ``module`` forward.

    Every parametrized weight under ``module`` is then dequantized once per
    forward instead of once per access. The cache is entered and left through
    ``torch.nn.utils.parametrize.cached()`` from a :func:`paired_forward_hooks`
    pair, so ``parametrize._cache_enabled`` returns to its previous value and the
    cache is emptied after every forward, also when forward raises or
    checkpoint recomputation stops early. bitsandbytes' own cache hook pair
    (``bitsandbytes.nn.parametrize.replace_parameter_4bit`` registers one, and
    up to 0.49 it leaks) is removed from ``module`` and below first, with a
    warning naming where. Returns a handle that removes the hooks.
    """
    removed = remove_bnb_cache_hooks(module)
    if removed:
        warnings.warn(
            "enable_dequant_cache removed bitsandbytes' parametrization-cache hook pair from "
            + ", ".join(removed)
            + " (it leaks parametrize._cache_enabled when a forward raises or a checkpoint "
            "recomputation stops early); this cache replaces it",
            UserWarning,
            stacklevel=2,
        )
    return paired_forward_hooks(module, _enable_cache, _release_cache)
