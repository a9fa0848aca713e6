class Recorder:
    """Keeps the handles of its subclasses' hooks; ``_finish`` takes them all off."""

    def __init__(self):
        self.handles = []

    def _finish(self):
        while self.handles:
            self.handles.pop().remove()
