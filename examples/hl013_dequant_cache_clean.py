"""The cache gate through the module attribute (HL013, clean)."""

from torch.nn.utils import parametrize


def _enable_cache(module, inputs):
    parametrize._cache_enabled += 1


def _disable_cache(module, inputs, output):
    parametrize._cache_enabled = max(0, parametrize._cache_enabled - 1)
    if not parametrize._cache_enabled:
        parametrize._cache = {}


def install(module):
    module.register_forward_pre_hook(_enable_cache)
    module.register_forward_hook(_disable_cache, always_call=True)
