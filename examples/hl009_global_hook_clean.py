"""The same helpers, scoped."""

from torch import nn
from torch.nn.modules.module import register_module_forward_hook


def _nan_check(module, args, output):
    if output.isnan().any():
        raise RuntimeError(f"NaN in {type(module).__name__}")


def checked_forward(model: nn.Module, example):
    with register_module_forward_hook(_nan_check):
        return model(example)


def print_shapes(model: nn.Module, example) -> None:
    with register_module_forward_hook(lambda m, i, o: print(type(m).__name__, tuple(o.shape))):
        model(example)
