"""The observer registered the way its signature expects."""

import torch
from torch import nn


def observe_range(module, args, output):
    module.act_max = torch.maximum(module.act_max, output.detach().abs().amax())


def add_observers(model):
    handles = []
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.register_buffer("act_max", torch.zeros(()))
            handles.append(module.register_forward_hook(observe_range))
    return handles
