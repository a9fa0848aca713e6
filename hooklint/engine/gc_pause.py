"""The cyclic garbage collector paused over a lint and over a file's check."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def _collector_paused():
    """Parsing builds hundreds of thousands of objects, and each few hundred would
    trigger a cyclic-garbage pass over all that survive (a fifth of the lint time).
    What a lint leaves in cycles is collected at the next pass after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
