class Probe:
    """Owns the handles its subclasses' hooks leave; ``release`` takes them off."""

    def __init__(self, layer):
        self.layer = layer
        self.handles = []
        self.seen = []

    def release(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []
