"""A module tracker that knows which layers are running (HL005: unclamped release).

The post-hook is registered with ``always_call=True`` so that the stack is popped even
when forward raises, but it pops unconditionally: when an earlier pre-hook raised, this
tracker's pre-hook never pushed, and ``pop`` raises inside the hook.
"""

from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)


class ModuleTracker:
    def __init__(self):
        self.parents = []
        self.depth = 0

    def _enter(self, module, args):
        self.parents.append(type(module).__name__)
        self.depth += 1

    def _leave(self, module, args, output):
        self.parents.pop()
        self.depth -= 1

    def __enter__(self):
        self._pre = register_module_forward_pre_hook(self._enter)
        self._post = register_module_forward_hook(self._leave, always_call=True)
        return self

    def __exit__(self, *exc):
        self._pre.remove()
        self._post.remove()
