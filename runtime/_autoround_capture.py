"""Finding a model's repeated blocks and capturing the first block's inputs.

Leak-freedom is structural here:

* exactly one hook exists, a forward pre-hook on the first block, and it is
  removed in ``finally`` before :func:`capture_block_inputs` returns, so no
  hook is alive while any block is optimised, and none survives an exception;
* the hook ends the model forward (:class:`_StopForward`) as soon as the
  block's inputs are stored, so later layers never run during capture;
* the store holds exactly ``nsamples`` samples in one tensor; nothing appends
  to it after capture.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hooklint.runtime import require_torch

torch = require_torch()
nn = torch.nn


def find_blocks(model: nn.Module) -> list[nn.Module]:
    """Return the largest ``nn.ModuleList`` whose children all share one type.

    This is the encoder or decoder layer stack of common transformer models.
    Raises ValueError when the model has none.
    """
    best: list[nn.Module] = []
    for module in model.modules():
        if isinstance(module, nn.ModuleList) and len(module) > len(best):
            children = list(module)
            if len({type(child) for child in children}) == 1:
                best = children
    if not best:
        raise ValueError(
            "no nn.ModuleList of same-type blocks found; pass blocks= explicitly"
        )
    return best


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

    def __len__(self) -> int:
        return self.hidden.shape[0]

    def nbytes(self) -> int:
        """Bytes of tensor storage this store keeps alive (shared storage counted once)."""
        storages = {}
        for tensor in _tensors((self.hidden, self.extras)):
            storage = tensor.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
        return sum(storages.values())

    def call(self, block: nn.Module, indices: torch.Tensor, forward=None):
        """Run ``forward`` (default: the block itself) on the samples at ``indices``.

        ``forward(args, kwargs)`` lets the caller substitute weights; the
        result is the block's hidden-state output.
        """
        picked = [self.extras[i] for i in indices.tolist()]
        args = _collate([extra[0] for extra in picked])
        kwargs = _collate([extra[1] for extra in picked])
        hidden = self.hidden[indices]
        if self.hidden_keyword is None:
            args = (hidden, *args)
        else:
            kwargs = {**kwargs, self.hidden_keyword: hidden}
        output = block(*args, **kwargs) if forward is None else forward(args, kwargs)
        return output[0] if isinstance(output, (tuple, list)) else output

    def replaced(self, hidden: torch.Tensor) -> BlockInputs:
        """The same extras with a new hidden state (the next block's inputs)."""
        return BlockInputs(hidden, self.extras, self.hidden_keyword)


class _StopForward(Exception):
    """Raised by the capture hook to end the model forward early."""


def capture_block_inputs(
    model: nn.Module, block: nn.Module, calibration: Iterable[Any], nsamples: int
) -> BlockInputs:
    """Run ``model`` on ``calibration`` items until ``block`` has seen ``nsamples`` samples.

    Each item is a tensor (``model(item)``), a dict (``model(**item)``) or a
    tuple/list (``model(*item)``).  The pre-hook is removed in ``finally``.
    """
    device = next(model.parameters()).device
    hidden_parts: list[torch.Tensor] = []
    extras: list[tuple[tuple, dict]] = []
    hidden_keyword: list[str | None] = [None]

    def store_and_stop(_module, args, kwargs):
        if args:
            hidden, rest = args[0], args[1:]
        else:
            hidden_keyword[0] = "hidden_states"
            hidden = kwargs["hidden_states"]
            kwargs = {k: v for k, v in kwargs.items() if k != "hidden_states"}
            rest = ()
        batch = hidden.shape[0]
        for row in range(batch):
            extras.append((_slice(rest, row, batch), _slice(kwargs, row, batch)))
        hidden_parts.append(hidden.detach())
        raise _StopForward

    handle = block.register_forward_pre_hook(store_and_stop, with_kwargs=True)
    try:
        with torch.no_grad():
            for item in calibration:
                if len(extras) >= nsamples:
                    break
                try:
                    _call_model(model, _to_device(item, device))
                except _StopForward:
                    pass
    finally:
        handle.remove()
    if not hidden_parts:
        raise ValueError("calibration produced no inputs for the first block")
    hidden = torch.cat(hidden_parts)[:nsamples]
    return BlockInputs(hidden, extras[:nsamples], hidden_keyword[0])


def _call_model(model, item):
    if isinstance(item, dict):
        return model(**item)
    if isinstance(item, (tuple, list)):
        return model(*item)
    return model(item)


def _to_device(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {key: _to_device(item, device) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(item, device) for item in value)
    return value


def _slice(value, row: int, batch: int):
    """Cut one sample out of ``value``: tensors whose dim 0 is the batch are sliced, the rest kept."""
    if isinstance(value, torch.Tensor):
        if value.dim() > 0 and value.shape[0] == batch:
            return value[row : row + 1].detach()
        return value.detach()
    if isinstance(value, dict):
        return {key: _slice(item, row, batch) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_slice(item, row, batch) for item in value)
    return value


def _collate(values: list):
    """Merge per-sample values: per-sample tensors (dim 0 of size 1) are concatenated."""
    first = values[0]
    if isinstance(first, torch.Tensor):
        if first.dim() > 0 and first.shape[0] == 1 and len(values) > 1:
            return torch.cat(values)
        return first
    if isinstance(first, dict):
        return {key: _collate([value[key] for value in values]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_collate(list(items)) for items in zip(*values))
    return first


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
