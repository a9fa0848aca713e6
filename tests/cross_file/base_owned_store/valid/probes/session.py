from .inputs import InputProbe


def probe_inputs(layer, batches, run):
    probe = InputProbe(layer)
    probe.install()
    try:
        for batch in batches:
            run(batch)
    finally:
        probe.release()
    return probe.seen
