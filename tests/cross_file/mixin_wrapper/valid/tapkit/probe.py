from tapkit import WatchMixin


class ActivationProbe(WatchMixin):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.outputs = []
        self.calls = 0

    def _tick(self, module, args):
        self.calls += 1

    def count_calls(self, batch):
        with self.model.register_forward_pre_hook(self._tick):
            self.model(batch)
        return self.calls

    def record(self, module, args, output):
        self.outputs.append(output)

    def probe(self, batch):
        handles = [self.watch(layer, self.record) for layer in self.model.children()]
        try:
            return self.model(batch)
        finally:
            for handle in handles:
                handle.remove()
