"""Fix for HL006: store a detached tensor."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import InsertAfter


def add_detach(value: cst.BaseExpression) -> list:
    """``store(x)`` → ``store(x.detach())`` (``x`` is a name, attribute, item or call)."""
    if isinstance(value, cst.IfExp):
        return add_detach(value.body) + add_detach(value.orelse)
    return [InsertAfter(value, ".detach()")]
