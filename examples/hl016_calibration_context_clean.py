"""The same calibration context, keeping the handles and removing them on exit."""

import contextlib

import torch


class ScaleCache:
    def __init__(self):
        self.k_max = torch.zeros(())


def _feed_cache(module, args, kwargs):
    kwargs["past_key_values"] = module.scale_cache
    return args, kwargs


@contextlib.contextmanager
def kv_calibration(model):
    handles = []
    for module in model.modules():
        if hasattr(module, "k_proj"):
            module.scale_cache = ScaleCache()
            handles.append(module.register_forward_pre_hook(_feed_cache, with_kwargs=True))
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()
        for module in model.modules():
            if hasattr(module, "scale_cache"):
                del module.scale_cache
