"""Fix for HL001: register the post-hook with ``always_call=True`` and let its
counter decrements tolerate an unmatched call (``max(0, n - 1)``), the upstream
bitsandbytes fix."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import Replace
from hooklint.fixes.registration_keywords import add_keywords

from hooklint.analysis.effects import StateEffect
from hooklint.analysis.facts import ModuleFacts, Registration


def add_always_call(registration: Registration) -> list:
    """``register_forward_hook(hook)`` → ``register_forward_hook(hook, always_call=True)``."""
    return add_keywords(registration.call, "always_call=True")


def clamp_decrement(facts: ModuleFacts, effect: StateEffect) -> list:
    """``n -= k`` → ``n = max(0, n - k)``; ``n = n - k`` → ``n = max(0, n - k)``."""
    node = effect.node
    if isinstance(node, cst.AugAssign):
        target = facts.code(node.target)
        amount = facts.code(node.value)
        return [Replace(node, f"{target} = max(0, {target} - {amount})")]
    if isinstance(node, cst.Assign):
        return [Replace(node.value, f"max(0, {facts.code(node.value)})")]
    return []
