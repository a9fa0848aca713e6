"""Debugging helpers that leave process-wide hooks behind."""

import torch.nn.modules.module as module_hooks
from torch import nn
from torch.nn.modules.module import register_module_forward_hook


def _nan_check(module, args, output):
    if output.isnan().any():
        raise RuntimeError(f"NaN in {type(module).__name__}")


_NAN_HOOK = module_hooks.register_module_forward_hook(_nan_check)  # HL009: installed at import


def print_shapes(model: nn.Module, example) -> None:
    register_module_forward_hook(lambda m, i, o: print(type(m).__name__, tuple(o.shape)))  # HL009
    model(example)
