"""Collecting intermediate activations for analysis (HL006: stored without .detach()).

Every stored output keeps its autograd graph, and with it the saved activations of
every layer before it, until the cache is cleared.
"""

import torch


class ActivationCache:
    def __init__(self, model: torch.nn.Module, layer_names):
        self.activations = {}
        self.handles = [
            model.get_submodule(name).register_forward_hook(self._save(name)) for name in layer_names
        ]

    def _save(self, name):
        def hook(module, args, output):
            hidden = output[0] if isinstance(output, tuple) else output
            self.activations[name] = hidden.float()

        return hook

    def close(self):
        for handle in self.handles:
            handle.remove()
