"""Finding a model's repeated blocks and capturing their inputs.

Leak-freedom is structural here:

* the only hooks are forward pre-hooks on the blocks being captured; they are
  removed in ``finally`` before :func:`capture_inputs` returns, so no hook is
  alive while any block is optimised, and none survives an exception;
* the last hook ends the model forward (:class:`_StopForward`) as soon as the
  inputs are stored, so later layers never run during capture;
* the capture forward runs with ``use_cache=False`` (every ``config.use_cache``
  in the model is set to False for the forward and restored afterwards), and
  cache objects (``Cache``, ``past_key_values``, ``layer_past``) are never kept
  in the captured keyword arguments, so no tuning call can extend a cache;
* the store holds exactly ``nsamples`` samples; nothing appends to it later.

Each sample keeps its own keyword arguments.  Samples whose arguments have the
same layout (same ``None`` pattern, same tensor shapes) are run together; a
batch that mixes layouts (a padded sample's 4-D mask next to an unpadded
sample's ``None``) is split into one call per layout and the outputs are put
back in the batch's order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hooklint.runtime import require_torch
from hooklint.runtime.memory import storage_bytes

torch = require_torch()
nn = torch.nn

CACHE_KEYWORDS = frozenset({"past_key_values", "past_key_value", "layer_past"})
"""Keyword arguments that carry a decoder's key/value cache; never captured."""


def find_blocks(model: nn.Module) -> list[nn.Module]:
    """Return the largest ``nn.ModuleList`` whose children all share one type.

    This is the encoder or decoder layer stack of common transformer models.
    Raises ValueError when the model has none.  :func:`find_block_stacks`
    returns every stack (an encoder-decoder model has two).
    """
    stacks = _candidate_stacks(model)
    if not stacks:
        raise ValueError("no nn.ModuleList of same-type blocks found; pass blocks= explicitly")
    return max(stacks, key=len)


def find_block_stacks(model: nn.Module) -> list[list[nn.Module]]:
    """Every repeated block stack, in registration order (an encoder's before a decoder's).

    A stack is an ``nn.ModuleList`` of at least one child, all children of one
    type and containers themselves (not bare layers), with at least one
    parameter of two or more dimensions; a list nested
    inside another stack's blocks (a ModuleList of experts) is part of that
    stack, not a stack of its own.  Raises ValueError when there is none.
    """
    stacks = _candidate_stacks(model)
    if not stacks:
        raise ValueError("no nn.ModuleList of same-type blocks found; pass blocks= explicitly")
    return stacks


def _candidate_stacks(model: nn.Module) -> list[list[nn.Module]]:
    stacks: list[list[nn.Module]] = []
    inside: set[int] = set()
    for module in model.modules():
        if id(module) in inside or not isinstance(module, nn.ModuleList):
            continue
        children = list(module)
        if not children or len({type(child) for child in children}) != 1:
            continue
        if not any(p.dim() >= 2 for child in children for p in child.parameters()):
            continue
        if not any(True for _ in children[0].children()):
            continue  # a list of bare layers (heads, embeddings) is not a block stack
        stacks.append(children)
        inside.update(id(sub) for child in children for sub in child.modules())
    return stacks


class _Shared:
    """A captured value that is not per-sample (the same for the whole capture batch)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


@dataclass
class BlockInputs:
    """Inputs of the block being quantised, one row per calibration sample.

    ``hidden`` stacks every sample's hidden state along dim 0.  ``extras``
    holds each sample's remaining positional and keyword arguments (attention
    masks and the like), sliced to a leading dimension of 1 where they were
    per-sample.  ``hidden_keyword`` is the keyword the hidden state was passed
    under, or None when it was the first positional argument.
    """

    hidden: torch.Tensor
    extras: list[tuple[tuple, dict]]
    hidden_keyword: str | None = None
    layouts: list = field(default_factory=list)
    loss_mask: torch.Tensor | None = None  # (samples, seq) 1.0 where the token is real

    def loss_weights(self, indices: torch.Tensor, device) -> torch.Tensor | None:
        """The samples' ``attention_mask`` rows (padding gets weight 0), or None without padding."""
        if self.loss_mask is None:
            return None
        return self.loss_mask[indices].to(device)

    def __post_init__(self):
        if len(self.layouts) != len(self.extras):
            memo: dict = {}
            self.layouts = [_layout(extra, memo) for extra in self.extras]

    def __len__(self) -> int:
        return self.hidden.shape[0]

    def nbytes(self) -> int:
        """Bytes of tensor storage this store keeps alive (shared storage counted once)."""
        return storage_bytes(_tensors((self.hidden, self.extras)))

    def call(self, block: nn.Module, indices: torch.Tensor, forward=None):
        """Run ``forward`` (default: the block itself) on the samples at ``indices``.

        ``forward(args, kwargs)`` lets the caller substitute weights; the
        result is the block's hidden-state output, on the block's device,
        in the order of ``indices``.  Samples of different argument layouts
        are run in separate calls.
        """
        order = indices.tolist()
        groups: dict[Any, list[int]] = {}
        for position, index in enumerate(order):
            groups.setdefault(self.layouts[index], []).append(position)
        device = _device_of(block, self.hidden.device)
        if len(groups) == 1:
            return self._call_group(block, order, forward, device)
        parts, positions = [], []
        for members in groups.values():
            parts.append(self._call_group(block, [order[p] for p in members], forward, device))
            positions.extend(members)
        inverse = torch.empty(len(positions), dtype=torch.long)
        inverse[torch.tensor(positions)] = torch.arange(len(positions))
        return torch.cat(parts)[inverse.to(device)]

    def _call_group(self, block, order: list[int], forward, device):
        picked = [self.extras[i] for i in order]
        args = _to_device(_collate([extra[0] for extra in picked]), device)
        kwargs = _to_device(_collate([extra[1] for extra in picked]), device)
        hidden = self.hidden[torch.tensor(order)].to(device, non_blocking=True)
        if self.hidden_keyword is None:
            args = (hidden, *args)
        else:
            kwargs = {**kwargs, self.hidden_keyword: hidden}
        output = block(*args, **kwargs) if forward is None else forward(args, kwargs)
        return output[0] if isinstance(output, (tuple, list)) else output

    def replaced(self, hidden: torch.Tensor, extras: list[tuple[tuple, dict]] | None = None) -> BlockInputs:
        """A new hidden state (the next block's inputs), with these or new extras."""
        if extras is None:
            return BlockInputs(hidden, self.extras, self.hidden_keyword, self.layouts, self.loss_mask)
        return BlockInputs(hidden, extras, self.hidden_keyword, loss_mask=self.loss_mask)


@dataclass
class Captured:
    """What one capture forward saw: the first watched block's inputs and each watched block's extras."""

    inputs: BlockInputs
    extras: dict[int, list[tuple[tuple, dict]]]


class _StopForward(Exception):
    """Raised by the capture hook to end the model forward early."""


def capture_block_inputs(
    model: nn.Module, block: nn.Module, calibration: Iterable[Any], nsamples: int
) -> BlockInputs:
    """Run ``model`` on ``calibration`` items until ``block`` has seen ``nsamples`` samples.

    Each item is a tensor (``model(item)``), a dict (``model(**item)``) or a
    tuple/list (``model(*item)``).  The pre-hook is removed in ``finally``.
    """
    return capture_inputs(model, [block], calibration, nsamples).inputs


def capture_inputs(
    model: nn.Module,
    blocks: Sequence[nn.Module],
    calibration: Iterable[Any],
    nsamples: int,
    *,
    store_device: torch.device | None = None,
    pin_memory: bool = False,
) -> Captured:
    """Inputs of ``blocks[0]`` and the extra arguments of every block in ``blocks``.

    The model runs on ``calibration`` items (with every ``config.use_cache``
    set to False) until ``blocks[0]`` has seen ``nsamples`` samples; each
    forward stops at the last of ``blocks``.  Captured tensors are kept on
    ``store_device`` (default: where they were produced), pinned if asked.
    All hooks are removed in ``finally``.
    """
    device = _device_of(model, torch.device("cpu"))
    hidden_parts: list[torch.Tensor] = []
    extras: dict[int, list[tuple[tuple, dict]]] = {i: [] for i in range(len(blocks))}
    hidden_keyword: list[str | None] = [None]
    item_mask: list = [None]  # the current item's 2-D attention_mask, if any
    mask_parts: list = []

    def keep(value):
        if store_device is not None:
            value = value.to(store_device)
        if pin_memory and value.device.type == "cpu" and torch.cuda.is_available():
            value = value.pin_memory()
        return value

    def make_hook(position: int):
        def store(_module, args, kwargs):
            if args:
                hidden, rest = args[0], args[1:]
                keyword = None
            else:
                keyword = "hidden_states"
                hidden = kwargs["hidden_states"]
                rest = ()
            kwargs = _without_cache({k: v for k, v in kwargs.items() if k != keyword})
            rest = tuple(_drop_cache_value(value) for value in rest)
            batch = hidden.shape[0]
            for row in range(batch):
                extras[position].append((_slice(rest, row, batch, keep), _slice(kwargs, row, batch, keep)))
            if position == 0:
                hidden_keyword[0] = keyword
                hidden_parts.append(keep(hidden.detach()))
                mask = item_mask[0]
                if mask is None or tuple(mask.shape) != tuple(hidden.shape[:2]):
                    mask = torch.ones(hidden.shape[:2])
                mask_parts.append(mask.detach().float().cpu())
            if position == len(blocks) - 1:
                raise _StopForward

        return store

    handles = []
    try:
        for position, block in enumerate(blocks):
            handles.append(block.register_forward_pre_hook(make_hook(position), with_kwargs=True))
        with torch.no_grad(), _caches_off(model):
            for item in calibration:
                if len(extras[0]) >= nsamples:
                    break
                mask = item.get("attention_mask") if isinstance(item, dict) else None
                item_mask[0] = mask if isinstance(mask, torch.Tensor) and mask.dim() == 2 else None
                try:
                    _call_model(model, _no_cache_item(_to_device(item, device)))
                except _StopForward:
                    pass
    finally:
        for handle in handles:
            handle.remove()
    if not hidden_parts:
        raise ValueError("calibration produced no inputs for the first block")
    hidden = torch.cat(hidden_parts)[:nsamples]
    loss_mask = torch.cat(mask_parts)[:nsamples]
    inputs = BlockInputs(
        hidden,
        extras[0][:nsamples],
        hidden_keyword[0],
        loss_mask=None if bool((loss_mask == 1).all()) else loss_mask,
    )
    return Captured(inputs, {i: rows[:nsamples] for i, rows in extras.items()})


def same_extras(first: list, second: list) -> bool:
    """Whether two blocks were called with equal extra arguments for every sample."""
    return len(first) == len(second) and all(_equal(a, b) for a, b in zip(first, second))


@contextlib.contextmanager
def _caches_off(model: nn.Module):
    """Set ``use_cache = False`` on every config in ``model`` for the duration; restore after."""
    saved = []
    seen: set[int] = set()
    for module in model.modules():
        config = getattr(module, "config", None)
        if config is None or id(config) in seen or not hasattr(config, "use_cache"):
            continue
        seen.add(id(config))
        saved.append((config, config.use_cache))
    try:
        for config, _ in saved:
            config.use_cache = False
        yield
    finally:
        for config, value in saved:
            config.use_cache = value


def _no_cache_item(item):
    """A dict calibration item asks for no cache (``use_cache=False``) and passes none in."""
    if isinstance(item, dict) and ("use_cache" in item or CACHE_KEYWORDS.intersection(item)):
        item = {k: v for k, v in item.items() if k not in CACHE_KEYWORDS}
        item["use_cache"] = False
    return item


def _is_cache(value) -> bool:
    """A transformers cache object (any class named ``...Cache``), without importing transformers."""
    return any(cls.__name__.endswith("Cache") for cls in type(value).__mro__[:-1])


def _drop_cache_value(value):
    return None if _is_cache(value) else value


def _without_cache(kwargs: dict) -> dict:
    cleaned = {}
    for key, value in kwargs.items():
        if key in CACHE_KEYWORDS or _is_cache(value):
            continue
        cleaned[key] = False if key == "use_cache" else value
    return cleaned


def _call_model(model, item):
    if isinstance(item, dict):
        return model(**item)
    if isinstance(item, (tuple, list)):
        return model(*item)
    return model(item)


def _device_of(module: nn.Module, default: torch.device) -> torch.device:
    for param in module.parameters():
        return param.device
    return default


def _to_device(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device, non_blocking=True) if value.device != device else value
    if isinstance(value, dict):
        return {key: _to_device(item, device) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(item, device) for item in value)
    return value


def _slice(value, row: int, batch: int, keep):
    """Cut one sample out of ``value``: tensors whose dim 0 is the batch are sliced, the rest shared."""
    if isinstance(value, torch.Tensor):
        if value.dim() > 0 and value.shape[0] == batch:
            return keep(value[row : row + 1].detach())
        return _Shared(keep(value.detach()))
    if isinstance(value, dict):
        return {key: _slice(item, row, batch, keep) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_slice(item, row, batch, keep) for item in value)
    return value


def _layout(value, memo: dict | None = None):
    """A hashable description of an argument structure: samples with equal layouts can be batched.

    A shared (not per-sample) tensor is described by its content: exactly when
    small, else by a float64 fingerprint, computed once per tensor (``memo``).
    """
    memo = {} if memo is None else memo
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape[1:]), value.dtype)
    if isinstance(value, _Shared):
        tensor = value.value
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tensor.shape)
        if key not in memo:
            if tensor.numel() <= 4096:
                content = tuple(tensor.flatten().tolist())
            else:
                flat = tensor.detach().flatten().double()
                weights = torch.arange(1, flat.numel() + 1, dtype=torch.float64, device=flat.device)
                content = (float(flat.sum()), float((flat * weights).sum()))
            memo[key] = ("shared", tuple(tensor.shape), tensor.dtype, content)
        return memo[key]
    if isinstance(value, dict):
        return ("dict", tuple((k, _layout(v, memo)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_layout(v, memo) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return ("value", type(value).__name__, value)


def _collate(values: list):
    """Merge per-sample values of one layout: per-sample tensors are concatenated."""
    first = values[0]
    if isinstance(first, _Shared):
        return first.value
    if isinstance(first, torch.Tensor):
        return torch.cat(values) if len(values) > 1 else first
    if isinstance(first, dict):
        return {key: _collate([value[key] for value in values]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_collate(list(items)) for items in zip(*values))
    return first


def _equal(a, b) -> bool:
    if isinstance(a, _Shared) and isinstance(b, _Shared):
        return _equal(a.value, b.value)
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(torch.equal(a, b))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a usable ==
        return a is b


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, _Shared):
        yield from _tensors(value.value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
