class WatchMixin:
    """Registers hooks for its subclasses and keeps every handle."""

    def __init__(self):
        self._watch_handles = []

    def _registrar(self, target, kind):
        return getattr(target, f"register_{kind}_hook")

    def watch(self, target, fn, kind="forward"):
        def guarded(*args):
            return fn(*args)

        register = self._registrar(target, kind)
        handle = register(guarded)
        self._watch_handles.append(handle)
        return handle
