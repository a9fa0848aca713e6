from abc import ABC, abstractmethod


class Attack(ABC):
    def __init__(self, model, device=None):
        self.model = model.net if hasattr(model, "net") else model
        self.device = device

    def __call__(self, x, y):
        return self.forward(x, y)

    def detach(self):
        for module in self.model.modules():
            module._backward_hooks.clear()

    @abstractmethod
    def forward(self, x, y): ...
