class Recorder:
    """Keeps the handles of its subclasses' hooks; ``_finish`` only forgets them."""

    def __init__(self):
        self.handles = []

    def _finish(self):
        self.handles = []
