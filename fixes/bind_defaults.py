"""Fix for HL021: bind the loop's names a hook reads as defaults (``name=name``), so
each hook keeps the value of the pass that wrote it."""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import Replace

from hooklint.analysis.facts import ModuleFacts


def bind_as_defaults(facts: ModuleFacts, hook: cst.FunctionDef | cst.Lambda, names: tuple[str, ...]) -> list:
    """``lambda mod, args, out: f(name)`` → ``lambda mod, args, out, name=name: f(name)``
    (after ``*args`` the new parameters are keyword-only, which torch never passes).
    No fix for a hook without parameters, with ``**kwargs``, or whose parameter list
    spans lines or ends with a comma."""
    params = hook.params
    code = facts.code(params)
    if (
        not code.strip()
        or isinstance(params.star_kwarg, cst.Param)
        or "\n" in code
        or code.rstrip().endswith(",")
    ):
        return []
    bound = ", ".join(f"{name}={name}" for name in names)
    return [Replace(params, f"{code}, {bound}")]
