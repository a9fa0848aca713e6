"""The swap, passing on the flags torch keeps for each hook's handle id."""


def swap(module, mapping):
    replacement = mapping[type(module)].from_float(module)
    for hook_id, pre_hook in module._forward_pre_hooks.items():
        replacement.register_forward_pre_hook(
            pre_hook, with_kwargs=hook_id in module._forward_pre_hooks_with_kwargs
        )
    for hook_id, hook in module._forward_hooks.items():
        replacement.register_forward_hook(
            hook,
            with_kwargs=hook_id in module._forward_hooks_with_kwargs,
            always_call=hook_id in module._forward_hooks_always_called,
        )
    return replacement
