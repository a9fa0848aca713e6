"""Fix for HL007: rename a deprecated backward-hook registration to its ``full`` variant."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import Replace

from hooklint.analysis.facts import Registration


def use_full_backward_hook(registration: Registration, old: str, replacement: str) -> list:
    """``x.register_backward_hook(h)`` → ``x.register_full_backward_hook(h)`` (an
    attribute call only: a bare imported name would need its import changed too); for
    a call through a local name, the attribute the name was bound to
    (``add = m.register_backward_hook`` → ``add = m.register_full_backward_hook``)."""
    func = registration.call.func
    if isinstance(func, cst.Attribute) and func.attr.value == old:
        return [Replace(func.attr, replacement)]
    return [Replace(a.attr, replacement) for a in registration.named_by if a.attr.value == old]
