"""Which names a function binds: shared by the hook-body queries (effects, captures)
and the lifetime queries, so that every rule agrees on what is local."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from hooklint.analysis.walk import descendants

if TYPE_CHECKING:
    from hooklint.analysis.facts import Site


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


def local_names(node: cst.FunctionDef, nodes=None) -> tuple[set[str], set[str]]:
    """``(locals, declared)``: the names a function binds that are not declared
    ``global``/``nonlocal``, and those that are.  ``nodes``: the function body's nodes
    (``descendants(node.body, into_functions=False)``) when the caller has them."""
    declared: set[str] = set()
    assigned: set[str] = set()
    for current in descendants(node.body, into_functions=False) if nodes is None else nodes:
        kind = type(current)  # parsed trees hold these exact types
        if kind is cst.Global or kind is cst.Nonlocal:
            declared.update(n.name.value for n in current.names)
        elif kind is cst.AssignTarget:
            assigned.update(target_names(current.target))
        elif (kind is cst.AugAssign or kind is cst.AnnAssign) and type(current.target) is cst.Name:
            assigned.add(current.target.value)
        elif kind is cst.For or kind is cst.CompFor:
            assigned.update(target_names(current.target))
        elif kind is cst.AsName:
            assigned.update(target_names(current.name))
    return assigned - declared, declared


def assigned_values(function: cst.FunctionDef, name: str) -> list[cst.BaseExpression] | None:
    """The values the plain assignments of ``name`` in ``function`` give it (``x = v``,
    ``x: T = v``, ``x, y = v, w``: :func:`paired_elements`; not nested defs'
    assignments), or None when something else binds it too (a
    ``for``/comprehension/``with``/``except`` target, ``:=``, ``+=``, another unpacking,
    an import)."""
    values: list[cst.BaseExpression] = []
    for node in descendants(function.body, into_functions=False):
        if isinstance(node, cst.Assign):
            pairs = paired_elements(node)
            if pairs is not None:
                for target, value in pairs:
                    if isinstance(target, cst.Name) and target.value == name:
                        values.append(value)
                    elif name in target_names(target):
                        return None
                continue
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)
                elif name in target_names(target.target):
                    return None
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
            if node.target.value == name and node.value is not None:
                values.append(node.value)
        elif isinstance(node, (cst.For, cst.CompFor, cst.NamedExpr, cst.AugAssign)):
            if name in target_names(node.target):
                return None
        elif isinstance(node, cst.AsName) and name in target_names(node.name):
            return None
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and name in _imported(node):
            return None
    return values


def _imported(node: cst.Import | cst.ImportFrom) -> set[str]:
    if isinstance(node.names, cst.ImportStar):
        return set()
    found = set()
    for alias in node.names:
        if alias.asname is not None:
            found |= target_names(alias.asname.name)
        else:
            name = alias.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                found.add(name.value)
    return found


def loop_iterable(site: Site, name: str) -> cst.BaseExpression | None:
    """What the innermost loop or comprehension of ``site`` binding ``name`` iterates."""
    for frame in reversed(site.frames):
        if frame.kind in ("def", "lambda", "class"):
            return None
        if frame.kind == "for" and name in target_names(frame.node.target):  # type: ignore[attr-defined]
            return frame.node.iter  # type: ignore[attr-defined]
        if frame.kind == "comp":
            for_in = frame.node.for_in  # type: ignore[attr-defined]
            while for_in is not None:
                if name in target_names(for_in.target):
                    return for_in.iter
                for_in = for_in.inner_for_in
    return None


def paired_elements(node: cst.Assign) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """``a, b = x, y`` (one target, as many plain elements on both sides): the
    ``(target, value)`` pairs, which Python assigns as if one by one (all values are
    evaluated first: a swap reads the old values); None for any other assignment."""
    if len(node.targets) != 1:
        return None
    target, value = node.targets[0].target, node.value
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    if len(target.elements) != len(value.elements) or len(target.elements) < 2:
        return None
    if any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return None
    # Python reads every value before binding any target: a swap reads the old values
    # (the handle model's aliases are unions, flow-insensitive, so one by one is the same).
    return [(e.value, v.value) for e, v in zip(target.elements, value.elements)]
