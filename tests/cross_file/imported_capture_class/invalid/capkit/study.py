from .capture import LayerCapture


def mean_outputs(model, layers, picks, batches):
    cap = LayerCapture(layers, picks)
    totals = {}
    for batch in batches:
        model(batch)
        for index, out in cap.seen.items():
            totals[index] = totals.get(index, 0) + out.mean()
    cap.remove()
    return totals
