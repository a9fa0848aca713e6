"""Fix for HL013: read ``_cache`` / ``_cache_enabled`` through the
``torch.nn.utils.parametrize`` module instead of names imported from it (a name
imported by value never sees the module's later changes).

Each function returns edit primitives (:mod:`hooklint.fixes.edits`) or an empty list
when no fix can be built; none of them decides whether code is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from hooklint.fixes.edits import DeleteLines, Replace, ReplaceWithLines

from hooklint.analysis.facts import ModuleFacts
from hooklint.analysis.walk import descendants

PARAMETRIZE = "torch.nn.utils.parametrize"


def import_parametrize_module(
    facts: ModuleFacts,
    statement: cst.SimpleStatementLine,
    node: cst.ImportFrom,
    stale: dict[str, str],
    scope: cst.CSTNode,
    module_name: str,
    already_imported: bool = False,
) -> tuple[list, str | None]:
    """Replace the stale names by attributes of the module.

    ``stale`` maps each bound name to the attribute it stands for (``{"enabled":
    "_cache_enabled"}``); ``scope`` is where the import binds them (the module or one
    def).  Returns the edits and, when no fix can be built, the reason."""
    keep = [a for a in node.names if _bound(a) not in stale]  # type: ignore[union-attr]
    if len(statement.body) != 1:
        return [], "the import shares its line with other statements"
    lines = []
    if keep:
        names = ", ".join(facts.code(a.name) + (f" as {_bound(a)}" if a.asname else "") for a in keep)
        lines.append(f"from {PARAMETRIZE} import {names}")
    if already_imported:
        pass
    elif module_name == "parametrize":
        lines.append("from torch.nn.utils import parametrize")
    else:
        lines.append(f"import {PARAMETRIZE} as {module_name}")
    edits: list = [ReplaceWithLines(node, tuple(lines)) if lines else DeleteLines(statement)]
    shadowed: list[str] = []
    for name_node, kind in _name_uses(scope, set(stale)):
        if kind == "use":
            edits.append(Replace(name_node, f"{module_name}.{stale[name_node.value]}"))
        elif kind == "global":
            edits.extend(_drop_from_global(name_node, set(stale)))
        elif kind == "global_line":
            edits.append(DeleteLines(name_node))
        else:
            shadowed.append(name_node.value)
    if shadowed:
        return [], f"`{shadowed[0]}` is also bound locally"
    return edits, None


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return alias.name.value if isinstance(alias.name, cst.Name) else ""


def _name_uses(scope: cst.CSTNode, names: set[str]) -> Iterable[tuple[cst.CSTNode, str]]:
    """Every Name in ``scope`` that reads or writes one of ``names``: ``use`` (to be
    replaced by the attribute), ``global`` (a ``global`` statement naming it: the node
    is the Global), ``shadow`` (a local binding that is not declared global)."""
    skipped: set[int] = set()
    globals_in: dict[int, set[str]] = {}
    for node in descendants(scope):
        if isinstance(node, cst.Attribute):
            skipped.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skipped.add(id(node.keyword))
        elif isinstance(node, (cst.ImportFrom, cst.Import)):
            for sub in descendants(node):
                skipped.add(id(sub))
        elif isinstance(node, cst.Param):
            if node.name.value in names:
                yield node.name, "shadow"
            skipped.add(id(node.name))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            skipped.add(id(node.name))
            if isinstance(node, cst.FunctionDef):
                declared = set()
                for sub in descendants(node.body, into_functions=False):
                    if isinstance(sub, cst.Global):
                        declared |= {n.name.value for n in sub.names}
                globals_in[id(node)] = declared
                for sub in descendants(node.body, into_functions=False):
                    target = None
                    if isinstance(sub, (cst.AssignTarget,)) or isinstance(
                        sub, (cst.AugAssign, cst.AnnAssign)
                    ):
                        target = sub.target
                    if (
                        isinstance(target, cst.Name)
                        and target.value in names
                        and target.value not in declared
                    ):
                        yield target, "shadow"
        elif (
            isinstance(node, cst.SimpleStatementLine)
            and len(node.body) == 1
            and isinstance(node.body[0], cst.Global)
            and all(n.name.value in names for n in node.body[0].names)
        ):
            yield node, "global_line"
            for n in node.body[0].names:
                skipped.add(id(n.name))
            skipped.add(id(node.body[0]))
        elif isinstance(node, cst.Global) and id(node) not in skipped:
            if any(n.name.value in names for n in node.names):
                yield node, "global"
            for n in node.names:
                skipped.add(id(n.name))
        elif isinstance(node, cst.Name) and node.value in names and id(node) not in skipped:
            yield node, "use"


def _drop_from_global(node: cst.Global, names: set[str]) -> list:
    left = [n.name.value for n in node.names if n.name.value not in names]
    if left:
        return [Replace(node, "global " + ", ".join(left))]
    return [Replace(node, "pass")]
