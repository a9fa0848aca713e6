"""Enable torch's parametrization cache around a quantized layer (HL013).

``_cache_enabled`` is imported by name: ``+= 1`` rebinds this module's copy only,
so torch's cache is never switched on.
"""

from torch.nn.utils.parametrize import _cache, _cache_enabled


def _enable_cache(module, inputs):
    global _cache_enabled
    _cache_enabled += 1


def _disable_cache(module, inputs, output):
    global _cache_enabled, _cache
    _cache_enabled = max(0, _cache_enabled - 1)
    if not _cache_enabled:
        _cache = {}


def install(module):
    module.register_forward_pre_hook(_enable_cache)
    module.register_forward_hook(_disable_cache, always_call=True)
