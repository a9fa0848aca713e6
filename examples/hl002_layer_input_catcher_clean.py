"""HL002, fixed: each layer's capture hook is kept by name and removed before the
layer's captured inputs are consumed, so tuning re-runs capture nothing."""

from torch import nn


class LayerInputCatcher:
    def __init__(self, model: nn.Module, steps: int = 200):
        self.model = model
        self.steps = steps
        self.layer_inputs: dict[str, list] = {}
        self._capture_hooks = {}

    def _capture(self, module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        self.layer_inputs.setdefault(module.layer_name, []).append(hidden.detach())

    def start(self):
        for name, layer in self.model.named_children():
            layer.layer_name = name
            self._capture_hooks[layer.layer_name] = layer.register_forward_pre_hook(self._capture, with_kwargs=True)

    def tune_layer(self, name: str, layer: nn.Module, optimizer):
        if name in self._capture_hooks:
            self._capture_hooks.pop(name).remove()
        inputs = self.layer_inputs.pop(name)
        for _ in range(self.steps):
            for x in inputs:
                optimizer.zero_grad()
                layer(x).pow(2).mean().backward()
                optimizer.step()
