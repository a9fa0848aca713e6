"""Fix for HL007: rename a deprecated backward-hook registration to its ``full`` variant."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import Replace

from hooklint.analysis.facts import Registration


def use_full_backward_hook(registration: Registration, replacement: str) -> list:
    """``x.register_backward_hook(h)`` → ``x.register_full_backward_hook(h)`` (an
    attribute call only: a bare imported name would need its import changed too)."""
    func = registration.call.func
    if isinstance(func, cst.Attribute) and func.attr.value == registration.api.name:
        return [Replace(func.attr, replacement)]
    return []
