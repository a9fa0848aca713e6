from .capture import LayerCapture


def mean_outputs(model, layers, picks, batches):
    cap = LayerCapture(layers, picks)
    totals = {}
    try:
        for batch in batches:
            model(batch)
            for index, out in cap.seen.items():
                totals[index] = totals.get(index, 0) + out.mean()
    finally:
        cap.remove()
    return totals
