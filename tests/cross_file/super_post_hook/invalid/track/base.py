class DepthTracker:
    """Counts how deep inside tracked modules the forward pass is."""

    def __init__(self):
        self.depth = 0

    def _enter(self, module, args):
        self.depth += 1

    def _leave(self, module, args, output):
        self.depth -= 1
