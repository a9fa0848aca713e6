from .base import Attack


class GradScale(Attack):
    def __init__(self, model, gamma=0.5):
        super().__init__(model)
        self.gamma = gamma
        for name, mod in self.model.named_modules():
            if name.endswith("act"):
                mod.register_full_backward_hook(self._scale)

    def _scale(self, module, grad_in, grad_out):
        return (grad_in[0] * self.gamma,)

    def forward(self, x, y):
        return self.model(x)
