def attach_probe(model, index, keep):
    def record(module, args, output):
        keep(output)

    return model.blocks[index].register_forward_hook(record)


def describe(model):
    return [type(block).__name__ for block in model.blocks]
