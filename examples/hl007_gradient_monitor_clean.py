"""The same monitor on the full backward hook: grad_input is the inputs' gradient."""

import torch


class GradientMonitor:
    def __init__(self, model: torch.nn.Module):
        self.norms = {}
        self.handles = []
        for name, layer in model.named_children():
            self.handles.append(layer.register_full_backward_hook(self._record(name)))

    def _record(self, name):
        def hook(module, grad_input, grad_output):
            grads = [g for g in grad_input if g is not None]
            if grads:
                self.norms[name] = grads[0].norm().item()

        return hook
