"""HL002: block-wise calibration whose input-capture hooks outlive their use.

Each decoder layer's inputs are captured by a forward pre-hook, then the layer is
tuned on them by re-running it, which fires the hook again, so every tuning step
appends another copy of the layer's inputs (the llm-compressor AutoRound leak).
"""

from torch import nn


class LayerInputCatcher:
    def __init__(self, model: nn.Module, steps: int = 200):
        self.model = model
        self.steps = steps
        self.layer_inputs: dict[str, list] = {}

    def _capture(self, module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        self.layer_inputs.setdefault(module.layer_name, []).append(hidden.detach())

    def start(self):
        for name, layer in self.model.named_children():
            layer.layer_name = name
            layer.register_forward_pre_hook(self._capture, with_kwargs=True)

    def tune_layer(self, name: str, layer: nn.Module, optimizer):
        inputs = self.layer_inputs.pop(name)
        for _ in range(self.steps):
            for x in inputs:
                optimizer.zero_grad()
                layer(x).pow(2).mean().backward()
                optimizer.step()
