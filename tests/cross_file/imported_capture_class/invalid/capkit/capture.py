class LayerCapture:
    def __init__(self, layers, picks):
        self.seen = {}
        self._hooks = []
        for index in picks:
            self._hooks.append(layers[index].register_forward_hook(self._keeper(index)))

    def _keeper(self, index):
        def keep(module, args, output):
            self.seen[index] = output.detach()

        return keep

    def remove(self):
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
