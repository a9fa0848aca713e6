from .base import Recorder


class FeatureRecorder(Recorder):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.features = []

    def _grab(self, module, args, output):
        self.features.append(output.detach())

    def attach(self):
        for block in self.model.children():
            self.handles.append(block.register_forward_hook(self._grab))

    def detach(self):
        self._finish()
