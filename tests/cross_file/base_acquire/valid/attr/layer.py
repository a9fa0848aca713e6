from .base import Saliency


class LayerSaliency(Saliency):
    def __init__(self, model, layer):
        super().__init__(model)
        self.layer = layer
        self.seen = None

    def _keep_output(self, module, args, output):
        self.seen = output.detach()

    def attribute(self, batch):
        scaling = self._scale_inputs()
        try:
            self.model.apply(self._attach)
            with self.layer.register_forward_hook(self._keep_output):
                score = self.model(batch).sum()
                score.backward()
        finally:
            scaling.remove()
            self._clear()
        return self.seen, dict(self.grads)
