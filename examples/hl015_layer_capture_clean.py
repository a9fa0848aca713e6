"""The capture hook that also sees keyword arguments (HL015, clean)."""

CAPTURED = []


def capture(module, args, kwargs, output):
    hidden = args[0] if args else kwargs["hidden_states"]
    CAPTURED.append(hidden.detach().cpu())


def run_with_capture(model, hidden, mask):
    handles = [layer.register_forward_hook(capture, with_kwargs=True) for layer in model.model.layers]
    try:
        for layer in model.model.layers:
            hidden = layer(hidden_states=hidden, attention_mask=mask)
    finally:
        for handle in handles:
            handle.remove()
    return hidden
