from . import taps


def embed(model, batches):
    model.head.register_forward_hook(taps.keep_output)
    for batch in batches:
        model(batch)
    return list(taps.SEEN)
