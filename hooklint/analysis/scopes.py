"""Which names a function binds: shared by the hook-body queries (effects, captures)
and the lifetime queries, so that every rule agrees on what is local."""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.walk import descendants


def target_names(target: cst.CSTNode) -> set[str]:
    """Names bound by an assignment target (``a``, ``a, (b, *c)``...)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names: set[str] = set()
        for element in target.elements:
            names |= target_names(element.value)
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def local_names(node: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """``(locals, declared)``: the names a function binds that are not declared
    ``global``/``nonlocal``, and those that are."""
    declared: set[str] = set()
    assigned: set[str] = set()
    for current in descendants(node.body, into_functions=False):
        if isinstance(current, (cst.Global, cst.Nonlocal)):
            declared.update(n.name.value for n in current.names)
        elif isinstance(current, cst.AssignTarget):
            assigned.update(target_names(current.target))
        elif isinstance(current, (cst.AugAssign, cst.AnnAssign)) and isinstance(current.target, cst.Name):
            assigned.add(current.target.value)
        elif isinstance(current, (cst.For, cst.CompFor)):
            assigned.update(target_names(current.target))
        elif isinstance(current, cst.AsName):
            assigned.update(target_names(current.name))
    return assigned - declared, declared
