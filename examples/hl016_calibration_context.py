"""A KV-cache calibration context: hooks installed on every attention module through
``model.apply`` are never removed, while the teardown deletes the cache they read, so
every later ``generate()`` raises ``AttributeError``."""

import contextlib

import torch


class ScaleCache:
    def __init__(self):
        self.k_max = torch.zeros(())

    def observe(self, key):
        self.k_max = torch.maximum(self.k_max, key.abs().amax())


def _feed_cache(module, args, kwargs):
    kwargs["past_key_values"] = module.scale_cache
    return args, kwargs


def _attach_cache(module):
    if hasattr(module, "k_proj"):
        module.scale_cache = ScaleCache()


def _arm(module):
    if hasattr(module, "k_proj"):
        module.register_forward_pre_hook(_feed_cache, with_kwargs=True)


def _drop_cache(module):
    if hasattr(module, "scale_cache"):
        del module.scale_cache


@contextlib.contextmanager
def kv_calibration(model):
    model.apply(_attach_cache)
    model.apply(_arm)
    try:
        yield model
    finally:
        model.apply(_drop_cache)
