from .layers import *


def activations(model, batch, index):
    seen = []
    handle = attach_probe(model, index, seen.append)
    model(batch)
    handle.remove()
    return seen, describe(model)
