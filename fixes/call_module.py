"""Fix for HL014: call the module instead of its ``forward``, so that its hooks run."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import Replace

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.module_kinds import is_known_module


def call_module_instead_of_forward(
    facts: ModuleFacts, call: cst.Call, class_def: cst.ClassDef | None
) -> list:
    """``x.forward(a)`` → ``x(a)``, only where ``x`` is known, in this file, to be an
    ``nn.Module`` (``class_def``: the class the call is in): ``x(a)`` runs
    ``Module.__call__``, which runs ``forward``; on anything else it runs whatever
    ``__call__`` is (or nothing), and ``self(...)`` in a class that is no module may
    recurse."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not is_known_module(facts, func.value, class_def):
        return []
    return [Replace(func, facts.code(func.value))]
