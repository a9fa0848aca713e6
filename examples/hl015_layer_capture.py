"""Capture the hidden states entering each decoder layer (HL015).

Hugging Face decoder layers are often called as ``layer(hidden_states=...)``;
without ``with_kwargs=True`` the hook then sees ``inputs == ()``.
"""

CAPTURED = []


def capture(module, inputs, output):
    CAPTURED.append(inputs[0].detach().cpu())


def attach(model):
    return [layer.register_forward_hook(capture) for layer in model.model.layers]
