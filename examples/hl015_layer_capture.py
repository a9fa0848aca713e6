"""Capture the hidden states entering each decoder layer (HL015).

The layers are called as ``layer(hidden_states=..., attention_mask=...)`` below;
without ``with_kwargs=True`` the hook then sees ``inputs == ()``.
"""

CAPTURED = []


def capture(module, inputs, output):
    CAPTURED.append(inputs[0].detach().cpu())


def run_with_capture(model, hidden, mask):
    handles = [layer.register_forward_hook(capture) for layer in model.model.layers]
    try:
        for layer in model.model.layers:
            hidden = layer(hidden_states=hidden, attention_mask=mask)
    finally:
        for handle in handles:
            handle.remove()
    return hidden
