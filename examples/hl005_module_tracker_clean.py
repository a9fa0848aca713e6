"""The same tracker, tolerating a post-hook call whose pre-hook never ran."""

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
        if self.parents:
            self.parents.pop()
        self.depth = max(0, self.depth - 1)

    def __enter__(self):
        self._pre = register_module_forward_pre_hook(self._enter)
        self._post = register_module_forward_hook(self._leave, always_call=True)
        return self

    def __exit__(self, *exc):
        self._pre.remove()
        self._post.remove()
