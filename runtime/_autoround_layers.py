"""Which weights of a block AutoRound quantizes, with which settings, and why others are skipped.

Three kinds of weight are quantized, each viewed as a matrix ``(rows, in)``
whose groups run along the input dimension:

* ``linear``: ``nn.Linear.weight`` ``(out, in)``, as is;
* ``conv1d``: transformers' ``Conv1D`` (GPT-2) stores ``(in, out)``; the
  matrix is its transpose;
* ``experts``: a fused 3-D expert parameter ``(experts, out, in)`` (the fused
  MoE layers of recent transformers); the matrix is ``(experts * out, in)``,
  so scales and zero points are per expert, row and group.

``layer_config`` maps a layer name or pattern to settings: ``{"bits": 8}``,
``{"group_size": 32, "sym": True}``, or a skip (``None``, ``"skip"``,
``{"skip": True}`` or ``{"bits": 16}``).  A key matches a weight's module name
(``model.layers.0.mlp.down_proj``) when equal to it, when it is a suffix at a
dot (``mlp.down_proj``), or as an ``fnmatch`` pattern (``*.mlp.*``); an exact
name wins over a suffix, a suffix over a pattern, and otherwise the first
matching key in the mapping's order.  Without a matching key, the names in
:data:`DEFAULT_SKIP` (``lm_head``, MoE routers) are skipped.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass

from hooklint.runtime import require_torch

torch = require_torch()
nn = torch.nn

DEFAULT_SKIP = ("lm_head", "*.gate", "*.router", "*router*", "*.shared_expert_gate")
"""Patterns skipped unless ``layer_config`` names them: output heads and MoE routers.

A router's few rows decide which experts run; quantizing it changes routing
for little memory, so AutoRound's reference keeps it in full precision too.
(``gate_proj`` of a gated MLP does not match ``*.gate``.)
"""

MAX_UNSUPPORTED_SHARE = 0.05
"""Default largest share of a model's block weights (elements of parameters with
two or more dimensions) that may stay unquantized because their layer type is
unsupported; beyond it ``quantize`` raises (or warns, with ``on_skip="warn"``)."""


@dataclass(frozen=True)
class WeightSpec:
    """One weight to quantize: where it is, how to view it as a matrix, and its settings."""

    module: str  # module name relative to the block ("" for the block itself)
    param: str  # parameter name on that module
    kind: str  # "linear", "conv1d" or "experts"
    shape: tuple[int, ...]
    bits: int
    group_size: int
    sym: bool

    @property
    def key(self) -> str:
        """The name ``functional_call`` substitutes: ``module.param``."""
        return f"{self.module}.{self.param}" if self.module else self.param

    @property
    def in_features(self) -> int:
        return self.shape[0] if self.kind == "conv1d" else self.shape[-1]


@dataclass(frozen=True)
class Skipped:
    """A block weight left in full precision and why."""

    name: str  # full parameter name in the model
    numel: int
    reason: str
    intended: bool  # True for layer_config or DEFAULT_SKIP, False for unsupported types


def to_matrix(spec: WeightSpec, weight: torch.Tensor) -> torch.Tensor:
    """The ``(rows, in)`` matrix view of a weight of kind ``spec.kind``."""
    if spec.kind == "conv1d":
        return weight.t()
    if spec.kind == "experts":
        return weight.reshape(-1, weight.shape[-1])
    return weight


def from_matrix(spec: WeightSpec, matrix: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`to_matrix`: back to the parameter's shape."""
    if spec.kind == "conv1d":
        return matrix.t()
    if spec.kind == "experts":
        return matrix.reshape(spec.shape)
    return matrix


def kind_of(module: nn.Module, param_name: str, param: torch.Tensor) -> str | None:
    """``linear``, ``conv1d``, ``experts``, or None for a weight AutoRound does not quantize."""
    if param.dim() < 2 or not param.is_floating_point():
        return None
    if isinstance(module, nn.Linear) and param_name == "weight":
        return "linear"
    if (
        type(module).__name__ == "Conv1D"
        and hasattr(module, "nf")
        and param_name == "weight"
        and param.dim() == 2
    ):
        return "conv1d"
    if param.dim() == 3 and not isinstance(module, (nn.modules.conv._ConvNd, nn.Embedding)):
        return "experts"
    return None


def _match_rank(name: str, key: str) -> int | None:
    if name == key:
        return 0
    if name.endswith("." + key):
        return 1
    if fnmatch.fnmatchcase(name, key):
        return 2
    return None


def resolve(name: str, layer_config: Mapping[str, object]) -> tuple[str, object] | None:
    """The (key, setting) of ``layer_config`` that applies to module ``name``, or None."""
    best = None
    for key, setting in layer_config.items():
        rank = _match_rank(name, key)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, key, setting)
    return None if best is None else (best[1], best[2])


def is_skip(setting) -> bool:
    if setting is None or setting == "skip":
        return True
    if isinstance(setting, Mapping):
        return bool(setting.get("skip")) or setting.get("bits", 0) >= 16
    raise ValueError(
        f"layer_config values are dicts (bits, group_size, sym), None or 'skip'; got {setting!r}"
    )


_SETTING_KEYS = {"bits", "group_size", "sym", "skip"}


def plan_block(
    block: nn.Module,
    prefix: str,
    defaults: tuple[int, int, bool],
    layer_config: Mapping[str, object],
) -> tuple[list[WeightSpec], list[Skipped], int]:
    """The weights of ``block`` to quantize, those skipped, and the block's weight elements.

    ``prefix`` is the block's name in the model (for ``layer_config`` and the
    skip report); ``defaults`` are (bits, group_size, sym).
    """
    specs: list[WeightSpec] = []
    skipped: list[Skipped] = []
    total = 0
    for module_name, module in block.named_modules():
        full_module = f"{prefix}.{module_name}" if module_name else prefix
        for param_name, param in module.named_parameters(recurse=False):
            if param.dim() < 2:
                continue  # biases and norms: never counted as weights
            total += param.numel()
            full_name = f"{full_module}.{param_name}"
            kind = kind_of(module, param_name, param)
            # Fused expert parameters are named by module.param; others by module.
            target = full_name if kind == "experts" else full_module
            chosen = resolve(target, layer_config) or resolve(full_name, layer_config)
            if chosen is None:
                default = resolve(target, {k: None for k in DEFAULT_SKIP})
                if default is not None:
                    skipped.append(Skipped(full_name, param.numel(), f"default skip ({default[0]})", True))
                    continue
                setting = {}
            else:
                key, setting = chosen
                if is_skip(setting):
                    skipped.append(Skipped(full_name, param.numel(), f"layer_config[{key!r}]", True))
                    continue
                unknown = set(setting) - _SETTING_KEYS
                if unknown:
                    raise ValueError(f"layer_config[{key!r}] has unknown settings {sorted(unknown)}")
            if kind is None:
                skipped.append(
                    Skipped(
                        full_name,
                        param.numel(),
                        f"unsupported layer type {type(module).__name__}",
                        False,
                    )
                )
                continue
            bits = int(setting.get("bits", defaults[0]))
            if not 1 <= bits <= 8:
                raise ValueError(f"bits must be in 1..8 (or 16 to skip), got {bits} for {target}")
            specs.append(
                WeightSpec(
                    module_name,
                    param_name,
                    kind,
                    tuple(param.shape),
                    bits,
                    int(setting.get("group_size", defaults[1])),
                    bool(setting.get("sym", defaults[2])),
                )
            )
    return specs, skipped, total


@dataclass
class Coverage:
    """What one ``quantize`` call quantized and skipped, over all its blocks."""

    quantized: dict[str, WeightSpec]  # full parameter name -> spec
    skipped: list[Skipped]
    total: int  # elements of all block weights (parameters with >= 2 dims)

    @property
    def quantized_numel(self) -> int:
        return sum(_numel(spec.shape) for spec in self.quantized.values())

    @property
    def quantized_share(self) -> float:
        return self.quantized_numel / self.total if self.total else 0.0

    @property
    def unsupported_share(self) -> float:
        bad = sum(s.numel for s in self.skipped if not s.intended)
        return bad / self.total if self.total else 0.0

    def summary(self, limit: int = 6) -> str:
        """One line: shares and the first skipped weights with their reasons."""
        shown = "; ".join(f"{s.name}: {s.reason}" for s in self.skipped[:limit])
        more = len(self.skipped) - limit
        tail = f"; and {more} more" if more > 0 else ""
        return (
            f"{len(self.quantized)} weights quantized ({self.quantized_share:.1%} of block "
            f"weight elements), {len(self.skipped)} skipped" + (f": {shown}{tail}" if self.skipped else "")
        )


def _numel(shape) -> int:
    count = 1
    for size in shape:
        count *= size
    return count
