from abc import ABC, abstractmethod


class Attack(ABC):
    def __init__(self, model, device=None):
        self.model = model.net if hasattr(model, "net") else model
        self.device = device

    def __call__(self, x, y):
        return self.forward(x, y)

    @abstractmethod
    def forward(self, x, y): ...
