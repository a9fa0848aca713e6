"""hooklint.runtime: corrected runtime pieces that replace hand-written hooks.

Needs the ``runtime`` extra (``pip install "hooklint[runtime]"``, torch >= 2.4).
The package itself imports without torch so that the pytest plugin entry point
can load in a torch-free environment; each submodule imports torch through
:func:`require_torch`, which fails with a clear message when it is missing.
"""

from __future__ import annotations

TORCH_MISSING = 'hooklint.runtime needs PyTorch >= 2.4: install it with `pip install "hooklint[runtime]"`'


def require_torch():
    """Return the ``torch`` module, or raise ImportError naming the ``runtime`` extra."""
    try:
        import torch
    except ImportError as exc:
        raise ImportError(TORCH_MISSING) from exc
    return torch
