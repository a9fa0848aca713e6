import time

from .base import DepthTracker


class LayerTimer(DepthTracker):
    def __init__(self):
        super().__init__()
        self.started = []

    def _enter(self, module, args):
        super()._enter(module, args)
        self.started.append(time.perf_counter())

    def _leave(self, module, args, output):
        super()._leave(module, args, output)

    def attach(self, block):
        self.handles = [
            block.register_forward_pre_hook(self._enter),
            block.register_forward_hook(self._leave, always_call=True),
        ]
