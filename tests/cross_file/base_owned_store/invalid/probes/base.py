class Probe:
    """Owns the handles its subclasses' hooks leave; ``release`` only forgets them."""

    def __init__(self, layer):
        self.layer = layer
        self.handles = []
        self.seen = []

    def release(self):
        self.handles = []
