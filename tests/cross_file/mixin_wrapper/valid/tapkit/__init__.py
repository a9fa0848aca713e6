from .watching import WatchMixin

__all__ = ["WatchMixin"]
