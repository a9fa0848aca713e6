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

from hooklint.runtime import require_torch
from hooklint.runtime.hooks import PairedHooksHandle, paired_forward_hooks
from hooklint.runtime.quant4bit import (
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

__all__ = ["Dequantize4bit", "enable_dequant_cache", "replace_parameter_4bit"]


class Dequantize4bit(nn.Module):
    """Parametrization: packed 4-bit codes -> the dequantized tensor.

    The quantization state lives in buffers (``absmax``, or ``absmax_codes`` /
    ``absmax_scales`` / ``absmax_offset`` with ``compress_statistics``) and in the
    extra state (shape, dtype, quant type, block size), so ``state_dict()`` and
    ``load_state_dict()`` carry everything needed to dequantize.
    """

    def __init__(
        self, absmax, *, shape, dtype, quant_type, blocksize, compress_statistics
    ) -> None:
        super().__init__()
        self.shape = torch.Size(shape)
        self.dtype = dtype
        self.quant_type = quant_type
        self.blocksize = blocksize
        self.compress_statistics = compress_statistics
        if compress_statistics:
            codes, scales, offset = compress_absmax(absmax)
            self.register_buffer("absmax_codes", codes)
            self.register_buffer("absmax_scales", scales)
            self.register_buffer("absmax_offset", offset)
        else:
            self.register_buffer("absmax", absmax)
        self.register_buffer(
            "code", code_book(quant_type, absmax.device), persistent=False
        )

    def block_absmax(self) -> torch.Tensor:
        """The per-block scale, decompressed if needed."""
        if self.compress_statistics:
            return decompress_absmax(
                self.absmax_codes, self.absmax_scales, self.absmax_offset
            )
        return self.absmax

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        return dequantize_4bit(
            packed, self.block_absmax(), self.code, self.shape, self.dtype
        )

    def get_extra_state(self) -> dict:
        return {
            "shape": list(self.shape),
            "dtype": str(self.dtype).removeprefix("torch."),
            "quant_type": self.quant_type,
            "blocksize": self.blocksize,
        }

    def set_extra_state(self, state: dict) -> None:
        self.shape = torch.Size(state["shape"])
        self.dtype = getattr(torch, state["dtype"])
        self.quant_type = state["quant_type"]
        self.blocksize = state["blocksize"]
        self.code = code_book(self.quant_type, self.code.device)

    def extra_repr(self) -> str:
        return (
            f"shape={tuple(self.shape)}, dtype={self.dtype}, quant_type={self.quant_type}, "
            f"blocksize={self.blocksize}, compress_statistics={self.compress_statistics}"
        )


def replace_parameter_4bit(
    module: nn.Module,
    name: str,
    quant_type: str = "nf4",
    blocksize: int = 64,
    compress_statistics: bool = False,
) -> Dequantize4bit:
    """Quantize ``module.<name>`` to 4 bits and dequantize it on every access.

    Works for any shape (2-D weights, 3-D fused-expert weights ``[experts, out,
    in]``) on any device. The packed codes become the frozen parameter
    ``module.parametrizations.<name>.original`` (``uint8``, half a byte per
    value); ``module.<name>`` returns the dequantized tensor in the original
    dtype. Returns the parametrization module holding the quantization state.
    """
    if quant_type not in QUANT_TYPES:
        raise ValueError(f"quant_type must be one of {QUANT_TYPES}, not {quant_type!r}")
    original = getattr(module, name)
    packed, absmax = quantize_4bit(original, quant_type, blocksize)
    parametrization = Dequantize4bit(
        absmax,
        shape=original.shape,
        dtype=original.dtype,
        quant_type=quant_type,
        blocksize=blocksize,
        compress_statistics=compress_statistics,
    )
    setattr(module, name, nn.Parameter(packed, requires_grad=False))
    P.register_parametrization(module, name, parametrization, unsafe=True)
    return parametrization


def _enable_cache(module: nn.Module):
    cache = P.cached()
    cache.__enter__()
    return cache


def _release_cache(module: nn.Module, cache) -> None:
    cache.__exit__(None, None, None)


def enable_dequant_cache(module: nn.Module) -> PairedHooksHandle:
    """Cache parametrized tensors for the duration of each ``module`` forward.

    Every parametrized weight under ``module`` is then dequantized once per
    forward instead of once per access. The cache is entered and left through
    ``torch.nn.utils.parametrize.cached()`` from a :func:`paired_forward_hooks`
    pair, so ``parametrize._cache_enabled`` returns to its previous value and the
    cache is emptied after every forward, also when forward raises or
    checkpoint recomputation stops early. Returns a handle that removes the hooks.
    """
    return paired_forward_hooks(module, _enable_cache, _release_cache)
