"""Swapping a float module for its quantized replacement and moving its hooks over:
a ``with_kwargs=True`` hook comes back as a plain one, and raises ``TypeError``."""


def swap(module, mapping):
    replacement = mapping[type(module)].from_float(module)
    for pre_hook in module._forward_pre_hooks.values():
        replacement.register_forward_pre_hook(pre_hook)
    for hook in module._forward_hooks.values():
        replacement.register_forward_hook(hook)
    return replacement
