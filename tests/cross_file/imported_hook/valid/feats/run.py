from . import taps


def embed(model, batches):
    handle = model.head.register_forward_hook(taps.keep_output)
    try:
        for batch in batches:
            model(batch)
    finally:
        handle.remove()
    return list(taps.SEEN)
